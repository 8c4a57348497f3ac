#!/bin/bash
# Guest side: everything at once for DURATION seconds (default 60) on a
# 4-vCPU guest:
#   - ppsim traffic on all four RX queues of one device (a reading sink),
#   - TCP across a ppsim pair in two namespaces, the receiver on another CPU
#     than the RX queues' (skbs freed on another CPU: cross-CPU returns),
#   - `ppctl set` ring resizes of the device's pools every 0.5 s,
#   - XDP attach (drop, pass) and detach every 2 s,
#   - `ethtool -G` every 3 s (rings and pools rebuilt under traffic),
#   - ppctld sampling every 200 ms, /metrics scraped every second.
#
#   scripts/lab/run --smp 4 --mem 2048 -- tests/lab/stress/mixed.sh [DURATION]
#
# Afterwards: every loop did its work, ppctld is alive and kept sampling,
# every pool's books balance once the traffic stopped, the devices go and
# both modules unload.  The lab fails the run on any kernel splat.  Ends
# with finish (tests/lab/checks.sh).
set -u
cd "$(dirname "$0")/../../.." || exit 1
. tests/lab/checks.sh
. tests/lab/stress/slow.sh	# SLOW: in-guest deadlines scale with it
PPCTL=$PWD/build/bin/ppctl
PPCTLD=$PWD/build/bin/ppctld
DUR=${1:-60}
T=$(mktemp -d)
ncpu=$(nproc)
echo "# $ncpu CPUs, $DUR s"

tests/lab/ppsim-load.sh
ip link set lo up
sim_sink_dev 10.83.0.1 --rx-queues 4 --ring-size 256
sim_pair_ns stress 10.84.0
check "pair: ping across" ping -c 2 -W $((5 * SLOW)) 10.84.0.2 > /dev/null

$PPCTLD -f --config /dev/null --interval 200ms --socket "$T/api.sock" --listen 127.0.0.1:9105 \
	> "$T/ppctld.log" 2>&1 &
D=$!
status() { python3 tests/lab/ppctld-api.py '{"cmd":"status"}' "$T/api.sock" --field samples 2>/dev/null; }
wait_for $((20 * SLOW)) test -S "$T/api.sock"
s0=$(status) t0=$SECONDS

END=$((SECONDS + DUR))
# loop NAME PERIOD COMMAND...: COMMAND every PERIOD s until END, and at least
# MINRUNS times (a slow guest, e.g. the debug kernel's, runs on past END with
# the generator's traffic); counts runs and failures, and when it ended.
MINRUNS=3
loop() {
	local name=$1 period=$2 n=0 f=0
	shift 2
	while [ $SECONDS -lt $END ] || [ $((n + f)) -lt $MINRUNS ]; do
		if "$@" > /dev/null 2>> "$T/$name.err"; then n=$((n + 1)); else f=$((f + 1)); fi
		sleep "$period"
	done
	echo "$n $f $((SECONDS - END + DUR))" > "$T/$name.count"
}
resize() {	# one live pool of $dev, drawn at random, to a size drawn from four
	local sizes=(64 256 1024 4096) id tries=0
	# A pool that ethtool -G or XDP replaced stays listed, detached, while
	# the sink's socket holds its pages; the kernel refuses to resize it.
	# None is live between a rebuild's destroy and its create: ask again.
	while id=$($PPCTL list --json | python3 -c '
import json, random, sys
ids = [p["id"] for p in json.load(sys.stdin)["pools"]
       if p["ifname"] == sys.argv[1] and p["state"] == "live"]
print(random.choice(ids) if ids else "")' "$dev") && [ -z "$id" ]; do
		tries=$((tries + 1))
		[ $tries -lt 10 ] || { echo "no live pool of $dev in 10 tries" >&2; return 1; }
		sleep 0.5
	done
	[ -n "$id" ] || { echo "ppctl list failed" >&2; return 1; }
	# and it may be replaced, or gone, since the list
	$PPCTL set "$id" --ring-size "${sizes[RANDOM % 4]}" 2> "$T/set.err" ||
		grep -q -e "no pool $id" -e "pool is destroyed" "$T/set.err" ||
		{ cat "$T/set.err" >&2; return 1; }
}
xdp() {
	local progs=(drop pass)
	$PPCTL xdp attach "$dev" --prog "${progs[RANDOM % 2]}" && sleep 1 && $PPCTL xdp detach "$dev"
}
ringsz() { ethtool -G "$dev" rx $((128 << (RANDOM % 3))); }
scrape() { curl -sf --max-time $((5 * SLOW)) http://127.0.0.1:9105/metrics | grep -q ppctld_samples_total; }

$PPCTL sim gen start "$dev" --size 256 --dst-port 7777 --rate 20000 > /dev/null
ip netns exec stress iperf3 -s -1 -D -B 10.84.0.2
peer_listens() { ip netns exec stress ss -Hltn 'sport = :5201' | grep -q .; }
wait_for $((10 * SLOW)) peer_listens
taskset -c $((ncpu - 1)) iperf3 -c 10.84.0.2 -t "$DUR" -J > "$T/iperf.json" 2> "$T/iperf.err" &
ipf=$!
loop resize 0.5 resize &
loop xdp 1 xdp &
loop ethtool 3 ringsz &
loop scrape 1 scrape &
# Bounded, but not timed: on the debug kernel, with 4 vCPUs on 2 host cores
# and the generator saturating them, a loop's three runs took 270 s.
LOOPS_MAX=$((DUR * 10 + 60))
check "the control loops end within $LOOPS_MAX s" \
	wait_for $LOOPS_MAX sh -c "[ \$(ls $T/*.count 2>/dev/null | wc -l) -ge 4 ]"
wait $ipf
ipf_rc=$?
$PPCTL sim gen stop "$dev" > /dev/null
for l in "resize:ring resizes" "xdp:XDP attach/detach" "ethtool:ethtool -G" "scrape:/metrics scrapes"; do
	what=${l#*:} l=${l%%:*}
	[ -f "$T/$l.count" ] || echo "? ? ?" > "$T/$l.count"	# still running
	read -r n f secs < "$T/$l.count"
	echo "# $l: $n done, $f failed, ended after $secs s"
	[ -s "$T/$l.err" ] && sort "$T/$l.err" | uniq -c | sort -rn | head -3 | sed 's/^/#   /'
	[ "$l" = scrape ] || what="$what under traffic"
	check "$what ($n, $f failed)" test "$n" -ge $MINRUNS -a "$f" -eq 0
done
check "iperf3 exits 0 ($ipf_rc)" test "$ipf_rc" -eq 0
# every one-second interval carried data, but for stalls of at most 2 s
# (x SLOW: a rebuild under KASAN takes longer)
check "TCP across the pair all along" python3 - "$T/iperf.json" "$DUR" $((2 * SLOW)) <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
stall = int(sys.argv[3])
b = d["end"]["sum_received"]["bytes"]
iv = [i["sum"]["bytes"] for i in d["intervals"]]
run = worst = 0
for x in iv:
    run = run + 1 if x == 0 else 0
    worst = max(worst, run)
print(f"# iperf3: {b / 1e6:.1f} MB received, {len(iv)} intervals, {iv.count(0)} empty, "
      f"longest stall {worst} s (at most {stall})")
assert b > 0 and len(iv) >= int(sys.argv[2]) - 1 and worst <= stall
PY
s1=$(status) t1=$SECONDS
# 5 a second asked; at least one a second under a saturated guest, over
# the time between the two readings
check "ppctld alive and sampling (${s0:-?} -> ${s1:-?} samples in $((t1 - t0)) s)" \
	test "${s1:-0}" -ge $((${s0:-0} + t1 - t0))
# The books balance once nothing moves: wait for the device's counters to
# stand still, then for the books (a rebuild's pools may still be taking
# back what the sink read), each with a deadline
rxstat() { cat "/sys/class/net/$dev/statistics/rx_packets"; }
still() { stable "$1" rxstat > /dev/null; }
check "the traffic stopped" still $((10 * SLOW))
echo "# $dev: $(rxstat) frames received"
books_ok() { tests/lab/stress/books.py "$PPCTL" "$dev" > "$T/books.out"; }
wait_for $((10 * SLOW)) books_ok
books=$?
cat "$T/books.out"
check "every pool's books balance after the traffic" test $books -eq 0
kill -TERM $D; wait $D
check "ppctld exits 0" test $? -eq 0
kill $sink 2>/dev/null; wait $sink 2>/dev/null
pkill iperf3
ss -K -tn '( sport = :5201 or dport = :5201 )' > /dev/null
ip netns exec stress ss -K -tn '( sport = :5201 or dport = :5201 )' > /dev/null
for c in $(seq 0 $((ncpu - 1))); do taskset -c "$c" ping -c 1 -W 1 127.0.0.1 > /dev/null 2>&1; done
ip netns del stress
check "ppsim unloads" rmmod ppsim
gone() { ! $PPCTL list 2>/dev/null | grep -q ppsim; }
check "ppsim's pools all gone" wait_for $((20 * SLOW)) gone
check "pp_backport unloads" rmmod pp_backport
rm -rf "$T"
finish mixed
exit
