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
 * pages.  A page the stack keeps too long (a socket nobody reads, a clone
 * in a capture buffer) is orphaned: unmapped, the pool's references are
 * dropped, and the stack's last put_page() frees it like any other page.
 * Nothing ever waits for the stack.
 */

#include <linux/module.h>
#include <linux/skbuff.h>
#include <linux/jiffies.h>
#include "pool.h"

unsigned int ppb_lent_count(const struct ppb_pool *pool)
{
	return pool->lent_tail - pool->lent_head;
}

static void ppb_orphan(struct ppb_pool *pool, struct page *page)
{
	ppb_cinc(pool, PPB_C_ORPHANED);
	ppb_drop_pool_refs(pool, page, PPB_BIAS - 1);
}

/*
 * Take back up to @budget lent pages, oldest first.  A page whose count is
 * back at the pool's share is reused; one held past the lend timeout (or
 * any, with @force) is orphaned; the first page still held and not yet too
 * old stops the walk, so pages come back in the order they went out.
 * @refill: called by a refill of the (empty) cache, which may take them.
 */
unsigned int ppb_reclaim(struct ppb_pool *pool, unsigned int budget, bool force,
			 bool refill)
{
	unsigned long timeout = msecs_to_jiffies(READ_ONCE(ppb_lend_timeout_ms));
	unsigned int done = 0;

	while (done < budget && pool->lent_head != pool->lent_tail) {
		struct ppb_lent *e = &pool->lent[pool->lent_head & pool->lent_mask];
		struct page *page = e->page;

		if (page_ref_count(page) == PPB_BIAS - 1) {
			/*
			 * Only the pool holds it, and nobody can take a new
			 * reference without holding one: safe to reuse.
			 */
			page_ref_inc(page);
			ppb_recycle_reclaimed(pool, page, refill);
		} else if (force || time_after_eq(jiffies, e->since + timeout)) {
			ppb_orphan(pool, page);
		} else {
			break;
		}
		e->page = NULL;
		pool->lent_head++;
		done++;
	}
	return done;
}

void ppb_page_lend(struct ppb_pool *pool, struct page *page)
{
	struct ppb_lent *e;

	/* FIFO full: the oldest page has been out longest; take it back or let it go. */
	if (unlikely(ppb_lent_count(pool) > pool->lent_mask) &&
	    !ppb_reclaim(pool, 1, false, false))
		ppb_reclaim(pool, 1, true, false);

	e = &pool->lent[pool->lent_tail & pool->lent_mask];
	e->page = page;
	e->since = jiffies;
	pool->lent_tail++;
	ppb_cinc(pool, PPB_C_LENT);
}
EXPORT_SYMBOL_GPL(ppb_page_lend);

/* Every page of @skb (head and frags) comes from @pool and goes up the stack. */
void ppb_skb_mark(struct ppb_pool *pool, struct sk_buff *skb)
{
	struct skb_shared_info *shinfo = skb_shinfo(skb);
	int i;

	if (skb->head_frag)
		ppb_page_lend(pool, virt_to_head_page(skb->head));
	for (i = 0; i < shinfo->nr_frags; i++)
		ppb_page_lend(pool, skb_frag_page(&shinfo->frags[i]));
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
