// SPDX-License-Identifier: GPL-2.0
#include "store.h"

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdlib>
#include <ctime>
#include <utility>

#include <fmt/format.h>

#include "config.h"

namespace ppctld {

namespace {

float as_float(std::optional<double> v)
{
	return v ? static_cast<float>(*v) : NAN;
}

std::uint64_t now_realtime_ns()
{
	timespec ts{};
	clock_gettime(CLOCK_REALTIME, &ts);
	return static_cast<std::uint64_t>(ts.tv_sec) * 1000000000ULL +
	       static_cast<std::uint64_t>(ts.tv_nsec);
}

std::string pool_name(const ppkit::Pool &p)
{
	std::string dev = p.ifname.empty() ? (p.ifindex ? fmt::format("#{}", *p.ifindex) : "-")
					   : p.ifname;
	return fmt::format("{} pool {} ({} {} queue {})", ppkit::to_string(p.source), p.id,
			   p.owner.empty() ? "?" : p.owner, dev,
			   p.queue ? std::to_string(*p.queue) : std::string("-"));
}

}  // namespace

Store::Store(const Config &c, Clock::time_point epoch, std::uint64_t epoch_realtime_ns)
	: alerts_(c.alerts), capacity_(c.history_points()), epoch_(epoch)
{
	clock_.emplace_back(0, static_cast<std::int64_t>(epoch_realtime_ns ? epoch_realtime_ns
									   : now_realtime_ns()));
	publish();
}

void Store::configure(const Config &c)
{
	alerts_ = c.alerts;
	std::size_t cap = c.history_points();
	if (cap != capacity_) {
		capacity_ = cap;
		for (auto &[k, st] : live_)
			st.history.set_capacity(cap);
		for (PoolState &st : gone_)
			st.history.set_capacity(cap);
	}
}

std::uint32_t Store::t_ds(Clock::time_point t) const
{
	auto ds = std::chrono::duration_cast<std::chrono::milliseconds>(t - epoch_).count() / 100;
	return static_cast<std::uint32_t>(std::clamp<long long>(ds, 0, UINT32_MAX));
}

std::uint64_t Store::realtime_of(std::uint32_t t_ds) const
{
	auto it = std::upper_bound(clock_.begin(), clock_.end(), t_ds,
				   [](std::uint32_t t, const auto &c) { return t < c.first; });
	const std::int64_t base = it == clock_.begin() ? clock_.front().second : std::prev(it)->second;
	return static_cast<std::uint64_t>(
		std::max<std::int64_t>(0, base + static_cast<std::int64_t>(t_ds) * 100000000LL));
}

void Store::note_realtime(std::uint32_t t_ds, std::uint64_t realtime_ns)
{
	const std::int64_t base =
		static_cast<std::int64_t>(realtime_ns) - static_cast<std::int64_t>(t_ds) * 100000000LL;
	if (std::llabs(base - clock_.back().second) <= kClockStepNs)
		return;
	if (clock_.back().first == t_ds)
		clock_.back().second = base;
	else
		clock_.emplace_back(t_ds, base);
	if (clock_.size() > kClockSteps)
		clock_.erase(clock_.begin());
}

void Store::add(const ppkit::Pool &p)
{
	Key k{p.source, p.id};
	auto it = live_.find(k);
	if (it != live_.end()) {
		if (it->second.pool.created_ns == p.created_ns) {
			it->second.pool = p;
			it->second.row.pool = p;
			return;
		}
		// The same id, another pool: the old one is gone.
		retire(k);
	}
	PoolState st{p, false, false, {}, Row{}, History(capacity_), {}, {}};
	st.row.pool = p;
	live_.emplace(k, std::move(st));
}

void Store::retire(const Key &k)
{
	auto it = live_.find(k);
	if (it == live_.end())
		return;
	const PoolState &st = it->second;
	if (st.hit_rule.active())
		retired_alerts_.push_back({"low-hit-rate", Transition::Cleared, st.pool,
					   pool_name(st.pool) + ": the pool is gone"});
	if (st.leak_rule.active())
		retired_alerts_.push_back({"leak-suspect", Transition::Cleared, st.pool,
					   pool_name(st.pool) + ": the pool is gone"});
	gone_.push_back(std::move(it->second));
	live_.erase(it);
	while (gone_.size() > kGoneKept)
		gone_.pop_front();
}

void Store::on_event(const ppkit::Event &e)
{
	switch (e.kind) {
	case ppkit::Event::Kind::Add:
	case ppkit::Event::Kind::Change:
		add(e.pool);
		break;
	case ppkit::Event::Kind::Del:
		retire({e.pool.source, e.pool.id});
		break;
	}
}

void Store::on_pools(ppkit::Source source, std::vector<ppkit::Pool> pools)
{
	std::map<std::uint32_t, const ppkit::Pool *> seen;
	for (const ppkit::Pool &p : pools)
		seen.emplace(p.id, &p);
	std::vector<Key> drop;
	for (auto &[k, st] : live_)
		if (k.first == source && !seen.count(k.second))
			drop.push_back(k);
	for (const Key &k : drop)
		retire(k);
	for (const ppkit::Pool &p : pools)
		add(p);
}

void Store::on_backend_down(ppkit::Source source, std::string why, bool retire_pools)
{
	if (retire_pools) {
		std::vector<Key> drop;
		for (auto &[k, st] : live_)
			if (k.first == source)
				drop.push_back(k);
		for (const Key &k : drop)
			retire(k);
	}
	backends_[source] = BackendState{source, false, std::move(why)};
}

std::vector<AlertEvent> Store::take_retired_alerts()
{
	return std::exchange(retired_alerts_, {});
}

void Store::on_backend_up(ppkit::Source source)
{
	backends_[source] = BackendState{source, true, {}};
}

std::vector<AlertEvent> Store::on_stats(
	ppkit::Source source, std::vector<ppkit::Stats> stats, Clock::time_point taken,
	std::uint64_t realtime_ns,
	const std::function<std::optional<ppkit::Pool>(std::uint32_t)> &lookup)
{
	std::vector<AlertEvent> out;
	const double t = std::chrono::duration<double>(taken - epoch_).count();
	const std::uint32_t tds = t_ds(taken);

	note_realtime(tds, realtime_ns);

	// Dumps come in id order, like the map: try the entry after the last one first.
	auto hint = live_.end();
	for (ppkit::Stats &s : stats) {
		Key k{source, s.pool_id};
		auto it = hint != live_.end() && hint->first == k ? hint : live_.find(k);
		if (it == live_.end()) {
			std::optional<ppkit::Pool> p = lookup ? lookup(s.pool_id) : std::nullopt;
			if (!p)
				continue;
			add(*p);
			it = live_.find(k);
		}
		PoolState &st = it->second;
		s.source = source;

		Point pt;
		pt.t_ds = tds;
		std::optional<std::uint64_t> inflight = s.opt(ppkit::Counter::Inflight);
		if (!inflight)
			inflight = st.pool.inflight;
		pt.inflight = inflight ? static_cast<std::uint32_t>(std::min<std::uint64_t>(
						 *inflight, UINT32_MAX))
				       : 0;
		Row &row = st.row;
		// Of 1,000 pools most are idle: nothing moved since the last
		// sample, nor in the window before, whose rates (none, 0 per
		// second) are this one's too.
		const bool same = st.sampled && taken > st.last_taken &&
				  s.present == row.stats.present && s.values == row.stats.values;
		if (!same || !st.steady) {
			row.hit.reset();
			row.recycle.reset();
			row.served_per_s.reset();
			row.released_per_s.reset();
			if (st.sampled) {
				ppkit::Window w = ppkit::window(row.stats, st.last_taken, s, taken);
				row.hit = w.hit;
				row.recycle = w.recycle;
				row.served_per_s = w.served_per_second();
				row.released_per_s = w.per_second(ppkit::Counter::PagesReleased);
			}
		}
		st.steady = same;
		pt.served_per_s = as_float(row.served_per_s);
		pt.released_per_s = as_float(row.released_per_s);
		pt.hit = as_float(row.hit);
		pt.recycle = as_float(row.recycle);
		st.history.push(pt);

		Transition h = st.hit_rule.update(t, row.hit, alerts_);
		if (h != Transition::None)
			out.push_back({"low-hit-rate", h, st.pool,
				       h == Transition::Raised
					       ? fmt::format("allocation hit rate {:.1f}% below {:.1f}% for {:.0f}s",
							     *row.hit * 100, alerts_.hit_below * 100,
							     t - st.hit_rule.since().value_or(t))
					       : alerts_.hit_below > 0 && row.hit
							 ? fmt::format("allocation hit rate back at {:.1f}%",
								       *row.hit * 100)
							 : std::string("rule turned off")});
		Transition l = st.leak_rule.update(t, inflight, alerts_);
		if (l != Transition::None)
			out.push_back({"leak-suspect", l, st.pool,
				       l == Transition::Raised
					       ? fmt::format("{} pages in flight, rising for {:.0f}s or more",
							     inflight.value_or(0), alerts_.leak_for_s)
					       : alerts_.leak_for_s <= 0
							 ? std::string("rule turned off")
							 : fmt::format("{} pages in flight, falling again",
								       inflight.value_or(0))});
		row.low_hit = st.hit_rule.active();
		row.leak = st.leak_rule.active();
		row.stats = s;	// the next window's start
		row.realtime_ns = realtime_ns;
		st.last_taken = taken;
		st.sampled = true;
		hint = std::next(it);
	}
	for (AlertEvent &e : out) {
		e.detail = pool_name(e.pool) + ": " + e.detail;
		if (e.what == Transition::Raised)
			alerts_raised_++;
	}
	return out;
}

std::vector<AlertEvent> Store::on_gauges(ppkit::Source source, std::vector<ppkit::Pool> pools,
					 Clock::time_point taken, std::uint64_t realtime_ns)
{
	std::vector<ppkit::Stats> gauges;
	gauges.reserve(pools.size());
	for (const ppkit::Pool &p : pools) {
		ppkit::Stats &s = gauges.emplace_back();
		s.pool_id = p.id;
		s.ifindex = p.ifindex;
		if (p.inflight)
			s.set(ppkit::Counter::Inflight, *p.inflight);
		if (p.inflight_mem)
			s.set(ppkit::Counter::InflightMem, *p.inflight_mem);
	}
	on_pools(source, std::move(pools));
	return on_stats(source, std::move(gauges), taken, realtime_ns);
}

void Store::count_round(double seconds, bool failed)
{
	samples_++;
	if (failed)
		sample_errors_++;
	last_sample_s_ = seconds;
}

std::optional<Store::HistoryView> Store::history(ppkit::Source source, std::uint32_t id,
						 double since_s) const
{
	std::uint32_t now = t_ds(Clock::now());
	double back = std::max(0.0, since_s) * 10;
	std::uint32_t from = back >= now ? 0 : now - static_cast<std::uint32_t>(back);
	auto it = live_.find({source, id});
	if (it != live_.end())
		return HistoryView{it->second.pool, true, it->second.history.since(from)};
	for (auto g = gone_.rbegin(); g != gone_.rend(); ++g)
		if (g->pool.source == source && g->pool.id == id)
			return HistoryView{g->pool, false, g->history.since(from)};
	return std::nullopt;
}

std::size_t Store::history_bytes() const
{
	std::size_t n = 0;
	for (const auto &[k, st] : live_)
		n += st.history.memory();
	for (const PoolState &st : gone_)
		n += st.history.memory();
	return n;
}

void Store::publish()
{
	auto s = std::make_shared<Snapshot>();
	s->rows.reserve(live_.size());
	std::size_t bytes = 0;
	for (const auto &[k, st] : live_) {
		// a source down after a failed dump: its pools' last rows are stale
		if (auto b = backends_.find(k.first); b == backends_.end() || b->second.up)
			s->rows.push_back(st.row);
		bytes += st.history.memory();
	}
	for (const PoolState &st : gone_)
		bytes += st.history.memory();
	for (const auto &[src, b] : backends_)
		s->backends.push_back(b);
	s->samples = samples_;
	s->sample_errors = sample_errors_;
	s->last_sample_s = last_sample_s_;
	s->realtime_ns = now_realtime_ns();
	s->history_bytes = bytes;	// history_bytes(), in the same walk
	s->gone_pools = gone_.size();
	s->alerts_raised = alerts_raised_;
	std::lock_guard lock(snap_mu_);
	snap_ = std::move(s);
}

std::shared_ptr<const Snapshot> Store::snapshot() const
{
	std::lock_guard lock(snap_mu_);
	return snap_;
}

}  // namespace ppctld
