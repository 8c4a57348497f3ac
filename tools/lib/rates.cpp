// SPDX-License-Identifier: GPL-2.0
#include "ppkit/rates.h"

#include <algorithm>
#include <bitset>
#include <chrono>
#include <initializer_list>

namespace ppkit {

namespace {

std::optional<std::uint64_t> sum(const Delta &d, std::initializer_list<Counter> cs)
{
	std::uint64_t s = 0;
	for (Counter c : cs) {
		if (!d.has(c))
			return std::nullopt;
		s += d.get(c);
	}
	return s;
}

std::optional<double> ratio(std::optional<std::uint64_t> num, std::optional<std::uint64_t> den)
{
	if (!num || !den || *den == 0)
		return std::nullopt;
	// Counters are read while the pool runs: a page counted on one side of
	// the fraction and not yet on the other must not show as more than all.
	if (*num >= *den)
		return 1.0;
	return static_cast<double>(*num) / static_cast<double>(*den);
}

// The counters, not the gauges: what a window takes differences of.
const std::bitset<kCounterCount> kCounters = [] {
	std::bitset<kCounterCount> b;
	for (std::size_t i = 0; i < kCounterCount; i++)
		b[i] = !is_gauge(i);
	return b;
}();

Window finish(Window w)
{
	w.hit = allocation_hit_rate(w.delta);
	w.recycle = recycle_rate(w.delta);
	return w;
}

}  // namespace

std::optional<std::uint64_t> pages_served(const Delta &d)
{
	return sum(d, {Counter::PagesFromCache, Counter::PagesFromRing, Counter::PagesFromStack,
		       Counter::PagesFromAlloc});
}

std::optional<std::uint64_t> pages_left_driver(const Delta &d)
{
	return sum(d, {Counter::PagesReturned, Counter::PagesReclaimed, Counter::PagesOrphaned});
}

std::optional<double> allocation_hit_rate(const Delta &d)
{
	return ratio(sum(d, {Counter::PagesFromCache, Counter::PagesFromRing,
			     Counter::PagesFromStack}),
		     pages_served(d));
}

std::optional<double> recycle_rate(const Delta &d)
{
	return ratio(sum(d, {Counter::RecycleCached, Counter::RecycleRing}), pages_left_driver(d));
}

std::optional<double> Window::per_second(Counter c) const
{
	if (reset || seconds <= 0 || is_gauge(c) || !delta.has(c))
		return std::nullopt;
	return static_cast<double>(delta.get(c)) / seconds;
}

std::optional<double> Window::served_per_second() const
{
	auto s = pages_served(delta);
	if (reset || seconds <= 0 || !s)
		return std::nullopt;
	return static_cast<double>(*s) / seconds;
}

std::optional<double> Window::recycled_per_second() const
{
	auto s = sum(delta, {Counter::RecycleCached, Counter::RecycleRing});
	if (reset || seconds <= 0 || !s)
		return std::nullopt;
	return static_cast<double>(*s) / seconds;
}

Window window(const Sample &before, const Sample &after)
{
	const Pool &a = before.pool, &b = after.pool;
	if (a.id != b.id || a.source != b.source ||
	    (a.created_ns && b.created_ns && *a.created_ns != *b.created_ns)) {
		Window w;
		w.seconds = std::max(0.0, std::chrono::duration<double>(after.taken - before.taken).count());
		w.reset = true;
		return w;
	}
	return window(before.stats, before.taken, after.stats, after.taken);
}

Window window(const Stats &before, std::chrono::steady_clock::time_point t0, const Stats &after,
	      std::chrono::steady_clock::time_point t1)
{
	Window w;
	w.seconds = std::max(0.0, std::chrono::duration<double>(t1 - t0).count());
	// One pass over the counters both samples have: ppctld takes a
	// window of every pool at every sample.
	const auto both = before.present & after.present & kCounters;
	for (std::size_t i = 0; i < kCounterCount; i++) {
		if (!both[i])
			continue;
		if (after.values[i] < before.values[i]) {
			// Module reloaded or pool re-created under the same id.
			w.reset = true;
			w.delta = {};
			return w;
		}
		w.delta.values[i] = after.values[i] - before.values[i];
	}
	w.delta.present = both;
	return finish(w);
}

Window since_creation(const Sample &s)
{
	Window w;
	if (s.pool.created_ns && s.realtime_ns > *s.pool.created_ns)
		w.seconds = static_cast<double>(s.realtime_ns - *s.pool.created_ns) / 1e9;
	for (std::size_t i = 0; i < kCounterCount; i++) {
		auto c = static_cast<Counter>(i);
		if (!is_gauge(c) && s.stats.has(c))
			w.delta.set(c, s.stats.get(c));
	}
	return finish(w);
}

std::vector<Rounds::Row> Rounds::next(std::vector<Sample> samples)
{
	std::vector<Row> rows;
	rows.reserve(samples.size());
	std::map<std::pair<Source, std::uint32_t>, Sample> now;
	for (Sample &s : samples) {
		std::pair key{s.pool.source, s.pool.id};
		Row r{s, std::nullopt};
		if (auto it = last_.find(key); it != last_.end())
			r.window = window(it->second, s);
		rows.push_back(std::move(r));
		now.insert_or_assign(key, std::move(s));
	}
	last_ = std::move(now);
	return rows;
}

}  // namespace ppkit
