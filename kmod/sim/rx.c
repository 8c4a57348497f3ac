// SPDX-License-Identifier: GPL-2.0
/*
 * ppsim RX: descriptor rings, the device side that writes frames into them,
 * the interrupt, and NAPI (DMA sync, XDP, skb, refill).
 */

#include <linux/dma-mapping.h>
#include <linux/etherdevice.h>
#include <linux/filter.h>
#include <linux/bpf_trace.h>
#include <linux/prefetch.h>
#include <ppkit/compat.h>
#include <ppkit/page_pool.h>
#include "ppsim.h"

unsigned int ppsim_frame_max(unsigned int mtu)
{
	return ETH_HLEN + VLAN_HLEN + mtu;
}

unsigned int ppsim_order(unsigned int headroom, unsigned int mtu)
{
	unsigned int truesize = SKB_DATA_ALIGN(headroom + ppsim_frame_max(mtu)) +
				SKB_DATA_ALIGN(sizeof(struct skb_shared_info));

	return get_order(truesize);
}

/* Queue @q's interrupt goes to irq_cpu + q, or to CPU q, wrapped to online CPUs. */
int ppsim_irq_cpu(const struct ppsim_priv *priv, unsigned int q)
{
	int cpu = priv->cfg.irq_cpu >= 0 ? priv->cfg.irq_cpu + q : q;

	cpu %= nr_cpu_ids;
	return cpu_online(cpu) ? cpu : cpumask_first(cpu_online_mask);
}

/* ---- the device ------------------------------------------------------ */

/*
 * What a posted descriptor points at must still be the queue's buffer: the
 * address its refill posted, inside the buffer's page, and that page held
 * (a reference), in no file or process (no ->mapping) and, with a ppkit
 * pool, marked as that pool's.  Anything else is another owner's memory.
 */
static bool ppsim_dev_target_ok(const struct ppsim_rxq *rxq,
				const struct ppsim_desc *d)
{
	const struct ppsim_buf *b = &rxq->buf[rxq->dev_next];
	struct page *page = b->page, *target;

	if (unlikely(!page || d->addr != b->dma + rxq->headroom))
		return false;
	target = virt_to_page(ppsim_bus_to_virt(d->addr));
	if (unlikely(target < page || target >= page + (1U << rxq->order)))
		return false;
	if (unlikely(page_ref_count(page) < 1 || READ_ONCE(page->mapping)))
		return false;
	return !rxq->pp || ppb_page_owned(rxq->pp, page);
}

static void ppsim_dev_target_bad(struct ppsim_rxq *rxq,
				 const struct ppsim_desc *d)
{
	const struct ppsim_buf *b = &rxq->buf[rxq->dev_next];

	WARN_ONCE(1, "ppsim: %s rx%u desc %u: not the queue's buffer (addr %pad, buffer %pad, page %p, refcount %d, mapping %p, mark %p)\n",
		  netdev_name(rxq->priv->dev), rxq->idx, rxq->dev_next, &d->addr,
		  &b->dma, b->page, b->page ? page_ref_count(b->page) : 0,
		  b->page ? READ_ONCE(b->page->mapping) : NULL,
		  b->page ? READ_ONCE(b->page->lru.next) : NULL);
	rxq->active = false;
}

/*
 * The device writes @n copies of @frame into posted descriptors, through
 * their DMA addresses, as a bus master would.  Returns how many it wrote;
 * with @lossy the rest are counted: as too long when the frame does not fit
 * the posted buffers, else as missed, for want of a descriptor (a line-rate
 * generator instead waits for descriptors).  A descriptor that points at
 * anything but its buffer stops the queue's device side with a warning.
 */
unsigned int ppsim_dev_write(struct ppsim_rxq *rxq, const void *frame, u32 len,
			     unsigned int n, bool lossy, u32 hash, u32 hash_type)
{
	bool too_long, active;
	unsigned int done = 0;

	spin_lock_bh(&rxq->dev_lock);
	active = rxq->active;
	too_long = len > rxq->frame_max;
	if (active && !too_long) {
		while (done < n) {
			struct ppsim_desc *d = &rxq->desc[rxq->dev_next];

			/* pairs with the release in ppsim_refill: the address first */
			if (smp_load_acquire(&d->status) != PPSIM_DESC_DEV)
				break;
			if (unlikely(!ppsim_dev_target_ok(rxq, d))) {
				ppsim_dev_target_bad(rxq, d);
				break;
			}
			memcpy(ppsim_bus_to_virt(d->addr), frame, len);
			d->len = len;
			d->hash = hash;
			d->hash_type = hash_type;
			/* pairs with the acquire in ppsim_poll: data and len first */
			smp_store_release(&d->status, PPSIM_DESC_DONE);
			if (++rxq->dev_next == rxq->size)
				rxq->dev_next = 0;
			done++;
		}
	}
	u64_stats_update_begin(&rxq->dev_syncp);
	rxq->dev_written += done;
	if (lossy && active && too_long)
		rxq->dev_too_long += n - done;
	else if (lossy)
		rxq->dev_missed += n - done;
	u64_stats_update_end(&rxq->dev_syncp);
	spin_unlock_bh(&rxq->dev_lock);
	return done;
}

/*
 * The interrupt handler: runs on the queue's IRQ CPU.  The csd is free again
 * (the core released it before calling us); the barrier orders the release
 * of irq_sent before NAPI reads the descriptors of a raiser that found the
 * interrupt pending (it wrote them before its test_and_set_bit()).
 */
void ppsim_irq(void *arg)
{
	struct ppsim_rxq *rxq = arg;

	clear_bit(0, &rxq->irq_sent);
	/* irq_sent clear before NAPI reads: pairs with test_and_set_bit() */
	smp_mb__after_atomic();
	napi_schedule_irqoff(&rxq->napi);
}

/*
 * Raise the queue's interrupt.  Every CPU may raise it (the generator, the
 * peer's xmit on any queue, NAPI's XDP_TX kick), but a csd may be queued by
 * one at a time (smp_call_function_single_async() tests and sets its lock
 * non-atomically: two senders can queue it twice and corrupt the target's
 * call queue), so irq_sent elects the sender; the others find the
 * interrupt pending, which is enough.
 */
void ppsim_raise_irq(struct ppsim_rxq *rxq)
{
	int cpu = READ_ONCE(rxq->irq_cpu);

	if (cpu != raw_smp_processor_id() && cpu_online(cpu)) {
		if (test_and_set_bit(0, &rxq->irq_sent))
			return;
		if (!smp_call_function_single_async(cpu, &rxq->csd))
			return;
		clear_bit(0, &rxq->irq_sent);
	}
	local_bh_disable();
	napi_schedule(&rxq->napi);
	local_bh_enable();
}

/* ---- buffers ------------------------------------------------------------ */

static struct page *ppsim_buf_alloc(struct ppsim_rxq *rxq, dma_addr_t *dma, u32 *off)
{
	struct device *dev = rxq->priv->dmadev;
	struct page *page;

	*off = 0;
	switch (rxq->priv->cfg.pool) {
	case PPSIM_POOL_PPKIT:
		if (rxq->priv->cfg.frag) {
			page = ppb_dev_alloc_frag(rxq->pp, off, rxq->buf_size);
			if (page)
				*dma = ppb_get_dma_addr(page) + *off;
			return page;
		}
		page = ppb_dev_alloc_pages(rxq->pp);
		if (page)
			*dma = ppb_get_dma_addr(page);
		return page;
	case PPSIM_POOL_NATIVE:
		page = page_pool_dev_alloc_pages(rxq->npp);
		if (page)
			*dma = page_pool_get_dma_addr(page);
		return page;
	case PPSIM_POOL_NONE:
		break;
	}
	page = alloc_pages_node(rxq->nid, GFP_ATOMIC | __GFP_NOWARN, rxq->order);
	if (!page)
		return NULL;
	*dma = dma_map_page_attrs(dev, page, 0, PAGE_SIZE << rxq->order, rxq->dir,
				  DMA_ATTR_SKIP_CPU_SYNC);
	if (dma_mapping_error(dev, *dma)) {
		__free_pages(page, rxq->order);
		return NULL;
	}
	/* what recycling saves: a page and a mapping for every packet */
	u64_stats_update_begin(&rxq->st.syncp);
	rxq->st.page_allocs++;
	rxq->st.dma_maps++;
	u64_stats_update_end(&rxq->st.syncp);
	dma_sync_single_range_for_device(dev, *dma, rxq->headroom, rxq->max_len, rxq->dir);
	return page;
}

/* Give a buffer back: @sync is the length the device may have written. */
void ppsim_buf_free(struct ppsim_rxq *rxq, struct page *page, dma_addr_t dma,
		    unsigned int sync, bool napi)
{
	bool direct = napi && rxq->priv->cfg.cache == PPSIM_CACHE_LIFO;

	if (rxq->priv->cfg.sync == PPSIM_SYNC_FULL)
		sync = -1;
	switch (rxq->priv->cfg.pool) {
	case PPSIM_POOL_PPKIT:
		ppb_put_page(rxq->pp, page, sync, direct);
		return;
	case PPSIM_POOL_NATIVE:
		page_pool_put_page(rxq->npp, page, sync, direct);
		return;
	case PPSIM_POOL_NONE:
		break;
	}
	dma_unmap_page_attrs(rxq->priv->dmadev, dma, PAGE_SIZE << rxq->order, rxq->dir,
			     DMA_ATTR_SKIP_CPU_SYNC);
	__free_pages(page, rxq->order);
}

static unsigned int ppsim_refill(struct ppsim_rxq *rxq)
{
	/* far from the CPU that takes the queue's interrupt and runs its NAPI */
	int nid = cpu_to_mem(READ_ONCE(rxq->irq_cpu));
	unsigned int n = 0, far = 0;

	while (READ_ONCE(rxq->desc[rxq->ntu].status) == PPSIM_DESC_EMPTY) {
		struct ppsim_buf *b = &rxq->buf[rxq->ntu];
		struct ppsim_desc *d = &rxq->desc[rxq->ntu];

		b->page = ppsim_buf_alloc(rxq, &b->dma, &b->off);
		if (unlikely(!b->page)) {
			u64_stats_update_begin(&rxq->st.syncp);
			rxq->st.alloc_fail++;
			u64_stats_update_end(&rxq->st.syncp);
			break;
		}
		if (unlikely(page_to_nid(b->page) != nid))
			far++;
		d->addr = b->dma + rxq->headroom;
		/* the device reads the address only once it owns the descriptor */
		smp_store_release(&d->status, PPSIM_DESC_DEV);
		if (++rxq->ntu == rxq->size)
			rxq->ntu = 0;
		n++;
	}
	if (far) {
		u64_stats_update_begin(&rxq->st.syncp);
		rxq->st.far_pages += far;
		u64_stats_update_end(&rxq->st.syncp);
	}
	if (n)
		ppsim_gen_kick(rxq->priv);
	return n;
}

/* The last refill stopped at a failed allocation, not at a posted descriptor. */
static bool ppsim_refill_short(const struct ppsim_rxq *rxq)
{
	return READ_ONCE(rxq->desc[rxq->ntu].status) == PPSIM_DESC_EMPTY;
}

/* ---- XDP_TX and XDP_REDIRECT ---------------------------------------------- */

/*
 * XDP_TX: out of the pair through this queue's XDP TX ring; the page stays
 * there, in flight, until the device completes it and it is recycled.  A
 * full peer ring loses the frame on the wire (the peer's missed), a full
 * XDP TX ring or no peer fails the action.
 */
static bool ppsim_xdp_tx(struct ppsim_rxq *rxq, struct xdp_buff *xdp, struct page *page,
			 dma_addr_t dma, unsigned int used)
{
	unsigned int off = xdp->data - xdp->data_hard_start;
	unsigned int len = xdp->data_end - xdp->data;
	struct net_device *peer;
	bool ok, was_empty;

	peer = rcu_dereference(rxq->priv->peer);
	if (!peer || !netif_running(peer))
		return false;
	/* the program may have written the frame: the device must see it */
	dma_sync_single_range_for_device(rxq->priv->dmadev, dma, off, len, rxq->dir);
	spin_lock_bh(&rxq->txc_lock);
	ok = ppsim_txc_push(rxq, PPSIM_TXC_PAGE, page, dma, used, &was_empty);
	if (ok)
		ppsim_wire(netdev_priv(peer), ppsim_bus_to_virt(dma + off), len,
			   &rxq->xdp_tx_kick);
	spin_unlock_bh(&rxq->txc_lock);
	return ok;
}

/*
 * XDP_REDIRECT: the page leaves as an xdp_frame and comes back through the
 * queue's memory model: a ppkit page is lent first (xdp_return_frame() puts
 * it, and the pool reclaims it as from the stack); a native pool's page
 * returns to its pool; a page of no pool is unmapped and freed by its last
 * user.  False: the frame was not taken and the page is released here.
 */
static bool ppsim_xdp_redirect(struct ppsim_rxq *rxq, struct xdp_buff *xdp,
			       struct bpf_prog *prog, struct page *page, dma_addr_t dma,
			       unsigned int used)
{
	struct ppsim_priv *priv = rxq->priv;

	switch (priv->cfg.pool) {
	case PPSIM_POOL_PPKIT:
		/* before the redirect: a target may copy and free at once (AF_XDP) */
		ppb_page_lend(rxq->pp, page);
		if (!xdp_do_redirect(priv->dev, xdp, prog))
			return true;
		put_page(page);
		return false;
	case PPSIM_POOL_NATIVE:
		if (!xdp_do_redirect(priv->dev, xdp, prog))
			return true;
		ppsim_buf_free(rxq, page, dma, used, true);
		return false;
	case PPSIM_POOL_NONE:
		break;
	}
	dma_unmap_page_attrs(priv->dmadev, dma, PAGE_SIZE << rxq->order, rxq->dir,
			     DMA_ATTR_SKIP_CPU_SYNC);
	if (!xdp_do_redirect(priv->dev, xdp, prog))
		return true;
	__free_pages(page, rxq->order);
	return false;
}

/* ---- NAPI ------------------------------------------------------------------ */

static struct sk_buff *ppsim_skb(struct ppsim_rxq *rxq, struct page *page, void *va,
				 dma_addr_t dma, unsigned int off, unsigned int len)
{
	struct ppsim_priv *priv = rxq->priv;
	struct sk_buff *skb;

	if (priv->cfg.rx_mode == PPSIM_RX_COPY) {
		skb = napi_alloc_skb(&rxq->napi, len);
		if (likely(skb)) {
			skb_put_data(skb, va + off, len);
			u64_stats_update_begin(&rxq->st.syncp);
			rxq->st.copy_bytes += len;
			u64_stats_update_end(&rxq->st.syncp);
		}
		ppsim_buf_free(rxq, page, dma, off + len - rxq->headroom, true);
		return skb;
	}

	switch (priv->cfg.pool) {
	case PPSIM_POOL_PPKIT:
		/* as with the kernel's pool: the NAPI skb cache, then lend its one page */
		skb = ppb_napi_build_skb(va, rxq->buf_size);
		if (likely(skb)) {
			skb_reserve(skb, off);
			__skb_put(skb, len);
			ppb_page_lend(rxq->pp, page);
		}
		break;
	case PPSIM_POOL_NATIVE:
		skb = ppb_napi_build_skb(va, PAGE_SIZE << rxq->order);
		if (likely(skb)) {
			skb_reserve(skb, off);
			__skb_put(skb, len);
			ppb_native_skb_mark(rxq->npp, skb, page);
		}
		break;
	default:
		dma_unmap_page_attrs(priv->dmadev, dma, PAGE_SIZE << rxq->order, rxq->dir,
				     DMA_ATTR_SKIP_CPU_SYNC);
		skb = ppb_napi_build_skb(va, PAGE_SIZE << rxq->order);
		if (likely(skb)) {
			skb_reserve(skb, off);
			__skb_put(skb, len);
		} else {
			__free_pages(page, rxq->order);
		}
		return skb;
	}
	if (unlikely(!skb))
		ppsim_buf_free(rxq, page, dma, off + len - rxq->headroom, true);
	return skb;
}

static void ppsim_rx_one(struct ppsim_rxq *rxq, struct bpf_prog *prog, u32 i,
			 const struct ppsim_desc *d)
{
	struct ppsim_priv *priv = rxq->priv;
	struct ppsim_buf *b = &rxq->buf[i];
	struct page *page = b->page;
	dma_addr_t dma = b->dma;
	unsigned int off = rxq->headroom;
	void *va = page_address(page) + b->off;
	u32 len = d->len;
	struct sk_buff *skb;

	b->page = NULL;
	if (priv->cfg.prefetch == PPSIM_PREFETCH_BEFORE_SYNC)
		net_prefetch(va + off);
	dma_sync_single_range_for_cpu(priv->dmadev, dma, off, len, rxq->dir);
	if (priv->cfg.prefetch == PPSIM_PREFETCH_AFTER_SYNC)
		net_prefetch(va + off);

	u64_stats_update_begin(&rxq->st.syncp);
	rxq->st.packets++;
	rxq->st.bytes += len;
	u64_stats_update_end(&rxq->st.syncp);

	if (prog) {
		bool gone = false;
		struct xdp_buff xdp;
		unsigned int used;
		u32 act;

		xdp_init_buff(&xdp, rxq->buf_size, &rxq->xdp_rxq);
		xdp_prepare_buff(&xdp, va, off, len, false);
		if (likely(READ_ONCE(ppsim_xdp_dispatcher)))
			act = bpf_prog_run_xdp(prog, &xdp);
		else
			act = ppb_bpf_prog_run(prog, &xdp);
		/* what the device may have to sync back: all the CPU touched */
		used = max_t(unsigned int, off + len, xdp.data_end - xdp.data_hard_start) -
		       rxq->headroom;
		u64_stats_update_begin(&rxq->st.syncp);
		switch (act) {
		case XDP_PASS:
			rxq->st.xdp_pass++;
			break;
		case XDP_TX:
			gone = ppsim_xdp_tx(rxq, &xdp, page, dma, used);
			if (gone) {
				rxq->st.xdp_tx++;
			} else {
				rxq->st.xdp_tx_err++;
				trace_xdp_exception(priv->dev, prog, act);
			}
			break;
		case XDP_REDIRECT:
			/* the page is gone either way */
			gone = true;
			if (ppsim_xdp_redirect(rxq, &xdp, prog, page, dma, used)) {
				rxq->st.xdp_redirect++;
				rxq->xdp_flush = true;
			} else {
				rxq->st.xdp_redirect_err++;
				trace_xdp_exception(priv->dev, prog, act);
			}
			break;
		default:
			ppb_warn_invalid_xdp_action(priv->dev, prog, act);
			fallthrough;
		case XDP_ABORTED:
			trace_xdp_exception(priv->dev, prog, act);
			rxq->st.xdp_aborted++;
			break;
		case XDP_DROP:
			rxq->st.xdp_drop++;
			break;
		}
		u64_stats_update_end(&rxq->st.syncp);
		if (act != XDP_PASS) {
			if (!gone)
				ppsim_buf_free(rxq, page, dma, used, true);
			return;
		}
		off = xdp.data - xdp.data_hard_start;
		len = xdp.data_end - xdp.data;
	}

	skb = ppsim_skb(rxq, page, va, dma, off, len);
	if (unlikely(!skb)) {
		u64_stats_update_begin(&rxq->st.syncp);
		rxq->st.dropped++;
		u64_stats_update_end(&rxq->st.syncp);
		return;
	}
	if (d->hash)
		skb_set_hash(skb, d->hash, d->hash_type);
	skb->protocol = eth_type_trans(skb, priv->dev);
	skb_record_rx_queue(skb, rxq->idx);
	napi_gro_receive(&rxq->napi, skb);
}

int ppsim_poll(struct napi_struct *napi, int budget)
{
	struct ppsim_rxq *rxq = container_of(napi, struct ppsim_rxq, napi);
	struct bpf_prog *prog;
	bool pending;
	int done = 0;

	if (rxq->priv->cfg.numa_rule) {
		if (rxq->pp)
			ppb_update_nid(rxq->pp, numa_mem_id());
		else if (rxq->npp)
			page_pool_nid_changed(rxq->npp, numa_mem_id());
		rxq->nid = numa_mem_id();
	}

	rcu_read_lock();
	prog = rcu_dereference(rxq->priv->xdp_prog);
	while (done < budget) {
		struct ppsim_desc *d = &rxq->desc[rxq->ntc];

		/* pairs with the release in ppsim_dev_write */
		if (smp_load_acquire(&d->status) != PPSIM_DESC_DONE)
			break;
		ppsim_rx_one(rxq, prog, rxq->ntc, d);
		WRITE_ONCE(d->status, PPSIM_DESC_EMPTY);
		if (++rxq->ntc == rxq->size)
			rxq->ntc = 0;
		if ((++done & 15) == 0)
			ppsim_refill(rxq);
	}
	rcu_read_unlock();
	ppsim_refill(rxq);
	/*
	 * No page for an empty descriptor: poll again soon rather than wait for
	 * an interrupt, which a ring with nothing posted would never raise.
	 */
	if (ppsim_refill_short(rxq))
		done = budget;

	if (rxq->xdp_flush) {
		xdp_do_flush();
		rxq->xdp_flush = false;
	}
	if (rxq->xdp_tx_kick) {
		ppsim_raise_irq(rxq->xdp_tx_kick);
		rxq->xdp_tx_kick = NULL;
	}
	/* TX completions that are due; the others get the timer */
	pending = ppsim_txc_clean(rxq);
	if (done < budget && napi_complete_done(napi, done) && pending)
		ppsim_txc_arm(rxq);
	return done;
}

/* ---- bringing rings up and down -------------------------------------------- */

static int ppsim_pool_create(struct ppsim_rxq *rxq)
{
	struct ppsim_priv *priv = rxq->priv;

	switch (priv->cfg.pool) {
	case PPSIM_POOL_PPKIT: {
		struct ppb_params p = {
			.flags = PPB_FLAG_DMA_MAP | PPB_FLAG_DMA_SYNC_DEV |
				 (priv->cfg.frag ? PPB_FLAG_PAGE_FRAG : 0),
			.order = rxq->order,
			.pool_size = rxq->size,
			.nid = rxq->nid,
			.dev = priv->dmadev,
			.napi = &rxq->napi,
			.dma_dir = rxq->dir,
			/* fragments: the last one back syncs the page whole */
			.offset = priv->cfg.frag ? 0 : rxq->headroom,
			.max_len = priv->cfg.frag ? PAGE_SIZE << rxq->order : rxq->max_len,
			.owner = PPSIM_DRV_NAME,
			.netdev = priv->dev,
			.queue = rxq->idx,
		};
		struct ppb_pool *pool = ppb_pool_create(&p);

		if (IS_ERR(pool))
			return PTR_ERR(pool);
		rxq->pp = pool;
		return xdp_rxq_info_reg_mem_model(&rxq->xdp_rxq, MEM_TYPE_PAGE_SHARED, NULL);
	}
	case PPSIM_POOL_NATIVE: {
		struct page_pool_params p = {
			.flags = PP_FLAG_DMA_MAP | PP_FLAG_DMA_SYNC_DEV,
			.order = rxq->order,
			.pool_size = rxq->size,
			.nid = rxq->nid,
			.dev = priv->dmadev,
			.dma_dir = rxq->dir,
			.offset = rxq->headroom,
			.max_len = rxq->max_len,
		};
		struct page_pool *pool;

		/* the netdev family lists the pool with its device (6.8+) */
		ppb_pp_params_set_netdev(&p, priv->dev, &rxq->napi);
		pool = page_pool_create(&p);
		if (IS_ERR(pool))
			return PTR_ERR(pool);
		rxq->npp = pool;
		return xdp_rxq_info_reg_mem_model(&rxq->xdp_rxq, MEM_TYPE_PAGE_POOL, pool);
	}
	case PPSIM_POOL_NONE:
		break;
	}
	return xdp_rxq_info_reg_mem_model(&rxq->xdp_rxq, MEM_TYPE_PAGE_ORDER0, NULL);
}

static void ppsim_rxq_free(struct ppsim_rxq *rxq)
{
	u32 i;

	if (rxq->desc) {
		for (i = 0; i < rxq->size; i++) {
			struct ppsim_buf *b = &rxq->buf[i];

			if (b->page)
				ppsim_buf_free(rxq, b->page, b->dma, rxq->max_len, false);
			b->page = NULL;
		}
	}
	if (rxq->xdp_rxq_reg) {
		xdp_rxq_info_unreg(&rxq->xdp_rxq);
		rxq->xdp_rxq_reg = false;
	}
	if (rxq->pp)
		ppb_pool_destroy(rxq->pp);
	if (rxq->npp)
		page_pool_destroy(rxq->npp);
	rxq->pp = NULL;
	rxq->npp = NULL;
	kvfree(rxq->desc);
	kvfree(rxq->buf);
	kvfree(rxq->txc);
	rxq->desc = NULL;
	rxq->buf = NULL;
	rxq->txc = NULL;
}

static int ppsim_rxq_alloc(struct ppsim_rxq *rxq, struct bpf_prog *prog)
{
	struct ppsim_priv *priv = rxq->priv;
	unsigned int mtu = priv->dev->mtu;
	int err;

	rxq->size = priv->cfg.ring_size;
	rxq->ntc = 0;
	rxq->ntu = 0;
	rxq->dev_next = 0;
	rxq->xdp_tx_kick = NULL;
	rxq->irq_cpu = ppsim_irq_cpu(priv, rxq->idx);
	rxq->headroom = prog ? XDP_PACKET_HEADROOM : NET_SKB_PAD + NET_IP_ALIGN;
	rxq->order = prog ? 0 : ppsim_order(rxq->headroom, mtu);
	rxq->frame_max = ppsim_frame_max(mtu);
	rxq->buf_size = priv->cfg.frag ?
			SKB_DATA_ALIGN(rxq->headroom + rxq->frame_max) +
			SKB_DATA_ALIGN(sizeof(struct skb_shared_info)) :
			PAGE_SIZE << rxq->order;
	rxq->dir = prog ? DMA_BIDIRECTIONAL : DMA_FROM_DEVICE;
	rxq->max_len = priv->cfg.sync == PPSIM_SYNC_FULL ?
		       (PAGE_SIZE << rxq->order) - rxq->headroom : rxq->frame_max;
	rxq->nid = priv->cfg.numa_rule ? cpu_to_node(rxq->irq_cpu) :
					 dev_to_node(priv->dmadev);

	rxq->desc = kvcalloc(rxq->size, sizeof(*rxq->desc), GFP_KERNEL);
	rxq->buf = kvcalloc(rxq->size, sizeof(*rxq->buf), GFP_KERNEL);
	rxq->txc = kvcalloc(rxq->size, sizeof(*rxq->txc), GFP_KERNEL);
	rxq->txc_head = 0;
	rxq->txc_count = 0;
	rxq->xdp_flush = false;
	if (!rxq->desc || !rxq->buf || !rxq->txc) {
		err = -ENOMEM;
		goto fail;
	}
	err = ppb_xdp_rxq_info_reg(&rxq->xdp_rxq, priv->dev, rxq->idx, rxq->napi.napi_id);
	if (err)
		goto fail;
	rxq->xdp_rxq_reg = true;
	err = ppsim_pool_create(rxq);
	if (err)
		goto fail;
	local_bh_disable();
	ppsim_refill(rxq);
	local_bh_enable();
	return 0;
fail:
	ppsim_rxq_free(rxq);
	return err;
}

/* Under rtnl. */
int ppsim_rings_up(struct ppsim_priv *priv)
{
	struct bpf_prog *prog = rtnl_dereference(priv->xdp_prog);
	unsigned int q;
	int err;

	for (q = 0; q < priv->num_rx; q++) {
		err = ppsim_rxq_alloc(&priv->rxq[q], prog);
		if (err)
			goto fail;
	}
	for (q = 0; q < priv->num_rx; q++) {
		struct ppsim_rxq *rxq = &priv->rxq[q];

		napi_enable(&rxq->napi);
		spin_lock_bh(&rxq->txc_lock);
		rxq->txc_open = true;
		spin_unlock_bh(&rxq->txc_lock);
		spin_lock_bh(&rxq->dev_lock);
		rxq->active = true;
		spin_unlock_bh(&rxq->dev_lock);
		/* The first fill fell short (no memory): NAPI retries it. */
		if (ppsim_refill_short(rxq))
			ppsim_raise_irq(rxq);
	}
	priv->rings_up = true;
	ppsim_gen_kick(priv);
	return 0;
fail:
	while (q--)
		ppsim_rxq_free(&priv->rxq[q]);
	return err;
}

static void ppsim_nop(void *arg)
{
}

/* Under rtnl.  Every page goes back to its pool; the pools are destroyed. */
void ppsim_rings_down(struct ppsim_priv *priv)
{
	unsigned int q;

	if (!priv->rings_up)
		return;
	for (q = 0; q < priv->num_rx; q++) {
		struct ppsim_rxq *rxq = &priv->rxq[q];

		spin_lock_bh(&rxq->dev_lock);
		rxq->active = false;
		spin_unlock_bh(&rxq->dev_lock);
		spin_lock_bh(&rxq->txc_lock);
		rxq->txc_open = false;
		spin_unlock_bh(&rxq->txc_lock);
	}
	/* interrupts already sent have run once these IPIs come back */
	on_each_cpu(ppsim_nop, NULL, 1);
	for (q = 0; q < priv->num_rx; q++)
		napi_disable(&priv->rxq[q].napi);
	/* sent buffers complete before their pools go */
	for (q = 0; q < priv->num_rx; q++)
		ppsim_txc_drain(&priv->rxq[q]);
	for (q = 0; q < priv->num_rx; q++)
		ppsim_rxq_free(&priv->rxq[q]);
	priv->rings_up = false;
}
