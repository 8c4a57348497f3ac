#!/bin/bash
# The test tiers, each ending with one summary table (tests/tier/summary.py):
#
#   tests/tier/run.sh check     make check: every change, <= 10 minutes warm
#   tests/tier/run.sh test      make test: everything CI runs
#
# check: the kernel modules and the tools built (no warnings), the unit tests
#   (Catch2), checkpatch --strict, sparse, the netlink spec against its uapi
#   header (tests/kernel/static-checks.sh), shellcheck on scripts/ and tests/,
#   contrib/'s Prometheus rules and Grafana queries (tests/tier/promtool.sh:
#   promtool check and test rules), the regression scripts' logic
#   (tests/tier/regress-rlib.py: windows, intervals, verdicts, mechanism
#   checks, on the host), the harness's own judging (tests/tier/tap-selftest.py:
#   tap.py, step.sh, summary.py on made-up logs), the docs, and the lab's core boot
#   (tests/lab/run-all.sh core: the core scenarios in one guest), which runs
#   while the host-only steps do.
# test: check's steps, ppctl/ppctld under ASan and UBSan, the drivers (build
#   matrix, static checks, load tests, the Orange Pi PC), the core boot also
#   on 6.12 and 5.10 (TEST_LINES, lines of scripts/lab/kernels), the board
#   tarballs and the README's board flow,
#   the rest of the lab on Debian's kernel (tests/lab/run-all.sh extra, in
#   parts spread over the three slots below: extra-kernel's ppsim rows,
#   races and holders, extra-tools and extra-stress), make run's demo and, when
#   the debug kernel is cached and DEBUG_LANE is not "no", the debug subset
#   on it (the selftest, the race tests, unload, the detectors' canary).
#
# Each step has a time limit (the table's "timeout" column).  Results and
# logs: build/results/<tier>-<date>-<pid>/ (build/results/<tier>-last links
# to the last run).  Exits non-zero if a step failed; a SKIP is not a pass.
# What a tier leaves out by design (the other lines' quick forms, the long
# rows, rows for another kernel, DEBUG_LANE=no) is a "not run" row in a
# section of its own; a SKIP row is a gap of this machine, and make test
# fails on one that tests/tier/skip-allowlist does not name.
set -u
cd "$(dirname "$0")/../.." || exit 1
# shellcheck source=tests/tier/results.sh
. tests/tier/results.sh
TIER=${1:-}
case $TIER in check | test) ;; *) echo "usage: tests/tier/run.sh check|test" >&2; exit 2 ;; esac
RUN=build/results/$TIER-$(date +%Y%m%d-%H%M%S)-$$
mkdir -p "$RUN"
ln -sfn "$(realpath "$RUN")" "build/results/$TIER-last"
export PPKIT_RESULTS=$PWD/$RUN/results.tsv
: > "$PPKIT_RESULTS"
T0=$SECONDS
# step.sh records each step's start and end for the critical path
PPKIT_T0=$(date +%s)
export PPKIT_T0
step() { tests/tier/step.sh "$@"; }
# The guests share two cores with the builds and with each other: TCG runs
# each guest's vCPUs in turns on one thread (scripts/lab/run --tcg), except
# in the rows that race the pool's two sides (tests/lab/run-all.sh) and
# the debug subset (lab_slot).
export LAB_TCG=${LAB_TCG:-single}

# bg NAME STEP-ARGS...: a step in the background, its output shown when it
# ends; bgrun NAME COMMAND...: the same for a command (e.g. several steps)
bgpids=() bgnames=()
bgrun() {
	local name=$1
	shift
	echo "=== $name: in the background (its output follows when it ends)"
	PPKIT_SLOT=$name "$@" > "$RUN/$name.out" 2>&1 &
	bgpids+=($!) bgnames+=("$name")
}
# ready NAME: a slot has got as far as NAME; await NAME LIMIT: another slot
# waits (at most LIMIT s) for that.  The slots run side by side, each a
# chain of steps; a step waits only for what it needs, not for a barrier.
mkdir -p "$RUN/ready"
ready() { touch "$RUN/ready/$1"; }
await() {
	local end=$((SECONDS + $2))
	until [ -e "$RUN/ready/$1" ]; do
		[ $SECONDS -ge $end ] && { echo "=== waited $2 s for $1: going on without it"; return 1; }
		sleep 2
	done
}
bg() {
	local name=$1
	shift
	bgrun "$name" step "$@"
}

# The lab's core boot on 6.1 and (make test) on other lines of the kernel
# matrix, each with its modules (build/kmod-LINE).  A core boot keeps its
# files to itself (its run's folder, and ppsim's in the guest's mktemp), so
# two may run at once: 6.12's in the lab slot, 5.10's in the boards slot.
# TEST_LINES (default "6.12 5.10"): which lines; make test-matrix runs
# every scenario on every line.  ppctl-e2e (ppctl against our netlink
# family, the same code on every line; ppsim's and the fuzzer's rows use the
# family there too) runs on 6.1's core boot only in make test.
LINES=()
[ "$TIER" = test ] && read -ra LINES <<< "${TEST_LINES-6.12 5.10}"
core_boot() {
	step --rows lab-core "debian 6.1" 2400 tests/lab/run-all.sh core
}
# one_line LINE: a line's modules, its core boot and (6.12) its
# netdev-family row: a step of the pool
one_line() {
	local line=$1 out
	# 6.12's netdev-family row drives ppsim on both pools under traffic:
	# its core boot leaves ppsim's own row to it
	out=ppctl-e2e
	[ "$line" = 6.12 ] && out="ppctl-e2e ppsim"
	step "build-modules-$line" host 900 make --no-print-directory modules KVER="$line" &&
		step --rows "lab-core-$line" "debian $line" 2400 env LAB_KERNEL="$line" LEAVE_OUT="$out" CORE_QUICK=1 \
			LEAVE_WHY="make test runs it on 6.1 (and ppsim on 5.10, 6.12's netdev-family row drives ppsim too); make test-matrix on every line" \
			tests/lab/run-all.sh core
	# ppctl and ppctld over the kernel's own netdev family: its page-pool
	# commands came in 6.8, so only 6.12 has them
	if [ "$line" = 6.12 ]; then
		step --rows netdev-family-6.12 "debian 6.12" 600 env LAB_KERNEL=6.12 ONLY=netdev-family \
			tests/lab/run-all.sh all
	fi
}
bgwait() {
	local i
	for i in "${!bgpids[@]}"; do
		wait "${bgpids[$i]}"
		cat "$RUN/${bgnames[$i]}.out"
	done
	bgpids=() bgnames=()
}

# the debug subset runs in make test when the debug kernel is cached and
# DEBUG_LANE is not "no": decided once, after deps (LAB_DEBUG_RUNS)
debug_subset() { [ "${LAB_DEBUG_RUNS:-0}" = 1 ]; }

debug_row() {
	# DEBUG_LANE=no is a choice: not run here; no debug kernel cached
	# is a gap of this machine: a SKIP (tests/tier/skip-allowlist)
	if [ "${DEBUG_LANE:-auto}" = no ]; then
		results_row "$PPKIT_RESULTS" "debug subset" "debug 6.1" "not run" - - \
			"DEBUG_LANE=no: make test-debug runs it (and the whole suite) on the debug kernel"
	else
		results_row "$PPKIT_RESULTS" "debug subset" "debug 6.1" SKIP - - \
			"no debug kernel cached (scripts/lab/debug-kernel.sh builds it once, about half an hour; make test-debug runs the whole suite on it)"
	fi
}

# make test's three slots, side by side, each a chain of steps, then the
# pool (the steps' times: build/results/test-last/timeline.tsv,
# tests/tier/critical.py).  Each guest keeps its files to itself, so any
# scenario may run beside any other.
#   host    deps, the builds, the host checks, install, the armhf tools
#   lab     the core boot on 6.1, ppsim's MTU, RSS, XDP and IRQ paths
#           (extra-kernel's ppsim rows), then the debug subset when it runs
#   boards  the board image, then, once the host slot has built what the
#           tarballs take (the armhf tools, the man pages), the board
#           tarballs, Debian's mvpp2 on the emulated Macchiatobin, the
#           README's board flow, then kmod/ in-tree
# The pool: the steps that need only the builds of the host slot's chain
# (the drivers, ASan, the lab's), in POOL's order (the longest first).  A
# slot at the end of its chain takes the next step no other slot has taken,
# so the slots end together whichever of them the machine makes slow (the
# cold builds of a bare machine, the debug subset).
# make check: the host checks beside the core boot, no pool.
POOL=(pool_drivers pool_asan pool_tools pool_stress pool_races pool_holders)
for line in "${LINES[@]}"; do POOL+=("one_line $line"); done
POOL+=(pool_demo)
mkdir -p "$RUN/pool"
pool_drain() {
	local i
	for i in "${!POOL[@]}"; do
		# mkdir is atomic: one slot takes each step
		mkdir "$RUN/pool/$i" 2> /dev/null || continue
		${POOL[$i]}
	done
	return 0
}
# the driver lanes' Orange Pi takes the armhf tools
pool_drivers() { await boards-inputs 3600; step --rows drivers host 4800 tests/drivers/run.sh; }
pool_asan() { step asan host 1800 make --no-print-directory test-asan; }
pool_tools() { step --rows lab-tools "debian 6.1" 3600 tests/lab/run-all.sh extra-tools; }
pool_stress() { step --rows lab-stress "debian 6.1" 1800 tests/lab/run-all.sh extra-stress; }
# the debug subset, when it runs, has the race tests (on the debug kernel)
pool_races() {
	debug_subset || step --rows lab-races "debian 6.1" 1800 env PART=pool-races tests/lab/run-all.sh extra-kernel
}
pool_holders() { step --rows lab-holders "debian 6.1" 900 env PART=holders tests/lab/run-all.sh extra-kernel; }
# make run, the README's first command: its demo's lab parts (its selftest
# and Orange Pi parts are the rows pool-selftest and drivers: orangepi, the
# same scripts); three benchmark runs, not seven: this checks that the demo
# works, make bench gives the figures
pool_demo() { step make-run-demo "debian 6.1" 900 env DEMO_PARTS="bench ppsim" RUNS=3 scripts/lab/demo.sh; }

lab_slot() {
	core_boot
	[ "$TIER" = test ] || return 0
	step --rows lab-ppsim "debian 6.1" 1800 env \
		PART="ppsim-mtu ppsim-rss ppsim-xdp ppsim-irq-race netlink-fuzz-random debug-kernel-catches-bugs" \
		tests/lab/run-all.sh extra-kernel
	if debug_subset; then
		step build-modules-debug host 900 make --no-print-directory modules-debug
		# multi-threaded TCG: its one boot runs the race tests
		LAB_KERNEL=debug LAB_TCG=multi step --rows lab-debug "debug 6.1" 3600 tests/lab/run-all.sh debug-subset
	else
		debug_row
	fi
	pool_drain
}
boards_slot() {
	step board-image host 3600 scripts/boards/image.sh
	await boards-inputs 3600
	step boards host 1800 make --no-print-directory test-boards BOARD_FLOW=no
	# Debian's mvpp2 on the emulated Macchiatobin, with the arm64 ppctl
	# that the board tarballs built
	step --rows mcbin "debian arm64 6.1 (PPv2 model)" 900 env MCBIN_MODES=swiotlb tests/drivers/run.sh mcbin
	step board-flow "debian arm64" 1800 python3 tests/boards/flow.py
	# kmod/ in Debian's own kernel tree, on the host
	step intree host 1800 scripts/intree/test.sh
	pool_drain
}

if [ "$TIER" = test ]; then
	step deps host 1800 scripts/deps.sh
	# the debug subset, when it runs, takes the debug rows of the rest
	LAB_DEBUG_RUNS=0
	[ "${DEBUG_LANE:-auto}" != no ] && scripts/lab/debug-kernel.sh --print > /dev/null 2>&1 && LAB_DEBUG_RUNS=1
	export LAB_DEBUG_RUNS
	bgrun boards boards_slot
fi
step build-modules host 900 make --no-print-directory modules
step build-tools host 1800 make --no-print-directory tools
bgrun lab lab_slot
step unit host 600 tests/tier/unit.sh build/tools/tests/unit/ppkit-unit-tests
step static-kernel host 900 tests/kernel/static-checks.sh
step shellcheck host 300 tests/tier/shellcheck.sh
step prometheus-rules host 120 tests/tier/promtool.sh
step regress-rlib host 120 tests/tier/regress-rlib.py
step tap-selftest host 120 tests/tier/tap-selftest.py
step docs host 600 env DOCS_REQUIRE_BINARIES=1 tests/docs/run.sh
if [ "$TIER" = test ]; then
	step install host 600 tests/tier/install.sh
	step build-tools-arm host 1800 make --no-print-directory tools ARCH=arm
	ready boards-inputs
	pool_drain
fi
bgwait

echo "=== make $TIER: $((SECONDS - T0)) s"
# make test fails on a SKIP row the allowlist does not name (a SKIP is a gap
# of this machine); make check, for every change on any machine, lists them
allow=()
[ "$TIER" = test ] && allow=(--allowlist tests/tier/skip-allowlist)
python3 tests/tier/critical.py "$RUN/timeline.tsv" --total $((SECONDS - T0))
python3 tests/tier/summary.py "$PPKIT_RESULTS" --title "make $TIER" "${allow[@]}"
