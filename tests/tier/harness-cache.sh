#!/bin/bash
# Run a self-test of the harness (the lab catches a splat, the debug kernel
# catches bugs, the drivers refuse an unsupported source) only when what it
# tests changed: its inputs (files, folders), QEMU and the kernel image are
# hashed into a key, and a pass is kept under $PPKIT_CACHE/harness/NAME-KEY
# with its output.  With the same key again, that output is shown, marked,
# and the run passes without a guest; HARNESS_RERUN=1 runs it anyway.  A
# failure is never kept.
#
#   tests/tier/harness-cache.sh NAME INPUT... -- COMMAND...
#
# INPUT: files or folders of the tree (every file git tracks under a
# folder; every file, outside a git checkout), or
# @PATH for a file outside it whose identity (size, mtime) is enough (a
# kernel image).  Prints "lab: note: ..." (the row's note in
# tests/lab/run-all.sh) when it reuses a pass.
set -u
cd "$(dirname "$0")/../.." || exit 1
name=${1:?usage: harness-cache.sh NAME INPUT... -- COMMAND...}
shift
inputs=()
while [ $# -gt 0 ] && [ "$1" != -- ]; do
	inputs+=("$1")
	shift
done
[ "${1:-}" = -- ] || { echo "harness-cache: usage: NAME INPUT... -- COMMAND..." >&2; exit 2; }
shift
[ $# -gt 0 ] || { echo "harness-cache: no command" >&2; exit 2; }

git=0
git rev-parse --is-inside-work-tree > /dev/null 2>&1 && git=1
key=$({
	echo "$name $*"
	for i in "${inputs[@]}"; do
		case $i in
		@*) stat -L -c '%n %s %Y' "${i#@}" 2>&1 ;;
		# the tree's own files: a build's objects (kmod/ is built in
		# place, its .cmd files name the clone's path) are no input
		*) if [ "$git" = 1 ]; then
			git ls-files -z -- "$i"
		else
			find "$i" -type f -print0
		fi 2>&1 | sort -z | xargs -0 sha256sum 2>&1 ;;
		esac
	done
	qemu-system-x86_64 --version | head -n 1
	qemu-system-aarch64 --version 2>/dev/null | head -n 1
} | sha256sum | cut -c1-16)
dir=${PPKIT_CACHE:-/var/cache/ppkit}/harness
stamp=$dir/$name-$key
if [ "${HARNESS_RERUN:-0}" != 1 ] && [ -f "$stamp/passed" ]; then
	sed 's/^/# cached: /' "$stamp/out"
	echo "lab: note: inputs unchanged since its pass of $(cat "$stamp/passed") (key $key): reused, no guest booted; HARNESS_RERUN=1 runs it again" >&2
	exit 0
fi
mkdir -p "$dir"
out=$(mktemp "$dir/.out.XXXXXX")
"$@" 2>&1 | tee "$out"
rc=${PIPESTATUS[0]}
if [ "$rc" -eq 0 ]; then
	mkdir -p "$stamp"
	mv "$out" "$stamp/out"
	date -u +%FT%TZ > "$stamp/passed"
else
	rm -f "$out"
fi
exit "$rc"
