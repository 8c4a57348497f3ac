// SPDX-License-Identifier: GPL-2.0
#include "alerts.h"

namespace ppctld {

Transition HitRateRule::update(double t, std::optional<double> hit, const AlertConfig &c)
{
	if (c.hit_below <= 0) {
		bool was = active_;
		reset();
		return was ? Transition::Cleared : Transition::None;
	}
	if (!hit)
		return Transition::None;
	if (*hit >= c.hit_below) {
		since_.reset();
		if (active_) {
			active_ = false;
			return Transition::Cleared;
		}
		return Transition::None;
	}
	if (!since_)
		since_ = t;
	if (!active_ && t - *since_ >= c.hit_for_s) {
		active_ = true;
		return Transition::Raised;
	}
	return Transition::None;
}

Transition LeakRule::update(double t, std::optional<std::uint64_t> inflight, const AlertConfig &c)
{
	if (c.leak_for_s <= 0 || !inflight) {
		bool was = active_;
		if (c.leak_for_s <= 0)
			reset();
		return was && c.leak_for_s <= 0 ? Transition::Cleared : Transition::None;
	}
	std::uint64_t v = *inflight;
	Transition tr = Transition::None;
	if (!last_) {
		// First sample: nothing to compare with.
	} else if (v > *last_) {
		if (!run_t_) {
			run_t_ = *last_t_;
			run_v_ = *last_;
		}
		if (!active_ && t - *run_t_ >= c.leak_for_s && v - run_v_ >= c.leak_min_pages) {
			active_ = true;
			tr = Transition::Raised;
		}
	} else if (v == *last_) {
		run_t_.reset();
	} else {
		run_t_.reset();
		if (active_) {
			active_ = false;
			tr = Transition::Cleared;
		}
	}
	last_ = v;
	last_t_ = t;
	return tr;
}

std::string_view to_string(Transition t)
{
	switch (t) {
	case Transition::None:
		return "none";
	case Transition::Raised:
		return "raised";
	case Transition::Cleared:
		return "cleared";
	}
	return "unknown";
}

}  // namespace ppctld
