// SPDX-License-Identifier: GPL-2.0
// The ppctl binary as linked (PPKIT_PPCTL_LINK, tools/CMakeLists.txt): a
// static ppctl must still unwind its exceptions, which CLI11 uses for
// --help and for usage errors, and libppkit for its failures.
#include <catch2/catch.hpp>

#include <cstdio>
#include <memory>
#include <string>

#include <sys/wait.h>

namespace {

struct Ran {
	int exit;
	std::string output;	// stdout and stderr
};

// Runs build/bin's ppctl with @args (shell words), as a user would.
Ran run_ppctl(const std::string &args)
{
	std::string cmd = std::string("'") + PPKIT_PPCTL_BIN + "' " + args + " 2>&1";
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
