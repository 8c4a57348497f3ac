#!/bin/bash
# Fetch and prepare what the driver builds and their lab tests need, per target:
#   - Debian's kernel image (with its modules) and, for cross targets, headers,
#     plus a static busybox for the target's initramfs;
#   - the linux-source-6.1 of exactly the kernel's package version, extracted;
#     with DRV_LINE=5.10|6.12 (make drivers KVER=LINE, x86_64), that line's
#     linux-source of its kernel's version (the kernel itself: scripts/lab/kernels.sh);
#   - cross targets: a kernel tree prepared from that source with Debian's
#     .config and Module.symvers (olddefconfig must not change a single option).
# Idempotent: every step leaves a stamp and is skipped next time.
#
#   scripts/drivers/prepare.sh [x86_64|arm64|arm|arm64-16k]...   (default: the
#                                                 first three; arm64-16k: DRV_LINE=6.12)
#   scripts/drivers/prepare.sh --print ARCH           print KREL PKGVER SRCDIR KBUILD ROOT
#   scripts/drivers/prepare.sh --sources [--print]    extract the source of every
#                 point release a series is tested on (tested_LINE= in
#                 drivers/*/driver.conf, every line): tests/drivers/series.sh
#                 applies each series to each; --print: "LINE RELEASE SRCDIR"
#
# The cross targets' kernel is the machine's own choice where the driver
# series are tested on it, else the newest tested release the package lists
# have, else the target is refused (drv_krel in lib.sh; DRV_RELEASE=6.1.N
# forces one).
set -euo pipefail
. "$(dirname "$0")/lib.sh"

JOBS=${JOBS:-$(nproc)}

fetch_debs() { # pkg:arch...
	local want=() p
	mkdir -p "$PPKIT_CACHE/debs"
	for p in "$@"; do
		local name=${p%%:*} arch=${p#*:} ver=
		if [[ "$name" == *=* ]]; then ver=${name#*=}; name=${name%%=*}; fi
		if ! compgen -G "$PPKIT_CACHE/debs/${name}_${ver:-*}_$arch.deb" >/dev/null &&
		   ! compgen -G "$PPKIT_CACHE/debs/${name}_${ver:-*}_all.deb" >/dev/null; then
			want+=("$name${arch:+:$arch}${ver:+=$ver}")
		fi
	done
	[ ${#want[@]} -eq 0 ] && return
	say "downloading ${want[*]}"
	# apt's sandbox user cannot write to our cache; download as root into it.
	(cd "$PPKIT_CACHE/debs" && apt-get download -o APT::Sandbox::User=root "${want[@]}" >/dev/null) && return
	# Say why: a version the archive dropped, an architecture not added,
	# or the download itself.
	for p in "${want[@]}"; do
		local name=${p%%=*} ver=
		[[ "$p" == *=* ]] && ver=${p#*=}
		case $name in
		*:*) grep -qx "${name#*:}" <<< "$(dpkg --print-foreign-architectures)" ||
			die "$name: the ${name#*:} architecture is not added to dpkg: run scripts/deps.sh" ;;
		esac
		if ! grep -qx -- "${ver:-.*}" <<< "$(drv_apt_cache madison "$name" |
			awk -F'|' '{ gsub(/ /, "", $2); print $2 }')"; then
			die "$name${ver:+ $ver} is not in the package lists: Debian's archive drops old point releases (apt-cache policy $name shows what it has); run scripts/deps.sh to refresh the lists, then build again"
		fi
	done
	die "apt-get download ${want[*]} failed, though the lists have them: the mirror (see apt's message above)"
}

# Trees of kernel releases no target uses any more (the archive moved on):
# removed, with the sources no target needs.  A target's trees of the
# kernel matrix's other lines (DRV_LINE=5.10|6.12: that line's release of
# the target's flavour, scripts/lab/kernels) are kept.
prune_cache() { # target...: the targets prepared, all three
	local t keep d rel srcs=()
	for t in "$@"; do
		keep=" $(drv_krel "$t") "
		for d in $(awk '!/^#/ && NF { print $3 }' "$PPKIT_ROOT/scripts/lab/kernels"); do
			keep+="$d-$(drv_flavour "$t") "
		done
		srcs+=("$(drv_srcdir "$(drv_upstream "$(drv_pkgver "$(drv_krel "$t")" "$(drv_debarch "$t")")")")")
		for d in "$PPKIT_CACHE/$t"/root-* "$PPKIT_CACHE/$t"/kbuild-*; do
			[ -d "$d" ] || continue
			rel=${d##*/root-}
			rel=${rel##*/kbuild-}
			case $keep in *" $rel "*) continue ;; esac
			say "removing $d: $rel is no longer $t's kernel"
			rm -rf "$d"
		done
	done
	# and the sources of the kernel matrix's other lines (scripts/lab/kernels)
	for d in $(awk '!/^#/ && NF { print $4 }' "$PPKIT_ROOT/scripts/lab/kernels"); do
		srcs+=("$(drv_srcdir "$(drv_upstream "$d")")")
	done
	# and of every release a series is tested on (--sources)
	for d in $(tested_releases | awk '{ print $2 }'); do
		srcs+=("$(drv_srcdir "$d")")
	done
	for d in "$PPKIT_CACHE"/src/linux-source-*; do
		[ -d "$d" ] || continue
		case " ${srcs[*]} " in *" $d "*) continue ;; esac
		say "removing $d: no target's kernel is that release any more"
		rm -rf "$d"
	done
}

deb_path() { # name version arch
	local f
	f=$(compgen -G "$PPKIT_CACHE/debs/${1}_${2}_$3.deb" | head -1 || true)
	[ -n "$f" ] || f=$(compgen -G "$PPKIT_CACHE/debs/${1}_*_$3.deb" | head -1 || true)
	[ -n "$f" ] || die "no .deb for $1 ($2, $3) in $PPKIT_CACHE/debs"
	echo "$f"
}

# The full source tree of the kernel's exact version.
prepare_source() { # pkgver
	local pkgver=$1 up src tarball tmp='' line deb
	up=$(drv_upstream "$pkgver")
	src=$(drv_srcdir "$up")
	line=$(drv_line)
	[ -f "$src/.ppkit-extracted" ] && return
	if [ "$(dpkg-query -W -f='${Version}' "linux-source-$line" 2>/dev/null)" = "$pkgver" ]; then
		tarball=/usr/src/linux-source-$line.tar.xz
	else
		if [ "$line" = 6.1 ]; then
			fetch_debs "linux-source-6.1=$pkgver:"
			deb=$(deb_path linux-source-6.1 "$pkgver" all)
		else
			# another Debian release's: through the lines' private apt
			read -r _ deb < <("$PPKIT_ROOT/scripts/lab/kernels.sh" --source "$line") ||
				die "cannot fetch linux-source-$line (above)"
		fi
		tmp=$(mktemp -d "$PPKIT_CACHE/src/.deb.XXXXXX")
		dpkg-deb --fsys-tarfile "$deb" | tar -x -C "$tmp" "./usr/src/linux-source-$line.tar.xz"
		tarball=$tmp/usr/src/linux-source-$line.tar.xz
	fi
	say "extracting linux-source $pkgver"
	rm -rf "$src" "$src.tmp"
	mkdir -p "$src.tmp"
	xz -dc -T"$JOBS" "$tarball" | tar -x -C "$src.tmp"
	mv "$src.tmp/linux-source-$line" "$src"
	rmdir "$src.tmp"
	if [ -n "$tmp" ]; then rm -rf "$tmp"; fi
	touch "$src/.ppkit-extracted"
}

# Debian's image (modules included), headers and busybox for a cross target.
prepare_root() { # target krel pkgver
	local t=$1 krel=$2 pkgver=$3 debarch root d img hdr
	debarch=$(drv_debarch "$t")
	root=$PPKIT_CACHE/$t/root-$krel
	[ -f "$root/.ppkit-extracted" ] && return
	local debs=()
	if [ "$(drv_line)" = 6.1 ]; then
		fetch_debs "linux-image-$krel=$pkgver:$debarch" "linux-headers-$krel=$pkgver:$debarch" \
			"busybox-static:$debarch"
		debs=("$(deb_path "linux-image-$krel" "$pkgver" "$debarch")"
		      "$(deb_path "linux-headers-$krel" "$pkgver" "$debarch")")
	else
		# another Debian release's: through the lines' private apt
		fetch_debs "busybox-static:$debarch"
		read -r _ _ img hdr < <("$PPKIT_ROOT/scripts/lab/kernels.sh" --cross "$(drv_flavour "$t")" "$(drv_line)") ||
			die "cannot fetch the $(drv_line) kernel for $t (above)"
		debs=("$img" "$hdr")
	fi
	say "unpacking Debian's $krel"
	rm -rf "$root"
	mkdir -p "$root"
	for d in "${debs[@]}" "$(deb_path busybox-static '*' "$debarch")"; do
		dpkg-deb -x "$d" "$root"
	done
	# The image package ships no modules.dep: make one for modprobe in the guest.
	depmod -b "$root" "$krel"
	touch "$root/.ppkit-extracted"
}

# Options that describe the compiler, assembler and linker (what they are and
# which flags they take), not the kernel.
TOOLCHAIN_OPTS='^CONFIG_((CC|AS|LD|GCC|CLANG|RUSTC)_VERSION(_TEXT)?|(CC|AS)_HAS_[A-Z0-9_]+|CC_HAVE_[A-Z0-9_]+|HAVE_KCSAN_COMPILER|ARCH_SUPPORTS_SHADOW_CALL_STACK)='

# A kernel build tree for cross builds: Debian's config, no drift, Debian's symvers.
prepare_kbuild() { # target krel pkgver
	local t=$1 krel=$2 pkgver=$3 src out hdr margs drift f
	src=$(drv_srcdir "$(drv_upstream "$pkgver")")
	out=$PPKIT_CACHE/$t/kbuild-$krel
	hdr=$PPKIT_CACHE/$t/root-$krel/usr/src/linux-headers-$krel
	[ -f "$out/.ppkit-prepared" ] && return
	command -v pahole >/dev/null || die "pahole missing (dwarves): run scripts/deps.sh"
	command -v "$(drv_cross "$t")gcc" >/dev/null || die "$(drv_cross "$t")gcc missing: run scripts/deps.sh"
	# Debian builds with no Rust: a rustc on the host would show in 6.12's
	# config (RUSTC_VERSION), which must not drift
	margs="$(drv_make_args "$t") RUSTC=ppkit-no-rustc"
	say "preparing a $t kernel tree for $krel (olddefconfig + modules_prepare)"
	rm -rf "$out"
	mkdir -p "$out"
	cp "$hdr/.config" "$out/.config"
	# shellcheck disable=SC2086
	make -s -C "$src" O="$out" $margs KERNELRELEASE="$krel" olddefconfig >"$out/prepare.log" 2>&1 ||
		die "olddefconfig failed: see $out/prepare.log"
	# What the toolchain is and can do may differ (5.10's were built with
	# gcc-10, which bookworm lacks): named, then left out of the comparison.
	# Any other difference is a choice of Debian's that olddefconfig undid.
	tc=$(diff <(grep -E "$TOOLCHAIN_OPTS" "$hdr/.config" | sort) \
		  <(grep -E "$TOOLCHAIN_OPTS" "$out/.config" | sort) | sed -n 's/^> /    /p' || true)
	[ -z "$tc" ] || say "$krel: the cross toolchain is not Debian's; its options differ:
$tc"
	drift=$(diff <(grep -v -E -e '^#' -e "$TOOLCHAIN_OPTS" -e '^$' "$hdr/.config" | sort) \
		     <(grep -v -E -e '^#' -e "$TOOLCHAIN_OPTS" -e '^$' "$out/.config" | sort) || true)
	[ -z "$drift" ] || die "config drift against Debian's $krel (toolchain differs?):
$drift"
	# shellcheck disable=SC2086
	make -s -C "$src" O="$out" $margs KERNELRELEASE="$krel" -j"$JOBS" modules_prepare \
		>>"$out/prepare.log" 2>&1 || die "modules_prepare failed: see $out/prepare.log"
	cmp -s "$hdr/include/generated/utsrelease.h" "$out/include/generated/utsrelease.h" ||
		die "utsrelease.h differs from Debian's: the tree does not match $krel"
	cp "$hdr/Module.symvers" "$out/Module.symvers"
	touch "$out/.ppkit-prepared"
}

# "LINE RELEASE" for every point release a driver's series is tested on
# (tested_LINE= of drivers/*/driver.conf, for each line with a series).
tested_releases() {
	local c d line v
	for c in "$PPKIT_ROOT"/drivers/*/driver.conf; do
		d=$(dirname "$c")
		for line in $(cd "$d" && ls -d [0-9]*.[0-9]* 2>/dev/null); do
			[ -f "$d/$line/series" ] || continue
			for v in $(drv_claims "$c" "$line"); do echo "$line $v"; done
		done
	done | sort -uV
}

# The Debian package version of linux-source-LINE for an upstream release:
# 6.1's newest revision in the package lists; another line's, its row of
# scripts/lab/kernels (the one release of it the project fetches).
source_pkgver() { # line release
	local v
	if [ "$1" = 6.1 ]; then
		v=$(drv_apt_cache madison linux-source-6.1 | awk -F'|' '{ gsub(/ /, "", $2); print $2 }' |
			awk -F- -v r="$2" '$1 == r' | sort -V | tail -n 1)
		[ -n "$v" ] || die "linux-source-6.1 of $2 is not in the package lists (they have: $(drv_apt_cache madison linux-source-6.1 |
			awk -F'|' '{ gsub(/ /, "", $2); printf "%s ", $2 }')); a series claims $2 (tested_6_1= in drivers/*/driver.conf): refresh the lists (scripts/deps.sh), or take the release out of the claim"
	else
		v=$(DRV_LINE=$1 drv_line_field 4)
		[ "$(drv_upstream "$v")" = "$2" ] ||
			die "a series claims $1 release $2 (tested_${1//./_}=), but the project fetches $1's $(drv_upstream "$v") (scripts/lab/kernels): they must be the same"
	fi
	echo "$v"
}

print_target() {
	local t=$1 krel pkgver root kdir
	krel=$(drv_krel "$t")
	pkgver=$(drv_pkgver "$krel" "$(drv_debarch "$t")")
	if [ "$(drv_line)" != 6.1 ] && [ "$(drv_karch "$t")" = x86 ]; then
		read -r _ root kdir _ < <(drv_line_kernel "$t")
		echo "$krel $pkgver $(drv_srcdir "$(drv_upstream "$pkgver")") $kdir $root"
	elif [ "$(drv_karch "$t")" = x86 ]; then
		echo "$krel $pkgver $(drv_srcdir "$(drv_upstream "$pkgver")") /lib/modules/$krel/build /"
	else
		echo "$krel $pkgver $(drv_srcdir "$(drv_upstream "$pkgver")") $PPKIT_CACHE/$t/kbuild-$krel $PPKIT_CACHE/$t/root-$krel"
	fi
}

if [ "${1:-}" = --print ]; then
	print_target "$(drv_target "${2:?--print ARCH}")"
	exit 0
fi

if [ "${1:-}" = --sources ]; then
	mkdir -p "$PPKIT_CACHE/src"
	exec 9>"$PPKIT_CACHE/.prepare.lock"
	flock 9
	tested_releases | while read -r line rel; do
		pv=$(source_pkgver "$line" "$rel") || exit 1
		if [ "${2:-}" = --print ]; then
			echo "$line $rel $(drv_srcdir "$rel")"
		else
			DRV_LINE=$line prepare_source "$pv"
		fi
	done
	exit
fi

targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(x86_64 arm64 arm)
mkdir -p "$PPKIT_CACHE/src"
# One preparer at a time: parallel builds would extract into the same trees.
exec 9>"$PPKIT_CACHE/.prepare.lock"
flock 9
for t in "${targets[@]}"; do
	t=$(drv_target "$t")
	krel=$(drv_krel "$t")
	pkgver=$(drv_pkgver "$krel" "$(drv_debarch "$t")")
	prepare_source "$pkgver"
	if [ "$(drv_karch "$t")" != x86 ]; then
		prepare_root "$t" "$krel" "$pkgver"
		prepare_kbuild "$t" "$krel" "$pkgver"
	fi
	say "$t: $krel (source $pkgver) ready"
done
if [ $# -eq 0 ] && [ "$(drv_line)" = 6.1 ]; then prune_cache x86_64 arm64 arm; fi
