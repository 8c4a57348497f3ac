// SPDX-License-Identifier: GPL-2.0
#include "commands.h"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstring>
#include <ctime>
#include <iterator>
#include <map>
#include <ostream>

#include <fcntl.h>
#include <net/if.h>
#include <sched.h>
#include <poll.h>
#include <unistd.h>

#include <fmt/format.h>

#include "format.h"
#include "group.h"
#include "ppkit/client.h"
#include "render.h"
#include "signals.h"

namespace ppctl {

using ppkit::Client;
using ppkit::Errc;
using ppkit::Source;

namespace {

std::uint64_t now_ns()
{
	timespec ts{};
	clock_gettime(CLOCK_REALTIME, &ts);
	return static_cast<std::uint64_t>(ts.tv_sec) * 1000000000 +
	       static_cast<std::uint64_t>(ts.tv_nsec);
}

RenderOptions render_options(const Options &o)
{
	return render_options(o, o.source == SourceSel::All);
}

// Clients or monitors of the families to ask.  With --source all, a
// missing family is skipped (ppkit's with a note), as long as one is there.
template <typename Endpoint>
std::vector<Endpoint> open_sources(SourceSel sel, std::ostream &err)
{
	std::vector<Endpoint> v;
	if (sel != SourceSel::All) {
		v.emplace_back(sel == SourceSel::Ppkit ? Source::Ppkit : Source::Netdev);
		return v;
	}
	std::optional<ppkit::Error> missing;
	for (Source s : {Source::Ppkit, Source::Netdev}) {
		try {
			v.emplace_back(s);
		} catch (const ppkit::Error &e) {
			if (e.code() != Errc::FamilyMissing)
				throw;
			if (s == Source::Ppkit) {
				err << "ppctl: note: " << e.what() << "\n";
				missing = e;
			}
		}
	}
	if (v.empty())
		throw *missing;
	return v;
}

std::vector<Client> connect(SourceSel sel, std::ostream &err)
{
	return open_sources<Client>(sel, err);
}

std::optional<std::uint32_t> dev_index(const std::string &dev)
{
	if (dev.empty())
		return std::nullopt;
	return ifindex_of(dev);
}

// @instead: what is shown in their place.
void note_no_stats(std::ostream &err, const char *instead = "listing its pools instead")
{
	err << "ppctl: this kernel has no page_pool stats (its netdev family has no "
	       "page-pool-stats-get: CONFIG_PAGE_POOL_STATS=n); "
	    << instead << "\n";
}

}  // namespace

RenderOptions render_options(const Options &o, bool show_source)
{
	Layout l = layout_of(STDOUT_FILENO, o.raw, o.human);
	return {l.raw, l.width, show_source};
}

void enter_netns(const std::string &name)
{
	const std::string path = "/run/netns/" + name;
	int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		int e = errno;
		if (e == ENOENT)
			throw UsageError(fmt::format("no network namespace '{}' (see ip netns list)",
						     name));
		throw ppkit::Error(e == EACCES || e == EPERM ? Errc::Permission : Errc::System,
				   fmt::format("cannot open {}: {}", path, std::strerror(e)), e);
	}
	int r = setns(fd, CLONE_NEWNET);
	int e = errno;
	close(fd);
	if (r < 0) {
		if (e == EPERM)
			throw ppkit::Error(Errc::Permission,
					   fmt::format("entering network namespace '{}' needs "
						       "CAP_SYS_ADMIN: run it as root",
						       name),
					   e);
		throw ppkit::Error(Errc::System,
				   fmt::format("cannot enter network namespace '{}' ({}): {}", name,
					       path, std::strerror(e)),
				   e);
	}
}

std::uint32_t ifindex_of(const std::string &name)
{
	unsigned idx = if_nametoindex(name.c_str());
	if (!idx)
		throw UsageError(fmt::format("no interface '{}' (see ip link)", name));
	return idx;
}

int cmd_list(const Options &o, std::ostream &out, std::ostream &err)
{
	std::vector<ppkit::Pool> pools;
	for (Client &c : connect(o.source, err)) {
		auto v = c.pools();
		if (pools.empty())
			pools = std::move(v);
		else
			pools.insert(pools.end(), std::make_move_iterator(v.begin()),
				     std::make_move_iterator(v.end()));
	}
	PoolFilter f = o.filter;
	f.ifindex = dev_index(o.dev);
	std::erase_if(pools, [&](const ppkit::Pool &p) { return !f.matches(p); });
	sort_rows_by(pools, o.pool_sort, [](const ppkit::Pool &p) { return fields_of(p); });
	if (o.json)
		write_list_doc(out, pools);
	else if (pools.empty())
		out << "no pools\n";
	else
		out << pools_table(pools, render_options(o));
	return kExitOk;
}

namespace {

int stats_once(const Options &o, std::vector<Client> &clients, const ppkit::Filter &f,
	       std::ostream &out, std::ostream &err)
{
	std::vector<ppkit::Sample> with, without;
	std::vector<std::pair<Source, bool>> sources;
	for (Client &c : clients) {
		auto v = c.sample(f);
		std::erase_if(v, [&](const ppkit::Sample &s) { return !o.filter.matches(s.pool); });
		bool has = c.has_stats();
		sources.emplace_back(c.source(), has);
		if (!has)
			note_no_stats(err, o.group_by_device ? "its pools count with their pages in "
							       "flight only"
							     : "listing its pools instead");
		auto &to = has ? with : without;
		if (to.empty())
			to = std::move(v);
		else
			to.insert(to.end(), std::make_move_iterator(v.begin()),
				  std::make_move_iterator(v.end()));
	}
	auto by_key = [](const ppkit::Sample &s) { return fields_of(s); };
	if (o.json || o.group_by_device) {
		std::vector<ppkit::Sample> all = std::move(with);
		all.insert(all.end(), std::make_move_iterator(without.begin()),
			   std::make_move_iterator(without.end()));
		if (o.group_by_device) {
			auto groups = group_by_device(all);
			sort_groups(groups, o.pool_sort);
			if (o.json)
				out << device_doc(groups, sources, now_ns())
					       .dump(-1, ' ', false, nlohmann::json::error_handler_t::replace)
				    << "\n";
			else if (groups.empty())
				out << "no pools\n";
			else
				out << device_table(groups, render_options(o));
			return kExitOk;
		}
		sort_rows_by(all, o.pool_sort, by_key);
		write_stats_doc(out, all, sources, now_ns());
		return kExitOk;
	}
	sort_rows_by(with, o.pool_sort, by_key);
	sort_rows_by(without, o.pool_sort, by_key);
	const RenderOptions ro = render_options(o);
	if (!with.empty())
		out << (o.long_form ? stats_long(with, ro) : stats_table(with, ro));
	if (!without.empty()) {
		std::vector<ppkit::Pool> pools;
		for (const auto &s : without)
			pools.push_back(s.pool);
		out << pools_table(pools, ro);
	}
	if (with.empty() && without.empty())
		out << "no pools\n";
	return kExitOk;
}

int stats_interval(const Options &o, std::vector<Client> &clients, const ppkit::Filter &f,
		   std::ostream &out, std::ostream &err)
{
	Signals sig;
	auto take = [&] {
		std::vector<ppkit::Sample> all;
		for (Client &c : clients) {
			auto v = c.sample(f);
			all.insert(all.end(), v.begin(), v.end());
		}
		std::erase_if(all, [&](const ppkit::Sample &s) { return !o.filter.matches(s.pool); });
		return all;
	};

	ppkit::Rounds rounds;
	auto first = rounds.next(take());
	// Rates need statistics: a family without them only lists its pools.
	std::erase_if(clients, [&](Client &c) {
		if (c.has_stats())
			return false;
		note_no_stats(err);
		return true;
	});
	if (clients.empty()) {
		std::vector<ppkit::Pool> pools;
		for (const auto &r : first)
			pools.push_back(r.sample.pool);
		sort_rows_by(pools, o.pool_sort, [](const ppkit::Pool &p) { return fields_of(p); });
		if (o.json)
			write_list_doc(out, pools);
		else
			out << (pools.empty() ? "no pools\n" : pools_table(pools, render_options(o)));
		return kExitOk;
	}

	const auto period = std::chrono::duration_cast<std::chrono::steady_clock::duration>(
		std::chrono::duration<double>(*o.interval));
	const auto start = std::chrono::steady_clock::now();
	IntervalLayout layout;
	std::vector<pollfd> none;
	for (std::uint64_t seq = 1; !o.count || seq <= *o.count; seq++) {
		if (sig.wait(none, start + period * static_cast<std::int64_t>(seq)) < 0)
			break;
		std::vector<IntervalRow> rows;
		// A pool that appeared during the interval has no window yet.
		for (auto &r : rounds.next(take()))
			if (r.window)
				rows.push_back({std::move(r.sample), *r.window});
		// The interval's figures: served per second and its rates.
		sort_rows_by(rows, o.pool_sort, [](const IntervalRow &r) {
			SortFields sf = fields_of(r.sample);
			sf.served = r.window.served_per_second();
			sf.hit = r.window.hit;
			sf.recycle = r.window.recycle;
			return sf;
		});
		if (o.json) {
			write_interval_doc(out, rows, seq, *o.interval, now_ns());
		} else if (!rows.empty()) {
			out << interval_lines(rows, render_options(o), layout);
		}
		out.flush();
	}
	return kExitOk;
}

}  // namespace

int cmd_stats(const Options &o, std::ostream &out, std::ostream &err)
{
	ppkit::Filter f{o.ids, dev_index(o.dev)};
	auto clients = connect(o.source, err);
	if (o.interval)
		return stats_interval(o, clients, f, out, err);
	return stats_once(o, clients, f, out, err);
}

int cmd_set(const Options &o, std::ostream &out, std::ostream &)
{
	Client c(Source::Ppkit);
	ppkit::Pool p = c.set(o.pool, {o.ring_size, o.refill_batch});
	if (o.json) {
		out << set_doc(p).dump() << "\n";
		return kExitOk;
	}
	out << fmt::format("pool {}: ring size {}, refill batch {}\n", p.id,
			   p.ring_size ? std::to_string(*p.ring_size) : "-",
			   p.refill_batch ? std::to_string(*p.refill_batch) : "-");
	return kExitOk;
}

int cmd_monitor(const Options &o, std::ostream &out, std::ostream &err)
{
	Signals sig;
	std::vector<ppkit::Monitor> mons = open_sources<ppkit::Monitor>(o.source, err);
	std::string names;
	for (const auto &m : mons)
		names += (names.empty() ? "" : " and ") + std::string(to_string(m.source()));
	// Scripts wait for this line: from here on, no event is missed.
	err << "ppctl: watching " << names << " pool events\n" << std::flush;

	const RenderOptions ro = render_options(o);
	std::vector<pollfd> fds;
	for (const auto &m : mons)
		fds.push_back({m.fd(), POLLIN, 0});
	std::uint64_t seen = 0;
	while (!o.count || seen < *o.count) {
		if (sig.wait(fds, std::nullopt) < 0)
			break;
		for (std::size_t i = 0; i < fds.size(); i++) {
			if (!(fds[i].revents & POLLIN))
				continue;
			bool lost = false;
			auto events = mons[i].read(&lost);
			std::size_t max = o.count ? static_cast<std::size_t>(*o.count - seen)
						  : events.size();
			out << monitor_output(events, max, lost, mons[i].source(), o.json, ro,
					      now_ns());
			seen += std::min(max, events.size());
			out.flush();
			if (lost)
				err << "ppctl: the kernel dropped events (socket overrun): "
				       "run ppctl list to resynchronise\n";
		}
	}
	return kExitOk;
}

}  // namespace ppctl
