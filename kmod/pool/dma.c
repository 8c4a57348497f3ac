// SPDX-License-Identifier: GPL-2.0
/*
 * pp_backport: DMA.  A page is mapped once, when it enters the pool, and
 * unmapped once, when it leaves; in between it is synced for the device
 * each time it goes back to it, only as far as the device may have
 * written.  The syncs of the allocating context's direct returns are
 * inline in pool.h (ppb_sync_direct); everything else is here.
 */

#include <linux/module.h>
#include <linux/mm.h>
#include <linux/dma-mapping.h>
#include "pool.h"

/* The sync for the device from any context: counted per CPU. */
void ppb_sync_for_device(struct ppb_pool *pool, struct page *page, unsigned int len)
{
	len = ppb_sync_len(pool, len);
	ppb_pinc(pool, PPB_P_SYNC);
	ppb_padd(pool, PPB_P_SYNC_BYTES, len);
	__ppb_sync_for_device(pool, page, len);
}

static bool ppb_page_set_dma(struct page *page, dma_addr_t dma)
{
	if (sizeof(dma_addr_t) > sizeof(unsigned long)) {
		if (dma >> PAGE_SHIFT > ULONG_MAX || offset_in_page(dma))
			return false;
		set_page_private(page, dma >> PAGE_SHIFT);
	} else {
		set_page_private(page, dma);
	}
	return true;
}

/*
 * Map a fresh page for the pool's device, if the pool maps, and hand it to
 * the device clean: it may hold anything the device must not see stale.
 */
bool ppb_page_map(struct ppb_pool *pool, struct page *page)
{
	dma_addr_t dma;

	if (!(pool->p.flags & PPB_FLAG_DMA_MAP))
		return true;
	dma = dma_map_page_attrs(pool->p.dev, page, 0, pool->page_bytes, pool->p.dma_dir,
				 DMA_ATTR_SKIP_CPU_SYNC | DMA_ATTR_WEAK_ORDERING);
	if (dma_mapping_error(pool->p.dev, dma))
		return false;
	if (!ppb_page_set_dma(page, dma)) {
		dma_unmap_page_attrs(pool->p.dev, dma, pool->page_bytes,
				     pool->p.dma_dir, DMA_ATTR_SKIP_CPU_SYNC);
		return false;
	}
	if (pool->p.flags & PPB_FLAG_DMA_SYNC_DEV)
		ppb_sync_for_device(pool, page, pool->p.max_len);
	return true;
}

/*
 * Unmap a page the pool mapped, once: a page lent to the stack is unmapped
 * at destroy and marked so (ppb_unmap_lent), and not again when it leaves.
 * Unmapped without a CPU sync: whatever the stack reads was synced when it
 * was handed over, and a bounce copy now could overwrite what it has changed.
 */
void ppb_page_unmap(struct ppb_pool *pool, struct page *page)
{
	if (!(pool->p.flags & PPB_FLAG_DMA_MAP) || page->index == PPB_PAGE_UNMAPPED)
		return;
	dma_unmap_page_attrs(pool->p.dev, ppb_get_dma_addr(page), pool->page_bytes,
			     pool->p.dma_dir, DMA_ATTR_SKIP_CPU_SYNC | DMA_ATTR_WEAK_ORDERING);
	page->index = PPB_PAGE_UNMAPPED;
}
