# shellcheck shell=bash
# The one writer of a tier's results rows (tests/tier/summary.py reads them;
# tests/tier/step.sh, tests/lab/run-all.sh, tests/drivers/run.sh,
# tests/tier/run.sh and tests/tier/matrix.sh source this).
#
#   results_row FILE NAME LANE RESULT SECONDS LIMIT [NOTE]
#
# appends the row to FILE (nothing when FILE is empty: a run outside a tier).
# RESULT is pass, FAIL, SKIP or "not run" (anything else is refused, exit 2);
# SECONDS and LIMIT are numbers or "-".  A tab or a newline in NAME or NOTE
# would split the row, so each becomes a space.
results_row() {
	local file=$1 name=$2 lane=$3 result=$4 secs=$5 limit=$6 note=${7:-}
	case $result in
	pass | FAIL | SKIP | "not run") ;;
	*)
		echo "results_row: '$result' is not a result (pass, FAIL, SKIP or not run)" >&2
		return 2
		;;
	esac
	[ -n "$file" ] || return 0
	name=${name//[$'\t\n']/ }
	note=${note//[$'\t\n']/ }
	printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$name" "$lane" "$result" "$secs" "$limit" "$note" >> "$file"
}
