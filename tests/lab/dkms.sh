#!/bin/bash
# DKMS in the lab: install in one guest boot, "reboot", the modules load by
# modprobe, uninstall.  Run from the host (it starts the guests itself):
#
#   tests/lab/dkms.sh [--build-in-guest] [--keep]
#
# Both boots share a fresh ext4 image (scripts/lab/run --disk), so what boot 1
# writes to /usr/src, /var/lib/dkms and /lib/modules/KREL is there in boot 2.
# By default DKMS builds the modules on the host, for the guest's kernel from
# its headers, in a private DKMS tree (scripts/dkms.sh tarball: dkms add,
# build, mktarball --binaries-only), and boot 1 installs that tarball
# (scripts/dkms.sh install --tarball: dkms ldtarball, dkms install, depmod).
# --build-in-guest runs the whole of scripts/dkms.sh install in boot 1 instead
# (dkms add, build, install, in the guest: 5 to 15 minutes under TCG, so not
# part of make test; make test-dkms-full).
# Boot 1 then checks dkms status, where modinfo finds the modules
# (updates/dkms), their vermagic, modprobe, ppsim's pool in ppctl, modprobe -r.
# Boot 2: nothing installed in this boot, yet modprobe ppsim loads ppsim and
# pp_backport from updates/dkms; then scripts/dkms.sh uninstall, after which
# modprobe fails; and the errors for a kernel without headers.
# Prints "ok N - ..." / "not ok N - ..." lines, the time of each boot and of the dkms
# steps, and ends with "dkms: N passed, N failed"; exits non-zero on failure.
# --keep keeps the disk image (build/lab/dkms-*.img) for a look afterwards.
# DKMS_LAB_TIMEOUT (seconds, default 600, 1500 with --build-in-guest) bounds
# each boot.
set -u
REPO=$(cd "$(dirname "$0")/../.." && pwd)
cd "$REPO" || exit 1
. tests/lab/checks.sh

# ---------------------------------------------------------------- guest side
# dkms_state KREL: ppkit's line in `dkms status` for KREL ("installed"...).
dkms_state() {
	dkms status -m ppkit -k "$1" 2>/dev/null | sed -n 's/^ppkit\/[^,]*, [^,]*, [^:]*: \([a-z]*\).*/\1/p'
}
# modules_from_dkms KREL: modinfo finds the installed modules in updates/dkms.
modules_from_dkms() {
	local m p rc=0
	for m in pp_backport ppsim pp_selftest pp_bench; do
		p=$(modinfo -k "$1" -n "$m" 2>&1)
		if [ "$p" != "/lib/modules/$1/updates/dkms/$m.ko" ]; then
			echo "    modinfo -n $m: $p"
			rc=1
		fi
	done
	return $rc
}
# pool_live: ppsim's device has a pool in pp_backport, seen through netlink.
pool_live() {
	ip link set sim0 up || return 1
	if [ -x build/bin/ppctl ]; then
		build/bin/ppctl list > /tmp/ppctl.out 2>&1
		sed 's/^/    /' /tmp/ppctl.out
		grep -q 'ppsim  *sim0' /tmp/ppctl.out
	else
		echo "    (no build/bin/ppctl: run 'make tools'; checking sysfs only)"
		[ -d /sys/class/net/sim0 ]
	fi
}
loaded() { [ -d "/sys/module/$1" ]; }
load_and_check() {
	check "modprobe ppsim loads ppsim and pp_backport (modules.dep from dkms's depmod)" \
		sh -c 'modprobe ppsim && [ -d /sys/module/ppsim ] && [ -d /sys/module/pp_backport ]'
	check "ppsim's pool is live in pp_backport" pool_live
	check "modprobe -r ppsim pp_backport unloads both" \
		sh -c 'modprobe -r ppsim pp_backport && [ ! -d /sys/module/ppsim ] && [ ! -d /sys/module/pp_backport ]'
}

guest() {
	local K VER t0 rc
	K=$(uname -r)
	VER=$(scripts/dkms.sh version)
	# What udev makes on a real system; dkms reads its own output through <(...).
	[ -e /dev/fd ] || ln -s /proc/self/fd /dev/fd
	case "$1" in
	boot1)
		check "boot 1 starts with no ppkit in DKMS" [ -z "$(dkms status -m ppkit)" ]
		t0=$SECONDS
		if [ -n "${2:-}" ]; then
			scripts/dkms.sh install --tarball "$2" > /tmp/install.log 2>&1
			rc=$?
			echo "time: scripts/dkms.sh install --tarball (dkms ldtarball, install) $((SECONDS - t0)) s"
			what="scripts/dkms.sh install --tarball $2"
		else
			scripts/dkms.sh install --kernel "$K" > /tmp/install.log 2>&1
			rc=$?
			echo "time: scripts/dkms.sh install (dkms add, build, install) $((SECONDS - t0)) s"
			what="scripts/dkms.sh install --kernel $K"
		fi
		sed 's/^/    /' /tmp/install.log
		if [ $rc -eq 0 ]; then
			ok "$what"
		else
			bad "$what (exit $rc)"
			tail -n 40 "/var/lib/dkms/ppkit/$VER/build/make.log" 2>/dev/null | sed 's/^/    make.log: /'
		fi
		check "dkms status: ppkit/$VER installed for $K" [ "$(dkms_state "$K")" = installed ]
		if [ -n "${2:-}" ]; then
			check "no sources in /usr/src: the tarball holds the built modules and dkms.conf only" \
				sh -c "[ ! -e /usr/src/ppkit-$VER ] && [ -f /var/lib/dkms/ppkit/$VER/source/dkms.conf ]"
		else
			check "/usr/src/ppkit-$VER holds dkms.conf and kmod/'s sources, nothing built" sh -c "
				[ -f /usr/src/ppkit-$VER/dkms.conf ] && [ -f /usr/src/ppkit-$VER/kmod/Kbuild ] &&
				[ -f /usr/src/ppkit-$VER/kmod/pool/main.c ] &&
				[ -z \"\$(find /usr/src/ppkit-$VER \( -name '*.o' -o -name '*.ko' -o -name '*.cmd' -o -name '*.mod*' \) -print -quit)\" ]"
		fi
		check "modinfo -n finds pp_backport, ppsim, pp_selftest, pp_bench in updates/dkms" modules_from_dkms "$K"
		check "the lab fixtures pp_sockhold and pp_poolgen are not installed" \
			sh -c "! modinfo -k $K pp_sockhold >/dev/null 2>&1 && ! modinfo -k $K pp_poolgen >/dev/null 2>&1"
		check "vermagic of the dkms pp_backport is $K's" \
			sh -c "modinfo -k $K -F vermagic pp_backport | grep -q '^$K '"
		check "nothing of ppkit is loaded before modprobe" sh -c '! [ -d /sys/module/pp_backport ]'
		check "modprobe pp_backport" sh -c 'modprobe pp_backport && [ -d /sys/module/pp_backport ]'
		load_and_check
		echo "dkms boot 1: $pass passed, $failn failed"
		;;
	boot2)
		check "after the reboot nothing of ppkit is loaded" sh -c '! [ -d /sys/module/pp_backport ] && ! [ -d /sys/module/ppsim ]'
		check "dkms status: ppkit/$VER still installed for $K" [ "$(dkms_state "$K")" = installed ]
		check "modinfo -n still finds the modules in updates/dkms" modules_from_dkms "$K"
		load_and_check
		scripts/dkms.sh uninstall > /tmp/uninstall.log 2>&1
		rc=$?
		sed 's/^/    /' /tmp/uninstall.log
		check "scripts/dkms.sh uninstall" [ $rc -eq 0 ]
		check "dkms status: no ppkit" [ -z "$(dkms status -m ppkit)" ]
		check "/usr/src/ppkit-$VER and updates/dkms/pp_backport.ko are gone" sh -c "
			[ ! -e /usr/src/ppkit-$VER ] && [ ! -e /lib/modules/$K/updates/dkms/pp_backport.ko ]"
		modprobe pp_backport > /tmp/modprobe.out 2>&1
		rc=$?
		sed 's/^/    /' /tmp/modprobe.out
		check "modprobe pp_backport fails after uninstall" [ $rc -ne 0 ]
		check "modinfo finds no pp_backport after uninstall" sh -c '! modinfo pp_backport >/dev/null 2>&1'
		# The errors: a kernel whose headers are missing (made up in this guest).
		mkdir -p /lib/modules/0.0.0-nohdr/kernel
		scripts/dkms.sh install --dry-run > /tmp/dry.out 2>&1
		rc=$?
		sed 's/^/    /' /tmp/dry.out
		check "install by default picks $K and skips a kernel without headers, saying what to install" \
			sh -c "[ $rc -eq 0 ] && grep -q 'for kernel(s):.* $K\( \|\$\)' /tmp/dry.out &&
				grep -q 'skipping kernel 0.0.0-nohdr: .*linux-headers-0.0.0-nohdr' /tmp/dry.out"
		scripts/dkms.sh install --kernel 0.0.0-nohdr > /tmp/nohdr.out 2>&1
		rc=$?
		sed 's/^/    /' /tmp/nohdr.out
		check "install --kernel without headers fails and says: install linux-headers-KREL" \
			sh -c "[ $rc -ne 0 ] && grep -q 'install linux-headers-0.0.0-nohdr' /tmp/nohdr.out"
		rm -rf /lib/modules/0.0.0-nohdr
		echo "dkms boot 2: $pass passed, $failn failed"
		;;
	esac
	[ "$failn" -eq 0 ]
}

if [ "${1:-}" = --guest ]; then
	[ -n "${LAB_GUEST:-}" ] || { echo "dkms: --guest runs inside the lab only" >&2; exit 2; }
	guest "$2" "${3:-}"
	exit $?
fi

# ----------------------------------------------------------------- host side
KEEP=0 IN_GUEST=0
while [ $# -gt 0 ]; do
	case "$1" in
	--keep) KEEP=1 ;;
	--build-in-guest) IN_GUEST=1 ;;
	*) echo "dkms: unknown option '$1' (--build-in-guest, --keep)" >&2; exit 2 ;;
	esac
	shift
done
if [ $IN_GUEST = 1 ]; then
	TIMEOUT=${DKMS_LAB_TIMEOUT:-1500}
else
	TIMEOUT=${DKMS_LAB_TIMEOUT:-600}
fi
MKFS=$(command -v mkfs.ext4 || echo /sbin/mkfs.ext4)
[ -x "$MKFS" ] || { echo "dkms: mkfs.ext4 missing: apt-get install e2fsprogs"; exit 1; }
[ -x /usr/sbin/dkms ] || command -v dkms >/dev/null ||
	{ echo "dkms: dkms missing (the guest uses the host's): run scripts/deps.sh"; exit 1; }
R=${LAB_OUT:-build/lab/results}
mkdir -p "$R"
IMG=$(mktemp build/lab/dkms-XXXXXX.img)
[ $KEEP = 1 ] || trap 'rm -f "$IMG"' EXIT
# A sparse 1 GiB file; the guest's writes make it grow (about 100 MB here).
truncate -s 1G "$IMG" && "$MKFS" -q -F -L ppkit-dkms "$IMG" ||
	{ echo "dkms: cannot make the disk image $IMG"; exit 1; }

# boot N: a guest on the image running this script's boot N, its checks counted here.
T_ALL=$SECONDS
boot() {
	local n=$1 t0=$SECONDS rc out=$R/dkms-boot$1.out arg=${2:-}
	echo "== boot $n"
	scripts/lab/run --disk "$IMG" --smp 2 --mem 1024 --timeout "$TIMEOUT" \
		--log "$R/dkms-boot$n.dmesg" -- tests/lab/dkms.sh --guest "boot$n" $arg > "$out" 2>&1
	rc=$?
	cat "$out"
	pass=$((pass + $(grep -c '^ok [0-9]* - ' "$out")))
	failn=$((failn + $(grep -c '^not ok [0-9]* - ' "$out")))
	echo "time: boot $n $((SECONDS - t0)) s"
	case $rc in
	0) ;;
	99) bad "boot $n: kernel splat in the guest (log $R/dkms-boot$n.dmesg)" ;;
	124) bad "boot $n: timed out after $TIMEOUT s" ;;
	*) grep -q "^dkms boot $n: " "$out" || bad "boot $n: the lab failed (exit $rc)" ;;
	esac
}
TARBALL=
if [ $IN_GUEST = 0 ]; then
	. scripts/lab/lib.sh
	KVER=$(lab_kver) || { echo "dkms: no lab kernel"; exit 1; }
	TARBALL=build/lab/dkms-bin-$KVER.tar.gz
	t0=$SECONDS
	if scripts/dkms.sh tarball --kernel "$KVER" --output "$TARBALL" > "$R/dkms-tarball.out" 2>&1; then
		ok "on the host: scripts/dkms.sh tarball --kernel $KVER (dkms add, build, mktarball --binaries-only in a private tree)"
	else
		sed 's/^/    /' "$R/dkms-tarball.out"
		bad "on the host: scripts/dkms.sh tarball --kernel $KVER"
		echo "dkms: $pass passed, $failn failed"
		exit 1
	fi
	echo "time: dkms build and mktarball on the host $((SECONDS - t0)) s"
	check "the tarball holds the four modules for $KVER" sh -c "
		tar -tzf $TARBALL | grep -c '^\./dkms_main_tree/$KVER/x86_64/module/\(pp_backport\|ppsim\|pp_selftest\|pp_bench\)\.ko\$' | grep -qx 4"
fi
boot 1 "$TARBALL"
boot 2
echo "time: total $((SECONDS - T_ALL)) s; disk image used $(du -m "$IMG" | cut -f1) MB"
[ $KEEP = 0 ] || echo "dkms: kept $IMG"
echo "dkms: $pass passed, $failn failed"
[ "$failn" -eq 0 ]
