// SPDX-License-Identifier: GPL-2.0
// ppctl holders: the holders-get request and reply, the owners of socket
// inodes from a /proc tree, and what ppctl prints.
#include <catch2/catch.hpp>

#include <filesystem>
#include <climits>
#include <cstring>
#include <fstream>
#include <string_view>
#include <thread>

#include <linux/ppkit.h>
#include <netinet/in.h>
#include <dirent.h>
#include <dlfcn.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fixtures.h"
#include "ppkit/error.h"
#include "ppkit_family.h"
#include "render_holders.h"

using namespace ppkit;
using fixture::Builder;
using fixture::Bytes;

namespace {

constexpr int kFamily = 0x22;
namespace fs = std::filesystem;

Bytes holders_reply()
{
	const std::uint8_t local[4] = {10, 82, 0, 2}, remote[4] = {10, 82, 0, 1};
	std::uint8_t local6[16] = {};
	local6[15] = 1;
	return Builder(kFamily, 0, PPKIT_CMD_HOLDERS_GET)
		.u32(PPKIT_A_HOLDERS_POOL_ID, 7)
		.u64(PPKIT_A_HOLDERS_DRIVER_PAGES, 256)
		.u32(PPKIT_A_HOLDERS_LENT_PAGES, 40)
		.u32(PPKIT_A_HOLDERS_HELD_PAGES, 22)
		.u32(PPKIT_A_HOLDERS_HELD_10MS, 1)
		.u32(PPKIT_A_HOLDERS_HELD_100MS, 2)
		.u32(PPKIT_A_HOLDERS_HELD_1S, 3)
		.u32(PPKIT_A_HOLDERS_HELD_10S, 16)
		.u32(PPKIT_A_HOLDERS_HELD_LONGER, 0)
		.u64(PPKIT_A_HOLDERS_OLDEST_MS, 9100)
		.u64(PPKIT_A_HOLDERS_ORPHANED, 5)
		.u32(PPKIT_A_HOLDERS_SOCKETS, 4)
		.u32(PPKIT_A_HOLDERS_UNATTRIBUTED, 0)
		.flag(PPKIT_A_HOLDERS_TRUNCATED)
		.nest(PPKIT_A_HOLDERS_HOLDER)
		.u32(PPKIT_A_HOLDER_NETNS, 4026532000u)
		.u16(PPKIT_A_HOLDER_FAMILY, AF_INET)
		.u16(PPKIT_A_HOLDER_PROTOCOL, IPPROTO_UDP)
		.u8(PPKIT_A_HOLDER_STATE, 7)
		.raw(PPKIT_A_HOLDER_LOCAL_ADDR, local, 4)
		.u16(PPKIT_A_HOLDER_LOCAL_PORT, 7002)
		.raw(PPKIT_A_HOLDER_REMOTE_ADDR, remote, 4)
		.u16(PPKIT_A_HOLDER_REMOTE_PORT, 0)
		.u64(PPKIT_A_HOLDER_INODE, 1293)
		.u32(PPKIT_A_HOLDER_UID, 0)
		.u32(PPKIT_A_HOLDER_PAGES, 16)
		.u64(PPKIT_A_HOLDER_OLDEST_MS, 8800)
		.end_nest()
		.nest(PPKIT_A_HOLDERS_HOLDER)
		.u16(PPKIT_A_HOLDER_FAMILY, AF_INET6)
		.u16(PPKIT_A_HOLDER_PROTOCOL, IPPROTO_TCP)
		.raw(PPKIT_A_HOLDER_LOCAL_ADDR, local6, 16)
		.u16(PPKIT_A_HOLDER_LOCAL_PORT, 5201)
		.u32(PPKIT_A_HOLDER_PAGES, 6)
		.end_nest()
		.bytes();
}

}  // namespace

TEST_CASE("holders-get: the request names the pool", "[holders][wire]")
{
	STATIC_REQUIRE(PPKIT_CMD_HOLDERS_GET == 7);
	STATIC_REQUIRE(PPKIT_A_HOLDERS_POOL_ID == 2);
	const Bytes want = {
		0x1c, 0x00, 0x00, 0x00, 0x22, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
		0x00, 0x00, 0x00, 0x00,
		0x07, 0x01, 0x00, 0x00,	// PPKIT_CMD_HOLDERS_GET, version 1
		0x08, 0x00, 0x02, 0x00, 0x2a, 0x00, 0x00, 0x00, // PPKIT_A_HOLDERS_POOL_ID 42
	};
	CHECK(nl::to_bytes(wire::ppkit_holders_get(kFamily, 42).get()) == want);
}

TEST_CASE("holders-get: every holder of the reply, not only the last", "[holders][wire]")
{
	Holders h = wire::ppkit_parse_holders(fixture::msg(holders_reply()).get());
	CHECK(h.pool_id == 7);
	CHECK(h.driver_pages == 256);
	CHECK(h.lent_pages == 40);
	CHECK(h.held_pages == 22);
	CHECK(h.held_age == std::array<std::uint32_t, 5>{1, 2, 3, 16, 0});
	CHECK(h.oldest_ms == 9100);
	CHECK(h.orphaned == 5);
	CHECK(h.sockets == 4);
	CHECK(h.truncated);
	REQUIRE(h.holders.size() == 2);
	const Holder &u = h.holders[0];
	CHECK(holder_proto(u) == "udp");
	CHECK(u.netns == 4026532000u);
	CHECK(u.local == "10.82.0.2");
	CHECK(u.local_port == 7002);
	CHECK(u.remote == "10.82.0.1");
	CHECK(u.inode == 1293);
	CHECK(u.pages == 16);
	CHECK(u.oldest_ms == 8800);
	CHECK(holder_proto(h.holders[1]) == "tcp6");
	CHECK(h.holders[1].local == "::1");
	CHECK(h.holders[1].remote.empty());
	CHECK(h.holders[1].pages == 6);
}

TEST_CASE("holders-get: malformed replies are protocol errors", "[holders][wire]")
{
	auto code_of = [](const Bytes &b) {
		try {
			wire::ppkit_parse_holders(fixture::msg(b).get());
		} catch (const Error &e) {
			return e.code();
		}
		return Errc::Kernel;
	};
	const std::uint8_t three[3] = {1, 2, 3};
	CHECK(code_of(Builder(kFamily, 0, 7).u32(PPKIT_A_HOLDERS_SOCKETS, 1).bytes()) ==
	      Errc::Protocol);	// no pool id
	CHECK(code_of(Builder(kFamily, 0, 7)
			      .u32(PPKIT_A_HOLDERS_POOL_ID, 1)
			      .nest(PPKIT_A_HOLDERS_HOLDER)
			      .raw(PPKIT_A_HOLDER_LOCAL_ADDR, three, 3)
			      .end_nest()
			      .bytes()) == Errc::Protocol);	// a 3-byte address
	CHECK(code_of(Builder(kFamily, 0, 7)
			      .u32(PPKIT_A_HOLDERS_POOL_ID, 1)
			      .nest(PPKIT_A_HOLDERS_HOLDER)
			      .u32(PPKIT_A_HOLDER_PAGES, 1)
			      .u16(PPKIT_A_HOLDER_INODE, 1)
			      .end_nest()
			      .bytes()) == Errc::Protocol);	// a u64 sent as u16
	CHECK(code_of(Builder(kFamily, 0, 7).u32(PPKIT_A_HOLDERS_POOL_ID, 1).bytes()) ==
	      Errc::Kernel);	// well formed
}

TEST_CASE("socket owners from a /proc tree", "[holders]")
{
	fs::path root = fs::temp_directory_path() / ("ppkit-proc-" + std::to_string(getpid()));
	fs::remove_all(root);
	auto proc = [&](int pid, const std::string &comm, std::vector<std::string> links) {
		fs::path d = root / std::to_string(pid);
		fs::create_directories(d / "fd");
		std::ofstream(d / "comm") << comm << "\n";
		int fd = 3;
		for (const auto &l : links)
			fs::create_symlink(l, d / "fd" / std::to_string(fd++));
	};
	proc(148, "python3", {"socket:[1294]", "/dev/null", "socket:[77]"});
	proc(150, "iperf3", {"socket:[1294]", "socket:[1294]"});	// twice: once
	proc(9, "kthread", {});
	fs::create_directories(root / "self");	// not a pid
	proc(151, "odd", {"socket:[12x]", "socket:[]", "pipe:[5]"});

	auto owners = socket_owners(root.string());
	REQUIRE(owners.count(1294));
	REQUIRE(owners[1294].size() == 2);
	CHECK(owners[1294][0].comm != owners[1294][1].comm);
	CHECK(owners.count(77) == 1);
	CHECK(owners[77][0].pid == 148);
	CHECK(owners[77][0].comm == "python3");
	CHECK(owners.size() == 2);	// nothing from the odd links

	Holders h;
	h.holders.push_back({});
	h.holders[0].inode = 77;
	name_holders(h, root.string(), (root / "no-netns").string());
	REQUIRE(h.holders[0].processes.size() == 1);
	CHECK(ppctl::processes_cell(h.holders[0]) == "python3/148");
	CHECK(ppctl::netns_cell(h.holders[0]) == "net:[0]");
	fs::remove_all(root);
}

namespace {
// Set by a test: readdir() fails with EIO in the folder whose path ends so,
// once it has given this many entries other than . and ..
std::string g_eio_folder;
int g_eio_after = 0;
}  // namespace

// This binary's readdir(), which libstdc++'s directory_iterator calls: the
// C library's, but for the failure a test asks for (g_eio_folder).
extern "C" struct dirent *readdir(DIR *d)
{
	using Fn = struct dirent *(*)(DIR *);
	static const Fn real = reinterpret_cast<Fn>(dlsym(RTLD_NEXT, "readdir"));
	bool target = false;
	if (!g_eio_folder.empty()) {
		char path[PATH_MAX];
		const std::string link = "/proc/self/fd/" + std::to_string(dirfd(d));
		ssize_t n = readlink(link.c_str(), path, sizeof(path) - 1);
		target = n > 0 && std::string_view(path, n).ends_with(g_eio_folder);
	}
	if (target && g_eio_after <= 0) {
		errno = EIO;
		return nullptr;
	}
	struct dirent *e = real(d);
	if (target && e && std::strcmp(e->d_name, ".") != 0 && std::strcmp(e->d_name, "..") != 0)
		g_eio_after--;
	return e;
}

TEST_CASE("socket owners: a folder whose reading fails midway", "[holders]")
{
	fs::path root = fs::temp_directory_path() / ("ppkit-proc-eio-" + std::to_string(getpid()));
	fs::remove_all(root);
	for (int pid : {152, 153}) {
		fs::create_directories(root / std::to_string(pid) / "fd");
		std::ofstream(root / std::to_string(pid) / "comm") << "p" << pid << "\n";
	}
	fs::create_symlink("socket:[500]", root / "152" / "fd" / "3");
	fs::create_symlink("socket:[501]", root / "152" / "fd" / "4");
	fs::create_symlink("socket:[600]", root / "153" / "fd" / "3");
	// 152's fd folder fails after one entry, as a read of /proc can (an
	// exiting process's ENOENT is the end of the folder to glibc; other
	// errors are not)
	g_eio_folder = "/152/fd";
	g_eio_after = 1;
	std::unordered_map<std::uint64_t, std::vector<Process>> owners;
	CHECK_NOTHROW(owners = socket_owners(root.string()));
	int seen = 0;
	g_eio_after = 1;
	CHECK_FALSE(each_entry(root / "152" / "fd", [&](const fs::directory_entry &) { seen++; }));
	g_eio_folder.clear();
	CHECK(seen == 1);
	// the other process is named, and 152's one socket read before the failure
	REQUIRE(owners.count(600));
	CHECK(owners[600][0].comm == "p153");
	CHECK(owners.count(500) + owners.count(501) == 1);
	CHECK(each_entry(root / "152" / "fd", [](const fs::directory_entry &) {}));
	fs::remove_all(root);
}

TEST_CASE("socket owners: a process exiting during the walk", "[holders][host]")
{
	// pid 152 of a /proc tree is a real child's fd folder, and its comm a
	// FIFO: the walk blocks on it after the child's first socket, and the
	// child is killed and reaped meanwhile (the kernel's next read of the
	// folder fails with ENOENT, which glibc's readdir calls its end)
	fs::path root = fs::temp_directory_path() / ("ppkit-proc-exit-" + std::to_string(getpid()));
	fs::remove_all(root);
	fs::create_directories(root / "152");
	int sv[2], ready[2];
	REQUIRE(socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == 0);
	REQUIRE(pipe(ready) == 0);
	struct stat st {};
	REQUIRE(fstat(sv[0], &st) == 0);
	pid_t child = fork();
	REQUIRE(child >= 0);
	if (child == 0) {
		dup2(sv[0], 0);	// the socket is the folder's first entry
		close(ready[0]);
		close(ready[1]);	// the parent's read returns: set up
		pause();
		_exit(0);
	}
	close(sv[0]);
	close(sv[1]);
	close(ready[1]);
	char c;
	REQUIRE(read(ready[0], &c, 1) == 0);
	close(ready[0]);
	fs::create_directory_symlink("/proc/" + std::to_string(child) + "/fd", root / "152" / "fd");
	REQUIRE(mkfifo((root / "152" / "comm").c_str(), 0600) == 0);
	std::thread killer([&] {
		std::ofstream comm(root / "152" / "comm");	// opens once the walk reads it
		kill(child, SIGKILL);
		waitpid(child, nullptr, 0);
		comm << "victim\n";
	});
	std::unordered_map<std::uint64_t, std::vector<Process>> owners;
	CHECK_NOTHROW(owners = socket_owners(root.string()));
	// a walk that never read comm must not leave the killer waiting
	int unblock = open((root / "152" / "comm").c_str(), O_RDONLY | O_NONBLOCK);
	killer.join();
	close(unblock);
	REQUIRE(owners.count(st.st_ino));
	CHECK(owners[st.st_ino][0].pid == 152);
	CHECK(owners[st.st_ino][0].comm == "victim");
	CHECK_FALSE(each_entry("/proc/" + std::to_string(child) + "/fd", [](const auto &) {}));
	fs::remove_all(root);
}

TEST_CASE("ppctl holders: report and JSON", "[holders][render]")
{
	ppctl::PoolHolders ph;
	ph.pool.id = 7;
	ph.pool.owner = "ppsim";
	ph.pool.ifindex = 2;
	ph.pool.ifname = "sim0";
	ph.holders = wire::ppkit_parse_holders(fixture::msg(holders_reply()).get());
	ph.holders.holders[0].netns_name = "peer";
	ph.holders.holders[0].processes = {{149, "python3"}};

	std::string text = ppctl::holders_text({ph}, {false, 200, false});
	CHECK_THAT(text, Catch::Contains("pool 7 (ppsim, sim0/2): 256 pages with the driver, "
					 "40 lent to the stack, 22 held (oldest 9.1s); 5 orphaned"));
	CHECK_THAT(text, Catch::Contains("<10s: 16"));
	CHECK_THAT(text, Catch::Contains("stopped at a bound: partial"));
	CHECK_THAT(text, Catch::Contains("10.82.0.2:7002"));
	CHECK_THAT(text, Catch::Contains("[::1]:5201"));
	CHECK_THAT(text, Catch::Contains("python3/149"));

	auto j = ppctl::holders_doc({ph});
	CHECK(j["command"] == "holders");
	CHECK(j["version"] == 1);
	const auto &p = j["pools"][0];
	CHECK(p["id"] == 7);
	CHECK(p["held_pages"] == 22);
	CHECK(p["held_age"]["10s"] == 16);
	CHECK(p["truncated"] == true);
	REQUIRE(p["holders"].size() == 2);
	CHECK(p["holders"][0]["proto"] == "udp");
	CHECK(p["holders"][0]["netns_name"] == "peer");
	CHECK(p["holders"][0]["pages"] == 16);
	CHECK(p["holders"][0]["processes"][0]["pid"] == 149);
	CHECK(p["holders"][1]["remote"].is_null());
	CHECK(p["holders"][1]["netns_name"].is_null());
}

TEST_CASE("ppctl holders: names that are not UTF-8", "[holders][render][json]")
{
	// A process names itself (prctl), root names interfaces and network
	// namespaces: any bytes.  The document stays JSON, dump() never throws.
	ppctl::PoolHolders ph;
	ph.pool.id = 7;
	ph.pool.owner = "drv\xc3";
	ph.pool.ifname = "sim\xff";
	ph.holders = wire::ppkit_parse_holders(fixture::msg(holders_reply()).get());
	ph.holders.holders[0].netns_name = "ns\xfe";
	ph.holders.holders[0].processes = {{149, "py\xff\xfe"}};
	std::string text;
	REQUIRE_NOTHROW(text = ppctl::holders_doc({ph}).dump());
	auto j = nlohmann::json::parse(text);
	const auto &p = j["pools"][0];
	CHECK(p["ifname"] == "sim\xef\xbf\xbd");
	CHECK(p["owner"] == "drv\xef\xbf\xbd");
	CHECK(p["holders"][0]["netns_name"] == "ns\xef\xbf\xbd");
	CHECK(p["holders"][0]["processes"][0]["comm"] == "py\xef\xbf\xbd\xef\xbf\xbd");
}

TEST_CASE("the top holder in an alert's words", "[holders]")
{
	Holders h;
	CHECK(top_holder_text(h).empty());	// nothing held: nothing to say
	h.held_pages = 5;
	h.truncated = true;
	CHECK(top_holder_text(h) == "5 pages held by the stack, none in a socket walked "
				    "(walk cut short)");
	h = wire::ppkit_parse_holders(fixture::msg(holders_reply()).get());
	h.holders[0].netns_name = "peer";
	h.holders[0].processes = {{149, "python3"}, {150, "iperf3"}};
	CHECK(top_holder_text(h) == "udp 10.82.0.2:7002 (netns peer, python3/149, iperf3/150) "
				    "holds 16 of the 22 held pages, the oldest lent 8.8 s ago");
	h.holders.erase(h.holders.begin());
	CHECK(top_holder_text(h) == "tcp6 [::1]:5201 (netns net:[0]) holds 6 of the 22 held "
				    "pages, the oldest lent 0.0 s ago");
}
