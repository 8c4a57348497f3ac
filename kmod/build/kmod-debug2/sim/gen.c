// SPDX-License-Identifier: GPL-2.0
/*
 * ppsim generator: the device receiving frames from the wire.  A kthread,
 * pinned to its CPU, writes frames into the RX rings of every queue in turn
 * (at line rate: as many as there are posted descriptors; at a set rate:
 * the frames due, those finding no descriptor counted as missed) and raises
 * the queue's interrupt after each burst.
 */

#include <linux/kthread.h>
#include <linux/delay.h>
#include <linux/etherdevice.h>
#include <linux/inetdevice.h>
#include <linux/ip.h>
#include <linux/udp.h>
#include <net/ip.h>
#include "ppsim.h"

#define PPSIM_GEN_SRC_IP	0xc6120001	/* 198.18.0.1, RFC 2544's range */
#define PPSIM_GEN_SRC_PORT	9

static int ppsim_gen_thread(void *arg)
{
	struct ppsim_priv *priv = arg;
	struct ppsim_gen *g = priv->gen;
	u64 start = ktime_get_ns(), attempted = 0;
	unsigned int q = 0;

	while (!kthread_should_stop()) {
		struct ppsim_rxq *rxq = &priv->rxq[q];
		unsigned int n = PPSIM_BURST, w;

		if (g->rate) {
			u64 due = div64_u64((ktime_get_ns() - start) * g->rate, NSEC_PER_SEC);

			if (due <= attempted) {
				usleep_range(20, 50);
				continue;
			}
			n = min_t(u64, due - attempted, PPSIM_BURST);
		}
		if (g->count)
			n = min_t(u64, n, g->count - attempted);
		w = ppsim_dev_write(rxq, g->frame, g->size, n, g->rate);
		attempted += g->rate ? n : w;
		if (w)
			ppsim_raise_irq(rxq);
		if (++q == priv->num_rx)
			q = 0;
		if (g->count && attempted >= g->count)
			break;
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
