#!/bin/bash
# make regress: every regression script in the lab, each in its own guest boot
# (its A/B variants interleaved within that boot), then one summary table of
# the ratios, their intervals and verdicts against the seeds' numbers, the
# mechanism checks and the windows measured again -> build/regress/summary.md.
#
#   scripts/regress/run-lab.sh [NAME...]     default: all
#   RUNS=N  runs per variant (default 6: the first count with a 95% interval
#           for the median of the per-run ratios, Documentation/regress.rst)
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 1
OUT=build/regress
mkdir -p "$OUT"
RUNS=${RUNS:-6}

# name | lab options | command
SCENARIOS="
drop            | --smp 2                                    | scripts/regress/drop
xdp-drop        | --smp 2                                    | scripts/regress/xdp-drop
lifo-fifo       | --smp 2                                    | scripts/regress/lifo-fifo
tcp-rx-rx       | --smp 2 --mem 2048                         | scripts/regress/tcp-rx --experiment rx
tcp-rx-sync     | --smp 2 --mem 2048 --append swiotlb=force  | scripts/regress/tcp-rx --experiment sync
tcp-rx-prefetch | --smp 2 --mem 2048                         | scripts/regress/tcp-rx --experiment prefetch
tcp-rx-pool     | --smp 2 --mem 2048                         | scripts/regress/tcp-rx --experiment pool
sync            | --smp 2 --append swiotlb=force             | scripts/regress/sync
rfc2544         | --smp 2                                    | scripts/regress/rfc2544
numa            | --smp 2 --numa 2                           | scripts/regress/numa
frag            | --smp 2                                    | scripts/regress/frag
"
want=" $* "
failed=()
while IFS='|' read -r name opts cmd; do
	name=$(echo "$name" | xargs)
	[ -n "$name" ] || continue
	[ $# -eq 0 ] || [[ "$want" == *" $name "* ]] || continue
	echo "=== regress: $name"
	t0=$SECONDS
	# shellcheck disable=SC2086
	scripts/lab/run $opts --timeout 1500 --log "$OUT/$name.dmesg" -- $cmd --runs "$RUNS" \
		2>&1 | tee "$OUT/$name.log"
	rc=${PIPESTATUS[0]}
	echo "=== regress: $name: exit $rc ($((SECONDS - t0)) s)"
	[ "$rc" -eq 0 ] || failed+=("$name")
done <<< "$SCENARIOS"
# summary.py fails on a failed mechanism check or a reversed seed, of any
# document here (stmmac_orangepi.py's too)
python3 scripts/regress/summary.py "$OUT" | tee "$OUT/summary.md"
[ "${PIPESTATUS[0]}" -eq 0 ] || failed+=("summary (a failed check or a ratio opposite to its seed)")
[ ${#failed[@]} -eq 0 ] || { echo "regress: failed: ${failed[*]}" >&2; exit 1; }
