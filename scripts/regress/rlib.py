"""Shared by the regression scripts in scripts/regress/.

A script names its variants (the A and B of each comparison), how to put the
device into each, and what to measure.  Runs are interleaved (A, B, A, B, ...)
in one boot; every figure is the median of --runs runs.  Results go to
<out>/<name>.json and a PNG plot beside it, and a table with the ratios and the
seed's own number is printed.

Two places to run:
  lab (default)   ppsim devices are created here (modules loaded if needed)
                  and each variant is a ppsim configuration;
  board           --dev IFNAME [--peer HOST]: each variant is a shell command
                  given with --variant NAME='CMD' (e.g. reload a driver
                  build); traffic comes from the peer (see each script).
"""

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import time

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
PPCTL = os.environ.get("PPCTL", os.path.join(REPO, "build", "bin", "ppctl"))


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
    pre = f"ip netns exec {netns} " if netns else ""
    out = sh(f"{pre}ethtool -S {dev}", capture=True, quiet=True)
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


def measure_rx(dev, seconds, netns=None, pools=True):
    """RX packets/s on @dev over @seconds, and the allocation hit rate of its
    ppkit pools around the same window (None without ppkit pools).  The
    pools are read before and after the timed window, never inside it: on
    the RX CPU, ppctl's own run would be charged to one variant only."""
    before = pool_snapshot(dev, netns) if pools else None
    a = counter(dev, "rx_packets", netns)
    t0 = time.monotonic()
    time.sleep(seconds)
    t1 = time.monotonic()
    b = counter(dev, "rx_packets", netns)
    after = pool_snapshot(dev, netns) if pools else None
    return {"pps": (b - a) / (t1 - t0), "hit": hit_between(before, after)}


def paired_ratio(a, b):
    """Median of the per-run ratios a[i] / b[i].  A and B of one run are
    measured back to back, so a change of the emulator's speed during the
    boot (seen here: 35% within a minute) cancels out of each ratio."""
    r = [x / y for x, y in zip(a, b) if x and y]
    return statistics.median(r) if r else None


class Bench:
    """One regression scenario: variants, runs, report."""

    def __init__(self, name, doc, variants, ratios, metric, unit, runs=5, seconds=3,
                 metrics=()):
        self.name = name
        # [(key, label, format)]: more per-run figures a measure() returns
        # under "metrics" (e.g. allocations per packet): medians reported
        self.metrics = list(metrics)
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
        p.add_argument("--runs", type=int, default=runs, help="runs per variant (>= 5 for reports)")
        p.add_argument("--seconds", type=float, default=seconds, help="measured window per run")
        p.add_argument("--out", default=os.path.join(REPO, "build", "regress"))
        self.parser = p
        self.samples = {v: [] for v in variants}
        self.extra = {}

    def parse(self, argv=None):
        a = self.parser.parse_args(argv)
        if a.runs < 1 or a.seconds <= 0:
            self.parser.error("--runs and --seconds must be positive")
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

    def run(self, setup, measure, settle=1.0):
        """Interleave: every run measures every variant once, in turn."""
        for r in range(self.args.runs):
            for v in self.variants:
                self.switch(v, setup)
                time.sleep(settle)
                m = measure(v)
                self.samples[v].append(m)
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

    def report(self, notes=()):
        os.makedirs(self.args.out, exist_ok=True)
        rows = []
        for v in self.variants:
            rows.append({"variant": v, "metric": self.metric, "median": self.median(v),
                         "runs": len(self.samples[v]),
                         "samples": [s["value"] for s in self.samples[v]]})
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
            ratios[label] = {"a": a, "b": b, "ratio": paired_ratio(
                                 [s["value"] for s in self.samples[a]],
                                 [s["value"] for s in self.samples[b]]),
                             "ratio_of_medians": (ma / mb) if ma and mb else None,
                             "seed": seed, "seed_source": seed_text}
        doc = {"name": self.name, "mode": "board" if self.board else "lab",
               "dev": self.args.dev, "unit": self.unit, "seconds": self.args.seconds,
               "rows": rows, "ratios": ratios, "extra": self.extra, "notes": list(notes),
               "kernel": os.uname().release, "time": time.strftime("%Y-%m-%dT%H:%M:%SZ",
                                                                    time.gmtime())}
        path = os.path.join(self.args.out, f"{self.name}.json")
        with open(path, "w") as f:
            json.dump(doc, f, indent=1, sort_keys=True)
            f.write("\n")

        log(f"\n{self.name}: medians of {self.args.runs} interleaved runs, one boot ({self.unit})")
        log(f"  {'variant':>18} {'median':>14} {'hit rate':>9}"
            + "".join(f" {label:>12}" for _, label, _ in self.metrics))
        for v in self.variants:
            h = self.median(v, "hit")
            m = self.median(v)
            more = ""
            for key, _, fmt in self.metrics:
                med = self.metric_median(v, key)[0]
                more += f" {fmt.format(med) if med is not None else '-':>12}"
            log(f"  {v:>18} {m if m is not None else float('nan'):14.1f} "
                + (f"{h * 100:8.2f}%" if h is not None else f"{'-':>9}") + more)
        log(f"  {'ratio (median of per-run ratios)':>30} {'here':>7} {'seed':>7}")
        for label, r in ratios.items():
            here = f"{r['ratio']:.3f}" if r["ratio"] else "-"
            seed = f"{r['seed']:.3f}" if r["seed"] else "-"
            log(f"  {label:>30} {here:>7} {seed:>7}")
        for n in notes:
            log(f"  note: {n}")
        self.plot(path)
        log(f"  -> {path}")
        return doc

    def plot(self, json_path):
        gp = shutil.which("gnuplot")
        if not gp:
            log("  (gnuplot missing: no plot; run scripts/deps.sh)")
            return
        png = json_path[:-5] + ".png"
        dat = json_path[:-5] + ".dat"
        with open(dat, "w") as f:
            for i, v in enumerate(self.variants):
                for s in self.samples[v]:
                    f.write(f"{i} {s['value']}\n")
        script = f"""
set terminal pngcairo size 800,480 noenhanced
set output '{png}'
set title '{self.name}: {self.metric} per run ({self.args.runs} runs, one boot)'
set ylabel '{self.unit}'
set xtics ({', '.join(f'"{v}" {i}' for i, v in enumerate(self.variants))})
set xrange [-0.5:{len(self.variants) - 0.5}]
set yrange [0:*]
set grid ytics
set boxwidth 0.5
plot '{dat}' using 1:2 with points pt 7 ps 1.2 title 'runs', \\
     '-' using 1:2 with boxes fs transparent solid 0.3 title 'median'
"""
        for i, v in enumerate(self.variants):
            script += f"{i} {self.median(v) or 0}\n"
        script += "e\n"
        r = subprocess.run([gp], input=script, text=True, capture_output=True)
        if r.returncode != 0:
            log(f"  gnuplot failed: {r.stderr.strip()}")
        else:
            log(f"  -> {png}")


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
        cmd = (f"ssh {self.peer} scripts/regress/pktgen.sh --dev {args.peer_dev} "
               f"--dst-mac {mac} --dst {addr[0] if addr else '198.19.0.2'} --size {size}")
        log(f"  $ {cmd} &")
        self.proc = subprocess.Popen(cmd, shell=True, stdout=subprocess.PIPE, text=True)
        # pktgen is running once the port receives
        c0 = counter(dev, "rx_packets")
        deadline = time.monotonic() + 30
        while counter(dev, "rx_packets") - c0 < 1000:
            if self.proc.poll() is not None or time.monotonic() > deadline:
                self.stop()
                raise SystemExit(f"regress: no frames from the peer's pktgen on {dev} within 30 s")
            time.sleep(0.2)

    def stop(self):
        sh(f"ssh {self.peer} 'echo stop > /proc/net/pktgen/pgctrl'", check=False, quiet=True)
        try:
            out = self.proc.communicate(timeout=60)[0]
            log("  peer's pktgen: " + " ".join(out.split())[:200])
        except subprocess.TimeoutExpired:
            self.proc.kill()


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
        sh(f"{pre}{PPCTL} xdp attach {dev} --prog {prog}", quiet=True)
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
