// SPDX-License-Identifier: GPL-2.0
/*
 * pp_backport: who holds a pool's pages.
 *
 * "Pool shutdown stalled, 5 pages in flight": the pool knows which pages
 * it lent to the stack and since when, but not where they went.  Without
 * hooks in the core, a module can still look where a page most often
 * stays: the receive and out-of-order queues of TCP, UDP and packet
 * sockets nobody reads.  holders-get takes a snapshot of the pool's lent
 * pages, walks those sockets in every network namespace and matches the
 * pages of their queued skbs against it.
 *
 * The snapshot races the pool's allocating context, which lends and
 * takes back pages without a lock: the reader sees each FIFO entry either
 * before or after a change, never freed memory (a resize frees the old
 * FIFO after a grace period, ppb_lent_resize()); a page pointer is only
 * compared, never followed, except for its refcount, which any struct page
 * has.  pp_race's race_holders_during_lent_resize races the two, and
 * tests/lab/holders-race.py through the family.  The walk holds a
 * reference on each socket it looks into and bounds its work per call.
 */

#include <linux/module.h>
#include <linux/skbuff.h>
#include <linux/sort.h>
#include <linux/bsearch.h>
#include <linux/rwsem.h>
#include <net/net_namespace.h>
#include <net/sock.h>
#include <net/tcp.h>
#include <net/udp.h>
#include <net/inet_hashtables.h>
#include <uapi/linux/ppkit.h>
#include <ppkit/compat.h>
#include "pool.h"
#include "holders.h"

/* Per call: sockets looked into, skbs a queue, distinct tables walked. */
#define PPB_HOLD_MAX_SOCKS	65536U
#define PPB_HOLD_MAX_SKBS	8192U
#define PPB_HOLD_MAX_TABLES	16
/* Sockets taken under one hash bucket's lock. */
#define PPB_HOLD_BATCH		16

struct ppb_hold_ent {
	struct page *page;
	unsigned long since;
	u32 seen_by;		/* serial of the last socket found holding it */
	bool hit;
};

struct ppb_hold_walk {
	struct ppb_holders *h;
	struct ppb_hold_ent *ents;
	u32 n;
	u32 serial;
	unsigned long now;
	const void *tables[PPB_HOLD_MAX_TABLES];
	unsigned int ntables;
};

static int ppb_hold_cmp(const void *a, const void *b)
{
	const struct ppb_hold_ent *x = a, *y = b;

	if (x->page == y->page)
		return 0;
	return x->page < y->page ? -1 : 1;
}

static int ppb_hold_key(const void *key, const void *elt)
{
	const struct ppb_hold_ent *y = elt;

	if (key == y->page)
		return 0;
	return key < (const void *)y->page ? -1 : 1;
}

/* Lent at @since, seen at @now: a page lent after the scan began is 0 ms old. */
static unsigned int ppb_age_ms(unsigned long now, unsigned long since)
{
	return time_after(now, since) ? jiffies_to_msecs(now - since) : 0;
}

static unsigned int ppb_hold_age_ms(const struct ppb_hold_walk *w, unsigned long since)
{
	return ppb_age_ms(w->now, since);
}

static unsigned int ppb_hold_bucket(unsigned int ms)
{
	unsigned int b = 0, lim = 10;

	while (b < PPB_HOLD_AGE_NR - 1 && ms >= lim) {
		b++;
		lim *= 10;
	}
	return b;
}

static bool ppb_lent_marked(struct ppb_pool *pool, struct page *page)
{
	unsigned long mark = READ_ONCE(page->index);

	return mark == PPB_PAGE_LENT ||
	       (mark == PPB_PAGE_UNMAPPED && READ_ONCE(pool->destroyed));
}

/*
 * Calls @fn for each of the pool's lent pages the stack still holds, up to
 * @cap of them; returns the FIFO's length as read.  The allocating context
 * may be lending and reclaiming meanwhile: an entry may be newer than the
 * range read (the FIFO wraps while we read), so only a page still marked
 * lent counts; a destroyed pool's lent pages are marked unmapped instead
 * (ppb_pool_destroy() unmaps them), and its FIFO no longer changes but
 * under the registry lock.  Under RCU: a resize frees the old FIFO after a
 * grace period.
 */
static __always_inline u32
ppb_lent_scan(struct ppb_pool *pool, u32 cap,
	      void (*fn)(void *arg, struct page *page, unsigned long since), void *arg)
{
	struct ppb_lent_fifo *f;
	u32 head, i, n = 0, lent;

	rcu_read_lock();
	f = rcu_dereference(pool->lent);
	lent = ppb_lent_read(pool, f, &head);
	for (i = head; i - head < lent && n < cap; i++) {
		struct ppb_lent *e = &f->e[i & f->mask];
		struct page *page = READ_ONCE(e->page);

		if (!page || !ppb_lent_marked(pool, page) || ppb_stack_done(pool, page))
			continue;
		fn(arg, page, READ_ONCE(e->since));
		n++;
	}
	rcu_read_unlock();
	return lent;
}

static void ppb_hold_add(void *arg, struct page *page, unsigned long since)
{
	struct ppb_hold_walk *w = arg;

	w->ents[w->n].page = page;
	w->ents[w->n].since = since;
	w->n++;
}

/*
 * The pool's lent pages the stack still holds, sorted by page.  The
 * registry lock keeps the pool; its allocating context may be running.
 */
static int ppb_hold_snapshot(struct ppb_pool *pool, struct ppb_hold_walk *w)
{
	struct ppb_holders *h = w->h;
	u32 cap, i, n;

	cap = PPB_LENT_PER_RING * roundup_pow_of_two(PPKIT_RING_SIZE_MAX);
	rcu_read_lock();
	cap = min(cap, rcu_dereference(pool->lent)->mask + 1);
	rcu_read_unlock();
	w->ents = kvcalloc(cap, sizeof(*w->ents), GFP_KERNEL);
	if (!w->ents)
		return -ENOMEM;
	w->n = 0;
	h->lent = ppb_lent_scan(pool, cap, ppb_hold_add, w);
	n = w->n;
	h->held = n;
	for (i = 0; i < n; i++) {
		unsigned int ms = ppb_hold_age_ms(w, w->ents[i].since);

		h->age[ppb_hold_bucket(ms)]++;
		h->oldest_ms = max_t(u64, h->oldest_ms, ms);
	}
	sort(w->ents, n, sizeof(*w->ents), ppb_hold_cmp, NULL);
	return 0;
}

static void ppb_hold_page(struct ppb_hold_walk *w, struct ppb_holder *r, struct page *page)
{
	struct ppb_hold_ent *e;
	unsigned int ms;

	e = bsearch(page, w->ents, w->n, sizeof(*w->ents), ppb_hold_key);
	if (!e || e->seen_by == w->serial)
		return;
	e->seen_by = w->serial;
	e->hit = true;
	r->pages++;
	ms = ppb_hold_age_ms(w, e->since);
	r->oldest_ms = max_t(u64, r->oldest_ms, ms);
}

static void ppb_hold_skb_one(struct ppb_hold_walk *w, struct ppb_holder *r,
			     struct sk_buff *skb)
{
	struct skb_shared_info *shinfo = skb_shinfo(skb);
	int i;

	if (skb->head_frag)
		ppb_hold_page(w, r, virt_to_head_page(skb->head));
	for (i = 0; i < shinfo->nr_frags; i++)
		ppb_hold_page(w, r, compound_head(skb_frag_page(&shinfo->frags[i])));
}

static void ppb_hold_skb(struct ppb_hold_walk *w, struct ppb_holder *r, struct sk_buff *skb)
{
	struct sk_buff *frag;

	ppb_hold_skb_one(w, r, skb);
	skb_walk_frags(skb, frag)
		ppb_hold_skb_one(w, r, frag);
}

static void ppb_hold_queue(struct ppb_hold_walk *w, struct ppb_holder *r,
			   struct sk_buff_head *q)
{
	unsigned int n = 0;
	struct sk_buff *skb;

	spin_lock_bh(&q->lock);
	skb_queue_walk(q, skb) {
		if (++n > PPB_HOLD_MAX_SKBS) {
			w->h->truncated = true;
			break;
		}
		ppb_hold_skb(w, r, skb);
	}
	spin_unlock_bh(&q->lock);
}

/* Names @sk in @r; the caller holds a reference on it. */
static void ppb_hold_describe(struct ppb_holder *r, struct sock *sk)
{
	r->netns = sock_net(sk)->ns.inum;
	r->family = sk->sk_family;
	r->protocol = sk->sk_protocol;
	r->state = sk->sk_state;
	r->inode = sock_i_ino(sk);
	r->uid = from_kuid_munged(&init_user_ns, sock_i_uid(sk));
	if (sk->sk_family == AF_PACKET) {
		r->protocol = ntohs((__force __be16)sk->sk_protocol);
		return;
	}
	r->local_port = ntohs(inet_sk(sk)->inet_sport);
	r->remote_port = ntohs(inet_sk(sk)->inet_dport);
#if IS_ENABLED(CONFIG_IPV6)
	if (sk->sk_family == AF_INET6) {
		memcpy(r->local, &sk->sk_v6_rcv_saddr, 16);
		memcpy(r->remote, &sk->sk_v6_daddr, 16);
		r->addr_len = 16;
		return;
	}
#endif
	memcpy(r->local, &inet_sk(sk)->inet_rcv_saddr, 4);
	memcpy(r->remote, &inet_sk(sk)->inet_daddr, 4);
	r->addr_len = 4;
}

/* Keeps @r if the socket holds pages: the biggest holders first when full. */
static void ppb_hold_keep(struct ppb_hold_walk *w, struct ppb_holder *r, struct sock *sk)
{
	struct ppb_holders *h = w->h;
	struct ppb_holder *slot;
	unsigned int i, min_i = 0;

	if (!r->pages)
		return;
	if (h->nr < PPB_HOLDERS_MAX) {
		slot = &h->holders[h->nr++];
	} else {
		h->truncated = true;
		for (i = 1; i < h->nr; i++)
			if (h->holders[i].pages < h->holders[min_i].pages)
				min_i = i;
		slot = &h->holders[min_i];
		if (slot->pages >= r->pages)
			return;
	}
	ppb_hold_describe(r, sk);
	*slot = *r;
}

static bool ppb_hold_budget(struct ppb_hold_walk *w)
{
	if (w->h->sockets >= PPB_HOLD_MAX_SOCKS) {
		w->h->truncated = true;
		return false;
	}
	w->h->sockets++;
	w->serial++;
	return true;
}

/* A full TCP socket, referenced: its queues are stable under its lock. */
static void ppb_hold_tcp(struct ppb_hold_walk *w, struct sock *sk)
{
	struct ppb_holder r = {};
	struct sk_buff *skb;
	unsigned int n = 0;

	if (!ppb_hold_budget(w))
		return;
	lock_sock(sk);
	skb_queue_walk(&sk->sk_receive_queue, skb) {
		if (++n > PPB_HOLD_MAX_SKBS)
			break;
		ppb_hold_skb(w, &r, skb);
	}
	skb_rbtree_walk(skb, &tcp_sk(sk)->out_of_order_queue) {
		if (++n > PPB_HOLD_MAX_SKBS)
			break;
		ppb_hold_skb(w, &r, skb);
	}
	if (n > PPB_HOLD_MAX_SKBS)
		w->h->truncated = true;
	ppb_hold_keep(w, &r, sk);
	release_sock(sk);
}

static void ppb_hold_udp(struct ppb_hold_walk *w, struct sock *sk)
{
	struct ppb_holder r = {};

	if (!ppb_hold_budget(w))
		return;
	ppb_hold_queue(w, &r, &sk->sk_receive_queue);
	ppb_hold_queue(w, &r, &udp_sk(sk)->reader_queue);
	ppb_hold_keep(w, &r, sk);
}

static bool ppb_hold_table_seen(struct ppb_hold_walk *w, const void *table)
{
	unsigned int i;

	for (i = 0; i < w->ntables; i++)
		if (w->tables[i] == table)
			return true;
	if (w->ntables == PPB_HOLD_MAX_TABLES) {
		w->h->truncated = true;
		return true;
	}
	w->tables[w->ntables++] = table;
	return false;
}

/*
 * Every established (or closing) socket of @hinfo, whatever its namespace:
 * namespaces share the table unless tcp_child_ehash_entries gave them
 * their own.  Referenced under the bucket's lock, looked into without it.
 */
static void ppb_hold_tcp_table(struct ppb_hold_walk *w, struct inet_hashinfo *hinfo)
{
	struct sock *batch[PPB_HOLD_BATCH];
	unsigned int i, j, n;

	for (i = 0; i <= hinfo->ehash_mask; i++) {
		struct inet_ehash_bucket *head = &hinfo->ehash[i];
		struct hlist_nulls_node *node;
		struct sock *sk;

		if (hlist_nulls_empty(&head->chain))
			continue;
		n = 0;
		spin_lock_bh(inet_ehash_lockp(hinfo, i));
		sk_nulls_for_each(sk, node, &head->chain) {
			if (sk->sk_state == TCP_TIME_WAIT || sk->sk_state == TCP_NEW_SYN_RECV)
				continue;
			if (n == PPB_HOLD_BATCH) {
				w->h->truncated = true;
				break;
			}
			if (refcount_inc_not_zero(&sk->sk_refcnt))
				batch[n++] = sk;
		}
		spin_unlock_bh(inet_ehash_lockp(hinfo, i));
		for (j = 0; j < n; j++) {
			ppb_hold_tcp(w, batch[j]);
			sock_put(batch[j]);
		}
		cond_resched();
	}
}

static void ppb_hold_udp_table(struct ppb_hold_walk *w, struct udp_table *table)
{
	struct sock *batch[PPB_HOLD_BATCH];
	unsigned int i, j, n;

	for (i = 0; i <= table->mask; i++) {
		struct udp_hslot *hslot = &table->hash[i];
		struct sock *sk;

		if (hlist_empty(&hslot->head))
			continue;
		n = 0;
		spin_lock_bh(&hslot->lock);
		sk_for_each(sk, &hslot->head) {
			if (n == PPB_HOLD_BATCH) {
				w->h->truncated = true;
				break;
			}
			sock_hold(sk);
			batch[n++] = sk;
		}
		spin_unlock_bh(&hslot->lock);
		for (j = 0; j < n; j++) {
			ppb_hold_udp(w, batch[j]);
			sock_put(batch[j]);
		}
		cond_resched();
	}
}

/* Packet sockets stay on the list, and in memory, while its lock is held. */
static void ppb_hold_packet(struct ppb_hold_walk *w, struct net *net)
{
	struct sock *sk;

	mutex_lock(&net->packet.sklist_lock);
	sk_for_each(sk, &net->packet.sklist) {
		struct ppb_holder r = {};

		if (!ppb_hold_budget(w))
			break;
		ppb_hold_queue(w, &r, &sk->sk_receive_queue);
		ppb_hold_keep(w, &r, sk);
	}
	mutex_unlock(&net->packet.sklist_lock);
}

static void ppb_hold_walk_nets(struct ppb_hold_walk *w)
{
	struct net *net;

	down_read(&net_rwsem);
	for_each_net(net) {
		struct inet_hashinfo *hinfo = net->ipv4.tcp_death_row.hashinfo;
		struct udp_table *utable = ppb_udp_table(net);

		if (hinfo && !ppb_hold_table_seen(w, hinfo))
			ppb_hold_tcp_table(w, hinfo);
		if (utable && !ppb_hold_table_seen(w, utable))
			ppb_hold_udp_table(w, utable);
		ppb_hold_packet(w, net);
	}
	up_read(&net_rwsem);
}

struct ppb_lent_age {
	unsigned long now;
	u32 held;
	u64 oldest_ms;
};

static void ppb_lent_age_add(void *arg, struct page *page, unsigned long since)
{
	struct ppb_lent_age *a = arg;

	a->held++;
	a->oldest_ms = max_t(u64, a->oldest_ms, ppb_age_ms(a->now, since));
}

/*
 * How many of the pool's lent pages the stack still holds, and for how
 * long it has held the oldest: one pass over the lent FIFO, no allocation.
 * Any context that keeps the pool; the allocating context may be running.
 */
void ppb_lent_ages(struct ppb_pool *pool, u32 *held, u64 *oldest_ms)
{
	struct ppb_lent_age a = { .now = jiffies };

	ppb_lent_scan(pool, U32_MAX, ppb_lent_age_add, &a);
	*held = a.held;
	*oldest_ms = a.oldest_ms;
}

int ppb_pool_held_pages(struct ppb_pool *pool, u32 *held, u64 *oldest_ms)
{
	ppb_lent_ages(pool, held, oldest_ms);
	return 0;
}
EXPORT_SYMBOL_GPL(ppb_pool_held_pages);

static int ppb_hold_cmp_pages(const void *a, const void *b)
{
	const struct ppb_holder *x = a, *y = b;

	return x->pages == y->pages ? 0 : x->pages > y->pages ? -1 : 1;
}

/*
 * Fills @h for the pool @id.  Process context; takes and drops the
 * registry lock, and may sleep for as long as the walk takes.
 */
int ppb_holders_get(u32 id, struct ppb_holders *h, struct netlink_ext_ack *extack)
{
	struct ppb_hold_walk w = { .h = h, .now = jiffies };
	struct ppb_stats st;
	struct ppb_pool *pool;
	u32 i;
	int err;

	ppb_registry_lock();
	pool = ppb_registry_find(id);
	if (!pool) {
		ppb_registry_unlock();
		NL_SET_ERR_MSG(extack, "no such pool");
		return -ENOENT;
	}
	ppb_get_stats(pool, &st);
	err = ppb_hold_snapshot(pool, &w);
	ppb_registry_unlock();
	if (err)
		return err;

	h->orphaned = st.c[PPB_STAT(PAGES_ORPHANED)];
	h->driver = st.inflight_pages > h->lent ? st.inflight_pages - h->lent : 0;
	if (w.n)
		ppb_hold_walk_nets(&w);
	for (i = 0; i < w.n; i++)
		h->unattributed += !w.ents[i].hit;
	kvfree(w.ents);
	sort(h->holders, h->nr, sizeof(*h->holders), ppb_hold_cmp_pages, NULL);
	return 0;
}
