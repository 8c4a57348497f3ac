// SPDX-License-Identifier: GPL-2.0
// ppctld: the alert rules, one state machine per pool and rule.
//
//   low-hit-rate  the allocation hit rate stayed below hit_below for at
//                 least hit_for_s.  A sample without allocations (no rate)
//                 neither starts nor clears it; a rate >= hit_below clears.
//   leak-suspect  in-flight pages rose at every sample for at least
//                 leak_for_s, by leak_min_pages or more.  A sample at the same
//                 level restarts the count without clearing; a drop clears.
//
// Each rule reports Raised once when it starts and Cleared once when it
// ends; the daemon logs both and shows the state in its metrics.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace ppctld {

struct AlertConfig {
	double hit_below = 0.5;		// 0 disables the rule
	double hit_for_s = 30;
	double leak_for_s = 60;		// 0 disables the rule
	std::uint64_t leak_min_pages = 64;
};

enum class Transition : std::uint8_t { None, Raised, Cleared };

class HitRateRule {
public:
	Transition update(double t, std::optional<double> hit, const AlertConfig &c);
	bool active() const { return active_; }
	// When the rate went below the threshold, while it is below.
	std::optional<double> since() const { return since_; }
	void reset() { *this = HitRateRule(); }

private:
	bool active_ = false;
	std::optional<double> since_;
};

class LeakRule {
public:
	Transition update(double t, std::optional<std::uint64_t> inflight, const AlertConfig &c);
	bool active() const { return active_; }
	void reset() { *this = LeakRule(); }

private:
	bool active_ = false;
	std::optional<std::uint64_t> last_;
	std::optional<double> run_t_;		// where the current rise began
	std::uint64_t run_v_ = 0;
	std::optional<double> last_t_;
};

std::string_view to_string(Transition t);

}  // namespace ppctld
