// SPDX-License-Identifier: GPL-2.0
// libppkit internals: the messages of the ppkit generic netlink family
// (<linux/ppkit.h>): requests built with libnl, replies and notifications
// parsed with libnl policies.  No socket here: tests feed these functions
// the bytes a kernel would send.
#pragma once

#include <cstdint>
#include <optional>

#include "nl.h"
#include "ppkit/holders.h"
#include "ppkit/types.h"

namespace ppkit::wire {

// PPKIT_CMD_POOL_GET: one pool (do) or all (dump, @id empty).
nl::MsgPtr ppkit_pool_get(int family, std::optional<std::uint32_t> id);
// PPKIT_CMD_STATS_GET: one pool (do), or a dump filtered by @ifindex.
// @lent_ages: ask for lent-held and lent-oldest-ms too (a pass over each
// pool's lent pages in the kernel).
nl::MsgPtr ppkit_stats_get(int family, std::optional<std::uint32_t> id,
			   std::optional<std::uint32_t> ifindex, bool lent_ages = true);
// PPKIT_CMD_POOL_SET.  Throws Error(InvalidArgument) if @s sets nothing.
nl::MsgPtr ppkit_pool_set(int family, std::uint32_t id, const PoolSettings &s);

// PPKIT_CMD_HOLDERS_GET (CAP_NET_ADMIN): who holds pool @id's pages.
nl::MsgPtr ppkit_holders_get(int family, std::uint32_t id);
// Its reply; Error(Protocol) if malformed.
Holders ppkit_parse_holders(nl_msg *msg);

// A pool-get reply or a pool notification; Error(Protocol) if malformed.
Pool ppkit_parse_pool(nl_msg *msg);
// The same, on a message where it lies in a receive buffer (nl::Socket::dump).
Pool ppkit_parse_pool(const nlmsghdr *nlh);
// A stats-get reply; Error(Protocol) if malformed.
Stats ppkit_parse_stats(nl_msg *msg);
// The same, on a message where it lies in a receive buffer (nl::Socket::dump).
Stats ppkit_parse_stats(const nlmsghdr *nlh);
// The same, into @out (all of it rewritten): a dump fills its vector in place.
void ppkit_parse_stats(const nlmsghdr *nlh, Stats &out);
// The kind of a notification command, or nothing for any other command.
std::optional<Event::Kind> ppkit_event_kind(std::uint8_t cmd);

}  // namespace ppkit::wire
