#!/bin/bash
# Guest side: ppctl holders says who holds a pool's pages.
#  - three sockets that never read, in two network namespaces, over a ppsim
#    pair: a UDP socket here fed 24 frames, a UDP socket in namespace
#    "peer" fed 16, and a TCP connection into "peer" whose receiver never
#    reads; each is found on its pool with its page count, namespace and
#    process, and every page the stack holds is attributed to one of them;
#  - the walk against sockets closing under it: holders-get in a loop while
#    sockets holding pool pages open and close;
#  - the snapshot against the pool's allocating context: holders-get in a
#    loop while traffic lends pages and pool-set resizes the ring (and with
#    it the FIFO of lent pages the snapshot reads) over and over, each side
#    pinned to a CPU (tests/lab/holders-race.py).
# Under the debug kernel too (make test-debug; the snapshot's race is also
# pp_race's race_holders_during_lent_resize, in make test's debug subset):
# KASAN and lockdep watch the last two.
set -u
cd "$(dirname "$0")/../.." || exit 1
PPCTL=build/bin/ppctl
. tests/lab/checks.sh
. tests/lab/ppsim-lib.sh
# The debug kernel (KASAN, lockdep) runs it several times slower: half the
# rounds there (make test-debug).
case $(uname -r) in
*-ppkit-debug) DEF_ROUNDS=10 DEF_RACE_S=10 ;;
*) DEF_ROUNDS=20 DEF_RACE_S=20 ;;
esac
ROUNDS=${HOLDERS_ROUNDS:-$DEF_ROUNDS}
OUT=build/lab/holders
mkdir -p "$OUT"

ppsim_load
ip link set lo up
# snmp [NS] FIELD: a Udp: counter of /proc/net/snmp
# shellcheck disable=SC2016 # awk's own $
snmp() {
	local ns=()
	[ $# -gt 1 ] && ns=(ip netns exec "$1") && shift
	"${ns[@]}" awk -v f="$1" '/^Udp:/ { if (!h) { for (i = 1; i <= NF; i++) c[$i] = i; h = 1 } \
		else print $c[f] }' /proc/net/snmp
}

$PPCTL sim add --pair --rx-queues 1 --tx-queues 1 > "$OUT/pair.txt"
read -r a b <<< "$(tr '\n' ' ' < "$OUT/pair.txt")"
ip netns add peer
ip link set "$b" netns peer
ip addr add 10.82.0.1/24 dev "$a"
ip link set "$a" up
ip -n peer addr add 10.82.0.2/24 dev "$b"
ip -n peer link set "$b" up
ip -n peer link set lo up
# the generator's frames come from 198.18.0.1: a way back, or rp_filter drops them
ip route add 198.18.0.0/15 dev "$a"
ip -n peer route add 198.18.0.0/15 dev "$b"

ready() { grep -q ready "$1"; }
python3 tests/lab/holders-sock.py udp 10.82.0.1 7001 > "$OUT/a.out" &
ha=$!
ip netns exec peer python3 tests/lab/holders-sock.py udp 10.82.0.2 7002 > "$OUT/b.out" &
hb=$!
ip netns exec peer python3 tests/lab/holders-sock.py tcp-server 10.82.0.2 7003 > "$OUT/c.out" &
hc=$!
check "three sockets bound" wait_for 90 sh -c "grep -q ready $OUT/a.out && grep -q ready $OUT/b.out && grep -q ready $OUT/c.out"
python3 tests/lab/holders-sock.py tcp-client 10.82.0.2 7003 8 > "$OUT/d.out" &
hd=$!
check "TCP client sent 8 writes" wait_for 90 ready "$OUT/d.out"

# UDP counts a datagram in InDatagrams when it is read: count frames in
# instead, and errors (no socket, no room) that would have dropped them
rx() { ip netns exec "$1" cat "/sys/class/net/$2/statistics/rx_packets"; }
got() { [ $(($(rx "$1" "$2") - $3)) -ge "$4" ]; }
got_a() { [ $(($(cat "/sys/class/net/$a/statistics/rx_packets") - rx_a0)) -ge 24 ]; }
rx_a0=$(cat "/sys/class/net/$a/statistics/rx_packets") rx_b0=$(rx peer "$b")
err0=$(snmp NoPorts)$(snmp InErrors)$(snmp peer NoPorts)$(snmp peer InErrors)
$PPCTL sim gen start "$a" --count 24 --size 200 --dst-port 7001 > /dev/null
ip netns exec peer $PPCTL sim gen start "$b" --count 16 --size 200 --dst-port 7002 > /dev/null
check "24 frames in here" wait_for 60 got_a
check "16 frames in, in peer" wait_for 60 got peer "$b" "$rx_b0" 16
check "none dropped: no receive buffer errors, no port, no error" \
	test "$(snmp RcvbufErrors)$(snmp peer RcvbufErrors)$(snmp NoPorts)$(snmp InErrors)$(snmp peer NoPorts)$(snmp peer InErrors)" = "00$err0"

verdict() {
	python3 - "$OUT/holders.json" "$ha" "$hb" "$hc" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
ha, hb, hc = (int(x) for x in sys.argv[2:5])
held = {}
bad = []
for p in d["pools"]:
    if p["owner"] != "ppsim":
        continue
    for h in p["holders"]:
        held[(h["proto"], h["local_port"])] = h
    if p["unattributed"] or sum(h["pages"] for h in p["holders"]) != p["held_pages"]:
        bad.append(f'pool {p["id"]}: {p["held_pages"]} held, {p["unattributed"]} unattributed, '
                   f'holders {[h["pages"] for h in p["holders"]]}')
want = [(("udp", 7001), 24, "init", ha), (("udp", 7002), 16, "peer", hb),
        (("tcp", 7003), None, "peer", hc)]
for key, pages, ns, pid in want:
    h = held.get(key)
    if not h:
        bad.append(f"{key}: not found")
        continue
    if (pages is not None and h["pages"] != pages) or (pages is None and h["pages"] < 1):
        bad.append(f'{key}: {h["pages"]} pages, want {pages or ">= 1"}')
    if h["netns_name"] != ns:
        bad.append(f'{key}: netns {h["netns_name"]}, want {ns}')
    if pid not in [p["pid"] for p in h["processes"]]:
        bad.append(f'{key}: processes {h["processes"]}, want pid {pid}')
tcp = held.get(("tcp", 7003))
if tcp and (tcp["remote"] != "10.82.0.1" or tcp["state"] != 1):
    bad.append(f'tcp: remote {tcp["remote"]} state {tcp["state"]}, want 10.82.0.1, 1')
for b in bad:
    print("#", b)
sys.exit(1 if bad else 0)
PY
}
found() {
	flush_defer_lists
	$PPCTL --json holders > "$OUT/holders.json" && verdict > "$OUT/verdict.txt"
}
check "each socket found on its pool with its pages, namespace and process" wait_for 60 found
sed 's/^/# /' "$OUT/verdict.txt"
$PPCTL holders | sed 's/^/# /'

# --- negative input -------------------------------------------------------
check "holders of no such pool: an error naming it" \
	sh -c "! $PPCTL holders 999999 2> $OUT/err.txt && grep -q 'no pool 999999\|no such pool' $OUT/err.txt"
check "holders needs CAP_NET_ADMIN" \
	sh -c "! setpriv --reuid 65534 --regid 65534 --clear-groups --inh-caps=-all $PPCTL holders 2> $OUT/eperm.txt && grep -qi 'CAP_NET_ADMIN\|root' $OUT/eperm.txt"

# --- sockets closing under the walk ---------------------------------------
walk_loop() {
	local n=0
	while [ ! -e "$OUT/stop" ]; do
		$PPCTL holders > /dev/null 2>> "$OUT/loop.err" || echo "fail $?" >> "$OUT/loop.err"
		n=$((n + 1))
	done
	echo "$n" > "$OUT/walks"
}
rm -f "$OUT/stop" "$OUT/loop.err"
walk_loop &
wl=$!
churn_ok=0
for i in $(seq "$ROUNDS"); do
	ip netns exec peer python3 tests/lab/holders-sock.py udp 10.82.0.2 7010 > "$OUT/e.out" &
	he=$!
	wait_for 60 ready "$OUT/e.out" || break
	ip netns exec peer $PPCTL sim gen start "$b" --count 8 --size 200 --dst-port 7010 > /dev/null
	kill "$he"
	wait "$he" 2> /dev/null
	churn_ok=$i
done
touch "$OUT/stop"
wait "$wl"
check "$ROUNDS sockets holding pages closed during $(cat "$OUT/walks") walks" test "$churn_ok" -eq "$ROUNDS"
check "no walk failed" test ! -s "$OUT/loop.err"

# --- the snapshot against ring (and lent FIFO) resizes under traffic ------
pool_a=$($PPCTL --json list | python3 -c '
import json, sys
print(min(p["id"] for p in json.load(sys.stdin)["pools"] if p["ifindex"] == int(sys.argv[1]) and not p["detach_time_ns"]))' "$(cat "/sys/class/net/$a/ifindex")")
# (at a set rate: at line rate the debug kernel leaves user space no CPU)
$PPCTL sim gen start "$a" --size 200 --dst-port 7777 --rate 20000 > /dev/null
check "holders-get against ring and lent FIFO resizes, each pinned to a CPU" \
	sh -c "python3 tests/lab/holders-race.py $pool_a ${HOLDERS_RACE_S:-$DEF_RACE_S} > $OUT/race.txt"
sed 's/^/# /' "$OUT/race.txt"
$PPCTL sim gen stop "$a" > /dev/null

kill "$ha" "$hb" "$hc" "$hd" 2> /dev/null
wait 2> /dev/null
ip netns del peer
ppsim_unload

finish holders
exit
