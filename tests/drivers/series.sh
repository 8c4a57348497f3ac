#!/bin/bash
# Every driver series applies to every point release driver.conf claims:
# for each driver, each line with a series (drivers/DRIVER/LINE/) and each
# release of tested_LINE=, the whole series and its fixes-only set are
# applied (no fuzz) to a copy of the driver from that release's own source
# (scripts/drivers/prepare.sh --sources extracts them), with the series'
# version conditions (scripts/drivers/lib.sh drv_apply_series).  A claimed
# release whose source cannot be had fails the lane: a claim is checked,
# not written.  Then every cross target's kernel choice is one of the
# claimed releases (drv_krel: the lists' own choice, or the newest tested
# one they have, or refused with what is supported).
#
#   tests/drivers/series.sh           KTAP-style cases, exit 0 if all pass
set -u
. "$(dirname "$0")/../../scripts/drivers/lib.sh"
cd "$PPKIT_ROOT" || exit 1
n=0 failn=0
ok() { n=$((n + 1)); echo "ok $n - $*"; }
bad() { n=$((n + 1)); echo "not ok $n - $*"; failn=$((failn + 1)); }

srcs=$(scripts/drivers/prepare.sh --sources 2>&1 && scripts/drivers/prepare.sh --sources --print) || {
	echo "$srcs" | sed 's/^/# /'
	echo "not ok 1 - the sources of the claimed releases (scripts/drivers/prepare.sh --sources)"
	echo "1..1"
	exit 1
}
srcs=$(echo "$srcs" | grep -E '^[0-9]+\.[0-9]+ [0-9.]+ /')
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

for conf in drivers/*/driver.conf; do
	drv=$(basename "$(dirname "$conf")")
	path=$(sed -n 's/^path=//p' "$conf")
	while read -r line rel src; do
		[ -f "drivers/$drv/$line/series" ] || continue
		claimed=" $(drv_claims "$conf" "$line") "
		case $claimed in *" $rel "*) ;; *) continue ;; esac
		ver=$(make -s -C "$src" kernelversion 2>/dev/null)
		if [ "$ver" != "$rel" ]; then
			bad "$drv $line: $rel: the cached source at $src is $ver"
			continue
		fi
		for set in all fixes-only; do
			t=$work/$drv-$rel-$set
			mkdir -p "$t/$(dirname "$path")"
			cp -r "$src/$path" "$t/$path"
			if drv_apply_series "drivers/$drv/$line/series" "$rel" \
				"$([ $set = fixes-only ] && echo 1 || echo 0)" "$t" "$t.log" 2>"$t.err"; then
				ok "$drv $line series ($set) applies to $rel with no fuzz ($(grep -c '^== ' "$t.log") patches)"
			else
				sed 's/^/# /' "$t.err" | head -n 20
				bad "$drv $line series ($set): $DRV_FAILED does not apply to $rel with no fuzz"
			fi
			rm -rf "$t"
		done
	done <<< "$srcs"
done

# The machine's choice for each cross target is a claimed release.
for t in arm64 arm; do
	krel=$(DRV_QUIET=1 drv_krel "$t" 2>"$work/krel.err") || {
		sed 's/^/# /' "$work/krel.err"
		bad "$t: the package lists' kernel is refused (above)"
		continue
	}
	v=$(drv_upstream "$(drv_pkgver "$krel" "$(drv_debarch "$t")")")
	tested=$(drv_tested "$t" 6.1)
	case " $tested " in
	*" $v "*) ok "$t: the kernel chosen from the package lists, $krel ($v), is tested (tested: $tested)" ;;
	*) bad "$t: the kernel chosen from the package lists, $krel ($v), is not one of $tested" ;;
	esac
done

echo "1..$n"
echo "series: $((n - failn)) passed, $failn failed"
[ $failn -eq 0 ]
