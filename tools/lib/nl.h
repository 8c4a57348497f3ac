// SPDX-License-Identifier: GPL-2.0
// libppkit internals: owning handles for libnl objects and one generic
// netlink request engine (send, receive every reply, collect the kernel's
// error and extended-ack message).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include <netlink/attr.h>
#include <netlink/genl/genl.h>
#include <netlink/handlers.h>
#include <netlink/msg.h>
#include <netlink/netlink.h>

namespace ppkit::nl {

struct SockDeleter {
	void operator()(nl_sock *s) const noexcept { nl_socket_free(s); }
};
struct MsgDeleter {
	void operator()(nl_msg *m) const noexcept { nlmsg_free(m); }
};
struct CbDeleter {
	void operator()(nl_cb *c) const noexcept { nl_cb_put(c); }
};
using SockPtr = std::unique_ptr<nl_sock, SockDeleter>;
using MsgPtr = std::unique_ptr<nl_msg, MsgDeleter>;
using CbPtr = std::unique_ptr<nl_cb, CbDeleter>;

// A generic netlink request: header for @family's @cmd, no attributes yet.
// Throws std::bad_alloc.
MsgPtr genl_request(int family, std::uint8_t cmd, std::uint8_t version, int flags);

// Attribute puts that throw ppkit::Error(System) instead of returning codes.
void put_u8(nl_msg *msg, int type, std::uint8_t value);
void put_u16(nl_msg *msg, int type, std::uint16_t value);
void put_u32(nl_msg *msg, int type, std::uint32_t value);
void put_s32(nl_msg *msg, int type, std::int32_t value);
void put_u64(nl_msg *msg, int type, std::uint64_t value);
void put_flag(nl_msg *msg, int type);
nlattr *nest_start(nl_msg *msg, int type);
void nest_end(nl_msg *msg, nlattr *nest);

// The bytes of @msg as it would go on the wire, and back: fixtures for
// tests, and what a replayed kernel reply looks like to the parsers.
std::vector<std::uint8_t> to_bytes(nl_msg *msg);
MsgPtr from_bytes(std::span<const std::uint8_t> bytes);

// Generic netlink command of a message (genlmsghdr.cmd).
std::uint8_t genl_cmd(nl_msg *msg);

// An unsigned attribute the kernel may send as 4 or 8 bytes (the ynl "uint"
// type of upstream specs).  Throws ppkit::Error(Protocol) on other sizes.
std::uint64_t get_uint(const nlattr *attr);

// The NLMSGERR_ATTR_MSG of an NLMSG_ERROR (or NLMSG_DONE) message, "" if
// the kernel sent none.  Handles capped and uncapped acks.
std::string extack_message(const nlmsghdr *nlh);

// A socket's receive buffer: what the kernel gave (the bytes asked for,
// or fewer), and whether it was forced past net.core.rmem_max
// (SO_RCVBUFFORCE, which needs CAP_NET_ADMIN).  Without the capability the
// size falls back to SO_RCVBUF, which the kernel caps at rmem_max.
struct ReceiveBuffer {
	std::size_t bytes = 0;
	bool forced = false;
};
ReceiveBuffer set_receive_buffer(int fd, std::size_t bytes);

struct Reply {
	int err = 0;		// 0, or the kernel's negative errno
	std::string extack;	// its extended-ack message, if any
};

// A connected generic netlink socket with extended acks enabled.
class Socket {
public:
	using Handler = std::function<void(nl_msg *)>;

	Socket();

	// The id of a family, or 0 if the kernel has no such family.
	int family(const char *name);
	// The id of a multicast group of @family; throws if it has none.
	int group(const char *family, const char *group);
	// Join a multicast group; throws ppkit::Error (EPERM: Permission).
	void join(int group);

	// Send @msg and call @on_reply for each reply message until the ack, the
	// end of the dump or an error.  Exceptions thrown by @on_reply propagate.
	Reply transact(MsgPtr msg, const Handler &on_reply);

	// transact() for a dump whose replies are many small messages: each is
	// handed over where it lies in the receive buffer, without the copy
	// into an nl_msg of its own that libnl's callbacks make.
	using RawHandler = std::function<void(const nlmsghdr *)>;
	Reply dump(MsgPtr msg, const RawHandler &on_msg);

	// Receive what is queued (notifications), calling @on_msg for each; blocks
	// if nothing is.  Returns false when the socket buffer overran.
	bool receive(const Handler &on_msg);

	int fd() const;
	nl_sock *get() const { return sk_.get(); }

private:
	SockPtr sk_;
};

}  // namespace ppkit::nl
