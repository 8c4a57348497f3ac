// SPDX-License-Identifier: GPL-2.0
// ppctld: the daemon, one thread that samples, follows notifications and
// answers the API from a poll() loop; the metrics server answers from
// its own threads, off the published snapshot.
#pragma once

#include <vector>

#include "config.h"

namespace ppctld {

// Runs until SIGTERM or SIGINT; returns the exit status.  @argv is kept
// for SIGHUP, which parses it (and the file it names) again.
int run_daemon(int argc, const char *const *argv, Config config);

// The whole program: parse, then run.
int main(int argc, const char *const *argv);

}  // namespace ppctld
