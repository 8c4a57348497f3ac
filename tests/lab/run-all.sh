#!/bin/bash
# The lab scenarios, each in a fresh guest. Used by `make test`.
#
#   tests/lab/run-all.sh [--list] [SUITE]     (default: lab)
#
# Every scenario belongs to one group (the table below):
#   kernel  drives our kernel code: the pool's selftest, unload with pages in
#           a socket, ppsim, the netlink fuzzer, the debug kernel's detectors;
#   tools   tests the user-space tools and the lab itself: ppctl-e2e, ppctld,
#           DKMS, the lab's exit status and splat detection;
#   stress  tests/lab/stress/: load/unload cycles, everything at once on 4
#           vCPUs, memory pressure and fault injection.
# and to one lane: the kernel `make test` boots it on when the debug kernel
# is cached (debug: the pool's selftest, unload, the detectors and the
# stress suite, where KASAN, kmemleak, lockdep and fault injection matter
# most; debian: the rest, which the debug kernel would slow down tenfold).
# The 50 load/unload cycles run on Debian's kernel, where they take 4
# minutes, and 10 of them on the debug kernel, where a cycle takes 25 s.
# SUITE: lab (kernel and tools), stress, all, debug-lane, debian-lane.
# --list prints the scenarios a suite would run.
#
# With LAB_KERNEL=debug every guest boots the debug kernel
# (scripts/lab/debug-kernel.sh) and its modules (build/kmod-debug).  DKMS,
# which installs into Debian's /lib/modules, is not run there and is
# reported as such; the detectors' own test runs only there.
# Prints 'N passed, N failed' at the end; exits non-zero if any scenario failed.
set -u
cd "$(dirname "$0")/../.." || exit 1
LIST=0
[ "${1:-}" = --list ] && { LIST=1; shift; }
SUITE=${1:-lab}
case "$SUITE" in
lab) GROUPS_RUN="kernel tools" ;;
stress) GROUPS_RUN="stress" ;;
all | debug-lane | debian-lane) GROUPS_RUN="kernel tools stress" ;;
*) echo "run-all: unknown suite '$SUITE': lab, stress, all, debug-lane or debian-lane" >&2; exit 2 ;;
esac
LANE_RUN=${SUITE%-lane}
[ "$LANE_RUN" = "$SUITE" ] && LANE_RUN=
KERNEL=${LAB_KERNEL:-debian}
LAB=scripts/lab/run
OUT=build/lab/results
[ $LIST = 1 ] || mkdir -p "$OUT"
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

# row NAME GROUP[:debian|:debug] LANE COMMAND...: run the scenario if the
# suite takes its group (and lane) and, where the row names one, the lab
# boots that kernel.  With CHECK_ROWS=1, only check the row.
CHECK_ROWS=0
row() {
	local name=$1 group=${2%%:*} lane=$3 only=
	[ "$2" != "$group" ] && only=${2#*:}
	shift 3
	# a row in no group or lane would silently drop out of make test
	case $group in kernel | tools | stress) ;; *)
		echo "run-all: $name: unknown group '$group'" >&2; exit 2 ;;
	esac
	case $lane in debug | debian) ;; *)
		echo "run-all: $name: unknown lane '$lane'" >&2; exit 2 ;;
	esac
	if [ -n "$only" ] && [ "$only" != "$lane" ]; then
		echo "run-all: $name: runs on the $only kernel only, but its lane is $lane" >&2; exit 2
	fi
	[ "$CHECK_ROWS" = 1 ] && return 0
	[ -z "$LANE_RUN" ] || [ "$lane" = "$LANE_RUN" ] || return 0
	case " $GROUPS_RUN " in *" $group "*) ;; *) return 0 ;; esac
	if [ -n "$only" ] && [ "$only" != "$KERNEL" ]; then
		# A Debian-only scenario skipped is worth a line; the debug
		# kernel's own test on Debian's kernel is not.
		[ "$only" = debian ] || return 0
		[ $LIST = 1 ] && return 0
		echo "=== lab: $name: NOT RUN on the $KERNEL kernel (it installs into Debian's /lib/modules; make test runs it on Debian's)"
		notrun+=("$name")
		return 0
	fi
	if [ $LIST = 1 ]; then echo "$name"; else scenario "$name" "$@"; fi
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

# failslab's cache filter: 6.1 marks a cache only at boot
fsl=()
# shellcheck disable=SC2054 # one argument: the option and the cache
[ "$KERNEL" = debug ] && fsl=(--append slub_debug=A,skbuff_head_cache)

table() {
#   name                        group         lane    command
row pool-selftest               kernel        debug   selftest
row unload-with-pages-in-socket kernel        debug   $LAB -- tests/lab/unload-inflight.sh
row ppctl-e2e                   tools         debian  $LAB --smp 2 -- tests/lab/ppctl-e2e.sh
row ppsim                       kernel        debian  $LAB --smp 2 --mem 1536 -- tests/lab/ppsim.sh
row ppctld                      tools         debian  $LAB --smp 2 --mem 1536 -- tests/lab/ppctld.sh
row dkms                        tools:debian  debian  tests/lab/dkms.sh
row netlink-fuzz                kernel        debian  $LAB --smp 2 -- tests/lab/fuzz.sh
row lab-exit-status             tools         debian  sh -c "$LAB -- sh -c 'exit 7'; [ \$? -eq 7 ]"
row lab-catches-splat           tools         debian  tests/lab/splat-detect.sh
row debug-kernel-catches-bugs   kernel:debug  debug   tests/lab/debug-detect.sh
row stress-reload               stress        debian  $LAB --smp 2 -- tests/lab/stress/reload.py 50
row stress-reload-debug         stress:debug  debug   $LAB --smp 2 -- tests/lab/stress/reload.py 10
row stress-mixed                stress        debug   $LAB --smp 4 --mem 2048 -- tests/lab/stress/mixed.sh 60
row stress-pressure             stress        debug   $LAB --smp 2 --mem 1024 "${fsl[@]}" -- tests/lab/stress/pressure.sh
}

# Every row is checked before any scenario runs: a bad row late in the
# table must not fail the suite after an hour of earlier ones.
CHECK_ROWS=1 table
[ $LIST = 1 ] || echo "=== lab: suite $SUITE on the $KERNEL kernel"
table
[ $LIST = 1 ] && exit 0

# The failures again, at the end: a CI log may keep only its last lines.
for name in "${failed[@]}"; do
	echo "=== lab: $name failed on:"
	grep -E 'FAIL|not ok|^lab: |^#   ' "$OUT/$name.log" | head -n 8 | sed 's/^/    /'
done
echo "lab ($SUITE, $KERNEL kernel): $pass passed, $failn failed${failed:+ (${failed[*]})}${notrun:+, not run: ${notrun[*]}}"
[ $failn -eq 0 ]
