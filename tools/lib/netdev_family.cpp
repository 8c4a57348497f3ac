// SPDX-License-Identifier: GPL-2.0
#include "netdev_family.h"

#include <array>

#include <fmt/format.h>

#include "ppkit/error.h"

namespace ppkit::wire {

using namespace netdev;

namespace {

constexpr nla_policy sized(int type, std::uint16_t min, std::uint16_t max)
{
	nla_policy p{};
	p.type = static_cast<std::uint16_t>(type);
	p.minlen = min;
	p.maxlen = max;
	return p;
}

constexpr nla_policy u32p = sized(NLA_U32, 4, 4);
constexpr nla_policy uintp = sized(NLA_UNSPEC, 4, 8);	// ynl "uint"

const std::array<nla_policy, A_PAGE_POOL_MAX + 1> &pool_policy()
{
	static const auto p = [] {
		std::array<nla_policy, A_PAGE_POOL_MAX + 1> a{};
		a[A_PAGE_POOL_ID] = uintp;
		a[A_PAGE_POOL_IFINDEX] = u32p;
		a[A_PAGE_POOL_NAPI_ID] = u32p;
		a[A_PAGE_POOL_INFLIGHT] = uintp;
		a[A_PAGE_POOL_INFLIGHT_MEM] = uintp;
		a[A_PAGE_POOL_DETACH_TIME] = uintp;
		return a;
	}();
	return p;
}

const std::array<nla_policy, A_PAGE_POOL_STATS_MAX + 1> &stats_policy()
{
	static const auto p = [] {
		std::array<nla_policy, A_PAGE_POOL_STATS_MAX + 1> a{};
		a[A_PAGE_POOL_STATS_INFO].type = NLA_NESTED;
		for (int t = A_PAGE_POOL_STATS_ALLOC_FAST; t <= A_PAGE_POOL_STATS_MAX; t++)
			a[t] = uintp;
		return a;
	}();
	return p;
}

[[noreturn]] void malformed(const char *what, int err)
{
	throw Error(Errc::Protocol,
		    fmt::format("malformed netdev {} message from the kernel: {}", what,
				nl_geterror(err)));
}

std::uint32_t pool_id(const nlattr *a)
{
	std::uint64_t id = nl::get_uint(a);
	if (id > UINT32_MAX)
		throw Error(Errc::Protocol, fmt::format("netdev page-pool id {} out of range", id));
	return static_cast<std::uint32_t>(id);
}

}  // namespace

nl::MsgPtr netdev_pool_get(int family, std::optional<std::uint32_t> id)
{
	auto msg = nl::genl_request(family, CMD_PAGE_POOL_GET, kVersion, id ? 0 : NLM_F_DUMP);
	if (id)
		nl::put_u32(msg.get(), A_PAGE_POOL_ID, *id);
	return msg;
}

nl::MsgPtr netdev_stats_get(int family, std::optional<std::uint32_t> id)
{
	auto msg = nl::genl_request(family, CMD_PAGE_POOL_STATS_GET, kVersion,
				    id ? 0 : NLM_F_DUMP);
	if (id) {
		nlattr *info = nl::nest_start(msg.get(), A_PAGE_POOL_STATS_INFO);
		nl::put_u32(msg.get(), A_PAGE_POOL_ID, *id);
		nl::nest_end(msg.get(), info);
	}
	return msg;
}

Pool netdev_parse_pool(nl_msg *msg, std::int64_t boot_to_realtime_ns)
{
	std::array<nlattr *, A_PAGE_POOL_MAX + 1> tb{};
	int err = genlmsg_parse(nlmsg_hdr(msg), 0, tb.data(), A_PAGE_POOL_MAX,
				const_cast<nla_policy *>(pool_policy().data()));
	if (err < 0)
		malformed("page-pool", err);
	if (!tb[A_PAGE_POOL_ID])
		throw Error(Errc::Protocol, "netdev page-pool message without an id");

	Pool p;
	p.source = Source::Netdev;
	p.id = pool_id(tb[A_PAGE_POOL_ID]);
	if (tb[A_PAGE_POOL_IFINDEX])
		p.ifindex = nla_get_u32(tb[A_PAGE_POOL_IFINDEX]);
	if (tb[A_PAGE_POOL_NAPI_ID])
		p.napi_id = nla_get_u32(tb[A_PAGE_POOL_NAPI_ID]);
	if (tb[A_PAGE_POOL_INFLIGHT])
		p.inflight = nl::get_uint(tb[A_PAGE_POOL_INFLIGHT]);
	if (tb[A_PAGE_POOL_INFLIGHT_MEM])
		p.inflight_mem = nl::get_uint(tb[A_PAGE_POOL_INFLIGHT_MEM]);
	if (tb[A_PAGE_POOL_DETACH_TIME]) {
		std::int64_t t = static_cast<std::int64_t>(nl::get_uint(tb[A_PAGE_POOL_DETACH_TIME])) *
					 1000000000 +
				 boot_to_realtime_ns;
		p.detach_time_ns = t > 0 ? static_cast<std::uint64_t>(t) : 0;
	}
	return p;
}

Stats netdev_parse_stats(nl_msg *msg)
{
	std::array<nlattr *, A_PAGE_POOL_STATS_MAX + 1> tb{};
	int err = genlmsg_parse(nlmsg_hdr(msg), 0, tb.data(), A_PAGE_POOL_STATS_MAX,
				const_cast<nla_policy *>(stats_policy().data()));
	if (err < 0)
		malformed("page-pool-stats", err);
	if (!tb[A_PAGE_POOL_STATS_INFO])
		throw Error(Errc::Protocol, "netdev page-pool-stats message without its pool info");

	std::array<nlattr *, A_PAGE_POOL_MAX + 1> info{};
	err = nla_parse_nested(info.data(), A_PAGE_POOL_MAX, tb[A_PAGE_POOL_STATS_INFO],
			       const_cast<nla_policy *>(pool_policy().data()));
	if (err < 0)
		malformed("page-pool-stats info", err);
	if (!info[A_PAGE_POOL_ID])
		throw Error(Errc::Protocol, "netdev page-pool-stats message without a pool id");

	Stats s;
	s.source = Source::Netdev;
	s.pool_id = pool_id(info[A_PAGE_POOL_ID]);
	if (info[A_PAGE_POOL_IFINDEX])
		s.ifindex = nla_get_u32(info[A_PAGE_POOL_IFINDEX]);
	for (int t = A_PAGE_POOL_STATS_ALLOC_FAST; t <= A_PAGE_POOL_STATS_MAX; t++)
		if (tb[t])
			s.set(static_cast<Counter>(t - A_PAGE_POOL_STATS_ALLOC_FAST),
			      nl::get_uint(tb[t]));
	return s;
}

std::optional<Event::Kind> netdev_event_kind(std::uint8_t cmd)
{
	switch (cmd) {
	case CMD_PAGE_POOL_ADD_NTF:
		return Event::Kind::Add;
	case CMD_PAGE_POOL_DEL_NTF:
		return Event::Kind::Del;
	case CMD_PAGE_POOL_CHANGE_NTF:
		return Event::Kind::Change;
	default:
		return std::nullopt;
	}
}

static_assert(A_PAGE_POOL_STATS_RECYCLE_RELEASED_REFCNT - A_PAGE_POOL_STATS_ALLOC_FAST ==
	      static_cast<int>(Counter::RecycleReleasedRefcnt));

}  // namespace ppkit::wire
