#!/bin/bash
# Guest side: the core scenarios one after another in this one boot (make
# check), each between two markers in the kernel log, so that a forbidden
# line is charged to the scenario that was running.
#
#   scripts/lab/run --smp 2 --numa 2 --mem 2048 -- tests/lab/core.sh DIR NAME=SECONDS...
#
# For each NAME (a scenario below), in order: "ppkit-lab: scenario NAME:
# begin" in the kernel log, the scenario with a limit of SECONDS, "ppkit-lab:
# scenario NAME: end (exit N)", its output in DIR/NAME.out and "EXIT SECONDS"
# in DIR/NAME.rc; DIR/NAME.begin appears when it starts (the host's
# watchdog stops a guest whose scenario overruns its limit).  Between scenarios, whatever a failed one left behind
# (modules, a network namespace, iperf3) is removed.  tests/lab/run-all.sh
# judges the results.
#   pool-selftest     tests/lab/pool-selftest.sh
#   unload            tests/lab/unload-inflight.sh
#   ppctl-e2e         tests/lab/ppctl-e2e.sh --quick (no 1,000-pool timing)
#   ppsim             tests/lab/ppsim.sh
#   netlink-fuzz      tests/lab/fuzz.sh with FUZZ_SEED (default 1), 20,000
#                     messages as root and 2,000 as nobody
#   pool-races        tests/lab/race.sh (READS, ROUNDS, UNLOAD_ROUNDS): the
#                     debug subset's, booted with its --smp 3 and --append
# CORE_QUICK=1 (make test's core boots of the other lines): ppsim --quick,
# and the fuzzer's 5,000 and 1,000 messages.
#   probe-quiet, probe-splat, probe-stuck   the lab's own test
#                     (tests/lab/splat-detect.sh): nothing, a WARNING in the
#                     kernel log, and a scenario its limit cannot end (it
#                     stops the timeout that runs it), as in a stuck guest
set -u
cd "$(dirname "$0")/../.." || exit 1
dir=$1
shift
mark() { echo "ppkit-lab: scenario $*" > /dev/kmsg; }
tidy() {
	local m
	pkill -x iperf3 2> /dev/null
	ip netns del peer 2> /dev/null
	for m in ppsim pp_sockhold pp_poolgen pp_selftest pp_race pp_backport; do
		grep -q "^$m " /proc/modules && rmmod "$m" 2> /dev/null
	done
	return 0
}
# shellcheck disable=SC2016 # $PPID: the probe's shell's (its timeout)
stuck='kill -STOP $PPID; sleep 3600'
for spec in "$@"; do
	name=${spec%%=*} limit=${spec#*=}
	case $name in
	pool-selftest) cmd=(tests/lab/pool-selftest.sh) ;;
	unload-with-pages-in-socket) cmd=(tests/lab/unload-inflight.sh) ;;
	pool-races) cmd=(tests/lab/race.sh) ;;
	ppctl-e2e) cmd=(tests/lab/ppctl-e2e.sh --quick) ;;
	ppsim) cmd=(tests/lab/ppsim.sh ${CORE_QUICK:+--quick}) ;;
	netlink-fuzz) if [ -n "${CORE_QUICK:-}" ]; then
			cmd=(tests/lab/fuzz.sh 5000 1000 "${FUZZ_SEED:-1}")
		else
			cmd=(tests/lab/fuzz.sh 20000 2000 "${FUZZ_SEED:-1}")
		fi ;;
	probe-quiet*) cmd=(true) ;;
	probe-stuck) cmd=(sh -c "$stuck") ;;
	probe-splat) cmd=(sh -c "echo '<4>WARNING: CPU: 0 PID: 1 at ppkit-lab-core-probe' > /dev/kmsg") ;;
	*) echo "core: unknown scenario '$name'" > "$dir/$name.out"; echo "2 0" > "$dir/$name.rc"; continue ;;
	esac
	mark "$name: begin"
	: > "$dir/$name.begin"
	t0=$SECONDS
	timeout -k 10 "$limit" "${cmd[@]}" > "$dir/$name.out" 2>&1
	rc=$?
	tidy
	mark "$name: end (exit $rc)"
	echo "$rc $((SECONDS - t0))" > "$dir/$name.rc"
done
