#!/bin/bash
# Guest side: ppsim's XDP TX ring, its delayed completions, and XDP_REDIRECT.
#  - XDP_REDIRECT: a program on device s (bpf_redirect to port a of a pair,
#    compiled here with clang) sends the generator's frames out of a into b,
#    from each kind of pool of s (ppkit, native, none); a redirect to a port
#    that is down fails and the pages come back;
#  - ppctl xdp attach over an attached program is refused, and replaces it
#    with --force;
#  - XDP_TX with a completion delay (ethtool -C tx-usecs): the pages stay in
#    flight (the queue's xdp_tx_inflight, the pool's inflight) until the
#    delay has passed, then all complete; a full XDP TX ring refuses XDP_TX;
#    delays out of range are refused;
#  - redirected frames held in a's ring are completed when ppsim unloads;
#  - after each part the ppkit pools' books balance; at the end nothing leaked.
set -u
cd "$(dirname "$0")/../.." || exit 1
PPCTL=build/bin/ppctl
. tests/lab/checks.sh
. tests/lab/ppsim-lib.sh
mkdir -p build/lab

ppsim_load
s=$($PPCTL sim add --ring-size 256)
$PPCTL sim add --pair --ring-size 256 > build/lab/xdp-pair.txt
read -r a b <<< "$(tr '\n' ' ' < build/lab/xdp-pair.txt)"
# no IPv6 autoconfiguration: its frames would bounce through XDP_TX and
# spoil the exact counts below
for d in "$s" "$a" "$b"; do
	sysctl -qw "net.ipv6.conf.$d.disable_ipv6=1"
	ip link set "$d" up
done
qsum() { qstats "$1" "$2" | tr ' ' '\n' | awk '{ s += $1 } END { print s + 0 }'; }
grown() { [ $(($(sysstat "$1" rx_packets) - before)) -ge "$2" ]; }
is() { [ "$(qsum "$1" "$2")" -eq "$3" ]; }

# --- XDP_REDIRECT from s out of a -----------------------------------------------------
obj=build/lab/ppsim-redirect.bpf.o
cat > build/lab/ppsim-redirect.bpf.c <<'C'
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

SEC("xdp")
int xdp_redirect_to(struct xdp_md *ctx)
{
	return bpf_redirect(TARGET, 0);
}

char LICENSE[] SEC("license") = "GPL";
C
if ! command -v clang > /dev/null; then
	skip "XDP_REDIRECT" "clang missing (scripts/deps.sh)"
elif check "redirect program compiles" clang -O2 -target bpf -I"/usr/include/$(gcc -print-multiarch)" \
	-DTARGET="$(cat "/sys/class/net/$a/ifindex")" -c build/lab/ppsim-redirect.bpf.c -o $obj; then
	check "redirect program attached to $s" quiet $PPCTL xdp attach "$s" --prog $obj
	for pool in ppkit native none; do
		$PPCTL sim set "$s" --pool $pool > /dev/null
		r0=$(qsum "$s" xdp_redirect) x0=$(qsum "$a" xdp_xmit) before=$(sysstat "$b" rx_packets)
		$PPCTL sim gen start "$s" --count 3000 --size 128 --ethertype 0x88b6 > /dev/null
		check "pool $pool: 3000 frames redirected from $s out of $a into $b" wait_for 60 grown "$b" 3000
		check "pool $pool: $s counted 3000 xdp_redirect" is "$s" xdp_redirect $((r0 + 3000))
		check "pool $pool: $a sent 3000 through ndo_xdp_xmit" is "$a" xdp_xmit $((x0 + 3000))
		check "pool $pool: $a completed all it sent" wait_for 10 is "$a" xdp_tx_inflight 0
		check "pool $pool: books balance" conserved
		[ $pool = ppkit ] || continue
		# a second round: its refills reclaim the first round's pages
		before=$(sysstat "$b" rx_packets)
		$PPCTL sim gen start "$s" --count 3000 --size 128 --ethertype 0x88b6 > /dev/null
		wait_for 60 grown "$b" 3000
		echo "# $s: $(ethtool -S "$s" | grep -E 'rx_ppb_pages_(lent|reclaimed)' | xargs)"
		check "ppkit: redirected pages were lent, and reclaimed once xdp_return_frame() put them" \
			test "$(ethstat "$s" rx_ppb_pages_lent)" -ge 6000 -a \
			     "$(ethstat "$s" rx_ppb_pages_reclaimed)" -ge 3000
	done
	$PPCTL sim set "$s" --pool ppkit > /dev/null

	# a redirect to a port that is down fails: the pages come back at once
	ip link set "$a" down
	e0=$(qsum "$s" xdp_redirect_err) before=$(sysstat "$s" rx_packets)
	$PPCTL sim gen start "$s" --count 500 --size 128 --ethertype 0x88b6 > /dev/null
	wait_for 30 grown "$s" 500
	check "redirect to a port that is down: 500 xdp_redirect_err" is "$s" xdp_redirect_err $((e0 + 500))
	ip link set "$a" up
	check "books balance after failed redirects" conserved

	# frames held in a's XDP TX ring for 10 s when ppsim goes (below)
	check "ethtool -C $a tx-usecs 10000000" ethtool -C "$a" tx-usecs 10000000
	before=$(sysstat "$b" rx_packets)
	$PPCTL sim gen start "$s" --count 100 --size 128 --ethertype 0x88b6 > /dev/null
	wait_for 30 grown "$b" 100
	held=$(qsum "$a" xdp_tx_inflight)
	check "100 redirected frames held in $a's XDP TX ring (got $held)" test "$held" -eq 100
fi

# --- XDP_TX with delayed completions on b ----------------------------------------------
check "tx-usecs above 10 s refused" sh -c "! ethtool -C $b tx-usecs 10000001 2>/dev/null"
check "ethtool -C $b tx-usecs 8000000 (8 s)" ethtool -C "$b" tx-usecs 8000000
check "ethtool -c shows it" sh -c "ethtool -c $b | grep -q '^tx-usecs: *8000000'"
check "xdp tx attached to $b" quiet $PPCTL xdp attach "$b" --prog tx
# as ip link: an attached program is replaced only with --force
prog_of() { $PPCTL --json xdp status "$1" | python3 -c 'import json, sys
print(json.load(sys.stdin)["prog_name"])'; }
$PPCTL xdp attach "$b" --prog pass > "$SIM_TMP/busy.out" 2>&1
rc=$?
echo "# xdp attach over tx: exit $rc: $(head -c 300 "$SIM_TMP/busy.out")"
check "xdp attach over an attached program is refused, pointing at --force" \
	test $rc -ne 0 -a "$(prog_of "$b")" = xdp_tx -a -n "$(grep -e --force "$SIM_TMP/busy.out")"
$PPCTL xdp attach "$b" --prog pass --force > /dev/null
check "xdp attach --force replaces it" test "$(prog_of "$b")" = xdp_pass
check "and back to tx (--force)" quiet $PPCTL xdp attach "$b" --prog tx -f
ib=$(cat "/sys/class/net/$b/ifindex")
pool_inflight() {	# pages out of b's live pools (posted in its RX ring, or sent), from ppctl list
	python3 -c '
import json, sys
print(sum(p["inflight"] or 0 for p in json.load(sys.stdin)["pools"]
          if p["owner"] == "ppsim" and p["ifindex"] == int(sys.argv[1]) and p["state"] == "live"))' "$ib"
}
pin0=$($PPCTL --json list | pool_inflight)
t0=$SECONDS before=$(sysstat "$a" rx_packets) c0=$(qsum "$b" xdp_tx_completed)
$PPCTL sim gen start "$b" --count 200 --size 64 --ethertype 0x88b6 > /dev/null
check "XDP_TX: 200 frames went out of $b into $a" wait_for 30 grown "$a" 200
# both read at once (python is slow under TCG, more so on the debug kernel)
ethtool -S "$b" > build/lab/xdp-b-stats.txt
$PPCTL --json list > build/lab/xdp-list.json
el=$((SECONDS - t0))
held=$(awk '$1 ~ /^rx[0-9]+_xdp_tx_inflight:$/ { s += $2 } END { print s + 0 }' build/lab/xdp-b-stats.txt)
pin=$(pool_inflight < build/lab/xdp-list.json)
echo "# $el s after sending: $held XDP TX entries in flight; $b's pool: $pin0 pages out before, $pin now"
check "XDP_TX pages in flight until completion (200 in the ring, 200 more out of the pool)" \
	test "$held" -eq 200 -a $((pin - pin0)) -ge 200
check "... all complete after the delay" wait_for 30 is "$b" xdp_tx_inflight 0
el=$((SECONDS - t0))
check "... not before it (${el} s >= 8 s)" test $el -ge 8
check "... 200 completions counted" is "$b" xdp_tx_completed $((c0 + 200))
check "books balance after delayed XDP_TX" conserved

# a full XDP TX ring (256 entries) refuses XDP_TX while the delay holds
t0=$(qsum "$b" xdp_tx) e0=$(qsum "$b" xdp_tx_err)
acted() { [ $(($(qsum "$b" xdp_tx) - t0 + $(qsum "$b" xdp_tx_err) - e0)) -ge 1000 ]; }
$PPCTL sim gen start "$b" --count 1000 --size 64 --ethertype 0x88b6 > /dev/null
wait_for 60 acted
tx=$(($(qsum "$b" xdp_tx) - t0)) err=$(($(qsum "$b" xdp_tx_err) - e0)) held=$(qsum "$b" xdp_tx_inflight)
echo "# 1000 frames with an 8 s delay: xdp_tx $tx, xdp_tx_err $err, in flight $held"
check "full XDP TX ring: XDP_TX refused (xdp_tx_err > 0), in flight <= 256, none lost" \
	test "$err" -gt 0 -a "$held" -le 256 -a $((tx + err)) -eq 1000
check "... and all complete" wait_for 30 is "$b" xdp_tx_inflight 0
check "ethtool -C $b tx-usecs 0" ethtool -C "$b" tx-usecs 0
t0=$(qsum "$b" xdp_tx) before=$(sysstat "$a" rx_packets)
$PPCTL sim gen start "$b" --count 5000 --size 64 --ethertype 0x88b6 > /dev/null
check "no delay: 5000 frames bounced" wait_for 60 grown "$a" 5000
bounced() { is "$b" xdp_tx $((t0 + 5000)) && is "$b" xdp_tx_inflight 0; }
check "no delay: 5000 XDP_TX, all completed" wait_for 10 bounced
check "books balance" conserved

# ppsim goes with 100 redirected frames still in a's ring (10 s delay)
ppsim_unload
finish ppsim-xdp
exit
