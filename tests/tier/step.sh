#!/bin/bash
# One step of a test tier: run COMMAND with a time limit, show its output
# (indented), keep it in a log, and add its row to the tier's results.
#
#   tests/tier/step.sh [--rows] NAME LANE TIMEOUT COMMAND...
#
# PPKIT_RESULTS: the results file (tests/tier/summary.py reads it); the log
# is logs/NAME.log next to it.  The row: pass (exit 0), SKIP (exit 77, the
# reason from the last "SKIP: ..." line), FAIL (any other exit status; 124:
# the time limit).  Each skipped case of the output ("ok N - WHAT # SKIP
# REASON", tests/tier/tap.py) adds a SKIP row "NAME: WHAT" of its own.
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
row() { printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$1" "$lane" "$2" "$3" "$limit" "${4:-}" >> "$PPKIT_RESULTS"; }

before=$(wc -l < "$PPKIT_RESULTS" 2>/dev/null || echo 0)
echo "=== $name ($lane, at most $limit s)"
t0=$SECONDS
timeout --foreground -k 30 "$limit" "$@" > >(tee "$log" | sed -u 's/^/    /') 2>&1
rc=$?
wait
secs=$((SECONDS - t0))
after=$(wc -l < "$PPKIT_RESULTS" 2>/dev/null || echo 0)

note=
case $rc in
0) result=pass ;;
77) result=SKIP; note=$(python3 tests/tier/tap.py --skips < "$log" | tail -n 1 | cut -f2) ;;
124 | 137) result=FAIL; note="timed out after $limit s" ;;
*) result=FAIL; note="exit $rc; log $log" ;;
esac
echo "=== $name: $result ($secs s)${note:+: $note}"
if [ $ROWS = 0 ]; then
	row "$name" "$result" "$secs" "$note"
	[ $rc = 77 ] || python3 tests/tier/tap.py --skips < "$log" |
		while IFS=$'\t' read -r what why; do row "$name: $what" SKIP - "$why"; done
elif [ $rc != 0 ] && { [ "$result" = FAIL ] && [ "$after" = "$before" ] || [ $rc = 124 ] || [ $rc = 137 ]; }; then
	row "$name" "$result" "$secs" "$note"
fi
[ $rc = 77 ] && exit 0
exit $rc
