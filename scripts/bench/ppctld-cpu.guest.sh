#!/bin/bash
# Guest side of scripts/bench/ppctld-cpu.sh: ppctld's CPU with 1,000 pools
# sampled at 1 Hz.  One boot: a baseline of WINDOW seconds without ppctld,
# then WINDOWS windows of WINDOW seconds of each ppctld of PPCTLDS (default
# build/bin/ppctld; several are interleaved: window 1 of each, window 2 of
# each in the other order, ...), each started afresh (default settings,
# Prometheus endpoint on) once it follows the pools.
#
# The figure is the run time of all ppctld's threads from
# /proc/PID/task/*/schedstat (ns), which includes the system time of its
# statistics dumps; its user and system ticks from /proc/PID/stat split it.
# Prints "ppctld-cpu: bin=N window=N ms=... pct=... user_ticks=...
# system_ticks=... busy_ticks=..." per window; after the last window of
# each, "ppctld-cpu: bin=N rss_kb=... hwm_before_scrapes_kb=...
# history_bytes_before_scrapes=..." (the histories grow meanwhile),
# "scrape_bytes=...", "rss_after_scrape_kb=... hwm_after_scrapes_kb=..."
# (right after the 100th of 100 scrapes; VmHWM, the peak RSS, says what
# the scrapes added at most, whatever the heap had free before),
# "rss_after_100_scrapes_kb=..." (two samples later: the daemon trims its
# heap the round after a scrape), "sample_seconds=..." and
# "history_bytes=..."; and "ppctld-cpu: baseline_busy_ticks=..." first.
set -u
cd "$(dirname "$0")/../.." || exit 1
read -ra BINS <<< "${PPCTLDS:-build/bin/ppctld}"
POOLS=${POOLS:-1000}
WINDOW=${WINDOW:-60}
WINDOWS=${WINDOWS:-3}
die() { echo "ppctld-cpu: $*" >&2; exit 1; }

ip link set lo up
insmod kmod/pool/pp_backport.ko || die "insmod pp_backport failed"
insmod kmod/tests/pp_poolgen.ko pools="$POOLS" inflight=8 churn=0 || die "insmod pp_poolgen failed"
HZ=$(getconf CLK_TCK)
busy() { awk '/^cpu / { print $2 + $3 + $4 + $7 + $8 }' /proc/stat; }
sleep 2
b0=$(busy); sleep "$WINDOW"; b1=$(busy)
echo "ppctld-cpu: baseline_busy_ticks=$((b1 - b0)) seconds=$WINDOW hz=$HZ pools=$POOLS"

api() { python3 tests/lab/ppctld-api.py '{"cmd":"status"}' --field "$1" 2>/dev/null; }
rss() { awk '/^VmRSS/ { print $2 }' /proc/$D/status; }
hwm() { awk '/^VmHWM/ { print $2 }' /proc/$D/status; }
# all threads' run time in ns; mawk's printf %d stops at 2^31
runtime() { cat /proc/$D/task/*/schedstat | awk '{ s += $1 } END { printf "%.0f\n", s }'; }

# ppctld number $1 for window $2; the memory figures after the last window
run() {
	local i=$1 w=$2
	"$PWD/${BINS[$i]}" -f --config /dev/null > /tmp/ppctld-cpu.log 2>&1 &
	D=$!
	for _ in $(seq 80); do [ "$(api pools)" = "$POOLS" ] && break; sleep 0.25; done
	[ "$(api pools)" = "$POOLS" ] ||
		die "${BINS[$i]} does not follow $POOLS pools (log: $(tail -3 /tmp/ppctld-cpu.log))"
	sleep 3
	read -ra t0 <<< "$(cut -d' ' -f14,15 /proc/$D/stat)"; r0=$(runtime); c0=$(busy)
	sleep "$WINDOW"
	read -ra t1 <<< "$(cut -d' ' -f14,15 /proc/$D/stat)"; r1=$(runtime); c1=$(busy)
	echo "ppctld-cpu: bin=$i window=$w ms=$(((r1 - r0) / 1000000)) pct=$(python3 -c "print(f'{($r1 - $r0) / ($WINDOW * 1e7):.2f}')") user_ticks=$((${t1[0]} - ${t0[0]})) system_ticks=$((${t1[1]} - ${t0[1]})) busy_ticks=$((c1 - c0))"
	if [ "$w" = "$WINDOWS" ]; then
		echo "ppctld-cpu: bin=$i rss_kb=$(rss) hwm_before_scrapes_kb=$(hwm) history_bytes_before_scrapes=$(api history_bytes)"
		echo "ppctld-cpu: bin=$i scrape_bytes=$(curl -s http://127.0.0.1:9105/metrics | wc -c)"
		for _ in $(seq 100); do curl -s -o /dev/null http://127.0.0.1:9105/metrics; done
		echo "ppctld-cpu: bin=$i rss_after_scrape_kb=$(rss) hwm_after_scrapes_kb=$(hwm)"
		# two more samples, counted through the API: a scrape would
		# start the count again
		local n0; n0=$(api samples)
		for _ in $(seq 40); do
			[ "$(api samples)" -ge $((n0 + 2)) ] && break
			sleep 0.25
		done
		echo "ppctld-cpu: bin=$i rss_after_100_scrapes_kb=$(rss)"
		curl -s http://127.0.0.1:9105/metrics |
			awk -v b="$i" '/^ppctld_sample_duration_seconds / { print "ppctld-cpu: bin=" b " sample_seconds=" $2 }
			     /^ppctld_history_bytes / { print "ppctld-cpu: bin=" b " history_bytes=" $2 }'
	fi
	kill -TERM "$D"
	wait "$D" || die "${BINS[$i]} exited with $? on SIGTERM"
}

for w in $(seq "$WINDOWS"); do
	order=$(seq 0 $((${#BINS[@]} - 1)))
	[ $((w % 2)) = 0 ] && order=$(echo "$order" | tac)
	for i in $order; do
		run "$i" "$w"
	done
done
rmmod pp_poolgen && rmmod pp_backport || die "unload failed"
