// SPDX-License-Identifier: GPL-2.0
// The [host] cases that need the running kernel's netdev family.
#pragma once

#include <string>
#include <vector>

#include <catch2/catch.hpp>

namespace host {

// Registers the netdev [host] cases if the kernel has the netdev family.
// Catch2 2.13 (Debian 12) has no SKIP(): on a kernel without it they are
// left out of the run, and the lines returned ("SKIP: <case>: why", one per
// case that @config selects; tests/tier/unit.sh lists them) say so, instead
// of passing unasserted.
std::vector<std::string> register_netdev_cases(const Catch::IConfig &config);

}  // namespace host
