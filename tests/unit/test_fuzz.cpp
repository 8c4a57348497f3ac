// SPDX-License-Identifier: GPL-2.0
// The netlink fuzzer's generator and rules (tests/fuzz/fuzz.h), without a
// kernel: what each kind of message looks like on the wire, and which
// replies break a rule.
#include <catch2/catch.hpp>

#include <cerrno>
#include <cstring>
#include <set>

#include <linux/genetlink.h>
#include <linux/netlink.h>
#include <linux/ppkit.h>

#include "fuzz.h"

using namespace ppkit::fuzz;

namespace {

const Target kTarget{0x20, {3, 4, 9}, {7}};

std::uint32_t nlmsg_len(const Message &m)
{
	std::uint32_t len = 0;
	std::memcpy(&len, m.bytes.data(), sizeof(len));
	return len;
}

// The attributes after the generic netlink header: nla_len of each, until
// one does not fit.  Returns false if one does not.
bool attrs_fit(const Message &m, bool *nested = nullptr)
{
	std::size_t off = NLMSG_HDRLEN + GENL_HDRLEN;
	while (off + 4 <= m.bytes.size()) {
		std::uint16_t len, type;
		std::memcpy(&len, &m.bytes[off], 2);
		std::memcpy(&type, &m.bytes[off + 2], 2);
		if (len < 4 || off + len > m.bytes.size())
			return false;
		if (nested && (type & NLA_F_NESTED))
			*nested = true;
		off += (len + 3u) & ~3u;
	}
	return off == m.bytes.size();
}

}  // namespace

TEST_CASE("fuzz: the same seed makes the same messages", "[fuzz]")
{
	Generator a(42, kTarget), b(42, kTarget), c(43, kTarget);
	bool differ = false;
	for (std::uint32_t i = 0; i < 200; i++) {
		Message x = a.next(i), y = b.next(i), z = c.next(i);
		REQUIRE(x.bytes == y.bytes);
		differ |= x.bytes != z.bytes;
	}
	CHECK(differ);
}

TEST_CASE("fuzz: every kind comes up", "[fuzz]")
{
	Generator g(1, kTarget);
	std::set<Kind> seen;
	for (std::uint32_t i = 0; i < 5000; i++)
		seen.insert(g.next(i).kind);
	CHECK(static_cast<int>(seen.size()) == kKinds);
}

TEST_CASE("fuzz: what each kind looks like on the wire", "[fuzz]")
{
	Generator g(7, kTarget);
	for (std::uint32_t i = 0; i < 300; i++) {
		SECTION("valid: a real command, its own attributes, well formed")
		{
			Message m = g.make(Kind::Valid, i);
			REQUIRE(m.whole);
			CHECK(nlmsg_len(m) == m.bytes.size());
			CHECK((m.cmd == PPKIT_CMD_POOL_GET || m.cmd == PPKIT_CMD_STATS_GET ||
			       m.cmd == PPKIT_CMD_POOL_SET));
			CHECK(m.request());
			CHECK(attrs_fit(m));
			CHECK(m.bytes[NLMSG_HDRLEN] == m.cmd);
			if (m.cmd == PPKIT_CMD_POOL_SET)
				CHECK_FALSE(m.dump());
		}
		SECTION("bad command: none the family answers")
		{
			Message m = g.make(Kind::BadCmd, i);
			CHECK(m.cmd != PPKIT_CMD_POOL_GET);
			CHECK(m.cmd != PPKIT_CMD_STATS_GET);
			CHECK(m.cmd != PPKIT_CMD_POOL_SET);
		}
		SECTION("nested: an attribute with NLA_F_NESTED")
		{
			Message m = g.make(Kind::Nested, i);
			bool nested = false;
			CHECK(attrs_fit(m, &nested));
			CHECK(nested);
		}
		SECTION("huge: past a page")
		{
			Message m = g.make(Kind::Huge, i);
			CHECK(m.bytes.size() > 1600);
			CHECK(m.bytes.size() <= 68 * 1024);
			CHECK(nlmsg_len(m) == m.bytes.size());
		}
		SECTION("bad attribute length: one attribute does not fit")
		{
			Message m = g.make(Kind::BadAttrLen, i);
			CHECK(nlmsg_len(m) == m.bytes.size());
			CHECK_FALSE(attrs_fit(m));
		}
		SECTION("trailing: 1-3 bytes after the last attribute")
		{
			Message m = g.make(Kind::Trailing, i);
			CHECK(nlmsg_len(m) == m.bytes.size());
			CHECK((m.bytes.size() - NLMSG_HDRLEN - GENL_HDRLEN) % 4 != 0);
		}
		SECTION("short generic netlink header")
		{
			Message m = g.make(Kind::ShortGenl, i);
			CHECK_FALSE(m.genl);
			CHECK(m.bytes.size() >= NLMSG_HDRLEN);
			CHECK(m.bytes.size() < NLMSG_HDRLEN + GENL_HDRLEN);
			CHECK(nlmsg_len(m) == m.bytes.size());
		}
		SECTION("truncated header: the kernel cannot read it")
		{
			Message m = g.make(Kind::TruncatedHeader, i);
			CHECK_FALSE(m.whole);
			CHECK((m.bytes.size() < NLMSG_HDRLEN || nlmsg_len(m) > m.bytes.size() ||
			       nlmsg_len(m) < NLMSG_HDRLEN));
		}
	}
}

TEST_CASE("fuzz: the rules a reply must follow", "[fuzz]")
{
	Generator g(3, kTarget);
	const Reply accepted{true, 0, ""};
	const Reply einval_msg{true, -EINVAL, "Unknown attribute type"};
	const Reply einval_bare{true, -EINVAL, ""};
	const Reply eperm{true, -EPERM, ""};
	const Reply eopnotsupp{true, -EOPNOTSUPP, ""};
	const Reply none{};

	Message bad = g.make(Kind::RandomAttrs, 1);
	CHECK(check(bad, einval_msg, true).empty());
	CHECK(check(bad, accepted, true).empty());
	CHECK_FALSE(check(bad, einval_bare, true).empty());	// ppkit's rejection without a message
	CHECK_FALSE(check(bad, none, true).empty());		// asked for an ack, got nothing

	Message cmd = g.make(Kind::BadCmd, 2);
	CHECK(check(cmd, eopnotsupp, true).empty());	// the core's, before ppkit
	CHECK_FALSE(check(cmd, einval_bare, true).empty());

	Message shrt = g.make(Kind::ShortGenl, 3);
	CHECK(check(shrt, einval_bare, true).empty());

	Message trunc = g.make(Kind::TruncatedHeader, 4);
	CHECK(check(trunc, none, true).empty());
	Reply refused{};
	refused.send_err = -ENODATA;	// sendmsg() of an empty message
	CHECK(check(trunc, refused, true).empty());
	CHECK_FALSE(check(bad, refused, true).empty());	// but not of a whole one
	CHECK_FALSE(check(trunc, einval_msg, true).empty());

	Message valid;
	do {
		valid = g.make(Kind::Valid, 5);
	} while (valid.cmd != PPKIT_CMD_POOL_SET);
	CHECK(check(valid, accepted, true).empty());
	CHECK_FALSE(check(valid, einval_msg, true).empty());	// a valid request must pass
	CHECK(check(valid, eperm, false).empty());		// ... unless unprivileged
	CHECK_FALSE(check(valid, accepted, false).empty());	// an unprivileged write went through
	CHECK_FALSE(check(valid, einval_msg, false).empty());	// EPERM, not another error
	Message flagged = valid;
	flagged.flags |= 0x4000;				// a reserved nlmsg_flags bit
	const Reply einval_flags{true, -EINVAL, "ambiguous or reserved bits set in nlmsg_flags"};
	CHECK(check(flagged, einval_flags, false).empty());	// the core's header check comes first
	CHECK_FALSE(check(valid, einval_flags, false).empty());	// but not for ordinary flags

	Message get;
	do {
		get = g.make(Kind::Valid, 6);
	} while (get.cmd == PPKIT_CMD_POOL_SET);
	CHECK(check(get, accepted, false).empty());		// reads need no capability
	CHECK_FALSE(check(get, eperm, false).empty());
}

TEST_CASE("fuzz: the tally sorts the replies", "[fuzz]")
{
	Generator g(9, kTarget);
	Tally t;
	t.count(g.make(Kind::Valid, 1), Reply{true, 0, ""}, true);
	t.count(g.make(Kind::RandomAttrs, 2), Reply{true, -EINVAL, "x"}, true);
	t.count(g.make(Kind::BadCmd, 3), Reply{true, -EOPNOTSUPP, ""}, true);
	t.count(g.make(Kind::TruncatedHeader, 4), Reply{}, true);
	CHECK(t.sent == 4);
	CHECK(t.accepted == 1);
	CHECK(t.rejected_msg == 1);
	CHECK(t.rejected_core == 1);
	CHECK(t.core_errno[0] == 1);
	CHECK(t.no_reply == 1);
	CHECK(t.per_kind[static_cast<int>(Kind::Valid)] == 1);
}
