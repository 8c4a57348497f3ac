#!/bin/bash
# The kernel matrix's other lines (scripts/lab/kernels: Debian 11's 5.10,
# bookworm-backports' 6.12), fetched from the host's own Debian archive with a
# private apt configuration and unpacked into the cache, never installed: the
# host's apt sources, lists and dpkg database are not touched.
#
#   scripts/lab/kernels.sh [LINE...]     fetch and unpack (default: every row;
#                                        root; idempotent, a stamp per kernel)
#   scripts/lab/kernels.sh --print LINE  print KREL ROOT KDIR IMAGE LIBDIR if
#                                        LINE is unpacked (exit 0), else exit 1
#   scripts/lab/kernels.sh --lines       the lines of the table, one a line
#   scripts/lab/kernels.sh --source LINE the line's linux-source package
#                                        (same version as its image), fetched
#                                        into debs/ if missing: print VERSION DEB
#   scripts/lab/kernels.sh --boards LINE the board targets of the line (make
#                                        dist-board ARCH=...): arm, arm64 and
#                                        arm64-16k, those of its flavours
#                                        (armmp, arm64, arm64-16k) whose headers
#                                        the archive has, one a line
#   scripts/lab/kernels.sh --cross armmp|arm64|arm64-16k LINE
#                                        that ARM flavour's image and headers
#                                        of the line (armhf, arm64, arm64 with
#                                        16 KiB pages; armhf: armmp), fetched
#                                        into debs/: print KREL VERSION IMAGE
#                                        HEADERS
#
# Cache ($PPKIT_CACHE, default /var/cache/ppkit, a path the lab guest sees):
#   apt-matrix/      sources.list, state/ and cache/ of the private apt
#   debs/            the .debs (shared with scripts/drivers/prepare.sh)
#   kernels/KREL/    the unpacked root: boot/vmlinuz-KREL, lib/modules/KREL
#                    (depmod'ed, `build` -> the headers below), usr/src/ (the
#                    headers, their Makefile pointed at the -common tree here),
#                    usr/lib/linux-kbuild-*, and the extra libraries in
#                    usr/lib/x86_64-linux-gnu (LIBDIR: LD_LIBRARY_PATH for the
#                    kbuild tools that need them, e.g. 5.10's sign-file)
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
TABLE=$HERE/kernels
PPKIT_CACHE=${PPKIT_CACHE:-/var/cache/ppkit}
APTDIR=$PPKIT_CACHE/apt-matrix
DEBS=$PPKIT_CACHE/debs
KROOTS=$PPKIT_CACHE/kernels
KEYRING=/usr/share/keyrings/debian-archive-keyring.gpg
FLAVOUR=amd64
RECIPE=1		# bump when the way a root is unpacked or fixed changes

say() { echo "kernels: $*" >&2; }
die() { echo "kernels: $*" >&2; exit 1; }

# The table's rows without comments: LINE SUITE ABI VERSION IMAGE EXTRA
rows() { grep -v -e '^#' -e '^[[:space:]]*$' "$TABLE"; }
row() { # line -> the row's fields, or fail
	local r
	r=$(rows | awk -v l="$1" '$1 == l') || true
	[ -n "$r" ] || return 1
	echo "$r"
}

krel_of() { echo "$1-$FLAVOUR"; }

print_line() {
	local line=$1 r abi krel root
	r=$(row "$line") || exit 1
	read -r _ _ abi _ _ _ <<<"$r"
	krel=$(krel_of "$abi")
	root=$KROOTS/$krel
	[ -f "$root/.ppkit-unpacked" ] || exit 1
	echo "$krel $root $root/usr/src/linux-headers-$krel $root/boot/vmlinuz-$krel $root/usr/lib/x86_64-linux-gnu"
}

case "${1:-}" in
--print) print_line "${2:?--print LINE}"; exit 0 ;;
--lines) rows | awk '{ print $1 }'; exit 0 ;;
--source | --cross | --boards) ;;
-h | --help) sed -n '2,/^set -euo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'; exit 0 ;;
-*) die "unknown option '$1' (see --help)" ;;
esac

[ "$(id -u)" -eq 0 ] || die "fetching the kernels needs root (run scripts/deps.sh as root)"
[ -f "$KEYRING" ] || die "$KEYRING missing (debian-archive-keyring)"

# The host's Debian archive: the URI its apt sources use for its own release
# (read through apt, whatever the format of its sources).
archive_uri() {
	local codename uri
	codename=$(. /etc/os-release && echo "${VERSION_CODENAME:-}")
	uri=$(apt-get indextargets --format '$(REPO_URI) $(RELEASE)' 'Created-By: Packages' 2>/dev/null |
		awk -v c="$codename" '$2 == c { print $1; exit }')
	echo "${uri:-http://deb.debian.org/debian/}"
}

APT_OPTS=(-o "Dir::State=$APTDIR/state" -o "Dir::Cache=$APTDIR/cache"
	-o "Dir::Etc::SourceList=$APTDIR/sources.list" -o Dir::Etc::SourceParts=/dev/null
	-o "Dir::Etc::Preferences=/dev/null" -o Dir::Etc::PreferencesParts=/dev/null
	-o "APT::Architectures::=$FLAVOUR" -o "APT::Architectures::=armhf"
	-o "APT::Architectures::=arm64" -o APT::Sandbox::User=root)

# The private configuration: its sources list names every suite of the
# table; the lists are refreshed when the list changes or are older than a day.
private_apt() {
	local uri suites s want
	uri=$(archive_uri)
	suites=$(rows | awk '{ print $2 }' | sort -u)
	# (the architectures are in it too: lists of more of them need an update)
	want=$(echo "# architectures: amd64 armhf arm64"
	       for s in $suites; do echo "deb [signed-by=$KEYRING] $uri $s main"; done)
	mkdir -p "$APTDIR/state/lists/partial" "$APTDIR/cache/archives/partial"
	if [ "$(cat "$APTDIR/sources.list" 2>/dev/null)" != "$want" ]; then
		echo "$want" >"$APTDIR/sources.list"
		rm -f "$APTDIR/updated"
	fi
	if [ -z "$(find "$APTDIR/updated" -mmin -1440 2>/dev/null)" ]; then
		say "apt-get update of the private configuration ($APTDIR: $(echo "$suites" | tr '\n' ' '))"
		apt-get "${APT_OPTS[@]}" update -qq || die "apt-get update of $APTDIR/sources.list failed (above)"
		touch "$APTDIR/updated"
	fi
}

deb_of() { # name[:arch] version -> path of the cached .deb, or nothing
	local v=${2//:/%3a} n=${1%%:*} a=$FLAVOUR
	[ "$1" != "$n" ] && a=${1#*:}
	compgen -G "$DEBS/${n}_${v}_$a.deb" || compgen -G "$DEBS/${n}_${v}_all.deb" || true
}

# Fetch (apt-get download) what is not in $DEBS yet: name[:arch]=version...
fetch() {
	local want=() p
	for p in "$@"; do
		[ -n "$(deb_of "${p%%=*}" "${p#*=}")" ] || want+=("$p")
	done
	[ ${#want[@]} -eq 0 ] && return
	private_apt
	say "downloading ${want[*]}"
	mkdir -p "$DEBS"
	(cd "$DEBS" && apt-get "${APT_OPTS[@]}" download "${want[@]}" >/dev/null) ||
		die "apt-get download failed: the row of scripts/lab/kernels may name a version the archive dropped (apt-cache ${APT_OPTS[*]} policy ${want[0]%%=*})"
}

# A package's dependency named like PATTERN (the headers' -common and kbuild).
dep_of() { # package pattern
	apt-cache "${APT_OPTS[@]}" depends "$1" 2>/dev/null |
		sed -n "s/^ *Depends: \($2\)$/\1/p" | head -1
}

prepare() {
	local line=$1 r suite abi ver image extra krel root img hdr common kbuild pkgs p d stamp
	r=$(row "$line") || die "no line '$line' in $TABLE (lines: $(rows | awk '{ print $1 }' | tr '\n' ' '))"
	read -r _ suite abi ver image extra <<<"$r"
	krel=$(krel_of "$abi")
	root=$KROOTS/$krel
	stamp="recipe $RECIPE $suite $ver $extra"
	if [ "$(cat "$root/.ppkit-unpacked" 2>/dev/null)" = "$stamp" ]; then
		say "$line: $krel ($ver) ready in $root"
		return
	fi
	img=linux-image-$krel
	[ "$image" = unsigned ] && img+=-unsigned
	hdr=linux-headers-$krel
	# The -common and kbuild package names differ between releases
	# (linux-kbuild-5.10, linux-kbuild-6.12.95+deb12): ask the headers.
	private_apt
	common=$(dep_of "$hdr" 'linux-headers-.*-common')
	kbuild=$(dep_of "$hdr" 'linux-kbuild-.*')
	[ -n "$common" ] && [ -n "$kbuild" ] ||
		die "$hdr ($suite): no -common or kbuild dependency in the lists; is $ver still in $suite?"
	pkgs=("$img=$ver" "$hdr=$ver" "$common=$ver" "$kbuild=$ver")
	if [ "$extra" != - ]; then
		for p in ${extra//,/ }; do
			pkgs+=("$p=$(apt-cache "${APT_OPTS[@]}" policy "$p" | sed -n 's/^ *Candidate: //p')")
		done
	fi
	fetch "${pkgs[@]}"
	say "$line: unpacking $krel into $root"
	rm -rf "$root"
	mkdir -p "$root"
	for p in "${pkgs[@]}"; do
		d=$(deb_of "${p%%=*}" "${p#*=}")
		[ -n "$d" ] || die "no .deb for $p in $DEBS"
		dpkg-deb -x "$d" "$root"
	done
	fix_root "$krel" "$root"
	echo "$stamp" >"$root/.ppkit-unpacked"
	say "$line: $krel ($ver) ready in $root"
}

# What a package's postinst or the absolute /usr/src paths would otherwise do.
fix_root() { # krel root
	local krel=$1 root=$2 h
	h=$root/usr/src/linux-headers-$krel
	[ -f "$h/Makefile" ] || die "$h/Makefile missing after unpacking"
	# The flavour's Makefile includes the -common tree by its /usr/src path.
	sed -i "s|^include /usr/src/|include $root/usr/src/|" "$h/Makefile"
	grep -q "^include $root/usr/src/linux-headers-.*-common/Makefile" "$h/Makefile" ||
		die "$h/Makefile: no include of the -common Makefile to redirect"
	# build and source point at /usr/src; scripts and tools are relative
	# (../../lib/linux-kbuild-*) and resolve inside the root as they are.
	ln -sfn "$h" "$root/lib/modules/$krel/build"
	ln -sfn "$root/usr/src/$(basename "$(readlink "$root/lib/modules/$krel/source")")" \
		"$root/lib/modules/$krel/source"
	[ -x "$h/scripts/basic/fixdep" ] || die "$h/scripts/basic/fixdep missing: the kbuild package did not unpack"
	# The image package ships no modules.dep (its postinst makes it).
	depmod -b "$root" "$krel"
}

# The linux-source-LINE of the line's version (scripts/drivers: the patched
# drivers are built from the kernel's own source).
source_deb() { # line
	local r ver d
	r=$(row "$1") || die "no line '$1' in $TABLE"
	read -r _ _ _ ver _ _ <<<"$r"
	fetch "linux-source-$1=$ver"
	d=$(deb_of "linux-source-$1" "$ver")
	[ -n "$d" ] || die "no .deb for linux-source-$1=$ver in $DEBS"
	echo "$ver $d"
}
if [ "${1:-}" = --source ]; then
	source_deb "${2:?--source LINE}"
	exit 0
fi
if [ "${1:-}" = --boards ]; then
	r=$(row "${2:?--boards LINE}") || die "no line '$2' in $TABLE"
	read -r _ _ abi ver _ _ <<<"$r"
	private_apt
	for f in arm64:arm64 armmp:arm arm64-16k:arm64-16k; do
		a=arm64
		[ "${f%%:*}" = armmp ] && a=armhf
		apt-cache "${APT_OPTS[@]}" show "linux-headers-$abi-${f%%:*}:$a=$ver" >/dev/null 2>&1 &&
			echo "${f#*:}"
	done
	exit 0
fi
# Another architecture's kernel of a line, for scripts/drivers (a board's
# kernel): its image and headers, fetched into debs/; prints KREL VERSION
# IMAGE_DEB HEADERS_DEB.
if [ "${1:-}" = --cross ]; then
	r=$(row "${3:?--cross armmp|arm64|arm64-16k LINE}") || die "no line '$3' in $TABLE"
	read -r _ _ abi ver _ _ <<<"$r"
	case $2 in
	armhf | armmp) krel=$abi-armmp a=armhf ;;
	arm64 | arm64-16k) krel=$abi-$2 a=arm64 ;;
	*) die "--cross: armmp (armhf), arm64 or arm64-16k" ;;
	esac
	img=linux-image-$krel
	# arm64's signed images are separate packages; armhf has only this one
	[ $a = arm64 ] && img=$img-unsigned
	if [ -z "$(deb_of "linux-headers-$krel:$a" "$ver")" ]; then
		private_apt
		apt-cache "${APT_OPTS[@]}" show "linux-headers-$krel:$a=$ver" >/dev/null 2>&1 ||
			die "--cross $2 $3: no linux-headers-$krel:$a $ver in $(row "$3" | awk '{ print $2 }') (not every line has every flavour)"
	fi
	fetch "$img:$a=$ver" "linux-headers-$krel:$a=$ver"
	echo "$krel $ver $(deb_of "$img:$a" "$ver") $(deb_of "linux-headers-$krel:$a" "$ver")"
	exit 0
fi

lines=("$@")
[ ${#lines[@]} -gt 0 ] || mapfile -t lines < <(rows | awk '{ print $1 }')
mkdir -p "$KROOTS"
exec 9>"$KROOTS/.lock"
flock 9
for l in "${lines[@]}"; do
	prepare "$l"
done
# Roots of kernels no row names any more (the archive moved on).
if [ $# -eq 0 ]; then
	keep=$(rows | awk '{ print $3 }' | while read -r a; do krel_of "$a"; done)
	for d in "$KROOTS"/*/; do
		[ -d "$d" ] || continue
		d=${d%/}
		grep -qx "${d##*/}" <<<"$keep" && continue
		say "removing $d: no row of $TABLE names it"
		rm -rf "$d"
	done
fi
