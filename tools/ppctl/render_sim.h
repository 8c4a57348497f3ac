// SPDX-License-Identifier: GPL-2.0
// ppctl: what the sim and xdp commands print, for people (tables, lines)
// and for programs (JSON, schema in Documentation/ppctl.rst).  Pure
// functions of the data.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "ppkit/sim.h"
#include "ppkit/xdp.h"
#include "render.h"

namespace ppctl {

// ppctl sim list: one line per device.
std::string sim_table(const std::vector<ppkit::SimDevice> &devs, const RenderOptions &o);
// ppctl sim set: the knobs of a device, on one line.
std::string sim_settings_line(const ppkit::SimDevice &d);
// ppctl sim gen start/stop: what the generator of a device is doing.
std::string gen_line(const ppkit::SimDevice &d, bool raw);

// ppctl xdp status / attach / detach.
std::string xdp_status_text(const ppkit::XdpStatus &st);
std::string xdp_attached_line(const std::string &ifname, const ppkit::XdpAttached &a);

// JSON.
nlohmann::json sim_device_json(const ppkit::SimDevice &d);
// {"command": @command, "version": 1, "devices": [...]}: sim list, sim add.
nlohmann::json sim_devices_doc(std::string_view command,
			       const std::vector<ppkit::SimDevice> &devs);
// {"command": @command, "version": 1, "device": {...}}: sim set, sim gen.
nlohmann::json sim_device_doc(std::string_view command, const ppkit::SimDevice &d);
// xdp status (and xdp attach, which answers with the status afterwards).
nlohmann::json xdp_status_doc(std::string_view command, const ppkit::XdpStatus &st);

}  // namespace ppctl
