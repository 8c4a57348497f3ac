#!/bin/bash
# Guest side: an unprivileged reader of statistics never stalls RTNL.
# stats-get is open to every user and, with lent ages (ppctl stats asks for
# them), passes over every lent page of every pool; ethtool -G destroys and
# creates a device's pools under RTNL.  A 16-queue ppsim whose pools lend
# $FRAMES pages to a UDP socket that never reads (so they stay in the lent
# FIFOs, ppsim_load's lend timeout being long); then ethtool -G, timed alone
# and while $READERS unprivileged users loop stats-get dumps with lent ages
# (what `ppctl -j stats` asks, tests/lab/stats-reader.py), interleaved,
# $ROUNDS times each.  The median with the readers must stay within
# $MAX_RATIO times the median without them.
set -u
cd "$(dirname "$0")/../.." || exit 1
PPCTL=$PWD/build/bin/ppctl
. tests/lab/checks.sh
. tests/lab/ppsim-lib.sh
FRAMES=${STALL_FRAMES:-60000}
READERS=${STALL_READERS:-2}
ROUNDS=${STALL_ROUNDS:-5}
MAX_RATIO=${STALL_MAX_RATIO:-1.5}
OUT=build/lab/rtnl-stall
mkdir -p "$OUT"

ppsim_load
dev=$($PPCTL sim add --rx-queues 16 --tx-queues 1 --ring-size 4096) || exit 1
ip link set "$dev" up
ip addr add 10.95.0.1/24 dev "$dev"
hold_sock 7777 1024
check "a socket that never reads" kill -0 "$holder"
before=$(sysstat "$dev" rx_packets)
$PPCTL sim gen start "$dev" --count "$FRAMES" --size 200 --dst-port 7777 --rate 0 > /dev/null
check "$FRAMES frames received" wait_for 300 sh -c \
	"[ \$((\$(cat /sys/class/net/$dev/statistics/rx_packets) - $before)) -ge $FRAMES ]"
lent() {
	$PPCTL -j stats | python3 -c 'import json, sys
print(sum((p.get("gauges") or {}).get("lent_held") or 0 for p in json.load(sys.stdin)["pools"]))'
}
held=$(lent)
echo "# the stack holds $held lent pages of 16 pools"
check "most of them are held in the lent FIFOs ($held)" test "${held:-0}" -ge $((FRAMES / 2))

# ethtool -G to a small ring and back: the held pages stay in the first pools'
# FIFOs (destroyed, waiting for them), which every stats-get passes over
ring=64
timed_ring() {
	local t0 t1
	ring=$((ring == 64 ? 128 : 64))
	t0=$(date +%s%N)
	taskset -c 0 ethtool -G "$dev" rx "$ring" || return 1
	t1=$(date +%s%N)
	echo $(((t1 - t0) / 1000000))
}
# reader N: stats-get dumps with lent ages in a loop as nobody (no exec
# between them, unlike a loop of ppctl), on CPU 1 while ethtool runs on
# CPU 0: what is timed is waiting for the readers' locks, not for a CPU;
# says when its first dump is done
reader() {
	exec taskset -c 1 setpriv --reuid=65534 --regid=65534 --clear-groups \
		python3 tests/lab/stats-reader.py kmod/include/uapi/linux/ppkit.h "$READY.$1"
}
READY=$(mktemp -d)/reading
chmod 1777 "$(dirname "$READY")"
readers_on() { [ "$(find "$(dirname "$READY")" -name 'reading.*' | wc -l)" -ge "$READERS" ]; }
alone=() busy=()
for _ in $(seq "$ROUNDS"); do
	alone+=("$(timed_ring)")
	rm -f "$READY".*
	pids=()
	for r in $(seq "$READERS"); do
		reader "$r" &
		pids+=($!)
	done
	wait_for 60 readers_on || bad "the readers started"
	busy+=("$(timed_ring)")
	kill "${pids[@]}" 2> /dev/null
	wait "${pids[@]}" 2> /dev/null
done
median() { printf '%s\n' "$@" | sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
ma=$(median "${alone[@]}") mb=$(median "${busy[@]}")
echo "# ethtool -G (16 pools destroyed and created) alone: ${alone[*]} ms, median $ma"
echo "# with $READERS unprivileged readers of stats-get: ${busy[*]} ms, median $mb"
ratio=$(python3 -c "print(f'{$mb / max($ma, 1):.2f}')")
echo "# ratio $ratio (at most $MAX_RATIO)"
check "every ethtool -G timed" test ${#alone[@]} -eq "$ROUNDS" -a ${#busy[@]} -eq "$ROUNDS"
check "unprivileged stats readers do not stall RTNL: ${mb} ms against ${ma} ms (x$ratio)" \
	python3 -c "import sys; sys.exit(0 if $mb <= $MAX_RATIO * max($ma, 1) else 1)"

kill "$holder"
wait "$holder" 2> /dev/null
ppsim_unload
finish rtnl-stall
