// SPDX-License-Identifier: GPL-2.0
// The ppsim family's messages: requests as bytes, replies from bytes.
#include <catch2/catch.hpp>

#include <linux/ppsim.h>

#include "fixtures.h"
#include "ppkit/error.h"
#include "ppsim_family.h"

using namespace ppkit;
using fixture::Builder;
using fixture::Bytes;

namespace {

constexpr int kFamily = 0x23;

Bytes bytes_of(const nl::MsgPtr &m)
{
	return nl::to_bytes(m.get());
}

// A request as Builder writes it, with the sequence number libnl leaves 0.
Bytes request(const Builder &b)
{
	Bytes want = b.bytes();
	want[8] = 0;
	return want;
}

}  // namespace

TEST_CASE("ppsim uapi ids are the ones the fixtures spell out", "[ppsim][wire]")
{
	// The hand-written arrays below depend on these: a renumbering is an
	// ABI break and must fail here first.
	STATIC_REQUIRE(PPSIM_FAMILY_VERSION == 1);
	STATIC_REQUIRE(PPSIM_A_IFINDEX == 1);
	STATIC_REQUIRE(PPSIM_A_IFNAME == 2);
	STATIC_REQUIRE(PPSIM_A_RX_QUEUES == 4);
	STATIC_REQUIRE(PPSIM_A_TX_QUEUES == 5);
	STATIC_REQUIRE(PPSIM_A_RING_SIZE == 6);
	STATIC_REQUIRE(PPSIM_A_POOL == 7);
	STATIC_REQUIRE(PPSIM_A_NUMA_RULE == 12);
	STATIC_REQUIRE(PPSIM_A_IRQ_CPU == 13);
	STATIC_REQUIRE(PPSIM_A_PAIR == 14);
	STATIC_REQUIRE(PPSIM_A_GEN_RATE == 16);
	STATIC_REQUIRE(PPSIM_A_GEN_ETHERTYPE == 18);
	STATIC_REQUIRE(PPSIM_A_GEN_CPU == 21);
	STATIC_REQUIRE(PPSIM_A_GEN_MISSED == 24);
	STATIC_REQUIRE(PPSIM_A_PAD == 25);
	STATIC_REQUIRE(PPSIM_A_FRAG == 26);
	STATIC_REQUIRE(PPSIM_A_MAX == 26);
	STATIC_REQUIRE(PPSIM_CMD_DEV_GET == 1);
	STATIC_REQUIRE(PPSIM_CMD_DEV_NEW == 2);
	STATIC_REQUIRE(PPSIM_CMD_DEV_SET == 4);
	STATIC_REQUIRE(PPSIM_CMD_GEN_STOP == 6);
}

TEST_CASE("ppsim dev-get requests", "[ppsim][wire]")
{
	SECTION("do: the ifindex, no dump flag")
	{
		const Bytes want = {
			0x1c, 0x00, 0x00, 0x00,	// length 28
			0x23, 0x00, 0x00, 0x00,	// family, flags (REQUEST|ACK added at send)
			0x00, 0x00, 0x00, 0x00,	// seq: NL_AUTO_SEQ
			0x00, 0x00, 0x00, 0x00,	// port: NL_AUTO_PORT
			0x01, 0x01, 0x00, 0x00,	// PPSIM_CMD_DEV_GET, version 1
			0x08, 0x00, 0x01, 0x00, 0x05, 0x00, 0x00, 0x00, // PPSIM_A_IFINDEX 5
		};
		CHECK(bytes_of(wire::ppsim_dev_get(kFamily, 5)) == want);
	}
	SECTION("dump: NLM_F_DUMP, no attributes")
	{
		const Bytes want = {
			0x14, 0x00, 0x00, 0x00, 0x23, 0x00, 0x00, 0x03, 0x00, 0x00,
			0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01, 0x01, 0x00, 0x00,
		};
		CHECK(bytes_of(wire::ppsim_dev_get(kFamily, std::nullopt)) == want);
	}
}

TEST_CASE("ppsim dev-new requests", "[ppsim][wire]")
{
	SECTION("queues, ring and the pair flag")
	{
		const Bytes want = {
			0x30, 0x00, 0x00, 0x00, 0x23, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
			0x00, 0x00, 0x00, 0x00, 0x00, 0x02, 0x01, 0x00, 0x00, // DEV_NEW
			0x08, 0x00, 0x04, 0x00, 0x04, 0x00, 0x00, 0x00,	      // RX_QUEUES 4
			0x08, 0x00, 0x05, 0x00, 0x02, 0x00, 0x00, 0x00,	      // TX_QUEUES 2
			0x08, 0x00, 0x06, 0x00, 0x00, 0x02, 0x00, 0x00,	      // RING_SIZE 512
			0x04, 0x00, 0x0e, 0x00,				      // PAIR
		};
		CHECK(bytes_of(wire::ppsim_dev_new(kFamily, {4, 2, 512, true})) == want);
	}
	SECTION("defaults: nothing but the header")
	{
		auto b = bytes_of(wire::ppsim_dev_new(kFamily, {}));
		REQUIRE(b.size() == 20);
		CHECK(b[16] == PPSIM_CMD_DEV_NEW);
	}
}

TEST_CASE("ppsim dev-del, gen-stop requests", "[ppsim][wire]")
{
	CHECK(bytes_of(wire::ppsim_dev_del(kFamily, 9)) ==
	      request(Builder(kFamily, 0, PPSIM_CMD_DEV_DEL).u32(PPSIM_A_IFINDEX, 9)));
	CHECK(bytes_of(wire::ppsim_gen_stop(kFamily, 9)) ==
	      request(Builder(kFamily, 0, PPSIM_CMD_GEN_STOP).u32(PPSIM_A_IFINDEX, 9)));
}

TEST_CASE("ppsim dev-set requests", "[ppsim][wire]")
{
	SECTION("every knob, in uapi order after the ifindex and ring")
	{
		SimSettings s;
		s.pool = SimPool::Native;
		s.rx = SimRx::Copy;
		s.sync = SimSync::Full;
		s.prefetch = SimPrefetch::BeforeSync;
		s.cache = SimCache::Fifo;
		s.numa_rule = false;
		s.frag = true;
		s.irq_cpu = -1;
		s.ring_size = 256;
		Builder want(kFamily, 0, PPSIM_CMD_DEV_SET);
		want.u32(PPSIM_A_IFINDEX, 7)
			.u32(PPSIM_A_RING_SIZE, 256)
			.u32(PPSIM_A_POOL, PPSIM_POOL_NATIVE)
			.u32(PPSIM_A_RX_MODE, PPSIM_RX_COPY)
			.u32(PPSIM_A_SYNC, PPSIM_SYNC_FULL)
			.u32(PPSIM_A_PREFETCH, PPSIM_PREFETCH_BEFORE_SYNC)
			.u32(PPSIM_A_CACHE, PPSIM_CACHE_FIFO)
			.u8(PPSIM_A_NUMA_RULE, 0)
			.u8(PPSIM_A_FRAG, 1)
			.s32(PPSIM_A_IRQ_CPU, -1);
		CHECK(bytes_of(wire::ppsim_dev_set(kFamily, 7, s)) == request(want));
	}
	SECTION("one knob, byte for byte")
	{
		SimSettings s;
		s.numa_rule = true;
		const Bytes want = {
			0x24, 0x00, 0x00, 0x00, 0x23, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
			0x00, 0x00, 0x00, 0x00, 0x00, 0x04, 0x01, 0x00, 0x00, // DEV_SET
			0x08, 0x00, 0x01, 0x00, 0x07, 0x00, 0x00, 0x00,	      // IFINDEX 7
			0x05, 0x00, 0x0c, 0x00, 0x01, 0x00, 0x00, 0x00,	      // NUMA_RULE 1 (u8, padded)
		};
		CHECK(bytes_of(wire::ppsim_dev_set(kFamily, 7, s)) == want);
	}
	SECTION("nothing to set is refused before the kernel sees it")
	{
		try {
			wire::ppsim_dev_set(kFamily, 7, {});
			FAIL("no error");
		} catch (const Error &e) {
			CHECK(e.code() == Errc::InvalidArgument);
		}
	}
}

TEST_CASE("ppsim gen-start requests", "[ppsim][wire]")
{
	SECTION("rate, ethertype and cpu, byte for byte")
	{
		SimGenParams p;
		p.rate = 1'000'000;
		p.ethertype = 0x86dd;
		p.cpu = -1;
		const Bytes want = {
			0x38, 0x00, 0x00, 0x00, 0x23, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
			0x00, 0x00, 0x00, 0x00, 0x00, 0x05, 0x01, 0x00, 0x00, // GEN_START
			0x08, 0x00, 0x01, 0x00, 0x03, 0x00, 0x00, 0x00,	      // IFINDEX 3
			0x0c, 0x00, 0x10, 0x00, 0x40, 0x42, 0x0f, 0x00,
			0x00, 0x00, 0x00, 0x00,				      // GEN_RATE 1e6 (u64)
			0x06, 0x00, 0x12, 0x00, 0xdd, 0x86, 0x00, 0x00,	      // ETHERTYPE 0x86dd (u16)
			0x08, 0x00, 0x15, 0x00, 0xff, 0xff, 0xff, 0xff,	      // GEN_CPU -1
		};
		CHECK(bytes_of(wire::ppsim_gen_start(kFamily, 3, p)) == want);
	}
	SECTION("every parameter")
	{
		SimGenParams p{0, 1514, 0x0800, 9, 1ull << 40, 3};
		Builder want(kFamily, 0, PPSIM_CMD_GEN_START);
		want.u32(PPSIM_A_IFINDEX, 3)
			.u64(PPSIM_A_GEN_RATE, 0)
			.u32(PPSIM_A_GEN_SIZE, 1514)
			.u16(PPSIM_A_GEN_ETHERTYPE, 0x0800)
			.u16(PPSIM_A_GEN_DST_PORT, 9)
			.u64(PPSIM_A_GEN_COUNT, 1ull << 40)
			.s32(PPSIM_A_GEN_CPU, 3);
		CHECK(bytes_of(wire::ppsim_gen_start(kFamily, 3, p)) == request(want));
	}
	SECTION("defaults: the ifindex alone")
	{
		CHECK(bytes_of(wire::ppsim_gen_start(kFamily, 3, {})) ==
		      request(Builder(kFamily, 0, PPSIM_CMD_GEN_START).u32(PPSIM_A_IFINDEX, 3)));
	}
}

TEST_CASE("a ppsim device reply from the kernel's bytes", "[ppsim][wire]")
{
	// A dev-get answer for the first port of a pair with a running
	// generator, written out by hand: u64s after a PAD, as
	// nla_put_u64_64bit does.
	const Bytes reply = {
		0x98, 0x00, 0x00, 0x00, 0x23, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00,
		0x00, 0x00, 0x00, 0x00, 0x01, 0x01, 0x00, 0x00,
		0x08, 0x00, 0x01, 0x00, 0x05, 0x00, 0x00, 0x00,			// IFINDEX 5
		0x0b, 0x00, 0x02, 0x00, 0x70, 0x70, 0x73, 0x69, 0x6d, 0x30, 0x00, 0x00, // IFNAME "ppsim0"
		0x08, 0x00, 0x03, 0x00, 0x06, 0x00, 0x00, 0x00,			// PEER_IFINDEX 6
		0x08, 0x00, 0x04, 0x00, 0x04, 0x00, 0x00, 0x00,			// RX_QUEUES 4
		0x08, 0x00, 0x05, 0x00, 0x04, 0x00, 0x00, 0x00,			// TX_QUEUES 4
		0x08, 0x00, 0x06, 0x00, 0x00, 0x04, 0x00, 0x00,			// RING_SIZE 1024
		0x08, 0x00, 0x07, 0x00, 0x00, 0x00, 0x00, 0x00,			// POOL ppkit
		0x08, 0x00, 0x08, 0x00, 0x01, 0x00, 0x00, 0x00,			// RX_MODE copy
		0x08, 0x00, 0x0b, 0x00, 0x01, 0x00, 0x00, 0x00,			// CACHE fifo
		0x05, 0x00, 0x0c, 0x00, 0x01, 0x00, 0x00, 0x00,			// NUMA_RULE 1
		0x08, 0x00, 0x0d, 0x00, 0xff, 0xff, 0xff, 0xff,			// IRQ_CPU -1
		0x08, 0x00, 0x0f, 0x00, 0x00, 0x00, 0x00, 0x00,			// XDP_PROG_ID 0: none
		0x06, 0x00, 0x12, 0x00, 0x00, 0x08, 0x00, 0x00,			// GEN_ETHERTYPE 0x0800
		0x05, 0x00, 0x16, 0x00, 0x01, 0x00, 0x00, 0x00,			// GEN_RUNNING 1
		0x04, 0x00, 0x19, 0x00,						// PAD
		0x0c, 0x00, 0x17, 0x00, 0x00, 0xe4, 0x0b, 0x54, 0x02, 0x00, 0x00, 0x00,	// GEN_SENT 1e10
	};
	auto m = fixture::msg(reply);
	CHECK(nl::genl_cmd(m.get()) == PPSIM_CMD_DEV_GET);
	SimDevice d = wire::ppsim_parse_device(m.get());
	CHECK(d.ifindex == 5);
	CHECK(d.ifname == "ppsim0");
	CHECK(d.peer_ifindex == 6u);
	CHECK(d.peer_ifname.empty());	// the client resolves names, not the parser
	CHECK(d.rx_queues == 4u);
	CHECK(d.tx_queues == 4u);
	CHECK(d.ring_size == 1024u);
	CHECK(d.pool == SimPool::Ppkit);
	CHECK(d.rx == SimRx::Copy);
	CHECK(d.cache == SimCache::Fifo);
	CHECK_FALSE(d.sync);
	CHECK_FALSE(d.prefetch);
	CHECK(d.numa_rule == true);
	CHECK(d.irq_cpu == -1);
	CHECK_FALSE(d.xdp_prog_id);	// 0 is none
	CHECK(d.gen.ethertype == 0x0800);
	CHECK(d.gen.running == true);
	CHECK(d.gen.sent == 10'000'000'000ull);
	CHECK_FALSE(d.gen.missed);
	CHECK_FALSE(d.gen.rate);
}

TEST_CASE("a ppsim device built with libnl parses back whole", "[ppsim][wire]")
{
	auto m = nl::genl_request(kFamily, PPSIM_CMD_DEV_NEW, 1, 0);
	nla_put_u32(m.get(), PPSIM_A_IFINDEX, 11);
	nla_put_string(m.get(), PPSIM_A_IFNAME, "ppsim3");
	nla_put_u32(m.get(), PPSIM_A_PEER_IFINDEX, 0);
	nla_put_u32(m.get(), PPSIM_A_RX_QUEUES, 8);
	nla_put_u32(m.get(), PPSIM_A_TX_QUEUES, 2);
	nla_put_u32(m.get(), PPSIM_A_RING_SIZE, 4096);
	nla_put_u32(m.get(), PPSIM_A_POOL, PPSIM_POOL_NONE);
	nla_put_u32(m.get(), PPSIM_A_RX_MODE, PPSIM_RX_ZEROCOPY);
	nla_put_u32(m.get(), PPSIM_A_SYNC, PPSIM_SYNC_PRECISE);
	nla_put_u32(m.get(), PPSIM_A_PREFETCH, PPSIM_PREFETCH_AFTER_SYNC);
	nla_put_u32(m.get(), PPSIM_A_CACHE, PPSIM_CACHE_LIFO);
	nla_put_u8(m.get(), PPSIM_A_NUMA_RULE, 0);
	nla_put_s32(m.get(), PPSIM_A_IRQ_CPU, 2);
	nla_put_u32(m.get(), PPSIM_A_XDP_PROG_ID, 42);
	nla_put_u64(m.get(), PPSIM_A_GEN_RATE, 0);
	nla_put_u32(m.get(), PPSIM_A_GEN_SIZE, 60);
	nla_put_u16(m.get(), PPSIM_A_GEN_ETHERTYPE, 0x88b5);
	nla_put_u16(m.get(), PPSIM_A_GEN_DST_PORT, 4789);
	nla_put_u64(m.get(), PPSIM_A_GEN_COUNT, 1000);
	nla_put_s32(m.get(), PPSIM_A_GEN_CPU, -1);
	nla_put_u8(m.get(), PPSIM_A_GEN_RUNNING, 0);
	nla_put_u64(m.get(), PPSIM_A_GEN_SENT, 1000);
	nla_put_u64(m.get(), PPSIM_A_GEN_MISSED, 7);
	nla_put_u32(m.get(), PPSIM_A_MAX + 3, 1);	// from a newer kernel: ignored

	auto back = nl::from_bytes(nl::to_bytes(m.get()));
	SimDevice d = wire::ppsim_parse_device(back.get());
	CHECK(d.ifindex == 11);
	CHECK(d.ifname == "ppsim3");
	CHECK_FALSE(d.peer_ifindex);	// 0 is none
	CHECK(d.rx_queues == 8u);
	CHECK(d.tx_queues == 2u);
	CHECK(d.ring_size == 4096u);
	CHECK(d.pool == SimPool::None);
	CHECK(d.rx == SimRx::Zerocopy);
	CHECK(d.sync == SimSync::Precise);
	CHECK(d.prefetch == SimPrefetch::AfterSync);
	CHECK(d.cache == SimCache::Lifo);
	CHECK(d.numa_rule == false);
	CHECK(d.irq_cpu == 2);
	CHECK(d.xdp_prog_id == 42u);
	CHECK(d.gen.rate == 0u);
	CHECK(d.gen.size == 60u);
	CHECK(d.gen.ethertype == 0x88b5);
	CHECK(d.gen.dst_port == 4789);
	CHECK(d.gen.count == 1000u);
	CHECK(d.gen.cpu == -1);
	CHECK(d.gen.running == false);
	CHECK(d.gen.sent == 1000u);
	CHECK(d.gen.missed == 7u);
}

TEST_CASE("a knob value from a newer kernel is kept and called unknown", "[ppsim][wire]")
{
	auto m = Builder(kFamily, 0, PPSIM_CMD_DEV_GET)
			 .u32(PPSIM_A_IFINDEX, 2)
			 .u32(PPSIM_A_POOL, 3)
			 .u32(PPSIM_A_SYNC, 1000)
			 .msg();
	SimDevice d = wire::ppsim_parse_device(m.get());
	REQUIRE(d.pool);
	CHECK(to_string(*d.pool) == "unknown");
	REQUIRE(d.sync);
	CHECK(to_string(*d.sync) == "unknown");
}

TEST_CASE("malformed ppsim device messages are protocol errors", "[ppsim][wire]")
{
	auto code_of = [](const Bytes &b) {
		try {
			wire::ppsim_parse_device(fixture::msg(b).get());
		} catch (const Error &e) {
			return e.code();
		}
		return Errc::Kernel;	// "no error"
	};
	auto dev = [] { return Builder(kFamily, 0, PPSIM_CMD_DEV_GET).u32(PPSIM_A_IFINDEX, 1); };
	CHECK(code_of(Builder(kFamily, 0, 1).str(PPSIM_A_IFNAME, "x").bytes()) == Errc::Protocol);
	CHECK(code_of(dev().u32(PPSIM_A_NUMA_RULE, 1).bytes()) == Errc::Protocol);	// u8
	CHECK(code_of(dev().u32(PPSIM_A_GEN_ETHERTYPE, 0x800).bytes()) == Errc::Protocol); // u16
	CHECK(code_of(dev().u32(PPSIM_A_GEN_SENT, 1).bytes()) == Errc::Protocol);	// u64
	CHECK(code_of(dev().raw(PPSIM_A_IFNAME, "abcd", 4).bytes()) == Errc::Protocol);	// no NUL
	CHECK(code_of(dev().bytes()) == Errc::Kernel);	// well-formed, for contrast
}
