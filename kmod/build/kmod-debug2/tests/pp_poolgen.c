// SPDX-License-Identifier: GPL-2.0
/*
 * pp_poolgen: pools for user-space tests.  Creates @pools pools on the
 * loopback device (queue = index), runs some traffic through each at load,
 * keeps @inflight pages of each allocated until unload, and with @churn
 * cycles that many pages per pool every 100 ms (ring returns and skbs freed
 * by the "stack"), so that rates move.
 */

#include <linux/module.h>
#include <linux/moduleparam.h>
#include <ppkit/modparam.h>
#include <linux/platform_device.h>
#include <linux/netdevice.h>
#include <linux/skbuff.h>
#include <linux/kthread.h>
#include <linux/delay.h>
#include <net/net_namespace.h>
#include <ppkit/page_pool.h>

#define PG_MAX_POOLS	4096
#define PG_MAX_INFLIGHT	64

static unsigned int pools = 4, inflight, churn;

static int pg_set_pools(const char *val, const struct kernel_param *kp)
{
	return ppkit_param_set_range(val, kp, 1, PG_MAX_POOLS);
}

static int pg_set_inflight(const char *val, const struct kernel_param *kp)
{
	return ppkit_param_set_range(val, kp, 0, PG_MAX_INFLIGHT);
}

static int pg_set_churn(const char *val, const struct kernel_param *kp)
{
	return ppkit_param_set_range(val, kp, 0, 1024);
}

static const struct kernel_param_ops pg_pools_ops = {
	.set = pg_set_pools, .get = param_get_uint,
};

static const struct kernel_param_ops pg_inflight_ops = {
	.set = pg_set_inflight, .get = param_get_uint,
};

static const struct kernel_param_ops pg_churn_ops = {
	.set = pg_set_churn, .get = param_get_uint,
};

module_param_cb(pools, &pg_pools_ops, &pools, 0444);
MODULE_PARM_DESC(pools, "pools to create (1..4096, default 4)");
module_param_cb(inflight, &pg_inflight_ops, &inflight, 0444);
MODULE_PARM_DESC(inflight, "pages per pool held until unload (0..64)");
module_param_cb(churn, &pg_churn_ops, &churn, 0444);
MODULE_PARM_DESC(churn, "pages per pool cycled every 100 ms (0..1024)");

struct pg_pool {
	struct ppb_pool *pool;
	struct page *held[PG_MAX_INFLIGHT];
	unsigned int nheld;
};

static struct platform_device *pg_pdev;
static struct pg_pool *pg;
static struct task_struct *pg_thread;

/* Some traffic: ring returns, and one page through an skb the "stack" frees. */
static void pg_cycle(struct pg_pool *p, unsigned int n)
{
	struct page *page;
	struct sk_buff *skb;

	while (n--) {
		page = ppb_dev_alloc_pages(p->pool);
		if (!page)
			return;
		if (n % 8) {
			ppb_put_page(p->pool, page, 256, false);
			continue;
		}
		skb = ppb_build_skb(p->pool, page, NET_SKB_PAD, 60);
		if (skb)
			consume_skb(skb);
		else
			ppb_put_page(p->pool, page, -1, false);
	}
}

static int pg_churn(void *arg)
{
	unsigned int i;

	while (!kthread_should_stop()) {
		for (i = 0; i < pools; i++) {
			local_bh_disable();
			pg_cycle(&pg[i], churn);
			local_bh_enable();
		}
		msleep_interruptible(100);
	}
	return 0;
}

static void pg_teardown(unsigned int n)
{
	unsigned int i;

	while (n--) {
		for (i = 0; i < pg[n].nheld; i++)
			ppb_put_page(pg[n].pool, pg[n].held[i], -1, false);
		ppb_pool_destroy(pg[n].pool);
	}
}

static int __init pg_init(void)
{
	struct platform_device_info info = {
		.name = "pp_poolgen", .id = PLATFORM_DEVID_NONE,
		.dma_mask = DMA_BIT_MASK(64),
	};
	struct ppb_params prm = {
		.flags = PPB_FLAG_DMA_MAP | PPB_FLAG_DMA_SYNC_DEV, .pool_size = 256,
		.nid = NUMA_NO_NODE, .dma_dir = DMA_FROM_DEVICE, .max_len = 2048,
		.owner = "pp_poolgen", .netdev = init_net.loopback_dev,
	};
	unsigned int i;
	int err;

	pg_pdev = platform_device_register_full(&info);
	if (IS_ERR(pg_pdev))
		return PTR_ERR(pg_pdev);
	prm.dev = &pg_pdev->dev;
	pg = kvcalloc(pools, sizeof(*pg), GFP_KERNEL);
	err = -ENOMEM;
	if (!pg)
		goto err_dev;
	for (i = 0; i < pools; i++) {
		prm.queue = i;
		pg[i].pool = ppb_pool_create(&prm);
		if (IS_ERR(pg[i].pool)) {
			err = PTR_ERR(pg[i].pool);
			goto err_pools;
		}
		local_bh_disable();
		pg_cycle(&pg[i], 96);
		while (pg[i].nheld < inflight) {
			struct page *page = ppb_dev_alloc_pages(pg[i].pool);

			if (!page)
				break;
			pg[i].held[pg[i].nheld++] = page;
		}
		local_bh_enable();
	}
	if (churn) {
		pg_thread = kthread_run(pg_churn, NULL, "pp_poolgen");
		if (IS_ERR(pg_thread)) {
			err = PTR_ERR(pg_thread);
			pg_thread = NULL;
			goto err_pools;
		}
	}
	pr_info("pp_poolgen: %u pools, %u pages each in flight, churn %u\n",
		pools, inflight, churn);
	return 0;

err_pools:
	pg_teardown(i);
	kvfree(pg);
err_dev:
	platform_device_unregister(pg_pdev);
	return err;
}

static void __exit pg_exit(void)
{
	if (pg_thread)
		kthread_stop(pg_thread);
	pg_teardown(pools);
	kvfree(pg);
	platform_device_unregister(pg_pdev);
}

module_init(pg_init);
module_exit(pg_exit);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("ppkit test helper: pools with traffic for user-space tests");
