// SPDX-License-Identifier: GPL-2.0
/*
 * pp_backport: the ppkit generic netlink family.  Pools and their
 * statistics for anyone; resizing a live pool for admins; a multicast group
 * that says when pools come, change and go.  The uapi is
 * include/uapi/linux/ppkit.h, the spec Documentation/netlink/specs/ppkit.yaml.
 */

#include <linux/module.h>
#include <net/genetlink.h>
#include <ppkit/compat.h>
#include <uapi/linux/ppkit.h>
#include "pool.h"
#include "holders.h"

static struct genl_family ppkit_nl_family;

enum { PPKIT_NLGRP_MGMT };

static const struct genl_multicast_group ppkit_nl_mcgrps[] = {
	[PPKIT_NLGRP_MGMT] = { .name = PPKIT_MCGRP_MGMT },
};

static struct netlink_range_validation ppkit_ring_range = {
	.min = PPKIT_RING_SIZE_MIN,
	.max = PPKIT_RING_SIZE_MAX,
};

static const struct nla_policy ppkit_pool_get_policy[PPKIT_A_POOL_ID + 1] = {
	[PPKIT_A_POOL_ID] = NLA_POLICY_MIN(NLA_U32, 1),
};

static const struct nla_policy ppkit_stats_get_policy[PPKIT_A_STATS_LENT_AGES + 1] = {
	[PPKIT_A_STATS_POOL_ID] = NLA_POLICY_MIN(NLA_U32, 1),
	[PPKIT_A_STATS_IFINDEX] = NLA_POLICY_MIN(NLA_U32, 1),
	[PPKIT_A_STATS_LENT_AGES] = { .type = NLA_FLAG },
};

static const struct nla_policy ppkit_pool_set_policy[PPKIT_A_POOL_REFILL_BATCH + 1] = {
	[PPKIT_A_POOL_ID] = NLA_POLICY_MIN(NLA_U32, 1),
	[PPKIT_A_POOL_RING_SIZE] = NLA_POLICY_FULL_RANGE(NLA_U32, &ppkit_ring_range),
	[PPKIT_A_POOL_REFILL_BATCH] = NLA_POLICY_RANGE(NLA_U32, PPKIT_REFILL_BATCH_MIN,
						       PPKIT_REFILL_BATCH_MAX),
};

static const struct nla_policy ppkit_holders_get_policy[PPKIT_A_HOLDERS_POOL_ID + 1] = {
	[PPKIT_A_HOLDERS_POOL_ID] = NLA_POLICY_MIN(NLA_U32, 1),
};

static u32 ppkit_dma_dir(const struct ppb_pool *pool)
{
	if (!(pool->p.flags & PPB_FLAG_DMA_MAP))
		return PPKIT_DMA_NONE;
	return pool->p.dma_dir == DMA_BIDIRECTIONAL ? PPKIT_DMA_BIDIRECTIONAL :
						      PPKIT_DMA_FROM_DEVICE;
}

static int ppkit_put_u64(struct sk_buff *skb, int attr, u64 v, int pad)
{
	return nla_put_u64_64bit(skb, attr, v, pad);
}

/*
 * @n u64 attributes numbered from @first, in one piece: one room check and
 * one skb_put() rather than one each.  A stats dump of 1,000 pools puts
 * 29,000 of them every time a sampler asks.  Where u64 attributes may
 * need pad attributes (no efficient unaligned access: each 12-byte
 * attribute moves the next one's alignment), they go one by one.
 */
static int ppkit_put_u64s(struct sk_buff *skb, int first, const u64 *v, int n, int pad)
{
	const int each = nla_total_size(sizeof(u64));
	struct nlattr *nla;
	int i;

	if (!IS_ENABLED(CONFIG_HAVE_EFFICIENT_UNALIGNED_ACCESS)) {
		for (i = 0; i < n; i++)
			if (ppkit_put_u64(skb, first + i, v[i], pad))
				return -EMSGSIZE;
		return 0;
	}
	if (skb_tailroom(skb) < n * each)
		return -EMSGSIZE;
	nla = skb_put(skb, n * each);
	for (i = 0; i < n; i++) {
		nla->nla_type = first + i;
		nla->nla_len = nla_attr_size(sizeof(u64));
		put_unaligned(v[i], (u64 *)nla_data(nla));
		nla = (struct nlattr *)((char *)nla + each);
	}
	return 0;
}

/* Called with the registry locked: @pool cannot be freed meanwhile. */
static int ppkit_fill_pool(struct sk_buff *skb, struct ppb_pool *pool, u32 portid,
			   u32 seq, int flags, u8 cmd)
{
	unsigned int napi_id = READ_ONCE(pool->napi_id);
	int ifindex = READ_ONCE(pool->ifindex);
	struct ppb_stats st;
	void *hdr;

	hdr = genlmsg_put(skb, portid, seq, &ppkit_nl_family, flags, cmd);
	if (!hdr)
		return -EMSGSIZE;
	ppb_get_stats(pool, &st);
	if (nla_put_u32(skb, PPKIT_A_POOL_ID, pool->id) ||
	    nla_put_string(skb, PPKIT_A_POOL_OWNER, pool->owner) ||
	    (ifindex &&
	     (nla_put_u32(skb, PPKIT_A_POOL_IFINDEX, ifindex) ||
	      nla_put_u32(skb, PPKIT_A_POOL_QUEUE, pool->p.queue))) ||
	    (napi_id && nla_put_u32(skb, PPKIT_A_POOL_NAPI_ID, napi_id)) ||
	    nla_put_s32(skb, PPKIT_A_POOL_NID, READ_ONCE(pool->nid)) ||
	    nla_put_u32(skb, PPKIT_A_POOL_ORDER, pool->p.order) ||
	    nla_put_u32(skb, PPKIT_A_POOL_RING_SIZE, READ_ONCE(pool->ring.size)) ||
	    nla_put_u32(skb, PPKIT_A_POOL_CACHE_SIZE, PPB_CACHE_SIZE) ||
	    nla_put_u32(skb, PPKIT_A_POOL_REFILL_BATCH, READ_ONCE(pool->refill_batch)) ||
	    nla_put_u32(skb, PPKIT_A_POOL_MAX_LEN, pool->p.max_len) ||
	    nla_put_u32(skb, PPKIT_A_POOL_DMA_DIR, ppkit_dma_dir(pool)) ||
	    ppkit_put_u64(skb, PPKIT_A_POOL_INFLIGHT, st.inflight_pages, PPKIT_A_POOL_PAD) ||
	    ppkit_put_u64(skb, PPKIT_A_POOL_INFLIGHT_MEM, st.inflight_bytes,
			  PPKIT_A_POOL_PAD) ||
	    ppkit_put_u64(skb, PPKIT_A_POOL_CREATED, ktime_to_ns(pool->created),
			  PPKIT_A_POOL_PAD) ||
	    (READ_ONCE(pool->destroyed) && pool->detached &&
	     ppkit_put_u64(skb, PPKIT_A_POOL_DETACH_TIME, ktime_to_ns(pool->detached),
			   PPKIT_A_POOL_PAD))) {
		genlmsg_cancel(skb, hdr);
		return -EMSGSIZE;
	}
	genlmsg_end(skb, hdr);
	return 0;
}

static int ppkit_fill_stats(struct sk_buff *skb, struct ppb_pool *pool, u32 portid,
			    u32 seq, int flags, bool ages)
{
	int ifindex = READ_ONCE(pool->ifindex);
	struct ppb_stats st;
	u64 inflight[2], oldest_ms;
	u32 held;
	void *hdr;

	/* The counters (PPB_STAT) then inflight and inflight_mem, in one run each. */
	BUILD_BUG_ON(PPKIT_A_STATS_INFLIGHT_MEM - PPKIT_A_STATS_INFLIGHT != 1);

	hdr = genlmsg_put(skb, portid, seq, &ppkit_nl_family, flags, PPKIT_CMD_STATS_GET);
	if (!hdr)
		return -EMSGSIZE;
	ppb_get_stats(pool, &st);
	if (nla_put_u32(skb, PPKIT_A_STATS_POOL_ID, pool->id) ||
	    (ifindex && nla_put_u32(skb, PPKIT_A_STATS_IFINDEX, ifindex)))
		goto cancel;
	inflight[0] = st.inflight_pages;
	inflight[1] = st.inflight_bytes;
	if (ppkit_put_u64s(skb, PPKIT_A_STATS_FIRST_COUNTER, st.c, PPB_STAT_NR,
			   PPKIT_A_STATS_PAD) ||
	    ppkit_put_u64s(skb, PPKIT_A_STATS_INFLIGHT, inflight, ARRAY_SIZE(inflight),
			   PPKIT_A_STATS_PAD) ||
	    nla_put_u32(skb, PPKIT_A_STATS_CACHE_PAGES, st.cache_pages) ||
	    nla_put_u32(skb, PPKIT_A_STATS_RING_PAGES, st.ring_pages) ||
	    nla_put_u32(skb, PPKIT_A_STATS_LENT_PAGES, st.lent_pages))
		goto cancel;
	if ((pool->p.flags & PPB_FLAG_PAGE_FRAG) &&
	    (nla_put_u64_64bit(skb, PPKIT_A_STATS_FRAGS_SERVED, st.frags_served,
			       PPKIT_A_STATS_PAD) ||
	     nla_put_u64_64bit(skb, PPKIT_A_STATS_FRAGS_LENT, st.frags_lent,
			       PPKIT_A_STATS_PAD) ||
	     nla_put_u64_64bit(skb, PPKIT_A_STATS_FRAG_PAGES_UNLENT, st.frag_pages_unlent,
			       PPKIT_A_STATS_PAD)))
		goto cancel;
	if (ages) {
		ppb_lent_ages(pool, &held, &oldest_ms);
		if (nla_put_u32(skb, PPKIT_A_STATS_LENT_HELD, held) ||
		    nla_put_u64_64bit(skb, PPKIT_A_STATS_LENT_OLDEST_MS, oldest_ms,
				      PPKIT_A_STATS_PAD))
			goto cancel;
	}
	genlmsg_end(skb, hdr);
	return 0;
cancel:
	genlmsg_cancel(skb, hdr);
	return -EMSGSIZE;
}

/* The pool named by @attr, under RCU; an ERR_PTR with extack if none. */
static struct ppb_pool *ppkit_lookup(struct genl_info *info, int attr)
{
	struct ppb_pool *pool;

	/* The missing attribute's type for tools, and words for people. */
	if (GENL_REQ_ATTR_CHECK(info, attr)) {
		NL_SET_ERR_MSG(info->extack, "no pool id: give the pool's id (see ppctl list)");
		return ERR_PTR(-EINVAL);
	}
	pool = ppb_registry_find(nla_get_u32(info->attrs[attr]));
	if (!pool) {
		NL_SET_ERR_MSG_ATTR(info->extack, info->attrs[attr], "no such pool");
		return ERR_PTR(-ENOENT);
	}
	return pool;
}

static int ppkit_reply(struct genl_info *info, int attr,
		       int (*fill)(struct sk_buff *, struct ppb_pool *, struct genl_info *))
{
	struct ppb_pool *pool;
	struct sk_buff *msg;
	int err;

	msg = genlmsg_new(NLMSG_GOODSIZE, GFP_KERNEL);
	if (!msg)
		return -ENOMEM;
	rcu_read_lock();
	pool = ppkit_lookup(info, attr);
	err = IS_ERR(pool) ? PTR_ERR(pool) : fill(msg, pool, info);
	rcu_read_unlock();
	if (err) {
		nlmsg_free(msg);
		return err;
	}
	return genlmsg_reply(msg, info);
}

static int ppkit_fill_pool_info(struct sk_buff *msg, struct ppb_pool *pool,
				struct genl_info *info)
{
	return ppkit_fill_pool(msg, pool, info->snd_portid, info->snd_seq, 0,
			       PPKIT_CMD_POOL_GET);
}

static int ppkit_fill_stats_info(struct sk_buff *msg, struct ppb_pool *pool,
				 struct genl_info *info)
{
	return ppkit_fill_stats(msg, pool, info->snd_portid, info->snd_seq, 0,
				nla_get_flag(info->attrs[PPKIT_A_STATS_LENT_AGES]));
}

static int ppkit_nl_pool_get_doit(struct sk_buff *skb, struct genl_info *info)
{
	return ppkit_reply(info, PPKIT_A_POOL_ID, ppkit_fill_pool_info);
}

static int ppkit_nl_stats_get_doit(struct sk_buff *skb, struct genl_info *info)
{
	return ppkit_reply(info, PPKIT_A_STATS_POOL_ID, ppkit_fill_stats_info);
}

/* Dumps resume from the id after the last pool that fit (cb->args[0]). */
static int ppkit_dump(struct sk_buff *skb, struct netlink_callback *cb, bool stats)
{
	struct nlattr **attrs = ppb_genl_dump_attrs(cb);
	u32 portid = NETLINK_CB(cb->skb).portid;
	unsigned long id = cb->args[0];
	u32 ifindex = 0;
	struct ppb_pool *pool;
	bool ages = false;
	int err = 0;

	if (stats && attrs[PPKIT_A_STATS_IFINDEX])
		ifindex = nla_get_u32(attrs[PPKIT_A_STATS_IFINDEX]);
	if (stats)
		ages = nla_get_flag(attrs[PPKIT_A_STATS_LENT_AGES]);

	/*
	 * One pool a read-side section: a destroy under RTNL waits for one
	 * pool's lent ages at most, never for a whole dump.
	 */
	for (;; id++) {
		rcu_read_lock();
		pool = ppb_registry_next(&id);
		if (pool && (!ifindex || READ_ONCE(pool->ifindex) == ifindex))
			err = stats ? ppkit_fill_stats(skb, pool, portid, cb->nlh->nlmsg_seq,
						       NLM_F_MULTI, ages) :
				      ppkit_fill_pool(skb, pool, portid, cb->nlh->nlmsg_seq,
						      NLM_F_MULTI, PPKIT_CMD_POOL_GET);
		rcu_read_unlock();
		if (!pool || err)
			break;
		cond_resched();
	}
	cb->args[0] = id;
	/* A full skb ends this round; the next one starts at this pool. */
	if (err == -EMSGSIZE && skb->len)
		return skb->len;
	return err;
}

static int ppkit_nl_pool_get_dumpit(struct sk_buff *skb, struct netlink_callback *cb)
{
	return ppkit_dump(skb, cb, false);
}

static int ppkit_nl_stats_get_dumpit(struct sk_buff *skb, struct netlink_callback *cb)
{
	return ppkit_dump(skb, cb, true);
}

static int ppkit_nl_pool_set_doit(struct sk_buff *skb, struct genl_info *info)
{
	struct nlattr *ring = info->attrs[PPKIT_A_POOL_RING_SIZE];
	struct nlattr *batch = info->attrs[PPKIT_A_POOL_REFILL_BATCH];
	struct ppb_pool *pool;
	int err = 0;

	if (!ring && !batch) {
		NL_SET_ERR_MSG(info->extack, "nothing to set: give ring-size and/or refill-batch");
		return -EINVAL;
	}
	ppb_registry_lock();
	pool = ppkit_lookup(info, PPKIT_A_POOL_ID);
	if (IS_ERR(pool)) {
		err = PTR_ERR(pool);
		goto out;
	}
	if (READ_ONCE(pool->destroyed)) {
		NL_SET_ERR_MSG_ATTR(info->extack, info->attrs[PPKIT_A_POOL_ID],
				    "pool is destroyed, waiting for its pages");
		err = -EBUSY;
		goto out;
	}
	if (ring) {
		err = __ppb_pool_set_ring(pool, nla_get_u32(ring));
		if (err)
			NL_SET_ERR_MSG(info->extack, "cannot allocate the new ring");
	}
	if (!err && batch)
		WRITE_ONCE(pool->refill_batch, nla_get_u32(batch));
	if (!err)
		ppb_nl_notify(pool, PPKIT_CMD_POOL_CHANGE_NTF);
out:
	ppb_registry_unlock();
	return err;
}

static int ppkit_fill_holder(struct sk_buff *msg, const struct ppb_holder *r)
{
	struct nlattr *nest = nla_nest_start(msg, PPKIT_A_HOLDERS_HOLDER);

	if (!nest ||
	    nla_put_u32(msg, PPKIT_A_HOLDER_NETNS, r->netns) ||
	    nla_put_u16(msg, PPKIT_A_HOLDER_FAMILY, r->family) ||
	    nla_put_u16(msg, PPKIT_A_HOLDER_PROTOCOL, r->protocol) ||
	    nla_put_u8(msg, PPKIT_A_HOLDER_STATE, r->state) ||
	    (r->addr_len &&
	     (nla_put(msg, PPKIT_A_HOLDER_LOCAL_ADDR, r->addr_len, r->local) ||
	      nla_put_u16(msg, PPKIT_A_HOLDER_LOCAL_PORT, r->local_port) ||
	      nla_put(msg, PPKIT_A_HOLDER_REMOTE_ADDR, r->addr_len, r->remote) ||
	      nla_put_u16(msg, PPKIT_A_HOLDER_REMOTE_PORT, r->remote_port))) ||
	    ppkit_put_u64(msg, PPKIT_A_HOLDER_INODE, r->inode, PPKIT_A_HOLDER_PAD) ||
	    nla_put_u32(msg, PPKIT_A_HOLDER_UID, r->uid) ||
	    nla_put_u32(msg, PPKIT_A_HOLDER_PAGES, r->pages) ||
	    ppkit_put_u64(msg, PPKIT_A_HOLDER_OLDEST_MS, r->oldest_ms, PPKIT_A_HOLDER_PAD))
		return -EMSGSIZE;
	nla_nest_end(msg, nest);
	return 0;
}

static int ppkit_fill_holders(struct sk_buff *msg, u32 id, const struct ppb_holders *h,
			      struct genl_info *info)
{
	unsigned int i;
	void *hdr;

	hdr = genlmsg_put(msg, info->snd_portid, info->snd_seq, &ppkit_nl_family, 0,
			  PPKIT_CMD_HOLDERS_GET);
	if (!hdr)
		return -EMSGSIZE;
	if (nla_put_u32(msg, PPKIT_A_HOLDERS_POOL_ID, id) ||
	    ppkit_put_u64(msg, PPKIT_A_HOLDERS_DRIVER_PAGES, h->driver, PPKIT_A_HOLDERS_PAD) ||
	    nla_put_u32(msg, PPKIT_A_HOLDERS_LENT_PAGES, h->lent) ||
	    nla_put_u32(msg, PPKIT_A_HOLDERS_HELD_PAGES, h->held))
		goto cancel;
	for (i = 0; i < PPB_HOLD_AGE_NR; i++)
		if (nla_put_u32(msg, PPKIT_A_HOLDERS_HELD_10MS + i, h->age[i]))
			goto cancel;
	if (ppkit_put_u64(msg, PPKIT_A_HOLDERS_OLDEST_MS, h->oldest_ms, PPKIT_A_HOLDERS_PAD) ||
	    ppkit_put_u64(msg, PPKIT_A_HOLDERS_ORPHANED, h->orphaned, PPKIT_A_HOLDERS_PAD) ||
	    nla_put_u32(msg, PPKIT_A_HOLDERS_SOCKETS, h->sockets) ||
	    nla_put_u32(msg, PPKIT_A_HOLDERS_UNATTRIBUTED, h->unattributed) ||
	    (h->truncated && nla_put_flag(msg, PPKIT_A_HOLDERS_TRUNCATED)))
		goto cancel;
	for (i = 0; i < h->nr; i++)
		if (ppkit_fill_holder(msg, &h->holders[i]))
			goto cancel;
	genlmsg_end(msg, hdr);
	return 0;
cancel:
	genlmsg_cancel(msg, hdr);
	return -EMSGSIZE;
}

static int ppkit_nl_holders_get_doit(struct sk_buff *skb, struct genl_info *info)
{
	struct ppb_holders *h;
	struct sk_buff *msg;
	u32 id;
	int err;

	if (GENL_REQ_ATTR_CHECK(info, PPKIT_A_HOLDERS_POOL_ID)) {
		NL_SET_ERR_MSG(info->extack, "no pool id: give the pool's id (see ppctl list)");
		return -EINVAL;
	}
	id = nla_get_u32(info->attrs[PPKIT_A_HOLDERS_POOL_ID]);
	h = kvzalloc(sizeof(*h), GFP_KERNEL);
	if (!h)
		return -ENOMEM;
	err = ppb_holders_get(id, h, info->extack);
	if (err)
		goto out;
	msg = genlmsg_new(NLMSG_DEFAULT_SIZE + h->nr * 192, GFP_KERNEL);
	if (!msg) {
		err = -ENOMEM;
		goto out;
	}
	err = ppkit_fill_holders(msg, id, h, info);
	if (err) {
		nlmsg_free(msg);
		goto out;
	}
	err = genlmsg_reply(msg, info);
out:
	kvfree(h);
	return err;
}

static const struct genl_ops ppkit_nl_ops[] = {
	{
		.cmd = PPKIT_CMD_POOL_GET,
		.doit = ppkit_nl_pool_get_doit,
		.dumpit = ppkit_nl_pool_get_dumpit,
		.policy = ppkit_pool_get_policy,
		.maxattr = ARRAY_SIZE(ppkit_pool_get_policy) - 1,
	},
	{
		.cmd = PPKIT_CMD_STATS_GET,
		.doit = ppkit_nl_stats_get_doit,
		.dumpit = ppkit_nl_stats_get_dumpit,
		.policy = ppkit_stats_get_policy,
		.maxattr = ARRAY_SIZE(ppkit_stats_get_policy) - 1,
	},
	{
		.cmd = PPKIT_CMD_POOL_SET,
		.doit = ppkit_nl_pool_set_doit,
		.policy = ppkit_pool_set_policy,
		.maxattr = ARRAY_SIZE(ppkit_pool_set_policy) - 1,
		.flags = GENL_ADMIN_PERM,
	},
	{
		.cmd = PPKIT_CMD_HOLDERS_GET,
		.doit = ppkit_nl_holders_get_doit,
		.policy = ppkit_holders_get_policy,
		.maxattr = ARRAY_SIZE(ppkit_holders_get_policy) - 1,
		.flags = GENL_ADMIN_PERM,
	},
};

static struct genl_family ppkit_nl_family __ro_after_init = {
	.name = PPKIT_FAMILY_NAME,
	.version = PPKIT_FAMILY_VERSION,
	/* Pools are not per namespace, and neither are their notifications. */
	.netnsok = false,
	.parallel_ops = true,
	.module = THIS_MODULE,
	.pre_doit = PPB_GENL_PRE_DOIT,
	.ops = ppkit_nl_ops,
	.n_ops = ARRAY_SIZE(ppkit_nl_ops),
	.mcgrps = ppkit_nl_mcgrps,
	.n_mcgrps = ARRAY_SIZE(ppkit_nl_mcgrps),
};

/* Tell listeners about @pool; process context (the registry lock may be held). */
void ppb_nl_notify(struct ppb_pool *pool, int cmd)
{
	struct sk_buff *msg;

	if (!genl_has_listeners(&ppkit_nl_family, &init_net, PPKIT_NLGRP_MGMT))
		return;
	msg = genlmsg_new(NLMSG_GOODSIZE, GFP_KERNEL);
	if (!msg)
		return;
	if (ppkit_fill_pool(msg, pool, 0, 0, 0, cmd)) {
		nlmsg_free(msg);
		return;
	}
	genlmsg_multicast(&ppkit_nl_family, msg, 0, PPKIT_NLGRP_MGMT, GFP_KERNEL);
}

int ppb_nl_init(void)
{
	return genl_register_family(&ppkit_nl_family);
}

void ppb_nl_exit(void)
{
	genl_unregister_family(&ppkit_nl_family);
}
