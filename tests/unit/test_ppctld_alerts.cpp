// SPDX-License-Identifier: GPL-2.0
// ppctld's alert rules (tools/ppctld/alerts.h): each raises once when it
// starts and clears once when it ends.
#include <catch2/catch.hpp>

#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

#include "alerts.h"

using namespace ppctld;

namespace {

AlertConfig config(double hit_below = 0.5, double hit_for_s = 30, double leak_for_s = 60,
		   std::uint64_t leak_min_pages = 64)
{
	AlertConfig c;
	c.hit_below = hit_below;
	c.hit_for_s = hit_for_s;
	c.leak_for_s = leak_for_s;
	c.leak_min_pages = leak_min_pages;
	return c;
}

// The transitions a rule reported, with the time of each.
using Log = std::vector<std::pair<double, Transition>>;

template <typename Rule, typename V>
Log feed(Rule &rule, const AlertConfig &c, const std::vector<std::pair<double, V>> &samples)
{
	Log log;
	for (const auto &[t, v] : samples) {
		Transition tr = rule.update(t, v, c);
		if (tr != Transition::None)
			log.emplace_back(t, tr);
	}
	return log;
}

// One hit-rate sample a second from @from to @to (inclusive).
std::vector<std::pair<double, std::optional<double>>> hits(int from, int to,
							   std::optional<double> v)
{
	std::vector<std::pair<double, std::optional<double>>> s;
	for (int t = from; t <= to; t++)
		s.emplace_back(t, v);
	return s;
}

// In-flight pages a second from @from to @to, v(t) = @base + @slope * (t - @from).
std::vector<std::pair<double, std::optional<std::uint64_t>>> levels(int from, int to,
								     std::uint64_t base,
								     std::uint64_t slope = 0)
{
	std::vector<std::pair<double, std::optional<std::uint64_t>>> s;
	for (int t = from; t <= to; t++)
		s.emplace_back(t, base + slope * static_cast<std::uint64_t>(t - from));
	return s;
}

const Log kNone;

Log one(double t, Transition tr)
{
	return {{t, tr}};
}

}  // namespace

TEST_CASE("transitions have names", "[ppctld][alerts]")
{
	CHECK(to_string(Transition::None) == "none");
	CHECK(to_string(Transition::Raised) == "raised");
	CHECK(to_string(Transition::Cleared) == "cleared");
}

TEST_CASE("low-hit-rate: raised once after hit_for_s below the threshold", "[ppctld][alerts]")
{
	const AlertConfig c = config(0.5, 30);
	HitRateRule r;
	CHECK_FALSE(r.active());
	CHECK_FALSE(r.since());

	CHECK(feed(r, c, hits(100, 129, 0.2)) == kNone);
	CHECK_FALSE(r.active());
	REQUIRE(r.since());
	CHECK(*r.since() == 100);
	CHECK(feed(r, c, hits(130, 130, 0.2)) == one(130, Transition::Raised));
	CHECK(r.active());
	// Still below: nothing more.
	CHECK(feed(r, c, hits(131, 400, 0.1)) == kNone);
	CHECK(r.active());
	CHECK(*r.since() == 100);
}

TEST_CASE("low-hit-rate: a rate that recovers in time raises nothing", "[ppctld][alerts]")
{
	const AlertConfig c = config(0.5, 30);
	HitRateRule r;
	CHECK(feed(r, c, hits(0, 20, 0.3)) == kNone);
	CHECK(feed(r, c, hits(21, 21, 0.6)) == kNone);
	CHECK_FALSE(r.since());
	// The run starts again from the next low sample.
	CHECK(feed(r, c, hits(22, 51, 0.3)) == kNone);
	CHECK(feed(r, c, hits(52, 52, 0.3)) == one(52, Transition::Raised));

	// Healthy all along.
	HitRateRule ok;
	CHECK(feed(ok, c, hits(0, 300, 0.95)) == kNone);
	CHECK_FALSE(ok.active());
	CHECK_FALSE(ok.since());
}

TEST_CASE("low-hit-rate: samples without a rate neither start nor clear", "[ppctld][alerts]")
{
	const AlertConfig c = config(0.5, 30);
	HitRateRule r;
	// An idle pool: no rate for a long time starts nothing.
	CHECK(feed(r, c, hits(0, 300, std::nullopt)) == kNone);
	CHECK_FALSE(r.since());
	CHECK_FALSE(r.active());
	// Low from 301: raised 30 s later, not earlier.
	CHECK(feed(r, c, hits(301, 330, 0.1)) == kNone);
	CHECK(feed(r, c, hits(331, 331, 0.1)) == one(331, Transition::Raised));
	// Idle again while active: still active, no transition.
	CHECK(feed(r, c, hits(332, 600, std::nullopt)) == kNone);
	CHECK(r.active());
	// A good rate clears it.
	CHECK(feed(r, c, hits(601, 601, 0.9)) == one(601, Transition::Cleared));

	// An idle sample inside a low run does not restart it either.
	HitRateRule q;
	CHECK(feed(q, c, hits(0, 10, 0.1)) == kNone);
	CHECK(feed(q, c, hits(11, 20, std::nullopt)) == kNone);
	REQUIRE(q.since());
	CHECK(*q.since() == 0);
	CHECK(feed(q, c, hits(21, 30, 0.1)) == one(30, Transition::Raised));
}

TEST_CASE("low-hit-rate: cleared once when the rate is back at the threshold",
	  "[ppctld][alerts]")
{
	const AlertConfig c = config(0.5, 30);
	HitRateRule r;
	CHECK(feed(r, c, hits(0, 30, 0.0)) == one(30, Transition::Raised));
	CHECK(feed(r, c, hits(31, 31, 0.5)) == one(31, Transition::Cleared));
	CHECK_FALSE(r.active());
	CHECK_FALSE(r.since());
	CHECK(feed(r, c, hits(32, 100, 0.8)) == kNone);
	// Low again: a new alert, after a new hit_for_s.
	CHECK(feed(r, c, hits(101, 131, 0.4)) == one(131, Transition::Raised));
	CHECK(feed(r, c, hits(132, 140, 1.0)) == one(132, Transition::Cleared));
}

TEST_CASE("low-hit-rate: hit_for_s 0 raises at the first low sample", "[ppctld][alerts]")
{
	const AlertConfig c = config(0.5, 0);
	HitRateRule r;
	CHECK(feed(r, c, hits(5, 9, 0.4)) == one(5, Transition::Raised));
}

TEST_CASE("low-hit-rate: threshold 0 disables the rule", "[ppctld][alerts]")
{
	const AlertConfig off = config(0, 30);
	HitRateRule r;
	CHECK(feed(r, off, hits(0, 300, 0.0)) == kNone);
	CHECK_FALSE(r.active());
	CHECK_FALSE(r.since());

	// Disabling it (SIGHUP) clears an active alert, once.
	const AlertConfig on = config(0.5, 30);
	HitRateRule a;
	CHECK(feed(a, on, hits(0, 30, 0.1)) == one(30, Transition::Raised));
	CHECK(feed(a, off, hits(31, 31, 0.1)) == one(31, Transition::Cleared));
	CHECK_FALSE(a.active());
	CHECK(feed(a, off, hits(32, 100, 0.1)) == kNone);
	// Even a sample without a rate clears it.
	HitRateRule b;
	CHECK(feed(b, on, hits(0, 30, 0.1)) == one(30, Transition::Raised));
	CHECK(feed(b, off, hits(31, 31, std::nullopt)) == one(31, Transition::Cleared));
	// Enabled again, it starts from nothing.
	CHECK(feed(a, on, hits(101, 130, 0.1)) == kNone);
	CHECK(feed(a, on, hits(131, 131, 0.1)) == one(131, Transition::Raised));
}

TEST_CASE("leak-suspect: a stable pool never alerts", "[ppctld][alerts]")
{
	const AlertConfig c = config();
	LeakRule r;
	CHECK(feed(r, c, levels(0, 3600, 512)) == kNone);
	CHECK_FALSE(r.active());
	LeakRule z;
	CHECK(feed(z, c, levels(0, 600, 0)) == kNone);
}

TEST_CASE("leak-suspect: a pool that fills up once, then stays flat", "[ppctld][alerts]")
{
	const AlertConfig c = config();
	SECTION("in one step")
	{
		LeakRule r;
		CHECK(feed(r, c, levels(0, 0, 0)) == kNone);
		CHECK(feed(r, c, levels(1, 1, 4096)) == kNone);
		CHECK(feed(r, c, levels(2, 3600, 4096)) == kNone);
		CHECK_FALSE(r.active());
	}
	SECTION("over a few seconds")
	{
		LeakRule r;
		CHECK(feed(r, c, levels(0, 20, 0, 200)) == kNone);	// 0 .. 4000 in 20 s
		CHECK(feed(r, c, levels(21, 3600, 4000)) == kNone);
		CHECK_FALSE(r.active());
	}
	SECTION("a sawtooth: fill, drain, fill")
	{
		LeakRule r;
		for (int k = 0; k < 20; k++) {
			int t0 = k * 60;
			CHECK(feed(r, c, levels(t0, t0 + 40, 100, 50)) == kNone);
			CHECK(feed(r, c, levels(t0 + 41, t0 + 59, 10)) == kNone);
		}
		CHECK_FALSE(r.active());
	}
}

TEST_CASE("leak-suspect: a steady rise raises exactly once", "[ppctld][alerts]")
{
	const AlertConfig c = config(0.5, 30, 60, 64);
	LeakRule r;
	// +10 pages a second from t = 1000: 600 pages after 60 s.
	Log log = feed(r, c, levels(1000, 1300, 100, 10));
	CHECK(log == one(1060, Transition::Raised));
	CHECK(r.active());
	// It keeps rising: nothing new.
	CHECK(feed(r, c, levels(1301, 2000, 3110, 10)) == kNone);
	CHECK(r.active());
}

TEST_CASE("leak-suspect: a slower sampling interval", "[ppctld][alerts]")
{
	const AlertConfig c = config(0.5, 30, 60, 64);
	LeakRule r;
	// A sample every 15 s, +100 pages each: raised at the first sample 60 s
	// after the rise began (the rise began at the sample before it).
	Log log;
	for (int i = 0; i <= 10; i++) {
		Transition tr = r.update(15.0 * i, std::optional<std::uint64_t>(1000 + 100 * i), c);
		if (tr != Transition::None)
			log.emplace_back(15.0 * i, tr);
	}
	CHECK(log == one(60, Transition::Raised));
}

TEST_CASE("leak-suspect: an equal sample restarts the run without clearing",
	  "[ppctld][alerts]")
{
	const AlertConfig c = config(0.5, 30, 60, 64);
	SECTION("while active")
	{
		LeakRule r;
		CHECK(feed(r, c, levels(0, 60, 0, 10)) == one(60, Transition::Raised));
		CHECK(feed(r, c, levels(61, 61, 600)) == kNone);	// same as at t = 60
		CHECK(r.active());
		CHECK(feed(r, c, levels(62, 300, 610, 10)) == kNone);
		CHECK(r.active());
	}
	SECTION("before it fired")
	{
		LeakRule r;
		CHECK(feed(r, c, levels(0, 40, 0, 10)) == kNone);	// up to 400
		CHECK(feed(r, c, levels(41, 41, 400)) == kNone);	// flat: restart
		// Rising again from t = 41: 59 s later is not enough...
		CHECK(feed(r, c, levels(42, 100, 410, 10)) == kNone);
		CHECK_FALSE(r.active());
		// ...60 s is.
		CHECK(feed(r, c, levels(101, 101, 1000)) == one(101, Transition::Raised));
	}
}

TEST_CASE("leak-suspect: a drop clears, once", "[ppctld][alerts]")
{
	const AlertConfig c = config(0.5, 30, 60, 64);
	LeakRule r;
	CHECK(feed(r, c, levels(0, 60, 0, 10)) == one(60, Transition::Raised));
	CHECK(feed(r, c, levels(61, 61, 599)) == one(61, Transition::Cleared));
	CHECK_FALSE(r.active());
	CHECK(feed(r, c, levels(62, 62, 500)) == kNone);
	CHECK(feed(r, c, levels(63, 63, 100)) == kNone);
	// A new rise is a new alert.
	CHECK(feed(r, c, levels(64, 124, 100, 10)) == one(124, Transition::Raised));
}

TEST_CASE("leak-suspect: growth smaller than leak_min_pages does not alert",
	  "[ppctld][alerts]")
{
	const AlertConfig c = config(0.5, 30, 60, 64);
	LeakRule r;
	// One page a second: 63 pages after 63 s.
	CHECK(feed(r, c, levels(0, 63, 1000, 1)) == kNone);
	CHECK_FALSE(r.active());
	// The 64th page does it.
	CHECK(feed(r, c, levels(64, 64, 1064)) == one(64, Transition::Raised));

	LeakRule slow;
	CHECK(feed(slow, c, levels(0, 1000, 1000, 0)) == kNone);
	const AlertConfig big = config(0.5, 30, 60, 100000);
	LeakRule b;
	CHECK(feed(b, big, levels(0, 3600, 0, 10)) == kNone);	// 36,000 pages
}

TEST_CASE("leak-suspect: samples without in-flight pages change nothing", "[ppctld][alerts]")
{
	const AlertConfig c = config(0.5, 30, 60, 64);
	LeakRule r;
	CHECK(feed(r, c, levels(0, 60, 0, 10)) == one(60, Transition::Raised));
	CHECK(r.update(61, std::nullopt, c) == Transition::None);
	CHECK(r.active());
	CHECK(feed(r, c, levels(62, 62, 0)) == one(62, Transition::Cleared));
}

TEST_CASE("leak-suspect: leak_for_s 0 disables the rule", "[ppctld][alerts]")
{
	const AlertConfig off = config(0.5, 30, 0, 64);
	LeakRule r;
	CHECK(feed(r, off, levels(0, 600, 0, 100)) == kNone);
	CHECK_FALSE(r.active());

	const AlertConfig on = config(0.5, 30, 60, 64);
	LeakRule a;
	CHECK(feed(a, on, levels(0, 60, 0, 10)) == one(60, Transition::Raised));
	CHECK(feed(a, off, levels(61, 61, 610)) == one(61, Transition::Cleared));
	CHECK_FALSE(a.active());
	CHECK(feed(a, off, levels(62, 200, 620, 10)) == kNone);
}
