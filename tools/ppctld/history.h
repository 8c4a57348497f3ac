// SPDX-License-Identifier: GPL-2.0
// ppctld: a pool's history, a ring of fixed-size points that grows to its
// capacity and then overwrites the oldest.  Memory per pool is at most
// capacity * sizeof(Point) (24 bytes): one hour at 1 s is 3,600 points,
// 84 KiB; 1,000 such pools 82 MiB.  A pool that lived a minute holds a
// minute.
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

namespace ppctld {

// One sample's window.  Rates are NaN when the window has none (no pages
// in the denominator, counters reset): a float keeps the point small.
struct Point {
	std::uint32_t t_ds = 0;		// deciseconds since the daemon's epoch
	std::uint32_t inflight = 0;	// pages, saturated at UINT32_MAX
	float served_per_s = NAN;	// pages served per second
	float released_per_s = NAN;	// pages given back to the page allocator per second
	float hit = NAN;		// allocation hit rate, [0, 1]
	float recycle = NAN;		// recycle rate, [0, 1]
};
static_assert(sizeof(Point) == 24, "the documented size of a history point");

class History {
public:
	explicit History(std::size_t capacity) : capacity_(capacity ? capacity : 1) {}

	void push(const Point &p);
	std::size_t size() const { return points_.size(); }
	std::size_t capacity() const { return capacity_; }
	// A new capacity keeps the newest points that fit.
	void set_capacity(std::size_t capacity);
	// The points with t_ds >= @since_ds, oldest first.
	std::vector<Point> since(std::uint32_t since_ds) const;
	// The newest point, if any.
	std::optional<Point> last() const;
	// Bytes this history holds on to.
	std::size_t memory() const { return points_.capacity() * sizeof(Point); }

private:
	std::size_t capacity_;
	std::vector<Point> points_;
	std::size_t head_ = 0;	// the oldest point once the ring is full
};

}  // namespace ppctld
