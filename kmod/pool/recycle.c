// SPDX-License-Identifier: GPL-2.0
/* pp_backport: pages coming back from the driver and from the stack. */

#include <linux/module.h>
#include <linux/mm.h>
#include <linux/bottom_half.h>
#include "pool.h"

/*
 * Into the ring, from any context, counted as @ctr (PPB_P_NR: by the
 * caller, the allocating context).  Runs with BHs off, which is an RCU
 * read-side section: once ppb_pool_destroy() has set 'destroyed' and waited
 * for a grace period, nothing enters the ring or touches the pool's
 * per-CPU counters again, and the pool can be drained and freed.  The
 * count is taken inside the section for that reason: a page in the ring
 * no longer keeps the pool alive.  The same section keeps a softirq
 * consumer on this CPU from spinning on the producer lock we hold.
 * pp_race's race_put_during_destroy attacks this.
 */
static __always_inline bool ppb_ring_produce(struct ppb_pool *pool, struct page *page,
					     enum ppb_pctr ctr)
{
	bool bh = !in_softirq();
	bool ok = false;

	if (bh)
		local_bh_disable();
	if (likely(!READ_ONCE(pool->destroyed))) {
		ok = ptr_ring_produce(&pool->ring, page) == 0;
		if (ok && ctr != PPB_P_NR)
			ppb_pinc(pool, ctr);
	}
	if (bh)
		local_bh_enable();
	return ok;
}

static noinline void ppb_put_page_slow(struct ppb_pool *pool, struct page *page,
				       unsigned int dma_sync_size, bool allow_direct)
{
	u8 checks;
	int nid;

	if (unlikely(page_ref_count(page) != PPB_BIAS)) {
		/* Someone else still holds it: it cannot be handed out again. */
		ppb_pinc(pool, PPB_P_REFCNT);
		goto release;
	}
	/* Emergency-reserve pages go back so that the reserves refill. */
	if (unlikely(page_is_pfmemalloc(page))) {
		ppb_pinc(pool, PPB_P_PFMEMALLOC);
		goto release;
	}
	/* One load says whether any check below applies to this pool. */
	checks = READ_ONCE(pool->put_checks);
	if (unlikely(checks & (PPB_PC_NODE | PPB_PC_SYNC))) {
		/* A page of another node would be slow for every later packet. */
		nid = READ_ONCE(pool->nid);
		if (nid != NUMA_NO_NODE && page_to_nid(page) != nid) {
			ppb_pinc(pool, PPB_P_FAR_NODE);
			goto release;
		}
		if (pool->p.flags & PPB_FLAG_DMA_SYNC_DEV)
			ppb_sync_for_device(pool, page, dma_sync_size);
	}

	/*
	 * The allocating context returns straight into its own cache.  As with
	 * the kernel's page_pool, the driver stops that context (NAPI) before
	 * it destroys the pool; a direct return after destroy (the flag is
	 * read in the same RCU section that destroy waits for) goes the ring's
	 * way and is released, never into a cache the release work flushes.
	 */
	if (allow_direct && in_softirq() && likely(!(checks & PPB_PC_DESTROYED))) {
		if (likely(ppb_cache_push_direct(pool, page)))
			return;
		ppb_cinc(pool, PPB_C_CACHE_FULL);
	}
	if (likely(ppb_ring_produce(pool, page, PPB_P_RING)))
		return;
	ppb_pinc(pool, READ_ONCE(pool->destroyed) ? PPB_P_DESTROYED : PPB_P_RING_FULL);
release:
	ppb_release_page(pool, page);
}

/*
 * A direct return to a pool that checks nodes or syncs for the device (an
 * XDP_DROP with PPB_FLAG_DMA_SYNC_DEV, say), or that is destroyed: a local
 * page with room in the cache of a live pool is synced and cached here,
 * the sync counted by the allocating context itself; anything else goes
 * on to ppb_put_page_slow().  Reached
 * by a tail call, so that ppb_put_page() stays a leaf.
 */
static noinline void ppb_put_direct_checked(struct ppb_pool *pool, struct page *page,
					    unsigned int dma_sync_size)
{
	int nid = READ_ONCE(pool->nid);
	unsigned int len;

	if (unlikely((READ_ONCE(pool->put_checks) & PPB_PC_DESTROYED) ||
		     (nid != NUMA_NO_NODE && page_to_nid(page) != nid) ||
		     ppb_top_count(pool->cache.top) == PPB_CACHE_SIZE)) {
		ppb_put_page_slow(pool, page, dma_sync_size, true);
		return;
	}
	if (pool->p.flags & PPB_FLAG_DMA_SYNC_DEV) {
		len = min(dma_sync_size, pool->p.max_len);
		dma_sync_single_range_for_device(pool->p.dev, ppb_get_dma_addr(page),
						 pool->p.offset, len, pool->p.dma_dir);
		ppb_cinc(pool, PPB_C_SYNC);
		ppb_cadd(pool, PPB_C_SYNC_BYTES, len);
	}
	ppb_cache_push_direct(pool, page);	/* room checked above */
}

/*
 * The common case, a direct return of a page nobody else holds to a pool
 * with no node to check and nothing to sync, makes no call and touches no
 * stack (a leaf: the micro-benchmark's fast case); everything else is
 * ppb_put_page_slow()'s.
 */
void ppb_put_page(struct ppb_pool *pool, struct page *page,
		  unsigned int dma_sync_size, bool allow_direct)
{
	if (likely(allow_direct && page_ref_count(page) == PPB_BIAS &&
		   !page_is_pfmemalloc(page) && in_softirq())) {
		if (likely(!READ_ONCE(pool->put_checks))) {
			if (likely(ppb_cache_push_direct(pool, page)))
				return;
		} else {
			ppb_put_direct_checked(pool, page, dma_sync_size);
			return;
		}
	}
	ppb_put_page_slow(pool, page, dma_sync_size, allow_direct);
}
EXPORT_SYMBOL_GPL(ppb_put_page);

/*
 * A page the stack has let go, in the allocating context (or at teardown):
 * back into stock if it may be reused, counted apart from driver returns.
 * Into the cache only as part of a refill (@refill), else into the ring.
 */
void ppb_recycle_reclaimed(struct ppb_pool *pool, struct page *page, bool refill)
{
	/* As a refill from the ring: without a node of its own, the consumer's. */
	int nid = ppb_pool_nid(pool);

	if (unlikely(page_is_pfmemalloc(page))) {
		ppb_cinc(pool, PPB_C_RECLAIM_PFMEMALLOC);
	} else if (unlikely(page_to_nid(page) != nid)) {
		ppb_cinc(pool, PPB_C_RECLAIM_FAR_NODE);
	} else if (unlikely(READ_ONCE(pool->destroyed))) {
		ppb_cinc(pool, PPB_C_RECLAIM_RELEASED);
	} else {
		if (pool->p.flags & PPB_FLAG_DMA_SYNC_DEV)
			ppb_sync_for_device(pool, page, pool->p.max_len);
		if (refill && ppb_cache_stage(pool, page)) {
			ppb_cinc(pool, PPB_C_RECLAIM_CACHED);
			return;
		}
		if (ppb_ring_produce(pool, page, PPB_P_NR)) {
			ppb_cinc(pool, PPB_C_RECLAIM_RING);
			return;
		}
		ppb_cinc(pool, PPB_C_RECLAIM_RELEASED);	/* ring full */
	}
	ppb_release_page(pool, page);
}

/*
 * ptr_ring_resize() hands entries that no longer fit to a callback without
 * context, under the ring's locks with IRQs off: collect them here (resizes
 * are serialised by the registry lock) and release them afterwards.
 */
static struct {
	struct page **pages;
	unsigned int n;
} ppb_resize_drop;

static void ppb_resize_collect(void *ptr)
{
	ppb_resize_drop.pages[ppb_resize_drop.n++] = ptr;
}

/*
 * The registry locked, @pool live.  The lent FIFO follows the ring: the
 * allocating context moves into the new one at its next refill
 * (ppb_lent_resize), so that a larger ring does not orphan more pages
 * than the smaller one did.
 */
int __ppb_pool_set_ring(struct ppb_pool *pool, u32 size)
{
	unsigned int i, old = READ_ONCE(pool->ring.size);
	struct ppb_lent_fifo *lent;
	int err;

	if (size == old)
		return 0;
	lent = ppb_lent_alloc(size);
	ppb_resize_drop.pages = kvcalloc(old, sizeof(struct page *), GFP_KERNEL);
	if (!lent || !ppb_resize_drop.pages) {
		kvfree(lent);
		kvfree(ppb_resize_drop.pages);
		ppb_resize_drop.pages = NULL;
		return -ENOMEM;
	}
	ppb_resize_drop.n = 0;
	err = ptr_ring_resize(&pool->ring, size, GFP_KERNEL, ppb_resize_collect);
	/* Pages that did not fit leave the pool, counted: none is lost. */
	for (i = 0; i < ppb_resize_drop.n; i++) {
		ppb_pinc(pool, PPB_P_RESIZE_DROPPED);
		ppb_release_page(pool, ppb_resize_drop.pages[i]);
	}
	kvfree(ppb_resize_drop.pages);
	ppb_resize_drop.pages = NULL;
	if (err) {
		kvfree(lent);
		return err;
	}
	kvfree(xchg(&pool->lent_next, lent));
	return 0;
}

int ppb_pool_set_ring(struct ppb_pool *pool, unsigned int size)
{
	int err = -EBUSY;

	if (!size || size > PPB_POOL_SIZE_MAX)
		return -ERANGE;
	ppb_registry_lock();
	if (!READ_ONCE(pool->destroyed))
		err = __ppb_pool_set_ring(pool, size);
	ppb_registry_unlock();
	return err;
}
EXPORT_SYMBOL_GPL(ppb_pool_set_ring);
