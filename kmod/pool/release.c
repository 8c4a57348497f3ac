// SPDX-License-Identifier: GPL-2.0
/* pp_backport: pages leaving the pool, and pools leaving the world. */

#include <linux/module.h>
#include <linux/mm.h>
#include <linux/rcupdate.h>
#include <uapi/linux/ppkit.h>
#include "pool.h"

/*
 * @page leaves the pool, which holds @refs references on it.  The release
 * counter is the last thing touched: once it matches hold_cnt the pool may
 * be freed under us.
 */
void ppb_drop_pool_refs(struct ppb_pool *pool, struct page *page, unsigned int refs)
{
	ppb_page_unmap(pool, page);
	page->index = 0;
	set_page_private(page, 0);
	ppb_page_clear_owner(page);
	atomic64_inc(&pool->release_cnt);
	/* Never let the count reach zero in page_ref_sub: put_page() frees it right. */
	page_ref_sub(page, refs - 1);
	put_page(page);
}

void ppb_release_page(struct ppb_pool *pool, struct page *page)
{
	ppb_pinc(pool, PPB_P_RELEASED);
	ppb_drop_pool_refs(pool, page, PPB_BIAS);
}

/* Pages still outside the pool's stock: with the driver or the stack. */
u64 ppb_pages_outstanding(struct ppb_pool *pool)
{
	return pool->hold_cnt - atomic64_read(&pool->release_cnt);
}

static void ppb_flush_stock(struct ppb_pool *pool)
{
	struct page *page;

	ppb_cache_flush(pool, false);
	while ((page = ptr_ring_consume_bh(&pool->ring))) {
		ppb_cinc(pool, PPB_C_RING_CONSUMED);
		ppb_release_page(pool, page);
	}
}

/*
 * Returns true when the pool is gone.  With the registry lock held, so that
 * neither a reader nor the module's exit meets a pool being freed.
 */
static bool ppb_pool_try_free(struct ppb_pool *pool, bool force)
{
	u64 left;

	ppb_reclaim(pool, UINT_MAX, force, false);
	ppb_flush_stock(pool);
	left = ppb_pages_outstanding(pool);
	if (left && !force)
		return false;
	if (left)
		pr_err("ppkit: pool %u (%s): %llu pages leaked at unload: the driver never returned them\n",
		       pool->id, pool->owner, left);
	ppb_nl_notify(pool, PPKIT_CMD_POOL_DEL_NTF);
	ppb_registry_del(pool);
	ppb_pool_free(pool);
	return true;
}

static void ppb_release_later(struct ppb_pool *pool)
{
	queue_delayed_work(ppb_wq, &pool->release_dw,
			   msecs_to_jiffies(READ_ONCE(ppb_release_retry_ms)));
}

void ppb_release_retry(struct work_struct *work)
{
	struct ppb_pool *pool = container_of(to_delayed_work(work), struct ppb_pool,
					     release_dw);

	ppb_registry_lock();
	/* Unloading: the module's exit frees the pool (ppb_exit). */
	if (ppb_registry_unloading() || ppb_pool_try_free(pool, false))
		goto out;
	if (time_after_eq(jiffies, pool->next_warn)) {
		pr_warn("ppkit: pool %u (%s): destroyed %lld s ago, still waiting for %llu pages in flight\n",
			pool->id, pool->owner,
			ktime_get_boottime_seconds() - pool->destroy_s,
			ppb_pages_outstanding(pool));
		pool->next_warn = jiffies + READ_ONCE(ppb_shutdown_warn_s) * HZ;
	}
	ppb_release_later(pool);
out:
	ppb_registry_unlock();
}

/* Unmap the pages lent to the stack: the device may be gone (see below). */
static void ppb_unmap_lent(struct ppb_pool *pool)
{
	struct ppb_lent_fifo *f = ppb_lent_fifo(pool);
	u32 i;

	if (!(pool->p.flags & PPB_FLAG_DMA_MAP))
		return;
	for (i = pool->lent_head; i != pool->lent_tail; i++)
		ppb_page_unmap(pool, f->e[i & f->mask].page);
}

/*
 * The driver is done with @pool.  Pages still with the driver or the stack
 * keep it alive; it frees itself when the last one is back or orphaned.
 * Process context: waits for an RCU grace period so that no put can still
 * be on its way into the ring or the cache.  Pages lent to the stack are
 * unmapped now rather than when the stack lets go: the device may be
 * unbound and its IOMMU domain gone by then.
 */
void ppb_pool_destroy(struct ppb_pool *pool)
{
	if (IS_ERR_OR_NULL(pool))
		return;
	might_sleep();
	/* The allocating context is stopped: the page it was cutting up is done. */
	ppb_frag_page_done(pool);
	WRITE_ONCE(pool->destroyed, true);
	WRITE_ONCE(pool->cache.put_checks, pool->cache.put_checks | PPB_PC_DESTROYED);
	synchronize_rcu();
	pool->detached = ktime_get_real();
	pool->destroy_s = ktime_get_boottime_seconds();
	pool->next_warn = jiffies + READ_ONCE(ppb_shutdown_warn_s) * HZ;
	ppb_nl_notify(pool, PPKIT_CMD_POOL_CHANGE_NTF);
	ppb_registry_lock();
	ppb_unmap_lent(pool);
	if (!ppb_pool_try_free(pool, false))
		ppb_release_later(pool);
	ppb_registry_unlock();
}
EXPORT_SYMBOL_GPL(ppb_pool_destroy);

/*
 * Module unload, the registry locked and the release work stopped (ppb_exit):
 * drivers are gone; whatever the stack still holds is orphaned.
 */
void ppb_pool_shutdown(struct ppb_pool *pool)
{
	unsigned int held;

	if (!pool->destroyed) {
		pr_err("ppkit: pool %u (%s) was never destroyed by its driver\n",
		       pool->id, pool->owner);
		ppb_frag_page_done(pool);
		WRITE_ONCE(pool->destroyed, true);
		ppb_unmap_lent(pool);
	}
	held = ppb_lent_held(pool);
	if (held)
		pr_info("ppkit: pool %u (%s): unload: %u pages still held by the stack are orphaned\n",
			pool->id, pool->owner, held);
	ppb_pool_try_free(pool, true);
}
