"""Shared by the regression scripts in scripts/regress/.

A script names its variants (the A and B of each comparison), how to put the
device into each, and what to measure.  Runs are interleaved (A, B, A, B, ...)
in one boot; every figure is the median of --runs runs.  Results go to
<out>/<name>.json and a PNG plot beside it, and a table with the ratios and the
seed's own number is printed.

Every ratio has a distribution-free confidence interval for the median of
its per-run ratios (order statistics, median_interval()), and its verdict
against the seed comes from that interval, never from the point estimate
(verdict()); an "opposite" verdict fails the script unless the ratio is in
EXPECTED_OPPOSITE (judge()).  A window that cannot be used (a pool re-created, created or
destroyed in it, a short transfer, no packets) is measured again, at most
--retries times, and counted (Bench.run).  Where TCG cannot show a seed's
time effect, a script reports the mechanism as exact per-packet counts
(ppsim's rxN_* counters, the pools' own) and checks them against what the
seed predicts (Bench checks): a failed check fails the script.

Two places to run:
  lab (default)   ppsim devices are created here (modules loaded if needed)
                  and each variant is a ppsim configuration;
  board           --dev IFNAME [--peer HOST]: each variant is a shell command
                  given with --variant NAME='CMD' (e.g. reload a driver
                  build); traffic comes from the peer (see each script).
"""

import argparse
import json
import math
import os
import re
import shutil
import statistics
import subprocess
import sys
import time

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
# The build's ppctl; on a board, where the scripts are a copy, the one
# install.sh put in PATH.
PPCTL = os.environ.get("PPCTL") or next(
    (p for p in (os.path.join(REPO, "build", "bin", "ppctl"), shutil.which("ppctl")) if p and
     os.path.exists(p)), os.path.join(REPO, "build", "bin", "ppctl"))


def log(msg):
    print(msg, flush=True)


def sh(cmd, check=True, capture=False, quiet=False):
    """Run a shell command; with capture, return its stdout."""
    if not quiet:
        log(f"  $ {cmd}")
    r = subprocess.run(cmd, shell=True, text=True,
                       stdout=subprocess.PIPE if capture else None)
    if check and r.returncode != 0:
        raise SystemExit(f"regress: command failed ({r.returncode}): {cmd}")
    return r.stdout if capture else r.returncode


def ppctl(args, capture=True, check=True):
    return sh(f"{PPCTL} {args}", check=check, capture=capture, quiet=True)


def counter(dev, name, netns=None):
    path = f"/sys/class/net/{dev}/statistics/{name}"
    if netns:
        return int(sh(f"ip netns exec {netns} cat {path}", capture=True, quiet=True))
    with open(path) as f:
        return int(f.read())


def ethtool_stats(dev, netns=None):
    """@dev's ethtool -S counters by name; none from a driver without them."""
    pre = f"ip netns exec {netns} " if netns else ""
    out = sh(f"{pre}ethtool -S {dev} 2>/dev/null", capture=True, quiet=True, check=False)
    stats = {}
    for line in out.splitlines()[1:]:
        k, _, v = line.strip().partition(":")
        if v.strip().isdigit():
            stats[k.strip()] = int(v)
    return stats


PAGE_SOURCES = ("pages_from_cache", "pages_from_ring", "pages_from_stack", "pages_from_alloc")


def _hit(deltas):
    """Hit rate of per-pool page-source deltas; None if nothing was served."""
    recycled = served = 0
    for d in deltas:
        r = d["pages_from_cache"] + d["pages_from_ring"] + d["pages_from_stack"]
        recycled += r
        served += r + d["pages_from_alloc"]
    return recycled / served if served else None


def hit_rate(interval_doc, ifname=None):
    """Allocation hit rate over one `ppctl stats --interval` window, all pools
    of @ifname together (Documentation/stats.rst).  A pool whose window is a
    reset (re-created, a counter went down: null deltas) makes the window
    unusable: None, as for a window that served nothing."""
    deltas = []
    for p in interval_doc.get("pools", []):
        if ifname and p.get("ifname") != ifname:
            continue
        d = p.get("delta")
        if p.get("reset") or not d or any(d.get(k) is None for k in PAGE_SOURCES):
            return None
        deltas.append(d)
    return _hit(deltas)


def pool_snapshot(ifname, netns=None):
    """{pool id: counters} of @ifname's ppkit pools now (one `ppctl --json
    stats`), or None if ppctl gave no document."""
    pre = f"ip netns exec {netns} " if netns else ""
    out = sh(f"{pre}{PPCTL} --json stats", capture=True, check=False, quiet=True)
    try:
        doc = json.loads(out)
    except ValueError:
        return None
    return {p["id"]: p["counters"] for p in doc.get("pools", [])
            if p.get("source") == "ppkit" and p.get("counters") and
            (not ifname or p.get("ifname") == ifname)}


def interval_problem(interval_doc, ifname=None, require=True):
    """Why one `ppctl --json stats --interval` window of @ifname's pools
    cannot be used, or None: a pool re-created or whose counter went down
    in it (reset: true, null deltas), or, with @require, no pool at all."""
    pools = [p for p in interval_doc.get("pools", [])
             if not ifname or p.get("ifname") == ifname]
    for p in pools:
        d = p.get("delta")
        if p.get("reset") or not d or any(d.get(k) is None for k in PAGE_SOURCES):
            return "reset"
    return None if pools or not require else "pool missing"


def snapshot_problem(before, after):
    """Why the window between two pool_snapshot()s cannot be used, or None:
    ppctl gave no document, a pool was destroyed or created in it, or a
    counter went down (a pool re-created under the same id)."""
    if before is None or after is None:
        return "no pool snapshot"
    if set(before) - set(after):
        return "pool destroyed"
    if set(after) - set(before):
        return "pool created"
    for pid, c1 in after.items():
        c0 = before[pid]
        if any(c1.get(k) is None or c0.get(k) is None or c1[k] < c0[k] for k in PAGE_SOURCES):
            return "reset"
    return None


def hit_between(before, after):
    """Allocation hit rate between two pool_snapshot()s, over the pools in
    both; None if either is missing, nothing was served, or a counter went
    down (a pool re-created under the same id)."""
    if before is None or after is None:
        return None
    deltas = []
    for pid, c1 in after.items():
        c0 = before.get(pid)
        if c0 is None:
            continue
        d = {k: c1[k] - c0[k] for k in PAGE_SOURCES}
        if min(d.values()) < 0:
            return None
        deltas.append(d)
    return _hit(deltas)


def queue_sum(stats, name):
    """The sum of a per-RX-queue counter (ethtool -S rxN_NAME) over the queues."""
    pat = re.compile(rf"rx\d+_{re.escape(name)}")
    vals = [v for k, v in stats.items() if pat.fullmatch(k)]
    return sum(vals) if vals else None


# ethtool -S counters of the mechanism counts: ppsim's per queue (summed),
# the pools' device-wide ones (Documentation/ppsim.rst)
QUEUE_COUNTS = ("packets", "bytes", "copy_bytes", "page_allocs", "dma_maps", "far_pages")
POOL_COUNTS = ("rx_ppb_pages_allocated", "rx_native_pages_allocated")


def rx_books(dev, netns=None, pools=True):
    """Everything measure_rx() reads of @dev at one moment: rx_packets, the
    mechanism counters (ethtool -S), and @dev's ppkit pools (pool_snapshot,
    with pools)."""
    st = ethtool_stats(dev, netns)
    books = {k: queue_sum(st, k) for k in QUEUE_COUNTS}
    books.update({k: st.get(k) for k in POOL_COUNTS})
    books["rx_packets"] = counter(dev, "rx_packets", netns)
    books["pools"] = pool_snapshot(dev, netns) if pools else None
    return books


def per_packet(b0, b1, pool=None):
    """The mechanism counts of the window between two rx_books(), per packet
    received (Documentation/regress.rst): bytes received and copied,
    pages taken from the page allocator and DMA mappings made (ppsim's own
    with pool "none", else the pool's pages: a pool maps each page it
    allocates once), far-node buffers posted, and bytes the ppkit pools
    synced for the device (per packet, and per sync: exact).  Empty without packets; a count whose counter
    is missing (a board's driver) is left out."""
    def d(k):
        return b1[k] - b0[k] if b0.get(k) is not None and b1.get(k) is not None else None

    pkts = d("packets")
    if not pkts or pkts <= 0:
        return {}
    c = {"rx_bytes_per_packet": d("bytes"), "copy_bytes_per_packet": d("copy_bytes"),
         "far_pages_per_packet": d("far_pages")}
    if pool == "none":
        c["page_allocs_per_packet"] = d("page_allocs")
        c["dma_maps_per_packet"] = d("dma_maps")
    elif pool in ("ppkit", "native"):
        allocs = d("rx_ppb_pages_allocated" if pool == "ppkit" else "rx_native_pages_allocated")
        c["page_allocs_per_packet"] = c["dma_maps_per_packet"] = allocs
    out = {k: v / pkts for k, v in c.items() if v is not None}
    p0, p1 = b0.get("pools"), b1.get("pools")
    if pool == "ppkit" and p0 and p1 and set(p0) == set(p1):
        def pools_d(k):
            return sum(p1[i].get(k, 0) - p0[i].get(k, 0) for i in p1)

        synced, syncs = pools_d("sync_for_device_bytes"), pools_d("sync_for_device")
        out["sync_dev_bytes_per_packet"] = synced / pkts
        # a sync per buffer given back: exact, where the per-packet figure
        # moves with the pages in flight at the window's two ends
        if syncs > 0:
            out["sync_dev_bytes_per_sync"] = synced / syncs
    return out


ALLOC_METRICS = [("page_allocs_per_packet", "allocs/pkt", "{:.4f}"),
                 ("dma_maps_per_packet", "maps/pkt", "{:.4f}")]


def alloc_checks(none, pools):
    """Seed 000's and 004's mechanism as checks on ALLOC_METRICS: variant
    @none takes a page from the allocator and maps it for every packet
    (within 5%: the ring's fill level at the window's two ends), each of
    @pools (recycling) fewer than one a hundred packets."""
    out = []
    for key, what in (("page_allocs_per_packet", "pages allocated"),
                      ("dma_maps_per_packet", "pages mapped")):
        out.append(check(f"no pool: one page {what.split()[1]} per packet", none, key, 0.95, 1.05))
        out += [check(f"{p}: recycled, ~0 {what} per packet", p, key, None, 0.01) for p in pools]
    return out


SYNC_METRICS = [("rx_bytes_per_packet", "bytes/pkt", "{:.1f}"),
                ("sync_dev_bytes_per_packet", "synced/pkt", "{:.1f}"),
                ("sync_dev_bytes_per_sync", "synced/sync", "{:.1f}")]


def sync_checks(precise, full):
    """Seed 001 #2's mechanism as checks on SYNC_METRICS' exact figure, the
    bytes of a sync for the device: a precise pool syncs what the device
    may have written, at most its buffer (max_len: 1518 bytes for MTU 1500,
    Ethernet and VLAN headers and the MTU); a full one the page after the
    headroom (4096 - 256 with XDP's headroom, 4096 - 64 without)."""
    return [check(f"{precise}: a sync covers at most the 1518-byte buffer", precise,
                  "sync_dev_bytes_per_sync", None, 1518),
            check(f"{full}: a sync covers the page after the headroom", full,
                  "sync_dev_bytes_per_sync", 4096 - 256, 4096)]


def native_recycles_skbs():
    """Whether this kernel's page_pool recycles pages that went up the stack
    (skb_mark_for_recycle, 5.14+)."""
    m = re.match(r"(\d+)\.(\d+)", os.uname().release)
    return bool(m) and (int(m.group(1)), int(m.group(2))) >= (5, 14)


def measure_rx(dev, seconds, netns=None, pools=True, pool=None, counts=False):
    """RX packets/s on @dev over @seconds, the allocation hit rate of its
    ppkit pools around the same window (None without ppkit pools), and
    "invalid": why the window cannot be used (None when it can: see
    snapshot_problem(); also a window without packets or whose rx_packets
    went down).  With @counts, "metrics": the window's per_packet() counts
    for pool @pool.  Pools and counters are read before and after the
    timed window, never inside it: on the RX CPU, ppctl's own run would be
    charged to one variant only."""
    def books():
        if counts:
            return rx_books(dev, netns, pools)
        return {"pools": pool_snapshot(dev, netns) if pools else None,
                "rx_packets": counter(dev, "rx_packets", netns)}

    b0 = books()
    t0 = time.monotonic()
    time.sleep(seconds)
    t1 = time.monotonic()
    b1 = books()
    before, after, a, b = b0["pools"], b1["pools"], b0["rx_packets"], b1["rx_packets"]
    why = snapshot_problem(before, after) if pools else None
    if why is None and b <= a:
        why = "no packets" if b == a else "reset"
    m = {"pps": (b - a) / (t1 - t0), "hit": hit_between(before, after), "invalid": why}
    if counts:
        m["metrics"] = per_packet(b0, b1, pool)
    return m


def run_ratios(a, b):
    """The per-run ratios a[i] / b[i], runs where either is missing left
    out.  A and B of one run are measured back to back, so a change of the
    emulator's speed during the boot (seen here: 35% within a minute)
    cancels out of each ratio, where it would skew a ratio of medians."""
    return [x / y for x, y in zip(a, b) if x and y]


CI_LEVEL = 0.95


def median_interval(values, level=CI_LEVEL):
    """Distribution-free confidence interval for the median of @values:
    the order statistics x(k) and x(n+1-k) of the n sorted values, with the
    largest k whose coverage 1 - 2 P(Binomial(n, 1/2) < k) is at least
    @level (exact for any continuous distribution, no resampling).  Below
    6 values no interval reaches 95%: then [min, max] and its own coverage
    (75% for 3 values, 93.75% for 5).  Returns (low, high, coverage), or
    None without values."""
    x = sorted(values)
    n = len(x)
    if not n:
        return None

    def coverage(k):
        return 1 - 2 * sum(math.comb(n, i) for i in range(k)) / 2 ** n

    k = 1
    while k + 1 <= (n + 1) // 2 and coverage(k + 1) >= level:
        k += 1
    return x[k - 1], x[n - k], coverage(k)


def verdict(low, high, seed=None):
    """What a ratio's interval says against the seed's ratio: "same" (the
    interval lies wholly on the seed's side of 1.0), "opposite" (wholly on
    the other side), "not distinguishable from 1.0" (it contains 1.0).
    Without a seed (or a seed of 1.0): "above 1.0" or "below 1.0" for an
    interval clear of 1.0."""
    if low is None or high is None:
        return "no data"
    if low <= 1.0 <= high:
        return "not distinguishable from 1.0"
    above = low > 1.0
    if seed is None or seed == 1.0:
        return "above 1.0" if above else "below 1.0"
    return "same" if above == (seed > 1.0) else "opposite"


# The one list of ratios whose verdict may be "opposite" to the seed's in
# the lab (TCG), each with why (Documentation/regress.rst, "Expected
# deviations").  Any other "opposite" is a failure: the script that measured
# it exits non-zero (after writing its JSON), and so does summary.py.  On a
# board the list does not apply: there every "opposite" fails.
EXPECTED_OPPOSITE = {
    ("numa", "far: rule/no rule"):
        "TCG has one memory with one latency: a far page costs what a near one "
        "does, so the rule can only add work (far pages released, new ones "
        "allocated); its mechanism is checked (far_pages_per_packet)",
    ("numa", "near: rule/no rule"):
        "the seed's near-node figure is no change (10.9 against 11.0 Mpps, 1% "
        "apart): which side of 1.0 it falls is not a claim",
}


def judge(name, label, verdict_text, mode="lab"):
    """A ratio's verdict against its seed: ("pass", "") unless it is
    "opposite"; then ("expected", why) for a ratio of EXPECTED_OPPOSITE in
    the lab, else ("FAIL", "opposite to the seed")."""
    if verdict_text != "opposite":
        return "pass", ""
    why = EXPECTED_OPPOSITE.get((name, label))
    if why and mode != "board":
        return "expected", why
    return "FAIL", "opposite to the seed"


def fmt_verdict(r):
    """The verdict as the tables print it: with FAIL or "expected" for an
    "opposite" one (r["judgement"], judge())."""
    j = r.get("judgement", "pass")
    if j == "FAIL":
        return f"{r['verdict']} (FAIL: a reversed seed)"
    if j == "expected":
        return f"{r['verdict']} (expected in the lab: {r.get('expected_deviation', '')})"
    return r["verdict"]


def ratio_summary(per_run, seed=None):
    """A ratio from its per-run ratios: the median, the interval of
    median_interval() and the verdict() of that interval."""
    ci = median_interval(per_run)
    lo, hi, cov = ci if ci else (None, None, None)
    return {"ratio": statistics.median(per_run) if per_run else None,
            "ci_low": lo, "ci_high": hi, "ci_level": cov,
            "ci_method": "order statistics of the per-run ratios (exact, distribution-free)",
            "per_run": per_run, "verdict": verdict(lo, hi, seed)}


def check(text, variant, metric, lo=None, hi=None):
    """A mechanism check: the median over the valid runs of @variant's
    per-run @metric lies in [lo, hi]; a bound may name another metric of
    the same variant (its median)."""
    return {"text": text, "variant": variant, "metric": metric, "min": lo, "max": hi}


def evaluate_checks(checks, medians, required=True):
    """Each check() with "observed" (the median), "bounds" (resolved) and
    "result": "pass", "FAIL", or "n/a" when the metric was not measured and
    not @required (a board's driver has no ppsim counters); unmeasured and
    @required is a FAIL.  @medians: {variant: {metric: median}}."""
    out = []
    for c in checks:
        got = medians.get(c["variant"], {})

        def bound(b):
            return got.get(b) if isinstance(b, str) else b

        obs, lo, hi = got.get(c["metric"]), bound(c["min"]), bound(c["max"])
        if obs is None or (isinstance(c["min"], str) and lo is None) or \
                (isinstance(c["max"], str) and hi is None):
            res = "FAIL" if required else "n/a"
        else:
            res = "pass" if (lo is None or obs >= lo) and (hi is None or obs <= hi) else "FAIL"
        out.append(dict(c, observed=obs, bounds=[lo, hi], result=res))
    return out


class Bench:
    """One regression scenario: variants, runs, report."""

    def __init__(self, name, doc, variants, ratios, metric, unit, runs=6, seconds=3,
                 metrics=(), checks=()):
        self.name = name
        # [(key, label, format)]: more per-run figures a measure() returns
        # under "metrics" (e.g. allocations per packet): medians reported
        self.metrics = list(metrics)
        # [check()]: what the seed predicts of those figures; a failed
        # check fails the script
        self.checks = list(checks)
        self.doc = doc
        self.variants = variants          # ordered names
        self.ratios = ratios              # [(label, a, b, seed or None, seed_text)]
        self.metric = metric              # e.g. "rx_pps"
        self.unit = unit
        p = argparse.ArgumentParser(description=doc,
                                    formatter_class=argparse.RawDescriptionHelpFormatter)
        p.add_argument("--dev", help="board mode: the interface under test")
        p.add_argument("--peer", help="board mode: the traffic peer (ssh destination)")
        p.add_argument("--peer-dev", help="board mode: the peer's interface towards --dev "
                                          "(scripts that send with pktgen from the peer)")
        p.add_argument("--variant", action="append", default=[], metavar="NAME=CMD",
                       help=f"board mode: command putting --dev into variant NAME "
                            f"({', '.join(variants)})")
        p.add_argument("--runs", type=int, default=runs,
                       help="runs per variant (>= 6 for a 95%% interval)")
        p.add_argument("--retries", type=int, default=3,
                       help="times a run's window that cannot be used is measured again")
        p.add_argument("--seconds", type=float, default=seconds, help="measured window per run")
        p.add_argument("--out", default=os.path.join(REPO, "build", "regress"))
        self.parser = p
        self.samples = {v: [] for v in variants}
        # per variant: [{"run": N, "reason": WHY}] of the windows measured again
        self.remeasured = {v: [] for v in variants}
        self.extra = {}

    def parse(self, argv=None):
        a = self.parser.parse_args(argv)
        if a.runs < 1 or a.seconds <= 0 or a.retries < 0:
            self.parser.error("--runs and --seconds must be positive, --retries not negative")
        self.board_cmds = {}
        for v in a.variant:
            k, sep, cmd = v.partition("=")
            if not sep or k not in self.variants:
                self.parser.error(f"--variant takes NAME=CMD with NAME one of {self.variants}")
            self.board_cmds[k] = cmd
        if a.dev and set(self.board_cmds) != set(self.variants):
            self.parser.error(f"board mode needs --variant for each of {self.variants}")
        self.args = a
        return a

    @property
    def board(self):
        return bool(self.args.dev)

    def switch(self, variant, lab_setup):
        if self.board:
            sh(self.board_cmds[variant])
        else:
            lab_setup(variant)

    def measure_once(self, r, v, setup, measure, settle):
        """Run @r of variant @v: a measure() whose "invalid" says why its
        window cannot be used is switched, settled and measured again, at
        most --retries times; each is counted.  A run still invalid then
        keeps no value (its ratios leave it out)."""
        for attempt in range(self.args.retries + 1):
            self.switch(v, setup)
            time.sleep(settle)
            m = measure(v)
            why = m.get("invalid")
            if not why:
                return m
            self.remeasured[v].append({"run": r + 1, "reason": why})
            log(f"  run {r + 1}/{self.args.runs} {v:>18}: window not usable ({why})"
                + (": measuring again" if attempt < self.args.retries else
                   f": given up after {self.args.retries} retries"))
        return {"value": None, "invalid": why}

    def run(self, setup, measure, settle=1.0):
        """Interleave: every run measures every variant once, in turn."""
        for r in range(self.args.runs):
            for v in self.variants:
                m = self.measure_once(r, v, setup, measure, settle)
                self.samples[v].append(m)
                if m.get("value") is None:
                    continue
                hit = m.get("hit")
                more = "".join(f"  {label} {fmt.format(m['metrics'][key])}"
                               for key, label, fmt in self.metrics
                               if m.get("metrics", {}).get(key) is not None)
                log(f"  run {r + 1}/{self.args.runs} {v:>18}: {m['value']:14.1f} {self.unit}"
                    + (f"  hit {hit * 100:.2f}%" if hit is not None else "") + more)

    def median(self, v, key="value"):
        vals = [s[key] for s in self.samples[v] if s.get(key) is not None]
        return statistics.median(vals) if vals else None

    def metric_median(self, v, key):
        vals = [s["metrics"][key] for s in self.samples[v]
                if s.get("metrics", {}).get(key) is not None]
        return (statistics.median(vals), len(vals)) if vals else (None, 0)

    def remeasure_summary(self, v):
        """How often variant @v's windows were measured again, and why."""
        reasons = {}
        for e in self.remeasured[v]:
            reasons[e["reason"]] = reasons.get(e["reason"], 0) + 1
        lost = len([s for s in self.samples[v] if s.get("value") is None])
        return {"remeasured": len(self.remeasured[v]), "remeasure_reasons": reasons,
                "lost_runs": lost}

    def report(self, notes=()):
        """Write <out>/<name>.json and the plot, print the table; exits 1
        (after writing them) if a mechanism check failed, a ratio has no
        data, or a ratio's verdict is "opposite" to its seed and not an
        expected deviation (judge())."""
        os.makedirs(self.args.out, exist_ok=True)
        rows = []
        for v in self.variants:
            rows.append(dict({"variant": v, "metric": self.metric, "median": self.median(v),
                              "runs": len([s for s in self.samples[v]
                                           if s.get("value") is not None]),
                              "samples": [s.get("value") for s in self.samples[v]]},
                             **self.remeasure_summary(v)))
            h = self.median(v, "hit")
            if h is not None:
                rows.append({"variant": v, "metric": "alloc_hit_rate", "median": h,
                             "runs": len([s for s in self.samples[v] if s.get("hit") is not None])})
            for key, _, _ in self.metrics:
                med, n = self.metric_median(v, key)
                if med is not None:
                    rows.append({"variant": v, "metric": key, "median": med, "runs": n})
        ratios = {}
        for label, a, b, seed, seed_text in self.ratios:
            ma, mb = self.median(a), self.median(b)
            per_run = run_ratios([s.get("value") for s in self.samples[a]],
                                 [s.get("value") for s in self.samples[b]])
            ratios[label] = dict({"a": a, "b": b,
                                  "ratio_of_medians": (ma / mb) if ma and mb else None,
                                  "seed": seed, "seed_source": seed_text},
                                 **ratio_summary(per_run, seed))
            j, why = judge(self.name, label, ratios[label]["verdict"],
                           "board" if self.board else "lab")
            ratios[label]["judgement"] = j
            if j == "expected":
                ratios[label]["expected_deviation"] = why
        medians = {v: {key: self.metric_median(v, key)[0] for key, _, _ in self.metrics}
                   for v in self.variants}
        checks = evaluate_checks(self.checks, medians, required=not self.board)
        doc = {"name": self.name, "mode": "board" if self.board else "lab",
               "dev": self.args.dev, "unit": self.unit, "seconds": self.args.seconds,
               "rows": rows, "ratios": ratios, "checks": checks,
               "extra": self.extra, "notes": list(notes),
               "kernel": os.uname().release, "time": time.strftime("%Y-%m-%dT%H:%M:%SZ",
                                                                    time.gmtime())}
        path = os.path.join(self.args.out, f"{self.name}.json")
        with open(path, "w") as f:
            json.dump(doc, f, indent=1, sort_keys=True)
            f.write("\n")

        log(f"\n{self.name}: medians of {self.args.runs} interleaved runs, one boot ({self.unit})")
        log(f"  {'variant':>18} {'median':>14} {'hit rate':>9} {'re-measured':>11}"
            + "".join(f" {label:>12}" for _, label, _ in self.metrics))
        for v, row in zip(self.variants, [r for r in rows if "samples" in r]):
            h = self.median(v, "hit")
            m = self.median(v)
            more = ""
            for key, _, fmt in self.metrics:
                med = self.metric_median(v, key)[0]
                more += f" {fmt.format(med) if med is not None else '-':>12}"
            redo = f"{row['remeasured']}" + (f" ({row['lost_runs']} lost)" if row["lost_runs"] else "")
            log(f"  {v:>18} {m if m is not None else float('nan'):14.1f} "
                + (f"{h * 100:8.2f}%" if h is not None else f"{'-':>9}") + f" {redo:>11}" + more)
            for why, n in row["remeasure_reasons"].items():
                log(f"  {'':>18} re-measured {n}x: {why}")
        log(f"  {'ratio (median of per-run ratios)':>30} {'here':>7} {'interval':>15} "
            f"{'level':>6} {'seed':>7}  verdict")
        for label, r in ratios.items():
            log(f"  {label:>30} {fmt_ratio(r['ratio']):>7} {fmt_interval(r):>15} "
                f"{fmt_level(r):>6} {fmt_ratio(r['seed']):>7}  {fmt_verdict(r)}")
        if checks:
            log("  mechanism checks (medians over the runs):")
        for c in checks:
            log(f"    {c['result']:>4}  {c['text']}: {c['variant']} {c['metric']} = "
                f"{fmt_count(c['observed'])}, expected {fmt_bounds(c['bounds'])}")
        for n in notes:
            log(f"  note: {n}")
        self.plot(path)
        log(f"  -> {path}")
        bad = [c["text"] for c in checks if c["result"] == "FAIL"] + \
              [label for label, r in ratios.items() if r["ratio"] is None] + \
              [f"{label}: opposite to the seed" for label, r in ratios.items()
               if r["judgement"] == "FAIL"]
        if bad:
            raise SystemExit(f"{self.name}: failed: {'; '.join(bad)}")
        return doc

    def plot(self, json_path):
        plot_json(json_path)


def plot_json(json_path):
    """<name>.png beside a script's <name>.json: every run of the measured
    metric as a point, each variant's median as a bar (gnuplot).  From the
    document alone, so that the machine that has gnuplot draws what a board
    without it measured (tests/boards/regress.py)."""
    gp = shutil.which("gnuplot")
    if not gp:
        log("  (gnuplot missing: no plot; run scripts/deps.sh, or draw it elsewhere: "
            "python3 scripts/regress/rlib.py plot JSON)")
        return
    with open(json_path) as f:
        doc = json.load(f)
    rows = [r for r in doc["rows"] if "samples" in r]
    variants = [r["variant"] for r in rows]
    metric = rows[0]["metric"] if rows else "-"
    runs = max((len(r["samples"]) for r in rows), default=0)
    png = json_path[:-5] + ".png"
    dat = json_path[:-5] + ".dat"
    with open(dat, "w") as f:
        for i, r in enumerate(rows):
            for v in r["samples"]:
                if v is not None:
                    f.write(f"{i} {v}\n")
    where = "one boot" if doc.get("mode") != "board" else f"board, {doc.get('kernel')}"
    script = f"""
set terminal pngcairo size 800,480 noenhanced
set output '{png}'
set title '{doc["name"]}: {metric} per run ({runs} runs, {where})'
set ylabel '{doc["unit"]}'
set xtics ({', '.join(f'"{v}" {i}' for i, v in enumerate(variants))})
set xrange [-0.5:{len(variants) - 0.5}]
set yrange [0:*]
set grid ytics
set boxwidth 0.5
plot '{dat}' using 1:2 with points pt 7 ps 1.2 title 'runs', \\
     '-' using 1:2 with boxes fs transparent solid 0.3 title 'median'
"""
    for i, r in enumerate(rows):
        script += f"{i} {r['median'] or 0}\n"
    script += "e\n"
    r = subprocess.run([gp], input=script, text=True, capture_output=True)
    if r.returncode != 0:
        log(f"  gnuplot failed: {r.stderr.strip()}")
    else:
        log(f"  -> {png}")


def fmt_ratio(x):
    return f"{x:.3f}" if x else "-"


def fmt_interval(r):
    if r.get("ci_low") is None:
        return "-"
    return f"[{r['ci_low']:.3f}, {r['ci_high']:.3f}]"


def fmt_level(r):
    return f"{r['ci_level'] * 100:.1f}%" if r.get("ci_level") is not None else "-"


def fmt_count(x):
    if x is None:
        return "not measured"
    return f"{x:.0f}" if x == int(x) and abs(x) >= 1 else f"{x:.4g}"


def fmt_bounds(b):
    lo, hi = b
    if lo is not None and hi is not None:
        return f"{fmt_count(lo)} .. {fmt_count(hi)}" if lo != hi else f"= {fmt_count(lo)}"
    if lo is not None:
        return f">= {fmt_count(lo)}"
    return f"<= {fmt_count(hi)}" if hi is not None else "anything"


# ---- a board: traffic from the peer ----------------------------------------------

class PeerPktgen:
    """Board mode: scripts/regress/pktgen.sh on the peer (ssh --peer, relative
    to its login directory) sending SIZE-byte UDP frames out of --peer-dev to
    @dev's MAC and IPv4 address, as fast as it can, until stop()."""

    def __init__(self, args, dev, size=60):
        if not args.peer or not args.peer_dev:
            raise SystemExit("regress: board mode sends from the peer: pass --peer USER@HOST "
                             "and --peer-dev (the peer's interface cabled to --dev)")
        self.peer = args.peer
        with open(f"/sys/class/net/{dev}/address") as f:
            mac = f.read().strip()
        addr = sh(f"ip -4 -o addr show dev {dev} | awk '{{print $4}}' | cut -d/ -f1",
                  capture=True, quiet=True).split()
        # A terminal for the session (-tt): closing it hangs pktgen.sh up, and a
        # signal makes pktgen stop its threads.  While the peer sends at line
        # rate, a new connection to it may never get through the port under
        # test; this one is already open.
        cmd = ["ssh", "-tt", self.peer, "scripts/regress/pktgen.sh", "--dev", args.peer_dev,
               "--dst-mac", mac, "--dst", addr[0] if addr else "198.19.0.2",
               "--size", str(size), "--cpu", "0"]
        log(f"  $ {' '.join(cmd)} &")
        self.proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stdin=subprocess.DEVNULL,
                                     text=True)
        # pktgen is running once the port receives
        c0 = counter(dev, "rx_packets")
        deadline = time.monotonic() + 30
        while counter(dev, "rx_packets") - c0 < 1000:
            if self.proc.poll() is not None or time.monotonic() > deadline:
                self.stop()
                raise SystemExit(f"regress: no frames from the peer's pktgen on {dev} within 30 s")
            time.sleep(0.2)

    def stop(self, dev=None):
        self.proc.terminate()
        try:
            out = self.proc.communicate(timeout=30)[0]
            log("  peer's pktgen: " + " ".join(out.split())[:200])
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.communicate()
        if dev:
            # the peer has stopped once the port hears (almost) nothing
            deadline = time.monotonic() + 60
            while time.monotonic() < deadline:
                c0 = counter(dev, "rx_packets")
                time.sleep(1)
                if counter(dev, "rx_packets") - c0 < 100:
                    return
            log(f"  the peer's pktgen still sends to {dev} 60 s after the stop")


# ---- the lab: ppsim devices ---------------------------------------------------

def lab_modules():
    """Load pp_backport and ppsim (no devices from parameters) if absent."""
    mods = sh("cat /proc/modules", capture=True, quiet=True)
    if "pp_backport " not in mods:
        sh(f"insmod {REPO}/kmod/pool/pp_backport.ko")
    if "ppsim " not in mods:
        # the lab under TCG: XDP without the dispatcher (scripts/lab/run)
        disp = os.environ.get("PPSIM_XDP_DISPATCHER", "Y")
        sh(f"insmod {REPO}/kmod/sim/ppsim.ko devs=0 xdp_dispatcher={disp}")


def sim_add(pair=False, rx_queues=1, ring=256):
    out = ppctl(f"sim add --rx-queues {rx_queues} --ring-size {ring}" + (" --pair" if pair else ""))
    names = [line.strip() for line in out.splitlines() if line.strip()]
    for n in names:
        sh(f"ip link set {n} up", quiet=True)
    return names


def sim_set(dev, **knobs):
    opts = " ".join(f"--{k.replace('_', '-')} {v}" for k, v in knobs.items())
    ppctl(f"sim set {dev} {opts}")


def gen_start(dev, **opts):
    o = " ".join(f"--{k.replace('_', '-')} {v}" for k, v in opts.items())
    ppctl(f"sim gen start {dev} {o}")


def gen_stop(dev):
    log("  " + ppctl(f"sim gen stop {dev}", check=False).strip())


def xdp(dev, prog=None, netns=None):
    pre = f"ip netns exec {netns} " if netns else ""
    if prog:
        sh(f"{pre}{PPCTL} xdp attach {dev} --prog {prog} --force", quiet=True)
    else:
        sh(f"{pre}{PPCTL} xdp detach {dev}", quiet=True, check=False)


def online_cpus():
    return os.cpu_count() or 1


def require_root():
    if os.geteuid() != 0:
        raise SystemExit("regress: needs root (modules, netns, pktgen)")
    if not os.path.exists(PPCTL):
        raise SystemExit(f"regress: {PPCTL} missing: run make tools")
    sys.stdout.reconfigure(line_buffering=True)


if __name__ == "__main__":
    # python3 scripts/regress/rlib.py plot JSON...: draw the plots of results
    # measured where gnuplot is missing (a board)
    if len(sys.argv) < 3 or sys.argv[1] != "plot":
        raise SystemExit("usage: rlib.py plot JSON...")
    for path in sys.argv[2:]:
        plot_json(path)
