#!/bin/bash
# What a ppctl command costs, in one guest boot (2 vCPUs, TCG), with 1,000
# pools: /bin/true, `ppctl --help`, `--json list`, `--json stats` and `stats`,
# ROUNDS interleaved rounds (scripts/bench/ppctl-cost.guest.sh).
#
#   scripts/bench/ppctl-cost.sh                       (part of `make bench`)
#   scripts/bench/ppctl-cost.sh --baseline OTHER      and another ppctl in
#                                                     the same rounds
#   scripts/bench/ppctl-cost.sh --compare static=X --compare old=Y  several
#   ROUNDS=9 POOLS=1000 scripts/bench/ppctl-cost.sh
#   LAB_KERNEL=5.10 scripts/bench/ppctl-cost.sh       (`make modules KVER=5.10`)
#   ICOUNT=1 scripts/bench/ppctl-cost.sh              guest time is guest
#       instructions (scripts/lab/run --icount, one vCPU): what the commands
#       execute, without TCG's translation, whose cost depends on where code
#       lands (a PIE is translated again at every exec); -icount.json/.log
#
# Prints the median of each command in ms, the ratios of the goals
# (--help / /bin/true <= 1.3, --json stats / --help <= 1.5, --json list /
# --help <= 1.5), the same ratios for the floor under the JSON commands
# (scripts/bench/nl-floor.c: the kernel's dumps alone, read and thrown away,
# in a static binary that does nothing else) and, with others, this ppctl /
# each other per command;
# writes build/bench/ppctl-cost.json.  TCG: compare ratios, not times.
set -uo pipefail
REPO=$(cd "$(dirname "$0")/../.." && pwd)
cd "$REPO" || exit 1
# LAB_KERNEL=5.10|6.12: that line's modules, build/kmod-LINE (the guest sees
# them at kmod/); -LINE.json/.log
LINE=${LAB_KERNEL:-}
[ "$LINE" = debian ] && LINE=
KMOD=kmod
[ -n "$LINE" ] && KMOD=build/kmod-$LINE
OUT=$REPO/build/bench
LOG=$OUT/ppctl-cost${LINE:+-$LINE}.log
JSON=$OUT/ppctl-cost${LINE:+-$LINE}.json
LAB_OPTS=(--smp 2)
if [ "${ICOUNT:-0}" = 1 ]; then
	LAB_OPTS=(--smp 1 --icount)
	LOG=${LOG%.log}-icount.log JSON=${JSON%.json}-icount.json
fi
# --compare NAME=PPCTL (repeatable; --baseline PPCTL is --compare
# baseline=PPCTL): other ppctls in the same rounds, copied into the tree
# (the guest sees the repository, not the host)
NAMES=(ppctl) PATHS=(build/bin/ppctl)
while [ $# -gt 0 ]; do
	case $1 in
	--baseline) spec=baseline=${2:-} ;;
	--compare) spec=${2:-} ;;
	*) echo "usage: ppctl-cost.sh [--baseline PPCTL] [--compare NAME=PPCTL]..." >&2; exit 1 ;;
	esac
	name=${spec%%=*} file=${spec#*=}
	if ! [[ "$name" =~ ^[a-z0-9_-]+$ ]] || [ ! -x "$file" ]; then
		echo "ppctl-cost: $1 needs NAME=PPCTL, an executable ppctl (got '$spec')" >&2
		exit 1
	fi
	mkdir -p "$OUT"
	cp "$file" "$OUT/ppctl.$name"
	NAMES+=("$name") PATHS+=("build/bench/ppctl.$name")
	shift 2
done
for f in $KMOD/pool/pp_backport.ko $KMOD/tests/pp_poolgen.ko build/bin/ppctl; do
	[ -e "$f" ] || { echo "ppctl-cost: $f missing: run 'make modules tools${LINE:+ KVER=$LINE}' first" >&2; exit 1; }
done
for v in POOLS ROUNDS; do
	val=${!v:-}
	if [ -n "$val" ] && ! [[ "$val" =~ ^[1-9][0-9]*$ ]]; then
		echo "ppctl-cost: $v='$val' is not a positive number" >&2
		exit 1
	fi
done
mkdir -p "$OUT"
if ! gcc -O2 -Wall -Wextra -Werror -static -o "$OUT/nl-floor" scripts/bench/nl-floor.c; then
	echo "ppctl-cost: cannot build scripts/bench/nl-floor.c (gcc, libc6-dev: scripts/deps.sh)" >&2
	exit 1
fi
CMD=(scripts/lab/run "${LAB_OPTS[@]}" --mem 1536 -- env POOLS="${POOLS:-1000}" ROUNDS="${ROUNDS:-9}"
     PPCTLS="${PATHS[*]}" FLOOR=build/bench/nl-floor scripts/bench/ppctl-cost.guest.sh)
rm -f "$JSON"
echo "ppctl-cost: host load average $(cut -d' ' -f1-3 /proc/loadavg)"
printf 'ppctl-cost: command:'
printf ' %q' "${CMD[@]}"
printf '\n'
"${CMD[@]}" > "$LOG" 2>&1
rc=$?
if [ $rc -ne 0 ] || ! grep -aq '^ppctl-cost: done' "$LOG"; then
	grep -a '^ppctl-cost: ' "$LOG" | tail -5
	echo "ppctl-cost: lab run failed (exit $rc); guest output in $LOG" >&2
	exit 1
fi
python3 - "$LOG" "$JSON" "${NAMES[@]}" <<'PY'
import json, os, statistics, sys
runs = {}
for line in open(sys.argv[1], errors="replace"):
    if not line.startswith("ppctl-cost: round="):
        continue
    f = dict(x.split("=", 1) for x in line.split()[1:])
    runs.setdefault((int(f["bin"]), f["cmd"]), []).append(float(f["ms"]))
bins = sorted({b for b, _ in runs})
cmds = ["true", "help", "json_list", "json_stats", "stats"]
med = {(b, c): statistics.median(runs[(b, c)]) for b in bins for c in cmds}
# per-round ratios, then their median: the rounds are interleaved
def per_round(xs, ys):
    return statistics.median(x / y for x, y in zip(xs, ys))
doc = {"rounds": len(runs[(0, "true")]), "median_ms": {}, "runs_ms": {}, "ratios": {}}
names = sys.argv[3:]
for b in bins:
    n = names[b]
    doc["median_ms"][n] = {c: med[(b, c)] for c in cmds}
    doc["runs_ms"][n] = {c: runs[(b, c)] for c in cmds}
    def ratio(a, c):
        return per_round(runs[(b, a)], runs[(b, c)])
    doc["ratios"][n] = {"help/true": ratio("help", "true"),
                        "json_stats/help": ratio("json_stats", "help"),
                        "json_list/help": ratio("json_list", "help"),
                        "stats/help": ratio("stats", "help")}
clock = "guest instructions, -icount" if os.environ.get("ICOUNT") == "1" else "TCG guest"
print(f"\nppctl, {doc['rounds']} interleaved rounds, medians in ms ({clock}):")
print(f"  {'':<10}" + "".join(f"{c:>12}" for c in cmds))
for b in bins:
    print(f"  {names[b]:<10}" + "".join(f"{med[(b, c)]:>12.1f}" for c in cmds))
goals = {"help/true": 1.3, "json_stats/help": 1.5, "json_list/help": 1.5}
for b in bins:
    r = doc["ratios"][names[b]]
    print(f"  {names[b]}: " + ", ".join(
        f"{k} {v:.2f}" + (f" ({'ok' if v <= goals[k] else 'over'} <= {goals[k]})" if k in goals else "")
        for k, v in r.items()))
doc["over_ppctl"] = {}
for b in bins[1:]:
    doc["over_ppctl"][names[b]] = {c: per_round(runs[(0, c)], runs[(b, c)]) for c in cmds[1:]}
    print(f"  ppctl / {names[b]}, median of per-round ratios: " +
          ", ".join(f"{c} {v:.2f}" for c, v in doc["over_ppctl"][names[b]].items()))
# The floor: the kernel's dumps in a program that does nothing else.  If
# floor_stats / help is over the goal, no user space can meet it.
fl = {c: runs[(0, c)] for c in ("floor_list", "floor_stats")}
doc["floor_ms"] = {c: statistics.median(v) for c, v in fl.items()}
doc["floor_ratios"] = {f"{c}/{d}": per_round(fl[c], runs[(0, d)])
                       for d in ("help", "true") for c in fl}
print(f"  floor (nl-floor: the dumps alone): list {doc['floor_ms']['floor_list']:.1f}, "
      f"stats {doc['floor_ms']['floor_stats']:.1f}; " +
      ", ".join(f"{k} {v:.2f}" for k, v in doc["floor_ratios"].items()))
json.dump(doc, open(sys.argv[2], "w"), indent=1)
PY
