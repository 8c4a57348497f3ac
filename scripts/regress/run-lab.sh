#!/bin/bash
# make regress: every regression script in the lab, each in its own guest boot
# (its A/B variants interleaved within that boot), then one summary table of
# the ratios against the seeds' numbers -> build/regress/summary.md.
#
#   scripts/regress/run-lab.sh [NAME...]     default: all
#   RUNS=5 SECONDS_PER_RUN=... to change the defaults
set -uo pipefail
cd "$(dirname "$0")/../.."
OUT=build/regress
mkdir -p "$OUT"
RUNS=${RUNS:-5}
LAB=scripts/lab/run

declare -A OPTS=(
	[drop]="--smp 2"
	[xdp-drop]="--smp 2"
	[lifo-fifo]="--smp 2"
	[tcp-rx-rx]="--smp 2 --mem 2048"
	[tcp-rx-sync]="--smp 2 --mem 2048 --append swiotlb=force"
	[tcp-rx-prefetch]="--smp 2 --mem 2048"
	[rfc2544]="--smp 2"
	[numa]="--smp 2 --numa 2"
)
declare -A CMD=(
	[drop]="scripts/regress/drop"
	[xdp-drop]="scripts/regress/xdp-drop"
	[lifo-fifo]="scripts/regress/lifo-fifo"
	[tcp-rx-rx]="scripts/regress/tcp-rx --experiment rx"
	[tcp-rx-sync]="scripts/regress/tcp-rx --experiment sync"
	[tcp-rx-prefetch]="scripts/regress/tcp-rx --experiment prefetch"
	[rfc2544]="scripts/regress/rfc2544"
	[numa]="scripts/regress/numa"
)
ORDER=(drop xdp-drop lifo-fifo tcp-rx-rx tcp-rx-sync tcp-rx-prefetch rfc2544 numa)
[ $# -gt 0 ] && ORDER=("$@")

failed=()
for n in "${ORDER[@]}"; do
	[ -n "${CMD[$n]:-}" ] || { echo "regress: no scenario '$n' (${!CMD[*]})" >&2; exit 1; }
	echo "=== regress: $n"
	t0=$SECONDS
	# shellcheck disable=SC2086
	$LAB ${OPTS[$n]} --timeout 1500 --log "$OUT/$n.dmesg" -- ${CMD[$n]} --runs "$RUNS" \
		2>&1 | tee "$OUT/$n.log"
	rc=${PIPESTATUS[0]}
	echo "=== regress: $n: exit $rc ($((SECONDS - t0)) s)"
	[ "$rc" -eq 0 ] || failed+=("$n")
done
python3 scripts/regress/summary.py "$OUT" | tee "$OUT/summary.md"
[ ${#failed[@]} -eq 0 ] || { echo "regress: failed: ${failed[*]}" >&2; exit 1; }
