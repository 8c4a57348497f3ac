/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Kernel-version differences, in one place.  The runtime-tested base is
 * Debian 12's 6.1; the other lines of the matrix are Debian 11's 5.10 and
 * bookworm-backports' 6.12 (Documentation/kernels.rst).  Where a feature can
 * be tested (a header, a macro) it is; a version check is used only where the
 * version alone decides, and says which release brought the change.
 */
#ifndef _PPKIT_COMPAT_H
#define _PPKIT_COMPAT_H

#include <linux/version.h>
#include <linux/mmzone.h>
#include <linux/gfp.h>
#include <linux/smp.h>
#include <linux/string.h>
#include <linux/skbuff.h>
#include <linux/netdevice.h>
#include <linux/ethtool.h>
#include <linux/filter.h>
#include <net/xdp.h>
#include <net/genetlink.h>
#include <linux/kthread.h>
#include <linux/topology.h>

/*
 * Highest valid page order: MAX_ORDER became inclusive in 6.4 and was
 * renamed MAX_PAGE_ORDER in 6.8.
 */
#if defined(MAX_PAGE_ORDER)
#define PPB_MAX_PAGE_ORDER	MAX_PAGE_ORDER
#elif LINUX_VERSION_CODE >= KERNEL_VERSION(6, 4, 0)
#define PPB_MAX_PAGE_ORDER	MAX_ORDER
#else
#define PPB_MAX_PAGE_ORDER	(MAX_ORDER - 1)
#endif

/* get_unaligned() and friends: <linux/unaligned.h> since 6.12. */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 12, 0)
#include <linux/unaligned.h>
#else
#include <asm/unaligned.h>
#endif

/*
 * The kernel's own page_pool (ppsim's native mode, pp_bench): its header was
 * split into <net/page_pool/{types,helpers}.h> in 6.6.
 */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 6, 0)
#include <net/page_pool/helpers.h>
#else
#include <net/page_pool.h>
#endif

/*
 * The netdev family's page-pool introspection (6.8): the kernel's pools it
 * lists know their netdev and NAPI (page_pool_params.netdev and .napi; with
 * .napi the pool also recycles directly where that NAPI runs).  Its uapi
 * header (in <linux/netdevice.h> since 6.3) names the family's multicast
 * group for pools from then on.
 */
#ifdef NETDEV_MCGRP_PAGE_POOL
static inline void ppb_pp_params_set_netdev(struct page_pool_params *p, struct net_device *dev,
					    struct napi_struct *napi)
{
	p->netdev = dev;
	p->napi = napi;
}
#else
static inline void ppb_pp_params_set_netdev(struct page_pool_params *p, struct net_device *dev,
					    struct napi_struct *napi)
{
}
#endif

/* A dump's parsed attributes: in genl_dumpit_info's own genl_info since 6.2. */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 2, 0)
#define ppb_genl_dump_attrs(cb)	(genl_dumpit_info(cb)->info.attrs)
#else
#define ppb_genl_dump_attrs(cb)	(genl_dumpit_info(cb)->attrs)
#endif

/* A namespace's UDP socket table: its own (udp_child_hash_entries) since 6.2. */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 2, 0)
#define ppb_udp_table(net)	((net)->ipv4.udp_table)
#else
#define ppb_udp_table(net)	(&udp_table)
#endif

/*
 * Bulk page allocation came in 5.13.  Before it, one page at a time, with
 * the same contract: fill the NULL slots of @pages in order, stop at the
 * first failure, return how many slots from the start hold a page.
 */
#if LINUX_VERSION_CODE < KERNEL_VERSION(5, 13, 0)
static inline unsigned long ppb_alloc_pages_bulk_node(gfp_t gfp, int nid,
						      unsigned long nr,
						      struct page **pages)
{
	unsigned long i;

	for (i = 0; i < nr; i++) {
		if (pages[i])
			continue;
		pages[i] = alloc_pages_node(nid, gfp, 0);
		if (!pages[i])
			break;
	}
	return i;
}
#else
#define ppb_alloc_pages_bulk_node(gfp, nid, nr, pages) \
	alloc_pages_bulk_array_node(gfp, nid, nr, pages)
#endif

/*
 * Since 6.1 the genetlink core refuses a request whose header has its
 * reserved field set, for every command at or above the family's
 * resv_start_op (ours leave it at 0: every command).  Before, the family's
 * pre_doit does the same for the do requests: PPB_GENL_PRE_DOIT is NULL
 * where the core does it.
 */
#if LINUX_VERSION_CODE < KERNEL_VERSION(6, 1, 0)
static inline int ppb_genl_check_reserved(const struct genl_ops *ops, struct sk_buff *skb,
					  struct genl_info *info)
{
	if (likely(!info->genlhdr->reserved))
		return 0;
	NL_SET_ERR_MSG(info->extack, "the genetlink header's reserved field is not 0");
	return -EINVAL;
}

#define PPB_GENL_PRE_DOIT	ppb_genl_check_reserved
#else
#define PPB_GENL_PRE_DOIT	NULL
#endif

/* A request's required attribute, with an extack message when it is missing (6.1). */
#ifndef GENL_REQ_ATTR_CHECK
static inline bool ppb_genl_attr_missing(struct genl_info *info, int attr)
{
	if (info->attrs[attr])
		return false;
	NL_SET_ERR_MSG(info->extack, "a required attribute is missing");
	return true;
}

#define GENL_REQ_ATTR_CHECK(info, attr)	ppb_genl_attr_missing(info, attr)
#endif

/* INIT_CSD() came in 5.11: a zeroed csd with its function and argument. */
#ifndef INIT_CSD
static inline void ppb_init_csd(call_single_data_t *csd, smp_call_func_t fn, void *arg)
{
	memset(csd, 0, sizeof(*csd));
	csd->func = fn;
	csd->info = arg;
}

#define INIT_CSD(csd, fn, arg)	ppb_init_csd(csd, fn, arg)
#endif

/* netif_napi_add() lost its weight argument in 6.1: the default weight. */
#if LINUX_VERSION_CODE < KERNEL_VERSION(6, 1, 0)
#define ppb_netif_napi_add(dev, napi, poll) \
	netif_napi_add(dev, napi, poll, NAPI_POLL_WEIGHT)
#else
#define ppb_netif_napi_add(dev, napi, poll)	netif_napi_add(dev, napi, poll)
#endif

/* napi_build_skb() (5.13) is build_skb() with the NAPI skb cache. */
#if LINUX_VERSION_CODE < KERNEL_VERSION(5, 13, 0)
#define ppb_napi_build_skb(data, size)	build_skb(data, size)
#else
#define ppb_napi_build_skb(data, size)	napi_build_skb(data, size)
#endif

/*
 * A page of the kernel's own page_pool handed to the stack in @skb.  Since
 * 5.14 the skb is marked and the stack recycles the page into the pool.
 * Before, the core cannot recycle it: the page leaves the pool (unmapped,
 * no longer counted in flight) and the stack's put_page frees it.  Our own
 * pool never uses this (it reclaims stack pages itself, see ppb_skb_mark()).
 */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(5, 14, 0)
#define PPB_HAVE_SKB_RECYCLE	1
static inline void ppb_native_skb_mark(struct page_pool *pool, struct sk_buff *skb,
				       struct page *page)
{
	skb_mark_for_recycle(skb);
}

/* Whether the kernel's page_pool would take @skb's pages back. */
#define ppb_skb_pp_recycle(skb)	((skb)->pp_recycle)
#else
#define PPB_HAVE_SKB_RECYCLE	0
static inline void ppb_native_skb_mark(struct page_pool *pool, struct sk_buff *skb,
				       struct page *page)
{
	page_pool_release_page(pool, page);
}

#define ppb_skb_pp_recycle(skb)	false
#endif

/* xdp_init_buff() and xdp_prepare_buff() came in 5.12. */
#if LINUX_VERSION_CODE < KERNEL_VERSION(5, 12, 0)
static inline void xdp_init_buff(struct xdp_buff *xdp, u32 frame_sz,
				 struct xdp_rxq_info *rxq)
{
	xdp->frame_sz = frame_sz;
	xdp->rxq = rxq;
}

static inline void xdp_prepare_buff(struct xdp_buff *xdp, unsigned char *hard_start,
				    int headroom, int data_len, const bool meta_valid)
{
	xdp->data_hard_start = hard_start;
	xdp->data = hard_start + headroom;
	xdp->data_end = xdp->data + data_len;
	/* an invalid data_meta is data + 1, as xdp_set_data_meta_invalid() sets */
	if (meta_valid)
		xdp->data_meta = xdp->data;
	else
		xdp_set_data_meta_invalid(xdp);
}
#endif

/* bpf_warn_invalid_xdp_action() learnt the device and program in 5.17. */
#if LINUX_VERSION_CODE < KERNEL_VERSION(5, 17, 0)
#define ppb_warn_invalid_xdp_action(dev, prog, act)	bpf_warn_invalid_xdp_action(act)
#else
#define ppb_warn_invalid_xdp_action(dev, prog, act) \
	bpf_warn_invalid_xdp_action(dev, prog, act)
#endif

/* A program run without the XDP dispatcher: BPF_PROG_RUN() became the
 * function bpf_prog_run() in 5.15.
 */
#ifdef BPF_PROG_RUN
#define ppb_bpf_prog_run(prog, ctx)	BPF_PROG_RUN(prog, ctx)
#else
#define ppb_bpf_prog_run(prog, ctx)	bpf_prog_run(prog, ctx)
#endif

/* xdp_rxq_info_reg() takes the NAPI id since 5.11. */
#if LINUX_VERSION_CODE < KERNEL_VERSION(5, 11, 0)
#define ppb_xdp_rxq_info_reg(rxq, dev, queue, napi_id)	xdp_rxq_info_reg(rxq, dev, queue)
#else
#define ppb_xdp_rxq_info_reg(rxq, dev, queue, napi_id) \
	xdp_rxq_info_reg(rxq, dev, queue, napi_id)
#endif

/*
 * Since 6.3 a device advertises the XDP actions it supports
 * (dev->xdp_features), and devmap redirects only to a device that
 * advertises ndo_xdp_xmit.  Before, there was nothing to advertise.
 */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 3, 0)
static inline void ppb_xdp_advertise(struct net_device *dev)
{
	xdp_set_features_flag(dev, NETDEV_XDP_ACT_BASIC | NETDEV_XDP_ACT_REDIRECT |
			      NETDEV_XDP_ACT_NDO_XMIT);
}
#else
static inline void ppb_xdp_advertise(struct net_device *dev)
{
}
#endif

/* ethtool_sprintf() came in 5.13: one ETH_GSTRING_LEN string, then advance. */
#if LINUX_VERSION_CODE < KERNEL_VERSION(5, 13, 0)
static inline __printf(2, 3) void ethtool_sprintf(u8 **data, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vscnprintf((char *)*data, ETH_GSTRING_LEN, fmt, ap);
	va_end(ap);
	*data += ETH_GSTRING_LEN;
}
#endif

/*
 * ethtool's ring and coalesce operations gained a kernel-only structure and
 * an extack in 5.17 and 5.15: older kernels get wrappers without them
 * (PPB_ETHTOOL_OLD_RINGPARAM, PPB_ETHTOOL_OLD_COALESCE).
 */
#if LINUX_VERSION_CODE < KERNEL_VERSION(5, 17, 0)
#define PPB_ETHTOOL_OLD_RINGPARAM	1
struct kernel_ethtool_ringparam;
#endif
#if LINUX_VERSION_CODE < KERNEL_VERSION(5, 15, 0)
#define PPB_ETHTOOL_OLD_COALESCE	1
struct kernel_ethtool_coalesce;
#endif

/*
 * kthread_create_on_cpu() is exported to modules since 5.12.  Kbuild reads
 * the kernel's Module.symvers and defines PPKIT_HAVE_KTHREAD_CREATE_ON_CPU
 * when it is there; without it, create the thread on the CPU's node and
 * bind it to the CPU, which is what it does.
 */
#ifdef PPKIT_HAVE_KTHREAD_CREATE_ON_CPU
#define ppb_kthread_create_on_cpu(fn, data, cpu, namefmt) \
	kthread_create_on_cpu(fn, data, cpu, namefmt)
#else
static inline __printf(4, 0) struct task_struct *
ppb_kthread_create_on_cpu(int (*fn)(void *data), void *data, unsigned int cpu,
			  const char *namefmt)
{
	struct task_struct *t = kthread_create_on_node(fn, data, cpu_to_node(cpu),
						       namefmt, cpu);

	if (!IS_ERR(t))
		kthread_bind(t, cpu);
	return t;
}
#endif

#endif /* _PPKIT_COMPAT_H */
