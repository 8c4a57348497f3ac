// SPDX-License-Identifier: GPL-2.0
/*
 * pp_sockhold: lends pool pages to a socket that does not read them.
 *
 * A packet socket bound to lo (tests/lab/unload-inflight.sh) keeps clones
 * of what loopback receives, and clones share the data page.
 *
 * On load, builds @count UDP datagrams to 127.0.0.1:@port on pages of a
 * fresh pool, hands them to the stack through the loopback device, and
 * destroys the pool while the socket still holds every page; @pools times.  The lab then
 * unloads this module and pp_backport before the socket is read, to check
 * that unload with pages in flight neither leaks nor touches freed memory.
 */

#include <linux/module.h>
#include <linux/platform_device.h>
#include <linux/netdevice.h>
#include <linux/etherdevice.h>
#include <linux/skbuff.h>
#include <linux/ip.h>
#include <linux/udp.h>
#include <net/ip.h>
#include <net/net_namespace.h>
#include <ppkit/page_pool.h>

static unsigned int port = 9999;
module_param(port, uint, 0444);
MODULE_PARM_DESC(port, "UDP port on 127.0.0.1 to send to");
static unsigned int count = 16;
module_param(count, uint, 0444);
MODULE_PARM_DESC(count, "datagrams to send from each pool (1..64)");
static unsigned int pools = 1;
module_param(pools, uint, 0444);
MODULE_PARM_DESC(pools, "pools to send from, each destroyed with its pages in the socket (1..16)");

#define SH_PAYLOAD	256

static struct platform_device *sh_pdev;

static struct sk_buff *sh_datagram(struct ppb_pool *pool, unsigned int seq)
{
	struct page *page = ppb_dev_alloc_pages(pool);
	unsigned int len = sizeof(struct iphdr) + sizeof(struct udphdr) + SH_PAYLOAD;
	struct sk_buff *skb;
	struct udphdr *uh;
	struct iphdr *iph;
	struct ethhdr *eth;
	u8 *payload;

	if (!page)
		return NULL;
	skb = ppb_build_skb(pool, page, NET_SKB_PAD, ETH_HLEN + len);
	if (!skb) {
		ppb_put_page(pool, page, -1, false);
		return NULL;
	}
	/*
	 * A frame as loopback receives one: the packet socket reads its
	 * link-layer header (dev_parse_header()), so there must be one.
	 */
	eth = (struct ethhdr *)skb->data;
	eth_zero_addr(eth->h_dest);
	eth_zero_addr(eth->h_source);
	eth->h_proto = htons(ETH_P_IP);
	iph = (struct iphdr *)(eth + 1);
	*iph = (struct iphdr) {
		.version = 4, .ihl = 5, .ttl = 64, .protocol = IPPROTO_UDP,
		.tot_len = htons(len),
		.saddr = htonl(INADDR_LOOPBACK), .daddr = htonl(INADDR_LOOPBACK),
	};
	ip_send_check(iph);
	uh = (struct udphdr *)(iph + 1);
	*uh = (struct udphdr) {
		.source = htons(port + 1), .dest = htons(port),
		.len = htons(sizeof(*uh) + SH_PAYLOAD),
	};
	payload = (u8 *)(uh + 1);
	memset(payload, 'a' + seq % 26, SH_PAYLOAD);
	/* Sets the MAC header, skb->dev and pkt_type, and pulls the header. */
	skb->protocol = eth_type_trans(skb, init_net.loopback_dev);
	skb_reset_network_header(skb);
	skb_set_transport_header(skb, sizeof(*iph));
	skb->ip_summed = CHECKSUM_UNNECESSARY;
	return skb;
}

static void sh_send(struct ppb_pool *pool)
{
	struct ppb_stats st;
	unsigned int i, sent = 0;
	u32 id;

	for (i = 0; i < count; i++) {
		struct sk_buff *skb = sh_datagram(pool, i);

		if (skb && netif_rx(skb) == NET_RX_SUCCESS)
			sent++;
	}
	id = ppb_pool_id(pool);
	ppb_pool_destroy(pool);
	if (ppb_pool_stats_by_id(id, &st))
		st.inflight_pages = 0;
	pr_info("pp_sockhold: pool %u: sent %u datagrams, %llu pages in flight after destroy\n",
		id, sent, st.inflight_pages);
}

static int __init sh_init(void)
{
	struct platform_device_info info = {
		.name = "pp_sockhold", .id = PLATFORM_DEVID_NONE,
		.dma_mask = DMA_BIT_MASK(64),
	};
	struct ppb_params p = {
		.flags = PPB_FLAG_DMA_MAP, .pool_size = 64, .nid = NUMA_NO_NODE,
		.dma_dir = DMA_FROM_DEVICE, .max_len = PAGE_SIZE, .owner = "pp_sockhold",
	};
	struct ppb_pool *pool;
	unsigned int i;

	if (count < 1 || count > 64 || pools < 1 || pools > 16 || port < 1 || port > 65534)
		return -ERANGE;
	sh_pdev = platform_device_register_full(&info);
	if (IS_ERR(sh_pdev))
		return PTR_ERR(sh_pdev);
	p.dev = &sh_pdev->dev;
	for (i = 0; i < pools; i++) {
		pool = ppb_pool_create(&p);
		if (IS_ERR(pool)) {
			/* the pools already destroyed free themselves */
			platform_device_unregister(sh_pdev);
			return PTR_ERR(pool);
		}
		sh_send(pool);
	}
	return 0;
}

static void __exit sh_exit(void)
{
	platform_device_unregister(sh_pdev);
}

module_init(sh_init);
module_exit(sh_exit);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("ppkit lab helper: pool pages held by a socket across unload");
