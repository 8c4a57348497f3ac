// SPDX-License-Identifier: GPL-2.0
/*
 * pp_backport: a page_pool for kernels that lack one, or hide its statistics.
 * Module parameters, the registry of pools, load and unload.
 */

#include <linux/module.h>
#include <linux/moduleparam.h>
#include <ppkit/modparam.h>
#include <linux/xarray.h>
#include <linux/slab.h>
#include <linux/mutex.h>
#include "pool.h"

unsigned int ppb_lend_timeout_ms = 1000;
unsigned int ppb_shutdown_warn_s = 60;

static int ppb_set_lend_timeout(const char *val, const struct kernel_param *kp)
{
	return ppkit_param_set_range(val, kp, 1, 600000);
}

static int ppb_set_warn(const char *val, const struct kernel_param *kp)
{
	return ppkit_param_set_range(val, kp, 1, 86400);
}

static const struct kernel_param_ops ppb_lend_timeout_ops = {
	.set = ppb_set_lend_timeout,
	.get = param_get_uint,
};

static const struct kernel_param_ops ppb_warn_ops = {
	.set = ppb_set_warn,
	.get = param_get_uint,
};

module_param_cb(lend_timeout_ms, &ppb_lend_timeout_ops, &ppb_lend_timeout_ms, 0644);
MODULE_PARM_DESC(lend_timeout_ms,
		 "A page lent to the stack for longer is orphaned, not waited for (1..600000, default 1000)");
module_param_cb(shutdown_warn_s, &ppb_warn_ops, &ppb_shutdown_warn_s, 0644);
MODULE_PARM_DESC(shutdown_warn_s,
		 "Seconds between reports of a destroyed pool still waiting for pages (1..86400, default 60)");

/*
 * Every pool, live or destroyed and waiting for pages, by id.  The mutex
 * keeps a pool from being freed while a reader looks at it.
 */
static DEFINE_XARRAY_ALLOC1(ppb_pools);
static DEFINE_MUTEX(ppb_pools_lock);
static u32 ppb_next_id;

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
	mutex_lock(&ppb_pools_lock);
	xa_erase(&ppb_pools, pool->id);
	mutex_unlock(&ppb_pools_lock);
}

void ppb_registry_lock(void)
{
	mutex_lock(&ppb_pools_lock);
}

void ppb_registry_unlock(void)
{
	mutex_unlock(&ppb_pools_lock);
}

struct ppb_pool *ppb_registry_find(u32 id)
{
	lockdep_assert_held(&ppb_pools_lock);
	return xa_load(&ppb_pools, id);
}

/* The pool with the lowest id >= *@id, for dumps. */
struct ppb_pool *ppb_registry_next(unsigned long *id)
{
	lockdep_assert_held(&ppb_pools_lock);
	return xa_find(&ppb_pools, id, ULONG_MAX, XA_PRESENT);
}

void ppb_pool_free(struct ppb_pool *pool)
{
	ptr_ring_cleanup(&pool->ring, NULL);
	kvfree(pool->lent);
	free_percpu(pool->stats);
	if (pool->p.dev)
		put_device(pool->p.dev);
	kfree(pool);
}

static int __init ppb_init(void)
{
	int err = ppb_nl_init();

	if (err)
		return err;
	pr_info("ppkit: page_pool backport loaded (stats always on)\n");
	return 0;
}

static void __exit ppb_exit(void)
{
	struct ppb_pool *pool;
	unsigned long id;

	xa_for_each(&ppb_pools, id, pool)
		ppb_pool_shutdown(pool);
	xa_destroy(&ppb_pools);
	ppb_nl_exit();
}

module_init(ppb_init);
module_exit(ppb_exit);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("ppkit page_pool backport: recycling RX pages with always-on statistics");
MODULE_AUTHOR("ppkit developers");
