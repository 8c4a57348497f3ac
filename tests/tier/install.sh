#!/bin/bash
# make install DESTDIR=... as the README gives it, into a staging root:
# every file a user is promised lands where the docs say (the modules
# under /lib/modules/KREL/extra/ppkit, ppctl and ppctld in PREFIX/sbin,
# man pages, completion, the unit and the example configuration), the
# tools run from there, and make uninstall removes every file it listed.
#
#   tests/tier/install.sh          KTAP-style cases; exit 0 if all pass
set -u
cd "$(dirname "$0")/../.." || exit 1
. tests/lab/checks.sh
root=$(mktemp -d)
trap 'rm -rf "$root"' EXIT
krel=$(scripts/lab/kver) || { echo "not ok 1 - no Debian 6.1 kernel: run scripts/deps.sh"; exit 1; }

if make --no-print-directory install DESTDIR="$root" PREFIX=/usr > "$root.log" 2>&1; then
	ok "make install DESTDIR=$root PREFIX=/usr"
else
	tail -n 20 "$root.log" | sed 's/^/# /'
	bad "make install DESTDIR=... PREFIX=/usr (log above)"
fi
for m in pp_backport ppsim; do
	check "module $m.ko in /lib/modules/$krel/extra/ppkit" test -f "$root/lib/modules/$krel/extra/ppkit/$m.ko"
done
for f in usr/sbin/ppctl usr/sbin/ppctld; do
	check "$f installed and runs (--version)" "$root/$f" --version
done
check "man pages ppctl(8) and ppctld(8)" test -f "$root/usr/share/man/man8/ppctl.8" -a -f "$root/usr/share/man/man8/ppctld.8"
check "bash completion for ppctl" test -f "$root/usr/share/bash-completion/completions/ppctl"
check "systemd unit ppctld.service" test -f "$root/etc/systemd/system/ppctld.service"
# the exposure Documentation/ppctld.rst quotes (systemd-analyze's 0-10 scale)
unit=$root/etc/systemd/system/ppctld.service
exposure=$(systemd-analyze security --offline=true "$unit" 2>&1 | sed -n 's/.*exposure level for ppctld.service: \([0-9.]*\).*/\1/p')
quoted=$(tr '\n' ' ' < Documentation/ppctld.rst | sed -n 's/.*rates its *exposure \([0-9.]*\) (OK).*/\1/p')
echo "# systemd-analyze security --offline=true ppctld.service: ${exposure:-?}; Documentation/ppctld.rst: ${quoted:-?}"
check "ppctld.service: the exposure Documentation/ppctld.rst quotes (systemd-analyze security)" \
	test -n "$exposure" -a "$exposure" = "$quoted"
check "example configuration /etc/ppctld.conf" test -f "$root/etc/ppctld.conf"
list=$root/usr/share/ppkit/installed
check "the list of installed files" test -s "$list"
n=$(grep -c . "$list" 2>/dev/null || echo 0)
if make --no-print-directory uninstall DESTDIR="$root" PREFIX=/usr > "$root.log" 2>&1; then
	ok "make uninstall DESTDIR=... PREFIX=/usr"
else
	tail -n 20 "$root.log" | sed 's/^/# /'
	bad "make uninstall DESTDIR=... PREFIX=/usr (log above)"
fi
# depmod's index files (modules.dep...) are depmod's, as on any system
left=$(find "$root" -type f | sed "s|^$root||" | grep -v '^/lib/modules/[^/]*/modules\.')
if [ -z "$left" ] || [ "$left" = /etc/ppctld.conf ]; then
	ok "uninstall removed the $n files it listed${left:+ (the configuration stays, as a conffile does on apt remove)}"
else
	echo "$left" | head -n 10 | sed 's/^/# left: /'
	bad "uninstall left files behind (above)"
fi
rm -f "$root.log"
finish install
