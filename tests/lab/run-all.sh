#!/bin/bash
# Every lab scenario, each in a fresh guest. Used by `make test`.
# Prints 'N passed, N failed' at the end; exits non-zero if any scenario failed.
set -u
cd "$(dirname "$0")/../.."
LAB=scripts/lab/run
OUT=build/lab/results
mkdir -p "$OUT"
pass=0 failn=0 failed=()

scenario() {
	local name=$1; shift
	local t0=$SECONDS rc
	echo "=== lab: $name"
	"$@" > "$OUT/$name.log" 2>&1
	rc=$?
	sed 's/^/    /' "$OUT/$name.log"
	if [ $rc -eq 0 ]; then
		echo "=== lab: $name: PASS ($((SECONDS - t0)) s)"
		pass=$((pass + 1))
	else
		echo "=== lab: $name: FAIL (exit $rc, $((SECONDS - t0)) s; log $OUT/$name.log)"
		failn=$((failn + 1)); failed+=("$name")
	fi
}

selftest() {
	$LAB --smp 2 --numa 2 --log "$OUT/selftest.dmesg" -- tests/lab/pool-selftest.sh > "$OUT/selftest.out" 2>&1
	local rc=$?
	cat "$OUT/selftest.out"
	python3 tests/lab/ktap.py --min-pass 20 < "$OUT/selftest.out" || return 1
	return $rc
}

scenario pool-selftest selftest
scenario unload-with-pages-in-socket $LAB -- tests/lab/unload-inflight.sh
scenario ppctl-e2e $LAB --smp 2 -- tests/lab/ppctl-e2e.sh
scenario ppsim $LAB --smp 2 --mem 1536 -- tests/lab/ppsim.sh
scenario ppctld $LAB --smp 2 --mem 1536 -- tests/lab/ppctld.sh
scenario dkms tests/lab/dkms.sh
scenario netlink-fuzz $LAB --smp 2 -- tests/lab/fuzz.sh
scenario lab-exit-status sh -c "$LAB -- sh -c 'exit 7'; [ \$? -eq 7 ]"
scenario lab-catches-splat tests/lab/splat-detect.sh

echo "lab: $pass passed, $failn failed${failed:+ (${failed[*]})}"
[ $failn -eq 0 ]
