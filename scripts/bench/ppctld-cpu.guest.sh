#!/bin/bash
# Guest side of scripts/bench/ppctld-cpu.sh: ppctld's CPU with 1,000 pools
# sampled at 1 Hz.  One boot: a baseline of WINDOW seconds without ppctld,
# then ppctld (default settings, Prometheus endpoint on) follows the pools
# and WINDOWS windows of WINDOW seconds are measured.
#
# The figure is the run time of all ppctld's threads from
# /proc/PID/task/*/schedstat (ns), which includes the system time of its
# statistics dumps; the stat ticks are printed next to it as a cross-check.
# Prints "ppctld-cpu: window=N ms=... pct=... user_ticks=... system_ticks=...
# busy_ticks=..." per window, then "ppctld-cpu: baseline_busy_ticks=...",
# "ppctld-cpu: rss_kb=..." and "ppctld-cpu: sample_seconds=...".
set -u
cd "$(dirname "$0")/../.." || exit 1
PPCTLD=$PWD/build/bin/ppctld
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

$PPCTLD -f --config /dev/null > /tmp/ppctld-cpu.log 2>&1 &
D=$!
# the pools ppctld follows, from its API's status reply
follows() {
	[ "$(python3 tests/lab/ppctld-api.py '{"cmd":"status"}' --field pools 2>/dev/null)" = "$POOLS" ]
}
for _ in $(seq 80); do follows && break; sleep 0.25; done
follows || die "ppctld does not follow $POOLS pools (log: $(tail -3 /tmp/ppctld-cpu.log))"
sleep 3
# all threads' run time in ns; mawk's printf %d stops at 2^31
runtime() { cat /proc/$D/task/*/schedstat | awk '{ s += $1 } END { printf "%.0f\n", s }'; }
for w in $(seq "$WINDOWS"); do
	read -ra t0 <<< "$(cut -d' ' -f14,15 /proc/$D/stat)"; r0=$(runtime); c0=$(busy)
	sleep "$WINDOW"
	read -ra t1 <<< "$(cut -d' ' -f14,15 /proc/$D/stat)"; r1=$(runtime); c1=$(busy)
	echo "ppctld-cpu: window=$w ms=$(((r1 - r0) / 1000000)) pct=$(python3 -c "print(f'{($r1 - $r0) / ($WINDOW * 1e7):.2f}')") user_ticks=$((${t1[0]} - ${t0[0]})) system_ticks=$((${t1[1]} - ${t0[1]})) busy_ticks=$((c1 - c0))"
done
echo "ppctld-cpu: rss_kb=$(awk '/^VmRSS/ { print $2 }' /proc/$D/status)"
# 100 scrapes, then the RSS once two more samples are done (the daemon
# trims its heap the round after a scrape)
samples() { curl -s http://127.0.0.1:9105/metrics | awk '/^ppctld_samples_total / { print $2 }'; }
echo "ppctld-cpu: scrape_bytes=$(curl -s http://127.0.0.1:9105/metrics | wc -c)"
for _ in $(seq 100); do curl -s -o /dev/null http://127.0.0.1:9105/metrics; done
n0=$(samples)
for _ in $(seq 40); do
	[ "$(samples | cut -d. -f1)" -ge "$(( ${n0%%.*} + 2 ))" ] && break
	sleep 0.25
done
echo "ppctld-cpu: rss_after_100_scrapes_kb=$(awk '/^VmRSS/ { print $2 }' /proc/$D/status)"
curl -s http://127.0.0.1:9105/metrics |
	awk '/^ppctld_sample_duration_seconds / { print "ppctld-cpu: sample_seconds=" $2 }
	     /^ppctld_history_bytes / { print "ppctld-cpu: history_bytes=" $2 }'
kill -TERM "$D"
wait "$D" || die "ppctld exited with $? on SIGTERM"
rmmod pp_poolgen && rmmod pp_backport || die "unload failed"
