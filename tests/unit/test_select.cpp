// SPDX-License-Identifier: GPL-2.0
// list and stats: --dev/--owner/--state filters, --sort, and stats
// --group-by device (sums per device, as ynltool page-pool stats does).
#include <catch2/catch.hpp>

#include <set>
#include <sstream>

#include "group.h"
#include "select.h"
#include "text.h"

using namespace ppctl;
using namespace ppkit;
using nlohmann::json;

namespace {

Sample sample(std::uint32_t id, std::optional<std::uint32_t> ifindex, std::string ifname,
	      std::uint64_t from_cache, std::uint64_t from_alloc, std::uint64_t inflight,
	      bool detached = false, std::string owner = "mvneta")
{
	Sample s;
	s.pool.id = id;
	s.pool.owner = std::move(owner);
	s.pool.ifindex = ifindex;
	s.pool.ifname = std::move(ifname);
	s.pool.created_ns = 1'000'000'000;
	if (detached)
		s.pool.detach_time_ns = 2'000'000'000;
	s.stats.pool_id = id;
	s.stats.set(Counter::PagesFromCache, from_cache);
	s.stats.set(Counter::PagesFromRing, 0);
	s.stats.set(Counter::PagesFromStack, 0);
	s.stats.set(Counter::PagesFromAlloc, from_alloc);
	s.stats.set(Counter::RecycleCached, from_cache);
	s.stats.set(Counter::RecycleRing, 0);
	s.stats.set(Counter::PagesReturned, from_cache);
	s.stats.set(Counter::PagesReclaimed, 0);
	s.stats.set(Counter::PagesOrphaned, 0);
	s.stats.set(Counter::PagesAllocated, from_alloc);
	s.stats.set(Counter::PagesReleased, 0);
	s.stats.set(Counter::Inflight, inflight);
	s.realtime_ns = 11'000'000'000;
	return s;
}

std::vector<std::uint32_t> ids(const std::vector<Sample> &v)
{
	std::vector<std::uint32_t> r;
	for (const auto &s : v)
		r.push_back(s.pool.id);
	return r;
}

// eth0 (2): pools 1 and 3 (3 detached); eth1 (3): pool 2; pool 4: no device.
std::vector<Sample> fleet()
{
	return {sample(1, 2, "eth0", 900, 100, 10), sample(2, 3, "eth1", 50, 50, 400),
		sample(3, 2, "eth0", 0, 1000, 30, true), sample(4, std::nullopt, "", 10, 0, 1, false,
								 "pp_poolgen")};
}

}  // namespace

TEST_CASE("filters: --dev, --owner, --state (detached: ynltool's zombies)", "[select]")
{
	auto v = fleet();
	auto keep = [&](const PoolFilter &f) {
		std::vector<Sample> r;
		for (const auto &s : v)
			if (f.matches(s.pool))
				r.push_back(s);
		return ids(r);
	};
	CHECK(keep({}) == std::vector<std::uint32_t>{1, 2, 3, 4});
	CHECK(keep({2u, std::nullopt, std::nullopt}) == std::vector<std::uint32_t>{1, 3});
	CHECK(keep({std::nullopt, "pp_poolgen", std::nullopt}) == std::vector<std::uint32_t>{4});
	CHECK(keep({std::nullopt, std::nullopt, true}) == std::vector<std::uint32_t>{3});
	CHECK(keep({std::nullopt, std::nullopt, false}) == std::vector<std::uint32_t>{1, 2, 4});
	CHECK(keep({2u, "mvneta", false}) == std::vector<std::uint32_t>{1});
}

TEST_CASE("--sort: names up, figures highest first, missing last, ties by id", "[select]")
{
	auto v = fleet();
	auto sorted = [&](SortKey k) {
		auto c = v;
		sort_rows_by(c, k, [](const Sample &s) { return fields_of(s); });
		return ids(c);
	};
	CHECK(sorted(SortKey::Id) == std::vector<std::uint32_t>{1, 2, 3, 4});
	CHECK(sorted(SortKey::Dev) == std::vector<std::uint32_t>{1, 3, 2, 4});
	CHECK(sorted(SortKey::Owner) == std::vector<std::uint32_t>{1, 2, 3, 4});
	CHECK(sorted(SortKey::State) == std::vector<std::uint32_t>{1, 2, 4, 3});
	CHECK(sorted(SortKey::Inflight) == std::vector<std::uint32_t>{2, 3, 1, 4});
	CHECK(sorted(SortKey::Served) == std::vector<std::uint32_t>{1, 3, 2, 4});
	// hit: pool 4 100%, 1 90%, 2 50%, 3 0%.
	CHECK(sorted(SortKey::Hit) == std::vector<std::uint32_t>{4, 1, 2, 3});
	// A pool without statistics (netdev without CONFIG_PAGE_POOL_STATS) last.
	Sample bare;
	bare.pool.id = 0;
	v.push_back(bare);
	CHECK(sorted(SortKey::Hit).back() == 0u);
	CHECK(sort_key_by_name("served") == SortKey::Served);
	CHECK_FALSE(sort_key_by_name("alloc"));
	CHECK(to_string(SortKey::Recycle) == "recycle");
}

TEST_CASE("--sort: each row's fields computed once, not once per comparison", "[select]")
{
	// A sample's fields are its rates: comparing rows computed them about
	// 2 n log n times, most of what --json stats over 1,000 pools cost.
	std::vector<Sample> v;
	for (std::uint32_t id = 300; id > 0; id--)
		v.push_back(sample(id, id % 7, "eth" + std::to_string(id % 7), id, 300 - id, id % 11));
	for (SortKey k : {SortKey::Id, SortKey::Dev, SortKey::Hit, SortKey::Inflight}) {
		auto c = v;
		std::size_t calls = 0;
		sort_rows_by(c, k, [&](const Sample &s) {
			calls++;
			return fields_of(s);
		});
		CHECK(calls == v.size());
		for (std::size_t i = 1; i < c.size(); i++)
			CHECK_FALSE(sorts_before(fields_of(c[i]), fields_of(c[i - 1]), k));
	}
	auto c = v;
	sort_rows_by(c, SortKey::Id, [](const Sample &s) { return fields_of(s); });
	CHECK(c.front().pool.id == 1u);
	CHECK(c.back().pool.id == 300u);
}

TEST_CASE("--group-by device: the oldest lent page is the oldest pool's", "[select][render]")
{
	auto f = fleet();
	const std::uint64_t ages[] = {7000, 2500, 400, 90};
	std::size_t i = 0;
	for (Sample &s : f) {
		s.stats.set(Counter::LentHeld, 3);
		s.stats.set(Counter::LentOldestMs, ages[i++ % 4]);
	}
	auto g = group_by_device(f);
	REQUIRE(g.size() == 3);
	REQUIRE(g[0].ids == std::vector<std::uint32_t>{1, 3});
	// counts add up, ages do not
	CHECK(g[0].stats.get(Counter::LentHeld) == 6);
	CHECK(g[0].stats.get(Counter::LentOldestMs) == 7000);
}

TEST_CASE("--group-by device: each device's pools summed", "[select][render]")
{
	auto g = group_by_device(fleet());
	REQUIRE(g.size() == 3);
	CHECK(g[0].ifindex == 2u);
	CHECK(g[0].ifname == "eth0");
	CHECK(g[0].ids == std::vector<std::uint32_t>{1, 3});
	CHECK(g[0].detached == 1u);
	CHECK(g[0].stats.served() == 2000u);
	CHECK(g[0].inflight == 40u);
	CHECK(g[0].stats.get(Counter::PagesAllocated) == 1100);
	CHECK(group_window(g[0]).hit == Approx(0.45));	// 900 of 2000 from the cache
	CHECK(g[1].ifindex == 3u);
	CHECK_FALSE(g[2].ifindex);	// no device: last
	CHECK(g[2].ids == std::vector<std::uint32_t>{4});

	sort_groups(g, SortKey::Inflight);
	CHECK(g[0].ifindex == 3u);
	sort_groups(g, SortKey::Id);	// device order
	CHECK(g[0].ifindex == 2u);
	CHECK_FALSE(g[2].ifindex);

	auto l = text::lines(device_table(g, {true, 1 << 30, false}));
	REQUIRE(l.size() == 4);
	CHECK(l[0] == "DEV     POOLS  DETACHED  SERVED     HIT  RECYCLE  ALLOCATED  RELEASED  "
		      "ORPHANED  LENT  INFLIGHT");
	CHECK(l[1] == "eth0/2      2         1    2000   45.0%   100.0%       1100         0  "
		      "       0     -        40");
	CHECK_THAT(l[3], Catch::StartsWith("-           1         0      10  100.0%"));

	json d = device_doc(g, {{Source::Ppkit, true}}, 42);
	CHECK(text::keys(d) == std::set<std::string>{"command", "devices", "group_by", "sources",
						    "time_ns", "version"});
	CHECK(d["command"] == "stats");
	CHECK(d["group_by"] == "device");
	CHECK(d["version"] == 1);
	const json &e = d["devices"][0];
	CHECK(text::keys(e) == std::set<std::string>{"counters", "derived", "detached", "gauges",
						    "ids", "ifindex", "ifname", "inflight", "pools",
						    "rates"});
	CHECK(e["ifname"] == "eth0");
	CHECK(e["pools"] == 2);
	CHECK(e["ids"] == json::array({1, 3}));
	CHECK(e["detached"] == 1);
	CHECK(e["derived"]["served"] == 2000);
	CHECK(e["counters"]["pages_allocated"] == 1100);
	CHECK(e["counters"]["alloc_slow"].is_null());	// no pool reported it
	CHECK(e["gauges"]["inflight"] == 40);
	CHECK(e["rates"]["hit"].get<double>() == Approx(0.45));
	CHECK(d["devices"][2]["ifindex"].is_null());
}
