// SPDX-License-Identifier: GPL-2.0
// ppctl's command line: what it accepts, and how it refuses (exit 1, a
// message, nothing asked of the kernel).
#include <catch2/catch.hpp>

#include <sstream>

#include "cli.h"

using namespace ppctl;

namespace {

struct Result {
	Parsed parsed;
	std::string out, err;
};

Result parse_args(std::vector<const char *> args)
{
	args.insert(args.begin(), "ppctl");
	std::ostringstream out, err;
	Parsed p = parse(static_cast<int>(args.size()), args.data(), out, err);
	return {p, out.str(), err.str()};
}

struct RunResult {
	int exit;
	std::string out, err;
};

RunResult run_args(std::vector<const char *> args)
{
	args.insert(args.begin(), "ppctl");
	std::ostringstream out, err;
	int rc = run(static_cast<int>(args.size()), args.data(), out, err);
	return {rc, out.str(), err.str()};
}

void refused(std::vector<const char *> args, const std::string &why)
{
	INFO("ppctl " << [&] {
		std::string s;
		for (auto *a : args)
			s += std::string(a) + " ";
		return s;
	}());
	auto r = parse_args(args);
	CHECK_FALSE(r.parsed.options);
	CHECK(r.parsed.exit == kExitUsage);
	CHECK_THAT(r.err, Catch::Contains(why));
	CHECK(r.out.empty());
	// run() stops there too: exit 1 before any netlink.
	CHECK(run_args(args).exit == kExitUsage);
}

}  // namespace

TEST_CASE("commands and their options", "[cli]")
{
	SECTION("list")
	{
		auto r = parse_args({"list"});
		REQUIRE(r.parsed.options);
		CHECK(r.parsed.options->command == Command::List);
		CHECK(r.parsed.options->source == SourceSel::Ppkit);
	}
	SECTION("stats with ids, a device and an interval")
	{
		auto r = parse_args({"stats", "1", "7", "--dev", "lo", "--interval", "0.5", "--count", "3"});
		REQUIRE(r.parsed.options);
		const Options &o = *r.parsed.options;
		CHECK(o.command == Command::Stats);
		CHECK(o.ids == std::vector<std::uint32_t>{1, 7});
		CHECK(o.dev == "lo");
		CHECK(o.interval == 0.5);
		CHECK(o.count == 3u);
	}
	SECTION("global flags before or after the command")
	{
		auto a = parse_args({"--json", "--source", "all", "stats"});
		auto b = parse_args({"stats", "--json", "-s", "all"});
		REQUIRE(a.parsed.options);
		REQUIRE(b.parsed.options);
		CHECK(a.parsed.options->json);
		CHECK(b.parsed.options->json);
		CHECK(b.parsed.options->source == SourceSel::All);
		CHECK(parse_args({"list", "--raw"}).parsed.options->raw);
	}
	SECTION("set")
	{
		auto r = parse_args({"set", "4", "--ring-size", "32768", "--refill-batch", "1"});
		REQUIRE(r.parsed.options);
		CHECK(r.parsed.options->pool == 4);
		CHECK(r.parsed.options->ring_size == 32768u);
		CHECK(r.parsed.options->refill_batch == 1u);
		auto s = parse_args({"set", "4", "--refill-batch", "64"});
		REQUIRE(s.parsed.options);
		CHECK_FALSE(s.parsed.options->ring_size);
	}
	SECTION("monitor")
	{
		auto r = parse_args({"monitor", "--json", "--count", "2"});
		REQUIRE(r.parsed.options);
		CHECK(r.parsed.options->command == Command::Monitor);
		CHECK(r.parsed.options->count == 2u);
	}
}

TEST_CASE("bad pool ids", "[cli]")
{
	refused({"stats", "abc"}, "bad pool id 'abc': expected 1..4294967295 (see ppctl list)");
	refused({"stats", "0"}, "bad pool id '0'");	// ids start at 1
	refused({"stats", "1", "x2"}, "bad pool id 'x2'");
	refused({"stats", "-1"}, "pool id");
	refused({"stats", "4294967296"}, "bad pool id '4294967296'");
	refused({"set", "1.5", "--ring-size", "8"}, "bad pool id '1.5'");
	refused({"set", "--ring-size", "8"}, "POOL_ID is required");
}

TEST_CASE("stats --count needs --interval", "[cli]")
{
	refused({"stats", "--count", "3"}, "--count requires --interval");
	refused({"stats", "--interval", "0"}, "--interval");
	refused({"stats", "--interval", "-1"}, "interval");
	refused({"stats", "--interval", "1", "--count", "0"}, "bad count '0'");
	refused({"monitor", "--count", "0"}, "bad count '0'");
}

TEST_CASE("ring size and refill batch limits", "[cli]")
{
	refused({"set", "1", "--ring-size", "0"}, "bad ring size '0': expected 1..32768");
	refused({"set", "1", "--ring-size", "40000"}, "bad ring size '40000': expected 1..32768");
	refused({"set", "1", "--refill-batch", "0"}, "bad refill batch '0': expected 1..64");
	refused({"set", "1", "--refill-batch", "65"}, "bad refill batch '65': expected 1..64");
	refused({"set", "1"}, "give --ring-size N and/or --refill-batch N");
	refused({"--source", "netdev", "set", "1", "--ring-size", "8"}, "only ppkit pools");
}

TEST_CASE("other usage errors", "[cli]")
{
	refused({}, "a command is required: list, stats, set or monitor");
	refused({"frobnicate"}, "not expected: frobnicate");
	refused({"list", "--bogus"}, "--bogus");
	refused({"--source", "bsd", "list"}, "bsd");
	refused({"-s", "all", "stats", "3"}, "pool ids are per source");
}

TEST_CASE("help fits a screen and exits 0", "[cli]")
{
	auto r = parse_args({"--help"});
	CHECK_FALSE(r.parsed.options);
	CHECK(r.parsed.exit == kExitOk);
	CHECK_THAT(r.out, Catch::Contains("list") && Catch::Contains("stats") &&
				  Catch::Contains("set") && Catch::Contains("monitor") &&
				  Catch::Contains("Exit status"));
	auto lines = std::count(r.out.begin(), r.out.end(), '\n');
	CHECK(lines <= 24);
	for (const char *sub : {"list", "stats", "set", "monitor"}) {
		auto s = parse_args({sub, "--help"});
		CHECK(s.parsed.exit == kExitOk);
		CHECK(std::count(s.out.begin(), s.out.end(), '\n') <= 24);
	}
	CHECK_THAT(parse_args({"set", "--help"}).out, Catch::Contains("--ring-size"));
}

TEST_CASE("a device that does not exist is a usage error", "[cli][host]")
{
	auto r = run_args({"stats", "--dev", "ppkit-no-such-if0"});
	CHECK(r.exit == kExitUsage);
	CHECK_THAT(r.err, Catch::Contains("no interface 'ppkit-no-such-if0'"));
}
