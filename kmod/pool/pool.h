/* SPDX-License-Identifier: GPL-2.0 */
/* pp_backport internals: nothing here is part of the driver API. */
#ifndef _PPB_POOL_H
#define _PPB_POOL_H

#include <linux/ptr_ring.h>
#include <linux/workqueue.h>
#include <linux/percpu.h>
#include <linux/atomic.h>
#include <linux/ktime.h>
#include <ppkit/page_pool.h>
#include <ppkit/compat.h>

/*
 * References the pool holds on each of its pages.  While a page is lent to
 * the stack, one of them is the stack's; the page is free to reuse again
 * when its count falls back to PPB_BIAS - 1.  Large enough that clones and
 * frag references never reach it, small enough to stay far from overflow.
 */
#define PPB_BIAS		USHRT_MAX

struct ppb_pcpu_stats {
	u64 c[PPB_STAT_NR];
};

/* A page lent to the stack, and since when. */
struct ppb_lent {
	struct page *page;
	unsigned long since;	/* jiffies */
};

struct ppb_pool {
	/* Consumer side: touched only by the allocating (NAPI) context. */
	struct {
		u32 count;
		struct page *pages[PPB_CACHE_SIZE];
	} cache ____cacheline_aligned_in_smp;
	u32 lent_head, lent_tail, lent_mask;
	struct ppb_lent *lent;
	u64 hold_cnt;			/* pages that ever entered the pool */

	struct ppb_params p;
	int nid;			/* effective node, updated by ppb_update_nid */
	unsigned int page_bytes;	/* PAGE_SIZE << order */
	bool destroyed;
	struct ppb_pcpu_stats __percpu *stats;

	/* Producer side: any context returns pages through the ring. */
	struct ptr_ring ring ____cacheline_aligned_in_smp;
	atomic64_t release_cnt;		/* pages that left: released or orphaned */

	u32 id;
	char owner[32];
	ktime_t created;
	ktime_t detached;
	unsigned long destroy_jiffies;
	unsigned long next_warn;
	struct delayed_work release_dw;
};

static inline void ppb_stat_add(struct ppb_pool *pool, enum ppb_stat s, u64 n)
{
	this_cpu_add(pool->stats->c[s], n);
}

static inline void ppb_stat_inc(struct ppb_pool *pool, enum ppb_stat s)
{
	this_cpu_inc(pool->stats->c[s]);
}

/*
 * Where a page in the pool's stock came from is kept in page->index (free
 * for pages outside the page cache): the statistic to bump when it is
 * served, so the fast path counts with one per-cpu add.
 */
static inline void ppb_page_set_origin(struct page *page, enum ppb_stat s)
{
	page->index = s;
}

static inline int ppb_pool_nid(const struct ppb_pool *pool)
{
	int nid = READ_ONCE(pool->nid);

	return nid == NUMA_NO_NODE ? numa_mem_id() : nid;
}

/* alloc.c */
bool ppb_cache_push(struct ppb_pool *pool, struct page *page, enum ppb_stat origin);
void ppb_sync_recycled(struct ppb_pool *pool, struct page *page, unsigned int len);
/* recycle.c */
void ppb_recycle_or_release(struct ppb_pool *pool, struct page *page, enum ppb_stat origin);
/* release.c */
void ppb_release_page(struct ppb_pool *pool, struct page *page);
void ppb_drop_pool_refs(struct ppb_pool *pool, struct page *page, unsigned int refs);
u64 ppb_pages_outstanding(struct ppb_pool *pool);
/* stack.c */
unsigned int ppb_reclaim(struct ppb_pool *pool, unsigned int budget, bool force);
unsigned int ppb_lent_count(const struct ppb_pool *pool);
void ppb_lent_flush(struct ppb_pool *pool);
/* main.c */
extern unsigned int ppb_lend_timeout_ms;
extern unsigned int ppb_shutdown_warn_s;
int ppb_registry_add(struct ppb_pool *pool);
void ppb_registry_del(struct ppb_pool *pool);
void ppb_registry_lock(void);
void ppb_registry_unlock(void);
struct ppb_pool *ppb_registry_find(u32 id);
void ppb_pool_free(struct ppb_pool *pool);
void ppb_pool_shutdown(struct ppb_pool *pool);

#endif /* _PPB_POOL_H */
