// SPDX-License-Identifier: GPL-2.0
/*
 * ppsim: a software NIC with a real DMA/NAPI RX path, for testing page
 * recycling without boards.  Module parameters create the first devices;
 * the "ppsim" generic netlink family creates, configures and deletes more.
 */

#include <linux/module.h>
#include <linux/moduleparam.h>
#include <ppkit/modparam.h>
#include <linux/platform_device.h>
#include <linux/etherdevice.h>
#include <linux/filter.h>
#include <linux/rtnetlink.h>
#include <linux/dma-map-ops.h>
#include "ppsim.h"

static unsigned int devs = 1, rx_queues = 1, tx_queues = 1, ring_size = PPSIM_RING_DEFAULT;
static bool pair;
unsigned int ppsim_gen_flows = PPSIM_GEN_FLOWS_DEFAULT;

static int ppsim_set_devs(const char *val, const struct kernel_param *kp)
{
	return ppkit_param_set_range(val, kp, 0, PPSIM_MAX_DEVS);
}

static int ppsim_set_queues(const char *val, const struct kernel_param *kp)
{
	return ppkit_param_set_range(val, kp, 1, PPSIM_MAX_QUEUES);
}

static int ppsim_set_ring(const char *val, const struct kernel_param *kp)
{
	return ppkit_param_set_range(val, kp, PPSIM_RING_MIN, PPSIM_RING_MAX);
}

static int ppsim_set_flows(const char *val, const struct kernel_param *kp)
{
	return ppkit_param_set_range(val, kp, 1, PPSIM_GEN_FLOWS_MAX);
}

static const struct kernel_param_ops ppsim_devs_ops = {
	.set = ppsim_set_devs, .get = param_get_uint,
};

static const struct kernel_param_ops ppsim_queues_ops = {
	.set = ppsim_set_queues, .get = param_get_uint,
};

static const struct kernel_param_ops ppsim_ring_ops = {
	.set = ppsim_set_ring, .get = param_get_uint,
};

static const struct kernel_param_ops ppsim_flows_ops = {
	.set = ppsim_set_flows, .get = param_get_uint,
};

module_param_cb(devs, &ppsim_devs_ops, &devs, 0444);
MODULE_PARM_DESC(devs, "devices created at load, 0..32 (with pair: ports, rounded up to even)");
module_param_cb(rx_queues, &ppsim_queues_ops, &rx_queues, 0444);
MODULE_PARM_DESC(rx_queues, "RX queues per device, 1..16");
module_param_cb(tx_queues, &ppsim_queues_ops, &tx_queues, 0444);
MODULE_PARM_DESC(tx_queues, "TX queues per device, 1..16");
module_param_cb(ring_size, &ppsim_ring_ops, &ring_size, 0444);
MODULE_PARM_DESC(ring_size, "RX descriptors per queue, 16..4096");
module_param(pair, bool, 0444);
MODULE_PARM_DESC(pair, "wire devices back to back in pairs (sim0<->sim1, ...)");
module_param_cb(gen_flows, &ppsim_flows_ops, &ppsim_gen_flows, 0644);
MODULE_PARM_DESC(gen_flows,
		 "UDP flows (source ports) of generators started from now on, 1..4096: RSS spreads them");

bool ppsim_xdp_dispatcher = true;
module_param_named(xdp_dispatcher, ppsim_xdp_dispatcher, bool, 0644);
MODULE_PARM_DESC(xdp_dispatcher,
		 "call XDP programs through the kernel's XDP dispatcher (N: an indirect call; the lab sets N under QEMU TCG)");

static struct platform_device *ppsim_pdev;
struct device *ppsim_dmadev;
LIST_HEAD(ppsim_devs);

/* ---- netdev ops ------------------------------------------------------------ */

static int ppsim_open(struct net_device *dev)
{
	struct ppsim_priv *priv = netdev_priv(dev);
	int err;

	err = ppsim_rings_up(priv);
	if (err)
		return err;
	netif_tx_start_all_queues(dev);
	netif_carrier_on(dev);
	return 0;
}

static int ppsim_stop(struct net_device *dev)
{
	struct ppsim_priv *priv = netdev_priv(dev);

	netif_carrier_off(dev);
	netif_tx_stop_all_queues(dev);
	ppsim_rings_down(priv);
	return 0;
}

static void ppsim_get_stats64(struct net_device *dev, struct rtnl_link_stats64 *s)
{
	struct ppsim_priv *priv = netdev_priv(dev);
	unsigned int q, start;

	for (q = 0; q < priv->num_rx; q++) {
		struct ppsim_rxq *rxq = &priv->rxq[q];
		u64 packets, bytes, dropped, missed, too_long;

		do {
			start = u64_stats_fetch_begin(&rxq->st.syncp);
			packets = rxq->st.packets;
			bytes = rxq->st.bytes;
			dropped = rxq->st.dropped + rxq->st.alloc_fail;
		} while (u64_stats_fetch_retry(&rxq->st.syncp, start));
		do {
			start = u64_stats_fetch_begin(&rxq->dev_syncp);
			missed = rxq->dev_missed;
			too_long = rxq->dev_too_long;
		} while (u64_stats_fetch_retry(&rxq->dev_syncp, start));
		s->rx_packets += packets;
		s->rx_bytes += bytes;
		s->rx_dropped += dropped;
		s->rx_missed_errors += missed;
		s->rx_length_errors += too_long;
		s->rx_errors += too_long;
	}
	for (q = 0; q < priv->num_tx; q++) {
		struct ppsim_tq_stats *ts = &priv->txs[q];
		u64 packets, bytes, dropped;

		do {
			start = u64_stats_fetch_begin(&ts->syncp);
			packets = ts->packets;
			bytes = ts->bytes;
			dropped = ts->dropped;
		} while (u64_stats_fetch_retry(&ts->syncp, start));
		s->tx_packets += packets;
		s->tx_bytes += bytes;
		s->tx_dropped += dropped;
	}
}

/*
 * Under rtnl: @cfg and @mtu take effect, the rings and pools are rebuilt if
 * the device is up (buffer size, page order, pool parameters follow both);
 * on failure the old ones are restored.
 */
static int ppsim_rebuild(struct ppsim_priv *priv, const struct ppsim_cfg *cfg,
			 unsigned int mtu, struct netlink_ext_ack *extack)
{
	struct ppsim_cfg old = priv->cfg;
	unsigned int old_mtu = priv->dev->mtu;
	bool up = netif_running(priv->dev);
	int err;

	ASSERT_RTNL();
	if (up)
		ppsim_rings_down(priv);
	priv->cfg = *cfg;
	WRITE_ONCE(priv->dev->mtu, mtu);
	if (!up)
		return 0;
	err = ppsim_rings_up(priv);
	if (err) {
		NL_SET_ERR_MSG(extack, "could not rebuild the rings: old configuration restored");
		priv->cfg = old;
		WRITE_ONCE(priv->dev->mtu, old_mtu);
		if (ppsim_rings_up(priv))
			netdev_err(priv->dev, "rings lost: set the device down and up\n");
	}
	return err;
}

/* Apply @cfg (and the current MTU and XDP program): rings and pools rebuilt. */
int ppsim_reconfigure(struct ppsim_priv *priv, const struct ppsim_cfg *cfg,
		      struct netlink_ext_ack *extack)
{
	struct ppsim_cfg old = priv->cfg;
	bool up = netif_running(priv->dev);

	ASSERT_RTNL();
	old.irq_cpu = cfg->irq_cpu;
	old.tx_delay_us = cfg->tx_delay_us;
	if (!memcmp(&old, cfg, sizeof(old))) {
		/*
		 * Only the interrupt moves, as with /proc/irq/N/smp_affinity, and
		 * XDP TX entries queued from now complete after the new delay.
		 */
		unsigned int q;

		priv->cfg.irq_cpu = cfg->irq_cpu;
		WRITE_ONCE(priv->cfg.tx_delay_us, cfg->tx_delay_us);
		for (q = 0; up && q < priv->num_rx; q++)
			WRITE_ONCE(priv->rxq[q].irq_cpu, ppsim_irq_cpu(priv, q));
		return 0;
	}
	return ppsim_rebuild(priv, cfg, priv->dev->mtu, extack);
}

int ppsim_cfg_check(struct ppsim_priv *priv, const struct ppsim_cfg *cfg, bool with_xdp,
		    unsigned int mtu, struct netlink_ext_ack *extack)
{
	if (cfg->irq_cpu >= 0 && (cfg->irq_cpu >= nr_cpu_ids || !cpu_online(cfg->irq_cpu))) {
		NL_SET_ERR_MSG(extack, "IRQ CPU is not online");
		return -EINVAL;
	}
	if (cfg->frag && cfg->pool != PPSIM_POOL_PPKIT) {
		NL_SET_ERR_MSG(extack, "fragments need the ppkit pool: set pool ppkit too");
		return -EOPNOTSUPP;
	}
	if (with_xdp && ppsim_order(XDP_PACKET_HEADROOM, mtu) > 0) {
		NL_SET_ERR_MSG(extack, "MTU too large for XDP: frames must fit one page");
		return -ERANGE;
	}
	return 0;
}

static int ppsim_change_mtu(struct net_device *dev, int mtu)
{
	struct ppsim_priv *priv = netdev_priv(dev);
	bool xdp = rtnl_dereference(priv->xdp_prog);
	int err;

	err = ppsim_cfg_check(priv, &priv->cfg, xdp, mtu, NULL);
	if (err) {
		netdev_warn(dev, "MTU %d too large while XDP is attached\n", mtu);
		return err;
	}
	/* the buffers' size and page order follow the MTU: new rings and pools */
	return ppsim_rebuild(priv, &priv->cfg, mtu, NULL);
}

static int ppsim_xdp_setup(struct ppsim_priv *priv, struct netdev_bpf *bpf)
{
	struct bpf_prog *old = rtnl_dereference(priv->xdp_prog);
	struct bpf_prog *prog = bpf->prog;
	int err;

	err = ppsim_cfg_check(priv, &priv->cfg, !!prog, priv->dev->mtu, bpf->extack);
	if (err)
		return err;
	if (!!old == !!prog || !netif_running(priv->dev)) {
		rcu_assign_pointer(priv->xdp_prog, prog);
	} else {
		/* headroom, page order and DMA direction change: new pools */
		ppsim_rings_down(priv);
		rcu_assign_pointer(priv->xdp_prog, prog);
		err = ppsim_rings_up(priv);
		if (err) {
			NL_SET_ERR_MSG(bpf->extack, "could not rebuild the rings for XDP");
			rcu_assign_pointer(priv->xdp_prog, old);
			if (ppsim_rings_up(priv))
				netdev_err(priv->dev, "rings lost: set the device down and up\n");
			return err;
		}
	}
	if (old)
		bpf_prog_put(old);
	return 0;
}

static int ppsim_bpf(struct net_device *dev, struct netdev_bpf *bpf)
{
	switch (bpf->command) {
	case XDP_SETUP_PROG:
		return ppsim_xdp_setup(netdev_priv(dev), bpf);
	default:
		return -EINVAL;
	}
}

static void ppsim_uninit(struct net_device *dev)
{
	struct ppsim_priv *priv = netdev_priv(dev);
	struct net_device *peer = rtnl_dereference(priv->peer);

	ppsim_gen_stop(priv);
	if (peer) {
		struct ppsim_priv *pp = netdev_priv(peer);

		RCU_INIT_POINTER(pp->peer, NULL);
		RCU_INIT_POINTER(priv->peer, NULL);
	}
	list_del_init(&priv->list);
}

const struct net_device_ops ppsim_netdev_ops = {
	.ndo_uninit		= ppsim_uninit,
	.ndo_open		= ppsim_open,
	.ndo_stop		= ppsim_stop,
	.ndo_start_xmit		= ppsim_xmit,
	.ndo_get_stats64	= ppsim_get_stats64,
	.ndo_change_mtu		= ppsim_change_mtu,
	.ndo_set_mac_address	= eth_mac_addr,
	.ndo_validate_addr	= eth_validate_addr,
	.ndo_bpf		= ppsim_bpf,
	.ndo_xdp_xmit		= ppsim_xdp_xmit,
};

/* ---- devices --------------------------------------------------------------- */

static void ppsim_free_priv(struct net_device *dev)
{
	struct ppsim_priv *priv = netdev_priv(dev);
	unsigned int q;

	if (priv->rxq)
		for (q = 0; q < priv->num_rx; q++)
			netif_napi_del(&priv->rxq[q].napi);
	kfree(priv->rxq);
	kfree(priv->txs);
	kvfree(priv->gen);
	/* register_netdevice() failures may already have called us */
	priv->rxq = NULL;
	priv->txs = NULL;
	priv->gen = NULL;
}

static struct net_device *ppsim_alloc(struct net *net, unsigned int rxqs, unsigned int txqs,
				      u32 ring)
{
	struct net_device *dev;
	struct ppsim_priv *priv;
	unsigned int q;

	dev = alloc_etherdev_mqs(sizeof(*priv), txqs, rxqs);
	if (!dev)
		return NULL;
	dev_net_set(dev, net);
	SET_NETDEV_DEV(dev, ppsim_dmadev);
	strscpy(dev->name, "sim%d", IFNAMSIZ);
	dev->netdev_ops = &ppsim_netdev_ops;
	dev->ethtool_ops = &ppsim_ethtool_ops;
	dev->priv_destructor = ppsim_free_priv;
	dev->needs_free_netdev = true;
	dev->features |= NETIF_F_HIGHDMA;
	/* XDP programs, XDP_TX and XDP_REDIRECT out of it, and ndo_xdp_xmit */
	ppb_xdp_advertise(dev);
	dev->min_mtu = ETH_MIN_MTU;
	dev->max_mtu = PPSIM_MAX_MTU;
	eth_hw_addr_random(dev);

	priv = netdev_priv(dev);
	priv->dev = dev;
	priv->dmadev = ppsim_dmadev;
	priv->num_rx = rxqs;
	priv->num_tx = txqs;
	priv->cfg.ring_size = ring;
	priv->cfg.irq_cpu = -1;
	INIT_LIST_HEAD(&priv->list);
	priv->rxq = kcalloc(rxqs, sizeof(*priv->rxq), GFP_KERNEL);
	priv->txs = kcalloc(txqs, sizeof(*priv->txs), GFP_KERNEL);
	priv->gen = kvzalloc(sizeof(*priv->gen), GFP_KERNEL);
	if (!priv->rxq || !priv->txs || !priv->gen) {
		ppsim_free_priv(dev);
		free_netdev(dev);
		return NULL;
	}
	for (q = 0; q < rxqs; q++) {
		struct ppsim_rxq *rxq = &priv->rxq[q];

		rxq->priv = priv;
		rxq->idx = q;
		spin_lock_init(&rxq->dev_lock);
		spin_lock_init(&rxq->txc_lock);
		hrtimer_init(&rxq->txc_timer, CLOCK_MONOTONIC, HRTIMER_MODE_ABS);
		rxq->txc_timer.function = ppsim_txc_timer;
		u64_stats_init(&rxq->dev_syncp);
		u64_stats_init(&rxq->st.syncp);
		u64_stats_init(&rxq->xs.syncp);
		INIT_CSD(&rxq->csd, ppsim_irq, rxq);
		ppb_netif_napi_add(dev, &rxq->napi, ppsim_poll);
	}
	for (q = 0; q < txqs; q++)
		u64_stats_init(&priv->txs[q].syncp);
	init_waitqueue_head(&priv->gen->wq);
	priv->gen->flows = PPSIM_GEN_FLOWS_DEFAULT;
	return dev;
}

/* Under rtnl.  list_count_nodes() is not in every 6.1 stable release. */
static unsigned int ppsim_ndevs(void)
{
	struct list_head *pos;
	unsigned int n = 0;

	ASSERT_RTNL();
	list_for_each(pos, &ppsim_devs)
		n++;
	return n;
}

/* Under rtnl.  @devs receives one or two devices. */
int ppsim_create(struct net *net, unsigned int rxqs, unsigned int txqs, u32 ring, bool pair,
		 struct net_device **devs, struct netlink_ext_ack *extack)
{
	unsigned int n = pair ? 2 : 1, i;
	int err;

	ASSERT_RTNL();
	if (ppsim_ndevs() + n > PPSIM_MAX_DEVS) {
		NL_SET_ERR_MSG(extack, "too many ppsim devices (at most 32)");
		return -ENOSPC;
	}
	for (i = 0; i < n; i++) {
		devs[i] = ppsim_alloc(net, rxqs, txqs, ring);
		if (!devs[i]) {
			err = -ENOMEM;
			goto free;
		}
	}
	if (pair) {
		struct ppsim_priv *a = netdev_priv(devs[0]), *b = netdev_priv(devs[1]);

		rcu_assign_pointer(a->peer, devs[1]);
		rcu_assign_pointer(b->peer, devs[0]);
	}
	for (i = 0; i < n; i++) {
		struct ppsim_priv *priv = netdev_priv(devs[i]);

		err = register_netdevice(devs[i]);
		if (err) {
			NL_SET_ERR_MSG(extack, "register_netdevice failed");
			goto unregister;
		}
		list_add_tail(&priv->list, &ppsim_devs);
	}
	return 0;

unregister:
	/* devs[i] failed; devs[0] is registered when i == 1 */
	ppsim_free_priv(devs[i]);
	free_netdev(devs[i]);
	if (i == 1) {
		RCU_INIT_POINTER(((struct ppsim_priv *)netdev_priv(devs[0]))->peer, NULL);
		unregister_netdevice(devs[0]);
	}
	return err;
free:
	while (i--) {
		ppsim_free_priv(devs[i]);
		free_netdev(devs[i]);
	}
	return err;
}

/* Under rtnl: @dev and its peer go. */
void ppsim_destroy(struct net_device *dev)
{
	struct ppsim_priv *priv = netdev_priv(dev);
	struct net_device *peer = rtnl_dereference(priv->peer);
	LIST_HEAD(kill);

	unregister_netdevice_queue(dev, &kill);
	if (peer)
		unregister_netdevice_queue(peer, &kill);
	unregister_netdevice_many(&kill);
}

/* ---- module ------------------------------------------------------------------ */

static void ppsim_destroy_all(void)
{
	struct ppsim_priv *priv, *tmp;
	LIST_HEAD(kill);

	rtnl_lock();
	list_for_each_entry_safe(priv, tmp, &ppsim_devs, list)
		unregister_netdevice_queue(priv->dev, &kill);
	unregister_netdevice_many(&kill);
	rtnl_unlock();
}

/* The device side writes through physical addresses (ppsim_bus_to_virt()):
 * a mapping must name, as a physical address, memory that holds the
 * buffer for the device: the page itself, or with swiotlb=force (the
 * regression suite's sync scenarios) its bounce buffer, which a sync for
 * the CPU copies back.  Asked of the DMA API, not of its implementation:
 * 5.10's armhf maps through arm_dma_ops, which is direct for this device,
 * where later kernels use dma-direct.  A mark written into the page must
 * be at that address once the page is mapped for the device.
 */
static int __init ppsim_dma_is_direct(struct device *dev)
{
	static const char mark[] = "ppsim: direct?";
	struct page *page = alloc_page(GFP_KERNEL);
	unsigned long pfn;
	dma_addr_t dma;
	int err = -ENODEV;

	if (!page)
		return -ENOMEM;
	memcpy(page_address(page), mark, sizeof(mark));
	dma = dma_map_page(dev, page, 0, PAGE_SIZE, DMA_TO_DEVICE);
	if (dma_mapping_error(dev, dma)) {
		__free_page(page);
		return -ENODEV;
	}
	pfn = PHYS_PFN(dma);
	if (!dev->dma_range_map && pfn_valid(pfn) && !PageHighMem(pfn_to_page(pfn)) &&
	    !memcmp(ppsim_bus_to_virt(dma), mark, sizeof(mark)))
		err = 0;
	dma_unmap_page(dev, dma, PAGE_SIZE, DMA_TO_DEVICE);
	__free_page(page);
	return err;
}

static int __init ppsim_init(void)
{
	struct net_device *created[2];
	unsigned int i;
	int err;

	ppsim_pdev = platform_device_register_simple(PPSIM_DRV_NAME, -1, NULL, 0);
	if (IS_ERR(ppsim_pdev))
		return PTR_ERR(ppsim_pdev);
	ppsim_dmadev = &ppsim_pdev->dev;
	/* a NIC sits on a node: buffers from elsewhere are far (seed 002) */
	set_dev_node(ppsim_dmadev, first_online_node);
	err = dma_coerce_mask_and_coherent(ppsim_dmadev, DMA_BIT_MASK(64));
	if (err)
		goto unreg_pdev;
	err = ppsim_dma_is_direct(ppsim_dmadev);
	if (err) {
		pr_err("ppsim: the platform bus is not direct-mapped here\n");
		goto unreg_pdev;
	}

	rtnl_lock();
	for (i = 0; i < devs; i += pair ? 2 : 1) {
		err = ppsim_create(&init_net, rx_queues, tx_queues, ring_size, pair, created,
				   NULL);
		if (err)
			break;
	}
	rtnl_unlock();
	if (err)
		goto destroy;
	err = ppsim_nl_init();
	if (err)
		goto destroy;
	return 0;

destroy:
	ppsim_destroy_all();
unreg_pdev:
	platform_device_unregister(ppsim_pdev);
	return err;
}

static void __exit ppsim_exit(void)
{
	ppsim_nl_exit();
	ppsim_destroy_all();
	platform_device_unregister(ppsim_pdev);
}

module_init(ppsim_init);
module_exit(ppsim_exit);
MODULE_DESCRIPTION("ppkit software NIC: DMA rings, NAPI, XDP, page pools");
MODULE_AUTHOR("ppkit");
MODULE_LICENSE("GPL");
