#!/bin/sh
# Install ppkit from a staged tree: the unpacked board tarball (`make
# dist-board`), or build/stage-<arch> (`make install`).  POSIX sh, so that it
# runs on a board with busybox only.
#
#   ./install.sh [--prefix DIR] [--destdir DIR] [--kernel KREL] [--force]
#                [--no-modules] [--no-tools] [--no-depmod]
#   ./install.sh --uninstall [--prefix DIR] [--destdir DIR]
#
#   --prefix DIR    tools, man pages, completion under DIR (default /usr/local);
#                   the systemd unit goes to /etc/systemd/system, the example
#                   configuration to /etc/ppctld.conf (kept if it exists)
#   --destdir DIR   install under DIR as if it were / (packaging, tests)
#   --kernel KREL   the kernel the modules are for (default: the one they
#                   were built for; it must be the running one unless --force
#                   or --destdir)
#   --no-depmod     do not run depmod (the caller will)
#
# The staged tree (this script's directory):
#   MANIFEST                         name=value: version, arch, kernel, runtime
#   modules/*.ko                     installed to /lib/modules/KREL/extra/ppkit/
#   sbin/ppctl, sbin/ppctld          to PREFIX/sbin
#   share/man/man8/*.8               to PREFIX/share/man/man8
#   share/bash-completion/completions/*  to PREFIX/share/bash-completion/completions
#   systemd/ppctld.service, etc/ppctld.conf
# Every file installed is listed in PREFIX/share/ppkit/installed, which
# --uninstall reads.  Exit status: 0 done, 1 refused or failed (the message
# says why and what to do), 2 bad arguments.
set -eu

HERE=$(cd "$(dirname "$0")" && pwd)
PREFIX=/usr/local DESTDIR='' KREL='' FORCE=0 MODULES=1 TOOLS=1 DEPMOD=1 UNINSTALL=0

say() { echo "ppkit-install: $*"; }
die() { echo "ppkit-install: $*" >&2; exit 1; }
usage() { sed -n '2,/^set -eu/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'; exit "${1:-2}"; }
arg() { [ $# -ge 2 ] && [ -n "$2" ] || { echo "ppkit-install: $1 needs a value" >&2; exit 2; }; }

while [ $# -gt 0 ]; do
	case "$1" in
	--prefix) arg "$@"; PREFIX=$2; shift 2 ;;
	--destdir) arg "$@"; DESTDIR=$2; shift 2 ;;
	--kernel) arg "$@"; KREL=$2; shift 2 ;;
	--force) FORCE=1; shift ;;
	--no-modules) MODULES=0; shift ;;
	--no-tools) TOOLS=0; shift ;;
	--no-depmod) DEPMOD=0; shift ;;
	--uninstall) UNINSTALL=1; shift ;;
	-h | --help) usage 0 ;;
	*) echo "ppkit-install: unknown argument '$1' (see --help)" >&2; exit 2 ;;
	esac
done
case "$PREFIX" in
/*) ;;
*) echo "ppkit-install: --prefix must be an absolute path, not '$PREFIX'" >&2; exit 2 ;;
esac
DESTDIR=${DESTDIR%/}
LIST=$DESTDIR$PREFIX/share/ppkit/installed

manifest() { sed -n "s/^$1=//p" "$HERE/MANIFEST" 2>/dev/null | head -n 1; }

run_depmod() {
	[ "$DEPMOD" = 1 ] || return 0
	if ! command -v depmod >/dev/null 2>&1; then
		say "no depmod here: run 'depmod -a $1' before modprobe"
		return 0
	fi
	if [ -n "$DESTDIR" ]; then depmod -a -b "$DESTDIR" "$1"; else depmod -a "$1"; fi
}

if [ "$UNINSTALL" = 1 ]; then
	[ -f "$LIST" ] || die "nothing to uninstall: no $LIST (installed with another --prefix?)"
	# The unit goes: the daemon it started goes first, and systemd forgets both.
	unit=0
	if [ -z "$DESTDIR" ] && [ -d /run/systemd/system ] &&
		grep -qx /etc/systemd/system/ppctld.service "$LIST"; then
		unit=1
		systemctl disable --now ppctld.service >/dev/null 2>&1 || true
	fi
	krels=''
	while read -r f; do
		[ -n "$f" ] || continue
		rm -f "$DESTDIR$f"
		case "$f" in
		/lib/modules/*/extra/ppkit/*)
			k=${f#/lib/modules/}
			k=${k%%/*}
			case " $krels " in *" $k "*) ;; *) krels="$krels $k" ;; esac
			rmdir "$DESTDIR/lib/modules/$k/extra/ppkit" 2>/dev/null || true
			;;
		esac
	done < "$LIST"
	rm -f "$LIST"
	rmdir "$DESTDIR$PREFIX/share/ppkit" 2>/dev/null || true
	for k in $krels; do run_depmod "$k"; done
	[ "$unit" = 0 ] || systemctl daemon-reload || true
	loaded=''
	if [ -z "$DESTDIR" ]; then
		for m in ppsim pp_backport; do
			if [ -d "/sys/module/$m" ]; then loaded="$loaded $m"; fi
		done
	fi
	[ -z "$loaded" ] || say "still loaded:$loaded ('rmmod$loaded' unloads them)"
	say "uninstalled (the configuration /etc/ppctld.conf is kept)"
	exit 0
fi

[ -f "$HERE/MANIFEST" ] || die "no MANIFEST next to $0: run it from an unpacked ppkit tarball or build/stage-*"
mkdir -p "$DESTDIR$PREFIX/share/ppkit"
: > "$LIST.new"
# put SRC DST MODE: copy and record
put() {
	mkdir -p "$(dirname "$DESTDIR$2")"
	cp -f "$1" "$DESTDIR$2"
	chmod "$3" "$DESTDIR$2"
	echo "$2" >> "$LIST.new"
}

if [ "$MODULES" = 1 ]; then
	built=$(manifest kernel)
	[ -n "$KREL" ] || KREL=$built
	[ -n "$KREL" ] || die "MANIFEST names no kernel: pass --kernel KREL"
	running=$(uname -r)
	if [ "$KREL" != "$running" ] && [ -z "$DESTDIR" ] && [ "$FORCE" = 0 ]; then
		die "the modules are built for $KREL, this system runs $running: rebuild with" \
		    "'make dist-board ARCH=... KDIR=<this kernel's build tree>', or pass --force to" \
		    "install them for $KREL anyway"
	fi
	if [ "$KREL" != "$built" ] && [ "$FORCE" = 0 ]; then
		die "the modules are built for $built, not $KREL: pass --force to install them anyway"
	fi
	n=0
	for ko in "$HERE"/modules/*.ko; do
		[ -f "$ko" ] || continue
		put "$ko" "/lib/modules/$KREL/extra/ppkit/$(basename "$ko")" 644
		n=$((n + 1))
	done
	[ "$n" -gt 0 ] || die "no modules in $HERE/modules"
	run_depmod "$KREL"
	say "$n modules for $KREL in /lib/modules/$KREL/extra/ppkit: modprobe pp_backport; modprobe ppsim"
fi

if [ "$TOOLS" = 1 ]; then
	for b in ppctl ppctld; do
		[ -f "$HERE/sbin/$b" ] || die "no sbin/$b in $HERE"
		put "$HERE/sbin/$b" "$PREFIX/sbin/$b" 755
	done
	for m in "$HERE"/share/man/man8/*.8; do
		[ -f "$m" ] && put "$m" "$PREFIX/share/man/man8/$(basename "$m")" 644
	done
	for c in "$HERE"/share/bash-completion/completions/*; do
		[ -f "$c" ] && put "$c" "$PREFIX/share/bash-completion/completions/$(basename "$c")" 644
	done
	if [ -f "$HERE/systemd/ppctld.service" ]; then
		mkdir -p "$DESTDIR/etc/systemd/system"
		sed "s#/usr/sbin/ppctld#$PREFIX/sbin/ppctld#g" "$HERE/systemd/ppctld.service" \
			> "$DESTDIR/etc/systemd/system/ppctld.service"
		chmod 644 "$DESTDIR/etc/systemd/system/ppctld.service"
		echo /etc/systemd/system/ppctld.service >> "$LIST.new"
	fi
	if [ -f "$HERE/etc/ppctld.conf" ] && [ ! -e "$DESTDIR/etc/ppctld.conf" ]; then
		mkdir -p "$DESTDIR/etc"
		cp "$HERE/etc/ppctld.conf" "$DESTDIR/etc/ppctld.conf"
	fi
	say "ppctl and ppctld in $PREFIX/sbin; 'systemctl daemon-reload; systemctl enable --now ppctld' starts the daemon"
	# A missing shared library shows here, not at the first real use.
	if [ -z "$DESTDIR" ] && ! "$PREFIX/sbin/ppctl" --version > /dev/null 2>&1; then
		say "ppctl does not start here: $("$PREFIX/sbin/ppctl" --version 2>&1 | head -n 1)"
		say "it needs these packages (Debian 12 names): $(manifest runtime)"
	fi
fi

# Files an earlier install put there and this one did not (an older
# version's) go; a partial install (--no-modules, --no-tools) keeps them.
if [ -f "$LIST" ]; then
	if [ "$MODULES" = 1 ] && [ "$TOOLS" = 1 ]; then
		while read -r f; do
			grep -qxF "$f" "$LIST.new" || rm -f "$DESTDIR$f"
		done < "$LIST"
	else
		cat "$LIST" >> "$LIST.new"
		sort -u -o "$LIST.new" "$LIST.new"
	fi
fi
mv -f "$LIST.new" "$LIST"
