#!/bin/bash
# Build pp_backport and the patched drivers for one target, out of tree, from
# the target kernel's own source (scripts/drivers/prepare.sh fetches it).
#
#   scripts/drivers/build.sh [options] ARCH [DRIVER...]
#     ARCH        x86_64 | arm64 | arm | arm64-16k (DRV_LINE=6.12: arm64 with
#                 16 KiB pages; the drivers of arm64)
#     DRIVER      stmmac mvpp2 mlx4 (default: every driver that has config_ARCH)
#     --unpatched build the kernel's driver as it is (baseline for static
#                 analysis), into build/drivers/ARCH/unpatched/
#     --fixes-only  apply only the series' bug fixes (lines marked "fix"):
#                 the driver as it was plus what it needs to survive a test
#                 (baseline for throughput), into build/drivers/ARCH/fixes-only/
#     --sparse    also run sparse (C=2); logs in build/drivers/ARCH/logs/
#                 (an identical run's log is reused: sparse_run below)
#     KSRC=DIR    use this kernel source instead of Debian's linux-source-6.1
#                 (output then in build/drivers/ARCH/ksrc-VERSION/)
#     DRV_LINE=L  build for line L of the kernel matrix (5.10, 6.12: make
#                 drivers KVER=L) from drivers/DRIVER/L/, into build/drivers/ARCH-L/
#
# The unpatched build depends on nothing of ppkit's but these scripts: its
# result (modules, logs, the driver sources) is kept in
# $PPKIT_CACHE/unpatched/KEY, KEY a hash of the kernel and source versions,
# the compilers, sparse, the driver list and this script's files, and taken
# from there the next time (PPKIT_NO_CACHE=1: always build).
#
# Output: build/drivers/ARCH/*.ko (pp_backport.ko and the drivers' modules),
# logs in build/drivers/ARCH/logs/.  Fails on a patch that does not apply
# exactly (no fuzz, no offset is fine), a compiler warning, or a vermagic that
# differs from Debian's kernel.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
# Called from make: keep its command-line ARCH= (arm64-16k is no kernel ARCH)
# and flags out of the kernel builds.
unset MAKEFLAGS MFLAGS MAKELEVEL ARCH

unpatched=0 fixes_only=0 sparse=0
while [ $# -gt 0 ]; do
	case "$1" in
	--unpatched) unpatched=1 ;;
	--fixes-only) fixes_only=1 ;;
	--sparse) sparse=1 ;;
	-h | --help) sed -n '2,18p' "$0"; exit 0 ;;
	-*) die "unknown option $1" ;;
	*) break ;;
	esac
	shift
done
[ $# -ge 1 ] || die "usage: build.sh [--unpatched] [--sparse] ARCH [DRIVER...]"
t=$(drv_target "$1")
shift
drivers=("$@")
if [ ${#drivers[@]} -eq 0 ]; then
	for c in "$PPKIT_ROOT"/drivers/*/driver.conf; do
		grep -q "^config_$(drv_conf "$t")=" "$c" && [ -f "$(dirname "$c")/$(drv_line)/series" ] &&
			drivers+=("$(basename "$(dirname "$c")")")
	done
fi

"$PPKIT_ROOT/scripts/drivers/prepare.sh" "$t"
read -r krel pkgver srcdir kbuild root < <("$PPKIT_ROOT/scripts/drivers/prepare.sh" --print "$t")
[ -n "${KSRC:-}" ] && srcdir=$KSRC
[ -f "$srcdir/Makefile" ] || die "no kernel source at $srcdir"
srcver=$(make -s -C "$srcdir" kernelversion 2>/dev/null) || die "cannot read the version of $srcdir"
margs=$(drv_make_args "$t")
# a line's cross tree was prepared without Rust (prepare.sh): builds say so too
[ "$(drv_line)" != 6.1 ] && [ "$t" != x86_64 ] && margs="$margs RUSTC=ppkit-no-rustc"
if [ "$(drv_line)" != 6.1 ] && [ "$t" = x86_64 ]; then
	# Another Debian release's kernel: its compiler if the host has it (5.10's
	# gcc-10 is not in bookworm: gcc-12, Documentation/kernels.rst), and the
	# libraries its kbuild tools need, unpacked next to them.
	read -r _ _ _ _ libdir < <(drv_line_kernel "$t")
	export LD_LIBRARY_PATH=$libdir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
	cc=$(sed -n 's/^CONFIG_CC_VERSION_TEXT="\([^ ]*\) .*/\1/p' "$kbuild/.config")
	command -v "$cc" >/dev/null || cc=gcc-12
	margs="$margs CC=$cc"
fi
jobs=${JOBS:-$(nproc)}
# Compiles through ccache when it is there (scripts/deps.sh installs it),
# the clone seen at one fixed path (scripts/kbuild-stable, in kmake): a
# clean clone rebuilds the same drivers from the cache.  CCACHE_DISABLE=1
# turns it off.
if command -v ccache >/dev/null; then
	cc=$(echo "$margs" | sed -n 's/.*\bCC=\([^ ]*\).*/\1/p')
	if [ -z "$cc" ]; then
		cc=$(echo "$margs" | sed -n 's/.*CROSS_COMPILE=\([^ ]*\).*/\1/p')gcc
		# Debian's x86 headers name gcc-12 (drv_make_args)
		[ "$t" = x86_64 ] && cc=$(sed -n 's/^CONFIG_CC_VERSION_TEXT="\([^ ]*\) .*/\1/p' "$kbuild/.config")
	fi
	margs=$(echo "$margs" | sed 's/\bCC=[^ ]*//')
	ccache_cc="ccache $cc"
fi

# unpatched_key: what the unpatched build depends on, hashed.
unpatched_key() {
	local cc
	cc=$(echo "$margs" | sed -n 's/.*CROSS_COMPILE=\([^ ]*\).*/\1/p')gcc
	{
		echo "$t $krel $pkgver $srcver sparse=$sparse drivers=${drivers[*]}"
		"$cc" --version | head -1
		sparse --version
		cd "$PPKIT_ROOT" && cat scripts/drivers/build.sh scripts/drivers/lib.sh \
			drivers/Kbuild.glue drivers/*/driver.conf
	} | sha256sum | cut -c1-16
}

out=$PPKIT_ROOT/build/drivers/$t
[ "$(drv_line)" != 6.1 ] && out=$out-$(drv_line)
[ -n "${KSRC:-}" ] && out=$out/ksrc-$srcver
[ $unpatched = 1 ] && out=$out/unpatched
[ $fixes_only = 1 ] && out=$out/fixes-only
logs=$out/logs
work=$out/work
mkdir -p "$out" "$logs"
# One build per output folder at a time: they share work/ and the modules.
exec 8>"$out/.lock"
flock 8

cache=
if [ $unpatched = 1 ] && [ -z "${KSRC:-}" ] && [ "${PPKIT_NO_CACHE:-0}" != 1 ]; then
	cache=$PPKIT_CACHE/unpatched/$(unpatched_key)
	if [ -f "$cache/done" ]; then
		rm -rf "$out/work" "$logs" "$out"/*.ko
		tar -C "$out" -xf "$cache/result.tar"
		say "$t: unpatched ${drivers[*]}: from $cache (built $(cat "$cache/done"); PPKIT_NO_CACHE=1 builds again)"
		exit 0
	fi
fi

# Debian's vermagic for this kernel, from one of its own modules.
debian_vermagic() {
	local ko
	ko=$(find "${root%/}/lib/modules/$krel/kernel/net/core" -name '*.ko' -o -name '*.ko.xz' | head -1)
	[ -n "$ko" ] || die "no Debian module under ${root%/}/lib/modules/$krel to compare vermagic with"
	modinfo -F vermagic "$ko"
}
want_vermagic=$(debian_vermagic)

check_build_log() { # log name
	if grep -qE 'warning:|WARNING:' "$1"; then
		grep -E 'warning:|WARNING:' "$1" >&2
		die "$2 built with warnings (see $1)"
	fi
}

check_vermagic() { # ko
	local v
	v=$(modinfo -F vermagic "$1")
	[ "$v" = "$want_vermagic" ] || die "vermagic of $(basename "$1") is '$v', Debian's $krel has '$want_vermagic'"
}

kmake() { # dir log args...
	local dir=$1 log=$2
	shift 2
	# shellcheck disable=SC2086
	"$PPKIT_ROOT/scripts/kbuild-stable" "$PPKIT_ROOT" \
		make -C "$kbuild" M="$dir" $margs ${ccache_cc:+CC="$ccache_cc"} KERNELRELEASE="$krel" -j"$jobs" "$@" modules >"$log" 2>&1 ||
		{ tail -30 "$log" >&2; die "build failed: see $log"; }
}

# sparse_run DIR LOG ARGS...: kmake with sparse (C=2), whose log is kept in
# $PPKIT_CACHE/sparse/KEY: KEY a hash of what sparse reads (the driver's
# sources as patched, ppkit's headers, pp_backport's exported symbols,
# the kernel tree, sparse and the compiler) and of these scripts.  ccache
# keeps the compiles, not the checker: sparse over stmmac and mlx4 was
# most of a warm build lane (about 2 minutes a target on 2 cores).
# PPKIT_NO_CACHE=1 runs sparse every time.
sparse_run() {
	local dir=$1 log=$2 key a sym
	shift 2
	key=$({
		echo "$t $krel $pkgver $srcver $margs"
		for a in "$@"; do
			case $a in
			# CRC and name: the third field is the clone's path
			KBUILD_EXTRA_SYMBOLS=*) sym=${a#*=}; cut -f1,2 "$sym" ;;
			PPKIT_INCLUDE=*) ;;
			*) echo "$a" ;;
			esac
		done
		sparse --version
		${ccache_cc:-gcc} --version 2>/dev/null | head -n 1
		(cd "$dir" && find . -type f \( -name '*.[ch]' -o -name Makefile -o -name Kbuild -o -name Kconfig \) \
			! -name '*.mod.c' -print0 | sort -z | xargs -0 sha256sum)
		(cd "$PPKIT_ROOT" && git ls-files -z kmod/include 2>/dev/null | xargs -0 sha256sum)
		cat "$PPKIT_ROOT/scripts/drivers/build.sh" "$PPKIT_ROOT/scripts/drivers/lib.sh"
	} | sha256sum | cut -c1-16)
	local kept=$PPKIT_CACHE/sparse/$key
	if [ "${PPKIT_NO_CACHE:-0}" != 1 ] && [ -f "$kept" ]; then
		sed "s|@PPKIT_ROOT@|$PPKIT_ROOT|g" "$kept" > "$log"
		echo "  sparse: the log of an identical run (sparse cache $key)" >> "$log"
		return
	fi
	kmake "$dir" "$log" "$@"
	mkdir -p "$PPKIT_CACHE/sparse" 2> /dev/null && [ -w "$PPKIT_CACHE/sparse" ] || return 0
	sed "s|$PPKIT_ROOT|@PPKIT_ROOT@|g" "$log" > "$kept.$$" && mv "$kept.$$" "$kept"
}

# The stable line of the source: its series is drivers/DRIVER/LINE/.
srcline=${srcver%.*}
# tested_of DRIVER: the releases of $srcline driver.conf lists as tested
tested_of() {
	local v=tested_${srcline//./_}
	echo "${!v:-}"
}

# Every driver asked for must support this source, before anything is built:
# a version driver.conf lists as tested, or a newer point release of the
# same stable line (built with a notice: the series must still apply with
# no fuzz, which the build checks patch by patch).
for drv in "${drivers[@]}"; do
	conf=$PPKIT_ROOT/drivers/$drv/driver.conf
	[ -f "$conf" ] || die "no driver '$drv' (drivers/*/driver.conf)"
	unset "${!tested_@}"
	# shellcheck disable=SC1090
	. "$conf"
	tested=$(tested_of)
	lines=$(cd "$PPKIT_ROOT/drivers/$drv" && ls -d [0-9]*/ 2>/dev/null | tr -d / | tr '\n' ' ')
	if [ -z "$tested" ] || [ ! -f "$PPKIT_ROOT/drivers/$drv/$srcline/series" ]; then
		die "$drv: kernel source $srcver ($srcdir) is not supported: $drv has a series for the ${lines% } line(s) (drivers/$drv/LINE/, tested_LINE= in driver.conf)"
	fi
	case " $tested " in
	*" $srcver "*) continue ;;
	esac
	newest=$(echo "$tested" | tr ' ' '\n' | sort -V | tail -n 1)
	if vle "$srcver" "$newest"; then
		die "$drv: kernel source $srcver ($srcdir) is not supported: older than the newest tested $srcline release (tested: $tested)"
	fi
	say "NOTICE: $drv: $srcver is a newer $srcline point release than the tested ones ($tested): building it; every patch must apply with no fuzz, and once make test passes on it, add it to tested_${srcline//./_}= in drivers/$drv/driver.conf"
done

# pp_backport for this target, from a copy of kmod/ (Kbuild writes next to
# the sources); the unpatched drivers do not use it.
pp=$work/pp_backport
rm -rf "$pp"
mkdir -p "$pp"
extra=()
if [ $unpatched = 0 ]; then
	cp -r "$PPKIT_ROOT/kmod/include" "$PPKIT_ROOT/kmod/pool" "$PPKIT_ROOT/kmod/Kbuild" "$pp/"
	find "$pp" \( -name '*.o' -o -name '*.ko' -o -name '*.cmd' -o -name '*.mod*' -o -name '*.order' -o -name Module.symvers \) -delete
	echo 'obj-m += pool/' >"$pp/Kbuild"
	kmake "$pp" "$logs/pp_backport.log"
	check_build_log "$logs/pp_backport.log" pp_backport
	check_vermagic "$pp/pool/pp_backport.ko"
	cp "$pp/pool/pp_backport.ko" "$out/"
	say "$t: pp_backport.ko ($krel)"
	extra=(KBUILD_EXTRA_SYMBOLS="$pp/Module.symvers")
else
	rm -f "$out/pp_backport.ko" "$logs/pp_backport.log"
fi

for drv in "${drivers[@]}"; do
	conf=$PPKIT_ROOT/drivers/$drv/driver.conf
	[ -f "$conf" ] || die "no driver '$drv' (drivers/*/driver.conf)"
	path=''
	unset "${!tested_@}"
	# shellcheck disable=SC1090
	. "$conf"
	tested=$(tested_of)
	cfgvar=config_$(drv_conf "$t")
	[ -n "${!cfgvar:-}" ] || die "$drv is not built for $t"
	series=$PPKIT_ROOT/drivers/$drv/$srcline/series

	tree=$work/$drv
	rm -rf "$tree"
	mkdir -p "$tree/$(dirname "$path")"
	cp -r "$srcdir/$path" "$tree/$path"
	if [ $unpatched = 0 ]; then
		drv_apply_series "$series" "$srcver" "$fixes_only" "$tree" "$logs/$drv-patch.log" ||
			die "$drv: patch $DRV_FAILED no longer applies to $srcver with no fuzz (tested: $tested; the rejects are above, the log in $logs/$drv-patch.log)"
	fi
	dir=$tree/$path
	cp "$PPKIT_ROOT/drivers/Kbuild.glue" "$dir/Kbuild"
	# Every option the driver's Makefile tests is off unless driver.conf turns it on.
	# shellcheck disable=SC2207
	opts=($(grep -o 'obj-$(CONFIG_[A-Z0-9_]*)' "$dir/Makefile" | sed 's/obj-\$(\(.*\))/\1=/' | sort -u))
	# shellcheck disable=SC2206
	opts+=(${!cfgvar})
	kmake "$dir" "$logs/$drv.log" "${opts[@]}" PPKIT_INCLUDE="$PPKIT_ROOT/kmod/include" "${extra[@]}"
	check_build_log "$logs/$drv.log" "$drv"
	if [ $sparse = 1 ]; then
		sparse_run "$dir" "$logs/$drv-sparse.log" "${opts[@]}" PPKIT_INCLUDE="$PPKIT_ROOT/kmod/include" \
			"${extra[@]}" C=2
	fi
	for ko in "$dir"/*.ko; do
		check_vermagic "$ko"
		cp "$ko" "$out/"
	done
	say "$t: $drv ($(cd "$dir" && ls ./*.ko | sed 's|^\./||' | tr '\n' ' '))"
done

# Keep the unpatched result: the modules, the logs and the driver sources
# (tests/drivers/static.sh compares against them), no objects.
if [ -n "$cache" ]; then
	mkdir -p "$cache"
	(cd "$out" && { find logs -type f; find work -type f \( -name '*.[ch]' -o -name Makefile \
		-o -name Kconfig -o -name Kbuild \); ls ./*.ko; }) |
		tar -C "$out" -cf "$cache/result.tar.$$" -T -
	mv "$cache/result.tar.$$" "$cache/result.tar"
	date -u +%FT%TZ > "$cache/done"
fi
