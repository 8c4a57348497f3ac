#!/bin/bash
# The lab's debug kernel: Debian's 6.1 source and config (the lab kernel's),
# cut down to the modules the lab loads (localmodconfig), with the kernel's
# memory and locking checkers on: KASAN (generic, inline, vmalloc), KFENCE,
# kmemleak, lockdep (PROVE_LOCKING, PROVE_RCU), DEBUG_VM, DEBUG_NET,
# DEBUG_OBJECTS, netdev refcount trackers, and fault injection (failslab,
# fail_page_alloc).  Built once, cached; `make test-debug` boots it.
#
#   scripts/lab/debug-kernel.sh            build unless cached; prints the cache dir
#   scripts/lab/debug-kernel.sh --print    print KREL DIR if the cached kernel is
#                                          complete (exit 0), else exit 1 silently
#
# Cache: $PPKIT_CACHE/debug-kernel/<key>/ (default /var/cache/ppkit), where key
# hashes the source version, Debian's config, the options below, the module
# list and the compiler.  Inside:
#   build/          the O= tree (KDIR for out-of-tree modules; objects kept, so
#                   a changed option recompiles only what it touches)
#   root/lib/modules/KREL/   modules_install + depmod, `build` -> build/
#   vmlinuz         the kernel image
#   stamp           key, build seconds, size
# Only the current key is kept.  Compiles go through ccache when present.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
# shellcheck source=scripts/drivers/lib.sh
. "$ROOT/scripts/drivers/lib.sh"

RECIPE=1			# bump when the way the tree is made changes
JOBS=${JOBS:-2}
CC_NAME=gcc-12			# Debian's kernel compiler
LOCALVERSION=-ppkit-debug

# The modules the lab loads (lsmod in a lab guest of Debian's kernel after the
# scenarios' set-up, plus the --disk ones and the net helpers the tests may
# modprobe).  Everything else Debian builds as a module is left out.
LAB_MODULES=(virtio virtio_ring virtio_pci virtio_pci_legacy_dev virtio_pci_modern_dev
	9pnet 9pnet_virtio 9p netfs fscache overlay
	virtio_blk ext4 jbd2 mbcache crc16 crc32c_generic
	veth dummy pktgen inet_diag tcp_diag udp_diag)

# On top of Debian's config: the checkers, and what a test kernel built here
# cannot have (Debian's signing keys, its BTF/DWARF, which only slow the build).
OPTS=(
	--set-str LOCALVERSION "$LOCALVERSION" -d LOCALVERSION_AUTO
	-d MODULE_SIG -d MODULE_SIG_ALL --set-str SYSTEM_TRUSTED_KEYS ""
	--set-str SYSTEM_REVOCATION_KEYS "" -d SECURITY_LOCKDOWN_LSM
	-d DEBUG_INFO_BTF -d DEBUG_INFO_DWARF_TOOLCHAIN_DEFAULT -e DEBUG_INFO_NONE
	-e KASAN -e KASAN_GENERIC -e KASAN_INLINE -e KASAN_VMALLOC
	-e KFENCE --set-val KFENCE_SAMPLE_INTERVAL 100
	-e DEBUG_KMEMLEAK --set-val DEBUG_KMEMLEAK_MEM_POOL_SIZE 16000
	-d DEBUG_KMEMLEAK_DEFAULT_OFF -d DEBUG_KMEMLEAK_AUTO_SCAN
	-e PROVE_LOCKING -e PROVE_RCU -e DEBUG_ATOMIC_SLEEP -e DEBUG_LOCKDEP
	-e DEBUG_VM -e DEBUG_NET -e DEBUG_LIST
	-e DEBUG_OBJECTS -e DEBUG_OBJECTS_FREE -e DEBUG_OBJECTS_TIMERS
	-e DEBUG_OBJECTS_WORK -e DEBUG_OBJECTS_RCU_HEAD
	-e NET_DEV_REFCNT_TRACKER -e NET_NS_REFCNT_TRACKER
	-e FAULT_INJECTION -e FAILSLAB -e FAIL_PAGE_ALLOC -e FAULT_INJECTION_DEBUG_FS
)
# What .config must say after olddefconfig, or the kernel is not what it claims.
WANT=(CONFIG_KASAN=y CONFIG_KASAN_GENERIC=y CONFIG_KASAN_INLINE=y CONFIG_KASAN_VMALLOC=y
	CONFIG_KFENCE=y CONFIG_DEBUG_KMEMLEAK=y CONFIG_PROVE_LOCKING=y CONFIG_PROVE_RCU=y
	CONFIG_LOCKDEP=y CONFIG_DEBUG_VM=y CONFIG_DEBUG_NET=y CONFIG_DEBUG_OBJECTS=y
	CONFIG_NET_DEV_REFCNT_TRACKER=y CONFIG_FAILSLAB=y CONFIG_FAIL_PAGE_ALLOC=y
	CONFIG_FAULT_INJECTION_DEBUG_FS=y CONFIG_DEBUG_FS=y CONFIG_PAGE_POOL=y
	CONFIG_NET_NS=y CONFIG_BPF_SYSCALL=y CONFIG_XDP_SOCKETS=y CONFIG_9P_FS=m
	CONFIG_OVERLAY_FS=m CONFIG_VETH=m CONFIG_NET_PKTGEN=m CONFIG_NUMA=y)

PRINT=0
case "${1:-}" in
--print) PRINT=1 ;;
"") ;;
-h | --help) sed -n '2,/^set -euo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'; exit 0 ;;
*) echo "debug-kernel: unknown argument '$1' (see --help)" >&2; exit 1 ;;
esac

say() { echo "debug-kernel: $*" >&2; }
fail() { echo "debug-kernel: FAIL $*" >&2; exit 1; }

cache=$PPKIT_CACHE/debug-kernel
config_src=/boot/config-$("$ROOT/scripts/lab/kver" 2>/dev/null || echo none)

key_of() { # pkgver
	{
		echo "recipe $RECIPE $1 $LOCALVERSION"
		sha256sum <"$config_src"
		echo "${OPTS[*]}"
		echo "${LAB_MODULES[*]}"
		"$CC_NAME" --version | head -1
	} | sha256sum | cut -c1-16
}

if [ "$PRINT" = 1 ]; then
	[ -f "$config_src" ] || exit 1
	read -r _ pkgver _ < <("$ROOT/scripts/drivers/prepare.sh" --print x86_64 2>/dev/null) || exit 1
	dir=$cache/$(key_of "$pkgver")
	[ -f "$dir/stamp" ] || exit 1
	read -r _ krel _ <"$dir/stamp" || exit 1
	[ -f "$dir/vmlinuz" ] && [ -f "$dir/root/lib/modules/$krel/modules.dep" ] || exit 1
	echo "$krel $dir"
	exit 0
fi

command -v "$CC_NAME" >/dev/null || fail "$CC_NAME missing: run scripts/deps.sh"
[ -f "$config_src" ] || fail "no Debian config $config_src: run scripts/deps.sh"
"$ROOT/scripts/drivers/prepare.sh" x86_64 2>&1 | sed 's/^/  /' >&2
read -r _ pkgver srcdir _ < <("$ROOT/scripts/drivers/prepare.sh" --print x86_64)
[ -f "$srcdir/.ppkit-extracted" ] || fail "no kernel source at $srcdir"
key=$(key_of "$pkgver")
dir=$cache/$key
out=$dir/build
mkdir -p "$cache"
exec 8>"$cache/.lock"
flock 8
if [ -f "$dir/stamp" ]; then
	echo "$dir"
	exit 0
fi
for d in "$cache"/*/; do
	[ -d "$d" ] && [ "${d%/}" != "$dir" ] && { say "removing stale ${d%/}"; rm -rf "${d%/}"; }
done

CC_CMD=$CC_NAME
command -v ccache >/dev/null && CC_CMD="ccache $CC_NAME"
KMAKE=(make -C "$srcdir" O="$out" CC="$CC_CMD" HOSTCC="$CC_NAME" -j"$JOBS"
	KBUILD_BUILD_TIMESTAMP="ppkit debug kernel" KBUILD_BUILD_USER=ppkit KBUILD_BUILD_HOST=lab)
mkdir -p "$out"
log=$dir/build.log
: >"$log"
T0=$SECONDS
say "configuring $out (key $key): Debian's config, lab modules only, checkers on"
cp "$config_src" "$out/.config"
printf '%s\n' "${LAB_MODULES[@]}" >"$dir/lab-modules"
"${KMAKE[@]}" olddefconfig >>"$log" 2>&1 || fail "olddefconfig failed: see $log"
(yes '' || :) | "${KMAKE[@]}" LSMOD="$dir/lab-modules" localmodconfig >>"$log" 2>&1 ||
	fail "localmodconfig failed: see $log"
"$srcdir/scripts/config" --file "$out/.config" "${OPTS[@]}"
"${KMAKE[@]}" olddefconfig >>"$log" 2>&1 || fail "olddefconfig failed: see $log"
for w in "${WANT[@]}"; do
	grep -qx "$w" "$out/.config" || fail ".config lacks $w after olddefconfig (see $out/.config)"
done
nmod=$(grep -c '=m$' "$out/.config")
say "$nmod options as modules; building with $JOBS jobs (about half an hour the first time; log $log)"
"${KMAKE[@]}" bzImage modules >>"$log" 2>&1 || { tail -30 "$log" >&2; fail "build failed: see $log"; }
rm -rf "$dir/root"
"${KMAKE[@]}" INSTALL_MOD_PATH="$dir/root" INSTALL_MOD_STRIP=1 modules_install >>"$log" 2>&1 ||
	fail "modules_install failed: see $log"
krel=$(cat "$out/include/config/kernel.release")
ln -sfn "$out" "$dir/root/lib/modules/$krel/build"
depmod -b "$dir/root" "$krel"
cp "$out/arch/x86/boot/bzImage" "$dir/vmlinuz"
secs=$((SECONDS - T0))
size=$(du -sh "$dir" | cut -f1)
echo "$key $krel ${secs}s $size" >"$dir/stamp"
say "built $krel in ${secs} s; cache $dir: $size"
echo "$dir"
