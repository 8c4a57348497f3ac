// SPDX-License-Identifier: GPL-2.0
/* pp_backport: pool creation and the allocation paths. */

#include <linux/module.h>
#include <linux/slab.h>
#include <linux/gfp.h>
#include <linux/nodemask.h>
#include <linux/netdevice.h>
#include <uapi/linux/ppkit.h>
#include "pool.h"

int ppb_params_check(const struct ppb_params *p, const char **why)
{
	const char *msg = NULL;
	int err = -EINVAL;

	if (p->flags & ~PPB_FLAG_ALL) {
		msg = "unknown pool flags";
	} else if (p->pool_size == 0 || p->pool_size > PPB_POOL_SIZE_MAX) {
		msg = "pool_size must be 1..32768";
		err = -ERANGE;
	} else if (p->order > PPB_MAX_PAGE_ORDER) {
		msg = "order above the page allocator's maximum";
		err = -ERANGE;
	} else if (p->nid != NUMA_NO_NODE &&
		   (p->nid < 0 || p->nid >= MAX_NUMNODES || !node_online(p->nid))) {
		msg = "nid is not an online NUMA node";
	} else if ((p->flags & PPB_FLAG_DMA_SYNC_DEV) && !(p->flags & PPB_FLAG_DMA_MAP)) {
		msg = "DMA sync for device needs DMA map";
	} else if ((p->flags & PPB_FLAG_DMA_MAP) && !p->dev) {
		msg = "DMA map needs a device";
	} else if ((p->flags & PPB_FLAG_DMA_MAP) && p->dma_dir != DMA_FROM_DEVICE &&
		   p->dma_dir != DMA_BIDIRECTIONAL) {
		msg = "DMA direction must be from-device or bidirectional";
	} else if ((p->flags & PPB_FLAG_DMA_SYNC_DEV) && !p->max_len) {
		msg = "DMA sync for device needs max_len";
	} else if ((u64)p->offset + p->max_len > (PAGE_SIZE << p->order)) {
		msg = "offset + max_len exceed the page";
		err = -ERANGE;
	} else {
		err = 0;
	}
	if (why)
		*why = msg;
	return err;
}
EXPORT_SYMBOL_GPL(ppb_params_check);

static u8 ppb_put_checks(int nid, unsigned int flags)
{
	return (nid != NUMA_NO_NODE ? PPB_PC_NODE : 0) |
	       (flags & PPB_FLAG_DMA_SYNC_DEV ? PPB_PC_SYNC : 0) |
	       (flags & PPB_FLAG_PAGE_FRAG ? PPB_PC_FRAG : 0);
}

struct ppb_pool *ppb_pool_create(const struct ppb_params *params)
{
	struct ppb_lent_fifo *lent;
	struct ppb_pool *pool;
	const char *why;
	int err;

	/* The cache's entry count and refill mark are 8 bits of its top word. */
	BUILD_BUG_ON(PPB_CACHE_SIZE > 255);
	/* Drivers find the cache at the start of the pool (ppb_pool_cache). */
	BUILD_BUG_ON(offsetof(struct ppb_pool, cache) != 0);

	err = ppb_params_check(params, &why);
	if (err) {
		pr_err("ppkit: %s: pool rejected: %s\n",
		       params->owner ?: "?", why);
		return ERR_PTR(err);
	}

	pool = kzalloc_node(sizeof(*pool), GFP_KERNEL,
			    params->nid == NUMA_NO_NODE ? NUMA_NO_NODE : params->nid);
	if (!pool)
		return ERR_PTR(-ENOMEM);
	pool->p = *params;
	pool->p.owner = NULL;
	strscpy(pool->owner, params->owner ?: "unknown", sizeof(pool->owner));
	pool->nid = params->nid;
	pool->cache.put_checks = ppb_put_checks(params->nid, params->flags);
	seqcount_init(&pool->seq);
	INIT_DELAYED_WORK(&pool->release_dw, ppb_release_retry);
	pool->page_bytes = PAGE_SIZE << params->order;
	pool->refill_batch = PPB_REFILL_BATCH;
	pool->p.netdev = NULL;
	pool->netdev = params->netdev;
	if (params->netdev)
		pool->ifindex = ppb_dev_ifindex(params->netdev);
	if (params->napi)
		pool->napi_id = READ_ONCE(params->napi->napi_id);

	err = -ENOMEM;
	pool->stats = alloc_percpu(struct ppb_pcpu_stats);
	if (!pool->stats)
		goto err_free;
	if (ptr_ring_init(&pool->ring, params->pool_size, GFP_KERNEL))
		goto err_stats;
	lent = ppb_lent_alloc(params->pool_size);
	if (!lent)
		goto err_ring;
	RCU_INIT_POINTER(pool->lent, lent);
	atomic64_set(&pool->release_cnt, 0);
	pool->created = ktime_get_real();
	if (pool->p.dev)
		get_device(pool->p.dev);

	err = ppb_registry_add(pool);
	if (err)
		goto err_dev;
	ppb_nl_notify(pool, PPKIT_CMD_POOL_ADD_NTF);
	return pool;

err_dev:
	if (pool->p.dev)
		put_device(pool->p.dev);
	kvfree(lent);
err_ring:
	ptr_ring_cleanup(&pool->ring, NULL);
err_stats:
	free_percpu(pool->stats);
err_free:
	kfree(pool);
	return ERR_PTR(err);
}
EXPORT_SYMBOL_GPL(ppb_pool_create);

u32 ppb_pool_id(const struct ppb_pool *pool)
{
	return pool->id;
}
EXPORT_SYMBOL_GPL(ppb_pool_id);

/*
 * A fresh page enters the pool: mapped once (ppb_page_map) for all of its
 * lives in the pool, biased so that the stack's references can be told
 * apart, and marked as the pool's.  A fragment pool's page in stock has
 * one holder to come: whoever takes it whole, ppb_alloc_pages() included.
 */
static bool ppb_page_enter(struct ppb_pool *pool, struct page *page)
{
	if (!ppb_page_map(pool, page))
		return false;
	page_ref_add(page, PPB_BIAS - 1);
	ppb_page_set_owner(pool, page);
	if (pool->p.flags & PPB_FLAG_PAGE_FRAG)
		atomic_long_set(ppb_frag_cnt(page), 1);
	pool->cache.fill_new++;		/* into hold_cnt when the refill is published */
	return true;
}

/* Up to a refill batch from the ring into the cache; returns how many. */
static unsigned int ppb_ring_take(struct ppb_pool *pool)
{
	struct ptr_ring *r = &pool->ring;
	u32 batch = READ_ONCE(pool->refill_batch);
	int nid = ppb_pool_nid(pool);
	unsigned int taken = 0;
	struct page *page;

	if (__ptr_ring_empty(r)) {
		ppb_cinc(pool, PPB_C_EMPTY);
		return 0;
	}
	while (pool->cache.fill < batch) {
		page = __ptr_ring_consume(r);
		if (!page)
			break;
		taken++;
		/*
		 * The pool moved (ppb_update_nid) since this page was recycled:
		 * the consumer now runs on another node, where it would be slow.
		 */
		if (unlikely(page_to_nid(page) != nid)) {
			ppb_cinc(pool, PPB_C_WAIVE);
			ppb_release_page(pool, page);
			continue;
		}
		ppb_cache_stage(pool, page);
	}
	return taken;
}

/*
 * The one consumer of the ring takes no lock, unless pool-set is swapping
 * the ring's queue (ppb_ring_resize()).  BHs off from the flag's read to
 * the last use of the queue: an RCU read-side section, which the resize
 * waits out before it frees the old queue.
 */
static void ppb_refill_from_ring(struct ppb_pool *pool)
{
	spinlock_t *lock = &pool->ring.consumer_lock;
	bool bh = !in_softirq();
	unsigned int taken;

	if (bh)
		local_bh_disable();
	/* pairs with the release in ppb_ring_resize(): the new queue */
	if (likely(!smp_load_acquire(&pool->ring_resizing))) {
		taken = ppb_ring_take(pool);
	} else {
		spin_lock(lock);
		taken = ppb_ring_take(pool);
		spin_unlock(lock);
	}
	if (bh)
		local_bh_enable();
	ppb_cadd(pool, PPB_C_RING_CONSUMED, taken);
}

static void ppb_refill_from_allocator(struct ppb_pool *pool, gfp_t gfp)
{
	int nid = ppb_pool_nid(pool);
	struct page *pages[PPB_REFILL_BATCH];
	unsigned long n, i, batch = READ_ONCE(pool->refill_batch);

	if (pool->p.order) {
		struct page *page = alloc_pages_node(nid, gfp | __GFP_COMP, pool->p.order);

		if (!page)
			return;
		if (!ppb_page_enter(pool, page)) {
			put_page(page);
			return;
		}
		ppb_cache_stage(pool, page);
		return;
	}

	memset(pages, 0, sizeof(pages));
	batch = min_t(unsigned long, batch, ARRAY_SIZE(pages));
	n = ppb_alloc_pages_bulk_node(gfp, nid, batch, pages);
	for (i = 0; i < n; i++) {
		if (ppb_page_enter(pool, pages[i]))
			ppb_cache_stage(pool, pages[i]);
		else
			put_page(pages[i]);
	}
}

/*
 * The push into a cache with room that ppb_cache_try_push() leaves: it
 * settles the refill's mark, or the direct-return count in the top word
 * is about to reach bit 63.  Then the sync of a pool that syncs.
 */
noinline void ppb_cache_push_slow(struct ppb_pool *pool, struct page *page,
				  unsigned int dma_sync_size, bool sync)
{
	u64 top = pool->cache.top;
	u32 n = ppb_top_count(top);

	if (n < ((top >> 8) & 0xff))
		top = ppb_top(top, n, n);
	pool->cache.pages[n] = page;
	top += PPB_TOP_PUSH + 1;
	pool->cache.top = top;
	if (top >> 63) {
		ppb_books_begin(pool);
		ppb_cache_fold_pushes(pool);
		ppb_books_end(pool);
	}
	if (sync)
		ppb_sync_direct(pool, page, dma_sync_size);
}

/* The last refill is over: add what it served to the running totals. */
static void ppb_cache_fold(struct ppb_pool *pool)
{
	struct ppb_cache *c = &pool->cache;
	u32 stack, other;

	ppb_seg_served(c->top, c->seg_len, c->seg_stack, &stack, &other);
	ppb_cadd(pool, PPB_C_SERVED_STACK, stack);
	ppb_cadd(pool, c->seg_fresh ? PPB_C_SERVED_ALLOC : PPB_C_SERVED_RING, other);
	c->top = ppb_top(c->top, ppb_cache_count(c), 0);
	ppb_cache_fold_pushes(pool);
	c->seg_len = 0;
	c->seg_stack = 0;
	c->seg_fresh = 0;
}

/* Release everything cached; @waive: because the pool moved to another node. */
void ppb_cache_flush(struct ppb_pool *pool, bool waive)
{
	struct ppb_cache *c = &pool->cache;
	u32 n = ppb_cache_count(c);

	ppb_books_begin(pool);
	ppb_cadd(pool, PPB_C_FLUSH_DIRECT, n - min(ppb_top_seg(c->top), n));
	ppb_cache_fold(pool);
	if (waive)
		ppb_cadd(pool, PPB_C_WAIVE, n);
	c->top = ppb_top(c->top, 0, 0);
	ppb_books_end(pool);
	while (n)
		ppb_release_page(pool, c->pages[--n]);
}

/*
 * The refill of the (empty) cache is complete: @stack of its pages came
 * back from the stack, the rest from the ring or, @fresh, the allocator.
 * One section of the seqcount closes the last refill's books, counts @ev
 * (a refill or a slow allocation, if there are pages) and publishes the
 * pages, the first of them already served.
 */
static struct page *ppb_refilled(struct ppb_pool *pool, u32 stack, bool fresh,
				 enum ppb_cctr ev)
{
	struct ppb_cache *c = &pool->cache;
	u32 n = c->fill;

	ppb_books_begin(pool);
	ppb_cache_fold(pool);
	pool->hold_cnt += c->fill_new;
	ppb_cadd(pool, PPB_C_ALLOCATED, c->fill_new);
	if (n) {
		ppb_cinc(pool, ev);
		c->seg_len = n;
		c->seg_stack = stack;
		c->seg_fresh = fresh;
		c->top = ppb_top(c->top, n - 1, n - 1);
	}
	ppb_books_end(pool);
	c->fill = 0;
	c->fill_new = 0;
	return n ? c->pages[n - 1] : NULL;
}

struct page *ppb_alloc_pages_slow(struct ppb_pool *pool, gfp_t gfp)
{
	struct ppb_cache *c = &pool->cache;
	u32 stack;

	if (unlikely(READ_ONCE(pool->lent_next)))
		ppb_lent_resize(pool);
	/* Recycled stock first: pages the stack has let go, then the ring. */
	if (pool->lent_head != pool->lent_tail)
		ppb_reclaim(pool, READ_ONCE(pool->refill_batch), false, true);
	stack = c->fill;
	if (stack < READ_ONCE(pool->refill_batch))
		ppb_refill_from_ring(pool);
	if (c->fill)
		return ppb_refilled(pool, stack, false, PPB_C_REFILL);

	ppb_refill_from_allocator(pool, gfp);
	return ppb_refilled(pool, 0, true,
			    pool->p.order ? PPB_C_SLOW_HIGH_ORDER : PPB_C_SLOW);
}
EXPORT_SYMBOL_GPL(ppb_alloc_pages_slow);

/*
 * The page being cut up has served its last fragment: drop the carving
 * share.  Its fragments may all be back already, and the page with them.
 */
void ppb_frag_page_done(struct ppb_pool *pool)
{
	struct page *page = pool->frag_page;

	if (!page)
		return;
	pool->frag_page = NULL;
	if (!atomic_long_sub_return(PPB_FRAG_CARVING - pool->frag_users, ppb_frag_cnt(page)))
		ppb_frag_page_back(pool, page, true);
}

struct page *ppb_alloc_frag(struct ppb_pool *pool, unsigned int *offset,
			    unsigned int size, gfp_t gfp)
{
	struct page *page = pool->frag_page;

	size = ALIGN(size, dma_get_cache_alignment());
	if (WARN_ON_ONCE(!(pool->p.flags & PPB_FLAG_PAGE_FRAG) || !size ||
			 size > pool->page_bytes))
		return NULL;
	if (page && pool->frag_offset + size > pool->page_bytes) {
		ppb_frag_page_done(pool);
		page = NULL;
	}
	if (!page) {
		page = ppb_alloc_pages(pool, gfp);
		if (unlikely(!page))
			return NULL;
		atomic_long_set(ppb_frag_cnt(page), PPB_FRAG_CARVING);
		pool->frag_page = page;
		pool->frag_offset = 0;
		pool->frag_users = 0;
	}
	*offset = pool->frag_offset;
	pool->frag_offset += size;
	pool->frag_users++;
	ppb_cinc(pool, PPB_C_FRAGS);
	return page;
}
EXPORT_SYMBOL_GPL(ppb_alloc_frag);

/*
 * The NAPI instance that allocates from @pool now (its id is what the
 * ppkit family reports), or NULL: for a pool that outlives the driver's
 * NAPI instances, e.g. one created with its RX ring before the ring's
 * NAPI is added.  Only the id is kept, so the pool never reads a NAPI
 * instance that is gone.
 */
void ppb_pool_set_napi(struct ppb_pool *pool, struct napi_struct *napi)
{
	WRITE_ONCE(pool->napi_id, napi ? READ_ONCE(napi->napi_id) : 0);
}
EXPORT_SYMBOL_GPL(ppb_pool_set_napi);

void ppb_update_nid(struct ppb_pool *pool, int new_nid)
{
	if (READ_ONCE(pool->nid) == new_nid)
		return;
	WRITE_ONCE(pool->nid, new_nid);
	WRITE_ONCE(pool->cache.put_checks, ppb_put_checks(new_nid, pool->p.flags) |
		   (pool->cache.put_checks & PPB_PC_DESTROYED));
	/*
	 * Cached pages are local to the old node: serving them would be slow
	 * now.  Ring pages are checked as refills meet them.
	 */
	ppb_cache_flush(pool, true);
}
EXPORT_SYMBOL_GPL(ppb_update_nid);
