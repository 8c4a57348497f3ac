#!/bin/bash
# Guest side: pool pages sit unread in a packet socket while the pool is
# destroyed and pp_backport is unloaded. The unload must neither wait forever
# nor fail; it must orphan exactly the pages the socket holds and leak none;
# the socket must still read intact data afterwards; repeated ROUNDS times.
# (That orphaning leaves exactly the stack's references on a page is checked
# precisely by pp_selftest's stack_* cases; free-memory deltas in this guest
# swing by thousands of pages and cannot show a 64-page leak.)
# Ends with finish (tests/lab/checks.sh).
set -u
cd "$(dirname "$0")/../.." || exit 1
. tests/lab/checks.sh
. tests/lab/ktap-load.sh
# The debug kernel (KASAN) takes 45 s a round; its lane's pool-races runs
# the same unload 60 times over (race-unload.py): one round there.
case $(uname -r) in
*-ppkit-debug) ROUNDS=${ROUNDS:-1} ;;
*) ROUNDS=${ROUNDS:-3} ;;
esac
N=64
ip link set lo up

round() {
	local r=$1 fifo reader log
	fifo=$(mktemp -u); mkfifo "$fifo"
	# A packet socket on lo that reads only when told to: its queue holds
	# clones of the received skbs, which share their data pages.
	python3 - "$fifo" "$N" <<'PY' &
import socket, sys
s = socket.socket(socket.AF_PACKET, socket.SOCK_DGRAM, socket.htons(0x0800))
s.bind(("lo", 0x0800))
s.setsockopt(socket.SOL_SOCKET, 33, 4 << 20)   # SO_RCVBUFFORCE: room for every datagram
open(sys.argv[1], "w").write("bound\n")
open(sys.argv[1]).read()          # wait for "go"
s.setblocking(False)
n = bad = 0
while True:
    try:
        d = s.recv(4096)
    except BlockingIOError:
        break
    n += 1
    payload = d[28:]          # after the IPv4 and UDP headers
    if len(payload) != 256 or len(set(payload)) != 1:
        bad += 1
print(f"  reader: {n} datagrams, {bad} corrupt", flush=True)
sys.exit(0 if n == int(sys.argv[2]) and bad == 0 else 1)
PY
	reader=$!
	read -r _ < "$fifo"
	kmsg_mark "unload-inflight round $r" || { bad "round $r: a marker in the kernel log"; return 1; }
	# Orphaning at unload is the point: no lend timeout may beat it (a slow
	# guest, e.g. the debug kernel, takes seconds between the steps).
	insmod kmod/pool/pp_backport.ko lend_timeout_ms=600000 || { bad "round $r: insmod pp_backport"; return 1; }
	insmod kmod/tests/pp_sockhold.ko port=9999 count=$N || { bad "round $r: insmod pp_sockhold"; return 1; }
	rmmod pp_sockhold || { bad "round $r: rmmod pp_sockhold"; return 1; }
	check "round $r: rmmod pp_backport with pages in flight" rmmod pp_backport || return 1
	log=$(kmsg_since) || { echo "$log"; bad "round $r: the kernel log since the round began"; return 1; }
	grep -E 'pp_sockhold:|ppkit: pool' <<< "$log" | sed 's/^/  /'
	check "round $r: the socket held the $N pages" grep -q "sent $N datagrams, $N pages in flight" <<< "$log"
	check "round $r: the unload orphaned the socket's $N pages" \
		grep -q "unload: $N pages still held by the stack are orphaned" <<< "$log"
	echo go > "$fifo"
	check "round $r: the socket reads its data intact after the unload" wait $reader
	rm -f "$fifo"
}

for r in $(seq 1 "$ROUNDS"); do
	echo "# round $r"
	round "$r" || break
done
finish unload-with-pages-in-socket
exit
