// SPDX-License-Identifier: GPL-2.0
#include "ppsim_family.h"

#include <algorithm>
#include <array>

#include <linux/ppsim.h>

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

// What the uapi says each attribute is; anything else is a protocol error.
const std::array<nla_policy, PPSIM_A_MAX + 1> &device_policy()
{
	static const auto p = [] {
		constexpr nla_policy u8p = fixed(NLA_U8, 1);
		constexpr nla_policy u16p = fixed(NLA_U16, 2);
		constexpr nla_policy u32p = fixed(NLA_U32, 4);
		constexpr nla_policy s32p = fixed(NLA_S32, 4);
		constexpr nla_policy u64p = fixed(NLA_U64, 8);
		std::array<nla_policy, PPSIM_A_MAX + 1> a{};
		a[PPSIM_A_IFINDEX] = u32p;
		a[PPSIM_A_IFNAME].type = NLA_STRING;
		a[PPSIM_A_PEER_IFINDEX] = u32p;
		a[PPSIM_A_RX_QUEUES] = u32p;
		a[PPSIM_A_TX_QUEUES] = u32p;
		a[PPSIM_A_RING_SIZE] = u32p;
		a[PPSIM_A_POOL] = u32p;
		a[PPSIM_A_RX_MODE] = u32p;
		a[PPSIM_A_SYNC] = u32p;
		a[PPSIM_A_PREFETCH] = u32p;
		a[PPSIM_A_CACHE] = u32p;
		a[PPSIM_A_NUMA_RULE] = u8p;
		a[PPSIM_A_FRAG] = u8p;
		a[PPSIM_A_IRQ_CPU] = s32p;
		a[PPSIM_A_PAIR].type = NLA_FLAG;
		a[PPSIM_A_XDP_PROG_ID] = u32p;
		a[PPSIM_A_GEN_RATE] = u64p;
		a[PPSIM_A_GEN_SIZE] = u32p;
		a[PPSIM_A_GEN_ETHERTYPE] = u16p;
		a[PPSIM_A_GEN_DST_PORT] = u16p;
		a[PPSIM_A_GEN_COUNT] = u64p;
		a[PPSIM_A_GEN_CPU] = s32p;
		a[PPSIM_A_GEN_RUNNING] = u8p;
		a[PPSIM_A_GEN_SENT] = u64p;
		a[PPSIM_A_GEN_MISSED] = u64p;
		return a;
	}();
	return p;
}

nl::MsgPtr request(int family, std::uint8_t cmd, int flags = 0)
{
	return nl::genl_request(family, cmd, PPSIM_FAMILY_VERSION, flags);
}

std::optional<std::uint32_t> opt_u32(nlattr *a)
{
	return a ? std::optional(nla_get_u32(a)) : std::nullopt;
}

std::optional<std::uint64_t> opt_u64(nlattr *a)
{
	return a ? std::optional(nla_get_u64(a)) : std::nullopt;
}

std::optional<std::int32_t> opt_s32(nlattr *a)
{
	return a ? std::optional(nla_get_s32(a)) : std::nullopt;
}

std::optional<std::uint16_t> opt_u16(nlattr *a)
{
	return a ? std::optional(nla_get_u16(a)) : std::nullopt;
}

std::optional<bool> opt_bool(nlattr *a)
{
	return a ? std::optional(nla_get_u8(a) != 0) : std::nullopt;
}

// "0: none" in the uapi is an empty optional here.
std::optional<std::uint32_t> opt_id(nlattr *a)
{
	auto v = opt_u32(a);
	return v && *v ? v : std::nullopt;
}

// An enum attribute: a value a newer kernel added is kept as it is, and
// to_string() calls it "unknown".
template <typename E>
std::optional<E> opt_enum(nlattr *a)
{
	if (!a)
		return std::nullopt;
	return static_cast<E>(static_cast<std::uint8_t>(std::min<std::uint32_t>(nla_get_u32(a), 255)));
}

template <typename E>
void put_enum(nl_msg *msg, int type, const std::optional<E> &v)
{
	if (v)
		nl::put_u32(msg, type, static_cast<std::uint32_t>(*v));
}

}  // namespace

nl::MsgPtr ppsim_dev_get(int family, std::optional<std::uint32_t> ifindex)
{
	auto msg = request(family, PPSIM_CMD_DEV_GET, ifindex ? 0 : NLM_F_DUMP);
	if (ifindex)
		nl::put_u32(msg.get(), PPSIM_A_IFINDEX, *ifindex);
	return msg;
}

nl::MsgPtr ppsim_dev_new(int family, const SimNewDevice &d)
{
	auto msg = request(family, PPSIM_CMD_DEV_NEW);
	if (d.rx_queues)
		nl::put_u32(msg.get(), PPSIM_A_RX_QUEUES, *d.rx_queues);
	if (d.tx_queues)
		nl::put_u32(msg.get(), PPSIM_A_TX_QUEUES, *d.tx_queues);
	if (d.ring_size)
		nl::put_u32(msg.get(), PPSIM_A_RING_SIZE, *d.ring_size);
	if (d.pair)
		nl::put_flag(msg.get(), PPSIM_A_PAIR);
	return msg;
}

nl::MsgPtr ppsim_dev_del(int family, std::uint32_t ifindex)
{
	auto msg = request(family, PPSIM_CMD_DEV_DEL);
	nl::put_u32(msg.get(), PPSIM_A_IFINDEX, ifindex);
	return msg;
}

nl::MsgPtr ppsim_dev_set(int family, std::uint32_t ifindex, const SimSettings &s)
{
	if (s.empty())
		throw Error(Errc::InvalidArgument, "dev-set: nothing to set");
	auto msg = request(family, PPSIM_CMD_DEV_SET);
	nl::put_u32(msg.get(), PPSIM_A_IFINDEX, ifindex);
	if (s.ring_size)
		nl::put_u32(msg.get(), PPSIM_A_RING_SIZE, *s.ring_size);
	put_enum(msg.get(), PPSIM_A_POOL, s.pool);
	put_enum(msg.get(), PPSIM_A_RX_MODE, s.rx);
	put_enum(msg.get(), PPSIM_A_SYNC, s.sync);
	put_enum(msg.get(), PPSIM_A_PREFETCH, s.prefetch);
	put_enum(msg.get(), PPSIM_A_CACHE, s.cache);
	if (s.numa_rule)
		nl::put_u8(msg.get(), PPSIM_A_NUMA_RULE, *s.numa_rule ? 1 : 0);
	if (s.frag)
		nl::put_u8(msg.get(), PPSIM_A_FRAG, *s.frag ? 1 : 0);
	if (s.irq_cpu)
		nl::put_s32(msg.get(), PPSIM_A_IRQ_CPU, *s.irq_cpu);
	return msg;
}

nl::MsgPtr ppsim_gen_start(int family, std::uint32_t ifindex, const SimGenParams &p)
{
	auto msg = request(family, PPSIM_CMD_GEN_START);
	nl::put_u32(msg.get(), PPSIM_A_IFINDEX, ifindex);
	if (p.rate)
		nl::put_u64(msg.get(), PPSIM_A_GEN_RATE, *p.rate);
	if (p.size)
		nl::put_u32(msg.get(), PPSIM_A_GEN_SIZE, *p.size);
	if (p.ethertype)
		nl::put_u16(msg.get(), PPSIM_A_GEN_ETHERTYPE, *p.ethertype);
	if (p.dst_port)
		nl::put_u16(msg.get(), PPSIM_A_GEN_DST_PORT, *p.dst_port);
	if (p.count)
		nl::put_u64(msg.get(), PPSIM_A_GEN_COUNT, *p.count);
	if (p.cpu)
		nl::put_s32(msg.get(), PPSIM_A_GEN_CPU, *p.cpu);
	return msg;
}

nl::MsgPtr ppsim_gen_stop(int family, std::uint32_t ifindex)
{
	auto msg = request(family, PPSIM_CMD_GEN_STOP);
	nl::put_u32(msg.get(), PPSIM_A_IFINDEX, ifindex);
	return msg;
}

SimDevice ppsim_parse_device(nl_msg *msg)
{
	std::array<nlattr *, PPSIM_A_MAX + 1> tb{};
	int err = genlmsg_parse(nlmsg_hdr(msg), 0, tb.data(), PPSIM_A_MAX,
				const_cast<nla_policy *>(device_policy().data()));
	if (err < 0)
		throw Error(Errc::Protocol,
			    fmt::format("malformed ppsim device message from the kernel: {}",
					nl_geterror(err)));
	if (!tb[PPSIM_A_IFINDEX])
		throw Error(Errc::Protocol, "ppsim device message from the kernel without an ifindex");

	SimDevice d;
	d.ifindex = nla_get_u32(tb[PPSIM_A_IFINDEX]);
	if (tb[PPSIM_A_IFNAME])
		d.ifname = nla_get_string(tb[PPSIM_A_IFNAME]);
	d.peer_ifindex = opt_id(tb[PPSIM_A_PEER_IFINDEX]);
	d.rx_queues = opt_u32(tb[PPSIM_A_RX_QUEUES]);
	d.tx_queues = opt_u32(tb[PPSIM_A_TX_QUEUES]);
	d.ring_size = opt_u32(tb[PPSIM_A_RING_SIZE]);
	d.pool = opt_enum<SimPool>(tb[PPSIM_A_POOL]);
	d.rx = opt_enum<SimRx>(tb[PPSIM_A_RX_MODE]);
	d.sync = opt_enum<SimSync>(tb[PPSIM_A_SYNC]);
	d.prefetch = opt_enum<SimPrefetch>(tb[PPSIM_A_PREFETCH]);
	d.cache = opt_enum<SimCache>(tb[PPSIM_A_CACHE]);
	d.numa_rule = opt_bool(tb[PPSIM_A_NUMA_RULE]);
	d.frag = opt_bool(tb[PPSIM_A_FRAG]);
	d.irq_cpu = opt_s32(tb[PPSIM_A_IRQ_CPU]);
	d.xdp_prog_id = opt_id(tb[PPSIM_A_XDP_PROG_ID]);
	d.gen.running = opt_bool(tb[PPSIM_A_GEN_RUNNING]);
	d.gen.rate = opt_u64(tb[PPSIM_A_GEN_RATE]);
	d.gen.size = opt_u32(tb[PPSIM_A_GEN_SIZE]);
	d.gen.ethertype = opt_u16(tb[PPSIM_A_GEN_ETHERTYPE]);
	d.gen.dst_port = opt_u16(tb[PPSIM_A_GEN_DST_PORT]);
	d.gen.count = opt_u64(tb[PPSIM_A_GEN_COUNT]);
	d.gen.cpu = opt_s32(tb[PPSIM_A_GEN_CPU]);
	d.gen.sent = opt_u64(tb[PPSIM_A_GEN_SENT]);
	d.gen.missed = opt_u64(tb[PPSIM_A_GEN_MISSED]);
	return d;
}

}  // namespace ppkit::wire
