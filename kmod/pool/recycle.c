// SPDX-License-Identifier: GPL-2.0
/* pp_backport: pages coming back from the driver. */

#include <linux/module.h>
#include <linux/mm.h>
#include <linux/rcupdate.h>
#include "pool.h"

/*
 * Why a page that came back may not be reused, or 0 if it may.  Pages from
 * the emergency reserves must go back so the reserves refill; pages on
 * another node than the pool's would be slow for every later packet.
 */
static inline enum ppb_stat ppb_page_unreusable(struct ppb_pool *pool, struct page *page)
{
	int nid;

	if (unlikely(page_is_pfmemalloc(page)))
		return PPB_STAT_RELEASED_PFMEMALLOC;
	nid = READ_ONCE(pool->nid);
	if (nid != NUMA_NO_NODE && unlikely(page_to_nid(page) != nid))
		return PPB_STAT_RELEASED_FAR_NODE;
	return 0;
}

static bool ppb_ring_put(struct ppb_pool *pool, struct page *page)
{
	int ret;

	ppb_page_set_origin(page, PPB_STAT_PAGES_FROM_RING);
	/* The consumer may run in softirq on this CPU: keep it out while we hold the lock. */
	if (in_softirq())
		ret = ptr_ring_produce(&pool->ring, page);
	else
		ret = ptr_ring_produce_bh(&pool->ring, page);
	return ret == 0;
}

/*
 * A page the pool owns outright (count back at the bias) goes to the cache
 * when the caller is the allocating context, else to the ring, else it is
 * released.  The caller has checked it may be reused.
 */
static void ppb_recycle(struct ppb_pool *pool, struct page *page, bool allow_direct)
{
	if (allow_direct) {
		if (likely(ppb_cache_push(pool, page, PPB_STAT_PAGES_FROM_CACHE))) {
			ppb_stat_inc(pool, PPB_STAT_RECYCLE_CACHED);
			return;
		}
		ppb_stat_inc(pool, PPB_STAT_RECYCLE_CACHE_FULL);
	}

	/*
	 * After ppb_pool_destroy() has seen no producer in an RCU grace period,
	 * nothing enters the ring again: it has been drained for the last time.
	 */
	rcu_read_lock();
	if (likely(!READ_ONCE(pool->destroyed))) {
		ppb_stat_inc(pool, PPB_STAT_RECYCLE_RING);
		if (likely(ppb_ring_put(pool, page))) {
			rcu_read_unlock();
			return;
		}
		this_cpu_dec(pool->stats->c[PPB_STAT_RECYCLE_RING]);
		ppb_stat_inc(pool, PPB_STAT_RECYCLE_RING_FULL);
	} else {
		ppb_stat_inc(pool, PPB_STAT_RELEASED_DESTROYED);
	}
	rcu_read_unlock();
	ppb_release_page(pool, page);
}

void ppb_put_page(struct ppb_pool *pool, struct page *page,
		  unsigned int dma_sync_size, bool allow_direct)
{
	enum ppb_stat why;

	ppb_stat_inc(pool, PPB_STAT_PAGES_RETURNED);
	if (unlikely(page_ref_count(page) != PPB_BIAS)) {
		/* Someone else still holds it: it cannot be handed out again. */
		ppb_stat_inc(pool, PPB_STAT_RECYCLE_RELEASED_REFCNT);
		ppb_release_page(pool, page);
		return;
	}
	why = ppb_page_unreusable(pool, page);
	if (unlikely(why)) {
		ppb_stat_inc(pool, why);
		ppb_release_page(pool, page);
		return;
	}
	if (unlikely(allow_direct && READ_ONCE(pool->destroyed)))
		allow_direct = false;
	ppb_sync_recycled(pool, page, dma_sync_size);
	ppb_recycle(pool, page, allow_direct);
}
EXPORT_SYMBOL_GPL(ppb_put_page);

/*
 * A page reclaimed from the stack, in the allocating context: back into
 * stock without counting as a driver return.
 */
void ppb_recycle_or_release(struct ppb_pool *pool, struct page *page, enum ppb_stat origin)
{
	enum ppb_stat why = ppb_page_unreusable(pool, page);

	if (unlikely(why)) {
		ppb_stat_inc(pool, why);
		ppb_release_page(pool, page);
		return;
	}
	ppb_sync_recycled(pool, page, pool->p.max_len);
	if (!READ_ONCE(pool->destroyed) && ppb_cache_push(pool, page, origin)) {
		ppb_stat_inc(pool, PPB_STAT_RECYCLE_CACHED);
		return;
	}
	rcu_read_lock();
	if (!READ_ONCE(pool->destroyed) && ppb_ring_put(pool, page)) {
		ppb_stat_inc(pool, PPB_STAT_RECYCLE_RING);
		rcu_read_unlock();
		return;
	}
	rcu_read_unlock();
	ppb_release_page(pool, page);
}
