/* SPDX-License-Identifier: GPL-2.0 */
/*
 * ppkit page_pool backport: the driver-facing API.
 *
 * Mirrors the kernel's page_pool closely enough that moving a driver is a
 * rename (page_pool_ -> ppb_), but never shares state or symbols with it:
 * pages of a ppkit pool never carry pp_magic and skbs built on them never
 * set pp_recycle, so the kernel's own page_pool cannot mistake them for its
 * own.  Pages handed up the stack come back without any core-kernel hook:
 * the pool keeps a reference bias on each of its pages and reclaims a page
 * once the stack's references are gone (see Documentation/pool.rst).
 */
#ifndef _PPKIT_PAGE_POOL_H
#define _PPKIT_PAGE_POOL_H

#include <linux/types.h>
#include <linux/mm.h>
#include <linux/dma-mapping.h>
#include <linux/preempt.h>
#include <linux/overflow.h>
#include <linux/cache.h>
#include <uapi/linux/ppkit.h>

struct ppb_pool;
struct sk_buff;
struct napi_struct;

/* The pool DMA-maps pages when they enter it and unmaps them when they leave. */
#define PPB_FLAG_DMA_MAP	BIT(0)
/*
 * The pool syncs recycled pages for the device, and only the part the device
 * may have written (max_len from offset, or less if the driver says so).
 * Needs PPB_FLAG_DMA_MAP.
 */
#define PPB_FLAG_DMA_SYNC_DEV	BIT(1)
/*
 * Several buffers a page: ppb_alloc_frag().  Each fragment goes back on its
 * own, to ppb_put_page() or through the stack; the page is recycled when
 * the last of its fragments is back, and synced for the device whole
 * (max_len from offset).
 */
#define PPB_FLAG_PAGE_FRAG	BIT(2)
#define PPB_FLAG_ALL		(PPB_FLAG_DMA_MAP | PPB_FLAG_DMA_SYNC_DEV | PPB_FLAG_PAGE_FRAG)

#define PPB_POOL_SIZE_MAX	32768
/* Pages kept in the NAPI-local cache; a refill moves half of it at once. */
#define PPB_CACHE_SIZE		128
#define PPB_REFILL_BATCH	64	/* default, and the most pool-set allows */
/* Pages lent to the stack that a pool tracks, per ring entry (power of two). */
#define PPB_LENT_PER_RING	4

struct ppb_params {
	unsigned int flags;		/* PPB_FLAG_* */
	unsigned int order;		/* pages are 2^order system pages */
	unsigned int pool_size;		/* recycle ring entries, 1..32768 */
	int nid;			/* NUMA node, or NUMA_NO_NODE: the CPU's */
	struct device *dev;		/* device the pages are mapped for */
	struct napi_struct *napi;	/* NAPI instance that allocates, if any */
	enum dma_data_direction dma_dir; /* DMA_FROM_DEVICE or DMA_BIDIRECTIONAL */
	unsigned int offset;		/* where the device starts writing */
	unsigned int max_len;		/* the most the device writes from offset */
	const char *owner;		/* driver or module name, for reports */
	struct net_device *netdev;	/* the netdev the pool serves, if any */
	unsigned int queue;		/* and its RX queue */
};

/*
 * References the pool holds on each of its pages.  While a page is lent to
 * the stack, one of them is the stack's; the page is free to reuse again
 * when its count falls back to PPB_BIAS - 1.  Large enough that clones and
 * frag references never reach it, small enough to stay far from overflow.
 */
#define PPB_BIAS		USHRT_MAX

/* put_checks: what a return must look at besides the refcount. */
#define PPB_PC_NODE		BIT(0)	/* the pool has a node: check the page's */
#define PPB_PC_SYNC		BIT(1)	/* sync for the device */
#define PPB_PC_DESTROYED	BIT(2)	/* never into the cache again */
#define PPB_PC_FRAG		BIT(3)	/* a fragment: the last one returns the page */

/*
 * Every pool begins with its NAPI-local cache, a stack that only the
 * allocating context touches.  ppb_alloc_pages() and ppb_put_page() pop
 * and push it inline; the rest of a pool is pp_backport's own.
 *
 * Refills happen only when the cache is empty and lay down, bottom up,
 * pages reclaimed from the stack then pages from the ring, or fresh pages;
 * direct returns pile on top.  So where a served page came from follows
 * from positions alone: entries below @seg are what is left of the last
 * refill, entries above are direct returns.  The fast path keeps @seg a
 * running minimum and counts nothing else; the statistics work out the
 * rest (ppb_get_stats).  A refill lays its pages down unseen (@fill) and
 * publishes them, with the last refill's totals, in one section of the
 * pool's seqcount (ppb_refilled), so that a reader never sees half of it.
 */
struct ppb_cache {
	/*
	 * Bits 0-7: entries; 8-15: @seg, entries of the last refill still here
	 * (at the bottom), lowered by the next push rather than by each pop;
	 * 16-62: direct returns since the last fold, folded before they reach
	 * bit 63.  One load and one store per operation on the fast path,
	 * counting included.
	 */
	u64 top;
	u32 seg_len;		/* size of the last refill */
	u32 seg_stack;		/* of which reclaimed from the stack (the lowest) */
	u32 seg_fresh;		/* the rest came from the allocator, not the ring */
	u32 fill;		/* pages laid down by the refill under way */
	u32 fill_new;		/* of which fresh from the allocator */
	struct page *pages[PPB_CACHE_SIZE];
	/*
	 * PPB_PC_*: read by every return, from any CPU, and written only by
	 * ppb_update_nid() and destroy: in a line of its own, not in the one
	 * the allocating CPU writes at each operation.
	 */
	u8 put_checks ____cacheline_aligned_in_smp;
};

#define PPB_TOP_PUSH		BIT_ULL(16)

static inline u32 ppb_top_count(u64 top)
{
	return top & 0xff;
}

/*
 * Onto a cache with room, from the allocating context, if the push needs
 * nothing else: no refill mark to settle (the mark is above the count
 * only after pops), no count to fold before it reaches bit 63.
 */
static inline bool ppb_cache_try_push(struct ppb_cache *c, struct page *page)
{
	u64 top = c->top;
	u32 n = ppb_top_count(top);
	s64 next;

	if (unlikely(n < ((top >> 8) & 0xff) ||
		     check_add_overflow((s64)top, (s64)(PPB_TOP_PUSH + 1), &next)))
		return false;
	c->pages[n] = page;
	c->top = next;
	return true;
}

static inline struct ppb_cache *ppb_pool_cache(struct ppb_pool *pool)
{
	return (struct ppb_cache *)pool;
}

/*
 * Statistics, always on: the counters of the ppkit family's stats reply, in
 * its order (uapi/linux/ppkit.h; meanings in Documentation/stats.rst).
 * c[PPB_STAT(ALLOC_FAST)] is PPKIT_A_STATS_ALLOC_FAST's; the gauges that
 * follow the counters in the reply are fields of their own.
 */
#define PPB_STAT(name)	(PPKIT_A_STATS_##name - PPKIT_A_STATS_FIRST_COUNTER)
#define PPB_STAT_NR	(PPKIT_A_STATS_INFLIGHT - PPKIT_A_STATS_FIRST_COUNTER)

/* "alloc_fast", ...: the name of each counter in every ppkit interface. */
extern const char * const ppb_stat_names[PPB_STAT_NR];

struct ppb_stats {
	u64 c[PPB_STAT_NR];
	u64 inflight_pages;	/* with the driver or lent to the stack */
	u64 inflight_bytes;
	u32 cache_pages;	/* in the NAPI-local cache now */
	u32 ring_pages;		/* in the recycle ring now */
	u32 lent_pages;		/* lent and not yet reclaimed or orphaned */
	u64 lent_twice;		/* lends of a page the stack still held: refused */
	/* PPB_FLAG_PAGE_FRAG pools; the page counters above count pages */
	u64 frags_served;	/* fragments handed out by ppb_alloc_frag() */
	u64 frags_lent;		/* of which lent to the stack */
	u64 frag_pages_unlent;	/* lent pages back, fragments still the driver's */
	u64 foreign;		/* lends and returns of pages not the pool's: refused */
};

struct ppb_pool *ppb_pool_create(const struct ppb_params *params);
void ppb_pool_destroy(struct ppb_pool *pool);
int ppb_params_check(const struct ppb_params *params, const char **why);
u32 ppb_pool_id(const struct ppb_pool *pool);

/* The cache is empty: refill it from recycled stock or the allocator. */
struct page *ppb_alloc_pages_slow(struct ppb_pool *pool, gfp_t gfp);

/* Hot pages first: the last page in is still in the CPU's cache. */
static inline struct page *ppb_alloc_pages(struct ppb_pool *pool, gfp_t gfp)
{
	struct ppb_cache *c = ppb_pool_cache(pool);
	u64 top = c->top;

	if (likely(ppb_top_count(top))) {
		c->top = --top;
		return c->pages[ppb_top_count(top)];
	}
	return ppb_alloc_pages_slow(pool, gfp);
}

/*
 * @size bytes (rounded up to the DMA cache alignment) of a page of a
 * PPB_FLAG_PAGE_FRAG pool, at *@offset in the returned page; the page's
 * DMA address is ppb_get_dma_addr() as for whole pages.  Each fragment is
 * given back on its own with ppb_put_page() on the page, or lent to the
 * stack (ppb_page_lend(), ppb_skb_mark()) once per fragment.  Such a pool
 * serves fragments only: a whole page is a fragment of its size.
 */
struct page *ppb_alloc_frag(struct ppb_pool *pool, unsigned int *offset,
			    unsigned int size, gfp_t gfp);
void ppb_put_page_slow(struct ppb_pool *pool, struct page *page,
		       unsigned int dma_sync_size, bool allow_direct);
void ppb_put_page_sync(struct ppb_pool *pool, struct page *page,
		       unsigned int dma_sync_size, bool allow_direct);

/*
 * A pool's pages carry its address, with bit 2 set, in the first word of
 * page->lru from the moment they enter it until they leave: lends and
 * returns check it, so that a page of the kernel's (an skb head from the
 * page-frag cache) or of another pool is never taken for one of the pool's.
 * The word's two low bits are the kernel's and kept (bit 0: a tail page's
 * compound_head; bit 1: pfmemalloc, since 5.14), as the kernel's page_pool
 * does for its pp_magic; the page allocator clears the rest of it, and a
 * list pointer never points 4 bytes into a pool.
 */
#define PPB_PAGE_TAG_BITS	3UL

static inline unsigned long ppb_page_tag(const struct ppb_pool *pool)
{
	return (unsigned long)pool | 4UL;
}

static inline void ppb_page_set_owner(const struct ppb_pool *pool, struct page *page)
{
	unsigned long w = (unsigned long)READ_ONCE(page->lru.next);

	WRITE_ONCE(page->lru.next, (void *)((w & PPB_PAGE_TAG_BITS) | ppb_page_tag(pool)));
}

/* The page leaves the pool: its mark goes, the kernel's bits stay. */
static inline void ppb_page_clear_owner(struct page *page)
{
	unsigned long w = (unsigned long)READ_ONCE(page->lru.next);

	WRITE_ONCE(page->lru.next, (void *)(w & PPB_PAGE_TAG_BITS));
}

static inline bool ppb_page_owned(const struct ppb_pool *pool, struct page *page)
{
	return ((unsigned long)READ_ONCE(page->lru.next) & ~PPB_PAGE_TAG_BITS) ==
	       ppb_page_tag(pool);
}

/*
 * A page back from the driver: into the cache if the allocating context
 * returns it, else into the ring; released if anyone else holds it, if it
 * is an emergency-reserve page or, in a pool with a node, if it is on
 * another node; left alone (and counted) if it is not the pool's.
 * Inline when the pool has nothing else to check and the push needs no
 * book-keeping (ppb_cache_push_slow() does the rest); a pool that syncs
 * for the device, with a node or not, has a path of its own.
 */
static inline void ppb_put_page(struct ppb_pool *pool, struct page *page,
				unsigned int dma_sync_size, bool allow_direct)
{
	struct ppb_cache *c = ppb_pool_cache(pool);

	/*
	 * put_checks is a byte that ppb_update_nid() and destroy set, read
	 * whole each time; PPB_PC_DESTROYED never clears once set.
	 */
	if (likely(!data_race(c->put_checks))) {
		if (allow_direct && likely(in_softirq()) &&
		    likely(page_ref_count(page) == PPB_BIAS) &&
		    likely(ppb_page_owned(pool, page)) &&
		    likely(!page_is_pfmemalloc(page)) &&
		    likely(ppb_top_count(c->top) < PPB_CACHE_SIZE) &&
		    likely(ppb_cache_try_push(c, page)))
			return;
	} else if ((READ_ONCE(c->put_checks) & ~PPB_PC_NODE) == PPB_PC_SYNC) {
		ppb_put_page_sync(pool, page, dma_sync_size, allow_direct);
		return;
	}
	ppb_put_page_slow(pool, page, dma_sync_size, allow_direct);
}

void ppb_update_nid(struct ppb_pool *pool, int new_nid);
void ppb_pool_set_napi(struct ppb_pool *pool, struct napi_struct *napi);
/*
 * Resize a live pool's recycle ring (1..PPB_POOL_SIZE_MAX entries; pages
 * that no longer fit are released) and its FIFO of lent pages with it:
 * what the ppkit family's pool-set does.  Process context; -EBUSY once
 * the pool is destroyed.
 */
int ppb_pool_set_ring(struct ppb_pool *pool, unsigned int size);

/*
 * Pages given to the stack: the pool takes them back once the stack is done,
 * or lets them go (orphans them) if it holds them longer than lend_timeout_ms.
 * All from the allocating context.  ppb_page_lend() for a page the driver
 * put in an skb itself; ppb_skb_mark() for every page of an skb (head if
 * head_frag, and frags), each of which must come from @pool;
 * ppb_build_skb() builds the skb on the page itself (no copy) and lends
 * it.  If ppb_build_skb() returns NULL the page is still the driver's, to
 * recycle or put.  It uses build_skb(), safe in any context; in NAPI,
 * napi_build_skb() + ppb_skb_mark() is cheaper (the per-CPU skb cache:
 * about twice the RX rate of ppsim's drop test under TCG).
 */
void ppb_page_lend(struct ppb_pool *pool, struct page *page);
void ppb_skb_mark(struct ppb_pool *pool, struct sk_buff *skb);
struct sk_buff *ppb_build_skb(struct ppb_pool *pool, struct page *page,
			      unsigned int headroom, unsigned int len);
/*
 * How many of @pool's lent pages the stack still holds, and the oldest
 * one's age in ms, from the scan of the lent FIFO that holders-get and
 * stats-get's lent-ages make (while the allocating context may run).  For
 * a driver's diagnostics at teardown.  The pool live; returns 0.
 */
int ppb_pool_held_pages(struct ppb_pool *pool, u32 *held, u64 *oldest_ms);

void ppb_get_stats(struct ppb_pool *pool, struct ppb_stats *stats);
int ppb_pool_stats_by_id(u32 id, struct ppb_stats *stats);
void ppb_stats_add(struct ppb_stats *sum, const struct ppb_stats *s);
/*
 * ethtool -S, the same names in every driver: rx_pp_* for the kernel
 * page_pool's counters, rx_ppb_* for the backport's, after a driver's
 * @prefix ("" for pools of one netdev).  Strings are ETH_GSTRING_LEN
 * bytes; each call returns where the next item goes.
 */
int ppb_ethtool_stats_count(void);
u8 *ppb_ethtool_stats_strings(u8 *data, const char *prefix);
u64 *ppb_ethtool_stats_fill(const struct ppb_stats *sum, u64 *data);

static inline struct page *ppb_dev_alloc_pages(struct ppb_pool *pool)
{
	return ppb_alloc_pages(pool, GFP_ATOMIC | __GFP_NOWARN);
}

static inline struct page *ppb_dev_alloc_frag(struct ppb_pool *pool,
					      unsigned int *offset, unsigned int size)
{
	return ppb_alloc_frag(pool, offset, size, GFP_ATOMIC | __GFP_NOWARN);
}

/* Only from the NAPI context that allocates from @pool. */
static inline void ppb_recycle_direct(struct ppb_pool *pool, struct page *page)
{
	ppb_put_page(pool, page, -1, true);
}

static inline void ppb_put_full_page(struct ppb_pool *pool, struct page *page,
				     bool allow_direct)
{
	ppb_put_page(pool, page, -1, allow_direct);
}

/*
 * The DMA address lives in page->private while the page belongs to a pool
 * that maps.  A 64-bit dma_addr_t on a 32-bit kernel is kept shifted: pool
 * mappings start on a page boundary, so no bits are lost.
 */
static inline dma_addr_t ppb_get_dma_addr(const struct page *page)
{
	if (sizeof(dma_addr_t) > sizeof(unsigned long))
		return (dma_addr_t)page_private(page) << PAGE_SHIFT;
	return (dma_addr_t)page_private(page);
}

#endif /* _PPKIT_PAGE_POOL_H */
