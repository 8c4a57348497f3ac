// SPDX-License-Identifier: GPL-2.0
/* pp_backport: pages coming back from the driver and from the stack. */

#include <linux/module.h>
#include <linux/mm.h>
#include <linux/bottom_half.h>
#include "pool.h"

/*
 * Into the ring, from any context.  Runs with BHs off, which is an RCU
 * read-side section: once ppb_pool_destroy() has set 'destroyed' and waited
 * for a grace period, nothing enters the ring again, and the pool can be
 * drained and freed.  The same section keeps a softirq consumer on this CPU
 * from spinning on the producer lock we hold.  pp_race's
 * race_put_during_destroy attacks this.
 */
static bool ppb_ring_produce(struct ppb_pool *pool, struct page *page)
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

/*
 * A page that may not be handed out again: counted as @ctr, released.
 * Unless it is not the pool's (another pool's, one the driver never got
 * from a pool): then the pool's references are not on it to drop.
 */
static noinline void ppb_put_release(struct ppb_pool *pool, struct page *page,
				     enum ppb_pctr ctr)
{
	if (unlikely(!ppb_page_owned(pool, page))) {
		ppb_pinc(pool, PPB_P_FOREIGN_PUT);
		ppb_foreign_warn(pool, page, "put");
		return;
	}
	ppb_pinc(pool, ctr);
	ppb_release_page(pool, page);
}

/*
 * A driver's return into the ring, counted under the producer lock; false
 * if the ring is full.  The caller holds the lock with BHs off and has seen
 * the pool not destroyed since it turned them off (the same RCU section as
 * in ppb_ring_produce()).
 */
static __always_inline bool ppb_ring_put(struct ppb_pool *pool, struct page *page)
{
	if (unlikely(__ptr_ring_produce(&pool->ring, page)))
		return false;
	pool->ring_produced++;
	return true;
}

/* From a softirq that read put_checks clear of PPB_PC_DESTROYED. */
static noinline notrace void ppb_put_ring_softirq(struct ppb_pool *pool, struct page *page)
{
	spinlock_t *lock = &pool->ring.producer_lock;

	spin_lock(lock);
	if (likely(ppb_ring_put(pool, page))) {
		spin_unlock(lock);
		return;
	}
	spin_unlock(lock);
	ppb_put_release(pool, page, PPB_P_RING_FULL);
}

/* From any context: into the ring, or released if it is full or the pool destroyed. */
static noinline void ppb_put_ring(struct ppb_pool *pool, struct page *page)
{
	spinlock_t *lock = &pool->ring.producer_lock;
	enum ppb_pctr why = PPB_P_DESTROYED;

	spin_lock_bh(lock);
	if (likely(!READ_ONCE(pool->destroyed))) {
		if (likely(ppb_ring_put(pool, page))) {
			spin_unlock_bh(lock);
			return;
		}
		why = PPB_P_RING_FULL;
	}
	spin_unlock_bh(lock);
	ppb_put_release(pool, page, why);
}

/*
 * Synced for the device, into the ring: out of line, so that the paths
 * into the cache save no registers.  @softirq: from a softirq that read
 * put_checks clear of PPB_PC_DESTROYED.  Elsewhere the sync waits until
 * the pool is seen live with BHs off, the section destroy waits out: a
 * page that comes back once the pool is destroyed is released unsynced,
 * since the device's driver may be gone.
 */
static noinline void ppb_put_ring_synced(struct ppb_pool *pool, struct page *page,
					 unsigned int dma_sync_size, bool softirq)
{
	bool live;

	if (softirq) {
		ppb_sync_for_device(pool, page, dma_sync_size);
		ppb_put_ring_softirq(pool, page);
		return;
	}
	local_bh_disable();
	live = !READ_ONCE(pool->destroyed);
	if (live) {
		ppb_sync_for_device(pool, page, dma_sync_size);
		ppb_put_ring(pool, page);
	}
	local_bh_enable();
	if (!live)
		ppb_put_release(pool, page, PPB_P_DESTROYED);
}

/*
 * Each return reads the page's refcount and pfmemalloc bit once, then
 * what @checks (the pool's put_checks but PPB_PC_FRAG) asks: the page's
 * node against the pool's, the sync for the device, a destroyed pool.
 * Inlined with @checks a constant, each kind of pool gets its own path;
 * with nothing to check, a direct return makes no call.
 *
 * As with the kernel's page_pool, the driver stops the allocating context
 * (NAPI) before it destroys the pool; a return that sees it destroyed
 * (the flag is read in the same RCU section that destroy waits for) is
 * released unsynced, never put into a cache the release work flushes.
 */
static __always_inline void ppb_put_whole(struct ppb_pool *pool, struct page *page,
					  unsigned int dma_sync_size, bool allow_direct,
					  u8 checks)
{
	/*
	 * Someone else still holds it: it cannot be handed out again.  Nor
	 * can a page of someone else's (ppb_put_release() leaves it alone).
	 */
	if (unlikely(page_ref_count(page) != PPB_BIAS || !ppb_page_owned(pool, page))) {
		ppb_put_release(pool, page, PPB_P_REFCNT);
		return;
	}
	/* Emergency-reserve pages go back so that the reserves refill. */
	if (unlikely(page_is_pfmemalloc(page))) {
		ppb_put_release(pool, page, PPB_P_PFMEMALLOC);
		return;
	}
	if (checks & PPB_PC_NODE) {
		int nid = READ_ONCE(pool->nid);

		if (unlikely(nid != NUMA_NO_NODE && page_to_nid(page) != nid)) {
			ppb_put_release(pool, page, PPB_P_FAR_NODE);
			return;
		}
	}
	/* In a softirq, @checks was read with BHs off: an RCU section. */
	if (likely(in_softirq())) {
		if (likely(allow_direct && !(checks & PPB_PC_DESTROYED))) {
			if (likely(ppb_top_count(pool->cache.top) < PPB_CACHE_SIZE)) {
				/* Only this context pops: the sync may follow. */
				if (unlikely(!ppb_cache_try_push(&pool->cache, page)))
					ppb_cache_push_slow(pool, page, dma_sync_size,
							    checks & PPB_PC_SYNC);
				else if (checks & PPB_PC_SYNC)
					ppb_sync_direct(pool, page, dma_sync_size);
				return;
			}
			ppb_cinc(pool, PPB_C_CACHE_FULL);
		}
		if (checks & PPB_PC_DESTROYED)
			ppb_put_release(pool, page, PPB_P_DESTROYED);
		else if (checks & PPB_PC_SYNC)
			ppb_put_ring_synced(pool, page, dma_sync_size, true);
		else
			ppb_put_ring_softirq(pool, page);
		return;
	}
	if (checks & PPB_PC_DESTROYED)
		ppb_put_release(pool, page, PPB_P_DESTROYED);
	else if (checks & PPB_PC_SYNC)
		ppb_put_ring_synced(pool, page, dma_sync_size, false);
	else
		ppb_put_ring(pool, page);
}

/*
 * A fragment page whose last holder let go (the count is zero and the
 * caller holds the page whole): back in stock with one holder to come, as
 * if the driver returned it whole.
 */
void ppb_frag_page_back(struct ppb_pool *pool, struct page *page, bool allow_direct)
{
	atomic_long_set(ppb_frag_cnt(page), 1);
	ppb_put_whole(pool, page, -1, allow_direct,
		      READ_ONCE(pool->cache.put_checks) & ~PPB_PC_FRAG);
}

/*
 * A return to a pool with more to check: a fragment (the page goes back
 * with the last one out), a destroyed pool.
 */
static noinline void ppb_put_page_checks(struct ppb_pool *pool, struct page *page,
					 unsigned int dma_sync_size, bool allow_direct,
					 u8 checks)
{
	if (checks & PPB_PC_FRAG) {
		if (unlikely(!ppb_page_owned(pool, page))) {
			ppb_put_release(pool, page, PPB_P_REFCNT);
			return;
		}
		if (atomic_long_dec_return(ppb_frag_cnt(page)))
			return;
		atomic_long_set(ppb_frag_cnt(page), 1);
		dma_sync_size = -1;
	}
	ppb_put_whole(pool, page, dma_sync_size, allow_direct, checks & ~PPB_PC_FRAG);
}

/*
 * A return to a pool that syncs for the device and has nothing else to
 * check but, maybe, the node, as ppb_put_page() saw put_checks.  Read
 * again: a driver may call this directly, after destroy too.
 */
void ppb_put_page_sync(struct ppb_pool *pool, struct page *page,
		       unsigned int dma_sync_size, bool allow_direct)
{
	u8 checks = READ_ONCE(pool->cache.put_checks);

	if (unlikely((checks & ~PPB_PC_NODE) != PPB_PC_SYNC))
		ppb_put_page_checks(pool, page, dma_sync_size, allow_direct, checks);
	else if (checks & PPB_PC_NODE)
		ppb_put_whole(pool, page, dma_sync_size, allow_direct,
			      PPB_PC_NODE | PPB_PC_SYNC);
	else
		ppb_put_whole(pool, page, dma_sync_size, allow_direct, PPB_PC_SYNC);
}
EXPORT_SYMBOL_GPL(ppb_put_page_sync);

/* What ppb_put_page() does not do inline, put_checks read again. */
void ppb_put_page_slow(struct ppb_pool *pool, struct page *page,
		       unsigned int dma_sync_size, bool allow_direct)
{
	u8 checks = READ_ONCE(pool->cache.put_checks);

	if (likely(!checks))
		ppb_put_whole(pool, page, dma_sync_size, allow_direct, 0);
	else if ((checks & ~PPB_PC_NODE) == PPB_PC_SYNC)
		ppb_put_page_sync(pool, page, dma_sync_size, allow_direct);
	else if (checks == PPB_PC_NODE)
		ppb_put_whole(pool, page, dma_sync_size, allow_direct, PPB_PC_NODE);
	else
		ppb_put_page_checks(pool, page, dma_sync_size, allow_direct, checks);
}
EXPORT_SYMBOL_GPL(ppb_put_page_slow);

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
		if (pool->p.flags & PPB_FLAG_DMA_SYNC_DEV) {
			__ppb_sync_for_device(pool, page, pool->p.max_len);
			ppb_cinc(pool, PPB_C_RECLAIM_SYNCED);
		}
		if (refill && ppb_cache_stage(pool, page)) {
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
 * The allocating context consumes from the ring without its consumer lock
 * (ppb_refill_from_ring()) unless @ring_resizing is set.  Set it, wait
 * until every refill that may have read it clear has left its BH-off
 * section (synchronize_rcu() waits for those), swap the queue under both
 * locks, and clear it with release semantics: a refill that reads it clear
 * from then on sees the new queue.
 */
static int ppb_ring_resize(struct ppb_pool *pool, u32 size)
{
	int err;

	WRITE_ONCE(pool->ring_resizing, true);
	synchronize_rcu();
	err = ptr_ring_resize(&pool->ring, size, GFP_KERNEL, ppb_resize_collect);
	/* pairs with the acquire in ppb_refill_from_ring() */
	smp_store_release(&pool->ring_resizing, false);
	return err;
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
	err = ppb_ring_resize(pool, size);
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
