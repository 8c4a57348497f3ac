// SPDX-License-Identifier: GPL-2.0
#include "fuzz.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <new>

#include <linux/genetlink.h>
#include <linux/netlink.h>
#include <linux/ppkit.h>
#include <netlink/attr.h>
#include <netlink/genl/genl.h>
#include <netlink/msg.h>

#include <fmt/format.h>

#include "nl.h"

namespace ppkit::fuzz {

namespace {

constexpr std::size_t kMaxMsg = 68 * 1024;

// The family's request commands and the attributes each one reads.
struct CmdAttrs {
	std::uint8_t cmd;
	std::array<int, 3> attrs;
	int n;
};
constexpr std::array<CmdAttrs, 3> kCmds = {{
	{PPKIT_CMD_POOL_GET, {PPKIT_A_POOL_ID, 0, 0}, 1},
	{PPKIT_CMD_STATS_GET, {PPKIT_A_STATS_POOL_ID, PPKIT_A_STATS_IFINDEX, 0}, 2},
	{PPKIT_CMD_POOL_SET,
	 {PPKIT_A_POOL_ID, PPKIT_A_POOL_RING_SIZE, PPKIT_A_POOL_REFILL_BATCH}, 3},
}};

const CmdAttrs *cmd_attrs(std::uint8_t cmd)
{
	for (const auto &c : kCmds)
		if (c.cmd == cmd)
			return &c;
	return nullptr;
}

// A generic netlink message under construction (libnl), room for the largest.
class Builder {
public:
	Builder(int family, std::uint32_t seq, std::uint16_t flags, std::uint8_t cmd,
		std::uint8_t version = PPKIT_FAMILY_VERSION, std::size_t size = 4096)
		: msg_(nlmsg_alloc_size(size))
	{
		if (!msg_ || !genlmsg_put(msg_.get(), 0, seq, family, 0, flags, cmd, version))
			throw std::bad_alloc();
	}
	// Attribute puts that stop quietly once the message is full.
	Builder &raw(int type, const void *data, std::size_t len)
	{
		if (nlmsg_get_max_size(msg_.get()) - nlmsg_hdr(msg_.get())->nlmsg_len > len + 8)
			nla_put(msg_.get(), type, static_cast<int>(len), data);
		return *this;
	}
	Builder &u32(int type, std::uint32_t v) { return raw(type, &v, sizeof(v)); }
	nlattr *nest_start(int type) { return nla_nest_start(msg_.get(), type); }
	void nest_end(nlattr *n) { nla_nest_end(msg_.get(), n); }
	bool room(std::size_t len) const
	{
		return nlmsg_get_max_size(msg_.get()) - nlmsg_hdr(msg_.get())->nlmsg_len > len + 64;
	}
	std::vector<std::uint8_t> bytes() const { return nl::to_bytes(msg_.get()); }

private:
	nl::MsgPtr msg_;
};

void set_len(std::vector<std::uint8_t> &b, std::uint32_t len)
{
	std::memcpy(b.data(), &len, sizeof(len));	// nlmsghdr.nlmsg_len comes first
}

}  // namespace

std::string_view kind_name(Kind k)
{
	switch (k) {
	case Kind::Valid: return "valid";
	case Kind::RandomAttrs: return "random-attrs";
	case Kind::WrongLength: return "wrong-length";
	case Kind::Nested: return "nested";
	case Kind::Huge: return "huge";
	case Kind::BadAttrLen: return "bad-attr-len";
	case Kind::Trailing: return "trailing";
	case Kind::BadCmd: return "bad-cmd";
	case Kind::Flags: return "flags";
	case Kind::ShortGenl: return "short-genl";
	case Kind::TruncatedHeader: return "truncated-header";
	case Kind::Count_: break;
	}
	return "?";
}

bool Message::dump() const
{
	return (flags & NLM_F_DUMP) == NLM_F_DUMP;
}

bool Message::request() const
{
	return flags & NLM_F_REQUEST;
}

Generator::Generator(std::uint64_t seed, Target target) : rng_(seed), target_(std::move(target))
{
}

std::uint32_t Generator::pick(std::uint32_t n)
{
	return n ? static_cast<std::uint32_t>(rng_() % n) : 0;
}

bool Generator::chance(int percent)
{
	return static_cast<int>(pick(100)) < percent;
}

std::uint32_t Generator::interesting_u32()
{
	static constexpr std::uint32_t vals[] = {
		0, 1, 2, 63, 64, 65, 4096, PPKIT_RING_SIZE_MAX, PPKIT_RING_SIZE_MAX + 1,
		0x7fffffff, 0x80000000, 0xffffffff,
	};
	if (chance(30))
		return static_cast<std::uint32_t>(rng_());
	if (chance(30))
		return pool_id();
	return vals[pick(std::size(vals))];
}

std::uint32_t Generator::pool_id()
{
	if (target_.pools.empty() || chance(10))
		return 1 + pick(1000);
	return target_.pools[pick(static_cast<std::uint32_t>(target_.pools.size()))];
}

std::uint8_t Generator::real_cmd()
{
	return kCmds[pick(kCmds.size())].cmd;
}

std::uint16_t Generator::normal_flags(std::uint8_t cmd)
{
	std::uint16_t f = NLM_F_REQUEST | NLM_F_ACK;
	if (cmd != PPKIT_CMD_POOL_SET && chance(40))
		f |= NLM_F_DUMP;
	return f;
}

std::vector<std::uint8_t> Generator::random_bytes(std::size_t n)
{
	std::vector<std::uint8_t> b(n);
	for (auto &x : b)
		x = static_cast<std::uint8_t>(rng_());
	return b;
}

Message Generator::next(std::uint32_t seq)
{
	// Valid requests a fifth of the time; the malformed kinds share the rest.
	if (chance(20))
		return make(Kind::Valid, seq);
	return make(static_cast<Kind>(1 + pick(kKinds - 1)), seq);
}

Message Generator::make(Kind kind, std::uint32_t seq)
{
	Message m;
	m.kind = kind;
	const int fam = target_.family;
	// A real command with ordinary flags, unless the kind says otherwise.
	m.cmd = real_cmd();
	m.flags = normal_flags(m.cmd);

	switch (kind) {
	case Kind::Valid: {
		Builder b(fam, seq, m.flags, m.cmd);
		if (m.cmd == PPKIT_CMD_POOL_GET) {
			if (!m.dump() && !target_.pools.empty())
				b.u32(PPKIT_A_POOL_ID, target_.pools[pick(target_.pools.size())]);
			else
				m.flags |= NLM_F_DUMP;
		} else if (m.cmd == PPKIT_CMD_STATS_GET) {
			if (!m.dump() && !target_.pools.empty()) {
				b.u32(PPKIT_A_STATS_POOL_ID, target_.pools[pick(target_.pools.size())]);
			} else {
				m.flags |= NLM_F_DUMP;
				if (!target_.ifindexes.empty() && chance(50))
					b.u32(PPKIT_A_STATS_IFINDEX,
					      target_.ifindexes[pick(target_.ifindexes.size())]);
			}
		} else {
			if (target_.pools.empty())
				return make(Kind::BadCmd, seq);
			b.u32(PPKIT_A_POOL_ID, target_.pools[pick(target_.pools.size())]);
			// Ring sizes a NIC would use; the extremes are the other kinds' job.
			const bool ring = chance(70), batch = !ring || chance(50);
			if (ring)
				b.u32(PPKIT_A_POOL_RING_SIZE, 64u << pick(7));
			if (batch)
				b.u32(PPKIT_A_POOL_REFILL_BATCH, 1 + pick(PPKIT_REFILL_BATCH_MAX));
		}
		m.bytes = b.bytes();
		if (m.dump())	// DUMP was added after the header was written
			reinterpret_cast<nlmsghdr *>(m.bytes.data())->nlmsg_flags = m.flags;
		break;
	}
	case Kind::RandomAttrs:
	case Kind::BadCmd: {
		if (kind == Kind::BadCmd) {
			static constexpr std::uint8_t ntf[] = {
				PPKIT_CMD_UNSPEC, PPKIT_CMD_POOL_ADD_NTF, PPKIT_CMD_POOL_DEL_NTF,
				PPKIT_CMD_POOL_CHANGE_NTF,
			};
			m.cmd = chance(50) ? ntf[pick(std::size(ntf))]
					   : static_cast<std::uint8_t>(PPKIT_CMD_MAX + 1 + pick(255 - PPKIT_CMD_MAX));
		} else {
			m.cmd = real_cmd();
		}
		m.flags = normal_flags(m.cmd);
		Builder b(fam, seq, m.flags, m.cmd);
		const std::uint32_t n = pick(8);
		for (std::uint32_t i = 0; i < n; i++) {
			int type = static_cast<int>(pick(40));
			if (chance(10))
				type |= chance(50) ? NLA_F_NESTED : NLA_F_NET_BYTEORDER;
			if (chance(50)) {
				b.u32(type, interesting_u32());
			} else {
				static constexpr std::size_t lens[] = {0, 1, 2, 3, 4, 5, 8, 16};
				const std::size_t len = chance(80) ? lens[pick(std::size(lens))] : pick(256);
				auto data = random_bytes(len);
				b.raw(type, data.data(), data.size());
			}
		}
		m.bytes = b.bytes();
		break;
	}
	case Kind::WrongLength: {
		Builder b(fam, seq, m.flags, m.cmd);
		const CmdAttrs *ca = cmd_attrs(m.cmd);
		static constexpr std::size_t lens[] = {0, 1, 2, 3, 5, 6, 7, 8, 12, 64};
		const std::uint32_t n = 1 + pick(3);
		for (std::uint32_t i = 0; i < n; i++) {
			auto data = random_bytes(lens[pick(std::size(lens))]);
			b.raw(ca->attrs[pick(ca->n)], data.data(), data.size());
		}
		m.bytes = b.bytes();
		break;
	}
	case Kind::Nested: {
		Builder b(fam, seq, m.flags, m.cmd);
		const CmdAttrs *ca = cmd_attrs(m.cmd);
		const int depth = 1 + static_cast<int>(pick(4));
		std::vector<nlattr *> open;
		for (int d = 0; d < depth; d++) {
			const int type = d == 0 && chance(70) ? ca->attrs[pick(ca->n)]
							      : static_cast<int>(pick(40));
			nlattr *n = b.nest_start(type);
			if (!n)
				break;
			open.push_back(n);
			for (std::uint32_t i = pick(4); i > 0; i--) {
				auto data = random_bytes(pick(12));
				b.raw(static_cast<int>(pick(40)), data.data(), data.size());
			}
		}
		while (!open.empty()) {
			b.nest_end(open.back());
			open.pop_back();
		}
		m.bytes = b.bytes();
		break;
	}
	case Kind::Huge: {
		Builder b(fam, seq, m.flags, m.cmd, PPKIT_FAMILY_VERSION, kMaxMsg);
		if (chance(50)) {
			const std::uint32_t n = 200 + pick(1800);
			const CmdAttrs *ca = cmd_attrs(m.cmd);
			for (std::uint32_t i = 0; i < n && b.room(8); i++)
				b.u32(chance(50) ? ca->attrs[pick(ca->n)] : static_cast<int>(pick(40)),
				      interesting_u32());
		} else {
			auto data = random_bytes(4096 + pick(60 * 1024 - 4096));
			b.raw(static_cast<int>(pick(40)), data.data(), data.size());
		}
		m.bytes = b.bytes();
		break;
	}
	case Kind::BadAttrLen:
	case Kind::Trailing: {
		Builder b(fam, seq, m.flags, m.cmd);
		const CmdAttrs *ca = cmd_attrs(m.cmd);
		const std::uint32_t n = 1 + pick(3);
		for (std::uint32_t i = 0; i < n; i++)
			b.u32(ca->attrs[pick(ca->n)], interesting_u32());
		m.bytes = b.bytes();
		const std::size_t first = NLMSG_HDRLEN + GENL_HDRLEN;
		if (kind == Kind::Trailing) {
			const std::size_t extra = 1 + pick(3);
			auto tail = random_bytes(extra);
			m.bytes.insert(m.bytes.end(), tail.begin(), tail.end());
			set_len(m.bytes, static_cast<std::uint32_t>(m.bytes.size()));
		} else {
			// Corrupt the nla_len of the i-th attribute (each is 8 bytes).
			const std::size_t at = first + 8 * pick(n);
			std::uint16_t len;
			if (chance(50))
				len = static_cast<std::uint16_t>(pick(NLA_HDRLEN));
			else
				len = static_cast<std::uint16_t>(m.bytes.size() - at + 1 + pick(512));
			std::memcpy(&m.bytes[at], &len, sizeof(len));
		}
		break;
	}
	case Kind::Flags: {
		m.cmd = chance(80) ? real_cmd() : static_cast<std::uint8_t>(pick(256));
		m.flags = static_cast<std::uint16_t>(rng_());
		// Mostly keep REQUEST and ACK, so that the kernel both reads and answers.
		if (chance(80))
			m.flags |= NLM_F_REQUEST;
		if (chance(80))
			m.flags |= NLM_F_ACK;
		Builder b(fam, seq, m.flags, m.cmd, static_cast<std::uint8_t>(pick(256)));
		if (chance(70))
			b.u32(cmd_attrs(real_cmd())->attrs[0], pool_id());
		m.bytes = b.bytes();
		break;
	}
	case Kind::ShortGenl: {
		Builder b(fam, seq, m.flags, m.cmd);
		m.bytes = b.bytes();
		m.bytes.resize(NLMSG_HDRLEN + pick(GENL_HDRLEN));
		set_len(m.bytes, static_cast<std::uint32_t>(m.bytes.size()));
		m.genl = false;
		break;
	}
	case Kind::TruncatedHeader: {
		Builder b(fam, seq, m.flags, m.cmd);
		b.u32(cmd_attrs(m.cmd)->attrs[0], pool_id());
		m.bytes = b.bytes();
		switch (pick(3)) {
		case 0:	// not even a netlink header
			m.bytes.resize(pick(NLMSG_HDRLEN));
			break;
		case 1:	// nlmsg_len says more than was sent
			set_len(m.bytes, static_cast<std::uint32_t>(m.bytes.size() + 1 + pick(4096)));
			break;
		default:	// nlmsg_len shorter than a netlink header
			set_len(m.bytes, pick(NLMSG_HDRLEN));
			break;
		}
		m.whole = false;
		m.genl = false;
		break;
	}
	case Kind::Count_:
		break;
	}
	return m;
}

bool core_rejection(const Message &m, int err, bool privileged)
{
	if (!m.genl)
		return err == -EINVAL;
	const bool known = cmd_attrs(m.cmd) != nullptr;
	if (err == -EOPNOTSUPP)
		return !known || (m.cmd == PPKIT_CMD_POOL_SET && m.dump());
	if (err == -EPERM)
		return !privileged && m.cmd == PPKIT_CMD_POOL_SET;
	return false;
}

// The families register with resv_start_op 0, so the core checks the
// header of every command before its permission: nlmsg_flags beyond
// request, ack, echo and a whole dump are EINVAL for anyone.
static bool header_refused(const Message &m)
{
	std::uint16_t flags = m.flags;

	if ((flags & NLM_F_DUMP) == NLM_F_DUMP)
		flags &= ~NLM_F_DUMP;
	return flags & ~(NLM_F_REQUEST | NLM_F_ACK | NLM_F_ECHO);
}

std::string check(const Message &m, const Reply &r, bool privileged)
{
	if (r.send_err && m.whole)
		return fmt::format("sendmsg() refused a whole message ({})", r.send_err);
	if (!m.whole)
		return r.replied ? fmt::format("a message the kernel cannot read got a reply ({})", r.err)
				 : "";
	if (!r.replied)	// without ACK a request that succeeds may get nothing back
		return (m.flags & NLM_F_ACK) ? "no reply" : "";
	if (r.err > 0)
		return fmt::format("positive error {}", r.err);
	if (r.err < 0 && r.extack.empty() && !core_rejection(m, r.err, privileged))
		return fmt::format("rejected ({}) without an extended-ack message", r.err);
	if (!privileged && m.genl && m.request() && m.cmd == PPKIT_CMD_POOL_SET &&
	    r.err != -EPERM && !(m.dump() && r.err == -EOPNOTSUPP) &&
	    !(r.err == -EINVAL && header_refused(m)))
		return fmt::format("pool-set without CAP_NET_ADMIN: {} instead of EPERM", r.err);
	if (m.kind == Kind::Valid && r.err != 0 && (privileged || m.cmd != PPKIT_CMD_POOL_SET))
		return fmt::format("a valid request was rejected ({}: {})", r.err, r.extack);
	return "";
}

void Tally::count(const Message &m, const Reply &r, bool privileged)
{
	sent++;
	per_kind[static_cast<int>(m.kind)]++;
	if (!r.replied)
		no_reply++;
	else if (r.err == 0)
		accepted++;
	else if (!r.extack.empty())
		rejected_msg++;
	else {
		rejected_core++;
		const int i = r.err == -EOPNOTSUPP ? 0 : r.err == -EPERM ? 1 : r.err == -EINVAL ? 2 : 3;
		core_errno[i]++;
	}
	(void)privileged;
}

}  // namespace ppkit::fuzz
