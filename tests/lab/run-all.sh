#!/bin/bash
# The lab scenarios, each in a fresh guest. Used by `make test`.
#
#   tests/lab/run-all.sh [lab|stress|all|kernel]     (default: lab)
#
# lab: the functional scenarios; stress: tests/lab/stress/ (load/unload
# cycles, everything at once on 4 vCPUs, memory pressure and fault
# injection); all: both; kernel: the scenarios that drive our kernel code
# (the pool's selftest, unload with pages in a socket, ppsim, the netlink
# fuzzer, the debug kernel's detectors) and the stress suite, without the
# ones that test the tools and the lab itself (ppctl-e2e, ppctld, the lab's
# exit status and splat detection): what `make test` runs on the debug
# kernel.  With LAB_KERNEL=debug every guest boots the debug kernel
# (scripts/lab/debug-kernel.sh) and its modules (build/kmod-debug); the
# DKMS scenario, which installs into Debian's /lib/modules, is not run
# there and is reported as such.
# Prints 'N passed, N failed' at the end; exits non-zero if any scenario failed.
set -u
cd "$(dirname "$0")/../.."
SUITE=${1:-lab}
case "$SUITE" in
lab | stress | all | kernel) ;;
*) echo "run-all: unknown suite '$SUITE': lab, stress, all or kernel" >&2; exit 2 ;;
esac
KERNEL=${LAB_KERNEL:-debian}
LAB=scripts/lab/run
OUT=build/lab/results
mkdir -p "$OUT"
pass=0 failn=0 failed=() notrun=()

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
	# 1 GiB a node: the debug kernel's boot leaves node 0 of a 1 GiB guest
	# next to no free pages, and the NUMA cases need local ones.
	$LAB --smp 2 --numa 2 --mem 2048 --log "$OUT/selftest.dmesg" -- tests/lab/pool-selftest.sh > "$OUT/selftest.out" 2>&1
	local rc=$?
	cat "$OUT/selftest.out"
	python3 tests/lab/ktap.py --min-pass 20 < "$OUT/selftest.out" || return 1
	return $rc
}

echo "=== lab: suite $SUITE on the $KERNEL kernel"
if [ "$SUITE" != stress ]; then
	full=0
	[ "$SUITE" = kernel ] || full=1
	scenario pool-selftest selftest
	scenario unload-with-pages-in-socket $LAB -- tests/lab/unload-inflight.sh
	[ $full = 1 ] && scenario ppctl-e2e $LAB --smp 2 -- tests/lab/ppctl-e2e.sh
	scenario ppsim $LAB --smp 2 --mem 1536 -- tests/lab/ppsim.sh
	[ $full = 1 ] && scenario ppctld $LAB --smp 2 --mem 1536 -- tests/lab/ppctld.sh
	if [ "$KERNEL" = debian ]; then
		[ $full = 1 ] && scenario dkms tests/lab/dkms.sh
	else
		echo "=== lab: dkms: NOT RUN on the $KERNEL kernel (it installs into Debian's /lib/modules; make test runs it on Debian's)"
		notrun+=(dkms)
	fi
	scenario netlink-fuzz $LAB --smp 2 -- tests/lab/fuzz.sh
	if [ $full = 1 ]; then
		scenario lab-exit-status sh -c "$LAB -- sh -c 'exit 7'; [ \$? -eq 7 ]"
		scenario lab-catches-splat tests/lab/splat-detect.sh
	fi
	[ "$KERNEL" = debug ] && scenario debug-kernel-catches-bugs tests/lab/debug-detect.sh
fi
if [ "$SUITE" != lab ]; then
	scenario stress-reload $LAB --smp 2 -- tests/lab/stress/reload.py 50
	scenario stress-mixed $LAB --smp 4 --mem 2048 -- tests/lab/stress/mixed.sh 60
	# failslab's cache filter: 6.1 marks a cache only at boot
	fsl=()
	[ "$KERNEL" = debug ] && fsl=(--append slub_debug=A,skbuff_head_cache)
	scenario stress-pressure $LAB --smp 2 --mem 1024 "${fsl[@]}" -- tests/lab/stress/pressure.sh
fi

echo "lab ($SUITE, $KERNEL kernel): $pass passed, $failn failed${failed:+ (${failed[*]})}${notrun:+, not run: ${notrun[*]}}"
[ $failn -eq 0 ]
