// SPDX-License-Identifier: GPL-2.0
/*
 * pp_bench: page pool micro-benchmarks, side by side in one boot.
 *
 * The same loops run against four implementations:
 *   ppkit   the pp_backport pool (ppb_*)
 *   native  the kernel's own page_pool (page_pool_*, built into 6.1)
 *   alloc   plain alloc_page()/put_page(), the baseline a pool must beat
 *   floor   a bare LIFO array of page pointers: pop, push, nothing else,
 *           the least any recycling scheme can cost (not for the tests
 *           that involve an skb or a second CPU)
 * and six tests:
 *   fast       in softirq: alloc, recycle direct into the alloc-side cache
 *   ring       in softirq: alloc, put without direct recycle (via the ring)
 *   cross_cpu  alloc on one CPU (BH off), put on another from process context
 *   stack      in softirq: alloc, build an skb on the page, free the skb;
 *              later allocations take the page back
 *   bulk       in softirq: alloc BENCH_BULK pages, then return them all
 *              direct (ns per page)
 *   xdp_drop   in softirq, what XDP_DROP does: alloc, return direct with a
 *              sync for the device of the frame's length (64..1500 bytes,
 *              pools with DMA_SYNC_DEV; alloc maps and unmaps each page)
 *
 * Everything runs at load time.  Runs are interleaved (run by run, test by
 * test, the implementation order rotating each run) so that drift in the
 * machine hits all of them alike.  One line per measurement goes to the
 * kernel log:
 *   pp_bench: test=fast impl=ppkit run=3 ns_per_op=123 ops=200000
 * followed by a summary of the medians.  Pools and the device are torn down
 * before init returns, so unloading has nothing left to free.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/module.h>
#include <linux/moduleparam.h>
#include <ppkit/modparam.h>
#include <linux/kernel.h>
#include <linux/interrupt.h>
#include <linux/completion.h>
#include <linux/kthread.h>
#include <linux/sched.h>
#include <linux/ptr_ring.h>
#include <linux/platform_device.h>
#include <linux/dma-mapping.h>
#include <linux/skbuff.h>
#include <linux/slab.h>
#include <linux/sort.h>
#include <linux/ktime.h>
#include <linux/cpumask.h>
#include <ppkit/compat.h>
#include <ppkit/page_pool.h>

#define BENCH_LOOPS_MIN		4096
#define BENCH_LOOPS_MAX		50000000
#define BENCH_RUNS_MIN		1
#define BENCH_RUNS_MAX		99

#define BENCH_POOL_SIZE		1024
/* Ops per softirq invocation: well under a millisecond even under TCG. */
#define BENCH_CHUNK		256
/* Untimed ops before each measurement. */
#define BENCH_WARMUP		2048
/* Bytes the stack test puts in each skb, after NET_SKB_PAD of headroom. */
#define BENCH_SKB_LEN		64
/* Cross-CPU hand-off queue, and pages allocated per BH-off section. */
#define XCPU_QUEUE		256
#define XCPU_BURST		64
/* A side that sees no progress from the other for this long gives up. */
#define XCPU_STALL_NS		(5ULL * NSEC_PER_SEC)

static unsigned int loops = 200000;
static unsigned int runs = 7;

static int loops_set(const char *val, const struct kernel_param *kp)
{
	return ppkit_param_set_range(val, kp, BENCH_LOOPS_MIN, BENCH_LOOPS_MAX);
}

static int runs_set(const char *val, const struct kernel_param *kp)
{
	return ppkit_param_set_range(val, kp, BENCH_RUNS_MIN, BENCH_RUNS_MAX);
}

static const struct kernel_param_ops loops_ops = {
	.set = loops_set,
	.get = param_get_uint,
};

static const struct kernel_param_ops runs_ops = {
	.set = runs_set,
	.get = param_get_uint,
};

module_param_cb(loops, &loops_ops, &loops, 0444);
MODULE_PARM_DESC(loops,
		 "ops per run of fast, ring, bulk and xdp_drop; cross_cpu and stack do a quarter (4096..50000000, default 200000)");
module_param_cb(runs, &runs_ops, &runs, 0444);
MODULE_PARM_DESC(runs, "interleaved runs of every test and implementation (1..99, default 7)");

/* Pages a bulk op takes before it gives them back. */
#define BENCH_BULK		16
/* The floor's array: enough for a bulk op. */
#define FLOOR_PAGES		64
/* The frame lengths of xdp_drop: 64, 64 + XDP_LEN_STEP, ... <= 1500. */
#define XDP_LEN_MIN		64
#define XDP_LEN_MAX		1500
#define XDP_LEN_STEP		97

enum bench_test { T_FAST, T_RING, T_CROSS, T_STACK, T_BULK, T_XDP, T_NR };
enum bench_impl { I_PPKIT, I_NATIVE, I_ALLOC, I_FLOOR, I_NR };

static const char * const test_names[T_NR] = {
	[T_FAST] = "fast",
	[T_RING] = "ring",
	[T_CROSS] = "cross_cpu",
	[T_STACK] = "stack",
	[T_BULK] = "bulk",
	[T_XDP] = "xdp_drop",
};

static const char * const impl_names[I_NR] = {
	[I_PPKIT] = "ppkit",
	[I_NATIVE] = "native",
	[I_ALLOC] = "alloc",
	[I_FLOOR] = "floor",
};

struct pp_bench;
typedef int (*bench_loop_t)(struct pp_bench *b, unsigned int n);

struct pp_bench {
	struct platform_device *pdev;
	struct ppb_pool *ppb;
	struct page_pool *native;
	/* xdp_drop: the same pools, syncing for the device on return */
	struct ppb_pool *ppb_sync;
	struct page_pool *native_sync;
	unsigned int xdp_len;

	/* The floor: a LIFO of FLOOR_PAGES pages, @floor_top of them in it. */
	struct page *floor[FLOOR_PAGES];
	unsigned int floor_top;

	/* Softirq runner: the tasklet runs @loop in chunks until @left is 0. */
	struct tasklet_struct tasklet;
	struct completion done;
	bench_loop_t loop;
	unsigned int chunk;
	unsigned int left;
	u64 ns;
	int err;

	/* Cross-CPU: pages go from the CPU0 side to the CPU1 side. */
	int cpu[2];
	struct ptr_ring xq;

	u64 *results;	/* [T_NR][I_NR][runs] ns per op */
};

static struct pp_bench bench;

static unsigned int test_ops(enum bench_test t)
{
	switch (t) {
	case T_FAST:
	case T_RING:
	case T_XDP:
		return loops;
	case T_BULK:
		return round_down(loops, BENCH_BULK);
	default:
		return loops / 4;
	}
}

/* Loops run in chunks of this many ops: a bulk op is never split. */
static unsigned int test_chunk(enum bench_test t)
{
	return t == T_BULK ? round_down(BENCH_CHUNK, BENCH_BULK) : BENCH_CHUNK;
}

/* The page allocator baseline, the same for fast and ring. */
static struct page *bench_alloc_page(void)
{
	return alloc_page(GFP_ATOMIC | __GFP_NOWARN);
}

static int fast_ppkit(struct pp_bench *b, unsigned int n)
{
	struct ppb_pool *pool = b->ppb;
	struct page *page;

	while (n--) {
		page = ppb_dev_alloc_pages(pool);
		if (unlikely(!page))
			return -ENOMEM;
		ppb_recycle_direct(pool, page);
	}
	return 0;
}

static int fast_native(struct pp_bench *b, unsigned int n)
{
	struct page_pool *pool = b->native;
	struct page *page;

	while (n--) {
		page = page_pool_dev_alloc_pages(pool);
		if (unlikely(!page))
			return -ENOMEM;
		page_pool_recycle_direct(pool, page);
	}
	return 0;
}

static int ring_ppkit(struct pp_bench *b, unsigned int n)
{
	struct ppb_pool *pool = b->ppb;
	struct page *page;

	while (n--) {
		page = ppb_dev_alloc_pages(pool);
		if (unlikely(!page))
			return -ENOMEM;
		ppb_put_full_page(pool, page, false);
	}
	return 0;
}

static int ring_native(struct pp_bench *b, unsigned int n)
{
	struct page_pool *pool = b->native;
	struct page *page;

	while (n--) {
		page = page_pool_dev_alloc_pages(pool);
		if (unlikely(!page))
			return -ENOMEM;
		page_pool_put_full_page(pool, page, false);
	}
	return 0;
}

static int page_alloc_put(struct pp_bench *b, unsigned int n)
{
	struct page *page;

	while (n--) {
		page = bench_alloc_page();
		if (unlikely(!page))
			return -ENOMEM;
		put_page(page);
	}
	return 0;
}

/* Make @skb look like a received frame: headroom, then a small packet. */
static void stack_fill_skb(struct sk_buff *skb)
{
	skb_reserve(skb, NET_SKB_PAD);
	skb_put(skb, BENCH_SKB_LEN);
}

static int stack_ppkit(struct pp_bench *b, unsigned int n)
{
	struct ppb_pool *pool = b->ppb;
	struct sk_buff *skb;
	struct page *page;

	while (n--) {
		page = ppb_dev_alloc_pages(pool);
		if (unlikely(!page))
			return -ENOMEM;
		skb = ppb_build_skb(pool, page, NET_SKB_PAD, BENCH_SKB_LEN);
		if (unlikely(!skb)) {
			ppb_recycle_direct(pool, page);	/* still ours */
			return -ENOMEM;
		}
		consume_skb(skb);
	}
	return 0;
}

static int stack_native(struct pp_bench *b, unsigned int n)
{
	struct page_pool *pool = b->native;
	struct sk_buff *skb;
	struct page *page;

	while (n--) {
		page = page_pool_dev_alloc_pages(pool);
		if (unlikely(!page))
			return -ENOMEM;
		skb = build_skb(page_address(page), PAGE_SIZE);
		if (unlikely(!skb)) {
			page_pool_recycle_direct(pool, page);
			return -ENOMEM;
		}
		stack_fill_skb(skb);
		ppb_native_skb_mark(pool, skb, page);
		consume_skb(skb);
	}
	return 0;
}

static int stack_alloc(struct pp_bench *b, unsigned int n)
{
	struct sk_buff *skb;
	struct page *page;

	while (n--) {
		page = bench_alloc_page();
		if (unlikely(!page))
			return -ENOMEM;
		skb = build_skb(page_address(page), PAGE_SIZE);
		if (unlikely(!skb)) {
			put_page(page);
			return -ENOMEM;
		}
		stack_fill_skb(skb);
		consume_skb(skb);
	}
	return 0;
}

/*
 * The floor's accesses go through memory (READ_ONCE/WRITE_ONCE): a pop
 * followed by a push of the same page must not fold into nothing.
 */
static __always_inline struct page *floor_pop(struct pp_bench *b)
{
	unsigned int top = READ_ONCE(b->floor_top);

	if (unlikely(!top))
		return NULL;
	WRITE_ONCE(b->floor_top, top - 1);
	return READ_ONCE(b->floor[top - 1]);
}

static __always_inline void floor_push(struct pp_bench *b, struct page *page)
{
	unsigned int top = READ_ONCE(b->floor_top);

	WRITE_ONCE(b->floor[top], page);
	WRITE_ONCE(b->floor_top, top + 1);
}

static int floor_pop_push(struct pp_bench *b, unsigned int n)
{
	struct page *page;

	while (n--) {
		page = floor_pop(b);
		if (unlikely(!page))
			return -ENOMEM;
		floor_push(b, page);
	}
	return 0;
}

static int bulk_ppkit(struct pp_bench *b, unsigned int n)
{
	struct ppb_pool *pool = b->ppb;
	struct page *pages[BENCH_BULK];
	unsigned int i;

	for (; n >= BENCH_BULK; n -= BENCH_BULK) {
		for (i = 0; i < BENCH_BULK; i++) {
			pages[i] = ppb_dev_alloc_pages(pool);
			if (unlikely(!pages[i]))
				goto fail;
		}
		for (i = 0; i < BENCH_BULK; i++)
			ppb_recycle_direct(pool, pages[i]);
	}
	return 0;
fail:
	while (i--)
		ppb_recycle_direct(pool, pages[i]);
	return -ENOMEM;
}

static int bulk_native(struct pp_bench *b, unsigned int n)
{
	struct page_pool *pool = b->native;
	struct page *pages[BENCH_BULK];
	unsigned int i;

	for (; n >= BENCH_BULK; n -= BENCH_BULK) {
		for (i = 0; i < BENCH_BULK; i++) {
			pages[i] = page_pool_dev_alloc_pages(pool);
			if (unlikely(!pages[i]))
				goto fail;
		}
		for (i = 0; i < BENCH_BULK; i++)
			page_pool_recycle_direct(pool, pages[i]);
	}
	return 0;
fail:
	while (i--)
		page_pool_recycle_direct(pool, pages[i]);
	return -ENOMEM;
}

static int bulk_alloc(struct pp_bench *b, unsigned int n)
{
	struct page *pages[BENCH_BULK];
	unsigned int i;

	for (; n >= BENCH_BULK; n -= BENCH_BULK) {
		for (i = 0; i < BENCH_BULK; i++) {
			pages[i] = bench_alloc_page();
			if (unlikely(!pages[i]))
				goto fail;
		}
		for (i = 0; i < BENCH_BULK; i++)
			put_page(pages[i]);
	}
	return 0;
fail:
	while (i--)
		put_page(pages[i]);
	return -ENOMEM;
}

static int bulk_floor(struct pp_bench *b, unsigned int n)
{
	struct page *pages[BENCH_BULK];
	unsigned int i;

	for (; n >= BENCH_BULK; n -= BENCH_BULK) {
		for (i = 0; i < BENCH_BULK; i++) {
			pages[i] = floor_pop(b);
			if (unlikely(!pages[i]))
				goto fail;
		}
		for (i = 0; i < BENCH_BULK; i++)
			floor_push(b, pages[i]);
	}
	return 0;
fail:
	while (i--)
		floor_push(b, pages[i]);
	return -ENOMEM;
}

/* The next frame length of xdp_drop. */
static unsigned int xdp_next_len(struct pp_bench *b)
{
	unsigned int len = b->xdp_len;

	b->xdp_len = len + XDP_LEN_STEP > XDP_LEN_MAX ? XDP_LEN_MIN : len + XDP_LEN_STEP;
	return len;
}

static int xdp_ppkit(struct pp_bench *b, unsigned int n)
{
	struct ppb_pool *pool = b->ppb_sync;
	struct page *page;

	while (n--) {
		page = ppb_dev_alloc_pages(pool);
		if (unlikely(!page))
			return -ENOMEM;
		ppb_put_page(pool, page, xdp_next_len(b), true);
	}
	return 0;
}

static int xdp_native(struct pp_bench *b, unsigned int n)
{
	struct page_pool *pool = b->native_sync;
	struct page *page;

	while (n--) {
		page = page_pool_dev_alloc_pages(pool);
		if (unlikely(!page))
			return -ENOMEM;
		page_pool_put_page(pool, page, xdp_next_len(b), true);
	}
	return 0;
}

static int xdp_alloc(struct pp_bench *b, unsigned int n)
{
	struct device *dev = &b->pdev->dev;
	struct page *page;
	dma_addr_t dma;

	while (n--) {
		page = bench_alloc_page();
		if (unlikely(!page))
			return -ENOMEM;
		dma = dma_map_page(dev, page, 0, PAGE_SIZE, DMA_FROM_DEVICE);
		if (unlikely(dma_mapping_error(dev, dma))) {
			put_page(page);
			return -ENOMEM;
		}
		dma_sync_single_for_device(dev, dma, xdp_next_len(b), DMA_FROM_DEVICE);
		dma_unmap_page(dev, dma, PAGE_SIZE, DMA_FROM_DEVICE);
		put_page(page);
	}
	return 0;
}

static const bench_loop_t softirq_loops[T_NR][I_NR] = {
	[T_FAST] = { fast_ppkit, fast_native, page_alloc_put, floor_pop_push },
	[T_RING] = { ring_ppkit, ring_native, page_alloc_put, floor_pop_push },
	[T_STACK] = { stack_ppkit, stack_native, stack_alloc, NULL },
	[T_BULK] = { bulk_ppkit, bulk_native, bulk_alloc, bulk_floor },
	[T_XDP] = { xdp_ppkit, xdp_native, xdp_alloc, floor_pop_push },
};

/* Whether @i runs @t: the floor has no skb and no second CPU. */
static bool bench_has(enum bench_test t, enum bench_impl i)
{
	return i != I_FLOOR || (t != T_CROSS && t != T_STACK);
}

/* cross_cpu needs a second online CPU. */
static bool bench_runs(const struct pp_bench *b, enum bench_test t)
{
	return t != T_CROSS || b->cpu[1] < nr_cpu_ids;
}

static void bench_tasklet(struct tasklet_struct *t)
{
	struct pp_bench *b = from_tasklet(b, t, tasklet);
	unsigned int n = min_t(unsigned int, b->left, b->chunk);
	u64 t0;

	t0 = ktime_get_ns();
	b->err = b->loop(b, n);
	b->ns += ktime_get_ns() - t0;
	b->left -= n;
	if (b->err || !b->left)
		complete(&b->done);
	else
		tasklet_schedule(&b->tasklet);
}

/* Run @ops of @loop in softirq context; *@ns is the time spent in the loop. */
static int run_softirq(struct pp_bench *b, bench_loop_t loop, unsigned int ops,
		       unsigned int chunk, u64 *ns)
{
	b->loop = loop;
	b->chunk = chunk;
	b->left = ops;
	b->ns = 0;
	b->err = 0;
	reinit_completion(&b->done);
	tasklet_schedule(&b->tasklet);
	wait_for_completion(&b->done);
	*ns = b->ns;
	return b->err;
}

struct xcpu {
	struct pp_bench *b;
	enum bench_impl impl;
	unsigned int n;
	struct completion ready;	/* the consumer is polling */
	struct completion finished;	/* counts both sides out */
	bool abort;
	u64 t0, t1;
	int err[2];
};

static struct page *xcpu_alloc(struct pp_bench *b, enum bench_impl impl)
{
	switch (impl) {
	case I_PPKIT:
		return ppb_dev_alloc_pages(b->ppb);
	case I_NATIVE:
		return page_pool_dev_alloc_pages(b->native);
	default:
		return bench_alloc_page();
	}
}

static void xcpu_put(struct pp_bench *b, enum bench_impl impl, struct page *page)
{
	switch (impl) {
	case I_PPKIT:
		ppb_put_full_page(b->ppb, page, false);
		break;
	case I_NATIVE:
		page_pool_put_full_page(b->native, page, false);
		break;
	default:
		put_page(page);
		break;
	}
}

/*
 * Report done, then wait for kthread_stop().  Stopping a thread that has
 * been woken but not yet run would skip its function entirely, so the
 * controller waits for @finished before it stops anyone.
 */
static void xcpu_finish(struct xcpu *x)
{
	complete(&x->finished);
	set_current_state(TASK_INTERRUPTIBLE);
	while (!kthread_should_stop()) {
		schedule();
		set_current_state(TASK_INTERRUPTIBLE);
	}
	__set_current_state(TASK_RUNNING);
}

/*
 * Spinning on the other side: yield now and then, and give up when it makes
 * no progress for XCPU_STALL_NS.  *@since is when progress was last seen.
 */
static int xcpu_idle(struct xcpu *x, unsigned int *spins, u64 *since)
{
	if (READ_ONCE(x->abort))
		return -ECANCELED;
	cpu_relax();
	if (++*spins % 1024)
		return 0;
	cond_resched();
	if (!*since) {
		*since = ktime_get_ns();
	} else if (ktime_get_ns() - *since > XCPU_STALL_NS) {
		WRITE_ONCE(x->abort, true);
		return -ETIMEDOUT;
	}
	return 0;
}

/* CPU0 side: allocate with BHs off, as a driver's refill would. */
static int xcpu_producer(void *arg)
{
	struct xcpu *x = arg;
	struct pp_bench *b = x->b;
	struct page *page = NULL;
	unsigned int sent = 0, spins = 0, i;
	u64 since = 0;
	int err = 0;

	wait_for_completion(&x->ready);
	x->t0 = ktime_get_ns();
	while (sent < x->n && !err) {
		local_bh_disable();
		for (i = 0; i < XCPU_BURST && sent < x->n; i++) {
			if (!page)
				page = xcpu_alloc(b, x->impl);
			if (unlikely(!page)) {
				err = -ENOMEM;
				break;
			}
			if (ptr_ring_produce(&b->xq, page))
				break;	/* queue full */
			page = NULL;
			sent++;
		}
		local_bh_enable();
		if (page && !err) {
			err = xcpu_idle(x, &spins, &since);
		} else {
			since = 0;
			if (need_resched())
				cond_resched();
		}
	}
	if (page) {
		local_bh_disable();
		xcpu_put(b, x->impl, page);
		local_bh_enable();
	}
	if (err)
		WRITE_ONCE(x->abort, true);
	x->err[0] = err;
	xcpu_finish(x);
	return 0;
}

/* CPU1 side: return pages from process context, never direct. */
static int xcpu_consumer(void *arg)
{
	struct xcpu *x = arg;
	struct pp_bench *b = x->b;
	unsigned int got = 0, spins = 0;
	struct page *page;
	u64 since = 0;
	int err = 0;

	complete(&x->ready);
	while (got < x->n) {
		page = ptr_ring_consume(&b->xq);
		if (!page) {
			err = xcpu_idle(x, &spins, &since);
			if (err)
				break;
			continue;
		}
		since = 0;
		xcpu_put(b, x->impl, page);
		got++;
	}
	x->t1 = ktime_get_ns();
	x->err[1] = err;
	xcpu_finish(x);
	return 0;
}

static int run_cross_cpu(struct pp_bench *b, enum bench_impl impl,
			 unsigned int ops, u64 *ns)
{
	struct xcpu x = { .b = b, .impl = impl, .n = ops };
	struct task_struct *prod, *cons;
	struct page *page;
	int err;

	init_completion(&x.ready);
	init_completion(&x.finished);
	cons = ppb_kthread_create_on_cpu(xcpu_consumer, &x, b->cpu[1], "pp_bench_rx/%u");
	if (IS_ERR(cons))
		return PTR_ERR(cons);
	prod = ppb_kthread_create_on_cpu(xcpu_producer, &x, b->cpu[0], "pp_bench_tx/%u");
	if (IS_ERR(prod)) {
		kthread_stop(cons);	/* never woken: its function never runs */
		return PTR_ERR(prod);
	}
	/* Sleep, not spin: with both CPUs busy this thread could not run. */
	wake_up_process(cons);
	wake_up_process(prod);
	wait_for_completion(&x.finished);
	wait_for_completion(&x.finished);
	kthread_stop(prod);
	kthread_stop(cons);

	/* Only after a failure can pages be left in the queue. */
	while ((page = ptr_ring_consume(&b->xq))) {
		local_bh_disable();
		xcpu_put(b, impl, page);
		local_bh_enable();
	}
	err = x.err[0] ?: x.err[1];
	if (!err)
		*ns = x.t1 - x.t0;
	return err;
}

static int run_test(struct pp_bench *b, enum bench_test t, enum bench_impl i,
		    unsigned int ops, u64 *ns)
{
	if (t == T_CROSS)
		return run_cross_cpu(b, i, ops, ns);
	return run_softirq(b, softirq_loops[t][i], ops, test_chunk(t), ns);
}

static u64 *result(struct pp_bench *b, enum bench_test t, enum bench_impl i,
		   unsigned int run)
{
	return &b->results[((size_t)t * I_NR + i) * runs + run];
}

static int measure(struct pp_bench *b, enum bench_test t, enum bench_impl i,
		   unsigned int run)
{
	unsigned int ops = test_ops(t);
	u64 ns;
	int err;

	err = run_test(b, t, i, min_t(unsigned int, ops, BENCH_WARMUP), &ns);
	if (!err)
		err = run_test(b, t, i, ops, &ns);
	if (err) {
		pr_err("test=%s impl=%s run=%u failed: %d\n",
		       test_names[t], impl_names[i], run, err);
		return err;
	}
	*result(b, t, i, run) = DIV_ROUND_CLOSEST_ULL(ns, ops);
	pr_info("test=%s impl=%s run=%u ns_per_op=%llu ops=%u\n",
		test_names[t], impl_names[i], run, *result(b, t, i, run), ops);
	return 0;
}

static int cmp_u64(const void *a, const void *b)
{
	u64 x = *(const u64 *)a, y = *(const u64 *)b;

	return x < y ? -1 : x > y;
}

static u64 median(struct pp_bench *b, enum bench_test t, enum bench_impl i)
{
	u64 *v = result(b, t, i, 0);

	sort(v, runs, sizeof(*v), cmp_u64, NULL);
	return runs & 1 ? v[runs / 2] : (v[runs / 2 - 1] + v[runs / 2] + 1) / 2;
}

static void report(struct pp_bench *b)
{
	struct ppb_stats st;
	enum bench_test t;

	for (t = 0; t < T_NR; t++) {
		if (!bench_runs(b, t))
			continue;
		if (bench_has(t, I_FLOOR))
			pr_info("median test=%s ppkit=%llu native=%llu alloc=%llu floor=%llu (ns/op, %u runs)\n",
				test_names[t], median(b, t, I_PPKIT),
				median(b, t, I_NATIVE), median(b, t, I_ALLOC),
				median(b, t, I_FLOOR), runs);
		else
			pr_info("median test=%s ppkit=%llu native=%llu alloc=%llu (ns/op, %u runs)\n",
				test_names[t], median(b, t, I_PPKIT),
				median(b, t, I_NATIVE), median(b, t, I_ALLOC), runs);
	}

	/* Where the pools' pages came from: a check that each path ran as meant. */
	ppb_get_stats(b->ppb, &st);
	pr_info("ppkit pages: %s=%llu %s=%llu %s=%llu %s=%llu %s=%llu inflight=%llu\n",
		ppb_stat_names[PPB_STAT(PAGES_FROM_CACHE)],
		st.c[PPB_STAT(PAGES_FROM_CACHE)],
		ppb_stat_names[PPB_STAT(PAGES_FROM_RING)],
		st.c[PPB_STAT(PAGES_FROM_RING)],
		ppb_stat_names[PPB_STAT(PAGES_FROM_STACK)],
		st.c[PPB_STAT(PAGES_FROM_STACK)],
		ppb_stat_names[PPB_STAT(PAGES_ALLOCATED)],
		st.c[PPB_STAT(PAGES_ALLOCATED)],
		ppb_stat_names[PPB_STAT(PAGES_RELEASED)],
		st.c[PPB_STAT(PAGES_RELEASED)], st.inflight_pages);
	pr_info("native pages: allocated=%u released=%d\n",
		b->native->pages_state_hold_cnt,
		atomic_read(&b->native->pages_state_release_cnt));
}

static int bench_setup(struct pp_bench *b)
{
	struct platform_device_info info = {
		.name = KBUILD_MODNAME,
		.id = PLATFORM_DEVID_NONE,
		.dma_mask = DMA_BIT_MASK(64),
	};
	struct page_pool_params npp = {
		.flags = PP_FLAG_DMA_MAP,
		.order = 0,
		.pool_size = BENCH_POOL_SIZE,
		.nid = NUMA_NO_NODE,
		.dma_dir = DMA_FROM_DEVICE,
		.offset = 0,
		.max_len = PAGE_SIZE,
	};
	struct ppb_params ppp = {
		.flags = PPB_FLAG_DMA_MAP,
		.order = 0,
		.pool_size = BENCH_POOL_SIZE,
		.nid = NUMA_NO_NODE,
		.dma_dir = DMA_FROM_DEVICE,
		.offset = 0,
		.max_len = PAGE_SIZE,
		.owner = KBUILD_MODNAME,
	};
	int err;

	b->results = kcalloc((size_t)T_NR * I_NR * runs, sizeof(*b->results),
			     GFP_KERNEL);
	if (!b->results)
		return -ENOMEM;
	err = ptr_ring_init(&b->xq, XCPU_QUEUE, GFP_KERNEL);
	if (err)
		goto free_results;

	b->pdev = platform_device_register_full(&info);
	if (IS_ERR(b->pdev)) {
		err = PTR_ERR(b->pdev);
		goto free_ring;
	}
	npp.dev = &b->pdev->dev;
	ppp.dev = &b->pdev->dev;

	b->ppb = ppb_pool_create(&ppp);
	if (IS_ERR(b->ppb)) {
		err = PTR_ERR(b->ppb);
		pr_err("ppb_pool_create: %d\n", err);
		goto unregister;
	}
	b->native = page_pool_create(&npp);
	if (IS_ERR(b->native)) {
		err = PTR_ERR(b->native);
		pr_err("page_pool_create: %d\n", err);
		goto destroy_ppb;
	}
	npp.flags |= PP_FLAG_DMA_SYNC_DEV;
	b->native_sync = page_pool_create(&npp);
	if (IS_ERR(b->native_sync)) {
		err = PTR_ERR(b->native_sync);
		pr_err("page_pool_create (DMA_SYNC_DEV): %d\n", err);
		goto destroy_native;
	}
	ppp.flags |= PPB_FLAG_DMA_SYNC_DEV;
	b->ppb_sync = ppb_pool_create(&ppp);
	if (IS_ERR(b->ppb_sync)) {
		err = PTR_ERR(b->ppb_sync);
		pr_err("ppb_pool_create (DMA_SYNC_DEV): %d\n", err);
		goto destroy_native_sync;
	}
	b->xdp_len = XDP_LEN_MIN;
	for (b->floor_top = 0; b->floor_top < FLOOR_PAGES; b->floor_top++) {
		b->floor[b->floor_top] = alloc_page(GFP_KERNEL);
		if (!b->floor[b->floor_top]) {
			err = -ENOMEM;
			goto free_floor;
		}
	}
	init_completion(&b->done);
	tasklet_setup(&b->tasklet, bench_tasklet);
	return 0;

free_floor:
	while (b->floor_top)
		put_page(b->floor[--b->floor_top]);
	ppb_pool_destroy(b->ppb_sync);
destroy_native_sync:
	page_pool_destroy(b->native_sync);
destroy_native:
	page_pool_destroy(b->native);
destroy_ppb:
	ppb_pool_destroy(b->ppb);
unregister:
	platform_device_unregister(b->pdev);
free_ring:
	ptr_ring_cleanup(&b->xq, NULL);
free_results:
	kfree(b->results);
	return err;
}

static void bench_teardown(struct pp_bench *b)
{
	tasklet_kill(&b->tasklet);
	while (b->floor_top)
		put_page(b->floor[--b->floor_top]);
	ppb_pool_destroy(b->ppb_sync);
	page_pool_destroy(b->native_sync);
	page_pool_destroy(b->native);
	ppb_pool_destroy(b->ppb);
	platform_device_unregister(b->pdev);
	ptr_ring_cleanup(&b->xq, NULL);
	kfree(b->results);
}

static int bench_all(struct pp_bench *b)
{
	unsigned int run, k;
	enum bench_test t;
	int err;

	for (run = 0; run < runs; run++) {
		for (t = 0; t < T_NR; t++) {
			if (!bench_runs(b, t))
				continue;
			for (k = 0; k < I_NR; k++) {
				if (!bench_has(t, (run + k) % I_NR))
					continue;
				err = measure(b, t, (run + k) % I_NR, run);
				if (err)
					return err;
			}
		}
	}
	return 0;
}

static int __init pp_bench_init(void)
{
	struct pp_bench *b = &bench;
	int err;

	b->cpu[0] = cpumask_first(cpu_online_mask);
	b->cpu[1] = cpumask_next(b->cpu[0], cpu_online_mask);
	if (b->cpu[1] >= nr_cpu_ids)
		pr_info("note: one online CPU: test=cross_cpu is left out\n");
	err = bench_setup(b);
	if (err)
		return err;
	pr_info("start loops=%u runs=%u cpus=%d,%d pool_size=%u\n",
		loops, runs, b->cpu[0], bench_runs(b, T_CROSS) ? b->cpu[1] : -1,
		BENCH_POOL_SIZE);
	if (!PPB_HAVE_SKB_RECYCLE)
		pr_info("note: test=stack impl=native does not recycle here: this kernel's page_pool cannot take pages back from skbs (5.14), each page leaves the pool and is freed\n");
	err = bench_all(b);
	if (!err) {
		report(b);
		pr_info("done\n");
	}
	bench_teardown(b);
	return err;
}

static void __exit pp_bench_exit(void)
{
}

module_init(pp_bench_init);
module_exit(pp_bench_exit);

MODULE_DESCRIPTION("ppkit: page pool micro-benchmarks (pp_backport, native page_pool, page allocator, a bare LIFO)");
MODULE_LICENSE("GPL");
