// SPDX-License-Identifier: GPL-2.0
#include "group.h"

#include <algorithm>
#include <map>

#include <fmt/format.h>

#include "format.h"
#include "ppkit/rates.h"
#include "table.h"

namespace ppctl {

using ppkit::Counter;
using nlohmann::json;

std::vector<DeviceGroup> group_by_device(const std::vector<ppkit::Sample> &samples)
{
	// Key: pools without a device sort last.
	std::map<std::pair<bool, std::uint32_t>, DeviceGroup> by;
	for (const ppkit::Sample &s : samples) {
		const ppkit::Pool &p = s.pool;
		DeviceGroup &g = by[{!p.ifindex, p.ifindex.value_or(0)}];
		g.ifindex = p.ifindex;
		if (g.ifname.empty())
			g.ifname = p.ifname;
		g.ids.push_back(p.id);
		g.detached += p.detached();
		for (std::size_t i = 0; i < ppkit::kCounterCount; i++) {
			auto c = static_cast<Counter>(i);
			if (!s.stats.has(c))
				continue;
			// An age is a maximum: the device's oldest page is its
			// oldest pool's, not the sum of theirs.
			g.stats.set(c, c == Counter::LentOldestMs && g.stats.has(c)
					       ? std::max(g.stats.get(c), s.stats.get(c))
					       : g.stats.get(c) + s.stats.get(c));
		}
		auto inflight = s.stats.has(Counter::Inflight) ? s.stats.opt(Counter::Inflight)
							       : p.inflight;
		if (inflight)
			g.inflight = g.inflight.value_or(0) + *inflight;
	}
	std::vector<DeviceGroup> v;
	for (auto &[k, g] : by) {
		std::sort(g.ids.begin(), g.ids.end());
		v.push_back(std::move(g));
	}
	return v;
}

ppkit::Window group_window(const DeviceGroup &g)
{
	// No creation time: a device's pools were created at different times,
	// so the rates have no length (seconds 0).
	ppkit::Sample s;
	s.stats = g.stats;
	return ppkit::since_creation(s);
}

void sort_groups(std::vector<DeviceGroup> &groups, SortKey k)
{
	// A stand-in pool per group, so groups sort as pools do (select.h):
	// its ifindex is the device's, its id the device's order.
	struct Keyed {
		ppkit::Pool pool;
		SortFields f;
		DeviceGroup *g;
	};
	std::vector<Keyed> keyed;
	for (std::size_t i = 0; i < groups.size(); i++) {
		DeviceGroup &g = groups[i];
		Keyed x;
		x.pool.ifindex = g.ifindex;
		x.pool.id = static_cast<std::uint32_t>(i);
		x.g = &g;
		if (g.inflight)
			x.f.inflight = static_cast<double>(*g.inflight);
		if (auto served = g.stats.served())
			x.f.served = static_cast<double>(*served);
		ppkit::Window w = group_window(g);
		x.f.hit = w.hit;
		x.f.recycle = w.recycle;
		keyed.push_back(std::move(x));
	}
	SortKey by = k == SortKey::Id ? SortKey::Dev : k;
	// The pool's address is taken at each comparison: sorting moves it.
	sort_rows_by(keyed, by, [](const Keyed &x) {
		SortFields f = x.f;
		f.pool = &x.pool;
		return f;
	});
	std::vector<DeviceGroup> out;
	for (Keyed &x : keyed)
		out.push_back(std::move(*x.g));
	groups = std::move(out);
}

namespace {

std::string dev_of(const DeviceGroup &g)
{
	ppkit::Pool p;
	p.ifindex = g.ifindex;
	p.ifname = g.ifname;
	return dev_cell(p);
}

}  // namespace

std::string device_table(const std::vector<DeviceGroup> &groups, const RenderOptions &o)
{
	Table t({
		{"DEV", false, 0},	 {"POOLS", true, 0},	 {"DETACHED", true, 0},
		{"SERVED", true, 0},	 {"HIT", true, 0},	 {"RECYCLE", true, 0},
		{"ALLOCATED", true, 2},	 {"RELEASED", true, 2},	 {"ORPHANED", true, 3},
		{"LENT", true, 4},	 {"INFLIGHT", true, 1},
	});
	for (const DeviceGroup &g : groups) {
		ppkit::Window w = group_window(g);
		t.add({dev_of(g), std::to_string(g.ids.size()), std::to_string(g.detached),
		       count(g.stats.served(), o.raw), percent(w.hit), percent(w.recycle),
		       count(g.stats.opt(Counter::PagesAllocated), o.raw),
		       count(g.stats.opt(Counter::PagesReleased), o.raw),
		       count(g.stats.opt(Counter::PagesOrphaned), o.raw),
		       count(g.stats.opt(Counter::LentPages), o.raw), count(g.inflight, o.raw)});
	}
	return t.render(o.width);
}

json device_doc(const std::vector<DeviceGroup> &groups,
		const std::vector<std::pair<ppkit::Source, bool>> &sources, std::uint64_t time_ns)
{
	json devs = json::array();
	for (const DeviceGroup &g : groups) {
		ppkit::Window w = group_window(g);
		devs.push_back({
			{"ifindex", opt(g.ifindex)},
			{"ifname", g.ifname.empty() ? json(nullptr) : json(g.ifname)},
			{"ids", g.ids},
			{"pools", g.ids.size()},
			{"detached", g.detached},
			{"inflight", opt(g.inflight)},
			{"counters", counters_json(g.stats)},
			{"gauges", gauges_json(g.stats)},
			{"derived",
			 {{"served", opt(ppkit::pages_served(w.delta))},
			  {"left_driver", opt(ppkit::pages_left_driver(w.delta))}}},
			{"rates", {{"hit", opt(w.hit)}, {"recycle", opt(w.recycle)}}},
		});
	}
	json src = json::object();
	for (const auto &[s, has] : sources)
		src[std::string(ppkit::to_string(s))] = {{"stats", has}};
	return {{"command", "stats"}, {"version", kJsonVersion}, {"group_by", "device"},
		{"time_ns", time_ns},	{"sources", std::move(src)},  {"devices", std::move(devs)}};
}

}  // namespace ppctl
