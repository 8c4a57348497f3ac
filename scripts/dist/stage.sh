#!/bin/bash
# Stage what `make install` and `make dist-board` ship, from what the build
# left: the kernel modules, ppctl and ppctld (stripped), the man pages, bash
# completion, the systemd unit and the example configuration, with
# scripts/install.sh and a MANIFEST.  Builds nothing: the Makefile's targets
# run `make modules tools man` (with ARCH for a board) first.
#
#   scripts/dist/stage.sh ARCH DEST [KMOD]  ARCH: x86_64, arm64 (aarch64), arm (armhf)
#
# Modules: pp_backport and ppsim from KMOD (default kmod/ for x86_64,
# build/kmod-ARCH/ for a board; the Makefile passes its MOD_DIR, e.g.
# build/kmod-arm64-16k-6.12), plus the patched drivers of
# build/drivers/ARCH*/ that `make drivers ARCH=... [KVER=LINE]` built for
# the same kernel (the vermagic's release tells).  DEST is emptied first.
set -euo pipefail
REPO=$(cd "$(dirname "$0")/../.." && pwd)
die() { echo "stage: $*" >&2; exit 1; }
[ $# -eq 2 ] || [ $# -eq 3 ] || die "usage: $0 x86_64|arm64|arm DEST [KMOD]"
case "$1" in
x86_64 | amd64 | x86) t=x86_64 mods=$REPO/kmod bins=$REPO/build/bin strip=strip ;;
arm64 | aarch64) t=arm64 mods=$REPO/build/kmod-arm64 bins=$REPO/build/bin/arm64 strip=aarch64-linux-gnu-strip ;;
arm | armhf) t=arm mods=$REPO/build/kmod-arm bins=$REPO/build/bin/arm strip=arm-linux-gnueabihf-strip ;;
*) die "unknown ARCH '$1': use x86_64, arm64 or arm" ;;
esac
dest=$2
[ -n "${3:-}" ] && mods=$3
version=$(sed -n 's/^PACKAGE_VERSION="\{0,1\}\([^"]*\)"\{0,1\}$/\1/p' "$REPO/dkms.conf")
[ -n "$version" ] || die "no PACKAGE_VERSION in dkms.conf"

ko=("$mods/pool/pp_backport.ko" "$mods/sim/ppsim.ko")
for f in "${ko[@]}"; do
	[ -f "$f" ] || die "$f missing: run 'make modules ARCH=$t'"
done
krel=$(modinfo -F vermagic "${ko[0]}" | cut -d' ' -f1)
for f in "$bins/ppctl" "$bins/ppctld"; do
	[ -x "$f" ] || die "$f missing: run 'make tools ARCH=$t' (ppctld needs prometheus-cpp in the sysroot)"
done
for f in "$REPO/build/man/ppctl.8" "$REPO/build/man/ppctld.8"; do
	[ -f "$f" ] || die "$f missing: run 'make man'"
done

rm -rf "$dest"
mkdir -p "$dest"/{modules,sbin,share/man/man8,share/bash-completion/completions,systemd,etc}
cp "${ko[@]}" "$dest/modules/"
drivers=()
# build/drivers/arm64 (6.1), arm64-6.12, arm64-16k-6.12...: the one built
# for this kernel
for f in "$REPO/build/drivers/$t"/*.ko "$REPO/build/drivers/$t"-*/*.ko; do
	[ -f "$f" ] || continue
	[ "$(basename "$f")" = pp_backport.ko ] && continue
	[ "$(modinfo -F vermagic "$f" | cut -d' ' -f1)" = "$krel" ] || continue
	case " ${drivers[*]} " in *" $(basename "$f" .ko) "*) die "$(basename "$f") built twice for $krel" ;; esac
	cp "$f" "$dest/modules/"
	drivers+=("$(basename "$f" .ko)")
done
for b in ppctl ppctld; do
	"$strip" -o "$dest/sbin/$b" "$bins/$b"
done
cp "$REPO"/build/man/ppctl.8 "$REPO"/build/man/ppctld.8 "$dest/share/man/man8/"
for c in ppctl ppctld; do
	f=$REPO/tools/completion/$c.bash
	[ -f "$f" ] && cp "$f" "$dest/share/bash-completion/completions/$c"
done
cp "$REPO/tools/ppctld/ppctld.service" "$dest/systemd/"
cp "$REPO/tools/ppctld/ppctld.conf" "$dest/etc/"
cp "$REPO/scripts/install.sh" "$dest/install.sh"
cat > "$dest/MANIFEST" <<MAN
name=ppkit
version=$version
arch=$t
kernel=$krel
modules=$(cd "$dest/modules" && ls *.ko | sed 's/\.ko$//' | tr '\n' ' ' | sed 's/ $//')
drivers=${drivers[*]}
git=$(git -C "$REPO" describe --always --dirty 2>/dev/null || echo unknown)
runtime=libstdc++6 libnl-3-200 libnl-genl-3-200 libbpf1 libelf1 zlib1g libcivetweb1
MAN
echo "stage: $dest: ppkit $version for $t, kernel $krel, modules: $(sed -n 's/^modules=//p' "$dest/MANIFEST")"
