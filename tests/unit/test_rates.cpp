// SPDX-License-Identifier: GPL-2.0
// The two rates of Documentation/stats.rst, over windows, with resets.
#include <catch2/catch.hpp>

#include <cmath>

#include "ppkit/rates.h"

using namespace ppkit;
using namespace std::chrono_literals;

namespace {

struct Traffic {
	std::uint64_t from_cache = 0, from_ring = 0, from_stack = 0, from_alloc = 0;
	std::uint64_t cached = 0, ring = 0;			// recycle_cached, recycle_ring
	std::uint64_t returned = 0, reclaimed = 0, orphaned = 0;
	std::uint64_t allocated = 0, released = 0;
	std::uint64_t inflight = 0;
};

Sample sample(const Traffic &t, std::chrono::steady_clock::duration at,
	      std::uint64_t created = 1000, std::uint32_t id = 1)
{
	Sample s;
	s.pool.id = id;
	s.pool.created_ns = created;
	s.stats.pool_id = id;
	s.stats.set(Counter::PagesFromCache, t.from_cache);
	s.stats.set(Counter::PagesFromRing, t.from_ring);
	s.stats.set(Counter::PagesFromStack, t.from_stack);
	s.stats.set(Counter::PagesFromAlloc, t.from_alloc);
	s.stats.set(Counter::RecycleCached, t.cached);
	s.stats.set(Counter::RecycleRing, t.ring);
	s.stats.set(Counter::PagesReturned, t.returned);
	s.stats.set(Counter::PagesReclaimed, t.reclaimed);
	s.stats.set(Counter::PagesOrphaned, t.orphaned);
	s.stats.set(Counter::PagesAllocated, t.allocated);
	s.stats.set(Counter::PagesReleased, t.released);
	s.stats.set(Counter::Inflight, t.inflight);
	s.taken = std::chrono::steady_clock::time_point(at);
	s.realtime_ns = created + static_cast<std::uint64_t>(
					  std::chrono::duration_cast<std::chrono::nanoseconds>(at).count());
	return s;
}

}  // namespace

TEST_CASE("hit and recycle rates over a window", "[rates]")
{
	Traffic a{.from_cache = 100, .from_ring = 50, .from_stack = 10, .from_alloc = 40,
		  .cached = 120, .ring = 60, .returned = 170, .reclaimed = 10, .orphaned = 0,
		  .allocated = 64, .released = 0, .inflight = 20};
	Traffic b = a;
	// In the window: 1000 pages served, 900 from recycled stock (600 cache,
	// 250 ring, 50 stack), 100 fresh; 1000 pages left the driver (950
	// returned, 40 reclaimed, 10 orphaned), 800 into the cache and 150 into
	// the ring, 50 released.
	b.from_cache += 600;
	b.from_ring += 250;
	b.from_stack += 50;
	b.from_alloc += 100;
	b.cached += 800;
	b.ring += 150;
	b.returned += 950;
	b.reclaimed += 40;
	b.orphaned += 10;
	b.allocated += 100;
	b.released += 50;
	b.inflight = 5;	// a gauge may go down: not a reset

	Window w = window(sample(a, 10s), sample(b, 12s));
	CHECK_FALSE(w.reset);
	CHECK(w.seconds == Approx(2.0));
	REQUIRE(w.hit);
	CHECK(*w.hit == Approx(0.9));
	REQUIRE(w.recycle);
	CHECK(*w.recycle == Approx(0.95));
	CHECK(pages_served(w.delta) == 1000u);
	CHECK(pages_left_driver(w.delta) == 1000u);
	CHECK(w.served_per_second() == Approx(500.0));
	CHECK(w.recycled_per_second() == Approx(475.0));
	CHECK(w.per_second(Counter::PagesAllocated) == Approx(50.0));
	CHECK(w.per_second(Counter::PagesReleased) == Approx(25.0));
	CHECK_FALSE(w.per_second(Counter::Inflight));	// gauges have no rate
	CHECK_FALSE(w.delta.has(Counter::Inflight));
	CHECK_FALSE(w.per_second(Counter::PagesLent));	// not reported
}

TEST_CASE("a window without pages has no rate, not NaN", "[rates]")
{
	Traffic t{.from_cache = 5, .from_ring = 5, .from_stack = 0, .from_alloc = 5,
		  .cached = 5, .ring = 5, .returned = 10};
	Window w = window(sample(t, 1s), sample(t, 2s));
	CHECK_FALSE(w.reset);
	CHECK_FALSE(w.hit);
	CHECK_FALSE(w.recycle);
	CHECK(w.served_per_second() == Approx(0.0));

	SECTION("pages served but none left the driver")
	{
		Traffic u = t;
		u.from_alloc += 10;
		Window v = window(sample(t, 1s), sample(u, 2s));
		REQUIRE(v.hit);
		CHECK(*v.hit == 0.0);
		CHECK_FALSE(v.recycle);
	}
	SECTION("a fresh pool: since creation")
	{
		Window c = since_creation(sample(Traffic{}, 0s));
		CHECK_FALSE(c.hit);
		CHECK_FALSE(c.recycle);
		CHECK(c.seconds == 0);
		CHECK_FALSE(c.served_per_second());
	}
}

TEST_CASE("a counter that went down resets the window", "[rates]")
{
	Traffic a{.from_cache = 1000, .from_ring = 10, .from_alloc = 64, .cached = 900,
		  .returned = 1000, .allocated = 64};
	Traffic b{.from_cache = 3, .from_ring = 0, .from_alloc = 64, .cached = 2,
		  .returned = 3, .allocated = 64};	// module reloaded, same pool id
	Window w = window(sample(a, 1s), sample(b, 2s));
	CHECK(w.reset);
	CHECK_FALSE(w.hit);
	CHECK_FALSE(w.recycle);
	CHECK_FALSE(w.served_per_second());
	CHECK_FALSE(w.per_second(Counter::PagesAllocated));
	CHECK(w.delta.present.none());
}

TEST_CASE("a pool re-created under the same id resets the window", "[rates]")
{
	Traffic a{.from_cache = 10, .from_alloc = 10, .cached = 10, .returned = 10};
	Traffic b{.from_cache = 20, .from_alloc = 20, .cached = 20, .returned = 20};
	Window w = window(sample(a, 1s, 1000), sample(b, 2s, 5000));
	CHECK(w.reset);
	CHECK_FALSE(w.hit);

	SECTION("unknown creation times do not reset by themselves")
	{
		Sample x = sample(a, 1s), y = sample(b, 2s);
		x.pool.created_ns.reset();
		Window v = window(x, y);
		CHECK_FALSE(v.reset);
		CHECK(v.hit == Approx(0.5));
	}
	SECTION("another pool is never a window")
	{
		CHECK(window(sample(a, 1s, 1000, 1), sample(b, 2s, 1000, 2)).reset);
		Sample y = sample(b, 2s);
		y.pool.source = Source::Netdev;
		CHECK(window(sample(a, 1s), y).reset);
	}
}

TEST_CASE("rates are never negative nor above one", "[rates]")
{
	// Counters read while the pool runs: the numerator may lead by a page.
	Delta d;
	d.set(Counter::PagesFromCache, 11);
	d.set(Counter::PagesFromRing, 0);
	d.set(Counter::PagesFromStack, 0);
	d.set(Counter::PagesFromAlloc, 0);
	CHECK(allocation_hit_rate(d) == 1.0);
	Window w;
	w.seconds = 0;	// unknown length: no per-second values
	w.delta = d;
	CHECK_FALSE(w.per_second(Counter::PagesFromCache));
	Traffic t{.from_cache = 1};
	Sample s = sample(t, 1s);
	Sample back = s;
	back.taken -= 5s;	// taken "before": no negative length
	CHECK(window(s, back).seconds == 0);
}

TEST_CASE("cumulative rates since the pool was created", "[rates]")
{
	Traffic t{.from_cache = 700, .from_ring = 200, .from_stack = 0, .from_alloc = 100,
		  .cached = 600, .ring = 300, .returned = 990, .reclaimed = 0, .orphaned = 10,
		  .allocated = 100, .released = 90};
	Window w = since_creation(sample(t, 4s));
	CHECK_FALSE(w.reset);
	CHECK(w.seconds == Approx(4.0));
	CHECK(w.hit == Approx(0.9));
	CHECK(w.recycle == Approx(0.9));
	CHECK(w.served_per_second() == Approx(250.0));
}

TEST_CASE("upstream counters alone give no exact rate", "[rates]")
{
	Sample a, b;
	a.pool.id = b.pool.id = 3;
	a.pool.source = b.pool.source = Source::Netdev;
	a.stats.set(Counter::AllocFast, 100);
	a.stats.set(Counter::RecycleCached, 90);
	b.stats.set(Counter::AllocFast, 200);
	b.stats.set(Counter::RecycleCached, 180);
	b.taken = a.taken + 1s;
	Window w = window(a, b);
	CHECK_FALSE(w.reset);
	CHECK_FALSE(w.hit);
	CHECK_FALSE(w.recycle);
	CHECK(w.per_second(Counter::AllocFast) == Approx(100.0));
	CHECK_FALSE(w.served_per_second());
}

TEST_CASE("rounds: windows against the round before, gone pools forgotten", "[rates]")
{
	auto at = [](std::uint32_t id, Source src, std::uint64_t served, int t) {
		Sample s;
		s.pool.id = id;
		s.pool.source = src;
		s.stats.pool_id = id;
		s.stats.set(Counter::PagesFromCache, served);
		s.stats.set(Counter::PagesFromRing, 0);
		s.stats.set(Counter::PagesFromStack, 0);
		s.stats.set(Counter::PagesFromAlloc, 0);
		s.taken = std::chrono::steady_clock::time_point(std::chrono::seconds(t));
		return s;
	};
	Rounds r;
	auto first = r.next({at(1, Source::Ppkit, 0, 0), at(1, Source::Netdev, 0, 0),
			     at(2, Source::Ppkit, 0, 0)});
	REQUIRE(first.size() == 3);
	for (const auto &row : first)
		CHECK_FALSE(row.window);
	CHECK(r.pools() == 3);
	// pool 2 destroyed, pool 3 new: 1 and netdev 1 have windows
	auto second = r.next({at(1, Source::Ppkit, 100, 1), at(1, Source::Netdev, 50, 1),
			      at(3, Source::Ppkit, 0, 1)});
	REQUIRE(second.size() == 3);
	REQUIRE(second[0].window);
	CHECK(second[0].window->served_per_second() == Approx(100));
	REQUIRE(second[1].window);
	CHECK(second[1].window->served_per_second() == Approx(50));
	CHECK_FALSE(second[2].window);
	CHECK(r.pools() == 3);
	// a pool id 2 re-created later is new, not a window from the old one
	auto third = r.next({at(2, Source::Ppkit, 7, 2)});
	REQUIRE(third.size() == 1);
	CHECK_FALSE(third[0].window);
	CHECK(r.pools() == 1);
	// 10,000 rounds of a pool each: the map holds the last round only
	for (std::uint32_t i = 10; i < 10010; i++)
		r.next({at(i, Source::Ppkit, 0, 3)});
	CHECK(r.pools() == 1);
}
