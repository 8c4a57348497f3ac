# shellcheck shell=bash
# Sourced by the guest-side lab tests: counted checks.
#   ok WHAT / bad WHAT       count a pass or a failure, print "ok: ..." / "FAIL: ..."
#   check WHAT COMMAND...    ok if COMMAND succeeds, else bad
#   wait_for SEC COMMAND...  until COMMAND succeeds, at most SEC seconds
#   udp_sink [PORT]          a reading UDP socket in the background ($sink)
#   sim_sink_dev ADDR [ARGS] a ppsim device (ppctl sim add ARGS) that is up, has
#                            ADDR/24 and a udp_sink on 7777 ($dev, $sink)
# The test ends with: echo "NAME: $pass passed, $failn failed"
pass=0 failn=0

ok() { echo "ok: $*"; pass=$((pass + 1)); }
bad() { echo "FAIL: $*"; failn=$((failn + 1)); }
check() {
	local what=$1
	shift
	if "$@"; then ok "$what"; else bad "$what"; fi
}
wait_for() {
	local end=$((SECONDS + $1))
	shift
	until "$@"; do
		[ $SECONDS -ge $end ] && return 1
		sleep 0.25
	done
}

# udp_sink [PORT]: in the background, a UDP socket on PORT (default 7777)
# that reads and drops everything (pages left unread would keep destroyed
# pools waiting); sets $sink to its pid and returns once it is bound.
udp_sink() {
	local port=${1:-7777}
	python3 -c 'import socket, sys
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind(("0.0.0.0", int(sys.argv[1])))
while True:
    s.recv(65536)' "$port" &
	sink=$!
	wait_for 10 sh -c "ss -Hlun 'sport = :$port' | grep -q ."
}

# sim_sink_dev ADDR [ppctl sim add options]: a ppsim device in its default
# zero-copy RX mode, up, with ADDR/24, its frames (to UDP port 7777) read by a
# udp_sink; sets $dev and $sink.  Needs $PPCTL and ppsim loaded.
sim_sink_dev() {
	local addr=$1
	shift
	dev=$($PPCTL sim add "$@") || return 1
	ip link set "$dev" up
	ip addr add "$addr/24" dev "$dev"
	udp_sink 7777
}
