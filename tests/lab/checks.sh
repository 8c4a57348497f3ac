# shellcheck shell=bash
# Sourced by the guest-side lab tests: counted checks.
#   ok WHAT / bad WHAT       count a pass or a failure: "ok N - WHAT" /
#                            "not ok N - WHAT" (TAP-like; tests/tier/tap.py)
#   skip WHAT REASON         a check that cannot run here: "ok N - WHAT # SKIP
#                            REASON" (never a pass; the summary table lists it)
#   check WHAT COMMAND...    ok if COMMAND succeeds, else bad
#   wait_for SEC COMMAND...  until COMMAND succeeds, at most SEC seconds
#   udp_sink [PORT]          a reading UDP socket in the background ($sink)
#   sim_sink_dev ADDR [ARGS] a ppsim device (ppctl sim add ARGS) that is up, has
#                            ADDR/24 and a udp_sink on 7777 ($dev, $sink)
#   stable SEC COMMAND...    until COMMAND's output stays the same for 1 s,
#                            at most SEC seconds
# The test ends with: echo "NAME: $pass passed, $failn failed"
pass=0 failn=0 skipn=0 tapn=0

ok() { tapn=$((tapn + 1)); echo "ok $tapn - $*"; pass=$((pass + 1)); }
bad() { tapn=$((tapn + 1)); echo "not ok $tapn - $*"; failn=$((failn + 1)); }
skip() { tapn=$((tapn + 1)); echo "ok $tapn - $1 # SKIP $2"; skipn=$((skipn + 1)); }
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
stable() {
	local end=$((SECONDS + $1)) last now
	shift
	last=$("$@")
	while [ $SECONDS -lt $end ]; do
		sleep 1
		now=$("$@")
		[ "$now" = "$last" ] && return 0
		last=$now
	done
	return 1
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
	# shellcheck disable=SC2034 # for the test that sources this
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
