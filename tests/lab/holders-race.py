#!/usr/bin/python3
"""Guest side: holders-get's snapshot against the pool's allocating context.

The snapshot reads the pool's FIFO of lent pages under RCU while the
allocating (NAPI) context lends and reclaims pages, and replaces the FIFO
when pool-set resized the ring (ppb_lent_resize() frees the old one after
a grace period).  Two processes, each pinned to a CPU, for SECONDS: one
asks holders-get of POOL over and over, the other resizes POOL's ring
between 64 and 1024 entries over and over; traffic must be running into
the pool meanwhile (the resize takes effect at its next refill).  Raw
genetlink, no process start per request, so the two sides overlap as
often as they can.  The debug kernel's KASAN reports a read of a freed
FIFO; the lab fails the run on it.

    holders-race.py POOL SECONDS

Prints how many of each it made; exits 1 if a request failed.
"""
import importlib.util
import os
import struct
import sys
import time

spec = importlib.util.spec_from_file_location(
    "genl", os.path.join(os.path.dirname(__file__), "genl-reserved.py"))
genl = importlib.util.module_from_spec(spec)
spec.loader.exec_module(genl)

PPKIT_CMD_POOL_SET = 6
PPKIT_CMD_HOLDERS_GET = 7
PPKIT_A_POOL_ID = 2
PPKIT_A_POOL_RING_SIZE = 9
PPKIT_A_HOLDERS_POOL_ID = 2


def u32(kind, v):
    return genl.attr(kind, struct.pack("=I", v))


def loop(cpu, deadline, pool, resize):
    os.sched_setaffinity(0, {cpu})
    g = genl.Genl()
    fam = g.family("ppkit")
    n = 0
    while time.monotonic() < deadline:
        if resize:
            r = g.request(fam, PPKIT_CMD_POOL_SET,
                          u32(PPKIT_A_POOL_ID, pool) +
                          u32(PPKIT_A_POOL_RING_SIZE, 64 if n % 2 else 1024))
        else:
            r = g.request(fam, PPKIT_CMD_HOLDERS_GET, u32(PPKIT_A_HOLDERS_POOL_ID, pool))
        if isinstance(r, int) and r:
            print(f"{'pool-set' if resize else 'holders-get'}: error {r}", flush=True)
            return n, False
        n += 1
    return n, True


def main():
    pool, seconds = int(sys.argv[1]), float(sys.argv[2])
    cpus = sorted(os.sched_getaffinity(0))
    if len(cpus) < 2:
        print("holders-race: needs 2 CPUs")
        return 1
    deadline = time.monotonic() + seconds
    r, w = os.pipe()
    child = os.fork()
    if child == 0:
        os.close(r)
        n, ok = loop(cpus[1], deadline, pool, True)
        os.write(w, f"{n} {int(ok)}".encode())
        os._exit(0)
    os.close(w)
    n, ok = loop(cpus[0], deadline, pool, False)
    os.waitpid(child, 0)
    resizes, rok = (int(x) for x in os.read(r, 64).split())
    print(f"holders-race: {n} holders-get against {resizes} resizes in {seconds:.0f} s")
    return 0 if ok and rok else 1


if __name__ == "__main__":
    sys.exit(main())
