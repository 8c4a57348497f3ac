#!/usr/bin/env python3
"""Guest side: load/unload cycles of pp_backport and ppsim under traffic,
with a socket holding pool pages (its receive queue never read) at the
moment of unload.

    scripts/lab/run --smp 2 -- tests/lab/stress/reload.py [CYCLES]

Each cycle: insmod pp_backport and ppsim, a two-queue ppsim device, a UDP
socket bound to it that never reads, the generator at 20,000 frames/s into
it.  Even cycles stop the traffic first and check every pool's books
(pages_allocated = released + orphaned + cache + ring + in flight, and the
socket holds pages); odd cycles unload with the generator still running.
Then rmmod ppsim (its pools wait for the socket's pages) and rmmod
pp_backport (it orphans them), and only then the socket closes.  A leak
report or splat in the kernel log fails the lab run by itself.  Free memory
(MemAvailable after dropping caches, plus the free pages parked on the
per-CPU lists, which swing by tens of MiB) is read after every cycle.  The
gate is its trend, not two readings: after WARMUP cycles (the caches a
cycle needs grow in the first ones), the median of the slopes between every
two readings (Theil-Sen: one reading off by MiB, as the per-CPU lists give,
cannot move it; a first-to-last gate failed CI at -554 kB a cycle so) may
fall by at most a quarter of a ring's pages a cycle (LEAK_GATE_KB, 256 kB:
a leak of one ring a cycle, 1 MiB, fails it).  Fewer than MIN_SAMPLES
readings after the warm-up, or a KASAN kernel (its quarantine and
kmemleak's objects move free memory by more than the gate), and the gate
is a SKIP with the reason.  LEAK_INJECT_KB=N (a negative control) keeps N
kB more in a tmpfs file each cycle, as a leak would.
Reports through tests/lab/checks.py: the plan, "reload: N passed, N failed,
N skipped" and kselftest's exit status.
"""
import os
import socket
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from books import books  # noqa: E402

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from checks import Checks  # noqa: E402

os.chdir(os.path.join(os.path.dirname(os.path.abspath(__file__)), "../../.."))
PPCTL = "build/bin/ppctl"
CYCLES = int(sys.argv[1]) if len(sys.argv) > 1 else 10
# A leak of a ring's worth of pages (2 x 128, 1 MiB) every cycle.
LEAK_GATE_KB = 256
# the readings left out of the trend, and how many it needs after them
WARMUP = 2
MIN_SAMPLES = 5
INJECT_KB = int(os.environ.get("LEAK_INJECT_KB", "0"))
C = Checks("reload")
ok, bad, skip = C.ok, C.bad, C.skip


def sh(*cmd):
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode:
        raise RuntimeError(f"{' '.join(cmd)}: exit {r.returncode}: {r.stderr.strip()}")
    return r.stdout


def mem_available():
    """MemAvailable after dropping caches, plus the per-CPU lists' free pages."""
    subprocess.run(["sync"])
    with open("/proc/sys/vm/drop_caches", "w") as f:
        f.write("3\n")
    avail = pcp = 0
    with open("/proc/meminfo") as f:
        for line in f:
            if line.startswith("MemAvailable:"):
                avail = int(line.split()[1])
    with open("/proc/zoneinfo") as f:
        for line in f:
            w = line.split()
            if len(w) == 2 and w[0] == "count:":
                pcp += int(w[1])
    return avail + pcp * os.sysconf("SC_PAGE_SIZE") // 1024


def kasan():
    """A KASAN kernel (the debug kernel of scripts/lab/debug-kernel.sh)."""
    with open("/proc/kallsyms") as f:
        return any(line.rstrip().endswith(" kasan_quarantine_put") for line in f)


def trend(samples):
    """Theil-Sen slope of (cycle, kB) samples, kB a cycle: the median of the
    slopes between every two, which a few outlying readings cannot move."""
    slopes = sorted((v2 - v1) / (c2 - c1) for i, (c1, v1) in enumerate(samples)
                    for c2, v2 in samples[i + 1:] if c2 != c1)
    if not slopes:
        return 0.0
    n = len(slopes)
    return slopes[n // 2] if n % 2 else (slopes[n // 2 - 1] + slopes[n // 2]) / 2


def loaded(m):
    return os.path.isdir("/sys/module/" + m)


def cycle(i, log):
    running = i % 2 == 1
    sh("insmod", "kmod/pool/pp_backport.ko")
    sh("insmod", "kmod/sim/ppsim.ko", "devs=0")
    dev = sh(PPCTL, "sim", "add", "--rx-queues", "2", "--ring-size", "128").strip()
    # build_skb on the pool's pages: the socket's queue holds them
    sh(PPCTL, "sim", "set", dev, "--rx", "zerocopy")
    sh("ip", "link", "set", dev, "up")
    sh("ip", "addr", "add", "10.82.0.1/24", "dev", dev)
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.setsockopt(socket.SOL_SOCKET, 33, 8 << 20)    # SO_RCVBUFFORCE: hold many frames
    s.bind(("0.0.0.0", 7777))
    try:
        sh(PPCTL, "sim", "gen", "start", dev, "--size", "256", "--dst-port", "7777",
           "--rate", "20000")
        time.sleep(0.5)
        if not running:
            sh(PPCTL, "sim", "gen", "stop", dev)
            time.sleep(0.2)
        wrong, lent, orphaned, _ = books(PPCTL, dev)
        if not running:   # the books balance only when nothing moves
            log["checked"] += 1
            if wrong:
                log["books"].append(f"cycle {i}: " + "; ".join(wrong))
        if lent > 0:
            log["held_cycles"] += 1
        log["lent_max"] = max(log["lent_max"], lent)
        log["orphaned"] += orphaned
        mark = f"reload-stress: cycle {i} unload"
        with open("/dev/kmsg", "w") as k:
            k.write(mark + "\n")
        sh("rmmod", "ppsim")
        sh("rmmod", "pp_backport")
        tail = sh("dmesg").split(mark, 1)[-1]
        for line in tail.splitlines():
            if "still held by the stack are orphaned" in line:
                log["orphaned_at_unload"] += int(line.split(": unload: ")[1].split()[0])
    finally:
        s.close()
    if loaded("ppsim") or loaded("pp_backport"):
        raise RuntimeError("a module is still loaded after rmmod")
    if INJECT_KB:
        with open(f"/dev/shm/reload-leak-{i}", "wb") as f:
            f.write(b"\x5a" * (INJECT_KB * 1024))


def main():
    subprocess.run(["ip", "link", "set", "lo", "up"])
    log = {"checked": 0, "books": [], "lent_max": 0, "held_cycles": 0, "orphaned": 0,
           "orphaned_at_unload": 0}
    t0 = time.time()
    done = 0
    before = 0
    samples = []
    for i in range(CYCLES):
        try:
            cycle(i, log)
            done += 1
        except Exception as e:    # report, stop: the next cycle would fail on the same
            bad(f"cycle {i}: {e}")
            break
        samples.append((i, mem_available()))
    secs = time.time() - t0
    before = samples[0][1] if samples else 0
    after = samples[-1][1] if samples else 0
    judged = samples[WARMUP:]
    slope = trend(judged)
    print("# free memory after each cycle (kB): " + " ".join(str(v) for _, v in samples))
    print(f"# {done} cycles in {secs:.0f} s; books checked in {log['checked']}; the socket "
          f"held pool pages at {log['held_cycles']} unloads (at most {log['lent_max']}); "
          f"{log['orphaned']} pages orphaned in all (lent past the FIFO), "
          f"{log['orphaned_at_unload']} by pp_backport's unload; free memory {before} kB after "
          f"cycle 1, {after} kB after the last ({after - before:+d} kB), trend "
          f"{slope:+.0f} kB a cycle after {WARMUP} cycles (Theil-Sen)", flush=True)
    if done == CYCLES:
        ok(f"{CYCLES} load/unload cycles, half of them with the generator running at unload")
    if log["books"]:
        bad("pool books: " + " | ".join(log["books"][:5]))
    else:
        ok(f"every pool's books balance ({log['checked']} cycles checked, the socket holding pages)")
    if log["held_cycles"] >= done // 2 and done:
        ok(f"the socket held pool pages at {log['held_cycles']} of {done} unloads")
    else:
        bad(f"the socket held pool pages at only {log['held_cycles']} of {done} unloads")
    what = "free memory's trend over the cycles"
    if kasan():
        skip(what, "a KASAN kernel: its quarantine of freed objects (1/32 of the memory) and "
             "kmemleak's objects move free memory by more than the gate; its leak "
             "detectors judge instead")
    elif len(judged) < MIN_SAMPLES:
        skip(what, f"{len(judged)} readings after {WARMUP} warm-up cycles, fewer than "
             f"{MIN_SAMPLES}: run more cycles (reload.py CYCLES)")
    elif -slope <= LEAK_GATE_KB:
        ok(f"{what}: {slope:+.0f} kB a cycle, within -{LEAK_GATE_KB} kB")
    else:
        bad(f"{what}: {slope:+.0f} kB a cycle, below -{LEAK_GATE_KB} kB (a leak)")
    return C.finish()


sys.exit(main())
