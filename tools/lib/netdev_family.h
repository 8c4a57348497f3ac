// SPDX-License-Identifier: GPL-2.0
// libppkit internals: the page-pool messages of the upstream netdev generic
// netlink family (Linux >= 6.8; stats only with CONFIG_PAGE_POOL_STATS).
//
// Debian 12's linux-libc-dev (6.1) has no <linux/netdev.h> page-pool ids,
// so the few we use are copied here from the upstream uapi,
// include/uapi/linux/netdev.h, generated from
// Documentation/netlink/specs/netdev.yaml.  They are ABI: they never change.
#pragma once

#include <cstdint>
#include <optional>

#include "nl.h"
#include "ppkit/types.h"

namespace ppkit::wire {

namespace netdev {

inline constexpr const char *kFamily = "netdev";	// NETDEV_FAMILY_NAME
inline constexpr std::uint8_t kVersion = 1;		// NETDEV_FAMILY_VERSION
inline constexpr const char *kGroupPagePool = "page-pool"; // NETDEV_MCGRP_PAGE_POOL

// enum { NETDEV_CMD_... }
enum Cmd : std::uint8_t {
	CMD_PAGE_POOL_GET = 5,
	CMD_PAGE_POOL_ADD_NTF = 6,
	CMD_PAGE_POOL_DEL_NTF = 7,
	CMD_PAGE_POOL_CHANGE_NTF = 8,
	CMD_PAGE_POOL_STATS_GET = 9,
};

// enum { NETDEV_A_PAGE_POOL_... }: "uint" attributes are u32 or u64 on the
// wire (nla_put_uint), ifindex and napi-id are u32.
enum PoolAttr : int {
	A_PAGE_POOL_ID = 1,		// uint
	A_PAGE_POOL_IFINDEX = 2,	// u32
	A_PAGE_POOL_NAPI_ID = 3,	// u32
	A_PAGE_POOL_INFLIGHT = 4,	// uint
	A_PAGE_POOL_INFLIGHT_MEM = 5,	// uint
	A_PAGE_POOL_DETACH_TIME = 6,	// uint, seconds of CLOCK_BOOTTIME
	A_PAGE_POOL_MAX = 6,		// the last one we read; later ones are ignored
};

// enum { NETDEV_A_PAGE_POOL_STATS_... }: INFO nests the page-pool
// attributes (id, ifindex); the counters are uint, in the order of
// ppkit's first eleven.
enum StatsAttr : int {
	A_PAGE_POOL_STATS_INFO = 1,
	A_PAGE_POOL_STATS_ALLOC_FAST = 8,
	A_PAGE_POOL_STATS_RECYCLE_RELEASED_REFCNT = 18,
	A_PAGE_POOL_STATS_MAX = 18,
};

}  // namespace netdev

// page-pool-get: one pool (do) or all (dump).
nl::MsgPtr netdev_pool_get(int family, std::optional<std::uint32_t> id);
// page-pool-stats-get: one pool (do, by id in the INFO nest) or all (dump).
nl::MsgPtr netdev_stats_get(int family, std::optional<std::uint32_t> id);

// A page-pool-get reply or notification.  The kernel reports detach-time
// in CLOCK_BOOTTIME seconds: @boot_to_realtime_ns (CLOCK_REALTIME minus
// CLOCK_BOOTTIME, now) turns it into Pool::detach_time_ns.
Pool netdev_parse_pool(nl_msg *msg, std::int64_t boot_to_realtime_ns = 0);
// A page-pool-stats-get reply: the eleven upstream counters.
Stats netdev_parse_stats(nl_msg *msg);
std::optional<Event::Kind> netdev_event_kind(std::uint8_t cmd);

}  // namespace ppkit::wire
