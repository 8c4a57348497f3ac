// SPDX-License-Identifier: GPL-2.0
// libppkit: the one place rates are computed (Documentation/stats.rst).
//
//   allocation hit rate = Δ(pages_from_cache + pages_from_ring + pages_from_stack)
//                         / Δ(served)
//   recycle rate        = Δ(recycle_cached + recycle_ring)
//                         / Δ(pages_returned + pages_reclaimed + pages_orphaned)
//
// over a window between two samples of one pool.  A window in which a
// counter went down, or the pool was re-created, has no rates at all; a
// window with no pages in a denominator has no such rate.  "No rate" is an
// empty optional, never NaN and never negative.
#pragma once

#include <array>
#include <bitset>
#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <utility>
#include <vector>

#include "ppkit/types.h"

namespace ppkit {

// How the counters of one pool moved between two samples.  Gauges are
// levels and have no delta.
struct Delta {
	std::array<std::uint64_t, kCounterCount> values{};
	std::bitset<kCounterCount> present;	// counters both samples reported

	bool has(Counter c) const { return present.test(index(c)); }
	std::uint64_t get(Counter c) const { return values[index(c)]; }
	void set(Counter c, std::uint64_t v)
	{
		values[index(c)] = v;
		present.set(index(c));
	}
};

// The two headline rates of a delta, each in [0, 1], or nothing.
std::optional<double> allocation_hit_rate(const Delta &d);
std::optional<double> recycle_rate(const Delta &d);
// Δserved and Δ(pages that left the driver): the rates' denominators.
std::optional<std::uint64_t> pages_served(const Delta &d);
std::optional<std::uint64_t> pages_left_driver(const Delta &d);

struct Window {
	double seconds = 0;	// its length; 0 when unknown
	bool reset = false;	// counters went down or the pool was re-created
	Delta delta;		// empty when reset
	std::optional<double> hit;	// allocation hit rate
	std::optional<double> recycle;	// recycle rate

	// Δcounter per second; nothing for gauges, an unknown length or a reset.
	std::optional<double> per_second(Counter c) const;
	std::optional<double> served_per_second() const;
	std::optional<double> recycled_per_second() const;	// recycle_cached + recycle_ring
};

// The window between two samples of the same pool, @before taken first.
// Samples of different pools make a reset window.
Window window(const Sample &before, const Sample &after);
// The same for counters the caller knows are of one pool (ppctld, which
// retires a pool re-created under its id): read at @t0 and @t1.
Window window(const Stats &before, std::chrono::steady_clock::time_point t0, const Stats &after,
	      std::chrono::steady_clock::time_point t1);

// The window from the pool's creation (all counters zero) to @s: the
// cumulative rates.  Its length is known when the pool reports its
// creation time.
Window since_creation(const Sample &s);

// Rounds of samples of many pools (ppctl stats -i, ppctl top): each
// sample's window against its pool's sample of the round before.  Only
// the last round is kept, so pools destroyed since are forgotten.
class Rounds {
public:
	struct Row {
		Sample sample;
		std::optional<Window> window;	// none: the pool is new since
	};
	std::vector<Row> next(std::vector<Sample> samples);
	std::size_t pools() const { return last_.size(); }

private:
	std::map<std::pair<Source, std::uint32_t>, Sample> last_;
};

}  // namespace ppkit
