/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * ppsim: generic netlink interface of the ppkit software NIC.
 *
 * One attribute space for devices and their generator.  Every command
 * that changes something needs CAP_NET_ADMIN; dev-get is open to all.
 * Devices are looked up by ifindex in the caller's network namespace.
 */
#ifndef _UAPI_LINUX_PPSIM_H
#define _UAPI_LINUX_PPSIM_H

#define PPSIM_FAMILY_NAME	"ppsim"
#define PPSIM_FAMILY_VERSION	1

/* Where RX buffers come from. */
enum ppsim_pool {
	PPSIM_POOL_PPKIT,	/* pp_backport.ko */
	PPSIM_POOL_NATIVE,	/* the kernel's own page_pool */
	PPSIM_POOL_NONE,	/* alloc + map per buffer, unmap + free per packet */
};

/* How a received frame becomes an skb. */
enum ppsim_rx_mode {
	PPSIM_RX_ZEROCOPY,	/* build_skb on the page */
	PPSIM_RX_COPY,		/* napi_alloc_skb + memcpy, page recycled at once */
};

/* How much of a recycled buffer is synced for the device. */
enum ppsim_sync {
	PPSIM_SYNC_PRECISE,	/* max_len = the RX buffer size; puts pass the length used */
	PPSIM_SYNC_FULL,	/* max_len = the whole page after the headroom */
};

/* Prefetch of the frame's first cache line relative to dma_sync_*_for_cpu. */
enum ppsim_prefetch {
	PPSIM_PREFETCH_AFTER_SYNC,
	PPSIM_PREFETCH_BEFORE_SYNC,
};

/* Order in which directly returned pages are reused. */
enum ppsim_cache {
	PPSIM_CACHE_LIFO,	/* into the pool's NAPI cache: newest first */
	PPSIM_CACHE_FIFO,	/* through the pool's ring: oldest first */
};

enum {
	PPSIM_A_UNSPEC,
	PPSIM_A_IFINDEX,	/* u32 */
	PPSIM_A_IFNAME,		/* string, replies only */
	PPSIM_A_PEER_IFINDEX,	/* u32, replies only; 0: no peer */
	PPSIM_A_RX_QUEUES,	/* u32, dev-new */
	PPSIM_A_TX_QUEUES,	/* u32, dev-new */
	PPSIM_A_RING_SIZE,	/* u32, RX descriptors per queue (dev-new, dev-set) */
	PPSIM_A_POOL,		/* u32, enum ppsim_pool */
	PPSIM_A_RX_MODE,	/* u32, enum ppsim_rx_mode */
	PPSIM_A_SYNC,		/* u32, enum ppsim_sync */
	PPSIM_A_PREFETCH,	/* u32, enum ppsim_prefetch */
	PPSIM_A_CACHE,		/* u32, enum ppsim_cache */
	PPSIM_A_NUMA_RULE,	/* u8, 1: pool follows the NAPI node, far pages released */
	PPSIM_A_IRQ_CPU,	/* s32, CPU taking queue 0's interrupt (queue q: +q); -1: q */
	PPSIM_A_PAIR,		/* flag, dev-new: two ports wired back to back */
	PPSIM_A_XDP_PROG_ID,	/* u32, replies only; 0: none */
	PPSIM_A_GEN_RATE,	/* u64, frames/s over all queues; 0: line rate */
	PPSIM_A_GEN_SIZE,	/* u32, frame bytes without FCS, 60..MTU+14 */
	PPSIM_A_GEN_ETHERTYPE,	/* u16, host order; 0x0800: UDP/IPv4 frames */
	PPSIM_A_GEN_DST_PORT,	/* u16, UDP destination port */
	PPSIM_A_GEN_COUNT,	/* u64, frames to send; 0: until gen-stop */
	PPSIM_A_GEN_CPU,	/* s32, CPU the generator runs on; -1: the last one */
	PPSIM_A_GEN_RUNNING,	/* u8, replies only */
	PPSIM_A_GEN_SENT,	/* u64, replies only: frames written into RX rings */
	PPSIM_A_GEN_MISSED,	/* u64, replies only: frames that found no descriptor */
	PPSIM_A_PAD,
	PPSIM_A_FRAG,		/* u8, 1: RX buffers are fragments of pool pages (pool ppkit) */

	__PPSIM_A_MAX,
	PPSIM_A_MAX = __PPSIM_A_MAX - 1
};

enum {
	PPSIM_CMD_UNSPEC,
	PPSIM_CMD_DEV_GET,	/* do (IFINDEX) or dump: devices in this netns */
	PPSIM_CMD_DEV_NEW,	/* RX/TX_QUEUES, RING_SIZE, PAIR; replies like dev-get */
	PPSIM_CMD_DEV_DEL,	/* IFINDEX; deletes the peer too */
	PPSIM_CMD_DEV_SET,	/* IFINDEX + any knob; rings and pools are rebuilt */
	PPSIM_CMD_GEN_START,	/* IFINDEX + GEN_*; UDP frames need an IPv4 address */
	PPSIM_CMD_GEN_STOP,	/* IFINDEX */

	__PPSIM_CMD_MAX,
	PPSIM_CMD_MAX = __PPSIM_CMD_MAX - 1
};

#endif /* _UAPI_LINUX_PPSIM_H */
