#!/bin/bash
# The lab scenarios, each in a fresh guest (the core ones together in one).
# Used by make check, make test, make test-debug and make soak.
#
#   tests/lab/run-all.sh [--list] [SUITE]     (default: lab)
#
# Every scenario (the table below) belongs to one group:
#   core    the core scenarios: the pool's selftest, unload with pages in a
#           socket, ppctl end to end (no 1,000-pool timing), ppsim traffic,
#           the netlink fuzzer with a fixed seed; they run one after another
#           in ONE guest (tests/lab/core.sh), each between markers in the
#           kernel log so a forbidden line is charged to the scenario that
#           ran; a scenario that fails there runs again alone, in a fresh
#           guest, to confirm (its row: "NAME-alone");
#   kernel  more of our kernel code: the race tests, ppsim's MTU changes,
#           RSS and XDP paths (ppsim-mtu, -rss, -xdp), the fuzzer with a new
#           random seed, the debug kernel's detectors;
#   tools   the user-space tools and the lab itself: ppctld, Prometheus
#           scraping it (contrib/), DKMS, the lab's
#           exit status and splat detection;
#   stress  tests/lab/stress/: load/unload cycles, everything at once on 4
#           vCPUs, memory pressure and fault injection.
# SUITE: core (make check), lab (core, kernel, tools), stress, extra (all
# but the core boot and the rows marked long, each a long form of a check
# make test makes: make test runs the core boot with make check's steps),
# extra-kernel and extra-rest (extra's kernel group, and the rest:
# extra-tools and extra-stress, its two groups; make test runs them in
# its slots side by side, guests of two at a time; the scenarios of one
# group never write the files of another's under build/lab),
# all, or debug-subset (the rows marked debug: what make test runs on the debug
# kernel when it is cached; each alone).
# A row for one kernel only (GROUP:debian, GROUP:debug, GROUP:6.12) on
# another kernel is "not run" with where it runs; LAB_DEBUG_RUNS=1 (make test, when the debug
# subset follows) leaves the debug kernel's own rows, and the debug subset's
# rows outside the core boot (the race tests), out of a Debian run.  In the
# debug subset, its core rows and the race tests share one boot, the races'
# (tests/lab/core.sh; alone, ONLY=pool-races, they boot their own).
# --list prints the scenarios a suite would run; ONLY=NAME runs just that
# row, alone; LEAVE_OUT="NAME..." leaves those rows out, each a "not run"
# row with LEAVE_WHY as its reason (make test: the other lines' core boots);
# PART="NAME..." runs only those rows of SUITE (their "not run" rows too).
# CORE_QUICK=1 runs the core boot's quick forms (tests/lab/core.sh).  LAB_KERNEL=debug: every guest boots the debug kernel
# (scripts/lab/debug-kernel.sh) and its modules (build/kmod-debug); time
# limits are then LAB_SLOW (default 4) times longer.  LAB_KERNEL=5.10|6.12:
# every guest boots that line of the kernel matrix (scripts/lab/kernels) and
# its modules (build/kmod-LINE: make modules KVER=LINE).
#
# A row's result: pass, FAIL, SKIP (the scenario could not run here: it
# exits 4, kselftest's KSFT_SKIP, after only skipped checks; the reason is
# theirs) or "not run" (left out by design: the long rows in extra, LEAVE_OUT,
# a row for another kernel, and under CORE_QUICK a case skipped because of
# --quick; the note says where it runs), which tests/tier/summary.py lists
# apart, never as a skip or a pass.  Each skipped case of a scenario that
# ran is a SKIP row "NAME: WHAT" of its own.  A line "lab: note: TEXT" in a
# scenario's output goes into its row's note, pass or not (e.g. a retry).
# Each row has a time limit (seconds, the table's "limit" column): a hung
# guest costs that, not CI's 90 minutes.  Output: build/lab/runs/<run>/
# (build/lab/results links to the last run): NAME.log per scenario and
# results.tsv, also appended to PPKIT_RESULTS when set (the tier's summary).
# Ends with the summary table (tests/tier/summary.py) and 'N passed, N
# failed, N skipped'; exits non-zero if any scenario failed.
set -u
cd "$(dirname "$0")/../.." || exit 1
# shellcheck source=tests/tier/results.sh
. tests/tier/results.sh
LIST=0
[ "${1:-}" = --list ] && { LIST=1; shift; }
SUITE=${1:-lab}
case "$SUITE" in
core) GROUPS_RUN="core" ;;
lab) GROUPS_RUN="core kernel tools" ;;
stress) GROUPS_RUN="stress" ;;
all) GROUPS_RUN="core kernel tools stress" ;;
extra) GROUPS_RUN="kernel tools stress" ;;
extra-kernel) GROUPS_RUN="kernel" ;;
extra-rest) GROUPS_RUN="tools stress" ;;
extra-tools) GROUPS_RUN="tools" ;;
extra-stress) GROUPS_RUN="stress" ;;
debug-subset) GROUPS_RUN="" ;;
*) echo "run-all: unknown suite '$SUITE': core, lab, stress, extra, extra-kernel, extra-rest (extra-tools and extra-stress), all or debug-subset" >&2; exit 2 ;;
esac
KERNEL=${LAB_KERNEL:-debian}
SLOW=1
[ "$KERNEL" = debug ] && SLOW=${LAB_SLOW:-4}
LAB=scripts/lab/run
if [ $LIST = 0 ]; then
	OUT=${LAB_OUT:-build/lab/runs/$SUITE-$KERNEL-$(date +%Y%m%d-%H%M%S)-$$}
	mkdir -p "$OUT"
	[ -n "${LAB_OUT:-}" ] || ln -sfn "$(realpath "$OUT")" build/lab/results
	export LAB_OUT=$OUT
	RESULTS=$OUT/results.tsv
	: > "$RESULTS"
fi
# The lane: the kernel and its line (LAB_KERNEL=5.10|6.12 boots another line
# of the kernel matrix, scripts/lab/kernels, with build/kmod-LINE).
case "$KERNEL" in
debian | debug) LANE="$KERNEL 6.1" ;;
*) LANE="debian $KERNEL" ;;
esac
failed=() core=() core_limit=0

# result NAME RESULT SECONDS LIMIT [NOTE]: a row of the summary
result() {
	results_row "$RESULTS" "$1" "$LANE" "$2" "$3" "$4" "${5:-}"
	results_row "${PPKIT_RESULTS:-}" "$1" "$LANE" "$2" "$3" "$4" "${5:-}"
	[ "$2" = FAIL ] && failed+=("$1")
	return 0
}
# skips NAME LOG: a row for each skipped case of LOG (tests/tier/tap.py); a
# case the scenario's --quick form leaves out (CORE_QUICK, its reason begins
# "--quick:") is "not run" here
skips() {
	local what why
	python3 tests/tier/tap.py --skips < "$2" |
		while IFS=$'\t' read -r what why; do
			if [ -n "${CORE_QUICK:-}" ] && [[ "$why" = --quick:* ]]; then
				result "$1: $what" "not run" - - "$why"
			else
				result "$1: $what" SKIP - - "$why"
			fi
		done
}
# skip_reason LOG: why a scenario that exited 4 skipped: its skipped cases'
# reasons (the first, and how many more), or nothing
skip_reason() {
	python3 tests/tier/tap.py --skips < "$1" | awk -F'\t' '
		NR == 1 { first = $1 ": " $2 } END { if (NR) print first (NR > 1 ? " (and " NR - 1 " more skipped)" : "") }'
}
# notes LOG: the lines "lab: note: TEXT" of LOG, joined by "; "
notes() {
	sed -n 's/^lab: note: //p' "$1" | paste -sd';' | sed 's/;/; /g'
}

scenario() {
	local name=$1 limit=$2 t0=$SECONDS rc note=
	shift 2
	echo "=== lab: $name (at most $limit s)"
	# a row's command may be a function of this script (export -f, below)
	timeout --foreground -k 15 "$limit" bash -c '"$@"' row "$@" > "$OUT/$name.log" 2>&1
	rc=$?
	sed 's/^/    /' "$OUT/$name.log"
	case $rc in
	0) ;;
	4) note=$(skip_reason "$OUT/$name.log") ;;
	124 | 137) note="timed out after $limit s" ;;
	99) note="forbidden lines in the guest kernel log" ;;
	*) note="exit $rc" ;;
	esac
	local extra
	extra=$(notes "$OUT/$name.log")
	if [ $rc -eq 0 ]; then
		echo "=== lab: $name: PASS ($((SECONDS - t0)) s)${extra:+: $extra}"
		result "$name" pass $((SECONDS - t0)) "$limit" "$extra"
	elif [ $rc -eq 4 ] && [ -n "$note" ]; then
		# only skipped checks: one SKIP row with their reason
		echo "=== lab: $name: SKIP ($note, $((SECONDS - t0)) s)"
		result "$name" SKIP $((SECONDS - t0)) "$limit" "$note${extra:+; $extra}"
		return 0
	else
		[ $rc -eq 4 ] && note="exit 4 (a skip) without a skipped case saying why"
		echo "=== lab: $name: FAIL ($note, $((SECONDS - t0)) s; log $OUT/$name.log)"
		result "$name" FAIL $((SECONDS - t0)) "$limit" "$note${extra:+; $extra}; log $OUT/$name.log"
	fi
	skips "$name" "$OUT/$name.log"
}

# row NAME GROUP[:debian|:debug] SUBSET LIMIT COMMAND...: run the scenario
# if the suite takes it (the core group's rows are gathered for the core
# boot), on the kernel the row names if it names one.  SUBSET: debug (in the
# debug subset), long (not in extra: make test-matrix runs it) or -.  With
# CHECK_ROWS=1, only check the row.
CHECK_ROWS=0
row() {
	local name=$1 group=${2%%:*} subset=$3 limit=$4 only=
	[ "$2" != "$group" ] && only=${2#*:}
	shift 4
	case $group in core | kernel | tools | stress) ;; *)
		echo "run-all: $name: unknown group '$group'" >&2; exit 2 ;;
	esac
	case $subset in debug | long | -) ;; *)
		echo "run-all: $name: unknown subset '$subset'" >&2; exit 2 ;;
	esac
	case $only in '' | debian | debug | 5.10 | 6.12) ;; *)
		echo "run-all: $name: unknown kernel '$only'" >&2; exit 2 ;;
	esac
	[[ "$limit" =~ ^[1-9][0-9]*$ ]] || { echo "run-all: $name: bad time limit '$limit'" >&2; exit 2; }
	[ "$CHECK_ROWS" = 1 ] && return 0
	local alone=0
	if [ -n "${ONLY:-}" ]; then
		[ "$name" = "$ONLY" ] || return 0
		alone=1
	elif [ "$SUITE" = debug-subset ]; then
		[ "$subset" = debug ] || return 0
	else
		case " $GROUPS_RUN " in *" $group "*) ;; *) return 0 ;; esac
		# PART="NAME...": only those rows of the suite (make test runs
		# extra-kernel in parts, in its slots)
		[ -z "${PART:-}" ] || [[ " $PART " = *" $name "* ]] || return 0
		# the debug subset runs it where it matters more
		[ "${LAB_DEBUG_RUNS:-0}" = 1 ] && [ "$subset" = debug ] && [ "$group" != core ] && return 0
		if [[ "$SUITE" = extra* ]] && [ "$subset" = long ]; then
			[ $LIST = 1 ] || result "$name" "not run" - "$limit" "a long form of a row make test runs: make test-matrix runs it (tests/lab/run-all.sh all); ONLY=$name tests/lab/run-all.sh alone"
			return 0
		fi
	fi
	if [ -n "${LEAVE_OUT:-}" ] && [[ " $LEAVE_OUT " = *" $name "* ]]; then
		[ $LIST = 1 ] || result "$name" "not run" - "$limit" "${LEAVE_WHY:-left out of this run (LEAVE_OUT)}"
		return 0
	fi
	if [ -n "$only" ] && [ "$only" != "$KERNEL" ]; then
		[ $LIST = 1 ] && return 0
		if [ "$only" = debug ]; then
			[ "${LAB_DEBUG_RUNS:-0}" = 1 ] && return 0
			result "$name" "not run" - "$limit" "the debug kernel's own test, and this run boots Debian's kernel (make test-debug; scripts/lab/debug-kernel.sh builds it once)"
		elif [ "$only" != debian ]; then
			result "$name" "not run" - "$limit" "runs on the $only lane only (make test-matrix; LAB_KERNEL=$only tests/lab/run-all.sh extra): what it tests is not in this kernel"
		else
			result "$name" "not run" - "$limit" "installs into Debian's /lib/modules: runs on Debian's kernel (make test); 5.10 beside 6.1 on one disk: row dkms-kernels of make test-matrix"
		fi
		return 0
	fi
	limit=$((limit * SLOW))
	# one debug guest boot (its kmemleak scans cost a minute each): the
	# races join the core boot, which then boots as races() does
	[ "$SUITE" = debug-subset ] && [ "$name" = pool-races ] && group=core
	if [ "$group" = core ] && [ $alone = 0 ]; then
		core+=("$name=$limit")
		core_limit=$((core_limit + limit))
		[ $LIST = 1 ] && echo "$name (core boot)"
		return 0
	fi
	[ "${ALONE_SUFFIX:-0}" = 1 ] && name=$name-alone
	if [ $LIST = 1 ]; then echo "$name"; else scenario "$name" "$limit" "$@"; fi
}

# The pool's KTAP selftest: every case of its plan ("1..N") must pass.
# 1 GiB a node: the debug kernel's boot leaves node 0 of a 1 GiB guest
# next to no free pages, and the NUMA cases need local ones.
selftest() {
	$LAB --smp 2 --numa 2 --mem 2048 -- tests/lab/pool-selftest.sh > "$OUT/selftest.out" 2>&1
	local rc=$?
	cat "$OUT/selftest.out"
	python3 tests/tier/tap.py --ktap < "$OUT/selftest.out" || return 1
	return $rc
}

# The pool under concurrency (tests/lab/race.sh): slab poisoning, every DMA
# mapping through swiotlb, preemption wherever it is enabled again.
# RACE_ENV (its READS, ROUNDS, UNLOAD_ROUNDS) and RACE_TIMEOUT: make soak.
RACE_APPEND="slub_debug=FZP swiotlb=force preempt=full"
races() {
	# shellcheck disable=SC2086 # RACE_ENV: words for env
	$LAB --tcg multi --smp 3 --append "$RACE_APPEND" --mem 1536 --timeout "${RACE_TIMEOUT:-840}" \
		-- env ${RACE_ENV:-} tests/lab/race.sh > "$OUT/races.out" 2>&1
	local rc=$?
	cat "$OUT/races.out"
	python3 tests/tier/tap.py --ktap < "$OUT/races.out" || return 1
	return $rc
}

export -f selftest races
export LAB OUT RACE_ENV RACE_TIMEOUT RACE_APPEND

# failslab's cache filter: 6.1 marks a cache only at boot
fsl=()
# shellcheck disable=SC2054 # one argument: the option and the cache
[ "$KERNEL" = debug ] && fsl=(--append slub_debug=A,skbuff_head_cache)

# The harness's self-tests (the lab catches a splat, the debug kernel
# catches bugs) boot guests to test the lab itself: they run again only when
# the lab's files, the scenario or the kernel changed
# (tests/tier/harness-cache.sh; HARNESS_RERUN=1 runs them anyway).
HARNESS_IN="scripts/lab tests/lab/run-all.sh tests/lab/core.sh tests/lab/checks.sh tests/tier/tap.py"
HARNESS_IMAGE=$(. scripts/lab/lib.sh && lab_kernel > /dev/null 2>&1 && echo "$LAB_IMAGE")

table() {
#   name                        group         subset limit command
row pool-selftest               core          debug  300  selftest
row unload-with-pages-in-socket core          debug  300  $LAB -- tests/lab/unload-inflight.sh
row ppctl-e2e                   core          -      300  $LAB --smp 2 -- tests/lab/ppctl-e2e.sh --quick
row ppsim                       core          -      600  $LAB --smp 2 --mem 1536 -- tests/lab/ppsim.sh
row netlink-fuzz                core          -      300  $LAB --smp 2 -- tests/lab/fuzz.sh 20000 2000 1
row pool-races                  kernel        debug  $((${RACE_TIMEOUT:-840} + 60)) races
row netlink-fuzz-random         kernel        long    400  $LAB --smp 2 -- tests/lab/fuzz.sh 80000 20000 random
row ppsim-mtu                   kernel        -      300  $LAB --smp 2 --mem 1536 -- tests/lab/ppsim-mtu.sh
row ppsim-rss                   kernel        -      300  $LAB --smp 2 --mem 1536 -- tests/lab/ppsim-rss.sh
row ppsim-xdp                   kernel        -      450  $LAB --smp 2 --mem 1536 -- tests/lab/ppsim-xdp.sh
row ppsim-irq-race              kernel        -      300  $LAB --tcg multi --smp 4 --mem 1536 -- tests/lab/ppsim-irq-race.sh
row holders                     kernel        -      600  $LAB --smp 2 --mem 1536 -- tests/lab/holders.sh
row rtnl-stall                  kernel        -      300  $LAB --smp 2 --mem 2048 -- tests/lab/rtnl-stall.sh
row debug-kernel-catches-bugs   kernel:debug  debug  600  tests/tier/harness-cache.sh debug-detect $HARNESS_IN kmod/tests/pp_faultprobe.c tests/lab/debug-detect.sh "@$HARNESS_IMAGE" -- tests/lab/debug-detect.sh
row netdev-family               tools:6.12    -      300  $LAB --smp 2 --mem 1536 -- tests/lab/netdev-family.sh
row ppctld                      tools         -      900  $LAB --smp 2 --mem 1536 -- tests/lab/ppctld.sh
row prometheus                  tools         -      900  $LAB --smp 2 --mem 1536 -- tests/lab/prometheus.sh
row dkms                        tools:debian  long    900  tests/lab/dkms.sh
row lab-exit-status             tools         -      120  sh -c "$LAB -- sh -c 'exit 7'; [ \$? -eq 7 ]"
row lab-catches-splat           tools         -      450  tests/tier/harness-cache.sh splat-detect $HARNESS_IN tests/lab/splat-detect.sh "@$HARNESS_IMAGE" -- tests/lab/splat-detect.sh
row stress-reload               stress        -      600  $LAB --smp 2 -- tests/lab/stress/reload.py "${RELOAD_CYCLES:-10}"
row stress-mixed                stress        -      900  $LAB --tcg multi --smp 4 --mem 2048 -- tests/lab/stress/mixed.sh 60
row stress-pressure             stress        -      600  $LAB --smp 2 --mem 1024 "${fsl[@]}" -- tests/lab/stress/pressure.sh
}

# core_watch LABPID DIR: while the core boot runs, stop its guest (SIGUSR1:
# the lab's timeout) as soon as one scenario has run 30 s (x SLOW) past its
# limit: the guest's own timeout did not end it, so the guest is stuck, and
# what did not run yet runs alone instead of waiting for the boot's limit.
core_watch() {
	local pid=$1 dir=$2 spec name limit seen=() i
	while kill -0 "$pid" 2>/dev/null; do
		i=0
		for spec in "${core[@]}"; do
			name=${spec%%=*} limit=${spec#*=}
			if [ -f "$dir/$name.begin" ] && [ ! -f "$dir/$name.rc" ]; then
				[ -n "${seen[i]:-}" ] || seen[i]=$SECONDS
				if [ $((SECONDS - seen[i])) -gt $((limit + 30 * SLOW)) ]; then
					echo "=== lab: core boot: $name still running $((SECONDS - seen[i])) s after it began (limit $limit s): stopping the guest"
					echo "124 $((SECONDS - seen[i]))" > "$dir/$name.rc"
					echo "$name" > "$dir/overran"
					kill -USR1 "$pid"
					break
				fi
			fi
			i=$((i + 1))
		done
		sleep 2
	done
}

# The core boot: every gathered core scenario in one guest, judged here.
# A scenario that fails there runs again alone (ONLY=NAME), in a fresh guest.
core_boot() {
	local dir=$OUT/core t0=$SECONDS rc pid spec name limit crc secs dmesg bad note skipnote again=() args=()
	mkdir -p "$dir"
	echo "=== lab: core boot: ${core[*]%%=*} (at most $core_limit s)"
	[[ " ${core[*]%%=*} " = *" pool-races "* ]] && args=(--tcg multi --smp 3 --append "$RACE_APPEND")
	# shellcheck disable=SC2086 # RACE_ENV: words for env
	$LAB --smp 2 "${args[@]}" --numa 2 --mem 2048 --timeout $((core_limit + 60 * SLOW)) --log "$dir/dmesg" \
		-- env FUZZ_SEED=1 ${CORE_QUICK:+CORE_QUICK=1} ${RACE_ENV:-} tests/lab/core.sh "$dir" "${core[@]}" > "$dir/lab.out" 2>&1 &
	pid=$!
	# a job in the background ignores SIGINT: pass an interrupt on
	trap 'kill "$pid" 2>/dev/null; exit 130' INT TERM
	core_watch "$pid" "$dir"
	wait "$pid"
	rc=$?
	trap - INT TERM
	dmesg=$(tr -d '\r' < "$dir/dmesg" 2>/dev/null)
	# what the kernel logged outside every scenario: the boot, the tidying
	bad=$(echo "$dmesg" | awk '/ppkit-lab: scenario .*: begin/ { s = 1 } !s { print } /ppkit-lab: scenario .*: end/ { s = 0 }' |
		grep -aE "$LAB_FORBIDDEN")
	if [ -n "$bad" ] || { [ $rc -ne 0 ] && [ $rc -ne 99 ]; }; then
		note="lab exit $rc"
		[ -f "$dir/overran" ] && note="$note: stopped, $(cat "$dir/overran") overran its limit"
		[ -n "$bad" ] && note="forbidden lines outside the scenarios: $(echo "$bad" | head -n 1)"
		echo "=== lab: core boot: FAIL ($note)"
		sed 's/^/    /' "$dir/lab.out"
		result "core boot" FAIL $((SECONDS - t0)) $((core_limit + 60 * SLOW)) "$note; log $dir/dmesg"
	fi
	for spec in "${core[@]}"; do
		name=${spec%%=*} limit=${spec#*=}
		echo "=== lab: $name (core boot, at most $limit s)"
		[ -f "$dir/$name.out" ] && sed 's/^/    /' "$dir/$name.out"
		note='' skipnote=''
		if read -r crc secs < "$dir/$name.rc" 2>/dev/null; then
			case $crc in
			0) ;;
			4) skipnote=$(skip_reason "$dir/$name.out")
				[ -n "$skipnote" ] || note="exit 4 (a skip) without a skipped case saying why" ;;
			124 | 137) note="timed out after $limit s" ;;
			*) note="exit $crc" ;;
			esac
			if [ -z "$note" ] && { [ "$name" = pool-selftest ] || [ "$name" = pool-races ]; }; then
				python3 tests/tier/tap.py --ktap < "$dir/$name.out" | sed 's/^/    /'
				[ "${PIPESTATUS[0]}" -eq 0 ] ||
					note="KTAP: $(python3 tests/tier/tap.py --ktap < "$dir/$name.out" | sed -n 's/^tap: FAIL: //p' | head -n 1)"
			fi
			bad=$(echo "$dmesg" | awk -v n="$name" '
				index($0, "ppkit-lab: scenario " n ": begin") { s = 1; next }
				index($0, "ppkit-lab: scenario " n ": end") { s = 0 } s' | grep -aE "$LAB_FORBIDDEN" | sort -u)
			if [ -n "$bad" ]; then
				echo "$bad" | sed 's/^/    lab: forbidden: /'
				note="${note:+$note; }forbidden line: $(echo "$bad" | head -n 1)"
			fi
		elif [ -f "$dir/$name.begin" ]; then
			# the guest died in it: say what the kernel said last
			secs=0 note="did not finish: the guest stopped in it (core boot: lab exit $rc)"
			bad=$(echo "$dmesg" | awk -v n="$name" 'index($0, "ppkit-lab: scenario " n ": begin") { s = 1; next } s' |
				grep -aE "$LAB_FORBIDDEN" | head -n 1)
			[ -n "$bad" ] && note="$note: $bad"
		else
			secs=0 note="did not run: the guest stopped before it (core boot: lab exit $rc)"
		fi
		cp "$dir/$name.out" "$OUT/$name.log" 2>/dev/null
		if [ -z "$note" ] && [ -n "$skipnote" ]; then
			echo "=== lab: $name: SKIP ($skipnote)"
			result "$name" SKIP "$secs" "$limit" "core boot: $skipnote"
			continue
		elif [ -z "$note" ]; then
			echo "=== lab: $name: PASS ($secs s)"
			result "$name" pass "$secs" "$limit" "core boot"
		else
			echo "=== lab: $name: FAIL ($note)"
			result "$name" FAIL "$secs" "$limit" "core boot: $note; log $dir/$name.out"
			again+=("$name")
		fi
		skips "$name" "$dir/$name.out"
	done
	for name in "${again[@]}"; do
		echo "=== lab: $name failed in the core boot: again, alone in a fresh guest"
		ONLY=$name ALONE_SUFFIX=1 table
	done
}

# Every row is checked before any scenario runs: a bad row late in the
# table must not fail the suite after an hour of earlier ones.
CHECK_ROWS=1 table
[ $LIST = 1 ] || echo "=== lab: suite $SUITE on the $KERNEL kernel (results: $OUT)"
. scripts/lab/lib.sh
table
[ $LIST = 1 ] && exit 0
# CORE_SCENARIOS="NAME=LIMIT...": the core boot runs these instead (the
# lab's own test of the charging, tests/lab/splat-detect.sh)
if [ -n "${CORE_SCENARIOS:-}" ]; then
	read -ra core <<< "$CORE_SCENARIOS"
	core_limit=0
	for spec in "${core[@]}"; do core_limit=$((core_limit + ${spec#*=})); done
fi
[ ${#core[@]} -gt 0 ] && core_boot

# The failures again, at the end: a CI log may keep only its last lines.
for name in "${failed[@]}"; do
	[ -f "$OUT/$name.log" ] || continue
	echo "=== lab: $name failed on:"
	grep -E 'FAIL|not ok|^lab: |^#   ' "$OUT/$name.log" | head -n 8 | sed 's/^/    /'
done
python3 tests/tier/summary.py "$RESULTS" --title "lab ($SUITE, $KERNEL kernel)"
