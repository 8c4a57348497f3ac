// SPDX-License-Identifier: GPL-2.0
#include "render_holders.h"

#include <fmt/format.h>

#include "format.h"
#include "ppkit/json_writer.h"
#include "table.h"

namespace ppctl {

using nlohmann::json;

std::string netns_cell(const ppkit::Holder &h)
{
	if (!h.netns_name.empty())
		return h.netns_name;
	return fmt::format("net:[{}]", h.netns);
}

std::string processes_cell(const ppkit::Holder &h)
{
	if (h.processes.empty())
		return "-";
	std::string s;
	for (const auto &p : h.processes) {
		if (!s.empty())
			s += ',';
		s += fmt::format("{}/{}", p.comm, p.pid);
	}
	return s;
}

namespace {

std::string endpoint(const std::string &addr, std::uint16_t port)
{
	if (addr.empty())
		return "-";
	if (addr.find(':') != std::string::npos)
		return fmt::format("[{}]:{}", addr, port);
	return fmt::format("{}:{}", addr, port);
}

std::string age(std::uint64_t ms)
{
	if (ms < 1000)
		return fmt::format("{}ms", ms);
	if (ms < 600000)
		return fmt::format("{:.1f}s", static_cast<double>(ms) / 1000);
	return fmt::format("{}m", ms / 60000);
}

}  // namespace

std::string holders_text(const std::vector<PoolHolders> &v, const RenderOptions &o)
{
	std::string out;
	for (const auto &[pool, h] : v) {
		if (!out.empty())
			out += '\n';
		out += fmt::format("pool {} ({}, {}{}): {} pages with the driver, {} lent to the stack, "
				   "{} held",
				   pool.id, pool.owner.empty() ? "-" : pool.owner, dev_cell(pool),
				   pool.detach_time_ns ? ", destroyed" : "", h.driver_pages,
				   h.lent_pages, h.held_pages);
		if (h.held_pages)
			out += fmt::format(" (oldest {})", age(h.oldest_ms));
		out += fmt::format("; {} orphaned so far\n", h.orphaned);
		if (h.held_pages) {
			out += "  held for";
			for (std::size_t i = 0; i < h.held_age.size(); i++)
				out += fmt::format("  {}{}: {}", i + 1 < h.held_age.size() ? "<" : ">=",
						   i + 1 < h.held_age.size() ? ppkit::kHeldAgeNames[i]
									     : "10s",
						   h.held_age[i]);
			out += '\n';
		}
		out += fmt::format("  {} sockets walked{}, {} held pages in none of them\n", h.sockets,
				   h.truncated ? " (stopped at a bound: partial)" : "",
				   h.unattributed);
		if (h.holders.empty())
			continue;
		Table t({{"PROTO", false},
			 {"NETNS", false},
			 {"LOCAL", false},
			 {"REMOTE", false},
			 {"PAGES"},
			 {"OLDEST"},
			 {"INODE", true, 2},
			 {"UID", true, 3},
			 {"PROCESS", false, 1}});
		for (const auto &x : h.holders)
			t.add({ppkit::holder_proto(x), netns_cell(x), endpoint(x.local, x.local_port),
			       endpoint(x.remote, x.remote_port), std::to_string(x.pages),
			       age(x.oldest_ms), std::to_string(x.inode), std::to_string(x.uid),
			       processes_cell(x)});
		std::string tab = t.render(o.width);
		for (std::size_t at = 0; at < tab.size();) {
			std::size_t nl = tab.find('\n', at);
			std::size_t end = nl == std::string::npos ? tab.size() : nl + 1;
			out += "  " + tab.substr(at, end - at);
			at = end;
		}
	}
	return out;
}

json holders_doc(const std::vector<PoolHolders> &v)
{
	json pools = json::array();
	for (const auto &[pool, h] : v) {
		json age = json::object();
		for (std::size_t i = 0; i < h.held_age.size(); i++)
			age[ppkit::kHeldAgeNames[i]] = h.held_age[i];
		json holders = json::array();
		for (const auto &x : h.holders) {
			json procs = json::array();
			for (const auto &p : x.processes)
				procs.push_back({{"pid", p.pid}, {"comm", ppkit::valid_utf8(p.comm)}});
			holders.push_back({
				{"proto", ppkit::holder_proto(x)},
				{"family", x.family},
				{"protocol", x.protocol},
				{"state", x.state},
				{"netns", x.netns},
				{"netns_name", x.netns_name.empty() ? json(nullptr)
								     : json(ppkit::valid_utf8(x.netns_name))},
				{"local", x.local.empty() ? json(nullptr) : json(x.local)},
				{"local_port", x.local.empty() ? json(nullptr) : json(x.local_port)},
				{"remote", x.remote.empty() ? json(nullptr) : json(x.remote)},
				{"remote_port", x.remote.empty() ? json(nullptr) : json(x.remote_port)},
				{"inode", x.inode},
				{"uid", x.uid},
				{"pages", x.pages},
				{"oldest_ms", x.oldest_ms},
				{"processes", procs},
			});
		}
		pools.push_back({
			{"id", pool.id},
			{"owner", ppkit::valid_utf8(pool.owner)},
			{"ifindex", opt(pool.ifindex)},
			{"ifname",
			 pool.ifname.empty() ? json(nullptr) : json(ppkit::valid_utf8(pool.ifname))},
			{"detached", pool.detach_time_ns.has_value()},
			{"driver_pages", h.driver_pages},
			{"lent_pages", h.lent_pages},
			{"held_pages", h.held_pages},
			{"held_age", age},
			{"oldest_ms", h.oldest_ms},
			{"orphaned", h.orphaned},
			{"sockets_walked", h.sockets},
			{"unattributed", h.unattributed},
			{"truncated", h.truncated},
			{"holders", holders},
		});
	}
	return {{"command", "holders"}, {"pools", pools}, {"version", kJsonVersion}};
}

}  // namespace ppctl
