// SPDX-License-Identifier: GPL-2.0
// ppctld's per-pool history: a ring that grows to its capacity, never past
// it, and then overwrites the oldest point.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "history.h"

using namespace ppctld;

namespace {

Point at(std::uint32_t t_ds, std::uint32_t inflight = 0)
{
	Point p;
	p.t_ds = t_ds;
	p.inflight = inflight;
	return p;
}

std::vector<std::uint32_t> times(const std::vector<Point> &v)
{
	std::vector<std::uint32_t> t;
	for (const Point &p : v)
		t.push_back(p.t_ds);
	return t;
}

std::vector<std::uint32_t> range(std::uint32_t from, std::uint32_t to)
{
	std::vector<std::uint32_t> v;
	for (std::uint32_t i = from; i <= to; i++)
		v.push_back(i);
	return v;
}

}  // namespace

TEST_CASE("history: an empty ring", "[ppctld][history]")
{
	History h(10);
	CHECK(h.size() == 0);
	CHECK(h.capacity() == 10);
	CHECK_FALSE(h.last());
	CHECK(h.since(0).empty());
	CHECK(h.memory() == 0);
}

TEST_CASE("history: grows up to its capacity only", "[ppctld][history]")
{
	for (std::size_t cap : {1u, 3u, 16u, 17u, 100u, 3600u}) {
		INFO("capacity " << cap);
		History h(cap);
		std::size_t most = 0;
		for (std::uint32_t i = 1; i <= cap * 3 + 5; i++) {
			h.push(at(i));
			CHECK(h.size() == std::min<std::size_t>(i, cap));
			most = std::max(most, h.memory());
		}
		CHECK(h.size() == cap);
		CHECK(h.capacity() == cap);
		CHECK(most <= cap * 24);
		CHECK(h.memory() <= cap * sizeof(Point));
	}
	// A pool that lived a minute holds a minute, not an hour.
	History h(3600);
	for (std::uint32_t i = 0; i < 60; i++)
		h.push(at(i));
	CHECK(h.size() == 60);
	CHECK(h.memory() < 3600 * 24 / 10);
}

TEST_CASE("history: wrap-around keeps the newest points, oldest first", "[ppctld][history]")
{
	History h(5);
	for (std::uint32_t i = 1; i <= 12; i++)
		h.push(at(i, i * 10));
	CHECK(times(h.since(0)) == range(8, 12));
	REQUIRE(h.last());
	CHECK(h.last()->t_ds == 12);
	CHECK(h.last()->inflight == 120);
	auto all = h.since(0);
	REQUIRE(all.size() == 5);
	CHECK(all.front().inflight == 80);

	// Exactly full, not wrapped yet.
	History f(4);
	for (std::uint32_t i = 1; i <= 4; i++)
		f.push(at(i));
	CHECK(times(f.since(0)) == range(1, 4));
	f.push(at(5));
	CHECK(times(f.since(0)) == range(2, 5));
	CHECK(f.last()->t_ds == 5);
}

TEST_CASE("history: since() filters on the point's time", "[ppctld][history]")
{
	History h(8);
	for (std::uint32_t i = 1; i <= 11; i++)
		h.push(at(i * 10));	// holds 40..110 after wrapping
	CHECK(times(h.since(0)) == std::vector<std::uint32_t>{40, 50, 60, 70, 80, 90, 100, 110});
	CHECK(times(h.since(75)) == std::vector<std::uint32_t>{80, 90, 100, 110});
	CHECK(times(h.since(80)) == std::vector<std::uint32_t>{80, 90, 100, 110});
	CHECK(times(h.since(110)) == std::vector<std::uint32_t>{110});
	CHECK(h.since(111).empty());
	CHECK(h.since(UINT32_MAX).empty());
}

TEST_CASE("history: last() is the newest point", "[ppctld][history]")
{
	History h(3);
	h.push(at(1, 7));
	REQUIRE(h.last());
	CHECK(h.last()->t_ds == 1);
	CHECK(h.last()->inflight == 7);
	for (std::uint32_t i = 2; i <= 7; i++) {
		h.push(at(i, i));
		REQUIRE(h.last());
		CHECK(h.last()->t_ds == i);
	}
}

TEST_CASE("history: a point keeps its values, NaN included", "[ppctld][history]")
{
	History h(2);
	Point p = at(5, 42);
	p.served_per_s = 1000.5f;
	p.released_per_s = 2.0f;
	p.hit = 0.75f;
	h.push(p);
	h.push(at(6));
	auto v = h.since(0);
	REQUIRE(v.size() == 2);
	CHECK(v[0].inflight == 42);
	CHECK(v[0].served_per_s == 1000.5f);
	CHECK(v[0].released_per_s == 2.0f);
	CHECK(v[0].hit == 0.75f);
	CHECK(std::isnan(v[0].recycle));
	CHECK(std::isnan(v[1].hit));
	CHECK(std::isnan(v[1].served_per_s));
}

TEST_CASE("history: set_capacity() keeps the newest points that fit", "[ppctld][history]")
{
	SECTION("shrinking a wrapped ring")
	{
		History h(10);
		for (std::uint32_t i = 1; i <= 25; i++)
			h.push(at(i));	// 16..25, the head in the middle
		h.set_capacity(4);
		CHECK(h.capacity() == 4);
		CHECK(h.size() == 4);
		CHECK(times(h.since(0)) == range(22, 25));
		CHECK(h.memory() <= 4 * 24);
		CHECK(h.last()->t_ds == 25);
		// It goes on wrapping at the new capacity.
		for (std::uint32_t i = 26; i <= 31; i++)
			h.push(at(i));
		CHECK(times(h.since(0)) == range(28, 31));
		CHECK(h.memory() <= 4 * 24);
	}
	SECTION("shrinking a ring that is not full")
	{
		History h(10);
		for (std::uint32_t i = 1; i <= 6; i++)
			h.push(at(i));
		h.set_capacity(3);
		CHECK(times(h.since(0)) == range(4, 6));
	}
	SECTION("shrinking to more than it holds keeps everything")
	{
		History h(10);
		for (std::uint32_t i = 1; i <= 4; i++)
			h.push(at(i));
		h.set_capacity(6);
		CHECK(times(h.since(0)) == range(1, 4));
		for (std::uint32_t i = 5; i <= 9; i++)
			h.push(at(i));
		CHECK(times(h.since(0)) == range(4, 9));
	}
	SECTION("growing a wrapped ring keeps its points and order")
	{
		History h(3);
		for (std::uint32_t i = 1; i <= 5; i++)
			h.push(at(i));	// 3, 4, 5
		h.set_capacity(6);
		CHECK(h.capacity() == 6);
		CHECK(times(h.since(0)) == range(3, 5));
		for (std::uint32_t i = 6; i <= 10; i++)
			h.push(at(i));
		CHECK(times(h.since(0)) == range(5, 10));
		CHECK(h.memory() <= 6 * 24);
	}
}

TEST_CASE("history: capacity 0 is taken as 1", "[ppctld][history]")
{
	History h(0);
	CHECK(h.capacity() == 1);
	h.push(at(1));
	h.push(at(2));
	h.push(at(3));
	CHECK(h.size() == 1);
	CHECK(times(h.since(0)) == std::vector<std::uint32_t>{3});
	CHECK(h.memory() <= 24);

	History g(5);
	for (std::uint32_t i = 1; i <= 5; i++)
		g.push(at(i));
	g.set_capacity(0);
	CHECK(g.capacity() == 1);
	CHECK(times(g.since(0)) == std::vector<std::uint32_t>{5});
	g.push(at(6));
	CHECK(times(g.since(0)) == std::vector<std::uint32_t>{6});
}
