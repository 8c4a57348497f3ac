// SPDX-License-Identifier: GPL-2.0
/*
 * pp_backport: pages lent to the stack, and how they come back.
 *
 * The kernel's own page_pool gets skb pages back through a hook in the skb
 * free path (pp_recycle).  A backport cannot add hooks, so it borrows the
 * pagecnt_bias technique of ixgbe and ice: the pool holds PPB_BIAS
 * references on each page; lending a page to the stack hands one of them
 * over.  When the stack frees the skb, the count falls back to
 * PPB_BIAS - 1 and only the pool still holds the page, so it may reuse it.
 * Lent pages sit in a FIFO and are examined in order when the pool needs
 * pages; one still held goes round to the back.  A page the stack keeps
 * too long (a socket nobody reads, a clone in a capture buffer) is
 * orphaned: unmapped, the pool's references are dropped, and the stack's
 * last put_page() frees it like any other page.
 * Nothing ever waits for the stack.
 */

#include <linux/module.h>
#include <linux/skbuff.h>
#include <linux/jiffies.h>
#include <linux/rcupdate.h>
#include "pool.h"

unsigned int ppb_lent_count(const struct ppb_pool *pool)
{
	return pool->lent_tail - pool->lent_head;
}

/*
 * A FIFO for a ring of @ring_size: a TCP receive queue holds several
 * rings' worth of pages for a while.
 */
struct ppb_lent_fifo *ppb_lent_alloc(u32 ring_size)
{
	u32 n = PPB_LENT_PER_RING * roundup_pow_of_two(ring_size);
	struct ppb_lent_fifo *f = kvzalloc(struct_size(f, e, n), GFP_KERNEL);

	if (f)
		f->mask = n - 1;
	return f;
}

/* Lent pages the stack still holds (the others wait to be reclaimed). */
unsigned int ppb_lent_held(struct ppb_pool *pool)
{
	struct ppb_lent_fifo *f = ppb_lent_fifo(pool);
	unsigned int n = 0;
	u32 i;

	for (i = pool->lent_head; i != pool->lent_tail; i++)
		n += !ppb_stack_done(pool, f->e[i & f->mask].page);
	return n;
}

/*
 * The length of FIFO @f (rcu_dereference()d by the caller) as a reader
 * beside the allocating context sees it, and where it starts.  That
 * context moves the head and the tail with plain stores, never the head
 * past the tail, but another CPU may see a head newer than the tail it
 * reads after it: such a read counts nothing rather than a wrapped
 * difference, and no read counts more than the FIFO holds.
 */
u32 ppb_lent_read(struct ppb_pool *pool, const struct ppb_lent_fifo *f, u32 *head)
{
	u32 h = READ_ONCE(pool->lent_head), t;

	smp_rmb();	/* the head first: a tail older than it is the exception */
	t = READ_ONCE(pool->lent_tail);
	if (head)
		*head = h;
	if ((s32)(t - h) <= 0)
		return 0;
	return min(t - h, f->mask + 1);
}

/*
 * A driver passed a page that is not @pool's (@what: lent, put): left
 * alone, counted, and said once for the pool.
 */
void ppb_foreign_warn(struct ppb_pool *pool, struct page *page, const char *what)
{
	if (READ_ONCE(pool->foreign_warned))
		return;
	WRITE_ONCE(pool->foreign_warned, true);
	pr_warn("ppkit: pool %u (%s): a page that is not the pool's was %s (pfn %#lx): left alone, counted in its foreign statistic\n",
		pool->id, pool->owner, what, page_to_pfn(page));
}

static void ppb_orphan(struct ppb_pool *pool, struct page *page)
{
	ppb_cinc(pool, PPB_C_ORPHANED);
	ppb_drop_pool_refs(pool, page, PPB_BIAS - 1);
}

/*
 * A fragment page leaves the FIFO: the stack let go of it (@back), or held
 * it too long.  The FIFO's share goes, and the page with it unless the
 * driver still has fragments of it: then the driver's last put recycles
 * it, or releases it if the stack still holds it (the refcount says so).
 * Unmarked first: once the share is gone, that put may recycle the page
 * and a new lend mark it again.
 */
static void ppb_frag_unlend(struct ppb_pool *pool, struct page *page, bool back, bool refill)
{
	if (page->index == PPB_PAGE_LENT)
		page->index = 0;
	if (!atomic_long_dec_and_test(ppb_frag_cnt(page))) {
		ppb_cinc(pool, PPB_C_FRAG_UNLENT);
		return;
	}
	if (back) {
		atomic_long_set(ppb_frag_cnt(page), 1);
		ppb_recycle_reclaimed(pool, page, refill);
		return;
	}
	ppb_cinc(pool, PPB_C_ORPHANED);
	ppb_drop_pool_refs(pool, page, PPB_BIAS);
}

/*
 * The FIFO's head page, lent at @since: false if it stays lent (held, and
 * neither @force nor older than @timeout).
 */
static __always_inline bool ppb_reclaim_one(struct ppb_pool *pool, struct page *page,
					    unsigned long since, unsigned long timeout,
					    bool force, bool refill)
{
	bool back = ppb_stack_done(pool, page);

	if (!back && !force && time_before(jiffies, since + timeout))
		return false;
	if (pool->p.flags & PPB_FLAG_PAGE_FRAG) {
		ppb_frag_unlend(pool, page, back, refill);
	} else if (back) {
		/*
		 * Only the pool holds it, and nobody can take a new
		 * reference without holding one: safe to reuse.
		 */
		if (page->index == PPB_PAGE_LENT)
			page->index = 0;
		page_ref_inc(page);
		ppb_recycle_reclaimed(pool, page, refill);
	} else {
		ppb_orphan(pool, page);
	}
	return true;
}

/*
 * Take back up to @budget lent pages, oldest first.  A page whose count is
 * back at the pool's share is reused; one held past the lend timeout (or
 * any, with @force) is orphaned; one still held and not too old goes to
 * the back of the FIFO with its age, so that one slow socket does not keep
 * the pages lent after it from coming back.  At most PPB_RECLAIM_SKIP of
 * those a call, and none twice.
 * @refill: called by a refill of the (empty) cache, which may take them.
 */
unsigned int ppb_reclaim(struct ppb_pool *pool, unsigned int budget, bool force,
			 bool refill)
{
	unsigned long timeout = msecs_to_jiffies(READ_ONCE(ppb_lend_timeout_ms));
	unsigned int done = 0, skip = min(ppb_lent_count(pool), PPB_RECLAIM_SKIP);

	struct ppb_lent_fifo *f = ppb_lent_fifo(pool);

	while (done < budget && pool->lent_head != pool->lent_tail) {
		struct ppb_lent *e = &f->e[pool->lent_head & f->mask];
		struct page *page = e->page;
		unsigned long since = e->since;

		e->page = NULL;
		pool->lent_head++;
		if (!ppb_reclaim_one(pool, page, since, timeout, force, refill)) {
			/* A slot was just freed at the head: room at the tail. */
			e = &f->e[pool->lent_tail & f->mask];
			e->page = page;
			e->since = since;
			pool->lent_tail++;
			if (!--skip)
				break;
			continue;
		}
		done++;
	}
	return done;
}

/*
 * The allocating context moves its lent pages into the FIFO that
 * ppb_pool_set_ring() left for it, in the same order and at the same
 * positions, taking back or letting go of the oldest if they do not fit.
 */
void ppb_lent_resize(struct ppb_pool *pool)
{
	struct ppb_lent_fifo *new = xchg(&pool->lent_next, NULL), *old = ppb_lent_fifo(pool);
	u32 i;

	if (!new)
		return;
	while (ppb_lent_count(pool) > new->mask + 1)
		if (!ppb_reclaim(pool, 1, false, false))
			ppb_reclaim(pool, 1, true, false);
	for (i = pool->lent_head; i != pool->lent_tail; i++)
		new->e[i & new->mask] = old->e[i & old->mask];
	/* Readers (ppb_lent_scan) see the entries copied before the new FIFO. */
	rcu_assign_pointer(pool->lent, new);
	kvfree_rcu(old, rcu);
}

/*
 * The stack already holds @page through an earlier lend that has not come
 * back (a head and a frag in one page, two halves of a page): it has only
 * one reference of the pool's to give.  Give the stack a reference of its
 * own instead, so the books still balance, and say so.
 */
static noinline void ppb_lend_twice(struct ppb_pool *pool, struct page *page)
{
	page_ref_inc(page);
	ppb_cinc(pool, PPB_C_LENT_TWICE);
	pr_warn_ratelimited("ppkit: pool %u (%s): a page lent to the stack again before it came back (%llu so far): refused, the stack gets its own reference\n",
			    pool->id, pool->owner, pool->cs[PPB_C_LENT_TWICE]);
}

/*
 * A fragment lent: the stack gets a reference of its own, and the
 * fragment's share of the page goes to the FIFO if the page is not there
 * yet, else away (the FIFO's share keeps the page).
 */
static bool ppb_frag_lend(struct ppb_pool *pool, struct page *page)
{
	page_ref_inc(page);
	ppb_cinc(pool, PPB_C_FRAGS_LENT);
	if (page->index != PPB_PAGE_LENT)
		return false;
	atomic_long_dec(ppb_frag_cnt(page));
	return true;
}

/* Not @pool's page: the stack keeps it as it is, the pool never touches it. */
static noinline void ppb_lend_foreign(struct ppb_pool *pool, struct page *page)
{
	ppb_cinc(pool, PPB_C_FOREIGN_LENT);
	ppb_foreign_warn(pool, page, "lent");
}

static __always_inline void __ppb_page_lend(struct ppb_pool *pool, struct page *page)
{
	struct ppb_lent_fifo *f = ppb_lent_fifo(pool);
	struct ppb_lent *e;

	if (unlikely(!ppb_page_owned(pool, page))) {
		ppb_lend_foreign(pool, page);
		return;
	}
	if (pool->p.flags & PPB_FLAG_PAGE_FRAG) {
		if (ppb_frag_lend(pool, page))
			return;
	} else if (unlikely(page->index == PPB_PAGE_LENT)) {
		ppb_lend_twice(pool, page);
		return;
	}
	/* FIFO full: the oldest page has been out longest; take it back or let it go. */
	if (unlikely(ppb_lent_count(pool) > f->mask) &&
	    !ppb_reclaim(pool, 1, false, false))
		ppb_reclaim(pool, 1, true, false);

	page->index = PPB_PAGE_LENT;
	e = &f->e[pool->lent_tail & f->mask];
	e->page = page;
	e->since = jiffies;
	pool->lent_tail++;
	ppb_cinc(pool, PPB_C_LENT);
}

void ppb_page_lend(struct ppb_pool *pool, struct page *page)
{
	__ppb_page_lend(pool, page);
}
EXPORT_SYMBOL_GPL(ppb_page_lend);

static void ppb_skb_mark_one(struct ppb_pool *pool, struct sk_buff *skb)
{
	struct skb_shared_info *shinfo = skb_shinfo(skb);
	int i;

	if (skb->head_frag)
		__ppb_page_lend(pool, virt_to_head_page(skb->head));
	for (i = 0; i < shinfo->nr_frags; i++)
		__ppb_page_lend(pool, compound_head(skb_frag_page(&shinfo->frags[i])));
}

/*
 * Every page of @skb (head and frags, and those of the skbs on its
 * frag_list, one level as GRO builds them) comes from @pool and goes up
 * the stack.
 */
void ppb_skb_mark(struct ppb_pool *pool, struct sk_buff *skb)
{
	struct sk_buff *frag;

	ppb_skb_mark_one(pool, skb);
	skb_walk_frags(skb, frag)
		ppb_skb_mark_one(pool, frag);
}
EXPORT_SYMBOL_GPL(ppb_skb_mark);

/*
 * An skb whose head is @page itself (no copy), with @len bytes of data
 * after @headroom.  On failure the page is still the driver's.
 */
struct sk_buff *ppb_build_skb(struct ppb_pool *pool, struct page *page,
			      unsigned int headroom, unsigned int len)
{
	struct sk_buff *skb = build_skb(page_address(page), pool->page_bytes);

	if (unlikely(!skb))
		return NULL;
	skb_reserve(skb, headroom);
	__skb_put(skb, len);
	ppb_page_lend(pool, page);
	return skb;
}
EXPORT_SYMBOL_GPL(ppb_build_skb);
