// SPDX-License-Identifier: GPL-2.0
// ppctl: what each command prints, for people (tables) and for programs
// (JSON, schema in Documentation/ppctl.rst).  Pure functions of the data.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "ppkit/rates.h"
#include "ppkit/types.h"

namespace ppctl {

// An optional value as JSON: the value, or null (the schema never omits keys).
template <typename T>
nlohmann::json opt(const std::optional<T> &v)
{
	return v ? nlohmann::json(*v) : nlohmann::json(nullptr);
}

// Bumped whenever a field changes meaning or goes away (adding one does not).
inline constexpr int kJsonVersion = 1;

struct RenderOptions {
	bool raw = false;		// exact numbers, no 1.2M
	int width = 80;			// terminal columns
	bool show_source = false;	// --source all: say which family
};

// "lo/1", "#7" (no such interface any more), "-" (no netdev).
std::string dev_cell(const ppkit::Pool &p);

// ppctl list
std::string pools_table(const std::vector<ppkit::Pool> &pools, const RenderOptions &o);
// ppctl stats: one line per pool, cumulative counters and rates.
std::string stats_table(const std::vector<ppkit::Sample> &samples, const RenderOptions &o);
// ppctl stats --long: every counter of each pool.
std::string stats_long(const std::vector<ppkit::Sample> &samples, const RenderOptions &o);

// ppctl stats --interval: one line per pool per interval, vmstat style.
struct IntervalRow {
	ppkit::Sample sample;	// the end of the window
	ppkit::Window window;
};
// What the intervals of one run share: the columns' widths so far (empty:
// nothing printed yet).  A column never narrows; one that must grow grows
// for good, and the header is printed again above the wider columns.
struct IntervalLayout {
	std::vector<std::size_t> widths;
};
// The lines of one interval, with the header on the first and whenever the
// columns grew.
std::string interval_lines(const std::vector<IntervalRow> &rows, const RenderOptions &o,
			   IntervalLayout &layout);

// ppctl monitor: one line per event.
std::string event_line(const ppkit::Event &e, const RenderOptions &o);
// What monitor writes on stdout for one read of a @source's socket: at most
// @max of @events (lines, or documents with @json), and with @json a "lost"
// document after them when the socket overran (@lost, at @time_ns).
std::string monitor_output(const std::vector<ppkit::Event> &events, std::size_t max, bool lost,
			   ppkit::Source source, bool json, const RenderOptions &o,
			   std::uint64_t time_ns);

// JSON.
nlohmann::json pool_json(const ppkit::Pool &p);
nlohmann::json counters_json(const ppkit::Stats &s);	// every counter, null if not reported
nlohmann::json gauges_json(const ppkit::Stats &s);
nlohmann::json stats_json(const ppkit::Sample &s);	// pool + counters + gauges + rates
nlohmann::json list_doc(const std::vector<ppkit::Pool> &pools);
// @sources: each family asked, and whether it had statistics.
nlohmann::json stats_doc(const std::vector<ppkit::Sample> &samples,
			 const std::vector<std::pair<ppkit::Source, bool>> &sources,
			 std::uint64_t time_ns);
nlohmann::json interval_doc(const std::vector<IntervalRow> &rows, std::uint64_t seq,
			    double seconds, std::uint64_t time_ns);
nlohmann::json event_doc(const ppkit::Event &e);
// monitor: the kernel dropped events of @source (the socket overran) at
// @time_ns; the events between are unknown.
nlohmann::json lost_doc(ppkit::Source source, std::uint64_t time_ns);
// The same documents written out as one line, pool by pool, with no DOM
// (ppkit::JsonWriter; the functions above parse what these write): a
// thousand pools are a megabyte of JSON.
void write_list_doc(std::ostream &out, const std::vector<ppkit::Pool> &pools);
void write_stats_doc(std::ostream &out, const std::vector<ppkit::Sample> &samples,
		     const std::vector<std::pair<ppkit::Source, bool>> &sources,
		     std::uint64_t time_ns);
void write_interval_doc(std::ostream &out, const std::vector<IntervalRow> &rows,
			std::uint64_t seq, double seconds, std::uint64_t time_ns);
nlohmann::json set_doc(const ppkit::Pool &p);

}  // namespace ppctl
