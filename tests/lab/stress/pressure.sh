#!/bin/bash
# Guest side: ppsim traffic while a memory hog leaves the kernel next to
# nothing (the stock Debian kernel has no fail_page_alloc: a hog it is).
#
#   scripts/lab/run --smp 2 --mem 1024 -- tests/lab/stress/pressure.sh [FRAMES]
#
# The hog (oom_score_adj 1000: the OOM killer's first choice) touches memory
# in 16 MiB pieces until MemAvailable is under 24 MiB, holds it, and lets go
# after the traffic.  Meanwhile the generator sends FRAMES (default 100,000)
# frames at 20,000/s into a two-queue device whose rings grow from 512 to
# 4,096 entries (ethtool -G) under the pressure: 32 MiB the pools must find.
# Checks: every frame is either received or counted as missed (a refill
# that found no page leaves a descriptor empty: rx_missed_errors, and
# rxN_alloc_fail in ethtool -S), the pools' books balance, free memory comes
# back once the hog is gone, the modules unload.  The lab fails the run on
# any kernel splat.  Ends with "pressure: N passed, N failed".
set -u
cd "$(dirname "$0")/../../.."
. tests/lab/checks.sh
PPCTL=build/bin/ppctl
N=${1:-100000}
T=$(mktemp -d)
avail() { awk '/^MemAvailable:/ { print $2 }' /proc/meminfo; }
sysstat() { cat "/sys/class/net/$dev/statistics/$1"; }
allocfail() { ethtool -S "$dev" | awk '/rx[0-9]+_alloc_fail:/ { s += $2 } END { print s + 0 }'; }

insmod kmod/pool/pp_backport.ko
insmod kmod/sim/ppsim.ko devs=0
dev=$($PPCTL sim add --rx-queues 2 --ring-size 512)
$PPCTL sim set "$dev" --rx zerocopy > /dev/null
ip link set "$dev" up
ip addr add 10.85.0.1/24 dev "$dev"
python3 -c 'import socket; s=socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.bind(("0.0.0.0", 7777))
while True: s.recv(65536)' &
sink=$!
for i in $(seq 50); do ss -lun 'sport = :7777' | grep -q 7777 && break; sleep 0.2; done
sync; echo 3 > /proc/sys/vm/drop_caches
base=$(avail)
echo "# MemAvailable before: $base kB"

python3 - "$T/hog" <<'PY' &
import os, sys, time
open("/proc/self/oom_score_adj", "w").write("1000\n")
held = []
def avail():
    for l in open("/proc/meminfo"):
        if l.startswith("MemAvailable:"):
            return int(l.split()[1])
while avail() > 24 * 1024:
    held.append(b"\x5a" * (16 << 20))      # written, so really there
open(sys.argv[1], "w").write(f"{len(held) * 16} {avail()}\n")
while True:
    time.sleep(1)
PY
hog=$!
check "the hog takes all but 24 MiB" wait_for 120 test -s "$T/hog"
read -r held left < "$T/hog" 2>/dev/null || { held=0; left=0; }
echo "# the hog holds $held MiB; MemAvailable $left kB"

rx0=$(sysstat rx_packets); miss0=$(sysstat rx_missed_errors); af0=$(allocfail)
# Recycling keeps a pool off the allocator in steady state: growing the
# rings under pressure makes it allocate what is not there.
ethtool -G "$dev" rx 4096 > "$T/ethtool.out" 2>&1
grow=$?
echo "# ethtool -G rx 4096 under pressure: exit $grow $(head -1 "$T/ethtool.out")"
$PPCTL sim gen start "$dev" --count "$N" --size 256 --dst-port 7777 --rate 20000 > /dev/null
done_frames() { [ $(($(sysstat rx_packets) - rx0 + $(sysstat rx_missed_errors) - miss0)) -ge "$N" ]; }
wait_for 120 done_frames
sleep 1
rx=$(($(sysstat rx_packets) - rx0)); miss=$(($(sysstat rx_missed_errors) - miss0)); af=$(($(allocfail) - af0))
echo "# under pressure: $rx received, $miss missed, $af allocation failures; MemAvailable $(avail) kB"
check "every frame received or counted as missed ($rx + $miss = $N)" test $((rx + miss)) -eq "$N"
check "the hog was still there all along (not OOM-killed)" kill -0 $hog
kill $hog 2>/dev/null; wait $hog 2>/dev/null
check "traffic flows again after the pressure" sh -c "
	r0=\$(cat /sys/class/net/$dev/statistics/rx_packets)
	$PPCTL sim gen start $dev --count 2000 --size 256 --dst-port 7777 --rate 20000 > /dev/null
	sleep 2
	[ \$((\$(cat /sys/class/net/$dev/statistics/rx_packets) - r0)) -eq 2000 ]"
check "every pool's books balance" tests/lab/stress/books.py "$PPCTL" "$dev"
kill $sink 2>/dev/null; wait $sink 2>/dev/null
$PPCTL sim del "$dev" > /dev/null
check "ppsim unloads" rmmod ppsim
check "pp_backport unloads" rmmod pp_backport
sync; echo 3 > /proc/sys/vm/drop_caches
after=$(avail)
echo "# MemAvailable after: $after kB ($((after - base)) kB against before)"
check "free memory back within 16 MiB ($((after - base)) kB)" test $((base - after)) -le 16384
rm -rf "$T"
echo "pressure: $pass passed, $failn failed"
[ "$failn" -eq 0 ]
