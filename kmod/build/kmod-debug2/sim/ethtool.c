// SPDX-License-Identifier: GPL-2.0
/*
 * ppsim ethtool: ring sizes (-g/-G), channels (-l), and statistics (-S)
 * with the upstream rx_pp_* page_pool names, then the backport's own
 * counters, then per-queue counters.
 */

#include <linux/ethtool.h>
#include <linux/rtnetlink.h>
#include <net/page_pool.h>
#include <ppkit/page_pool.h>
#include "ppsim.h"

/* The upstream names (net/core/page_pool.c), in upstream order. */
static const struct {
	const char *name;
	enum ppb_stat stat;
} ppsim_pp_stats[] = {
	{ "rx_pp_alloc_fast", PPB_STAT_ALLOC_FAST },
	{ "rx_pp_alloc_slow", PPB_STAT_ALLOC_SLOW },
	{ "rx_pp_alloc_slow_ho", PPB_STAT_ALLOC_SLOW_HIGH_ORDER },
	{ "rx_pp_alloc_empty", PPB_STAT_ALLOC_EMPTY },
	{ "rx_pp_alloc_refill", PPB_STAT_ALLOC_REFILL },
	{ "rx_pp_alloc_waive", PPB_STAT_ALLOC_WAIVE },
	{ "rx_pp_recycle_cached", PPB_STAT_RECYCLE_CACHED },
	{ "rx_pp_recycle_cache_full", PPB_STAT_RECYCLE_CACHE_FULL },
	{ "rx_pp_recycle_ring", PPB_STAT_RECYCLE_RING },
	{ "rx_pp_recycle_ring_full", PPB_STAT_RECYCLE_RING_FULL },
	{ "rx_pp_recycle_released_ref", PPB_STAT_RECYCLE_RELEASED_REFCNT },
	/* the backport's stack path and releases */
	{ "rx_ppb_pages_lent", PPB_STAT_PAGES_LENT },
	{ "rx_ppb_pages_reclaimed", PPB_STAT_PAGES_RECLAIMED },
	{ "rx_ppb_pages_orphaned", PPB_STAT_PAGES_ORPHANED },
	{ "rx_ppb_released_far_node", PPB_STAT_RELEASED_FAR_NODE },
	{ "rx_ppb_released_pfmemalloc", PPB_STAT_RELEASED_PFMEMALLOC },
	{ "rx_ppb_pages_allocated", PPB_STAT_PAGES_ALLOCATED },
	{ "rx_ppb_pages_released", PPB_STAT_PAGES_RELEASED },
};

static const char * const ppsim_rxq_stats[] = {
	"packets", "bytes", "drops", "missed", "alloc_fail",
	"xdp_pass", "xdp_drop", "xdp_tx", "xdp_tx_err", "xdp_aborted",
};

static const char * const ppsim_txq_stats[] = { "packets", "bytes", "drops" };

#define PPSIM_NR_PP	ARRAY_SIZE(ppsim_pp_stats)
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
	for (i = 0; i < PPSIM_NR_PP; i++)
		ethtool_sprintf(&data, "%s", ppsim_pp_stats[i].name);
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
	unsigned int i, q, start;
	struct ppb_stats st;

	memset(data, 0, PPSIM_NR_PP * sizeof(*data));
	/* the kernel's own pools have no statistics in Debian's 6.1 */
	if (priv->rings_up && priv->cfg.pool == PPSIM_POOL_PPKIT) {
		for (q = 0; q < priv->num_rx; q++) {
			if (!priv->rxq[q].pp)
				continue;
			ppb_get_stats(priv->rxq[q].pp, &st);
			for (i = 0; i < PPSIM_NR_PP; i++)
				data[i] += st.c[ppsim_pp_stats[i].stat];
		}
	}
	data += PPSIM_NR_PP;

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
			*data = rxq->dev_missed;
		} while (u64_stats_fetch_retry(&rxq->dev_syncp, start));
		data++;
		*data++ = s.alloc_fail;
		*data++ = s.xdp_pass;
		*data++ = s.xdp_drop;
		*data++ = s.xdp_tx;
		*data++ = s.xdp_tx_err;
		*data++ = s.xdp_aborted;
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

const struct ethtool_ops ppsim_ethtool_ops = {
	.get_drvinfo		= ppsim_get_drvinfo,
	.get_link		= ethtool_op_get_link,
	.get_ringparam		= ppsim_get_ringparam,
	.set_ringparam		= ppsim_set_ringparam,
	.get_channels		= ppsim_get_channels,
	.get_sset_count		= ppsim_get_sset_count,
	.get_strings		= ppsim_get_strings,
	.get_ethtool_stats	= ppsim_get_ethtool_stats,
};
