#!/bin/bash
# Guest side: the netlink fuzzer against pp_backport, with ppsim's pools
# carrying traffic all along.
#
#   make modules tools                                 (on the host)
#   scripts/lab/run --smp 2 -- tests/lab/fuzz.sh [ROOT_COUNT [USER_COUNT [SEED]]]
#
# SEED: a number (make check runs seed 1) or "random" (the default: a new
# one each run, printed, with the command that replays it if the run fails).
#
# ppkit-nlfuzz (tests/fuzz/) sends ROOT_COUNT (default 80,000) messages as
# root and USER_COUNT (default 20,000) as nobody: well-formed and malformed
# requests for every command (random attributes, wrong lengths, nested
# garbage, 2,000 attributes or 60 KiB ones, attribute lengths past the end,
# trailing bytes, unknown commands, random flags, short and truncated
# headers).  It fails on a reply that breaks a rule (a rejection without an
# extack message other than the netlink core's own, an unprivileged pool-set
# that is not EPERM, a valid request rejected, a rejected pool-set that
# changed a pool).  Then the modules unload.  The lab fails the run on any
# kernel splat or leak report.  Ends with finish (tests/lab/checks.sh):
# the plan, the totals and the exit status.
set -u
cd "$(dirname "$0")/../.." || exit 1
. tests/lab/checks.sh
PPCTL=build/bin/ppctl
FUZZ=build/tools/bin/ppkit-nlfuzz
ROOT_N=${1:-80000}
USER_N=${2:-20000}
SEED=${3:-random}
[ "$SEED" = random ] && SEED=$(od -An -N4 -tu4 /dev/urandom | tr -d ' ')
REPLAY="scripts/lab/run --smp 2 -- tests/lab/fuzz.sh $ROOT_N $USER_N $SEED"
echo "# seed $SEED"
T=$(mktemp -d)

[ -x $FUZZ ] || { bad "$FUZZ missing: make tools"; finish fuzz; exit; }
tests/lab/ppsim-load.sh
sim_sink_dev 10.81.0.1 --rx-queues 2 --ring-size 256
pair=$($PPCTL sim add --pair | head -1)
check "ppsim devices with pools: $dev and a pair" sh -c "$PPCTL list | grep -q ppsim"
rx0=$(cat "/sys/class/net/$dev/statistics/rx_packets")
$PPCTL sim gen start "$dev" --size 128 --dst-port 7777 --rate 20000 > /dev/null

# fuzz WHO COUNT [--user UID]: one run, its summary checked.
fuzz() {
	local who=$1 n=$2 t0=$SECONDS rc
	shift 2
	$FUZZ --count "$n" --seed "$SEED" --json "$@" > "$T/$who.json" 2> "$T/$who.err"
	rc=$?
	cat "$T/$who.err"
	echo "# $who: $(cat "$T/$who.json") ($((SECONDS - t0)) s)"
	check "as $who: $n messages sent, no rule broken (exit $rc)" python3 - "$T/$who.json" "$n" "$rc" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
assert int(sys.argv[3]) == 0 and d["violations"] == 0 and d["sent"] == int(sys.argv[2]), d
# every kind was tried, and the kernel both accepted and rejected
assert all(v > 0 for v in d["kinds"].values()), d["kinds"]
assert d["accepted"] > 0 and d["rejected_with_message"] > 0, d
PY
}
fuzz root "$ROOT_N"
check "as root: the pools' configuration checked after every pool-set" python3 -c "
import json; d = json.load(open('$T/root.json')); assert d['state_checks'] > $ROOT_N // 10, d"
fuzz nobody "$USER_N" --user 65534
check "as nobody: pool-set got EPERM from the core" python3 -c "
import json; d = json.load(open('$T/nobody.json')); assert d['core_errno']['EPERM'] > 0, d"

$PPCTL sim gen stop "$dev" > /dev/null
rx1=$(cat "/sys/class/net/$dev/statistics/rx_packets")
echo "# traffic during the fuzzing: $((rx1 - rx0)) frames on $dev"
check "traffic ran all along ($((rx1 - rx0)) frames)" test $((rx1 - rx0)) -gt 1000
check "the pools still answer: ppctl stats" sh -c "$PPCTL stats > /dev/null"
check "a genetlink header with its reserved field set is refused (EINVAL)" tests/lab/genl-reserved.py
kill $sink 2>/dev/null; wait $sink 2>/dev/null
$PPCTL sim del "$dev" > /dev/null 2>&1
[ -n "$pair" ] && $PPCTL sim del "$pair" > /dev/null 2>&1
check "ppsim unloads" rmmod ppsim
check "pp_backport unloads (no pool left behind)" rmmod pp_backport
rm -rf "$T"
[ "$failn" -eq 0 ] || echo "FAIL: seed $SEED; replay it with: $REPLAY"
finish fuzz
exit
