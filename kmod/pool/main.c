// SPDX-License-Identifier: GPL-2.0
/*
 * pp_backport: a page_pool for kernels that lack one, or hide its statistics.
 * Module parameters, the registry of pools, load and unload.
 */

#include <linux/module.h>
#include <linux/moduleparam.h>
#include <ppkit/modparam.h>
#include <ppkit/race.h>
#include <linux/xarray.h>
#include <linux/slab.h>
#include <linux/mutex.h>
#include <linux/netdevice.h>
#include <uapi/linux/ppkit.h>
#include "pool.h"

unsigned int ppb_lend_timeout_ms = 1000;
unsigned int ppb_shutdown_warn_s = 60;
unsigned int ppb_release_retry_ms = 1000;

static int ppb_set_lend_timeout(const char *val, const struct kernel_param *kp)
{
	return ppkit_param_set_range(val, kp, 1, 600000);
}

static int ppb_set_warn(const char *val, const struct kernel_param *kp)
{
	return ppkit_param_set_range(val, kp, 1, 86400);
}

static int ppb_set_retry(const char *val, const struct kernel_param *kp)
{
	return ppkit_param_set_range(val, kp, 1, 60000);
}

static const struct kernel_param_ops ppb_lend_timeout_ops = {
	.set = ppb_set_lend_timeout,
	.get = param_get_uint,
};

static const struct kernel_param_ops ppb_warn_ops = {
	.set = ppb_set_warn,
	.get = param_get_uint,
};

static const struct kernel_param_ops ppb_retry_ops = {
	.set = ppb_set_retry,
	.get = param_get_uint,
};

module_param_cb(lend_timeout_ms, &ppb_lend_timeout_ops, &ppb_lend_timeout_ms, 0644);
MODULE_PARM_DESC(lend_timeout_ms,
		 "A page lent to the stack for longer is orphaned, not waited for (1..600000, default 1000)");
module_param_cb(shutdown_warn_s, &ppb_warn_ops, &ppb_shutdown_warn_s, 0644);
MODULE_PARM_DESC(shutdown_warn_s,
		 "Seconds between reports of a destroyed pool still waiting for pages (1..86400, default 60)");
module_param_cb(release_retry_ms, &ppb_retry_ops, &ppb_release_retry_ms, 0644);
MODULE_PARM_DESC(release_retry_ms,
		 "How often a destroyed pool looks for its pages again, in ms (1..60000, default 1000)");

/*
 * Every pool, live or destroyed and waiting for pages, by id.  Changes to
 * it, pool-set and holders-get take the mutex; so does setting
 * ppb_unloading.  Statistics readers (anyone may ask) take no lock that
 * RTNL paths take (ppb_pool_create(), ppb_pool_destroy()): they find and
 * read pools under RCU, and a pool is freed a grace period after it left
 * the registry (ppb_pool_free()).  pp_race's race_stats_reader_vs_free
 * attacks this.
 */
static DEFINE_XARRAY_ALLOC1(ppb_pools);
static DEFINE_MUTEX(ppb_pools_lock);
static u32 ppb_next_id;
static bool ppb_unloading;

#ifdef CONFIG_PPKIT_RACE_WINDOWS
unsigned int ppb_race_window_us;
EXPORT_SYMBOL_GPL(ppb_race_window_us);
#endif

/* Release work of destroyed pools: ours, so that unload can wait for it. */
struct workqueue_struct *ppb_wq;

int ppb_registry_add(struct ppb_pool *pool)
{
	int err;

	mutex_lock(&ppb_pools_lock);
	err = xa_alloc_cyclic(&ppb_pools, &pool->id, pool, xa_limit_31b,
			      &ppb_next_id, GFP_KERNEL);
	mutex_unlock(&ppb_pools_lock);
	return err < 0 ? err : 0;
}

void ppb_registry_del(struct ppb_pool *pool)
{
	lockdep_assert_held(&ppb_pools_lock);
	xa_erase(&ppb_pools, pool->id);
}

/* True once the module is going: its exit frees what is left. */
bool ppb_registry_unloading(void)
{
	lockdep_assert_held(&ppb_pools_lock);
	return ppb_unloading;
}

void ppb_registry_lock(void)
{
	mutex_lock(&ppb_pools_lock);
}

void ppb_registry_unlock(void)
{
	mutex_unlock(&ppb_pools_lock);
}

/* Under the registry lock or rcu_read_lock(): the pool stays until either ends. */
struct ppb_pool *ppb_registry_find(u32 id)
{
	RCU_LOCKDEP_WARN(!rcu_read_lock_held() && !lockdep_is_held(&ppb_pools_lock),
			 "a pool looked up without the registry lock or RCU");
	return xa_load(&ppb_pools, id);
}

/* The pool with the lowest id >= *@id, for dumps; as ppb_registry_find(). */
struct ppb_pool *ppb_registry_next(unsigned long *id)
{
	RCU_LOCKDEP_WARN(!rcu_read_lock_held() && !lockdep_is_held(&ppb_pools_lock),
			 "pools walked without the registry lock or RCU");
	return xa_find(&ppb_pools, id, ULONG_MAX, XA_PRESENT);
}

/*
 * The ifindex a pool reports for @dev: the family answers the initial
 * namespace only (not netnsok), where the number of a device in another
 * namespace names another device or none.
 */
int ppb_dev_ifindex(const struct net_device *dev)
{
	return net_eq(dev_net(dev), &init_net) ? dev->ifindex : 0;
}

/*
 * A pool reports the ifindex its netdev has now: a move to another
 * namespace may renumber it (unregister, then register again), and once
 * the netdev is gone for good a destroyed pool still waiting for its pages
 * must not name whatever device gets that number next.
 */
static int ppb_netdev_event(struct notifier_block *nb, unsigned long event, void *ptr)
{
	struct net_device *dev = netdev_notifier_info_to_dev(ptr);
	struct ppb_pool *pool;
	unsigned long id;
	int ifindex;

	if (event != NETDEV_REGISTER && event != NETDEV_UNREGISTER)
		return NOTIFY_DONE;
	ifindex = event == NETDEV_REGISTER ? ppb_dev_ifindex(dev) : 0;
	mutex_lock(&ppb_pools_lock);
	/* (unregistering the notifier at unload replays every unregister) */
	xa_for_each(&ppb_pools, id, pool) {
		if (ppb_unloading || pool->netdev != dev || pool->ifindex == ifindex)
			continue;
		WRITE_ONCE(pool->ifindex, ifindex);
		if (event == NETDEV_UNREGISTER && dev->reg_state == NETREG_UNREGISTERING)
			pool->netdev = NULL;
		ppb_nl_notify(pool, PPKIT_CMD_POOL_CHANGE_NTF);
	}
	mutex_unlock(&ppb_pools_lock);
	return NOTIFY_DONE;
}

static struct notifier_block ppb_netdev_nb = {
	.notifier_call = ppb_netdev_event,
};

static void ppb_pool_free_rcu(struct rcu_head *head)
{
	struct ppb_pool *pool = container_of(head, struct ppb_pool, rcu);

	ptr_ring_cleanup(&pool->ring, NULL);
	kvfree(rcu_dereference_protected(pool->lent, true));
	kvfree(pool->lent_next);
	free_percpu(pool->stats);
	kfree(pool);
}

/*
 * Out of the registry and empty: freed once the statistics readers that
 * may have found it are done.  Nothing they read needs the device.
 */
void ppb_pool_free(struct ppb_pool *pool)
{
	if (pool->p.dev)
		put_device(pool->p.dev);
	call_rcu(&pool->rcu, ppb_pool_free_rcu);
}

static int __init ppb_init(void)
{
	int err;

	ppb_wq = alloc_workqueue("ppb_release", WQ_UNBOUND, 0);
	if (!ppb_wq)
		return -ENOMEM;
	err = register_netdevice_notifier(&ppb_netdev_nb);
	if (err)
		goto err_wq;
	err = ppb_nl_init();
	if (err)
		goto err_nb;
	pr_info("ppkit: page_pool backport loaded (stats always on)\n");
	return 0;

err_nb:
	unregister_netdevice_notifier(&ppb_netdev_nb);
err_wq:
	destroy_workqueue(ppb_wq);
	return err;
}

/*
 * Drivers are gone, but a destroyed pool's release work may be freeing its
 * pool right now (its last page just came back).  Once ppb_unloading is
 * set under the registry lock, no work frees a pool or queues itself again
 * (ppb_release_retry), so the pools still registered stay ours; the
 * pending works are cancelled, and destroying the workqueue waits for the
 * ones still returning, even those whose pool is gone.
 * tests/lab/race-unload.py races this against sockets letting go.
 */
static void __exit ppb_exit(void)
{
	struct ppb_pool *pool;
	unsigned long id;

	mutex_lock(&ppb_pools_lock);
	ppb_unloading = true;
	mutex_unlock(&ppb_pools_lock);
	unregister_netdevice_notifier(&ppb_netdev_nb);
	xa_for_each(&ppb_pools, id, pool)
		cancel_delayed_work_sync(&pool->release_dw);
	destroy_workqueue(ppb_wq);

	mutex_lock(&ppb_pools_lock);
	xa_for_each(&ppb_pools, id, pool)
		ppb_pool_shutdown(pool);
	mutex_unlock(&ppb_pools_lock);
	xa_destroy(&ppb_pools);
	ppb_nl_exit();
	/* the pools' frees run this module's code */
	rcu_barrier();
}

module_init(ppb_init);
module_exit(ppb_exit);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("ppkit page_pool backport: recycling RX pages with always-on statistics");
MODULE_AUTHOR("ppkit developers");
