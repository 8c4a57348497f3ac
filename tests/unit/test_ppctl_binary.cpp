// SPDX-License-Identifier: GPL-2.0
// The ppctl binary as linked (PPKIT_PPCTL_LINK, tools/CMakeLists.txt): a
// static ppctl must still unwind its exceptions, which CLI11 uses for
// --help and for usage errors, and libppkit for its failures.
#include <catch2/catch.hpp>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <thread>

#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

namespace {

struct Ran {
	int exit;
	std::string output;	// stdout and stderr
};

// Runs build/bin's ppctl with @args (shell words), as a user would; its
// stdout goes to @stdout_to when given.
Ran run_ppctl(const std::string &args, const std::string &stdout_to = {})
{
	std::string cmd = std::string("'") + PPKIT_PPCTL_BIN + "' " + args + " 2>&1";
	if (!stdout_to.empty())
		cmd += " >'" + stdout_to + "'";
	std::unique_ptr<FILE, int (*)(FILE *)> p(popen(cmd.c_str(), "r"), pclose);
	REQUIRE(p);
	Ran r{-1, {}};
	char buf[4096];
	std::size_t n;
	while ((n = std::fread(buf, 1, sizeof(buf), p.get())) > 0)
		r.output.append(buf, n);
	int status = pclose(p.release());
	if (WIFEXITED(status))
		r.exit = WEXITSTATUS(status);
	return r;
}

// A one-connection stand-in for ppctld on a socket in a directory of its
// own: answers each request line with @reply, for at most 10 s.
class FakeDaemon {
public:
	explicit FakeDaemon(std::string reply) : reply_(std::move(reply))
	{
		std::string t = (std::getenv("TMPDIR") ? std::getenv("TMPDIR") : "/tmp");
		t += "/ppctl-bin-XXXXXX";
		REQUIRE(mkdtemp(t.data()));
		dir_ = t;
		path_ = dir_ + "/api.sock";
		fd_ = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
		REQUIRE(fd_ >= 0);
		sockaddr_un sa{};
		sa.sun_family = AF_UNIX;
		std::memcpy(sa.sun_path, path_.c_str(), path_.size());
		REQUIRE(bind(fd_, reinterpret_cast<sockaddr *>(&sa), sizeof(sa)) == 0);
		REQUIRE(listen(fd_, 4) == 0);
		th_ = std::thread([this] { serve(); });
	}
	~FakeDaemon()
	{
		th_.join();
		close(fd_);
		unlink(path_.c_str());
		rmdir(dir_.c_str());
	}
	FakeDaemon(const FakeDaemon &) = delete;
	FakeDaemon &operator=(const FakeDaemon &) = delete;
	const std::string &path() const { return path_; }

private:
	void serve()
	{
		pollfd p{fd_, POLLIN, 0};
		if (poll(&p, 1, 10000) <= 0)
			return;
		int c = accept4(fd_, nullptr, nullptr, SOCK_CLOEXEC);
		if (c < 0)
			return;
		std::string in;
		char buf[4096];
		auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
		while (std::chrono::steady_clock::now() < deadline) {
			pollfd q{c, POLLIN, 0};
			if (poll(&q, 1, 100) <= 0)
				continue;
			ssize_t n = recv(c, buf, sizeof(buf), 0);
			if (n <= 0)
				break;
			in.append(buf, static_cast<std::size_t>(n));
			for (auto nl = in.find('\n'); nl != std::string::npos; nl = in.find('\n')) {
				in.erase(0, nl + 1);
				std::string r = reply_ + "\n";
				(void)!send(c, r.data(), r.size(), MSG_NOSIGNAL);
			}
		}
		close(c);
	}

	std::string reply_, dir_, path_;
	int fd_ = -1;
	std::thread th_;
};

}  // namespace

TEST_CASE("the ppctl binary answers --help", "[binary]")
{
	Ran r = run_ppctl("--help");
	CHECK(r.exit == 0);
	CHECK(r.output.starts_with("Inspect and tune ppkit page pools"));
	CHECK(r.output.find("Exit status: 0 ok") != std::string::npos);
}

TEST_CASE("the ppctl binary unwinds a usage error", "[binary]")
{
	Ran r = run_ppctl("--no-such-option");
	CHECK(r.exit == 1);
	CHECK(r.output.find("--no-such-option") != std::string::npos);
}

TEST_CASE("the ppctl binary unwinds libppkit's errors", "[binary]")
{
	// No daemon listens there: ppkit::Error(Errc::DaemonMissing), exit 2.
	Ran r = run_ppctl("history 1 --socket /nonexistent/ppctld.sock");
	CHECK(r.exit == 2);
	CHECK(r.output.find("ppctl: ") == 0);
}

TEST_CASE("the ppctl binary fails when its output cannot be written", "[binary]")
{
	// /dev/full: every write fails with ENOSPC.  Exit 3 and say so, not 0.
	Ran r = run_ppctl("--version", "/dev/full");
	CHECK(r.exit == 3);
	CHECK(r.output.find("ppctl: cannot write the output") == 0);

	FakeDaemon d(nlohmann::json::parse(R"({"ok": true, "version": 1, "interval_s": 1,
		"pool": {"id": 3, "source": "ppkit", "owner": "mvneta", "ifindex": 2,
			 "ifname": "eth0", "queue": 0, "napi_id": null, "state": "live"},
		"points": [{"time_ns": 1700000000000000000, "inflight": 5, "alloc_per_s": 1.0,
			    "released_per_s": 0.0, "hit": 0.5, "recycle": 0.9}]})")
			     .dump());
	r = run_ppctl("history 3 --socket '" + d.path() + "'", "/dev/full");
	CHECK(r.exit == 3);
	CHECK(r.output.find("ppctl: cannot write the output: No space left on device") == 0);
}

TEST_CASE("the ppctl binary: -j -p errors are indented JSON on stdout", "[binary][json]")
{
	// 2>/dev/null: stdout alone.
	Ran r = run_ppctl("-j -p history 1 --socket /nonexistent/ppctld.sock 2>/dev/null; :");
	CHECK_THAT(r.output, Catch::StartsWith("{\n    \"errno\": ") &&
				     Catch::Contains("\"error\": \"ppctld is not running"));
	// stderr alone (the shell exits with ppctl's status).
	Ran e = run_ppctl("-jp history 1 --socket /nonexistent/ppctld.sock 2>&1 >/dev/null; exit $?");
	CHECK(e.exit == 2);
	CHECK(e.output.empty());	// nothing on stderr
}
