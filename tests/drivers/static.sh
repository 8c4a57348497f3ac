#!/bin/bash
# Static analysis of our driver patches against the unpatched driver:
#   sparse (C=2): findings of the patched build that the unpatched build of
#     the same driver and target does not have;
#   checkpatch.pl --strict: on every file the series touches, findings of
#     the patched file that the unpatched file does not have.
# Findings are compared without line numbers (a patch moves lines).  Fails
# if checkpatch does not run to its end or a file the series leaves in the
# tree is missing from a build.  Needs both builds: scripts/drivers/build.sh
# --sparse ARCH and --unpatched --sparse.
#
#   tests/drivers/static.sh ARCH DRIVER...
set -euo pipefail
. "$(dirname "$0")/../../scripts/drivers/lib.sh"
t=$(drv_target "$1")
shift
out=$PPKIT_ROOT/build/drivers/$t
line=$(drv_line)
[ "$line" != 6.1 ] && out=$out-$line
read -r _krel _pkgver srcdir _kbuild _root < <("$PPKIT_ROOT/scripts/drivers/prepare.sh" --print "$t")
# checkpatch runs from the kernel tree: inside a git work tree it would take a
# patch file for a source file.
checkpatch() { (cd "$srcdir" && perl scripts/checkpatch.pl --root="$srcdir" "$@"); }
rc=0
cpo=$(mktemp)
cpe=$(mktemp)
trap 'rm -f "$cpo" "$cpe"' EXIT

# checkpatch's verdict on a file depends on the file, the arguments and
# checkpatch itself (the script and the data files it reads): kept in
# $PPKIT_CACHE/checkpatch/KEY, KEY a hash of all of them, so the lanes of
# other targets (the same driver files) and the next run take it from
# there (PPKIT_NO_CACHE=1: always run it).
cp_cache=$PPKIT_CACHE/checkpatch
cp_self=$(cd "$srcdir/scripts" && cat checkpatch.pl spelling.txt const_structs.checkpatch 2>/dev/null |
	sha256sum | cut -c1-16)
# checkpatch --terse ARGS: its findings in $cpo; returns 1 if it did not run
# to its end.  --terse prints nothing for a clean file and exits 0; it exits 1
# only with findings, which end with its "total:" line.  Anything else
# (another status, stderr, a 1 without the summary) is a broken checkpatch,
# not a verdict.
cp_run() {
	local s=0 ran=0 key="" f=${*: -1} rel
	if [ "${PPKIT_NO_CACHE:-0}" != 1 ]; then
		# the key has the file's path inside the driver's tree (checkpatch
		# reads it: net/ rules, .h or .c), its output @FILE@ for the path
		rel=${f#"$PPKIT_ROOT"/}
		rel=${rel#build/drivers/*/work/}
		key=$cp_cache/$({ echo "$cp_self ${*:1:$#-1} $rel"; cat "$f"; } | sha256sum | cut -c1-24)
		[ -f "$key" ] && { sed "s|@FILE@|$f|g" "$key" >"$cpo"; return 0; }
	fi
	checkpatch --strict --no-tree --terse "$@" >"$cpo" 2>"$cpe" || s=$?
	if [ ! -s "$cpe" ]; then
		case $s in
		0) [ -s "$cpo" ] || ran=1 ;;
		1) tail -n 1 "$cpo" | grep -E '^total: [0-9]+ errors' >/dev/null && ran=1 ;;
		esac
	fi
	if [ $ran -eq 1 ]; then
		# only a verdict is kept, never a broken run
		[ -z "$key" ] || { mkdir -p "$cp_cache" && sed "s|$f|@FILE@|g" "$cpo" >"$key.$$" && mv "$key.$$" "$key"; }
		return 0
	fi
	echo "static: $t: checkpatch did not run to its end on ${*: -1} (exit $s):"
	cat "$cpe" "$cpo" | head -10 | sed 's/^/    /'
	return 1
}

# "file:line:col: message" -> "file: message", sorted, for a multiset diff;
# checkpatch's "total: ..." summary is not a finding.
norm() { sed -E '/^total:/d; s/^[^ ]*\/([^/: ]+):[0-9]+(:[0-9]+)?:/\1:/' | sort; }

for drv in "$@"; do
	# both builds first: without them there is nothing to compare
	for f in "$out/unpatched/logs/$drv-sparse.log" "$out/logs/$drv-sparse.log"; do
		[ -f "$f" ] && continue
		lane=build-$t
		[ "$line" = 6.1 ] || lane=$lane-$line
		echo "static: $t $drv: no $f: the $lane lane failed or did not run first (its log says why); nothing to compare"
		exit 1
	done
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

	# "M|C|D path" per file header of the series, in order: modified,
	# created, deleted; a file's last line is its state after the series.
	changes=$(awk '/^--- /{o=$2; on=FNR; next}
		/^\+\+\+ / && FNR == on + 1 {
			if ($2 == "/dev/null") print "D", substr(o, 3)
			else if (o == "/dev/null") print "C", substr($2, 3)
			else print "M", substr($2, 3)
		}' "$PPKIT_ROOT"/drivers/"$drv"/"$line"/patches/*.patch)
	files=$(echo "$changes" | awk '{print $2}' | sort -u)
	newcp=0
	basecp=0
	cpbad=0
	for f in $files; do
		a=$out/unpatched/work/$drv/$f
		b=$out/work/$drv/$f
		last=$(echo "$changes" | awk -v f="$f" '$2 == f {s = $1} END {print s}')
		[ "$last" = D ] && continue
		if [ ! -f "$b" ]; then
			echo "static: $t $drv: $f: the series changes it, but the patched build has no such file"
			cpbad=1
			continue
		fi
		ca=
		if [ -f "$a" ]; then
			cp_run --show-types -f "$a" || { cpbad=1; continue; }
			ca=$(norm <"$cpo")
		elif ! grep -qxF "C $f" <<< "$changes"; then
			echo "static: $t $drv: $f: the series does not create it, but the unpatched build has no such file"
			cpbad=1
			continue
		fi
		cp_run --show-types -f "$b" || { cpbad=1; continue; }
		cb=$(norm <"$cpo")
		n=$(comm -13 <(echo "$ca") <(echo "$cb") | grep -c . || true)
		basecp=$((basecp + $(echo "$ca" | grep -c . || true)))
		if [ "$n" -gt 0 ]; then
			echo "static: $t $drv: checkpatch: $(basename "$f"): new findings:"
			comm -13 <(echo "$ca") <(echo "$cb") | sed 's/^/    /'
			newcp=$((newcp + n))
		fi
	done
	if [ $newcp -gt 0 ] || [ $cpbad -ne 0 ]; then
		rc=1
	else
		echo "static: $t $drv: checkpatch --strict: no new findings in $(echo "$files" | wc -w) files (the unpatched files have $basecp)"
	fi
	for p in "$PPKIT_ROOT"/drivers/"$drv"/"$line"/patches/*.patch; do
		# The patch itself: commit message and added lines.  The
		# kernel source is Debian's tarball, not a git tree: the
		# commit a Fixes: tag names cannot be looked up here.
		if ! cp_run --ignore UNKNOWN_COMMIT_ID "$p"; then
			rc=1
		elif [ -s "$cpo" ]; then
			echo "static: $t $drv: checkpatch: $(basename "$p"):"
			sed 's/^/    /' "$cpo" | head -20
			rc=1
		fi
	done
done
exit $rc
