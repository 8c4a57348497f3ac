// SPDX-License-Identifier: GPL-2.0
// The netlink plumbing: bytes in and out, "uint" attributes, and the
// kernel's extended-ack message in error replies.
#include <catch2/catch.hpp>

#include <cerrno>
#include <cstdio>

#include <sched.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <linux/netlink.h>

#include "fixtures.h"
#include "nl.h"
#include "ppkit/error.h"

using namespace ppkit;
using fixture::Builder;
using fixture::Bytes;

TEST_CASE("messages survive the trip to bytes and back", "[nl]")
{
	auto m = nl::genl_request(0x30, 4, 1, NLM_F_DUMP);
	nl::put_u32(m.get(), 2, 0xdeadbeef);
	Bytes b = nl::to_bytes(m.get());
	CHECK(b.size() == 28);
	auto back = nl::from_bytes(b);
	CHECK(nl::to_bytes(back.get()) == b);
	CHECK(nl::genl_cmd(back.get()) == 4);
	CHECK(nlmsg_hdr(back.get())->nlmsg_flags == NLM_F_DUMP);
}

TEST_CASE("from_bytes refuses what is not a message", "[nl]")
{
	CHECK_THROWS_AS(nl::from_bytes(Bytes{1, 2, 3}), Error);
	Bytes b = Builder(0x30, 0, 1).u32(1, 1).bytes();
	b[0] = 0xff;	// longer than the bytes
	CHECK_THROWS_AS(nl::from_bytes(b), Error);
	Bytes tiny(16, 0);
	tiny[0] = 16;	// a bare netlink header: not generic netlink
	auto m = nl::from_bytes(tiny);
	CHECK_THROWS_AS(nl::genl_cmd(m.get()), Error);
}

TEST_CASE("uint attributes are u32 or u64", "[nl]")
{
	auto m = Builder(0x30, 0, 1).u32(1, 7).u64(2, 1ull << 40).raw(3, "abc", 3).msg();
	nlattr *tb[4] = {};
	REQUIRE(genlmsg_parse(nlmsg_hdr(m.get()), 0, tb, 3, nullptr) == 0);
	CHECK(nl::get_uint(tb[1]) == 7);
	CHECK(nl::get_uint(tb[2]) == 1ull << 40);
	CHECK_THROWS_AS(nl::get_uint(tb[3]), Error);
}

TEST_CASE("extended ack messages", "[nl][extack]")
{
	SECTION("capped error: the TLVs follow the echoed header")
	{
		const Bytes err = {
			0x40, 0x00, 0x00, 0x00, 0x02, 0x00, 0x00, 0x03, // NLMSG_ERROR, CAPPED|ACK_TLVS
			0x05, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
			0xea, 0xff, 0xff, 0xff,				// -EINVAL
			0x24, 0x00, 0x00, 0x00, 0x22, 0x00, 0x05, 0x00, // the request's header
			0x05, 0x00, 0x00, 0x00, 0xd2, 0x04, 0x00, 0x00,
			0x1b, 0x00, 0x01, 0x00,				// NLMSGERR_ATTR_MSG
			0x72, 0x69, 0x6e, 0x67, 0x20, 0x73, 0x69, 0x7a, 0x65, 0x20, 0x6f, 0x75,
			0x74, 0x20, 0x6f, 0x66, 0x20, 0x72, 0x61, 0x6e, 0x67, 0x65, 0x00, 0x00,
		};
		auto m = fixture::msg(err);
		CHECK(nl::extack_message(nlmsg_hdr(m.get())) == "ring size out of range");
	}
	SECTION("uncapped error: the request's payload comes first")
	{
		const Bytes err = {
			0x38, 0x00, 0x00, 0x00, 0x02, 0x00, 0x00, 0x02, // ACK_TLVS only
			0x05, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
			0xff, 0xff, 0xff, 0xff,				// -EPERM
			0x1c, 0x00, 0x00, 0x00, 0x22, 0x00, 0x05, 0x00, 0x05, 0x00, 0x00, 0x00,
			0xd2, 0x04, 0x00, 0x00,
			0x06, 0x01, 0x00, 0x00, 0x08, 0x00, 0x02, 0x00, 0x03, 0x00, 0x00, 0x00,
			0x07, 0x00, 0x01, 0x00, 0x6e, 0x6f, 0x00, 0x00, // MSG "no"
		};
		auto m = fixture::msg(err);
		CHECK(nl::extack_message(nlmsg_hdr(m.get())) == "no");
	}
	SECTION("no TLVs: no message")
	{
		Bytes err = {
			0x24, 0x00, 0x00, 0x00, 0x02, 0x00, 0x00, 0x01, // CAPPED only
			0x05, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0xfe, 0xff, 0xff, 0xff,
			0x14, 0x00, 0x00, 0x00, 0x22, 0x00, 0x05, 0x00, 0x05, 0x00, 0x00, 0x00,
			0xd2, 0x04, 0x00, 0x00,
		};
		auto m = fixture::msg(err);
		CHECK(nl::extack_message(nlmsg_hdr(m.get())).empty());
	}
	SECTION("a dump that failed midway: error and message in NLMSG_DONE")
	{
		Bytes done = {
			0x20, 0x00, 0x00, 0x00, 0x03, 0x00, 0x02, 0x02, // NLMSG_DONE, MULTI|ACK_TLVS
			0x05, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0xf4, 0xff, 0xff, 0xff,
			0x0a, 0x00, 0x01, 0x00, 0x6f, 0x6f, 0x6d, 0x21, 0x21, 0x00, 0x00, 0x00, // "oom!!"
		};
		auto m = fixture::msg(done);
		CHECK(nl::extack_message(nlmsg_hdr(m.get())) == "oom!!");
	}
	SECTION("a truncated error message is not read past its end")
	{
		Bytes err = {
			0x18, 0x00, 0x00, 0x00, 0x02, 0x00, 0x00, 0x03,
			0x05, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
			0xea, 0xff, 0xff, 0xff, 0x24, 0x00, 0x00, 0x00,
		};
		auto m = fixture::msg(err);
		CHECK(nl::extack_message(nlmsg_hdr(m.get())).empty());
	}
	SECTION("a forged echoed length is not followed out of the message")
	{
		// an uncapped error whose echoed request claims 2 GiB, nearly 4 GiB
		// (an offset before the message, as an int), less than a header
		// (8: the payload's end lands on the echoed header's seq, which
		// reads as an attribute) or more than the message: no message, no
		// read outside the message's 44 bytes
		for (std::uint32_t echoed : {0x80000010u, 0xffffff98u, 12u, 8u, 0u, 0x40u, 16u}) {
			Bytes err = {
				0x2c, 0x00, 0x00, 0x00, 0x02, 0x00, 0x00, 0x02, // ACK_TLVS only
				0x05, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
				0xff, 0xff, 0xff, 0xff,				// -EPERM
				0x00, 0x00, 0x00, 0x00, 0x22, 0x00, 0x05, 0x00, // the echoed header
				0x05, 0x00, 0x00, 0x00, 0xd2, 0x04, 0x00, 0x00,
				0x07, 0x00, 0x01, 0x00, 0x6e, 0x6f, 0x00, 0x00, // MSG "no"
			};
			for (int i = 0; i < 4; i++)
				err[20 + i] = static_cast<std::uint8_t>(echoed >> (8 * i));
			auto m = fixture::msg(err);
			INFO("echoed nlmsg_len " << echoed);
			if (echoed == 16)	// a bare header: honest, the message follows
				CHECK(nl::extack_message(nlmsg_hdr(m.get())) == "no");
			else
				CHECK(nl::extack_message(nlmsg_hdr(m.get())).empty());
		}
	}
}

TEST_CASE("a generic netlink socket opens here", "[nl][host]")
{
	nl::Socket s;
	CHECK(s.fd() >= 0);
	// The controller resolves itself; a family that does not exist is 0.
	CHECK(s.family("nlctrl") == GENL_ID_CTRL);
	CHECK(s.family("ppkit-no-such-family") == 0);
}

namespace {

std::size_t rmem_max()
{
	std::FILE *f = std::fopen("/proc/sys/net/core/rmem_max", "r");
	REQUIRE(f);
	unsigned long v = 0;
	REQUIRE(std::fscanf(f, "%lu", &v) == 1);
	std::fclose(f);
	return v;
}

}  // namespace

TEST_CASE("a receive buffer past rmem_max is forced, or reported as capped", "[nl][host]")
{
	const std::size_t cap = rmem_max();
	const std::size_t want = cap + (1 << 20);
	{
		int fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_GENERIC);
		REQUIRE(fd >= 0);
		nl::ReceiveBuffer b = nl::set_receive_buffer(fd, want);
		close(fd);
		// With CAP_NET_ADMIN the size asked for, past the cap; without,
		// no more than the cap, and said so.
		if (b.forced)
			CHECK(b.bytes == want);
		else
			CHECK(b.bytes <= cap);
	}
	// Without CAP_NET_ADMIN in the initial namespace (a user namespace of
	// our own): SO_RCVBUF, capped, and forced is false.
	pid_t pid = fork();
	REQUIRE(pid >= 0);
	if (pid == 0) {
		if (unshare(CLONE_NEWUSER) < 0)
			_exit(77);
		int fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_GENERIC);
		if (fd < 0)
			_exit(2);
		nl::ReceiveBuffer b = nl::set_receive_buffer(fd, want);
		_exit(!b.forced && b.bytes > 0 && b.bytes <= cap ? 0 : 1);
	}
	int status = 0;
	REQUIRE(waitpid(pid, &status, 0) == pid);
	REQUIRE(WIFEXITED(status));
	if (WEXITSTATUS(status) == 77)
		WARN("no user namespace here: the capped case is not checked");
	else
		CHECK(WEXITSTATUS(status) == 0);
}
