// SPDX-License-Identifier: GPL-2.0
#include "ppkit/types.h"

#include <linux/ppkit.h>

namespace ppkit {

namespace {

constexpr std::array<std::string_view, kCounterCount> kNames = {
	"alloc_fast",
	"alloc_slow",
	"alloc_slow_high_order",
	"alloc_empty",
	"alloc_refill",
	"alloc_waive",
	"recycle_cached",
	"recycle_cache_full",
	"recycle_ring",
	"recycle_ring_full",
	"recycle_released_refcnt",
	"pages_from_cache",
	"pages_from_ring",
	"pages_from_stack",
	"pages_from_alloc",
	"pages_allocated",
	"pages_released",
	"pages_returned",
	"pages_lent",
	"pages_reclaimed",
	"pages_orphaned",
	"released_pfmemalloc",
	"released_far_node",
	"released_destroyed",
	"ring_consumed",
	"sync_for_device",
	"sync_for_device_bytes",
	"inflight",
	"inflight_mem",
	"cache_pages",
	"ring_pages",
	"lent_pages",
	"frags_served",
	"frags_lent",
	"frag_pages_unlent",
	"lent_held",
	"lent_oldest_ms",
};

// Counter follows the uapi one to one: a new kernel attribute needs a new
// Counter, and this catches a uapi that moved under us.
static_assert(PPKIT_A_STATS_LAST_VALUE - PPKIT_A_STATS_FIRST_COUNTER + 1 == kCounterCount);
static_assert(PPKIT_A_STATS_FIRST_COUNTER + index(Counter::PagesFromCache) ==
	      PPKIT_A_STATS_PAGES_FROM_CACHE);
static_assert(PPKIT_A_STATS_FIRST_COUNTER + index(Counter::SyncForDeviceBytes) ==
	      PPKIT_A_STATS_SYNC_FOR_DEVICE_BYTES);
static_assert(PPKIT_A_STATS_FIRST_COUNTER + index(Counter::Inflight) == PPKIT_A_STATS_INFLIGHT);
static_assert(PPKIT_A_STATS_FIRST_COUNTER + index(Counter::LentPages) == PPKIT_A_STATS_LENT_PAGES);
static_assert(PPKIT_A_STATS_FIRST_COUNTER + index(Counter::FragPagesUnlent) ==
	      PPKIT_A_STATS_FRAG_PAGES_UNLENT);
static_assert(PPKIT_A_STATS_FIRST_COUNTER + index(Counter::LentHeld) == PPKIT_A_STATS_LENT_HELD);
static_assert(PPKIT_A_STATS_FIRST_COUNTER + index(Counter::LentOldestMs) ==
	      PPKIT_A_STATS_LENT_OLDEST_MS);

}  // namespace

std::string_view name(Counter c)
{
	return kNames[index(c)];
}

std::optional<Counter> counter_by_name(std::string_view n)
{
	for (std::size_t i = 0; i < kCounterCount; i++)
		if (kNames[i] == n)
			return static_cast<Counter>(i);
	return std::nullopt;
}

std::string_view to_string(Source s)
{
	return s == Source::Ppkit ? "ppkit" : "netdev";
}

std::optional<Source> source_by_name(std::string_view n)
{
	if (n == "ppkit")
		return Source::Ppkit;
	if (n == "netdev")
		return Source::Netdev;
	return std::nullopt;
}

std::optional<std::uint64_t> Stats::served() const
{
	if (!has(Counter::PagesFromCache) || !has(Counter::PagesFromRing) ||
	    !has(Counter::PagesFromStack) || !has(Counter::PagesFromAlloc))
		return std::nullopt;
	return get(Counter::PagesFromCache) + get(Counter::PagesFromRing) +
	       get(Counter::PagesFromStack) + get(Counter::PagesFromAlloc);
}

std::string_view dma_dir_name(std::uint32_t dir)
{
	switch (dir) {
	case PPKIT_DMA_NONE:
		return "none";
	case PPKIT_DMA_FROM_DEVICE:
		return "from_device";
	case PPKIT_DMA_BIDIRECTIONAL:
		return "bidirectional";
	}
	return "unknown";
}

std::string_view to_string(Event::Kind k)
{
	switch (k) {
	case Event::Kind::Add:
		return "add";
	case Event::Kind::Del:
		return "del";
	case Event::Kind::Change:
		return "change";
	}
	return "unknown";
}

}  // namespace ppkit
