// SPDX-License-Identifier: GPL-2.0
/*
 * ppsim ethtool: ring sizes (-g/-G), channels (-l), and statistics (-S):
 * the pools' counters under the names every ppkit driver uses (the
 * upstream rx_pp_* page_pool names, then the backport's rx_ppb_*), then
 * per-queue counters.
 */

#include <linux/ethtool.h>
#include <linux/rtnetlink.h>
#include <ppkit/compat.h>
#include <ppkit/page_pool.h>
#include "ppsim.h"

static const char * const ppsim_rxq_stats[] = {
	"packets", "bytes", "drops", "missed", "too_long", "alloc_fail",
	"xdp_pass", "xdp_drop", "xdp_tx", "xdp_tx_err", "xdp_aborted",
	"xdp_redirect", "xdp_redirect_err",
	"copy_bytes", "page_allocs", "dma_maps", "far_pages",
	/* the queue's XDP TX ring */
	"xdp_xmit", "xdp_xmit_err", "xdp_tx_completed", "xdp_tx_inflight",
};

static const char * const ppsim_txq_stats[] = { "packets", "bytes", "drops" };

/* the ppkit pools' counters, then the native pools' pages allocated */
#define PPSIM_NR_PP	(ppb_ethtool_stats_count() + 1)
#define PPSIM_NR_RXQ	ARRAY_SIZE(ppsim_rxq_stats)
#define PPSIM_NR_TXQ	ARRAY_SIZE(ppsim_txq_stats)

static void ppsim_get_drvinfo(struct net_device *dev, struct ethtool_drvinfo *info)
{
	strscpy(info->driver, PPSIM_DRV_NAME, sizeof(info->driver));
	strscpy(info->bus_info, "platform", sizeof(info->bus_info));
}

static void ppsim_get_ringparam(struct net_device *dev, struct ethtool_ringparam *ring,
				struct kernel_ethtool_ringparam *kring,
				struct netlink_ext_ack *extack)
{
	struct ppsim_priv *priv = netdev_priv(dev);

	ring->rx_max_pending = PPSIM_RING_MAX;
	ring->tx_max_pending = PPSIM_RING_MAX;
	ring->rx_pending = priv->cfg.ring_size;
	ring->tx_pending = priv->cfg.ring_size;
}

static int ppsim_set_ringparam(struct net_device *dev, struct ethtool_ringparam *ring,
			       struct kernel_ethtool_ringparam *kring,
			       struct netlink_ext_ack *extack)
{
	struct ppsim_priv *priv = netdev_priv(dev);
	struct ppsim_cfg cfg = priv->cfg;

	if (ring->rx_mini_pending || ring->rx_jumbo_pending) {
		NL_SET_ERR_MSG(extack, "ppsim has no mini or jumbo rings");
		return -EINVAL;
	}
	if (ring->rx_pending < PPSIM_RING_MIN) {
		NL_SET_ERR_MSG(extack, "RX ring must have at least 16 descriptors");
		return -EINVAL;
	}
	if (ring->tx_pending != priv->cfg.ring_size) {
		NL_SET_ERR_MSG(extack, "the TX side has no ring to resize: set rx only");
		return -EINVAL;
	}
	cfg.ring_size = ring->rx_pending;
	return ppsim_reconfigure(priv, &cfg, extack);
}

/*
 * tx-usecs: how long the device holds what XDP sends before completing it
 * (its TX interrupt moderation, in effect): the pages stay in flight.
 */
static int ppsim_get_coalesce(struct net_device *dev, struct ethtool_coalesce *ec,
			      struct kernel_ethtool_coalesce *kec,
			      struct netlink_ext_ack *extack)
{
	struct ppsim_priv *priv = netdev_priv(dev);

	ec->tx_coalesce_usecs = priv->cfg.tx_delay_us;
	return 0;
}

static int ppsim_set_coalesce(struct net_device *dev, struct ethtool_coalesce *ec,
			      struct kernel_ethtool_coalesce *kec,
			      struct netlink_ext_ack *extack)
{
	struct ppsim_priv *priv = netdev_priv(dev);
	struct ppsim_cfg cfg = priv->cfg;

	if (ec->tx_coalesce_usecs > PPSIM_TX_DELAY_MAX_US) {
		NL_SET_ERR_MSG(extack, "TX completion delay above 10000000 us (10 s)");
		return -ERANGE;
	}
	cfg.tx_delay_us = ec->tx_coalesce_usecs;
	return ppsim_reconfigure(priv, &cfg, extack);
}

static void ppsim_get_channels(struct net_device *dev, struct ethtool_channels *ch)
{
	struct ppsim_priv *priv = netdev_priv(dev);

	ch->max_rx = priv->num_rx;
	ch->max_tx = priv->num_tx;
	ch->rx_count = priv->num_rx;
	ch->tx_count = priv->num_tx;
}

static int ppsim_get_sset_count(struct net_device *dev, int sset)
{
	struct ppsim_priv *priv = netdev_priv(dev);

	if (sset != ETH_SS_STATS)
		return -EOPNOTSUPP;
	return PPSIM_NR_PP + priv->num_rx * PPSIM_NR_RXQ + priv->num_tx * PPSIM_NR_TXQ;
}

static void ppsim_get_strings(struct net_device *dev, u32 sset, u8 *data)
{
	struct ppsim_priv *priv = netdev_priv(dev);
	unsigned int i, q;

	if (sset != ETH_SS_STATS)
		return;
	data = ppb_ethtool_stats_strings(data, "");
	ethtool_sprintf(&data, "rx_native_pages_allocated");
	for (q = 0; q < priv->num_rx; q++)
		for (i = 0; i < PPSIM_NR_RXQ; i++)
			ethtool_sprintf(&data, "rx%u_%s", q, ppsim_rxq_stats[i]);
	for (q = 0; q < priv->num_tx; q++)
		for (i = 0; i < PPSIM_NR_TXQ; i++)
			ethtool_sprintf(&data, "tx%u_%s", q, ppsim_txq_stats[i]);
}

static void ppsim_get_ethtool_stats(struct net_device *dev, struct ethtool_stats *stats,
				    u64 *data)
{
	struct ppsim_priv *priv = netdev_priv(dev);
	unsigned int q, start;
	struct ppb_stats sum = {}, st;

	/* the kernel's own pools have no statistics in Debian's 6.1 */
	if (priv->rings_up && priv->cfg.pool == PPSIM_POOL_PPKIT) {
		for (q = 0; q < priv->num_rx; q++) {
			if (!priv->rxq[q].pp)
				continue;
			ppb_get_stats(priv->rxq[q].pp, &st);
			ppb_stats_add(&sum, &st);
		}
	}
	data = ppb_ethtool_stats_fill(&sum, data);
	/*
	 * Pages the kernel's own pools took from the page allocator since they
	 * were built: every kernel of the matrix has this counter, also
	 * without CONFIG_PAGE_POOL_STATS.
	 */
	*data = 0;
	for (q = 0; priv->rings_up && q < priv->num_rx; q++)
		if (priv->rxq[q].npp)
			*data += READ_ONCE(priv->rxq[q].npp->pages_state_hold_cnt);
	data++;

	for (q = 0; q < priv->num_rx; q++) {
		struct ppsim_rxq *rxq = &priv->rxq[q];
		struct ppsim_rq_stats s;

		do {
			start = u64_stats_fetch_begin(&rxq->st.syncp);
			s = rxq->st;
		} while (u64_stats_fetch_retry(&rxq->st.syncp, start));
		*data++ = s.packets;
		*data++ = s.bytes;
		*data++ = s.dropped;
		do {
			start = u64_stats_fetch_begin(&rxq->dev_syncp);
			data[0] = rxq->dev_missed;
			data[1] = rxq->dev_too_long;
		} while (u64_stats_fetch_retry(&rxq->dev_syncp, start));
		data += 2;
		*data++ = s.alloc_fail;
		*data++ = s.xdp_pass;
		*data++ = s.xdp_drop;
		*data++ = s.xdp_tx;
		*data++ = s.xdp_tx_err;
		*data++ = s.xdp_aborted;
		*data++ = s.xdp_redirect;
		*data++ = s.xdp_redirect_err;
		*data++ = s.copy_bytes;
		*data++ = s.page_allocs;
		*data++ = s.dma_maps;
		*data++ = s.far_pages;
		do {
			start = u64_stats_fetch_begin(&rxq->xs.syncp);
			data[0] = rxq->xs.xmit;
			data[1] = rxq->xs.xmit_err;
			data[2] = rxq->xs.completed;
		} while (u64_stats_fetch_retry(&rxq->xs.syncp, start));
		data[3] = READ_ONCE(rxq->txc_count);
		data += 4;
	}
	for (q = 0; q < priv->num_tx; q++) {
		struct ppsim_tq_stats *ts = &priv->txs[q];

		do {
			start = u64_stats_fetch_begin(&ts->syncp);
			data[0] = ts->packets;
			data[1] = ts->bytes;
			data[2] = ts->dropped;
		} while (u64_stats_fetch_retry(&ts->syncp, start));
		data += PPSIM_NR_TXQ;
	}
}

#ifdef PPB_ETHTOOL_OLD_RINGPARAM
static void ppsim_get_ringparam_compat(struct net_device *dev, struct ethtool_ringparam *ring)
{
	ppsim_get_ringparam(dev, ring, NULL, NULL);
}

static int ppsim_set_ringparam_compat(struct net_device *dev, struct ethtool_ringparam *ring)
{
	return ppsim_set_ringparam(dev, ring, NULL, NULL);
}

#define ppsim_get_ringparam	ppsim_get_ringparam_compat
#define ppsim_set_ringparam	ppsim_set_ringparam_compat
#endif

#ifdef PPB_ETHTOOL_OLD_COALESCE
static int ppsim_get_coalesce_compat(struct net_device *dev, struct ethtool_coalesce *ec)
{
	return ppsim_get_coalesce(dev, ec, NULL, NULL);
}

static int ppsim_set_coalesce_compat(struct net_device *dev, struct ethtool_coalesce *ec)
{
	return ppsim_set_coalesce(dev, ec, NULL, NULL);
}

#define ppsim_get_coalesce	ppsim_get_coalesce_compat
#define ppsim_set_coalesce	ppsim_set_coalesce_compat
#endif

const struct ethtool_ops ppsim_ethtool_ops = {
	.supported_coalesce_params = ETHTOOL_COALESCE_TX_USECS,
	.get_drvinfo		= ppsim_get_drvinfo,
	.get_link		= ethtool_op_get_link,
	.get_ringparam		= ppsim_get_ringparam,
	.set_ringparam		= ppsim_set_ringparam,
	.get_coalesce		= ppsim_get_coalesce,
	.set_coalesce		= ppsim_set_coalesce,
	.get_channels		= ppsim_get_channels,
	.get_sset_count		= ppsim_get_sset_count,
	.get_strings		= ppsim_get_strings,
	.get_ethtool_stats	= ppsim_get_ethtool_stats,
};
