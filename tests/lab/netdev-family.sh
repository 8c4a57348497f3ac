#!/bin/bash
# Guest side: ppctl and ppctld on the kernel's own page_pools, through the
# upstream netdev family (6.8+), next to ppkit's pools.
#
#   scripts/lab/run --kernel 6.12 --smp 2 --mem 1536 -- tests/lab/netdev-family.sh
#
# Two ppsim devices: simA on the kernel's page_pool (--pool native, which
# gives the pools their netdev and NAPI), simB on ppkit's.  ppctl --source
# all lists both kinds with the right device, queue count and NAPI ids;
# stats say what the kernel cannot count (Debian's 6.12 has
# CONFIG_PAGE_POOL_STATS off) and still give ppkit's; ppctld samples both and
# /metrics has the pages in flight of both (the netdev family's own
# attribute, for the kernel's pools), and ppctl top and history through it
# show the kernel's pools too; a pool of simA goes from the
# netdev family's list when simA goes down.  On a kernel without the netdev
# family's page-pool commands (5.10, 6.1) every check is a SKIP.
set -u
cd "$(dirname "$0")/../.." || exit 1
PPCTL=build/bin/ppctl
PPCTLD=build/bin/ppctld
. tests/lab/checks.sh

ip link set lo up
tests/lab/ppsim-load.sh
a=$($PPCTL sim add --rx-queues 2) b=$($PPCTL sim add --rx-queues 2)
$PPCTL sim set "$a" --pool native > /dev/null
ip link set "$a" up
ip link set "$b" up

# pools DEV SOURCE: "COUNT NAPI-IDS-NONZERO" of ppctl --source all --json list
pools() {
	$PPCTL --source all --json list | python3 -c '
import json, sys
d = json.load(sys.stdin)
ps = [p for p in d["pools"] if p.get("ifname") == sys.argv[1] and p["source"] == sys.argv[2]]
print(len(ps), sum(1 for p in ps if p.get("napi_id")))' "$1" "$2"
}
if ! $PPCTL --source netdev list > build/lab/netdev-list.txt 2>&1; then
	why="no page-pool commands in this kernel's netdev family ($(uname -r); they came in 6.8): $(head -n 1 build/lab/netdev-list.txt)"
	for w in "netdev family lists the native pools" "ppkit pools listed beside them" \
		"stats: a note for the netdev pools, numbers for ppkit's" \
		"ppctld /metrics: series for both sources" "ppctl top (from ppctld): both sources" \
		"ppctl history --source netdev (from ppctld)" "native pools leave the list when the device goes down"; do
		skip "$w" "$why"
	done
else
	sed 's/^/# /' build/lab/netdev-list.txt
	check "netdev family lists the native pools ($a: 2 pools, 2 with a NAPI id)" \
		test "$(pools "$a" netdev)" = "2 2"
	check "ppkit pools listed beside them ($b: 2 pools, 2 with a NAPI id)" \
		test "$(pools "$b" ppkit)" = "2 2"
	$PPCTL --source all stats > build/lab/netdev-stats.txt 2>&1
	rc=$?
	sed 's/^/# /' build/lab/netdev-stats.txt
	if grep -q '^CONFIG_PAGE_POOL_STATS=y' "/boot/config-$(uname -r)" 2>/dev/null; then
		check "stats: numbers for both sources" sh -c "[ $rc -eq 0 ] && grep -q '$a' build/lab/netdev-stats.txt && grep -q '$b' build/lab/netdev-stats.txt"
	else
		check "stats: a note for the netdev pools, numbers for ppkit's" \
			sh -c "[ $rc -eq 0 ] && grep -q 'no page_pool stats' build/lab/netdev-stats.txt && grep -q '$b' build/lab/netdev-stats.txt"
	fi
	S=/run/ppctld-netdev.sock
	$PPCTLD -f --config /dev/null --source all --interval 1s --listen 127.0.0.1:9105 --socket $S > build/lab/ppctld-netdev.log 2>&1 &
	d=$!
	metrics() { python3 -c 'import urllib.request; print(urllib.request.urlopen("http://127.0.0.1:9105/metrics", timeout=5).read().decode())' 2> /dev/null; }
	# SOURCE DEVICE: a pool of SOURCE on DEVICE (ppkit_pool_info) has a
	# pages-in-flight series
	series() {
		echo "$m" | python3 -c '
import re, sys
src, dev = sys.argv[1:]
pools, inflight = set(), set()
for line in sys.stdin:
	m = re.match(r"(ppkit_pool_info|ppkit_pool_inflight_pages)\{([^}]*)\} ", line)
	if m:
		l = dict(re.findall(r"(\w+)=\"([^\"]*)\"", m.group(2)))
		if l["source"] == src:
			if m.group(1) == "ppkit_pool_info" and l["device"] == dev:
				pools.add(l["pool"])
			elif m.group(1) == "ppkit_pool_inflight_pages":
				inflight.add(l["pool"])
sys.exit(0 if pools and pools <= inflight else 1)' "$1" "$2"
	}
	both() { m=$(metrics) && series netdev "$a" && series ppkit "$b"; }
	check "ppctld /metrics: pages in flight of $a's pools (netdev) and $b's (ppkit)" wait_for 20 both
	metrics | grep "^ppkit_pool_info" | grep "device=\"$a\"" | sed 's/^/# /'
	# ppctl top and history through ppctld: the kernel's pools beside ppkit's
	$PPCTL --source all --json top -n 1 --socket $S > build/lab/netdev-top.json 2>&1
	check "ppctl top (from ppctld): $a's pools as netdev, $b's as ppkit" python3 - "$a" "$b" build/lab/netdev-top.json <<'PY'
import json, sys
a, b, path = sys.argv[1:]
f = json.loads(open(path).read().splitlines()[-1])
assert f["from"] == "ppctld", f["from"]
got = sorted((p["ifname"], p["source"]) for p in f["pools"] if p["ifname"] in (a, b))
print("# top:", got)
assert got == sorted([(a, "netdev")] * 2 + [(b, "ppkit")] * 2), got
assert all(p["inflight"] for p in f["pools"] if p["ifname"] == a), f["pools"]
PY
	nid=$($PPCTL --source netdev --json list | python3 -c '
import json, sys
print(min(p["id"] for p in json.load(sys.stdin)["pools"] if p.get("ifname") == sys.argv[1]))' "$a")
	hist() { $PPCTL --source netdev --json history "$nid" --socket $S > build/lab/netdev-hist.json 2>&1 &&
		python3 -c 'import json, sys; sys.exit(len(json.load(open(sys.argv[1]))["points"]) < 2)' build/lab/netdev-hist.json; }
	check "ppctl history --source netdev $nid (from ppctld): points" wait_for 10 hist
	head -c 400 build/lab/netdev-hist.json | sed 's/^/# /'; echo
	kill "$d"
	wait "$d" 2> /dev/null
	ip link set "$a" down
	gone() { [ "$(pools "$a" netdev)" = "0 0" ]; }
	check "native pools leave the list when the device goes down" wait_for 10 gone
fi
$PPCTL sim del "$a" > /dev/null
$PPCTL sim del "$b" > /dev/null
rmmod ppsim
check "pp_backport unloads" rmmod pp_backport
finish netdev-family
exit
