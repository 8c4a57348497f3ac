// SPDX-License-Identifier: GPL-2.0
/* pp_backport: pages coming back from the driver and from the stack. */

#include <linux/module.h>
#include <linux/mm.h>
#include <linux/bottom_half.h>
#include "pool.h"

/*
 * Into the ring, from any context.  Runs with BHs off, which is an RCU
 * read-side section: once ppb_pool_destroy() has set 'destroyed' and waited
 * for a grace period, nothing enters the ring again and it can be drained
 * for the last time.  The same BH-off section keeps a softirq consumer on
 * this CPU from spinning on the producer lock we hold.
 */
static __always_inline bool ppb_ring_produce(struct ppb_pool *pool, struct page *page)
{
	bool bh = !in_softirq();
	bool ok = false;

	if (bh)
		local_bh_disable();
	if (likely(!READ_ONCE(pool->destroyed)))
		ok = ptr_ring_produce(&pool->ring, page) == 0;
	if (bh)
		local_bh_enable();
	return ok;
}

static noinline void ppb_put_page_slow(struct ppb_pool *pool, struct page *page,
				       unsigned int dma_sync_size, bool allow_direct)
{
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
	/* One load says whether either check below applies to this pool. */
	if (unlikely(READ_ONCE(pool->put_checks))) {
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
	 * it destroys the pool.
	 */
	if (allow_direct && in_softirq()) {
		if (likely(ppb_cache_push_direct(pool, page)))
			return;
		ppb_cinc(pool, PPB_C_CACHE_FULL);
	}
	if (likely(ppb_ring_produce(pool, page))) {
		ppb_pinc(pool, PPB_P_RING);
		return;
	}
	ppb_pinc(pool, READ_ONCE(pool->destroyed) ? PPB_P_DESTROYED : PPB_P_RING_FULL);
release:
	ppb_release_page(pool, page);
}

/*
 * A direct return to a pool that checks nodes or syncs for the device (an
 * XDP_DROP with PPB_FLAG_DMA_SYNC_DEV, say): a local page with room in the
 * cache is synced and cached here, the sync counted by the allocating
 * context itself; anything else goes on to ppb_put_page_slow().  Reached
 * by a tail call, so that ppb_put_page() stays a leaf.
 */
static noinline void ppb_put_direct_checked(struct ppb_pool *pool, struct page *page,
					    unsigned int dma_sync_size)
{
	int nid = READ_ONCE(pool->nid);
	unsigned int len;

	if (unlikely((nid != NUMA_NO_NODE && page_to_nid(page) != nid) ||
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
	int nid = READ_ONCE(pool->nid);

	if (unlikely(page_is_pfmemalloc(page))) {
		ppb_cinc(pool, PPB_C_RECLAIM_PFMEMALLOC);
	} else if (unlikely(nid != NUMA_NO_NODE && page_to_nid(page) != nid)) {
		ppb_cinc(pool, PPB_C_RECLAIM_FAR_NODE);
	} else if (unlikely(READ_ONCE(pool->destroyed))) {
		ppb_cinc(pool, PPB_C_RECLAIM_RELEASED);
	} else {
		if (pool->p.flags & PPB_FLAG_DMA_SYNC_DEV)
			ppb_sync_for_device(pool, page, pool->p.max_len);
		if (refill && ppb_cache_push(pool, page)) {
			ppb_cinc(pool, PPB_C_RECLAIM_CACHED);
			return;
		}
		if (ppb_ring_produce(pool, page)) {
			ppb_cinc(pool, PPB_C_RECLAIM_RING);
			return;
		}
		ppb_cinc(pool, PPB_C_RECLAIM_RELEASED);	/* ring full */
	}
	ppb_release_page(pool, page);
}
