#!/bin/bash
# The unit tests (Catch2): runs the test binary given and passes on its exit
# status.  Catch2 2.x has no skip: a case that cannot run on this machine is
# left out of the run by the test's main() (tests/unit/main.cpp), which
# prints "SKIP: CASE: REASON"; each becomes "ok N - CASE # SKIP REASON" at
# the end, so that the tier's summary lists it as a SKIP
# (tests/tier/step.sh, tests/tier/tap.py), never as a pass.
#
#   tests/tier/unit.sh BINARY [CATCH2-ARGS...]
set -uo pipefail
[ -x "${1:-}" ] || { echo "unit: no test binary '${1:-}': make tools"; exit 1; }
out=$(mktemp)
trap 'rm -f "$out"' EXIT
"$@" 2>&1 | tee "$out"
rc=${PIPESTATUS[0]}
# "SKIP: CASE: REASON" -> "ok N - CASE # SKIP REASON"
grep -o 'SKIP: .*' "$out" | sort -u | sed 's/^SKIP: \(.*\): \(.*\)$/ok 0 - \1 # SKIP \2/' | cat -n |
	sed 's/^ *\([0-9]*\)\tok 0 /ok \1 /' 
exit "$rc"
