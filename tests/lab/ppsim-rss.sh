#!/bin/bash
# Guest side: ppsim's RSS and its generator.
#  - RSS: the generator's flows (64 by default) spread over every RX queue of
#    a 4-queue device; one flow lands on one queue only (a hash, not round
#    robin); UDP flows and TCP across a pair spread over the peer's queues;
#  - the generator: its rate is bounded (-ERANGE with a message), gen_flows
#    is range-checked, and at line rate with the rings down it sleeps
#    instead of spinning, and resumes when they come up;
#  - then the pools' books balance and ppsim unloads with nothing leaked.
set -u
cd "$(dirname "$0")/../.." || exit 1
PPCTL=build/bin/ppctl
. tests/lab/checks.sh
. tests/lab/ppsim-lib.sh
mkdir -p build/lab
FLOWS=/sys/module/ppsim/parameters/gen_flows

ppsim_load
sim_sink_dev 10.92.0.1 --rx-queues 4 --ring-size 256
rx_since() { [ $(($(sysstat "$1" rx_packets) - before)) -ge "$2" ]; }
# per-queue deltas of rxN_packets since $q0
qdelta() {
	local now
	now=$(qstats "$dev" packets)
	python3 -c 'import sys; a, b = sys.argv[1].split(), sys.argv[2].split()
print(" ".join(str(int(y) - int(x)) for x, y in zip(a, b)))' "$q0" "$now"
}
gen() {	# gen N: N UDP frames to the sink, all received
	before=$(sysstat "$dev" rx_packets) q0=$(qstats "$dev" packets)
	$PPCTL sim gen start "$dev" --count "$1" --size 128 --dst-port 7777 --rate 0 > /dev/null &&
		wait_for 60 rx_since "$dev" "$1"
}

# --- the generator's flows over the queues ------------------------------------------
check "gen_flows is 64 by default" test "$(cat $FLOWS)" -eq 64
check "8000 frames of 64 flows received" gen 8000
d=$(qdelta)
echo "# per-queue packets, 64 flows: $d"
check "64 flows: every one of the 4 queues got some" \
	python3 -c 'import sys; q = list(map(int, sys.argv[1].split())); sys.exit(0 if len(q) == 4 and min(q) > 0 and sum(q) == 8000 else 1)' "$d"
echo 1 > $FLOWS
check "2000 frames of one flow received" gen 2000
d=$(qdelta)
echo "# per-queue packets, 1 flow: $d"
check "1 flow: one queue got all 2000 (a hash, not round robin)" \
	python3 -c 'import sys; q = sorted(map(int, sys.argv[1].split())); sys.exit(0 if q == [0, 0, 0, 2000] else 1)' "$d"
check "gen_flows 0 refused" sh -c "! echo 0 > $FLOWS 2>/dev/null"
check "gen_flows 4097 refused" sh -c "! echo 4097 > $FLOWS 2>/dev/null"
check "gen_flows still 1" test "$(cat $FLOWS)" -eq 1
echo 64 > $FLOWS

# --- the rate bound ------------------------------------------------------------------
$PPCTL sim gen start "$dev" --rate 100000001 --count 1 > build/lab/rss-rate.out 2>&1
rc=$?
sed 's/^/# /' build/lab/rss-rate.out
check "rate above 100 Mpps refused with a reason" \
	sh -c "[ $rc -ne 0 ] && grep -qi 'out of range' build/lab/rss-rate.out"
check "rate 100 Mpps accepted" $PPCTL sim gen start "$dev" --rate 100000000 --count 1000 --size 128 --dst-port 7777
$PPCTL sim gen stop "$dev" > /dev/null
# a paced generator: every frame due is received or, finding no descriptor, missed
before=$(sysstat "$dev" rx_packets) m0=$(sysstat "$dev" rx_missed_errors)
$PPCTL sim gen start "$dev" --count 2000 --size 128 --dst-port 7777 --rate 20000 > /dev/null
paced() { [ $(($(sysstat "$dev" rx_packets) - before + $(sysstat "$dev" rx_missed_errors) - m0)) -ge 2000 ]; }
wait_for 30 paced && stable 10 sysstat "$dev" rx_packets > /dev/null
got=$(($(sysstat "$dev" rx_packets) - before)) missed=$(($(sysstat "$dev" rx_missed_errors) - m0))
echo "# paced at 20 kpps: $got received, $missed missed"
check "paced generator: 2000 frames received or missed" test $((got + missed)) -eq 2000

# --- line rate with the rings down: the generator sleeps ----------------------------
gen_cpu_ticks() {	# utime + stime of the generator's kthread, in clock ticks
	local pid
	pid=$(pgrep -x "ppsim-gen/$dev") || return 1
	awk '{ print $14 + $15 }' "/proc/$pid/stat"
}
ip link set "$dev" down
$PPCTL sim gen start "$dev" --size 64 --ethertype 0x88b6 --rate 0 > /dev/null
wait_for 5 gen_cpu_ticks > /dev/null
t0=$(gen_cpu_ticks) s0=$SECONDS
sleep 3	# a window to measure the CPU use of, not a wait for a condition
t1=$(gen_cpu_ticks) s1=$SECONDS
hz=$(getconf CLK_TCK)
echo "# generator at line rate, rings down: $((t1 - t0)) ticks of CPU in $((s1 - s0)) s ($hz ticks/s)"
check "line rate, rings down: the generator sleeps (< 10% of a CPU)" \
	test $(((t1 - t0) * 10)) -lt $(((s1 - s0) * hz))
before=$(sysstat "$dev" rx_packets)
ip link set "$dev" up
check "rings up: the sleeping generator resumes" wait_for 20 rx_since "$dev" 10000
$PPCTL sim gen stop "$dev" > /dev/null

# --- a pair: UDP flows and TCP spread over the peer's queues ------------------------
peer_listens() { ip netns exec rss ss -Hltn 'sport = :5201' | grep -q .; }
$PPCTL sim add --pair --rx-queues 2 --tx-queues 2 > build/lab/rss-pair.txt
read -r a b <<< "$(tr '\n' ' ' < build/lab/rss-pair.txt)"
ip netns add rss
ip link set "$b" netns rss
ip addr add 10.93.0.1/24 dev "$a"; ip link set "$a" up
ip -n rss addr add 10.93.0.2/24 dev "$b"; ip -n rss link set "$b" up; ip -n rss link set lo up
check "pair: ping across" quiet ping -c 2 -W 5 10.93.0.2
pq() { ip netns exec rss ethtool -S "$b" | awk '$1 ~ /^rx[0-9]+_packets:$/ { printf "%s ", $2 }'; }
q0=$(pq)
python3 - <<'PY'
import socket
for port in range(40000, 40016):
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.bind(("10.93.0.1", port))
    for _ in range(50):
        s.sendto(b"x" * 64, ("10.93.0.2", 7777))
PY
q1=$(pq)
d=$(python3 -c 'import sys; print(" ".join(str(int(y) - int(x)) for x, y in zip(sys.argv[1].split(), sys.argv[2].split())))' "$q0" "$q1")
echo "# peer's per-queue packets, 16 UDP flows: $d"
check "16 UDP flows over the pair: both of the peer's queues got some" \
	python3 -c 'import sys; q = list(map(int, sys.argv[1].split())); sys.exit(0 if len(q) == 2 and min(q) > 0 else 1)' "$d"
ip netns exec rss iperf3 -s -1 -D -B 10.93.0.2
wait_for 10 peer_listens
q0=$(pq)
timeout 60 iperf3 -c 10.93.0.2 -n 16M -P 8 -J > build/lab/rss-iperf.json 2> /dev/null
q1=$(pq)
# what the receiver got: iperf3's server stops reading each stream when
# the client ends the test (short by what the sockets still held: 1.6% on
# 6.1, 11% on 5.10), so its count is checked against that bound, and
# tcp_exact's 8 streams are counted and hashed to the byte
check "TCP, 8 streams over the pair: iperf3's receiver got each stream's data" \
	iperf3_received build/lab/rss-iperf.json $((16 << 20))
check "TCP, 8 streams over the pair: the receiver got 16 MiB exactly (byte count, SHA-256)" \
	tcp_exact rss 10.93.0.2 $((16 << 20)) 8
d=$(python3 -c 'import sys; print(" ".join(str(int(y) - int(x)) for x, y in zip(sys.argv[1].split(), sys.argv[2].split())))' "$q0" "$q1")
echo "# peer's per-queue packets, 8 TCP streams: $d"
check "8 TCP streams over the pair: both of the peer's queues got some" \
	python3 -c 'import sys; q = list(map(int, sys.argv[1].split())); sys.exit(0 if len(q) == 2 and min(q) > 0 else 1)' "$d"

check "pools' books balance" conserved
kill "$sink" 2> /dev/null
ppsim_unload
finish ppsim-rss
exit
