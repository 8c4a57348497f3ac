// SPDX-License-Identifier: GPL-2.0
#include "nl.h"

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstring>
#include <exception>
#include <new>

#include <linux/genetlink.h>
#include <linux/netlink.h>
#include <netlink/genl/ctrl.h>
#include <netlink/socket.h>
#include <sys/socket.h>

#include <fmt/format.h>

#include "ppkit/error.h"

#ifndef SOL_NETLINK
#define SOL_NETLINK 270
#endif

namespace ppkit::nl {

namespace {

Error nl_failure(const char *what, int nlerr)
{
	return Error(Errc::System, fmt::format("netlink: {}: {}", what, nl_geterror(nlerr)));
}

}  // namespace

MsgPtr genl_request(int family, std::uint8_t cmd, std::uint8_t version, int flags)
{
	MsgPtr msg(nlmsg_alloc());
	if (!msg)
		throw std::bad_alloc();
	if (!genlmsg_put(msg.get(), NL_AUTO_PORT, NL_AUTO_SEQ, family, 0, flags, cmd, version))
		throw std::bad_alloc();
	return msg;
}

namespace {

void put_checked(int err)
{
	if (err < 0)
		throw nl_failure("building a request", err);
}

}  // namespace

void put_u8(nl_msg *msg, int type, std::uint8_t value)
{
	put_checked(nla_put_u8(msg, type, value));
}

void put_u16(nl_msg *msg, int type, std::uint16_t value)
{
	put_checked(nla_put_u16(msg, type, value));
}

void put_u32(nl_msg *msg, int type, std::uint32_t value)
{
	put_checked(nla_put_u32(msg, type, value));
}

void put_s32(nl_msg *msg, int type, std::int32_t value)
{
	put_checked(nla_put_s32(msg, type, value));
}

void put_u64(nl_msg *msg, int type, std::uint64_t value)
{
	put_checked(nla_put_u64(msg, type, value));
}

void put_flag(nl_msg *msg, int type)
{
	put_checked(nla_put_flag(msg, type));
}

nlattr *nest_start(nl_msg *msg, int type)
{
	nlattr *nest = nla_nest_start(msg, type);
	if (!nest)
		throw nl_failure("building a request", -NLE_NOMEM);
	return nest;
}

void nest_end(nl_msg *msg, nlattr *nest)
{
	int err = nla_nest_end(msg, nest);
	if (err < 0)
		throw nl_failure("building a request", err);
}

std::vector<std::uint8_t> to_bytes(nl_msg *msg)
{
	const nlmsghdr *nlh = nlmsg_hdr(msg);
	const auto *p = reinterpret_cast<const std::uint8_t *>(nlh);
	return {p, p + nlh->nlmsg_len};
}

MsgPtr from_bytes(std::span<const std::uint8_t> bytes)
{
	if (bytes.size() < sizeof(nlmsghdr))
		throw Error(Errc::Protocol, "netlink message shorter than its header");
	nlmsghdr hdr;
	std::memcpy(&hdr, bytes.data(), sizeof(hdr));
	if (hdr.nlmsg_len < sizeof(nlmsghdr) || hdr.nlmsg_len > bytes.size())
		throw Error(Errc::Protocol, "netlink message length does not match its bytes");
	// nlmsg_convert copies: the aligned copy is what the parsers read.
	std::vector<std::uint8_t> aligned(NLMSG_ALIGN(hdr.nlmsg_len));
	std::memcpy(aligned.data(), bytes.data(), hdr.nlmsg_len);
	MsgPtr msg(nlmsg_convert(reinterpret_cast<nlmsghdr *>(aligned.data())));
	if (!msg)
		throw std::bad_alloc();
	return msg;
}

std::uint8_t genl_cmd(nl_msg *msg)
{
	nlmsghdr *nlh = nlmsg_hdr(msg);
	if (!genlmsg_valid_hdr(nlh, 0))
		throw Error(Errc::Protocol, "generic netlink message without its header");
	return static_cast<const genlmsghdr *>(nlmsg_data(nlh))->cmd;
}

std::uint64_t get_uint(const nlattr *attr)
{
	switch (nla_len(attr)) {
	case 4:
		return nla_get_u32(const_cast<nlattr *>(attr));
	case 8:
		return nla_get_u64(const_cast<nlattr *>(attr));
	default:
		throw Error(Errc::Protocol,
			    fmt::format("attribute {}: {} bytes, not a u32 or u64", nla_type(attr),
					nla_len(attr)));
	}
}

std::string extack_message(const nlmsghdr *nlh)
{
	if (!(nlh->nlmsg_flags & NLM_F_ACK_TLVS) || nlh->nlmsg_len < NLMSG_HDRLEN)
		return {};
	// Every length below is the sender's word: none is trusted past the
	// message's own.
	const std::size_t len = nlh->nlmsg_len - NLMSG_HDRLEN;
	std::size_t off;
	if (nlh->nlmsg_type == NLMSG_ERROR) {
		if (len < sizeof(nlmsgerr))
			return {};
		const auto *e = static_cast<const nlmsgerr *>(nlmsg_data(nlh));
		off = sizeof(nlmsgerr);
		// Uncapped acks echo the request's payload before the TLVs.
		if (!(nlh->nlmsg_flags & NLM_F_CAPPED)) {
			const std::size_t echoed = e->msg.nlmsg_len;
			if (echoed < NLMSG_HDRLEN || echoed - NLMSG_HDRLEN > len - off)
				return {};
			off += NLMSG_ALIGN(echoed - NLMSG_HDRLEN);
		}
	} else if (nlh->nlmsg_type == NLMSG_DONE) {
		off = sizeof(int);
	} else {
		return {};
	}
	if (off >= len)
		return {};
	nla_policy policy[NLMSGERR_ATTR_MAX + 1] = {};
	policy[NLMSGERR_ATTR_MSG].type = NLA_STRING;
	nlattr *tb[NLMSGERR_ATTR_MAX + 1] = {};
	auto *head = reinterpret_cast<nlattr *>(
		static_cast<char *>(nlmsg_data(const_cast<nlmsghdr *>(nlh))) + off);
	if (nla_parse(tb, NLMSGERR_ATTR_MAX, head, static_cast<int>(len - off), policy) < 0 ||
	    !tb[NLMSGERR_ATTR_MSG])
		return {};
	return nla_get_string(tb[NLMSGERR_ATTR_MSG]);
}

Socket::Socket() : sk_(nl_socket_alloc())
{
	if (!sk_)
		throw std::bad_alloc();
	int err = genl_connect(sk_.get());
	if (err < 0)
		throw nl_failure("cannot open a generic netlink socket", err);
	// One read per message batch: the kernel sizes dump batches to the
	// reader's buffer but never past 32 KiB (netlink_recvmsg caps its
	// max_recvmsg_len there), so a 64 KiB buffer holds any of them and
	// peeking first (libnl's default, a second syscall per read) buys nothing.
	nl_socket_disable_msg_peek(sk_.get());
	nl_socket_set_msg_buf_size(sk_.get(), 64 << 10);
	// Ask for the kernel's reason with every error, without the request echoed.
	int one = 1;
	setsockopt(fd(), SOL_NETLINK, NETLINK_EXT_ACK, &one, sizeof(one));
	setsockopt(fd(), SOL_NETLINK, NETLINK_CAP_ACK, &one, sizeof(one));
}

ReceiveBuffer set_receive_buffer(int fd, std::size_t bytes)
{
	ReceiveBuffer r;
	int want = static_cast<int>(std::min<std::size_t>(bytes, INT_MAX / 2));
	r.forced = setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &want, sizeof(want)) == 0;
	if (!r.forced)
		(void)setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &want, sizeof(want));
	// The kernel doubles the value for its bookkeeping and reports that.
	int got = 0;
	socklen_t len = sizeof(got);
	if (getsockopt(fd, SOL_SOCKET, SO_RCVBUF, &got, &len) == 0 && got > 0)
		r.bytes = static_cast<std::size_t>(got) / 2;
	return r;
}

int Socket::fd() const
{
	return nl_socket_get_fd(sk_.get());
}

int Socket::family(const char *name)
{
	int id = genl_ctrl_resolve(sk_.get(), name);
	if (id == -NLE_OBJ_NOTFOUND)
		return 0;
	if (id < 0)
		throw nl_failure(fmt::format("resolving family {}", name).c_str(), id);
	return id;
}

int Socket::group(const char *family, const char *group)
{
	int id = genl_ctrl_resolve_grp(sk_.get(), family, group);
	if (id < 0)
		throw Error(Errc::NotSupported,
			    fmt::format("family {} has no multicast group {}: {}", family, group,
					nl_geterror(id)));
	return id;
}

void Socket::join(int group)
{
	int err = nl_socket_add_membership(sk_.get(), group);
	if (err == -NLE_PERM)
		throw Error(Errc::Permission,
			    "joining the notification group needs CAP_NET_ADMIN: run it as root",
			    EPERM);
	if (err < 0)
		throw nl_failure("joining a multicast group", err);
}

namespace {

// Shared with the C callbacks.  No exception may cross libnl: the callbacks
// keep it here and stop, and transact() rethrows it.
struct State {
	const Socket::Handler *handler = nullptr;
	std::uint32_t seq = 0;	// the request's sequence number; 0: any (notifications)
	bool done = false;
	bool overrun = false;
	Reply reply;
	std::exception_ptr failure;
};

int on_valid(nl_msg *msg, void *arg)
{
	auto *st = static_cast<State *>(arg);
	try {
		(*st->handler)(msg);
	} catch (...) {
		st->failure = std::current_exception();
		st->done = true;
		return NL_STOP;
	}
	return NL_OK;
}

int on_finish(nl_msg *msg, void *arg)
{
	auto *st = static_cast<State *>(arg);
	nlmsghdr *nlh = nlmsg_hdr(msg);
	// A dump that failed midway ends with its error in the DONE message.
	if (nlmsg_datalen(nlh) >= static_cast<int>(sizeof(int))) {
		int err;
		std::memcpy(&err, nlmsg_data(nlh), sizeof(err));
		if (err < 0) {
			st->reply.err = err;
			st->reply.extack = extack_message(nlh);
		}
	}
	st->done = true;
	return NL_STOP;
}

int on_ack(nl_msg *, void *arg)
{
	static_cast<State *>(arg)->done = true;
	return NL_STOP;
}

int on_overrun(nl_msg *, void *arg)
{
	static_cast<State *>(arg)->overrun = true;
	return NL_OK;
}

int on_error(sockaddr_nl *, nlmsgerr *e, void *arg)
{
	auto *st = static_cast<State *>(arg);
	const auto *nlh = reinterpret_cast<const nlmsghdr *>(reinterpret_cast<char *>(e) -
								NLMSG_HDRLEN);
	st->reply.err = e->error;
	st->reply.extack = extack_message(nlh);
	st->done = true;
	return NL_STOP;
}

CbPtr make_cb(State &st)
{
	CbPtr cb(nl_cb_alloc(NL_CB_DEFAULT));
	if (!cb)
		throw std::bad_alloc();
	nl_cb_set(cb.get(), NL_CB_VALID, NL_CB_CUSTOM, on_valid, &st);
	nl_cb_set(cb.get(), NL_CB_FINISH, NL_CB_CUSTOM, on_finish, &st);
	nl_cb_set(cb.get(), NL_CB_ACK, NL_CB_CUSTOM, on_ack, &st);
	nl_cb_set(cb.get(), NL_CB_OVERRUN, NL_CB_CUSTOM, on_overrun, &st);
	nl_cb_err(cb.get(), NL_CB_CUSTOM, on_error, &st);
	// Our own sequence check: the request's replies, nothing else.
	// libnl's would expect the number after the last reply it read
	// itself, and Socket::dump() reads replies without it.
	// Notifications (seq 0 here) carry no sequence number of ours.
	nl_cb_set(cb.get(), NL_CB_SEQ_CHECK, NL_CB_CUSTOM,
		  [](nl_msg *m, void *arg) {
			  auto *st = static_cast<State *>(arg);
			  bool ours = !st->seq || nlmsg_hdr(m)->nlmsg_seq == st->seq;
			  return static_cast<int>(ours ? NL_OK : NL_SKIP);
		  },
		  &st);
	return cb;
}

}  // namespace

Reply Socket::transact(MsgPtr msg, const Handler &on_reply)
{
	State st;
	st.handler = &on_reply;
	CbPtr cb = make_cb(st);

	int err = nl_send_auto(sk_.get(), msg.get());
	if (err < 0)
		throw nl_failure("sending a request", err);
	st.seq = nlmsg_hdr(msg.get())->nlmsg_seq;
	while (!st.done) {
		err = nl_recvmsgs(sk_.get(), cb.get());
		if (st.failure)
			std::rethrow_exception(st.failure);
		if (err < 0 && !st.done) {
			if (err == -NLE_INTR)
				continue;
			throw nl_failure("receiving a reply", err);
		}
	}
	return st.reply;
}

Reply Socket::dump(MsgPtr msg, const RawHandler &on_msg)
{
	int err = nl_send_auto(sk_.get(), msg.get());
	if (err < 0)
		throw nl_failure("sending a request", err);
	const std::uint32_t seq = nlmsg_hdr(msg.get())->nlmsg_seq;
	Reply reply;
	for (;;) {
		unsigned char *raw = nullptr;
		sockaddr_nl from{};
		int n = nl_recv(sk_.get(), &from, &raw, nullptr);
		std::unique_ptr<unsigned char, decltype(&free)> buf(raw, &free);
		if (n == -NLE_INTR || n == 0)
			continue;
		if (n < 0)
			throw nl_failure("receiving a reply", n);
		const auto *h = reinterpret_cast<const nlmsghdr *>(buf.get());
		int left = n;
		for (; nlmsg_ok(h, left); h = nlmsg_next(const_cast<nlmsghdr *>(h), &left)) {
			if (h->nlmsg_seq != seq || h->nlmsg_type == NLMSG_NOOP ||
			    h->nlmsg_type == NLMSG_OVERRUN)
				continue;
			if (h->nlmsg_type == NLMSG_DONE || h->nlmsg_type == NLMSG_ERROR) {
				// DONE carries the dump's error if it failed midway;
				// ERROR is the failure (or the ack, error 0).
				int e = 0;
				if (nlmsg_datalen(h) >= static_cast<int>(sizeof(int)))
					std::memcpy(&e, nlmsg_data(h), sizeof(e));
				if (e < 0) {
					reply.err = e;
					reply.extack = extack_message(h);
				}
				return reply;
			}
			on_msg(h);
		}
	}
}

bool Socket::receive(const Handler &on_msg)
{
	State st;
	st.handler = &on_msg;
	CbPtr cb = make_cb(st);
	int err = nl_recvmsgs(sk_.get(), cb.get());
	if (st.failure)
		std::rethrow_exception(st.failure);
	// ENOBUFS (libnl: NLE_NOMEM): the kernel dropped notifications, and the
	// reader must resynchronise.
	if (err == -NLE_NOMEM || err == -NLE_MSG_OVERFLOW)
		return false;
	if (err < 0 && err != -NLE_INTR && err != -NLE_AGAIN)
		throw nl_failure("receiving notifications", err);
	return !st.overrun;
}

}  // namespace ppkit::nl
