#!/bin/bash
# Install ppkit's kernel modules through DKMS, so that they are rebuilt for
# every kernel (see Documentation/dkms.rst).
#
#   scripts/dkms.sh install [--kernel KREL]... [-n]
#   scripts/dkms.sh uninstall [-n]
#   scripts/dkms.sh status | version
#
# install    copies the module sources (kmod/ and dkms.conf, nothing built) to
#            /usr/src/ppkit-VERSION, then dkms add, dkms build -k KREL and dkms
#            install -k KREL, for each --kernel KREL or by default for every
#            installed kernel that has its headers (/lib/modules/KREL/build).
#            Kernels installed later get the modules from dkms's kernel hook
#            (AUTOINSTALL).  Again with the same version: rebuilds from the
#            tree's current sources.  Another ppkit version in DKMS is removed
#            first.
# uninstall  dkms remove ppkit/VERSION --all, and removes /usr/src/ppkit-VERSION.
# status     dkms status of ppkit.
# version    prints VERSION (PACKAGE_VERSION in dkms.conf, its one place).
# -n, --dry-run  print the steps, change nothing (needs no root).
# install and uninstall need root.  DKMS overrides the dkms command.
set -euo pipefail
REPO=$(cd "$(dirname "$0")/.." && pwd)
CONF=$REPO/dkms.conf
NAME=ppkit
SRCROOT=/usr/src

die() { echo "dkms.sh: $*" >&2; exit 1; }
usage() { sed -n '2,/^set -euo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'; exit "${1:-1}"; }

[ -f "$CONF" ] || die "$CONF missing: run from a ppkit tree"
VER=$(sed -n 's/^PACKAGE_VERSION="\{0,1\}\([^"]*\)"\{0,1\}$/\1/p' "$CONF")
[ -n "$VER" ] || die "no PACKAGE_VERSION in $CONF"
SRC=$SRCROOT/$NAME-$VER

[ $# -ge 1 ] || usage 1
CMD=$1
shift
KERNELS=() DRY=0
while [ $# -gt 0 ]; do
	case "$1" in
	-k|--kernel)
		[ $# -ge 2 ] || die "$1 needs a kernel release (e.g. $(uname -r))"
		KERNELS+=("$2"); shift 2 ;;
	-n|--dry-run) DRY=1; shift ;;
	-h|--help) usage 0 ;;
	*) die "unknown option '$1' (see scripts/dkms.sh --help)" ;;
	esac
done
case "$CMD" in
install) ;;
uninstall|status|version) [ ${#KERNELS[@]} -eq 0 ] || die "--kernel is for install only" ;;
-h|--help|help) usage 0 ;;
*) die "unknown command '$CMD': install, uninstall, status or version" ;;
esac
[ "$CMD" = version ] && { echo "$VER"; exit 0; }

DKMS=${DKMS:-$(command -v dkms || echo /usr/sbin/dkms)}
[ -x "$DKMS" ] || die "dkms is not installed: apt-get install dkms (or run scripts/deps.sh)"

# run CMD...: print it, and run it unless --dry-run.
run() {
	echo "+ $*"
	[ "$DRY" = 1 ] || "$@"
}
# The versions of ppkit that DKMS knows, one a line.
versions() { "$DKMS" status -m "$NAME" 2>/dev/null | sed -n "s|^$NAME/\([^,:]*\)[,:].*|\1|p" | sort -u; }
# The kernels ppkit/VER is built for, one a line.
built_for() { "$DKMS" status -m "$NAME" -v "$VER" 2>/dev/null | sed -n "s|^$NAME/$VER, \([^,]*\),.*|\1|p"; }
has_headers() { [ -f "/lib/modules/$1/build/Makefile" ]; }

if [ "$CMD" = status ]; then
	out=$("$DKMS" status -m "$NAME")
	echo "${out:-$NAME: not in DKMS}"
	exit 0
fi
[ "$DRY" = 1 ] || [ "$(id -u)" = 0 ] || die "$CMD needs root: sudo scripts/dkms.sh $CMD"

if [ "$CMD" = uninstall ]; then
	if versions | grep -Fxq "$VER"; then
		run "$DKMS" remove "$NAME/$VER" --all
	else
		echo "dkms.sh: $NAME/$VER is not in DKMS"
	fi
	[ ! -e "$SRC" ] || run rm -rf "$SRC"
	exit 0
fi

# install: which kernels.
if [ ${#KERNELS[@]} -eq 0 ]; then
	for d in /lib/modules/*/; do
		k=$(basename "$d")
		[ -d "$d/kernel" ] || continue		# leftovers of a removed kernel
		if has_headers "$k"; then
			KERNELS+=("$k")
		else
			echo "dkms.sh: skipping kernel $k: no headers (apt-get install linux-headers-$k to build for it)" >&2
		fi
	done
	[ ${#KERNELS[@]} -gt 0 ] || die "no installed kernel has its headers: apt-get install linux-headers-$(uname -r)"
else
	for k in "${KERNELS[@]}"; do
		[ -d "/lib/modules/$k" ] || die "kernel $k is not installed (no /lib/modules/$k): install linux-image-$k, or pick one of: $(cd /lib/modules && echo *)"
		has_headers "$k" || die "no headers for kernel $k (/lib/modules/$k/build): apt-get install linux-headers-$k"
	done
fi
echo "dkms.sh: $NAME $VER for kernel(s): ${KERNELS[*]}"

for v in $(versions); do
	[ "$v" = "$VER" ] && continue
	echo "dkms.sh: removing $NAME/$v, replaced by $VER"
	run "$DKMS" remove "$NAME/$v" --all
	[ ! -e "$SRCROOT/$NAME-$v" ] || run rm -rf "$SRCROOT/$NAME-$v"
done

# The sources, without anything an earlier build left in kmod/.
echo "+ copy kmod/ and dkms.conf to $SRC"
if [ "$DRY" = 0 ]; then
	tmp=$(mktemp -d "$SRCROOT/.$NAME-$VER.XXXXXX")
	trap 'rm -rf "$tmp"' EXIT
	tar -C "$REPO" --exclude-vcs --exclude='*.o' --exclude='*.ko' --exclude='*.ko.*' \
		--exclude='*.mod' --exclude='*.mod.c' --exclude='*.cmd' --exclude='*.order' \
		--exclude='*.symvers' --exclude='*.a' --exclude='*.d' --exclude='*.dwo' \
		--exclude='.tmp_versions' --exclude='.cache.mk' -cf - kmod | tar -C "$tmp" -xf -
	cp "$CONF" "$tmp/dkms.conf"
	chmod 755 "$tmp"
	rm -rf "$SRC"
	mv "$tmp" "$SRC"
	trap - EXIT
fi

if versions | grep -Fxq "$VER"; then
	echo "dkms.sh: $NAME/$VER already added"
else
	run "$DKMS" add "$NAME/$VER"
fi
for k in "${KERNELS[@]}"; do
	# Built before (for this kernel, from older sources): build it again.
	if built_for | grep -Fxq "$k"; then
		run "$DKMS" unbuild "$NAME/$VER" -k "$k"
	fi
	run "$DKMS" build "$NAME/$VER" -k "$k" ||
		die "build for $k failed: see /var/lib/dkms/$NAME/$VER/build/make.log"
	run "$DKMS" install "$NAME/$VER" -k "$k"
	if compgen -G "/lib/modules/$k/extra/ppkit/*.ko" > /dev/null; then
		echo "dkms.sh: note: /lib/modules/$k/extra/ppkit (make install) holds ppkit modules too;" \
			"modprobe takes DKMS's (updates/ comes first); make uninstall removes the others" >&2
	fi
done
[ "$DRY" = 1 ] || "$DKMS" status -m "$NAME"
