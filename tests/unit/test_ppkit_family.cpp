// SPDX-License-Identifier: GPL-2.0
// The ppkit family's messages: requests as bytes, replies from bytes.
#include <catch2/catch.hpp>

#include <cerrno>

#include <linux/ppkit.h>

#include "backend.h"
#include "fixtures.h"
#include "ppkit/error.h"
#include "ppkit_family.h"

using namespace ppkit;
using fixture::Builder;
using fixture::Bytes;

namespace {

constexpr int kFamily = 0x22;

Bytes bytes_of(const nl::MsgPtr &m)
{
	return nl::to_bytes(m.get());
}

}  // namespace

TEST_CASE("ppkit uapi ids are the ones the fixtures spell out", "[ppkit][wire]")
{
	// The hand-written arrays below depend on these: a uapi renumbering is
	// an ABI break and must fail here first.
	STATIC_REQUIRE(PPKIT_A_POOL_ID == 2);
	STATIC_REQUIRE(PPKIT_A_POOL_OWNER == 3);
	STATIC_REQUIRE(PPKIT_A_POOL_RING_SIZE == 9);
	STATIC_REQUIRE(PPKIT_A_POOL_REFILL_BATCH == 11);
	STATIC_REQUIRE(PPKIT_A_POOL_CREATED == 16);
	STATIC_REQUIRE(PPKIT_A_STATS_IFINDEX == 3);
	STATIC_REQUIRE(PPKIT_A_STATS_ALLOC_FAST == 4);
	STATIC_REQUIRE(PPKIT_A_STATS_LENT_PAGES == 35);
	STATIC_REQUIRE(PPKIT_CMD_POOL_GET == 1);
	STATIC_REQUIRE(PPKIT_CMD_STATS_GET == 5);
	STATIC_REQUIRE(PPKIT_CMD_POOL_SET == 6);
}

TEST_CASE("pool-get requests", "[ppkit][wire]")
{
	SECTION("do: the pool id, no dump flag")
	{
		const Bytes want = {
			0x1c, 0x00, 0x00, 0x00,	// length 28
			0x22, 0x00, 0x00, 0x00,	// family, flags (REQUEST|ACK added at send)
			0x00, 0x00, 0x00, 0x00,	// seq: NL_AUTO_SEQ
			0x00, 0x00, 0x00, 0x00,	// port: NL_AUTO_PORT
			0x01, 0x01, 0x00, 0x00,	// PPKIT_CMD_POOL_GET, version 1
			0x08, 0x00, 0x02, 0x00, 0x2a, 0x00, 0x00, 0x00, // PPKIT_A_POOL_ID 42
		};
		CHECK(bytes_of(wire::ppkit_pool_get(kFamily, 42)) == want);
	}
	SECTION("dump: NLM_F_DUMP, no attributes")
	{
		const Bytes want = {
			0x14, 0x00, 0x00, 0x00, 0x22, 0x00, 0x00, 0x03, 0x00, 0x00,
			0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01, 0x01, 0x00, 0x00,
		};
		CHECK(bytes_of(wire::ppkit_pool_get(kFamily, std::nullopt)) == want);
	}
}

TEST_CASE("stats-get requests", "[ppkit][wire]")
{
	SECTION("do by pool id")
	{
		Bytes want = Builder(kFamily, 0, PPKIT_CMD_STATS_GET)
				     .u32(PPKIT_A_STATS_POOL_ID, 7)
				     .flag(PPKIT_A_STATS_LENT_AGES)
				     .bytes();
		want[8] = 0;	// Builder numbers its messages; requests leave it to libnl
		CHECK(bytes_of(wire::ppkit_stats_get(kFamily, 7, std::nullopt)) == want);
	}
	SECTION("dump filtered by ifindex")
	{
		const Bytes want = {
			0x20, 0x00, 0x00, 0x00, 0x22, 0x00, 0x00, 0x03, // NLM_F_DUMP
			0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
			0x05, 0x01, 0x00, 0x00,				// PPKIT_CMD_STATS_GET
			0x08, 0x00, 0x03, 0x00, 0x01, 0x00, 0x00, 0x00, // PPKIT_A_STATS_IFINDEX 1
			0x04, 0x00, 0x29, 0x00,				// PPKIT_A_STATS_LENT_AGES
		};
		CHECK(bytes_of(wire::ppkit_stats_get(kFamily, std::nullopt, 1)) == want);
	}
	SECTION("dump of everything")
	{
		auto b = bytes_of(wire::ppkit_stats_get(kFamily, std::nullopt, std::nullopt));
		CHECK(b.size() == 24);	// the header and the lent-ages flag
		CHECK(b[22] == PPKIT_A_STATS_LENT_AGES);
	}
}

TEST_CASE("pool-set requests", "[ppkit][wire]")
{
	SECTION("ring size and refill batch")
	{
		const Bytes want = {
			0x2c, 0x00, 0x00, 0x00, 0x22, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
			0x00, 0x00, 0x00, 0x00, 0x00, 0x06, 0x01, 0x00, 0x00, // POOL_SET
			0x08, 0x00, 0x02, 0x00, 0x03, 0x00, 0x00, 0x00,	      // id 3
			0x08, 0x00, 0x09, 0x00, 0x40, 0x00, 0x00, 0x00,	      // ring 64
			0x08, 0x00, 0x0b, 0x00, 0x10, 0x00, 0x00, 0x00,	      // batch 16
		};
		CHECK(bytes_of(wire::ppkit_pool_set(kFamily, 3, {64, 16})) == want);
	}
	SECTION("only what is given")
	{
		auto b = bytes_of(wire::ppkit_pool_set(kFamily, 3, {std::nullopt, 8}));
		REQUIRE(b.size() == 36);
		CHECK(b[30] == PPKIT_A_POOL_REFILL_BATCH);
	}
	SECTION("nothing to set is refused before the kernel sees it")
	{
		try {
			wire::ppkit_pool_set(kFamily, 3, {});
			FAIL("no error");
		} catch (const Error &e) {
			CHECK(e.code() == Errc::InvalidArgument);
		}
	}
}

TEST_CASE("a pool reply from the kernel's bytes", "[ppkit][wire]")
{
	// What pool-get do answers for a pp_poolgen pool, written out by hand:
	// u64 attributes follow a PPKIT_A_POOL_PAD, as nla_put_u64_64bit does.
	const Bytes reply = {
		0x68, 0x00, 0x00, 0x00, 0x22, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x00,
		0x00, 0x00, 0x00, 0x01, 0x01, 0x00, 0x00,
		0x08, 0x00, 0x02, 0x00, 0x05, 0x00, 0x00, 0x00,	// ID 5
		0x0f, 0x00, 0x03, 0x00, 0x70, 0x70, 0x5f, 0x70, 0x6f, 0x6f, 0x6c, 0x67, 0x65,
		0x6e, 0x00, 0x00,				// OWNER "pp_poolgen"
		0x08, 0x00, 0x04, 0x00, 0x01, 0x00, 0x00, 0x00,	// IFINDEX 1
		0x08, 0x00, 0x05, 0x00, 0x03, 0x00, 0x00, 0x00,	// QUEUE 3
		0x08, 0x00, 0x07, 0x00, 0xff, 0xff, 0xff, 0xff,	// NID -1
		0x08, 0x00, 0x09, 0x00, 0x00, 0x04, 0x00, 0x00,	// RING_SIZE 1024
		0x04, 0x00, 0x01, 0x00,				// PAD
		0x0c, 0x00, 0x0e, 0x00, 0x08, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, // INFLIGHT 8
		0x0c, 0x00, 0x10, 0x00, 0x15, 0xcd, 0x85, 0x3d, 0xfe, 0x9c, 0x97, 0x17, // CREATED
	};
	auto m = fixture::msg(reply);
	CHECK(nl::genl_cmd(m.get()) == PPKIT_CMD_POOL_GET);
	Pool p = wire::ppkit_parse_pool(m.get());
	CHECK(p.id == 5);
	CHECK(p.source == Source::Ppkit);
	CHECK(p.owner == "pp_poolgen");
	CHECK(p.ifindex == 1u);
	CHECK(p.queue == 3u);
	CHECK(p.nid == -1);
	CHECK(p.ring_size == 1024u);
	CHECK(p.inflight == 8u);
	CHECK(p.created_ns == 1700000000123456789ull);
	CHECK_FALSE(p.napi_id);
	CHECK_FALSE(p.refill_batch);
	CHECK_FALSE(p.detached());
	CHECK(p.state() == "live");
	CHECK(p.ifname.empty());	// the client resolves names, not the parser

	// Where a dump's batch lies (nl::Socket::dump): the same pool.
	Pool q = wire::ppkit_parse_pool(static_cast<const nlmsghdr *>(nlmsg_hdr(m.get())));
	CHECK(q.id == p.id);
	CHECK(q.owner == p.owner);
	CHECK(q.ifindex == p.ifindex);
	CHECK(q.queue == p.queue);
	CHECK(q.nid == p.nid);
	CHECK(q.ring_size == p.ring_size);
	CHECK(q.inflight == p.inflight);
	CHECK(q.created_ns == p.created_ns);
	CHECK(q.napi_id == p.napi_id);
}

TEST_CASE("a pool built with libnl parses back whole", "[ppkit][wire]")
{
	auto m = nl::genl_request(kFamily, PPKIT_CMD_POOL_CHANGE_NTF, 1, 0);
	nla_put_u32(m.get(), PPKIT_A_POOL_ID, 9);
	nla_put_string(m.get(), PPKIT_A_POOL_OWNER, "stmmac");
	nla_put_u32(m.get(), PPKIT_A_POOL_IFINDEX, 4);
	nla_put_u32(m.get(), PPKIT_A_POOL_QUEUE, 0);
	nla_put_u32(m.get(), PPKIT_A_POOL_NAPI_ID, 8195);
	nla_put_s32(m.get(), PPKIT_A_POOL_NID, 1);
	nla_put_u32(m.get(), PPKIT_A_POOL_ORDER, 2);
	nla_put_u32(m.get(), PPKIT_A_POOL_RING_SIZE, 256);
	nla_put_u32(m.get(), PPKIT_A_POOL_CACHE_SIZE, 128);
	nla_put_u32(m.get(), PPKIT_A_POOL_REFILL_BATCH, 32);
	nla_put_u32(m.get(), PPKIT_A_POOL_MAX_LEN, 1536);
	nla_put_u32(m.get(), PPKIT_A_POOL_DMA_DIR, PPKIT_DMA_BIDIRECTIONAL);
	nla_put_u64(m.get(), PPKIT_A_POOL_INFLIGHT, 1ull << 40);
	nla_put_u64(m.get(), PPKIT_A_POOL_INFLIGHT_MEM, 1ull << 52);
	nla_put_u64(m.get(), PPKIT_A_POOL_CREATED, 11);
	nla_put_u64(m.get(), PPKIT_A_POOL_DETACH_TIME, 22);
	nla_put_u32(m.get(), PPKIT_A_POOL_MAX + 5, 1);	// from a newer kernel: ignored

	// Over the wire and back, as a notification would arrive.
	auto back = nl::from_bytes(nl::to_bytes(m.get()));
	REQUIRE(wire::ppkit_event_kind(nl::genl_cmd(back.get())) == Event::Kind::Change);
	Pool p = wire::ppkit_parse_pool(back.get());
	CHECK(p.id == 9);
	CHECK(p.owner == "stmmac");
	CHECK(p.ifindex == 4u);
	CHECK(p.queue == 0u);
	CHECK(p.napi_id == 8195u);
	CHECK(p.nid == 1);
	CHECK(p.order == 2u);
	CHECK(p.ring_size == 256u);
	CHECK(p.cache_size == 128u);
	CHECK(p.refill_batch == 32u);
	CHECK(p.max_len == 1536u);
	CHECK(p.dma_dir == static_cast<std::uint32_t>(PPKIT_DMA_BIDIRECTIONAL));
	CHECK(dma_dir_name(*p.dma_dir) == "bidirectional");
	CHECK(p.inflight == 1ull << 40);
	CHECK(p.inflight_mem == 1ull << 52);
	CHECK(p.created_ns == 11u);
	CHECK(p.detach_time_ns == 22u);
	CHECK(p.state() == "detached");
}

TEST_CASE("malformed pool messages are protocol errors", "[ppkit][wire]")
{
	auto code_of = [](const Bytes &b) {
		try {
			wire::ppkit_parse_pool(fixture::msg(b).get());
		} catch (const Error &e) {
			return e.code();
		}
		return Errc::Kernel;	// "no error"
	};
	SECTION("no pool id")
	{
		CHECK(code_of(Builder(kFamily, 0, 1).str(PPKIT_A_POOL_OWNER, "x").bytes()) ==
		      Errc::Protocol);
	}
	SECTION("a u32 that is two bytes")
	{
		std::uint16_t two = 5;
		CHECK(code_of(Builder(kFamily, 0, 1).raw(PPKIT_A_POOL_ID, &two, 2).bytes()) ==
		      Errc::Protocol);
	}
	SECTION("a u64 sent as u32")
	{
		CHECK(code_of(Builder(kFamily, 0, 1)
				      .u32(PPKIT_A_POOL_ID, 1)
				      .u32(PPKIT_A_POOL_INFLIGHT, 3)
				      .bytes()) == Errc::Protocol);
	}
	SECTION("an owner without its NUL")
	{
		CHECK(code_of(Builder(kFamily, 0, 1)
				      .u32(PPKIT_A_POOL_ID, 1)
				      .raw(PPKIT_A_POOL_OWNER, "abcd", 4)
				      .bytes()) == Errc::Protocol);
	}
	SECTION("an attribute running past the message")
	{
		Bytes b = Builder(kFamily, 0, 1).u32(PPKIT_A_POOL_ID, 1).bytes();
		b[20] = 0x40;	// the attribute claims 64 bytes
		CHECK(code_of(b) == Errc::Protocol);
	}
	SECTION("a well-formed one, for contrast")
	{
		CHECK(code_of(Builder(kFamily, 0, 1).u32(PPKIT_A_POOL_ID, 1).bytes()) == Errc::Kernel);
	}
}

TEST_CASE("a stats reply carries every counter", "[ppkit][wire]")
{
	// Built the way the kernel builds it: u64 counters with pads between.
	auto m = nl::genl_request(kFamily, PPKIT_CMD_STATS_GET, 1, 0);
	nla_put_u32(m.get(), PPKIT_A_STATS_POOL_ID, 12);
	nla_put_u32(m.get(), PPKIT_A_STATS_IFINDEX, 1);
	for (int t = PPKIT_A_STATS_FIRST_COUNTER; t <= PPKIT_A_STATS_LAST_VALUE; t++) {
		bool u32 = t == PPKIT_A_STATS_CACHE_PAGES || t == PPKIT_A_STATS_RING_PAGES ||
			   t == PPKIT_A_STATS_LENT_PAGES || t == PPKIT_A_STATS_LENT_HELD;
		if (u32)
			nla_put_u32(m.get(), t, static_cast<std::uint32_t>(t * 10));
		else
			nla_put_u64(m.get(), t, (1ull << 33) + static_cast<std::uint64_t>(t));
		nla_put(m.get(), PPKIT_A_STATS_PAD, 0, nullptr);
	}
	auto back = nl::from_bytes(nl::to_bytes(m.get()));
	Stats s = wire::ppkit_parse_stats(back.get());
	CHECK(s.pool_id == 12);
	CHECK(s.ifindex == 1u);
	CHECK(s.present.all());
	CHECK(s.get(Counter::AllocFast) == (1ull << 33) + PPKIT_A_STATS_ALLOC_FAST);
	CHECK(s.get(Counter::PagesOrphaned) == (1ull << 33) + PPKIT_A_STATS_PAGES_ORPHANED);
	CHECK(s.get(Counter::SyncForDeviceBytes) ==
	      (1ull << 33) + PPKIT_A_STATS_SYNC_FOR_DEVICE_BYTES);
	CHECK(s.get(Counter::InflightMem) == (1ull << 33) + PPKIT_A_STATS_INFLIGHT_MEM);
	CHECK(s.get(Counter::CachePages) == PPKIT_A_STATS_CACHE_PAGES * 10u);
	CHECK(s.get(Counter::LentPages) == PPKIT_A_STATS_LENT_PAGES * 10u);
	CHECK(s.get(Counter::FragPagesUnlent) == (1ull << 33) + PPKIT_A_STATS_FRAG_PAGES_UNLENT);
	CHECK(s.get(Counter::LentHeld) == PPKIT_A_STATS_LENT_HELD * 10u);
	CHECK(s.get(Counter::LentOldestMs) == (1ull << 33) + PPKIT_A_STATS_LENT_OLDEST_MS);
}

TEST_CASE("a partial stats reply reports only what it carries", "[ppkit][wire]")
{
	auto m = Builder(kFamily, 2, PPKIT_CMD_STATS_GET)
			 .u32(PPKIT_A_STATS_POOL_ID, 3)
			 .u64(PPKIT_A_STATS_PAGES_FROM_CACHE, 90)
			 .u64(PPKIT_A_STATS_PAGES_FROM_ALLOC, 10)
			 .u32(PPKIT_A_STATS_RING_PAGES, 7)
			 .msg();
	Stats s = wire::ppkit_parse_stats(m.get());
	CHECK(s.pool_id == 3);
	CHECK_FALSE(s.ifindex);
	CHECK(s.present.count() == 3);
	CHECK(s.get(Counter::PagesFromCache) == 90);
	CHECK(s.get(Counter::RingPages) == 7);
	CHECK_FALSE(s.has(Counter::PagesFromRing));
	CHECK_FALSE(s.served());	// needs all four origins
}

TEST_CASE("a stats reply with a gauge of the wrong size is refused", "[ppkit][wire]")
{
	auto m = Builder(kFamily, 0, PPKIT_CMD_STATS_GET)
			 .u32(PPKIT_A_STATS_POOL_ID, 3)
			 .u64(PPKIT_A_STATS_CACHE_PAGES, 7)	// the uapi says u32
			 .msg();
	CHECK_THROWS_AS(wire::ppkit_parse_stats(m.get()), Error);
	auto n = Builder(kFamily, 0, PPKIT_CMD_STATS_GET).u64(PPKIT_A_STATS_ALLOC_FAST, 1).msg();
	CHECK_THROWS_WITH(wire::ppkit_parse_stats(n.get()), Catch::Contains("without a pool id"));
}

TEST_CASE("notification commands", "[ppkit][wire]")
{
	CHECK(wire::ppkit_event_kind(PPKIT_CMD_POOL_ADD_NTF) == Event::Kind::Add);
	CHECK(wire::ppkit_event_kind(PPKIT_CMD_POOL_DEL_NTF) == Event::Kind::Del);
	CHECK(wire::ppkit_event_kind(PPKIT_CMD_POOL_CHANGE_NTF) == Event::Kind::Change);
	CHECK_FALSE(wire::ppkit_event_kind(PPKIT_CMD_POOL_GET));
	CHECK_FALSE(wire::ppkit_event_kind(PPKIT_CMD_STATS_GET));

	// A del notification parses like any pool message.
	auto m = Builder(kFamily, 0, PPKIT_CMD_POOL_DEL_NTF)
			 .u32(PPKIT_A_POOL_ID, 77)
			 .str(PPKIT_A_POOL_OWNER, "pp_poolgen")
			 .u64(PPKIT_A_POOL_DETACH_TIME, 5)
			 .msg();
	REQUIRE(wire::ppkit_event_kind(nl::genl_cmd(m.get())) == Event::Kind::Del);
	Pool p = wire::ppkit_parse_pool(m.get());
	CHECK(p.id == 77);
	CHECK(p.detached());
}

TEST_CASE("a module older than a request's flag: the kernel's words for it", "[ppkit][wire]")
{
	// What a pp_backport without lent-ages answers a stats-get that sets it
	// (lib/nlattr.c); libppkit then asks again without the flag.
	CHECK(detail::unknown_attribute(-EINVAL, "Unknown attribute type"));
	CHECK(detail::unknown_attribute(EINVAL, "Unknown attribute type"));
	CHECK_FALSE(detail::unknown_attribute(-EINVAL, "no pool id: give the pool's id (see ppctl list)"));
	CHECK_FALSE(detail::unknown_attribute(-ENOENT, "Unknown attribute type"));
	CHECK_FALSE(detail::unknown_attribute(-EINVAL, ""));
}
