#!/bin/sh
# Inside the board guest (busybox, Debian's kernel of the board's
# architecture): install the dist-board tarball the way its README says, load
# the modules with modprobe, run ppsim traffic, read it with the board's own
# ppctl, run ppctld, then uninstall.  Prints "ok N - ..."/"not ok N - ..." and
# "board: N passed, N failed".
#   [PPK_PAGE_SIZE=N] [PPK_SELFTEST=KO] sh /tarball-guest.sh /root/ppkit-<version>-<arch>-<kernel>.tar.gz
# PPK_PAGE_SIZE: the page size the kernel must run with (its .config says;
# 16384 on arm64-16k), checked as user space sees it (AT_PAGESZ, what
# getconf PAGESIZE prints: busybox has no getconf) and as the kernel maps it
# (KernelPageSize in smaps).  PPK_SELFTEST: pp_selftest.ko of the same
# build, whose KTAP cases run with the installed pp_backport: a failed case
# is a failure of its own ("not ok N - pp_selftest: CASE"), a skipped one a
# skip with its reason ("ok N - pp_selftest: CASE # SKIP REASON"), never a
# pass, and the cases seen must be the plan's ("1..N": none lost).
pass=0 failn=0 skipn=0
ok() { pass=$((pass + 1)); echo "ok $((pass + failn + skipn)) - $*"; }
bad() { failn=$((failn + 1)); echo "not ok $((pass + failn + skipn)) - $*"; }
skip() { skipn=$((skipn + 1)); echo "ok $((pass + failn + skipn)) - $1 # SKIP $2"; }
check() { what=$1; shift; if "$@"; then ok "$what"; else bad "$what"; fi; }
# rx_since BEFORE N: frames received since rx_packets was BEFORE, once N
# arrived or after 60 s
rx_since() {
	_i=0
	while [ $_i -lt 120 ]; do
		[ $(($(cat "/sys/class/net/$dev/statistics/rx_packets") - $1)) -ge "$2" ] && break
		sleep 0.5; _i=$((_i + 1))
	done
	echo $(($(cat "/sys/class/net/$dev/statistics/rx_packets") - $1))
}
# alloc_fast: the first pool's fast allocations (ppctl --json stats)
alloc_fast() {
	ppctl --json stats | tr ',{}' '\n\n\n' | sed -n 's/^ *"alloc_fast": *\([0-9]*\).*/\1/p' | head -n 1
}
PATH=/usr/local/sbin:$PATH
export PATH

echo "board: $(uname -m), kernel $(uname -r)"
# AT_PAGESZ (6) of the auxiliary vector: pairs of words of the machine's size
w=4
[ "$(uname -m)" = aarch64 ] && w=8
pagesz=$(od -A n -v -t u$w /proc/self/auxv | tr -s ' \n' '\n\n' | grep -v '^$' |
	awk 'NR % 2 == 1 { k = $1; next } k == 6 { print; exit }')
kpage=$(sed -n 's/^KernelPageSize: *\([0-9]*\) kB$/\1/p' /proc/self/smaps | head -n 1)
echo "board: page size $pagesz (AT_PAGESZ, getconf PAGESIZE), KernelPageSize ${kpage:-?} kB"
if [ -n "${PPK_PAGE_SIZE:-}" ]; then
	check "page size $pagesz is the kernel's $PPK_PAGE_SIZE" \
		sh -c "[ '$pagesz' = '$PPK_PAGE_SIZE' ] && [ '$((${kpage:-0} * 1024))' = '$PPK_PAGE_SIZE' ]"
fi
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
got=$(rx_since "$before" 20000)
check "20000 frames received ($got)" test "$got" -ge 20000
ppctl stats | sed 's/^/# /'
fast=$(alloc_fast)
check "ppctl stats reads the pool: alloc_fast $fast" test "${fast:-0}" -gt 10000
# Jumbo frames: MTU 9000 takes about 9.4 KiB a buffer (headroom, frame,
# skb_shared_info), the smallest page order that holds it: 2 with 4 KiB
# pages, 0 with 16 KiB ones.  The rings and pools are rebuilt for it.
ps=${pagesz:-4096} want=0
while [ $((ps << want)) -lt 9500 ]; do want=$((want + 1)); done
ip link set "$dev" mtu 9000
ppctl --json list > /tmp/list.json
order=$(tr ',{}' '\n\n\n' < /tmp/list.json | sed -n 's/^ *"order": *\([0-9]*\).*/\1/p' | sort -u | tr '\n' ' ')
check "MTU 9000: the pool's page order is ${order% } ($want for $ps-byte pages)" test "${order% }" = "$want"
before=$(cat "/sys/class/net/$dev/statistics/rx_packets")
check "ppsim traffic of 9014-byte frames starts" \
	ppctl sim gen start "$dev" --count 5000 --size 9014 --dst-port 7777 --rate 0
got=$(rx_since "$before" 5000)
check "5000 jumbo frames received ($got)" test "$got" -ge 5000
ppctl stats | sed 's/^/# jumbo: /'
fast=$(alloc_fast)
check "jumbo frames recycle: alloc_fast $fast" test "${fast:-0}" -gt 4000
# XDP at MTU 9000: ppsim, like most drivers, wants a frame in one page
# (order 0, 256 bytes of XDP headroom): refused with 4 KiB pages, taken
# with 16 KiB ones, where the jumbo frames then pass through XDP.
if [ "$want" -gt 0 ]; then
	xo=$(ppctl xdp attach "$dev" --prog pass 2>&1)
	xrc=$?
	check "XDP at MTU 9000 refused with $ps-byte pages (exit $xrc: $xo)" \
		sh -c "[ $xrc != 0 ] && echo '$xo' | grep -q 'MTU too large for XDP'"
else
	check "XDP pass attaches at MTU 9000 with $ps-byte pages" ppctl xdp attach "$dev" --prog pass
	ppctl --json list > /tmp/list.json
	order=$(tr ',{}' '\n\n\n' < /tmp/list.json | sed -n 's/^ *"order": *\([0-9]*\).*/\1/p' | sort -u | tr '\n' ' ')
	before=$(cat "/sys/class/net/$dev/statistics/rx_packets")
	ppctl sim gen start "$dev" --count 5000 --size 9014 --dst-port 7777 --rate 0
	got=$(rx_since "$before" 5000)
	ppctl stats | sed 's/^/# xdp: /'
	fast=$(alloc_fast)
	check "5000 jumbo frames through XDP pass ($got), order ${order% }, alloc_fast $fast" \
		sh -c "[ $got -ge 5000 ] && [ '${order% }' = 0 ] && [ ${fast:-0} -gt 4000 ]"
	check "XDP detaches" ppctl xdp detach "$dev"
fi
ppctld --foreground --listen none --socket /run/ppctld/ppctld.sock > /tmp/ppctld.log 2>&1 &
d=$!
i=0
while [ $i -lt 60 ] && [ ! -S /run/ppctld/ppctld.sock ]; do sleep 0.5; i=$((i + 1)); done
sleep 3
# --socket: without it ppctl top falls back to reading the kernel itself.
ppctl top -n 1 --socket /run/ppctld/ppctld.sock > /tmp/top.txt 2>&1
toprc=$?
sed 's/^/# top: /' /tmp/top.txt
check "ppctld runs and ppctl top reads it (exit $toprc)" \
	sh -c "[ $toprc = 0 ] && grep -q 'from ppctld,' /tmp/top.txt && grep -q ppsim /tmp/top.txt"
kill "$d"
wait "$d"
check "ppctld exits 0 on SIGTERM" test $? = 0
ppctl sim del "$dev" > /dev/null
if [ -n "${PPK_SELFTEST:-}" ]; then
	# pp_selftest's KTAP cases, on the pp_backport the tarball installed;
	# its lines are those after a marker (a line count breaks when the
	# kernel's ring buffer wraps)
	mark="ppkit-board: load pp_selftest $$"
	echo "$mark" > /dev/kmsg
	insmod "$PPK_SELFTEST"
	strc=$?
	dmesg | sed 's/^\[[^]]*\] //' | awk -v m="$mark" 'found { print } $0 == m { found = 1 }' |
		grep -E '^(KTAP version|1\.\.|ok |not ok |    #|# )' > /tmp/ktap.txt
	sed 's/^/# ktap: /' /tmp/ktap.txt
	kplan=$(sed -n 's/^1\.\.//p' /tmp/ktap.txt)
	# a failed case is a failure, a skipped one a skip; the passes are counted
	kn=0 kpass=0
	while read -r kres _ krest; do
		case $kres in
		ok | not) kn=$((kn + 1)) ;;
		*) continue ;;
		esac
		if [ "$kres" = not ]; then
			bad "pp_selftest: ${krest#* }"
		elif [ "${krest#* # SKIP}" != "$krest" ]; then
			skip "pp_selftest: ${krest%% # SKIP*}" "${krest#* # SKIP }"
		else
			kpass=$((kpass + 1))
		fi
	done < /tmp/ktap.txt
	check "pp_selftest: $kpass of ${kplan:-?} KTAP cases pass, $kn reported, the plan's ${kplan:-(none)} (insmod exit $strc)" \
		sh -c "[ $strc = 0 ] && [ -n '$kplan' ] && [ $kn = '${kplan:-x}' ] && [ $kpass -gt 0 ]"
	rmmod pp_selftest
fi
check "modprobe -r ppsim pp_backport" modprobe -r ppsim pp_backport
check "install.sh --uninstall" "$top/install.sh" --uninstall
check "nothing of ppkit left in /usr/local" sh -c '! ls /usr/local/sbin/ppctl /usr/local/share/man/man8/ppctl.8 2>/dev/null'
check "modprobe fails once uninstalled" sh -c '! modprobe pp_backport 2>/dev/null'
echo "1..$((pass + failn + skipn))"
echo "board: $pass passed, $failn failed, $skipn skipped"
[ $failn -eq 0 ]
