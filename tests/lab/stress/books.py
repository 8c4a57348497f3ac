#!/usr/bin/env python3
"""The books of a device's pools, through ppctl: every pool must satisfy
pages_allocated = pages_released + pages_orphaned + cache + ring + in flight
(Documentation/stats.rst) once nothing moves.

    books.py PPCTL IFNAME     prints each pool, exits 1 if one does not balance
"""
import json
import subprocess
import sys


def books(ppctl, dev):
    """(unbalanced pools as text, pages lent to the stack now, pages
    orphaned so far, one summary line per pool) for @dev's pools."""
    d = json.loads(subprocess.run([ppctl, "--json", "stats"], capture_output=True,
                                  check=True).stdout)
    wrong, lent, orphaned, lines = [], 0, 0, []
    for p in d["pools"]:
        if p.get("ifname") != dev:
            continue
        c, g = p["counters"], p["gauges"]
        rhs = (c["pages_released"] + c["pages_orphaned"] + g["cache_pages"] + g["ring_pages"]
               + g["inflight"])
        if c["pages_allocated"] != rhs:
            wrong.append(f"pool {p['id']}: allocated {c['pages_allocated']} != {rhs}")
        lent += g["lent_pages"]
        orphaned += c["pages_orphaned"]
        lines.append(f"pool {p['id']}: allocated {c['pages_allocated']}, released "
                     f"{c['pages_released']}, orphaned {c['pages_orphaned']}, alloc_slow "
                     f"{c['alloc_slow']}, pfmemalloc released {c['released_pfmemalloc']}")
    if not lines:
        wrong.append(f"no pools of {dev}")
    return wrong, lent, orphaned, lines


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    wrong, _, _, lines = books(sys.argv[1], sys.argv[2])
    for line in lines:
        print("# " + line)
    for w in wrong:
        print("# unbalanced: " + w)
    sys.exit(1 if wrong else 0)
