#!/bin/bash
# Build the lab's initramfs: static busybox, the virtio/9p/overlay modules of the
# guest kernel (and virtio-blk/ext4 for `run --disk`), and scripts/lab/init.
# Cached: rebuilt only when an input changes.
#
#   scripts/lab/mkinitrd.sh KVER OUT.cpio.gz [MODROOT [IMAGE]]
# MODROOT holds lib/modules/KVER (default /), IMAGE is the kernel (default
# /boot/vmlinuz-KVER): a newer IMAGE rebuilds the initramfs.
set -euo pipefail
KVER=$1 OUT=$2 MODROOT=${3:-/} IMAGE=${4:-/boot/vmlinuz-$1}
HERE=$(cd "$(dirname "$0")" && pwd)
BB=/bin/busybox
[ -x "$BB" ] && file -L "$BB" | grep -q 'statically linked' || {
	echo "lab: static busybox missing (busybox-static); run scripts/deps.sh" >&2; exit 1; }

if [ -f "$OUT" ] && [ "$OUT" -nt "$HERE/init" ] && [ "$OUT" -nt "$0" ] &&
   [ "$OUT" -nt "$IMAGE" ]; then
	exit 0
fi

D=$(mktemp -d)
trap 'rm -rf "$D"' EXIT
mkdir -p "$D"/{bin,sbin,proc,sys,dev,mnt,results,lib/modules}
cp "$BB" "$D/bin/busybox"
for a in $("$BB" --list); do
	[ "$a" = busybox ] || ln -s busybox "$D/bin/$a"
done
# Modules in load order, dependencies first, as modprobe resolves them:
# /lib/modules/order on every boot, /lib/modules/order-disk (virtio-blk and
# ext4, the writable layer of `run --disk`) only when a disk is attached.
# add_modules LIST WHAT MODULE...: append to LIST what is not in the initramfs yet.
add_modules() {
	local list=$1 what=$2 deps line b
	shift 2
	: > "$list"
	deps=$(modprobe -d "$MODROOT" -S "$KVER" --show-depends -a "$@" 2>&1) || {
		echo "lab: cannot resolve the guest's $what modules for $KVER:" >&2
		echo "$deps" >&2
		exit 1
	}
	for line in $(echo "$deps" | awk '$1 == "insmod" { print $2 }'); do
		b=$(basename "$line")
		b=${b%.xz}
		[ -e "$D/lib/modules/$b" ] && continue
		case "$line" in
		*.ko.xz) xz -dc "$line" > "$D/lib/modules/$b" ;;
		*) cp "$line" "$D/lib/modules/$b" ;;
		esac
		echo "$b" >> "$list"
	done
}
add_modules "$D/lib/modules/order" 9p/virtio virtio_pci 9pnet_virtio 9p overlay
add_modules "$D/lib/modules/order-disk" virtio-blk/ext4 virtio_blk ext4
cp "$HERE/init" "$D/init"
chmod +x "$D/init"
mkdir -p "$(dirname "$OUT")"
# A private temporary: several lab runs may rebuild the same image at once.
(cd "$D" && find . | cpio -o -H newc --quiet | gzip -1 > "$OUT.tmp.$$")
mv "$OUT.tmp.$$" "$OUT"
