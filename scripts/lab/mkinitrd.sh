#!/bin/bash
# Build the lab's initramfs: static busybox, the virtio/9p/overlay modules of the
# guest kernel, and scripts/lab/init. Cached: rebuilt only when an input changes.
#
#   scripts/lab/mkinitrd.sh KVER OUT.cpio.gz
set -euo pipefail
KVER=$1 OUT=$2
HERE=$(cd "$(dirname "$0")" && pwd)
BB=/bin/busybox
[ -x "$BB" ] && file -L "$BB" | grep -q 'statically linked' || {
	echo "lab: static busybox missing (busybox-static); run scripts/deps.sh" >&2; exit 1; }

if [ -f "$OUT" ] && [ "$OUT" -nt "$HERE/init" ] && [ "$OUT" -nt "$0" ] &&
   [ "$OUT" -nt "/boot/vmlinuz-$KVER" ]; then
	exit 0
fi

D=$(mktemp -d)
trap 'rm -rf "$D"' EXIT
mkdir -p "$D"/{bin,sbin,proc,sys,dev,mnt,results,lib/modules}
cp "$BB" "$D/bin/busybox"
for a in $("$BB" --list); do
	[ "$a" = busybox ] || ln -s busybox "$D/bin/$a"
done
# Modules in load order, dependencies first, as modprobe resolves them.
: > "$D/lib/modules/order"
DEPS=$(modprobe -S "$KVER" --show-depends -a virtio_pci 9pnet_virtio 9p overlay 2>&1) || {
	echo "lab: cannot resolve the guest's 9p/virtio modules for $KVER:" >&2
	echo "$DEPS" >&2
	exit 1
}
for line in $(echo "$DEPS" | awk '$1 == "insmod" { print $2 }'); do
	b=$(basename "$line")
	grep -qx "$b" "$D/lib/modules/order" && continue
	case "$line" in
	*.ko.xz) xz -dc "$line" > "$D/lib/modules/${b%.xz}"; b=${b%.xz} ;;
	*) cp "$line" "$D/lib/modules/$b" ;;
	esac
	echo "$b" >> "$D/lib/modules/order"
done
cp "$HERE/init" "$D/init"
chmod +x "$D/init"
mkdir -p "$(dirname "$OUT")"
(cd "$D" && find . | cpio -o -H newc --quiet | gzip -1 > "$OUT.tmp")
mv "$OUT.tmp" "$OUT"
