// SPDX-License-Identifier: GPL-2.0
// libppkit against the running kernel of this machine: the upstream netdev
// family (Linux >= 6.8) with whatever pools and ops it has, and ppkit's own
// family, which is there only if pp_backport is loaded.  The netdev cases
// are registered by main() only on kernels that have the family (host.h).
#include <catch2/catch.hpp>

#include <sstream>

#include "cli.h"
#include "host.h"
#include "ppkit/client.h"
#include "ppkit/sim.h"

#include <nlohmann/json.hpp>

using namespace ppkit;

namespace {

void netdev_backend()
{
	Client c(Source::Netdev);
	CHECK(c.source() == Source::Netdev);

	std::vector<Pool> pools;
	REQUIRE_NOTHROW(pools = c.pools());
	for (const Pool &p : pools) {
		CHECK(p.source == Source::Netdev);
		CHECK(p.id != 0);
	}

	bool has = false;
	REQUIRE_NOTHROW(has = c.has_stats());
	std::vector<Sample> samples;
	REQUIRE_NOTHROW(samples = c.sample());
	CHECK(samples.size() >= pools.size() - std::min<std::size_t>(pools.size(), 2));
	if (!has) {
		// No page-pool-stats-get here: said cleanly, not as a netlink error.
		for (const Sample &s : samples)
			CHECK(s.stats.empty());
		try {
			c.stats();
			FAIL("stats() without a stats op must throw");
		} catch (const Error &e) {
			CHECK(e.code() == Errc::NotSupported);
			CHECK_THAT(e.what(), Catch::Contains("no page_pool stats"));
		}
	} else {
		REQUIRE_NOTHROW(c.stats());
	}
	// Pools come and go: an id that does not exist is named in the error.
	try {
		c.pool(0xfffffff0u);
		FAIL("pool 0xfffffff0 exists?");
	} catch (const Error &e) {
		CHECK(e.code() == Errc::NoSuchPool);
		CHECK_THAT(e.what(), Catch::Contains("no pool 4294967280"));
	}
	CHECK_THROWS_AS(c.set(1, {64, std::nullopt}), Error);
}

void ppctl_netdev_stats()
{
	const char *argv[] = {"ppctl", "--source", "netdev", "stats"};
	std::ostringstream out, err;
	CHECK(ppctl::run(4, argv, out, err) == ppctl::kExitOk);
	const char *jargv[] = {"ppctl", "--source", "netdev", "--json", "stats"};
	std::ostringstream jout, jerr;
	REQUIRE(ppctl::run(5, jargv, jout, jerr) == ppctl::kExitOk);
	CHECK_THAT(jout.str(), Catch::Contains("\"version\":1") && Catch::Contains("\"netdev\""));
}

void netdev_monitor()
{
	try {
		Monitor m(Source::Netdev);
		CHECK(m.fd() >= 0);
	} catch (const Error &e) {
		// Joining page-pool needs CAP_NET_ADMIN: fine for a user run.
		CHECK(e.code() == Errc::Permission);
	}
}

}  // namespace

std::vector<std::string> host::register_netdev_cases(const Catch::IConfig &config)
{
	struct Case {
		void (*fn)();
		const char *name;
	};
	static const Case cases[] = {
		{netdev_backend, "netdev backend on the running kernel"},
		{ppctl_netdev_stats, "ppctl --source netdev stats on the running kernel"},
		{netdev_monitor, "netdev notifications can be watched"},
	};
	// Any other error than a missing family: registered, and the cases fail on it.
	bool missing = false;
	try {
		Client c(Source::Netdev);
	} catch (const Error &e) {
		missing = e.code() == Errc::FamilyMissing;
	}
	std::vector<std::string> skipped;
	for (const Case &c : cases) {
		Catch::TestCase tc = Catch::makeTestCase(Catch::makeTestInvoker(c.fn), "",
							 Catch::NameAndTags{c.name, "[host]"},
							 CATCH_INTERNAL_LINEINFO);
		if (!missing)
			Catch::getMutableRegistryHub().registerTest(tc);
		else if (!Catch::filterTests({tc}, config.testSpec(), config).empty())
			skipped.push_back("SKIP: " + std::string(c.name) +
					  ": this kernel has no netdev netlink family (Linux >= 6.8)");
	}
	return skipped;
}

TEST_CASE("ppkit backend: present, or missing with the way to load it", "[host]")
{
	try {
		Client c(Source::Ppkit);
		CHECK_NOTHROW(c.pools());
		CHECK(c.has_stats());
	} catch (const Error &e) {
		REQUIRE(e.code() == Errc::FamilyMissing);
		CHECK_THAT(e.what(), Catch::StartsWith("pp_backport is not loaded: modprobe pp_backport"));
		const char *argv[] = {"ppctl", "list"};
		std::ostringstream out, err;
		CHECK(ppctl::run(2, argv, out, err) == ppctl::kExitKernel);
		CHECK(err.str() == "ppctl: pp_backport is not loaded: modprobe pp_backport "
				   "(or insmod kmod/pool/pp_backport.ko)\n");
	}
}

TEST_CASE("ppsim: present, or missing with the way to load it", "[host][sim]")
{
	const char *argv[] = {"ppctl", "sim", "list"};
	std::ostringstream out, err;
	int rc = ppctl::run(3, argv, out, err);
	try {
		SimClient sim;
		CHECK(rc == ppctl::kExitOk);
		CHECK_NOTHROW(sim.devices());
	} catch (const Error &e) {
		REQUIRE(e.code() == Errc::FamilyMissing);
		CHECK(rc == ppctl::kExitKernel);
		CHECK(out.str().empty());
		CHECK(err.str() == "ppctl: ppsim is not loaded: modprobe ppsim "
				   "(or insmod kmod/sim/ppsim.ko after kmod/pool/pp_backport.ko)\n");
		const char *jargv[] = {"ppctl", "sim", "list", "--json"};
		std::ostringstream jout, jerr;
		CHECK(ppctl::run(4, jargv, jout, jerr) == ppctl::kExitKernel);
		// Under --json the error is a document on stdout (bpftool's way).
		CHECK(jerr.str().empty());
		auto j = nlohmann::json::parse(jout.str());
		CHECK_THAT(j["error"].get<std::string>(), Catch::StartsWith("ppsim is not loaded"));
	}
}

TEST_CASE("ppctl xdp status of the loopback", "[host][xdp]")
{
	// Reading what is attached needs no privilege; lo has no native XDP.
	const char *argv[] = {"ppctl", "xdp", "status", "lo", "--json"};
	std::ostringstream out, err;
	REQUIRE(ppctl::run(5, argv, out, err) == ppctl::kExitOk);
	auto j = nlohmann::json::parse(out.str());
	CHECK(j["command"] == "xdp-status");
	CHECK(j["ifname"] == "lo");
	CHECK(j["ifindex"] == 1);
	CHECK(j["attached"].is_boolean());
}
