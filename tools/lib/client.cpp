// SPDX-License-Identifier: GPL-2.0
#include "ppkit/client.h"

#include <algorithm>
#include <cerrno>
#include <ctime>
#include <unordered_map>
#include <unordered_set>

#include <linux/ppkit.h>
#include <net/if.h>

#include "backend.h"
#include "netdev_family.h"
#include "nl.h"
#include "ppkit_family.h"

namespace ppkit {

std::int64_t boot_to_realtime_ns()
{
	timespec rt{}, bt{};
	clock_gettime(CLOCK_REALTIME, &rt);
	clock_gettime(CLOCK_BOOTTIME, &bt);
	return (static_cast<std::int64_t>(rt.tv_sec) - bt.tv_sec) * 1000000000 +
	       (rt.tv_nsec - bt.tv_nsec);
}

std::string ifname(std::uint32_t ifindex)
{
	char buf[IF_NAMESIZE] = {};
	return if_indextoname(ifindex, buf) ? std::string(buf) : std::string();
}

namespace detail {

namespace {

std::uint64_t realtime_ns()
{
	timespec ts{};
	clock_gettime(CLOCK_REALTIME, &ts);
	return static_cast<std::uint64_t>(ts.tv_sec) * 1000000000 +
	       static_cast<std::uint64_t>(ts.tv_nsec);
}

// Every reply of one request, parsed by @parse; kernel errors worded for @ctx.
template <typename T, typename Parse>
std::vector<T> collect(nl::Socket &sock, nl::MsgPtr req, Parse parse, const ErrorContext &ctx)
{
	std::vector<T> out;
	nl::Reply r = sock.transact(std::move(req), [&](nl_msg *m) { out.push_back(parse(m)); });
	if (r.err)
		throw kernel_error(r.err, std::move(r.extack), ctx);
	return out;
}

template <typename T>
T only(std::vector<T> v, const ErrorContext &ctx)
{
	if (v.size() != 1)
		throw Error(Errc::Protocol,
			    std::string(ctx.op) + ": expected one reply from the kernel, got " +
				    std::to_string(v.size()));
	return std::move(v.front());
}

class PpkitBackend final : public Backend {
public:
	PpkitBackend()
	{
		family_ = sock_.family(PPKIT_FAMILY_NAME);
		if (!family_)
			throw family_missing(Source::Ppkit);
	}

	Source source() const override { return Source::Ppkit; }
	std::size_t last_count_ = 0;
	bool ages_ = true;
	bool no_ages_ = false;	// the module does not know the flag
	std::size_t last_pools_ = 0;

	std::vector<Pool> pools() override
	{
		// Parsed where the dump's batches lie, as stats() does: no
		// libnl message (an allocation and a copy) per pool.
		std::vector<Pool> out;
		out.reserve(last_pools_);
		nl::Reply r = sock_.dump(wire::ppkit_pool_get(family_, std::nullopt),
					 [&](const nlmsghdr *h) {
						 out.push_back(wire::ppkit_parse_pool(h));
					 });
		if (r.err)
			throw kernel_error(r.err, std::move(r.extack), {Source::Ppkit, "pool-get", {}});
		last_pools_ = out.size();
		return out;
	}

	Pool pool(std::uint32_t id) override
	{
		ErrorContext ctx{Source::Ppkit, "pool-get", id};
		return only(collect<Pool>(sock_, wire::ppkit_pool_get(family_, id),
					  [](nl_msg *m) { return wire::ppkit_parse_pool(m); }, ctx),
			    ctx);
	}

	std::optional<std::vector<Stats>> stats(std::optional<std::uint32_t> ifindex) override
	{
		// The one dump ppctld makes every second: parsed in place.
		std::vector<Stats> out;
		out.reserve(last_count_);
		asking_ages([&] {
			out.clear();
			nl::Reply r = sock_.dump(
				wire::ppkit_stats_get(family_, std::nullopt, ifindex, ages_),
				[&](const nlmsghdr *h) { wire::ppkit_parse_stats(h, out.emplace_back()); });
			if (r.err)
				throw kernel_error(r.err, std::move(r.extack),
						   {Source::Ppkit, "stats-get", {}});
		});
		last_count_ = out.size();
		return out;
	}

	std::optional<Stats> stats(std::uint32_t id) override
	{
		ErrorContext ctx{Source::Ppkit, "stats-get", id};
		return asking_ages([&] {
			return only(collect<Stats>(sock_,
						   wire::ppkit_stats_get(family_, id, std::nullopt, ages_),
						   [](nl_msg *m) { return wire::ppkit_parse_stats(m); },
						   ctx),
				    ctx);
		});
	}

	bool has_stats() override { return true; }

	void set_lent_ages(bool on) override { ages_ = on && !no_ages_; }

	void set(std::uint32_t id, const PoolSettings &s) override
	{
		nl::Reply r = sock_.transact(wire::ppkit_pool_set(family_, id, s), [](nl_msg *) {});
		if (r.err)
			throw kernel_error(r.err, std::move(r.extack),
					   {Source::Ppkit, "pool-set", id});
	}

	Holders holders(std::uint32_t id) override
	{
		ErrorContext ctx{Source::Ppkit, "holders-get", id};
		return only(collect<Holders>(sock_, wire::ppkit_holders_get(family_, id),
					     [](nl_msg *m) { return wire::ppkit_parse_holders(m); },
					     ctx),
			    ctx);
	}

private:
	// @ask(), and once more without the lent-ages flag if the module
	// refused it as an unknown attribute (a pp_backport older than the
	// flag), which is then never set again.
	template <typename F>
	auto asking_ages(F ask) -> decltype(ask())
	{
		try {
			return ask();
		} catch (const Error &e) {
			if (!ages_ || !unknown_attribute(-e.sys_errno(), e.extack()))
				throw;
		}
		ages_ = false;
		no_ages_ = true;
		return ask();
	}

	nl::Socket sock_;
	int family_ = 0;
};

class NetdevBackend final : public Backend {
public:
	NetdevBackend()
	{
		family_ = sock_.family(wire::netdev::kFamily);
		if (!family_)
			throw family_missing(Source::Netdev);
	}

	Source source() const override { return Source::Netdev; }

	std::vector<Pool> pools() override
	{
		auto off = boot_to_realtime_ns();
		return collect<Pool>(sock_, wire::netdev_pool_get(family_, std::nullopt),
				     [off](nl_msg *m) { return wire::netdev_parse_pool(m, off); },
				     {Source::Netdev, "page-pool-get", {}});
	}

	Pool pool(std::uint32_t id) override
	{
		auto off = boot_to_realtime_ns();
		ErrorContext ctx{Source::Netdev, "page-pool-get", id};
		return only(collect<Pool>(sock_, wire::netdev_pool_get(family_, id),
					  [off](nl_msg *m) { return wire::netdev_parse_pool(m, off); },
					  ctx),
			    ctx);
	}

	std::optional<std::vector<Stats>> stats(std::optional<std::uint32_t> ifindex) override
	{
		if (has_stats_ == false)
			return std::nullopt;
		try {
			auto all = collect<Stats>(sock_, wire::netdev_stats_get(family_, std::nullopt),
						  wire::netdev_parse_stats,
						  {Source::Netdev, "page-pool-stats-get", {}});
			has_stats_ = true;
			if (ifindex)
				std::erase_if(all, [&](const Stats &s) { return s.ifindex != ifindex; });
			return all;
		} catch (const Error &e) {
			if (e.code() != Errc::NotSupported)
				throw;
			has_stats_ = false;
			return std::nullopt;
		}
	}

	std::optional<Stats> stats(std::uint32_t id) override
	{
		if (has_stats_ == false)
			return std::nullopt;
		ErrorContext ctx{Source::Netdev, "page-pool-stats-get", id};
		try {
			auto s = only(collect<Stats>(sock_, wire::netdev_stats_get(family_, id),
						     wire::netdev_parse_stats, ctx),
				      ctx);
			has_stats_ = true;
			return s;
		} catch (const Error &e) {
			if (e.code() != Errc::NotSupported)
				throw;
			has_stats_ = false;
			return std::nullopt;
		}
	}

	bool has_stats() override
	{
		if (!has_stats_)
			stats(std::optional<std::uint32_t>());
		return has_stats_.value_or(false);
	}

	void set(std::uint32_t, const PoolSettings &) override
	{
		throw Error(Errc::NotSupported,
			    "the netdev family cannot change a page_pool: only ppkit pools can be set");
	}

	Holders holders(std::uint32_t) override
	{
		throw Error(Errc::NotSupported,
			    "the netdev family does not say who holds a page_pool's pages: "
			    "only ppkit pools (pp_backport) can be asked");
	}

private:
	nl::Socket sock_;
	int family_ = 0;
	std::optional<bool> has_stats_;
};

}  // namespace

std::unique_ptr<Backend> make_backend(Source source)
{
	if (source == Source::Ppkit)
		return std::make_unique<PpkitBackend>();
	return std::make_unique<NetdevBackend>();
}

bool unknown_attribute(int err, std::string_view extack)
{
	// lib/nlattr.c's words for an attribute type above the policy's maximum.
	return (err == -EINVAL || err == EINVAL) &&
	       extack.find("Unknown attribute type") != std::string_view::npos;
}

void resolve_ifnames(std::vector<Pool> &pools)
{
	std::unordered_map<std::uint32_t, std::string> names;
	for (Pool &p : pools) {
		if (!p.ifindex)
			continue;
		auto it = names.find(*p.ifindex);
		if (it == names.end())
			it = names.emplace(*p.ifindex, ifname(*p.ifindex)).first;
		p.ifname = it->second;
	}
}

}  // namespace detail

Client::Client(Source source) : impl_(detail::make_backend(source)) {}
Client::~Client() = default;
Client::Client(Client &&) noexcept = default;
Client &Client::operator=(Client &&) noexcept = default;

Source Client::source() const
{
	return impl_->source();
}

std::vector<Pool> Client::pools()
{
	auto v = impl_->pools();
	detail::resolve_ifnames(v);
	// The netdev family dumps device by device, each device's newest pool
	// first: ppctl lists every source by id.
	std::sort(v.begin(), v.end(), [](const Pool &a, const Pool &b) { return a.id < b.id; });
	return v;
}

Pool Client::pool(std::uint32_t id)
{
	std::vector<Pool> v{impl_->pool(id)};
	detail::resolve_ifnames(v);
	return std::move(v.front());
}

std::vector<Stats> Client::stats(std::optional<std::uint32_t> ifindex)
{
	auto v = impl_->stats(ifindex);
	if (!v)
		throw Error(Errc::NotSupported, "this kernel has no page_pool stats "
						"(CONFIG_PAGE_POOL_STATS is off)");
	return std::move(*v);
}

Stats Client::stats(std::uint32_t id)
{
	auto s = impl_->stats(id);
	if (!s)
		throw Error(Errc::NotSupported, "this kernel has no page_pool stats "
						"(CONFIG_PAGE_POOL_STATS is off)");
	return std::move(*s);
}

bool Client::has_stats()
{
	return impl_->has_stats();
}

void Client::set_lent_ages(bool on)
{
	impl_->set_lent_ages(on);
}

// Up to this many ids are asked for one by one; more, and one dump of every
// pool costs less than two requests per id.
constexpr std::size_t kFewIds = 2;

std::vector<Sample> Client::sample(const Filter &filter)
{
	std::vector<Pool> pools;
	std::vector<Stats> stats;
	bool with_stats = true;

	if (filter.ids.size() > kFewIds) {
		// One dump of each kind, not a request of each kind per id; an id
		// the dump lacks is asked for alone, for the kernel's own error.
		std::unordered_set<std::uint32_t> want(filter.ids.begin(), filter.ids.end());
		pools = impl_->pools();
		std::erase_if(pools, [&](const Pool &p) { return !want.contains(p.id); });
		std::unordered_set<std::uint32_t> found;
		for (const Pool &p : pools)
			found.insert(p.id);
		for (std::uint32_t id : want)
			if (!found.contains(id))
				pools.push_back(impl_->pool(id));
		if (filter.ifindex)
			std::erase_if(pools, [&](const Pool &p) { return p.ifindex != filter.ifindex; });
		auto s = impl_->stats(filter.ifindex);
		if (s)
			stats = std::move(*s);
	} else if (!filter.ids.empty()) {
		for (std::uint32_t id : filter.ids) {
			pools.push_back(impl_->pool(id));
			if (with_stats) {
				auto s = impl_->stats(id);
				if (s)
					stats.push_back(std::move(*s));
				else
					with_stats = false;
			}
		}
		if (filter.ifindex)
			std::erase_if(pools, [&](const Pool &p) { return p.ifindex != filter.ifindex; });
	} else {
		pools = impl_->pools();
		if (filter.ifindex)
			std::erase_if(pools, [&](const Pool &p) { return p.ifindex != filter.ifindex; });
		auto s = impl_->stats(filter.ifindex);
		if (s)
			stats = std::move(*s);
	}
	auto taken = std::chrono::steady_clock::now();
	auto now = detail::realtime_ns();
	detail::resolve_ifnames(pools);

	std::unordered_map<std::uint32_t, Stats *> by_id;
	for (Stats &s : stats)
		by_id.emplace(s.pool_id, &s);

	std::vector<Sample> out;
	out.reserve(pools.size());
	for (Pool &p : pools) {
		Sample smp;
		auto it = by_id.find(p.id);
		if (it != by_id.end())
			smp.stats = std::move(*it->second);
		else
			smp.stats.pool_id = p.id;
		smp.stats.source = p.source;
		smp.pool = std::move(p);
		smp.taken = taken;
		smp.realtime_ns = now;
		out.push_back(std::move(smp));
	}
	std::sort(out.begin(), out.end(),
		  [](const Sample &a, const Sample &b) { return a.pool.id < b.pool.id; });
	return out;
}

Holders Client::holders(std::uint32_t id)
{
	return impl_->holders(id);
}

Pool Client::set(std::uint32_t id, const PoolSettings &settings)
{
	impl_->set(id, settings);
	return pool(id);
}

}  // namespace ppkit
