#!/bin/bash
# Guest side: ppctl end to end against the real pp_backport and pp_poolgen.
#
#   make modules tools                               (on the host)
#   scripts/lab/run -- tests/lab/ppctl-e2e.sh [--quick]   (from the repo root)
#
# Checks, each printed as "ok N - ..." or "not ok N - ...": the missing-module
# message and exit 2; list, stats, stats --json (fields, conservation),
# stats --interval; set (ring size, refill batch, the kernel's refusals);
# monitor (add/change/del as they happen, text and JSON); an unprivileged
# set (exit 2, "needs CAP_NET_ADMIN") next to unprivileged reads; and the
# time of `ppctl stats --json` over 1000 pools (median of 5, in this VM:
# compare, don't quote as wall-clock truth; --quick: one dump over the 1000
# pools, checked, and no timing: make check).  Ends with finish (tests/lab/checks.sh):
# the plan, the totals and the exit status.
set -u
cd "$(dirname "$0")/../.." || exit 1
PPCTL=$PWD/build/bin/ppctl
BP=kmod/pool/pp_backport.ko
GEN=kmod/tests/pp_poolgen.ko
POOLS=4 INFLIGHT=8 CHURN=32
QUICK=0
[ "${1:-}" = --quick ] && QUICK=1
T=$(mktemp -d)
. tests/lab/checks.sh	# ok, bad, check, wait_for
. tests/lab/stress/slow.sh	# SLOW: in-guest deadlines scale with it (x4 on KASAN)
# run NAME ARGS...: ppctl ARGS with stdout/stderr/status in $T/NAME.{out,err,rc}
run() {
	local name=$1
	shift
	"$PPCTL" "$@" > "$T/$name.out" 2> "$T/$name.err"
	echo $? > "$T/$name.rc"
}
rc() { cat "$T/$1.rc"; }
has() { grep -q -- "$2" "$T/$1"; }
# py FILE <<'PY' ...: a Python check on FILE (as sys.argv[1]); exit 0 = ok.
py() { python3 - "$@"; }
show() { sed 's/^/    /' "$T/$1"; }
end() {
	rmmod pp_poolgen 2>/dev/null
	rmmod pp_backport 2>/dev/null
	rm -rf "$T"
	finish ppctl-e2e
	exit
}

for f in "$PPCTL" "$BP" "$GEN"; do
	[ -e "$f" ] || { echo "ppctl-e2e: $f missing: run 'make modules tools' on the host"; exit 1; }
done
ip link set lo up

echo "== without pp_backport"
run nomod list
show nomod.err
check "list without the module exits 2" test "$(rc nomod)" = 2
check "and says how to load it" has nomod.err \
	"pp_backport is not loaded: modprobe pp_backport (or insmod kmod/pool/pp_backport.ko)"
run nomod_stats --json stats
check "stats --json without the module exits 2, the error as JSON on stdout" \
	test "$(rc nomod_stats)" = 2 -a ! -s "$T/nomod_stats.err" -a \
	"$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["error"][:25])' \
		"$T/nomod_stats.out")" = "pp_backport is not loaded"

insmod "$BP" || { bad "insmod pp_backport"; end; }
insmod "$GEN" pools=$POOLS inflight=$INFLIGHT churn=$CHURN || { bad "insmod pp_poolgen"; end; }

echo "== list"
run list list
show list.out
check "list exits 0" test "$(rc list)" = 0
check "list: a header and $POOLS pools" test "$(wc -l < "$T/list.out")" = $((POOLS + 1))
check "list: owner, device, state" test "$(grep -c 'pp_poolgen  lo/1 .* live$' "$T/list.out")" = $POOLS
run listj --json list
check "list --json" py "$T/listj.out" $POOLS <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
pools = d["pools"]
assert d["version"] == 1 and d["command"] == "list", d
assert len(pools) == int(sys.argv[2]), len(pools)
assert sorted(p["queue"] for p in pools) == list(range(len(pools)))
for p in pools:
    assert p["owner"] == "pp_poolgen" and p["ifindex"] == 1 and p["ifname"] == "lo", p
    assert p["state"] == "live" and p["detach_time_ns"] is None, p
    assert p["ring_size"] == 256 and p["order"] == 0 and p["dma_dir"] == "from_device", p
    assert p["created_ns"] > 1_600_000_000 * 10**9, p
PY
IDS=$(python3 -c 'import json,sys; print(" ".join(str(p["id"]) for p in json.load(open(sys.argv[1]))["pools"]))' "$T/listj.out")
FIRST=${IDS%% *}
echo "    pool ids: $IDS"

echo "== stats"
run stats stats
show stats.out
check "stats exits 0" test "$(rc stats)" = 0
check "stats: $POOLS pools with hit and recycle rates" \
	test "$(grep -cE '^ *[0-9]+ +lo/1 .*[0-9.]+% +[0-9.]+%' "$T/stats.out")" = $POOLS
run stats_one stats "$FIRST" --long
show stats_one.out
check "stats ID --long: every counter" has stats_one.out "sync_for_device_bytes"
check "stats ID --long: the rates" has stats_one.out "hit rate [0-9.]*%  recycle rate [0-9.]*%"
run stats_dev stats --dev lo
check "stats --dev lo: the same pools" test "$(grep -c 'lo/1' "$T/stats_dev.out")" = $POOLS
run stats_none stats 99999
show stats_none.err
check "stats of a missing pool exits 2 naming it" \
	test "$(rc stats_none)" = 2 -a "$(grep -c '^ppctl: no pool 99999 (see ppctl list)' "$T/stats_none.err")" = 1

echo "== stats --json"
run statsj --json stats
check "stats --json is valid JSON (json.tool)" python3 -m json.tool "$T/statsj.out" /dev/null
check "stats --json: fields and values" py "$T/statsj.out" $POOLS <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
assert d["version"] == 1 and d["command"] == "stats" and d["sources"] == {"ppkit": {"stats": True}}, d
assert len(d["pools"]) == int(sys.argv[2])
names = ["alloc_fast", "alloc_slow", "alloc_slow_high_order", "alloc_empty", "alloc_refill",
         "alloc_waive", "recycle_cached", "recycle_cache_full", "recycle_ring",
         "recycle_ring_full", "recycle_released_refcnt", "pages_from_cache", "pages_from_ring",
         "pages_from_stack", "pages_from_alloc", "pages_allocated", "pages_released",
         "pages_returned", "pages_lent", "pages_reclaimed", "pages_orphaned",
         "released_pfmemalloc", "released_far_node", "released_destroyed", "ring_consumed",
         "sync_for_device", "sync_for_device_bytes"]
for p in d["pools"]:
    c, g, r = p["counters"], p["gauges"], p["rates"]
    assert list(c) == names or sorted(c) == sorted(names), sorted(c)
    assert all(isinstance(v, int) and v >= 0 for v in c.values()), c
    assert sorted(g) == ["cache_pages", "inflight", "inflight_mem", "lent_held", "lent_oldest_ms",
                         "lent_pages", "ring_pages"], g
    assert all(isinstance(v, int) and v >= 0 for v in g.values()), g
    assert g["lent_held"] <= g["lent_pages"] and (g["lent_held"] or not g["lent_oldest_ms"]), g
    served = sum(c[k] for k in ("pages_from_cache", "pages_from_ring", "pages_from_stack", "pages_from_alloc"))
    assert p["derived"]["served"] == served > 0, p["derived"]
    assert 0 <= r["hit"] <= 1 and 0 <= r["recycle"] <= 1, r
    assert r["hit"] == min(1, (served - c["pages_from_alloc"]) / served), r
    assert c["pages_lent"] > 0 and c["sync_for_device"] > 0, c
    assert g["inflight_mem"] == g["inflight"] * 4096, g
PY

# Conservation and the pages pp_poolgen holds.  The churn thread runs while
# we read, and counters are exact only between its rounds: retry a little.
conserved() {
	run cons --json stats
	py "$T/cons.out" "$INFLIGHT" <<'PY'
import json, sys
held = int(sys.argv[2])
bad = []
for p in json.load(open(sys.argv[1]))["pools"]:
    c, g = p["counters"], p["gauges"]
    rhs = c["pages_released"] + c["pages_orphaned"] + g["cache_pages"] + g["ring_pages"] + g["inflight"]
    # In flight = held by pp_poolgen + lent to the stack, not yet reclaimed.
    if c["pages_allocated"] != rhs or g["inflight"] - g["lent_pages"] != held:
        bad.append((p["id"], c["pages_allocated"], rhs, g["inflight"], g["lent_pages"]))
if bad:
    print("    not yet: (id, allocated, released+orphaned+cache+ring+inflight, inflight, lent):", bad)
sys.exit(1 if bad else 0)
PY
}
check "allocated == released + orphaned + cache + ring + inflight; inflight - lent == $INFLIGHT" \
	wait_for $((10 * SLOW)) conserved

echo "== conventions: group-by, filters, sort, -p, JSON errors"
run grp --json stats --group-by device
show grp.out
check "stats --group-by device --json: lo's $POOLS pools in one device" py "$T/grp.out" $POOLS "$IDS" <<'PY'
import json, sys
g = json.load(open(sys.argv[1]))
assert g["command"] == "stats" and g["group_by"] == "device" and g["version"] == 1, g
(d,) = g["devices"]
assert d["ifindex"] == 1 and d["ifname"] == "lo" and d["pools"] == int(sys.argv[2]), d
assert d["ids"] == sorted(int(i) for i in sys.argv[3].split()), d
assert d["detached"] == 0 and d["derived"]["served"] > 0 and d["gauges"]["inflight"] > 0, d
assert 0 <= d["rates"]["hit"] <= 1, d
PY
run grpt stats -g device
show grpt.out
check "stats -g device: a header and lo's line" test "$(grep -c "^lo/1 \+$POOLS \+0 " "$T/grpt.out")" = 1
run filt list --owner pp_poolgen --state live --sort inflight --dev lo
check "list --owner --state live --sort --dev: the $POOLS pools" test "$(wc -l < "$T/filt.out")" = $((POOLS + 1))
run zomb list --state detached
check "list --state detached: none" test "$(cat "$T/zomb.out")" = "no pools"
run nown stats --owner nosuch
check "stats --owner nosuch: none" test "$(cat "$T/nown.out")" = "no pools"
run pretty -p list
check "-p list: indented JSON" py "$T/pretty.out" $POOLS <<'PY'
import json, sys
t = open(sys.argv[1]).read()
assert t.startswith('{\n    "command": "list",\n'), t[:80]
assert len(json.loads(t)["pools"]) == int(sys.argv[2])
PY
run jerr --json stats 99999
show jerr.out
check "--json stats 99999: exit 2, the error as JSON on stdout with errno and extack" py "$T/jerr.out" "$T/jerr.err" "$(rc jerr)" <<'PY'
import json, sys
e = json.load(open(sys.argv[1]))
assert sys.argv[3] == "2" and open(sys.argv[2]).read() == "", sys.argv[3]
assert e == {"error": "no pool 99999 (see ppctl list); kernel: no such pool", "errno": 2,
             "extack": "no such pool"}, e
PY

echo "== stats --interval"
run iv stats --interval 1 --count 2
show iv.out
check "stats --interval 1 --count 2 exits 0" test "$(rc iv)" = 0
check "a header, then $POOLS lines per interval" \
	test "$(head -1 "$T/iv.out" | grep -c 'SERVED/s')" = 1 -a "$(wc -l < "$T/iv.out")" = $((1 + 2 * POOLS))
run ivj --json stats --interval 0.5 --count 2
check "stats --interval --json: one object per interval, rates moving" py "$T/ivj.out" $POOLS <<'PY'
import json, sys
lines = open(sys.argv[1]).read().splitlines()
assert len(lines) == 2, lines
for i, l in enumerate(lines, 1):
    d = json.loads(l)
    assert d["version"] == 1 and d["interval"]["seq"] == i and d["interval"]["seconds"] == 0.5, d
    assert len(d["pools"]) == int(sys.argv[2])
    for p in d["pools"]:
        assert p["reset"] is False and 0.3 < p["seconds"] < 5, p
        assert p["per_second"]["served"] > 0, p   # churn=32 every 100 ms
        assert p["rates"]["hit"] is not None and p["rates"]["recycle"] is not None, p
        assert all(v is not None and v >= 0 for v in p["delta"].values()), p["delta"]
PY

echo "== monitor, set"
"$PPCTL" monitor > "$T/mon.out" 2> "$T/mon.err" &
MON=$!
"$PPCTL" --json monitor > "$T/monj.out" 2> "$T/monj.err" &
MONJ=$!
subscribed() { grep -q watching "$T/mon.err" && grep -q watching "$T/monj.err"; }
check "monitors subscribed" wait_for $((10 * SLOW)) subscribed

run set1 set "$FIRST" --ring-size 64
show set1.out
check "set --ring-size 64 exits 0" test "$(rc set1)" = 0
check "set reports the new size" has set1.out "pool $FIRST: ring size 64, refill batch"
run set2 --json set "$FIRST" --refill-batch 16
check "set --refill-batch 16 (JSON)" py "$T/set2.out" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
assert d["command"] == "set" and d["pool"]["ring_size"] == 64 and d["pool"]["refill_batch"] == 16, d
PY
run after --json list
check "list shows the new ring size" py "$T/after.out" "$FIRST" <<'PY'
import json, sys
p = [p for p in json.load(open(sys.argv[1]))["pools"] if p["id"] == int(sys.argv[2])][0]
assert p["ring_size"] == 64 and p["refill_batch"] == 16, p
PY
check "counters still conserved after the resize" wait_for $((10 * SLOW)) conserved
run set_missing set 99999 --ring-size 64
show set_missing.err
check "set on a missing pool: exit 2, named, with the kernel's reason" \
	test "$(rc set_missing)" = 2 -a "$(grep -c 'no pool 99999 (see ppctl list); kernel: no such pool' "$T/set_missing.err")" = 1
run set_zero set "$FIRST" --ring-size 0
check "set --ring-size 0 refused before the kernel (exit 1)" test "$(rc set_zero)" = 1
run set_big set "$FIRST" --ring-size 40000
check "set --ring-size 40000 refused (exit 1)" test "$(rc set_big)" = 1

echo "    rmmod/insmod pp_poolgen under the monitors"
rmmod pp_poolgen || bad "rmmod pp_poolgen"
insmod "$GEN" pools=$POOLS inflight=$INFLIGHT churn=$CHURN || bad "insmod pp_poolgen again"
events() {
	py "$T/monj.out" "$POOLS" <<'PY'
import json, sys, collections
n = collections.Counter()
for l in open(sys.argv[1]):
    d = json.loads(l)
    assert d["version"] == 1 and d["command"] == "monitor", d
    n[d["event"]] += 1
want = int(sys.argv[2])
sys.exit(0 if n["add"] >= want and n["del"] >= want and n["change"] >= 2 else 1)
PY
}
check "monitor --json saw $POOLS del and $POOLS add events, and the two sets" wait_for $((30 * SLOW)) events
kill -TERM $MON $MONJ
wait $MON
check "monitor ends cleanly on SIGTERM" test $? = 0
wait $MONJ
show mon.out
check "monitor text: the change made by set" has mon.out " change pool $FIRST owner pp_poolgen dev lo/1 queue 0 ring 64 batch 16"
check "monitor text: dels and adds" \
	test "$(grep -c ' del ' "$T/mon.out")" -ge $POOLS -a "$(grep -c ' add ' "$T/mon.out")" -ge $POOLS

echo "== unprivileged"
install -m 755 "$PPCTL" /tmp/ppctl-nobody
FIRST=$("$PPCTL" --json list | python3 -c 'import json,sys; print(json.load(sys.stdin)["pools"][0]["id"])')
nobody() { setpriv --reuid=65534 --regid=65534 --clear-groups /tmp/ppctl-nobody "$@"; }
nobody set "$FIRST" --ring-size 64 > "$T/np.out" 2> "$T/np.err"
echo $? > "$T/np.rc"
show np.err
check "unprivileged set exits 2" test "$(rc np)" = 2
check "and says it needs CAP_NET_ADMIN" has np.err "needs CAP_NET_ADMIN"
nobody list > /dev/null 2>&1
check "unprivileged list works" test $? = 0
nobody --json stats > /dev/null 2>&1
check "unprivileged stats works" test $? = 0

echo "== 1000 pools"
rmmod pp_poolgen
insmod "$GEN" pools=1000 inflight=$INFLIGHT churn=0 || bad "insmod pp_poolgen pools=1000"
# median_ms OUT ARGS...: median of 5 runs of ppctl ARGS (stdout to OUT), in ms.
median_ms() {
	local out=$1 t0 t1 ms=() cmd=("$PPCTL")
	shift
	[ "${1:-}" = --exec ] && { cmd=(); shift; }
	for _ in 1 2 3 4 5; do
		t0=$(date +%s%N)
		"${cmd[@]}" "$@" > "$out"
		t1=$(date +%s%N)
		ms+=($(((t1 - t0) / 1000000)))
	done
	echo "$(printf '%s\n' "${ms[@]}" | sort -n | sed -n 3p) (runs: ${ms[*]})"
}
if [ $QUICK = 1 ]; then
	"$PPCTL" --json stats > "$T/big.out"
else
	# Same boot, same pools: the start-up alone, then each command (TCG guest:
	# compare the lines, do not quote them as wall-clock figures).
	echo "    /bin/true (exec floor):          median $(median_ms /dev/null --exec /bin/true) ms"
	echo "    ppctl --help (start-up only):   median $(median_ms /dev/null --help) ms"
	echo "    ppctl --json list, 1000 pools:  median $(median_ms /dev/null --json list) ms"
	echo "    ppctl --json stats, 1000 pools: median $(median_ms "$T/big.out" --json stats) ms"
	echo "    ppctl stats (table), 1000 pools: median $(median_ms /dev/null stats) ms"
fi
check "stats --json over 1000 pools: all there, one dump across many messages" py "$T/big.out" <<'PY'
import json, sys
pools = json.load(open(sys.argv[1]))["pools"]
assert len(pools) == 1000 and len({p["id"] for p in pools}) == 1000, len(pools)
assert all(p["gauges"]["inflight"] - p["gauges"]["lent_pages"] == 8 for p in pools)
PY

echo "== after unload"
rmmod pp_poolgen
rmmod pp_backport || bad "rmmod pp_backport"
run gone list
check "list after unload: exit 2 and the message" \
	test "$(rc gone)" = 2 -a "$(grep -c 'pp_backport is not loaded' "$T/gone.err")" = 1
end
