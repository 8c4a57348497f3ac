// SPDX-License-Identifier: GPL-2.0
// ppctld: what the daemon reads from one netlink family (its pool list,
// statistics and notifications) and how it feeds the store with it.  The
// family is behind an interface so the unit tests drive the same logic with
// a fake: the order of a re-dump and queued notifications, the in-flight
// pages of pools whose statistics lack them.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <unordered_map>
#include <utility>
#include <vector>

#include "ppkit/error.h"
#include "ppkit/types.h"
#include "store.h"

namespace ppctld {

class Feed {
public:
	virtual ~Feed() = default;

	// The full pool list (a dump).
	virtual std::vector<ppkit::Pool> pools() = 0;
	// One pool, none if it is gone.
	virtual std::optional<ppkit::Pool> pool(std::uint32_t id) = 0;
	// Whether the kernel keeps statistics; the statistics of every pool,
	// with the lent pages' ages if @lent_ages (and the family has them).
	virtual bool has_stats() = 0;
	virtual std::vector<ppkit::Stats> stats(bool lent_ages) = 0;

	// Whether notifications wait to be read (never blocks).
	virtual bool pending() = 0;
	// The notifications that wait; @lost set when the kernel dropped some
	// (the socket's buffer overran).
	virtual std::vector<ppkit::Event> read(bool *lost) = 0;
};

// The ages of the pages the stack holds (Counter::LentHeld, LentOldestMs)
// cost the kernel a pass over each pool's lent pages, about a cache miss
// a page: ppctld asks for them at most every kLentAgesEvery, and between
// two asks each pool reports its last.  An alert on pages held for
// minutes loses nothing.
inline constexpr std::chrono::seconds kLentAgesEvery{10};

class LentAges {
public:
	using Clock = std::chrono::steady_clock;

	// Whether a round at @now asks.
	bool due(Clock::time_point now) const;
	// A round's @stats, taken at @now: remembered if it asked (@asked),
	// else given each pool's last (a pool new since has none).
	void apply(std::vector<ppkit::Stats> &stats, bool asked, Clock::time_point now);

private:
	std::optional<Clock::time_point> last_;
	std::unordered_map<std::uint32_t, std::pair<std::uint64_t, std::uint64_t>> seen_;
};

// How many reads a resynchronisation spends discarding what was queued
// before it dumps: a socket that keeps filling faster than that is dumped
// anyway (and the next overrun resynchronises again).
inline constexpr std::size_t kMaxDiscardReads = 1024;

// Applies the notifications @feed holds to @store.  After an overrun the
// events read with it and every one still queued are older than the
// re-dump that replaces them: they are discarded, the socket emptied,
// and only then the list dumped; applied after it, they would bring back
// a destroyed pool.  Returns the number of overruns (for the log).
std::size_t follow(Store &store, ppkit::Source source, Feed &feed);

// One sampling round of @source into @store, taken at @now / @realtime().
// Pools whose statistics have no pages in flight (the netdev family's
// stats-get has none) are refreshed from a pool dump first, so that their
// in-flight gauge and history move with every sample, not only on
// notifications.
// @ages spaces out the lent pages' ages (without it, every round asks).
std::vector<AlertEvent> sample(Store &store, ppkit::Source source, Feed &feed, LentAges &ages,
			       const std::function<std::chrono::steady_clock::time_point()> &now,
			       const std::function<std::uint64_t()> &realtime);
std::vector<AlertEvent> sample(Store &store, ppkit::Source source, Feed &feed,
			       const std::function<std::chrono::steady_clock::time_point()> &now,
			       const std::function<std::uint64_t()> &realtime);

// A family's error as ppctld logs it: libppkit says what failed and why,
// ppctld adds what to do in its own terms (its configuration).
std::string explain(const ppkit::Error &e);

}  // namespace ppctld
