#!/bin/bash
# What booting 6.12 without CMPXCHG16B costs the lab (Documentation/
# hardening.rst, "The 6.12 corruption"): without CX16, SLUB's per-CPU fast
# path calls this_cpu_cmpxchg16b_emu (interrupts off, compare, store,
# popf) instead of one locked instruction.  BOOTS boots of 6.12 (default 4),
# alternating -cpu max,cx16=off and -cpu max, each timing ROUNDS rounds of
# 50,000 UDP sockets opened and closed (each a handful of slab allocations
# and frees) on an otherwise idle 2-vCPU guest, no traffic: the boots with
# CX16 have survived that so far, while traffic kills them within a minute.
#
#   scripts/bench/cx16-cost.sh           BOOTS=4 ROUNDS=5
#
# Prints each round's seconds per boot, then the medians per setting and
# their ratio (cx16=off / cx16).  TCG's time, not a CPU's: the ratio is
# what the lab pays, nothing more.
set -u
cd "$(dirname "$0")/../.." || exit 1
BOOTS=${BOOTS:-4}
ROUNDS=${ROUNDS:-5}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
for b in $(seq 1 "$BOOTS"); do
	if [ $((b % 2)) = 1 ]; then cpu=max,cx16=off name=off; else cpu=max name=on; fi
	LAB_KERNEL=6.12 LAB_CPU=$cpu scripts/lab/run --smp 2 --mem 1024 --timeout 900 -- \
		python3 -c '
import socket, sys, time
for _ in range(int(sys.argv[1])):
    t = time.perf_counter()
    for _ in range(50000):
        socket.socket(socket.AF_INET, socket.SOCK_DGRAM).close()
    print("round", round(time.perf_counter() - t, 3))
' "$ROUNDS" > "$out/boot$b.log" 2>&1 || { echo "boot $b ($cpu) failed:" >&2; tail -20 "$out/boot$b.log" >&2; exit 1; }
	grep '^round' "$out/boot$b.log" | sed "s/^round/$name/" >> "$out/all"
	echo "boot $b, -cpu $cpu: $(grep '^round' "$out/boot$b.log" | cut -d' ' -f2 | tr '\n' ' ')s"
done
python3 - "$out/all" <<'PY'
import statistics, sys
t = {"off": [], "on": []}
for line in open(sys.argv[1]):
    k, v = line.split()
    t[k].append(float(v))
off, on = statistics.median(t["off"]), statistics.median(t["on"])
print(f"median of {len(t['off'])} rounds without CX16 {off:.3f} s, of {len(t['on'])} with {on:.3f} s: "
      f"cx16=off / cx16 = {off / on:.3f}")
PY
