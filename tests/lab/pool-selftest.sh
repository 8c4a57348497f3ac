#!/bin/bash
# Guest side: load the pool, run its KTAP selftests, check module-parameter
# validation, unload. Prints the selftest KTAP; exits non-zero on any failure.
# Run through the lab: scripts/lab/run --smp 2 --numa 2 -- tests/lab/pool-selftest.sh
set -u
cd "$(dirname "$0")/../.." || exit 1
. tests/lab/ktap-load.sh
fail=0
say() { echo "# $*"; }

# Module parameters: out of range is refused, never clamped.
for bad in lend_timeout_ms=0 release_retry_ms=0 release_retry_ms=60001; do
	if insmod kmod/pool/pp_backport.ko "$bad" 2>/dev/null; then
		say "FAIL: $bad accepted"; rmmod pp_backport; fail=1
	fi
done
insmod kmod/pool/pp_backport.ko || { say "FAIL: insmod pp_backport"; exit 1; }
P=/sys/module/pp_backport/parameters/lend_timeout_ms
if echo 0 > $P 2>/dev/null; then say "FAIL: lend_timeout_ms=0 accepted at runtime"; fail=1; fi
if echo 9999999 > $P 2>/dev/null; then say "FAIL: lend_timeout_ms=9999999 accepted"; fail=1; fi
[ "$(cat $P)" = 1000 ] || { say "FAIL: lend_timeout_ms changed to $(cat $P)"; fail=1; }
dmesg | grep -q 'lend_timeout_ms=0 out of range' || { say "FAIL: no reason logged for a bad parameter"; fail=1; }

# booted with swiotlb=force (the debug subset's one boot, with the races),
# a mapping is a bounce buffer, not the page's own address
bounce=N
grep -qw 'swiotlb=force' /proc/cmdline && bounce=Y
ktap_load kmod/tests/pp_selftest.ko swiotlb_bounce=$bounce
rc=$?
[ $rc -eq 0 ] || { say "FAIL: pp_selftest load returned $rc"; fail=1; }
rmmod pp_selftest 2>/dev/null
rmmod pp_backport || { say "FAIL: rmmod pp_backport"; fail=1; }
grep -q '^pp_backport ' /proc/modules && { say "FAIL: pp_backport still loaded"; fail=1; }
exit $fail
