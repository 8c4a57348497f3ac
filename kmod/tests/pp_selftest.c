// SPDX-License-Identifier: GPL-2.0
/*
 * pp_selftest: checks every rule of the ppkit page_pool backport in a real
 * kernel and reports in KTAP.  Runs on load; the load fails if a case fails.
 * Needs 2 CPUs and 2 NUMA nodes for every case to run (scripts/lab/run
 * --smp 2 --numa 2); with less, the cases that need them report SKIP.
 */

#include <linux/module.h>
#include <linux/platform_device.h>
#include <linux/dma-mapping.h>
#include <linux/skbuff.h>
#include <linux/kthread.h>
#include <linux/completion.h>
#include <linux/delay.h>
#include <linux/nodemask.h>
#include <linux/interrupt.h>
#include <ppkit/page_pool.h>
#include <ppkit/compat.h>
#include "ktap.h"

static bool swiotlb_bounce;
module_param(swiotlb_bounce, bool, 0444);
MODULE_PARM_DESC(swiotlb_bounce, "the kernel bounces every DMA mapping (booted with swiotlb=force)");

static struct ppb_params st_params(void)
{
	return (struct ppb_params) {
		.flags = PPB_FLAG_DMA_MAP,
		.order = 0,
		.pool_size = 256,
		.nid = NUMA_NO_NODE,
		.dev = &ktap_pdev->dev,
		.dma_dir = DMA_FROM_DEVICE,
		.max_len = PAGE_SIZE,
		.owner = "pp_selftest",
	};
}

static struct ppb_pool *st_create(const struct ppb_params *p)
{
	struct ppb_pool *pool = ppb_pool_create(p);

	if (IS_ERR(pool)) {
		pr_info("    # pool create failed: %ld\n", PTR_ERR(pool));
		ktap_failed = 1;
		return NULL;
	}
	return pool;
}

/*
 * Every page that entered the pool has left it, sits in its stock, or is out
 * with the driver or the stack: and the driver's share must be what the test
 * holds.
 */
static void st_consistent(struct ppb_pool *pool, u64 held)
{
	struct ppb_stats s;
	u64 in, accounted;

	ppb_get_stats(pool, &s);
	in = s.c[PPB_STAT(PAGES_ALLOCATED)];
	accounted = s.c[PPB_STAT(PAGES_RELEASED)] + s.c[PPB_STAT(PAGES_ORPHANED)] +
		    s.cache_pages + s.ring_pages + s.inflight_pages;
	EXPECT(in == accounted,
	       "in %llu = released %llu + orphaned %llu + cache %u + ring %u + inflight %llu",
	       in, s.c[PPB_STAT(PAGES_RELEASED)], s.c[PPB_STAT(PAGES_ORPHANED)],
	       s.cache_pages, s.ring_pages, s.inflight_pages);
	EXPECT(s.inflight_pages == held + s.lent_pages,
	       "inflight %llu, test holds %llu, stack %u", s.inflight_pages, held, s.lent_pages);
}

static u64 st_stat(struct ppb_pool *pool, int i)
{
	struct ppb_stats s;

	ppb_get_stats(pool, &s);
	return s.c[i];
}

/* Run @fn in softirq context, as NAPI would. */
struct st_bh {
	struct tasklet_struct t;
	void (*fn)(void *arg);
	void *arg;
	struct completion done;
};

static void st_bh_fn(struct tasklet_struct *t)
{
	struct st_bh *b = from_tasklet(b, t, t);

	b->fn(b->arg);
	complete(&b->done);
}

static void st_in_softirq(void (*fn)(void *), void *arg)
{
	struct st_bh b = { .fn = fn, .arg = arg };

	init_completion(&b.done);
	tasklet_setup(&b.t, st_bh_fn);
	tasklet_schedule(&b.t);
	wait_for_completion(&b.done);
	tasklet_kill(&b.t);
}

/* ---- parameters ---- */

static void st_reject(struct ppb_params *p, int want)
{
	struct ppb_pool *pool = ppb_pool_create(p);

	EXPECT(IS_ERR(pool) && PTR_ERR(pool) == want, "got %ld, want %d",
	       IS_ERR(pool) ? PTR_ERR(pool) : 0L, want);
	if (!IS_ERR(pool))
		ppb_pool_destroy(pool);
}

static void test_params_pool_size(void)
{
	struct ppb_params p = st_params();

	p.pool_size = 0;
	st_reject(&p, -ERANGE);
	p.pool_size = PPB_POOL_SIZE_MAX + 1;
	st_reject(&p, -ERANGE);
}

static void test_params_order(void)
{
	struct ppb_params p = st_params();

	p.order = PPB_MAX_PAGE_ORDER + 1;
	st_reject(&p, -ERANGE);
}

static void test_params_sync_without_map(void)
{
	struct ppb_params p = st_params();

	p.flags = PPB_FLAG_DMA_SYNC_DEV;
	st_reject(&p, -EINVAL);
	p = st_params();
	p.dev = NULL;
	st_reject(&p, -EINVAL);
	p = st_params();
	p.dma_dir = DMA_TO_DEVICE;
	st_reject(&p, -EINVAL);
}

static void test_params_len_and_node(void)
{
	struct ppb_params p = st_params();
	const char *why = NULL;

	p.offset = 256;
	p.max_len = PAGE_SIZE;
	st_reject(&p, -ERANGE);
	EXPECT(ppb_params_check(&p, &why) == -ERANGE && why, "a reason is given");
	p = st_params();
	p.nid = MAX_NUMNODES + 1;
	st_reject(&p, -EINVAL);
	p = st_params();
	p.flags = BIT(7);
	st_reject(&p, -EINVAL);
}

/* ---- allocation ---- */

static void test_bulk_refill(void)
{
	struct ppb_params p = st_params();
	struct ppb_pool *pool = st_create(&p);
	struct page *page;

	if (!pool)
		return;
	page = ppb_dev_alloc_pages(pool);
	EXPECT(page, "a page");
	EXPECT(st_stat(pool, PPB_STAT(ALLOC_SLOW)) == 1, "one slow-path call");
	EXPECT(st_stat(pool, PPB_STAT(PAGES_ALLOCATED)) == PPB_REFILL_BATCH,
	       "%llu pages allocated in bulk", st_stat(pool, PPB_STAT(PAGES_ALLOCATED)));
	EXPECT(st_stat(pool, PPB_STAT(PAGES_FROM_ALLOC)) == 1, "served fresh");
	st_consistent(pool, 1);
	ppb_put_page(pool, page, -1, false);
	st_consistent(pool, 0);
	ppb_pool_destroy(pool);
}

struct st_lifo {
	struct ppb_pool *pool;
	struct page *out[3], *back[3];
};

static void st_lifo_fn(void *arg)
{
	struct st_lifo *l = arg;
	int i;

	for (i = 0; i < 3; i++)
		l->out[i] = ppb_dev_alloc_pages(l->pool);
	for (i = 0; i < 3; i++)
		ppb_recycle_direct(l->pool, l->out[i]);
	for (i = 0; i < 3; i++)
		l->back[i] = ppb_dev_alloc_pages(l->pool);
	for (i = 0; i < 3; i++)
		ppb_recycle_direct(l->pool, l->back[i]);
}

static void test_lifo_order(void)
{
	struct ppb_params p = st_params();
	struct st_lifo l = { .pool = st_create(&p) };

	if (!l.pool)
		return;
	st_in_softirq(st_lifo_fn, &l);
	/* The last page returned is the first served again: it is still in cache. */
	EXPECT(l.back[0] == l.out[2] && l.back[1] == l.out[1] && l.back[2] == l.out[0],
	       "LIFO order");
	EXPECT(st_stat(l.pool, PPB_STAT(RECYCLE_CACHED)) == 6, "6 direct recycles");
	EXPECT(st_stat(l.pool, PPB_STAT(ALLOC_FAST)) == 5, "5 fast allocations, got %llu",
	       st_stat(l.pool, PPB_STAT(ALLOC_FAST)));
	EXPECT(st_stat(l.pool, PPB_STAT(PAGES_FROM_CACHE)) == 3, "3 served recycled");
	st_consistent(l.pool, 0);
	ppb_pool_destroy(l.pool);
}

static void test_high_order(void)
{
	struct ppb_params p = st_params();
	struct ppb_pool *pool;
	struct page *page, *again;

	p.order = 2;
	p.max_len = PAGE_SIZE << 2;
	pool = st_create(&p);
	if (!pool)
		return;
	page = ppb_dev_alloc_pages(pool);
	EXPECT(page && compound_order(page) == 2, "an order-2 compound page");
	EXPECT(st_stat(pool, PPB_STAT(ALLOC_SLOW_HIGH_ORDER)) == 1, "slow_high_order");
	ppb_put_page(pool, page, -1, false);
	again = ppb_dev_alloc_pages(pool);
	EXPECT(again == page, "recycled through the ring");
	ppb_put_page(pool, again, -1, false);
	st_consistent(pool, 0);
	ppb_pool_destroy(pool);
}

/* ---- recycling ---- */

struct st_remote {
	struct ppb_pool *pool;
	struct page **pages;
	int n;
	int cpu;
	struct completion done;
};

static int st_remote_put(void *arg)
{
	struct st_remote *r = arg;
	int i;

	r->cpu = raw_smp_processor_id();
	for (i = 0; i < r->n; i++)
		ppb_put_page(r->pool, r->pages[i], -1, false);
	complete(&r->done);
	return 0;
}

/*
 * Pin the calling task to the CPU it runs on: a pool without a node
 * follows the allocating CPU's.  st_unpin() gives it back its CPUs.
 */
static bool st_pin(cpumask_var_t *saved)
{
	int cpu = raw_smp_processor_id();

	if (!alloc_cpumask_var(saved, GFP_KERNEL)) {
		EXPECT(0, "cpumask");
		return false;
	}
	cpumask_copy(*saved, current->cpus_ptr);
	if (set_cpus_allowed_ptr(current, cpumask_of(cpu))) {
		EXPECT(0, "pinned to CPU %d", cpu);
		free_cpumask_var(*saved);
		return false;
	}
	return true;
}

static void st_unpin(cpumask_var_t saved)
{
	set_cpus_allowed_ptr(current, saved);
	free_cpumask_var(saved);
}

/*
 * The allocating side stays on one CPU: a pool without a node follows the
 * allocating CPU's, and a ring page from another node is released at the
 * refill, not served (moved between nodes, the test saw no refill at all).
 */
static void test_ring_other_cpu(void)
{
	struct ppb_params p = st_params();
	struct page *pages[32], *got[PPB_REFILL_BATCH];
	struct st_remote r = { .pages = pages, .n = ARRAY_SIZE(pages) };
	struct task_struct *t;
	cpumask_var_t saved;
	int i, cpu, other;

	if (num_online_cpus() < 2) {
		ktap_skip = "needs 2 CPUs";
		return;
	}
	if (!st_pin(&saved))
		return;
	cpu = raw_smp_processor_id();
	other = cpumask_next(cpu, cpu_online_mask);
	if (other >= nr_cpu_ids)
		other = cpumask_first(cpu_online_mask);
	r.pool = st_create(&p);
	if (!r.pool)
		goto out;
	for (i = 0; i < r.n; i++)
		pages[i] = ppb_dev_alloc_pages(r.pool);
	init_completion(&r.done);
	t = kthread_create(st_remote_put, &r, "pp_selftest_put");
	if (IS_ERR(t)) {
		EXPECT(0, "kthread");
		goto out;
	}
	kthread_bind(t, other);
	wake_up_process(t);
	wait_for_completion(&r.done);
	EXPECT(r.cpu == other, "ran on CPU %d", other);
	EXPECT(st_stat(r.pool, PPB_STAT(RECYCLE_RING)) == r.n, "%d pages in the ring", r.n);
	st_consistent(r.pool, 0);
	/* Drain the cache, then the ring refills it. */
	for (i = 0; i < ARRAY_SIZE(got); i++)
		got[i] = ppb_dev_alloc_pages(r.pool);
	EXPECT(st_stat(r.pool, PPB_STAT(PAGES_FROM_RING)) > 0, "served from the ring");
	EXPECT(st_stat(r.pool, PPB_STAT(ALLOC_REFILL)) > 0, "a refill");
	st_consistent(r.pool, ARRAY_SIZE(got));
	for (i = 0; i < ARRAY_SIZE(got); i++)
		ppb_put_page(r.pool, got[i], -1, false);
	st_consistent(r.pool, 0);
	ppb_pool_destroy(r.pool);
out:
	st_unpin(saved);
}

static void test_ring_full_release(void)
{
	struct ppb_params p = st_params();
	struct ppb_pool *pool;
	struct page *pages[10];
	int i;

	p.pool_size = 4;
	pool = st_create(&p);
	if (!pool)
		return;
	for (i = 0; i < 10; i++)
		pages[i] = ppb_dev_alloc_pages(pool);
	for (i = 0; i < 10; i++)
		ppb_put_page(pool, pages[i], -1, false);
	EXPECT(st_stat(pool, PPB_STAT(RECYCLE_RING)) == 4, "4 into the ring");
	EXPECT(st_stat(pool, PPB_STAT(RECYCLE_RING_FULL)) == 6, "6 released, ring full");
	EXPECT(st_stat(pool, PPB_STAT(PAGES_RELEASED)) == 6, "6 pages back to the allocator");
	st_consistent(pool, 0);
	ppb_pool_destroy(pool);
}

struct st_full {
	struct ppb_pool *pool;
	struct page *pages[PPB_CACHE_SIZE + 8];
	u32 room;
};

static void st_cache_full_fn(void *arg)
{
	struct st_full *f = arg;
	int i;

	struct ppb_stats s;

	for (i = 0; i < ARRAY_SIZE(f->pages); i++)
		f->pages[i] = ppb_dev_alloc_pages(f->pool);
	ppb_get_stats(f->pool, &s);
	f->room = PPB_CACHE_SIZE - s.cache_pages;
	for (i = 0; i < ARRAY_SIZE(f->pages); i++)
		ppb_recycle_direct(f->pool, f->pages[i]);
}

static void test_cache_full_to_ring(void)
{
	struct ppb_params p = st_params();
	struct st_full *f = kzalloc(sizeof(*f), GFP_KERNEL);
	u64 over;

	if (!f)
		return;
	f->pool = st_create(&p);
	if (f->pool) {
		/* The other half of the bulk refill is still cached when we start. */
		st_in_softirq(st_cache_full_fn, f);
		over = ARRAY_SIZE(f->pages) - f->room;

		EXPECT(st_stat(f->pool, PPB_STAT(RECYCLE_CACHE_FULL)) == over,
		       "%llu overflowed", over);
		EXPECT(st_stat(f->pool, PPB_STAT(RECYCLE_RING)) == over, "into the ring");
		EXPECT(st_stat(f->pool, PPB_STAT(RECYCLE_CACHED)) == f->room, "the rest cached");
		st_consistent(f->pool, 0);
		ppb_pool_destroy(f->pool);
	}
	kfree(f);
}

static void test_refcnt_release(void)
{
	struct ppb_params p = st_params();
	struct ppb_pool *pool = st_create(&p);
	struct page *page;

	if (!pool)
		return;
	page = ppb_dev_alloc_pages(pool);
	get_page(page);		/* somebody else keeps a reference */
	ppb_put_page(pool, page, -1, false);
	EXPECT(st_stat(pool, PPB_STAT(RECYCLE_RELEASED_REFCNT)) == 1, "released, not recycled");
	EXPECT(page_ref_count(page) == 1, "only the other holder left: %d", page_ref_count(page));
	put_page(page);
	st_consistent(pool, 0);
	ppb_pool_destroy(pool);
}

static void test_pfmemalloc_released(void)
{
	struct ppb_params p = st_params();
	struct ppb_pool *pool = st_create(&p);
	struct page *page;

	if (!pool)
		return;
	page = ppb_dev_alloc_pages(pool);
	/*
	 * As if the allocator had dipped into the emergency reserves for it.
	 * The kernel's helper rewrites the word that holds the pool's mark.
	 */
	set_page_pfmemalloc(page);
	ppb_page_set_owner(pool, page);
	ppb_put_page(pool, page, -1, false);
	EXPECT(st_stat(pool, PPB_STAT(RELEASED_PFMEMALLOC)) == 1, "pfmemalloc page released");
	EXPECT(st_stat(pool, PPB_STAT(RECYCLE_RING)) == 0, "not recycled");
	st_consistent(pool, 0);
	ppb_pool_destroy(pool);
}

static bool st_two_nodes(void)
{
	if (num_online_nodes() >= 2 && node_present_pages(1))
		return true;
	ktap_skip = "needs 2 NUMA nodes with memory";
	return false;
}

static void test_far_node_released(void)
{
	struct ppb_params p = st_params();
	struct ppb_pool *pool;
	struct page *page, *fresh;

	if (!st_two_nodes())
		return;
	p.nid = 1;
	pool = st_create(&p);
	if (!pool)
		return;
	page = ppb_dev_alloc_pages(pool);
	EXPECT(page && page_to_nid(page) == 1, "page from node 1");
	ppb_update_nid(pool, 0);
	EXPECT(st_stat(pool, PPB_STAT(ALLOC_WAIVE)) == PPB_REFILL_BATCH - 1,
	       "cached node-1 pages dropped: %llu", st_stat(pool, PPB_STAT(ALLOC_WAIVE)));
	ppb_put_page(pool, page, -1, false);
	EXPECT(st_stat(pool, PPB_STAT(RELEASED_FAR_NODE)) == 1, "node-1 page released");
	fresh = ppb_dev_alloc_pages(pool);
	EXPECT(fresh && page_to_nid(fresh) == 0, "new pages from node 0");
	ppb_put_page(pool, fresh, -1, false);
	st_consistent(pool, 0);
	ppb_pool_destroy(pool);
}

static void test_update_nid_ring_waive(void)
{
	struct ppb_params p = st_params();
	struct ppb_pool *pool;
	struct page *pages[PPB_REFILL_BATCH];
	int i;

	if (!st_two_nodes())
		return;
	p.nid = 0;
	pool = st_create(&p);
	if (!pool)
		return;
	for (i = 0; i < PPB_REFILL_BATCH; i++)
		pages[i] = ppb_dev_alloc_pages(pool);
	for (i = 0; i < 8; i++)
		ppb_put_page(pool, pages[i], -1, false);	/* 8 node-0 pages in the ring */
	ppb_update_nid(pool, 1);
	pages[0] = ppb_dev_alloc_pages(pool);		/* refill finds them foreign */
	EXPECT(st_stat(pool, PPB_STAT(ALLOC_WAIVE)) == 8, "ring pages waived: %llu",
	       st_stat(pool, PPB_STAT(ALLOC_WAIVE)));
	EXPECT(pages[0] && page_to_nid(pages[0]) == 1, "served from node 1");
	ppb_put_page(pool, pages[0], -1, false);
	for (i = 8; i < PPB_REFILL_BATCH; i++)
		ppb_put_page(pool, pages[i], -1, false);
	st_consistent(pool, 0);
	ppb_pool_destroy(pool);
}

static void test_sync_max_len(void)
{
	struct ppb_params p = st_params();
	struct ppb_pool *pool;
	struct page *page;
	u64 bytes, calls;

	p.flags |= PPB_FLAG_DMA_SYNC_DEV;
	p.offset = 256;
	p.max_len = 1536;
	pool = st_create(&p);
	if (!pool)
		return;
	page = ppb_dev_alloc_pages(pool);
	/*
	 * Every fresh page of the refill is synced once, max_len bytes.  (A
	 * refill is a batch, or a single page when the page allocator's bulk
	 * path declines: a debug kernel's node short of free pages.)
	 */
	calls = st_stat(pool, PPB_STAT(SYNC_FOR_DEVICE));
	bytes = st_stat(pool, PPB_STAT(SYNC_FOR_DEVICE_BYTES));
	EXPECT(calls && calls == st_stat(pool, PPB_STAT(PAGES_ALLOCATED)) && bytes == calls * 1536,
	       "%llu syncs, %llu bytes, %llu pages", calls, bytes,
	       st_stat(pool, PPB_STAT(PAGES_ALLOCATED)));
	ppb_put_page(pool, page, 100, false);		/* device wrote 100 bytes */
	EXPECT(st_stat(pool, PPB_STAT(SYNC_FOR_DEVICE_BYTES)) - bytes == 100, "100 bytes");
	page = ppb_dev_alloc_pages(pool);
	bytes = st_stat(pool, PPB_STAT(SYNC_FOR_DEVICE_BYTES));
	ppb_put_page(pool, page, -1, false);		/* unknown: at most max_len */
	EXPECT(st_stat(pool, PPB_STAT(SYNC_FOR_DEVICE_BYTES)) - bytes == 1536,
	       "never more than max_len, never the whole page");
	st_consistent(pool, 0);
	ppb_pool_destroy(pool);
}

struct st_sync_direct {
	struct ppb_pool *pool;
	u64 calls, bytes;
};

static void st_sync_direct_fn(void *arg)
{
	static const unsigned int len[] = { 100, 200, -1, 64 };
	struct st_sync_direct *d = arg;
	struct page *pages[ARRAY_SIZE(len)];
	int i;

	for (i = 0; i < ARRAY_SIZE(len); i++)
		pages[i] = ppb_dev_alloc_pages(d->pool);
	d->calls = st_stat(d->pool, PPB_STAT(SYNC_FOR_DEVICE));
	d->bytes = st_stat(d->pool, PPB_STAT(SYNC_FOR_DEVICE_BYTES));
	for (i = 0; i < ARRAY_SIZE(len); i++)
		ppb_put_page(d->pool, pages[i], len[i], true);
}

/* Direct returns are synced (what the device may have written) and counted. */
static void test_sync_direct(void)
{
	struct ppb_params p = st_params();
	struct st_sync_direct d;

	p.flags |= PPB_FLAG_DMA_SYNC_DEV;
	p.max_len = 1536;
	d.pool = st_create(&p);
	if (!d.pool)
		return;
	st_in_softirq(st_sync_direct_fn, &d);
	EXPECT(st_stat(d.pool, PPB_STAT(RECYCLE_CACHED)) == 4, "4 direct recycles");
	EXPECT(st_stat(d.pool, PPB_STAT(SYNC_FOR_DEVICE)) - d.calls == 4, "4 syncs, got %llu",
	       st_stat(d.pool, PPB_STAT(SYNC_FOR_DEVICE)) - d.calls);
	EXPECT(st_stat(d.pool, PPB_STAT(SYNC_FOR_DEVICE_BYTES)) - d.bytes == 100 + 200 + 1536 + 64,
	       "%llu bytes", st_stat(d.pool, PPB_STAT(SYNC_FOR_DEVICE_BYTES)) - d.bytes);
	st_consistent(d.pool, 0);
	ppb_pool_destroy(d.pool);
}

/*
 * The cache's top word counts direct returns in bits 16-62, and a push
 * that would reach bit 63 folds them into the pool's counter first, out of
 * line (the inline push tests the add's overflow).  Start the count three
 * pushes short of bit 63 and push through it: no return lost, none counted
 * twice, bit 63 never set, in a pool that syncs (the fold then syncs too)
 * and in one that does not (the inline push).
 */
struct st_fold {
	struct ppb_pool *pool;
	u64 fake;		/* pushes added to the count by hand */
	u64 before;		/* recycle_cached then */
	bool bit63;		/* seen set after a push */
	u64 pushes_after;	/* the count after the last push */
	u64 synced;		/* bytes synced for the device by the pushes */
};

#define ST_FOLD_PUSH_MAX	((1ULL << 47) - 1)	/* bits 16-62 */

static void st_fold_fn(void *arg)
{
	struct st_fold *f = arg;
	struct ppb_cache *c = ppb_pool_cache(f->pool);
	struct page *page;
	int i;

	page = ppb_dev_alloc_pages(f->pool);
	ppb_put_page(f->pool, page, 100, true);
	f->before = st_stat(f->pool, PPB_STAT(RECYCLE_CACHED));
	f->fake = ST_FOLD_PUSH_MAX - 2 - (c->top >> 16);
	c->top = (c->top & 0xffff) | (ST_FOLD_PUSH_MAX - 2) << 16;
	f->synced = st_stat(f->pool, PPB_STAT(SYNC_FOR_DEVICE_BYTES));
	for (i = 0; i < 5; i++) {
		page = ppb_dev_alloc_pages(f->pool);
		ppb_put_page(f->pool, page, 100, true);
		f->bit63 |= c->top >> 63;
	}
	f->pushes_after = c->top >> 16;
	f->synced = st_stat(f->pool, PPB_STAT(SYNC_FOR_DEVICE_BYTES)) - f->synced;
}

static void test_push_count_fold(void)
{
	unsigned int sync;

	for (sync = 0; sync < 2; sync++) {
		struct ppb_params p = st_params();
		struct st_fold f = {};
		u64 got;

		if (sync) {
			p.flags |= PPB_FLAG_DMA_SYNC_DEV;
			p.max_len = 1536;
		}
		f.pool = st_create(&p);
		if (!f.pool)
			return;
		st_in_softirq(st_fold_fn, &f);
		got = st_stat(f.pool, PPB_STAT(RECYCLE_CACHED)) - f.before - f.fake;
		EXPECT(got == 5, "sync %u: 5 direct returns through the fold, counted %llu",
		       sync, got);
		EXPECT(!f.bit63, "sync %u: the count reached bit 63", sync);
		EXPECT(f.pushes_after == 2, "sync %u: %llu pushes after the fold, want 2",
		       sync, f.pushes_after);
		EXPECT(f.synced == (sync ? 5 * 100 : 0), "sync %u: %llu bytes synced",
		       sync, f.synced);
		ppb_pool_destroy(f.pool);
	}
}

struct st_map {
	struct ppb_pool *pool;
	dma_addr_t first;
	struct page *page;
	u64 allocated;		/* pages the first refill brought in */
	bool stable;
};

static void st_map_fn(void *arg)
{
	struct st_map *m = arg;
	int i;

	m->page = ppb_dev_alloc_pages(m->pool);
	m->first = ppb_get_dma_addr(m->page);
	m->allocated = st_stat(m->pool, PPB_STAT(PAGES_ALLOCATED));
	m->stable = true;
	ppb_recycle_direct(m->pool, m->page);
	for (i = 0; i < 1000; i++) {
		struct page *page = ppb_dev_alloc_pages(m->pool);

		if (page != m->page || ppb_get_dma_addr(page) != m->first)
			m->stable = false;
		ppb_recycle_direct(m->pool, page);
	}
}

static void test_dma_mapped_once(void)
{
	struct ppb_params p = st_params();
	struct st_map m = { .pool = st_create(&p) };

	if (!m.pool)
		return;
	st_in_softirq(st_map_fn, &m);
	EXPECT(m.first && m.stable, "same page, same mapping over 1000 recycles");
	if (swiotlb_bounce)
		EXPECT(m.first != page_to_phys(m.page), "a swiotlb bounce buffer");
	else
		EXPECT(m.first == page_to_phys(m.page), "dma-direct address");
	EXPECT(m.allocated && st_stat(m.pool, PPB_STAT(PAGES_ALLOCATED)) == m.allocated,
	       "no page entered (and was mapped) twice");
	st_consistent(m.pool, 0);
	ppb_pool_destroy(m.pool);
}

/* ---- pages up the stack ---- */

/* Allocate a refill's worth (so the cache runs dry and refills), give it back. */
static void st_cycle_refill(struct ppb_pool *pool)
{
	struct page *got[PPB_REFILL_BATCH];
	int i;

	for (i = 0; i < PPB_REFILL_BATCH; i++)
		got[i] = ppb_dev_alloc_pages(pool);
	for (i = 0; i < PPB_REFILL_BATCH; i++)
		ppb_put_page(pool, got[i], -1, false);
}

static struct sk_buff *st_skb(struct ppb_pool *pool, struct page **pagep)
{
	struct page *page = ppb_dev_alloc_pages(pool);
	struct sk_buff *skb;

	*pagep = page;
	if (!page)
		return NULL;
	skb = ppb_build_skb(pool, page, NET_SKB_PAD, 60);
	EXPECT(skb && virt_to_head_page(skb->head) == page && !ppb_skb_pp_recycle(skb),
	       "skb built on the page, not marked for the kernel's page_pool");
	return skb;
}

static void test_stack_reclaim(void)
{
	struct ppb_params p = st_params();
	struct ppb_pool *pool = st_create(&p);
	struct page *page, *got[PPB_REFILL_BATCH];
	struct sk_buff *skb;
	int i;
	bool seen = false;

	if (!pool)
		return;
	skb = st_skb(pool, &page);
	if (!skb)
		goto out;
	EXPECT(st_stat(pool, PPB_STAT(PAGES_LENT)) == 1, "lent");
	st_consistent(pool, 0);
	consume_skb(skb);		/* the stack is done with it */
	/* The next refill takes it back. */
	for (i = 0; i < PPB_REFILL_BATCH; i++) {
		got[i] = ppb_dev_alloc_pages(pool);
		seen |= got[i] == page;
	}
	EXPECT(seen, "the lent page is served again");
	EXPECT(st_stat(pool, PPB_STAT(PAGES_RECLAIMED)) == 1, "reclaimed");
	EXPECT(st_stat(pool, PPB_STAT(PAGES_FROM_STACK)) == 1, "served from stack stock");
	for (i = 0; i < PPB_REFILL_BATCH; i++)
		ppb_put_page(pool, got[i], -1, false);
out:
	st_consistent(pool, 0);
	ppb_pool_destroy(pool);
}

static void test_stack_orphan(void)
{
	struct ppb_params p = st_params();
	struct ppb_pool *pool = st_create(&p);
	struct page *page;
	struct sk_buff *skb;

	if (!pool)
		return;
	skb = st_skb(pool, &page);
	if (!skb)
		goto out;
	/* A socket nobody reads keeps the skb past the lend timeout (1 s). */
	msleep(1100);
	st_cycle_refill(pool);
	EXPECT(st_stat(pool, PPB_STAT(PAGES_ORPHANED)) == 1, "orphaned, not waited for");
	EXPECT(page_ref_count(page) == 1, "only the skb holds it now: %d", page_ref_count(page));
	st_consistent(pool, 0);
	kfree_skb(skb);			/* freed like any page */
out:
	ppb_pool_destroy(pool);
}

static void test_lent_fifo_full(void)
{
	/* pool_size 2: 2 * PPB_LENT_PER_RING lent pages tracked at most */
	enum { TRACKED = 2 * PPB_LENT_PER_RING };
	struct ppb_params p = st_params();
	struct sk_buff *skb[TRACKED + 1];
	struct page *page[TRACKED + 1];
	struct ppb_pool *pool;
	int i;

	p.pool_size = 2;
	pool = st_create(&p);
	if (!pool)
		return;
	for (i = 0; i <= TRACKED; i++)
		skb[i] = st_skb(pool, &page[i]);
	EXPECT(st_stat(pool, PPB_STAT(PAGES_ORPHANED)) == 1, "oldest orphaned to make room");
	EXPECT(page_ref_count(page[0]) == 1, "page 0 belongs to its skb alone");
	EXPECT(page_ref_count(page[1]) > 1, "page 1 still tracked by the pool");
	st_consistent(pool, 0);
	for (i = 0; i <= TRACKED; i++)
		kfree_skb(skb[i]);
	ppb_pool_destroy(pool);
}

static void test_skb_mark_frags(void)
{
	struct ppb_params p = st_params();
	struct ppb_pool *pool = st_create(&p);
	struct sk_buff *skb;
	struct page *frag;

	if (!pool)
		return;
	skb = alloc_skb(128, GFP_KERNEL);
	frag = ppb_dev_alloc_pages(pool);
	if (!skb || !frag) {
		EXPECT(0, "skb and page");
		kfree_skb(skb);
		goto out;
	}
	skb_add_rx_frag(skb, 0, frag, 0, 1000, PAGE_SIZE);
	ppb_skb_mark(pool, skb);
	EXPECT(st_stat(pool, PPB_STAT(PAGES_LENT)) == 1,
	       "the frag page is lent, the kmalloc head is not");
	kfree_skb(skb);
	st_cycle_refill(pool);
	EXPECT(st_stat(pool, PPB_STAT(PAGES_RECLAIMED)) == 1, "frag page reclaimed");
out:
	st_consistent(pool, 0);
	ppb_pool_destroy(pool);
}

/*
 * A driver that lends one page twice (a head and a frag in one page): the
 * second lend is refused and counted, the stack gets a reference of its
 * own, and the page comes back once both are freed.
 */
static void test_lend_twice(void)
{
	struct ppb_params p = st_params();
	struct ppb_pool *pool = st_create(&p);
	struct sk_buff *skb;
	struct ppb_stats s;
	struct page *page;

	if (!pool)
		return;
	page = ppb_dev_alloc_pages(pool);
	skb = page ? build_skb(page_address(page), PAGE_SIZE) : NULL;
	if (!skb) {
		EXPECT(0, "page and skb");
		if (page)
			ppb_put_page(pool, page, -1, false);
		goto out;
	}
	skb_reserve(skb, NET_SKB_PAD);
	__skb_put(skb, 60);
	/* the other half of the page as a frag: the skb will put the page twice */
	skb_add_rx_frag(skb, 0, page, PAGE_SIZE / 2, 100, PAGE_SIZE / 2);
	ppb_skb_mark(pool, skb);
	ppb_get_stats(pool, &s);
	EXPECT(s.c[PPB_STAT(PAGES_LENT)] == 1 && s.lent_twice == 1,
	       "lent once, the second lend refused: lent %llu, refused %llu",
	       s.c[PPB_STAT(PAGES_LENT)], s.lent_twice);
	kfree_skb(skb);
	st_cycle_refill(pool);
	EXPECT(st_stat(pool, PPB_STAT(PAGES_RECLAIMED)) == 1, "the page came back once");
	EXPECT(st_stat(pool, PPB_STAT(PAGES_ORPHANED)) == 0, "nothing orphaned");
out:
	st_consistent(pool, 0);
	ppb_pool_destroy(pool);
}

/* The pages of an skb on another's frag_list are lent too, and come back. */
static void test_skb_mark_frag_list(void)
{
	struct ppb_params p = st_params();
	struct ppb_pool *pool = st_create(&p);
	struct sk_buff *skb, *child = NULL;
	struct page *head, *frag;

	if (!pool)
		return;
	skb = alloc_skb(128, GFP_KERNEL);
	head = ppb_dev_alloc_pages(pool);
	frag = ppb_dev_alloc_pages(pool);
	if (skb && head)
		child = build_skb(page_address(head), PAGE_SIZE);
	if (!skb || !child || !frag) {
		EXPECT(0, "skbs and pages");
		kfree_skb(skb);
		goto out;
	}
	skb_reserve(child, NET_SKB_PAD);
	__skb_put(child, 60);
	skb_add_rx_frag(child, 0, frag, 0, 1000, PAGE_SIZE);
	skb_shinfo(skb)->frag_list = child;
	skb->len += child->len;
	skb->data_len += child->len;
	skb->truesize += child->truesize;
	ppb_skb_mark(pool, skb);
	EXPECT(st_stat(pool, PPB_STAT(PAGES_LENT)) == 2,
	       "the child's head and frag pages are lent: %llu",
	       st_stat(pool, PPB_STAT(PAGES_LENT)));
	kfree_skb(skb);
	st_cycle_refill(pool);
	EXPECT(st_stat(pool, PPB_STAT(PAGES_RECLAIMED)) == 2, "both came back: %llu",
	       st_stat(pool, PPB_STAT(PAGES_RECLAIMED)));
out:
	st_consistent(pool, 0);
	ppb_pool_destroy(pool);
}

/*
 * pp_backport's lend timeout, as the lab loads it (its default:
 * tests/lab/pool-selftest.sh checks it is 1000 before this module loads).
 */
#define ST_LEND_TIMEOUT_MS 1000

/*
 * One socket that never reads among readers that do: the pages lent after
 * its own keep coming back.  Over 40,000 frames the hit rate stays >= 99%
 * (the fresh pages are the first refill and one for each page the socket
 * keeps), and none of the socket's pages is orphaned while it is younger
 * than the lend timeout: the slow socket costs its own pages, not the
 * pool's hit rate.  Strictly, whatever the kernel's speed: no page is lent
 * before the first frame, so the first page orphaned, seen after any frame,
 * must be seen a lend timeout or more after it; a slow kernel (TCG) runs
 * past the timeout, where the socket's pages may go, but no other.  The
 * loop yields now and then, pinned to its CPU: a pool without a node
 * follows the allocating CPU's, and a move to the other node would release
 * the cached pages as far ones.
 */
static void test_slow_socket(void)
{
	enum { FRAMES = 40000, HELD = 64, EVERY = 20 };
	struct ppb_params p = st_params();
	struct ppb_pool *pool;
	unsigned long start, first = 0;
	unsigned long timeout = msecs_to_jiffies(ST_LEND_TIMEOUT_MS);
	struct sk_buff_head held;
	int i, first_frame = -1;
	cpumask_var_t saved;
	struct ppb_stats b;
	u64 served, fresh;
	unsigned int ms;

	if (!st_pin(&saved))
		return;
	pool = st_create(&p);
	if (!pool)
		goto out;
	start = jiffies;
	skb_queue_head_init(&held);
	for (i = 0; i < FRAMES; i++) {
		struct sk_buff *skb;
		struct page *page;

		skb = st_skb(pool, &page);
		if (!skb)
			break;
		if (i % EVERY == 0 && skb_queue_len(&held) < HELD)
			__skb_queue_tail(&held, skb);
		else
			consume_skb(skb);
		if (first_frame < 0 && st_stat(pool, PPB_STAT(PAGES_ORPHANED))) {
			/* orphaned no later than this clock read */
			first = jiffies;
			first_frame = i;
		}
		if (i % 256 == 255)
			cond_resched();
	}
	ms = jiffies_to_msecs(jiffies - start);
	ppb_get_stats(pool, &b);
	served = b.c[PPB_STAT(PAGES_FROM_CACHE)] + b.c[PPB_STAT(PAGES_FROM_RING)] +
		 b.c[PPB_STAT(PAGES_FROM_STACK)] + b.c[PPB_STAT(PAGES_FROM_ALLOC)];
	fresh = b.c[PPB_STAT(PAGES_FROM_ALLOC)];
	pr_info("    # %llu pages served in %u ms, %llu fresh; %u held by the slow socket, %llu orphaned, the first seen after %u ms (frame %d)\n",
		served, ms, fresh, skb_queue_len(&held), b.c[PPB_STAT(PAGES_ORPHANED)],
		first_frame < 0 ? 0 : jiffies_to_msecs(first - start), first_frame);
	EXPECT(served == FRAMES, "every frame served: %llu", served);
	EXPECT(fresh * 100 <= served, "hit rate >= 99%%: %llu fresh of %llu", fresh, served);
	if (first_frame >= 0)
		EXPECT(time_after_eq(first, start + timeout),
		       "nothing orphaned within the lend timeout (%u ms): the first after %u ms",
		       ST_LEND_TIMEOUT_MS, jiffies_to_msecs(first - start));
	EXPECT(b.c[PPB_STAT(PAGES_ORPHANED)] <= skb_queue_len(&held),
	       "orphaned %llu <= the slow socket's %u (%u ms)",
	       b.c[PPB_STAT(PAGES_ORPHANED)], skb_queue_len(&held), ms);
	st_consistent(pool, 0);
	__skb_queue_purge(&held);
	st_cycle_refill(pool);
	st_consistent(pool, 0);
	ppb_pool_destroy(pool);
out:
	st_unpin(saved);
}

/*
 * Resizing the ring resizes the lent FIFO with it: 100 pages held by the
 * stack fit a ring of 64 (FIFO 256), not a ring of 2 (FIFO 8); shrunk
 * back, the pages that no longer fit are orphaned, none lost.
 */
static void test_set_ring_resizes_lent(void)
{
	enum { HELD = 100 };
	struct ppb_params p = st_params();
	struct sk_buff *skb[HELD];
	struct ppb_pool *pool;
	struct page *page;
	int i;

	p.pool_size = 2;
	pool = st_create(&p);
	if (!pool)
		return;
	EXPECT(ppb_pool_set_ring(pool, 0) == -ERANGE, "size 0 refused");
	EXPECT(ppb_pool_set_ring(pool, PPB_POOL_SIZE_MAX + 1) == -ERANGE, "too large refused");
	EXPECT(ppb_pool_set_ring(pool, 64) == 0, "resized to 64");
	for (i = 0; i < HELD; i++)
		skb[i] = st_skb(pool, &page);
	EXPECT(st_stat(pool, PPB_STAT(PAGES_ORPHANED)) == 0,
	       "%d pages lent fit the FIFO of a ring of 64: %llu orphaned", HELD,
	       st_stat(pool, PPB_STAT(PAGES_ORPHANED)));
	st_consistent(pool, 0);
	EXPECT(ppb_pool_set_ring(pool, 2) == 0, "resized to 2");
	st_cycle_refill(pool);
	EXPECT(st_stat(pool, PPB_STAT(PAGES_ORPHANED)) == HELD - 2 * PPB_LENT_PER_RING,
	       "shrunk: the oldest that do not fit orphaned: %llu",
	       st_stat(pool, PPB_STAT(PAGES_ORPHANED)));
	st_consistent(pool, 0);
	for (i = 0; i < HELD; i++)
		kfree_skb(skb[i]);
	st_cycle_refill(pool);
	st_consistent(pool, 0);
	ppb_pool_destroy(pool);
}

/* Run @fn(@arg) in a kthread on @cpu and wait for it. */
struct st_on {
	void (*fn)(void *arg);
	void *arg;
	struct completion done;
};

static int st_on_fn(void *arg)
{
	struct st_on *o = arg;

	o->fn(o->arg);
	complete(&o->done);
	return 0;
}

static bool st_on_cpu(void (*fn)(void *), void *arg, int cpu)
{
	struct st_on o = { .fn = fn, .arg = arg };
	struct task_struct *t;

	init_completion(&o.done);
	t = kthread_create(st_on_fn, &o, "pp_selftest_on/%d", cpu);
	if (IS_ERR(t))
		return false;
	kthread_bind(t, cpu);
	wake_up_process(t);
	wait_for_completion(&o.done);
	return true;
}

struct st_nn {
	struct ppb_pool *pool;
	u64 far, from_stack, reclaimed;
};

/* On a CPU of node 0: a node-1 page comes back from the stack. */
static void st_noderun(void *arg)
{
	struct st_nn *n = arg;
	struct sk_buff *skb;
	struct page *page;

	skb = st_skb(n->pool, &page);
	EXPECT(page && page_to_nid(page) == 1, "page from node 1");
	if (!skb)
		return;
	consume_skb(skb);
	/* No node of its own now: the consumer's, node 0, rules. */
	ppb_update_nid(n->pool, NUMA_NO_NODE);
	st_cycle_refill(n->pool);
	n->far = st_stat(n->pool, PPB_STAT(RELEASED_FAR_NODE));
	n->from_stack = st_stat(n->pool, PPB_STAT(PAGES_FROM_STACK));
	n->reclaimed = st_stat(n->pool, PPB_STAT(PAGES_RECLAIMED));
}

/*
 * A pool without a node of its own reclaims from the stack under the same
 * rule as it refills from the ring: a page of another node than the
 * consumer's is released, not reused.
 */
static void test_reclaim_far_node_no_node(void)
{
	struct ppb_params p = st_params();
	struct st_nn n = { };
	int cpu;

	if (!st_two_nodes())
		return;
	cpu = cpumask_first(cpumask_of_node(0));
	if (cpu >= nr_cpu_ids) {
		ktap_skip = "no CPU on node 0";
		return;
	}
	p.nid = 1;
	n.pool = st_create(&p);
	if (!n.pool)
		return;
	EXPECT(st_on_cpu(st_noderun, &n, cpu), "kthread");
	EXPECT(n.reclaimed == 1 && n.far == 1 && n.from_stack == 0,
	       "the node-1 page released on reclaim: reclaimed %llu, far %llu, served %llu",
	       n.reclaimed, n.far, n.from_stack);
	st_consistent(n.pool, 0);
	ppb_pool_destroy(n.pool);
}

/* ---- teardown ---- */

static bool st_wait_gone(u32 id, unsigned int ms)
{
	struct ppb_stats s;

	while (ppb_pool_stats_by_id(id, &s) == 0) {
		if (!ms)
			return false;
		msleep(50);
		ms = ms > 50 ? ms - 50 : 0;
	}
	return true;
}

static struct {
	struct ppb_pool *pool;
	struct page *page;
} st_put_direct;

static void st_put_direct_fn(void *arg)
{
	ppb_recycle_direct(st_put_direct.pool, st_put_direct.page);
}

static void test_destroy_inflight(void)
{
	struct ppb_params p = st_params();
	struct ppb_pool *pool = st_create(&p);
	struct ppb_stats s;
	struct page *pages[3];
	u32 id;
	int i;

	if (!pool)
		return;
	id = ppb_pool_id(pool);
	for (i = 0; i < 3; i++)
		pages[i] = ppb_dev_alloc_pages(pool);
	ppb_pool_destroy(pool);
	EXPECT(ppb_pool_stats_by_id(id, &s) == 0 && s.inflight_pages == 3,
	       "destroyed pool waits for its 3 pages");
	EXPECT(s.cache_pages == 0 && s.ring_pages == 0, "stock released at destroy");
	ppb_put_page(pool, pages[0], -1, false);
	st_put_direct.pool = pool;
	st_put_direct.page = pages[1];
	st_in_softirq(st_put_direct_fn, &st_put_direct);
	EXPECT(ppb_pool_stats_by_id(id, &s) == 0 && s.inflight_pages == 1 && s.cache_pages == 0,
	       "still waiting for the last page, nothing cached: %llu in flight, %u cached",
	       s.inflight_pages, s.cache_pages);
	EXPECT(s.c[PPB_STAT(RELEASED_DESTROYED)] == 2,
	       "late returns released, the direct one too: %llu",
	       s.c[PPB_STAT(RELEASED_DESTROYED)]);
	/*
	 * A direct return from softirq after destroy: released, never cached
	 * where the release work would have to find it.
	 */
	st_put_direct.pool = pool;
	st_put_direct.page = pages[2];
	st_in_softirq(st_put_direct_fn, &st_put_direct);
	EXPECT(st_wait_gone(id, 3000), "pool freed itself after the last page");
}

/*
 * Pages that are not the pool's: an skb head from the kernel's page-frag
 * cache, a page of another pool.  Lends and returns leave them alone and
 * count them; nothing is taken from their refcount.
 */
static void test_foreign_pages(void)
{
	struct ppb_params p = st_params();
	struct ppb_pool *pool = st_create(&p), *other;
	struct page *head, *page;
	struct sk_buff *skb;
	struct ppb_stats s;
	int ref;

	if (!pool)
		return;
	other = st_create(&p);
	if (!other)
		goto out;
	skb = netdev_alloc_skb(NULL, 1500);
	if (!skb || !skb->head_frag) {
		EXPECT(0, "an skb whose head is a page-frag cache fragment");
		kfree_skb(skb);
		goto out_other;
	}
	head = virt_to_head_page(skb->head);
	ref = page_ref_count(head);
	ppb_skb_mark(pool, skb);
	ppb_get_stats(pool, &s);
	EXPECT(s.c[PPB_STAT(PAGES_LENT)] == 0 && s.lent_pages == 0 && s.foreign == 1,
	       "the page-frag head is not lent: lent %llu, in the FIFO %u, refused %llu",
	       s.c[PPB_STAT(PAGES_LENT)], s.lent_pages, s.foreign);
	EXPECT(page_ref_count(head) == ref, "its refcount untouched: %d, was %d",
	       page_ref_count(head), ref);
	kfree_skb(skb);

	page = ppb_dev_alloc_pages(other);
	if (!page) {
		EXPECT(0, "a page of the other pool");
		goto out_other;
	}
	ppb_page_lend(pool, page);
	ppb_put_page(pool, page, -1, false);
	st_put_direct.pool = pool;
	st_put_direct.page = page;
	st_in_softirq(st_put_direct_fn, &st_put_direct);
	ppb_get_stats(pool, &s);
	EXPECT(s.foreign == 4 && s.c[PPB_STAT(PAGES_LENT)] == 0 && s.cache_pages == 0 &&
	       s.ring_pages == 0,
	       "another pool's page refused 3 times: %llu, lent %llu, cached %u, ring %u",
	       s.foreign - 1, s.c[PPB_STAT(PAGES_LENT)], s.cache_pages, s.ring_pages);
	EXPECT(page_ref_count(page) == PPB_BIAS, "still its pool's alone: %d",
	       page_ref_count(page));
	ppb_put_page(other, page, -1, false);
	st_consistent(other, 0);
out_other:
	ppb_pool_destroy(other);
out:
	st_consistent(pool, 0);
	ppb_pool_destroy(pool);
}

/*
 * A syncing pool destroyed with pages out: their returns, whichever way
 * they come, release them unsynced (the device's driver may be gone) and
 * never into the cache.
 */
static void st_put_sync_fn(void *arg)
{
	ppb_put_page_sync(st_put_direct.pool, st_put_direct.page, -1, true);
}

static void test_destroy_sync_late_return(void)
{
	struct ppb_params p = st_params();
	struct ppb_pool *pool;
	struct page *pages[3];
	struct ppb_stats s;
	u64 synced;
	u32 id;
	int i;

	p.flags |= PPB_FLAG_DMA_SYNC_DEV;
	pool = st_create(&p);
	if (!pool)
		return;
	id = ppb_pool_id(pool);
	for (i = 0; i < 3; i++)
		pages[i] = ppb_dev_alloc_pages(pool);
	ppb_pool_destroy(pool);
	synced = st_stat(pool, PPB_STAT(SYNC_FOR_DEVICE));
	ppb_put_page(pool, pages[0], -1, false);
	st_put_direct.pool = pool;
	st_put_direct.page = pages[1];
	st_in_softirq(st_put_sync_fn, &st_put_direct);
	ppb_get_stats(pool, &s);
	EXPECT(s.c[PPB_STAT(SYNC_FOR_DEVICE)] == synced,
	       "no sync after destroy: %llu syncs, %llu before",
	       s.c[PPB_STAT(SYNC_FOR_DEVICE)], synced);
	EXPECT(s.c[PPB_STAT(RELEASED_DESTROYED)] == 2 && s.cache_pages == 0,
	       "both released, none cached: %llu released, %u cached",
	       s.c[PPB_STAT(RELEASED_DESTROYED)], s.cache_pages);
	st_put_direct.page = pages[2];
	st_in_softirq(st_put_direct_fn, &st_put_direct);
	EXPECT(st_wait_gone(id, 3000), "pool freed itself after the last page");
}

static void test_destroy_stack_inflight(void)
{
	struct ppb_params p = st_params();
	struct ppb_pool *pool = st_create(&p);
	struct ppb_stats s;
	struct sk_buff *skb;
	struct page *page;
	u64 oldest_ms;
	u32 id, held;

	if (!pool)
		return;
	id = ppb_pool_id(pool);
	skb = st_skb(pool, &page);
	ppb_pool_destroy(pool);
	EXPECT(ppb_pool_stats_by_id(id, &s) == 0 && s.lent_pages == 1,
	       "waits for the page the stack holds");
	/* unmapped at destroy, still held: its age is still reported */
	ppb_pool_held_pages(pool, &held, &oldest_ms);
	EXPECT(held == 1, "the held page is still seen after destroy: %u held", held);
	consume_skb(skb);		/* the stack lets go, late */
	EXPECT(st_wait_gone(id, 3000), "pool freed once the stack let go");
}

static void test_counters_busy(void)
{
	struct ppb_params p = st_params();
	struct ppb_pool *pool = st_create(&p);
	struct page *held[16];
	struct sk_buff *skb;
	struct page *page;
	int i, k;

	if (!pool)
		return;
	for (k = 0; k < 200; k++) {
		for (i = 0; i < 16; i++)
			held[i] = ppb_dev_alloc_pages(pool);
		skb = st_skb(pool, &page);
		for (i = 0; i < 16; i++)
			ppb_put_page(pool, held[i], k % 64, false);
		kfree_skb(skb);
	}
	for (i = 0; i < 4; i++)
		held[i] = ppb_dev_alloc_pages(pool);
	st_consistent(pool, 4);
	for (i = 0; i < 4; i++)
		ppb_put_page(pool, held[i], -1, false);
	st_consistent(pool, 0);
	ppb_pool_destroy(pool);
}

/* ---- fragments ---- */

#define ST_FRAG		2048U

static struct ppb_pool *st_frag_create(void)
{
	struct ppb_params p = st_params();

	p.flags |= PPB_FLAG_PAGE_FRAG;
	return st_create(&p);
}

/* Refill the cache once: a refill's worth of whole-page fragments, returned. */
static void st_frag_cycle_refill(struct ppb_pool *pool)
{
	struct page *got[PPB_REFILL_BATCH];
	unsigned int off;
	int i;

	for (i = 0; i < PPB_REFILL_BATCH; i++)
		got[i] = ppb_dev_alloc_frag(pool, &off, PAGE_SIZE);
	for (i = 0; i < PPB_REFILL_BATCH; i++)
		if (got[i])
			ppb_put_page(pool, got[i], -1, false);
}

/* An skb on the fragment at @off of @page, lent as a driver's NAPI would. */
static struct sk_buff *st_frag_skb(struct ppb_pool *pool, struct page *page, unsigned int off)
{
	struct sk_buff *skb = build_skb(page_address(page) + off, ST_FRAG);

	if (!skb)
		return NULL;
	skb_reserve(skb, NET_SKB_PAD);
	__skb_put(skb, 60);
	ppb_skb_mark(pool, skb);
	return skb;
}

/*
 * Two fragments a page: each page is served once and comes back once, with
 * its last fragment, whatever the order; the page counters count pages, so
 * the recycle rate of perfect recycling is 1, not 1/2.
 */
static void test_frag_recycle(void)
{
	enum { N = 32 };	/* the frame stays under 1 KiB on 32-bit ARM */
	struct ppb_pool *pool = st_frag_create();
	struct page *pg[N];
	unsigned int off[N];
	struct ppb_stats s;
	u64 back, left;
	int i;

	if (!pool)
		return;
	for (i = 0; i < N; i++)
		pg[i] = ppb_dev_alloc_frag(pool, &off[i], ST_FRAG);
	EXPECT(pg[0] && pg[0] == pg[1] && off[0] == 0 && off[1] == ST_FRAG && pg[2] != pg[1],
	       "two fragments a page, at 0 and %u (%u)", ST_FRAG, off[1]);
	/* every odd fragment first, then the even ones, backwards */
	for (i = 1; i < N; i += 2)
		ppb_put_page(pool, pg[i], -1, false);
	EXPECT(st_stat(pool, PPB_STAT(PAGES_RETURNED)) == 0,
	       "no page back before its last fragment");
	for (i = N - 2; i >= 0; i -= 2)
		ppb_put_page(pool, pg[i], -1, false);
	ppb_get_stats(pool, &s);
	back = s.c[PPB_STAT(PAGES_RETURNED)] + s.c[PPB_STAT(PAGES_RECLAIMED)] +
	       s.c[PPB_STAT(PAGES_ORPHANED)];
	EXPECT(s.frags_served == N, "%llu fragments served", s.frags_served);
	EXPECT(back == N / 2 - 1 && s.inflight_pages == 1,
	       "every page back once but the one being cut up: %llu back, %llu in flight",
	       back, s.inflight_pages);
	EXPECT(s.c[PPB_STAT(RECYCLE_RING)] + s.c[PPB_STAT(RECYCLE_CACHED)] == back,
	       "recycle rate 1: %llu recycled of %llu", s.c[PPB_STAT(RECYCLE_RING)], back);
	/* the next page's first fragment finishes the last one */
	pg[0] = ppb_dev_alloc_frag(pool, &off[0], ST_FRAG);
	left = st_stat(pool, PPB_STAT(PAGES_RETURNED));
	EXPECT(left == N / 2, "the last page back when a new one is cut: %llu", left);
	if (pg[0])
		ppb_put_page(pool, pg[0], -1, false);
	ppb_pool_destroy(pool);
}

/*
 * A fragment lent to the stack and its sibling returned by the driver, in
 * both orders: the page is back once, when the later of the two is.
 */
static void test_frag_lend(void)
{
	struct ppb_pool *pool = st_frag_create();
	struct page *a, *b, *c;
	unsigned int oa, ob, oc;
	struct sk_buff *skb;
	struct ppb_stats s;
	int bias;

	if (!pool)
		return;
	/* the stack lets go first, the driver's fragment comes back last */
	a = ppb_dev_alloc_frag(pool, &oa, ST_FRAG);
	b = ppb_dev_alloc_frag(pool, &ob, ST_FRAG);
	c = ppb_dev_alloc_frag(pool, &oc, ST_FRAG);	/* a new page: a's is cut */
	if (!a || a != b || !c || c == a)
		goto fail;
	bias = page_ref_count(a);
	skb = st_frag_skb(pool, a, oa);
	if (!skb)
		goto fail;
	EXPECT(page_ref_count(a) == bias + 1, "the stack's own reference");
	consume_skb(skb);
	st_frag_cycle_refill(pool);
	ppb_get_stats(pool, &s);
	EXPECT(s.frags_lent == 1 && s.c[PPB_STAT(PAGES_LENT)] == 1 && s.frag_pages_unlent == 1 &&
	       s.c[PPB_STAT(PAGES_RECLAIMED)] == 0,
	       "back from the stack, still the driver's: lent %llu unlent %llu reclaimed %llu",
	       s.frags_lent, s.frag_pages_unlent, s.c[PPB_STAT(PAGES_RECLAIMED)]);
	ppb_put_page(pool, b, -1, false);
	/* and the refill's pages, but the one still being cut up */
	EXPECT(st_stat(pool, PPB_STAT(PAGES_RETURNED)) == PPB_REFILL_BATCH,
	       "back with the driver's last fragment");

	/* the driver's fragment first, the stack lets go last */
	ppb_put_page(pool, c, -1, false);
	a = ppb_dev_alloc_frag(pool, &oa, ST_FRAG);
	b = ppb_dev_alloc_frag(pool, &ob, ST_FRAG);
	if (!a || a != b)
		goto fail;
	skb = st_frag_skb(pool, a, oa);
	ppb_put_page(pool, b, -1, false);
	c = ppb_dev_alloc_frag(pool, &oc, ST_FRAG);
	if (!skb || !c)
		goto fail;
	EXPECT(st_stat(pool, PPB_STAT(PAGES_RECLAIMED)) == 0, "not back while the stack holds it");
	consume_skb(skb);
	ppb_put_page(pool, c, -1, false);
	st_frag_cycle_refill(pool);
	ppb_get_stats(pool, &s);
	EXPECT(s.c[PPB_STAT(PAGES_RECLAIMED)] == 1 && page_ref_count(a) == bias,
	       "reclaimed once (%llu), the pool's references only (%d)",
	       s.c[PPB_STAT(PAGES_RECLAIMED)], page_ref_count(a));
	ppb_pool_destroy(pool);
	return;
fail:
	EXPECT(0, "fragments: a %p b %p c %p", a, b, c);
	ppb_pool_destroy(pool);
}

/*
 * The stack holds a fragment past the lend timeout while the driver still
 * has the other one on its ring: the page is not orphaned under the
 * driver; its last put releases it, and the skb alone holds it.  With the
 * driver's fragment back, the same wait orphans it.
 */
static void test_frag_orphan(void)
{
	struct ppb_pool *pool = st_frag_create();
	struct page *a, *b, *c;
	unsigned int oa, ob, oc;
	struct sk_buff *skb;
	int bias = 0;
	u32 id;

	if (!pool)
		return;
	id = ppb_pool_id(pool);
	a = ppb_dev_alloc_frag(pool, &oa, ST_FRAG);
	b = ppb_dev_alloc_frag(pool, &ob, ST_FRAG);
	c = ppb_dev_alloc_frag(pool, &oc, ST_FRAG);
	if (a)
		bias = page_ref_count(a);
	skb = a == b && c ? st_frag_skb(pool, a, oa) : NULL;
	if (!skb) {
		EXPECT(0, "fragments and skb");
		goto out;
	}
	msleep(1100);
	st_frag_cycle_refill(pool);
	EXPECT(st_stat(pool, PPB_STAT(PAGES_ORPHANED)) == 0 && page_ref_count(a) == bias + 1,
	       "not orphaned under the driver (%d)", page_ref_count(a));
	ppb_put_page(pool, b, -1, false);
	EXPECT(st_stat(pool, PPB_STAT(RECYCLE_RELEASED_REFCNT)) == 1 && page_ref_count(a) == 1,
	       "released by the driver's last put, the skb's alone: %d", page_ref_count(a));
	kfree_skb(skb);

	a = ppb_dev_alloc_frag(pool, &oa, ST_FRAG);
	b = ppb_dev_alloc_frag(pool, &ob, ST_FRAG);
	skb = a && a == b ? st_frag_skb(pool, a, oa) : NULL;
	ppb_put_page(pool, b, -1, false);
	ppb_put_page(pool, c, -1, false);
	c = ppb_dev_alloc_frag(pool, &oc, ST_FRAG);
	if (!skb || !c) {
		EXPECT(0, "fragments and skb");
		goto out;
	}
	msleep(1100);
	st_frag_cycle_refill(pool);
	EXPECT(st_stat(pool, PPB_STAT(PAGES_ORPHANED)) == 1 && page_ref_count(a) == 1,
	       "orphaned once the driver's fragments are back: %d", page_ref_count(a));
	kfree_skb(skb);
	ppb_put_page(pool, c, -1, false);
out:
	ppb_pool_destroy(pool);
	EXPECT(st_wait_gone(id, 3000), "the pool freed itself");
}

/*
 * A fragment pool's page taken whole with ppb_alloc_pages() is one
 * fragment: put back or lent, it comes back.
 */
static void test_frag_pool_whole_page(void)
{
	struct ppb_pool *pool = st_frag_create();
	struct sk_buff *skb;
	struct page *page;

	if (!pool)
		return;
	page = ppb_dev_alloc_pages(pool);
	if (!page) {
		EXPECT(0, "a page");
		goto out;
	}
	ppb_put_page(pool, page, -1, false);
	st_consistent(pool, 0);
	page = ppb_dev_alloc_pages(pool);
	skb = page ? ppb_build_skb(pool, page, NET_SKB_PAD, 60) : NULL;
	if (!skb) {
		EXPECT(0, "an skb on a whole page");
		if (page)
			ppb_put_page(pool, page, -1, false);
		goto out;
	}
	st_consistent(pool, 0);
	kfree_skb(skb);
	st_frag_cycle_refill(pool);
	EXPECT(st_stat(pool, PPB_STAT(PAGES_RECLAIMED)) == 1 &&
	       st_stat(pool, PPB_STAT(PAGES_ORPHANED)) == 0,
	       "the lent whole page came back: reclaimed %llu",
	       st_stat(pool, PPB_STAT(PAGES_RECLAIMED)));
	st_consistent(pool, 1);		/* the page being cut up */
out:
	ppb_pool_destroy(pool);
}

static const struct ktap_case st_cases[] = {
	{ "params_pool_size_range", test_params_pool_size },
	{ "params_order_range", test_params_order },
	{ "params_dma_flags", test_params_sync_without_map },
	{ "params_len_and_node", test_params_len_and_node },
	{ "alloc_bulk_refill", test_bulk_refill },
	{ "alloc_lifo_order", test_lifo_order },
	{ "alloc_high_order", test_high_order },
	{ "recycle_ring_from_other_cpu", test_ring_other_cpu },
	{ "recycle_ring_full_release", test_ring_full_release },
	{ "recycle_cache_full_to_ring", test_cache_full_to_ring },
	{ "recycle_push_count_fold", test_push_count_fold },
	{ "recycle_refcnt_release", test_refcnt_release },
	{ "recycle_pfmemalloc_released", test_pfmemalloc_released },
	{ "numa_far_node_released", test_far_node_released },
	{ "numa_update_nid_ring_waive", test_update_nid_ring_waive },
	{ "numa_reclaim_far_node_no_node", test_reclaim_far_node_no_node },
	{ "dma_sync_max_len", test_sync_max_len },
	{ "dma_sync_direct", test_sync_direct },
	{ "dma_mapped_once", test_dma_mapped_once },
	{ "stack_reclaim", test_stack_reclaim },
	{ "stack_orphan_held_skb", test_stack_orphan },
	{ "stack_lent_fifo_full", test_lent_fifo_full },
	{ "stack_skb_mark_frags", test_skb_mark_frags },
	{ "stack_skb_mark_frag_list", test_skb_mark_frag_list },
	{ "stack_lend_twice_refused", test_lend_twice },
	{ "stack_slow_socket_hit_rate", test_slow_socket },
	{ "stack_set_ring_resizes_lent", test_set_ring_resizes_lent },
	{ "destroy_inflight_late_return", test_destroy_inflight },
	{ "destroy_stack_inflight", test_destroy_stack_inflight },
	{ "destroy_sync_late_return", test_destroy_sync_late_return },
	{ "misuse_foreign_pages_refused", test_foreign_pages },
	{ "counters_consistent_busy", test_counters_busy },
	{ "frag_recycle_pages_once", test_frag_recycle },
	{ "frag_lend_and_return", test_frag_lend },
	{ "frag_orphan_not_under_driver", test_frag_orphan },
	{ "misuse_frag_pool_whole_page", test_frag_pool_whole_page },
};

static int __init st_init(void)
{
	return ktap_run("pp_selftest", st_cases, ARRAY_SIZE(st_cases));
}

static void __exit st_exit(void)
{
}

module_init(st_init);
module_exit(st_exit);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("ppkit page_pool backport selftests (KTAP)");
