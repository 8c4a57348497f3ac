/*
 * Marvell Packet Processor v2.2 (Armada 7K/8K CP110 "PPv2", Linux mvpp2)
 *
 * A model of what the mvpp2 driver programs on a PPv2.2 controller, for a
 * lab that runs the unmodified driver: the buffer manager, RX queues with
 * their descriptor rings and counters, the per-thread aggregated TX queues
 * with checksum offload and per-thread completion counters, the per-thread
 * register windows and their interrupt causes and masks, and enough of the
 * parser, classifier, GoP MACs and MIB counters for the driver's reads to
 * return what it expects.  What it does not model is listed in ppkit's
 * Documentation/emu/mvpp2.rst.
 *
 * Layout: one 4 MiB region, the packet processor at 0 (nine 64 KiB
 * windows, one per software thread) and the "iface" block (MIB, SMI, GoP
 * MACs) at 0x129000, as on the CP110.  Interrupts: for each port p, lines
 * 10 * p + 0..8 are hif0..hif8 and 10 * p + 9 is "link" (never raised).
 * Port p is the driver's port-id p; its GoP MAC is gop_of[p].
 *
 * Copyright (c) 2026 the ppkit authors
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "qemu/log.h"
#include "qemu/module.h"
#include "qemu/units.h"
#include "qapi/error.h"
#include "hw/sysbus.h"
#include "hw/irq.h"
#include "hw/qdev-properties.h"
#include "migration/vmstate.h"
#include "net/net.h"
#include "net/checksum.h"
#include "net/eth.h"
#include "sysemu/dma.h"
#include "qom/object.h"

#define TYPE_MVPP2 "mvpp2"
OBJECT_DECLARE_SIMPLE_TYPE(MVPP2State, MVPP2)

#define MVPP2_PORTS         3
#define MVPP2_THREADS       9
#define MVPP2_IRQS_PER_PORT 10
#define MVPP2_RXQS          128
#define MVPP2_TXQS          256
#define MVPP2_POOLS         8
#define MVPP2_POOL_MAX      16384
#define MVPP2_PRS_ENTRIES   256
#define MVPP2_CLS_FLOWS     512
#define MVPP2_CLS_LKPS      128
#define MVPP2_C2_ENTRIES    256
#define MVPP2_FRAME_MAX     65536
#define MVPP2_DESC_SIZE     32
#define MVPP2_MH_SIZE       2
#define MVPP2_ADDR_MASK     0xffffffffffULL

#define PP_SIZE             0x100000
#define PP_WINDOW           0x10000
#define IF_OFFSET           0x129000
#define IF_SIZE             0xb000

/* packet processor registers (offsets in a window) */
#define R_POOL_BUF_SIZE(b)  (0x180 + 4 * (b))
#define R_RXQ_CONFIG(q)     (0x800 + 4 * (q))
#define   RXQ_POOL_SHORT(v)   (((v) >> 20) & 0x7)
#define   RXQ_POOL_LONG(v)    (((v) >> 24) & 0x7)
#define   RXQ_PKT_OFFSET(v)   ((((v) >> 28) & 0x7) * 32)
#define   RXQ_DISABLE         BIT(31)
#define R_PRS_TCAM_IDX      0x1100
#define R_PRS_TCAM_DATA     0x1104
#define R_PRS_SRAM_IDX      0x1200
#define R_PRS_SRAM_DATA     0x1204
#define R_CLS_LKP_INDEX     0x1814
#define R_CLS_LKP_TBL       0x1818
#define R_CLS_FLOW_INDEX    0x1820
#define R_CLS_FLOW_TBL0     0x1824
#define R_C2_TCAM_IDX       0x1b00
#define R_C2_TCAM_DATA0     0x1b10
#define R_C2_TCAM_INV       0x1b24
#define R_C2_ACT            0x1b60
#define R_C2_ATTR0          0x1b64
#define R_RXQ_NUM           0x2040
#define R_RXQ_DESC_ADDR     0x2044
#define R_RXQ_DESC_SIZE     0x2048
#define R_RXQ_THRESH        0x204c
#define R_RXQ_INDEX         0x2050
#define R_TXQ_NUM           0x2080
#define R_TXQ_DESC_ADDR     0x2084
#define R_TXQ_DESC_SIZE     0x2088
#define R_AGGR_TXQ_UPDATE   0x2090
#define R_TXQ_THRESH        0x2094
#define R_TXQ_INDEX         0x2098
#define R_TXQ_PREF_BUF      0x209c
#define R_TXQ_PENDING       0x20a0
#define R_TXQ_RSVD_REQ      0x20b0
#define R_TXQ_RSVD_RSLT     0x20b4
#define R_TXQ_RSVD_CLR      0x20b8
#define R_AGGR_DESC_ADDR(t) (0x2100 + 4 * (t))
#define R_AGGR_DESC_SIZE(t) (0x2140 + 4 * (t))
#define R_AGGR_STATUS(t)    (0x2180 + 4 * (t))
#define R_AGGR_INDEX(t)     (0x21c0 + 4 * (t))
#define R_RXQ_STATUS_UPD(q) (0x3000 + 4 * (q))
#define R_RXQ_STATUS(q)     (0x3400 + 4 * (q))
#define R_TXQ_SENT(q)       (0x3c00 + 4 * (q))
#define R_VER_ID            0x50b0
#define   PP22_VERSION        0x10
#define R_ISR_GROUP_INDEX   0x5400
#define R_ISR_SUBGROUP_CFG  0x5404
#define R_ISR_ENABLE(p)     (0x5420 + 4 * (p))
#define R_ISR_CAUSE(p)      (0x5480 + 4 * (p))
#define R_ISR_MASK(p)       (0x54a0 + 4 * (p))
#define R_BM_POOL_SIZE(b)   (0x6040 + 4 * (b))
#define R_BM_PTRS_NUM(b)    (0x60c0 + 4 * (b))
#define R_BM_BPPI_NUM(b)    (0x6140 + 4 * (b))
#define R_BM_POOL_CTRL(b)   (0x6200 + 4 * (b))
#define   BM_START            BIT(0)
#define   BM_STOP             BIT(1)
#define   BM_STATE            BIT(4)
#define R_BM_PHY_ALLOC(b)   (0x6400 + 4 * (b))
#define R_BM_VIRT_ALLOC     0x6440
#define R_BM_HIGH_ALLOC     0x6444
#define R_BM_PHY_RLS(b)     (0x6480 + 4 * (b))
#define R_BM_VIRT_RLS       0x64c0
#define R_BM_HIGH_RLS       0x64c4
#define R_CNT_FIRST         0x7000
#define R_CNT_LAST          0x77fc
#define R_CTRS_IDX          0x7040
#define R_TXP_SCHED_PORT    0x8000
#define R_TXP_SCHED_Q_CMD   0x8004

/* TX descriptor command bits */
#define TXD_L3_OFF(c)       ((c) & 0x7f)
#define TXD_IP_HLEN(c)      (((c) >> 8) & 0x1f)
#define TXD_L4_CSUM_FRAG    BIT(13)
#define TXD_L4_CSUM_NOT     BIT(14)
#define TXD_IP_CSUM_DISABLE BIT(15)
#define TXD_PADDING_DISABLE BIT(23)
#define TXD_L4_UDP          BIT(24)
#define TXD_L3_IP6          BIT(26)
#define TXD_L_DESC          BIT(28)
#define TXD_F_DESC          BIT(29)

/* iface block: MIB counters per GoP port, GoP MACs */
#define IF_MIB_SIZE         0x100
#define IF_GOP_BASE(g)      (0x7000 + 0x1000 * (g))
#define GMAC_CTRL_0         0xe00
#define   GMAC_PORT_EN        BIT(0)
#define GMAC_AUTONEG        0xe0c
#define   AN_FORCE_LINK_DOWN  BIT(0)
#define   AN_FORCE_LINK_PASS  BIT(1)
#define   AN_GMII_SPEED       BIT(6)
#define   AN_FULL_DUPLEX      BIT(12)
#define GMAC_STATUS0        0xe10
#define XLG_CTRL0           0xf00
#define   XLG_PORT_EN         BIT(0)
#define XLG_CTRL3           0xf1c

/* MIB counter indices (offset / 4) */
#define MIB_OCTETS_RCVD     (0x00 / 4)
#define MIB_UCAST_RCVD      (0x10 / 4)
#define MIB_BCAST_RCVD      (0x18 / 4)
#define MIB_MCAST_RCVD      (0x1c / 4)
#define MIB_64              (0x20 / 4)
#define MIB_OCTETS_SENT     (0x38 / 4)
#define MIB_UCAST_SENT      (0x40 / 4)
#define MIB_MCAST_SENT      (0x48 / 4)
#define MIB_BCAST_SENT      (0x4c / 4)
#define MIB_WORDS           (IF_MIB_SIZE / 4)

/* the CP110's port-id to GoP port (armada-cp11x.dtsi): the lab's DT agrees */
static const int gop_of[MVPP2_PORTS] = { 0, 2, 3 };

typedef struct MVPP2Port {
    struct MVPP2State *s;
    int id;
    NICConf conf;
    NICState *nic;
} MVPP2Port;

typedef struct MVPP2Rxq {
    uint64_t base;
    uint32_t size;
    uint32_t thresh;
    uint32_t idx;
    uint32_t occupied;
    uint32_t non_occupied;
} MVPP2Rxq;

typedef struct MVPP2Txq {
    uint32_t desc_addr;
    uint32_t desc_size;
    uint32_t thresh;
    uint32_t pref_buf;
    uint32_t pending;
} MVPP2Txq;

typedef struct MVPP2Pool {
    bool started;
    uint32_t n;
    uint64_t *dma;
    uint64_t *cookie;
} MVPP2Pool;

typedef struct MVPP2Thread {
    uint32_t rxq_num;
    uint32_t txq_num;
    uint32_t rls_high;
    uint32_t rls_virt;
    uint32_t alloc_virt;
    uint32_t alloc_high;
    uint32_t rsvd;
    uint32_t mask[MVPP2_PORTS];
    /* the aggregated TX queue of this thread */
    uint64_t aggr_base;
    uint32_t aggr_size;
    uint32_t aggr_idx;
    /* the packet being gathered from its descriptors */
    uint8_t *frame;
    uint32_t frame_len;
    uint32_t frame_cmd;
    uint32_t frame_txq;
    bool in_frame;
    uint32_t sent[MVPP2_TXQS];
} MVPP2Thread;

struct MVPP2State {
    SysBusDevice parent_obj;

    MemoryRegion container;
    MemoryRegion pp;
    MemoryRegion iface;
    qemu_irq irq[MVPP2_PORTS][MVPP2_IRQS_PER_PORT];
    MVPP2Port port[MVPP2_PORTS];

    uint32_t regs[PP_WINDOW / 4];
    uint32_t ifregs[IF_SIZE / 4];
    MVPP2Thread thread[MVPP2_THREADS];
    MVPP2Rxq rxq[MVPP2_RXQS];
    MVPP2Txq txq[MVPP2_TXQS];
    MVPP2Pool pool[MVPP2_POOLS];
    uint32_t prs_tcam[MVPP2_PRS_ENTRIES][6];
    uint32_t prs_sram[MVPP2_PRS_ENTRIES][4];
    uint32_t cls_lkp[MVPP2_CLS_LKPS];
    uint32_t cls_flow[MVPP2_CLS_FLOWS][3];
    uint32_t c2[MVPP2_C2_ENTRIES][11];
    uint32_t isr_enable[MVPP2_PORTS];
    /* RX interrupt sub-groups: [port][thread] = startq | size << 8 */
    uint32_t subgroup[MVPP2_PORTS][MVPP2_THREADS];
    uint32_t q_enabled[32];
    uint64_t mib[4][MIB_WORDS];
    uint32_t mib_high[4][MIB_WORDS];
    uint64_t bm_drops;
};

static bool port_valid(int p)
{
    return p >= 0 && p < MVPP2_PORTS;
}

/* ---- interrupts ---- */

static uint32_t mvpp2_cause(MVPP2State *s, int p, int t)
{
    uint32_t sg = s->subgroup[p][t];
    uint32_t startq = sg & 0x1f, size = (sg >> 8) & 0xf;
    uint32_t cause = 0, l, q;

    for (l = 0; l < size && l < 8; l++) {
        q = p * 32 + startq + l;
        if (q < MVPP2_RXQS && s->rxq[q].occupied) {
            cause |= BIT(l);
        }
    }
    for (l = 0; l < 8; l++) {
        if (s->thread[t].sent[128 + 8 * p + l]) {
            cause |= BIT(16 + l);
        }
    }
    return cause;
}

static void mvpp2_update_irq(MVPP2State *s)
{
    int p, t;

    for (p = 0; p < MVPP2_PORTS; p++) {
        for (t = 0; t < MVPP2_THREADS; t++) {
            bool on = (s->isr_enable[p] >> t & 1) &&
                      (mvpp2_cause(s, p, t) & s->thread[t].mask[p]);
            qemu_set_irq(s->irq[p][t], on);
        }
    }
}

static void mvpp2_flush(MVPP2State *s)
{
    int p;

    for (p = 0; p < MVPP2_PORTS; p++) {
        qemu_flush_queued_packets(qemu_get_queue(s->port[p].nic));
    }
}

/* ---- buffer manager ---- */

static void mvpp2_pool_push(MVPP2State *s, int b, uint64_t dma, uint64_t cookie)
{
    MVPP2Pool *pool = &s->pool[b];
    uint32_t cap = s->regs[R_BM_POOL_SIZE(b) / 4] & 0xfff0;

    if (pool->n >= MVPP2_POOL_MAX || (cap && pool->n >= cap)) {
        qemu_log_mask(LOG_GUEST_ERROR, "mvpp2: pool %d full (%u buffers)\n", b,
                      pool->n);
        return;
    }
    pool->dma[pool->n] = dma;
    pool->cookie[pool->n] = cookie;
    pool->n++;
}

static bool mvpp2_pool_pop(MVPP2State *s, int b, uint64_t *dma,
                           uint64_t *cookie)
{
    MVPP2Pool *pool = &s->pool[b];

    if (!pool->n) {
        return false;
    }
    pool->n--;
    *dma = pool->dma[pool->n];
    *cookie = pool->cookie[pool->n];
    return true;
}

/*
 * The driver counts PTRS_NUM + BPPI_PTRS_NUM, plus one when that is not
 * zero (the buffer the hardware holds ready): split n so that it adds up.
 */
static uint32_t mvpp2_pool_count(MVPP2State *s, int b, bool bppi)
{
    uint32_t n = s->pool[b].n;

    if (!n) {
        return 0;
    }
    return bppi ? (n - 1) & 7 : (n - 1) & ~7u;
}

/* ---- RX ---- */

static bool mvpp2_port_up(MVPP2State *s, int p)
{
    int g = gop_of[p];
    uint32_t gmac = s->ifregs[(IF_GOP_BASE(g) + GMAC_CTRL_0) / 4];
    uint32_t xlg = s->ifregs[(IF_GOP_BASE(g) + XLG_CTRL0) / 4];

    return (gmac & GMAC_PORT_EN) || (g == 0 && (xlg & XLG_PORT_EN));
}

/* Every frame goes to the port's default queue: its logical RXQ 0. */
static int mvpp2_rx_queue(int p)
{
    return p * 32;
}

static bool mvpp2_rxq_active(MVPP2State *s, int q)
{
    return s->rxq[q].size && s->rxq[q].base &&
           !(s->regs[R_RXQ_CONFIG(q) / 4] & RXQ_DISABLE);
}

static bool mvpp2_can_receive(NetClientState *nc)
{
    MVPP2Port *port = qemu_get_nic_opaque(nc);
    MVPP2State *s = port->s;
    int q = mvpp2_rx_queue(port->id);
    uint32_t cfg = s->regs[R_RXQ_CONFIG(q) / 4];
    MVPP2Pool *lp = &s->pool[RXQ_POOL_LONG(cfg)];

    if (!mvpp2_port_up(s, port->id) || !mvpp2_rxq_active(s, q)) {
        return true;        /* dropped in receive */
    }
    return s->rxq[q].non_occupied > 0 && lp->started && lp->n > 0;
}

static void mvpp2_mib_count(MVPP2State *s, int p, const uint8_t *buf,
                            size_t len, bool rx)
{
    uint64_t *m = s->mib[gop_of[p]];
    size_t wire = MAX(len, 60) + 4;
    int bucket;

    if (!rx) {
        m[MIB_OCTETS_SENT] += wire;
        m[is_broadcast_ether_addr(buf) ? MIB_BCAST_SENT :
          is_multicast_ether_addr(buf) ? MIB_MCAST_SENT : MIB_UCAST_SENT]++;
        return;
    }
    m[MIB_OCTETS_RCVD] += wire;
    m[is_broadcast_ether_addr(buf) ? MIB_BCAST_RCVD :
      is_multicast_ether_addr(buf) ? MIB_MCAST_RCVD : MIB_UCAST_RCVD]++;
    bucket = wire <= 64 ? 0 : wire <= 127 ? 1 : wire <= 255 ? 2 :
             wire <= 511 ? 3 : wire <= 1023 ? 4 : 5;
    m[MIB_64 + bucket]++;
}

static ssize_t mvpp2_receive(NetClientState *nc, const uint8_t *buf, size_t len)
{
    MVPP2Port *port = qemu_get_nic_opaque(nc);
    MVPP2State *s = port->s;
    int p = port->id, q = mvpp2_rx_queue(p);
    MVPP2Rxq *rxq = &s->rxq[q];
    uint32_t cfg = s->regs[R_RXQ_CONFIG(q) / 4];
    uint32_t offset = RXQ_PKT_OFFSET(cfg);
    uint32_t need = offset + MVPP2_MH_SIZE + len;
    static const uint8_t mh[MVPP2_MH_SIZE];
    uint8_t desc[MVPP2_DESC_SIZE] = { 0 };
    uint64_t dma, cookie;
    int b;

    if (!mvpp2_port_up(s, p) || !mvpp2_rxq_active(s, q) || len < ETH_HLEN) {
        return len;
    }
    if (!rxq->non_occupied) {
        return 0;
    }
    b = RXQ_POOL_SHORT(cfg);
    if (need > s->regs[R_POOL_BUF_SIZE(b) / 4]) {
        b = RXQ_POOL_LONG(cfg);
    }
    if (need > s->regs[R_POOL_BUF_SIZE(b) / 4]) {
        qemu_log_mask(LOG_GUEST_ERROR, "mvpp2: port %d: a %zu byte frame "
                      "fits no pool of its queue\n", p, len);
        s->bm_drops++;
        return len;
    }
    if (!s->pool[b].started || !mvpp2_pool_pop(s, b, &dma, &cookie)) {
        s->bm_drops++;
        return len;
    }

    dma_memory_write(&address_space_memory, dma + offset, mh, sizeof(mh),
                     MEMTXATTRS_UNSPECIFIED);
    dma_memory_write(&address_space_memory, dma + offset + MVPP2_MH_SIZE,
                     buf, len, MEMTXATTRS_UNSPECIFIED);
    stl_le_p(desc + 0, (uint32_t)b << 16);
    stw_le_p(desc + 6, MVPP2_MH_SIZE + len);
    stq_le_p(desc + 16, dma & MVPP2_ADDR_MASK);
    stq_le_p(desc + 24, cookie & MVPP2_ADDR_MASK);
    dma_memory_write(&address_space_memory,
                     rxq->base + (uint64_t)rxq->idx * MVPP2_DESC_SIZE,
                     desc, sizeof(desc), MEMTXATTRS_UNSPECIFIED);
    rxq->idx = (rxq->idx + 1) % rxq->size;
    rxq->occupied++;
    rxq->non_occupied--;
    mvpp2_mib_count(s, p, buf, len, true);
    mvpp2_update_irq(s);
    return len;
}

/* ---- TX ---- */

static void mvpp2_tx_csum(uint8_t *f, uint32_t len, uint32_t cmd)
{
    uint32_t l3 = TXD_L3_OFF(cmd), hlen = TXD_IP_HLEN(cmd) * 4;
    uint32_t l4 = l3 + hlen, l4len, sum, csum_off;
    bool ip6 = cmd & TXD_L3_IP6, udp = cmd & TXD_L4_UDP;
    uint8_t proto = udp ? IP_PROTO_UDP : IP_PROTO_TCP;

    if (!ip6 && !(cmd & TXD_IP_CSUM_DISABLE) && hlen >= 20 &&
        l3 + hlen <= len) {
        stw_be_p(f + l3 + 10, 0);
        sum = net_checksum_add(hlen, f + l3);
        stw_be_p(f + l3 + 10, net_checksum_finish(sum));
    }
    if (cmd & (TXD_L4_CSUM_NOT | TXD_L4_CSUM_FRAG)) {
        return;
    }
    csum_off = l4 + (udp ? 6 : 16);
    if (csum_off + 2 > len) {
        return;
    }
    if (ip6) {
        if (l3 + 40 > len) {
            return;
        }
        l4len = lduw_be_p(f + l3 + 4) - (hlen - 40);
    } else {
        if (l3 + 20 > len) {
            return;
        }
        l4len = lduw_be_p(f + l3 + 2) - hlen;
    }
    if (l4 + l4len > len) {
        l4len = len - l4;
    }
    stw_be_p(f + csum_off, 0);
    sum = net_checksum_add(ip6 ? 32 : 8, f + l3 + (ip6 ? 8 : 12));
    sum += proto + l4len;
    sum += net_checksum_add(l4len, f + l4);
    sum = net_checksum_finish(sum);
    if (udp && !sum) {
        sum = 0xffff;
    }
    stw_be_p(f + csum_off, sum);
}

static void mvpp2_tx_frame(MVPP2State *s, MVPP2Thread *th)
{
    int p = th->frame_txq / 8 - 16;
    uint32_t len = th->frame_len;

    if (!port_valid(p)) {
        qemu_log_mask(LOG_GUEST_ERROR, "mvpp2: TX on queue %u: no such port\n",
                      th->frame_txq);
        return;
    }
    if (!mvpp2_port_up(s, p) || len < ETH_HLEN) {
        return;
    }
    mvpp2_tx_csum(th->frame, len, th->frame_cmd);
    if (len < 60 && !(th->frame_cmd & TXD_PADDING_DISABLE)) {
        memset(th->frame + len, 0, 60 - len);
        len = 60;
    }
    mvpp2_mib_count(s, p, th->frame, len, false);
    qemu_send_packet(qemu_get_queue(s->port[p].nic), th->frame, len);
}

static void mvpp2_aggr_update(MVPP2State *s, int t, uint32_t n)
{
    MVPP2Thread *th = &s->thread[t];
    uint8_t d[MVPP2_DESC_SIZE];
    uint32_t cmd, size, txq;
    uint64_t buf;

    if (!th->aggr_size || !th->aggr_base) {
        qemu_log_mask(LOG_GUEST_ERROR, "mvpp2: thread %d: TX on an aggregated "
                      "queue with no ring\n", t);
        return;
    }
    n = MIN(n, th->aggr_size);
    while (n--) {
        buf = th->aggr_base + (uint64_t)th->aggr_idx * MVPP2_DESC_SIZE;
        dma_memory_read(&address_space_memory, buf, d, sizeof(d),
                        MEMTXATTRS_UNSPECIFIED);
        th->aggr_idx = (th->aggr_idx + 1) % th->aggr_size;
        cmd = ldl_le_p(d + 0);
        txq = d[5];
        size = lduw_le_p(d + 6);
        buf = (ldq_le_p(d + 16) & MVPP2_ADDR_MASK) + d[4];
        th->sent[txq]++;
        if (cmd & TXD_F_DESC) {
            th->in_frame = true;
            th->frame_len = 0;
            th->frame_cmd = cmd;
            th->frame_txq = txq;
        }
        if (!th->in_frame) {
            qemu_log_mask(LOG_GUEST_ERROR, "mvpp2: thread %d: a TX descriptor "
                          "outside a packet\n", t);
            continue;
        }
        if (th->frame_len + size > MVPP2_FRAME_MAX - 64) {
            qemu_log_mask(LOG_GUEST_ERROR, "mvpp2: thread %d: TX packet over "
                          "%u bytes dropped\n", t, MVPP2_FRAME_MAX - 64);
            th->in_frame = false;
            continue;
        }
        dma_memory_read(&address_space_memory, buf, th->frame + th->frame_len,
                        size, MEMTXATTRS_UNSPECIFIED);
        th->frame_len += size;
        if (cmd & TXD_L_DESC) {
            th->in_frame = false;
            mvpp2_tx_frame(s, th);
        }
    }
    mvpp2_update_irq(s);
}

/* ---- register access ---- */

/* The entry behind an indexed table's data register, or NULL. */
static uint32_t *mvpp2_table_reg(MVPP2State *s, hwaddr o)
{
    uint32_t *e;

    switch (o) {
    case R_PRS_TCAM_DATA ... R_PRS_TCAM_DATA + 20:
        return &s->prs_tcam[s->regs[R_PRS_TCAM_IDX / 4] % MVPP2_PRS_ENTRIES]
                           [(o - R_PRS_TCAM_DATA) / 4];
    case R_PRS_SRAM_DATA ... R_PRS_SRAM_DATA + 12:
        return &s->prs_sram[s->regs[R_PRS_SRAM_IDX / 4] % MVPP2_PRS_ENTRIES]
                           [(o - R_PRS_SRAM_DATA) / 4];
    case R_CLS_LKP_TBL:
        return &s->cls_lkp[s->regs[R_CLS_LKP_INDEX / 4] % MVPP2_CLS_LKPS];
    case R_CLS_FLOW_TBL0 ... R_CLS_FLOW_TBL0 + 8:
        return &s->cls_flow[s->regs[R_CLS_FLOW_INDEX / 4] % MVPP2_CLS_FLOWS]
                           [(o - R_CLS_FLOW_TBL0) / 4];
    case R_C2_TCAM_DATA0 ... R_C2_TCAM_INV:
        e = s->c2[s->regs[R_C2_TCAM_IDX / 4] % MVPP2_C2_ENTRIES];
        return &e[(o - R_C2_TCAM_DATA0) / 4];
    case R_C2_ACT ... R_C2_ATTR0 + 12:
        e = s->c2[s->regs[R_C2_TCAM_IDX / 4] % MVPP2_C2_ENTRIES];
        return &e[6 + (o - R_C2_ACT) / 4];
    default:
        return NULL;
    }
}

static uint64_t mvpp2_pp_read(void *opaque, hwaddr addr, unsigned size)
{
    MVPP2State *s = opaque;
    int t = addr / PP_WINDOW;
    hwaddr o = addr % PP_WINDOW;
    MVPP2Thread *th;
    uint64_t dma, cookie;
    uint32_t v, *r;

    if (t >= MVPP2_THREADS) {
        return 0;
    }
    th = &s->thread[t];
    r = mvpp2_table_reg(s, o);
    if (r) {
        return *r;
    }
    switch (o) {
    case R_VER_ID:
        return PP22_VERSION;
    case R_RXQ_NUM:
        return th->rxq_num;
    case R_RXQ_DESC_ADDR:
        return s->rxq[th->rxq_num].base >> 8;
    case R_RXQ_DESC_SIZE:
        return s->rxq[th->rxq_num].size;
    case R_RXQ_THRESH:
        return s->rxq[th->rxq_num].thresh;
    case R_RXQ_INDEX:
        return s->rxq[th->rxq_num].idx;
    case R_TXQ_NUM:
        return th->txq_num;
    case R_TXQ_DESC_ADDR:
        return s->txq[th->txq_num].desc_addr;
    case R_TXQ_DESC_SIZE:
        return s->txq[th->txq_num].desc_size;
    case R_TXQ_THRESH:
        return s->txq[th->txq_num].thresh;
    case R_TXQ_PREF_BUF:
        return s->txq[th->txq_num].pref_buf;
    case R_TXQ_PENDING:
        /* transmission is synchronous: nothing is ever pending */
        return s->txq[th->txq_num].pending & ~0x3fffu;
    case R_TXQ_RSVD_RSLT:
        return th->rsvd;
    case R_AGGR_DESC_ADDR(0) ... R_AGGR_DESC_ADDR(MVPP2_THREADS - 1):
        return s->thread[(o - R_AGGR_DESC_ADDR(0)) / 4].aggr_base >> 8;
    case R_AGGR_DESC_SIZE(0) ... R_AGGR_DESC_SIZE(MVPP2_THREADS - 1):
        return s->thread[(o - R_AGGR_DESC_SIZE(0)) / 4].aggr_size;
    case R_AGGR_STATUS(0) ... R_AGGR_STATUS(MVPP2_THREADS - 1):
        return 0;
    case R_AGGR_INDEX(0) ... R_AGGR_INDEX(MVPP2_THREADS - 1):
        return s->thread[(o - R_AGGR_INDEX(0)) / 4].aggr_idx;
    case R_RXQ_STATUS(0) ... R_RXQ_STATUS(MVPP2_RXQS - 1):
        v = (o - R_RXQ_STATUS(0)) / 4;
        return s->rxq[v].occupied | s->rxq[v].non_occupied << 16;
    case R_TXQ_SENT(0) ... R_TXQ_SENT(MVPP2_TXQS - 1):
        /* descriptors sent since this thread last asked; reading clears */
        v = (o - R_TXQ_SENT(0)) / 4;
        cookie = MIN(th->sent[v], 0x3fff);
        th->sent[v] -= cookie;
        mvpp2_update_irq(s);
        return cookie << 16;
    case R_ISR_CAUSE(0) ... R_ISR_CAUSE(MVPP2_PORTS - 1):
        return mvpp2_cause(s, (o - R_ISR_CAUSE(0)) / 4, t);
    case R_ISR_MASK(0) ... R_ISR_MASK(MVPP2_PORTS - 1):
        return th->mask[(o - R_ISR_MASK(0)) / 4];
    case R_ISR_ENABLE(0) ... R_ISR_ENABLE(MVPP2_PORTS - 1):
        return s->isr_enable[(o - R_ISR_ENABLE(0)) / 4];
    case R_BM_PTRS_NUM(0) ... R_BM_PTRS_NUM(MVPP2_POOLS - 1):
        return mvpp2_pool_count(s, (o - R_BM_PTRS_NUM(0)) / 4, false);
    case R_BM_BPPI_NUM(0) ... R_BM_BPPI_NUM(MVPP2_POOLS - 1):
        return mvpp2_pool_count(s, (o - R_BM_BPPI_NUM(0)) / 4, true);
    case R_BM_POOL_CTRL(0) ... R_BM_POOL_CTRL(MVPP2_POOLS - 1):
        v = (o - R_BM_POOL_CTRL(0)) / 4;
        return (s->regs[o / 4] & ~(BM_START | BM_STOP | BM_STATE)) |
               (s->pool[v].started ? BM_STATE : 0);
    case R_BM_PHY_ALLOC(0) ... R_BM_PHY_ALLOC(MVPP2_POOLS - 1):
        if (!mvpp2_pool_pop(s, (o - R_BM_PHY_ALLOC(0)) / 4, &dma, &cookie)) {
            dma = cookie = 0;
        }
        th->alloc_virt = cookie;
        th->alloc_high = (dma >> 32 & 0xff) | (cookie >> 32 & 0xff) << 8;
        return (uint32_t)dma;
    case R_BM_VIRT_ALLOC:
        return th->alloc_virt;
    case R_BM_HIGH_ALLOC:
        return th->alloc_high;
    case R_BM_VIRT_RLS:
        return th->rls_virt;
    case R_BM_HIGH_RLS:
        return th->rls_high;
    case R_CNT_FIRST ... R_CNT_LAST:
        /* drop and queue counters: they clear on read, and nothing drops */
        return o == R_CTRS_IDX ? s->regs[o / 4] : 0;
    case R_TXP_SCHED_Q_CMD:
        return s->q_enabled[s->regs[R_TXP_SCHED_PORT / 4] % 32];
    default:
        return s->regs[o / 4];
    }
}

static void mvpp2_pp_write(void *opaque, hwaddr addr, uint64_t val64,
                           unsigned size)
{
    MVPP2State *s = opaque;
    int t = addr / PP_WINDOW;
    hwaddr o = addr % PP_WINDOW;
    uint32_t v = val64, q, *r;
    MVPP2Thread *th;
    MVPP2Rxq *rxq;

    if (t >= MVPP2_THREADS) {
        qemu_log_mask(LOG_GUEST_ERROR, "mvpp2: write to 0x%" HWADDR_PRIx
                      " beyond the thread windows\n", addr);
        return;
    }
    th = &s->thread[t];
    r = mvpp2_table_reg(s, o);
    if (r) {
        *r = v;
        return;
    }
    switch (o) {
    case R_RXQ_CONFIG(0) ... R_RXQ_CONFIG(MVPP2_RXQS - 1):
        s->regs[o / 4] = v;
        mvpp2_flush(s);
        return;
    case R_RXQ_NUM:
        th->rxq_num = v % MVPP2_RXQS;
        return;
    case R_RXQ_DESC_ADDR:
        s->rxq[th->rxq_num].base = (uint64_t)v << 8;
        return;
    case R_RXQ_DESC_SIZE:
        s->rxq[th->rxq_num].size = v & 0x3ff0;
        s->rxq[th->rxq_num].idx = 0;
        return;
    case R_RXQ_THRESH:
        s->rxq[th->rxq_num].thresh = v;
        return;
    case R_RXQ_INDEX:
        rxq = &s->rxq[th->rxq_num];
        rxq->idx = rxq->size ? (v & 0x3fff) % rxq->size : 0;
        return;
    case R_TXQ_NUM:
        th->txq_num = v % MVPP2_TXQS;
        return;
    case R_TXQ_DESC_ADDR:
        s->txq[th->txq_num].desc_addr = v;
        return;
    case R_TXQ_DESC_SIZE:
        s->txq[th->txq_num].desc_size = v;
        return;
    case R_TXQ_THRESH:
        s->txq[th->txq_num].thresh = v;
        return;
    case R_TXQ_PREF_BUF:
        s->txq[th->txq_num].pref_buf = v;
        return;
    case R_TXQ_PENDING:
        s->txq[th->txq_num].pending = v;
        return;
    case R_TXQ_RSVD_REQ:
        /* every reservation is granted whole */
        th->rsvd = v & 0x3fff;
        return;
    case R_TXQ_RSVD_CLR:
    case R_TXQ_INDEX:
        return;
    case R_AGGR_TXQ_UPDATE:
        mvpp2_aggr_update(s, t, v & 0x3fff);
        return;
    case R_AGGR_DESC_ADDR(0) ... R_AGGR_DESC_ADDR(MVPP2_THREADS - 1):
        s->thread[(o - R_AGGR_DESC_ADDR(0)) / 4].aggr_base = (uint64_t)v << 8;
        return;
    case R_AGGR_DESC_SIZE(0) ... R_AGGR_DESC_SIZE(MVPP2_THREADS - 1):
        th = &s->thread[(o - R_AGGR_DESC_SIZE(0)) / 4];
        th->aggr_size = v & 0x3ff0;
        if (th->aggr_size) {
            th->aggr_idx %= th->aggr_size;
        }
        return;
    case R_RXQ_STATUS_UPD(0) ... R_RXQ_STATUS_UPD(MVPP2_RXQS - 1):
        rxq = &s->rxq[(o - R_RXQ_STATUS_UPD(0)) / 4];
        q = v & 0x3fff;
        if (q > rxq->occupied) {
            qemu_log_mask(LOG_GUEST_ERROR, "mvpp2: RXQ %u: %u descriptors "
                          "done, %u occupied\n", (unsigned)(rxq - s->rxq), q,
                          rxq->occupied);
            q = rxq->occupied;
        }
        rxq->occupied -= q;
        rxq->non_occupied = MIN(rxq->non_occupied + ((v >> 16) & 0x3fff),
                                0x3fff);
        mvpp2_update_irq(s);
        mvpp2_flush(s);
        return;
    case R_RXQ_STATUS(0) ... R_RXQ_STATUS(MVPP2_RXQS - 1):
        rxq = &s->rxq[(o - R_RXQ_STATUS(0)) / 4];
        rxq->occupied = v & 0x3fff;
        rxq->non_occupied = (v >> 16) & 0x3fff;
        mvpp2_update_irq(s);
        return;
    case R_TXQ_SENT(0) ... R_TXQ_SENT(MVPP2_TXQS - 1):
        return;
    case R_ISR_GROUP_INDEX:
    case R_ISR_SUBGROUP_CFG:
        s->regs[o / 4] = v;
        if (o == R_ISR_SUBGROUP_CFG) {
            uint32_t gi = s->regs[R_ISR_GROUP_INDEX / 4];
            int p = (gi >> 7) & 0x7, st = gi & 0xf;

            if (port_valid(p) && st < MVPP2_THREADS) {
                s->subgroup[p][st] = v & 0xf1f;
                mvpp2_update_irq(s);
            }
        }
        return;
    case R_ISR_ENABLE(0) ... R_ISR_ENABLE(MVPP2_PORTS - 1):
        q = (o - R_ISR_ENABLE(0)) / 4;
        s->isr_enable[q] = (s->isr_enable[q] | (v & 0xffff)) & ~(v >> 16);
        mvpp2_update_irq(s);
        return;
    case R_ISR_CAUSE(0) ... R_ISR_CAUSE(MVPP2_PORTS - 1):
        /* the causes are levels, computed from the queues */
        return;
    case R_ISR_MASK(0) ... R_ISR_MASK(MVPP2_PORTS - 1):
        th->mask[(o - R_ISR_MASK(0)) / 4] = v;
        mvpp2_update_irq(s);
        return;
    case R_BM_POOL_CTRL(0) ... R_BM_POOL_CTRL(MVPP2_POOLS - 1):
        q = (o - R_BM_POOL_CTRL(0)) / 4;
        if (v & BM_STOP) {
            s->pool[q].started = false;
        } else if (v & BM_START) {
            s->pool[q].started = true;
        }
        s->regs[o / 4] = v & ~(BM_START | BM_STOP | BM_STATE);
        mvpp2_flush(s);
        return;
    case R_BM_PHY_ALLOC(0) ... R_BM_PHY_ALLOC(MVPP2_POOLS - 1):
        return;
    case R_BM_PHY_RLS(0) ... R_BM_PHY_RLS(MVPP2_POOLS - 1):
        mvpp2_pool_push(s, (o - R_BM_PHY_RLS(0)) / 4,
                        (uint64_t)(th->rls_high & 0xff) << 32 | v,
                        (uint64_t)(th->rls_high >> 8 & 0xff) << 32 |
                        th->rls_virt);
        mvpp2_flush(s);
        return;
    case R_BM_VIRT_RLS:
        th->rls_virt = v;
        return;
    case R_BM_HIGH_RLS:
        th->rls_high = v;
        return;
    case R_TXP_SCHED_Q_CMD:
        q = s->regs[R_TXP_SCHED_PORT / 4] % 32;
        s->q_enabled[q] = (s->q_enabled[q] | (v & 0xff)) & ~(v >> 8 & 0xff);
        return;
    default:
        s->regs[o / 4] = v;
        return;
    }
}

static uint64_t mvpp2_if_read(void *opaque, hwaddr o, unsigned size)
{
    MVPP2State *s = opaque;
    int g = o / IF_MIB_SIZE, w = (o % IF_MIB_SIZE) / 4;
    uint32_t an;
    uint64_t v;

    if (o < 4 * IF_MIB_SIZE) {
        /* MIB: clear on read; a 64-bit counter's high half is latched */
        if (w == MIB_OCTETS_RCVD + 1 || w == MIB_OCTETS_SENT + 1) {
            return s->mib_high[g][w];
        }
        v = s->mib[g][w];
        s->mib[g][w] = 0;
        if (w == MIB_OCTETS_RCVD || w == MIB_OCTETS_SENT) {
            s->mib_high[g][w + 1] = v >> 32;
        }
        return (uint32_t)v;
    }
    if (o >= IF_GOP_BASE(0) && (o - IF_GOP_BASE(0)) % 0x1000 == GMAC_STATUS0) {
        an = s->ifregs[(o - GMAC_STATUS0 + GMAC_AUTONEG) / 4];
        if (!(an & AN_FORCE_LINK_PASS) || (an & AN_FORCE_LINK_DOWN)) {
            return 0;
        }
        return BIT(0) | (an & AN_GMII_SPEED ? BIT(1) : 0) |
               (an & AN_FULL_DUPLEX ? BIT(3) : 0) | BIT(11);
    }
    return s->ifregs[o / 4];
}

static void mvpp2_if_write(void *opaque, hwaddr o, uint64_t v, unsigned size)
{
    MVPP2State *s = opaque;

    if (o < 4 * IF_MIB_SIZE) {
        return;
    }
    s->ifregs[o / 4] = v;
    if (o >= IF_GOP_BASE(0) && ((o - IF_GOP_BASE(0)) % 0x1000 == GMAC_CTRL_0 ||
                                (o - IF_GOP_BASE(0)) % 0x1000 == XLG_CTRL0)) {
        mvpp2_flush(s);
    }
}

static const MemoryRegionOps mvpp2_pp_ops = {
    .read = mvpp2_pp_read,
    .write = mvpp2_pp_write,
    .endianness = DEVICE_LITTLE_ENDIAN,
    .valid = { .min_access_size = 4, .max_access_size = 4 },
    .impl = { .min_access_size = 4, .max_access_size = 4 },
};

static const MemoryRegionOps mvpp2_if_ops = {
    .read = mvpp2_if_read,
    .write = mvpp2_if_write,
    .endianness = DEVICE_LITTLE_ENDIAN,
    .valid = { .min_access_size = 4, .max_access_size = 4 },
    .impl = { .min_access_size = 4, .max_access_size = 4 },
};

static NetClientInfo mvpp2_net_info = {
    .type = NET_CLIENT_DRIVER_NIC,
    .size = sizeof(NICState),
    .can_receive = mvpp2_can_receive,
    .receive = mvpp2_receive,
};

static void mvpp2_reset(DeviceState *dev)
{
    MVPP2State *s = MVPP2(dev);
    int i;

    memset(s->regs, 0, sizeof(s->regs));
    memset(s->ifregs, 0, sizeof(s->ifregs));
    memset(s->rxq, 0, sizeof(s->rxq));
    memset(s->txq, 0, sizeof(s->txq));
    memset(s->prs_tcam, 0, sizeof(s->prs_tcam));
    memset(s->prs_sram, 0, sizeof(s->prs_sram));
    memset(s->cls_lkp, 0, sizeof(s->cls_lkp));
    memset(s->cls_flow, 0, sizeof(s->cls_flow));
    memset(s->c2, 0, sizeof(s->c2));
    memset(s->isr_enable, 0, sizeof(s->isr_enable));
    memset(s->subgroup, 0, sizeof(s->subgroup));
    memset(s->q_enabled, 0, sizeof(s->q_enabled));
    memset(s->mib, 0, sizeof(s->mib));
    memset(s->mib_high, 0, sizeof(s->mib_high));
    s->bm_drops = 0;
    for (i = 0; i < MVPP2_POOLS; i++) {
        s->pool[i].started = false;
        s->pool[i].n = 0;
    }
    for (i = 0; i < MVPP2_THREADS; i++) {
        MVPP2Thread *th = &s->thread[i];
        uint8_t *frame = th->frame;

        memset(th, 0, sizeof(*th));
        th->frame = frame;
    }
    mvpp2_update_irq(s);
}

static void mvpp2_realize(DeviceState *dev, Error **errp)
{
    MVPP2State *s = MVPP2(dev);
    int p, i;

    for (i = 0; i < MVPP2_POOLS; i++) {
        s->pool[i].dma = g_new0(uint64_t, MVPP2_POOL_MAX);
        s->pool[i].cookie = g_new0(uint64_t, MVPP2_POOL_MAX);
    }
    for (i = 0; i < MVPP2_THREADS; i++) {
        s->thread[i].frame = g_malloc0(MVPP2_FRAME_MAX);
    }
    for (p = 0; p < MVPP2_PORTS; p++) {
        MVPP2Port *port = &s->port[p];
        g_autofree char *id = g_strdup_printf("%s.%d",
                                              dev->id ? dev->id : "mvpp2", p);

        port->s = s;
        port->id = p;
        qemu_macaddr_default_if_unset(&port->conf.macaddr);
        port->nic = qemu_new_nic(&mvpp2_net_info, &port->conf,
                                 object_get_typename(OBJECT(dev)), id,
                                 &dev->mem_reentrancy_guard, port);
        qemu_format_nic_info_str(qemu_get_queue(port->nic),
                                 port->conf.macaddr.a);
    }
}

static void mvpp2_unrealize(DeviceState *dev)
{
    MVPP2State *s = MVPP2(dev);
    int i;

    for (i = 0; i < MVPP2_PORTS; i++) {
        qemu_del_nic(s->port[i].nic);
    }
    for (i = 0; i < MVPP2_POOLS; i++) {
        g_free(s->pool[i].dma);
        g_free(s->pool[i].cookie);
    }
    for (i = 0; i < MVPP2_THREADS; i++) {
        g_free(s->thread[i].frame);
    }
}

static void mvpp2_init(Object *obj)
{
    MVPP2State *s = MVPP2(obj);
    SysBusDevice *sbd = SYS_BUS_DEVICE(obj);
    int p, k;

    memory_region_init(&s->container, obj, "mvpp2", 4 * MiB);
    memory_region_init_io(&s->pp, obj, &mvpp2_pp_ops, s, "mvpp2.pp", PP_SIZE);
    memory_region_init_io(&s->iface, obj, &mvpp2_if_ops, s, "mvpp2.iface",
                          IF_SIZE);
    memory_region_add_subregion(&s->container, 0, &s->pp);
    memory_region_add_subregion(&s->container, IF_OFFSET, &s->iface);
    sysbus_init_mmio(sbd, &s->container);
    for (p = 0; p < MVPP2_PORTS; p++) {
        for (k = 0; k < MVPP2_IRQS_PER_PORT; k++) {
            sysbus_init_irq(sbd, &s->irq[p][k]);
        }
    }
}

static Property mvpp2_properties[] = {
    DEFINE_PROP_MACADDR("mac0", MVPP2State, port[0].conf.macaddr),
    DEFINE_PROP_NETDEV("netdev0", MVPP2State, port[0].conf.peers),
    DEFINE_PROP_MACADDR("mac1", MVPP2State, port[1].conf.macaddr),
    DEFINE_PROP_NETDEV("netdev1", MVPP2State, port[1].conf.peers),
    DEFINE_PROP_MACADDR("mac2", MVPP2State, port[2].conf.macaddr),
    DEFINE_PROP_NETDEV("netdev2", MVPP2State, port[2].conf.peers),
    DEFINE_PROP_END_OF_LIST(),
};

static const VMStateDescription vmstate_mvpp2 = {
    .name = TYPE_MVPP2,
    .unmigratable = 1,
};

static void mvpp2_class_init(ObjectClass *klass, void *data)
{
    DeviceClass *dc = DEVICE_CLASS(klass);

    dc->realize = mvpp2_realize;
    dc->unrealize = mvpp2_unrealize;
    dc->reset = mvpp2_reset;
    dc->vmsd = &vmstate_mvpp2;
    dc->desc = "Marvell PPv2.2 packet processor (Armada 7K/8K CP110)";
    dc->user_creatable = true;
    set_bit(DEVICE_CATEGORY_NETWORK, dc->categories);
    device_class_set_props(dc, mvpp2_properties);
}

static const TypeInfo mvpp2_info = {
    .name = TYPE_MVPP2,
    .parent = TYPE_SYS_BUS_DEVICE,
    .instance_size = sizeof(MVPP2State),
    .instance_init = mvpp2_init,
    .class_init = mvpp2_class_init,
};

static void mvpp2_register_types(void)
{
    type_register_static(&mvpp2_info);
}

type_init(mvpp2_register_types)
