// SPDX-License-Identifier: GPL-2.0
/* pp_backport: pages leaving the pool, and pools leaving the world. */

#include <linux/module.h>
#include <linux/mm.h>
#include <linux/rcupdate.h>
#include <uapi/linux/ppkit.h>
#include "pool.h"

/*
 * @page leaves the pool, which holds @refs references on it.  Unmapped
 * without a CPU sync: whatever the stack reads was synced when it was
 * handed over, and a bounce copy now could overwrite what it has changed.
 * The release counter is the last thing touched: once it matches hold_cnt
 * the pool may be freed under us.
 */
void ppb_drop_pool_refs(struct ppb_pool *pool, struct page *page, unsigned int refs)
{
	if (pool->p.flags & PPB_FLAG_DMA_MAP)
		dma_unmap_page_attrs(pool->p.dev, ppb_get_dma_addr(page), pool->page_bytes,
				     pool->p.dma_dir,
				     DMA_ATTR_SKIP_CPU_SYNC | DMA_ATTR_WEAK_ORDERING);
	set_page_private(page, 0);
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

/* Returns true when the pool is gone. */
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

static void ppb_release_retry(struct work_struct *work)
{
	struct ppb_pool *pool = container_of(to_delayed_work(work), struct ppb_pool,
					     release_dw);

	if (ppb_pool_try_free(pool, false))
		return;
	if (time_after_eq(jiffies, pool->next_warn)) {
		pr_warn("ppkit: pool %u (%s): destroyed %u s ago, still waiting for %llu pages in flight\n",
			pool->id, pool->owner,
			jiffies_to_msecs(jiffies - pool->destroy_jiffies) / 1000,
			ppb_pages_outstanding(pool));
		pool->next_warn = jiffies + READ_ONCE(ppb_shutdown_warn_s) * HZ;
	}
	schedule_delayed_work(&pool->release_dw, HZ);
}

/*
 * The driver is done with @pool.  Pages still with the driver or the stack
 * keep it alive; it frees itself when the last one is back or orphaned.
 * Process context: waits for an RCU grace period so that no put can still
 * be on its way into the ring.
 */
void ppb_pool_destroy(struct ppb_pool *pool)
{
	if (IS_ERR_OR_NULL(pool))
		return;
	might_sleep();
	WRITE_ONCE(pool->destroyed, true);
	synchronize_rcu();
	pool->detached = ktime_get_real();
	pool->destroy_jiffies = jiffies;
	pool->next_warn = jiffies + READ_ONCE(ppb_shutdown_warn_s) * HZ;
	INIT_DELAYED_WORK(&pool->release_dw, ppb_release_retry);
	ppb_nl_notify(pool, PPKIT_CMD_POOL_CHANGE_NTF);
	if (!ppb_pool_try_free(pool, false))
		schedule_delayed_work(&pool->release_dw, HZ);
}
EXPORT_SYMBOL_GPL(ppb_pool_destroy);

/* Module unload: drivers are gone; whatever the stack still holds is orphaned. */
void ppb_pool_shutdown(struct ppb_pool *pool)
{
	if (pool->destroyed)
		cancel_delayed_work_sync(&pool->release_dw);
	else
		pr_err("ppkit: pool %u (%s) was never destroyed by its driver\n",
		       pool->id, pool->owner);
	WRITE_ONCE(pool->destroyed, true);
	if (ppb_lent_count(pool))
		pr_info("ppkit: pool %u (%s): unload: %u pages still held by the stack are orphaned\n",
			pool->id, pool->owner, ppb_lent_count(pool));
	ppb_pool_try_free(pool, true);
}
