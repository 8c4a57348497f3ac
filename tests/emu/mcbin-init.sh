#!/bin/busybox sh
# shellcheck shell=dash
# /init of the emulated Macchiatobin (tests/emu/mcbin.py builds the
# initramfs): Debian's arm64 kernel on -M virt with the PPv2 model.  Loads
# the mvpp2 module set under /lib/modules/ppkit/<set>/ (Debian's own
# modules first: libphy, phylink), then:
#   - the three ports probe with the device tree's MACs and come up with a
#     fixed 1000/full link;
#   - port 1 moves to a network namespace of its own; ping and TCP both ways
#     between port 0 and port 1 (through the model and QEMU's hub), every
#     byte counted and hashed on both ends;
#   - ethtool -S: the MIB counters saw what arrived;
#   - port 2 faces the host (QEMU's UDP socket backend): the host pings it;
#   - MTU 9000 (jumbo pools) with TCP both ways, back to 1500, down/up;
#   - XDP through ppctl (when the guest has it): pass under TCP, drop, and
#     the host's datagrams echoed on port 2 with XDP_TX and XDP_REDIRECT;
#   - down, rmmod: the pools drain and the module goes without a complaint.
# PPK_* lines are the markers the host reacts to and checks.
#   ppk.set=NAME   the module set (default debian)
#   ppk.mib=M      MiB per TCP transfer and direction (default 8)
/bin/busybox --install -s /bin
export PATH=/bin:/sbin:/usr/bin:/usr/sbin
mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t devtmpfs dev /dev

arg() { sed -n "s/.*\bppk\.$1=\([^ ]*\).*/\1/p" /proc/cmdline; }
SET=$(arg set); MIB=$(arg mib)
: "${SET:=debian}" "${MIB:=8}"
MODS=/lib/modules/ppkit/$SET
A=10.0.0.1 B=10.0.0.2 HOSTSIDE=10.9.0.2
echo "PPK_BOOT cpus=$(grep -c ^processor /proc/cpuinfo) set=$SET mib=$MIB kernel=$(uname -r)"

finish() {
	echo "PPK_DMESG_BEGIN"
	dmesg
	echo "PPK_DMESG_END"
	echo "PPK_DONE rc=$1"
	poweroff -f
}
fail() { echo "PPK_FAIL $*"; finish 1; }
ok() { echo "PPK_OK $*"; }
# wait_for SECONDS CMD...: until CMD succeeds, or fail
wait_for() {
	local n=$(($1 * 10))
	shift
	until "$@"; do
		n=$((n - 1))
		[ $n -gt 0 ] || return 1
		sleep 0.1
	done
}

# Debian's modules, then the set's, in the order of its list
# a line of the list: the module's file, then its parameters
while read -r f params; do
	# shellcheck disable=SC2086 # the parameters are words
	insmod "$MODS/$f" $params || fail "insmod $f $params"
done < "$MODS/list"
have3() { [ -e /sys/class/net/eth0 ] && [ -e /sys/class/net/eth1 ] && [ -e /sys/class/net/eth2 ]; }
wait_for 20 have3 || fail "the three ports did not probe: $(ls /sys/class/net)"
for i in 0 1 2; do
	echo "PPK_PORT eth$i mac=$(cat /sys/class/net/eth$i/address) driver=$(basename "$(readlink /sys/class/net/eth$i/device/driver)")"
done
ok "probe: three ports"

ip link set lo up
for i in 0 1 2; do ip link set "eth$i" up || fail "eth$i up"; done
carrier() { [ "$(cat "/sys/class/net/$1/carrier" 2>/dev/null)" = 1 ]; }
# (the namespace's sysfs is not mounted: its view of the link through ip)
b_carrier() { nsenter -t "$NS" -n ip link show eth1 | grep -q LOWER_UP; }
for i in 0 1 2; do
	wait_for 10 carrier "eth$i" || fail "eth$i: no carrier"
done
ok "link: three ports up with carrier"

# port 1 in a namespace of its own
unshare -n sleep 100000 &
NS=$!
sleep 0.2
ip link set eth1 netns "$NS" || fail "eth1 to the namespace"
inb() { nsenter -t "$NS" -n "$@"; }
inb ip link set lo up
inb ip link set eth1 up
inb ip addr add "$B/24" dev eth1
ip addr add "$A/24" dev eth0
wait_for 10 b_carrier || fail "eth1 in the namespace: no carrier"
ping -c 3 -W 5 "$B" > /tmp/ping.out 2>&1 || { cat /tmp/ping.out; fail "ping port 0 -> port 1"; }
ok "ping: port 0 -> port 1 ($(grep -o '[0-9]* packets received' /tmp/ping.out))"

# what the stacks saw, when a transfer fails
net_state() {
	echo "PPK_NET a: $(ip -s link show eth0 | tr '\n' ' ')"
	echo "PPK_NET b: $(inb ip -s link show eth1 | tr '\n' ' ')"
	echo "PPK_NET a: $(grep -A1 '^Tcp:' /proc/net/snmp | tr '\n' ' ')"
	echo "PPK_NET b: $(inb grep -A1 '^Tcp:' /proc/net/snmp | tr '\n' ' ')"
}
stat_of() { cat "/sys/class/net/$1/statistics/$2"; }
# transfer FROM TO: MIB MiB of pseudo-random bytes over TCP, from the side
# named FROM (a or b) to the other; the receiver's count and hash must match
echo "PPK_STEP making $MIB MiB of data"
dd if=/dev/urandom of=/tmp/tx.data bs=65536 count=$((MIB * 16)) 2>/dev/null
TXSUM=$(md5sum < /tmp/tx.data | cut -d' ' -f1)
BYTES=$((MIB << 20))
transfer() {
	local from=$1 dst listen send
	rm -f /tmp/rx.data
	if [ "$from" = a ]; then
		dst=$B listen=inb send=''
	else
		dst=$A listen='' send=inb
	fi
	($listen timeout 300 nc -l -p 5001 > /tmp/rx.data) &
	rx=$!
	sleep 0.5
	t0=$(cut -d' ' -f1 /proc/uptime)
	echo "PPK_STEP transfer $from"
	$send timeout 300 nc "$dst" 5001 -e cat /tmp/tx.data || { net_state; fail "transfer $from: nc"; }
	wait $rx
	t1=$(cut -d' ' -f1 /proc/uptime)
	got=$(wc -c < /tmp/rx.data)
	sum=$(md5sum < /tmp/rx.data | cut -d' ' -f1)
	echo "PPK_XFER from=$from bytes=$got want=$BYTES md5=$sum want_md5=$TXSUM s=$t0-$t1"
	[ "$got" = "$BYTES" ] && [ "$sum" = "$TXSUM" ] || fail "transfer $from: $got bytes, md5 $sum"
}
rx0=$(stat_of eth0 rx_packets)
transfer a
transfer b
ok "tcp: $MIB MiB each way, counts and hashes equal"
echo "PPK_STATS eth0 rx_packets=$(($(stat_of eth0 rx_packets) - rx0)) rx_bytes=$(stat_of eth0 rx_bytes) tx_bytes=$(stat_of eth0 tx_bytes) rx_dropped=$(stat_of eth0 rx_dropped) rx_errors=$(stat_of eth0 rx_errors)"

# ask_host PHASE: the host does its part of PHASE and answers one line
ask_host() {
	echo "PPK_HOST phase=$1 ip=$HOSTSIDE mac=$(cat /sys/class/net/eth2/address)"
	# shellcheck disable=SC3045 # busybox's read has -t
	read -r -t 300 line < /dev/console || line="(no answer)"
	echo "PPK_HOST_SAID $1: $line"
}
# stat NAME from ethtool -S of a port (in namespace b for eth1)
ethstat() { $2 ethtool -S "$1" | sed -n "s/^ *$3: //p"; }

# ethtool -S: the MIB counters count what arrived
ethtool -S eth0 > /tmp/s0 || fail "ethtool -S eth0"
oct=$(sed -n 's/^ *good_octets_received: //p' /tmp/s0)
echo "PPK_ETHTOOL eth0 stats=$(grep -c ': ' /tmp/s0) good_octets_received=$oct rx_bytes=$(stat_of eth0 rx_bytes)"
[ -n "$oct" ] && [ "$oct" -ge "$(stat_of eth0 rx_bytes)" ] ||
	fail "ethtool -S eth0: good_octets_received $oct below rx_bytes $(stat_of eth0 rx_bytes)"
ok "ethtool -S: $(grep -c ': ' /tmp/s0) counters, good_octets_received $oct >= rx_bytes"

# port 2: the host pings it through QEMU's socket backend
ip addr add "$HOSTSIDE/24" dev eth2
ask_host ping

# MTU 9000: jumbo pools (the controller's pools rebuilt), TCP both ways
ip link set eth0 mtu 9000 || fail "eth0 mtu 9000"
inb ip link set eth1 mtu 9000 || fail "eth1 mtu 9000"
wait_for 10 carrier eth0 || fail "eth0: no carrier at MTU 9000"
wait_for 10 b_carrier || fail "eth1: no carrier at MTU 9000"
# the frames port 1 received (the driver counts each descriptor; GRO and
# TSO do not change it): bytes and packets from its /proc/net/dev line
b_rx() { inb cat /proc/net/dev | sed -n 's/^ *eth1: *\([0-9]*\) *\([0-9]*\).*/\1 \2/p'; }
r0=$(b_rx)
transfer a
r1=$(b_rx)
per=$(((${r1% *} - ${r0% *}) / (${r1#* } - ${r0#* })))
echo "PPK_MTU9000 eth0 mtu=$(cat /sys/class/net/eth0/mtu) port1_rx_bytes_per_frame=$per"
[ "$per" -gt 3000 ] || fail "MTU 9000: port 1 received $per bytes a frame"
transfer b
ok "mtu 9000: TCP both ways, port 1 received $per bytes a frame"
ip link set eth0 mtu 1500
inb ip link set eth1 mtu 1500
wait_for 10 carrier eth0 || fail "eth0: no carrier back at MTU 1500"

# down/up, then traffic again
ip link set eth0 down
inb ip link set eth1 down
ip link set eth0 up
inb ip link set eth1 up
wait_for 10 carrier eth0 || fail "eth0: no carrier after down/up"
wait_for 10 b_carrier || fail "eth1: no carrier after down/up"
ping -c 3 -W 5 "$B" > /tmp/ping.out 2>&1 || { cat /tmp/ping.out; fail "ping after down/up"; }
ok "down/up: ping again"

# XDP, through ppctl: pass (TCP goes on), drop (ping fails), tx and
# redirect (the host's datagrams echoed by the program on port 2)
if [ -x /usr/bin/ppctl ]; then
	inb ppctl xdp attach eth1 --prog pass > /tmp/xdp.out 2>&1 || { cat /tmp/xdp.out; fail "xdp attach pass"; }
	transfer a
	echo "PPK_XDP pass rx_xdp_pass=$(ethstat eth1 inb rx_xdp_pass)"
	ok "xdp pass: TCP passes, counts and hashes equal"
	inb ppctl xdp attach eth1 --prog drop --force > /tmp/xdp.out 2>&1 || { cat /tmp/xdp.out; fail "xdp attach drop"; }
	d0=$(ethstat eth1 inb rx_xdp_drop)
	if ping -c 5 -W 2 "$B" > /tmp/ping.out 2>&1; then fail "xdp drop: ping went through"; fi
	echo "PPK_XDP drop rx_xdp_drop=$d0->$(ethstat eth1 inb rx_xdp_drop)"
	inb ppctl xdp detach eth1 > /dev/null || fail "xdp detach"
	ping -c 3 -W 5 "$B" > /tmp/ping.out 2>&1 || fail "ping after xdp detach"
	ok "xdp drop: ping dropped, and back after detach"
	ppctl xdp attach eth2 --prog /usr/lib/ppkit/xdp-echo.o > /tmp/xdp.out 2>&1 || { cat /tmp/xdp.out; fail "xdp attach echo"; }
	ask_host echo
	echo "PPK_XDP echo rx_xdp_tx=$(ethstat eth2 "" rx_xdp_tx) rx_xdp_redirect=$(ethstat eth2 "" rx_xdp_redirect)"
	ppctl xdp detach eth2 > /dev/null || fail "xdp detach eth2"
else
	echo "PPK_NOXDP no /usr/bin/ppctl in the guest"
fi

# down and unload: the driver drains its pools
kill "$NS"
wait "$NS" 2>/dev/null
for i in 0 1 2; do ip link set "eth$i" down 2>/dev/null; done
tac "$MODS/list" | while read -r f _; do
	case "$f" in *mvpp2*) rmmod "${f%.ko}" || echo "PPK_FAIL rmmod $f";; esac
done
ok "unload"
finish 0
