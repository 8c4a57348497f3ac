#!/bin/bash
# Guest side of `make run`'s last step: ppsim carrying traffic, seen live
# through ppctl: a generator at line rate on one port, TCP across a pair,
# then XDP_DROP, each with per-second pool rates; ppctld samples all along,
# and ends the demo with ppctl top, ppctl history and its /metrics.
set -eu
cd "$(dirname "$0")/../.."
P=build/bin/ppctl
say() { echo; echo "\$ $*"; "$@"; }
tests/lab/ppsim-load.sh
ip link set lo up
build/bin/ppctld --foreground > build/lab/demo-ppctld.log 2>&1 &
ppctld=$!
dev=$($P sim add)
$P sim add --pair > build/lab/demo-pair.txt
read -r a b <<< "$(tr '\n' ' ' < build/lab/demo-pair.txt)"
ip netns add demo
ip link set "$b" netns demo
ip link set "$dev" up; ip link set "$a" up; ip addr add 10.90.0.1/24 dev "$a"
ip -n demo link set "$b" up; ip -n demo addr add 10.90.0.2/24 dev "$b"
say $P sim list
echo; echo "== $dev: 64-byte frames at line rate, dropped by the stack (seed 000's test)"
$P sim gen start "$dev" --size 64 --ethertype 0x88b6
ip netns exec demo iperf3 -s -D -B 10.90.0.2
sleep 1
echo "== $a -> $b: TCP (iperf3) at the same time"
iperf3 -c 10.90.0.2 -t 8 > build/lab/demo-iperf.txt 2>&1 &
iperf=$!
sleep 1
say $P stats --interval 1 --count 4
wait "$iperf"
tail -n 4 build/lab/demo-iperf.txt
echo; echo "== $dev: XDP_DROP in the driver, pages recycled straight into the cache"
$P xdp attach "$dev" --prog drop
say $P stats --dev "$dev" --interval 1 --count 2
say $P stats --dev "$dev"
echo; echo "\$ ethtool -S $dev | grep -v ': 0\$'"
ethtool -S "$dev" | grep -v ': 0$'
echo; echo "== ppctld sampled all along: ppctl top, ppctl history, its /metrics"
say $P top -n 1 | cat	# piped: a plain screen, no terminal codes
id=$($P --json list | python3 -c 'import json, sys; print([p["id"] for p in json.load(sys.stdin)["pools"] if p["ifname"] == sys.argv[1]][0])' "$dev")
say $P history "$id" --since 6s
echo; echo "\$ curl -s 127.0.0.1:9105/metrics | grep -E '^ppkit_pool_(alloc_hit_ratio|recycle_ratio|inflight_pages)\\{pool=\"$id\"'"
curl -s 127.0.0.1:9105/metrics | grep -E "^ppkit_pool_(alloc_hit_ratio|recycle_ratio|inflight_pages)\\{pool=\"$id\""
kill "$ppctld"; wait "$ppctld" || true
$P sim gen stop "$dev" >/dev/null
$P xdp detach "$dev" >/dev/null
pkill iperf3 || true
rmmod ppsim
rmmod pp_backport
