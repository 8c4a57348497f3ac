#!/bin/bash
# Send UDP/IPv4 frames with the kernel's pktgen (modprobe pktgen), from the
# machine this runs on: the lab's sender namespace, or a board's traffic peer.
#
#   pktgen.sh --dev IF --dst-mac MAC --dst IP [--size 60] [--count N]
#             [--ratep PPS] [--cpu 0]
#
# --count 0 sends until killed; --ratep 0 (default) is as fast as possible.
# Blocks until done, then prints the device's "Result:" line.
set -euo pipefail
DEV="" MAC="" DST="" SIZE=60 COUNT=0 RATEP=0 CPU=0
while [ $# -gt 0 ]; do
	case "$1" in
	--dev) DEV=$2; shift 2 ;;
	--dst-mac) MAC=$2; shift 2 ;;
	--dst) DST=$2; shift 2 ;;
	--size) SIZE=$2; shift 2 ;;
	--count) COUNT=$2; shift 2 ;;
	--ratep) RATEP=$2; shift 2 ;;
	--cpu) CPU=$2; shift 2 ;;
	*) echo "pktgen.sh: unknown option $1" >&2; exit 1 ;;
	esac
done
[ -n "$DEV" ] && [ -n "$MAC" ] && [ -n "$DST" ] ||
	{ echo "pktgen.sh: --dev, --dst-mac and --dst are required" >&2; exit 1; }
[ -d /proc/net/pktgen ] || modprobe pktgen
T=/proc/net/pktgen/kpktgend_$CPU
pg() { echo "$2" > "$1"; }
pg "$T" rem_device_all
pg "$T" "add_device $DEV"
D=/proc/net/pktgen/$DEV
pg "$D" "count $COUNT"
pg "$D" "pkt_size $SIZE"
pg "$D" "clone_skb 0"
pg "$D" "delay 0"
pg "$D" "dst $DST"
pg "$D" "dst_mac $MAC"
pg "$D" "udp_dst_min 9"
pg "$D" "udp_dst_max 9"
[ "$RATEP" -gt 0 ] && pg "$D" "ratep $RATEP"
pg /proc/net/pktgen/pgctrl start
grep -A2 'Result:' "$D" | head -3
