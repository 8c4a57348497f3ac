// SPDX-License-Identifier: GPL-2.0
// libppkit internals: the messages of the ppsim generic netlink family
// (<linux/ppsim.h>): requests built with libnl, replies parsed with libnl
// policies.  No socket here: tests feed these functions the bytes a kernel
// would send.
#pragma once

#include <cstdint>
#include <optional>

#include "nl.h"
#include "ppkit/sim.h"

namespace ppkit::wire {

// PPSIM_CMD_DEV_GET: one device (do) or every one (dump, @ifindex empty).
nl::MsgPtr ppsim_dev_get(int family, std::optional<std::uint32_t> ifindex);
// PPSIM_CMD_DEV_NEW.
nl::MsgPtr ppsim_dev_new(int family, const SimNewDevice &d);
// PPSIM_CMD_DEV_DEL.
nl::MsgPtr ppsim_dev_del(int family, std::uint32_t ifindex);
// PPSIM_CMD_DEV_SET.  Throws Error(InvalidArgument) if @s sets nothing.
nl::MsgPtr ppsim_dev_set(int family, std::uint32_t ifindex, const SimSettings &s);
// PPSIM_CMD_GEN_START and PPSIM_CMD_GEN_STOP.
nl::MsgPtr ppsim_gen_start(int family, std::uint32_t ifindex, const SimGenParams &p);
nl::MsgPtr ppsim_gen_stop(int family, std::uint32_t ifindex);

// A dev-get (or dev-new) reply; Error(Protocol) if malformed.  The peer's
// name is left for the client to resolve.
SimDevice ppsim_parse_device(nl_msg *msg);

}  // namespace ppkit::wire
