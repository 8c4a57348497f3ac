// SPDX-License-Identifier: GPL-2.0
// ppctl: the commands, on parsed options.  Kernel errors are thrown as
// ppkit::Error; usage errors found at run time as UsageError.
#pragma once

#include <iosfwd>
#include <stdexcept>

#include "cli.h"

namespace ppctl {

struct UsageError : std::runtime_error {
	using std::runtime_error::runtime_error;
};

int cmd_list(const Options &o, std::ostream &out, std::ostream &err);
int cmd_stats(const Options &o, std::ostream &out, std::ostream &err);
int cmd_set(const Options &o, std::ostream &out, std::ostream &err);
int cmd_monitor(const Options &o, std::ostream &out, std::ostream &err);

}  // namespace ppctl
