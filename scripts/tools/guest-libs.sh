#!/bin/bash
# Copy what a cross-built dynamic binary needs to run into a guest root:
# its dynamic loader (PT_INTERP) and every shared library it needs, recursively
# (the NEEDED entries of <triplet>-readelf -d), so that the binary runs in a
# busybox initramfs built from DESTROOT (which has no ld.so.cache).
#
#   scripts/tools/guest-libs.sh ARCH BINARY DESTROOT
#   scripts/tools/guest-libs.sh arm build/bin/arm/ppctl /tmp/root
#
# ARCH: arm (or armhf), arm64 (or aarch64), x86_64 (or amd64).
# Libraries are looked up, in that order, in /lib/<triplet>, /usr/lib/<triplet>
# (Debian multiarch, `apt-get install libfoo:armhf`) and /usr/<triplet>/lib
# (the cross toolchain's libc6-<arch>-cross, libstdc++6-<arch>-cross); only
# files of the binary's own ELF class and machine are taken.  Each one is copied
# (symlinks resolved) under its soname to the same path in DESTROOT, except
# that /usr/<triplet>/lib/X goes to /lib/<triplet>/X, where the target's
# loader looks.  The loader is copied to DESTROOT at the binary's PT_INTERP,
# e.g. /lib/ld-linux-armhf.so.3.  The binary itself is not copied.
# SYSROOT=DIR (scripts/tools/sysroot.sh) is searched first, as DIR/lib/<triplet>
# and DIR/usr/lib/<triplet>; its files land at the same paths without DIR.
# Prints each file copied; exits non-zero if a library or the loader is missing.
set -euo pipefail

die() { echo "guest-libs: $*" >&2; exit 1; }

[ $# -eq 3 ] || die "usage: $0 ARCH BINARY DESTROOT"
ARCH=$1 BIN=$2 DEST=$3

case "$ARCH" in
arm | armhf) TRIPLET=arm-linux-gnueabihf MACHINE=ARM ;;
arm64 | aarch64) TRIPLET=aarch64-linux-gnu MACHINE=AArch64 ;;
x86_64 | amd64) TRIPLET=x86_64-linux-gnu MACHINE="Advanced Micro Devices X86-64" ;;
*) die "unknown ARCH '$ARCH': use arm (armhf), arm64 or x86_64" ;;
esac
READELF=$TRIPLET-readelf
command -v "$READELF" >/dev/null || die "$READELF missing (binutils-$TRIPLET)"
[ -f "$BIN" ] || die "no such file: $BIN"

# "ELF32 ARM": the ELF class and machine of a file, empty if it is not ELF.
elf_id() {
	LC_ALL=C "$READELF" -h "$1" 2>/dev/null | awk -F: '
		$1 ~ /^ *Class$/ { sub(/^ */, "", $2); c = $2 }
		$1 ~ /^ *Machine$/ { sub(/^ */, "", $2); m = $2 }
		END { if (c != "") print c, m }'
}

WANT=$(elf_id "$BIN")
[ -n "$WANT" ] || die "$BIN is not an ELF file"
[ "${WANT#* }" = "$MACHINE" ] || die "$BIN is $WANT, not $MACHINE (ARCH=$ARCH)"
mkdir -p "$DEST"
DEST=$(realpath "$DEST")

# cp -L SRC to DESTROOT/DST, refusing to write outside DESTROOT (through a
# symlink in the guest root that points back into the host).
put() {
	local src=$1 dst=$DEST$2 dir
	dir=$(dirname "$dst")
	mkdir -p "$dir"
	case "$(realpath "$dir")/" in
	"$DEST"/*) ;;
	*) die "$dir leads out of $DEST" ;;
	esac
	cp -fL "$src" "$dst"
	echo "guest-libs: $2 <- $(realpath "$src")"
}

# The loader: PT_INTERP, as the guest will open it.
INTERP=$(LC_ALL=C "$READELF" -lW "$BIN" | sed -n 's/.*Requesting program interpreter: \(.*\)]$/\1/p')
if [ -z "$INTERP" ]; then
	echo "guest-libs: $BIN has no PT_INTERP (static): nothing to copy"
	exit 0
fi
src=''
for cand in "$INTERP" /lib/$TRIPLET/"${INTERP##*/}" /usr/lib/$TRIPLET/"${INTERP##*/}" \
	    /usr/$TRIPLET/lib/"${INTERP##*/}"; do
	if [ -e "$cand" ] && [ "$(elf_id "$cand")" = "$WANT" ]; then src=$cand; break; fi
done
[ -n "$src" ] || die "loader $INTERP for $TRIPLET not found (libc6:<arch> or libc6-<arch>-cross)"
put "$src" "$INTERP"

# The libraries, breadth first from the binary, each soname once.
declare -A seen=(["${INTERP##*/}"]=1)	# NEEDED by libc: the loader already mapped
queue=("$BIN")
missing=()
while [ ${#queue[@]} -gt 0 ]; do
	f=${queue[0]}
	queue=("${queue[@]:1}")
	for so in $(LC_ALL=C "$READELF" -dW "$f" | sed -n 's/.*(NEEDED).*\[\(.*\)\]$/\1/p'); do
		[ -n "${seen[$so]:-}" ] && continue
		seen[$so]=1
		src='' dst=''
		for dir in ${SYSROOT:+$SYSROOT/lib/$TRIPLET $SYSROOT/usr/lib/$TRIPLET} \
			   /lib/$TRIPLET /usr/lib/$TRIPLET /usr/$TRIPLET/lib; do
			if [ -e "$dir/$so" ] && [ "$(elf_id "$dir/$so")" = "$WANT" ]; then
				src=$dir/$so
				case "$dir" in
				"/usr/$TRIPLET/lib") dst=/lib/$TRIPLET/$so ;;
				"${SYSROOT:-/nonexistent}"/*) dst=${src#"$SYSROOT"} ;;
				*) dst=$src ;;
				esac
				break
			fi
		done
		if [ -z "$src" ]; then
			missing+=("$so (needed by ${f##*/})")
			continue
		fi
		put "$src" "$dst"
		queue+=("$src")
	done
done
[ ${#missing[@]} -eq 0 ] || die "not found for $TRIPLET: ${missing[*]}"
