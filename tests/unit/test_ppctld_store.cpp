// SPDX-License-Identifier: GPL-2.0
// ppctld's store, fed with made-up pools, counters and notifications at
// explicit instants: no netlink, no clock.
#include <catch2/catch.hpp>

#include <chrono>
#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "config.h"
#include "store.h"

using namespace ppctld;
using namespace std::chrono_literals;
using ppkit::Counter;
using ppkit::Source;

namespace {

using Clock = Store::Clock;

constexpr std::uint64_t kEpochRealtime = 1'700'000'000'000'000'000ULL;

ppkit::Pool pool(std::uint32_t id, std::uint64_t created = 1000, Source src = Source::Ppkit)
{
	ppkit::Pool p;
	p.id = id;
	p.source = src;
	p.owner = "pp_poolgen";
	p.ifindex = 2;
	p.ifname = "eth0";
	p.queue = id % 4;
	p.created_ns = created;
	return p;
}

ppkit::Event event(ppkit::Event::Kind k, const ppkit::Pool &p)
{
	ppkit::Event e;
	e.kind = k;
	e.pool = p;
	return e;
}

// Cumulative counters of one pool, the ones the rates use.
struct Traffic {
	std::uint64_t from_cache = 0, from_ring = 0, from_stack = 0, from_alloc = 0;
	std::uint64_t cached = 0, ring = 0;	// recycle_cached, recycle_ring
	std::uint64_t returned = 0, reclaimed = 0, orphaned = 0;
	std::uint64_t released = 0;
	std::uint64_t inflight = 0;
	std::uint64_t alloc_fast = 0;
};

ppkit::Stats stats(std::uint32_t id, const Traffic &t)
{
	ppkit::Stats s;
	s.pool_id = id;
	s.set(Counter::AllocFast, t.alloc_fast);
	s.set(Counter::PagesFromCache, t.from_cache);
	s.set(Counter::PagesFromRing, t.from_ring);
	s.set(Counter::PagesFromStack, t.from_stack);
	s.set(Counter::PagesFromAlloc, t.from_alloc);
	s.set(Counter::RecycleCached, t.cached);
	s.set(Counter::RecycleRing, t.ring);
	s.set(Counter::PagesReturned, t.returned);
	s.set(Counter::PagesReclaimed, t.reclaimed);
	s.set(Counter::PagesOrphaned, t.orphaned);
	s.set(Counter::PagesReleased, t.released);
	s.set(Counter::Inflight, t.inflight);
	return s;
}

// The traffic of test_rates.cpp: from @a to @b, 1000 pages served of which
// 900 from recycled stock; 1000 left the driver, 950 of them recycled; 50
// released.
const Traffic kA{.from_cache = 100, .from_ring = 50, .from_stack = 10, .from_alloc = 40,
		 .cached = 120, .ring = 60, .returned = 170, .reclaimed = 10, .orphaned = 0,
		 .released = 0, .inflight = 20, .alloc_fast = 300};
const Traffic kB{.from_cache = 700, .from_ring = 300, .from_stack = 60, .from_alloc = 140,
		 .cached = 920, .ring = 210, .returned = 1120, .reclaimed = 50, .orphaned = 10,
		 .released = 50, .inflight = 25, .alloc_fast = 900};

// @t with @served more pages served, @hit of them from the cache, and as
// many returned and recycled.
Traffic more(Traffic t, std::uint64_t served, double hit, std::uint64_t inflight)
{
	auto h = static_cast<std::uint64_t>(static_cast<double>(served) * hit);
	t.from_cache += h;
	t.from_alloc += served - h;
	t.returned += served;
	t.cached += h;
	t.inflight = inflight;
	t.alloc_fast += served;
	return t;
}

Config config(double interval_s = 1, double history_s = 3600)
{
	Config c;
	c.interval_s = interval_s;
	c.history_s = history_s;
	return c;
}

// A store whose epoch is a fixed instant: samples are taken at epoch + N s.
// The epoch lies @back in the past, so history(since_s) (which counts back
// from now) sees them.
struct Fixture {
	explicit Fixture(const Config &c = config(), Clock::duration back = 0s)
		: epoch(Clock::now() - back), store(c, epoch, kEpochRealtime)
	{
	}
	Clock::time_point at(double s) const
	{
		return epoch + std::chrono::duration_cast<Clock::duration>(
				       std::chrono::duration<double>(s));
	}
	std::uint64_t realtime(double s) const
	{
		return kEpochRealtime + static_cast<std::uint64_t>(s * 1e9);
	}
	std::vector<AlertEvent> sample(double s, std::vector<ppkit::Stats> st,
				       Source src = Source::Ppkit)
	{
		return store.on_stats(src, std::move(st), at(s), realtime(s));
	}
	const Row *row(std::uint32_t id, Source src = Source::Ppkit)
	{
		store.publish();
		snap = store.snapshot();
		for (const Row &r : snap->rows)
			if (r.pool.id == id && r.pool.source == src)
				return &r;
		return nullptr;
	}
	std::vector<Point> points(std::uint32_t id, Source src = Source::Ppkit)
	{
		auto h = store.history(src, id, 1e9);
		return h ? h->points : std::vector<Point>{};
	}

	Clock::time_point epoch;
	Store store;
	std::shared_ptr<const Snapshot> snap;
};

std::vector<std::uint32_t> ids(const Snapshot &s, Source src = Source::Ppkit)
{
	std::vector<std::uint32_t> v;
	for (const Row &r : s.rows)
		if (r.pool.source == src)
			v.push_back(r.pool.id);
	return v;
}

}  // namespace

TEST_CASE("store: history points from the configuration", "[ppctld][store]")
{
	CHECK(config().history_points() == 3600);
	CHECK(config(1, 10).history_points() == 10);
	CHECK(config(2, 3600).history_points() == 1800);
	CHECK(config(0.5, 60).history_points() == 120);
	CHECK(config(7, 10).history_points() == 2);	// rounded up
	CHECK(config(10, 1).history_points() == 1);
}

TEST_CASE("store: pools follow add, change and del notifications", "[ppctld][store]")
{
	Fixture f;
	CHECK(f.store.live_pools() == 0);
	f.store.on_event(event(ppkit::Event::Kind::Add, pool(1)));
	f.store.on_event(event(ppkit::Event::Kind::Add, pool(2)));
	f.store.on_event(event(ppkit::Event::Kind::Add, pool(3)));
	CHECK(f.store.live_pools() == 3);
	CHECK(f.store.gone_pools() == 0);
	f.store.publish();
	CHECK(ids(*f.store.snapshot()) == std::vector<std::uint32_t>{1, 2, 3});

	// The same pool again changes nothing.
	f.store.on_event(event(ppkit::Event::Kind::Add, pool(2)));
	CHECK(f.store.live_pools() == 3);
	CHECK(f.store.gone_pools() == 0);

	f.store.on_event(event(ppkit::Event::Kind::Del, pool(2)));
	CHECK(f.store.live_pools() == 2);
	CHECK(f.store.gone_pools() == 1);
	f.store.publish();
	CHECK(ids(*f.store.snapshot()) == std::vector<std::uint32_t>{1, 3});
	// A pool already gone, or never seen, is no harm.
	f.store.on_event(event(ppkit::Event::Kind::Del, pool(2)));
	f.store.on_event(event(ppkit::Event::Kind::Del, pool(99)));
	CHECK(f.store.live_pools() == 2);
	CHECK(f.store.gone_pools() == 1);

	// A change keeps the pool and its last sample: the next window has rates.
	f.sample(10, {stats(1, kA)});
	ppkit::Pool changed = pool(1);
	changed.ifname = "eth1";
	changed.detach_time_ns = 5000;
	f.store.on_event(event(ppkit::Event::Kind::Change, changed));
	CHECK(f.store.live_pools() == 2);
	CHECK(f.store.gone_pools() == 1);
	f.sample(12, {stats(1, kB)});
	const Row *r = f.row(1);
	REQUIRE(r);
	CHECK(r->pool.ifname == "eth1");
	CHECK(r->pool.detached());
	CHECK(r->hit);
	CHECK(f.points(1).size() == 2);
}

TEST_CASE("store: the full list retires the pools missing from it", "[ppctld][store]")
{
	Fixture f;
	f.store.on_pools(Source::Ppkit, {pool(1), pool(2), pool(3)});
	f.store.on_pools(Source::Netdev, {pool(1, 7, Source::Netdev), pool(2, 7, Source::Netdev)});
	CHECK(f.store.live_pools() == 5);
	f.sample(1, {stats(2, kA)});

	f.store.on_pools(Source::Ppkit, {pool(1), pool(3), pool(4)});
	CHECK(f.store.live_pools() == 5);
	CHECK(f.store.gone_pools() == 1);
	f.store.publish();
	CHECK(ids(*f.store.snapshot()) == std::vector<std::uint32_t>{1, 3, 4});
	// The other source is left alone.
	CHECK(ids(*f.store.snapshot(), Source::Netdev) == std::vector<std::uint32_t>{1, 2});
	// The retired pool's history is there, as gone.
	auto h = f.store.history(Source::Ppkit, 2, 3600);
	REQUIRE(h);
	CHECK_FALSE(h->live);
	CHECK(h->points.size() == 1);

	// An empty list: every pool of that source is gone.
	f.store.on_pools(Source::Ppkit, {});
	CHECK(f.store.live_pools() == 2);
	CHECK(f.store.gone_pools() == 4);
}

TEST_CASE("store: a source without statistics is sampled from its pool list",
	  "[ppctld][store]")
{
	// Linux with CONFIG_PAGE_POOL_STATS=n: the netdev family lists pools
	// and their pages in flight, and no counters.
	Fixture f;
	auto native = [](std::uint32_t id, std::uint64_t inflight) {
		ppkit::Pool p = pool(id, 7, Source::Netdev);
		p.inflight = inflight;
		p.inflight_mem = inflight * 4096;
		return p;
	};
	f.store.on_gauges(Source::Netdev, {native(3, 100), native(4, 0)}, f.at(1), f.realtime(1));
	f.store.on_gauges(Source::Netdev, {native(3, 140), native(4, 0)}, f.at(2), f.realtime(2));

	auto pts = f.points(3, Source::Netdev);
	REQUIRE(pts.size() == 2);
	CHECK(pts[0].inflight == 100);
	CHECK(pts[1].inflight == 140);
	CHECK(pts[1].t_ds == 20);
	CHECK(std::isnan(pts[1].hit));
	CHECK(std::isnan(pts[1].recycle));
	CHECK(std::isnan(pts[1].served_per_s));

	const Row *r = f.row(3, Source::Netdev);
	REQUIRE(r);
	CHECK(r->pool.inflight == std::optional<std::uint64_t>(140));
	CHECK(r->stats.opt(Counter::Inflight) == std::optional<std::uint64_t>(140));
	CHECK(r->stats.opt(Counter::InflightMem) == std::optional<std::uint64_t>(140 * 4096));
	CHECK_FALSE(r->stats.has(Counter::PagesFromCache));
	CHECK_FALSE(r->hit);
	CHECK(r->realtime_ns == f.realtime(2));

	// The list is the full list: a pool missing from it is gone, and a
	// pool of the other source is left alone.
	f.store.on_pools(Source::Ppkit, {pool(1)});
	f.store.on_gauges(Source::Netdev, {native(3, 10)}, f.at(3), f.realtime(3));
	f.store.publish();
	CHECK(ids(*f.store.snapshot(), Source::Netdev) == std::vector<std::uint32_t>{3});
	CHECK(ids(*f.store.snapshot(), Source::Ppkit) == std::vector<std::uint32_t>{1});
	CHECK(f.points(4, Source::Netdev).size() == 2);
	CHECK(f.points(3, Source::Netdev).size() == 3);
}

TEST_CASE("store: rates from two samples", "[ppctld][store]")
{
	Fixture f;
	f.store.on_event(event(ppkit::Event::Kind::Add, pool(1)));

	SECTION("the first sample has no rates")
	{
		CHECK(f.sample(10, {stats(1, kA)}).empty());
		const Row *r = f.row(1);
		REQUIRE(r);
		CHECK_FALSE(r->hit);
		CHECK_FALSE(r->recycle);
		CHECK_FALSE(r->served_per_s);
		CHECK_FALSE(r->released_per_s);
		CHECK(r->stats.get(Counter::AllocFast) == 300);
		CHECK(r->realtime_ns == f.realtime(10));
		auto pts = f.points(1);
		REQUIRE(pts.size() == 1);
		CHECK(pts[0].t_ds == 100);
		CHECK(pts[0].inflight == 20);
		CHECK(std::isnan(pts[0].hit));
		CHECK(std::isnan(pts[0].recycle));
		CHECK(std::isnan(pts[0].served_per_s));
		CHECK(std::isnan(pts[0].released_per_s));
	}
	SECTION("the second one has them all")
	{
		f.sample(10, {stats(1, kA)});
		f.sample(12, {stats(1, kB)});
		const Row *r = f.row(1);
		REQUIRE(r);
		// hit = Δ(cache + ring + stack) / Δserved = (600 + 250 + 50) / 1000
		REQUIRE(r->hit);
		CHECK(*r->hit == Approx(0.9));
		// recycle = Δ(cached + ring) / Δ(returned + reclaimed + orphaned)
		//         = (800 + 150) / (950 + 40 + 10)
		REQUIRE(r->recycle);
		CHECK(*r->recycle == Approx(0.95));
		// 1000 pages served, 50 released, in 2 s
		REQUIRE(r->served_per_s);
		CHECK(*r->served_per_s == Approx(500));
		REQUIRE(r->released_per_s);
		CHECK(*r->released_per_s == Approx(25));
		CHECK(r->stats.get(Counter::AllocFast) == 900);
		CHECK(r->stats.get(Counter::Inflight) == 25);
		CHECK(r->stats.source == Source::Ppkit);
		CHECK(r->realtime_ns == f.realtime(12));
		CHECK_FALSE(r->low_hit);
		CHECK_FALSE(r->leak);

		auto pts = f.points(1);
		REQUIRE(pts.size() == 2);
		CHECK(pts[0].t_ds == 100);
		CHECK(pts[1].t_ds == 120);
		CHECK(pts[1].inflight == 25);
		CHECK(pts[1].hit == Approx(0.9));
		CHECK(pts[1].recycle == Approx(0.95));
		CHECK(pts[1].served_per_s == Approx(500));
		CHECK(pts[1].released_per_s == Approx(25));
		CHECK(f.store.realtime_of(pts[1].t_ds) == f.realtime(12));
	}
	SECTION("an idle window has no hit rate but a zero throughput")
	{
		f.sample(10, {stats(1, kA)});
		f.sample(11, {stats(1, kA)});
		const Row *r = f.row(1);
		REQUIRE(r);
		CHECK_FALSE(r->hit);
		CHECK_FALSE(r->recycle);
		REQUIRE(r->served_per_s);
		CHECK(*r->served_per_s == 0);
		auto pts = f.points(1);
		REQUIRE(pts.size() == 2);
		CHECK(std::isnan(pts[1].hit));
		CHECK(pts[1].served_per_s == 0);
	}
}

TEST_CASE("store: idle windows in a row, then traffic again", "[ppctld][store]")
{
	// The store keeps an idle pool's rates without working the window out
	// again: they must be what the window gives, and traffic must end it.
	Fixture f;
	f.store.on_event(event(ppkit::Event::Kind::Add, pool(1)));
	f.sample(10, {stats(1, kA)});
	f.sample(12, {stats(1, kB)});
	for (int t = 13; t <= 16; t++) {
		f.sample(t, {stats(1, kB)});
		const Row *r = f.row(1);
		REQUIRE(r);
		INFO("t " << t);
		CHECK_FALSE(r->hit);
		CHECK_FALSE(r->recycle);
		REQUIRE(r->served_per_s);
		CHECK(*r->served_per_s == 0);
		REQUIRE(r->released_per_s);
		CHECK(*r->released_per_s == 0);
		CHECK(std::isnan(f.points(1).back().hit));
		CHECK(f.points(1).back().served_per_s == 0);
	}
	// kA -> kB again, from kB plus the same traffic: 1000 pages in 2 s.
	Traffic c = kB;
	c.from_cache += 600;
	c.from_ring += 250;
	c.from_stack += 50;
	c.from_alloc += 100;
	c.cached += 800;
	c.ring += 150;
	c.returned += 950;
	c.reclaimed += 40;
	c.orphaned += 10;
	c.released += 50;
	c.alloc_fast += 600;
	f.sample(18, {stats(1, c)});
	const Row *r = f.row(1);
	REQUIRE(r);
	REQUIRE(r->hit);
	CHECK(*r->hit == Approx(0.9));
	REQUIRE(r->recycle);
	CHECK(*r->recycle == Approx(0.95));
	REQUIRE(r->served_per_s);
	CHECK(*r->served_per_s == Approx(500));
	REQUIRE(r->released_per_s);
	CHECK(*r->released_per_s == Approx(25));
	// ... and the next idle window has no rates again.
	f.sample(19, {stats(1, c)});
	CHECK_FALSE(f.row(1)->hit);
	CHECK(*f.row(1)->served_per_s == 0);
	CHECK(f.points(1).size() == 8);
}

TEST_CASE("store: a counter that goes down gives a point without rates", "[ppctld][store]")
{
	// The module was reloaded, or the pool re-created under the same id
	// without a creation time to tell: never a negative rate.
	Fixture f;
	f.store.on_event(event(ppkit::Event::Kind::Add, pool(1, 1000)));
	f.sample(1, {stats(1, kA)});
	f.sample(2, {stats(1, kB)});
	Traffic low{};
	low.from_cache = 5;
	low.from_alloc = 5;
	low.returned = 3;
	low.cached = 3;
	low.inflight = 7;
	f.sample(3, {stats(1, low)});

	const Row *r = f.row(1);
	REQUIRE(r);
	CHECK_FALSE(r->hit);
	CHECK_FALSE(r->recycle);
	CHECK_FALSE(r->served_per_s);
	CHECK_FALSE(r->released_per_s);
	auto pts = f.points(1);
	REQUIRE(pts.size() == 3);
	CHECK(pts[2].inflight == 7);
	for (float v : {pts[2].hit, pts[2].recycle, pts[2].served_per_s, pts[2].released_per_s})
		CHECK(std::isnan(v));

	// The next window starts from the new counters.
	Traffic next = more(low, 100, 0.8, 9);
	f.sample(4, {stats(1, next)});
	r = f.row(1);
	REQUIRE(r);
	REQUIRE(r->hit);
	CHECK(*r->hit == Approx(0.8));
	REQUIRE(r->served_per_s);
	CHECK(*r->served_per_s == Approx(100));
	pts = f.points(1);
	REQUIRE(pts.size() == 4);
	for (const Point &p : pts) {
		CHECK_FALSE(p.hit < 0);
		CHECK_FALSE(p.recycle < 0);
		CHECK_FALSE(p.served_per_s < 0);
		CHECK_FALSE(p.released_per_s < 0);
	}
}

TEST_CASE("store: a pool re-added with another creation time starts fresh",
	  "[ppctld][store]")
{
	Fixture f;
	f.store.on_event(event(ppkit::Event::Kind::Add, pool(5, 1000)));
	f.sample(1, {stats(5, kA)});
	f.sample(2, {stats(5, kB)});
	REQUIRE(f.row(5)->hit);

	// Same id, another pool (the Del notification was lost).
	f.store.on_event(event(ppkit::Event::Kind::Add, pool(5, 2000)));
	CHECK(f.store.live_pools() == 1);
	CHECK(f.store.gone_pools() == 1);
	const Row *r = f.row(5);
	REQUIRE(r);
	CHECK(r->pool.created_ns == 2000u);
	CHECK_FALSE(r->hit);
	auto h = f.store.history(Source::Ppkit, 5, 1e9);
	REQUIRE(h);
	CHECK(h->live);
	CHECK(h->points.empty());
	CHECK(h->pool.created_ns == 2000u);

	// Its first sample has no rates, even with counters above the old ones.
	f.sample(3, {stats(5, more(kB, 1000, 0.5, 30))});
	r = f.row(5);
	REQUIRE(r);
	CHECK_FALSE(r->hit);
	CHECK(f.points(5).size() == 1);
	f.sample(4, {stats(5, more(more(kB, 1000, 0.5, 30), 200, 0.25, 30))});
	r = f.row(5);
	REQUIRE(r->hit);
	CHECK(*r->hit == Approx(0.25));

	// The full list does the same.
	f.store.on_pools(Source::Ppkit, {pool(5, 3000)});
	CHECK(f.store.gone_pools() == 2);
	CHECK(f.row(5)->pool.created_ns == 3000u);
	CHECK(f.points(5).empty());
}

TEST_CASE("store: stats of an unknown pool ask the lookup", "[ppctld][store]")
{
	Fixture f;
	std::vector<std::uint32_t> asked;
	auto found = [&](std::uint32_t id) -> std::optional<ppkit::Pool> {
		asked.push_back(id);
		return pool(id, 4242);
	};
	auto none = [&](std::uint32_t id) -> std::optional<ppkit::Pool> {
		asked.push_back(id);
		return std::nullopt;
	};

	SECTION("found: the pool is added with its sample")
	{
		f.store.on_event(event(ppkit::Event::Kind::Add, pool(1)));
		f.store.on_stats(Source::Ppkit, {stats(1, kA), stats(9, kA)}, f.at(1), f.realtime(1),
				 found);
		CHECK(asked == std::vector<std::uint32_t>{9});
		CHECK(f.store.live_pools() == 2);
		const Row *r = f.row(9);
		REQUIRE(r);
		CHECK(r->pool.created_ns == 4242u);
		CHECK(r->stats.get(Counter::AllocFast) == 300);
		CHECK(f.points(9).size() == 1);
		// Known from now on.
		f.store.on_stats(Source::Ppkit, {stats(9, kB)}, f.at(3), f.realtime(3), found);
		CHECK(asked.size() == 1);
		REQUIRE(f.row(9)->hit);
		CHECK(*f.row(9)->hit == Approx(0.9));
	}
	SECTION("not found: dropped")
	{
		auto alerts = f.store.on_stats(Source::Ppkit, {stats(9, kA)}, f.at(1), f.realtime(1),
					       none);
		CHECK(alerts.empty());
		CHECK(asked == std::vector<std::uint32_t>{9});
		CHECK(f.store.live_pools() == 0);
		CHECK_FALSE(f.store.history(Source::Ppkit, 9, 1e9));
		CHECK(f.row(9) == nullptr);
	}
	SECTION("no lookup at all: dropped")
	{
		f.sample(1, {stats(9, kA)});
		CHECK(f.store.live_pools() == 0);
		CHECK_FALSE(f.store.history(Source::Ppkit, 9, 1e9));
	}
	SECTION("the lookup is per source")
	{
		f.store.on_event(event(ppkit::Event::Kind::Add, pool(1)));
		f.store.on_stats(Source::Netdev, {stats(1, kA)}, f.at(1), f.realtime(1), none);
		CHECK(asked == std::vector<std::uint32_t>{1});
		CHECK(f.store.live_pools() == 1);
		CHECK(f.points(1).empty());
	}
}

TEST_CASE("store: history is bounded by the configuration", "[ppctld][store]")
{
	// 10 s at 1 s: 10 points, whatever the number of samples.
	Fixture f(config(1, 10));
	f.store.on_pools(Source::Ppkit, {pool(1), pool(2)});
	Traffic t = kA;
	for (int i = 1; i <= 500; i++) {
		t = more(t, 100, 0.9, 20 + static_cast<std::uint64_t>(i % 7));
		f.sample(i, {stats(1, t), stats(2, t)});
	}
	auto pts = f.points(1);
	REQUIRE(pts.size() == 10);
	CHECK(pts.front().t_ds == 4910);
	CHECK(pts.back().t_ds == 5000);
	for (std::size_t i = 1; i < pts.size(); i++)
		CHECK(pts[i].t_ds == pts[i - 1].t_ds + 10);
	CHECK(f.store.history_bytes() <= 2 * 10 * sizeof(Point));
	f.store.publish();
	CHECK(f.store.snapshot()->history_bytes == f.store.history_bytes());

	// A shorter history (SIGHUP) keeps the newest points.
	f.store.configure(config(1, 5));
	pts = f.points(1);
	REQUIRE(pts.size() == 5);
	CHECK(pts.front().t_ds == 4960);
	CHECK(pts.back().t_ds == 5000);
	CHECK(f.store.history_bytes() <= 2 * 5 * sizeof(Point));
	// And it applies to new pools too.
	f.store.on_event(event(ppkit::Event::Kind::Add, pool(3)));
	for (int i = 501; i <= 520; i++)
		f.sample(i, {stats(3, t)});
	CHECK(f.points(3).size() == 5);

	// The default, an hour at 1 s, for a pool sampled two hours long.
	Fixture g;
	g.store.on_event(event(ppkit::Event::Kind::Add, pool(1)));
	for (int i = 1; i <= 7200; i++)
		g.sample(i, {stats(1, kA)});
	CHECK(g.points(1).size() == 3600);
	CHECK(g.store.history_bytes() <= 3600 * 24);
}

TEST_CASE("store: history times follow a step of the realtime clock", "[ppctld][store]")
{
	// date -s an hour ahead between the samples at 2 s and 3 s, then a
	// suspend of 10 min (realtime runs on, the steady clock does not)
	// between 4 s and 5 s; drift under a second moves nothing.
	constexpr std::uint64_t hour = 3600'000'000'000ULL, ten_min = 600'000'000'000ULL;
	Fixture f;
	f.store.on_event(event(ppkit::Event::Kind::Add, pool(1)));
	f.sample(1, {stats(1, kA)});
	f.store.on_stats(Source::Ppkit, {stats(1, kA)}, f.at(2), f.realtime(2) + 400'000'000);
	for (int s = 3; s <= 4; s++)
		f.store.on_stats(Source::Ppkit, {stats(1, kA)}, f.at(s), f.realtime(s) + hour);
	f.store.on_stats(Source::Ppkit, {stats(1, kA)}, f.at(5), f.realtime(5) + hour + ten_min);
	auto pts = f.points(1);
	REQUIRE(pts.size() == 5);
	CHECK(f.store.realtime_of(pts[0].t_ds) == f.realtime(1));
	CHECK(f.store.realtime_of(pts[1].t_ds) == f.realtime(2));
	CHECK(f.store.realtime_of(pts[2].t_ds) == f.realtime(3) + hour);
	CHECK(f.store.realtime_of(pts[3].t_ds) == f.realtime(4) + hour);
	CHECK(f.store.realtime_of(pts[4].t_ds) == f.realtime(5) + hour + ten_min);
	// and back: date -s to before the epoch's realtime never goes below 0
	f.store.on_stats(Source::Ppkit, {stats(1, kA)}, f.at(6), 1'000'000'000);
	CHECK(f.store.realtime_of(f.points(1).back().t_ds) == 1'000'000'000);
	CHECK(f.store.realtime_of(pts[4].t_ds) == f.realtime(5) + hour + ten_min);
}

TEST_CASE("store: history(since_s) counts back from now", "[ppctld][store]")
{
	// Samples every 10 s over the last 1000 s.
	Fixture f(config(10, 3600), 1000s);
	f.store.on_event(event(ppkit::Event::Kind::Add, pool(1)));
	for (int i = 0; i < 100; i++)
		f.sample(i * 10, {stats(1, kA)});
	auto all = f.store.history(Source::Ppkit, 1, 3600);
	REQUIRE(all);
	CHECK(all->points.size() == 100);
	// The last 95 s: the samples at 910 .. 990 s.
	auto some = f.store.history(Source::Ppkit, 1, 95);
	REQUIRE(some);
	REQUIRE(some->points.size() == 9);
	CHECK(some->points.front().t_ds == 9100);
	CHECK(some->points.back().t_ds == 9900);
	CHECK(f.store.history(Source::Ppkit, 1, 0)->points.empty());
	// A negative span is taken as 0, not as the future.
	CHECK(f.store.history(Source::Ppkit, 1, -50)->points.empty());
}

TEST_CASE("store: destroyed pools keep their history, the last kGoneKept of them",
	  "[ppctld][store]")
{
	Fixture f;
	const std::uint32_t n = kGoneKept + 6;
	for (std::uint32_t id = 1; id <= n; id++) {
		f.store.on_event(event(ppkit::Event::Kind::Add, pool(id)));
		Traffic t = kA;
		t.inflight = id;
		f.sample(id, {stats(id, t)});
		f.store.on_event(event(ppkit::Event::Kind::Del, pool(id)));
	}
	CHECK(f.store.live_pools() == 0);
	CHECK(f.store.gone_pools() == kGoneKept);
	f.store.publish();
	CHECK(f.store.snapshot()->gone_pools == kGoneKept);
	CHECK(f.store.snapshot()->rows.empty());
	// The oldest ones are forgotten...
	for (std::uint32_t id = 1; id <= 6; id++)
		CHECK_FALSE(f.store.history(Source::Ppkit, id, 1e9));
	// ...the others are there, as gone.
	for (std::uint32_t id = 7; id <= n; id++) {
		auto h = f.store.history(Source::Ppkit, id, 1e9);
		REQUIRE(h);
		CHECK_FALSE(h->live);
		CHECK(h->pool.id == id);
		REQUIRE(h->points.size() == 1);
		CHECK(h->points[0].inflight == id);
	}
	CHECK(f.store.history_bytes() <= kGoneKept * 16 * sizeof(Point));
	// Another source's pool of the same id is another pool.
	CHECK_FALSE(f.store.history(Source::Netdev, n, 1e9));
}

TEST_CASE("store: history() prefers the live pool, then the newest destroyed one",
	  "[ppctld][store]")
{
	Fixture f;
	auto run = [&](std::uint64_t created, std::uint64_t inflight, int samples, double t0) {
		f.store.on_event(event(ppkit::Event::Kind::Add, pool(7, created)));
		Traffic t = kA;
		t.inflight = inflight;
		for (int i = 0; i < samples; i++)
			f.sample(t0 + i, {stats(7, t)});
	};
	run(100, 1, 1, 0);
	f.store.on_event(event(ppkit::Event::Kind::Del, pool(7, 100)));
	run(200, 2, 2, 10);
	f.store.on_event(event(ppkit::Event::Kind::Del, pool(7, 200)));
	auto h = f.store.history(Source::Ppkit, 7, 1e9);
	REQUIRE(h);
	CHECK_FALSE(h->live);
	CHECK(h->pool.created_ns == 200u);
	CHECK(h->points.size() == 2);

	run(300, 3, 3, 20);
	h = f.store.history(Source::Ppkit, 7, 1e9);
	REQUIRE(h);
	CHECK(h->live);
	CHECK(h->pool.created_ns == 300u);
	REQUIRE(h->points.size() == 3);
	CHECK(h->points[0].inflight == 3);
}

TEST_CASE("store: a source going down retires its pools", "[ppctld][store]")
{
	Fixture f;
	f.store.on_backend_up(Source::Ppkit);
	f.store.on_backend_up(Source::Netdev);
	f.store.on_pools(Source::Ppkit, {pool(1), pool(2)});
	f.store.on_pools(Source::Netdev, {pool(1, 1000, Source::Netdev)});
	f.sample(1, {stats(1, kA), stats(2, kA)});

	f.store.on_backend_down(Source::Ppkit, "the ppkit family is gone");
	CHECK(f.store.live_pools() == 1);
	CHECK(f.store.gone_pools() == 2);
	f.store.publish();
	auto s = f.store.snapshot();
	CHECK(ids(*s).empty());
	CHECK(ids(*s, Source::Netdev) == std::vector<std::uint32_t>{1});
	REQUIRE(s->backends.size() == 2);
	for (const BackendState &b : s->backends) {
		if (b.source == Source::Ppkit) {
			CHECK_FALSE(b.up);
			CHECK(b.why == "the ppkit family is gone");
		} else {
			CHECK(b.up);
			CHECK(b.why.empty());
		}
	}
	// Their histories stay reachable.
	auto h = f.store.history(Source::Ppkit, 1, 1e9);
	REQUIRE(h);
	CHECK_FALSE(h->live);
	CHECK(h->points.size() == 1);

	f.store.on_backend_up(Source::Ppkit);
	f.store.publish();
	for (const BackendState &b : f.store.snapshot()->backends)
		CHECK(b.up);
}

TEST_CASE("store: a failed dump keeps the histories the reconnect finds again",
	  "[ppctld][store]")
{
	Fixture f;
	f.store.on_backend_up(Source::Ppkit);
	f.store.on_pools(Source::Ppkit, {pool(1), pool(2)});
	Traffic a = kA;
	for (int t = 0; t < 5; t++) {
		a = more(a, 1000, 0.9, 20);
		f.sample(t, {stats(1, a), stats(2, a)});
	}
	f.store.on_backend_down(Source::Ppkit, "dump failed: No buffer space available", false);
	CHECK(f.store.live_pools() == 2);
	CHECK(f.store.gone_pools() == 0);
	// down: no stale rows, the histories still live
	CHECK(f.row(1) == nullptr);
	CHECK(f.points(1).size() == 5);

	// the reconnect's list: pool 1 as it was, pool 2 gone, pool 3 new
	f.store.on_backend_up(Source::Ppkit);
	f.store.on_pools(Source::Ppkit, {pool(1), pool(3)});
	CHECK(f.store.gone_pools() == 1);
	a = more(a, 1000, 0.9, 20);
	f.sample(6, {stats(1, a), stats(3, a)});
	CHECK(f.points(1).size() == 6);
	REQUIRE(f.row(1));
	CHECK(f.row(1)->hit);	// a window across the failure
	CHECK(f.points(3).size() == 1);

	// a reconnect that fails retires them
	f.store.on_backend_down(Source::Ppkit, "dump failed", false);
	f.store.on_backend_down(Source::Ppkit, "pp_backport is not loaded", true);
	CHECK(f.store.live_pools() == 0);
	CHECK(f.store.gone_pools() == 3);
	auto h = f.store.history(Source::Ppkit, 1, 1e9);
	REQUIRE(h);
	CHECK_FALSE(h->live);
	CHECK(h->points.size() == 6);
}

TEST_CASE("store: a retired pool's alerts are cleared, once", "[ppctld][store]")
{
	Config c = config();
	c.alerts.hit_below = 0.5;
	c.alerts.hit_for_s = 10;
	c.alerts.leak_for_s = 10;
	c.alerts.leak_min_pages = 1;
	Fixture f(c);
	f.store.on_pools(Source::Ppkit, {pool(1), pool(2), pool(3)});
	Traffic a = kA;
	int raised = 0;
	for (int t = 0; t <= 20; t++) {
		a = more(a, 1000, 0.1, 100 + 10 * static_cast<std::uint64_t>(t));
		raised += static_cast<int>(f.sample(t, {stats(1, a), stats(2, a), stats(3, a)}).size());
	}
	REQUIRE(raised == 6);	// both rules on all three
	CHECK(f.store.take_retired_alerts().empty());

	// destroyed (a notification), missing from a list, its source gone
	f.store.on_event(event(ppkit::Event::Kind::Del, pool(1)));
	f.store.on_pools(Source::Ppkit, {pool(3)});
	f.store.on_backend_down(Source::Ppkit, "pp_backport is not loaded", true);
	auto cleared = f.store.take_retired_alerts();
	REQUIRE(cleared.size() == 6);
	for (std::size_t i = 0; i < cleared.size(); i++) {
		CHECK(cleared[i].what == Transition::Cleared);
		CHECK(cleared[i].pool.id == 1 + i / 2);
		CHECK(cleared[i].rule == (i % 2 ? "leak-suspect" : "low-hit-rate"));
		CHECK_THAT(cleared[i].detail, Catch::EndsWith("the pool is gone"));
	}
	CHECK(f.store.take_retired_alerts().empty());
}

TEST_CASE("store: publish() and snapshot()", "[ppctld][store]")
{
	Fixture f;
	auto first = f.store.snapshot();
	REQUIRE(first);
	CHECK(first->rows.empty());
	CHECK(first->samples == 0);

	f.store.on_pools(Source::Netdev, {pool(3, 1, Source::Netdev)});
	f.store.on_pools(Source::Ppkit, {pool(4), pool(2)});
	f.sample(1, {stats(2, kA), stats(4, kA)});
	f.store.count_round(0.25, false);
	f.store.count_round(0.5, true);
	// Nothing shows before publish(), and an old snapshot never changes.
	CHECK(f.store.snapshot() == first);
	CHECK(first->rows.empty());

	f.store.publish();
	auto s = f.store.snapshot();
	REQUIRE(s);
	CHECK(s != first);
	REQUIRE(s->rows.size() == 3);
	// By source, then id.
	CHECK(s->rows[0].pool.source == Source::Ppkit);
	CHECK(s->rows[0].pool.id == 2);
	CHECK(s->rows[1].pool.id == 4);
	CHECK(s->rows[2].pool.source == Source::Netdev);
	CHECK(s->rows[2].pool.id == 3);
	CHECK(s->rows[0].stats.get(Counter::PagesFromCache) == 100);
	CHECK(s->rows[0].pool.owner == "pp_poolgen");
	CHECK(s->rows[2].stats.empty());	// not sampled yet
	CHECK(s->samples == 2);
	CHECK(s->sample_errors == 1);
	CHECK(s->last_sample_s == 0.5);
	CHECK(s->gone_pools == 0);
	CHECK(s->history_bytes > 0);
	CHECK(s->history_bytes == f.store.history_bytes());
	CHECK(s->alerts_raised == 0);
	CHECK(s->realtime_ns > 0);
	CHECK(f.store.snapshot() == s);
}

TEST_CASE("store: alerts come out of on_stats", "[ppctld][store]")
{
	Config c = config();
	c.alerts.hit_below = 0.5;
	c.alerts.hit_for_s = 30;
	c.alerts.leak_for_s = 60;
	c.alerts.leak_min_pages = 64;
	Fixture f(c);
	f.store.on_event(event(ppkit::Event::Kind::Add, pool(1)));
	f.store.on_event(event(ppkit::Event::Kind::Add, pool(2)));

	// Pool 1: 10% hits, steady in-flight; pool 2: healthy, leaking 10
	// pages a second.
	Traffic a = kA, b = kA;
	std::vector<std::pair<double, AlertEvent>> seen;
	for (int t = 0; t <= 100; t++) {
		a = more(a, 1000, 0.1, 512);
		b = more(b, 1000, 0.99, 100 + 10 * static_cast<std::uint64_t>(t));
		for (AlertEvent &e : f.sample(t, {stats(1, a), stats(2, b)}))
			seen.emplace_back(t, std::move(e));
	}
	REQUIRE(seen.size() == 2);
	// The first rate is at t = 1: low since then, raised 30 s later.
	CHECK(seen[0].first == 31);
	CHECK(seen[0].second.rule == "low-hit-rate");
	CHECK(seen[0].second.what == Transition::Raised);
	CHECK(seen[0].second.pool.id == 1);
	CHECK_THAT(seen[0].second.detail, Catch::Contains("ppkit pool 1"));
	CHECK_THAT(seen[0].second.detail, Catch::Contains("10.0%"));
	CHECK(seen[1].first == 60);
	CHECK(seen[1].second.rule == "leak-suspect");
	CHECK(seen[1].second.what == Transition::Raised);
	CHECK(seen[1].second.pool.id == 2);
	CHECK_THAT(seen[1].second.detail, Catch::Contains("ppkit pool 2"));

	CHECK(f.row(1)->low_hit);
	CHECK_FALSE(f.row(1)->leak);
	CHECK(f.row(2)->leak);
	CHECK_FALSE(f.row(2)->low_hit);
	CHECK(f.snap->alerts_raised == 2);

	// Both end: one Cleared each.
	a = more(a, 1000, 0.9, 512);
	b = more(b, 1000, 0.99, 50);
	auto ended = f.sample(101, {stats(1, a), stats(2, b)});
	REQUIRE(ended.size() == 2);
	CHECK(ended[0].rule == "low-hit-rate");
	CHECK(ended[0].what == Transition::Cleared);
	CHECK(ended[0].pool.id == 1);
	CHECK(ended[1].rule == "leak-suspect");
	CHECK(ended[1].what == Transition::Cleared);
	CHECK(ended[1].pool.id == 2);
	CHECK_FALSE(f.row(1)->low_hit);
	CHECK_FALSE(f.row(2)->leak);
	CHECK(f.snap->alerts_raised == 2);
	a = more(a, 1000, 0.9, 512);
	b = more(b, 1000, 0.99, 50);
	CHECK(f.sample(102, {stats(1, a), stats(2, b)}).empty());
}

TEST_CASE("store: a new configuration changes the alert thresholds", "[ppctld][store]")
{
	Config c = config();
	c.alerts.hit_below = 0.5;
	c.alerts.hit_for_s = 5;
	Fixture f(c);
	f.store.on_event(event(ppkit::Event::Kind::Add, pool(1)));
	Traffic a = kA;
	std::vector<AlertEvent> all;
	for (int t = 0; t <= 10; t++) {
		a = more(a, 100, 0.2, 10);
		for (AlertEvent &e : f.sample(t, {stats(1, a)}))
			all.push_back(std::move(e));
	}
	REQUIRE(all.size() == 1);
	CHECK(all[0].what == Transition::Raised);
	c.alerts.hit_below = 0;
	f.store.configure(c);
	a = more(a, 100, 0.2, 10);
	auto off = f.sample(11, {stats(1, a)});
	REQUIRE(off.size() == 1);
	CHECK(off[0].rule == "low-hit-rate");
	CHECK(off[0].what == Transition::Cleared);
}
