// SPDX-License-Identifier: GPL-2.0
/*
 * ppsim generator: the device receiving frames from the wire.  A kthread,
 * pinned to its CPU, cycles through its flows (UDP source ports), writes a
 * burst of each flow into the RX ring its RSS hash picks (at line rate: as
 * many as there are posted descriptors, sleeping while there are none; at a
 * set rate: the frames due, those finding no descriptor counted as missed)
 * and raises the queue's interrupt after each burst.
 */

#include <linux/kthread.h>
#include <linux/delay.h>
#include <linux/math64.h>
#include <linux/etherdevice.h>
#include <linux/inetdevice.h>
#include <linux/ip.h>
#include <linux/udp.h>
#include <net/ip.h>
#include "ppsim.h"

#define PPSIM_GEN_SRC_IP	0xc6120001	/* 198.18.0.1, RFC 2544's range */
#define PPSIM_GEN_SRC_PORT	9

/* Frame of flow @f: UDP frames differ in their source port. */
static void ppsim_gen_flow(struct ppsim_gen *g, u32 f)
{
	struct udphdr *uh = (struct udphdr *)(g->frame + ETH_HLEN + sizeof(struct iphdr));

	if (g->ethertype == ETH_P_IP)
		uh->source = htons(PPSIM_GEN_SRC_PORT + f);
}

/* Some queue has a descriptor posted that a frame of the generator fits. */
static bool ppsim_gen_room(struct ppsim_priv *priv)
{
	bool room = false;
	unsigned int q;

	for (q = 0; q < priv->num_rx && !room; q++) {
		struct ppsim_rxq *rxq = &priv->rxq[q];

		spin_lock_bh(&rxq->dev_lock);
		room = rxq->active && priv->gen->size <= rxq->frame_max;
		/* as in ppsim_dev_write: pairs with the release in ppsim_refill */
		room = room && smp_load_acquire(&rxq->desc[rxq->dev_next].status) ==
			       PPSIM_DESC_DEV;
		spin_unlock_bh(&rxq->dev_lock);
	}
	return room;
}

/*
 * Descriptors were posted (or rings built): wake a line-rate generator that
 * found none.  The barrier in wq_has_sleeper() orders the descriptors'
 * status before the check; the sleeper checks after queueing itself.
 */
void ppsim_gen_kick(struct ppsim_priv *priv)
{
	if (wq_has_sleeper(&priv->gen->wq))
		wake_up(&priv->gen->wq);
}

static int ppsim_gen_thread(void *arg)
{
	struct ppsim_priv *priv = arg;
	struct ppsim_gen *g = priv->gen;
	u64 start = ktime_get_ns(), attempted = 0;
	unsigned int idle = 0;
	u32 f = 0;

	while (!kthread_should_stop()) {
		unsigned int n = PPSIM_BURST, w;
		struct ppsim_rxq *rxq;
		u32 hash, type;

		if (g->rate) {
			/* 128-bit product: no overflow however long it runs */
			u64 due = mul_u64_u64_div_u64(ktime_get_ns() - start, g->rate,
						      NSEC_PER_SEC);

			if (due <= attempted) {
				usleep_range(20, 50);
				continue;
			}
			n = min_t(u64, due - attempted, PPSIM_BURST);
		}
		if (g->count)
			n = min_t(u64, n, g->count - attempted);
		ppsim_gen_flow(g, f);
		rxq = ppsim_rss(priv, g->frame, g->size, &hash, &type);
		w = ppsim_dev_write(rxq, g->frame, g->size, n, g->rate, hash, type);
		attempted += g->rate ? n : w;
		if (w)
			ppsim_raise_irq(rxq);
		if (++f == g->flows)
			f = 0;
		if (g->count && attempted >= g->count)
			break;
		/*
		 * Line rate and a whole round of flows found no descriptor (rings
		 * full, down, or too small for the frame): sleep until NAPI posts
		 * some, rather than spin.  The timeout only bounds a lost race.
		 */
		idle = w || g->rate ? 0 : idle + 1;
		if (idle >= g->flows) {
			idle = 0;
			wait_event_interruptible_timeout(g->wq, kthread_should_stop() ||
							 ppsim_gen_room(priv), HZ);
		}
		cond_resched();
	}
	WRITE_ONCE(g->running, false);
	/* kthread_stop() must find the thread alive */
	while (!kthread_should_stop()) {
		set_current_state(TASK_INTERRUPTIBLE);
		if (!kthread_should_stop())
			schedule();
		__set_current_state(TASK_RUNNING);
	}
	return 0;
}

static int ppsim_gen_frame(struct ppsim_priv *priv, struct ppsim_gen *g,
			   struct netlink_ext_ack *extack)
{
	struct net_device *dev = priv->dev;
	struct ethhdr *eth = (struct ethhdr *)g->frame;
	struct in_device *in_dev;
	struct iphdr *iph;
	struct udphdr *uh;
	__be32 daddr = 0;

	memset(g->frame, 0, g->size);
	ether_addr_copy(eth->h_dest, dev->dev_addr);
	eth_random_addr(eth->h_source);
	eth->h_proto = htons(g->ethertype);
	if (g->ethertype != ETH_P_IP) {
		memset(g->frame + ETH_HLEN, 0x5a, g->size - ETH_HLEN);
		return 0;
	}

	in_dev = __in_dev_get_rtnl(dev);
	if (in_dev && in_dev->ifa_list)
		daddr = rtnl_dereference(in_dev->ifa_list)->ifa_local;
	if (!daddr) {
		NL_SET_ERR_MSG(extack,
			       "UDP frames go to the device's IPv4 address: assign one first");
		return -EINVAL;
	}
	iph = (struct iphdr *)(g->frame + ETH_HLEN);
	iph->version = 4;
	iph->ihl = 5;
	iph->ttl = 64;
	iph->protocol = IPPROTO_UDP;
	iph->tot_len = htons(g->size - ETH_HLEN);
	iph->saddr = htonl(PPSIM_GEN_SRC_IP);
	iph->daddr = daddr;
	ip_send_check(iph);
	uh = (struct udphdr *)(iph + 1);
	uh->source = htons(PPSIM_GEN_SRC_PORT);
	uh->dest = htons(g->dst_port);
	uh->len = htons(g->size - ETH_HLEN - sizeof(*iph));
	return 0;
}

/* Under rtnl. */
int ppsim_gen_start(struct ppsim_priv *priv, const struct ppsim_gen *req,
		    struct netlink_ext_ack *extack)
{
	struct ppsim_gen *g = priv->gen;
	struct task_struct *t;
	int cpu = req->cpu;
	int err;

	if (req->size < ETH_ZLEN || req->size > ETH_HLEN + priv->dev->mtu) {
		NL_SET_ERR_MSG(extack, "frame size must be 60..MTU+14 bytes");
		return -ERANGE;
	}
	if (req->ethertype == ETH_P_IP &&
	    req->size < ETH_HLEN + sizeof(struct iphdr) + sizeof(struct udphdr)) {
		NL_SET_ERR_MSG(extack, "frame too small for UDP/IPv4");
		return -ERANGE;
	}
	if (cpu < 0)
		cpu = cpumask_last(cpu_online_mask);
	if (cpu >= nr_cpu_ids || !cpu_online(cpu)) {
		NL_SET_ERR_MSG(extack, "generator CPU is not online");
		return -EINVAL;
	}
	ppsim_gen_stop(priv);

	g->rate = req->rate;
	g->flows = req->flows;
	g->size = req->size;
	g->ethertype = req->ethertype;
	g->dst_port = req->dst_port;
	g->count = req->count;
	g->cpu = cpu;
	err = ppsim_gen_frame(priv, g, extack);
	if (err)
		return err;

	t = kthread_create_on_node(ppsim_gen_thread, priv, cpu_to_node(cpu), "ppsim-gen/%s",
				   priv->dev->name);
	if (IS_ERR(t))
		return PTR_ERR(t);
	kthread_bind(t, cpu);
	g->task = t;
	WRITE_ONCE(g->running, true);
	wake_up_process(t);
	return 0;
}

/* Under rtnl. */
void ppsim_gen_stop(struct ppsim_priv *priv)
{
	struct ppsim_gen *g = priv->gen;

	if (!g->task)
		return;
	kthread_stop(g->task);
	g->task = NULL;
	WRITE_ONCE(g->running, false);
}
