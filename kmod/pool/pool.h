/* SPDX-License-Identifier: GPL-2.0 */
/* pp_backport internals: nothing here is part of the driver API. */
#ifndef _PPB_POOL_H
#define _PPB_POOL_H

#include <linux/ptr_ring.h>
#include <linux/workqueue.h>
#include <linux/percpu.h>
#include <linux/atomic.h>
#include <linux/ktime.h>
#include <linux/seqlock.h>
#include <linux/bottom_half.h>
#include <linux/timekeeping.h>
#include <linux/rcupdate.h>
#include <ppkit/page_pool.h>
#include <ppkit/compat.h>

/*
 * page->index of a pool page lent to the stack (unused otherwise while the
 * pool holds the page): a second lend of the same page is refused, and one
 * unmapped at destroy is not unmapped again when it leaves.
 */
#define PPB_PAGE_LENT		0x70706c65UL
#define PPB_PAGE_UNMAPPED	0x7070756eUL

/*
 * Fragment pages (PPB_FLAG_PAGE_FRAG) count their holders in the second
 * word of page->lru, unused while a pool holds the page: one for each
 * fragment with the driver, one for the lent FIFO while the page waits
 * there for the stack (which holds references of its own, one a lent
 * fragment, above the pool's PPB_BIAS), and PPB_FRAG_CARVING while
 * ppb_alloc_frag() cuts it up.  Whoever takes the count to zero holds the
 * page whole.
 */
#define PPB_FRAG_CARVING	(LONG_MAX / 2)

static inline atomic_long_t *ppb_frag_cnt(struct page *page)
{
	return (atomic_long_t *)&page->lru.prev;
}

/*
 * Counters as stored, not as published: the published ones are the uapi's
 * (PPB_STAT()), and ppb_get_stats() is the one place that derives them from
 * these.  Most are not one of them one to one: a page served is counted by
 * where it lies in the cache, not by its own counter.  Those of the
 * allocating (NAPI) context are plain fields of the pool, written by that
 * context alone; those of paths any CPU may take are per-cpu.
 */
enum ppb_cctr {
	/* pages of finished refills served, by origin (see struct ppb_cache) */
	PPB_C_SERVED_STACK,
	PPB_C_SERVED_RING,
	PPB_C_SERVED_ALLOC,
	PPB_C_FLUSH_DIRECT,		/* directly recycled pages flushed unserved */
	PPB_C_SLOW,
	PPB_C_SLOW_HIGH_ORDER,
	PPB_C_EMPTY,
	PPB_C_REFILL,
	PPB_C_WAIVE,
	PPB_C_DIRECT_CACHED,		/* driver returns into the cache, folded */
	PPB_C_CACHE_FULL,
	PPB_C_ALLOCATED,
	PPB_C_RING_CONSUMED,
	PPB_C_LENT,
	PPB_C_RECLAIM_CACHED,		/* reclaimed from the stack into a refill */
	PPB_C_RECLAIM_RING,		/* ... into the ring */
	PPB_C_RECLAIM_PFMEMALLOC,	/* ... and released */
	PPB_C_RECLAIM_FAR_NODE,
	PPB_C_RECLAIM_RELEASED,		/* ... released: pool destroyed or ring full */
	PPB_C_ORPHANED,
	PPB_C_SYNC_BYTES,		/* of direct returns (PPB_P_SYNC_BYTES: the rest) */
	PPB_C_LENT_TWICE,		/* second lends refused */
	PPB_C_FRAGS,			/* fragments served */
	PPB_C_FRAGS_LENT,
	PPB_C_FRAG_UNLENT,		/* lent pages back to the driver's fragments */
	PPB_C_RECLAIM_SYNCED,		/* reclaimed pages synced, max_len each */
	PPB_C_FOREIGN_LENT,		/* lends of a page not the pool's: refused */
	PPB_C_NR
};

/* Each driver return bumps ring_produced or exactly one of the first five. */
enum ppb_pctr {
	PPB_P_RING_FULL,
	PPB_P_REFCNT,
	PPB_P_PFMEMALLOC,
	PPB_P_FAR_NODE,
	PPB_P_DESTROYED,
	PPB_P_RELEASED,
	PPB_P_SYNC,
	PPB_P_SYNC_BYTES,
	PPB_P_RESIZE_DROPPED,		/* ring shrunk by pool-set: released */
	PPB_P_FOREIGN_PUT,		/* returns of a page not the pool's: refused */
	PPB_P_NR
};

struct ppb_pcpu_stats {
	u64 c[PPB_P_NR];
};

/*
 * Held pages a reclaim steps past at most, each sent to the back of the
 * FIFO: four refills' worth, so that a socket holding up to 256 pages
 * costs no refill from the allocator as its pages come round.
 */
#define PPB_RECLAIM_SKIP	256U

/* A page lent to the stack, and since when. */
struct ppb_lent {
	struct page *page;
	unsigned long since;	/* jiffies */
};

/*
 * The FIFO of lent pages: PPB_LENT_PER_RING entries a ring entry.  Freed
 * after a grace period once replaced: holders-get and stats-get read it
 * under RCU, published with rcu_assign_pointer() after its entries.
 */
struct ppb_lent_fifo {
	struct rcu_head rcu;
	u32 mask;
	struct ppb_lent e[];
};

struct ppb_pool {
	/* Consumer side: touched only by the allocating (NAPI) context. */
	struct ppb_cache cache ____cacheline_aligned_in_smp;
	u32 lent_head, lent_tail;
	struct ppb_lent_fifo __rcu *lent;
	struct ppb_lent_fifo *lent_next;	/* from ppb_pool_set_ring(), for the next refill */
	seqcount_t seq;			/* refills and flushes, for readers of stats */
	u64 hold_cnt;			/* pages that ever entered the pool */
	u64 cs[PPB_C_NR];		/* consumer-side counters */
	struct page *frag_page;		/* being cut up by ppb_alloc_frag() */
	unsigned int frag_offset;	/* its next fragment */
	unsigned int frag_users;	/* fragments cut from it */

	struct ppb_params p;
	int nid;			/* effective node, updated by ppb_update_nid */
	bool destroyed;
	bool ring_resizing;		/* refills take the consumer lock (pool-set) */
	u32 refill_batch;		/* pages per cache refill, set by pool-set */
	unsigned int page_bytes;	/* PAGE_SIZE << order */
	/*
	 * Driver returns into the ring, counted under producer_lock, in a line
	 * of their own with the per-CPU counters' pointer: nothing the
	 * allocating context reads on its fast path.
	 */
	struct ppb_pcpu_stats __percpu *stats ____cacheline_aligned_in_smp;
	u64 ring_produced;

	/* Producer side: any context returns pages through the ring. */
	struct ptr_ring ring ____cacheline_aligned_in_smp;
	atomic64_t release_cnt;		/* pages that left: released or orphaned */

	u32 id;
	/* Both follow the netdev (ppb_netdev_event), under the registry lock. */
	struct net_device *netdev;	/* params.netdev, until it unregisters */
	int ifindex;			/* its ifindex now, 0 if none or in another netns */
	unsigned int napi_id;
	char owner[32];
	ktime_t created;
	ktime_t detached;
	time64_t destroy_s;		/* boot time, s */
	unsigned long next_warn;
	struct rcu_head rcu;		/* freed after the readers that found it */
	bool foreign_warned;		/* said once that a driver passed a foreign page */
	struct delayed_work release_dw;
};

/*
 * The FIFO of lent pages, for the allocating context (or teardown, once it
 * is gone): the only context that replaces it.
 */
static inline struct ppb_lent_fifo *ppb_lent_fifo(const struct ppb_pool *pool)
{
	return rcu_dereference_protected(pool->lent, true);
}

/* Only from the allocating context (or once it is gone, at teardown). */
static inline void ppb_cinc(struct ppb_pool *pool, enum ppb_cctr c)
{
	pool->cs[c]++;
}

static inline void ppb_cadd(struct ppb_pool *pool, enum ppb_cctr c, u64 n)
{
	pool->cs[c] += n;
}

/* From any context. */
static inline void ppb_pinc(struct ppb_pool *pool, enum ppb_pctr c)
{
	this_cpu_inc(pool->stats->c[c]);
}

static inline void ppb_padd(struct ppb_pool *pool, enum ppb_pctr c, u64 n)
{
	this_cpu_add(pool->stats->c[c], n);
}

/*
 * Entries of the last refill still in the cache.  The stored mark is
 * lowered lazily: pops leave it alone, the next push (ppb_cache_push_slow)
 * settles it, so between two pushes the running minimum is the count.
 */
static inline u32 ppb_top_seg(u64 top)
{
	return min(ppb_top_count(top), (u32)(top >> 8) & 0xff);
}

static inline u64 ppb_top_pushes(u64 top)
{
	return top >> 16;
}

/* @count and @seg, keeping the direct-return count of @top. */
static inline u64 ppb_top(u64 top, u32 count, u32 seg)
{
	return (top & ~0xffffULL) | (u64)seg << 8 | count;
}

static inline u32 ppb_cache_count(const struct ppb_cache *c)
{
	return ppb_top_count(c->top);
}

/* Into the (empty) cache as part of a refill, unseen until ppb_refilled(). */
static inline bool ppb_cache_stage(struct ppb_pool *pool, struct page *page)
{
	struct ppb_cache *c = &pool->cache;

	if (unlikely(c->fill == PPB_CACHE_SIZE))
		return false;
	c->pages[c->fill++] = page;
	return true;
}

/* Add the direct returns kept in the top word to their counter. */
static inline void ppb_cache_fold_pushes(struct ppb_pool *pool)
{
	pool->cs[PPB_C_DIRECT_CACHED] += ppb_top_pushes(pool->cache.top);
	pool->cache.top &= 0xffff;
}

/*
 * Around every change of the cache's books but the fast path's own.  BHs
 * off, not just preemption: a reader in a softirq (a driver's
 * ndo_get_stats64, say) must never spin on a writer it interrupted on the
 * same CPU, such as a driver filling its rings in process context.
 */
static inline void ppb_books_begin(struct ppb_pool *pool)
{
	local_bh_disable();
	write_seqcount_begin(&pool->seq);
}

static inline void ppb_books_end(struct ppb_pool *pool)
{
	write_seqcount_end(&pool->seq);
	local_bh_enable();
}

void ppb_cache_push_slow(struct ppb_pool *pool, struct page *page,
			 unsigned int dma_sync_size, bool sync);

/*
 * Hand a page back to the device: only what it may have written (the driver
 * says how much, never more than max_len), not the whole page.
 */
static inline unsigned int ppb_sync_len(const struct ppb_pool *pool, unsigned int len)
{
	return min(len, pool->p.max_len);
}

static inline void __ppb_sync_for_device(struct ppb_pool *pool, struct page *page,
					 unsigned int len)
{
	dma_sync_single_range_for_device(pool->p.dev, ppb_get_dma_addr(page),
					 pool->p.offset, len, pool->p.dma_dir);
}

/*
 * The sync for the device of a direct return into the cache, its bytes
 * counted by the allocating context (ppb_sync_for_device() counts the
 * others' per CPU).  In a pool that syncs, every page pushed into the
 * cache was synced: the statistics count them from the pushes.
 */
static inline void ppb_sync_direct(struct ppb_pool *pool, struct page *page,
				   unsigned int dma_sync_size)
{
	unsigned int len = ppb_sync_len(pool, dma_sync_size);

	ppb_cadd(pool, PPB_C_SYNC_BYTES, len);
	__ppb_sync_for_device(pool, page, len);
}

/* Pages of the current refill served so far: from the stack, and the rest. */
static inline void ppb_seg_served(u64 top, u32 seg_len, u32 seg_stack, u32 *stack,
				  u32 *other)
{
	u32 left = min(ppb_top_seg(top), seg_len);

	*stack = seg_stack - min(left, seg_stack);
	*other = seg_len - seg_stack - (left > seg_stack ? left - seg_stack : 0);
}

static inline int ppb_pool_nid(const struct ppb_pool *pool)
{
	int nid = READ_ONCE(pool->nid);

	return nid == NUMA_NO_NODE ? numa_mem_id() : nid;
}

/* The stack has let go of a lent page: only the pool's references are left. */
static inline bool ppb_stack_done(const struct ppb_pool *pool, struct page *page)
{
	return page_ref_count(page) ==
	       (pool->p.flags & PPB_FLAG_PAGE_FRAG ? PPB_BIAS : PPB_BIAS - 1);
}

/* dma.c */
bool ppb_page_map(struct ppb_pool *pool, struct page *page);
void ppb_page_unmap(struct ppb_pool *pool, struct page *page);
void ppb_sync_for_device(struct ppb_pool *pool, struct page *page, unsigned int len);
/* alloc.c */
void ppb_frag_page_done(struct ppb_pool *pool);
void ppb_cache_flush(struct ppb_pool *pool, bool waive);
/* recycle.c */
void ppb_frag_page_back(struct ppb_pool *pool, struct page *page, bool allow_direct);
void ppb_recycle_reclaimed(struct ppb_pool *pool, struct page *page, bool refill);
int __ppb_pool_set_ring(struct ppb_pool *pool, u32 size);
/* release.c */
void ppb_release_retry(struct work_struct *work);
void ppb_release_page(struct ppb_pool *pool, struct page *page);
void ppb_drop_pool_refs(struct ppb_pool *pool, struct page *page, unsigned int refs);
u64 ppb_pages_outstanding(struct ppb_pool *pool);
/* stack.c */
unsigned int ppb_reclaim(struct ppb_pool *pool, unsigned int budget, bool force,
			 bool refill);
unsigned int ppb_lent_count(const struct ppb_pool *pool);
unsigned int ppb_lent_held(struct ppb_pool *pool);
u32 ppb_lent_read(struct ppb_pool *pool, const struct ppb_lent_fifo *f, u32 *head);
void ppb_foreign_warn(struct ppb_pool *pool, struct page *page, const char *what);
int ppb_dev_ifindex(const struct net_device *dev);
struct ppb_lent_fifo *ppb_lent_alloc(u32 ring_size);
void ppb_lent_resize(struct ppb_pool *pool);
/* netlink.c */
int ppb_nl_init(void);
void ppb_nl_exit(void);
void ppb_nl_notify(struct ppb_pool *pool, int cmd);
/* main.c */
extern unsigned int ppb_lend_timeout_ms;
extern unsigned int ppb_shutdown_warn_s;
extern unsigned int ppb_release_retry_ms;
extern struct workqueue_struct *ppb_wq;
int ppb_registry_add(struct ppb_pool *pool);
void ppb_registry_del(struct ppb_pool *pool);
bool ppb_registry_unloading(void);
void ppb_registry_lock(void);
void ppb_registry_unlock(void);
struct ppb_pool *ppb_registry_find(u32 id);
struct ppb_pool *ppb_registry_next(unsigned long *id);
void ppb_pool_free(struct ppb_pool *pool);
void ppb_pool_shutdown(struct ppb_pool *pool);

#endif /* _PPB_POOL_H */
