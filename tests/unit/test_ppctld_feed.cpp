// SPDX-License-Identifier: GPL-2.0
// ppctld's reads of a family (feed.h) against a fake one: notifications
// queued before a re-dump, and the in-flight pages of pools whose
// statistics do not carry them (the netdev family).
#include <catch2/catch.hpp>

#include <chrono>
#include <deque>
#include <map>
#include <optional>
#include <vector>

#include "config.h"
#include "feed.h"
#include "store.h"

using namespace ppctld;
using namespace std::chrono_literals;
using ppkit::Counter;
using ppkit::Event;
using ppkit::Source;

namespace {

using Clock = std::chrono::steady_clock;

ppkit::Pool pool(std::uint32_t id, Source src, std::optional<std::uint32_t> inflight = {})
{
	ppkit::Pool p;
	p.id = id;
	p.source = src;
	p.ifindex = 2;
	p.ifname = "eth0";
	p.created_ns = 1000 + id;
	p.inflight = inflight;
	return p;
}

Event event(Event::Kind k, const ppkit::Pool &p)
{
	Event e;
	e.kind = k;
	e.pool = p;
	return e;
}

// A family as a script: the kernel's pools now, and the socket's queue of
// reads, each a batch of events and whether the read reports an overrun.
class FakeFeed : public Feed {
public:
	struct Read {
		std::vector<Event> events;
		bool lost = false;
	};

	std::map<std::uint32_t, ppkit::Pool> kernel;	// what a dump returns
	std::map<std::uint32_t, ppkit::Stats> counters;	// what stats() returns
	std::deque<Read> queue;
	bool stats_ = true;
	int dumps = 0;

	std::vector<ppkit::Pool> pools() override
	{
		dumps++;
		std::vector<ppkit::Pool> v;
		for (const auto &[id, p] : kernel)
			v.push_back(p);
		return v;
	}
	std::optional<ppkit::Pool> pool(std::uint32_t id) override
	{
		auto it = kernel.find(id);
		return it == kernel.end() ? std::nullopt : std::optional(it->second);
	}
	bool has_stats() override { return stats_; }
	bool asked_ages = false;	// what the last stats() was asked
	std::vector<ppkit::Stats> stats(bool lent_ages) override
	{
		asked_ages = lent_ages;
		std::vector<ppkit::Stats> v;
		for (const auto &[id, s] : counters) {
			v.push_back(s);
			if (!lent_ages) {	// as the kernel answers without the flag
				v.back().present.reset(ppkit::index(Counter::LentHeld));
				v.back().present.reset(ppkit::index(Counter::LentOldestMs));
			}
		}
		return v;
	}
	bool pending() override { return !queue.empty(); }
	std::vector<Event> read(bool *lost) override
	{
		Read r = std::move(queue.front());
		queue.pop_front();
		*lost = r.lost;
		return r.events;
	}
};

bool live(const Store &s, Source src, std::uint32_t id)
{
	auto h = s.history(src, id, 0);
	return h && h->live;
}

}  // namespace

TEST_CASE("feed: events queued before a re-dump do not bring a destroyed pool back",
	  "[ppctld][feed]")
{
	Store store(Config{});
	FakeFeed f;
	// Pools 1 and 2 were created, then 2 destroyed; the socket overran
	// while the events were queued, so the dump is the truth: pool 1 only.
	f.kernel = {{1, pool(1, Source::Ppkit)}};
	f.queue.push_back({{event(Event::Kind::Add, pool(1, Source::Ppkit))}, true});
	f.queue.push_back({{event(Event::Kind::Add, pool(2, Source::Ppkit))}, false});
	f.queue.push_back({{event(Event::Kind::Change, pool(2, Source::Ppkit))}, false});
	CHECK(follow(store, Source::Ppkit, f) == 1);
	CHECK(f.dumps == 1);
	CHECK(f.queue.empty());
	CHECK(live(store, Source::Ppkit, 1));
	CHECK_FALSE(live(store, Source::Ppkit, 2));
	CHECK(store.live_pools() == 1);

	// What comes after the dump applies on top of it.
	f.queue.push_back({{event(Event::Kind::Add, pool(3, Source::Ppkit)),
			    event(Event::Kind::Del, pool(1, Source::Ppkit))},
			   false});
	CHECK(follow(store, Source::Ppkit, f) == 0);
	CHECK(f.dumps == 1);
	CHECK(live(store, Source::Ppkit, 3));
	CHECK_FALSE(live(store, Source::Ppkit, 1));
}

TEST_CASE("feed: an overrun while discarding is one more overrun of the same resync",
	  "[ppctld][feed]")
{
	Store store(Config{});
	FakeFeed f;
	f.kernel = {{5, pool(5, Source::Ppkit)}};
	f.queue.push_back({{}, true});
	f.queue.push_back({{event(Event::Kind::Add, pool(6, Source::Ppkit))}, true});
	f.queue.push_back({{event(Event::Kind::Add, pool(7, Source::Ppkit))}, false});
	follow(store, Source::Ppkit, f);
	CHECK(f.dumps == 1);
	CHECK(store.live_pools() == 1);
	CHECK(live(store, Source::Ppkit, 5));
}

TEST_CASE("feed: a netdev pool's pages in flight follow every sample", "[ppctld][feed]")
{
	// The netdev family's statistics carry no in-flight pages: the pool
	// list does, and changes with no notification.
	Store store(Config{});
	FakeFeed f;
	f.kernel = {{4, pool(4, Source::Netdev, 10)}};
	ppkit::Stats s;
	s.pool_id = 4;
	s.set(Counter::AllocFast, 100);
	f.counters = {{4, s}};
	store.on_pools(Source::Netdev, {pool(4, Source::Netdev, 10)});

	auto t = Clock::now();
	std::uint64_t rt = 1'700'000'000'000'000'000ULL;
	auto round = [&] {
		t += 1s;
		rt += 1'000'000'000ULL;
		sample(store, Source::Netdev, f, [&] { return t; }, [&] { return rt; });
		store.publish();
	};
	round();
	f.kernel[4].inflight = 250;
	f.counters[4].values[ppkit::index(Counter::AllocFast)] += 240;
	round();
	f.kernel[4].inflight = 900;
	round();

	auto h = store.history(Source::Netdev, 4, 3600);
	REQUIRE(h);
	REQUIRE(h->points.size() == 3);
	CHECK(h->points[0].inflight == 10);
	CHECK(h->points[1].inflight == 250);
	CHECK(h->points[2].inflight == 900);
	auto snap = store.snapshot();
	REQUIRE(snap->rows.size() == 1);
	CHECK(snap->rows[0].pool.inflight == 900u);
}

TEST_CASE("feed: ppkit pools' statistics carry in-flight pages: no extra dump",
	  "[ppctld][feed]")
{
	Store store(Config{});
	FakeFeed f;
	f.kernel = {{1, pool(1, Source::Ppkit, 3)}};
	ppkit::Stats s;
	s.pool_id = 1;
	s.set(Counter::Inflight, 7);
	f.counters = {{1, s}};
	store.on_pools(Source::Ppkit, {pool(1, Source::Ppkit, 3)});
	auto t = Clock::now() + 1s;
	sample(store, Source::Ppkit, f, [&] { return t; }, [] { return std::uint64_t{1}; });
	CHECK(f.dumps == 0);
	auto h = store.history(Source::Ppkit, 1, 3600);
	REQUIRE(h);
	REQUIRE(h->points.size() == 1);
	CHECK(h->points[0].inflight == 7);
}

TEST_CASE("feed: a kernel without statistics is sampled from its pool list", "[ppctld][feed]")
{
	Store store(Config{});
	FakeFeed f;
	f.stats_ = false;
	f.kernel = {{2, pool(2, Source::Netdev, 40)}};
	auto t = Clock::now() + 1s;
	sample(store, Source::Netdev, f, [&] { return t; }, [] { return std::uint64_t{1}; });
	CHECK(f.dumps == 1);
	auto h = store.history(Source::Netdev, 2, 3600);
	REQUIRE(h);
	REQUIRE(h->points.size() == 1);
	CHECK(h->points[0].inflight == 40);
}

TEST_CASE("feed: ppctld words what to do about a missing family", "[ppctld][feed]")
{
	CHECK_THAT(explain(ppkit::family_missing(Source::Netdev)),
		   Catch::StartsWith("this kernel has no netdev netlink family") &&
			   Catch::EndsWith(": sample ppkit pools only with source = ppkit"));
	CHECK(explain(ppkit::family_missing(Source::Ppkit)) ==
	      ppkit::family_missing(Source::Ppkit).what());
}

TEST_CASE("feed: the lent pages' ages are asked for every 10 s, kept between", "[ppctld][feed]")
{
	Config c;
	auto t = Clock::now();
	Store store(c, t, 1);
	store.on_backend_up(Source::Ppkit);
	FakeFeed f;
	f.kernel[1] = pool(1, Source::Ppkit);
	store.on_pools(Source::Ppkit, {f.kernel[1]});
	auto stats = [&](std::uint64_t held, std::uint64_t oldest_ms) {
		ppkit::Stats s;
		s.pool_id = 1;
		s.set(Counter::Inflight, 8);
		s.set(Counter::LentHeld, held);
		s.set(Counter::LentOldestMs, oldest_ms);
		return s;
	};
	auto oldest = [&]() -> std::optional<std::uint64_t> {
		for (const Row &r : store.snapshot()->rows)
			if (r.pool.id == 1)
				return r.stats.opt(Counter::LentOldestMs);
		return std::nullopt;
	};
	LentAges ages;
	auto round = [&] {
		sample(store, Source::Ppkit, f, ages, [&] { return t; },
		       [] { return std::uint64_t{1}; });
		store.publish();
	};

	f.counters[1] = stats(3, 2000);
	round();
	CHECK(f.asked_ages);
	CHECK(oldest() == 2000u);
	// 1 to 9 s later: not asked, the last ages kept
	for (int s = 1; s < 10; s++) {
		t += 1s;
		f.counters[1] = stats(3, 2000 + 1000u * s);
		round();
		INFO(s << " s");
		CHECK_FALSE(f.asked_ages);
		CHECK(oldest() == 2000u);
	}
	// 10 s after the last ask: asked again, the new age
	t += 1s;
	f.counters[1] = stats(3, 12000);
	round();
	CHECK(f.asked_ages);
	CHECK(oldest() == 12000u);
	// a pool new since the last ask has no age until the next
	t += 1s;
	f.kernel[2] = pool(2, Source::Ppkit);
	store.on_pools(Source::Ppkit, {f.kernel[1], f.kernel[2]});
	f.counters[2] = stats(1, 500);
	f.counters[2].pool_id = 2;
	round();
	CHECK_FALSE(f.asked_ages);
	for (const Row &r : store.snapshot()->rows)
		if (r.pool.id == 2)
			CHECK_FALSE(r.stats.has(Counter::LentOldestMs));
}
