// SPDX-License-Identifier: GPL-2.0
// ppkit-nlfuzz: sends seeded well-formed and malformed requests to the ppkit
// generic netlink family and checks every reply against the rules in
// fuzz.h; checks after every pool-set that a rejected one changed nothing.
//
//   ppkit-nlfuzz [--count N] [--seed S] [--user UID] [--json] [--verbose]
//
// --user UID drops to that user (no capabilities) before the first message:
// reads must still work, pool-set must get EPERM.  Exits 0 when no rule was
// broken, 1 when one was (each printed, with the message in hex), 2 when it
// could not run (pp_backport not loaded, no pools).
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include <grp.h>
#include <linux/genetlink.h>
#include <linux/netlink.h>
#include <linux/ppkit.h>
#include <netlink/attr.h>
#include <netlink/genl/genl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "fuzz.h"
#include "nl.h"

#ifndef SOL_NETLINK
#define SOL_NETLINK 270
#endif

using namespace ppkit;
using fuzz::Kind;
using fuzz::Message;
using fuzz::PoolConfig;
using fuzz::Reply;

namespace {

// A raw generic netlink socket: what is sent is exactly the generator's bytes.
class RawSocket {
public:
	RawSocket() : fd_(socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_GENERIC))
	{
		if (fd_ < 0)
			throw std::runtime_error(fmt::format("socket(AF_NETLINK): {}", std::strerror(errno)));
		const int one = 1;
		setsockopt(fd_, SOL_NETLINK, NETLINK_EXT_ACK, &one, sizeof(one));
		setsockopt(fd_, SOL_NETLINK, NETLINK_CAP_ACK, &one, sizeof(one));
		timeval tv{2, 0};	// a reply that does not come within 2 s is missing
		setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
		sockaddr_nl sa{};
		sa.nl_family = AF_NETLINK;
		if (bind(fd_, reinterpret_cast<sockaddr *>(&sa), sizeof(sa)) < 0)
			throw std::runtime_error(fmt::format("bind(AF_NETLINK): {}", std::strerror(errno)));
	}
	~RawSocket() { close(fd_); }
	RawSocket(const RawSocket &) = delete;
	RawSocket &operator=(const RawSocket &) = delete;

	// 0, or the negative errno of a sendmsg() the kernel refused (an empty
	// message: ENODATA).
	int send(const std::vector<std::uint8_t> &b)
	{
		sockaddr_nl to{};
		to.nl_family = AF_NETLINK;
		if (sendto(fd_, b.data(), b.size(), 0, reinterpret_cast<sockaddr *>(&to), sizeof(to)) < 0)
			return -errno;
		return 0;
	}

	// Send @msg and collect what comes back for @seq.  A NOOP with ACK (the
	// probe, @probe_seq) follows it: the kernel answers it after whatever it
	// answers the message with, so its ack ends the exchange, even for a
	// message the kernel cannot read.  A dump request (@dump) is read to its
	// end first: the kernel makes a dump's later parts only as they are read,
	// so they would come after the probe's ack.
	template <typename F>
	Reply exchange(const std::vector<std::uint8_t> &msg, std::uint32_t seq, std::uint32_t probe_seq,
		       bool dump, F &&on_data)
	{
		Reply r;
		r.send_err = send(msg);
		if (dump && !r.send_err)
			read(r, seq, 0, on_data);
		nlmsghdr probe{};
		probe.nlmsg_len = NLMSG_HDRLEN;
		probe.nlmsg_type = NLMSG_NOOP;
		probe.nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK;
		probe.nlmsg_seq = probe_seq;
		const auto *p = reinterpret_cast<const std::uint8_t *>(&probe);
		if (int err = send(std::vector<std::uint8_t>(p, p + sizeof(probe))))
			throw std::runtime_error(fmt::format("sending the probe: {}", std::strerror(-err)));
		read(r, seq, probe_seq, on_data);
		return r;
	}

private:
	// Read until the NLMSG_ERROR/NLMSG_DONE of @seq (@probe_seq 0) or the
	// probe's ack, noting in @r what came for @seq.
	template <typename F>
	void read(Reply &r, std::uint32_t seq, std::uint32_t probe_seq, F &on_data)
	{
		for (;;) {
			const ssize_t n = recv(fd_, buf_.data(), buf_.size(), 0);
			if (n < 0) {
				if (errno == EINTR)
					continue;
				throw std::runtime_error(fmt::format("no answer from the kernel within 2 s: {}",
								     std::strerror(errno)));
			}
			int len = static_cast<int>(n);
			bool end = false;
			for (auto *h = reinterpret_cast<nlmsghdr *>(buf_.data()); nlmsg_ok(h, len);
			     h = nlmsg_next(h, &len)) {
				if (probe_seq && h->nlmsg_seq == probe_seq && h->nlmsg_type == NLMSG_ERROR)
					end = true;
				if (h->nlmsg_seq != seq)
					continue;
				r.replied = true;
				if (h->nlmsg_type == NLMSG_ERROR || h->nlmsg_type == NLMSG_DONE) {
					if (h->nlmsg_len >= NLMSG_HDRLEN + sizeof(int))
						std::memcpy(&r.err, nlmsg_data(h), sizeof(int));
					r.extack = nl::extack_message(h);
					if (!probe_seq)
						end = true;
				} else {
					on_data(h);
				}
			}
			if (end)
				return;
		}
	}

	int fd_;
	std::vector<std::uint8_t> buf_ = std::vector<std::uint8_t>(256 * 1024);
};

std::uint32_t get_u32(nlattr *tb[], int t)
{
	return tb[t] ? nla_get_u32(tb[t]) : 0;
}

class Fuzzer {
public:
	Fuzzer(int family, bool privileged) : family_(family), privileged_(privileged) {}

	// Every pool's configuration, by id (a well-formed dump of pool-get).
	std::map<std::uint32_t, PoolConfig> pools()
	{
		std::map<std::uint32_t, PoolConfig> out;
		const std::uint32_t s = seq_++;
		auto req = nl::genl_request(family_, PPKIT_CMD_POOL_GET, PPKIT_FAMILY_VERSION,
					    NLM_F_REQUEST | NLM_F_DUMP | NLM_F_ACK);
		nlmsg_hdr(req.get())->nlmsg_seq = s;
		Reply r = sock_.exchange(nl::to_bytes(req.get()), s, seq_++, true, [&](nlmsghdr *h) {
			nlattr *tb[PPKIT_A_POOL_MAX + 1] = {};
			if (genlmsg_parse(h, 0, tb, PPKIT_A_POOL_MAX, nullptr) < 0 || !tb[PPKIT_A_POOL_ID])
				throw std::runtime_error("a pool-get dump reply that does not parse");
			PoolConfig c;
			c.id = get_u32(tb, PPKIT_A_POOL_ID);
			c.ifindex = get_u32(tb, PPKIT_A_POOL_IFINDEX);
			c.queue = get_u32(tb, PPKIT_A_POOL_QUEUE);
			c.order = get_u32(tb, PPKIT_A_POOL_ORDER);
			c.ring_size = get_u32(tb, PPKIT_A_POOL_RING_SIZE);
			c.cache_size = get_u32(tb, PPKIT_A_POOL_CACHE_SIZE);
			c.refill_batch = get_u32(tb, PPKIT_A_POOL_REFILL_BATCH);
			c.max_len = get_u32(tb, PPKIT_A_POOL_MAX_LEN);
			c.dma_dir = get_u32(tb, PPKIT_A_POOL_DMA_DIR);
			c.nid = tb[PPKIT_A_POOL_NID] ? static_cast<std::int32_t>(nla_get_u32(tb[PPKIT_A_POOL_NID])) : 0;
			if (tb[PPKIT_A_POOL_OWNER])
				c.owner = nla_get_string(tb[PPKIT_A_POOL_OWNER]);
			out[c.id] = c;
		});
		if (r.err)
			throw std::runtime_error(fmt::format("pool-get dump failed: {} {}", r.err, r.extack));
		return out;
	}

	void run(std::uint64_t count, std::uint64_t seed, bool verbose)
	{
		auto before = pools();
		if (before.empty())
			throw std::runtime_error("no pools to aim at: load ppsim (modprobe ppsim) first");
		fuzz::Target t{family_, {}, {}};
		for (const auto &[id, c] : before) {
			t.pools.push_back(id);
			if (c.ifindex)
				t.ifindexes.push_back(c.ifindex);
		}
		fuzz::Generator gen(seed, t);
		for (std::uint64_t i = 0; i < count; i++) {
			const std::uint32_t s = seq_++;
			Message m = gen.next(s);
			// A dump the kernel reads and answers: a request with both
			// NLM_F_DUMP bits, whole, with a generic netlink header.
			const bool dump = m.whole && m.genl && m.request() && m.dump();
			Reply r = sock_.exchange(m.bytes, s, seq_++, dump, [](nlmsghdr *) {});
			tally_.count(m, r, privileged_);
			std::string why = fuzz::check(m, r, privileged_);
			// Only pool-set changes a pool; after every one that was
			// rejected (or could not be read) nothing may have changed.
			if (why.empty() && m.cmd == PPKIT_CMD_POOL_SET) {
				auto now = pools();
				tally_.state_checks++;
				if (r.err != 0 || !r.replied) {
					if (now != before)
						why = "a rejected pool-set changed a pool's configuration";
				}
				before = std::move(now);
			}
			if (!why.empty())
				violation(m, r, why);
			else if (verbose)
				fmt::print("{} {} cmd {} flags {:#x}: {} {}\n", i, fuzz::kind_name(m.kind), m.cmd,
					   m.flags, r.replied ? std::to_string(r.err) : "-", r.extack);
		}
		auto after = pools();
		tally_.state_checks++;
		for (const auto &[id, c] : before)
			if (!after.count(id))
				violation({}, {}, fmt::format("pool {} disappeared during the run", id));
	}

	const fuzz::Tally &tally() const { return tally_; }

private:
	void violation(const Message &m, const Reply &r, const std::string &why)
	{
		tally_.violations++;
		if (tally_.violations > 20)
			return;
		std::string hex;
		for (std::size_t i = 0; i < m.bytes.size() && i < 96; i++)
			hex += fmt::format("{:02x}", m.bytes[i]);
		fmt::print(stderr, "nlfuzz: VIOLATION: {} [{} cmd {} flags {:#x}, {} bytes, reply {} '{}']: {}{}\n",
			   why, fuzz::kind_name(m.kind), m.cmd, m.flags, m.bytes.size(),
			   r.replied ? std::to_string(r.err) : "none", r.extack, hex,
			   m.bytes.size() > 96 ? "..." : "");
	}

	int family_;
	bool privileged_;
	std::uint32_t seq_ = 1;
	RawSocket sock_;
	fuzz::Tally tally_;
};

}  // namespace

int main(int argc, char **argv)
{
	CLI::App app{"ppkit-nlfuzz: fuzz the ppkit generic netlink family (pp_backport)"};
	std::uint64_t count = 10000, seed = 0;
	long user = -1;
	bool json = false, verbose = false;
	app.add_option("--count", count, "Messages to send")->check(CLI::Range(1ull, 100000000ull));
	app.add_option("--seed", seed, "Seed of the generator (default: from the clock)");
	app.add_option("--user", user, "Drop to this uid (and gid) first: no capabilities")
		->check(CLI::Range(1L, 4294967294L));
	app.add_flag("--json", json, "Print the summary as JSON");
	app.add_flag("--verbose", verbose, "Print every message's outcome");
	CLI11_PARSE(app, argc, argv);
	if (!app.count("--seed"))
		seed = static_cast<std::uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count());

	try {
		nl::Socket ctl;
		const int family = ctl.family(PPKIT_FAMILY_NAME);
		if (!family) {
			fmt::print(stderr, "nlfuzz: no '{}' generic netlink family: load pp_backport "
					   "(modprobe pp_backport, or insmod kmod/pool/pp_backport.ko)\n",
				   PPKIT_FAMILY_NAME);
			return 2;
		}
		if (user >= 0) {
			const auto id = static_cast<uid_t>(user);
			if (setgroups(0, nullptr) < 0 || setgid(id) < 0 || setuid(id) < 0) {
				fmt::print(stderr, "nlfuzz: cannot drop to uid {}: {} (run as root)\n", user,
					   std::strerror(errno));
				return 2;
			}
		}
		const bool privileged = geteuid() == 0;
		Fuzzer f(family, privileged);
		f.run(count, seed, verbose);
		const auto &t = f.tally();
		if (json) {
			nlohmann::json kinds = nlohmann::json::object();
			for (int k = 0; k < fuzz::kKinds; k++)
				kinds[std::string(fuzz::kind_name(static_cast<Kind>(k)))] = t.per_kind[k];
			nlohmann::json j = {
				{"seed", seed}, {"privileged", privileged}, {"sent", t.sent},
				{"accepted", t.accepted}, {"rejected_with_message", t.rejected_msg},
				{"rejected_by_core", t.rejected_core}, {"no_reply", t.no_reply},
				{"core_errno", {{"EOPNOTSUPP", t.core_errno[0]}, {"EPERM", t.core_errno[1]},
						{"EINVAL", t.core_errno[2]}, {"other", t.core_errno[3]}}},
				{"state_checks", t.state_checks}, {"violations", t.violations},
				{"kinds", kinds},
			};
			fmt::print("{}\n", j.dump());
		} else {
			fmt::print("nlfuzz: {} messages as {} (seed {}): {} accepted, {} rejected with an "
				   "extack message, {} by the netlink core (EOPNOTSUPP {}, EPERM {}, EINVAL {}, "
				   "other {}), {} unanswered; pool state checked {} times; {} violations\n",
				   t.sent, privileged ? "root" : fmt::format("uid {}", geteuid()), seed,
				   t.accepted, t.rejected_msg, t.rejected_core, t.core_errno[0], t.core_errno[1],
				   t.core_errno[2], t.core_errno[3], t.no_reply, t.state_checks, t.violations);
		}
		return t.violations ? 1 : 0;
	} catch (const std::exception &e) {
		fmt::print(stderr, "nlfuzz: {}\n", e.what());
		return 2;
	}
}
