// SPDX-License-Identifier: GPL-2.0
// The ppkit netlink fuzzer's parts that need no kernel: a seeded generator
// of well-formed and malformed requests for every command of the family,
// and the rules a reply must follow (tests/fuzz/nlfuzz.cpp sends them).
#pragma once

#include <array>
#include <cstdint>
#include <random>
#include <string>
#include <string_view>
#include <vector>

namespace ppkit::fuzz {

// What a message tries.  Valid is a request the family must accept; every
// other kind is malformed in one way or more.
enum class Kind {
	Valid,		 // a real command with correct attributes (live pool ids)
	RandomAttrs,	 // a real command, attributes of random type, length and bytes
	WrongLength,	 // the command's own attributes at lengths other than theirs
	Nested,		 // NLA_F_NESTED attributes with garbage, nested up to 4 deep
	Huge,		 // up to 2,000 attributes, or one of up to 60 KiB
	BadAttrLen,	 // an attribute whose nla_len runs past the message or is < 4
	Trailing,	 // 1-3 bytes after the last attribute
	BadCmd,		 // a command the family does not have (or a notification's)
	Flags,		 // random nlmsg_flags (dump on a do-only command, no REQUEST...)
	ShortGenl,	 // nlmsg_len leaves no room for the generic netlink header
	TruncatedHeader, // fewer bytes than a netlink header, or nlmsg_len past them
	Count_,
};
inline constexpr int kKinds = static_cast<int>(Kind::Count_);

std::string_view kind_name(Kind k);

// One request as it goes on the wire, with what the checks need to know.
struct Message {
	Kind kind = Kind::Valid;
	std::vector<std::uint8_t> bytes;
	std::uint8_t cmd = 0;		// genlmsghdr.cmd, if there is one
	std::uint16_t flags = 0;	// nlmsghdr.nlmsg_flags, if there is one
	// bytes >= a netlink header and nlmsg_len == bytes: the kernel reads it.
	bool whole = true;
	// nlmsg_len leaves room for the generic netlink header.
	bool genl = true;

	bool dump() const;	// NLM_F_DUMP (both of its bits)
	bool request() const;	// NLM_F_REQUEST
};

// The family and the objects that exist, for requests that name them.
struct Target {
	int family = 0;
	std::vector<std::uint32_t> pools;	// live pool ids
	std::vector<std::uint32_t> ifindexes;	// netdevs that have pools
};

class Generator {
public:
	Generator(std::uint64_t seed, Target target);
	// A message of a kind drawn at random, numbered @seq.
	Message next(std::uint32_t seq);
	Message make(Kind kind, std::uint32_t seq);

private:
	std::uint32_t pick(std::uint32_t n);	// uniform in [0, n)
	bool chance(int percent);
	std::uint32_t interesting_u32();
	std::uint32_t pool_id();
	std::uint8_t real_cmd();
	std::uint16_t normal_flags(std::uint8_t cmd);
	std::vector<std::uint8_t> random_bytes(std::size_t n);

	std::mt19937_64 rng_;
	Target target_;
};

// What came back for one message.
struct Reply {
	bool replied = false;	// an NLMSG_ERROR or NLMSG_DONE for its seq
	int err = 0;		// its error, 0 or a negative errno
	std::string extack;	// its extended-ack message
	int send_err = 0;	// sendmsg() refused the message: its negative errno
};

// May the kernel reject @m with @err and no extended-ack message?  Only the
// netlink and generic netlink core's checks, made before ppkit's policies
// and handlers see the message: a command the family does not have
// (EOPNOTSUPP), a dump of pool-set (EOPNOTSUPP), pool-set without
// CAP_NET_ADMIN (EPERM), no room for the generic netlink header (EINVAL).
bool core_rejection(const Message &m, int err, bool privileged);

// The rules a reply to @m must follow; "" if it does, else what broke:
//   - a message the kernel cannot read (Kind::TruncatedHeader) gets no reply
//     (or sendmsg() refuses it: an empty one gets ENODATA);
//   - sendmsg() takes every other message;
//   - every other request gets one;
//   - a rejection carries an extended-ack message unless core_rejection();
//   - without CAP_NET_ADMIN, pool-set is rejected with EPERM;
//   - a Valid request is accepted (a privileged one; reads also without).
std::string check(const Message &m, const Reply &r, bool privileged);

// One pool's configuration as pool-get reports it (what pool-set changes
// and what no rejected message may).
struct PoolConfig {
	std::uint32_t id = 0, ifindex = 0, queue = 0, order = 0, ring_size = 0;
	std::uint32_t cache_size = 0, refill_batch = 0, max_len = 0, dma_dir = 0;
	std::int32_t nid = 0;
	std::string owner;
	bool operator==(const PoolConfig &) const = default;
};

// Counts of a run, printed as a summary and as JSON.
struct Tally {
	std::uint64_t sent = 0, accepted = 0, rejected_msg = 0, rejected_core = 0;
	std::uint64_t no_reply = 0, state_checks = 0, violations = 0;
	std::array<std::uint64_t, kKinds> per_kind{};
	std::array<std::uint64_t, 4> core_errno{};	// EOPNOTSUPP, EPERM, EINVAL, other
	void count(const Message &m, const Reply &r, bool privileged);
};

}  // namespace ppkit::fuzz
