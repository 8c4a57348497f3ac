#!/bin/bash
# Render the man pages from reStructuredText and check them.
#
#   scripts/docs/man.sh              (from anywhere)
#   MAN_OUT=DIR scripts/docs/man.sh  (default: build/man)
#   MAN_SRC=DIR scripts/docs/man.sh  (default: Documentation/man; for tests)
#
# Every Documentation/man/NAME.SECTION.rst (ppctl.8, ppctld.8) becomes
# build/man/NAME.SECTION through rst2man (python3-docutils) with
# --halt=warning --report=warning: any docutils warning fails the page.
# Then groff formats the page with all its warnings on (groff -t -man -ww
# -z -Tutf8; -t because rst2man writes tables for tbl) and anything groff
# prints on stderr fails it too.  Prints one line per page,
# "man: ppctl.8: ok (N lines)" or "man: ppctl.8: FAIL" with the messages;
# exits non-zero if any page failed or there was none.
set -euo pipefail
REPO=$(cd "$(dirname "$0")/../.." && pwd)
cd "$REPO"
OUT=${MAN_OUT:-build/man}
SRC=${MAN_SRC:-Documentation/man}

for tool in rst2man groff tbl; do
	command -v "$tool" > /dev/null ||
		{ echo "man: $tool is missing: apt-get install python3-docutils groff" >&2; exit 1; }
done
mkdir -p "$OUT"

shopt -s nullglob
pages=("$SRC"/*.[1-9].rst)
[ ${#pages[@]} -gt 0 ] || { echo "man: no $SRC/*.N.rst" >&2; exit 1; }

failed=0
for src in "${pages[@]}"; do
	name=$(basename "$src" .rst)
	dst=$OUT/$name
	err=$(mktemp)
	if ! rst2man --halt=warning --report=warning "$src" "$dst.tmp" 2> "$err"; then
		echo "man: $name: FAIL (rst2man)"
		sed 's/^/    /' "$err"
		rm -f "$dst.tmp" "$err"
		failed=$((failed + 1))
		continue
	fi
	mv "$dst.tmp" "$dst"
	if ! groff -t -man -ww -z -Tutf8 "$dst" 2> "$err" || [ -s "$err" ]; then
		echo "man: $name: FAIL (groff)"
		sed 's/^/    /' "$err"
		rm -f "$err"
		failed=$((failed + 1))
		continue
	fi
	rm -f "$err"
	echo "man: $name: ok ($(wc -l < "$dst") lines) -> $dst"
done
[ $failed -eq 0 ]
