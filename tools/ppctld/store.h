// SPDX-License-Identifier: GPL-2.0
// ppctld: what the daemon knows, fed by the sampler and free of netlink so
// the unit tests drive it with made-up pools and counters.
//
// Live pools are keyed by (source, id) and follow the netlink notifications;
// every sample appends one point to each pool's history and runs its alert
// rules.  A destroyed pool keeps its history, for `ppctl history`, among the
// last kGoneKept destroyed pools.  publish() hands the metrics threads an
// immutable snapshot: they never look at the store itself.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "alerts.h"
#include "history.h"
#include "ppkit/rates.h"
#include "ppkit/types.h"

namespace ppctld {

struct Config;

inline constexpr std::size_t kGoneKept = 64;

// One pool in a snapshot: its description, its last counters, the rates of
// its last window.
struct Row {
	ppkit::Pool pool;
	ppkit::Stats stats;
	std::uint64_t realtime_ns = 0;		// when the counters were read
	std::optional<double> hit, recycle;	// the last window's rates
	std::optional<double> served_per_s, released_per_s;
	bool low_hit = false, leak = false;	// alert states
};

struct BackendState {
	ppkit::Source source = ppkit::Source::Ppkit;
	bool up = false;
	std::string why;	// why it is down: the error's message
};

// What the metrics endpoint and the API show: one instant.
struct Snapshot {
	std::vector<Row> rows;			// live pools, by source then id
	std::vector<BackendState> backends;
	std::uint64_t samples = 0;		// sampling rounds done
	std::uint64_t sample_errors = 0;	// rounds a backend failed in
	double last_sample_s = 0;		// how long the last round took
	std::uint64_t realtime_ns = 0;		// when it was taken
	std::size_t history_bytes = 0;
	std::size_t gone_pools = 0;
	std::uint64_t alerts_raised = 0;
};

// An alert that started or ended, for the log.
struct AlertEvent {
	std::string rule;	// "low-hit-rate", "leak-suspect"
	Transition what = Transition::None;
	ppkit::Pool pool;
	std::string detail;	// the values behind it, for people
};

class Store {
public:
	using Clock = std::chrono::steady_clock;

	explicit Store(const Config &c, Clock::time_point epoch = Clock::now(),
		       std::uint64_t epoch_realtime_ns = 0);

	// A new configuration: history capacity and alert thresholds.
	void configure(const Config &c);

	// Notifications, and the full list (at start, after a reconnect or a
	// lost notification): pools missing from @pools are gone.
	void on_event(const ppkit::Event &e);
	void on_pools(ppkit::Source source, std::vector<ppkit::Pool> pools);
	// @source failed.  @retire: the family went away (module unloaded, a
	// reconnect failed) and its pools are gone.  Else (a dump that failed)
	// its pools keep their histories, out of the snapshot, until the list
	// read at reconnect (on_pools()) says which of them still live.
	void on_backend_down(ppkit::Source source, std::string why, bool retire = true);
	void on_backend_up(ppkit::Source source);

	// One sampling round of @source.  Stats of a pool the store does not
	// know are matched with @lookup(id) (a pool created since the last
	// notification was read); nothing found, they are dropped.
	std::vector<AlertEvent> on_stats(
		ppkit::Source source, std::vector<ppkit::Stats> stats, Clock::time_point taken,
		std::uint64_t realtime_ns,
		const std::function<std::optional<ppkit::Pool>(std::uint32_t)> &lookup = {});
	// One sampling round of a source whose kernel keeps no statistics
	// (Linux's CONFIG_PAGE_POOL_STATS=n): @pools is its full list, as for
	// on_pools(), and each pool's point holds its pages in flight, no rates.
	std::vector<AlertEvent> on_gauges(ppkit::Source source, std::vector<ppkit::Pool> pools,
					  Clock::time_point taken, std::uint64_t realtime_ns);
	void count_round(double seconds, bool failed);
	// The alerts of pools retired since the last call, each cleared once.
	std::vector<AlertEvent> take_retired_alerts();

	// The history of pool @id of @source since @since (a live pool first,
	// else the newest destroyed one with that id); empty if none.
	struct HistoryView {
		ppkit::Pool pool;
		bool live = false;
		std::vector<Point> points;
	};
	std::optional<HistoryView> history(ppkit::Source source, std::uint32_t id,
					   double since_s) const;
	// Realtime (ns) of a point's t_ds: as the realtime clock read then, with
	// the steps it took since (date -s, a suspend, which the steady clock
	// of t_ds does not count) from the sample they were first seen in.
	std::uint64_t realtime_of(std::uint32_t t_ds) const;

	std::size_t live_pools() const { return live_.size(); }
	std::size_t gone_pools() const { return gone_.size(); }
	std::size_t history_bytes() const;

	// Build a snapshot of now and make it the published one.
	void publish();
	std::shared_ptr<const Snapshot> snapshot() const;

private:
	struct PoolState {
		ppkit::Pool pool;
		bool sampled = false;		// row.stats and last_taken hold a sample
		// The row's rates are those of a window in which no counter
		// moved: another such window has the same (idle pools).
		bool steady = false;
		Clock::time_point last_taken{};
		Row row;
		History history;
		HitRateRule hit_rule;
		LeakRule leak_rule;
	};
	using Key = std::pair<ppkit::Source, std::uint32_t>;

	void add(const ppkit::Pool &p);
	void retire(const Key &k);
	std::uint32_t t_ds(Clock::time_point t) const;
	void note_realtime(std::uint32_t t_ds, std::uint64_t realtime_ns);

	AlertConfig alerts_;
	std::size_t capacity_;
	Clock::time_point epoch_;
	// From which t_ds on (the first) realtime is the second + t_ds * 10^8
	// ns: one entry, and one more each time the realtime clock stepped by
	// more than kClockStepNs against the steady one.  At most kClockSteps.
	static constexpr std::int64_t kClockStepNs = 1000000000;
	static constexpr std::size_t kClockSteps = 64;
	std::vector<std::pair<std::uint32_t, std::int64_t>> clock_;
	std::map<Key, PoolState> live_;
	std::deque<PoolState> gone_;
	std::map<ppkit::Source, BackendState> backends_;
	std::vector<AlertEvent> retired_alerts_;
	std::uint64_t samples_ = 0, sample_errors_ = 0, alerts_raised_ = 0;
	double last_sample_s_ = 0;

	mutable std::mutex snap_mu_;
	std::shared_ptr<const Snapshot> snap_;
};

}  // namespace ppctld
