// SPDX-License-Identifier: GPL-2.0
#include "daemon_view.h"

#include <algorithm>
#include <cmath>
#include <ctime>

#include <fmt/format.h>

#include "format.h"
#include "ppkit/error.h"
#include "ppkit/json_writer.h"
#include "table.h"

namespace ppctl {

namespace {

using nlohmann::json;

std::optional<double> num(const json &j, const char *key)
{
	if (!j.contains(key) || j[key].is_null())
		return std::nullopt;
	if (!j[key].is_number())
		throw ppkit::Error(ppkit::Errc::Protocol,
				   fmt::format("ppctld sent a non-numeric \"{}\"", key));
	return j[key].get<double>();
}

template <typename T>
std::optional<T> uint(const json &j, const char *key)
{
	if (!j.contains(key) || j[key].is_null())
		return std::nullopt;
	if (!j[key].is_number_integer() || j[key].get<std::int64_t>() < 0)
		throw ppkit::Error(ppkit::Errc::Protocol,
				   fmt::format("ppctld sent a bad \"{}\"", key));
	return j[key].get<T>();
}

// Pages served per second: "served_per_s", or "alloc_per_s" from a ppctld
// older than the name (the same value: it never meant the page allocator).
std::optional<double> served(const json &j)
{
	return j.contains("served_per_s") ? num(j, "served_per_s") : num(j, "alloc_per_s");
}

std::string clock_time(std::uint64_t ns)
{
	time_t t = static_cast<time_t>(ns / 1000000000);
	tm tmv{};
	localtime_r(&t, &tmv);
	char buf[16];
	std::strftime(buf, sizeof(buf), "%H:%M:%S", &tmv);
	return buf;
}

std::string alerts_cell(const std::vector<std::string> &a)
{
	std::string s;
	for (const auto &x : a)
		s += (s.empty() ? "" : ",") + x;
	return s;
}

}  // namespace

TopRow top_row(const json &row)
{
	if (!row.is_object())
		throw ppkit::Error(ppkit::Errc::Protocol, "ppctld sent a pool that is not an object");
	TopRow r;
	r.pool.id = uint<std::uint32_t>(row, "id").value_or(0);
	if (row.contains("source") && row["source"].is_string())
		r.pool.source = ppkit::source_by_name(row["source"].get<std::string>())
					.value_or(ppkit::Source::Ppkit);
	if (row.contains("owner") && row["owner"].is_string())
		r.pool.owner = row["owner"].get<std::string>();
	r.pool.ifindex = uint<std::uint32_t>(row, "ifindex");
	if (row.contains("ifname") && row["ifname"].is_string())
		r.pool.ifname = row["ifname"].get<std::string>();
	r.pool.queue = uint<std::uint32_t>(row, "queue");
	r.pool.napi_id = uint<std::uint32_t>(row, "napi_id");
	r.inflight = uint<std::uint64_t>(row, "inflight");
	r.served_per_s = served(row);
	r.released_per_s = num(row, "released_per_s");
	r.hit = num(row, "hit");
	r.recycle = num(row, "recycle");
	if (row.contains("alerts") && row["alerts"].is_array())
		for (const json &a : row["alerts"])
			if (a.is_string())
				r.alerts.push_back(a.get<std::string>());
	return r;
}

TopRow top_row(const ppkit::Sample &s, const ppkit::Window &w)
{
	TopRow r;
	r.pool = s.pool;
	r.inflight = s.stats.has(ppkit::Counter::Inflight) ? s.stats.opt(ppkit::Counter::Inflight)
							    : s.pool.inflight;
	r.served_per_s = w.served_per_second();
	r.released_per_s = w.per_second(ppkit::Counter::PagesReleased);
	r.hit = w.hit;
	r.recycle = w.recycle;
	return r;
}

void sort_rows(std::vector<TopRow> &rows, TopSort by)
{
	// Highest first; pools without a value last; ties by id.
	auto key = [by](const TopRow &r) -> std::optional<double> {
		switch (by) {
		case TopSort::Served:
			return r.served_per_s;
		case TopSort::Hit:
			return r.hit;
		case TopSort::Recycle:
			return r.recycle;
		case TopSort::Inflight:
			return r.inflight ? std::optional<double>(static_cast<double>(*r.inflight))
					  : std::nullopt;
		case TopSort::Id:
			return -static_cast<double>(r.pool.id);
		}
		return std::nullopt;
	};
	std::stable_sort(rows.begin(), rows.end(), [&](const TopRow &a, const TopRow &b) {
		auto ka = key(a), kb = key(b);
		if (ka.has_value() != kb.has_value())
			return ka.has_value();
		if (ka && *ka != *kb)
			return *ka > *kb;
		if (a.pool.source != b.pool.source)
			return a.pool.source < b.pool.source;
		return a.pool.id < b.pool.id;
	});
}

std::string top_screen(const std::vector<TopRow> &rows, const TopHeader &h,
		       const RenderOptions &o, int height)
{
	std::uint64_t inflight = 0;
	double total = 0;
	std::size_t alerting = 0;
	for (const TopRow &r : rows) {
		inflight += r.inflight.value_or(0);
		total += r.served_per_s.value_or(0);
		alerting += !r.alerts.empty();
	}
	std::string s = fmt::format("ppctl top - {}  {} pools, {} alerting  from {}, {} window\n",
				    clock_time(h.time_ns), rows.size(), alerting, h.from,
				    duration(h.interval_s));
	s += fmt::format("served {}/s  in flight {} pages\n", per_second(total, o.raw),
			 count(inflight, o.raw));
	Table t({
		{"ID", true, 0, 5},
		{"SRC", false, 0, 6, !o.show_source},
		{"OWNER", false, 3, 6},
		{"DEV", false, 2, 8},
		{"Q", true, 4, 2},
		{"SERVED/s", true, 0, 8},
		{"HIT", true, 0, 6},
		{"RECYCLE", true, 0, 7},
		{"RELEASE/s", true, 3, 9},
		{"INFLIGHT", true, 1, 8},
		{"ALERTS", false, 0, 6},
	});
	std::size_t max = height > 3 ? static_cast<std::size_t>(height - 3) : rows.size();
	for (std::size_t i = 0; i < rows.size() && i < max; i++) {
		const TopRow &r = rows[i];
		t.add({std::to_string(r.pool.id), std::string(ppkit::to_string(r.pool.source)),
		       r.pool.owner.empty() ? "-" : r.pool.owner, dev_cell(r.pool),
		       r.pool.queue ? std::to_string(*r.pool.queue) : "-",
		       per_second(r.served_per_s, o.raw), percent(r.hit), percent(r.recycle),
		       per_second(r.released_per_s, o.raw), count(r.inflight, o.raw),
		       alerts_cell(r.alerts)});
	}
	s += t.render(o.width);
	return s;
}

json top_doc(const std::vector<TopRow> &rows, const TopHeader &h)
{
	json pools = json::array();
	for (const TopRow &r : rows)
		pools.push_back({
			{"id", r.pool.id},
			{"source", ppkit::to_string(r.pool.source)},
			{"owner", ppkit::valid_utf8(r.pool.owner)},
			{"ifindex", opt(r.pool.ifindex)},
			{"ifname",
			 r.pool.ifname.empty() ? json(nullptr) : json(ppkit::valid_utf8(r.pool.ifname))},
			{"queue", opt(r.pool.queue)},
			{"inflight", opt(r.inflight)},
			{"served_per_s", opt(r.served_per_s)},
			// Deprecated alias of served_per_s (Documentation/ppctl.rst).
			{"alloc_per_s", opt(r.served_per_s)},
			{"released_per_s", opt(r.released_per_s)},
			{"hit", opt(r.hit)},
			{"recycle", opt(r.recycle)},
			{"alerts", r.alerts},
		});
	return {{"version", kJsonVersion},
		{"time_ns", h.time_ns},
		{"interval_s", h.interval_s},
		{"from", h.from},
		{"pools", std::move(pools)}};
}

std::string history_table(const json &reply, const RenderOptions &o)
{
	if (!reply.contains("points") || !reply["points"].is_array() || !reply.contains("pool"))
		throw ppkit::Error(ppkit::Errc::Protocol, "ppctld sent a history without points");
	TopRow head = top_row(reply["pool"]);
	std::string state = reply["pool"].value("state", std::string("?"));
	std::string s = fmt::format("pool {} ({}) {} {} queue {}: {}, {} points\n", head.pool.id,
				    ppkit::to_string(head.pool.source),
				    head.pool.owner.empty() ? "-" : head.pool.owner,
				    dev_cell(head.pool),
				    head.pool.queue ? std::to_string(*head.pool.queue) : "-", state,
				    reply["points"].size());
	Table t({
		{"TIME", false, 0, 8},
		{"SERVED/s", true, 0, 8},
		{"HIT", true, 0, 6},
		{"RECYCLE", true, 0, 7},
		{"RELEASE/s", true, 1, 9},
		{"INFLIGHT", true, 0, 8},
	});
	for (const json &p : reply["points"]) {
		auto when = uint<std::uint64_t>(p, "time_ns");
		auto inflight = uint<std::uint64_t>(p, "inflight");
		t.add({when ? clock_time(*when) : "-", per_second(served(p), o.raw),
		       percent(num(p, "hit")), percent(num(p, "recycle")),
		       per_second(num(p, "released_per_s"), o.raw), count(inflight, o.raw)});
	}
	if (t.rows())
		s += t.render(o.width);
	return s;
}

json history_doc(json reply)
{
	reply.erase("ok");
	return reply;
}

}  // namespace ppctl
