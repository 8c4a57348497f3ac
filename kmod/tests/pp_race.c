// SPDX-License-Identifier: GPL-2.0
/*
 * pp_race: races the pool's paths against each other with kthreads pinned
 * to CPUs, and reports in KTAP.  Runs on load; the load fails if a case
 * fails.  Every case names the comment in kmod/pool/ whose argument it
 * attacks.  Needs 2 CPUs (3 for every case to run: scripts/lab/run --smp 3);
 * with fewer, the cases that need them report SKIP.
 *
 * tests/lab/race.sh loads it with pp_backport's release_retry_ms=1, so that
 * a destroyed pool's release work runs a thousand times a second, and with
 * the counts below scaled to the run (make test, or the soak).
 */

#include <linux/module.h>
#include <linux/platform_device.h>
#include <linux/dma-mapping.h>
#include <linux/skbuff.h>
#include <linux/kthread.h>
#include <linux/delay.h>
#include <linux/random.h>
#include <linux/sched.h>
#include <ppkit/page_pool.h>
#include <ppkit/race.h>
#include "ktap.h"
#include <ppkit/modparam.h>

static unsigned int reads = 1000000;
static unsigned int rounds = 4000;

static int pr_set_reads(const char *val, const struct kernel_param *kp)
{
	return ppkit_param_set_range(val, kp, 1, 100000000);
}

static int pr_set_rounds(const char *val, const struct kernel_param *kp)
{
	return ppkit_param_set_range(val, kp, 1, 10000000);
}

static const struct kernel_param_ops pr_reads_ops = {
	.set = pr_set_reads, .get = param_get_uint,
};

static const struct kernel_param_ops pr_rounds_ops = {
	.set = pr_set_rounds, .get = param_get_uint,
};

module_param_cb(reads, &pr_reads_ops, &reads, 0444);
MODULE_PARM_DESC(reads, "statistics reads racing refills (1..100000000, default 1000000)");
module_param_cb(rounds, &pr_rounds_ops, &rounds, 0444);
MODULE_PARM_DESC(rounds, "destroy rounds of the put and direct-return races (1..10000000, default 4000)");

static struct ppb_pool *pr_create(unsigned int size)
{
	struct ppb_params p = {
		.flags = PPB_FLAG_DMA_MAP,
		.pool_size = size,
		.nid = NUMA_NO_NODE,
		.dev = &ktap_pdev->dev,
		.dma_dir = DMA_FROM_DEVICE,
		.max_len = PAGE_SIZE,
		.owner = "pp_race",
	};
	struct ppb_pool *pool = ppb_pool_create(&p);

	if (IS_ERR(pool)) {
		pr_info("    # pool create failed: %ld\n", PTR_ERR(pool));
		ktap_failed = 1;
		return NULL;
	}
	return pool;
}

/* The CPUs the kthreads are pinned to: @n distinct online CPUs, or false. */
static bool pr_cpus(int *cpu, int n)
{
	int c = -1, i;

	for (i = 0; i < n; i++) {
		c = cpumask_next(c, cpu_online_mask);
		if (c >= nr_cpu_ids)
			return false;
		cpu[i] = c;
	}
	return true;
}

static struct task_struct *pr_start(int (*fn)(void *), void *arg, int cpu, const char *name)
{
	struct task_struct *t = kthread_create(fn, arg, "%s/%d", name, cpu);

	if (IS_ERR(t))
		return t;
	kthread_bind(t, cpu);
	get_task_struct(t);
	wake_up_process(t);
	return t;
}

static void pr_stop(struct task_struct *t)
{
	if (IS_ERR_OR_NULL(t))
		return;
	kthread_stop(t);
	put_task_struct(t);
}

/* Wait until pool @id is freed, at most @ms milliseconds. */
static bool pr_wait_gone(u32 id, unsigned int ms)
{
	unsigned long end = jiffies + msecs_to_jiffies(ms);
	struct ppb_stats s;

	while (ppb_pool_stats_by_id(id, &s) == 0) {
		if (time_after(jiffies, end))
			return false;
		usleep_range(500, 1000);
	}
	return true;
}

/*
 * ---- statistics read while the allocating context refills ----
 * Attacks ppb_get_stats()'s claim (kmod/pool/stats.c) that a reader on
 * any CPU sees coherent counters while the allocating context folds a
 * finished refill and lays down the next one: every cumulative counter
 * must be monotonic from one read to the next, and every gauge within
 * what physically exists.
 */

struct pr_writer {
	struct ppb_pool *pool;
	unsigned long ops;
};

/* Allocate @n pages, then return them: directly, or through the ring. */
static void pr_cycle(struct ppb_pool *pool, struct page **pages, unsigned int n, bool direct)
{
	unsigned int i;

	for (i = 0; i < n; i++)
		pages[i] = ppb_dev_alloc_pages(pool);
	for (i = 0; i < n; i++)
		if (pages[i])
			ppb_put_page(pool, pages[i], -1, direct);
}

/* Emulates a NAPI poll: BHs off, alloc, lend, return; one of three refills. */
static void pr_writer_round(struct pr_writer *w, unsigned int k)
{
	struct page *pages[2 * PPB_REFILL_BATCH + 8];
	struct sk_buff *skb;
	unsigned int i;

	local_bh_disable();
	switch (k % 3) {
	case 0:	/* through the ring: returns from "another context" */
		pr_cycle(w->pool, pages, PPB_REFILL_BATCH, false);
		break;
	case 1:	/* through the stack: skbs built on pool pages, freed */
		for (i = 0; i < 8; i++) {
			struct page *page = ppb_dev_alloc_pages(w->pool);

			if (!page)
				continue;
			skb = ppb_build_skb(w->pool, page, NET_SKB_PAD, 60);
			if (skb)
				kfree_skb(skb);
			else
				ppb_put_page(w->pool, page, -1, true);
		}
		break;
	default: /* from the allocator: more held than cache and ring hold */
		pr_cycle(w->pool, pages, ARRAY_SIZE(pages), true);
		break;
	}
	local_bh_enable();
	w->ops++;
}

static int pr_writer_fn(void *arg)
{
	struct pr_writer *w = arg;
	unsigned int k = 0;

	while (!kthread_should_stop()) {
		pr_writer_round(w, k++);
		cond_resched();
	}
	return 0;
}

static void test_stats_read_during_refill(void)
{
	struct ppb_stats prev, s;
	struct pr_writer w = { };
	struct task_struct *t;
	unsigned long bad = 0, bad_gauge = 0;
	unsigned int i, j;
	int cpu[2];

	if (!pr_cpus(cpu, 2)) {
		ktap_skip = "needs 2 CPUs";
		return;
	}
	w.pool = pr_create(64);
	if (!w.pool)
		return;
	t = pr_start(pr_writer_fn, &w, cpu[1], "pp_race_refill");
	if (IS_ERR(t)) {
		EXPECT(0, "kthread");
		goto out;
	}
	memset(&prev, 0, sizeof(prev));
	for (i = 0; i < reads; i++) {
		ppb_get_stats(w.pool, &s);
		for (j = 0; j < PPB_STAT_NR; j++) {
			if (s.c[j] >= prev.c[j])
				continue;
			if (bad++ < 5)
				pr_info("    # read %u: %s went from %llu to %llu\n", i,
					ppb_stat_names[j], prev.c[j], s.c[j]);
		}
		if (s.inflight_pages > s.c[PPB_STAT(PAGES_ALLOCATED)] ||
		    s.inflight_bytes != s.inflight_pages * PAGE_SIZE ||
		    s.cache_pages > PPB_CACHE_SIZE) {
			if (bad_gauge++ < 5)
				pr_info("    # read %u: inflight %llu (%llu bytes), allocated %llu, cache %u\n",
					i, s.inflight_pages, s.inflight_bytes,
					s.c[PPB_STAT(PAGES_ALLOCATED)], s.cache_pages);
		}
		prev = s;
		if (!(i & 1023))
			cond_resched();
	}
	pr_stop(t);
	pr_info("    # %u reads against %lu refill rounds: %lu counters went back, %lu gauges out of bounds\n",
		reads, w.ops, bad, bad_gauge);
	EXPECT(w.ops > 0, "the writer ran");
	EXPECT(bad == 0, "every cumulative counter monotonic");
	EXPECT(bad_gauge == 0, "every gauge within bounds");
	ppb_get_stats(w.pool, &s);
	EXPECT(s.inflight_pages == s.lent_pages,
	       "quiet pool: in flight only what the stack has not given back (%llu, %u)",
	       s.inflight_pages, s.lent_pages);
	EXPECT(s.c[PPB_STAT(PAGES_FROM_RING)] && s.c[PPB_STAT(PAGES_FROM_STACK)] &&
	       s.c[PPB_STAT(PAGES_FROM_ALLOC)], "refills from ring, stack and allocator");
out:
	ppb_pool_destroy(w.pool);
}

/*
 * ---- returns racing ppb_pool_destroy() ----
 * Attacks ppb_ring_produce()'s claim (kmod/pool/recycle.c) that once
 * destroy has set 'destroyed' and waited for a grace period, no put is
 * still on its way into the ring or its counters: one putter in process
 * context and one with BHs off (as a softirq of another CPU) return the
 * pages they hold while a third CPU destroys the pool, the timing swept
 * over the rounds.  Each fresh pool must start with every counter at zero
 * (a late increment into freed per-CPU counters lands in the next pool
 * allocated there), and every pool must free itself.
 */

#define PR_PUT_PAGES	32

struct pr_putter {
	struct ppb_pool *pool;
	struct page *pages[PR_PUT_PAGES];
	atomic_t *go;		/* round number to run, or 0 */
	atomic_t done;		/* last round finished */
	bool bh;		/* return with BHs off */
	bool direct;		/* ... and allow_direct (the allocating context's) */
	unsigned int pace_us;	/* up to this long between two returns */
};

static int pr_putter_fn(void *arg)
{
	struct pr_putter *p = arg;
	int seen = 0, r, i;

	while (!kthread_should_stop()) {
		r = atomic_read_acquire(p->go);
		if (r == seen) {
			cond_resched();
			continue;
		}
		seen = r;
		for (i = 0; i < PR_PUT_PAGES; i++) {
			udelay(get_random_u32() % p->pace_us);
			if (!p->pages[i])
				continue;
			if (p->bh)
				local_bh_disable();
			ppb_put_page(p->pool, p->pages[i], -1, p->direct);
			if (p->bh)
				local_bh_enable();
			p->pages[i] = NULL;
		}
		atomic_set_release(&p->done, r);
	}
	return 0;
}

static void pr_fill(void *arg)
{
	struct pr_putter *p = arg;
	int i;

	for (i = 0; i < PR_PUT_PAGES; i++)
		p->pages[i] = ppb_dev_alloc_pages(p->pool);
}

static bool pr_fresh(struct ppb_pool *pool)
{
	struct ppb_stats s;
	int i;

	ppb_get_stats(pool, &s);
	for (i = 0; i < PPB_STAT_NR; i++)
		if (s.c[i])
			return false;
	return !s.inflight_pages && !s.ring_pages && !s.cache_pages;
}

/*
 * Shares the process putter's CPU: with preempt=full (tests/lab/race.sh)
 * the putter is preempted wherever preemption is enabled again, such as
 * right after a ring return has re-enabled BHs.
 */
static int pr_hog_fn(void *arg)
{
	unsigned int spin_us = 50;

	while (!kthread_should_stop()) {
		udelay(spin_us);
		cond_resched();
	}
	return 0;
}

static void pr_wait_done(struct pr_putter *p, int r)
{
	while (atomic_read_acquire(&p->done) != r)
		cond_resched();
}

/*
 * One lane: a destroyer and its two putters.  Lanes run side by side so
 * that their destroys share grace periods: a round costs a grace period,
 * and 10^5 of them one after the other would take an hour under TCG.
 */
struct pr_lane {
	struct pr_putter put[2];
	struct task_struct *t[2];
	atomic_t go;
	bool direct;
	unsigned int rounds, done, stale;
	u32 first_id, last_id;
	struct completion finished;
};

static int pr_lane_fn(void *arg)
{
	struct pr_lane *l = arg;
	struct ppb_pool *pool;
	unsigned int r, i;

	/*
	 * The next round's pool is created as soon as this one is destroyed,
	 * before the putters are done: a count that lands late in freed
	 * per-CPU memory then shows in the new pool, which has done nothing.
	 */
	pool = pr_create(PR_PUT_PAGES);
	if (pool)
		l->first_id = ppb_pool_id(pool);
	for (r = 1; pool && r <= l->rounds; r++) {
		for (i = 0; i < 2; i++) {
			l->put[i].pool = pool;
			/* allocated in the allocating context: BHs off */
			local_bh_disable();
			pr_fill(&l->put[i]);
			local_bh_enable();
		}
		l->last_id = ppb_pool_id(pool);
		if (l->direct) {
			/* the returns come after destroy, as the release work runs */
			ppb_pool_destroy(pool);
			atomic_set_release(&l->go, r);
		} else {
			/* the returns straddle destroy's grace period */
			atomic_set_release(&l->go, r);
			udelay(r % 16);
			ppb_pool_destroy(pool);
		}
		pool = r < l->rounds ? pr_create(PR_PUT_PAGES) : NULL;
		pr_wait_done(&l->put[0], r);
		pr_wait_done(&l->put[1], r);
		if (pool && !pr_fresh(pool) && l->stale++ < 5)
			pr_info("    # round %u: a new pool's counters are not zero\n", r);
		l->done = r;
		if (!(r % 64))
			cond_resched();
	}
	complete(&l->finished);
	while (!kthread_should_stop())
		schedule_timeout_interruptible(HZ / 10);
	return 0;
}

#define PR_LANES	8

static void pr_destroy_race(bool direct)
{
	struct pr_lane *lanes;
	struct task_struct *t[PR_LANES] = { }, *hog = NULL;
	unsigned int n, i, j, done = 0, stale = 0, lost = 0;
	bool ok;
	u32 first_id = U32_MAX, last_id = 0, id;
	int cpu[3];

	if (!pr_cpus(cpu, 3)) {
		ktap_skip = "needs 3 CPUs";
		return;
	}
	n = min_t(unsigned int, PR_LANES, rounds);
	lanes = kcalloc(n, sizeof(*lanes), GFP_KERNEL);
	if (!lanes) {
		EXPECT(0, "memory for the lanes");
		return;
	}
	/* The putters (idle until their lane says go) and the hog first. */
	hog = pr_start(pr_hog_fn, NULL, cpu[1], "pp_race_hog");
	ok = !IS_ERR(hog);
	for (i = 0; i < n; i++) {
		struct pr_lane *l = &lanes[i];

		l->direct = direct;
		l->rounds = rounds / n + (i < rounds % n);
		l->put[0] = (struct pr_putter) { .bh = false, .pace_us = 30, .go = &l->go };
		l->put[1] = (struct pr_putter) { .bh = true, .direct = direct, .pace_us = 20,
						 .go = &l->go };
		init_completion(&l->finished);
		for (j = 0; j < 2; j++) {
			l->t[j] = pr_start(pr_putter_fn, &l->put[j], cpu[j + 1], "pp_race_put");
			ok &= !IS_ERR(l->t[j]);
		}
	}
	for (i = 0; ok && i < n; i++) {
		t[i] = pr_start(pr_lane_fn, &lanes[i], cpu[0], "pp_race_lane");
		ok = !IS_ERR(t[i]);
	}
	EXPECT(ok, "kthreads");
	for (i = 0; i < n; i++) {
		if (IS_ERR_OR_NULL(t[i]))
			continue;
		/* minutes at soak strength: not one uninterrupted sleep (hung_task) */
		while (!wait_for_completion_timeout(&lanes[i].finished, 10 * HZ))
			;
		done += lanes[i].done;
		stale += lanes[i].stale;
		if (lanes[i].done) {
			first_id = min(first_id, lanes[i].first_id);
			last_id = max(last_id, lanes[i].last_id);
		}
	}
	/*
	 * Every pool frees itself within a few release periods: one still
	 * there lost a page (a return into a cache nobody flushes again).
	 */
	for (id = first_id; id <= last_id; id++)
		if (!pr_wait_gone(id, lost ? 0 : 5000) && lost++ < 5)
			pr_info("    # pool %u never freed itself\n", id);
	pr_info("    # %u rounds in %u lanes (%s): %u fresh pools with stale counters, %u pools never freed\n",
		done, n, direct ? "process + direct from BH" : "process + BH", stale, lost);
	EXPECT(done == rounds, "every round ran: %u", done);
	EXPECT(stale == 0, "no count landed after its pool was freed");
	EXPECT(lost == 0, "the pools freed themselves");
	for (i = 0; i < n; i++) {
		pr_stop(t[i]);
		pr_stop(lanes[i].t[0]);
		pr_stop(lanes[i].t[1]);
	}
	pr_stop(hog);
	kfree(lanes);
}

static void test_put_racing_destroy(void)
{
	pr_destroy_race(false);
}

/*
 * ---- a direct return after destroy, against the release work ----
 * Attacks the rule in ppb_put_page() that a direct return goes into the
 * cache only while the pool is live: here both putters start once destroy
 * has returned, the BH one with allow_direct, while the destroyed pool's
 * release work (every release_retry_ms) flushes the cache.  A page pushed
 * into a cache being flushed is lost (the pool never frees) or released
 * twice (the release count passes the pages that entered: again, the pool
 * never frees).
 */
static void test_direct_return_after_destroy(void)
{
	pr_destroy_race(true);
}

/*
 * ---- one pool, two NAPI contexts ----
 * Attacks the rule in ppb_alloc_pages() and ppb_put_page() that one
 * context at a time allocates from a pool and returns into its cache:
 * mvpp2's per-CPU pools serve RX queue i of every port, and a threaded
 * NAPI kthread or a busy-polling socket runs one port's poll on another
 * CPU than the other port's.  drivers/mvpp2 serialises the receive loops
 * of queue i with a spinlock; two kthreads on two CPUs emulate those
 * loops here (BHs off; allocate, lend through an skb, return directly)
 * with the same lock.  Every page taken is stamped with its taker and
 * checked before it goes back: a page handed to both would carry the
 * other's stamp.  shared_unlocked=1 leaves the lock out (the negative
 * control: the same run then finds pages handed out twice).
 */

static bool shared_unlocked;
module_param(shared_unlocked, bool, 0444);
MODULE_PARM_DESC(shared_unlocked, "race_shared_pool_two_napi without the drivers' lock (negative control)");

#define PR_SHARED_PAGES	16

static DEFINE_SPINLOCK(pr_shared_lock);

struct pr_napi {
	struct ppb_pool *pool;
	spinlock_t *lock;	/* the drivers' lock of the pool's users */
	spinlock_t own;		/* shared_unlocked: a lock nobody else takes */
	unsigned long id;
	unsigned long rounds;
	unsigned long twice;
	atomic_t *stop;
};

static int pr_napi_fn(void *arg)
{
	struct pr_napi *n = arg;
	struct page *pages[PR_SHARED_PAGES];
	struct sk_buff *skb;
	unsigned long *stamp;
	unsigned int i;

	while (!kthread_should_stop() && !atomic_read(n->stop)) {
		local_bh_disable();
		spin_lock(n->lock);
		for (i = 0; i < PR_SHARED_PAGES; i++) {
			pages[i] = ppb_dev_alloc_pages(n->pool);
			if (pages[i])
				*(unsigned long *)page_address(pages[i]) = n->id;
		}
		spin_unlock(n->lock);
		local_bh_enable();
		udelay(2);
		local_bh_disable();
		spin_lock(n->lock);
		for (i = 0; i < PR_SHARED_PAGES; i++) {
			if (!pages[i])
				continue;
			stamp = page_address(pages[i]);
			if (READ_ONCE(*stamp) != n->id)
				n->twice++;
			if (i & 1) {
				ppb_put_page(n->pool, pages[i], -1, true);
				continue;
			}
			skb = ppb_build_skb(n->pool, pages[i], NET_SKB_PAD, 60);
			if (skb)
				kfree_skb(skb);
			else
				ppb_put_page(n->pool, pages[i], -1, true);
		}
		spin_unlock(n->lock);
		local_bh_enable();
		n->rounds++;
		cond_resched();
	}
	return 0;
}

static void test_shared_pool_two_napi(void)
{
	struct pr_napi n[2] = { };
	struct task_struct *t[2];
	atomic_t stop = ATOMIC_INIT(0);
	struct ppb_stats s;
	struct ppb_pool *pool;
	unsigned long end;
	int cpu[2], i;
	u32 id;

	if (!pr_cpus(cpu, 2)) {
		ktap_skip = "needs 2 CPUs";
		return;
	}
	pool = pr_create(256);
	if (!pool)
		return;
	id = ppb_pool_id(pool);
	for (i = 0; i < 2; i++) {
		n[i].pool = pool;
		spin_lock_init(&n[i].own);
		n[i].lock = shared_unlocked ? &n[i].own : &pr_shared_lock;
		n[i].id = i + 1;
		n[i].stop = &stop;
		t[i] = pr_start(pr_napi_fn, &n[i], cpu[i], "pp_race_napi");
	}
	end = jiffies + msecs_to_jiffies(rounds / 2 + 1000);
	while (time_before(jiffies, end) && n[0].rounds + n[1].rounds < 2 * rounds)
		msleep(20);
	atomic_set(&stop, 1);
	for (i = 0; i < 2; i++)
		pr_stop(t[i]);
	pr_info("    # %s: %lu + %lu rounds of %u pages, %lu + %lu pages seen handed out twice\n",
		shared_unlocked ? "no lock" : "the drivers' lock", n[0].rounds, n[1].rounds,
		PR_SHARED_PAGES, n[0].twice, n[1].twice);
	EXPECT(n[0].rounds && n[1].rounds, "both contexts ran");
	EXPECT(!n[0].twice && !n[1].twice, "no page handed to both contexts");
	ppb_get_stats(pool, &s);
	EXPECT(s.inflight_pages == s.lent_pages,
	       "quiet pool: in flight only what the stack has not given back (%llu, %u)",
	       s.inflight_pages, s.lent_pages);
	ppb_pool_destroy(pool);
	EXPECT(pr_wait_gone(id, 10000), "the pool freed itself: every page came back once");
}

/*
 * ---- the ring resized under refills ----
 * Attacks ppb_ring_resize()'s claim (kmod/pool/recycle.c) that the
 * allocating context may consume from the ring without its consumer
 * lock: one kthread, BHs off as in NAPI, allocates two refills' worth,
 * stamps each page, and returns them through the ring, so that the
 * refills come from the ring, while another CPU resizes the ring back and
 * forth with pool-set, for 5 s + rounds ms and at least rounds / 20
 * resizes.  A refill that reads a freed queue takes poison
 * for pages (slub_debug=P: an oops), one that misses the new queue hands
 * a page out twice (the stamp) or loses one (the pool never frees).
 */

#define PR_RESIZE_PAGES	(2 * PPB_REFILL_BATCH)

struct pr_resize {
	struct ppb_pool *pool;
	u64 cookie;		/* this run's stamps: cookie ^ round */
	unsigned long rounds, twice, resizes;
	int err;
	atomic_t stop;
};

static int pr_refiller_fn(void *arg)
{
	struct pr_resize *x = arg;
	struct page *pages[PR_RESIZE_PAGES];
	u64 *stamp;
	unsigned int i;

	while (!kthread_should_stop() && !atomic_read(&x->stop)) {
		x->rounds++;
		local_bh_disable();
		for (i = 0; i < PR_RESIZE_PAGES; i++) {
			pages[i] = ppb_dev_alloc_pages(x->pool);
			if (!pages[i])
				continue;
			stamp = page_address(pages[i]);
			if (*stamp == (x->cookie ^ x->rounds))
				x->twice++;
			*stamp = x->cookie ^ x->rounds;
		}
		for (i = 0; i < PR_RESIZE_PAGES; i++)
			if (pages[i])
				ppb_put_page(x->pool, pages[i], -1, false);
		local_bh_enable();
		cond_resched();
	}
	return 0;
}

static int pr_resizer_fn(void *arg)
{
	static const u32 sizes[] = { 64, 512, 32, 256, 1024, 128 };
	struct pr_resize *x = arg;
	unsigned int k = 0;
	int err;

	while (!kthread_should_stop() && !atomic_read(&x->stop)) {
		err = ppb_pool_set_ring(x->pool, sizes[k++ % ARRAY_SIZE(sizes)]);
		if (err)
			x->err = err;
		else
			x->resizes++;
		cond_resched();
	}
	return 0;
}

static void test_ring_resize_during_refill(void)
{
	struct pr_resize x = { .cookie = get_random_u64() };
	unsigned long want = max(rounds / 20, 10U), t0 = jiffies, run, end;
	struct task_struct *t[2];
	struct ppb_stats s;
	int cpu[2];
	u32 id;

	if (!pr_cpus(cpu, 2)) {
		ktap_skip = "needs 2 CPUs";
		return;
	}
	x.pool = pr_create(256);
	if (!x.pool)
		return;
	id = ppb_pool_id(x.pool);
	t[0] = pr_start(pr_refiller_fn, &x, cpu[0], "pp_race_refill");
	t[1] = pr_start(pr_resizer_fn, &x, cpu[1], "pp_race_resize");
	/* both sides busy for a while: a resize without its grace period is fast */
	run = t0 + msecs_to_jiffies(5000 + rounds);
	end = run + msecs_to_jiffies(20000);
	while (time_before(jiffies, end) &&
	       (time_before(jiffies, run) || READ_ONCE(x.resizes) < want))
		msleep(20);
	atomic_set(&x.stop, 1);
	pr_stop(t[0]);
	pr_stop(t[1]);
	ppb_get_stats(x.pool, &s);
	pr_info("    # %lu resizes against %lu rounds of %u pages (%llu from the ring), %lu pages handed out twice\n",
		x.resizes, x.rounds, PR_RESIZE_PAGES, s.c[PPB_STAT(PAGES_FROM_RING)], x.twice);
	EXPECT(!IS_ERR(t[0]) && !IS_ERR(t[1]), "kthreads");
	EXPECT(x.resizes >= want, "%lu of %lu resizes", x.resizes, want);
	EXPECT(!x.err, "every resize succeeded (%d)", x.err);
	EXPECT(x.rounds > x.resizes && s.c[PPB_STAT(PAGES_FROM_RING)],
	       "the refills ran, from the ring");
	EXPECT(!x.twice, "no page handed out twice");
	EXPECT(!s.inflight_pages, "every page back (%llu in flight)", s.inflight_pages);
	ppb_pool_destroy(x.pool);
	EXPECT(pr_wait_gone(id, 10000), "the pool freed itself: every page came back once");
}

/*
 * ---- the lent FIFO's snapshot while the allocating context replaces it ----
 * Attacks holders-get's argument (kmod/pool/holders.c): the snapshot reads
 * the FIFO of lent pages under RCU while the allocating context lends,
 * reclaims and, after a resize, moves into a new FIFO and frees the old
 * one after a grace period (ppb_lent_resize()).  One kthread is the
 * allocating context: it lends every page it gets to a pretend stack that
 * lets most go at once and keeps one in eight for a while; a second
 * resizes the ring (and the FIFO with it) over and over; a third takes
 * snapshots (ppb_pool_held_pages()) as fast as it can.  A FIFO freed
 * under a snapshot is a use-after-free for KASAN (the debug kernel).
 */

#define PR_HOLD_KEEP	32

struct pr_hold {
	struct pr_resize rz;	/* the pool, the resizer's count, stop */
	unsigned long rounds, snapshots;
	u32 held_max;
	int err;
};

static int pr_lender_fn(void *arg)
{
	struct pr_hold *x = arg;
	struct page *kept[PR_HOLD_KEEP] = {}, *page;
	unsigned int i, j, k = 0;

	while (!kthread_should_stop() && !atomic_read(&x->rz.stop)) {
		x->rounds++;
		local_bh_disable();
		for (i = 0; i < PR_RESIZE_PAGES; i++) {
			page = ppb_dev_alloc_pages(x->rz.pool);
			if (!page)
				continue;
			ppb_page_lend(x->rz.pool, page);
			if (!(i % 8)) {
				j = k++ % PR_HOLD_KEEP;
				swap(page, kept[j]);
			}
			if (page)
				put_page(page);
		}
		local_bh_enable();
		cond_resched();
	}
	for (i = 0; i < PR_HOLD_KEEP; i++)
		if (kept[i])
			put_page(kept[i]);
	return 0;
}

static int pr_snapshot_fn(void *arg)
{
	struct pr_hold *x = arg;
	u64 oldest;
	u32 held;
	int err;

	while (!kthread_should_stop() && !atomic_read(&x->rz.stop)) {
		err = ppb_pool_held_pages(x->rz.pool, &held, &oldest);
		if (err)
			x->err = err;
		x->snapshots++;
		x->held_max = max(x->held_max, held);
		cond_resched();
	}
	return 0;
}

static void test_holders_during_lent_resize(void)
{
	struct pr_hold x = {};
	unsigned long want = max(rounds / 20, 10U), run, end;
	struct task_struct *t[3];
	struct ppb_stats s;
	u32 id, held;
	u64 oldest;
	int cpu[3];

	if (!pr_cpus(cpu, 3)) {
		ktap_skip = "needs 3 CPUs";
		return;
	}
	x.rz.pool = pr_create(256);
	if (!x.rz.pool)
		return;
	id = ppb_pool_id(x.rz.pool);
	t[0] = pr_start(pr_lender_fn, &x, cpu[0], "pp_race_lend");
	t[1] = pr_start(pr_resizer_fn, &x.rz, cpu[1], "pp_race_resize");
	t[2] = pr_start(pr_snapshot_fn, &x, cpu[2], "pp_race_snap");
	run = jiffies + msecs_to_jiffies(5000 + rounds);
	end = run + msecs_to_jiffies(20000);
	while (time_before(jiffies, end) &&
	       (time_before(jiffies, run) || READ_ONCE(x.rz.resizes) < want ||
		READ_ONCE(x.snapshots) < want))
		msleep(20);
	atomic_set(&x.rz.stop, 1);
	pr_stop(t[0]);
	pr_stop(t[1]);
	pr_stop(t[2]);
	ppb_get_stats(x.rz.pool, &s);
	pr_info("    # %lu snapshots against %lu resizes and %lu rounds of %u lent pages (%llu reclaimed, %llu orphaned); up to %u held\n",
		x.snapshots, x.rz.resizes, x.rounds, PR_RESIZE_PAGES,
		s.c[PPB_STAT(PAGES_RECLAIMED)], s.c[PPB_STAT(PAGES_ORPHANED)], x.held_max);
	EXPECT(!IS_ERR(t[0]) && !IS_ERR(t[1]) && !IS_ERR(t[2]), "kthreads");
	EXPECT(x.rz.resizes >= want && x.snapshots >= want, "%lu resizes, %lu snapshots, of %lu",
	       x.rz.resizes, x.snapshots, want);
	EXPECT(!x.err && !x.rz.err, "every snapshot and resize succeeded (%d, %d)", x.err,
	       x.rz.err);
	EXPECT(x.held_max, "the snapshots saw pages the stack held");
	/* The pretend stack has put every page: lent pages wait, none held. */
	ppb_pool_held_pages(x.rz.pool, &held, &oldest);
	ppb_get_stats(x.rz.pool, &s);
	EXPECT(!held, "at rest the snapshot counts no page held (%u of %u lent)", held,
	       s.lent_pages);
	ppb_pool_destroy(x.rz.pool);
	EXPECT(pr_wait_gone(id, 10000), "the pool freed itself: every page came back");
}

/*
 * ---- fragments returned on another CPU while the allocating context reclaims ----
 * Attacks the fragment count's argument (kmod/pool/pool.h, ppb_frag_unlend()
 * in stack.c): whoever takes a page's count to zero holds it whole, and
 * the lent FIFO lets go of its share only after unmarking the page.  One
 * kthread, the allocating context, cuts pages into four fragments, stamps
 * each as in use, lends every other one to a pretend stack and hands the
 * rest to a second kthread on another CPU, which clears each stamp and
 * gives the fragment back (ppb_put_page() through the ring) or drops the
 * stack's reference (put_page()), while the first one's refills reclaim
 * the lent pages.  A page recycled while a fragment of it is still out
 * would be cut again with that fragment's stamp still set.
 */

#define PR_FRAG_SIZE	(PAGE_SIZE / 4)
#define PR_FRAG_Q	4096
/*
 * The returner takes up to 16 pages' fragments at a time and gives the
 * stack's back first: the refills then find pages the stack is done with
 * while the driver still has fragments of them out (the FIFO lets go of
 * its share, the driver's last put recycles the page), however fast that
 * side keeps up.
 */
#define PR_FRAG_BATCH	64

struct pr_frag_item {
	struct page *page;
	u32 off;
	bool lent;
};

struct pr_frag {
	struct ppb_pool *pool;
	u64 cookie;
	spinlock_t lock;	/* the queue from the cutter to the returner */
	struct pr_frag_item q[PR_FRAG_Q];
	struct pr_frag_item batch[PR_FRAG_BATCH];	/* the returner's */
	unsigned int head, tail;
	unsigned long cut, lent, given, twice, rounds;
	atomic_t stop;
};

static u64 *pr_frag_stamp(struct page *page, u32 off)
{
	return page_address(page) + off;
}

static bool pr_frag_push(struct pr_frag *x, struct page *page, u32 off, bool lent)
{
	bool ok;

	spin_lock(&x->lock);
	ok = x->tail - x->head < PR_FRAG_Q;
	if (ok)
		x->q[x->tail++ % PR_FRAG_Q] = (struct pr_frag_item){ page, off, lent };
	spin_unlock(&x->lock);
	return ok;
}

static bool pr_frag_pop(struct pr_frag *x, struct pr_frag_item *it)
{
	bool ok;

	spin_lock_bh(&x->lock);
	ok = x->head != x->tail;
	if (ok)
		*it = x->q[x->head++ % PR_FRAG_Q];
	spin_unlock_bh(&x->lock);
	return ok;
}

static int pr_frag_cutter_fn(void *arg)
{
	struct pr_frag *x = arg;
	struct page *page;
	unsigned int i;
	u32 off;

	while (!kthread_should_stop() && !atomic_read(&x->stop)) {
		x->rounds++;
		local_bh_disable();
		for (i = 0; i < 2 * PPB_REFILL_BATCH; i++) {
			page = ppb_dev_alloc_frag(x->pool, &off, PR_FRAG_SIZE);
			if (!page)
				continue;
			x->cut++;
			if (*pr_frag_stamp(page, off) == x->cookie)
				x->twice++;
			*pr_frag_stamp(page, off) = x->cookie;
			if (i & 1) {
				ppb_page_lend(x->pool, page);
				x->lent++;
			}
			if (pr_frag_push(x, page, off, i & 1)) {
				x->given++;
				continue;
			}
			/* the other side is behind: give it back ourselves */
			*pr_frag_stamp(page, off) = 0;
			if (i & 1)
				put_page(page);
			else
				ppb_put_page(x->pool, page, -1, true);
		}
		local_bh_enable();
		cond_resched();
	}
	return 0;
}

static void pr_frag_return(struct pr_frag *x, const struct pr_frag_item *it)
{
	*pr_frag_stamp(it->page, it->off) = 0;
	if (it->lent)
		put_page(it->page);
	else
		ppb_put_page(x->pool, it->page, -1, false);
}

static int pr_frag_returner_fn(void *arg)
{
	struct pr_frag *x = arg;
	struct pr_frag_item *it = x->batch;
	unsigned int n, i;

	while (!kthread_should_stop() && !atomic_read(&x->stop)) {
		for (n = 0; n < PR_FRAG_BATCH && pr_frag_pop(x, &it[n]); n++)
			;
		if (!n) {
			cond_resched();
			continue;
		}
		for (i = 0; i < n; i++)
			if (it[i].lent)
				pr_frag_return(x, &it[i]);
		for (i = 0; i < n; i++)
			if (!it[i].lent)
				pr_frag_return(x, &it[i]);
	}
	return 0;
}

static void test_frag_put_during_reclaim(void)
{
	struct ppb_params p = {
		.flags = PPB_FLAG_DMA_MAP | PPB_FLAG_PAGE_FRAG,
		.pool_size = 256,
		.nid = NUMA_NO_NODE,
		.dev = &ktap_pdev->dev,
		.dma_dir = DMA_FROM_DEVICE,
		.max_len = PAGE_SIZE,
		.owner = "pp_race",
	};
	struct pr_frag *x = kvzalloc(sizeof(*x), GFP_KERNEL);
	struct task_struct *t[2];
	struct pr_frag_item it;
	struct ppb_stats s;
	int cpu[2];
	u32 id;

	if (!x) {
		EXPECT(0, "memory");
		return;
	}
	if (!pr_cpus(cpu, 2)) {
		ktap_skip = "needs 2 CPUs";
		goto out;
	}
	x->pool = ppb_pool_create(&p);
	if (IS_ERR(x->pool)) {
		EXPECT(0, "pool create failed: %ld", PTR_ERR(x->pool));
		goto out;
	}
	id = ppb_pool_id(x->pool);
	x->cookie = get_random_u64() | 1;
	spin_lock_init(&x->lock);
	t[0] = pr_start(pr_frag_cutter_fn, x, cpu[0], "pp_race_cut");
	t[1] = pr_start(pr_frag_returner_fn, x, cpu[1], "pp_race_ret");
	msleep(5000 + rounds);
	atomic_set(&x->stop, 1);
	pr_stop(t[0]);
	pr_stop(t[1]);
	while (pr_frag_pop(x, &it))
		pr_frag_return(x, &it);
	ppb_get_stats(x->pool, &s);
	pr_info("    # %lu fragments cut in %lu rounds (%lu lent, %lu given to the other CPU), %llu pages reclaimed, %llu unlent, %lu cut while still out\n",
		x->cut, x->rounds, x->lent, x->given, s.c[PPB_STAT(PAGES_RECLAIMED)],
		s.frag_pages_unlent, x->twice);
	EXPECT(!IS_ERR(t[0]) && !IS_ERR(t[1]), "kthreads");
	/* a starved host runs the returner less: the cutter gives back the rest */
	EXPECT(x->given >= x->cut / 20 && s.c[PPB_STAT(PAGES_RECLAIMED)] && s.frag_pages_unlent,
	       "both sides ran, and the refills reclaimed lent pages");
	EXPECT(s.frags_served == x->cut && s.frags_lent == x->lent,
	       "fragments counted: %llu served, %llu lent", s.frags_served, s.frags_lent);
	EXPECT(!x->twice, "no fragment cut while still out");
	ppb_pool_destroy(x->pool);
	EXPECT(pr_wait_gone(id, 10000), "the pool freed itself: every page came back once");
out:
	kvfree(x);
}

/*
 * ---- the lent_pages gauge while a one-page pool lends and reclaims ----
 * Attacks ppb_lent_read()'s argument (kmod/pool/stack.c): the allocating
 * context moves the lent FIFO's head and tail with plain stores while a
 * reader on another CPU takes the difference.  A pool of one ring entry
 * has a FIFO of PPB_LENT_PER_RING; its allocating context lends every
 * page and the pretend stack lets it go at once, so the head follows the
 * tail closely.  A reader that took the tail before a head moved past it
 * would report about 4.29e9 pages lent.
 */
struct pr_gauge {
	struct ppb_pool *pool;
	atomic_t stop;
	unsigned long lends, reads, bad;
	u32 max, worst;
};

static int pr_gauge_lender_fn(void *arg)
{
	struct pr_gauge *x = arg;
	struct page *page;
	int i;

	while (!kthread_should_stop() && !atomic_read(&x->stop)) {
		local_bh_disable();
		for (i = 0; i < 64; i++) {
			page = ppb_dev_alloc_pages(x->pool);
			if (!page)
				continue;
			ppb_page_lend(x->pool, page);
			put_page(page);
			x->lends++;
		}
		local_bh_enable();
		cond_resched();
	}
	return 0;
}

static int pr_gauge_reader_fn(void *arg)
{
	struct pr_gauge *x = arg;
	struct ppb_stats s;

	while (!kthread_should_stop() && !atomic_read(&x->stop)) {
		ppb_get_stats(x->pool, &s);
		if (s.lent_pages > x->max) {
			x->bad++;
			x->worst = max(x->worst, s.lent_pages);
		}
		x->reads++;
		if (!(x->reads % 256))
			cond_resched();
	}
	return 0;
}

static void test_lent_gauge_one_page_pool(void)
{
	struct pr_gauge x = { .max = PPB_LENT_PER_RING };
	unsigned long want = max(reads / 10, 1000U), run, end;
	struct task_struct *t[2];
	int cpu[2];
	u32 id;

	if (!pr_cpus(cpu, 2)) {
		ktap_skip = "needs 2 CPUs";
		return;
	}
	x.pool = pr_create(1);
	if (!x.pool)
		return;
	id = ppb_pool_id(x.pool);
	t[0] = pr_start(pr_gauge_lender_fn, &x, cpu[0], "pp_race_lend");
	t[1] = pr_start(pr_gauge_reader_fn, &x, cpu[1], "pp_race_gauge");
	run = jiffies + msecs_to_jiffies(2000 + rounds / 2);
	end = run + msecs_to_jiffies(20000);
	while (time_before(jiffies, end) &&
	       (time_before(jiffies, run) || READ_ONCE(x.reads) < want))
		msleep(20);
	atomic_set(&x.stop, 1);
	pr_stop(t[0]);
	pr_stop(t[1]);
	pr_info("    # %lu reads of lent_pages against %lu lends; %lu above %u (worst %u)\n",
		x.reads, x.lends, x.bad, x.max, x.worst);
	EXPECT(!IS_ERR(t[0]) && !IS_ERR(t[1]), "kthreads");
	EXPECT(x.reads >= want && x.lends, "%lu reads of %lu, %lu lends", x.reads, want, x.lends);
	EXPECT(!x.bad, "no read above the FIFO's %u entries: %lu were, up to %u", x.max, x.bad,
	       x.worst);
	ppb_pool_destroy(x.pool);
	EXPECT(pr_wait_gone(id, 10000), "the pool freed itself: every page came back");
}

/*
 * ---- statistics readers while pools are freed ----
 * Attacks the registry's argument (kmod/pool/main.c): readers of
 * statistics find and read a pool under RCU, without the registry lock,
 * and a pool is freed a grace period after it left the registry.  One
 * kthread creates, uses and destroys pools (each freed at once, nothing
 * in flight); another reads the statistics of the newest by id as fast
 * as it can.  A pool freed under a reader is a use-after-free for KASAN
 * (the debug kernel), and its counters read as slab poison with
 * slub_debug (race.sh's boot).  The window between the reader's lookup and
 * its read is a few microseconds; where the pool is built with race windows
 * (make modules-debug) it is widened to PR_FREE_WINDOW_US, and the test
 * runs until PR_FREE_SPANS reads have each seen a destroy finish between
 * their lookup and their read: a pool freed at once is caught every run.
 */
#define PR_FREE_WINDOW_US 50
#define PR_FREE_SPANS 20

struct pr_free {
	atomic_t id, stop;
	unsigned long pools, found, gone, bad, spanned;
	int err;
};

static int pr_free_cycler_fn(void *arg)
{
	struct pr_free *x = arg;
	struct page *page;
	struct ppb_pool *pool;

	while (!kthread_should_stop() && !atomic_read(&x->stop)) {
		pool = pr_create(16);
		if (!pool) {
			x->err = -ENOMEM;
			break;
		}
		atomic_set(&x->id, ppb_pool_id(pool));
		local_bh_disable();
		page = ppb_dev_alloc_pages(pool);
		if (page)
			ppb_recycle_direct(pool, page);
		local_bh_enable();
		ppb_pool_destroy(pool);
		WRITE_ONCE(x->pools, x->pools + 1);
		cond_resched();
	}
	return 0;
}

static int pr_free_reader_fn(void *arg)
{
	struct pr_free *x = arg;
	struct ppb_stats s;
	unsigned long destroyed;

	while (!kthread_should_stop() && !atomic_read(&x->stop)) {
		destroyed = READ_ONCE(x->pools);
		if (ppb_pool_stats_by_id(atomic_read(&x->id), &s) == 0) {
			x->found++;
			if (READ_ONCE(x->pools) != destroyed)
				WRITE_ONCE(x->spanned, x->spanned + 1);
			/*
			 * A pool has taken a refill's worth at most; freed
			 * under the read, its counters are slab poison.
			 */
			if (s.c[PPB_STAT(PAGES_ALLOCATED)] > PPB_REFILL_BATCH ||
			    s.inflight_pages > s.c[PPB_STAT(PAGES_ALLOCATED)])
				x->bad++;
		} else {
			x->gone++;
		}
		if (!((x->found + x->gone) % 64))
			cond_resched();
	}
	return 0;
}

static void test_stats_reader_vs_free(void)
{
	struct pr_free x = {};
	unsigned long want = max(rounds / 20, 10U), run, end;
	bool widened = IS_ENABLED(CONFIG_PPKIT_RACE_WINDOWS);
	struct task_struct *t[2];
	int cpu[2];

	if (!pr_cpus(cpu, 2)) {
		ktap_skip = "needs 2 CPUs";
		return;
	}
#ifdef CONFIG_PPKIT_RACE_WINDOWS
	WRITE_ONCE(ppb_race_window_us, PR_FREE_WINDOW_US);
#endif
	t[0] = pr_start(pr_free_cycler_fn, &x, cpu[0], "pp_race_free");
	t[1] = pr_start(pr_free_reader_fn, &x, cpu[1], "pp_race_read");
	run = jiffies + msecs_to_jiffies(2000 + rounds / 2);
	end = run + msecs_to_jiffies(20000);
	while (time_before(jiffies, end) &&
	       (time_before(jiffies, run) || !READ_ONCE(x.found) || !READ_ONCE(x.gone) ||
		(widened ? READ_ONCE(x.spanned) < PR_FREE_SPANS : READ_ONCE(x.pools) < want)))
		msleep(20);
	atomic_set(&x.stop, 1);
	pr_stop(t[0]);
	pr_stop(t[1]);
#ifdef CONFIG_PPKIT_RACE_WINDOWS
	WRITE_ONCE(ppb_race_window_us, 0);
#endif
	pr_info("    # %lu pools created and freed; %lu reads found one (%lu of them a freed one, %lu across a destroy), %lu found it gone; window %s\n",
		x.pools, x.found, x.bad, x.spanned, x.gone,
		widened ? "widened to " __stringify(PR_FREE_WINDOW_US) " us" :
		"not widened (no CONFIG_PPKIT_RACE_WINDOWS)");
	EXPECT(!IS_ERR(t[0]) && !IS_ERR(t[1]), "kthreads");
	EXPECT(!x.err && x.pools, "pools created and freed (%d)", x.err);
	if (widened)
		EXPECT(x.spanned >= PR_FREE_SPANS, "%lu reads across a destroy of %u", x.spanned,
		       PR_FREE_SPANS);
	else
		EXPECT(x.pools >= want, "%lu pools of %lu", x.pools, want);
	EXPECT(x.found && x.gone, "reads met live pools and freed ones");
	EXPECT(!x.bad, "no read saw a freed pool: %lu did", x.bad);
}

static const struct ktap_case pr_cases[] = {
	{ "race_stats_read_during_refill", test_stats_read_during_refill },
	{ "race_put_during_destroy", test_put_racing_destroy },
	{ "race_direct_return_after_destroy", test_direct_return_after_destroy },
	{ "race_shared_pool_two_napi", test_shared_pool_two_napi },
	{ "race_ring_resize_during_refill", test_ring_resize_during_refill },
	{ "race_frag_put_during_reclaim", test_frag_put_during_reclaim },
	{ "race_holders_during_lent_resize", test_holders_during_lent_resize },
	{ "race_lent_gauge_one_page_pool", test_lent_gauge_one_page_pool },
	{ "race_stats_reader_vs_free", test_stats_reader_vs_free },
};

static int __init pr_init(void)
{
	return ktap_run("pp_race", pr_cases, ARRAY_SIZE(pr_cases));
}

static void __exit pr_exit(void)
{
}

module_init(pr_init);
module_exit(pr_exit);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("ppkit page_pool backport race tests (KTAP)");
