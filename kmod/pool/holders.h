/* SPDX-License-Identifier: GPL-2.0 */
/* pp_backport internals: who holds a pool's pages (holders.c). */
#ifndef _PPB_HOLDERS_H
#define _PPB_HOLDERS_H

#include <linux/types.h>
#include <linux/netlink.h>

/* Held pages by age: < 10 ms, < 100 ms, < 1 s, < 10 s, longer. */
#define PPB_HOLD_AGE_NR		5
/* Sockets a reply names: the ones holding most pages. */
#define PPB_HOLDERS_MAX		64

struct ppb_holder {
	u32 netns;
	u16 family;
	u16 protocol;
	u8 state;
	u8 addr_len;
	u16 local_port, remote_port;
	u8 local[16], remote[16];
	u64 inode;
	u32 uid;
	u32 pages;
	u64 oldest_ms;
};

struct ppb_holders {
	u64 driver;
	u32 lent, held;
	u32 age[PPB_HOLD_AGE_NR];
	u64 oldest_ms;
	u64 orphaned;
	u32 sockets, unattributed;
	bool truncated;
	unsigned int nr;
	struct ppb_holder holders[PPB_HOLDERS_MAX];
};

struct ppb_pool;

int ppb_holders_get(u32 id, struct ppb_holders *h, struct netlink_ext_ack *extack);
void ppb_lent_ages(struct ppb_pool *pool, u32 *held, u64 *oldest_ms);

#endif /* _PPB_HOLDERS_H */
