// SPDX-License-Identifier: GPL-2.0
// Errors say what went wrong and what to do next.
#include <catch2/catch.hpp>

#include <cerrno>

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

TEST_CASE("ENOENT for a pool names it and points at ppctl list", "[error]")
{
	Error e = kernel_error(-ENOENT, "", {Source::Ppkit, "stats-get", 42});
	CHECK(e.code() == Errc::NoSuchPool);
	CHECK(std::string(e.what()) == "no pool 42 (see ppctl list)");
	Error n = kernel_error(-ENOENT, "", {Source::Netdev, "page-pool-get", 7});
	CHECK(std::string(n.what()) == "no pool 7 (see ppctl list --source netdev)");
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

TEST_CASE("ppsim errors say what to do", "[error][sim]")
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
	CHECK_THAT(n.what(), Catch::StartsWith("lo is not a ppsim device (see ppctl sim list)") &&
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
