// SPDX-License-Identifier: GPL-2.0
// ppctl: what to do next, in ppctl's own terms.  libppkit's errors say what
// failed and why; the commands and flags that help are ppctl's to name
// ("no pool 42" becomes "no pool 42 (see ppctl list)").
#pragma once

#include "cli.h"
#include "ppkit/error.h"

namespace ppctl {

// @e with ppctl's advice for command line @o added to its message (the
// category, errno, extack and source unchanged); @e itself when there is
// none to give.
ppkit::Error advised(const ppkit::Error &e, const Options &o);

}  // namespace ppctl
