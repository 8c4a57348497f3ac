# shellcheck shell=bash
# Sourced by scripts/drivers/*: where each target architecture's Debian kernel,
# headers and matching kernel source come from, and where they are cached.
#
# Targets (make drivers ARCH=...):
#   x86_64  the lab kernel (Debian amd64), built against its installed headers
#   arm64   Debian's arm64 kernel (Macchiatobin, Cortex-A65 boards, qemu -M virt)
#   arm     Debian's armmp kernel (32-bit ARMv7, qemu -M orangepi-pc)
#   arm64-16k  Debian's arm64-16k kernel: arm64 with 16 KiB pages (qemu -M
#           virt -cpu max); a flavour of 6.12 on, none of Debian 12's 6.1
#           (DRV_LINE=6.12); the drivers' config_arm64 options
#
# Cross targets use a kernel tree prepared from the matching linux-source-6.1
# with Debian's own .config and Module.symvers, so vermagic and symbol CRCs are
# Debian's.  Everything fetched or prepared lives under $PPKIT_CACHE, keyed by
# version; nothing here is ever committed.
#
# DRV_LINE (make drivers KVER=LINE): a line of the kernel matrix other than
# Debian 12's 6.1 (scripts/lab/kernels: 5.10, 6.12): on x86_64 its kernel as
# scripts/lab/kernels.sh unpacked it (headers, image, modules), on arm64 and
# armhf that line's Debian kernel of the architecture, prepared as 6.1's;
# built from the line's own linux-source-LINE.

PPKIT_CACHE=${PPKIT_CACHE:-/var/cache/ppkit}
PPKIT_ROOT=${PPKIT_ROOT:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}

die() { echo "drivers: $*" >&2; exit 1; }
say() { echo "drivers: $*" >&2; }

# The kernel ARCH= for a target name.
drv_karch() {
	case "$1" in
	x86_64 | x86 | amd64) echo x86 ;;
	arm64 | aarch64 | arm64-16k) echo arm64 ;;
	arm | armhf) echo arm ;;
	*) die "unknown ARCH '$1': use x86_64, arm64, arm or arm64-16k" ;;
	esac
}

# Canonical target name (the folder under build/drivers/).
drv_target() {
	case "$1" in
	arm64-16k) echo arm64-16k; return ;;
	esac
	case "$(drv_karch "$1")" in
	x86) echo x86_64 ;;
	arm64) echo arm64 ;;
	arm) echo arm ;;
	esac
}

# The drivers' name of a target (config_NAME= in driver.conf): arm64-16k
# builds what arm64 builds.
drv_conf() {
	case "$(drv_target "$1")" in
	arm64-16k) echo arm64 ;;
	*) drv_target "$1" ;;
	esac
}

drv_debarch() {
	case "$(drv_karch "$1")" in
	x86) echo amd64 ;; arm64) echo arm64 ;; arm) echo armhf ;;
	esac
}

drv_flavour() {
	[ "$(drv_target "$1")" = arm64-16k ] && { echo arm64-16k; return; }
	case "$(drv_karch "$1")" in
	x86) echo amd64 ;; arm64) echo arm64 ;; arm) echo armmp ;;
	esac
}

drv_cross() {
	case "$(drv_karch "$1")" in
	x86) echo "" ;; arm64) echo aarch64-linux-gnu- ;; arm) echo arm-linux-gnueabihf- ;;
	esac
}

# The make arguments of a target's kernel build.  Never exported: Debian's x86
# headers use CC=$(CROSS_COMPILE)gcc-12 and would pick up a cross compiler.
drv_make_args() {
	case "$(drv_karch "$1")" in
	x86) echo "" ;;
	arm64) echo "ARCH=arm64 CROSS_COMPILE=aarch64-linux-gnu- CROSS_COMPILE_COMPAT=arm-linux-gnueabihf-" ;;
	arm) echo "ARCH=arm CROSS_COMPILE=arm-linux-gnueabihf-" ;;
	esac
}

# The kernel line built for: 6.1 (Debian 12's) unless DRV_LINE names another.
drv_line() { echo "${DRV_LINE:-6.1}"; }

# A line's x86 kernel as scripts/lab/kernels.sh unpacked it: KREL ROOT KDIR IMAGE LIBDIR.
drv_line_kernel() { # target
	local line
	line=$(drv_line)
	"$PPKIT_ROOT/scripts/lab/kernels.sh" --print "$line" ||
		die "the $line kernel is not unpacked (or not a line of scripts/lab/kernels): run scripts/deps.sh"
}

# A field of the line's row in scripts/lab/kernels (2 suite, 3 abi, 4 version).
drv_line_field() { # field
	awk -v l="$(drv_line)" -v f="$1" '$1 == l { print $f }' "$PPKIT_ROOT/scripts/lab/kernels"
}

# The point releases of LINE (default: drv_line) that every driver built for
# TARGET lists as tested (tested_LINE= in drivers/*/driver.conf), sorted.
# drv_claims DRIVER.CONF LINE: the releases of LINE it claims (tested_LINE=).
drv_claims() {
	local var=tested_${2//./_}
	# shellcheck disable=SC1090
	(. "$1" && echo "${!var:-}")
}

drv_tested() { # target [line]
	local line=${2:-$(drv_line)} c v have=''
	for c in "$PPKIT_ROOT"/drivers/*/driver.conf; do
		grep -q "^config_$(drv_conf "$1")=" "$c" || continue
		[ -f "$(dirname "$c")/$line/series" ] || continue
		v=$(drv_claims "$c" "$line")
		if [ -z "$have" ]; then
			have=" $v "
		else
			local w keep=' '
			for w in $v; do
				case $have in *" $w "*) keep+="$w " ;; esac
			done
			have=$keep
		fi
	done
	echo "$have" | tr ' ' '\n' | grep . | sort -uV | tr '\n' ' ' | sed 's/ $//'
}

# apt-cache ARGS (its error output dropped), the answer kept for as long
# as the package lists, dpkg's status and apt's sources stay as they are.
# Where apt keeps no cache of its own (Dir::Cache::pkgcache "", as in
# Debian's container images) each call rebuilds it: 3 to 7 s a call on a
# 2-core machine, and choosing a cross target's kernel takes a dozen calls.
drv_apt_cache() {
	local dir=$PPKIT_CACHE/apt-answers key rc
	key=$({
		printf '%s\n' "$@"
		stat -c '%n %Y %s' /var/lib/apt/lists/* /var/lib/dpkg/status /etc/apt/sources.list \
			/etc/apt/sources.list.d/* /etc/apt/preferences.d/* 2>/dev/null
	} | sha256sum | cut -c1-16)
	if [ -f "$dir/$key" ]; then
		cat "$dir/$key"
		return
	fi
	# a cache this user cannot write to: ask apt every time
	if ! mkdir -p "$dir" 2> /dev/null || [ ! -w "$dir" ]; then
		apt-cache "$@" 2> /dev/null
		return
	fi
	# answers of other states of the lists go after a day
	find "$dir" -type f -mmin +1440 -delete 2> /dev/null || true
	rc=0
	apt-cache "$@" > "$dir/$key.$$" 2> /dev/null || rc=$?
	cat "$dir/$key.$$"
	# a failed query (a package the lists do not have) is asked again
	if [ $rc = 0 ]; then mv "$dir/$key.$$" "$dir/$key"; else rm -f "$dir/$key.$$"; fi
	return $rc
}

# The 6.1 kernels of a cross target's flavour in the package lists, one
# "KREL PKGVER" a line, oldest first.
drv_offered() { # target
	local flav debarch names
	flav=$(drv_flavour "$1") debarch=$(drv_debarch "$1")
	names=$(drv_apt_cache search --names-only "^linux-image-6\.1\.0-[0-9]+-$flav\$" | awk '{ print $1 ":'"$debarch"'" }')
	[ -n "$names" ] || return 0
	# shellcheck disable=SC2086
	drv_apt_cache show --no-all-versions $names |
		awk '/^Package: / { p = $2 } /^Version: / && p { sub(/^linux-image-/, "", p); print p, $2; p = "" }' |
		sort -V -k2
}

# Kernel release of a target: the x86 lab kernel, or for arm64 and armhf the
# release Debian's flavour metapackage points at in the package lists (the
# machine's own choice) when every driver of the target is tested on it
# (drv_tested); else the newest tested release the lists still have, with a
# notice; else none, and the target is refused with what is supported.
# DRV_RELEASE=6.1.N forces that point release for the cross targets.  On
# another line, its kernel (x86: the lab's; arm64, armhf: that line's arm64
# or armmp kernel).
drv_krel() {
	local karch flav dep
	if [ "$(drv_line)" != 6.1 ]; then
		if [ "$(drv_karch "$1")" = x86 ]; then
			drv_line_kernel "$1" | awk '{ print $1 }'
		else
			local abi
			abi=$(drv_line_field 3)
			[ -n "$abi" ] || die "no line '$(drv_line)' in scripts/lab/kernels"
			echo "$abi-$(drv_flavour "$1")"
		fi
		return
	fi
	karch=$(drv_karch "$1")
	if [ "$karch" = x86 ]; then
		"$PPKIT_ROOT/scripts/lab/kver"
		return
	fi
	flav=$(drv_flavour "$1")
	[ "$flav" != arm64-16k ] ||
		die "arm64-16k: Debian 12's 6.1 has no arm64-16k kernel; build for a line that has one (DRV_LINE=6.12, make ... KVER=6.12)"
	local debarch tested offered cand='' krel v best=''
	debarch=$(drv_debarch "$1")
	tested=$(drv_tested "$1")
	offered=$(drv_offered "$1")
	dep=$(drv_apt_cache depends "linux-image-$flav:$debarch" |
		sed -n "s/^ *Depends: linux-image-\(6\.1\.[0-9.-]*-$flav\)\(:.*\)\?$/\1/p" | head -1)
	[ -n "$dep$offered" ] || die "no linux-image-$flav:$debarch in the package lists: run scripts/deps.sh"
	[ -n "$dep" ] && cand=$(echo "$offered" | awk -v k="$dep" '$1 == k { print $2 }')
	if [ -n "${DRV_RELEASE:-}" ]; then
		case " $tested " in *" $DRV_RELEASE "*) ;; *)
			die "DRV_RELEASE=$DRV_RELEASE: not a release every $1 driver is tested on (tested: ${tested:-none})" ;;
		esac
		best=$(echo "$offered" | awk -v r="$DRV_RELEASE" '{ split($2, a, "-") } a[1] == r { k = $1 } END { print k }')
		[ -n "$best" ] || die "DRV_RELEASE=$DRV_RELEASE: the package lists have no linux-image-6.1.0-*-$flav:$debarch of $DRV_RELEASE (they have: $(echo "$offered" | awk '{ printf "%s ", $2 }'))"
		echo "$best"
		return
	fi
	if [ -n "$cand" ]; then
		case " $tested " in *" $(drv_upstream "$cand") "*) echo "$dep"; return ;; esac
	fi
	while read -r krel v; do
		[ -n "$krel" ] || continue
		case " $tested " in *" $(drv_upstream "$v") "*) best=$krel ;; esac
	done <<< "$offered"
	if [ -n "$best" ]; then
		[ -z "${DRV_QUIET:-}" ] &&
			say "NOTICE: $1: the package lists' linux-image-$flav:$debarch is ${cand:-unknown} ($dep), which the driver series are not tested on (tested: $tested): using $best, the newest tested release they have"
		echo "$best"
		return
	fi
	die "$1: the package lists offer linux-image-$flav:$debarch ${cand:-(no version)} and no 6.1 release the driver series are tested on (tested: ${tested:-none}; offered: $(echo "$offered" | awk '{ printf "%s ", $2 }')).  Refresh the lists (scripts/deps.sh runs apt-get update), or, once make test passes on a newer release, add it to tested_6_1= in drivers/*/driver.conf (Documentation/drivers.rst)"
}

# Debian package version of a kernel release (6.1.176-1), from the archive or dpkg.
drv_pkgver() {
	local krel=$1 debarch=$2 v
	if [ "$(drv_line)" != 6.1 ]; then
		drv_line_field 4
		return
	fi
	v=$(dpkg-query -W -f='${Version}' "linux-image-$krel" 2>/dev/null || true)
	[ -n "$v" ] || v=$(drv_apt_cache show --no-all-versions "linux-image-$krel:$debarch" |
		sed -n 's/^Version: //p' | head -1)
	[ -n "$v" ] || die "cannot find the package version of linux-image-$krel"
	echo "$v"
}

# Upstream version of a Debian package version: 6.1.176-1 -> 6.1.176.
drv_upstream() { echo "${1%%-*}"; }

# Full kernel source of an upstream version, extracted once.
drv_srcdir() { echo "$PPKIT_CACHE/src/linux-source-$1"; }

# vle A B: version A <= version B
vle() { [ "$(printf '%s\n%s\n' "$1" "$2" | sort -V | head -n 1)" = "$1" ]; }
# vmatch VERSION WHEN...: VERSION is one of WHEN (6.1.192, >=6.1.192, <6.1.192)
vmatch() {
	local v=$1 w
	shift
	for w in "$@"; do
		case $w in
		'>='*) vle "${w#>=}" "$v" && return 0 ;;
		'<'*) vle "${w#<}" "$v" || return 0 ;;
		*) [ "$w" = "$v" ] && return 0 ;;
		esac
	done
	return 1
}

# drv_apply_series SERIES VERSION FIXES_ONLY TREE LOG: apply the patches a
# series file names for kernel VERSION to TREE, each exactly (no fuzz; an
# offset is fine).  A series line: the patch, then optionally "fix" (a bug
# fix rather than a feature) and the only kernel versions it is for:
# 6.1.176 (exactly), <6.1.192 (a fix that 6.1.192 on carry) or >=6.1.192 (a
# bug that came with 6.1.192).  FIXES_ONLY=1: the fixes alone.  On a patch
# that does not apply: its log on stderr, its name in DRV_FAILED, return 1.
# shellcheck disable=SC2034 # DRV_FAILED: for the caller
drv_apply_series() {
	local series=$1 ver=$2 fixes_only=$3 tree=$4 log=$5 p only isfix out
	DRV_FAILED=
	: >"$log"
	while read -r p only; do
		case "$p" in '' | '#'*) continue ;; esac
		isfix=0
		if [ "${only%% *}" = fix ]; then
			isfix=1
			only=${only#fix}
			only=${only# }
		fi
		[ "$fixes_only" = 1 ] && [ $isfix = 0 ] && continue
		# shellcheck disable=SC2086 # one word per version
		if [ -n "$only" ] && ! vmatch "$ver" $only; then
			continue
		fi
		echo "== $p" >>"$log"
		if ! out=$(patch -d "$tree" -p1 --fuzz=0 --no-backup-if-mismatch -s \
			<"$(dirname "$series")/patches/$p" 2>&1); then
			echo "$out" | tee -a "$log" >&2
			DRV_FAILED=$p
			return 1
		fi
		[ -z "$out" ] || echo "$out" >>"$log"
	done <"$series"
}
