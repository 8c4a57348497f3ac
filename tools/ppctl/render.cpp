// SPDX-License-Identifier: GPL-2.0
#include "render.h"

#include <algorithm>
#include <ctime>
#include <ostream>

#include <fmt/format.h>

#include "format.h"
#include "table.h"

namespace ppctl {

using ppkit::Counter;
using nlohmann::json;

namespace {

json str_or_null(const std::string &s)
{
	return s.empty() ? json(nullptr) : json(s);
}

std::string num(const std::optional<std::uint32_t> &v)
{
	return v ? std::to_string(*v) : "-";
}

std::string node_cell(const std::optional<std::int32_t> &nid)
{
	if (!nid)
		return "-";
	return *nid < 0 ? "local" : std::to_string(*nid);
}

std::string owner_cell(const ppkit::Pool &p)
{
	return p.owner.empty() ? "-" : p.owner;
}

std::string local_time(std::uint64_t realtime_ns)
{
	time_t t = static_cast<time_t>(realtime_ns / 1000000000);
	tm tmv{};
	localtime_r(&t, &tmv);
	char buf[32];
	std::strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%S", &tmv);
	return fmt::format("{}.{:03}", buf, realtime_ns % 1000000000 / 1000000);
}

}  // namespace

std::string dev_cell(const ppkit::Pool &p)
{
	if (!p.ifindex)
		return "-";
	if (p.ifname.empty())
		return fmt::format("#{}", *p.ifindex);
	return fmt::format("{}/{}", p.ifname, *p.ifindex);
}

std::string pools_table(const std::vector<ppkit::Pool> &pools, const RenderOptions &o)
{
	std::vector<Column> cols = {
		{"ID", true, 0},	 {"SRC", false, 0},	 {"OWNER", false, 3},
		{"DEV", false, 1},	 {"QUEUE", true, 2},	 {"NAPI", true, 6},
		{"NODE", true, 5},	 {"ORDER", true, 4},	 {"RING", true, 3},
		{"INFLIGHT", true, 1}, {"STATE", false, 0},
	};
	cols[1].hidden = !o.show_source;
	Table t(cols);
	for (const auto &p : pools)
		t.add({std::to_string(p.id), std::string(to_string(p.source)), owner_cell(p),
		       dev_cell(p), num(p.queue), num(p.napi_id), node_cell(p.nid), num(p.order),
		       num(p.ring_size), count(p.inflight, o.raw), std::string(p.state())});
	return t.render(o.width);
}

std::string stats_table(const std::vector<ppkit::Sample> &samples, const RenderOptions &o)
{
	std::vector<Column> cols = {
		{"ID", true, 0},	 {"SRC", false, 0},	 {"DEV", false, 3},
		{"Q", true, 4},		 {"SERVED", true, 0},	 {"HIT", true, 0},
		{"RECYCLE", true, 0},	 {"ALLOCATED", true, 2}, {"RELEASED", true, 2},
		{"ORPHANED", true, 3},	 {"LENT", true, 5},	 {"INFLIGHT", true, 1},
		{"CACHE", true, 5},	 {"RING", true, 4},	 {"STATE", false, 6},
	};
	cols[1].hidden = !o.show_source;
	Table t(cols);
	for (const auto &s : samples) {
		const ppkit::Stats &st = s.stats;
		ppkit::Window w = ppkit::since_creation(s);
		auto inflight = st.has(Counter::Inflight) ? st.opt(Counter::Inflight) : s.pool.inflight;
		t.add({std::to_string(s.pool.id), std::string(to_string(s.pool.source)),
		       dev_cell(s.pool), num(s.pool.queue), count(st.served(), o.raw),
		       percent(w.hit), percent(w.recycle),
		       count(st.opt(Counter::PagesAllocated), o.raw),
		       count(st.opt(Counter::PagesReleased), o.raw),
		       count(st.opt(Counter::PagesOrphaned), o.raw),
		       count(st.opt(Counter::LentPages), o.raw), count(inflight, o.raw),
		       count(st.opt(Counter::CachePages), o.raw),
		       count(st.opt(Counter::RingPages), o.raw), std::string(s.pool.state())});
	}
	return t.render(o.width);
}

std::string stats_long(const std::vector<ppkit::Sample> &samples, const RenderOptions &o)
{
	std::string out;
	for (const auto &s : samples) {
		const ppkit::Pool &p = s.pool;
		out += fmt::format("pool {}{}  owner {}  dev {}  queue {}  {}\n", p.id,
				   o.show_source ? fmt::format(" ({})", to_string(p.source)) : "",
				   owner_cell(p), dev_cell(p), num(p.queue), p.state());
		// Name/value pairs, as many pairs to a line as the width allows.
		std::vector<std::pair<std::string, std::string>> kv;
		for (std::size_t i = 0; i < ppkit::kCounterCount; i++) {
			auto c = static_cast<Counter>(i);
			if (!s.stats.has(c))
				continue;
			std::uint64_t v = s.stats.get(c);
			bool bytes = c == Counter::InflightMem || c == Counter::SyncForDeviceBytes;
			kv.emplace_back(std::string(name(c)),
					o.raw ? std::to_string(v) : bytes ? human_bytes(v) : human_count(v));
		}
		if (kv.empty()) {
			out += "  (no statistics)\n";
			continue;
		}
		std::size_t nw = 0, vw = 0;
		for (const auto &[n, v] : kv) {
			nw = std::max(nw, n.size());
			vw = std::max(vw, v.size());
		}
		const std::size_t pair = 2 + nw + 1 + vw;
		const std::size_t per_line =
			std::max<std::size_t>(1, static_cast<std::size_t>(std::max(o.width, 1)) /
							 (pair + 2));
		// Column-major, like ls: read down, then across.
		const std::size_t lines = (kv.size() + per_line - 1) / per_line;
		for (std::size_t r = 0; r < lines; r++) {
			std::string l;
			for (std::size_t c = 0; c < per_line; c++) {
				std::size_t i = c * lines + r;
				if (i >= kv.size())
					break;
				l += fmt::format("  {:<{}} {:>{}}", kv[i].first, nw, kv[i].second, vw);
			}
			out += l + "\n";
		}
		ppkit::Window w = ppkit::since_creation(s);
		out += fmt::format("  hit rate {}  recycle rate {}", percent(w.hit), percent(w.recycle));
		if (w.seconds > 0)
			out += fmt::format("  (over {} since creation)", duration(w.seconds));
		out += "\n";
	}
	return out;
}

std::string interval_lines(const std::vector<IntervalRow> &rows, const RenderOptions &o,
			   bool header)
{
	// Fixed minimum widths keep the columns of successive intervals aligned.
	std::vector<Column> cols = {
		{"ID", true, 0, 5},	  {"SRC", false, 0, 6},	   {"DEV", false, 4, 8},
		{"SERVED/s", true, 0, 8}, {"HIT", true, 0, 6},	   {"RECYCLE", true, 0, 7},
		{"ALLOC/s", true, 2, 7},  {"RELEASE/s", true, 2, 9}, {"ORPHAN/s", true, 3, 8},
		{"INFLIGHT", true, 1, 8}, {"RING", true, 3, 6},	   {"NOTE", false, 5, 5},
	};
	cols[1].hidden = !o.show_source;
	Table t(cols);
	for (const auto &r : rows) {
		const ppkit::Window &w = r.window;
		const ppkit::Stats &st = r.sample.stats;
		auto inflight = st.has(Counter::Inflight) ? st.opt(Counter::Inflight)
							  : r.sample.pool.inflight;
		t.add({std::to_string(r.sample.pool.id), std::string(to_string(r.sample.pool.source)),
		       dev_cell(r.sample.pool), per_second(w.served_per_second(), o.raw),
		       percent(w.hit), percent(w.recycle),
		       per_second(w.per_second(Counter::PagesAllocated), o.raw),
		       per_second(w.per_second(Counter::PagesReleased), o.raw),
		       per_second(w.per_second(Counter::PagesOrphaned), o.raw), count(inflight, o.raw),
		       count(st.opt(Counter::RingPages), o.raw), w.reset ? "reset" : ""});
	}
	return t.render(o.width, header);
}

std::string event_line(const ppkit::Event &e, const RenderOptions &o)
{
	const ppkit::Pool &p = e.pool;
	std::string l = fmt::format("{} {:<6} pool {}", local_time(e.realtime_ns), to_string(e.kind),
				    p.id);
	if (o.show_source)
		l += fmt::format(" ({})", to_string(p.source));
	if (!p.owner.empty())
		l += " owner " + p.owner;
	if (p.ifindex)
		l += " dev " + dev_cell(p);
	if (p.queue)
		l += fmt::format(" queue {}", *p.queue);
	if (p.ring_size)
		l += fmt::format(" ring {}", *p.ring_size);
	if (p.refill_batch)
		l += fmt::format(" batch {}", *p.refill_batch);
	if (p.inflight)
		l += " inflight " + count(*p.inflight, o.raw);
	l += fmt::format(" {}\n", p.state());
	return l;
}

json pool_json(const ppkit::Pool &p)
{
	return {
		{"id", p.id},
		{"source", to_string(p.source)},
		{"owner", str_or_null(p.owner)},
		{"ifindex", opt(p.ifindex)},
		{"ifname", str_or_null(p.ifname)},
		{"queue", opt(p.queue)},
		{"napi_id", opt(p.napi_id)},
		{"nid", opt(p.nid)},
		{"order", opt(p.order)},
		{"ring_size", opt(p.ring_size)},
		{"cache_size", opt(p.cache_size)},
		{"refill_batch", opt(p.refill_batch)},
		{"max_len", opt(p.max_len)},
		{"dma_dir", p.dma_dir ? json(ppkit::dma_dir_name(*p.dma_dir)) : json(nullptr)},
		{"inflight", opt(p.inflight)},
		{"inflight_mem", opt(p.inflight_mem)},
		{"created_ns", opt(p.created_ns)},
		{"detach_time_ns", opt(p.detach_time_ns)},
		{"state", p.state()},
	};
}

json counters_json(const ppkit::Stats &s)
{
	json j = json::object();
	for (std::size_t i = 0; i < ppkit::index(ppkit::kFirstGauge); i++) {
		auto c = static_cast<Counter>(i);
		j[std::string(name(c))] = opt(s.opt(c));
	}
	return j;
}

json gauges_json(const ppkit::Stats &s)
{
	json j = json::object();
	for (std::size_t i = ppkit::index(ppkit::kFirstGauge); i < ppkit::kCounterCount; i++) {
		auto c = static_cast<Counter>(i);
		j[std::string(name(c))] = opt(s.opt(c));
	}
	return j;
}

json stats_json(const ppkit::Sample &s)
{
	json j = pool_json(s.pool);
	ppkit::Window w = ppkit::since_creation(s);
	j["counters"] = counters_json(s.stats);
	j["gauges"] = gauges_json(s.stats);
	j["derived"] = {
		{"served", opt(ppkit::pages_served(w.delta))},
		{"left_driver", opt(ppkit::pages_left_driver(w.delta))},
	};
	j["rates"] = {
		{"hit", opt(w.hit)},
		{"recycle", opt(w.recycle)},
		{"seconds", w.seconds > 0 ? json(w.seconds) : json(nullptr)},
	};
	return j;
}

json list_doc(const std::vector<ppkit::Pool> &pools)
{
	json d = {{"version", kJsonVersion}, {"command", "list"}, {"pools", json::array()}};
	for (const auto &p : pools)
		d["pools"].push_back(pool_json(p));
	return d;
}

namespace {

json stats_head(const std::vector<std::pair<ppkit::Source, bool>> &sources, std::uint64_t time_ns)
{
	json src = json::object();
	for (const auto &[s, has] : sources)
		src[std::string(to_string(s))] = {{"stats", has}};
	return {{"version", kJsonVersion},
		{"command", "stats"},
		{"time_ns", time_ns},
		{"sources", src},
		{"pools", json::array()}};
}

// @head dumped, with @items written one by one into its empty "pools" array.
template <typename T, typename F>
void write_with_pools(std::ostream &out, const json &head, const std::vector<T> &items, F item)
{
	const std::string h = head.dump();
	const std::string key = "\"pools\":[]";
	const std::size_t at = h.find(key) + key.size() - 1;
	out.write(h.data(), static_cast<std::streamsize>(at));
	for (std::size_t i = 0; i < items.size(); i++) {
		if (i)
			out.put(',');
		out << item(items[i]).dump();
	}
	out << std::string_view(h).substr(at) << '\n';
}

}  // namespace

json stats_doc(const std::vector<ppkit::Sample> &samples,
	       const std::vector<std::pair<ppkit::Source, bool>> &sources, std::uint64_t time_ns)
{
	json d = stats_head(sources, time_ns);
	for (const auto &s : samples)
		d["pools"].push_back(stats_json(s));
	return d;
}

void write_list_doc(std::ostream &out, const std::vector<ppkit::Pool> &pools)
{
	write_with_pools(out, list_doc({}), pools, pool_json);
}

void write_stats_doc(std::ostream &out, const std::vector<ppkit::Sample> &samples,
		     const std::vector<std::pair<ppkit::Source, bool>> &sources,
		     std::uint64_t time_ns)
{
	write_with_pools(out, stats_head(sources, time_ns), samples, stats_json);
}

json interval_doc(const std::vector<IntervalRow> &rows, std::uint64_t seq, double seconds,
		  std::uint64_t time_ns)
{
	json a = json::array();
	for (const auto &r : rows) {
		const ppkit::Window &w = r.window;
		json delta = json::object();
		for (std::size_t i = 0; i < ppkit::index(ppkit::kFirstGauge); i++) {
			auto c = static_cast<Counter>(i);
			delta[std::string(name(c))] =
				!w.reset && w.delta.has(c) ? json(w.delta.get(c)) : json(nullptr);
		}
		a.push_back({
			{"id", r.sample.pool.id},
			{"source", to_string(r.sample.pool.source)},
			{"ifindex", opt(r.sample.pool.ifindex)},
			{"ifname", str_or_null(r.sample.pool.ifname)},
			{"state", r.sample.pool.state()},
			{"reset", w.reset},
			{"seconds", w.seconds},
			{"delta", delta},
			{"per_second",
			 {
				 {"served", opt(w.served_per_second())},
				 {"recycled", opt(w.recycled_per_second())},
				 {"allocated", opt(w.per_second(Counter::PagesAllocated))},
				 {"released", opt(w.per_second(Counter::PagesReleased))},
				 {"orphaned", opt(w.per_second(Counter::PagesOrphaned))},
			 }},
			{"rates", {{"hit", opt(w.hit)}, {"recycle", opt(w.recycle)}}},
			{"gauges", gauges_json(r.sample.stats)},
		});
	}
	return {{"version", kJsonVersion},
		{"command", "stats"},
		{"interval", {{"seq", seq}, {"seconds", seconds}}},
		{"time_ns", time_ns},
		{"pools", a}};
}

json event_doc(const ppkit::Event &e)
{
	return {{"version", kJsonVersion},
		{"command", "monitor"},
		{"event", to_string(e.kind)},
		{"time_ns", e.realtime_ns},
		{"pool", pool_json(e.pool)}};
}

json set_doc(const ppkit::Pool &p)
{
	return {{"version", kJsonVersion}, {"command", "set"}, {"pool", pool_json(p)}};
}

}  // namespace ppctl
