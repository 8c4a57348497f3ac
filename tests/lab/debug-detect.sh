#!/bin/bash
# On the debug kernel (LAB_KERNEL=debug): each checker the lane relies on
# must fail a lab run that has its kind of bug, and name it.  The bugs come
# from kmod/tests/pp_faultprobe.ko (bug=oob, leak, lockdep); the command
# itself succeeds each time, so only the lab's log and kmemleak checks can
# fail the run (exit 99).  Ends with finish (tests/lab/checks.sh).
cd "$(dirname "$0")/../.." || exit 1
. tests/lab/checks.sh
[ "${LAB_KERNEL:-}" = debug ] || { echo "debug-detect: run with LAB_KERNEL=debug (make test-debug)"; exit 1; }

# probe BUG WHAT PATTERN: a run with pp_faultprobe bug=BUG must end in 99
# with PATTERN in what the lab printed.
probe() {
	local out rc
	out=$(scripts/lab/run -- insmod kmod/tests/pp_faultprobe.ko "bug=$1" 2>&1)
	rc=$?
	echo "$out" | grep -E "$3" | head -3 | sed 's/^/# /'
	check "$2: the run fails (exit $rc, want 99)" test $rc -eq 99
	check "$2: the report names it ($3)" sh -c 'echo "$1" | grep -qE "$2"' _ "$out" "$3"
}
probe oob "KASAN, out-of-bounds read" 'BUG: KASAN: slab-out-of-bounds.*fp_oob'
probe leak "kmemleak, an unreferenced object" 'kmemleak reports [1-9][0-9]* unreferenced|fp_leak'
probe lockdep "lockdep, a lock inversion" 'WARNING: possible circular locking dependency'
finish debug-detect
exit
