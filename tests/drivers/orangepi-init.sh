#!/bin/busybox sh
# shellcheck shell=dash
# /init of the orangepi-pc guest (tests/drivers/orangepi.py builds the initramfs).
# Loads Debian's PHY/MDIO modules and one of the stmmac module sets under
# /lib/modules/ppkit/<set>/, brings eth0 up on QEMU's user network, then runs
# what the kernel command line asks, printing PPK_* markers the host reacts to:
#   ppk.sets=own[,base]  module sets, in turn; more than one = A/B rounds
#   ppk.rounds=N         transfers per set (interleaved across sets)
#   ppk.mib=M            MiB per transfer and direction
#   ppk.lport=P          host port the guest sends to (10.0.2.2:P)
#   ppk.stress=S         seconds of TCP both ways + /proc/net/dev reads
#   ppk.xdp=1            XDP pass (transfer) and drop through ppctl, then
#                        XDP_TX and XDP_REDIRECT echoes of the host's UDP
#                        datagrams under traffic (/usr/lib/ppkit/xdp-echo.o)
#   ppk.churn=1          MTU changes and down/up cycles under traffic; the
#                        interface counters must keep counting
#   ppk.usink=P          host UDP port the MTU changes send a datagram to
#   ppk.sink=P ppk.source=P   host ports of the stress streams
/bin/busybox --install -s /bin
export PATH=/bin:/sbin:/usr/bin
mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t devtmpfs dev /dev

arg() { sed -n "s/.*\bppk\.$1=\([^ ]*\).*/\1/p" /proc/cmdline; }
SETS=$(arg sets); ROUNDS=$(arg rounds); MIB=$(arg mib); LPORT=$(arg lport)
STRESS=$(arg stress); SINK=$(arg sink); SOURCE=$(arg source); CHURN=$(arg churn)
USINK=$(arg usink)
: "${SETS:=own}" "${ROUNDS:=1}" "${MIB:=16}" "${STRESS:=0}" "${CHURN:=0}"
MODS=/lib/modules/ppkit
echo "PPK_BOOT cpus=$(grep -c ^processor /proc/cpuinfo) sets=$SETS rounds=$ROUNDS mib=$MIB"

finish() {
	echo "PPK_DMESG_BEGIN"
	dmesg
	echo "PPK_DMESG_END"
	echo "PPK_DONE rc=$1"
	poweroff -f
}

uptime_ms() { awk '{ printf "%d", $1 * 1000 }' /proc/uptime; }

for m in $(cat $MODS/debian.list); do
	insmod "$MODS/debian/$m.ko" || { echo "PPK_FAIL insmod $m"; finish 1; }
done

# Load a set: pp_backport (if the set has it), stmmac, stmmac-platform, dwmac-sun8i.
load_set() {
	for m in pp_backport stmmac stmmac-platform dwmac-sun8i; do
		[ -f "$MODS/$1/$m.ko" ] || continue
		[ -d "/sys/module/$(echo $m | tr - _)" ] && continue
		insmod "$MODS/$1/$m.ko" || { echo "PPK_FAIL insmod $1/$m"; finish 1; }
	done
	i=0
	while [ ! -e /sys/class/net/eth0 ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
	ip link set eth0 up || { echo "PPK_FAIL no eth0 with set $1"; finish 1; }
	ip addr add 10.0.2.15/24 dev eth0
	ip route add default via 10.0.2.2 2>/dev/null
	wait_link "$1" || finish 1
	echo "PPK_NET_UP set=$1 driver=$(basename "$(readlink /sys/class/net/eth0/device/driver)")"
}

# Carrier, then the gateway answers (the first frames after a reload or a
# ring rebuild can take a while under TCG: 5 tries).
wait_link() {
	i=0
	while [ "$(cat /sys/class/net/eth0/carrier 2>/dev/null)" != 1 ] && [ $i -lt 100 ]; do
		sleep 0.1; i=$((i + 1))
	done
	i=0
	until ping -c 1 -W 2 10.0.2.2 >/dev/null; do
		i=$((i + 1))
		[ $i -lt 5 ] || { echo "PPK_FAIL ping with $1"; return 1; }
	done
}

unload_set() {
	ip link set eth0 down
	for m in dwmac_sun8i stmmac_platform stmmac; do rmmod $m || { echo "PPK_FAIL rmmod $m"; finish 1; }; done
}

# One transfer each way: the host sends MIB MiB to our port 5555, we count;
# then we send MIB MiB to the host, which counts.
# rx_exact MARK BYTES OUT CMD...: MARK once listening, then the host's
# stream on our port 5555, exactly BYTES of it, into CMD, whose output goes
# to OUT.  No FIN is needed on either side before the count is done:
# nc's stdin is a FIFO held open, and the host closes only once we have
# reported (QEMU's user network drops what it still buffers for us when a
# FIN comes: 127,973 bytes short, now and then).  A stream that ends early
# still ends the count, short.
rx_exact() {
	rm -f /tmp/hold /tmp/rx.data
	mkfifo /tmp/hold /tmp/rx.data
	mark=$1 n=$2 out=$3
	shift 3
	# the reader first: nc opens its output only once it is there, and
	# listens only after that
	(head -c "$n" </tmp/rx.data | "$@" >"$out") &
	cnt=$!
	(nc -l -p 5555 </tmp/hold >/tmp/rx.data) &
	rxp=$!
	exec 7>/tmp/hold
	sleep 1
	echo "$mark"
	wait $cnt
	kill $rxp 2>/dev/null
	wait $rxp 2>/dev/null
	exec 7>&-
}

transfer() { # set round
	rx_exact "PPK_RX_READY set=$1 round=$2" $((MIB << 20)) /tmp/rx.count wc -c
	echo "PPK_RX_DONE set=$1 round=$2 bytes=$(cat /tmp/rx.count)"
	sleep 1
	echo "PPK_TX_START set=$1 round=$2"
	dd if=/dev/zero bs=65536 count=$((MIB * 16)) 2>/dev/null | nc 10.0.2.2 "$LPORT"
	echo "PPK_TX_DONE set=$1 round=$2"
}

# A read of /proc/net/dev that does not finish within 5 s is a hang.
statcheck() {
	cat /proc/net/dev >/dev/null &
	cp=$!
	i=0
	while [ $i -lt 50 ]; do
		[ -d /proc/$cp ] || { wait $cp; return 0; }
		st=$(sed -n 's/^State:[[:space:]]*\(.\).*/\1/p' /proc/$cp/status 2>/dev/null)
		[ "$st" = Z ] && { wait $cp; return 0; }
		usleep 100000
		i=$((i + 1))
	done
	echo "PPK_STATS_HANG cat /proc/net/dev stuck for 5 s (wchan $(cat /proc/$cp/wchan))"
	return 1
}

# TCP both ways, two streams each, spread over the CPUs: the host's stress
# sink and source.
streams_start() {
	ncpu=$(grep -c ^processor /proc/cpuinfo)
	for c in 0 1; do
		taskset -c $((c % ncpu)) sh -c "dd if=/dev/zero bs=65536 2>/dev/null | nc 10.0.2.2 $SINK" &
		taskset -c $(((c + 1) % ncpu)) sh -c "nc 10.0.2.2 $SOURCE >/dev/null" &
	done
}

streams_stop() {
	killall nc dd 2>/dev/null
	sleep 1
}

stress() { # seconds
	echo "PPK_STRESS_START secs=$1 cpus=$(grep -c ^processor /proc/cpuinfo)"
	streams_start
	end=$(($(cut -d. -f1 /proc/uptime) + $1))
	n=0
	hang=0
	while [ "$(cut -d. -f1 /proc/uptime)" -lt $end ]; do
		statcheck || { hang=1; break; }
		n=$((n + 1))
		[ $((n % 15)) = 0 ] && echo "PPK_STRESS_TICK checks=$n"
		sleep 1
	done
	streams_stop
	[ $hang = 0 ] && { statcheck || hang=1; }
	echo "PPK_STRESS_END checks=$n hang=$hang rx_bytes=$(cat /sys/class/net/eth0/statistics/rx_bytes) tx_bytes=$(cat /sys/class/net/eth0/statistics/tx_bytes)"
	[ $hang = 0 ]
}

sets=$(echo "$SETS" | tr , ' ')
nsets=$(echo "$sets" | wc -w)
if [ "$nsets" = 1 ]; then
	load_set "$sets"
	r=1
	while [ $r -le "$ROUNDS" ]; do transfer "$sets" $r; r=$((r + 1)); done
else
	r=1
	while [ $r -le "$ROUNDS" ]; do
		for s in $sets; do
			load_set "$s"
			transfer "$s" $r
			unload_set
		done
		r=$((r + 1))
	done
	load_set "$(echo "$sets" | cut -d' ' -f1)"
fi

# XDP on the patched driver, through the armhf ppctl's bundled programs:
# pass (the buffers get XDP headroom and bidirectional DMA; TCP must still
# move every byte both ways), then drop (nothing gets through), then back
# without a program.  Attach and detach rebuild the rings and the pools.
xdp_phase() {
	ppctl xdp attach eth0 --prog pass || { echo "PPK_FAIL xdp attach pass"; return 1; }
	wait_link xdp-pass || return 1
	transfer xdp-pass 1
	ppctl xdp detach eth0 || { echo "PPK_FAIL xdp detach"; return 1; }
	ppctl xdp attach eth0 --prog drop || { echo "PPK_FAIL xdp attach drop"; return 1; }
	sleep 3
	if ping -c 3 -W 1 10.0.2.2 >/dev/null; then
		echo "PPK_FAIL a ping got through XDP_DROP"
		return 1
	fi
	echo "PPK_XDP_DROP_OK"
	ppctl xdp detach eth0 || { echo "PPK_FAIL xdp detach"; return 1; }
	wait_link no-xdp || return 1
	echo "PPK_XDP_OK"
}

cnt() { cat "/sys/class/net/eth0/statistics/$1"; }

# A barrier with the host: returns once the host has connected to our port
# 5555 and closed (the FIFO keeps nc's stdin open, as in transfer()).
host_barrier() { # marker...
	rm -f /tmp/hold
	mkfifo /tmp/hold
	(nc -l -p 5555 </tmp/hold >/tmp/barrier.out) &
	bp=$!
	exec 7>/tmp/hold
	sleep 1
	echo "$@"
	wait $bp
	exec 7>&-
}

# XDP_TX and XDP_REDIRECT under traffic: xdp-echo.o sends UDP datagrams to
# port 5556 back out with XDP_TX and those to 5557 with XDP_REDIRECT to eth0
# itself (ndo_xdp_xmit), addresses swapped; everything else passes.  The host
# sends numbered datagrams to both and checks each one comes back intact.
xdp_echo() {
	ppctl xdp attach eth0 --prog /usr/lib/ppkit/xdp-echo.o ||
		{ echo "PPK_FAIL xdp attach xdp-echo.o"; return 1; }
	wait_link xdp-echo || return 1
	if ip link set eth0 mtu 2000 2>/dev/null; then
		echo "PPK_FAIL MTU 2000 accepted with an XDP program attached"
		return 1
	fi
	streams_start
	tx0=$(cnt tx_packets)
	host_barrier "PPK_ECHO_READY"
	echo "PPK_ECHO_END tx_packets=$(($(cnt tx_packets) - tx0)) rx_packets_total=$(cnt rx_packets)"
	streams_stop
	ppctl xdp detach eth0 || { echo "PPK_FAIL xdp detach"; return 1; }
	wait_link no-xdp
}

# The host sends us a pseudo-random stream; we print its md5 (the host
# compares it with what it sent).
rx_md5() { # tag bytes
	rx_exact "PPK_MD5_READY tag=$1" "$2" /tmp/rx.md5 md5sum
	echo "PPK_MD5_DONE tag=$1 md5=$(cut -d' ' -f1 /tmp/rx.md5)"
}

# MTU changes under traffic: each one reopens the device with new rings and
# pools.  The counters must keep counting, and one UDP datagram filling the
# new MTU goes to the host unfragmented: the host checks it arrived.  It is
# traceroute's probe (busybox nc has no UDP; the first probe goes to port
# P + 1, and with a TTL of 2, since QEMU's user network answers a TTL of 1
# itself).  The emulated EMAC sends frames up to 2048 bytes (the 11-bit
# length of one descriptor buffer) and QEMU's user network sends us none
# above 1514, so the datagram stops at a 2000-byte packet and what comes in
# stays at 1500.  At 3000, the buffers are too small to build skbs on, and
# a stream from the host must arrive intact.  Above the device's maximum,
# the change is refused.
# A driver that changes the MTU only while down (5.10's stmmac: EBUSY) gets
# it that way: the change still reopens the device, and a refusal is still
# the driver's answer to the MTU, not to the device being up.
set_mtu() { # mtu
	ip link set eth0 mtu "$1" 2>/tmp/mtu.err && return 0
	grep -qi busy /tmp/mtu.err || return 1
	echo "PPK_MTU_DOWN mtu=$1 ($(cat /tmp/mtu.err))"
	ip link set eth0 down
	ip link set eth0 mtu "$1"
	r=$?
	ip link set eth0 up
	return $r
}

mtu_churn() {
	streams_start
	fail=0
	for m in 2000 3000 1280 1500; do
		b=$(cnt rx_packets)
		set_mtu "$m" || { echo "PPK_FAIL MTU $m refused"; fail=1; break; }
		wait_link "mtu-$m" || { fail=1; break; }
		s=$((m - 28))
		[ $s -gt 1972 ] && s=1972
		traceroute -n -f 2 -m 2 -q 1 -w 1 -p $((USINK - 1)) 10.0.2.2 $((s + 28)) >/dev/null 2>&1
		[ "$m" = 3000 ] && rx_md5 "mtu-$m" $((4 << 20))
		sleep 2
		a=$(cnt rx_packets)
		echo "PPK_MTU mtu=$m udp=$s rx_packets_before=$b rx_packets=$a"
		[ "$a" -gt "$b" ] || { echo "PPK_FAIL rx_packets went from $b to $a across MTU $m"; fail=1; }
	done
	for m in 9000 4000; do
		if set_mtu $m 2>/dev/null; then
			echo "PPK_FAIL MTU $m accepted"
			fail=1
			set_mtu 1500
		else
			echo "PPK_MTU_REFUSED mtu=$m"
		fi
	done
	streams_stop
	return $fail
}

# Down/up cycles under traffic: the counters go on from where they were.
down_up() {
	streams_start
	sleep 3
	fail=0
	prx=$(cnt rx_packets) ptx=$(cnt tx_packets)
	echo "PPK_DOWNUP cycle=0 rx_packets=$prx tx_packets=$ptx"
	for n in 1 2 3; do
		ip link set eth0 down
		ip link set eth0 up
		ip route add default via 10.0.2.2 2>/dev/null
		wait_link "down-up-$n" || { fail=1; break; }
		sleep 3
		rx=$(cnt rx_packets) tx=$(cnt tx_packets)
		echo "PPK_DOWNUP cycle=$n rx_packets=$rx tx_packets=$tx"
		if [ "$rx" -le "$prx" ] || [ "$tx" -le "$ptx" ]; then
			echo "PPK_FAIL counters went back over down/up $n: rx_packets $prx -> $rx, tx_packets $ptx -> $tx"
			fail=1
		fi
		prx=$rx ptx=$tx
	done
	streams_stop
	return $fail
}

if [ -x /usr/bin/ppctl ]; then
	echo "PPK_PPCTL_BEGIN"
	ppctl --json stats
	echo "PPK_PPCTL_END rc=$?"
	ppctl stats
fi
echo "PPK_ETHTOOL_STATS rx_packets=$(cat /sys/class/net/eth0/statistics/rx_packets) rx_dropped=$(cat /sys/class/net/eth0/statistics/rx_dropped) rx_errors=$(cat /sys/class/net/eth0/statistics/rx_errors)"

if [ -x /usr/bin/ppctl ] && [ "$(arg xdp)" = 1 ]; then
	xdp_phase || finish 1
	xdp_echo || finish 1
	echo "PPK_XDP_ECHO_OK"
fi

rc=0
if [ "$CHURN" = 1 ]; then
	echo "PPK_CHURN_START"
	mtu_churn || rc=1
	down_up || rc=1
	echo "PPK_CHURN_END rc=$rc"
fi
if [ "$STRESS" -gt 0 ]; then
	stress "$STRESS" || rc=1
fi
[ -d /sys/module/stmmac ] && unload_set
if [ -d /sys/module/pp_backport ]; then
	rmmod pp_backport || { echo "PPK_FAIL rmmod pp_backport"; rc=1; }
fi
finish $rc
