// SPDX-License-Identifier: GPL-2.0
#include "ppkit/holders.h"

#include <charconv>
#include <filesystem>
#include <fstream>
#include <functional>
#include <system_error>

#include <fmt/format.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>

namespace ppkit {

namespace fs = std::filesystem;

std::string holder_proto(const Holder &h)
{
	if (h.family == AF_PACKET)
		return "packet";
	std::string p = h.protocol == IPPROTO_TCP   ? "tcp"
			: h.protocol == IPPROTO_UDP ? "udp"
						    : fmt::format("ip{}", h.protocol);
	return h.family == AF_INET6 ? p + "6" : p;
}

namespace {

// "socket:[12345]" -> 12345.
bool socket_inode(const std::string &link, std::uint64_t &ino)
{
	constexpr std::string_view pre = "socket:[";
	if (link.size() < pre.size() + 2 || link.compare(0, pre.size(), pre) != 0 ||
	    link.back() != ']')
		return false;
	const char *b = link.data() + pre.size(), *e = link.data() + link.size() - 1;
	auto r = std::from_chars(b, e, ino);
	return r.ec == std::errc() && r.ptr == e;
}

std::string comm_of(const fs::path &pid_dir)
{
	std::ifstream f(pid_dir / "comm");
	std::string c;
	std::getline(f, c);
	return c;
}

}  // namespace

bool each_entry(const fs::path &dir, const std::function<void(const fs::directory_entry &)> &fn)
{
	std::error_code ec;
	fs::directory_iterator it(dir, ec), end;
	// increment(ec), not ++: a range-for throws when a read fails midway
	for (; !ec && it != end; it.increment(ec))
		fn(*it);
	return !ec;
}

std::unordered_map<std::uint64_t, std::vector<Process>> socket_owners(const std::string &proc)
{
	std::unordered_map<std::uint64_t, std::vector<Process>> out;
	each_entry(proc, [&](const fs::directory_entry &d) {
		const std::string name = d.path().filename().string();
		int pid = 0;
		auto r = std::from_chars(name.data(), name.data() + name.size(), pid);
		if (r.ec != std::errc() || r.ptr != name.data() + name.size())
			return;
		std::string comm;
		each_entry(d.path() / "fd", [&](const fs::directory_entry &fd) {
			std::error_code lec;
			std::string link = fs::read_symlink(fd.path(), lec).string();
			std::uint64_t ino = 0;
			if (lec || !socket_inode(link, ino))
				return;
			auto &v = out[ino];
			if (!v.empty() && v.back().pid == pid)
				return;
			if (comm.empty())
				comm = comm_of(d.path());
			v.push_back({pid, comm});
		});
	});
	return out;
}

std::unordered_map<std::uint32_t, std::string> netns_names(const std::string &dir)
{
	std::unordered_map<std::uint32_t, std::string> out;
	each_entry(dir, [&](const fs::directory_entry &e) {
		struct stat st {};
		if (::stat(e.path().c_str(), &st) == 0)
			out.emplace(static_cast<std::uint32_t>(st.st_ino), e.path().filename().string());
	});
	return out;
}

std::string top_holder_text(const Holders &h)
{
	if (!h.held_pages)
		return {};
	if (h.holders.empty())
		return fmt::format("{} pages held by the stack, none in a socket walked{}",
				   h.held_pages, h.truncated ? " (walk cut short)" : "");
	const Holder &x = h.holders.front();
	std::string where = holder_proto(x);
	if (!x.local.empty())
		where += x.local.find(':') == std::string::npos
				 ? fmt::format(" {}:{}", x.local, x.local_port)
				 : fmt::format(" [{}]:{}", x.local, x.local_port);
	std::string who = x.netns_name.empty() ? fmt::format("netns net:[{}]", x.netns)
					       : "netns " + x.netns_name;
	for (const auto &p : x.processes)
		who += fmt::format(", {}/{}", p.comm, p.pid);
	return fmt::format("{} ({}) holds {} of the {} held pages, the oldest lent {:.1f} s ago",
			   where, who, x.pages, h.held_pages,
			   static_cast<double>(x.oldest_ms) / 1000);
}

void name_holders(Holders &h, const std::string &proc, const std::string &netns_dir)
{
	if (h.holders.empty())
		return;
	auto owners = socket_owners(proc);
	auto names = netns_names(netns_dir);
	struct stat st {};
	if (::stat((proc + "/1/ns/net").c_str(), &st) == 0)
		names.emplace(static_cast<std::uint32_t>(st.st_ino), "init");
	for (Holder &x : h.holders) {
		if (auto it = owners.find(x.inode); it != owners.end())
			x.processes = it->second;
		if (auto it = names.find(x.netns); it != names.end())
			x.netns_name = it->second;
	}
}

}  // namespace ppkit
