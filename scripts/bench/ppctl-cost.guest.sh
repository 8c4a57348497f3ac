#!/bin/bash
# Guest side of scripts/bench/ppctl-cost.sh: what a ppctl command costs,
# in one boot, with POOLS pools (pp_poolgen), ROUNDS interleaved rounds.
# Each round runs, in turn, /bin/true, `ppctl --help`, `ppctl --json list`,
# `ppctl --json stats` and `ppctl stats`, for each binary named in PPCTLS
# (space separated), and prints one line per run:
#   ppctl-cost: round=R bin=B cmd=C ms=X
# Times come from bash's $EPOCHREALTIME: no process is started to read the
# clock.  Output goes to /dev/null; each binary's --json stats is checked
# for POOLS pools first.
#
# The binaries, /bin/true included, run from copies in the guest's /tmp (its
# root's tmpfs layer, where `make install` or install.sh puts them): the lab
# shares the repository and the root over 9p with cache=none, which reads
# every page of every exec from the host again, a cost that grows with the
# file and that no installed binary pays.  A dynamically linked ppctl still
# loads its libraries from the 9p root.
set -u
cd "$(dirname "$0")/../.." || exit 1
POOLS=${POOLS:-1000}
ROUNDS=${ROUNDS:-9}
read -r -a BINS <<< "${PPCTLS:-build/bin/ppctl}"
die() { echo "ppctl-cost: $*" >&2; exit 1; }

ip link set lo up
insmod kmod/pool/pp_backport.ko || die "insmod pp_backport failed"
insmod kmod/tests/pp_poolgen.ko pools="$POOLS" inflight=8 churn=0 || die "insmod pp_poolgen failed"
for i in "${!BINS[@]}"; do
	b=${BINS[$i]}
	[ -x "$b" ] || die "$b: not an executable"
	install -m 755 "$b" "/tmp/ppctl-cost-$i" || die "cannot copy $b to /tmp"
	BINS[i]=/tmp/ppctl-cost-$i
	b=${BINS[$i]}
	n=$("$b" --json stats | python3 -c 'import json,sys; print(len(json.load(sys.stdin)["pools"]))') ||
		die "$b --json stats failed"
	[ "$n" = "$POOLS" ] || die "$b --json stats: $n pools, not $POOLS"
done
install -m 755 /bin/true /tmp/ppctl-cost-true || die "cannot copy /bin/true to /tmp"
FLOOR=${FLOOR:-}
if [ -n "$FLOOR" ]; then
	install -m 755 "$FLOOR" /tmp/ppctl-cost-floor || die "cannot copy $FLOOR to /tmp"
	/tmp/ppctl-cost-floor stats || die "$FLOOR stats failed"
fi

# ms CMD...: the run time of CMD in ms, stdout to /dev/null
ms() {
	local t0=$EPOCHREALTIME t1
	"$@" > /dev/null
	t1=$EPOCHREALTIME
	echo "$t0 $t1" | awk '{ printf "%.3f\n", ($2 - $1) * 1000 }'
}
for r in $(seq "$ROUNDS"); do
	for i in "${!BINS[@]}"; do
		b=${BINS[$i]}
		echo "ppctl-cost: round=$r bin=$i cmd=true ms=$(ms /tmp/ppctl-cost-true)"
		echo "ppctl-cost: round=$r bin=$i cmd=help ms=$(ms "$b" --help)"
		echo "ppctl-cost: round=$r bin=$i cmd=json_list ms=$(ms "$b" --json list)"
		echo "ppctl-cost: round=$r bin=$i cmd=json_stats ms=$(ms "$b" --json stats)"
		echo "ppctl-cost: round=$r bin=$i cmd=stats ms=$(ms "$b" stats)"
	done
	if [ -n "$FLOOR" ]; then
		echo "ppctl-cost: round=$r bin=0 cmd=floor_list ms=$(ms /tmp/ppctl-cost-floor list)"
		echo "ppctl-cost: round=$r bin=0 cmd=floor_stats ms=$(ms /tmp/ppctl-cost-floor stats)"
	fi
done
{ rmmod pp_poolgen && rmmod pp_backport; } || die "unload failed"
echo "ppctl-cost: done"
