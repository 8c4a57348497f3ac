#!/bin/bash
# Guest side: many CPUs raise one ppsim RX queue's interrupt at once.
#
#   scripts/lab/run --smp 4 --mem 1536 -- tests/lab/ppsim-irq-race.sh [FRAMES]
#
# A pair, one RX queue a side (its interrupt on CPU 0), a TX queue per CPU.
# pktgen's kthreads on every CPU but 0 transmit on a's queue of their CPU at
# once, as fast as they can: every frame lands in b's one RX ring and raises
# its interrupt, a csd sent to CPU 0, from all of them together.  A csd
# queued twice corrupts CPU 0's call queue: the guest stops (the lab's time
# limit fails the run) or loses interrupts (the ring stops being served).
# Then every frame must be accounted for (received or missed for want of a
# descriptor) and the pair must still carry a ping.
# FRAMES: per thread (default 1000000).  More vCPUs than the host has cores
# make the race likelier: a vCPU preempted by the host inside the window.
set -u
cd "$(dirname "$0")/../.." || exit 1
PPCTL=build/bin/ppctl
. tests/lab/checks.sh
FRAMES=${1:-1000000}

ncpu=$(nproc)
[ "$ncpu" -ge 4 ] || { echo "ppsim-irq-race: needs 4 CPUs or more (scripts/lab/run --smp 4)"; exit 2; }
senders=$(seq -s ' ' 1 $((ncpu - 1)))
nsend=$((ncpu - 1))
tests/lab/ppsim-load.sh
modprobe pktgen
read -r a b <<< "$($PPCTL sim add --pair --rx-queues 1 --tx-queues "$ncpu" | tr '\n' ' ')"
ip addr add 10.95.0.1/24 dev "$a"
ip link set "$a" up
ip netns add peer
ip link set "$b" netns peer
ip -n peer addr add 10.95.0.2/24 dev "$b"
ip -n peer link set "$b" up
mac=$(ip -n peer -br link show "$b" | awk '{ print $3 }')
check "pair: ping across before" ping -c 2 -W 5 10.95.0.2

pg() { echo "$2" > "/proc/net/pktgen/$1"; }
for c in $senders; do
	pg "kpktgend_$c" rem_device_all
	pg "kpktgend_$c" "add_device $a@$c"
	for cmd in "count $FRAMES" "pkt_size 60" "clone_skb 0" "delay 0" \
		"queue_map_min $c" "queue_map_max $c" "dst 10.95.0.2" "dst_mac $mac" \
		"udp_dst_min 9" "udp_dst_max 9"; do
		pg "$a@$c" "$cmd"
	done
done
rx0=$(ip netns exec peer cat "/sys/class/net/$b/statistics/rx_packets")
miss0=$(ip netns exec peer cat "/sys/class/net/$b/statistics/rx_missed_errors")
t0=$SECONDS
echo start > /proc/net/pktgen/pgctrl
echo "# pktgen: $nsend x $FRAMES frames from CPUs $senders in $((SECONDS - t0)) s"
sent=0
for c in $senders; do
	n=$(awk '/^Result: OK/ { ok = 1 } /pkts-sofar:/ { print $2; exit }' "/proc/net/pktgen/$a@$c")
	echo "# thread $c: $(grep -m1 '^Result:' "/proc/net/pktgen/$a@$c")"
	sent=$((sent + ${n:-0}))
done
check "pktgen sent $nsend x $FRAMES frames" test "$sent" -eq $((nsend * FRAMES))
bstat() { ip netns exec peer cat "/sys/class/net/$b/statistics/$1"; }
accounted() { [ $(($(bstat rx_packets) - rx0 + $(bstat rx_missed_errors) - miss0)) -ge "$sent" ]; }
wait_for 30 accounted
rx=$(($(bstat rx_packets) - rx0)) miss=$(($(bstat rx_missed_errors) - miss0))
echo "# b: $rx received, $miss missed (ring full), of $sent"
# a's own few frames (IPv6 neighbour discovery, ICMP) may come on top
check "every frame received or counted missed" \
	test $((rx + miss)) -ge "$sent" -a $((rx + miss)) -le $((sent + 50))
check "frames were received while $nsend CPUs raised the interrupt" test "$rx" -gt 0
check "pair: ping across after" ping -c 2 -W 5 10.95.0.2
for c in $senders; do pg "kpktgend_$c" rem_device_all; done
ip netns del peer
rmmod pktgen
rmmod ppsim
check "pp_backport unloads" rmmod pp_backport
finish ppsim-irq-race
exit
