// SPDX-License-Identifier: GPL-2.0
// Errors say what went wrong and why; ppctl and ppctld add what to do in
// their own terms (test_cli.cpp: ppctl's advice).
#include <catch2/catch.hpp>

#include <cerrno>
#include <filesystem>
#include <fstream>
#include <numeric>
#include <regex>
#include <string>
#include <vector>

#include "ppkit/error.h"

using namespace ppkit;

TEST_CASE("a missing family says how to load it", "[error]")
{
	Error e = family_missing(Source::Ppkit);
	CHECK(e.code() == Errc::FamilyMissing);
	CHECK(std::string(e.what()) ==
	      "pp_backport is not loaded: modprobe pp_backport (or insmod kmod/pool/pp_backport.ko)");
	Error n = family_missing(Source::Netdev);
	CHECK_THAT(n.what(), Catch::Contains("6.8"));
}

TEST_CASE("EPERM needs CAP_NET_ADMIN", "[error]")
{
	for (int err : {EPERM, -EPERM, EACCES}) {
		Error e = kernel_error(err, "", {Source::Ppkit, "pool-set", 1});
		CHECK(e.code() == Errc::Permission);
		CHECK(e.sys_errno() == std::abs(err));
		CHECK_THAT(e.what(), Catch::Contains("needs CAP_NET_ADMIN"));
		CHECK_THAT(e.what(), Catch::StartsWith("pool-set"));
	}
}

TEST_CASE("ENOENT for a pool names it, and its source", "[error]")
{
	Error e = kernel_error(-ENOENT, "", {Source::Ppkit, "stats-get", 42});
	CHECK(e.code() == Errc::NoSuchPool);
	CHECK(std::string(e.what()) == "no pool 42");
	CHECK(e.source() == Source::Ppkit);
	Error n = kernel_error(-ENOENT, "no such pool", {Source::Netdev, "page-pool-get", 7});
	CHECK(std::string(n.what()) == "no pool 7; kernel: no such pool");
	CHECK(n.message() == "no pool 7");
	CHECK(n.source() == Source::Netdev);
	// Without a pool in the request, ENOENT is just an error.
	CHECK(kernel_error(-ENOENT, "", {Source::Ppkit, "pool-get", {}}).code() == Errc::Kernel);
}

TEST_CASE("the kernel's extack message is shown", "[error]")
{
	Error e = kernel_error(-EINVAL, "ring size 0 out of range 1..32768",
			       {Source::Ppkit, "pool-set", 3});
	CHECK(e.code() == Errc::InvalidArgument);
	CHECK(e.extack() == "ring size 0 out of range 1..32768");
	CHECK_THAT(e.what(), Catch::Contains("ring size 0 out of range 1..32768"));
	CHECK(std::string(e.what()) ==
	      "pool-set: the kernel refused the request: ring size 0 out of range 1..32768");
	// Said once, not twice.
	std::string w = e.what();
	CHECK(w.find("out of range") == w.rfind("out of range"));

	Error p = kernel_error(-EPERM, "admin only", {Source::Ppkit, "pool-set", 3});
	CHECK_THAT(p.what(), Catch::Contains("needs CAP_NET_ADMIN") && Catch::Contains("admin only"));

	Error x = kernel_error(-EBUSY, "", {Source::Ppkit, "pool-set", 3});
	CHECK(x.code() == Errc::Kernel);
	CHECK_THAT(x.what(), Catch::Contains("busy"));
}

TEST_CASE("EOPNOTSUPP is not supported", "[error]")
{
	Error e = kernel_error(-EOPNOTSUPP, "", {Source::Netdev, "page-pool-stats-get", {}});
	CHECK(e.code() == Errc::NotSupported);
	CHECK(to_string(e.code()) == "not-supported");
}

TEST_CASE("ppsim errors say what failed", "[error][sim]")
{
	Error m = sim_family_missing();
	CHECK(m.code() == Errc::FamilyMissing);
	CHECK(std::string(m.what()) == "ppsim is not loaded: modprobe ppsim "
				       "(or insmod kmod/sim/ppsim.ko after kmod/pool/pp_backport.ko)");

	// lo (ifindex 1) is in every network namespace, and is no ppsim device.
	Error n = sim_kernel_error(-ENODEV, "no ppsim device with this ifindex in this namespace",
				   "dev-set", 1);
	CHECK(n.code() == Errc::NoSuchDevice);
	CHECK(to_string(n.code()) == "no-such-device");
	CHECK_THAT(n.what(), Catch::StartsWith("lo is not a ppsim device; kernel:") &&
				     Catch::Contains("; kernel: no ppsim device"));

	Error p = sim_kernel_error(-EPERM, "", "dev-new", 0);
	CHECK(p.code() == Errc::Permission);
	CHECK(std::string(p.what()) == "ppsim dev-new needs CAP_NET_ADMIN: run it as root");

	Error v = sim_kernel_error(-EINVAL, "frame size must be 60..MTU+14 bytes", "gen-start", 1);
	CHECK(v.code() == Errc::InvalidArgument);
	CHECK(std::string(v.what()) ==
	      "ppsim gen-start: the kernel refused the request: frame size must be 60..MTU+14 bytes");

	// Without a device in the request, ENODEV is just an error.
	CHECK(sim_kernel_error(-ENODEV, "", "dev-get", 0).code() == Errc::Kernel);
}

TEST_CASE("libppkit's messages say what failed and why, not what a front end should do",
	  "[error]")
{
	// ppctl and ppctld add their own advice (their commands and flags):
	// none of libppkit's string literals names ppctl, a flag or an action.
	const std::regex literal(R"re("(?:[^"\\]|\\.)*")re");
	const std::regex front_end(R"re(\bppctl\b|(^|[ '(])--[a-z]|watching)re");
	std::vector<std::string> found;
	for (const auto &f : std::filesystem::directory_iterator(PPKIT_LIB_SOURCES)) {
		if (f.path().extension() != ".cpp")
			continue;
		std::ifstream in(f.path());
		std::string line;
		for (int n = 1; std::getline(in, line); n++) {
			auto start = line.find_first_not_of(" \t");
			if (start != std::string::npos && line.compare(start, 2, "//") == 0)
				continue;
			for (std::sregex_iterator m(line.begin(), line.end(), literal), end; m != end; ++m)
				if (std::regex_search(m->str(), front_end))
					found.push_back(f.path().filename().string() + ":" +
							std::to_string(n) + ": " + m->str());
		}
	}
	INFO(std::accumulate(found.begin(), found.end(), std::string(),
			     [](std::string a, const std::string &b) { return a + b + "\n"; }));
	CHECK(found.empty());

	// And the errors it builds, end to end.
	for (const Error &e : {family_missing(Source::Netdev),
			       kernel_error(-ENOENT, "no such pool", {Source::Netdev, "page-pool-get", 7}),
			       sim_kernel_error(-ENODEV, "", "dev-set", 1)}) {
		INFO(e.what());
		CHECK_FALSE(std::regex_search(std::string(e.what()), front_end));
	}
}
