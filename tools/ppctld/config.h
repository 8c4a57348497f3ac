// SPDX-License-Identifier: GPL-2.0
// ppctld: its settings, from a small file and the command line (CLI11 reads
// both; a flag wins over the file).  SIGHUP reads them again.
#pragma once

#include <cstddef>
#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

#include "alerts.h"
#include "ppkit/daemon.h"

namespace ppctld {

inline constexpr const char *kDefaultConfig = "/etc/ppctld.conf";

// The most points a pool's history may hold (history / interval): a day at
// 1 s, 2 MiB a pool (24 bytes a point).  More is refused at parse time;
// --interval 0.1s --history 7d would be 138 MiB a pool.
inline constexpr std::size_t kMaxHistoryPoints = 86400;

struct Config {
	std::string config_file;		// "" when none was read
	double interval_s = 1.0;		// sampling period
	double history_s = 3600.0;		// how far back each pool's history goes
	std::vector<std::string> sources{"ppkit"};	// "ppkit", "netdev"
	std::string listen = "127.0.0.1:9105";	// Prometheus /metrics; "" = none
	std::string textfile;			// node_exporter textfile; "" = none
	std::string socket = std::string(ppkit::kDaemonSocket);	// the JSON API; "" = none
	unsigned socket_mode = 0600;
	std::string socket_group;		// "" = root's
	std::size_t max_clients = 16;
	AlertConfig alerts;
	bool foreground = false;
	bool log_stderr = false;		// also log to stderr (implied by --foreground)
	std::string pidfile;

	// Samples each pool's history holds.
	std::size_t history_points() const;
};

// Parse a command line (and the configuration file it names, or the
// default one if it exists).  Help goes to @out, errors to @err; empty
// with @exit set when the program is done.
struct Parsed {
	std::optional<Config> config;
	int exit = 0;
};
Parsed parse(int argc, const char *const *argv, std::ostream &out, std::ostream &err);

}  // namespace ppctld
