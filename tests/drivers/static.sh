#!/bin/bash
# Static analysis of our driver patches against the unpatched driver:
#   sparse (C=2): findings of the patched build that the unpatched build of
#     the same driver and target does not have;
#   checkpatch.pl --strict: on every file the series touches, findings of
#     the patched file that the unpatched file does not have.
# Findings are compared without line numbers (a patch moves lines).  Needs
# both builds: scripts/drivers/build.sh --sparse ARCH and --unpatched --sparse.
#
#   tests/drivers/static.sh ARCH DRIVER...
set -euo pipefail
. "$(dirname "$0")/../../scripts/drivers/lib.sh"
t=$(drv_target "$1")
shift
out=$PPKIT_ROOT/build/drivers/$t
read -r _krel _pkgver srcdir _kbuild _root < <("$PPKIT_ROOT/scripts/drivers/prepare.sh" --print "$t")
# checkpatch runs from the kernel tree: inside a git work tree it would take a
# patch file for a source file.
checkpatch() { (cd "$srcdir" && perl scripts/checkpatch.pl "$@"); }
rc=0

# "file:line:col: message" -> "file: message", sorted, for a multiset diff;
# checkpatch's "total: ..." summary is not a finding.
norm() { grep -v '^total:' | sed -E 's/^[^ ]*\/([^/: ]+):[0-9]+(:[0-9]+)?:/\1:/' | sort; }

for drv in "$@"; do
	# shellcheck disable=SC1090
	. "$PPKIT_ROOT/drivers/$drv/driver.conf"
	new=$(comm -13 <(grep -E 'warning:|error:' "$out/unpatched/logs/$drv-sparse.log" | norm) \
		       <(grep -E 'warning:|error:' "$out/logs/$drv-sparse.log" | norm) || true)
	base=$(grep -cE 'warning:|error:' "$out/unpatched/logs/$drv-sparse.log" || true)
	if [ -n "$new" ]; then
		echo "static: $t $drv: sparse: new findings:"
		echo "$new" | sed 's/^/    /'
		rc=1
	else
		echo "static: $t $drv: sparse: no new findings (the unpatched driver has $base)"
	fi

	files=$(grep -h '^+++ b/' "$PPKIT_ROOT"/drivers/"$drv"/patches/*.patch | sed 's|^+++ b/||' | sort -u)
	newcp=0
	basecp=0
	for f in $files; do
		a=$out/unpatched/work/$drv/$f
		b=$out/work/$drv/$f
		[ -f "$b" ] || continue
		ca=$(checkpatch --strict --no-tree --terse --show-types -q -f "$a" 2>/dev/null | norm || true)
		cb=$(checkpatch --strict --no-tree --terse --show-types -q -f "$b" 2>/dev/null | norm || true)
		n=$(comm -13 <(echo "$ca") <(echo "$cb") | grep -c . || true)
		basecp=$((basecp + $(echo "$ca" | grep -c . || true)))
		if [ "$n" -gt 0 ]; then
			echo "static: $t $drv: checkpatch: $(basename "$f"): new findings:"
			comm -13 <(echo "$ca") <(echo "$cb") | sed 's/^/    /'
			newcp=$((newcp + n))
		fi
	done
	if [ $newcp -gt 0 ]; then
		rc=1
	else
		echo "static: $t $drv: checkpatch --strict: no new findings in $(echo "$files" | wc -w) files (the unpatched files have $basecp)"
	fi
	for p in "$PPKIT_ROOT"/drivers/"$drv"/patches/*.patch; do
		# The patch itself: commit message and added lines.
		if ! checkpatch --strict --no-tree --terse -q "$p" >/dev/null 2>&1; then
			echo "static: $t $drv: checkpatch: $(basename "$p"):"
			checkpatch --strict --no-tree --terse -q "$p" 2>&1 | sed 's/^/    /' | head -20
			rc=1
		fi
	done
done
exit $rc
