// SPDX-License-Identifier: GPL-2.0
#include "render.h"

#include <algorithm>
#include <ctime>
#include <functional>
#include <ostream>
#include <sstream>

#include <fmt/format.h>

#include "format.h"
#include "ppkit/json_writer.h"
#include "table.h"

namespace ppctl {

using ppkit::Counter;
using nlohmann::json;

namespace {

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
		// Piped (no width limit), wrap as an 80-column terminal would: the
		// pairs are all there either way, and a line per pool is no table.
		const int width = o.width >= kNoWidthLimit ? 80 : o.width;
		const std::size_t per_line =
			std::max<std::size_t>(1, static_cast<std::size_t>(std::max(width, 1)) /
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
			   IntervalLayout &layout)
{
	// Minimum widths for the usual figures; wider cells widen the column
	// from this interval on (layout).
	std::vector<Column> cols = {
		{"ID", true, 0, 5},	  {"SRC", false, 0, 6},	   {"DEV", false, 4, 8},
		{"SERVED/s", true, 0, 8}, {"HIT", true, 0, 6},	   {"RECYCLE", true, 0, 7},
		{"ALLOC/s", true, 2, 7},  {"RELEASE/s", true, 2, 9}, {"ORPHAN/s", true, 3, 8},
		{"INFLIGHT", true, 1, 8}, {"RING", true, 3, 6},	   {"NOTE", false, 5, 5},
	};
	cols[1].hidden = !o.show_source;
	if (layout.widths.size() == cols.size())
		for (std::size_t i = 0; i < cols.size(); i++)
			cols[i].min_width = std::max(cols[i].min_width, layout.widths[i]);
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
	std::vector<std::size_t> widths = t.widths();
	const bool header = widths != layout.widths;
	layout.widths = std::move(widths);
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

namespace {

using ppkit::JsonWriter;
using ppkit::Pool;

// Every document's keys are sorted (Documentation/ppctl.rst): nlohmann's
// order, so the streamed text is what dumping a DOM of it would give.

// A pool's members, sorted by key: one table for list's pool objects and
// stats' (which merge their own members in, write_merged()).
struct PoolField {
	std::string_view key;
	void (*write)(JsonWriter &w, const Pool &p);
};

const PoolField kPoolFields[] = {
	{"cache_size", [](JsonWriter &w, const Pool &p) { w.value(p.cache_size); }},
	{"created_ns", [](JsonWriter &w, const Pool &p) { w.value(p.created_ns); }},
	{"detach_time_ns", [](JsonWriter &w, const Pool &p) { w.value(p.detach_time_ns); }},
	{"dma_dir",
	 [](JsonWriter &w, const Pool &p) {
		 if (p.dma_dir)
			 w.value(ppkit::dma_dir_name(*p.dma_dir));
		 else
			 w.null();
	 }},
	{"id", [](JsonWriter &w, const Pool &p) { w.value(p.id); }},
	{"ifindex", [](JsonWriter &w, const Pool &p) { w.value(p.ifindex); }},
	{"ifname",
	 [](JsonWriter &w, const Pool &p) { p.ifname.empty() ? w.null() : w.value(p.ifname); }},
	{"inflight", [](JsonWriter &w, const Pool &p) { w.value(p.inflight); }},
	{"inflight_mem", [](JsonWriter &w, const Pool &p) { w.value(p.inflight_mem); }},
	{"max_len", [](JsonWriter &w, const Pool &p) { w.value(p.max_len); }},
	{"napi_id", [](JsonWriter &w, const Pool &p) { w.value(p.napi_id); }},
	{"nid", [](JsonWriter &w, const Pool &p) { w.value(p.nid); }},
	{"order", [](JsonWriter &w, const Pool &p) { w.value(p.order); }},
	{"owner",
	 [](JsonWriter &w, const Pool &p) { p.owner.empty() ? w.null() : w.value(p.owner); }},
	{"queue", [](JsonWriter &w, const Pool &p) { w.value(p.queue); }},
	{"refill_batch", [](JsonWriter &w, const Pool &p) { w.value(p.refill_batch); }},
	{"ring_size", [](JsonWriter &w, const Pool &p) { w.value(p.ring_size); }},
	{"source", [](JsonWriter &w, const Pool &p) { w.value(to_string(p.source)); }},
	{"state", [](JsonWriter &w, const Pool &p) { w.value(p.state()); }},
};

// kPoolFields' keys, quoted once (ppkit::JsonKey).
const std::vector<ppkit::JsonKey> &pool_field_keys()
{
	static const std::vector<ppkit::JsonKey> v = [] {
		std::vector<ppkit::JsonKey> k;
		for (const PoolField &f : kPoolFields)
			k.emplace_back(f.key);
		return k;
	}();
	return v;
}

// Members of an object, sorted by key.
struct Member {
	std::string_view key;
	std::function<void(JsonWriter &)> write;
};

// The pool's members and @more (sorted) in one object, in key order.
void write_merged(JsonWriter &w, const Pool &p, const std::vector<Member> &more)
{
	const std::vector<ppkit::JsonKey> &keys = pool_field_keys();
	w.begin_object();
	auto m = more.begin();
	for (std::size_t i = 0; i < std::size(kPoolFields); i++) {
		const PoolField &f = kPoolFields[i];
		for (; m != more.end() && m->key < f.key; ++m)
			m->write(w.key(m->key));
		f.write(w.key(keys[i]), p);
	}
	for (; m != more.end(); ++m)
		m->write(w.key(m->key));
	w.end_object();
}

// The counters (@gauges: the gauges) by name, in name order.
std::vector<std::size_t> by_name(bool gauges)
{
	std::vector<std::size_t> v;
	for (std::size_t i = 0; i < ppkit::kCounterCount; i++)
		if (ppkit::is_gauge(i) == gauges)
			v.push_back(i);
	std::sort(v.begin(), v.end(), [](std::size_t a, std::size_t b) {
		return name(static_cast<Counter>(a)) < name(static_cast<Counter>(b));
	});
	return v;
}

const std::vector<std::size_t> &counter_order()
{
	static const std::vector<std::size_t> v = by_name(false);
	return v;
}

const std::vector<std::size_t> &gauge_order()
{
	static const std::vector<std::size_t> v = by_name(true);
	return v;
}

// Every counter's name as a key, quoted once, by counter.
const ppkit::JsonKey &counter_key(Counter c)
{
	static const std::vector<ppkit::JsonKey> v = [] {
		std::vector<ppkit::JsonKey> k;
		for (std::size_t i = 0; i < ppkit::kCounterCount; i++)
			k.emplace_back(name(static_cast<Counter>(i)));
		return k;
	}();
	return v[static_cast<std::size_t>(c)];
}

// The counters of @order by name; one a source does not report is null,
// and so is every counter of a window that was reset.  The fragment
// counters are there only when the pool reports them.
template <typename S>
void counter_object(JsonWriter &w, const S &s, const std::vector<std::size_t> &order,
		    bool null_all = false)
{
	w.begin_object();
	for (std::size_t i : order) {
		auto c = static_cast<Counter>(i);
		if (ppkit::is_frag_counter(c) && !s.has(c))
			continue;
		w.key(counter_key(c));
		if (!null_all && s.has(c))
			w.value(s.get(c));
		else
			w.null();
	}
	w.end_object();
}

void write_pool(JsonWriter &w, const Pool &p)
{
	write_merged(w, p, {});
}

void write_sample(JsonWriter &w, const ppkit::Sample &s)
{
	const ppkit::Window win = ppkit::since_creation(s);
	write_merged(
		w, s.pool,
		{
			{"counters", [&](JsonWriter &j) { counter_object(j, s.stats, counter_order()); }},
			{"derived",
			 [&](JsonWriter &j) {
				 j.begin_object()
					 .member("left_driver", ppkit::pages_left_driver(win.delta))
					 .member("served", ppkit::pages_served(win.delta))
					 .end_object();
			 }},
			{"gauges", [&](JsonWriter &j) { counter_object(j, s.stats, gauge_order()); }},
			{"rates",
			 [&](JsonWriter &j) {
				 j.begin_object().member("hit", win.hit).member("recycle", win.recycle);
				 j.key("seconds");
				 win.seconds > 0 ? j.value(win.seconds) : j.null();
				 j.end_object();
			 }},
		});
}

void write_row(JsonWriter &w, const IntervalRow &r)
{
	const ppkit::Window &win = r.window;
	const Pool &p = r.sample.pool;
	w.begin_object().key("delta");
	counter_object(w, win.delta, counter_order(), win.reset);
	w.key("gauges");
	counter_object(w, r.sample.stats, gauge_order());
	w.member("id", p.id).member("ifindex", p.ifindex).key("ifname");
	p.ifname.empty() ? w.null() : w.value(p.ifname);
	w.key("per_second")
		.begin_object()
		.member("allocated", win.per_second(Counter::PagesAllocated))
		.member("orphaned", win.per_second(Counter::PagesOrphaned))
		.member("recycled", win.recycled_per_second())
		.member("released", win.per_second(Counter::PagesReleased))
		.member("served", win.served_per_second())
		.end_object();
	w.key("rates").begin_object().member("hit", win.hit).member("recycle", win.recycle).end_object();
	w.member("reset", win.reset)
		.member("seconds", win.seconds)
		.member("source", to_string(p.source))
		.member("state", p.state())
		.end_object();
}

// Written in chunks of this size: the document never exists whole.
constexpr std::size_t kFlushAt = 64 * 1024;

// {"command": @command, @before..., "pools": [@items...], @after...,
// "version": 1}: @before and @after write the members that sort before and
// after "pools".
template <typename T, typename F, typename B, typename A>
void write_doc(std::ostream &out, std::string_view command, B before, const std::vector<T> &items,
	       F item, A after)
{
	std::string buf;
	JsonWriter w(buf);
	w.begin_object().member("command", command);
	before(w);
	w.key("pools").begin_array();
	for (const auto &i : items) {
		item(w, i);
		if (buf.size() >= kFlushAt) {
			out.write(buf.data(), static_cast<std::streamsize>(buf.size()));
			buf.clear();
		}
	}
	w.end_array();
	after(w);
	w.member("version", kJsonVersion).end_object();
	buf += '\n';
	out.write(buf.data(), static_cast<std::streamsize>(buf.size()));
}

void nothing(JsonWriter &) {}

template <typename F>
json as_json(F write)
{
	std::string s;
	JsonWriter w(s);
	write(w);
	return json::parse(s);
}

}  // namespace

json pool_json(const ppkit::Pool &p)
{
	return as_json([&](JsonWriter &w) { write_pool(w, p); });
}

json counters_json(const ppkit::Stats &s)
{
	return as_json([&](JsonWriter &w) { counter_object(w, s, counter_order()); });
}

json gauges_json(const ppkit::Stats &s)
{
	return as_json([&](JsonWriter &w) { counter_object(w, s, gauge_order()); });
}

json stats_json(const ppkit::Sample &s)
{
	return as_json([&](JsonWriter &w) { write_sample(w, s); });
}

void write_list_doc(std::ostream &out, const std::vector<ppkit::Pool> &pools)
{
	write_doc(out, "list", nothing, pools, write_pool, nothing);
}

void write_stats_doc(std::ostream &out, const std::vector<ppkit::Sample> &samples,
		     const std::vector<std::pair<ppkit::Source, bool>> &sources,
		     std::uint64_t time_ns)
{
	std::vector<std::pair<std::string_view, bool>> src;
	for (const auto &[s, has] : sources)
		src.emplace_back(to_string(s), has);
	std::sort(src.begin(), src.end());
	write_doc(out, "stats", nothing, samples, write_sample, [&](JsonWriter &w) {
		w.key("sources").begin_object();
		for (const auto &[name, has] : src)
			w.key(name).begin_object().member("stats", has).end_object();
		w.end_object().member("time_ns", time_ns);
	});
}

void write_interval_doc(std::ostream &out, const std::vector<IntervalRow> &rows,
			std::uint64_t seq, double seconds, std::uint64_t time_ns)
{
	write_doc(
		out, "stats",
		[&](JsonWriter &w) {
			w.key("interval")
				.begin_object()
				.member("seconds", seconds)
				.member("seq", seq)
				.end_object();
		},
		rows, write_row, [&](JsonWriter &w) { w.member("time_ns", time_ns); });
}

json list_doc(const std::vector<ppkit::Pool> &pools)
{
	std::ostringstream o;
	write_list_doc(o, pools);
	return json::parse(o.str());
}

json stats_doc(const std::vector<ppkit::Sample> &samples,
	       const std::vector<std::pair<ppkit::Source, bool>> &sources, std::uint64_t time_ns)
{
	std::ostringstream o;
	write_stats_doc(o, samples, sources, time_ns);
	return json::parse(o.str());
}

json interval_doc(const std::vector<IntervalRow> &rows, std::uint64_t seq, double seconds,
		  std::uint64_t time_ns)
{
	std::ostringstream o;
	write_interval_doc(o, rows, seq, seconds, time_ns);
	return json::parse(o.str());
}

json event_doc(const ppkit::Event &e)
{
	return {{"version", kJsonVersion},
		{"command", "monitor"},
		{"event", to_string(e.kind)},
		{"time_ns", e.realtime_ns},
		{"pool", pool_json(e.pool)}};
}

json lost_doc(ppkit::Source source, std::uint64_t time_ns)
{
	return {{"version", kJsonVersion},
		{"command", "monitor"},
		{"event", "lost"},
		{"time_ns", time_ns},
		{"source", to_string(source)}};
}

std::string monitor_output(const std::vector<ppkit::Event> &events, std::size_t max, bool lost,
			   ppkit::Source source, bool json, const RenderOptions &o,
			   std::uint64_t time_ns)
{
	std::string s;
	for (std::size_t i = 0; i < events.size() && i < max; i++)
		s += json ? event_doc(events[i]).dump() + "\n" : event_line(events[i], o);
	// A program reading the stream learns of the gap in order, on stdout;
	// people get the note on stderr (cmd_monitor()).
	if (lost && json)
		s += lost_doc(source, time_ns).dump() + "\n";
	return s;
}

json set_doc(const ppkit::Pool &p)
{
	return {{"version", kJsonVersion}, {"command", "set"}, {"pool", pool_json(p)}};
}

}  // namespace ppctl
