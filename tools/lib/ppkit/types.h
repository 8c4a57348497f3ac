// SPDX-License-Identifier: GPL-2.0
// libppkit: what a pool is and what its statistics say, whatever the backend.
#pragma once

#include <array>
#include <bitset>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace ppkit {

// Where a pool lives: our own family (pp_backport pools) or the upstream
// netdev family (the kernel's page_pools, kernels >= 6.8).
enum class Source : std::uint8_t { Ppkit, Netdev };

std::string_view to_string(Source s);
std::optional<Source> source_by_name(std::string_view name);

// Every value a stats reply may carry, in the order of the ppkit uapi
// (PPKIT_A_STATS_ALLOC_FAST onwards) and with the names of
// Documentation/stats.rst.  Counters only grow; gauges are levels.
enum class Counter : std::uint8_t {
	AllocFast,
	AllocSlow,
	AllocSlowHighOrder,
	AllocEmpty,
	AllocRefill,
	AllocWaive,
	RecycleCached,
	RecycleCacheFull,
	RecycleRing,
	RecycleRingFull,
	RecycleReleasedRefcnt,
	PagesFromCache,
	PagesFromRing,
	PagesFromStack,
	PagesFromAlloc,
	PagesAllocated,
	PagesReleased,
	PagesReturned,
	PagesLent,
	PagesReclaimed,
	PagesOrphaned,
	ReleasedPfmemalloc,
	ReleasedFarNode,
	ReleasedDestroyed,
	RingConsumed,
	SyncForDevice,
	SyncForDeviceBytes,
	// gauges
	Inflight,
	InflightMem,
	CachePages,
	RingPages,
	LentPages,
	// counters again, of pools that cut pages into fragments only
	FragsServed,
	FragsLent,
	FragPagesUnlent,
	// gauges again, from a pass over the lent pages (stats-get lent-ages)
	LentHeld,
	LentOldestMs,
};

inline constexpr std::size_t kCounterCount = static_cast<std::size_t>(Counter::LentOldestMs) + 1;
inline constexpr Counter kFirstGauge = Counter::Inflight;
inline constexpr Counter kLastGauge = Counter::LentPages;

constexpr std::size_t index(Counter c) { return static_cast<std::size_t>(c); }
constexpr bool is_gauge(Counter c)
{
	return (c >= kFirstGauge && c <= kLastGauge) || c >= Counter::LentHeld;
}
constexpr bool is_gauge(std::size_t i) { return is_gauge(static_cast<Counter>(i)); }
// Reported by pools that cut pages into fragments only.
constexpr bool is_frag_counter(Counter c)
{
	return c >= Counter::FragsServed && c <= Counter::FragPagesUnlent;
}
// Reported by the ppkit family when asked (lent-ages), for every pool.
constexpr bool is_age_gauge(Counter c) { return c >= Counter::LentHeld; }
// "alloc_fast", ... "lent_pages": the names every ppkit interface uses.
std::string_view name(Counter c);
std::optional<Counter> counter_by_name(std::string_view name);

// Statistics of one pool at one instant.  A backend fills what it knows:
// the upstream netdev family reports the first eleven counters only.
struct Stats {
	std::uint32_t pool_id = 0;
	Source source = Source::Ppkit;
	std::optional<std::uint32_t> ifindex;
	std::array<std::uint64_t, kCounterCount> values{};
	std::bitset<kCounterCount> present;

	bool has(Counter c) const { return present.test(index(c)); }
	std::uint64_t get(Counter c) const { return values[index(c)]; }
	std::optional<std::uint64_t> opt(Counter c) const
	{
		return has(c) ? std::optional(get(c)) : std::nullopt;
	}
	void set(Counter c, std::uint64_t v)
	{
		values[index(c)] = v;
		present.set(index(c));
	}
	bool empty() const { return present.none(); }
	// pages served = pages_from_cache + _ring + _stack + _alloc, when reported
	std::optional<std::uint64_t> served() const;
};

// One pool as its family describes it.  Optional fields are those a
// backend or a pool may not have (a pool serving no netdev has no ifindex).
struct Pool {
	std::uint32_t id = 0;
	Source source = Source::Ppkit;
	std::string owner;			// driver or module
	std::optional<std::uint32_t> ifindex;
	std::string ifname;			// resolved by the client, "" if unknown
	std::optional<std::uint32_t> queue;
	std::optional<std::uint32_t> napi_id;
	std::optional<std::int32_t> nid;	// -1: the allocating CPU's node
	std::optional<std::uint32_t> order;
	std::optional<std::uint32_t> ring_size;
	std::optional<std::uint32_t> cache_size;
	std::optional<std::uint32_t> refill_batch;
	std::optional<std::uint32_t> max_len;
	std::optional<std::uint32_t> dma_dir;	// enum ppkit_dma_dir
	std::optional<std::uint64_t> inflight;
	std::optional<std::uint64_t> inflight_mem;
	std::optional<std::uint64_t> created_ns;	// CLOCK_REALTIME
	std::optional<std::uint64_t> detach_time_ns;	// CLOCK_REALTIME, once destroyed

	bool detached() const { return detach_time_ns.has_value(); }
	std::string_view state() const { return detached() ? "detached" : "live"; }
};

std::string_view dma_dir_name(std::uint32_t dir);

// A pool and its statistics taken together, and when: two samples of the
// same pool make a window (rates.h).
struct Sample {
	Pool pool;
	Stats stats;
	std::chrono::steady_clock::time_point taken{};
	std::uint64_t realtime_ns = 0;
};

// What pool-set changes; at least one of them.
struct PoolSettings {
	std::optional<std::uint32_t> ring_size;
	std::optional<std::uint32_t> refill_batch;
};

// A pool notification (PPKIT_CMD_POOL_*_NTF, NETDEV_CMD_PAGE_POOL_*_NTF).
struct Event {
	enum class Kind : std::uint8_t { Add, Del, Change };
	Kind kind = Kind::Add;
	Pool pool;
	std::uint64_t realtime_ns = 0;	// when it was received
};

std::string_view to_string(Event::Kind k);

}  // namespace ppkit
