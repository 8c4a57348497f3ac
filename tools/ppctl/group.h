// SPDX-License-Identifier: GPL-2.0
// ppctl stats --group-by device: the pools of each device summed, as
// ynltool's page-pool stats --group-by device does.  Pure functions.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "render.h"
#include "select.h"
#include "ppkit/types.h"

namespace ppctl {

struct DeviceGroup {
	std::optional<std::uint32_t> ifindex;	// none: pools that serve no device
	std::string ifname;			// "" if unknown
	std::vector<std::uint32_t> ids;		// its pools (of every source), ascending
	std::size_t detached = 0;		// of them, destroyed by their driver
	// Each counter and gauge summed over the pools that report it (absent
	// when none does).
	ppkit::Stats stats;
	std::optional<std::uint64_t> inflight;	// pages out, from stats or the pool list
};

// One group per device, in ifindex order, pools without a device last.
std::vector<DeviceGroup> group_by_device(const std::vector<ppkit::Sample> &samples);

// --sort for groups: dev and id (device order), inflight, served, hit,
// recycle.  Owner and state mean nothing for a device (the command line
// refuses them).
void sort_groups(std::vector<DeviceGroup> &groups, SortKey k);

// Rates of a group, from its summed counters.
ppkit::Window group_window(const DeviceGroup &g);

std::string device_table(const std::vector<DeviceGroup> &groups, const RenderOptions &o);

// {"command": "stats", "group_by": "device", "devices": [...], "sources":
// {...}, "time_ns": N, "version": 1} (Documentation/ppctl.rst).
nlohmann::json device_doc(const std::vector<DeviceGroup> &groups,
			  const std::vector<std::pair<ppkit::Source, bool>> &sources,
			  std::uint64_t time_ns);

}  // namespace ppctl
