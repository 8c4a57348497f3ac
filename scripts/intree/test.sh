#!/bin/bash
# In-tree integration test: kmod/ copied into drivers/net/ppkit/ of the Debian
# 6.1 source the lab kernel was built from, hooked into drivers/net/Kconfig
# and drivers/net/Makefile, selected in Debian's own config the way
# `make menuconfig` would, and built as in-tree modules with that kernel's
# toolchain and release (Documentation/intree.rst).
#
#   scripts/intree/test.sh      ends with "intree: PASS" (status 0) or "intree: FAIL ..."
#
# What is slow is cached under $PPKIT_CACHE/intree (default /var/cache/ppkit):
#   linux-source-<ver>/  hard-link copy (cp -al) of the source prepare.sh unpacked,
#                        with our two lines in drivers/net/{Kconfig,Makefile};
#                        the shared source itself is never written
#   build-<krel>/        the O= tree: Debian's .config + ppkit, modules_prepare
#                        done, stamped with a key of the kernel version, Debian's
#                        config, kmod/Kconfig and the options below
# A run with a matching stamp skips configuration and modules_prepare and
# recompiles only the sources that changed since the last passing run.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
# shellcheck source=scripts/drivers/lib.sh
. "$ROOT/scripts/drivers/lib.sh"

JOBS=2                          # at most two jobs, like the machines this runs on
CC_NAME=gcc-12                  # Debian's kernel compiler (its headers' .kernelvariables)
# What "menuconfig selecting ppkit" sets, and what .config must then say.
OPTS=(-e PPKIT -m PPKIT_POOL -m PPKIT_SIM -m PPKIT_TESTS -m PPKIT_BENCH)
WANT=(CONFIG_PPKIT=y CONFIG_PPKIT_POOL=m CONFIG_PPKIT_SIM=m CONFIG_PPKIT_TESTS=m CONFIG_PPKIT_BENCH=m)
MODULES=(pool/pp_backport sim/ppsim tests/pp_selftest tests/pp_sockhold tests/pp_poolgen bench/pp_bench)
RECIPE=1                        # bump when the way the cached trees are made changes

T0=$(date +%s.%N)
TLAST=$T0
say() { echo "intree: $*" >&2; }
fail() {
	FAILED=1
	echo "intree: FAIL $*"
	exit 1
}
die() { fail "$*"; }
on_exit() { # whatever stopped the script under set -e says FAIL too
	local rc=$?
	[ "$rc" -eq 0 ] || [ -n "${FAILED:-}" ] || echo "intree: FAIL (status $rc, see the messages above)"
}
trap on_exit EXIT
elapsed() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f", b - a }'; }
lap() { # label: time since the previous lap
	local now
	now=$(date +%s.%N)
	printf 'intree: %-40s %6ss\n' "$1" "$(elapsed "$TLAST" "$now")" >&2
	TLAST=$now
}

command -v "$CC_NAME" >/dev/null || fail "$CC_NAME missing: run scripts/deps.sh"
command -v pahole >/dev/null || fail "pahole missing (dwarves): run scripts/deps.sh"

# The Debian source of the lab kernel, unpacked and shared by scripts/drivers.
"$ROOT/scripts/drivers/prepare.sh" x86_64 2>&1 | sed 's/^/  /' >&2
read -r krel pkgver srcdir kbuild _ < <("$ROOT/scripts/drivers/prepare.sh" --print x86_64)
up=$(drv_upstream "$pkgver")
[ -f "$srcdir/.ppkit-extracted" ] || fail "no kernel source at $srcdir"
[ -f "$kbuild/.config" ] || fail "no Debian .config in $kbuild (linux-headers-$krel)"
hdr=$(readlink -f "$kbuild")
say "kernel $krel (source $pkgver, $srcdir)"
lap "kernel source ready"

cache=$PPKIT_CACHE/intree
tree=$cache/linux-source-$up
out=$cache/build-$krel
mkdir -p "$cache"
# One run at a time: runs share the trees.
exec 8>"$cache/.lock"
flock 8

# Trees of other kernel versions are stale: only the current one is kept.
for d in "$cache"/linux-source-* "$cache"/build-*; do
	[ -e "$d" ] || continue
	case "$d" in "$tree" | "$out") continue ;; esac
	say "removing stale $d"
	rm -rf "$d"
done

# 1. The source copy: hard links (cheap, read only), the files we change
#    replaced by new files so that the shared source is never written.
if [ "$(cat "$tree/.ppkit-intree" 2>/dev/null)" != "$RECIPE" ]; then
	say "copying $srcdir (hard links) to $tree"
	rm -rf "$tree" "$tree.tmp" "$out"
	cp -al "$srcdir" "$tree.tmp"
	rm -f "$tree.tmp/.ppkit-extracted"
	for f in Kconfig Makefile; do
		cp "$tree.tmp/drivers/net/$f" "$tree.tmp/drivers/net/$f.new"
	done
	# Inside 'if NETDEVICES': under "Network device support" in menuconfig.
	awk '/^endif # NETDEVICES$/ { print "source \"drivers/net/ppkit/Kconfig\""; print ""; n++ }
	     { print } END { exit n != 1 }' "$srcdir/drivers/net/Kconfig" >"$tree.tmp/drivers/net/Kconfig.new" ||
		fail "drivers/net/Kconfig: no single 'endif # NETDEVICES' to put the source line before"
	# shellcheck disable=SC2016
	echo 'obj-$(CONFIG_PPKIT) += ppkit/' >>"$tree.tmp/drivers/net/Makefile.new"
	for f in Kconfig Makefile; do
		mv "$tree.tmp/drivers/net/$f.new" "$tree.tmp/drivers/net/$f"
	done
	echo "$RECIPE" >"$tree.tmp/.ppkit-intree"
	mv "$tree.tmp" "$tree"
fi
# The shared source must be untouched and the copy must carry our two lines.
! grep -q ppkit "$srcdir/drivers/net/Kconfig" "$srcdir/drivers/net/Makefile" ||
	fail "the shared source $srcdir was modified"
[ ! -e "$srcdir/drivers/net/ppkit" ] || fail "the shared source $srcdir has drivers/net/ppkit"
grep -qx 'source "drivers/net/ppkit/Kconfig"' "$tree/drivers/net/Kconfig" || fail "source line missing"
# shellcheck disable=SC2016
grep -qx 'obj-$(CONFIG_PPKIT) += ppkit/' "$tree/drivers/net/Makefile" || fail "obj- line missing"
lap "source copy ($tree)"

# 2. kmod/ sources into drivers/net/ppkit/: only files whose content changed
#    are replaced, so kbuild recompiles only those.
dst=$tree/drivers/net/ppkit
mkdir -p "$dst"
# In a checkout, the list comes from git (tracked and new files).
srclist() {
	if git -C "$ROOT" rev-parse --git-dir > /dev/null 2>&1; then
		{ git -C "$ROOT/kmod" ls-files; git -C "$ROOT/kmod" ls-files --others --exclude-standard; } |
			grep -E '(\.[ch]|/Kbuild|^Kbuild|/Kconfig|^Kconfig|/Makefile|^Makefile)$' | grep -v '\.mod\.c$' |
			while read -r f; do [ ! -f "$ROOT/kmod/$f" ] || echo "$f"; done
	else
		(cd "$ROOT/kmod" && find . -type f \( \( -name '*.[ch]' ! -name '*.mod.c' \) \
			-o -name Kbuild -o -name Kconfig -o -name Makefile \) | sed 's|^\./||')
	fi
}
mapfile -t files < <(srclist | sort -u)
[ ${#files[@]} -gt 0 ] || fail "no sources in $ROOT/kmod"
[ -f "$ROOT/kmod/Kconfig" ] || fail "kmod/Kconfig missing"
changed=0 names=
for f in "${files[@]}"; do
	if ! cmp -s "$ROOT/kmod/$f" "$dst/$f"; then
		mkdir -p "$(dirname "$dst/$f")"
		cp "$ROOT/kmod/$f" "$dst/$f.tmp"
		mv "$dst/$f.tmp" "$dst/$f"
		changed=$((changed + 1))
		names+=" $f"
	fi
done
# Files no longer in kmod/ go.  Looked up in an array: "printf | grep -q"
# under pipefail fails when grep quits before printf has written all
# (SIGPIPE), about once in 3,000 here, and deleted files that were there
# (pool/Kbuild, pool/holders.c, tests/ktap.h).
declare -A listed=()
for f in "${files[@]}"; do listed[$f]=1; done
while read -r f; do
	[ -n "${listed[$f]:-}" ] || { rm -f "$dst/$f"; changed=$((changed + 1)); names+=" -$f"; }
done < <(cd "$dst" && find . -type f | sed 's|^\./||')
find "$dst" -mindepth 1 -type d -empty -delete
say "${#files[@]} source files, $changed changed since the last run${names:+:${names:0:300}}"
lap "kmod/ -> drivers/net/ppkit/"

KMAKE=(make -C "$tree" O="$out" CC="$CC_NAME" KERNELRELEASE="$krel")
log=$out/intree.log

# 3. Configuration and modules_prepare, when the key changed.
key=$({
	echo "recipe $RECIPE $krel $pkgver"
	sha256sum <"$kbuild/.config"
	sha256sum <"$ROOT/kmod/Kconfig"
	echo "${OPTS[*]}"
} | sha256sum | cut -c1-16)
if [ "$(cat "$out/.ppkit-prepared" 2>/dev/null)" != "$key" ]; then
	say "configuring $out (key $key)"
	mkdir -p "$out"
	rm -f "$out/.ppkit-prepared" "$out/.ppkit-pass"
	: >"$log"
	cfg=$out/.config
	cp "$kbuild/.config" "$cfg"
	# What menuconfig offers on top of Debian's config: ppkit's menu, off,
	# under Device Drivers -> Network device support.
	"${KMAKE[@]}" -s helpnewconfig >"$out/newconfig.0" 2>>"$log" || fail "helpnewconfig failed: see $log"
	if [ "$(grep '^CONFIG_.*:$' "$out/newconfig.0")" != "CONFIG_PPKIT:" ] ||
		! grep -q '^Symbol: PPKIT \[=n\]' "$out/newconfig.0"; then
		fail "helpnewconfig on Debian's config should offer only PPKIT=n, got: $(grep -e '^CONFIG_' -e '^Symbol:' "$out/newconfig.0" | tr '\n' ' ')"
	fi
	grep -q -- '-> Network device support (NETDEVICES' "$out/newconfig.0" ||
		fail "the ppkit menu is not under Network device support: $(grep -A4 Location: "$out/newconfig.0" | tr -s ' \n' ' ')"
	# Entering the menu shows its entries with their defaults.
	"$tree/scripts/config" --file "$cfg" -e PPKIT
	"${KMAKE[@]}" -s listnewconfig >"$out/newconfig.1" 2>>"$log" || fail "listnewconfig failed: see $log"
	# (the others depend on PPKIT_POOL: offered once it is on)
	sort "$out/newconfig.1" | tr '\n' ' ' | grep -qx 'CONFIG_PPKIT_POOL=n ' ||
		fail "the ppkit menu should offer PPKIT_POOL, off (n), got: $(tr '\n' ' ' <"$out/newconfig.1")"
	# Dependencies: no ppsim without the pool, no built-in test modules.
	neg=$out/.config.neg
	cp "$cfg" "$neg"
	"$tree/scripts/config" --file "$neg" -d PPKIT_POOL -m PPKIT_SIM -e PPKIT_TESTS -e PPKIT_BENCH
	KCONFIG_CONFIG=.config.neg "${KMAKE[@]}" -s olddefconfig >>"$log" 2>&1 || fail "olddefconfig failed: see $log"
	! grep -qE '^CONFIG_PPKIT_(SIM|TESTS|BENCH)=' "$neg" ||
		fail "PPKIT_POOL=n should leave no ppkit module on: $(grep '^CONFIG_PPKIT' "$neg" | tr '\n' ' ')"
	cp "$cfg" "$neg"
	"$tree/scripts/config" --file "$neg" -e PPKIT_POOL -e PPKIT_SIM -e PPKIT_TESTS -e PPKIT_BENCH
	KCONFIG_CONFIG=.config.neg "${KMAKE[@]}" -s olddefconfig >>"$log" 2>&1 || fail "olddefconfig failed: see $log"
	for w in CONFIG_PPKIT_POOL=y CONFIG_PPKIT_SIM=y CONFIG_PPKIT_TESTS=m CONFIG_PPKIT_BENCH=m; do
		grep -qx "$w" "$neg" ||
			fail "=y everywhere should give $w (test and bench only as modules): $(grep '^CONFIG_PPKIT' "$neg" | tr '\n' ' ')"
	done
	rm -f "$neg" "$neg.old"
	# The selection the test builds.
	"$tree/scripts/config" --file "$cfg" "${OPTS[@]}"
	"${KMAKE[@]}" -s olddefconfig >>"$log" 2>&1 || fail "olddefconfig failed: see $log"
	"${KMAKE[@]}" -s listnewconfig >"$out/newconfig.2" 2>>"$log" || fail "listnewconfig failed: see $log"
	[ ! -s "$out/newconfig.2" ] || fail "options still unset after olddefconfig: $(tr '\n' ' ' <"$out/newconfig.2")"
	# A minimal config keeps the choices that differ from the defaults
	# (every option defaults to n).
	"${KMAKE[@]}" -s savedefconfig >>"$log" 2>&1 || fail "savedefconfig failed: see $log"
	for w in CONFIG_PPKIT=y CONFIG_PPKIT_POOL=m CONFIG_PPKIT_SIM=m CONFIG_PPKIT_TESTS=m CONFIG_PPKIT_BENCH=m; do
		grep -qx "$w" "$out/defconfig" || fail "savedefconfig lacks $w"
	done
	lap "configure (kconfig checks, olddefconfig)"
	say "modules_prepare (-j$JOBS): a few minutes the first time"
	"${KMAKE[@]}" -j"$JOBS" W=1 modules_prepare >>"$log" 2>&1 || fail "modules_prepare failed: see $log"
	cmp -s "$hdr/include/generated/utsrelease.h" "$out/include/generated/utsrelease.h" ||
		fail "utsrelease.h differs from Debian's: the tree does not match $krel"
	# 6.1's in-tree modpost takes the kernel's exports from vmlinux.o only,
	# which modules_prepare does not build: Debian's Module.symvers stands in
	# (step 5), so that symbol versions are those of Debian's kernel.
	cp "$kbuild/Module.symvers" "$out/vmlinux.symvers"
	printf '#!/bin/sh\n# modpost, with the exports of Debian'"'"'s %s instead of vmlinux.o (scripts/intree/test.sh)\nexec %s/scripts/mod/modpost -i %s/vmlinux.symvers "$@"\n' \
		"$krel" "$out" "$out" >"$out/ppkit-modpost"
	chmod +x "$out/ppkit-modpost"
	echo "$key" >"$out/.ppkit-prepared"
	lap "modules_prepare"
else
	say "cached tree $out (key $key)"
fi

# The options as asked, everything else exactly Debian's.
for w in "${WANT[@]}"; do
	grep -qx "$w" "$out/.config" || fail ".config lacks $w: $(grep '^CONFIG_PPKIT' "$out/.config" | tr '\n' ' ')"
done
drift=$(diff <(grep -v -e '^#' -e '^$' "$kbuild/.config" | sort) \
	<(grep -v -e '^#' -e '^$' -e '^CONFIG_PPKIT' "$out/.config" | sort) || true)
[ -z "$drift" ] || fail "config drift against Debian's $krel besides ppkit:
$drift"
say "$(grep '^CONFIG_PPKIT' "$out/.config" | tr '\n' ' ')"
lap "config checks"

# 4. Objects of drivers/net/ppkit/ only (the kernel's directory target), with
#    W=1 like the out-of-tree build.  After a failed run everything of ours
#    is rebuilt, so that no warning hides in an object kept from it.
[ -f "$out/.ppkit-pass" ] || rm -rf "$out/drivers/net/ppkit"
rm -f "$out/.ppkit-pass"
blog=$out/build.log
if ! "${KMAKE[@]}" -j"$JOBS" W=1 drivers/net/ppkit/ >"$blog" 2>&1; then
	cat "$blog" >&2
	fail "building drivers/net/ppkit/ failed"
fi
for m in "${MODULES[@]}"; do
	[ -f "$out/drivers/net/ppkit/$m.o" ] || fail "make drivers/net/ppkit/ did not build $m.o"
done
lap "compile drivers/net/ppkit/ (W=1)"

# 5. The .ko files: the kernel's single-module targets (make dir/foo.ko),
#    which run modpost in its in-tree mode (hence "intree: Y") and the final
#    link.  In 6.1 they assume a built kernel: modpost wants vmlinux.o for
#    the kernel's exports (else it warns about every symbol and drops the
#    symbol versions), and with BTF the link wants vmlinux.  Without building
#    the kernel: modpost reads Debian's Module.symvers instead (MODPOST, and
#    missing-input= to say that nothing is missing), and KBUILD_BUILTIN= drops
#    the vmlinux prerequisite; BTF is then skipped, as out of tree.
kos=()
for m in "${MODULES[@]}"; do kos+=("drivers/net/ppkit/$m.ko"); done
if ! "${KMAKE[@]}" -j"$JOBS" W=1 KBUILD_BUILTIN= missing-input= MODPOST="$out/ppkit-modpost" \
	"${kos[@]}" >>"$blog" 2>&1; then
	cat "$blog" >&2
	fail "linking the modules failed"
fi
lap "modpost + link"

if grep -E -i 'warning:|error:' "$blog" >&2; then
	fail "build warnings (above; full log $blog)"
fi

# 6. What was built: every module, in-tree, for Debian's kernel.
ref=$(find "/lib/modules/$krel/kernel/net" -name '*.ko*' -print -quit)
[ -n "$ref" ] || fail "no Debian module under /lib/modules/$krel to compare vermagic with"
want_vermagic=$(modinfo -F vermagic "$ref")
for m in "${MODULES[@]}"; do
	ko=$out/drivers/net/ppkit/$m.ko
	[ -f "$ko" ] || fail "$m.ko not built"
	v=$(modinfo -F vermagic "$ko")
	[ "$v" = "$want_vermagic" ] || fail "$m.ko: vermagic '$v', Debian's modules have '$want_vermagic'"
	[ "$(modinfo -F intree "$ko")" = Y ] || fail "$m.ko: modinfo shows no 'intree: Y'"
done
[ -z "$(modinfo -F depends "$out/drivers/net/ppkit/pool/pp_backport.ko")" ] || fail "pp_backport.ko depends on something"
[ "$(modinfo -F depends "$out/drivers/net/ppkit/sim/ppsim.ko")" = pp_backport ] ||
	fail "ppsim.ko does not depend on pp_backport"
say "pp_backport.ko: vermagic '$want_vermagic', intree: Y; ppsim.ko depends on pp_backport"
lap "module checks"

# Nothing but our directory may have been written in the copy: its other
# files are hard links to the shared source.
written=$(find "$tree" -type f -newer "$tree/.ppkit-intree" -not -path "$dst/*" -print -quit)
[ -z "$written" ] || fail "files of the shared source were written: $written"
lap "shared source untouched"

touch "$out/.ppkit-pass"
# du counts a hard-linked file once, under the first argument that has it.
say "cache: $(du -sh "$srcdir" "$cache" | sed -n 2p | cut -f1) in $cache besides the shared source (hard links)"
printf 'intree: total %ss\n' "$(elapsed "$T0" "$(date +%s.%N)")" >&2
FAILED=0
echo "intree: PASS"
