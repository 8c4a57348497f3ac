#!/bin/bash
# The emulated board's root filesystem: Debian 12 arm64, as a board owner has it.
#
#   scripts/boards/image.sh [--print] [arm64]
#
# mmdebstrap --arch=arm64 (maintainer scripts under qemu-user-static through
# binfmt_misc) installs, in one apt run, what a board owner installs:
# openssh-server, python3, iperf3, ethtool and the runtime libraries of ppctl
# and ppctld (the tarball's MANIFEST); then dpkg -i Debian's arm64 kernel
# package of the lab (the one `make dist-board ARCH=arm64` builds for, from
# /var/cache/ppkit/debs), whose postinst makes the initramfs (the modules the
# board needs to mount its root, not all of them).  Documentation, manual
# pages and translations are not installed.  The board logs in root with a key
# made here, brings up its first interface with DHCP (systemd-networkd) and
# runs sshd.  The result is cached as a raw ext4 image under
# /var/cache/ppkit/board-arm64/KEY/ (KEY: a hash of this script's REV, the
# package lists and the kernel package), with the kernel, initramfs and ssh
# key beside it; a second run prints the directory and does nothing else.
# --print: the directory only, or exit 1 if it is not built.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
CACHE=${PPKIT_CACHE:-/var/cache/ppkit}
print=
if [ "${1:-}" = --print ]; then
	print=1
	shift
fi
arch=${1:-arm64}
[ "$arch" = arm64 ] || { echo "image.sh: only arm64 boards are emulated, not $arch" >&2; exit 2; }

read -r krel _ < <("$ROOT/scripts/drivers/prepare.sh" --print arm64)
kdeb=
for f in "$CACHE"/debs/linux-image-"$krel"_*_arm64.deb; do
	[ ! -e "$f" ] || kdeb=$f
done
if [ -z "$kdeb" ]; then
	echo "image.sh: no linux-image-$krel .deb in $CACHE/debs: run scripts/deps.sh" >&2
	exit 1
fi
# What the image is made of: a change to it (packages, configuration) bumps REV.
REV=2
PKGS="openssh-server python3 iperf3 ethtool iproute2 kmod procps systemd-sysv udev dbus netbase"
RUNTIME=$(sed -n 's/^runtime=//p' "$ROOT/scripts/dist/stage.sh")
key=$(echo "$REV $PKGS $RUNTIME $(basename "$kdeb")" | sha256sum | cut -c1-16)
out=$CACHE/board-arm64/$key
if [ -f "$out/done" ]; then
	echo "$out"
	exit 0
fi
[ -z "$print" ] || exit 1

mirror=$(sed -n 's/^URIs: *\(http[^ ]*\/debian\)$/\1/p' /etc/apt/sources.list.d/*.sources 2>/dev/null | head -n1)
[ -n "$mirror" ] || mirror=http://deb.debian.org/debian

# binfmt_misc with qemu-aarch64 (F: the interpreter is opened now, so it works
# inside the chroot).
[ -e /proc/sys/fs/binfmt_misc/register ] ||
	mount -t binfmt_misc binfmt_misc /proc/sys/fs/binfmt_misc
if [ ! -e /proc/sys/fs/binfmt_misc/qemu-aarch64 ]; then
	conf=/usr/lib/binfmt.d/qemu-aarch64.conf
	[ -f "$conf" ] || { echo "image.sh: $conf missing: run scripts/deps.sh (qemu-user-static)" >&2; exit 1; }
	grep -v '^#' "$conf" > /proc/sys/fs/binfmt_misc/register
fi

mkdir -p "$CACHE/board-arm64"
work=$(mktemp -d "$CACHE/board-arm64/build.XXXXXX")
rootfs=$work/root
cleanup() {
	for m in dev/pts dev proc sys; do
		if mountpoint -q "$rootfs/$m" 2>/dev/null; then umount -l "$rootfs/$m"; fi
	done
	# Never remove through a bind mount of the host's /dev.
	if grep -q " $rootfs/" /proc/mounts; then
		echo "image.sh: $rootfs still has mounts: left in place" >&2
	else
		rm -rf "$work"
	fi
}
trap cleanup EXIT

log() { printf 'image.sh: %s (%ds)\n' "$*" "$SECONDS" >&2; }

# The initramfs of a board on -M virt: its root is ext4 on virtio-blk-pci.
# Debian's default (MODULES=most) packs every storage driver and compresses
# them under emulation; the list is what this board needs.
# shellcheck disable=SC2016 # $1 is the hook's, expanded by mmdebstrap
initramfs_hook='mkdir -p "$1/etc/initramfs-tools/conf.d" &&
	echo MODULES=list > "$1/etc/initramfs-tools/conf.d/ppkit-board" &&
	printf "%s\n" virtio_pci virtio_blk ext4 >> "$1/etc/initramfs-tools/modules"'
log "mmdebstrap bookworm arm64 from $mirror"
# shellcheck disable=SC2086
if ! mmdebstrap --mode=root --arch=arm64 --variant=apt --format=directory \
	--dpkgopt='path-exclude=/usr/share/doc/*' --dpkgopt='path-exclude=/usr/share/man/*' \
	--dpkgopt='path-exclude=/usr/share/info/*' --dpkgopt='path-exclude=/usr/share/locale/*' \
	--dpkgopt='path-include=/usr/share/locale/locale.alias' \
	--include="$(echo $PKGS $RUNTIME linux-base initramfs-tools | tr ' ' ,)" \
	--customize-hook="$initramfs_hook" \
	--customize-hook="copy-in $kdeb /tmp" \
	--customize-hook="chroot \"\$1\" dpkg -i /tmp/$(basename "$kdeb")" \
	--customize-hook="rm -f \"\$1/tmp/$(basename "$kdeb")\"" \
	bookworm "$rootfs" "deb $mirror bookworm main" >"$work/mmdebstrap.log" 2>&1; then
	tail -30 "$work/mmdebstrap.log" >&2
	exit 1
fi

log "configure"
echo board > "$rootfs/etc/hostname"
printf '127.0.0.1 localhost\n127.0.1.1 board\n' > "$rootfs/etc/hosts"
printf '/dev/vda / ext4 defaults 0 1\n' > "$rootfs/etc/fstab"
mkdir -p "$rootfs/etc/systemd/network"
# eth0 (net.ifnames=0) is the board's uplink; the others are left to the tests.
printf '[Match]\nName=eth0\n\n[Network]\nDHCP=ipv4\n' > "$rootfs/etc/systemd/network/50-dhcp.network"
ln -sf /lib/systemd/system/systemd-networkd.service \
	"$rootfs/etc/systemd/system/multi-user.target.wants/systemd-networkd.service"
ln -sf /lib/systemd/system/serial-getty@.service \
	"$rootfs/etc/systemd/system/getty.target.wants/serial-getty@ttyAMA0.service"
sed -i 's/^root:[^:]*:/root::/' "$rootfs/etc/shadow"
mkdir -p "$work/out"
ssh-keygen -q -t ed25519 -N '' -C ppkit-board -f "$work/out/id_ed25519"
install -d -m 700 "$rootfs/root/.ssh"
install -m 600 "$work/out/id_ed25519.pub" "$rootfs/root/.ssh/authorized_keys"
cp "$rootfs/boot/vmlinuz-$krel" "$rootfs/boot/initrd.img-$krel" "$work/out/"
echo "$krel" > "$work/out/krel"

log "ext4 image"
mkfs.ext4 -q -L board -d "$rootfs" "$work/out/root.img" 3G
rm -rf "$out"
mkdir -p "$(dirname "$out")"
mv "$work/out" "$out"
touch "$out/done"
log "done: $out"
echo "$out"
