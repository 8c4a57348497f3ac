#!/bin/bash
# Guest side: pool pages sit unread in a packet socket while the pool is
# destroyed and pp_backport is unloaded. The unload must neither wait forever
# nor fail; it must orphan exactly the pages the socket holds and leak none;
# the socket must still read intact data afterwards; repeated ROUNDS times.
# (That orphaning leaves exactly the stack's references on a page is checked
# precisely by pp_selftest's stack_* cases; free-memory deltas in this guest
# swing by thousands of pages and cannot show a 64-page leak.)
set -u
cd "$(dirname "$0")/../.." || exit 1
ROUNDS=${ROUNDS:-3}
N=64
ip link set lo up

round() {
	local fifo reader mark
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
	mark=$(dmesg | wc -l)
	# Orphaning at unload is the point: no lend timeout may beat it (a slow
	# guest, e.g. the debug kernel, takes seconds between the steps).
	insmod kmod/pool/pp_backport.ko lend_timeout_ms=600000 || return 1
	insmod kmod/tests/pp_sockhold.ko port=9999 count=$N || return 1
	rmmod pp_sockhold || return 1
	rmmod pp_backport || { echo "FAIL: rmmod pp_backport with pages in flight"; return 1; }
	dmesg | tail -n +"$((mark + 1))" | grep -E 'pp_sockhold:|ppkit: pool' | sed 's/^\[[^]]*\] /  /'
	dmesg | tail -n +"$((mark + 1))" | grep -q "sent $N datagrams, $N pages in flight" ||
		{ echo "FAIL: pages not held by the socket"; return 1; }
	dmesg | tail -n +"$((mark + 1))" | grep -q "unload: $N pages still held by the stack are orphaned" ||
		{ echo "FAIL: unload did not orphan the socket's $N pages"; return 1; }
	echo go > "$fifo"
	wait $reader || { echo "FAIL: socket data lost or corrupt after unload"; return 1; }
	rm -f "$fifo"
}

for r in $(seq 1 "$ROUNDS"); do
	echo "round $r"
	round || exit 1
done
