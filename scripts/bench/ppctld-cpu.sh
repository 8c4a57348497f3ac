#!/bin/bash
# ppctld's CPU with 1,000 pools at 1 Hz, in one guest boot (2 vCPUs, TCG):
# a baseline without ppctld, then WINDOWS windows of WINDOW seconds with it.
#
#   scripts/bench/ppctld-cpu.sh          (`make modules tools` first; part of `make bench`)
#   WINDOWS=5 WINDOW=30 POOLS=1000 scripts/bench/ppctld-cpu.sh
#   LAB_KERNEL=5.10 scripts/bench/ppctld-cpu.sh  (`make modules KVER=5.10`)
#
# Prints every window and the median as % of one core, and writes
# build/bench/ppctld-cpu.json:
#   {"pools": N, "window_s": N, "pct": [..], "median_pct": X,
#    "baseline_busy_ticks": N, "hz": N, "rss_kb": N, "sample_seconds": X,
#    "scrape_bytes": N, "rss_after_100_scrapes_kb": N}
# The goal (issue 6) is a median under 2% of one core.  TCG's speed follows
# the host's load: run it on a quiet host.  The guest's output is kept in
# build/bench/ppctld-cpu.log.  Exits non-zero if the lab run fails.
set -uo pipefail
REPO=$(cd "$(dirname "$0")/../.." && pwd)
cd "$REPO" || exit 1
# LAB_KERNEL=5.10|6.12: that line of the kernel matrix, its modules in
# build/kmod-LINE (the guest sees them at kmod/); -LINE.json/.log
LINE=${LAB_KERNEL:-}
[ "$LINE" = debian ] && LINE=
KMOD=kmod
[ -n "$LINE" ] && KMOD=build/kmod-$LINE
OUT=$REPO/build/bench
LOG=$OUT/ppctld-cpu${LINE:+-$LINE}.log
JSON=$OUT/ppctld-cpu${LINE:+-$LINE}.json

for f in $KMOD/pool/pp_backport.ko $KMOD/tests/pp_poolgen.ko build/bin/ppctld; do
	[ -e "$f" ] || { echo "ppctld-cpu: $f missing: run 'make modules tools${LINE:+ KVER=$LINE}' first" >&2; exit 1; }
done
for v in POOLS WINDOW WINDOWS; do
	val=${!v:-}
	if [ -n "$val" ] && ! [[ "$val" =~ ^[1-9][0-9]*$ ]]; then
		echo "ppctld-cpu: $v='$val' is not a positive number" >&2
		exit 1
	fi
done
CMD=(scripts/lab/run --smp 2 --mem 1536 -- env POOLS="${POOLS:-1000}" WINDOW="${WINDOW:-60}"
     WINDOWS="${WINDOWS:-3}" scripts/bench/ppctld-cpu.guest.sh)
mkdir -p "$OUT"
rm -f "$JSON"
echo "ppctld-cpu: host load average $(cut -d' ' -f1-3 /proc/loadavg)"
printf 'ppctld-cpu: command:'
printf ' %q' "${CMD[@]}"
printf '\n'
"${CMD[@]}" > "$LOG" 2>&1
rc=$?
grep -a '^ppctld-cpu: ' "$LOG"
if [ $rc -ne 0 ]; then
	echo "ppctld-cpu: lab run failed (exit $rc); guest output in $LOG" >&2
	exit $rc
fi
python3 - "$LOG" "$JSON" <<'PY'
import json, re, statistics, sys
kv = {}
pct = []
for line in open(sys.argv[1], errors="replace"):
    if not line.startswith("ppctld-cpu: "):
        continue
    f = dict(x.split("=", 1) for x in line.split()[1:] if "=" in x)
    if "window" in f:
        pct.append(float(f["pct"]))
    else:
        kv.update(f)
if not pct:
    sys.exit("ppctld-cpu: no windows measured")
med = statistics.median(pct)
doc = {"pools": int(kv.get("pools", 0)) or None, "window_s": int(kv["seconds"]), "pct": pct,
       "median_pct": med, "baseline_busy_ticks": int(kv["baseline_busy_ticks"]),
       "hz": int(kv["hz"]), "rss_kb": int(kv["rss_kb"]),
       "sample_seconds": float(kv.get("sample_seconds", "nan")),
       "scrape_bytes": int(kv.get("scrape_bytes", 0)) or None,
       "rss_after_100_scrapes_kb": int(kv.get("rss_after_100_scrapes_kb", 0)) or None}
json.dump(doc, open(sys.argv[2], "w"), indent=1)
print(f"\nppctld, {doc['pools']} pools at 1 Hz: median {med:.2f}% of one core over "
      f"{len(pct)} windows of {doc['window_s']} s ({' '.join(f'{p:.2f}' for p in pct)}); "
      f"RSS {doc['rss_kb']} kB")
print(f"a scrape: {doc['scrape_bytes']} bytes; RSS after 100 scrapes "
      f"{doc['rss_after_100_scrapes_kb']} kB")
print(f"acceptance: median < 2% of one core: {'ok' if med < 2.0 else 'NO'}")
PY
