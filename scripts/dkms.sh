#!/bin/bash
# Install ppkit's kernel modules through DKMS, so that they are rebuilt for
# every kernel (see Documentation/dkms.rst).
#
#   scripts/dkms.sh install [--kernel KREL]... [-n]
#   scripts/dkms.sh tarball --kernel KREL[=DIR]... [--output FILE] [-n]
#   scripts/dkms.sh install --tarball FILE [--kernel KREL]... [-n]
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
# tarball    builds the modules with DKMS for each --kernel KREL (its headers
#            must be here, in /lib/modules/KREL/build, or in DIR with
#            --kernel KREL=DIR: a kernel not installed here) in a private DKMS
#            tree, changing nothing of this machine's DKMS, and writes them as
#            a binaries-only DKMS tarball (dkms mktarball --binaries-only), by
#            default build/dkms/ppkit-VERSION-dkms-bin.tar.gz: for machines of
#            the same kernel(s) that have no compiler or headers.
# install --tarball FILE
#            installs such a tarball: dkms ldtarball, then dkms install -k KREL
#            for each kernel it holds (or each --kernel KREL).  Nothing is
#            built; a kernel installed later gets nothing (no sources).
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
KERNELS=() DRY=0 TARBALL="" OUTPUT=""
while [ $# -gt 0 ]; do
	case "$1" in
	-k|--kernel)
		[ $# -ge 2 ] || die "$1 needs a kernel release (e.g. $(uname -r))"
		KERNELS+=("$2"); shift 2 ;;
	--tarball)
		[ $# -ge 2 ] || die "$1 needs a file (made by scripts/dkms.sh tarball)"
		TARBALL=$2; shift 2 ;;
	-o|--output)
		[ $# -ge 2 ] || die "$1 needs a file name"
		OUTPUT=$2; shift 2 ;;
	-n|--dry-run) DRY=1; shift ;;
	-h|--help) usage 0 ;;
	*) die "unknown option '$1' (see scripts/dkms.sh --help)" ;;
	esac
done
case "$CMD" in
install) [ -z "$OUTPUT" ] || die "--output is for tarball only" ;;
tarball)
	[ -z "$TARBALL" ] || die "--tarball is for install only"
	[ ${#KERNELS[@]} -gt 0 ] || die "tarball needs --kernel KREL (e.g. $(uname -r)): which kernel to build for"
	;;
uninstall|status|version)
	[ ${#KERNELS[@]} -eq 0 ] || die "--kernel is for install and tarball only"
	[ -z "$TARBALL$OUTPUT" ] || die "--tarball and --output are for install and tarball only"
	;;
-h|--help|help) usage 0 ;;
*) die "unknown command '$CMD': install, tarball, uninstall, status or version" ;;
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

# copy_sources DIR: kmod/ and dkms.conf into the new directory DIR, without
# anything an earlier build left in kmod/.
copy_sources() {
	mkdir -p "$1"
	tar -C "$REPO" --exclude-vcs --exclude='*.o' --exclude='*.ko' --exclude='*.ko.*' \
		--exclude='*.mod' --exclude='*.mod.c' --exclude='*.cmd' --exclude='*.order' \
		--exclude='*.symvers' --exclude='*.a' --exclude='*.d' --exclude='*.dwo' \
		--exclude='.tmp_versions' --exclude='.cache.mk' -cf - kmod | tar -C "$1" -xf -
	cp "$CONF" "$1/dkms.conf"
	chmod 755 "$1"
}
# check_kernels: each --kernel is installed here and has its headers; for
# tarball, KREL=DIR names headers (a kernel build tree) outside /lib/modules.
check_kernels() {
	local k d
	for k in "${KERNELS[@]}"; do
		if [ "$k" != "${k%%=*}" ]; then
			[ "$CMD" = tarball ] || die "--kernel ${k%%=*}=DIR is for tarball only: install puts the modules in /lib/modules/${k%%=*}, whose build link must lead to the headers"
			d=${k#*=} k=${k%%=*}
			[ -n "$k" ] && [ -f "$d/Makefile" ] && [ -f "$d/.config" ] ||
				die "--kernel $k=$d: no kernel build tree (Makefile and .config) in '$d'"
			continue
		fi
		[ -d "/lib/modules/$k" ] || die "kernel $k is not installed (no /lib/modules/$k): install linux-image-$k, or pick one of: $(cd /lib/modules && echo *)$([ "$CMD" != tarball ] || echo "; or name its headers: --kernel $k=/path/to/its/build/tree")"
		has_headers "$k" || die "no headers for kernel $k (/lib/modules/$k/build): apt-get install linux-headers-$k"
	done
}

if [ "$CMD" = status ]; then
	out=$("$DKMS" status -m "$NAME")
	echo "${out:-$NAME: not in DKMS}"
	exit 0
fi

if [ "$CMD" = tarball ]; then
	check_kernels
	OUTPUT=${OUTPUT:-$REPO/build/dkms/$NAME-$VER-dkms-bin.tar.gz}
	case "$OUTPUT" in /*) ;; *) OUTPUT=$PWD/$OUTPUT ;; esac
	echo "dkms.sh: $NAME $VER for kernel(s) ${KERNELS[*]%%=*} into $OUTPUT"
	[ "$DRY" = 0 ] || { echo "+ (a private DKMS tree: dkms add, build -k KREL, mktarball --binaries-only)"; exit 0; }
	priv=$(mktemp -d "${TMPDIR:-/tmp}/ppkit-dkms.XXXXXX")
	trap 'rm -rf "$priv"' EXIT
	copy_sources "$priv/src/$NAME-$VER"
	mkdir -p "$priv/tree" "$priv/inst"
	PD=("$DKMS" --dkmstree "$priv/tree" --sourcetree "$priv/src" --installtree "$priv/inst")
	run "${PD[@]}" add "$NAME/$VER" > /dev/null || die "dkms add failed"
	karg=()
	for k in "${KERNELS[@]}"; do
		d=
		if [ "$k" != "${k%%=*}" ]; then
			d=${k#*=} k=${k%%=*}
		fi
		# Headers elsewhere: dkms --kernelsourcedir.  DKMS looks for the
		# signing tool in /lib/modules/KREL/build only (or Debian's
		# /usr/lib/linux-kbuild-X.Y): name the tree's own (its sign_file,
		# read from the environment as from /etc/dkms/framework.conf).
		if [ -n "$d" ]; then
			sf=
			[ -x "$d/scripts/sign-file" ] && sf=$d/scripts/sign-file
			run env ${sf:+sign_file="$sf"} "${PD[@]}" build "$NAME/$VER" -k "$k" --kernelsourcedir "$d"
		else
			run "${PD[@]}" build "$NAME/$VER" -k "$k"
		fi || {
			sed 's/^/    make.log: /' "$priv/tree/$NAME/$VER/build/make.log" 2>/dev/null | tail -n 40 >&2
			die "build for $k failed (make.log above)"
		}
		# A kernel that checks signatures: say when DKMS could not sign
		# (sign-file missing, or it did not run: another release's tool may
		# need that release's libcrypto, e.g. 5.10's libssl1.1).
		if grep -qx 'CONFIG_MODULE_SIG=y' "${d:-/lib/modules/$k/build}/.config" 2>/dev/null; then
			unsigned=
			for m in "$priv/tree/$NAME/$VER/$k"/*/module/*.ko*; do
				[ -n "$(modinfo -F signer "$m" 2>/dev/null)" ] || unsigned+=" $(basename "$m")"
			done
			[ -z "$unsigned" ] ||
				echo "dkms.sh: note: not signed for $k (see DKMS's 'Sign command' above):$unsigned" >&2
		fi
		karg+=(-k "$k")
	done
	mkdir -p "$(dirname "$OUTPUT")"
	# One dkms mktarball per kernel, merged: dkms 3.0's mktarball packs the
	# first kernel only when given several (its loop's variables are
	# read-only: "local: intree_module_dir: readonly variable";
	# github.com/dkms-project/dkms/issues/426).  The merged tarball is what
	# one mktarball of them all would be; tar -a compresses by the name, as
	# dkms does, and the temporary ends the same.
	mkdir -p "$priv/merged"
	for k in "${karg[@]}"; do
		[ "$k" = -k ] && continue
		run "${PD[@]}" mktarball "$NAME/$VER" -k "$k" --binaries-only --archive "$priv/$k.tar" > /dev/null ||
			die "dkms mktarball for $k failed"
		tar -C "$priv/merged" -xf "$priv/$k.tar" || die "cannot unpack dkms mktarball's $priv/$k.tar"
	done
	part=$(dirname "$OUTPUT")/.$$.$(basename "$OUTPUT")
	tar -C "$priv/merged" -caf "$part" . || die "cannot write $part"
	mv "$part" "$OUTPUT"
	echo "dkms.sh: wrote $OUTPUT; on the target: sudo scripts/dkms.sh install --tarball $(basename "$OUTPUT")"
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
if [ -n "$TARBALL" ]; then
	[ -f "$TARBALL" ] || die "no tarball $TARBALL (make one with: scripts/dkms.sh tarball --kernel KREL)"
	in_tar=$(tar -tzf "$TARBALL" 2>/dev/null | sed -n 's|^\./dkms_main_tree/\([^/]*\)/[^/]*/$|\1|p' | sort -u)
	tar -xzOf "$TARBALL" ./dkms_binaries_only/PACKAGE_VERSION 2>/dev/null | grep -qx "$VER" ||
		die "$TARBALL is not a binaries-only DKMS tarball of $NAME $VER (made by scripts/dkms.sh tarball of this tree)"
	if [ ${#KERNELS[@]} -eq 0 ]; then
		mapfile -t KERNELS <<< "$in_tar"
	fi
	for k in "${KERNELS[@]}"; do
		echo "$in_tar" | grep -Fxq "$k" ||
			die "$TARBALL holds no modules for kernel $k (it has: $(echo $in_tar)): build one with scripts/dkms.sh tarball --kernel $k"
		[ -d "/lib/modules/$k" ] || die "kernel $k is not installed here (no /lib/modules/$k)"
	done
elif [ ${#KERNELS[@]} -eq 0 ]; then
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
	check_kernels
fi
echo "dkms.sh: $NAME $VER for kernel(s): ${KERNELS[*]}"

for v in $(versions); do
	[ "$v" = "$VER" ] && continue
	echo "dkms.sh: removing $NAME/$v, replaced by $VER"
	run "$DKMS" remove "$NAME/$v" --all
	[ ! -e "$SRCROOT/$NAME-$v" ] || run rm -rf "$SRCROOT/$NAME-$v"
done

if [ -n "$TARBALL" ]; then
	# The prebuilt modules, no sources: what was there of this version goes.
	if versions | grep -Fxq "$VER"; then
		run "$DKMS" remove "$NAME/$VER" --all
	fi
	[ ! -e "$SRC" ] || run rm -rf "$SRC"
	# dkms 3.0's ldtarball loads the first kernel of a tarball only (the
	# loop's variables are read-only, as in mktarball: dkms-project/dkms
	# issue 426): one ldtarball per kernel, each of a tarball of that
	# kernel alone, split from this one; after the first the module is
	# added, so --force.  dkms 3.0 also ends ldtarball of a binaries-only
	# tarball with status 1 when there are no sources (its last test is
	# for them): judge by the result.
	split=$(mktemp -d "${TMPDIR:-/tmp}/ppkit-ldtarball.XXXXXX")
	trap 'rm -rf "$split"' EXIT
	[ "$DRY" = 1 ] || tar -C "$split" -xf "$TARBALL" ./dkms_binaries_only ||
		die "cannot unpack $TARBALL"
	force=()
	for k in "${KERNELS[@]}"; do
		if [ "$DRY" = 0 ]; then
			tar -C "$split" -xf "$TARBALL" "./dkms_main_tree/$k" || die "cannot unpack $k's modules from $TARBALL"
			tar -C "$split" -cf "$split/$k.tar" ./dkms_binaries_only "./dkms_main_tree/$k" ||
				die "cannot write $split/$k.tar"
			rm -rf "${split:?}/dkms_main_tree"
		fi
		run "$DKMS" ldtarball "${force[@]}" "$split/$k.tar" || true
		force=(--force)
	done
	if [ "$DRY" = 0 ]; then
		for k in "${KERNELS[@]}"; do
			built_for | grep -Fxq "$k" || die "dkms ldtarball $TARBALL did not load the modules for $k"
		done
	fi
else
	echo "+ copy kmod/ and dkms.conf to $SRC"
	if [ "$DRY" = 0 ]; then
		tmp=$(mktemp -d "$SRCROOT/.$NAME-$VER.XXXXXX")
		trap 'rm -rf "$tmp"' EXIT
		copy_sources "$tmp"
		rm -rf "$SRC"
		mv "$tmp" "$SRC"
		trap - EXIT
	fi
	if versions | grep -Fxq "$VER"; then
		echo "dkms.sh: $NAME/$VER already added"
	else
		run "$DKMS" add "$NAME/$VER"
	fi
fi
for k in "${KERNELS[@]}"; do
	if [ -z "$TARBALL" ]; then
		# Built before (for this kernel, from older sources): build it again.
		if built_for | grep -Fxq "$k"; then
			run "$DKMS" unbuild "$NAME/$VER" -k "$k"
		fi
		run "$DKMS" build "$NAME/$VER" -k "$k" ||
			die "build for $k failed: see /var/lib/dkms/$NAME/$VER/build/make.log"
	fi
	run "$DKMS" install "$NAME/$VER" -k "$k" || die "dkms install for $k failed"
	if compgen -G "/lib/modules/$k/extra/ppkit/*.ko" > /dev/null; then
		echo "dkms.sh: note: /lib/modules/$k/extra/ppkit (make install) holds ppkit modules too;" \
			"modprobe takes DKMS's (updates/ comes first); make uninstall removes the others" >&2
	fi
done
[ "$DRY" = 1 ] || "$DKMS" status -m "$NAME"
