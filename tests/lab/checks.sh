# shellcheck shell=bash
# Sourced by the guest-side lab tests: counted checks, reported in the
# kselftest manner (TAP; tests/tier/tap.py reads it).
#   ok WHAT / bad WHAT       count a pass or a failure: "ok N - WHAT" /
#                            "not ok N - WHAT"
#   skip WHAT REASON         a check that cannot run here: "ok N - WHAT # SKIP
#                            REASON" (never a pass; the summary table lists it)
#   check WHAT COMMAND...    ok if COMMAND succeeds, else bad
#   finish NAME              the end: the plan "1..N" (N: the checks made),
#                            "NAME: N passed, N failed, N skipped", and
#                            kselftest's exit status: 0 all passed (skips
#                            beside passes have rows of their own), 1 a check
#                            failed or none was made, 4 (KSFT_SKIP) only
#                            skips; the test ends with: finish NAME; exit
#   wait_for SEC COMMAND...  until COMMAND succeeds, at most SEC seconds (a
#                            fraction too: 0.5) by the clock (EPOCHREALTIME),
#                            not by whole seconds of SECONDS; it tries again
#                            every WAIT_POLL s (default 0.25)
#   udp_sink [PORT]          a reading UDP socket in the background ($sink)
#   sim_sink_dev ADDR [ARGS] a ppsim device (ppctl sim add ARGS) that is up, has
#                            ADDR/24 and a udp_sink on 7777 ($dev, $sink)
#   hold_sock PORT [MIB]     a UDP socket on PORT that never reads, so the
#                            stack holds the pages of what it receives
#                            (tests/lab/holders-sock.py); $holder its pid
#   stable SEC COMMAND...    until COMMAND's output stays the same for 1 s,
#                            at most SEC seconds
#   sysstat IFNAME KEY       one counter of /sys/class/net/IFNAME/statistics
#   sim_gen_done IFNAME      ppsim's generator on IFNAME has stopped (needs
#                            $PPCTL)
#   flush_defer_lists        one loopback packet on every CPU: an skb freed
#                            on another CPU than the one that received it
#                            waits on that CPU's defer list
#                            (skb_attempt_defer_free) until the CPU next runs
#                            its RX softirq, its pages held but in no socket
pass=0 failn=0 skipn=0 tapn=0

ok() { tapn=$((tapn + 1)); echo "ok $tapn - $*"; pass=$((pass + 1)); }
bad() { tapn=$((tapn + 1)); echo "not ok $tapn - $*"; failn=$((failn + 1)); }
skip() { tapn=$((tapn + 1)); echo "ok $tapn - $1 # SKIP ${2:-no reason given}"; skipn=$((skipn + 1)); }
check() {
	local what=$1
	shift
	if "$@"; then ok "$what"; else bad "$what"; fi
}
finish() {
	echo "1..$tapn"
	echo "${1:-checks}: $pass passed, $failn failed, $skipn skipped"
	if [ $failn -gt 0 ]; then
		return 1
	elif [ $tapn -eq 0 ]; then
		echo "# ${1:-checks}: no check was made, so nothing passed"
		return 1
	elif [ $pass -eq 0 ]; then
		return 4
	fi
	return 0
}

# _checks_now: the realtime clock in microseconds, in $_checks_t;
# _checks_in SEC: SEC (a fraction allowed) from now, the same way
_checks_now() {
	if [ -n "${EPOCHREALTIME:-}" ]; then
		_checks_t=${EPOCHREALTIME//[.,]/}
	else
		_checks_t=$(($(date +%s%N) / 1000))
	fi
}
_checks_in() {
	local whole=${1%%.*} frac=000000
	[[ "$1" = *.* ]] && frac=${1#*.}000000
	_checks_now
	_checks_t=$((_checks_t + ${whole:-0} * 1000000 + 10#${frac:0:6}))
}
wait_for() {
	local end
	_checks_in "$1"
	end=$_checks_t
	shift
	until "$@"; do
		_checks_now
		[ "$_checks_t" -ge "$end" ] && return 1
		sleep "${WAIT_POLL:-0.25}"
	done
}
stable() {
	local end last now
	_checks_in "$1"
	end=$_checks_t
	shift
	last=$("$@")
	while _checks_now && [ "$_checks_t" -lt "$end" ]; do
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

# sim_pair_ns NS NET: a ppsim pair (two RX and two TX queues) whose second
# port goes into a new namespace NS; the ports get NET.1 and NET.2 (/24)
# and come up, the first's interrupts on CPU 0.  Sets $a and $b.
sim_pair_ns() {
	local pair
	pair=$($PPCTL sim add --pair --rx-queues 2 --tx-queues 2) || return 1
	read -r a b <<< "$(tr '\n' ' ' <<< "$pair")"
	ip netns add "$1"
	ip link set "$b" netns "$1"
	ip addr add "$2.1/24" dev "$a"
	ip link set "$a" up
	ip -n "$1" addr add "$2.2/24" dev "$b"
	ip -n "$1" link set "$b" up
	ip -n "$1" link set lo up
	$PPCTL sim set "$a" --irq-cpu 0 > /dev/null
}

# hold_sock PORT [MIB]: in the background, a UDP socket on PORT with a
# receive buffer of MIB (default 8) MiB that never reads: the pages of what
# it receives stay with the stack.  Sets $holder; returns once it is bound.
hold_sock() {
	local f rc
	f=$(mktemp)
	python3 tests/lab/holders-sock.py udp 0.0.0.0 "$1" "${2:-8}" > "$f" &
	# shellcheck disable=SC2034 # for the test that sources this
	holder=$!
	wait_for 10 grep -q ready "$f"
	rc=$?
	rm -f "$f"
	return $rc
}

sysstat() { cat "/sys/class/net/$1/statistics/$2"; }

sim_gen_done() {
	[ "$($PPCTL --json sim list | jq --arg d "$1" '.devices[] | select(.ifname == $d) | .gen.running')" = false ]
}

flush_defer_lists() {
	local c
	ip link set lo up
	for c in $(seq 0 $(($(nproc) - 1))); do
		taskset -c "$c" ping -c 1 -W 1 127.0.0.1 > /dev/null 2>&1
	done
}
