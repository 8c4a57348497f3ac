#!/bin/sh
# Inside the board guest (busybox, Debian's kernel of the board's
# architecture): install the dist-board tarball the way its README says, load
# the modules with modprobe, run ppsim traffic, read it with the board's own
# ppctl, run ppctld, then uninstall.  Prints "ok N - ..."/"not ok N - ..." and
# "board: N passed, N failed".
#   sh /tarball-guest.sh /root/ppkit-<version>-<arch>-<kernel>.tar.gz
pass=0 failn=0
ok() { pass=$((pass + 1)); echo "ok $((pass + failn)) - $*"; }
bad() { failn=$((failn + 1)); echo "not ok $((pass + failn)) - $*"; }
check() { what=$1; shift; if "$@"; then ok "$what"; else bad "$what"; fi; }
PATH=/usr/local/sbin:$PATH
export PATH

echo "board: $(uname -m), kernel $(uname -r)"
cd /root && tar xzf "$1" || { bad "tarball unpacks"; exit 1; }
top=$(basename "$1" .tar.gz)
sed 's/^/# MANIFEST: /' "$top/MANIFEST"
check "install.sh installs" "$top/install.sh"
check "modules under /lib/modules/$(uname -r)/extra/ppkit" \
	test -f "/lib/modules/$(uname -r)/extra/ppkit/pp_backport.ko"
check "modprobe ppsim (pulls in pp_backport)" modprobe ppsim
check "both are loaded" sh -c 'grep -q "^pp_backport " /proc/modules && grep -q "^ppsim " /proc/modules'
check "ppctl --version" ppctl --version
dev=$(ppctl sim add --ring-size 128)
check "ppctl sim add: a device ($dev)" test -n "$dev"
ip link set lo up
ip link set "$dev" up
ip addr add 10.80.0.1/24 dev "$dev"
before=$(cat "/sys/class/net/$dev/statistics/rx_packets")
check "ppsim traffic starts" ppctl sim gen start "$dev" --count 20000 --size 128 --dst-port 7777 --rate 0
i=0
while [ $i -lt 120 ]; do
	[ $(($(cat "/sys/class/net/$dev/statistics/rx_packets") - before)) -ge 20000 ] && break
	sleep 0.5; i=$((i + 1))
done
got=$(($(cat "/sys/class/net/$dev/statistics/rx_packets") - before))
check "20000 frames received ($got)" test "$got" -ge 20000
ppctl stats | sed 's/^/# /'
ppctl --json stats > /tmp/stats.json
fast=$(tr ',{}' '\n\n\n' < /tmp/stats.json | sed -n 's/^ *"alloc_fast": *\([0-9]*\).*/\1/p' | head -n 1)
check "ppctl stats reads the pool: alloc_fast $fast" test "${fast:-0}" -gt 10000
ppctld --foreground --listen none --socket /run/ppctld.sock > /tmp/ppctld.log 2>&1 &
d=$!
i=0
while [ $i -lt 60 ] && [ ! -S /run/ppctld.sock ]; do sleep 0.5; i=$((i + 1)); done
sleep 3
# --socket: without it ppctl top falls back to reading the kernel itself.
ppctl top -n 1 --socket /run/ppctld.sock > /tmp/top.txt 2>&1
toprc=$?
sed 's/^/# top: /' /tmp/top.txt
check "ppctld runs and ppctl top reads it (exit $toprc)" \
	sh -c "[ $toprc = 0 ] && grep -q 'from ppctld,' /tmp/top.txt && grep -q ppsim /tmp/top.txt"
kill "$d"
wait "$d"
check "ppctld exits 0 on SIGTERM" test $? = 0
ppctl sim del "$dev" > /dev/null
check "modprobe -r ppsim pp_backport" modprobe -r ppsim pp_backport
check "install.sh --uninstall" "$top/install.sh" --uninstall
check "nothing of ppkit left in /usr/local" sh -c '! ls /usr/local/sbin/ppctl /usr/local/share/man/man8/ppctl.8 2>/dev/null'
check "modprobe fails once uninstalled" sh -c '! modprobe pp_backport 2>/dev/null'
echo "board: $pass passed, $failn failed"
[ $failn -eq 0 ]
