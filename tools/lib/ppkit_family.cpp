// SPDX-License-Identifier: GPL-2.0
#include "ppkit_family.h"

#include <cstring>

#include <array>

#include <arpa/inet.h>

#include <linux/ppkit.h>

#include <fmt/format.h>

#include "ppkit/error.h"

namespace ppkit::wire {

namespace {

constexpr nla_policy fixed(int type, std::uint16_t len)
{
	nla_policy p{};
	p.type = static_cast<std::uint16_t>(type);
	p.minlen = len;
	p.maxlen = len;
	return p;
}

constexpr nla_policy u32p = fixed(NLA_U32, 4);
constexpr nla_policy s32p = fixed(NLA_S32, 4);
constexpr nla_policy u64p = fixed(NLA_U64, 8);

// What the uapi says each attribute is; anything else is a protocol error.
const std::array<nla_policy, PPKIT_A_POOL_MAX + 1> &pool_policy()
{
	static const auto p = [] {
		std::array<nla_policy, PPKIT_A_POOL_MAX + 1> a{};
		a[PPKIT_A_POOL_ID] = u32p;
		a[PPKIT_A_POOL_OWNER].type = NLA_STRING;
		a[PPKIT_A_POOL_IFINDEX] = u32p;
		a[PPKIT_A_POOL_QUEUE] = u32p;
		a[PPKIT_A_POOL_NAPI_ID] = u32p;
		a[PPKIT_A_POOL_NID] = s32p;
		a[PPKIT_A_POOL_ORDER] = u32p;
		a[PPKIT_A_POOL_RING_SIZE] = u32p;
		a[PPKIT_A_POOL_CACHE_SIZE] = u32p;
		a[PPKIT_A_POOL_REFILL_BATCH] = u32p;
		a[PPKIT_A_POOL_MAX_LEN] = u32p;
		a[PPKIT_A_POOL_DMA_DIR] = u32p;
		a[PPKIT_A_POOL_INFLIGHT] = u64p;
		a[PPKIT_A_POOL_INFLIGHT_MEM] = u64p;
		a[PPKIT_A_POOL_CREATED] = u64p;
		a[PPKIT_A_POOL_DETACH_TIME] = u64p;
		return a;
	}();
	return p;
}

// What a stats attribute is, by type: the one table the parser looks up.
enum class StatsAttr : std::uint8_t { Ignore, PoolId, Ifindex, Counter32, Counter64 };

constexpr std::array<StatsAttr, PPKIT_A_STATS_MAX + 1> stats_attrs()
{
	std::array<StatsAttr, PPKIT_A_STATS_MAX + 1> a{};
	for (int t = PPKIT_A_STATS_FIRST_COUNTER; t <= PPKIT_A_STATS_LAST_VALUE; t++)
		a[t] = StatsAttr::Counter64;
	a[PPKIT_A_STATS_POOL_ID] = StatsAttr::PoolId;
	a[PPKIT_A_STATS_IFINDEX] = StatsAttr::Ifindex;
	a[PPKIT_A_STATS_CACHE_PAGES] = StatsAttr::Counter32;
	a[PPKIT_A_STATS_RING_PAGES] = StatsAttr::Counter32;
	a[PPKIT_A_STATS_LENT_PAGES] = StatsAttr::Counter32;
	a[PPKIT_A_STATS_LENT_HELD] = StatsAttr::Counter32;
	return a;
}
constexpr auto kStatsAttrs = stats_attrs();
static_assert(PPKIT_A_STATS_LAST_VALUE - PPKIT_A_STATS_FIRST_COUNTER + 1 == kCounterCount,
	      "a counter of Stats for every counter attribute");

template <std::size_t N>
void parse(const nlmsghdr *nlh, std::array<nlattr *, N> &tb,
	   const std::array<nla_policy, N> &policy, const char *what)
{
	int err = genlmsg_parse(const_cast<nlmsghdr *>(nlh), 0, tb.data(), static_cast<int>(N - 1),
				const_cast<nla_policy *>(policy.data()));
	if (err < 0)
		throw Error(Errc::Protocol,
			    fmt::format("malformed {} message from the kernel: {}", what,
					nl_geterror(err)));
}

std::optional<std::uint32_t> opt_u32(nlattr *a)
{
	return a ? std::optional(nla_get_u32(a)) : std::nullopt;
}

std::optional<std::uint64_t> opt_u64(nlattr *a)
{
	return a ? std::optional(nla_get_u64(a)) : std::nullopt;
}

}  // namespace

nl::MsgPtr ppkit_pool_get(int family, std::optional<std::uint32_t> id)
{
	auto msg = nl::genl_request(family, PPKIT_CMD_POOL_GET, PPKIT_FAMILY_VERSION,
				    id ? 0 : NLM_F_DUMP);
	if (id)
		nl::put_u32(msg.get(), PPKIT_A_POOL_ID, *id);
	return msg;
}

nl::MsgPtr ppkit_stats_get(int family, std::optional<std::uint32_t> id,
			   std::optional<std::uint32_t> ifindex, bool lent_ages)
{
	auto msg = nl::genl_request(family, PPKIT_CMD_STATS_GET, PPKIT_FAMILY_VERSION,
				    id ? 0 : NLM_F_DUMP);
	if (id)
		nl::put_u32(msg.get(), PPKIT_A_STATS_POOL_ID, *id);
	else if (ifindex)
		nl::put_u32(msg.get(), PPKIT_A_STATS_IFINDEX, *ifindex);
	if (lent_ages)
		nl::put_flag(msg.get(), PPKIT_A_STATS_LENT_AGES);
	return msg;
}

nl::MsgPtr ppkit_pool_set(int family, std::uint32_t id, const PoolSettings &s)
{
	if (!s.ring_size && !s.refill_batch)
		throw Error(Errc::InvalidArgument, "pool-set: nothing to set");
	auto msg = nl::genl_request(family, PPKIT_CMD_POOL_SET, PPKIT_FAMILY_VERSION, 0);
	nl::put_u32(msg.get(), PPKIT_A_POOL_ID, id);
	if (s.ring_size)
		nl::put_u32(msg.get(), PPKIT_A_POOL_RING_SIZE, *s.ring_size);
	if (s.refill_batch)
		nl::put_u32(msg.get(), PPKIT_A_POOL_REFILL_BATCH, *s.refill_batch);
	return msg;
}

nl::MsgPtr ppkit_holders_get(int family, std::uint32_t id)
{
	auto msg = nl::genl_request(family, PPKIT_CMD_HOLDERS_GET, PPKIT_FAMILY_VERSION, 0);
	nl::put_u32(msg.get(), PPKIT_A_HOLDERS_POOL_ID, id);
	return msg;
}

namespace {

// An address attribute as text: 4 bytes IPv4, 16 IPv6.
std::string addr_text(nlattr *a)
{
	if (!a)
		return {};
	char buf[INET6_ADDRSTRLEN] = {};
	int len = nla_len(a);
	if ((len != 4 && len != 16) ||
	    !inet_ntop(len == 4 ? AF_INET : AF_INET6, nla_data(a), buf, sizeof(buf)))
		throw Error(Errc::Protocol, "malformed holder address from the kernel");
	return buf;
}

Holder parse_holder(nlattr *nest)
{
	static const auto policy = [] {
		std::array<nla_policy, PPKIT_A_HOLDER_MAX + 1> a{};
		a[PPKIT_A_HOLDER_NETNS] = u32p;
		a[PPKIT_A_HOLDER_FAMILY] = fixed(NLA_U16, 2);
		a[PPKIT_A_HOLDER_PROTOCOL] = fixed(NLA_U16, 2);
		a[PPKIT_A_HOLDER_STATE] = fixed(NLA_U8, 1);
		a[PPKIT_A_HOLDER_LOCAL_PORT] = fixed(NLA_U16, 2);
		a[PPKIT_A_HOLDER_REMOTE_PORT] = fixed(NLA_U16, 2);
		a[PPKIT_A_HOLDER_INODE] = u64p;
		a[PPKIT_A_HOLDER_UID] = u32p;
		a[PPKIT_A_HOLDER_PAGES] = u32p;
		a[PPKIT_A_HOLDER_OLDEST_MS] = u64p;
		return a;
	}();
	std::array<nlattr *, PPKIT_A_HOLDER_MAX + 1> tb{};
	if (int err = nla_parse_nested(tb.data(), PPKIT_A_HOLDER_MAX, nest,
				       const_cast<nla_policy *>(policy.data()));
	    err < 0)
		throw Error(Errc::Protocol,
			    fmt::format("malformed holder from the kernel: {}", nl_geterror(err)));
	Holder h;
	h.netns = opt_u32(tb[PPKIT_A_HOLDER_NETNS]).value_or(0);
	if (tb[PPKIT_A_HOLDER_FAMILY])
		h.family = nla_get_u16(tb[PPKIT_A_HOLDER_FAMILY]);
	if (tb[PPKIT_A_HOLDER_PROTOCOL])
		h.protocol = nla_get_u16(tb[PPKIT_A_HOLDER_PROTOCOL]);
	if (tb[PPKIT_A_HOLDER_STATE])
		h.state = nla_get_u8(tb[PPKIT_A_HOLDER_STATE]);
	h.local = addr_text(tb[PPKIT_A_HOLDER_LOCAL_ADDR]);
	h.remote = addr_text(tb[PPKIT_A_HOLDER_REMOTE_ADDR]);
	if (tb[PPKIT_A_HOLDER_LOCAL_PORT])
		h.local_port = nla_get_u16(tb[PPKIT_A_HOLDER_LOCAL_PORT]);
	if (tb[PPKIT_A_HOLDER_REMOTE_PORT])
		h.remote_port = nla_get_u16(tb[PPKIT_A_HOLDER_REMOTE_PORT]);
	h.inode = opt_u64(tb[PPKIT_A_HOLDER_INODE]).value_or(0);
	h.uid = opt_u32(tb[PPKIT_A_HOLDER_UID]).value_or(0);
	h.pages = opt_u32(tb[PPKIT_A_HOLDER_PAGES]).value_or(0);
	h.oldest_ms = opt_u64(tb[PPKIT_A_HOLDER_OLDEST_MS]).value_or(0);
	return h;
}

}  // namespace

Holders ppkit_parse_holders(nl_msg *msg)
{
	static const auto policy = [] {
		std::array<nla_policy, PPKIT_A_HOLDERS_MAX + 1> a{};
		a[PPKIT_A_HOLDERS_POOL_ID] = u32p;
		a[PPKIT_A_HOLDERS_DRIVER_PAGES] = u64p;
		a[PPKIT_A_HOLDERS_LENT_PAGES] = u32p;
		a[PPKIT_A_HOLDERS_HELD_PAGES] = u32p;
		for (int t = PPKIT_A_HOLDERS_HELD_10MS; t <= PPKIT_A_HOLDERS_HELD_LONGER; t++)
			a[t] = u32p;
		a[PPKIT_A_HOLDERS_OLDEST_MS] = u64p;
		a[PPKIT_A_HOLDERS_ORPHANED] = u64p;
		a[PPKIT_A_HOLDERS_SOCKETS] = u32p;
		a[PPKIT_A_HOLDERS_UNATTRIBUTED] = u32p;
		a[PPKIT_A_HOLDERS_TRUNCATED].type = NLA_FLAG;
		a[PPKIT_A_HOLDERS_HOLDER].type = NLA_NESTED;
		return a;
	}();
	const nlmsghdr *nlh = nlmsg_hdr(msg);
	std::array<nlattr *, PPKIT_A_HOLDERS_MAX + 1> tb{};
	parse(nlh, tb, policy, "holders");
	if (!tb[PPKIT_A_HOLDERS_POOL_ID])
		throw Error(Errc::Protocol, "holders message from the kernel without a pool id");

	Holders h;
	h.pool_id = nla_get_u32(tb[PPKIT_A_HOLDERS_POOL_ID]);
	h.driver_pages = opt_u64(tb[PPKIT_A_HOLDERS_DRIVER_PAGES]).value_or(0);
	h.lent_pages = opt_u32(tb[PPKIT_A_HOLDERS_LENT_PAGES]).value_or(0);
	h.held_pages = opt_u32(tb[PPKIT_A_HOLDERS_HELD_PAGES]).value_or(0);
	for (std::size_t i = 0; i < h.held_age.size(); i++)
		h.held_age[i] = opt_u32(tb[PPKIT_A_HOLDERS_HELD_10MS + i]).value_or(0);
	h.oldest_ms = opt_u64(tb[PPKIT_A_HOLDERS_OLDEST_MS]).value_or(0);
	h.orphaned = opt_u64(tb[PPKIT_A_HOLDERS_ORPHANED]).value_or(0);
	h.sockets = opt_u32(tb[PPKIT_A_HOLDERS_SOCKETS]).value_or(0);
	h.unattributed = opt_u32(tb[PPKIT_A_HOLDERS_UNATTRIBUTED]).value_or(0);
	h.truncated = tb[PPKIT_A_HOLDERS_TRUNCATED] != nullptr;
	// The holders are a repeated attribute: the parse above kept only the last.
	auto *gh = static_cast<genlmsghdr *>(nlmsg_data(nlh));
	nlattr *pos;
	int rem;
	nla_for_each_attr(pos, genlmsg_attrdata(gh, 0), genlmsg_attrlen(gh, 0), rem)
	{
		if (nla_type(pos) == PPKIT_A_HOLDERS_HOLDER)
			h.holders.push_back(parse_holder(pos));
	}
	return h;
}

Pool ppkit_parse_pool(nl_msg *msg)
{
	return ppkit_parse_pool(static_cast<const nlmsghdr *>(nlmsg_hdr(msg)));
}

Pool ppkit_parse_pool(const nlmsghdr *nlh)
{
	std::array<nlattr *, PPKIT_A_POOL_MAX + 1> tb{};
	parse(nlh, tb, pool_policy(), "pool");
	if (!tb[PPKIT_A_POOL_ID])
		throw Error(Errc::Protocol, "pool message from the kernel without a pool id");

	Pool p;
	p.source = Source::Ppkit;
	p.id = nla_get_u32(tb[PPKIT_A_POOL_ID]);
	if (tb[PPKIT_A_POOL_OWNER])
		p.owner = nla_get_string(tb[PPKIT_A_POOL_OWNER]);
	p.ifindex = opt_u32(tb[PPKIT_A_POOL_IFINDEX]);
	p.queue = opt_u32(tb[PPKIT_A_POOL_QUEUE]);
	p.napi_id = opt_u32(tb[PPKIT_A_POOL_NAPI_ID]);
	if (tb[PPKIT_A_POOL_NID])
		p.nid = nla_get_s32(tb[PPKIT_A_POOL_NID]);
	p.order = opt_u32(tb[PPKIT_A_POOL_ORDER]);
	p.ring_size = opt_u32(tb[PPKIT_A_POOL_RING_SIZE]);
	p.cache_size = opt_u32(tb[PPKIT_A_POOL_CACHE_SIZE]);
	p.refill_batch = opt_u32(tb[PPKIT_A_POOL_REFILL_BATCH]);
	p.max_len = opt_u32(tb[PPKIT_A_POOL_MAX_LEN]);
	p.dma_dir = opt_u32(tb[PPKIT_A_POOL_DMA_DIR]);
	p.inflight = opt_u64(tb[PPKIT_A_POOL_INFLIGHT]);
	p.inflight_mem = opt_u64(tb[PPKIT_A_POOL_INFLIGHT_MEM]);
	p.created_ns = opt_u64(tb[PPKIT_A_POOL_CREATED]);
	p.detach_time_ns = opt_u64(tb[PPKIT_A_POOL_DETACH_TIME]);
	return p;
}

Stats ppkit_parse_stats(nl_msg *msg)
{
	return ppkit_parse_stats(static_cast<const nlmsghdr *>(nlmsg_hdr(msg)));
}

Stats ppkit_parse_stats(const nlmsghdr *nlh)
{
	Stats s;
	ppkit_parse_stats(nlh, s);
	return s;
}

// One pass over the attributes: this runs for every pool at every sample
// of ppctld, where a policy parse into a table, a second walk and a libnl
// call per attribute access showed in profiles (1,000 pools under TCG).
// The walk uses the uapi's own NLA_* layout macros and one table lookup per
// attribute; the checks are the policy's: a counter of the wrong size is an
// error.
void ppkit_parse_stats(const nlmsghdr *nlh, Stats &s)
{
	if (nlh->nlmsg_len < NLMSG_HDRLEN + GENL_HDRLEN)
		throw Error(Errc::Protocol, "malformed stats message from the kernel: short header");
	const auto *p = reinterpret_cast<const unsigned char *>(nlh) + NLMSG_HDRLEN + GENL_HDRLEN;
	std::size_t left = nlh->nlmsg_len - NLMSG_HDRLEN - GENL_HDRLEN;
	s = Stats{};
	s.source = Source::Ppkit;
	bool have_id = false;
	while (left >= NLA_HDRLEN) {
		nlattr a;
		std::memcpy(&a, p, sizeof(a));
		if (a.nla_len < NLA_HDRLEN || a.nla_len > left)
			throw Error(Errc::Protocol,
				    "malformed stats message from the kernel: attribute overruns it");
		const unsigned t = a.nla_type & NLA_TYPE_MASK;
		const StatsAttr kind = t < kStatsAttrs.size() ? kStatsAttrs[t] : StatsAttr::Ignore;
		if (kind != StatsAttr::Ignore) {
			const std::size_t len = a.nla_len - NLA_HDRLEN;
			const bool u32 = kind != StatsAttr::Counter64;
			if (len != (u32 ? 4 : 8))
				throw Error(Errc::Protocol,
					    fmt::format("malformed stats message from the kernel: "
							"attribute {} is {} bytes",
							t, len));
			std::uint64_t v;
			if (u32) {
				std::uint32_t v32;
				std::memcpy(&v32, p + NLA_HDRLEN, 4);
				v = v32;
			} else {
				std::memcpy(&v, p + NLA_HDRLEN, 8);
			}
			if (kind == StatsAttr::PoolId) {
				s.pool_id = static_cast<std::uint32_t>(v);
				have_id = true;
			} else if (kind == StatsAttr::Ifindex) {
				s.ifindex = static_cast<std::uint32_t>(v);
			} else {
				const std::size_t i = t - PPKIT_A_STATS_FIRST_COUNTER;
				s.values[i] = v;
				s.present[i] = true;
			}
		}
		const std::size_t step = NLA_ALIGN(a.nla_len);
		if (step >= left)
			break;
		p += step;
		left -= step;
	}
	if (!have_id)
		throw Error(Errc::Protocol, "stats message from the kernel without a pool id");
}

std::optional<Event::Kind> ppkit_event_kind(std::uint8_t cmd)
{
	switch (cmd) {
	case PPKIT_CMD_POOL_ADD_NTF:
		return Event::Kind::Add;
	case PPKIT_CMD_POOL_DEL_NTF:
		return Event::Kind::Del;
	case PPKIT_CMD_POOL_CHANGE_NTF:
		return Event::Kind::Change;
	default:
		return std::nullopt;
	}
}

}  // namespace ppkit::wire
