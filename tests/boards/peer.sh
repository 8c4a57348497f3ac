#!/bin/bash
# The board's traffic peer, in a lab guest (tests/boards/board.py starts it):
#
#   tests/boards/peer.sh DIR ADDR MAC
#
# Brings up the NIC with MAC (the cable to the board, scripts/lab/run --net)
# with ADDR/24, runs sshd letting in DIR/authorized_keys as root, and makes
# the repository's scripts/ reachable from root's login directory (as a
# board owner copies scripts/regress/pktgen.sh to the peer), then writes
# the NIC's name to DIR/dev, creates DIR/ready and waits until DIR/stop
# appears (at most the lab's timeout).
# Exit status: 0 stopped, 1 set-up failed.
set -euo pipefail
DIR=$1 ADDR=$2 MAC=$3
REPO=$(cd "$(dirname "$0")/../.." && pwd)
fail() { echo "peer: $*" >&2; exit 1; }

modprobe virtio_net
dev=
for _ in $(seq 50); do
	for n in /sys/class/net/*; do
		[ "$(cat "$n/address")" = "$MAC" ] && dev=${n##*/}
	done
	[ -n "$dev" ] && break
	sleep 0.1
done
[ -n "$dev" ] || fail "no interface with MAC $MAC: started without --net?"
ip link set "$dev" up
ip addr add "$ADDR/24" dev "$dev"
echo "peer: $dev $ADDR"

install -d -m 700 /root/.ssh
install -m 600 "$DIR/authorized_keys" /root/.ssh/authorized_keys
ln -sfn "$REPO/scripts" /root/scripts
mkdir -p /run/sshd
ssh-keygen -A >/dev/null
/usr/sbin/sshd -E "$DIR/sshd.log" -o PermitRootLogin=prohibit-password \
	-o PasswordAuthentication=no -o UseDNS=no || fail "sshd did not start: $DIR/sshd.log"
modprobe pktgen
echo "$dev" > "$DIR/dev"
touch "$DIR/ready"
while [ ! -e "$DIR/stop" ]; do
	sleep 1
done
pkill -x sshd || true
echo "peer: stopped"
