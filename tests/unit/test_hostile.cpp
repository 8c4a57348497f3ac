// SPDX-License-Identifier: GPL-2.0
// Hostile replies: every parser of libppkit's netlink families (ppkit,
// ppsim, netdev) and of acks, fed messages no kernel of ours sends:
// attributes of every type with every size, truncated, overlong, nested
// where they are flat and flat where they nest, strings without their NUL.
// Each must parse or throw ppkit::Error; under make test-asan, a read
// outside the message is a failure too.
#include <catch2/catch.hpp>

#include <cstdint>
#include <cstring>
#include <iterator>
#include <memory>
#include <random>
#include <string>

#include <linux/genetlink.h>
#include <linux/netlink.h>
#include <linux/ppkit.h>
#include <linux/ppsim.h>

#include "fixtures.h"
#include "netdev_family.h"
#include "nl.h"
#include "ppkit/error.h"
#include "ppkit_family.h"
#include "ppsim_family.h"

using fixture::Builder;
using fixture::Bytes;

namespace {

constexpr std::uint16_t kFamily = 0x20;

// A payload of @n random bytes, or one that looks like what a parser may
// expect (a NUL-terminated string, a u32, a u64) of the wrong length.
Bytes payload(std::mt19937 &rng, std::size_t n)
{
	Bytes b(n);
	for (auto &c : b)
		c = static_cast<std::uint8_t>(rng() % 4 ? rng() : 0);
	return b;
}

// Attributes of types 0..@max_type (and a few past it), sizes 0..40 or a
// counter's, some nested with random attributes inside, some with their
// NESTED flag on a flat attribute.
void soup(std::mt19937 &rng, Builder &b, unsigned max_type, int depth)
{
	static constexpr std::size_t kSizes[] = {0, 1, 2, 3, 4, 5, 7, 8, 9, 12, 16, 33, 40};
	const unsigned n = 1 + rng() % 12;
	for (unsigned i = 0; i < n; i++) {
		const auto type = static_cast<std::uint16_t>(rng() % (max_type + 4));
		if (depth < 2 && rng() % 5 == 0) {
			b.nest(type);
			soup(rng, b, max_type, depth + 1);
			b.end_nest();
			continue;
		}
		Bytes p = payload(rng, kSizes[rng() % std::size(kSizes)]);
		b.raw(static_cast<std::uint16_t>(type | (rng() % 7 == 0 ? NLA_F_NESTED : 0)),
		      p.data(), p.size());
	}
}

// @good mangled: cut short (its lengths then say more than there is),
// bytes flipped, an attribute length or the message's own forged.
Bytes mangle(std::mt19937 &rng, Bytes good)
{
	const std::size_t hdr = NLMSG_HDRLEN + GENL_HDRLEN;
	switch (rng() % 4) {
	case 0:	// truncated, nlmsg_len kept: from_bytes must refuse it
	case 1: {	// truncated, nlmsg_len matching: inner lengths overrun
		std::size_t cut = hdr + rng() % (good.size() - hdr + 1);
		good.resize(cut);
		if (rng() % 2) {
			auto len = static_cast<std::uint32_t>(cut);
			std::memcpy(good.data(), &len, 4);
		}
		break;
	}
	case 2:	// bytes flipped after the headers
		for (int i = 0; i < 4 && good.size() > hdr; i++)
			good[hdr + rng() % (good.size() - hdr)] ^= static_cast<std::uint8_t>(1 + rng() % 255);
		break;
	default: {	// a 16-bit length word anywhere after the headers forged
		if (good.size() < hdr + 2)
			break;
		std::size_t at = hdr + (rng() % ((good.size() - hdr) / 2)) * 2;
		auto v = static_cast<std::uint16_t>(rng() % 3 ? rng() % 64 : rng());
		std::memcpy(&good[at], &v, 2);
		break;
	}
	}
	return good;
}

// One parser on @bytes: a value or ppkit::Error, nothing else.
template <typename Parse>
void survives(const Bytes &bytes, Parse parse, int &parsed, int &refused)
{
	try {
		ppkit::nl::MsgPtr m = ppkit::nl::from_bytes(bytes);
		parse(m.get());
		parsed++;
	} catch (const ppkit::Error &e) {
		CHECK(std::string(e.what()).size() > 0);
		refused++;
	}
}

struct Target {
	const char *name;
	unsigned max_type;
	std::uint8_t cmd;
	void (*parse)(nl_msg *);
};

const Target kTargets[] = {
	{"ppkit pool", PPKIT_A_POOL_MAX, PPKIT_CMD_POOL_GET,
	 [](nl_msg *m) { (void)ppkit::wire::ppkit_parse_pool(m); }},
	{"ppkit stats", PPKIT_A_STATS_MAX, PPKIT_CMD_STATS_GET,
	 [](nl_msg *m) { (void)ppkit::wire::ppkit_parse_stats(m); }},
	{"ppkit holders", PPKIT_A_HOLDERS_MAX, PPKIT_CMD_HOLDERS_GET,
	 [](nl_msg *m) { (void)ppkit::wire::ppkit_parse_holders(m); }},
	{"ppsim device", PPSIM_A_MAX, 1, [](nl_msg *m) { (void)ppkit::wire::ppsim_parse_device(m); }},
	{"netdev page-pool", 12, 5, [](nl_msg *m) { (void)ppkit::wire::netdev_parse_pool(m, 0); }},
	{"netdev page-pool stats", 12, 9,
	 [](nl_msg *m) { (void)ppkit::wire::netdev_parse_stats(m); }},
};

}  // namespace

TEST_CASE("hostile replies: each family's parsers refuse what they cannot read", "[nl][fuzz]")
{
	for (const Target &t : kTargets) {
		SECTION(t.name)
		{
			std::mt19937 rng(20261207);
			int parsed = 0, refused = 0;
			for (int i = 0; i < 3000; i++) {
				Builder b(kFamily, 0, t.cmd);
				soup(rng, b, t.max_type, 0);
				Bytes good = b.bytes();
				survives(good, t.parse, parsed, refused);
				survives(mangle(rng, good), t.parse, parsed, refused);
			}
			INFO(t.name << ": " << parsed << " parsed, " << refused << " refused");
			CHECK(parsed + refused == 6000);
			// Random attributes break some rule of every family's policy.
			CHECK(refused > 0);
		}
	}
}

TEST_CASE("hostile replies: acks with forged extended acks", "[nl][fuzz]")
{
	std::mt19937 rng(7);
	for (int i = 0; i < 3000; i++) {
		// An NLMSG_ERROR: error, the echoed request header (and maybe its
		// payload), then NLMSGERR_ATTR_* attributes of any size.
		Bytes b(NLMSG_HDRLEN);
		auto put32 = [&b](std::uint32_t v) {
			auto *p = reinterpret_cast<std::uint8_t *>(&v);
			b.insert(b.end(), p, p + 4);
		};
		put32(static_cast<std::uint32_t>(-22));
		const std::uint32_t echoed = rng() % 4 ? 16 + 4 * (rng() % 8) : rng();
		put32(echoed);
		for (int k = 0; k < 3; k++)
			put32(static_cast<std::uint32_t>(rng()));
		for (unsigned k = 0, n = rng() % 4; k < n; k++) {
			Bytes p = payload(rng, rng() % 24);
			std::uint16_t len = static_cast<std::uint16_t>(rng() % 5 ? 4 + p.size() : rng());
			std::uint16_t type = static_cast<std::uint16_t>(rng() % 6);
			b.insert(b.end(), reinterpret_cast<std::uint8_t *>(&len),
				 reinterpret_cast<std::uint8_t *>(&len) + 2);
			b.insert(b.end(), reinterpret_cast<std::uint8_t *>(&type),
				 reinterpret_cast<std::uint8_t *>(&type) + 2);
			b.insert(b.end(), p.begin(), p.end());
			while (b.size() % 4)
				b.push_back(0);
		}
		nlmsghdr h{};
		h.nlmsg_len = static_cast<std::uint32_t>(b.size());
		h.nlmsg_type = NLMSG_ERROR;
		h.nlmsg_flags = static_cast<std::uint16_t>(rng() % 2 ? NLM_F_CAPPED | NLM_F_ACK_TLVS : 0);
		std::memcpy(b.data(), &h, sizeof(h));
		// the message in a buffer of its own exact size: ASan sees any overrun
		auto copy = std::make_unique<std::uint8_t[]>(b.size());
		std::memcpy(copy.get(), b.data(), b.size());
		std::string m = ppkit::nl::extack_message(reinterpret_cast<const nlmsghdr *>(copy.get()));
		CHECK(m.size() < b.size());
	}
}
