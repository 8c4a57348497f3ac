/* SPDX-License-Identifier: ((GPL-2.0 WITH Linux-syscall-note) OR BSD-3-Clause) */
/*
 * ppkit generic netlink family: introspection and control of pp_backport
 * pools.  Shared by the kernel module and user space; described for the
 * kernel's ynl tools in Documentation/netlink/specs/ppkit.yaml.
 *
 * Semantics follow the upstream netdev family's page-pool commands where
 * they overlap.  All counters are u64; times are nanoseconds since the
 * epoch (CLOCK_REALTIME).  No reply carries a kernel pointer.
 */
#ifndef _UAPI_LINUX_PPKIT_H
#define _UAPI_LINUX_PPKIT_H

#define PPKIT_FAMILY_NAME	"ppkit"
#define PPKIT_FAMILY_VERSION	1
#define PPKIT_MCGRP_MGMT	"mgmt"

/* Limits of pool-set. */
#define PPKIT_RING_SIZE_MIN	1
#define PPKIT_RING_SIZE_MAX	32768
#define PPKIT_REFILL_BATCH_MIN	1
#define PPKIT_REFILL_BATCH_MAX	64

enum ppkit_dma_dir {
	PPKIT_DMA_NONE,			/* the pool does not map */
	PPKIT_DMA_FROM_DEVICE,
	PPKIT_DMA_BIDIRECTIONAL,
};

enum {
	PPKIT_A_POOL_UNSPEC,
	PPKIT_A_POOL_PAD,
	PPKIT_A_POOL_ID,		/* u32 */
	PPKIT_A_POOL_OWNER,		/* string: driver or module */
	PPKIT_A_POOL_IFINDEX,		/* u32, when the pool serves a netdev */
	PPKIT_A_POOL_QUEUE,		/* u32, its RX queue */
	PPKIT_A_POOL_NAPI_ID,		/* u32, when known */
	PPKIT_A_POOL_NID,		/* s32, -1: the allocating CPU's node */
	PPKIT_A_POOL_ORDER,		/* u32 */
	PPKIT_A_POOL_RING_SIZE,		/* u32, recycle ring entries */
	PPKIT_A_POOL_CACHE_SIZE,	/* u32, NAPI-local cache entries */
	PPKIT_A_POOL_REFILL_BATCH,	/* u32, pages per cache refill */
	PPKIT_A_POOL_MAX_LEN,		/* u32, bytes the device may write */
	PPKIT_A_POOL_DMA_DIR,		/* u32, enum ppkit_dma_dir */
	PPKIT_A_POOL_INFLIGHT,		/* u64, pages with the driver or the stack */
	PPKIT_A_POOL_INFLIGHT_MEM,	/* u64, their bytes */
	PPKIT_A_POOL_CREATED,		/* u64, ns since the epoch */
	PPKIT_A_POOL_DETACH_TIME,	/* u64, set once destroyed, pages pending */

	__PPKIT_A_POOL_MAX,
	PPKIT_A_POOL_MAX = __PPKIT_A_POOL_MAX - 1
};

/*
 * Statistics of one pool.  The counters are in the order and with the
 * meaning of Documentation/stats.rst; the first eleven carry the kernel's
 * page_pool counter names.
 */
enum {
	PPKIT_A_STATS_UNSPEC,
	PPKIT_A_STATS_PAD,
	PPKIT_A_STATS_POOL_ID,		/* u32: which pool (request: do) */
	PPKIT_A_STATS_IFINDEX,		/* u32: request filter (dump), reply info */
	PPKIT_A_STATS_ALLOC_FAST,	/* u64 each from here on */
	PPKIT_A_STATS_ALLOC_SLOW,
	PPKIT_A_STATS_ALLOC_SLOW_HIGH_ORDER,
	PPKIT_A_STATS_ALLOC_EMPTY,
	PPKIT_A_STATS_ALLOC_REFILL,
	PPKIT_A_STATS_ALLOC_WAIVE,
	PPKIT_A_STATS_RECYCLE_CACHED,
	PPKIT_A_STATS_RECYCLE_CACHE_FULL,
	PPKIT_A_STATS_RECYCLE_RING,
	PPKIT_A_STATS_RECYCLE_RING_FULL,
	PPKIT_A_STATS_RECYCLE_RELEASED_REFCNT,
	PPKIT_A_STATS_PAGES_FROM_CACHE,
	PPKIT_A_STATS_PAGES_FROM_RING,
	PPKIT_A_STATS_PAGES_FROM_STACK,
	PPKIT_A_STATS_PAGES_FROM_ALLOC,
	PPKIT_A_STATS_PAGES_ALLOCATED,
	PPKIT_A_STATS_PAGES_RELEASED,
	PPKIT_A_STATS_PAGES_RETURNED,
	PPKIT_A_STATS_PAGES_LENT,
	PPKIT_A_STATS_PAGES_RECLAIMED,
	PPKIT_A_STATS_PAGES_ORPHANED,
	PPKIT_A_STATS_RELEASED_PFMEMALLOC,
	PPKIT_A_STATS_RELEASED_FAR_NODE,
	PPKIT_A_STATS_RELEASED_DESTROYED,
	PPKIT_A_STATS_RING_CONSUMED,
	PPKIT_A_STATS_SYNC_FOR_DEVICE,
	PPKIT_A_STATS_SYNC_FOR_DEVICE_BYTES,
	PPKIT_A_STATS_INFLIGHT,		/* u64, pages */
	PPKIT_A_STATS_INFLIGHT_MEM,	/* u64, bytes */
	PPKIT_A_STATS_CACHE_PAGES,	/* u32, in the cache now */
	PPKIT_A_STATS_RING_PAGES,	/* u32, in the ring now */
	PPKIT_A_STATS_LENT_PAGES,	/* u32, with the stack, not yet back */
	/* u64 counters again, of pools that cut pages into fragments only */
	PPKIT_A_STATS_FRAGS_SERVED,	/* fragments handed out */
	PPKIT_A_STATS_FRAGS_LENT,	/* of which lent to the stack */
	PPKIT_A_STATS_FRAG_PAGES_UNLENT, /* lent pages back, fragments still the driver's */
	/* gauges, in replies to requests with LENT_AGES: a scan of the lent pages */
	PPKIT_A_STATS_LENT_HELD,	/* u32, lent pages the stack still holds */
	PPKIT_A_STATS_LENT_OLDEST_MS,	/* u64, how long it has held the oldest */
	PPKIT_A_STATS_LENT_AGES,	/* flag (request): reply with the two above */

	__PPKIT_A_STATS_MAX,
	PPKIT_A_STATS_MAX = __PPKIT_A_STATS_MAX - 1
};

#define PPKIT_A_STATS_FIRST_COUNTER	PPKIT_A_STATS_ALLOC_FAST
#define PPKIT_A_STATS_LAST_VALUE	PPKIT_A_STATS_LENT_OLDEST_MS

/*
 * Who holds a pool's pages (holders-get, admin): the pool's pages by where
 * they are, the age of those the stack holds, and the sockets whose queues
 * hold them, as far as a walk of the TCP, UDP and packet sockets of every
 * network namespace finds them.  A snapshot: the driver may lend and take
 * back pages while it is taken.
 */
enum {
	PPKIT_A_HOLDERS_UNSPEC,
	PPKIT_A_HOLDERS_PAD,
	PPKIT_A_HOLDERS_POOL_ID,	/* u32: which pool (request) */
	PPKIT_A_HOLDERS_DRIVER_PAGES,	/* u64, with the driver */
	PPKIT_A_HOLDERS_LENT_PAGES,	/* u32, lent, not yet reclaimed */
	PPKIT_A_HOLDERS_HELD_PAGES,	/* u32, of which the stack still holds */
	PPKIT_A_HOLDERS_HELD_10MS,	/* u32 each: held pages by age, < 10 ms */
	PPKIT_A_HOLDERS_HELD_100MS,	/* 10 ms .. 100 ms */
	PPKIT_A_HOLDERS_HELD_1S,	/* 100 ms .. 1 s */
	PPKIT_A_HOLDERS_HELD_10S,	/* 1 s .. 10 s */
	PPKIT_A_HOLDERS_HELD_LONGER,	/* 10 s and more */
	PPKIT_A_HOLDERS_OLDEST_MS,	/* u64, age of the oldest held page */
	PPKIT_A_HOLDERS_ORPHANED,	/* u64, pages orphaned so far */
	PPKIT_A_HOLDERS_SOCKETS,	/* u32, sockets walked */
	PPKIT_A_HOLDERS_UNATTRIBUTED,	/* u32, held pages in no socket walked */
	PPKIT_A_HOLDERS_TRUNCATED,	/* flag: the walk stopped at its bounds */
	PPKIT_A_HOLDERS_HOLDER,		/* nest, multi: PPKIT_A_HOLDER_* */

	__PPKIT_A_HOLDERS_MAX,
	PPKIT_A_HOLDERS_MAX = __PPKIT_A_HOLDERS_MAX - 1
};

/* One socket holding pages of the pool. */
enum {
	PPKIT_A_HOLDER_UNSPEC,
	PPKIT_A_HOLDER_PAD,
	PPKIT_A_HOLDER_NETNS,		/* u32, the namespace's inode number */
	PPKIT_A_HOLDER_FAMILY,		/* u16, AF_INET, AF_INET6 or AF_PACKET */
	PPKIT_A_HOLDER_PROTOCOL,	/* u16, IPPROTO_TCP/UDP; AF_PACKET: ethertype */
	PPKIT_A_HOLDER_STATE,		/* u8, TCP state (include/net/tcp_states.h) */
	PPKIT_A_HOLDER_LOCAL_ADDR,	/* binary, 4 or 16 bytes */
	PPKIT_A_HOLDER_LOCAL_PORT,	/* u16 */
	PPKIT_A_HOLDER_REMOTE_ADDR,	/* binary, 4 or 16 bytes, connected only */
	PPKIT_A_HOLDER_REMOTE_PORT,	/* u16 */
	PPKIT_A_HOLDER_INODE,		/* u64, the socket's inode (/proc/PID/fd) */
	PPKIT_A_HOLDER_UID,		/* u32 */
	PPKIT_A_HOLDER_PAGES,		/* u32, the pool's pages in its queues */
	PPKIT_A_HOLDER_OLDEST_MS,	/* u64, lent this long ago */

	__PPKIT_A_HOLDER_MAX,
	PPKIT_A_HOLDER_MAX = __PPKIT_A_HOLDER_MAX - 1
};

enum {
	PPKIT_CMD_UNSPEC,
	PPKIT_CMD_POOL_GET,		/* do: PPKIT_A_POOL_ID; dump: all */
	PPKIT_CMD_POOL_ADD_NTF,		/* notify: a pool was created */
	PPKIT_CMD_POOL_DEL_NTF,		/* notify: a pool is gone (all pages back) */
	PPKIT_CMD_POOL_CHANGE_NTF,	/* notify: destroyed (detached) or set */
	PPKIT_CMD_STATS_GET,		/* do: POOL_ID; dump: filter IFINDEX; LENT_AGES */
	PPKIT_CMD_POOL_SET,		/* admin: RING_SIZE and/or REFILL_BATCH of a pool */
	PPKIT_CMD_HOLDERS_GET,		/* admin, do: PPKIT_A_HOLDERS_POOL_ID */

	__PPKIT_CMD_MAX,
	PPKIT_CMD_MAX = __PPKIT_CMD_MAX - 1
};

#endif /* _UAPI_LINUX_PPKIT_H */
