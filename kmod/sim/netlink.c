// SPDX-License-Identifier: GPL-2.0
/*
 * ppsim generic netlink family: list, create, configure and delete devices,
 * start and stop their generator.  uapi: include/uapi/linux/ppsim.h.
 */

#include <linux/rtnetlink.h>
#include <linux/filter.h>
#include <net/genetlink.h>
#include <net/sock.h>
#include "ppsim.h"

static struct genl_family ppsim_nl_family;

static const struct nla_policy ppsim_dev_get_policy[PPSIM_A_IFINDEX + 1] = {
	[PPSIM_A_IFINDEX] = NLA_POLICY_MIN(NLA_U32, 1),
};

static const struct nla_policy ppsim_dev_new_policy[PPSIM_A_PAIR + 1] = {
	[PPSIM_A_RX_QUEUES] = NLA_POLICY_RANGE(NLA_U32, 1, PPSIM_MAX_QUEUES),
	[PPSIM_A_TX_QUEUES] = NLA_POLICY_RANGE(NLA_U32, 1, PPSIM_MAX_QUEUES),
	[PPSIM_A_RING_SIZE] = NLA_POLICY_RANGE(NLA_U32, PPSIM_RING_MIN, PPSIM_RING_MAX),
	[PPSIM_A_PAIR] = { .type = NLA_FLAG },
};

static struct netlink_range_validation ppsim_rate_range = {
	.max = PPSIM_GEN_RATE_MAX,
};

static const struct nla_policy ppsim_dev_set_policy[PPSIM_A_FRAG + 1] = {
	[PPSIM_A_IFINDEX] = NLA_POLICY_MIN(NLA_U32, 1),
	[PPSIM_A_RING_SIZE] = NLA_POLICY_RANGE(NLA_U32, PPSIM_RING_MIN, PPSIM_RING_MAX),
	[PPSIM_A_POOL] = NLA_POLICY_MAX(NLA_U32, PPSIM_POOL_NONE),
	[PPSIM_A_RX_MODE] = NLA_POLICY_MAX(NLA_U32, PPSIM_RX_COPY),
	[PPSIM_A_SYNC] = NLA_POLICY_MAX(NLA_U32, PPSIM_SYNC_FULL),
	[PPSIM_A_PREFETCH] = NLA_POLICY_MAX(NLA_U32, PPSIM_PREFETCH_BEFORE_SYNC),
	[PPSIM_A_CACHE] = NLA_POLICY_MAX(NLA_U32, PPSIM_CACHE_FIFO),
	[PPSIM_A_NUMA_RULE] = NLA_POLICY_MAX(NLA_U8, 1),
	[PPSIM_A_IRQ_CPU] = NLA_POLICY_RANGE(NLA_S32, -1, S16_MAX),
	[PPSIM_A_FRAG] = NLA_POLICY_MAX(NLA_U8, 1),
};

static const struct nla_policy ppsim_gen_start_policy[PPSIM_A_GEN_CPU + 1] = {
	[PPSIM_A_IFINDEX] = NLA_POLICY_MIN(NLA_U32, 1),
	/* beyond any NIC: a bound keeps the pacing arithmetic meaningful */
	[PPSIM_A_GEN_RATE] = NLA_POLICY_FULL_RANGE(NLA_U64, &ppsim_rate_range),
	[PPSIM_A_GEN_SIZE] = NLA_POLICY_RANGE(NLA_U32, ETH_ZLEN, ETH_HLEN + PPSIM_MAX_MTU),
	[PPSIM_A_GEN_ETHERTYPE] = { .type = NLA_U16 },
	[PPSIM_A_GEN_DST_PORT] = NLA_POLICY_MIN(NLA_U16, 1),
	[PPSIM_A_GEN_COUNT] = { .type = NLA_U64 },
	[PPSIM_A_GEN_CPU] = NLA_POLICY_RANGE(NLA_S32, -1, S16_MAX),
};

static int ppsim_fill(struct sk_buff *skb, struct ppsim_priv *priv, u32 portid, u32 seq,
		      int flags, u8 cmd)
{
	struct net_device *peer = rtnl_dereference(priv->peer);
	struct bpf_prog *prog = rtnl_dereference(priv->xdp_prog);
	struct ppsim_gen *g = priv->gen;
	u64 written = 0, missed = 0;
	unsigned int q, start;
	void *hdr;

	for (q = 0; q < priv->num_rx; q++) {
		struct ppsim_rxq *rxq = &priv->rxq[q];
		u64 w, m;

		do {
			start = u64_stats_fetch_begin(&rxq->dev_syncp);
			w = rxq->dev_written;
			m = rxq->dev_missed;
		} while (u64_stats_fetch_retry(&rxq->dev_syncp, start));
		written += w;
		missed += m;
	}

	hdr = genlmsg_put(skb, portid, seq, &ppsim_nl_family, flags, cmd);
	if (!hdr)
		return -EMSGSIZE;
	if (nla_put_u32(skb, PPSIM_A_IFINDEX, priv->dev->ifindex) ||
	    nla_put_string(skb, PPSIM_A_IFNAME, priv->dev->name) ||
	    nla_put_u32(skb, PPSIM_A_PEER_IFINDEX, peer ? peer->ifindex : 0) ||
	    nla_put_u32(skb, PPSIM_A_RX_QUEUES, priv->num_rx) ||
	    nla_put_u32(skb, PPSIM_A_TX_QUEUES, priv->num_tx) ||
	    nla_put_u32(skb, PPSIM_A_RING_SIZE, priv->cfg.ring_size) ||
	    nla_put_u32(skb, PPSIM_A_POOL, priv->cfg.pool) ||
	    nla_put_u32(skb, PPSIM_A_RX_MODE, priv->cfg.rx_mode) ||
	    nla_put_u32(skb, PPSIM_A_SYNC, priv->cfg.sync) ||
	    nla_put_u32(skb, PPSIM_A_PREFETCH, priv->cfg.prefetch) ||
	    nla_put_u32(skb, PPSIM_A_CACHE, priv->cfg.cache) ||
	    nla_put_u8(skb, PPSIM_A_NUMA_RULE, priv->cfg.numa_rule) ||
	    nla_put_u8(skb, PPSIM_A_FRAG, priv->cfg.frag) ||
	    nla_put_s32(skb, PPSIM_A_IRQ_CPU, priv->cfg.irq_cpu) ||
	    nla_put_u32(skb, PPSIM_A_XDP_PROG_ID, prog ? prog->aux->id : 0) ||
	    nla_put_u8(skb, PPSIM_A_GEN_RUNNING, READ_ONCE(g->running)) ||
	    nla_put_u64_64bit(skb, PPSIM_A_GEN_RATE, g->rate, PPSIM_A_PAD) ||
	    nla_put_u32(skb, PPSIM_A_GEN_SIZE, g->size) ||
	    nla_put_u16(skb, PPSIM_A_GEN_ETHERTYPE, g->ethertype) ||
	    nla_put_u16(skb, PPSIM_A_GEN_DST_PORT, g->dst_port) ||
	    nla_put_u64_64bit(skb, PPSIM_A_GEN_COUNT, g->count, PPSIM_A_PAD) ||
	    nla_put_s32(skb, PPSIM_A_GEN_CPU, g->task ? g->cpu : -1) ||
	    nla_put_u64_64bit(skb, PPSIM_A_GEN_SENT, written, PPSIM_A_PAD) ||
	    nla_put_u64_64bit(skb, PPSIM_A_GEN_MISSED, missed, PPSIM_A_PAD)) {
		genlmsg_cancel(skb, hdr);
		return -EMSGSIZE;
	}
	genlmsg_end(skb, hdr);
	return 0;
}

/* Under rtnl: a ppsim device of the caller's namespace, or an extack error. */
static struct ppsim_priv *ppsim_nl_dev(struct genl_info *info)
{
	struct net_device *dev;

	if (GENL_REQ_ATTR_CHECK(info, PPSIM_A_IFINDEX))
		return ERR_PTR(-EINVAL);
	dev = __dev_get_by_index(genl_info_net(info),
				 nla_get_u32(info->attrs[PPSIM_A_IFINDEX]));
	if (!dev || !ppsim_is_ppsim(dev)) {
		NL_SET_ERR_MSG_ATTR(info->extack, info->attrs[PPSIM_A_IFINDEX],
				    "no ppsim device with this ifindex in this namespace");
		return ERR_PTR(-ENODEV);
	}
	return netdev_priv(dev);
}

static int ppsim_reply(struct genl_info *info, struct ppsim_priv **privs, unsigned int n)
{
	struct sk_buff *msg;
	unsigned int i;
	int err;

	msg = nlmsg_new(NLMSG_GOODSIZE, GFP_KERNEL);
	if (!msg)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		err = ppsim_fill(msg, privs[i], info->snd_portid, info->snd_seq, 0,
				 info->genlhdr->cmd);
		if (err) {
			nlmsg_free(msg);
			return err;
		}
	}
	return genlmsg_reply(msg, info);
}

static int ppsim_nl_dev_get_doit(struct sk_buff *skb, struct genl_info *info)
{
	struct ppsim_priv *priv;
	int err;

	rtnl_lock();
	priv = ppsim_nl_dev(info);
	err = IS_ERR(priv) ? PTR_ERR(priv) : ppsim_reply(info, &priv, 1);
	rtnl_unlock();
	return err;
}

static int ppsim_nl_dev_get_dumpit(struct sk_buff *skb, struct netlink_callback *cb)
{
	struct net *net = sock_net(skb->sk);
	struct ppsim_priv *priv;
	int idx = 0, err = 0;

	rtnl_lock();
	list_for_each_entry(priv, &ppsim_devs, list) {
		if (!net_eq(dev_net(priv->dev), net))
			continue;
		if (idx++ < cb->args[0])
			continue;
		err = ppsim_fill(skb, priv, NETLINK_CB(cb->skb).portid, cb->nlh->nlmsg_seq,
				 NLM_F_MULTI, PPSIM_CMD_DEV_GET);
		if (err)
			break;
		cb->args[0] = idx;
	}
	rtnl_unlock();
	if (err == -EMSGSIZE && skb->len)
		return skb->len;
	return err ?: skb->len;
}

static int ppsim_nl_dev_new_doit(struct sk_buff *skb, struct genl_info *info)
{
	struct nlattr **a = info->attrs;
	u32 rxqs = a[PPSIM_A_RX_QUEUES] ? nla_get_u32(a[PPSIM_A_RX_QUEUES]) : 1;
	u32 txqs = a[PPSIM_A_TX_QUEUES] ? nla_get_u32(a[PPSIM_A_TX_QUEUES]) : 1;
	u32 ring = a[PPSIM_A_RING_SIZE] ? nla_get_u32(a[PPSIM_A_RING_SIZE]) : PPSIM_RING_DEFAULT;
	bool pair = nla_get_flag(a[PPSIM_A_PAIR]);
	struct ppsim_priv *privs[2];
	struct net_device *devs[2];
	int err;

	rtnl_lock();
	err = ppsim_create(genl_info_net(info), rxqs, txqs, ring, pair, devs, info->extack);
	if (!err) {
		privs[0] = netdev_priv(devs[0]);
		privs[1] = pair ? netdev_priv(devs[1]) : NULL;
		err = ppsim_reply(info, privs, pair ? 2 : 1);
	}
	rtnl_unlock();
	return err;
}

/* Commands that name a device and do one thing to it, under rtnl. */
static int ppsim_nl_on_dev(struct genl_info *info, void (*fn)(struct ppsim_priv *priv))
{
	struct ppsim_priv *priv;
	int err = 0;

	rtnl_lock();
	priv = ppsim_nl_dev(info);
	if (IS_ERR(priv))
		err = PTR_ERR(priv);
	else
		fn(priv);
	rtnl_unlock();
	return err;
}

static void ppsim_destroy_priv(struct ppsim_priv *priv)
{
	ppsim_destroy(priv->dev);
}

static int ppsim_nl_dev_del_doit(struct sk_buff *skb, struct genl_info *info)
{
	return ppsim_nl_on_dev(info, ppsim_destroy_priv);
}

static void ppsim_get_u32(struct nlattr **a, int type, u32 *v)
{
	if (a[type])
		*v = nla_get_u32(a[type]);
}

static int ppsim_nl_dev_set_doit(struct sk_buff *skb, struct genl_info *info)
{
	struct nlattr **a = info->attrs;
	struct ppsim_priv *priv;
	struct ppsim_cfg cfg;
	int err;

	rtnl_lock();
	priv = ppsim_nl_dev(info);
	if (IS_ERR(priv)) {
		err = PTR_ERR(priv);
		goto out;
	}
	cfg = priv->cfg;
	ppsim_get_u32(a, PPSIM_A_RING_SIZE, &cfg.ring_size);
	ppsim_get_u32(a, PPSIM_A_POOL, &cfg.pool);
	ppsim_get_u32(a, PPSIM_A_RX_MODE, &cfg.rx_mode);
	ppsim_get_u32(a, PPSIM_A_SYNC, &cfg.sync);
	ppsim_get_u32(a, PPSIM_A_PREFETCH, &cfg.prefetch);
	ppsim_get_u32(a, PPSIM_A_CACHE, &cfg.cache);
	if (a[PPSIM_A_NUMA_RULE])
		cfg.numa_rule = nla_get_u8(a[PPSIM_A_NUMA_RULE]);
	if (a[PPSIM_A_IRQ_CPU])
		cfg.irq_cpu = nla_get_s32(a[PPSIM_A_IRQ_CPU]);
	if (a[PPSIM_A_FRAG])
		cfg.frag = nla_get_u8(a[PPSIM_A_FRAG]);
	err = ppsim_cfg_check(priv, &cfg, rtnl_dereference(priv->xdp_prog), priv->dev->mtu,
			      info->extack);
	if (!err)
		err = ppsim_reconfigure(priv, &cfg, info->extack);
out:
	rtnl_unlock();
	return err;
}

static int ppsim_nl_gen_start_doit(struct sk_buff *skb, struct genl_info *info)
{
	struct nlattr **a = info->attrs;
	struct ppsim_gen *req;
	struct ppsim_priv *priv;
	int err;

	req = kzalloc(sizeof(*req), GFP_KERNEL);
	if (!req)
		return -ENOMEM;
	req->size = ETH_ZLEN;
	req->ethertype = ETH_P_IP;
	req->dst_port = 9;
	req->cpu = -1;
	req->flows = READ_ONCE(ppsim_gen_flows);
	if (a[PPSIM_A_GEN_RATE])
		req->rate = nla_get_u64(a[PPSIM_A_GEN_RATE]);
	ppsim_get_u32(a, PPSIM_A_GEN_SIZE, &req->size);
	if (a[PPSIM_A_GEN_ETHERTYPE])
		req->ethertype = nla_get_u16(a[PPSIM_A_GEN_ETHERTYPE]);
	if (a[PPSIM_A_GEN_DST_PORT])
		req->dst_port = nla_get_u16(a[PPSIM_A_GEN_DST_PORT]);
	if (a[PPSIM_A_GEN_COUNT])
		req->count = nla_get_u64(a[PPSIM_A_GEN_COUNT]);
	if (a[PPSIM_A_GEN_CPU])
		req->cpu = nla_get_s32(a[PPSIM_A_GEN_CPU]);

	rtnl_lock();
	priv = ppsim_nl_dev(info);
	err = IS_ERR(priv) ? PTR_ERR(priv) : ppsim_gen_start(priv, req, info->extack);
	rtnl_unlock();
	kfree(req);
	return err;
}

static int ppsim_nl_gen_stop_doit(struct sk_buff *skb, struct genl_info *info)
{
	return ppsim_nl_on_dev(info, ppsim_gen_stop);
}

static const struct genl_ops ppsim_nl_ops[] = {
	{
		.cmd = PPSIM_CMD_DEV_GET,
		.doit = ppsim_nl_dev_get_doit,
		.dumpit = ppsim_nl_dev_get_dumpit,
		.policy = ppsim_dev_get_policy,
		.maxattr = ARRAY_SIZE(ppsim_dev_get_policy) - 1,
	},
	{
		.cmd = PPSIM_CMD_DEV_NEW,
		.doit = ppsim_nl_dev_new_doit,
		.policy = ppsim_dev_new_policy,
		.maxattr = ARRAY_SIZE(ppsim_dev_new_policy) - 1,
		.flags = GENL_ADMIN_PERM,
	},
	{
		.cmd = PPSIM_CMD_DEV_DEL,
		.doit = ppsim_nl_dev_del_doit,
		.policy = ppsim_dev_get_policy,
		.maxattr = ARRAY_SIZE(ppsim_dev_get_policy) - 1,
		.flags = GENL_ADMIN_PERM,
	},
	{
		.cmd = PPSIM_CMD_DEV_SET,
		.doit = ppsim_nl_dev_set_doit,
		.policy = ppsim_dev_set_policy,
		.maxattr = ARRAY_SIZE(ppsim_dev_set_policy) - 1,
		.flags = GENL_ADMIN_PERM,
	},
	{
		.cmd = PPSIM_CMD_GEN_START,
		.doit = ppsim_nl_gen_start_doit,
		.policy = ppsim_gen_start_policy,
		.maxattr = ARRAY_SIZE(ppsim_gen_start_policy) - 1,
		.flags = GENL_ADMIN_PERM,
	},
	{
		.cmd = PPSIM_CMD_GEN_STOP,
		.doit = ppsim_nl_gen_stop_doit,
		.policy = ppsim_dev_get_policy,
		.maxattr = ARRAY_SIZE(ppsim_dev_get_policy) - 1,
		.flags = GENL_ADMIN_PERM,
	},
};

static struct genl_family ppsim_nl_family __ro_after_init = {
	.name = PPSIM_FAMILY_NAME,
	.version = PPSIM_FAMILY_VERSION,
	.netnsok = true,
	.module = THIS_MODULE,
	.pre_doit = PPB_GENL_PRE_DOIT,
	.ops = ppsim_nl_ops,
	.n_ops = ARRAY_SIZE(ppsim_nl_ops),
};

int ppsim_nl_init(void)
{
	return genl_register_family(&ppsim_nl_family);
}

void ppsim_nl_exit(void)
{
	genl_unregister_family(&ppsim_nl_family);
}
