// SPDX-License-Identifier: GPL-2.0
// ppctl holders: who holds each pool's pages, as a report and as JSON
// (schema in Documentation/ppctl.rst).  Pure functions of the data.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "ppkit/holders.h"
#include "ppkit/types.h"
#include "render.h"

namespace ppctl {

struct PoolHolders {
	ppkit::Pool pool;
	ppkit::Holders holders;
};

// "init" for the initial namespace's sockets, its name in /run/netns, or
// "net:[N]" as /proc/PID/ns/net shows it.
std::string netns_cell(const ppkit::Holder &h);
// "python3/412,sshd/9", "-" if no process has it open.
std::string processes_cell(const ppkit::Holder &h);

std::string holders_text(const std::vector<PoolHolders> &v, const RenderOptions &o);
nlohmann::json holders_doc(const std::vector<PoolHolders> &v);

}  // namespace ppctl
