// SPDX-License-Identifier: GPL-2.0
// ppctl: the commands, on parsed options.  Kernel errors are thrown as
// ppkit::Error; usage errors found at run time as UsageError.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <stdexcept>
#include <string>

#include "cli.h"
#include "render.h"

namespace ppctl {

struct UsageError : std::runtime_error {
	using std::runtime_error::runtime_error;
};

int cmd_list(const Options &o, std::ostream &out, std::ostream &err);
int cmd_stats(const Options &o, std::ostream &out, std::ostream &err);
int cmd_set(const Options &o, std::ostream &out, std::ostream &err);
int cmd_monitor(const Options &o, std::ostream &out, std::ostream &err);

// commands_holders.cpp: who holds the pools' pages.
int cmd_holders(const Options &o, std::ostream &out, std::ostream &err);

// commands_daemon.cpp: through ppctld (top also without it).
int cmd_history(const Options &o, std::ostream &out, std::ostream &err);
int cmd_top(const Options &o, std::ostream &out, std::ostream &err);

// commands_sim.cpp: ppsim devices and XDP programs.
int cmd_sim(const Options &o, std::ostream &out, std::ostream &err);
int cmd_xdp(const Options &o, std::ostream &out, std::ostream &err);

// How to print for @o on stdout (layout_of()); @show_source: say which
// family each pool is from.
RenderOptions render_options(const Options &o, bool show_source);

// Enter network namespace @name (/run/netns/NAME) as ip -n does, before
// any socket is opened: UsageError if there is none, ppkit::Error if it
// cannot be entered.
void enter_netns(const std::string &name);

// The ifindex of interface @name in our network namespace; UsageError if
// there is none.
std::uint32_t ifindex_of(const std::string &name);

}  // namespace ppctl
