// SPDX-License-Identifier: GPL-2.0
/* pp_backport: statistics, always on. */

#include <linux/module.h>
#include "pool.h"

const char * const ppb_stat_names[PPB_STAT_NR] = {
	[PPB_STAT_ALLOC_FAST]			= "alloc_fast",
	[PPB_STAT_ALLOC_SLOW]			= "alloc_slow",
	[PPB_STAT_ALLOC_SLOW_HIGH_ORDER]	= "alloc_slow_high_order",
	[PPB_STAT_ALLOC_EMPTY]			= "alloc_empty",
	[PPB_STAT_ALLOC_REFILL]			= "alloc_refill",
	[PPB_STAT_ALLOC_WAIVE]			= "alloc_waive",
	[PPB_STAT_RECYCLE_CACHED]		= "recycle_cached",
	[PPB_STAT_RECYCLE_CACHE_FULL]		= "recycle_cache_full",
	[PPB_STAT_RECYCLE_RING]			= "recycle_ring",
	[PPB_STAT_RECYCLE_RING_FULL]		= "recycle_ring_full",
	[PPB_STAT_RECYCLE_RELEASED_REFCNT]	= "recycle_released_refcnt",
	[PPB_STAT_PAGES_FROM_CACHE]		= "pages_from_cache",
	[PPB_STAT_PAGES_FROM_RING]		= "pages_from_ring",
	[PPB_STAT_PAGES_FROM_STACK]		= "pages_from_stack",
	[PPB_STAT_PAGES_FROM_ALLOC]		= "pages_from_alloc",
	[PPB_STAT_PAGES_ALLOCATED]		= "pages_allocated",
	[PPB_STAT_PAGES_RELEASED]		= "pages_released",
	[PPB_STAT_PAGES_RETURNED]		= "pages_returned",
	[PPB_STAT_PAGES_LENT]			= "pages_lent",
	[PPB_STAT_PAGES_RECLAIMED]		= "pages_reclaimed",
	[PPB_STAT_PAGES_ORPHANED]		= "pages_orphaned",
	[PPB_STAT_RELEASED_PFMEMALLOC]		= "released_pfmemalloc",
	[PPB_STAT_RELEASED_FAR_NODE]		= "released_far_node",
	[PPB_STAT_RELEASED_DESTROYED]		= "released_destroyed",
	[PPB_STAT_RING_CONSUMED]		= "ring_consumed",
	[PPB_STAT_SYNC_FOR_DEVICE]		= "sync_for_device",
	[PPB_STAT_SYNC_FOR_DEVICE_BYTES]	= "sync_for_device_bytes",
};
EXPORT_SYMBOL_GPL(ppb_stat_names);

static u64 ppb_diff(u64 a, u64 b)
{
	/* Per-cpu sums are read without stopping writers: never report a wrap. */
	return a > b ? a - b : 0;
}

/*
 * A snapshot of @pool's counters.  Cheap enough for a sampler; exact when the
 * pool is quiet, within a few in-progress operations while it is busy.
 */
void ppb_get_stats(struct ppb_pool *pool, struct ppb_stats *st)
{
	u64 *c = st->c;
	u64 served;
	int cpu, i;

	memset(st, 0, sizeof(*st));
	for_each_possible_cpu(cpu) {
		const struct ppb_pcpu_stats *s = per_cpu_ptr(pool->stats, cpu);

		for (i = 0; i < PPB_STAT_NR; i++)
			c[i] += READ_ONCE(s->c[i]);
	}
	/* The fast path counts only where a page came from; the rest is arithmetic. */
	served = c[PPB_STAT_PAGES_FROM_CACHE] + c[PPB_STAT_PAGES_FROM_RING] +
		 c[PPB_STAT_PAGES_FROM_STACK] + c[PPB_STAT_PAGES_FROM_ALLOC];
	c[PPB_STAT_ALLOC_FAST] = ppb_diff(served, c[PPB_STAT_ALLOC_REFILL] +
					  c[PPB_STAT_ALLOC_SLOW] +
					  c[PPB_STAT_ALLOC_SLOW_HIGH_ORDER]);
	st->inflight_pages = ppb_diff(served, c[PPB_STAT_PAGES_RETURNED] +
				      c[PPB_STAT_PAGES_RECLAIMED] +
				      c[PPB_STAT_PAGES_ORPHANED]);
	st->inflight_bytes = st->inflight_pages * pool->page_bytes;
	st->cache_pages = READ_ONCE(pool->cache.count);
	st->ring_pages = ppb_diff(c[PPB_STAT_RECYCLE_RING], c[PPB_STAT_RING_CONSUMED]);
	st->lent_pages = READ_ONCE(pool->lent_tail) - READ_ONCE(pool->lent_head);
}
EXPORT_SYMBOL_GPL(ppb_get_stats);

/* Statistics of pool @id, live or destroyed and waiting: -ENOENT once it is gone. */
int ppb_pool_stats_by_id(u32 id, struct ppb_stats *st)
{
	struct ppb_pool *pool;
	int err = -ENOENT;

	ppb_registry_lock();
	pool = ppb_registry_find(id);
	if (pool) {
		ppb_get_stats(pool, st);
		err = 0;
	}
	ppb_registry_unlock();
	return err;
}
EXPORT_SYMBOL_GPL(ppb_pool_stats_by_id);
