/* SPDX-License-Identifier: GPL-2.0 */
/*
 * ppsim: a software NIC whose RX path is the one real hardware takes.
 *
 * Each RX queue owns a descriptor ring.  The driver fills descriptors with
 * buffers from the queue's pool and hands them to the "device"; the device
 * (the generator, or the peer port's transmit) writes frames through the
 * buffers' DMA addresses, marks the descriptors done and raises an interrupt
 * on the queue's IRQ CPU; NAPI syncs for the CPU, builds skbs (or runs XDP)
 * and refills.  Ring states are contiguous: [ntc, dev_next) done,
 * [dev_next, ntu) owned by the device, [ntu, ntc) empty.
 *
 * The receiving device picks the RX queue of a frame by RSS (a hash of its
 * addresses and ports).  Each RX queue also has an XDP TX ring, cleaned by
 * the queue's NAPI: buffers sent by XDP_TX and frames redirected to the
 * device (ndo_xdp_xmit) stay there until the device completes them, a
 * configurable delay after they went on the wire.
 */
#ifndef _PPSIM_H
#define _PPSIM_H

#include <linux/netdevice.h>
#include <linux/u64_stats_sync.h>
#include <linux/smp.h>
#include <linux/hrtimer.h>
#include <linux/wait.h>
#include <net/xdp.h>
#include <ppkit/compat.h>
#include <uapi/linux/ppsim.h>

#define PPSIM_DRV_NAME		"ppsim"
#define PPSIM_MAX_QUEUES	16
#define PPSIM_RING_MIN		16
#define PPSIM_RING_MAX		4096
#define PPSIM_RING_DEFAULT	256
#define PPSIM_MAX_DEVS		32
#define PPSIM_MAX_MTU		9000
#define PPSIM_BURST		64
/* beyond any NIC; the generator's pacing arithmetic is exact up to here */
#define PPSIM_GEN_RATE_MAX	100000000ULL
#define PPSIM_GEN_FLOWS_DEFAULT	64
#define PPSIM_GEN_FLOWS_MAX	4096
#define PPSIM_TX_DELAY_MAX_US	10000000	/* 10 s */

enum ppsim_desc_status {
	PPSIM_DESC_EMPTY,	/* no buffer: the driver refills it */
	PPSIM_DESC_DEV,		/* buffer posted, the device may write */
	PPSIM_DESC_DONE,	/* frame written, NAPI processes it */
};

struct ppsim_desc {
	dma_addr_t addr;	/* where the device writes (headroom included) */
	u32 len;		/* written by the device */
	u32 status;		/* enum ppsim_desc_status, release/acquire */
	u32 hash;		/* RSS hash written by the device; 0: none */
	u32 hash_type;		/* enum pkt_hash_types */
};

/* An XDP TX ring entry: what the device holds until it completes the send. */
enum ppsim_txc_kind {
	PPSIM_TXC_PAGE,		/* XDP_TX: a buffer of this queue's pool */
	PPSIM_TXC_FRAME,	/* ndo_xdp_xmit: another queue's frame, mapped by us */
};

struct ppsim_txc {
	void *ptr;		/* struct page or struct xdp_frame */
	dma_addr_t dma;
	u32 len;		/* page: bytes to sync back; frame: bytes mapped */
	u32 kind;		/* enum ppsim_txc_kind */
	u64 due;		/* ktime_get_ns() at which the device completes it */
};

struct ppsim_buf {
	struct page *page;
	dma_addr_t dma;		/* of the buffer's start */
	u32 off;		/* where the buffer starts in its page */
};

struct ppsim_cfg {
	u32 ring_size;
	u32 pool;		/* enum ppsim_pool */
	u32 rx_mode;		/* enum ppsim_rx_mode */
	u32 sync;		/* enum ppsim_sync */
	u32 prefetch;		/* enum ppsim_prefetch */
	u32 cache;		/* enum ppsim_cache */
	u32 numa_rule;		/* u32: no padding, the struct is compared whole */
	u32 frag;		/* buffers are fragments of pool pages (pool ppkit) */
	int irq_cpu;		/* applied live: moves only the interrupt */
	u32 tx_delay_us;	/* applied live: XDP TX completion delay */
};

struct ppsim_rq_stats {
	u64 packets;
	u64 bytes;
	u64 dropped;		/* skb could not be built */
	u64 alloc_fail;
	u64 xdp_pass;
	u64 xdp_drop;
	u64 xdp_tx;
	u64 xdp_tx_err;
	u64 xdp_aborted;
	u64 xdp_redirect;
	u64 xdp_redirect_err;
	/*
	 * What the RX path costs per packet, counted where it happens, for
	 * the regression scripts' mechanism checks (Documentation/ppsim.rst).
	 */
	u64 copy_bytes;		/* copied into a new skb (rx copy) */
	u64 page_allocs;	/* pages from the page allocator (pool none) */
	u64 dma_maps;		/* DMA mappings made (pool none) */
	u64 far_pages;		/* buffers posted on a page of another node */
	struct u64_stats_sync syncp;
};

/* XDP TX ring counters, written under txc_lock (any CPU may transmit). */
struct ppsim_xq_stats {
	u64 xmit;		/* frames redirected to this device, sent */
	u64 xmit_err;		/* ... refused: ring full, device down */
	u64 completed;		/* XDP TX ring entries completed */
	struct u64_stats_sync syncp;
};

struct ppsim_priv;

struct ppsim_rxq {
	struct ppsim_priv *priv;
	unsigned int idx;
	struct napi_struct napi;
	call_single_data_t csd;	/* the "interrupt" on irq_cpu */
	unsigned long irq_sent;	/* bit 0: csd queued, owned by its sender */
	int irq_cpu;

	/* device side: writers (generator, the peer's xmit) hold dev_lock */
	spinlock_t dev_lock;
	bool active;
	u32 dev_next;
	u64 dev_written;
	u64 dev_missed;		/* frames that found no posted descriptor */
	u64 dev_too_long;	/* frames longer than the posted buffers */
	struct u64_stats_sync dev_syncp;

	/* driver side, NAPI only */
	struct ppsim_desc *desc;
	struct ppsim_buf *buf;
	u32 size;
	u32 ntc;
	u32 ntu;
	struct ppb_pool *pp;
	struct page_pool *npp;
	struct xdp_rxq_info xdp_rxq;
	bool xdp_rxq_reg;
	struct ppsim_rxq *xdp_tx_kick;	/* peer queue to interrupt after this poll */
	bool xdp_flush;			/* XDP_REDIRECT in this poll: xdp_do_flush() */

	/* XDP TX ring: producers (XDP_TX, ndo_xdp_xmit) and NAPI hold txc_lock */
	spinlock_t txc_lock;
	bool txc_open;
	struct ppsim_txc *txc;		/* rxq->size entries */
	u32 txc_head;			/* oldest entry */
	u32 txc_count;
	struct hrtimer txc_timer;	/* the completion interrupt of a delayed entry */
	struct ppsim_xq_stats xs;

	/* buffer geometry of the current rings */
	unsigned int headroom;
	unsigned int frame_max;		/* largest frame a buffer takes */
	unsigned int order;
	unsigned int buf_size;		/* a buffer: its page, or a fragment of it */
	unsigned int max_len;		/* device sync length */
	enum dma_data_direction dir;
	int nid;

	struct ppsim_rq_stats st;
};

struct ppsim_tq_stats {
	u64 packets;
	u64 bytes;
	u64 dropped;
	struct u64_stats_sync syncp;
};

struct ppsim_gen {
	struct task_struct *task;
	bool running;
	wait_queue_head_t wq;	/* line rate: sleeps here while no descriptor is posted */
	u64 rate;		/* frames/s, 0: line rate */
	u32 flows;		/* UDP source ports cycled, hashed to queues by RSS */
	u32 size;
	u16 ethertype;
	u16 dst_port;
	u64 count;
	int cpu;
	u8 frame[ETH_HLEN + PPSIM_MAX_MTU];
};

struct ppsim_priv {
	struct net_device *dev;
	struct device *dmadev;
	struct list_head list;		/* ppsim_devs, under rtnl */
	struct net_device __rcu *peer;
	unsigned int num_rx;
	unsigned int num_tx;
	struct ppsim_cfg cfg;
	struct bpf_prog __rcu *xdp_prog;
	bool rings_up;
	struct ppsim_rxq *rxq;
	struct ppsim_tq_stats *txs;
	struct ppsim_gen *gen;
};

extern struct device *ppsim_dmadev;
extern bool ppsim_xdp_dispatcher;
extern const struct net_device_ops ppsim_netdev_ops;
extern const struct ethtool_ops ppsim_ethtool_ops;
extern struct list_head ppsim_devs;

static inline bool ppsim_is_ppsim(const struct net_device *dev)
{
	return dev->netdev_ops == &ppsim_netdev_ops;
}

/* main.c */
int ppsim_create(struct net *net, unsigned int rxqs, unsigned int txqs, u32 ring,
		 bool pair, struct net_device **devs, struct netlink_ext_ack *extack);
void ppsim_destroy(struct net_device *dev);
int ppsim_reconfigure(struct ppsim_priv *priv, const struct ppsim_cfg *cfg,
		      struct netlink_ext_ack *extack);
int ppsim_cfg_check(struct ppsim_priv *priv, const struct ppsim_cfg *cfg,
		    bool with_xdp, unsigned int mtu, struct netlink_ext_ack *extack);

/* rx.c */
int ppsim_rings_up(struct ppsim_priv *priv);
void ppsim_rings_down(struct ppsim_priv *priv);
int ppsim_poll(struct napi_struct *napi, int budget);
int ppsim_irq_cpu(const struct ppsim_priv *priv, unsigned int q);
void ppsim_irq(void *arg);
void ppsim_raise_irq(struct ppsim_rxq *rxq);
unsigned int ppsim_dev_write(struct ppsim_rxq *rxq, const void *frame, u32 len,
			     unsigned int n, bool lossy, u32 hash, u32 hash_type);
unsigned int ppsim_frame_max(unsigned int mtu);
unsigned int ppsim_order(unsigned int headroom, unsigned int mtu);

/* tx.c */
struct ppsim_rxq *ppsim_rss(struct ppsim_priv *priv, const void *frame, u32 len, u32 *hash,
			    u32 *hash_type);
bool ppsim_wire(struct ppsim_priv *to, const void *frame, u32 len, struct ppsim_rxq **kick);
netdev_tx_t ppsim_xmit(struct sk_buff *skb, struct net_device *dev);
int ppsim_xdp_xmit(struct net_device *dev, int n, struct xdp_frame **frames, u32 flags);
bool ppsim_txc_push(struct ppsim_rxq *rxq, u32 kind, void *ptr, dma_addr_t dma, u32 len,
		    bool *was_empty);
bool ppsim_txc_clean(struct ppsim_rxq *rxq);
void ppsim_txc_arm(struct ppsim_rxq *rxq);
void ppsim_txc_drain(struct ppsim_rxq *rxq);
enum hrtimer_restart ppsim_txc_timer(struct hrtimer *t);
void ppsim_buf_free(struct ppsim_rxq *rxq, struct page *page, dma_addr_t dma,
		    unsigned int sync, bool napi);

/* gen.c */
extern unsigned int ppsim_gen_flows;
void ppsim_gen_kick(struct ppsim_priv *priv);
int ppsim_gen_start(struct ppsim_priv *priv, const struct ppsim_gen *req,
		    struct netlink_ext_ack *extack);
void ppsim_gen_stop(struct ppsim_priv *priv);

/* netlink.c */
int ppsim_nl_init(void);
void ppsim_nl_exit(void);

/* The simulated bus is direct-mapped: a DMA address is a physical one. */
static inline void *ppsim_bus_to_virt(dma_addr_t addr)
{
	return phys_to_virt((phys_addr_t)addr);
}

#endif /* _PPSIM_H */
