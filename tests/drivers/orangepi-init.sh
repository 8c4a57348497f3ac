#!/bin/busybox sh
# /init of the orangepi-pc guest (tests/drivers/orangepi.py builds the initramfs).
# Loads Debian's PHY/MDIO modules and one of the stmmac module sets under
# /lib/modules/ppkit/<set>/, brings eth0 up on QEMU's user network, then runs
# what the kernel command line asks, printing PPK_* markers the host reacts to:
#   ppk.sets=own[,base]  module sets, in turn; more than one = A/B rounds
#   ppk.rounds=N         transfers per set (interleaved across sets)
#   ppk.mib=M            MiB per transfer and direction
#   ppk.lport=P          host port the guest sends to (10.0.2.2:P)
#   ppk.stress=S         seconds of TCP both ways + /proc/net/dev reads
#   ppk.xdp=1            XDP pass (transfer) and drop through ppctl
#   ppk.sink=P ppk.source=P   host ports of the stress streams
/bin/busybox --install -s /bin
export PATH=/bin:/sbin:/usr/bin
mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t devtmpfs dev /dev

arg() { sed -n "s/.*\bppk\.$1=\([^ ]*\).*/\1/p" /proc/cmdline; }
SETS=$(arg sets); ROUNDS=$(arg rounds); MIB=$(arg mib); LPORT=$(arg lport)
STRESS=$(arg stress); SINK=$(arg sink); SOURCE=$(arg source)
: "${SETS:=own}" "${ROUNDS:=1}" "${MIB:=16}" "${STRESS:=0}"
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
transfer() { # set round
	# nc's stdin is a FIFO held open until the transfer is over: with
	# /dev/null it would send its FIN first, and QEMU's user network then
	# drops what it still buffers for us when the host's FIN comes.
	rm -f /tmp/hold
	mkfifo /tmp/hold
	(nc -l -p 5555 </tmp/hold | wc -c >/tmp/rx.count) &
	rxp=$!
	exec 7>/tmp/hold
	sleep 1
	echo "PPK_RX_READY set=$1 round=$2"
	wait $rxp
	exec 7>&-
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

stress() { # seconds
	ncpu=$(grep -c ^processor /proc/cpuinfo)
	echo "PPK_STRESS_START secs=$1 cpus=$ncpu"
	for c in 0 1; do
		taskset -c $((c % ncpu)) sh -c "dd if=/dev/zero bs=65536 2>/dev/null | nc 10.0.2.2 $SINK" &
		taskset -c $(((c + 1) % ncpu)) sh -c "nc 10.0.2.2 $SOURCE >/dev/null" &
	done
	end=$(($(cut -d. -f1 /proc/uptime) + $1))
	n=0
	hang=0
	while [ "$(cut -d. -f1 /proc/uptime)" -lt $end ]; do
		statcheck || { hang=1; break; }
		n=$((n + 1))
		[ $((n % 15)) = 0 ] && echo "PPK_STRESS_TICK checks=$n"
		sleep 1
	done
	killall nc dd 2>/dev/null
	sleep 1
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

if [ -x /usr/bin/ppctl ]; then
	echo "PPK_PPCTL_BEGIN"
	ppctl --json stats
	echo "PPK_PPCTL_END rc=$?"
	ppctl stats
fi
echo "PPK_ETHTOOL_STATS rx_packets=$(cat /sys/class/net/eth0/statistics/rx_packets) rx_dropped=$(cat /sys/class/net/eth0/statistics/rx_dropped) rx_errors=$(cat /sys/class/net/eth0/statistics/rx_errors)"

if [ -x /usr/bin/ppctl ] && [ "$(arg xdp)" = 1 ]; then
	xdp_phase || finish 1
fi

rc=0
if [ "$STRESS" -gt 0 ]; then
	stress "$STRESS" || rc=1
fi
[ -d /sys/module/stmmac ] && unload_set
if [ -d /sys/module/pp_backport ]; then
	rmmod pp_backport || { echo "PPK_FAIL rmmod pp_backport"; rc=1; }
fi
finish $rc
