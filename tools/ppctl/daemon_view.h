// SPDX-License-Identifier: GPL-2.0
// ppctl: what `ppctl history` and `ppctl top` print.  Pure functions of the
// data, whether it came from ppctld (its API replies) or from the kernel.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "ppkit/rates.h"
#include "ppkit/types.h"
#include "render.h"

namespace ppctl {

enum class TopSort { Served, Hit, Recycle, Inflight, Id };

// One line of `ppctl top`: a pool and its last window.
struct TopRow {
	ppkit::Pool pool;
	std::optional<std::uint64_t> inflight;
	std::optional<double> served_per_s, released_per_s, hit, recycle;
	std::vector<std::string> alerts;
};

// A row of ppctld's "pools" reply (ppkit::DaemonClient), or of a window
// taken here.  Throws ppkit::Error(Protocol) on a row it cannot read.
TopRow top_row(const nlohmann::json &row);
TopRow top_row(const ppkit::Sample &s, const ppkit::Window &w);

void sort_rows(std::vector<TopRow> &rows, TopSort by);

struct TopHeader {
	std::uint64_t time_ns = 0;	// when the data is from
	double interval_s = 0;		// its window
	std::string from;		// "ppctld" or "kernel (ppctld not running)"
};

// One screen: a header of two lines, the column titles and at most
// @height - 3 pools (0: all), in @o.width columns.
std::string top_screen(const std::vector<TopRow> &rows, const TopHeader &h,
		       const RenderOptions &o, int height);
// The same frame as one JSON object (Documentation/ppctl.rst).
nlohmann::json top_doc(const std::vector<TopRow> &rows, const TopHeader &h);

// `ppctl history`: the table of ppctld's "history" reply.
std::string history_table(const nlohmann::json &reply, const RenderOptions &o);
// ... and its JSON document: the reply without "ok".
nlohmann::json history_doc(nlohmann::json reply);

}  // namespace ppctl
