// SPDX-License-Identifier: GPL-2.0
// The upstream netdev family's page-pool messages, per its spec
// (Documentation/netlink/specs/netdev.yaml): "uint" attributes come as 4 or
// 8 bytes, stats replies nest the pool in an info attribute, and newer
// kernels add attributes we must skip.
#include <catch2/catch.hpp>

#include "fixtures.h"
#include "netdev_family.h"
#include "ppkit/error.h"

using namespace ppkit;
using namespace ppkit::wire::netdev;
using fixture::Builder;
using fixture::Bytes;

namespace {

constexpr int kFam = 0x1d;

}  // namespace

TEST_CASE("netdev page-pool requests", "[netdev][wire]")
{
	SECTION("page-pool-get dump")
	{
		const Bytes want = {
			0x14, 0x00, 0x00, 0x00, 0x1d, 0x00, 0x00, 0x03, 0x00, 0x00,
			0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x05, 0x01, 0x00, 0x00,
		};
		CHECK(nl::to_bytes(wire::netdev_pool_get(kFam, std::nullopt).get()) == want);
	}
	SECTION("page-pool-stats-get do: the id inside a nested info")
	{
		const Bytes want = {
			0x20, 0x00, 0x00, 0x00, 0x1d, 0x00, 0x00, 0x00,
			0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
			0x09, 0x01, 0x00, 0x00,				// PAGE_POOL_STATS_GET
			0x0c, 0x00, 0x01, 0x80,				// INFO | NLA_F_NESTED
			0x08, 0x00, 0x01, 0x00, 0x07, 0x00, 0x00, 0x00, //   ID 7
		};
		CHECK(nl::to_bytes(wire::netdev_stats_get(kFam, 7).get()) == want);
	}
	SECTION("page-pool-stats-get dump")
	{
		auto b = nl::to_bytes(wire::netdev_stats_get(kFam, std::nullopt).get());
		REQUIRE(b.size() == 20);
		CHECK(b[7] == 0x03);	// NLM_F_DUMP
		CHECK(b[16] == CMD_PAGE_POOL_STATS_GET);
	}
}

TEST_CASE("a netdev page-pool reply as a 6.x kernel sends it", "[netdev][wire]")
{
	const Bytes reply = {
		0x4c, 0x00, 0x00, 0x00, 0x1d, 0x00, 0x02, 0x00, 0x01, 0x00, 0x00, 0x00, 0x00,
		0x00, 0x00, 0x00, 0x05, 0x01, 0x00, 0x00,
		0x08, 0x00, 0x01, 0x00, 0x07, 0x00, 0x00, 0x00,	// ID 7 (uint as u32)
		0x08, 0x00, 0x02, 0x00, 0x02, 0x00, 0x00, 0x00,	// IFINDEX 2
		0x08, 0x00, 0x03, 0x00, 0x01, 0x20, 0x00, 0x00,	// NAPI_ID 8193
		0x0c, 0x00, 0x04, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, // INFLIGHT 2^32 (u64)
		0x08, 0x00, 0x05, 0x00, 0x00, 0x30, 0x00, 0x00,	// INFLIGHT_MEM 12288
		0x08, 0x00, 0x07, 0x00, 0x03, 0x00, 0x00, 0x00,	// DMABUF (6.12): skipped
		0x04, 0x00, 0x08, 0x80,				// IO_URING nest (6.15): skipped
	};
	auto m = fixture::msg(reply);
	CHECK(nl::genl_cmd(m.get()) == CMD_PAGE_POOL_GET);
	Pool p = wire::netdev_parse_pool(m.get());
	CHECK(p.source == Source::Netdev);
	CHECK(p.id == 7);
	CHECK(p.ifindex == 2u);
	CHECK(p.napi_id == 8193u);
	CHECK(p.inflight == 1ull << 32);
	CHECK(p.inflight_mem == 12288u);
	CHECK_FALSE(p.detached());
	CHECK(p.owner.empty());
	CHECK_FALSE(p.ring_size);
}

TEST_CASE("netdev detach-time is boot-time seconds, made wall-clock", "[netdev][wire]")
{
	auto m = Builder(kFam, 0, CMD_PAGE_POOL_CHANGE_NTF)
			 .u64(A_PAGE_POOL_ID, 3)	// uint as u64
			 .u32(A_PAGE_POOL_DETACH_TIME, 100)
			 .msg();
	Pool p = wire::netdev_parse_pool(m.get(), 1'700'000'000'000'000'000);
	CHECK(p.id == 3);
	REQUIRE(p.detached());
	CHECK(*p.detach_time_ns == 1'700'000'100'000'000'000ull);
	CHECK(wire::netdev_event_kind(CMD_PAGE_POOL_CHANGE_NTF) == Event::Kind::Change);
	CHECK(wire::netdev_event_kind(CMD_PAGE_POOL_ADD_NTF) == Event::Kind::Add);
	CHECK(wire::netdev_event_kind(CMD_PAGE_POOL_DEL_NTF) == Event::Kind::Del);
	CHECK_FALSE(wire::netdev_event_kind(CMD_PAGE_POOL_GET));
}

TEST_CASE("a netdev page-pool-stats reply", "[netdev][wire]")
{
	const Bytes reply = {
		0x4c, 0x00, 0x00, 0x00, 0x1d, 0x00, 0x02, 0x00, 0x01, 0x00, 0x00, 0x00, 0x00,
		0x00, 0x00, 0x00, 0x09, 0x01, 0x00, 0x00,
		0x14, 0x00, 0x01, 0x80,				// INFO nest
		0x08, 0x00, 0x01, 0x00, 0x07, 0x00, 0x00, 0x00,	//   ID 7
		0x08, 0x00, 0x02, 0x00, 0x02, 0x00, 0x00, 0x00,	//   IFINDEX 2
		0x0c, 0x00, 0x08, 0x00, 0x40, 0x42, 0x0f, 0x00, 0x00, 0x00, 0x00, 0x00, // ALLOC_FAST 1e6
		0x08, 0x00, 0x09, 0x00, 0x0c, 0x00, 0x00, 0x00,	// ALLOC_SLOW 12
		0x08, 0x00, 0x0e, 0x00, 0x30, 0x1b, 0x0f, 0x00,	// RECYCLE_CACHED 990000
		0x08, 0x00, 0x12, 0x00, 0x05, 0x00, 0x00, 0x00,	// RECYCLE_RELEASED_REFCNT 5
	};
	Stats s = wire::netdev_parse_stats(fixture::msg(reply).get());
	CHECK(s.source == Source::Netdev);
	CHECK(s.pool_id == 7);
	CHECK(s.ifindex == 2u);
	CHECK(s.present.count() == 4);
	CHECK(s.get(Counter::AllocFast) == 1000000);
	CHECK(s.get(Counter::AllocSlow) == 12);
	CHECK(s.get(Counter::RecycleCached) == 990000);
	CHECK(s.get(Counter::RecycleReleasedRefcnt) == 5);
	// Upstream counts events, not pages: no page counters, so no exact rates.
	CHECK_FALSE(s.has(Counter::PagesFromCache));
	CHECK_FALSE(s.served());
}

TEST_CASE("a full netdev stats reply maps onto the first eleven counters", "[netdev][wire]")
{
	Builder b(kFam, 2, CMD_PAGE_POOL_STATS_GET);
	b.nest(A_PAGE_POOL_STATS_INFO).u64(A_PAGE_POOL_ID, 1).end_nest();
	for (int t = A_PAGE_POOL_STATS_ALLOC_FAST; t <= A_PAGE_POOL_STATS_MAX; t++)
		b.u64(static_cast<std::uint16_t>(t), static_cast<std::uint64_t>(t) << 36);
	Stats s = wire::netdev_parse_stats(b.msg().get());
	CHECK(s.present.count() == 11);
	CHECK(s.get(Counter::AllocFast) == 8ull << 36);
	CHECK(s.get(Counter::AllocWaive) == 13ull << 36);
	CHECK(s.get(Counter::RecycleRingFull) == 17ull << 36);
	CHECK(s.get(Counter::RecycleReleasedRefcnt) == 18ull << 36);
}

TEST_CASE("malformed netdev messages are protocol errors", "[netdev][wire]")
{
	auto code_of = [](auto &&fn) {
		try {
			fn();
		} catch (const Error &e) {
			return e.code();
		}
		return Errc::Kernel;
	};
	SECTION("a uint of 2 bytes")
	{
		std::uint16_t v = 1;
		auto m = Builder(kFam, 0, CMD_PAGE_POOL_GET).raw(A_PAGE_POOL_ID, &v, 2).msg();
		CHECK(code_of([&] { wire::netdev_parse_pool(m.get()); }) == Errc::Protocol);
	}
	SECTION("a uint of 6 bytes")
	{
		const std::uint8_t v[6] = {1, 0, 0, 0, 0, 0};
		auto m = Builder(kFam, 0, CMD_PAGE_POOL_GET).raw(A_PAGE_POOL_ID, v, 6).msg();
		CHECK(code_of([&] { wire::netdev_parse_pool(m.get()); }) == Errc::Protocol);
	}
	SECTION("a pool id beyond u32")
	{
		auto m = Builder(kFam, 0, CMD_PAGE_POOL_GET).u64(A_PAGE_POOL_ID, 1ull << 32).msg();
		CHECK(code_of([&] { wire::netdev_parse_pool(m.get()); }) == Errc::Protocol);
	}
	SECTION("stats without the info nest")
	{
		auto m = Builder(kFam, 0, CMD_PAGE_POOL_STATS_GET)
				 .u64(A_PAGE_POOL_STATS_ALLOC_FAST, 1)
				 .msg();
		CHECK(code_of([&] { wire::netdev_parse_stats(m.get()); }) == Errc::Protocol);
	}
	SECTION("stats whose info has no id")
	{
		Builder b(kFam, 0, CMD_PAGE_POOL_STATS_GET);
		b.nest(A_PAGE_POOL_STATS_INFO).u32(A_PAGE_POOL_IFINDEX, 1).end_nest();
		CHECK(code_of([&] { wire::netdev_parse_stats(b.msg().get()); }) == Errc::Protocol);
	}
}

// Replies built with libnl's own message and attribute API, the way the
// kernel's genetlink code lays them out, and numbered from the upstream uapi
// (include/uapi/linux/netdev.h) rather than from netdev_family.h: a parser
// reading the wrong attribute for a field fails here.
namespace {

// The kernel's nla_put_uint(): 4 bytes when the value fits, 8 otherwise.
void put_uint(nl_msg *m, int type, std::uint64_t v)
{
	int err = v > UINT32_MAX ? nla_put_u64(m, type, v)
				 : nla_put_u32(m, type, static_cast<std::uint32_t>(v));
	REQUIRE(err == 0);
}

nl::MsgPtr reply(std::uint8_t cmd)
{
	nl::MsgPtr m(nlmsg_alloc());
	REQUIRE(m);
	REQUIRE(genlmsg_put(m.get(), NL_AUTO_PORT, NL_AUTO_SEQ, kFam, 0, NLM_F_MULTI, cmd, 1));
	return m;
}

}  // namespace

TEST_CASE("a netdev page-pool dump built with libnl", "[netdev][wire]")
{
	constexpr std::int64_t kBootToReal = 1'700'000'000'000'000'000;
	SECTION("a live pool, attributes in reverse order")
	{
		auto m = reply(5);					// PAGE_POOL_GET
		put_uint(m.get(), 5, 65536);				// INFLIGHT_MEM
		put_uint(m.get(), 4, 16);				// INFLIGHT
		REQUIRE(nla_put_u32(m.get(), 3, 8193) == 0);		// NAPI_ID
		REQUIRE(nla_put_u32(m.get(), 2, 4) == 0);		// IFINDEX
		put_uint(m.get(), 1, 12);				// ID
		Pool p = wire::netdev_parse_pool(m.get(), kBootToReal);
		CHECK(p.source == Source::Netdev);
		CHECK(p.id == 12);
		CHECK(p.ifindex == 4u);
		CHECK(p.napi_id == 8193u);
		CHECK(p.inflight == 16u);
		CHECK(p.inflight_mem == 65536u);
		CHECK_FALSE(p.detached());
	}
	SECTION("a detached pool: 64-bit counts, no NAPI, the largest id")
	{
		auto m = reply(8);					// PAGE_POOL_CHANGE_NTF
		put_uint(m.get(), 1, UINT32_MAX);
		REQUIRE(nla_put_u32(m.get(), 2, 9) == 0);
		put_uint(m.get(), 4, 5'000'000'000);
		put_uint(m.get(), 5, 5'000'000'000ull * 4096);
		put_uint(m.get(), 6, 42);				// DETACH_TIME, s
		Pool p = wire::netdev_parse_pool(m.get(), kBootToReal);
		CHECK(p.id == UINT32_MAX);
		CHECK(p.ifindex == 9u);
		CHECK_FALSE(p.napi_id);
		CHECK(p.inflight == 5'000'000'000u);
		CHECK(p.inflight_mem == 5'000'000'000ull * 4096);
		REQUIRE(p.detached());
		CHECK(*p.detach_time_ns == 1'700'000'042'000'000'000ull);
	}
	SECTION("attributes of later kernels are skipped")
	{
		auto m = reply(5);
		put_uint(m.get(), 1, 3);
		REQUIRE(nla_put_u32(m.get(), 7, 11) == 0);		// DMABUF (6.12)
		nlattr *io = nla_nest_start(m.get(), 8);		// IO_URING (6.15)
		REQUIRE(io);
		REQUIRE(nla_put_u32(m.get(), 1, 1) == 0);
		nla_nest_end(m.get(), io);
		put_uint(m.get(), 30, 7);				// not yet invented
		REQUIRE(nla_put_u32(m.get(), 2, 5) == 0);
		Pool p = wire::netdev_parse_pool(m.get());
		CHECK(p.id == 3);
		CHECK(p.ifindex == 5u);
		CHECK_FALSE(p.inflight);
		CHECK_FALSE(p.detached());
	}
	SECTION("ifindex and napi-id are u32 only")
	{
		auto code_of = [](nl_msg *msg) {
			try {
				wire::netdev_parse_pool(msg);
			} catch (const Error &e) {
				return e.code();
			}
			return Errc::Kernel;
		};
		auto a = reply(5);
		put_uint(a.get(), 1, 1);
		REQUIRE(nla_put_u64(a.get(), 2, 4) == 0);
		CHECK(code_of(a.get()) == Errc::Protocol);
		auto b = reply(5);
		put_uint(b.get(), 1, 1);
		REQUIRE(nla_put_u16(b.get(), 3, 4) == 0);
		CHECK(code_of(b.get()) == Errc::Protocol);
	}
}

TEST_CASE("a netdev stats dump built with libnl: each counter to its own", "[netdev][wire]")
{
	// NETDEV_A_PAGE_POOL_STATS_* -> ppkit's counter of the same name.
	const std::pair<int, Counter> ids[] = {
		{8, Counter::AllocFast},	  {9, Counter::AllocSlow},
		{10, Counter::AllocSlowHighOrder}, {11, Counter::AllocEmpty},
		{12, Counter::AllocRefill},	  {13, Counter::AllocWaive},
		{14, Counter::RecycleCached},	  {15, Counter::RecycleCacheFull},
		{16, Counter::RecycleRing},	  {17, Counter::RecycleRingFull},
		{18, Counter::RecycleReleasedRefcnt},
	};
	// Distinct values, half of them past u32.
	auto value = [](int id) {
		return static_cast<std::uint64_t>(id) * 1000003 + (id % 2 ? 1ull << 33 : 0);
	};
	auto m = reply(9);						// PAGE_POOL_STATS_GET
	for (auto it = std::rbegin(ids); it != std::rend(ids); ++it)
		put_uint(m.get(), it->first, value(it->first));
	nlattr *info = nla_nest_start(m.get(), 1);			// INFO
	REQUIRE(info);
	REQUIRE(nla_put_u32(m.get(), 2, 6) == 0);			//   IFINDEX
	REQUIRE(nla_put_u32(m.get(), 3, 99) == 0);			//   NAPI_ID: ignored
	put_uint(m.get(), 1, 77);					//   ID
	nla_nest_end(m.get(), info);
	put_uint(m.get(), 19, 123);					// a later counter

	Stats s = wire::netdev_parse_stats(m.get());
	CHECK(s.source == Source::Netdev);
	CHECK(s.pool_id == 77);
	CHECK(s.ifindex == 6u);
	CHECK(s.present.count() == std::size(ids));
	for (const auto &[id, counter] : ids) {
		INFO("attribute " << id << ", counter " << name(counter));
		CHECK(s.get(counter) == value(id));
	}
}
