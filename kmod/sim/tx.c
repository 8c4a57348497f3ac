// SPDX-License-Identifier: GPL-2.0
/*
 * ppsim TX: the wire between the ports of a pair, the receiving device's
 * RSS, the XDP TX rings with their delayed completions, and ndo_xdp_xmit
 * (the target of XDP_REDIRECT).
 */

#include <linux/dma-mapping.h>
#include <linux/etherdevice.h>
#include <linux/if_vlan.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/jhash.h>
#include <net/ip.h>
#include <net/xdp.h>
#include "ppsim.h"

/* Fixed, so that a flow lands on the same queue in every run of a test. */
#define PPSIM_RSS_SEED	0x5050534d

/* ---- RSS ------------------------------------------------------------------ */

/*
 * The hash a receiving NIC computes (Toeplitz there, jhash here): IPv4 or
 * IPv6 addresses, and the ports of TCP and UDP unless the packet is a
 * fragment.  Anything else hashes to 0: queue 0, as on most NICs.
 */
static u32 ppsim_rss_hash(const u8 *frame, u32 len, u32 *type)
{
	unsigned int off = ETH_HLEN, n = 0;
	u32 w[9];
	__be16 proto;
	u8 l4 = 0;

	if (len < ETH_HLEN)
		return 0;
	proto = ((const struct ethhdr *)frame)->h_proto;
	if (proto == htons(ETH_P_8021Q) && len >= VLAN_ETH_HLEN) {
		proto = ((const struct vlan_ethhdr *)frame)->h_vlan_encapsulated_proto;
		off = VLAN_ETH_HLEN;
	}
	if (proto == htons(ETH_P_IP)) {
		const struct iphdr *iph = (const void *)(frame + off);

		if (len < off + sizeof(*iph) || iph->ihl < 5 || len < off + iph->ihl * 4)
			return 0;
		memcpy(w, &iph->addrs, sizeof(iph->addrs));
		n = 2;
		if (!ip_is_fragment(iph))
			l4 = iph->protocol;
		off += iph->ihl * 4;
	} else if (proto == htons(ETH_P_IPV6)) {
		const struct ipv6hdr *ip6 = (const void *)(frame + off);

		if (len < off + sizeof(*ip6))
			return 0;
		memcpy(w, &ip6->addrs, sizeof(ip6->addrs));
		n = 8;
		l4 = ip6->nexthdr;
		off += sizeof(*ip6);
	} else {
		return 0;
	}
	*type = PKT_HASH_TYPE_L3;
	if ((l4 == IPPROTO_TCP || l4 == IPPROTO_UDP) && len >= off + 4) {
		memcpy(&w[n++], frame + off, 4);
		*type = PKT_HASH_TYPE_L4;
	}
	return jhash2(w, n, PPSIM_RSS_SEED) ?: 1;
}

/* The RX queue of @priv that a frame goes to, and its hash for the descriptor. */
struct ppsim_rxq *ppsim_rss(struct ppsim_priv *priv, const void *frame, u32 len, u32 *hash,
			    u32 *hash_type)
{
	*hash_type = PKT_HASH_TYPE_NONE;
	*hash = ppsim_rss_hash(frame, len, hash_type);
	return &priv->rxq[reciprocal_scale(*hash, priv->num_rx)];
}

/*
 * The wire: the frame lands in @to's RX ring (or is lost there, counted as
 * its missed).  @kick batches interrupts: the queue written last is raised
 * by the caller; NULL raises at once.
 */
bool ppsim_wire(struct ppsim_priv *to, const void *frame, u32 len, struct ppsim_rxq **kick)
{
	struct ppsim_rxq *rxq;
	u32 hash, type;

	rxq = ppsim_rss(to, frame, len, &hash, &type);
	if (ppsim_dev_write(rxq, frame, len, 1, true, hash, type) != 1)
		return false;
	if (!kick) {
		ppsim_raise_irq(rxq);
	} else if (*kick != rxq) {
		if (*kick)
			ppsim_raise_irq(*kick);
		*kick = rxq;
	}
	return true;
}

/* ---- ndo_start_xmit ---------------------------------------------------------- */

/* The peer's device DMA-reads our frame into its RX ring; the skb completes at once. */
netdev_tx_t ppsim_xmit(struct sk_buff *skb, struct net_device *dev)
{
	struct ppsim_priv *priv = netdev_priv(dev);
	struct ppsim_tq_stats *ts = &priv->txs[skb_get_queue_mapping(skb) % priv->num_tx];
	unsigned int len = skb->len;
	struct net_device *peer;
	bool sent = false;
	dma_addr_t dma;

	rcu_read_lock();
	peer = rcu_dereference(priv->peer);
	if (peer && netif_running(peer) && !skb_linearize(skb)) {
		dma = dma_map_single(priv->dmadev, skb->data, len, DMA_TO_DEVICE);
		if (!dma_mapping_error(priv->dmadev, dma)) {
			sent = ppsim_wire(netdev_priv(peer), ppsim_bus_to_virt(dma), len, NULL);
			dma_unmap_single(priv->dmadev, dma, len, DMA_TO_DEVICE);
		}
	}
	rcu_read_unlock();

	u64_stats_update_begin(&ts->syncp);
	if (sent) {
		ts->packets++;
		ts->bytes += len;
	} else {
		ts->dropped++;
	}
	u64_stats_update_end(&ts->syncp);
	if (sent)
		dev_consume_skb_any(skb);
	else
		dev_kfree_skb_any(skb);
	return NETDEV_TX_OK;
}

/* ---- XDP TX rings ------------------------------------------------------------ */

/*
 * Under txc_lock.  Queue an entry the device completes tx_delay_us from now;
 * false if the ring is closed or full.  @was_empty: the caller must make
 * the queue's NAPI see the entry (it only arms the timer from a poll).
 */
bool ppsim_txc_push(struct ppsim_rxq *rxq, u32 kind, void *ptr, dma_addr_t dma, u32 len,
		    bool *was_empty)
{
	struct ppsim_txc *e;

	lockdep_assert_held(&rxq->txc_lock);
	if (!rxq->txc_open || rxq->txc_count == rxq->size)
		return false;
	*was_empty = !rxq->txc_count;
	e = &rxq->txc[(rxq->txc_head + rxq->txc_count) % rxq->size];
	e->ptr = ptr;
	e->dma = dma;
	e->len = len;
	e->kind = kind;
	e->due = ktime_get_ns() +
		 (u64)READ_ONCE(rxq->priv->cfg.tx_delay_us) * NSEC_PER_USEC;
	rxq->txc_count++;
	return true;
}

/* The device is done with @e: the buffer goes back where it came from. */
static void ppsim_txc_complete(struct ppsim_rxq *rxq, struct ppsim_txc *e, bool napi)
{
	if (e->kind == PPSIM_TXC_PAGE) {
		ppsim_buf_free(rxq, e->ptr, e->dma, e->len, napi);
		return;
	}
	dma_unmap_single(rxq->priv->dmadev, e->dma, e->len, DMA_TO_DEVICE);
	/* another queue's page: never into its pool's NAPI cache from here */
	xdp_return_frame(e->ptr);
}

/*
 * NAPI: complete the entries that are due, oldest first (a TX ring
 * completes in order).  Returns true if entries remain.
 */
bool ppsim_txc_clean(struct ppsim_rxq *rxq)
{
	u64 now = ktime_get_ns();
	unsigned int n = 0;
	bool left;

	/* a producer that fills an empty ring raises the interrupt: polled again */
	if (!READ_ONCE(rxq->txc_count))
		return false;
	spin_lock_bh(&rxq->txc_lock);
	while (rxq->txc_count) {
		struct ppsim_txc *e = &rxq->txc[rxq->txc_head];

		if (e->due > now)
			break;
		ppsim_txc_complete(rxq, e, true);
		if (++rxq->txc_head == rxq->size)
			rxq->txc_head = 0;
		rxq->txc_count--;
		n++;
	}
	if (n) {
		u64_stats_update_begin(&rxq->xs.syncp);
		rxq->xs.completed += n;
		u64_stats_update_end(&rxq->xs.syncp);
	}
	left = rxq->txc_count;
	spin_unlock_bh(&rxq->txc_lock);
	return left;
}

/* NAPI, done with entries left: the completion interrupt when the oldest is due. */
void ppsim_txc_arm(struct ppsim_rxq *rxq)
{
	u64 due = 0;

	spin_lock_bh(&rxq->txc_lock);
	if (rxq->txc_count)
		due = rxq->txc[rxq->txc_head].due;
	spin_unlock_bh(&rxq->txc_lock);
	if (due)
		hrtimer_start(&rxq->txc_timer, ns_to_ktime(due), HRTIMER_MODE_ABS);
}

enum hrtimer_restart ppsim_txc_timer(struct hrtimer *t)
{
	struct ppsim_rxq *rxq = container_of(t, struct ppsim_rxq, txc_timer);

	napi_schedule(&rxq->napi);
	return HRTIMER_NORESTART;
}

/* Rings going down, NAPI disabled: every entry completes now. */
void ppsim_txc_drain(struct ppsim_rxq *rxq)
{
	hrtimer_cancel(&rxq->txc_timer);
	spin_lock_bh(&rxq->txc_lock);
	rxq->txc_open = false;
	while (rxq->txc && rxq->txc_count) {
		ppsim_txc_complete(rxq, &rxq->txc[rxq->txc_head], false);
		if (++rxq->txc_head == rxq->size)
			rxq->txc_head = 0;
		rxq->txc_count--;
	}
	spin_unlock_bh(&rxq->txc_lock);
}

/* ---- ndo_xdp_xmit: frames redirected to this device ------------------------ */

/*
 * Frames of another queue (of this or another device) go out of this port
 * through the XDP TX ring of queue (CPU % queues), mapped to the device
 * until they complete.  Returns how many were taken; the core frees the
 * rest.
 */
int ppsim_xdp_xmit(struct net_device *dev, int n, struct xdp_frame **frames, u32 flags)
{
	struct ppsim_priv *priv = netdev_priv(dev);
	struct ppsim_rxq *rxq = &priv->rxq[raw_smp_processor_id() % priv->num_rx];
	struct ppsim_rxq *kick = NULL;
	struct ppsim_priv *to = NULL;
	struct net_device *peer;
	bool empty = false, was_empty;
	int i;

	if (unlikely(flags & ~XDP_XMIT_FLAGS_MASK))
		return -EINVAL;
	rcu_read_lock();
	peer = rcu_dereference(priv->peer);
	if (peer && netif_running(peer))
		to = netdev_priv(peer);
	spin_lock_bh(&rxq->txc_lock);
	for (i = 0; i < n; i++) {
		struct xdp_frame *f = frames[i];
		dma_addr_t dma;

		if (!rxq->txc_open || rxq->txc_count == rxq->size)
			break;
		dma = dma_map_single(priv->dmadev, f->data, f->len, DMA_TO_DEVICE);
		if (dma_mapping_error(priv->dmadev, dma))
			break;
		if (!ppsim_txc_push(rxq, PPSIM_TXC_FRAME, f, dma, f->len, &was_empty)) {
			dma_unmap_single(priv->dmadev, dma, f->len, DMA_TO_DEVICE);
			break;
		}
		empty |= was_empty;
		/* no peer: the frame goes out on a wire with nobody at the end */
		if (to)
			ppsim_wire(to, ppsim_bus_to_virt(dma), f->len, &kick);
	}
	u64_stats_update_begin(&rxq->xs.syncp);
	rxq->xs.xmit += i;
	rxq->xs.xmit_err += n - i;
	u64_stats_update_end(&rxq->xs.syncp);
	spin_unlock_bh(&rxq->txc_lock);
	rcu_read_unlock();
	if (kick)
		ppsim_raise_irq(kick);
	/* the completion side: this queue's NAPI cleans or arms the timer */
	if (empty)
		ppsim_raise_irq(rxq);
	return i;
}
