// SPDX-License-Identifier: GPL-2.0
#include <catch2/catch.hpp>

#include <set>

#include <linux/ppkit.h>

#include "ppkit/types.h"

using namespace ppkit;

TEST_CASE("counter names are those of Documentation/stats.rst", "[types]")
{
	CHECK(kCounterCount == PPKIT_A_STATS_LAST_VALUE - PPKIT_A_STATS_FIRST_COUNTER + 1);
	CHECK(PPKIT_A_STATS_MAX == PPKIT_A_STATS_LENT_AGES);	// a request flag, not a value
	CHECK(name(Counter::AllocFast) == "alloc_fast");
	CHECK(name(Counter::RecycleReleasedRefcnt) == "recycle_released_refcnt");
	CHECK(name(Counter::PagesFromStack) == "pages_from_stack");
	CHECK(name(Counter::SyncForDeviceBytes) == "sync_for_device_bytes");
	CHECK(name(Counter::LentPages) == "lent_pages");
	CHECK(name(Counter::LentOldestMs) == "lent_oldest_ms");
	std::set<std::string_view> seen;
	for (std::size_t i = 0; i < kCounterCount; i++) {
		auto c = static_cast<Counter>(i);
		CHECK(counter_by_name(name(c)) == c);
		CHECK(seen.insert(name(c)).second);
	}
	CHECK_FALSE(counter_by_name("alloc_fastest"));
}

TEST_CASE("gauges are levels, the rest only grow", "[types]")
{
	CHECK_FALSE(is_gauge(Counter::PagesAllocated));
	CHECK_FALSE(is_gauge(Counter::SyncForDeviceBytes));
	CHECK(is_gauge(Counter::Inflight));
	CHECK(is_gauge(Counter::RingPages));
	CHECK_FALSE(is_gauge(Counter::FragPagesUnlent));
	CHECK(is_frag_counter(Counter::FragPagesUnlent));
	CHECK(is_gauge(Counter::LentHeld));
	CHECK(is_gauge(Counter::LentOldestMs));
	CHECK_FALSE(is_frag_counter(Counter::LentOldestMs));
}

TEST_CASE("served sums the four origins", "[types]")
{
	Stats s;
	s.set(Counter::PagesFromCache, 1);
	s.set(Counter::PagesFromRing, 2);
	s.set(Counter::PagesFromStack, 3);
	CHECK_FALSE(s.served());
	s.set(Counter::PagesFromAlloc, 4);
	CHECK(s.served() == 10u);
	CHECK(s.opt(Counter::PagesFromRing) == 2u);
	CHECK_FALSE(s.opt(Counter::PagesLent));
}

TEST_CASE("names of sources, states and directions", "[types]")
{
	CHECK(to_string(Source::Ppkit) == "ppkit");
	CHECK(source_by_name("netdev") == Source::Netdev);
	CHECK_FALSE(source_by_name("all"));
	Pool p;
	CHECK(p.state() == "live");
	p.detach_time_ns = 1;
	CHECK(p.state() == "detached");
	CHECK(dma_dir_name(PPKIT_DMA_NONE) == "none");
	CHECK(dma_dir_name(PPKIT_DMA_FROM_DEVICE) == "from_device");
	CHECK(dma_dir_name(99) == "unknown");
	CHECK(to_string(Event::Kind::Del) == "del");
}
