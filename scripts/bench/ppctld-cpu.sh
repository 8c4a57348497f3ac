#!/bin/bash
# ppctld's CPU with 1,000 pools at 1 Hz, in one guest boot (2 vCPUs, TCG):
# a baseline without ppctld, then WINDOWS windows of WINDOW seconds with it.
#
#   scripts/bench/ppctld-cpu.sh          (`make modules tools` first; part of `make bench`)
#   scripts/bench/ppctld-cpu.sh --baseline OTHER   and another ppctld, its
#                                        windows interleaved with this one's
#   scripts/bench/ppctld-cpu.sh --compare old=X --compare older=Y  several
#   WINDOWS=5 WINDOW=30 POOLS=1000 scripts/bench/ppctld-cpu.sh
#   LAB_KERNEL=5.10 scripts/bench/ppctld-cpu.sh  (`make modules KVER=5.10`)
#   ICOUNT=1 scripts/bench/ppctld-cpu.sh  one vCPU whose clock counts
#       instructions (scripts/lab/run --icount): % of a core is then the
#       instructions ppctld ran, its system calls included, per 1e9 a
#       second; the same every run, whatever the host's load -> -icount.json
#
# Prints every window and the median as % of one core (and its user and
# system parts), and writes build/bench/ppctld-cpu.json:
#   {"pools": N, "window_s": N, "pct": [..], "median_pct": X,
#    "user_pct": [..], "system_pct": [..], "median_user_pct": X,
#    "median_system_pct": X, "baseline_busy_ticks": N, "hz": N,
#    "rss_kb": N, "sample_seconds": X, "history_bytes": N,
#    "history_bytes_before_scrapes": N,
#    "scrape_bytes": N, "rss_after_scrape_kb": N,
#    "rss_after_100_scrapes_kb": N, "hwm_before_scrapes_kb": N,
#    "hwm_after_scrapes_kb": N,
#    "others": {NAME: {the same per-ppctld fields}},
#    "pct_ratio": {NAME: median of this / NAME per window}}
# The goals (issue 24): a median of at most 0.5% of one core, a scrape of
# at most 1.5 MB, RSS at most 16 MB after 100 scrapes.  TCG's speed
# follows the host's load: compare ppctlds in one run (--baseline), and
# run on a quiet host.  The guest's output is kept in
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
ICOUNT=${ICOUNT:-0}
case $ICOUNT in
0) SUFFIX=${LINE:+-$LINE} LAB_OPTS=(--smp 2) ;;
1) SUFFIX=${LINE:+-$LINE}-icount LAB_OPTS=(--smp 1 --icount) ;;
*) echo "ppctld-cpu: ICOUNT='$ICOUNT' is neither 0 nor 1" >&2; exit 1 ;;
esac
LOG=$OUT/ppctld-cpu$SUFFIX.log
JSON=$OUT/ppctld-cpu$SUFFIX.json

# --compare NAME=PPCTLD (repeatable; --baseline PPCTLD is --compare
# baseline=PPCTLD): other ppctlds in the same boot, copied into the tree
# (the guest sees the repository, not the host)
NAMES=(ppctld) PATHS=(build/bin/ppctld)
while [ $# -gt 0 ]; do
	case $1 in
	--baseline) spec=baseline=${2:-} ;;
	--compare) spec=${2:-} ;;
	*) echo "usage: ppctld-cpu.sh [--baseline PPCTLD] [--compare NAME=PPCTLD]..." >&2; exit 1 ;;
	esac
	name=${spec%%=*} file=${spec#*=}
	if ! [[ "$name" =~ ^[a-z0-9_-]+$ ]] || [ "$name" = ppctld ] || [ ! -x "$file" ]; then
		echo "ppctld-cpu: $1 needs NAME=PPCTLD, an executable ppctld (got '$spec')" >&2
		exit 1
	fi
	mkdir -p "$OUT"
	cp "$file" "$OUT/ppctld.$name"
	NAMES+=("$name") PATHS+=("build/bench/ppctld.$name")
	shift 2
done
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
CMD=(scripts/lab/run "${LAB_OPTS[@]}" --mem 1536 -- env POOLS="${POOLS:-1000}" WINDOW="${WINDOW:-60}"
     WINDOWS="${WINDOWS:-3}" PPCTLDS="${PATHS[*]}" scripts/bench/ppctld-cpu.guest.sh)
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
python3 - "$LOG" "$JSON" "${NAMES[@]}" <<'PY'
import json, statistics, sys
names = sys.argv[3:]
kv = {}
per = {}
for line in open(sys.argv[1], errors="replace"):
    if not line.startswith("ppctld-cpu: "):
        continue
    f = dict(x.split("=", 1) for x in line.split()[1:] if "=" in x)
    if "bin" not in f:
        kv.update(f)
        continue
    b = per.setdefault(names[int(f.pop("bin"))], {"w": []})
    if "window" in f:
        b["w"].append(f)
    else:
        b.update(f)
if not per.get("ppctld", {}).get("w"):
    sys.exit("ppctld-cpu: no windows measured")
window_s, hz = int(kv["seconds"]), int(kv["hz"])
def opt(b, k, conv=int):
    return conv(b[k]) if k in b else None
def doc_of(b):
    pct = [float(w["pct"]) for w in b["w"]]
    user = [100 * int(w["user_ticks"]) / (window_s * hz) for w in b["w"]]
    system = [100 * int(w["system_ticks"]) / (window_s * hz) for w in b["w"]]
    return {"pct": pct, "median_pct": statistics.median(pct),
            "user_pct": user, "system_pct": system,
            "median_user_pct": statistics.median(user),
            "median_system_pct": statistics.median(system),
            "rss_kb": opt(b, "rss_kb"), "sample_seconds": opt(b, "sample_seconds", float),
            "history_bytes": opt(b, "history_bytes", lambda x: int(float(x))),
            "history_bytes_before_scrapes": opt(b, "history_bytes_before_scrapes"),
            "scrape_bytes": opt(b, "scrape_bytes"),
            "rss_after_scrape_kb": opt(b, "rss_after_scrape_kb"),
            "hwm_before_scrapes_kb": opt(b, "hwm_before_scrapes_kb"),
            "hwm_after_scrapes_kb": opt(b, "hwm_after_scrapes_kb"),
            "rss_after_100_scrapes_kb": opt(b, "rss_after_100_scrapes_kb")}
doc = {"pools": int(kv.get("pools", 0)) or None, "window_s": window_s,
       "baseline_busy_ticks": int(kv["baseline_busy_ticks"]), "hz": hz}
doc.update(doc_of(per["ppctld"]))
doc["others"] = {n: doc_of(per[n]) for n in names[1:] if n in per}
doc["pct_ratio"] = {n: statistics.median(a / b for a, b in zip(doc["pct"], o["pct"]) if b > 0)
                    for n, o in doc["others"].items()}
json.dump(doc, open(sys.argv[2], "w"), indent=1)
print(f"\nppctld, {doc['pools']} pools at 1 Hz, {len(doc['pct'])} windows of {window_s} s, "
      "% of one core:")
for n, d in [("ppctld", doc)] + list(doc["others"].items()):
    print(f"  {n:<10} median {d['median_pct']:.2f} ({' '.join(f'{p:.2f}' for p in d['pct'])}); "
          f"user {d['median_user_pct']:.2f}, system {d['median_system_pct']:.2f}")
    print(f"  {'':<10} RSS {d['rss_kb']} kB; a scrape {d['scrape_bytes']} bytes; RSS right after "
          f"100 scrapes {d['rss_after_scrape_kb']} kB, two samples later "
          f"{d['rss_after_100_scrapes_kb']} kB; peak RSS {d['hwm_before_scrapes_kb']} kB before "
          f"the scrapes, {d['hwm_after_scrapes_kb']} kB after; histories "
          f"{d['history_bytes_before_scrapes']} B before, {d['history_bytes']} B after")
for n, r in doc["pct_ratio"].items():
    print(f"  ppctld / {n}: {r:.2f} (median of the per-window ratios)")
ok = lambda c: "ok" if c else "NO"
print(f"goals: median <= 0.5% of one core: {ok(doc['median_pct'] <= 0.5)}; "
      f"scrape <= 1.5 MB: {ok((doc['scrape_bytes'] or 0) <= 1_500_000)}; "
      f"RSS after 100 scrapes <= 16 MB: "
      f"{ok((doc['rss_after_100_scrapes_kb'] or 1 << 30) <= 16000)}")
PY
