// SPDX-License-Identifier: GPL-2.0
// ppctl: the command line (CLI11) and the whole program behind main().
#pragma once

#include <cstdint>
#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

#include "daemon_view.h"
#include "ppkit/daemon.h"
#include "ppkit/sim.h"
#include "ppkit/xdp.h"
#include "select.h"

namespace ppctl {

// Exit statuses (Documentation/ppctl.rst).
enum Exit : int {
	kExitOk = 0,
	kExitUsage = 1,		// bad arguments: nothing was asked of the kernel
	kExitKernel = 2,	// the kernel or netlink said no (module missing, EPERM, ...)
	kExitOutput = 3,	// standard output could not be written (disk full, ...)
	kExitInternal = 4,	// a bug in ppctl: an exception nobody expected
};

enum class Command {
	List,
	Stats,
	Set,
	Holders,
	Monitor,
	History,
	Top,
	SimList,
	SimAdd,
	SimDel,
	SimSet,
	SimGenStart,
	SimGenStop,
	XdpAttach,
	XdpDetach,
	XdpStatus,
};
enum class SourceSel { Ppkit, Netdev, All };

struct Options {
	Command command = Command::List;
	SourceSel source = SourceSel::Ppkit;
	bool json = false;
	bool pretty = false;	// -p: indented JSON (implies json)
	bool raw = false;
	bool human = false;	// humanised numbers even when stdout is no terminal
	// -n: the network namespace (/run/netns/NAME) to enter first
	std::string netns;
	// list and stats: which pools (with dev), in what order
	PoolFilter filter;		// owner and state; dev by name below
	SortKey pool_sort = SortKey::Id;
	bool group_by_device = false;	// stats --group-by device
	// stats
	std::vector<std::uint32_t> ids;
	std::string dev;
	std::optional<double> interval;	// seconds
	std::optional<std::uint64_t> count;	// intervals (stats) or events (monitor)
	bool long_form = false;
	// set
	std::uint32_t pool = 0;
	std::optional<std::uint32_t> ring_size;
	std::optional<std::uint32_t> refill_batch;
	// history and top: ppctld's socket
	std::string socket = std::string(ppkit::kDaemonSocket);
	bool socket_given = false;
	std::optional<double> since;	// history: seconds back
	TopSort sort = TopSort::Served;
	// sim and xdp: the interface, by name in our network namespace
	std::string ifname;
	ppkit::SimNewDevice sim_new;	// sim add
	ppkit::SimSettings sim_set;	// sim set
	ppkit::SimGenParams gen;	// sim gen start
	ppkit::XdpMode xdp_mode = ppkit::XdpMode::Native;
	std::string xdp_prog = "drop";	// a bundled program's name, or FILE.o
	bool xdp_force = false;		// replace a program already attached
};

struct Parsed {
	std::optional<Options> options;	// empty: exit with @exit
	int exit = kExitOk;
};

// Parse a command line.  Help goes to @out, errors to @err; when the
// result has no options, the program is done and exits with Parsed::exit.
Parsed parse(int argc, const char *const *argv, std::ostream &out, std::ostream &err);

// In a catch block: writes the message of the exception being handled to
// @err ("ppctl: ..."), flushing @out first, and returns its exit status.
int report_error(std::ostream &out, std::ostream &err);

// The program: parse, run the command, report errors; returns the exit status.
// A write to @out that fails (a full disk) ends it with kExitOutput.
int run(int argc, const char *const *argv, std::ostream &out, std::ostream &err);

}  // namespace ppctl
