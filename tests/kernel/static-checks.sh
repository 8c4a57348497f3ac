#!/bin/bash
# Static analysis of our kernel code: checkpatch --strict and sparse (C=2),
# and the ynl spec of the netlink family checked against its uapi header.
# checkpatch comes from Debian's linux-source-6.1 (scripts/deps.sh installs it);
# only the three files it needs are unpacked, once for every clone (11 s of
# xz), into $PPKIT_CACHE/checkpatch-tool/ (build/tools when that is not
# writable).
set -euo pipefail
cd "$(dirname "$0")/../.."
KVER=${KVER:-$(scripts/lab/kver)}
KDIR=${KDIR:-/lib/modules/$KVER/build}
src=$(ls /usr/src/linux-source-6.1.tar.* 2>/dev/null | head -1)
[ -n "$src" ] || { echo "static-checks: linux-source-6.1 missing; run scripts/deps.sh" >&2; exit 1; }
T=${PPKIT_CACHE:-/var/cache/ppkit}/checkpatch-tool/$(stat -c %s-%Y "$src")
mkdir -p "$(dirname "$T")" 2> /dev/null && [ -w "$(dirname "$T")" ] || T=build/tools/checkpatch
if [ ! -x "$T/scripts/checkpatch.pl" ]; then
	rm -rf "$T.$$"
	mkdir -p "$T.$$"
	tar -xf "$src" -C "$T.$$" --strip-components=1 --wildcards \
		'*/scripts/checkpatch.pl' '*/scripts/spelling.txt' '*/scripts/const_structs.checkpatch'
	# another run may have unpacked it meanwhile
	mv -T "$T.$$" "$T" 2> /dev/null || rm -rf "$T.$$"
fi
mkdir -p build
fail=0

# compat.h is the one place allowed to test kernel versions.
mapfile -t files < <({ git ls-files 'kmod/*.c' 'kmod/*.h'
	git ls-files --others --exclude-standard 'kmod/*.c' 'kmod/*.h'; } | grep -v '/compat\.h$')
echo "checkpatch --strict on ${#files[@]} files"
if ! perl "$T/scripts/checkpatch.pl" --strict --no-tree --terse --show-types -q \
	--ignore FILE_PATH_CHANGES,SPDX_LICENSE_TAG -f "${files[@]}" > build/checkpatch.log 2>&1; then
	cat build/checkpatch.log
	echo "checkpatch: findings above"
	fail=1
else
	echo "checkpatch: clean"
fi

if ! perl "$T/scripts/checkpatch.pl" --strict --no-tree --terse --show-types -q \
	--ignore SPDX_LICENSE_TAG,LINUX_VERSION_CODE,CONSTANT_COMPARISON \
	-f kmod/include/ppkit/compat.h >> build/checkpatch.log 2>&1; then
	cat build/checkpatch.log
	fail=1
fi

# In a copy of kmod/ of its own, with make modules' W=1: the lab's core
# boot (make check runs it beside this step) loads kmod/*.ko, which a build
# in place would be rewriting.
echo "sparse (C=2, W=1; in build/kmod-sparse)"
S=$PWD/build/kmod-sparse
rm -rf "$S"
mkdir -p "$S"
(cd kmod && find . \( -name '*.[ch]' -o -name Kbuild -o -name Kconfig \) -print0 | cpio -pdmu0 --quiet "$S")
# sparse's log is kept, keyed on what it reads (the sources, the kernel's
# headers, sparse and the compiler): ccache keeps the compiles, not the
# checker (about 40 s of a warm make check).  PPKIT_NO_CACHE=1 runs it.
cc=$(sed -n 's/^CONFIG_CC_VERSION_TEXT="\([^ ]*\) .*/\1/p' "$KDIR/.config")
cc=${cc:-gcc}
key=$({
	echo "$KVER $KDIR"
	sparse --version
	"$cc" --version | head -n 1
	(cd "$S" && find . -type f -print0 | sort -z | xargs -0 sha256sum)
	cat "$0"
} | sha256sum | cut -c1-16)
kept=${PPKIT_CACHE:-/var/cache/ppkit}/sparse/kmod-$key
if [ "${PPKIT_NO_CACHE:-0}" != 1 ] && [ -f "$kept" ]; then
	sed "s|@ROOT@|$PWD|g" "$kept" > build/sparse.log
	echo "sparse: the log of an identical run (sparse cache kmod-$key)"
else
	ccache=()
	command -v ccache > /dev/null && ccache=(CC="ccache $cc")
	if scripts/kbuild-stable "$PWD" make -s -C "$KDIR" M="$S" "${ccache[@]}" C=2 W=1 modules > build/sparse.log 2>&1; then
		mkdir -p "$(dirname "$kept")" 2> /dev/null &&
			sed "s|$PWD|@ROOT@|g" build/sparse.log > "$kept.$$" 2> /dev/null && mv "$kept.$$" "$kept"
	else
		cat build/sparse.log
		fail=1
	fi
fi
if grep -E '(warning|error):' build/sparse.log; then
	echo "sparse: findings above"
	fail=1
else
	echo "sparse: clean"
fi
echo "netlink spec vs uapi header"
/usr/bin/python3 tests/kernel/check-spec.py || fail=1
exit $fail
