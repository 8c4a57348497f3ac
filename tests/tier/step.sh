#!/bin/bash
# One step of a test tier: run COMMAND with a time limit, show its output
# (indented), keep it in a log, and add its row to the tier's results.
#
#   tests/tier/step.sh [--rows] NAME LANE TIMEOUT COMMAND...
#
# PPKIT_RESULTS: the results file (tests/tier/summary.py reads it); the log
# is logs/NAME.log next to it.  The row: pass (exit 0), SKIP (exit 77, or 4
# as kselftest's KSFT_SKIP: the reason from the last line "SKIP: REASON" or
# skipped case; a skip that gives no reason is a FAIL), FAIL (any other exit
# status; 124: the time limit).  Each skipped case of the output ("ok N -
# WHAT # SKIP REASON", tests/tier/tap.py), and each plain line "SKIP: WHAT:
# REASON" of a step that exits 0, adds a SKIP row "NAME: WHAT" of its own: a
# step that passes while it skipped a part is never a silent pass, and make
# test fails on a SKIP row that tests/tier/skip-allowlist does not list.
# --rows: COMMAND writes its own rows (tests/lab/run-all.sh); the step adds
# one only if COMMAND timed out or failed without writing any.
# Exits with COMMAND's exit status (0 for a skip).
set -u
ROWS=0
[ "${1:-}" = --rows ] && { ROWS=1; shift; }
[ $# -ge 4 ] || { echo "usage: tests/tier/step.sh [--rows] NAME LANE TIMEOUT COMMAND..." >&2; exit 2; }
name=$1 lane=$2 limit=$3
shift 3
: "${PPKIT_RESULTS:?tests/tier/step.sh: set PPKIT_RESULTS to the tier\'s results file}"
logs=$(dirname "$PPKIT_RESULTS")/logs
mkdir -p "$logs"
log=$logs/$name.log
# shellcheck source=tests/tier/results.sh
. "$(dirname "$0")/results.sh"
row() { results_row "$PPKIT_RESULTS" "$1" "$lane" "$2" "$3" "$limit" "${4:-}"; }

before=$(wc -l 2>/dev/null < "$PPKIT_RESULTS" || echo 0)
echo "=== $name ($lane, at most $limit s)"
t0=$SECONDS
# a pipeline, not a process substitution: once it ends the log is whole
# (tap.py read a log still being written now and then, and lost a skip)
timeout --foreground -k 30 "$limit" "$@" 2>&1 | tee "$log" | sed -u 's/^/    /'
rc=${PIPESTATUS[0]}
secs=$((SECONDS - t0))
after=$(wc -l 2>/dev/null < "$PPKIT_RESULTS" || echo 0)
# the tier's timeline (tests/tier/critical.py): NAME SLOT START END CPU, in
# seconds since the tier began (PPKIT_T0, epoch seconds); CPU: the user and
# system time of the step's processes (bash's times: the children waited for)
if [ -n "${PPKIT_T0:-}" ]; then
	end=$(date +%s)
	# times in this shell (a command substitution's subshell has no children)
	times > "$log.times"
	cpu=$(awk 'NR == 2 { for (i = 1; i <= 2; i++) { split($i, a, /[ms]/); t += a[1] * 60 + a[2] } printf "%d", t }' "$log.times")
	rm -f "$log.times"
	printf '%s\t%s\t%s\t%s\t%s\n' "$name" "${PPKIT_SLOT:-host}" $((end - secs - PPKIT_T0)) \
		$((end - PPKIT_T0)) "${cpu:-0}" >> "$(dirname "$PPKIT_RESULTS")/timeline.tsv"
fi

note=
case $rc in
0) result=pass ;;
77 | 4)
	result=SKIP
	# the reason: the last plain "SKIP: ..." line, else the last skipped case
	note=$(sed -n 's/^SKIP: //p' "$log" | tail -n 1)
	[ -n "$note" ] || note=$(python3 tests/tier/tap.py --skips < "$log" | tail -n 1 | cut -f2)
	[ -n "$note" ] || { result=FAIL note="exit $rc (a skip) without a reason: a SKIP must say why; log $log"; }
	;;
124 | 137) result=FAIL; note="timed out after $limit s" ;;
*) result=FAIL; note="exit $rc; log $log" ;;
esac
echo "=== $name: $result ($secs s)${note:+: $note}"
if [ $ROWS = 0 ]; then
	row "$name" "$result" "$secs" "$note"
	[ $rc = 77 ] || [ $rc = 4 ] || python3 tests/tier/tap.py --skips < "$log" |
		while IFS=$'\t' read -r what why; do row "$name: $what" SKIP - "$why"; done
elif [ $rc != 0 ] && { [ "$result" = FAIL ] && [ "$after" = "$before" ] || [ $rc = 124 ] || [ $rc = 137 ]; }; then
	row "$name" "$result" "$secs" "$note"
fi
[ "$result" = SKIP ] && exit 0
exit $rc
