#!/bin/bash
# Guest side: ppsim end to end, through ppctl.
#  - traffic in every mode: each pool (ppkit, native, none) x rx (zerocopy,
#    copy), sync full/precise, prefetch before/after, cache fifo/lifo; every
#    generated frame arrives, none is missed;
#  - pair mode: ping and a TCP transfer (iperf3) across two namespaces;
#  - XDP attach/detach under traffic: drop, pass, tx (back out of the pair);
#  - ethtool -G under traffic;
#  - unload under traffic with a socket holding pool pages: the pools wait,
#    then go once the socket closes; pp_backport unloads with nothing leaked.
# The lab fails the run on any forbidden kernel log line (see scripts/lab/run).
#   tests/lab/ppsim.sh [--quick]   --quick (make test's core boots on the
#   other lines of the kernel matrix): 5,000 frames a mode instead of
#   20,000, and ppsim's own knobs (sync, prefetch, cache order, NUMA rule:
#   the same code on every kernel) a SKIP
set -u
cd "$(dirname "$0")/../.." || exit 1
PPCTL=build/bin/ppctl
QUICK=0
[ "${1:-}" = --quick ] && QUICK=1
. tests/lab/checks.sh
. tests/lab/ppsim-lib.sh	# ethstat, ppsim_pools, tcp_exact, iperf3_received
# ppsim's pools still alive or detached, as "id:ifindex" sorted on one line
# (ifindex 0: none); with an argument, only the ids of that ifindex's pools
ppsim_pool_list() {
	$PPCTL --json list | python3 -c '
import json, sys
d = json.load(sys.stdin)
want = sys.argv[1] if len(sys.argv) > 1 else None
ps = [(str(p["id"]), str(p.get("ifindex") or 0)) for p in d["pools"] if p["owner"] == "ppsim"]
print(" ".join(sorted(i if want else f"{i}:{x}" for i, x in ps if want in (None, x))))' "$@"
}

# this scenario's part of the kernel log (make check runs several in one
# boot) begins at ppsim-lib.sh's marker (log_clean)
tests/lab/ppsim-load.sh lend_timeout_ms=600000
check "ppsim family answers" $PPCTL sim list

# --- one device, generator in count mode, every knob ---------------------------
sim_sink_dev 10.80.0.1 --ring-size 128
N=20000
[ $QUICK = 1 ] && N=5000
gen_count() {	# frames arrive: rx_packets grows by N, none missed
	local before missed0 after missed1 i
	before=$(sysstat "$dev" rx_packets); missed0=$(sysstat "$dev" rx_missed_errors)
	$PPCTL sim gen start "$dev" --count $N --size "${1:-128}" --dst-port 7777 --rate 0 >/dev/null
	for i in $(seq 100); do
		after=$(sysstat "$dev" rx_packets)
		[ $((after - before)) -ge $N ] && break
		sleep 0.2
	done
	missed1=$(sysstat "$dev" rx_missed_errors)
	[ $((after - before)) -eq $N ] && [ "$missed1" -eq "$missed0" ] ||
		{ echo "# got $((after - before)) of $N, missed $((missed1 - missed0))"; return 1; }
}
for pool in ppkit native none; do
	for rx in zerocopy copy; do
		$PPCTL sim set "$dev" --pool $pool --rx $rx >/dev/null
		check "traffic: pool $pool, rx $rx" gen_count
	done
done
$PPCTL sim set "$dev" --pool ppkit --rx zerocopy >/dev/null
for knob in "--sync full" "--sync precise" "--prefetch before-sync" "--prefetch after-sync" \
	    "--cache fifo" "--cache lifo" "--numa-rule on" "--numa-rule off"; do
	if [ $QUICK = 1 ]; then
		skip "traffic: $knob" "--quick: ppsim's own knob, the same code on every kernel (make test runs it on 6.1)"
		continue
	fi
	# shellcheck disable=SC2086
	$PPCTL sim set "$dev" $knob >/dev/null
	check "traffic: $knob" gen_count 1000
done
# fragments: two buffers a page (ppb_alloc_frag), the ring holding half the pages
check "frag refused for the native pool" \
	sh -c "$PPCTL sim set $dev --pool native --frag on 2>&1 | grep -q 'ppkit pool'"
$PPCTL sim set "$dev" --pool ppkit --frag on >/dev/null
check "traffic: --frag on" gen_count 1000
frag_books() {	# two fragments a page; the ring's 128 descriptors on 64 pages
	$PPCTL --json stats | python3 -c '
import json, sys
for p in json.load(sys.stdin)["pools"]:
    if p.get("ifname") != sys.argv[1]:
        continue
    c, g = p["counters"], p["gauges"]
    served = sum(c[k] for k in ("pages_from_cache", "pages_from_ring",
                                "pages_from_stack", "pages_from_alloc"))
    held = g["inflight"] - g["lent_pages"]
    frags, lent = c["frags_served"], c["frags_lent"]
    print(f"# {frags} fragments on {served} pages, {lent} lent; the ring holds {held} pages")
    sys.exit(0 if c["frags_served"] >= 2 * served - 2 and c["frags_lent"] > 0 and
             held <= 64 + 2 else 1)
sys.exit(1)' "$dev"
}
check "fragments: two a page, the ring on half the pages" frag_books
$PPCTL sim set "$dev" --frag off >/dev/null
# frames with an unknown ethertype are dropped by the stack, still counted
before=$(sysstat "$dev" rx_packets)
$PPCTL sim gen start "$dev" --count 5000 --ethertype 0x88b6 --size 64 >/dev/null
rx_since() { [ $(($(sysstat "$1" rx_packets) - before)) -ge "$2" ]; }
wait_for 30 rx_since "$dev" 5000 && stable 10 sysstat "$dev" rx_packets >/dev/null
check "invalid ethertype frames received and dropped" \
	test $(($(sysstat "$dev" rx_packets) - before)) -eq 5000
check "generator rejects a frame larger than the MTU" \
	sh -c "! $PPCTL sim gen start $dev --size 1600 2>/dev/null"
check "set rejects an offline IRQ CPU" sh -c "! $PPCTL sim set $dev --irq-cpu 63 2>/dev/null"

# steady-state hit rate at line rate, seed 000's drop workload
$PPCTL sim gen start "$dev" --size 64 --ethertype 0x88b6 >/dev/null
sleep 1
hit=$($PPCTL --json stats --interval 2 --count 1 | python3 -c '
import json, sys
d = json.loads(sys.stdin.read().splitlines()[-1])
r = s = 0
for p in d["pools"]:
    x = p["delta"] or {}
    if p["ifname"] != sys.argv[1] or not x: continue
    rec = x["pages_from_cache"] + x["pages_from_ring"] + x["pages_from_stack"]
    r += rec; s += rec + x["pages_from_alloc"]
print(f"{r / s:.5f}" if s else "0")' "$dev")
echo "# allocation hit rate at line rate: $hit"
check "hit rate >= 99.9% at line rate" python3 -c "import sys; sys.exit(0 if $hit >= 0.999 else 1)"

# ethtool -G and XDP under traffic (generator still running)
for r in 64 1024 256; do
	check "ethtool -G rx $r under traffic" ethtool -G "$dev" rx $r
done
check "ethtool -g shows the new size" sh -c "ethtool -g $dev | grep -A5 Current | grep -q 'RX:.*256'"
# The lab's ppsim calls XDP programs without the kernel's dispatcher:
# QEMU TCG may run the dispatcher's old code after it is live-patched under
# traffic (scripts/lab/run).  Under traffic, then, ppsim's own ring swap.
# Each attach must drop: rx0_xdp_drop (ppsim's per-queue count, kept across
# ring swaps) grows while the program is attached, and stops with it.
drops() { ethstat "$dev" rx0_xdp_drop; }
drops_above() { [ "$(drops)" -gt "$1" ]; }
rx_above() { [ "$(sysstat "$dev" rx_packets)" -gt "$1" ]; }
for i in 1 2; do
	d0=$(drops)
	check "xdp attach drop under traffic ($i)" $PPCTL xdp attach "$dev" --prog drop
	check "XDP_DROP under traffic ($i): frames dropped while attached" wait_for 10 drops_above "$d0"
	check "xdp detach under traffic ($i)" $PPCTL xdp detach "$dev"
	# detached: the generator's next 1,000 frames reach the stack, none dropped
	d1=$(drops) r1=$(sysstat "$dev" rx_packets)
	wait_for 10 rx_above $((r1 + 1000))
	d2=$(drops)
	echo "# attach $i: $((d1 - d0)) dropped while attached, $((d2 - d1)) after the detach"
	check "XDP_DROP under traffic ($i): no drop once detached" \
		test "$d2" -eq "$d1" -a "$(sysstat "$dev" rx_packets)" -gt $((r1 + 1000))
done
# ... and once through the dispatcher, patched with the generator paused
$PPCTL sim gen stop "$dev" > /dev/null
echo Y > /sys/module/ppsim/parameters/xdp_dispatcher
check "xdp attach drop, through the dispatcher" $PPCTL xdp attach "$dev" --prog drop
d0=$(drops) r0=$(sysstat "$dev" rx_packets)
$PPCTL sim gen start "$dev" --count 2000 --size 64 --ethertype 0x88b6 > /dev/null
dropped() { [ $(($(drops) - d0)) -ge 2000 ]; }
wait_for 30 dropped && stable 10 drops > /dev/null
echo "# through the dispatcher: $(($(drops) - d0)) dropped of $(($(sysstat "$dev" rx_packets) - r0)) received"
check "XDP_DROP through the dispatcher: exactly the 2000 frames sent" \
	test $(($(drops) - d0)) -eq 2000 -a $(($(sysstat "$dev" rx_packets) - r0)) -eq 2000
check "xdp detach, through the dispatcher" $PPCTL xdp detach "$dev"
echo "${PPSIM_XDP_DISPATCHER:-Y}" > /sys/module/ppsim/parameters/xdp_dispatcher
check "rx_pp_alloc_fast counts in ethtool -S" test "$(ethstat "$dev" rx_pp_alloc_fast)" -gt 0

# --- a pair across two namespaces -----------------------------------------------
peer_listens() { ip netns exec peer ss -Hltn 'sport = :5201' | grep -q .; }
$PPCTL sim add --pair --rx-queues 2 --tx-queues 2 > "$SIM_TMP/pair.txt"
read -r a b <<< "$(tr '\n' ' ' < "$SIM_TMP/pair.txt")"
ip netns add peer
ip link set "$b" netns peer
ip addr add 10.81.0.1/24 dev "$a"; ip link set "$a" up
ip -n peer addr add 10.81.0.2/24 dev "$b"; ip -n peer link set "$b" up; ip -n peer link set lo up
# The family answers this namespace only: the pools of b, in peer, name no
# interface here (b's ifindex there would name another device here, or none)
other_ns_pools() {
	$PPCTL --json list | python3 -c '
import json, sys
live = [p for p in json.load(sys.stdin)["pools"] if p["owner"] == "ppsim" and p["state"] == "live"]
named_b = [p for p in live if p.get("ifname") == sys.argv[1]]
print(len(named_b), sum(1 for p in live if p.get("ifindex") is None))' "$b"
}
check "pair: b's 2 pools, in another namespace, name no interface here ($(other_ns_pools) named b, without one)" \
	test "$(other_ns_pools)" = "0 2"
check "pair: ping across" sh -c "ping -c 3 -W 5 10.81.0.2 >/dev/null"
ip netns exec peer iperf3 -s -1 -D -B 10.81.0.2
wait_for 10 peer_listens
check "pair: TCP transfer (iperf3, 16 MiB)" sh -c "iperf3 -c 10.81.0.2 -n 16M -J > $SIM_TMP/iperf.json"
# what the receiver got: iperf3's server stops reading when the client ends
# the test (87-99% of what was sent, by kernel), so its count is checked
# against what the sockets may still hold, and tcp_exact counts and hashes
# 16 MiB to the byte
check "pair: iperf3's receiver got the 16 MiB sent, less at most the sockets' buffers" \
	iperf3_received "$SIM_TMP/iperf.json" $((16 << 20))
check "pair: the receiver got 16 MiB exactly (byte count, SHA-256)" \
	tcp_exact peer 10.81.0.2 $((16 << 20))
# XDP_TX: frames generated into b's ring bounce back out of the pair into a
ip netns exec peer $PPCTL xdp attach "$b" --prog tx >/dev/null
before=$(sysstat "$a" rx_packets)
ip netns exec peer $PPCTL sim gen start "$b" --count 3000 --ethertype 0x88b6 --size 64 >/dev/null
wait_for 30 rx_since "$a" 3000
check "XDP_TX: frames came back out of the pair" test $(($(sysstat "$a" rx_packets) - before)) -ge 3000
ip netns exec peer $PPCTL xdp detach "$b"
# XDP pass attach/detach during a TCP transfer
ip netns exec peer iperf3 -s -1 -D -B 10.81.0.2
wait_for 10 peer_listens
iperf3 -c 10.81.0.2 -t 6 -J > "$SIM_TMP/iperf2.json" &
ipf=$!
sleep 1
for i in 1 2 3; do
	ip netns exec peer $PPCTL xdp attach "$b" --prog pass >/dev/null || bad "xdp pass attach $i"
	sleep 0.5
	ip netns exec peer $PPCTL xdp detach "$b" >/dev/null || bad "xdp detach $i"
	ip netns exec peer ethtool -G "$b" rx $((128 << (i % 2))) || bad "ethtool -G $i"
	sleep 0.5
done
check "TCP survives XDP attach/detach and resizes" wait $ipf

# --- unload under traffic, a socket holding pool pages ---------------------------
# sim0 lends 100 pages to a socket that never reads (few enough to stay in
# the pool's lent FIFO; a socket holding more than the FIFO gets them
# orphaned, as pp_selftest checks); the pair carries TCP while ppsim goes.
kill $sink 2>/dev/null
python3 -c 'import socket,time; s=socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.bind(("0.0.0.0", 7778)); time.sleep(3600)' &
holder=$!
# python starts slowly under TCG: frames sent before the bind are refused
wait_for 10 sh -c "ss -Hlun 'sport = :7778' | grep -q ."
before=$(sysstat "$dev" rx_packets)
$PPCTL sim gen start "$dev" --count 100 --dst-port 7778 --size 256 >/dev/null
wait_for 30 rx_since "$dev" 100
ip netns exec peer iperf3 -s -1 -D -B 10.81.0.2
wait_for 10 peer_listens
iperf3 -c 10.81.0.2 -t 30 >/dev/null 2>&1 &
ipf=$!
sleep 2
held=$(cat "/sys/class/net/$dev/ifindex")
held_pools=$(ppsim_pool_list "$held")
check "unload ppsim under traffic" rmmod ppsim
kill $ipf 2>/dev/null; wait $ipf 2>/dev/null
pkill iperf3	# the server's TCP queue holds the peer port's pages too
for i in $(seq 25); do pgrep -x iperf3 >/dev/null || break; sleep 0.2; done
# A killed receiver's socket may linger as an orphan (FIN_WAIT1 towards a
# device that is gone) with segments in its out-of-order queue, on pool
# pages, for minutes: abort the transfer's sockets in both namespaces.
ss -K -tn '( sport = :5201 or dport = :5201 )' >/dev/null
ip netns exec peer ss -K -tn '( sport = :5201 or dport = :5201 )' >/dev/null
# skbs freed on another CPU wait on its defer list (flush_defer_lists)
flush_defer_lists
for i in $(seq 50); do [ "$(ppsim_pools)" -le 1 ] && break; sleep 0.2; done
$PPCTL list | sed 's/^/# /'
# ... and, its netdev gone, names no ifindex (one that a later device may get)
check "only the pool of $dev waits for the socket's pages, with no ifindex" \
	test "$(ppsim_pool_list)" = "$(for i in $held_pools; do echo "$i:0"; done | sort | xargs)"
kill $holder; wait $holder 2>/dev/null
flush_defer_lists
for i in $(seq 50); do [ "$(ppsim_pools)" -eq 0 ] && break; sleep 0.2; done
check "pools gone once the socket closed (no page lost)" test "$(ppsim_pools)" -eq 0
check "pp_backport unloads" rmmod pp_backport
check "nothing leaked or orphaned" log_clean

finish ppsim
exit
