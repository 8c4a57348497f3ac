#!/bin/bash
# The emulated board's root filesystem: Debian 12 arm64, as a board owner has it.
#
#   scripts/boards/image.sh [--print] [arm64]
#
# debootstrap --arch=arm64 (second stage under qemu-user-static through
# binfmt_misc), then apt inside the root installs what a board owner installs:
# openssh-server, python3, iperf3, ethtool and the runtime libraries of ppctl
# and ppctld (the tarball's MANIFEST), and Debian's arm64 kernel package of the
# lab (the one `make dist-board ARCH=arm64` builds for, from
# /var/cache/ppkit/debs) with its initramfs.  The board logs in root with a key
# made here, brings up its first interface with DHCP (systemd-networkd) and
# runs sshd.  The result is cached as a raw ext4 image under
# /var/cache/ppkit/board-arm64/KEY/ (KEY: a hash of this script and the
# kernel package), with the kernel, initramfs and ssh key beside it; a second
# run prints the directory and does nothing else.  About 5 minutes here.  --print: the directory
# only, or exit 1 if it is not built.
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
REV=1
PKGS="openssh-server python3 iperf3 ethtool iproute2 kmod procps systemd-sysv udev"
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

log "debootstrap bookworm arm64 from $mirror"
debootstrap --arch=arm64 --foreign bookworm "$rootfs" "$mirror" >"$work/debootstrap.log" 2>&1 ||
	{ tail -20 "$work/debootstrap.log" >&2; exit 1; }
log "second stage under qemu-aarch64"
chroot "$rootfs" /debootstrap/debootstrap --second-stage >"$work/second.log" 2>&1 ||
	{ tail -20 "$rootfs/debootstrap/debootstrap.log" "$work/second.log" >&2; exit 1; }

mount -t proc proc "$rootfs/proc"
mount -t sysfs sys "$rootfs/sys"
mount --bind /dev "$rootfs/dev"
mount --bind /dev/pts "$rootfs/dev/pts"
printf 'deb %s bookworm main\n' "$mirror" > "$rootfs/etc/apt/sources.list"
printf '#!/bin/sh\nexit 101\n' > "$rootfs/usr/sbin/policy-rc.d"
chmod 755 "$rootfs/usr/sbin/policy-rc.d"
cp "$kdeb" "$rootfs/tmp/"
log "apt install in the board"
in_board() { chroot "$rootfs" env DEBIAN_FRONTEND=noninteractive LC_ALL=C "$@"; }
in_board apt-get update >"$work/apt.log" 2>&1 || { tail -20 "$work/apt.log" >&2; exit 1; }
# The kernel last, on its own: its initramfs is made once, not again by the
# triggers of packages configured after it.
# shellcheck disable=SC2086
in_board apt-get install -y --no-install-recommends $PKGS $RUNTIME initramfs-tools \
	>>"$work/apt.log" 2>&1 || { tail -20 "$work/apt.log" >&2; exit 1; }
in_board apt-get install -y --no-install-recommends "/tmp/$(basename "$kdeb")" >>"$work/apt.log" 2>&1 ||
	{ tail -20 "$work/apt.log" >&2; exit 1; }
in_board apt-get clean
rm -f "$rootfs/tmp/$(basename "$kdeb")" "$rootfs/usr/sbin/policy-rc.d"

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
for m in dev/pts dev proc sys; do umount -l "$rootfs/$m"; done
mkfs.ext4 -q -L board -d "$rootfs" "$work/out/root.img" 3G
rm -rf "$out"
mkdir -p "$(dirname "$out")"
mv "$work/out" "$out"
touch "$out/done"
log "done: $out"
echo "$out"
