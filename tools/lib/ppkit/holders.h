// SPDX-License-Identifier: GPL-2.0
// libppkit: who holds a pool's pages (the ppkit family's holders-get).
//
//   ppkit::Client c;
//   ppkit::Holders h = c.holders(id);        // CAP_NET_ADMIN
//   ppkit::name_holders(h);                  // processes and namespace names
#pragma once

#include <array>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>
#include <unordered_map>
#include <vector>

namespace ppkit {

// A process with a socket open (from /proc/PID/fd).
struct Process {
	int pid = 0;
	std::string comm;
};

// One socket whose queues hold pages of the pool.
struct Holder {
	std::uint32_t netns = 0;	// namespace inode number
	std::string netns_name;		// its name in /run/netns, "" if none
	std::uint16_t family = 0;	// AF_INET, AF_INET6, AF_PACKET
	std::uint16_t protocol = 0;	// IPPROTO_*; AF_PACKET: ethertype
	std::uint8_t state = 0;
	std::string local, remote;	// addresses as text, "" for packet sockets
	std::uint16_t local_port = 0, remote_port = 0;
	std::uint64_t inode = 0;
	std::uint32_t uid = 0;
	std::uint32_t pages = 0;
	std::uint64_t oldest_ms = 0;
	std::vector<Process> processes;	// who has it open (name_holders())
};

// Held pages by age: < 10 ms, < 100 ms, < 1 s, < 10 s, longer.
inline constexpr std::array<const char *, 5> kHeldAgeNames = {"10ms", "100ms", "1s", "10s",
							       "longer"};

struct Holders {
	std::uint32_t pool_id = 0;
	std::uint64_t driver_pages = 0;
	std::uint32_t lent_pages = 0, held_pages = 0;
	std::array<std::uint32_t, 5> held_age{};
	std::uint64_t oldest_ms = 0;
	std::uint64_t orphaned = 0;
	std::uint32_t sockets = 0, unattributed = 0;
	bool truncated = false;
	std::vector<Holder> holders;	// most pages first
};

// "tcp", "udp", "tcp6", "udp6", "packet", or the numbers.
std::string holder_proto(const Holder &h);

// Calls @fn with each entry of @dir; false if @dir cannot be read or its
// reading fails midway (/proc/PID/fd of a process that exits meanwhile).
// Never throws std::filesystem::filesystem_error.
bool each_entry(const std::filesystem::path &dir,
		const std::function<void(const std::filesystem::directory_entry &)> &fn);
// Socket inode -> processes that have it open, from @proc/*/fd.  Processes
// that vanish (before or during the walk) or that we may not read are
// skipped.
std::unordered_map<std::uint64_t, std::vector<Process>> socket_owners(
	const std::string &proc = "/proc");
// Network namespace inode -> name, from the bind mounts in @dir (ip netns).
std::unordered_map<std::uint32_t, std::string> netns_names(const std::string &dir = "/run/netns");
// The biggest holder in a few words, for an alert: "udp 10.82.0.1:7001
// (netns init, python3/148) holds 24 of the 24 held pages, the oldest lent
// 8.9 s ago"; what holds them when no socket does; "" if nothing is held.
std::string top_holder_text(const Holders &h);

// Fills each holder's processes and netns_name.
void name_holders(Holders &h, const std::string &proc = "/proc",
		  const std::string &netns_dir = "/run/netns");

}  // namespace ppkit
