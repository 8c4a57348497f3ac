// SPDX-License-Identifier: GPL-2.0
/* pp_backport: statistics, always on. */

#include <linux/module.h>
#include <linux/ethtool.h>
#include <ppkit/race.h>
#include "pool.h"

const char * const ppb_stat_names[PPB_STAT_NR] = {
	[PPB_STAT(ALLOC_FAST)]			= "alloc_fast",
	[PPB_STAT(ALLOC_SLOW)]			= "alloc_slow",
	[PPB_STAT(ALLOC_SLOW_HIGH_ORDER)]	= "alloc_slow_high_order",
	[PPB_STAT(ALLOC_EMPTY)]			= "alloc_empty",
	[PPB_STAT(ALLOC_REFILL)]		= "alloc_refill",
	[PPB_STAT(ALLOC_WAIVE)]			= "alloc_waive",
	[PPB_STAT(RECYCLE_CACHED)]		= "recycle_cached",
	[PPB_STAT(RECYCLE_CACHE_FULL)]		= "recycle_cache_full",
	[PPB_STAT(RECYCLE_RING)]		= "recycle_ring",
	[PPB_STAT(RECYCLE_RING_FULL)]		= "recycle_ring_full",
	[PPB_STAT(RECYCLE_RELEASED_REFCNT)]	= "recycle_released_refcnt",
	[PPB_STAT(PAGES_FROM_CACHE)]		= "pages_from_cache",
	[PPB_STAT(PAGES_FROM_RING)]		= "pages_from_ring",
	[PPB_STAT(PAGES_FROM_STACK)]		= "pages_from_stack",
	[PPB_STAT(PAGES_FROM_ALLOC)]		= "pages_from_alloc",
	[PPB_STAT(PAGES_ALLOCATED)]		= "pages_allocated",
	[PPB_STAT(PAGES_RELEASED)]		= "pages_released",
	[PPB_STAT(PAGES_RETURNED)]		= "pages_returned",
	[PPB_STAT(PAGES_LENT)]			= "pages_lent",
	[PPB_STAT(PAGES_RECLAIMED)]		= "pages_reclaimed",
	[PPB_STAT(PAGES_ORPHANED)]		= "pages_orphaned",
	[PPB_STAT(RELEASED_PFMEMALLOC)]		= "released_pfmemalloc",
	[PPB_STAT(RELEASED_FAR_NODE)]		= "released_far_node",
	[PPB_STAT(RELEASED_DESTROYED)]		= "released_destroyed",
	[PPB_STAT(RING_CONSUMED)]		= "ring_consumed",
	[PPB_STAT(SYNC_FOR_DEVICE)]		= "sync_for_device",
	[PPB_STAT(SYNC_FOR_DEVICE_BYTES)]	= "sync_for_device_bytes",
};
EXPORT_SYMBOL_GPL(ppb_stat_names);

static u64 ppb_diff(u64 a, u64 b)
{
	/* Counters are read without stopping writers: never report a wrap. */
	return a > b ? a - b : 0;
}

/*
 * A snapshot of @pool's counters, from any context but hard interrupts.
 * Cheap enough for a sampler; exact when the pool is quiet, within a few
 * in-progress operations while it is busy, and coherent always: every
 * cumulative counter is monotonic between two snapshots and every gauge
 * within what exists (pp_race's race_stats_read_during_refill attacks
 * this).  The allocating context changes the cache's books only in
 * sections of the pool's seqcount (refills and flushes, which never
 * sleep) and in single stores of the top word (the fast path): a read
 * between two equal sequence numbers sees one refill whole.  On 32-bit
 * kernels a 64-bit counter may be read torn while it is written (as with
 * the kernel's own page_pool statistics).
 */
void ppb_get_stats(struct ppb_pool *pool, struct ppb_stats *st)
{
	u64 p[PPB_P_NR] = { 0 }, c[PPB_C_NR];
	u32 seg_len, seg_stack, seg_fresh;
	u64 top;
	u64 *o = st->c;
	u64 served, returned, hold, stock, ring;
	u32 stack, other, n;
	unsigned int seq;
	int cpu, i;

	for_each_possible_cpu(cpu) {
		const struct ppb_pcpu_stats *s = per_cpu_ptr(pool->stats, cpu);

		for (i = 0; i < PPB_P_NR; i++)
			p[i] += READ_ONCE(s->c[i]);
	}
	ring = READ_ONCE(pool->ring_produced);
	do {
		seq = read_seqcount_begin(&pool->seq);
		top = READ_ONCE(pool->cache.top);
		seg_len = READ_ONCE(pool->cache.seg_len);
		seg_stack = READ_ONCE(pool->cache.seg_stack);
		seg_fresh = READ_ONCE(pool->cache.seg_fresh);
		hold = READ_ONCE(pool->hold_cnt);
		for (i = 0; i < PPB_C_NR; i++)
			c[i] = READ_ONCE(pool->cs[i]);
	} while (read_seqcount_retry(&pool->seq, seq));
	n = ppb_top_count(top);

	memset(st, 0, sizeof(*st));
	/*
	 * Where served pages came from (struct ppb_cache): the finished refills'
	 * totals plus what the current one has served; direct returns are
	 * served unless still above the refill's remains, or flushed.
	 */
	ppb_seg_served(top, seg_len, seg_stack, &stack, &other);
	o[PPB_STAT(PAGES_FROM_STACK)] = c[PPB_C_SERVED_STACK] + stack;
	o[PPB_STAT(PAGES_FROM_RING)] = c[PPB_C_SERVED_RING] + (seg_fresh ? 0 : other);
	o[PPB_STAT(PAGES_FROM_ALLOC)] = c[PPB_C_SERVED_ALLOC] + (seg_fresh ? other : 0);
	c[PPB_C_DIRECT_CACHED] += ppb_top_pushes(top);
	o[PPB_STAT(PAGES_FROM_CACHE)] = ppb_diff(c[PPB_C_DIRECT_CACHED],
						 (n - min(ppb_top_seg(top), n)) +
						 c[PPB_C_FLUSH_DIRECT]);
	served = o[PPB_STAT(PAGES_FROM_CACHE)] + o[PPB_STAT(PAGES_FROM_RING)] +
		 o[PPB_STAT(PAGES_FROM_STACK)] + o[PPB_STAT(PAGES_FROM_ALLOC)];
	o[PPB_STAT(ALLOC_SLOW)] = c[PPB_C_SLOW];
	o[PPB_STAT(ALLOC_SLOW_HIGH_ORDER)] = c[PPB_C_SLOW_HIGH_ORDER];
	o[PPB_STAT(ALLOC_REFILL)] = c[PPB_C_REFILL];
	/* Every allocation that did not take a slow path was a fast one. */
	o[PPB_STAT(ALLOC_FAST)] = ppb_diff(served, c[PPB_C_REFILL] + c[PPB_C_SLOW] +
					   c[PPB_C_SLOW_HIGH_ORDER]);
	o[PPB_STAT(ALLOC_EMPTY)] = c[PPB_C_EMPTY];
	o[PPB_STAT(ALLOC_WAIVE)] = c[PPB_C_WAIVE];
	o[PPB_STAT(RECYCLE_CACHED)] = c[PPB_C_DIRECT_CACHED] + c[PPB_C_RECLAIM_CACHED];
	o[PPB_STAT(RECYCLE_CACHE_FULL)] = c[PPB_C_CACHE_FULL];
	o[PPB_STAT(RECYCLE_RING)] = ring + c[PPB_C_RECLAIM_RING];
	o[PPB_STAT(RECYCLE_RING_FULL)] = p[PPB_P_RING_FULL];
	o[PPB_STAT(RECYCLE_RELEASED_REFCNT)] = p[PPB_P_REFCNT];
	o[PPB_STAT(PAGES_ALLOCATED)] = c[PPB_C_ALLOCATED];
	o[PPB_STAT(PAGES_RELEASED)] = p[PPB_P_RELEASED];
	returned = c[PPB_C_DIRECT_CACHED] + ring + p[PPB_P_RING_FULL] +
		   p[PPB_P_REFCNT] + p[PPB_P_PFMEMALLOC] + p[PPB_P_FAR_NODE] +
		   p[PPB_P_DESTROYED];
	o[PPB_STAT(PAGES_RETURNED)] = returned;
	o[PPB_STAT(PAGES_LENT)] = c[PPB_C_LENT];
	o[PPB_STAT(PAGES_RECLAIMED)] = c[PPB_C_RECLAIM_CACHED] + c[PPB_C_RECLAIM_RING] +
				      c[PPB_C_RECLAIM_PFMEMALLOC] +
				      c[PPB_C_RECLAIM_FAR_NODE] + c[PPB_C_RECLAIM_RELEASED];
	o[PPB_STAT(PAGES_ORPHANED)] = c[PPB_C_ORPHANED];
	o[PPB_STAT(RELEASED_PFMEMALLOC)] = p[PPB_P_PFMEMALLOC] + c[PPB_C_RECLAIM_PFMEMALLOC];
	o[PPB_STAT(RELEASED_FAR_NODE)] = p[PPB_P_FAR_NODE] + c[PPB_C_RECLAIM_FAR_NODE];
	o[PPB_STAT(RELEASED_DESTROYED)] = p[PPB_P_DESTROYED];
	/* Taken out by refills and flushes, or dropped by a pool-set shrink. */
	o[PPB_STAT(RING_CONSUMED)] = c[PPB_C_RING_CONSUMED] + p[PPB_P_RESIZE_DROPPED];
	/* every page pushed into a syncing pool's cache was synced */
	o[PPB_STAT(SYNC_FOR_DEVICE)] = p[PPB_P_SYNC] + c[PPB_C_RECLAIM_SYNCED] +
		(pool->p.flags & PPB_FLAG_DMA_SYNC_DEV ? c[PPB_C_DIRECT_CACHED] : 0);
	o[PPB_STAT(SYNC_FOR_DEVICE_BYTES)] = p[PPB_P_SYNC_BYTES] + c[PPB_C_SYNC_BYTES] +
		c[PPB_C_RECLAIM_SYNCED] * pool->p.max_len;

	st->cache_pages = n;
	st->ring_pages = ppb_diff(o[PPB_STAT(RECYCLE_RING)], o[PPB_STAT(RING_CONSUMED)]);
	rcu_read_lock();
	st->lent_pages = ppb_lent_read(pool, rcu_dereference(pool->lent), NULL);
	rcu_read_unlock();
	/* Held by the pool and not in its stock: never more than entered it. */
	stock = atomic64_read(&pool->release_cnt) + n + st->ring_pages;
	st->inflight_pages = ppb_diff(hold, stock);
	st->inflight_bytes = st->inflight_pages * pool->page_bytes;
	st->lent_twice = c[PPB_C_LENT_TWICE];
	st->frags_served = c[PPB_C_FRAGS];
	st->frags_lent = c[PPB_C_FRAGS_LENT];
	st->frag_pages_unlent = c[PPB_C_FRAG_UNLENT];
	st->foreign = c[PPB_C_FOREIGN_LENT] + p[PPB_P_FOREIGN_PUT];
}
EXPORT_SYMBOL_GPL(ppb_get_stats);

/* Statistics of pool @id, live or destroyed and waiting: -ENOENT once it is gone. */
int ppb_pool_stats_by_id(u32 id, struct ppb_stats *st)
{
	struct ppb_pool *pool;
	int err = -ENOENT;

	rcu_read_lock();
	pool = ppb_registry_find(id);
	if (pool) {
		ppb_race_window();
		ppb_get_stats(pool, st);
		err = 0;
	}
	rcu_read_unlock();
	return err;
}
EXPORT_SYMBOL_GPL(ppb_pool_stats_by_id);

/*
 * ethtool -S: one set of names for the pool counters of every driver.  The
 * kernel page_pool's counters keep its names (rx_pp_*, as drivers report
 * them upstream), the backport's own are rx_ppb_*; the gauges come last.
 * A driver whose pools serve several netdevs says so with a prefix.
 */
static const struct {
	const char *name;
	int stat;	/* PPB_STAT(), or a gauge below */
} ppb_ethtool[] = {
	{ "rx_pp_alloc_fast",		PPB_STAT(ALLOC_FAST) },
	{ "rx_pp_alloc_slow",		PPB_STAT(ALLOC_SLOW) },
	{ "rx_pp_alloc_slow_ho",	PPB_STAT(ALLOC_SLOW_HIGH_ORDER) },
	{ "rx_pp_alloc_empty",		PPB_STAT(ALLOC_EMPTY) },
	{ "rx_pp_alloc_refill",		PPB_STAT(ALLOC_REFILL) },
	{ "rx_pp_alloc_waive",		PPB_STAT(ALLOC_WAIVE) },
	{ "rx_pp_recycle_cached",	PPB_STAT(RECYCLE_CACHED) },
	{ "rx_pp_recycle_cache_full",	PPB_STAT(RECYCLE_CACHE_FULL) },
	{ "rx_pp_recycle_ring",		PPB_STAT(RECYCLE_RING) },
	{ "rx_pp_recycle_ring_full",	PPB_STAT(RECYCLE_RING_FULL) },
	{ "rx_pp_recycle_released_ref",	PPB_STAT(RECYCLE_RELEASED_REFCNT) },
	{ "rx_ppb_pages_allocated",	PPB_STAT(PAGES_ALLOCATED) },
	{ "rx_ppb_pages_released",	PPB_STAT(PAGES_RELEASED) },
	{ "rx_ppb_pages_lent",		PPB_STAT(PAGES_LENT) },
	{ "rx_ppb_pages_reclaimed",	PPB_STAT(PAGES_RECLAIMED) },
	{ "rx_ppb_pages_orphaned",	PPB_STAT(PAGES_ORPHANED) },
	{ "rx_ppb_released_far_node",	PPB_STAT(RELEASED_FAR_NODE) },
	{ "rx_ppb_released_pfmemalloc",	PPB_STAT(RELEASED_PFMEMALLOC) },
	{ "rx_ppb_inflight_pages",	PPB_STAT_NR },
	{ "rx_ppb_lent_pages",		PPB_STAT_NR + 1 },
	{ "rx_ppb_frags_served",	PPB_STAT_NR + 2 },
	{ "rx_ppb_frags_lent",		PPB_STAT_NR + 3 },
};

int ppb_ethtool_stats_count(void)
{
	return ARRAY_SIZE(ppb_ethtool);
}
EXPORT_SYMBOL_GPL(ppb_ethtool_stats_count);

/* The names, each ETH_GSTRING_LEN bytes from @data, after @prefix. */
u8 *ppb_ethtool_stats_strings(u8 *data, const char *prefix)
{
	int i;

	for (i = 0; i < ARRAY_SIZE(ppb_ethtool); i++) {
		snprintf((char *)data, ETH_GSTRING_LEN, "%s%s", prefix, ppb_ethtool[i].name);
		data += ETH_GSTRING_LEN;
	}
	return data;
}
EXPORT_SYMBOL_GPL(ppb_ethtool_stats_strings);

/* Adds @s to @sum: a driver's pools summed for its ethtool -S. */
void ppb_stats_add(struct ppb_stats *sum, const struct ppb_stats *s)
{
	int i;

	for (i = 0; i < PPB_STAT_NR; i++)
		sum->c[i] += s->c[i];
	sum->inflight_pages += s->inflight_pages;
	sum->inflight_bytes += s->inflight_bytes;
	sum->cache_pages += s->cache_pages;
	sum->ring_pages += s->ring_pages;
	sum->lent_pages += s->lent_pages;
	sum->lent_twice += s->lent_twice;
	sum->frags_served += s->frags_served;
	sum->frags_lent += s->frags_lent;
	sum->frag_pages_unlent += s->frag_pages_unlent;
	sum->foreign += s->foreign;
}
EXPORT_SYMBOL_GPL(ppb_stats_add);

/* The values, in the order of the names. */
u64 *ppb_ethtool_stats_fill(const struct ppb_stats *sum, u64 *data)
{
	int i, s;

	for (i = 0; i < ARRAY_SIZE(ppb_ethtool); i++) {
		s = ppb_ethtool[i].stat;
		if (s < PPB_STAT_NR)
			*data++ = sum->c[s];
		else if (s == PPB_STAT_NR)
			*data++ = sum->inflight_pages;
		else if (s == PPB_STAT_NR + 1)
			*data++ = sum->lent_pages;
		else if (s == PPB_STAT_NR + 2)
			*data++ = sum->frags_served;
		else
			*data++ = sum->frags_lent;
	}
	return data;
}
EXPORT_SYMBOL_GPL(ppb_ethtool_stats_fill);
