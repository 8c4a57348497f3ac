#!/bin/bash
# DKMS in the lab: install in one guest boot, "reboot", the modules load by
# modprobe, uninstall.  Run from the host (it starts the guests itself):
#
#   tests/lab/dkms.sh [--build-in-guest] [--kernels LINE,LINE...] [--keep]
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
# --kernels 6.1,5.10 (lines of the kernel matrix, the first one's kernel
# booted first; make test-dkms-kernels): several kernels installed on one
# disk.  The lines other than the host's 6.1 are copied onto the image
# before boot 1 (their /lib/modules/KREL, whose build link leads to their
# unpacked headers in the cache: as after apt-get install linux-image-KREL
# linux-headers-KREL).  On the host, scripts/dkms.sh tarball builds for every
# kernel (--kernel KREL=HEADERS for those not installed here); boot 1
# installs the tarball with no --kernel, so for each kernel in it, and checks
# each kernel's modules (updates/dkms, vermagic, signature); then one boot on
# each other kernel (modprobe ppsim pulls pp_backport from that kernel's
# updates/dkms, ppsim's pool in ppctl, the selftests through modprobe
# pp_selftest), and a last boot on the first kernel: modprobe, then
# uninstall removes every kernel's modules.  With --build-in-guest, boot 1
# instead runs scripts/dkms.sh install for the running kernel and then the
# kernel hook apt runs for each other kernel (/etc/kernel/postinst.d/dkms
# KREL: dkms autoinstall), building every kernel's modules in the guest
# (make test-dkms-kernels-full; 20 to 40 minutes).
# --keep keeps the disk image (build/lab/dkms-*.img) for a look afterwards.
# DKMS_LAB_TIMEOUT (seconds) bounds each boot: default 600, with --kernels
# 900, with --build-in-guest 1500 (times the number of kernels with
# --kernels).
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
		# (-n prints the path depmod's index has, file or no file)
		if [ "${p%.ko*}" != "/lib/modules/$1/updates/dkms/$m" ] || [ ! -f "$p" ]; then
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
		sh -c '[ -d /sys/module/ppsim ] && modprobe -r ppsim pp_backport &&
			[ ! -d /sys/module/ppsim ] && [ ! -d /sys/module/pp_backport ]'
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

# ------------------------------------------- guest side, several kernels
# kernel_checks KREL: what DKMS installed for KREL (whichever kernel runs).
kernel_checks() {
	local k=$1
	check "dkms status: ppkit/$VER installed for $k" [ "$(dkms_state "$k")" = installed ]
	check "modinfo -k $k -n finds pp_backport, ppsim, pp_selftest, pp_bench in /lib/modules/$k/updates/dkms" \
		modules_from_dkms "$k"
	check "vermagic of $k's pp_backport and ppsim is $k's" sh -c "
		modinfo -k $k -F vermagic pp_backport | grep -q '^$k ' &&
		modinfo -k $k -F vermagic ppsim | grep -q '^$k '"
	check "$k's pp_backport is signed with DKMS's key" \
		sh -c "modinfo -k $k -F signer pp_backport | grep -qx 'DKMS module signing key'"
	check "the lab fixtures pp_sockhold and pp_poolgen are not installed for $k" \
		sh -c "! modinfo -k $k pp_sockhold >/dev/null 2>&1 && ! modinfo -k $k pp_poolgen >/dev/null 2>&1"
}
# not_built KREL: DKMS has not built ppkit for KREL, nor is one installed.
not_built() {
	[ -z "$(dkms_state "$1")" ] && ! modinfo -k "$1" pp_backport > /dev/null 2>&1
}
# kguest N ROLE KRELS [TARBALL]: boot N of the several-kernels test; KRELS is
# comma-separated, the first is the kernel of the first and last boots.
kguest() {
	local n=$1 role=$2 K VER t0 rc k what first out
	local -a ks
	IFS=, read -r -a ks <<<"$3"
	first=${ks[0]}
	K=$(uname -r)
	VER=$(scripts/dkms.sh version)
	[ -e /dev/fd ] || ln -s /proc/self/fd /dev/fd
	case "$role" in
	install)
		check "boot $n runs $first" [ "$K" = "$first" ]
		check "boot $n starts with no ppkit in DKMS" [ -z "$(dkms status -m ppkit)" ]
		for k in "${ks[@]}"; do
			check "kernel $k is installed on this disk with its headers (/lib/modules/$k/kernel, build/Makefile)" \
				sh -c "[ -d /lib/modules/$k/kernel ] && [ -f /lib/modules/$k/build/Makefile ]"
		done
		scripts/dkms.sh install --dry-run > /tmp/dry.out 2>&1
		rc=$?
		sed 's/^/    /' /tmp/dry.out
		for k in "${ks[@]}"; do
			check "scripts/dkms.sh install with no --kernel would build for $k" \
				sh -c "[ $rc -eq 0 ] && grep -q 'for kernel(s):.* $k\( \|\$\)' /tmp/dry.out"
		done
		if [ -n "${4:-}" ]; then
			t0=$SECONDS
			scripts/dkms.sh install --tarball "$4" > /tmp/install.log 2>&1
			rc=$?
			echo "time: scripts/dkms.sh install --tarball, every kernel (dkms ldtarball, install) $((SECONDS - t0)) s"
			sed 's/^/    /' /tmp/install.log
			check "scripts/dkms.sh install --tarball $4 (no --kernel: every kernel in it)" [ $rc -eq 0 ]
			check "no sources in /usr/src: the tarball holds the built modules and dkms.conf only" \
				sh -c "[ ! -e /usr/src/ppkit-$VER ] && [ -f /var/lib/dkms/ppkit/$VER/source/dkms.conf ]"
		else
			t0=$SECONDS
			scripts/dkms.sh install --kernel "$K" > /tmp/install.log 2>&1
			rc=$?
			echo "time: scripts/dkms.sh install --kernel $K (dkms add, build, install) $((SECONDS - t0)) s"
			sed 's/^/    /' /tmp/install.log
			what="scripts/dkms.sh install --kernel $K"
			if [ $rc -eq 0 ]; then ok "$what"; else
				bad "$what (exit $rc)"
				tail -n 40 "/var/lib/dkms/ppkit/$VER/build/make.log" 2>/dev/null | sed 's/^/    make.log: /'
			fi
			for k in "${ks[@]}"; do
				[ "$k" = "$K" ] && continue
				check "before the hook: ppkit/$VER is neither built nor installed for $k" not_built "$k"
				# What apt runs after unpacking linux-image-KREL (and
				# linux-headers-KREL's postinst): dkms autoinstall for it.
				t0=$SECONDS
				/etc/kernel/postinst.d/dkms "$k" > /tmp/hook.log 2>&1
				rc=$?
				echo "time: /etc/kernel/postinst.d/dkms $k (dkms autoinstall: build, install) $((SECONDS - t0)) s"
				sed 's/^/    /' /tmp/hook.log
				check "the kernel hook /etc/kernel/postinst.d/dkms $k ran dkms autoinstall" \
					sh -c "[ $rc -eq 0 ] && grep -q 'running auto installation service for kernel $k' /tmp/hook.log"
				[ "$(dkms_state "$k")" = installed ] ||
					tail -n 40 "/var/lib/dkms/ppkit/$VER/build/make.log" 2>/dev/null | sed 's/^/    make.log: /'
			done
			check "/usr/src/ppkit-$VER holds dkms.conf and kmod/'s sources" \
				sh -c "[ -f /usr/src/ppkit-$VER/dkms.conf ] && [ -f /usr/src/ppkit-$VER/kmod/pool/main.c ]"
		fi
		for k in "${ks[@]}"; do
			kernel_checks "$k"
		done
		check "nothing of ppkit is loaded before modprobe" sh -c '! [ -d /sys/module/pp_backport ]'
		load_and_check
		;;
	other)
		check "boot $n runs one of the installed kernels, not $first" \
			sh -c "[ '$K' != '$first' ] && echo ',$3,' | grep -qF ',$K,'"
		check "after the reboot nothing of ppkit is loaded" sh -c '! [ -d /sys/module/pp_backport ] && ! [ -d /sys/module/ppsim ]'
		kernel_checks "$K"
		check "modprobe finds the modules of the running kernel ($K) in its updates/dkms" sh -c "
			[ \"\$(modinfo -n pp_backport)\" = \"\$(modinfo -k $K -n pp_backport)\" ] &&
			modinfo -F vermagic pp_backport | grep -q '^$K '"
		load_and_check
		out=$(modprobe pp_selftest 2>&1)
		rc=$?
		[ -z "$out" ] || echo "    $out"
		check "modprobe pp_selftest: the pool's KTAP selftests pass on $K (the module refuses to load otherwise)" \
			sh -c "[ $rc -eq 0 ] && [ -d /sys/module/pp_selftest ]"
		dmesg | grep -E '# [a-z_]+: [0-9]+ cases, [0-9]+ failed' | tail -n 1 | sed 's/^/    /'
		modprobe -r pp_selftest pp_backport 2>/dev/null
		;;
	last)
		check "boot $n runs $first again" [ "$K" = "$first" ]
		check "after the reboots nothing of ppkit is loaded" sh -c '! [ -d /sys/module/pp_backport ] && ! [ -d /sys/module/ppsim ]'
		for k in "${ks[@]}"; do
			check "dkms status: ppkit/$VER still installed for $k" [ "$(dkms_state "$k")" = installed ]
		done
		check "modinfo -n still finds $K's modules in updates/dkms" modules_from_dkms "$K"
		load_and_check
		scripts/dkms.sh uninstall > /tmp/uninstall.log 2>&1
		rc=$?
		sed 's/^/    /' /tmp/uninstall.log
		check "scripts/dkms.sh uninstall" [ $rc -eq 0 ]
		check "dkms status: no ppkit" [ -z "$(dkms status -m ppkit)" ]
		for k in "${ks[@]}"; do
			check "uninstall removed $k's modules (updates/dkms, modinfo -k $k)" sh -c "
				[ -z \"\$(find /lib/modules/$k/updates/dkms -name 'pp*.ko*' 2>/dev/null)\" ] &&
				! modinfo -k $k pp_backport >/dev/null 2>&1 && ! modinfo -k $k ppsim >/dev/null 2>&1"
		done
		check "modprobe pp_backport fails after uninstall" sh -c '! modprobe pp_backport 2>/dev/null'
		;;
	esac
	echo "dkms boot $n: $pass passed, $failn failed"
	[ "$failn" -eq 0 ]
}

if [ "${1:-}" = --guest ]; then
	[ -n "${LAB_GUEST:-}" ] || { echo "dkms: --guest runs inside the lab only" >&2; exit 2; }
	guest "$2" "${3:-}"
	exit $?
fi
if [ "${1:-}" = --kguest ]; then
	[ -n "${LAB_GUEST:-}" ] || { echo "dkms: --kguest runs inside the lab only" >&2; exit 2; }
	shift
	kguest "$@"
	exit $?
fi

# ----------------------------------------------------------------- host side
KEEP=0 IN_GUEST=0 LINES=
while [ $# -gt 0 ]; do
	case "$1" in
	--keep) KEEP=1 ;;
	--build-in-guest) IN_GUEST=1 ;;
	--kernels)
		[ $# -ge 2 ] || { echo "dkms: --kernels needs lines, e.g. 6.1,5.10" >&2; exit 2; }
		LINES=$2; shift ;;
	*) echo "dkms: unknown option '$1' (--build-in-guest, --kernels LINE,LINE..., --keep)" >&2; exit 2 ;;
	esac
	shift
done
MKFS=$(command -v mkfs.ext4 || echo /sbin/mkfs.ext4)
[ -x "$MKFS" ] || { echo "dkms: mkfs.ext4 missing: apt-get install e2fsprogs"; exit 1; }
[ -x /usr/sbin/dkms ] || command -v dkms >/dev/null ||
	{ echo "dkms: dkms missing (the guest uses the host's): run scripts/deps.sh"; exit 1; }
. scripts/lab/lib.sh
R=${LAB_OUT:-build/lab/results}
mkdir -p "$R"

# --kernels: each line's kernel release (KRELS), headers (KDIRS), the root
# it is unpacked in (KROOTS: / for the host's 6.1) and the libraries its
# kbuild tools need (LIBS: 5.10's sign-file wants libssl1.1's libcrypto).
KLINES=() KRELS=() KDIRS=() KROOTS=() LIBS=
if [ -n "$LINES" ]; then
	IFS=, read -r -a KLINES <<<"$LINES"
	[ ${#KLINES[@]} -ge 2 ] || { echo "dkms: --kernels wants two lines or more (e.g. 6.1,5.10)" >&2; exit 2; }
	for line in "${KLINES[@]}"; do
		case "$line" in
		6.1 | debian)
			k=$(lab_kver) || { echo "dkms: no Debian 6.1 kernel with headers on the host: run scripts/deps.sh"; exit 1; }
			KRELS+=("$k") KDIRS+=("/lib/modules/$k/build") KROOTS+=(/)
			;;
		*)
			if ! p=$(scripts/lab/kernels.sh --print "$line"); then
				echo "dkms: kernel line '$line' is not unpacked (lines: 6.1 $(scripts/lab/kernels.sh --lines | tr '\n' ' ')): run scripts/deps.sh"
				exit 1
			fi
			read -r k root kdir _ lib <<<"$p"
			KRELS+=("$k") KDIRS+=("$kdir") KROOTS+=("$root")
			LIBS=${LIBS:+$LIBS:}$lib
			;;
		esac
	done
	KLIST=$(IFS=,; echo "${KRELS[*]}")
fi

if [ $IN_GUEST = 1 ]; then
	TIMEOUT=${DKMS_LAB_TIMEOUT:-$((1500 * (${#KLINES[@]} > 0 ? ${#KLINES[@]} : 1)))}
elif [ ${#KLINES[@]} -gt 0 ]; then
	TIMEOUT=${DKMS_LAB_TIMEOUT:-900}
else
	TIMEOUT=${DKMS_LAB_TIMEOUT:-600}
fi

IMG=$(mktemp build/lab/dkms-XXXXXX.img)
STAGE=
cleanup() {
	[ -z "$STAGE" ] || rm -rf "$STAGE"
	[ $KEEP = 1 ] || rm -f "$IMG"
}
trap cleanup EXIT
T_ALL=$SECONDS
if [ ${#KLINES[@]} -eq 0 ]; then
	# A sparse 1 GiB file; the guest's writes make it grow (about 100 MB here).
	truncate -s 1G "$IMG" && "$MKFS" -q -F -L ppkit-dkms "$IMG" ||
		{ echo "dkms: cannot make the disk image $IMG"; exit 1; }
else
	# The other kernels installed on the disk: their /lib/modules/KREL in the
	# writable layer of the guest's root (scripts/lab/init: the image's
	# up/), where the guest's /lib/modules resolves (/usr/lib/modules on
	# Debian 12).  Hard links into the cache where they can be (the image
	# gets copies: mkfs.ext4 -d).
	t0=$SECONDS
	STAGE=$(mktemp -d build/lab/dkms-stage-XXXXXX)
	mods=$(readlink -f /lib/modules)
	mkdir -p "$STAGE/up$mods"
	for i in "${!KRELS[@]}"; do
		[ "${KROOTS[$i]}" = / ] && continue
		cp -al "${KROOTS[$i]}/lib/modules/${KRELS[$i]}" "$STAGE/up$mods/" 2>/dev/null ||
			cp -a "${KROOTS[$i]}/lib/modules/${KRELS[$i]}" "$STAGE/up$mods/" ||
			{ echo "dkms: cannot stage ${KRELS[$i]}'s modules"; exit 1; }
	done
	truncate -s 2G "$IMG" && "$MKFS" -q -F -L ppkit-dkms -d "$STAGE" "$IMG" ||
		{ echo "dkms: cannot make the disk image $IMG from $STAGE"; exit 1; }
	rm -rf "$STAGE"
	STAGE=
	echo "time: disk image with ${KRELS[*]:1} installed $((SECONDS - t0)) s ($(du -m "$IMG" | cut -f1) MB)"
fi

# boot N [LINE] -- ARGS...: a guest on the image (booting LINE's kernel)
# running this script with ARGS, its checks counted here.
boot() {
	local n=$1 t0=$SECONDS rc out=$R/dkms-boot$1.out kern=()
	shift
	[ "$1" = -- ] || { kern=(--kernel "$1"); shift; }
	shift
	echo "== boot $n${kern[1]:+ (kernel line ${kern[1]})}"
	scripts/lab/run "${kern[@]}" --disk "$IMG" --smp 2 --mem 1024 --timeout "$TIMEOUT" \
		--log "$R/dkms-boot$n.dmesg" -- "$@" > "$out" 2>&1
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
# tarball KREL[=KDIR]...: scripts/dkms.sh tarball on the host into $TARBALL,
# and what it must hold.
tarball() {
	local t0=$SECONDS k tmp ka=()
	for k in "$@"; do ka+=(--kernel "$k"); done
	if env ${LIBS:+LD_LIBRARY_PATH="$LIBS"} scripts/dkms.sh tarball "${ka[@]}" --output "$TARBALL" \
		> "$R/dkms-tarball.out" 2>&1; then
		ok "on the host: scripts/dkms.sh tarball ${ka[*]} (dkms add, build, mktarball --binaries-only in a private tree)"
	else
		sed 's/^/    /' "$R/dkms-tarball.out"
		bad "on the host: scripts/dkms.sh tarball ${ka[*]}"
		finish dkms
		exit
	fi
	grep '^dkms.sh: note' "$R/dkms-tarball.out" | sed 's/^/    /'
	echo "time: dkms build and mktarball on the host $((SECONDS - t0)) s"
	for k in "${@%%=*}"; do
		check "the tarball holds the four modules for $k" sh -c "
			tar -tzf $TARBALL | grep -c '^\./dkms_main_tree/$k/x86_64/module/\(pp_backport\|ppsim\|pp_selftest\|pp_bench\)\.ko\$' | grep -qx 4"
	done
	[ $# -gt 1 ] || return 0
	tmp=$(mktemp -d)
	tar -C "$tmp" -xzf "$TARBALL"
	for k in "${@%%=*}"; do
		check "the tarball's pp_backport for $k has $k's vermagic" \
			sh -c "modinfo -F vermagic $tmp/dkms_main_tree/$k/x86_64/module/pp_backport.ko | grep -q '^$k '"
	done
	rm -rf "$tmp"
}

TARBALL=
if [ ${#KLINES[@]} -eq 0 ]; then
	if [ $IN_GUEST = 0 ]; then
		KVER=$(lab_kver) || { echo "dkms: no lab kernel"; exit 1; }
		TARBALL=build/lab/dkms-bin-$KVER.tar.gz
		tarball "$KVER"
	fi
	boot 1 -- tests/lab/dkms.sh --guest boot1 "$TARBALL"
	boot 2 -- tests/lab/dkms.sh --guest boot2
else
	if [ $IN_GUEST = 0 ]; then
		TARBALL=build/lab/dkms-bin-kernels.tar.gz
		args=()
		for i in "${!KRELS[@]}"; do
			if [ "${KROOTS[$i]}" = / ]; then args+=("${KRELS[$i]}"); else args+=("${KRELS[$i]}=${KDIRS[$i]}"); fi
		done
		tarball "${args[@]}"
	fi
	# boot 1 also has the other kernels' kbuild libraries, for DKMS's
	# sign-file when it builds in the guest (libssl1.1 for 5.10: the
	# stand-in for having it installed).
	boot 1 "${KLINES[0]}" -- env ${LIBS:+LD_LIBRARY_PATH="$LIBS"} tests/lab/dkms.sh --kguest 1 install "$KLIST" "$TARBALL"
	n=1
	for line in "${KLINES[@]:1}"; do
		n=$((n + 1))
		boot $n "$line" -- tests/lab/dkms.sh --kguest $n other "$KLIST"
	done
	boot $((n + 1)) "${KLINES[0]}" -- tests/lab/dkms.sh --kguest $((n + 1)) last "$KLIST"
fi
echo "time: total $((SECONDS - T_ALL)) s; disk image used $(du -m "$IMG" | cut -f1) MB"
[ $KEEP = 0 ] || echo "dkms: kept $IMG"
finish dkms
exit
