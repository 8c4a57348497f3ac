#!/bin/bash
# ppkit's QEMU: Debian 12's own qemu source package with the PPv2.2 model
# (emu/qemu/: hw/net/mvpp2.c and a patch that lets -M virt take it), the
# aarch64 system emulator only, built into the cache.  The system QEMU is
# never touched: the lab runs this binary by its path.
#
#   scripts/emu/qemu.sh            build what is missing (idempotent; the
#                                  first build takes the longest), print the
#                                  binary's path
#   scripts/emu/qemu.sh --print    print the binary's path if it is built and
#                                  current, else exit 1
#
# The source is the version of the host's qemu-system-arm (Debian's point
# release), or the archive's newest bookworm version when the host has none
# or the archive dropped it; fetched with a private apt configuration (deb-src
# lines for the host's own archive), the host's apt sources untouched.
#
# Cache ($PPKIT_CACHE, default /var/cache/ppkit):
#   apt-src/               the private apt configuration (deb-src)
#   qemu-ppv2/src-VER/     the unpacked source with Debian's patches, ours on
#                          top (re-applied when emu/qemu changes), and its
#                          build/ directory (incremental)
#   qemu-ppv2/VER-KEY/     the binary of one source version and one state of
#                          emu/qemu (KEY), and its build log
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
EMU=$ROOT/emu/qemu
PPKIT_CACHE=${PPKIT_CACHE:-/var/cache/ppkit}
APTDIR=$PPKIT_CACHE/apt-src
TOP=$PPKIT_CACHE/qemu-ppv2
KEYRING=/usr/share/keyrings/debian-archive-keyring.gpg
# what the build needs beside build-essential (scripts/deps.sh installs them)
NEEDS=(meson ninja python3 pkg-config dpkg-source)
CONFIGURE=(--target-list=aarch64-softmmu --without-default-features --enable-fdt=system
	--without-default-devices --with-devices-aarch64=ppkit
	--disable-docs --disable-tools --disable-install-blobs --disable-werror)
RECIPE=1		# bump when the way the binary is built changes

say() { echo "qemu-ppv2: $*" >&2; }
die() { echo "qemu-ppv2: $*" >&2; exit 1; }

# The key of emu/qemu's state and of the recipe: a new one, a new binary.
key() {
	(cd "$EMU" && find . -type f | LC_ALL=C sort | xargs sha256sum
	 echo "${CONFIGURE[*]} $RECIPE") | sha256sum | cut -c1-12
}

host_version() {
	dpkg-query -W -f='${source:Version}' qemu-system-arm 2>/dev/null || true
}

APT_OPTS=(-o "Dir::State=$APTDIR/state" -o "Dir::Cache=$APTDIR/cache"
	-o "Dir::Etc::SourceList=$APTDIR/sources.list" -o Dir::Etc::SourceParts=/dev/null
	-o "Dir::Etc::Preferences=/dev/null" -o Dir::Etc::PreferencesParts=/dev/null
	-o APT::Sandbox::User=root)

# deb-src lines for every suite and component the host's apt reads for its
# own release (read through apt, whatever the format of its sources).
private_apt() {
	local want
	want=$(apt-get indextargets --format '$(REPO_URI) $(RELEASE) $(COMPONENT)' \
			'Created-By: Packages' 2>/dev/null | sort -u |
		while read -r uri rel comp; do
			echo "deb-src [signed-by=$KEYRING] $uri $rel $comp"
		done)
	[ -n "$want" ] || die "the host's apt has no package lists: run apt-get update (scripts/deps.sh does)"
	mkdir -p "$APTDIR/state/lists/partial" "$APTDIR/cache/archives/partial"
	if [ "$(cat "$APTDIR/sources.list" 2>/dev/null)" != "$want" ]; then
		echo "$want" > "$APTDIR/sources.list"
		rm -f "$APTDIR/updated"
	fi
	if [ -z "$(find "$APTDIR/updated" -mmin -1440 2>/dev/null)" ]; then
		say "apt-get update of the private deb-src configuration ($APTDIR)"
		apt-get "${APT_OPTS[@]}" update -qq || die "apt-get update of $APTDIR/sources.list failed (above)"
		touch "$APTDIR/updated"
	fi
}

# The source version to build: the host's, if the archive still has it.
pick_version() {
	local host have
	host=$(host_version)
	have=$(apt-cache "${APT_OPTS[@]}" showsrc qemu 2>/dev/null | sed -n 's/^Version: //p')
	[ -n "$have" ] || die "the archive's source lists have no qemu (apt-cache ${APT_OPTS[*]} showsrc qemu)"
	if [ -n "$host" ] && grep -qxF "$host" <<< "$have"; then
		echo "$host"
		return
	fi
	[ -z "$host" ] || say "the host's qemu $host is gone from the archive: building the newest"
	sort -V <<< "$have" | tail -n 1
}

# The version the cache was last built for, when nothing can be looked up.
built_version() {
	local d
	for d in "$TOP"/src-*/; do
		[ -d "$d" ] && basename "$d" | sed 's/^src-//'
	done | sort -V | tail -n 1
}

bin_dir() { echo "$TOP/${1//[:~]/_}-$(key)"; }

if [ "${1:-}" = "--print" ]; then
	v=$(host_version)
	[ -n "$v" ] && [ -d "$TOP/src-${v//[:~]/_}" ] || v=$(built_version)
	[ -n "$v" ] || exit 1
	b=$(bin_dir "$v")/qemu-system-aarch64
	[ -x "$b" ] || exit 1
	echo "$b"
	exit 0
fi
[ $# -eq 0 ] || die "usage: scripts/emu/qemu.sh [--print]"

for t in "${NEEDS[@]}"; do
	command -v "$t" > /dev/null || die "$t missing: run scripts/deps.sh"
done

private_apt
VER=$(pick_version)
SAFE=${VER//[:~]/_}
OUT=$(bin_dir "$VER")
if [ -x "$OUT/qemu-system-aarch64" ]; then
	echo "$OUT/qemu-system-aarch64"
	exit 0
fi

SRC=$TOP/src-$SAFE
mkdir -p "$TOP"
exec 9> "$TOP/lock"
flock 9
if [ ! -f "$SRC/.ppkit-unpacked" ]; then
	say "fetching Debian's qemu source $VER"
	rm -rf "$SRC" "$TOP/dl-$SAFE"
	mkdir -p "$TOP/dl-$SAFE"
	(cd "$TOP/dl-$SAFE" && apt-get "${APT_OPTS[@]}" source --download-only -qq "qemu=$VER" > /dev/null) ||
		die "apt-get source qemu=$VER failed (above)"
	# apt checked the files against the archive's signed Sources index;
	# the maintainer's own signature of the .dsc has no key here (gpgv's
	# "No public key" goes to the log)
	(cd "$TOP/dl-$SAFE" && dpkg-source -q --no-copy -x ./*.dsc "$SRC" > "$TOP/unpack.log" 2>&1) ||
		die "dpkg-source -x of qemu $VER failed: $TOP/unpack.log"
	rm -rf "$TOP/dl-$SAFE"
	touch "$SRC/.ppkit-unpacked"
fi

# Our patch on top of Debian's: the one applied last is kept, to take it
# off again when emu/qemu's patch changes.
applied=$SRC/.ppkit-patch
if ! cmp -s "$EMU/virt-mvpp2.patch" "$applied"; then
	if [ -f "$applied" ]; then
		patch -d "$SRC" -p1 -R -s --no-backup-if-mismatch < "$applied" ||
			die "could not take the previous emu patch off $SRC: rm -rf $SRC and run again"
		rm -f "$applied"
	fi
	patch -d "$SRC" -p1 -s --no-backup-if-mismatch < "$EMU/virt-mvpp2.patch" ||
		die "emu/qemu/virt-mvpp2.patch does not apply to qemu $VER"
	cp "$EMU/virt-mvpp2.patch" "$applied"
fi
# the model itself: copied only when it changed, so ninja rebuilds only it
cmp -s "$EMU/mvpp2.c" "$SRC/hw/net/mvpp2.c" || cp "$EMU/mvpp2.c" "$SRC/hw/net/mvpp2.c"

mkdir -p "$OUT"
LOG=$OUT/build.log
t0=$(date +%s)
say "building qemu-system-aarch64 $VER with the PPv2 model ($LOG)"
{
	if [ ! -f "$SRC/build/build.ninja" ] || [ "$(cat "$SRC/build/.ppkit-configure" 2>/dev/null)" != "${CONFIGURE[*]}" ]; then
		rm -rf "$SRC/build"
		mkdir -p "$SRC/build"
		(cd "$SRC/build" && ../configure "${CONFIGURE[@]}")
		echo "${CONFIGURE[*]}" > "$SRC/build/.ppkit-configure"
	fi
	ninja -C "$SRC/build" qemu-system-aarch64
} > "$LOG" 2>&1 || { tail -n 30 "$LOG" >&2; die "the build failed: $LOG"; }
cp "$SRC/build/qemu-system-aarch64" "$OUT/qemu-system-aarch64.new"
mv "$OUT/qemu-system-aarch64.new" "$OUT/qemu-system-aarch64"
say "built in $(( $(date +%s) - t0 )) s: $OUT/qemu-system-aarch64"
# older binaries of this version (an earlier emu/qemu) go
for d in "$TOP/$SAFE"-*; do
	[ "$d" = "$OUT" ] || rm -rf "$d"
done
echo "$OUT/qemu-system-aarch64"
