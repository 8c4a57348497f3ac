// SPDX-License-Identifier: GPL-2.0
#include "feed.h"

#include <algorithm>

namespace ppctld {

std::size_t follow(Store &store, ppkit::Source source, Feed &feed)
{
	std::size_t overruns = 0;
	while (feed.pending()) {
		bool lost = false;
		std::vector<ppkit::Event> events = feed.read(&lost);
		if (!lost) {
			for (const ppkit::Event &e : events)
				store.on_event(e);
			continue;
		}
		// Whatever is queued now happened before the dump below: read
		// it and drop it.  What arrives once the socket is empty is
		// newer than the dump's start and applies on top of it, in order.
		overruns++;
		for (std::size_t i = 0; i < kMaxDiscardReads && feed.pending(); i++)
			feed.read(&lost);
		store.on_pools(source, feed.pools());
	}
	return overruns;
}

bool LentAges::due(Clock::time_point now) const
{
	return !last_ || now - *last_ >= kLentAgesEvery;
}

void LentAges::apply(std::vector<ppkit::Stats> &stats, bool asked, Clock::time_point now)
{
	using ppkit::Counter;
	if (asked) {
		last_ = now;
		seen_.clear();
		for (const ppkit::Stats &s : stats)
			if (s.has(Counter::LentHeld) && s.has(Counter::LentOldestMs))
				seen_[s.pool_id] = {s.get(Counter::LentHeld), s.get(Counter::LentOldestMs)};
		return;
	}
	for (ppkit::Stats &s : stats) {
		auto it = seen_.find(s.pool_id);
		if (it == seen_.end())
			continue;
		s.set(Counter::LentHeld, it->second.first);
		s.set(Counter::LentOldestMs, it->second.second);
	}
}

std::vector<AlertEvent> sample(Store &store, ppkit::Source source, Feed &feed,
			       const std::function<std::chrono::steady_clock::time_point()> &now,
			       const std::function<std::uint64_t()> &realtime)
{
	LentAges every_round;
	return sample(store, source, feed, every_round, now, realtime);
}

std::vector<AlertEvent> sample(Store &store, ppkit::Source source, Feed &feed, LentAges &ages,
			       const std::function<std::chrono::steady_clock::time_point()> &now,
			       const std::function<std::uint64_t()> &realtime)
{
	if (!feed.has_stats())
		// No counters: the pool list's pages in flight are the sample.
		return store.on_gauges(source, feed.pools(), now(), realtime());
	const bool ask = ages.due(now());
	std::vector<ppkit::Stats> stats = feed.stats(ask);
	auto taken = now();
	ages.apply(stats, ask, taken);
	if (std::any_of(stats.begin(), stats.end(),
			[](const ppkit::Stats &s) { return !s.opt(ppkit::Counter::Inflight); }))
		store.on_pools(source, feed.pools());
	auto lookup = [&](std::uint32_t id) { return feed.pool(id); };
	return store.on_stats(source, std::move(stats), taken, realtime(), lookup);
}

std::string explain(const ppkit::Error &e)
{
	if (e.code() == ppkit::Errc::FamilyMissing && e.source() == ppkit::Source::Netdev)
		return std::string(e.what()) + ": sample ppkit pools only with source = ppkit";
	return e.what();
}

}  // namespace ppctld
