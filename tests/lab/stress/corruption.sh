#!/bin/bash
# Guest side: look for memory corruption under stress-mixed's load, with the
# control loops taken apart and run in turn (A/B, interleaved, one boot):
#   mixed    stress-mixed's loops: ppctl set every 0.5 s, XDP attach (a
#            program loaded by ppctl) and detach every 2 s, ethtool -G every 3 s
#   rings    ring rebuilds only: ethtool -G every 1 s, an MTU change every
#            2 s, ppctl set every 0.5 s
#   pinned   XDP attach/detach of one program, loaded and pinned once
#   load     XDP attach/detach, ppctl loading the program for every attach
#
#   scripts/lab/run --smp 4 --mem 2048 -- tests/lab/stress/corruption.sh ROUNDS SECS [MODE...]
#
# Under every run, whatever the mode: generator traffic into a 4-queue sink,
# TCP across a ppsim pair between namespaces, and two detectors:
#   - the victim of the fault seen once (ppctl, its own text): a copy of
#     build/bin/ppctl on a tmpfs, run five times a second; afterwards its
#     bytes are compared with the build's (cmp -l), which tells a page
#     that was written (bytes differ) from a CPU that ran bytes that are
#     not there (bytes equal, the process faulted);
#   - a 32 MiB canary on the tmpfs, copied from a reference every 2 s and
#     compared before it is dropped: its pages come from the allocator
#     while the pools release and rebuild, so a write into a page a pool
#     no longer owns lands in it now and then.
# ppsim itself refuses (with a warning) to write into a page that is no
# longer its queue's (ppsim_dev_write()).  After every run: the kernel log
# since the run's mark (traps, segfaults, splats, KFENCE).  One "# run"
# line per run; one check per mode at the end.
set -u
cd "$(dirname "$0")/../../.." || exit 1
. tests/lab/checks.sh
. tests/lab/stress/slow.sh
PPCTL=$PWD/build/bin/ppctl
ROUNDS=${1:-5}
SECS=${2:-20}
shift 2 2> /dev/null
MODES=("$@")
[ ${#MODES[@]} -gt 0 ] || MODES=(mixed rings pinned load)
ncpu=$(nproc)
T=$(mktemp -d)
echo "# $ncpu CPUs, $ROUNDS rounds of ${MODES[*]}, $SECS s each; kernel $(uname -r), $(cat /proc/cmdline)"

# the tmpfs: the victim's copy, the canary and its reference
V=$T/shm
mkdir -p "$V" && mount -t tmpfs -o size=128m tmpfs "$V" || exit 1
cp "$PPCTL" "$V/ppctl"
VICTIM=$V/ppctl
head -c 32M /dev/zero | tr '\0' '\245' > "$V/ref"

echo "ppkit-corruption: start" > /dev/kmsg
tests/lab/ppsim-load.sh
ip link set lo up
sim_sink_dev 10.83.0.1 --rx-queues 4 --ring-size 256
sim_pair_ns stress 10.84.0
check "pair: ping across" ping -c 2 -W $((5 * SLOW)) 10.84.0.2 > /dev/null
ip netns exec stress iperf3 -s -D -B 10.84.0.2
peer_listens() { ip netns exec stress ss -Hltn 'sport = :5201' | grep -q .; }
check "iperf3 server listens" wait_for $((10 * SLOW)) peer_listens

# the pinned program: XDP_DROP, compiled here, loaded once
mountpoint -q /sys/fs/bpf || mount -t bpf bpf /sys/fs/bpf
PIN=/sys/fs/bpf/ppkit_corruption_drop
cat > "$T/drop.c" <<'C'
#include <linux/bpf.h>
__attribute__((section("xdp"), used)) int drop(struct xdp_md *ctx) { return XDP_DROP; }
char _license[] __attribute__((section("license"), used)) = "GPL";
C
pinned_ok=0
if clang -O2 -target bpf -I"/usr/include/$(gcc -print-multiarch)" -c "$T/drop.c" -o "$T/drop.o" 2> "$T/clang.err" &&
	bpftool prog load "$T/drop.o" "$PIN" type xdp 2> "$T/bpftool.err"; then
	pinned_ok=1
fi

end=0
# every PERIOD s until the run's end: COMMAND, counted in $T/NAME.n/.f
every() {
	local name=$1 period=$2 n=0 f=0
	shift 2
	while [ $SECONDS -lt $end ]; do
		if "$@" > /dev/null 2>> "$T/$name.err"; then n=$((n + 1)); else f=$((f + 1)); fi
		sleep "$period"
	done
	echo "$n $f" > "$T/$name.count"
}
resize() {
	local sizes=(64 256 1024 4096) id
	id=$($VICTIM list --json | python3 -c '
import json, random, sys
ids = [p["id"] for p in json.load(sys.stdin)["pools"]
       if p["ifname"] == sys.argv[1] and p["state"] == "live"]
print(random.choice(ids) if ids else "")' "$dev") || return 1
	[ -z "$id" ] && return 0
	$VICTIM set "$id" --ring-size "${sizes[RANDOM % 4]}" 2> /dev/null || true
}
ringsz() { ethtool -G "$dev" rx $((128 << (RANDOM % 3))); }
mtu() { ip link set "$dev" mtu $((RANDOM % 2 ? 1500 : 3000)); }
xdp_load() {
	local progs=(drop pass)
	$VICTIM xdp attach "$dev" --prog "${progs[RANDOM % 2]}" --force && sleep 1 && $VICTIM xdp detach "$dev"
}
xdp_pinned() { ip link set dev "$dev" xdpdrv pinned "$PIN" && sleep 1 && ip link set dev "$dev" xdpdrv off; }
victim() {	# counts the runs the kernel killed
	local n=0 k=0 rc
	while [ $SECONDS -lt $end ]; do
		$VICTIM list --json > /dev/null 2>&1
		rc=$?
		n=$((n + 1))
		[ $rc -ge 128 ] && { k=$((k + 1)); echo "$rc" >> "$T/victim.killed"; }
		sleep 0.2
	done
	echo "$n $k" > "$T/victim.count"
}
canary() {	# bytes that differ from the reference, over every copy
	local n=0 bad=0 d
	while [ $SECONDS -lt $end ]; do
		cp "$V/ref" "$V/canary"
		sleep 2
		d=$(cmp -l "$V/ref" "$V/canary" | tee -a "$T/canary.diff" | wc -l)
		bad=$((bad + d))
		n=$((n + 1))
		rm -f "$V/canary"
	done
	echo "$n $bad" > "$T/canary.count"
}

declare -A runs faults changed canbytes splats
for m in "${MODES[@]}"; do runs[$m]=0 faults[$m]=0 changed[$m]=0 canbytes[$m]=0 splats[$m]=0; done
SPLAT='traps:|segfault at|Code: |general protection|BUG:|WARNING:|Oops|KFENCE:|refcount_t|list_del corruption|Poison overwritten|page dumped because'
$PPCTL sim gen start "$dev" --size 256 --dst-port 7777 --rate 20000 > /dev/null
for r in $(seq 1 "$ROUNDS"); do
	for m in "${MODES[@]}"; do
		[ "$m" = pinned ] && [ $pinned_ok = 0 ] && continue
		rm -f "$T"/*.count "$T"/*.err "$T/victim.killed" "$T/canary.diff"
		mark="ppkit-corruption: run $r $m"
		echo "$mark" > /dev/kmsg
		end=$((SECONDS + SECS))
		taskset -c $((ncpu - 1)) iperf3 -c 10.84.0.2 -t "$SECS" > /dev/null 2>&1 &
		ipf=$!
		pids=("$ipf")
		victim & pids+=($!)
		canary & pids+=($!)
		case $m in
		mixed) every resize 0.5 resize & pids+=($!)
			every xdp 1 xdp_load & pids+=($!)
			every ethtool 3 ringsz & pids+=($!) ;;
		rings) every resize 0.5 resize & pids+=($!)
			every ethtool 1 ringsz & pids+=($!)
			every mtu 2 mtu & pids+=($!) ;;
		pinned) every xdp 1 xdp_pinned & pids+=($!) ;;
		load) every xdp 1 xdp_load & pids+=($!) ;;
		*) echo "# unknown mode $m" >&2; exit 2 ;;
		esac
		wait "${pids[@]}"
		ip link set dev "$dev" xdpdrv off 2> /dev/null
		ip link set "$dev" mtu 1500
		read -r vn vk < "$T/victim.count"
		read -r cn cb < "$T/canary.count"
		diffs=$(cmp -l "$PPCTL" "$VICTIM" | wc -l)
		log=$(dmesg | sed -n "/$mark\$/,\$p" | grep -E "$SPLAT")
		ev=""
		for c in "$T"/*.count; do
			case $c in */victim.count | */canary.count) continue ;; esac
			read -r n f < "$c"
			ev="$ev $(basename "$c" .count) $n ($f failed)"
		done
		ns=$([ -n "$log" ] && printf '%s\n' "$log" | wc -l || echo 0)
		echo "# run $r $m:$ev; victim $vn runs, $vk killed, $diffs bytes changed; canary $cn copies, $cb bytes changed; $ns log lines"
		[ -n "$log" ] && printf '%s\n' "$log" | head -20 | sed 's/^/#   /'
		[ "$diffs" -gt 0 ] && cmp -l "$PPCTL" "$VICTIM" | head -16 | sed 's/^/#   victim offset, build (octal), copy (octal): /'
		[ -s "$T/canary.diff" ] && head -16 "$T/canary.diff" | sed 's/^/#   canary offset, reference (octal), copy (octal): /'
		[ "$diffs" -gt 0 ] && cp "$PPCTL" "$VICTIM"
		runs[$m]=$((runs[$m] + 1))
		faults[$m]=$((faults[$m] + vk))
		changed[$m]=$((changed[$m] + diffs))
		canbytes[$m]=$((canbytes[$m] + cb))
		splats[$m]=$((splats[$m] + ns))
	done
done
$PPCTL sim gen stop "$dev" > /dev/null

[ $pinned_ok = 0 ] && [[ " ${MODES[*]} " = *" pinned "* ]] &&
	skip "pinned: XDP attach of a pinned program" "could not load it: $(cat "$T/clang.err" "$T/bpftool.err" | head -3)"
for m in "${MODES[@]}"; do
	[ "${runs[$m]}" -gt 0 ] || continue
	check "$m: ${runs[$m]} runs, ${faults[$m]} victims killed, ${changed[$m]} victim bytes and ${canbytes[$m]} canary bytes changed, ${splats[$m]} log lines" \
		test "${faults[$m]}" -eq 0 -a "${changed[$m]}" -eq 0 -a "${canbytes[$m]}" -eq 0 -a "${splats[$m]}" -eq 0
done
# and between the runs (set-up, ring rebuilds after a run)
all=$(dmesg | sed -n '/ppkit-corruption: start$/,$p' | grep -E "$SPLAT")
[ -n "$all" ] && printf '%s\n' "$all" | head -20 | sed 's/^/#   /'
check "no splat in the kernel log since the start" test -z "$all"
rm -f "$PIN"
kill $sink 2> /dev/null; wait $sink 2> /dev/null
pkill iperf3
ip netns del stress
check "ppsim unloads" rmmod ppsim
check "pp_backport unloads" rmmod pp_backport
umount "$V"
rm -rf "$T"
finish corruption
exit
