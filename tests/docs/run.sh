#!/bin/bash
# Documentation checks (no kernel, no QEMU; about 15 s of CPU):
#   man           scripts/docs/man.sh renders ppctl(8) and ppctld(8) into
#                 build/man/ with no docutils and no groff warning
#   man-strict    man.sh fails a page with a docutils warning, and a page
#                 groff warns about
#   man-content   each page has NAME, SYNOPSIS, DESCRIPTION, OPTIONS, EXIT
#                 STATUS, FILES, EXAMPLES and SEE ALSO;
#                 when build/bin/ppctl and ppctld exist, ppctl(8) shows every
#                 command path (sim gen start ...) in its SYNOPSIS and names
#                 every option that `ppctl PATH --help` lists, and ppctld(8)
#                 every option of `ppctld --help`
#   rst           every Documentation/**/*.rst parses as with
#                 `rst2html --halt=warning` (no docutils warning)
#   references    every Documentation/... file the docs and README name
#                 exists; every top-level page is linked from README.md
#   netlink-doc   tests/kernel/check-spec.py: spec, uapi header and
#                 Documentation/netlink.rst agree
#   completion    tools/completion/*.bash pass `bash -n`; sourced, "ppctl st"
#                 completes to stats; every command and option the binaries'
#                 --help lists completes; pool ids come from `ppctl --json list`
#
#   tests/docs/run.sh
#
# Prints "ok N - ..." or "not ok N - ..." per check, then "docs: N passed, N
# failed" (and how many were skipped for want of build/bin); exits non-zero
# if any check failed.
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 1
PPCTL=${PPCTL:-build/bin/ppctl}
PPCTLD=${PPCTLD:-build/bin/ppctld}
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
pass=0 failn=0 skipped=0

ok() { pass=$((pass + 1)); echo "ok $((pass + failn)) - $*"; }
bad() { failn=$((failn + 1)); echo "not ok $((pass + failn)) - $*"; }
# Checks against the binaries are skipped without them, unless
# DOCS_REQUIRE_BINARIES=1 (make test-docs, which builds them first).
skip() {
	if [ "${DOCS_REQUIRE_BINARIES:-0}" = 1 ]; then bad "$*"; return; fi
	echo "skip: $*"; skipped=$((skipped + 1))
}
check() { # WHAT COMMAND...: ok if COMMAND succeeds
	local what=$1
	shift
	if "$@"; then ok "$what"; else bad "$what"; fi
}

# Plain text of a man page, one paragraph per line (no hyphenation).
man_text() { groff -t -man -Tutf8 -rLL=1000n -rHY=0 -P-cbou "$1" 2> /dev/null; }

# `BINARY [PATH...] --help`, run once per command path.
help_of() {
	local f
	f=$T/help.$(printf '%s_' "$@" | tr '/ ' '__')
	[ -f "$f" ] || "$@" --help > "$f" 2>&1
	cat "$f"
}
# "Subcommands:" and long options of `BINARY [PATH...] --help`.
help_subcommands() { help_of "$@" | sed -n '/^Subcommands:/,/^$/p' | sed -nE 's/^  ([a-z][a-z-]*) .*/\1/p'; }
help_options() {
	help_of "$@" | sed -n '/^Options:/,/^$/p' | grep -oE '^ +(-[a-zA-Z],)?--[a-z][a-z-]*' |
		sed -E 's/^ +(-[a-zA-Z],)?//'
}

# Every command path of ppctl, one per line ("stats", "sim gen start", ...).
ppctl_paths() {
	local queue=("") p s
	if [ ! -f "$T/paths" ]; then
		while [ ${#queue[@]} -gt 0 ]; do
			p=${queue[0]}
			queue=("${queue[@]:1}")
			# shellcheck disable=SC2086 # $p: the path's words
			for s in $(help_subcommands "$PPCTL" $p); do
				echo "${p:+$p }$s"
				queue+=("${p:+$p }$s")
			done
		done > "$T/paths"
	fi
	cat "$T/paths"
}

echo "== man"
if scripts/docs/man.sh > "$T/man.out" 2>&1; then
	ok "man pages render with no docutils or groff warning"
else
	bad "man pages render with no docutils or groff warning"
fi
sed 's/^/    /' "$T/man.out"

echo "== man-strict"
mkdir -p "$T/bad1" "$T/bad2" "$T/out"
printf '=====\n bad\n=====\n\n----\nbad\n----\n\n:Manual section: 8\n\nDESCRIPTION\n===========\n\nAn *unclosed emphasis.\n' \
	> "$T/bad1/bad.8.rst"
printf '=====\n bad\n=====\n\n----\nbad\n----\n\n:Manual section: 8\n\nDESCRIPTION\n===========\n\n%s\n' \
	"$(printf 'x%.0s' $(seq 300))" > "$T/bad2/bad.8.rst"
MAN_SRC=$T/bad1 MAN_OUT=$T/out scripts/docs/man.sh > "$T/bad1.out" 2>&1
check "man.sh fails a page with a docutils warning" \
	test $? -ne 0 -a "$(grep -c 'FAIL (rst2man)' "$T/bad1.out")" = 1
MAN_SRC=$T/bad2 MAN_OUT=$T/out scripts/docs/man.sh > "$T/bad2.out" 2>&1
check "man.sh fails a page groff warns about" \
	test $? -ne 0 -a "$(grep -c 'FAIL (groff)' "$T/bad2.out")" = 1

echo "== man-content"
for page in ppctl.8 ppctld.8; do
	if [ ! -s "build/man/$page" ]; then
		bad "$page: rendered"
		continue
	fi
	man_text "build/man/$page" > "$T/$page.txt"
	missing=()
	for sec in NAME SYNOPSIS DESCRIPTION OPTIONS 'EXIT STATUS' FILES EXAMPLES 'SEE ALSO'; do
		[ "$page" = ppctl.8 ] && [ "$sec" = OPTIONS ] && sec='GLOBAL OPTIONS'
		grep -qx "$sec" "$T/$page.txt" || missing+=("$sec")
	done
	if [ ${#missing[@]} -eq 0 ]; then
		ok "$page: NAME, SYNOPSIS, DESCRIPTION, OPTIONS, EXIT STATUS, FILES, EXAMPLES, SEE ALSO"
	else
		bad "$page: sections missing: ${missing[*]}"
	fi
done
if [ -x "$PPCTL" ] && [ -s "$T/ppctl.8.txt" ]; then
	# The SYNOPSIS section's lines, continuation lines joined.
	sed -n '/^SYNOPSIS$/,/^DESCRIPTION$/p' "$T/ppctl.8.txt" |
		sed -E ':a;N;$!ba;s/\n +\[/ [/g' > "$T/synopsis"
	missing=()
	while read -r path; do
		# shellcheck disable=SC2086
		grep -qE "^ +ppctl .*\b${path}\b" "$T/synopsis" || missing+=("$path")
	done < <(ppctl_paths)
	if [ ${#missing[@]} -eq 0 ]; then
		ok "ppctl(8): every command of ppctl --help in SYNOPSIS ($(ppctl_paths | wc -l) paths)"
	else
		bad "ppctl(8): commands missing from SYNOPSIS: ${missing[*]}"
	fi
	missing=()
	while read -r path; do
		# shellcheck disable=SC2086
		for o in $(help_options "$PPCTL" $path); do
			grep -qF -- "$o" "$T/ppctl.8.txt" || missing+=("${path:-ppctl}:$o")
		done
	done < <(echo; ppctl_paths)
	if [ ${#missing[@]} -eq 0 ]; then
		ok "ppctl(8): every option of every --help"
	else
		bad "ppctl(8): options missing: ${missing[*]}"
	fi
else
	skip "ppctl(8) against the binary: no $PPCTL (make tools)"
fi
if [ -x "$PPCTLD" ] && [ -s "$T/ppctld.8.txt" ]; then
	missing=()
	for o in $(help_options "$PPCTLD"); do
		grep -qF -- "$o" "$T/ppctld.8.txt" || missing+=("$o")
	done
	if [ ${#missing[@]} -eq 0 ]; then
		ok "ppctld(8): every option of ppctld --help"
	else
		bad "ppctld(8): options missing: ${missing[*]}"
	fi
else
	skip "ppctld(8) against the binary: no $PPCTLD (make tools)"
fi

echo "== rst"
# What `rst2html --halt=warning --report=warning FILE /dev/null` does, for
# every file in one python (Debian's docutils, as rst2html uses it).
/usr/bin/python3 - > "$T/rst.out" 2>&1 << 'EOF'
import glob
import io
import sys

import docutils.core
import docutils.utils

files = sorted(glob.glob('Documentation/**/*.rst', recursive=True))
bad = 0
for f in files:
    err = io.StringIO()
    try:
        with open(f, encoding='utf-8') as src:
            docutils.core.publish_string(
                src.read(), source_path=f, writer_name='html',
                settings_overrides={'halt_level': 2, 'report_level': 2,
                                    'warning_stream': err})
    except docutils.utils.SystemMessage:
        pass
    if err.getvalue():
        bad += 1
        print(f'FAIL {f}')
        print(''.join('    ' + line + '\n' for line in err.getvalue().splitlines()), end='')
print(f'checked {len(files)}')
sys.exit(1 if bad or not files else 0)
EOF
rc=$?
n=0
while IFS= read -r line; do
	case "$line" in
	"FAIL "*) bad "${line#FAIL } parses without docutils warnings" ;;
	"checked "*) n=${line#checked } ;;
	*) echo "$line" ;;
	esac
done < "$T/rst.out"
if [ $rc -eq 0 ]; then
	ok "all $n Documentation/**/*.rst files parse with no docutils warning"
elif ! grep -q '^FAIL ' "$T/rst.out"; then
	bad "docutils could not check Documentation/**/*.rst"
fi

echo "== references"
missing=()
while read -r ref; do
	[ -e "$ref" ] || missing+=("$ref")
done < <(find README.md Documentation \( -name '*.rst' -o -name README.md \) \
	-exec grep -ohE 'Documentation/[A-Za-z0-9_./-]*[A-Za-z0-9_]' {} + | sort -u)
if [ ${#missing[@]} -eq 0 ]; then
	ok "every Documentation/ path named in the docs and README exists"
else
	bad "named but missing: ${missing[*]}"
fi
missing=()
for f in Documentation/*.rst; do
	grep -qF "($f)" README.md || missing+=("$f")
done
if [ ${#missing[@]} -eq 0 ]; then
	ok "every Documentation/*.rst is linked from README.md"
else
	bad "not linked from README.md: ${missing[*]}"
fi

echo "== netlink-doc"
if /usr/bin/python3 tests/kernel/check-spec.py > "$T/spec.out" 2>&1; then
	ok "netlink spec, uapi header and netlink.rst agree ($(tail -1 "$T/spec.out"))"
else
	bad "netlink spec, uapi header and netlink.rst agree"
	sed 's/^/    /' "$T/spec.out"
fi

echo "== completion"
for f in tools/completion/ppctl.bash tools/completion/ppctld.bash; do
	check "bash -n $f" bash -n "$f"
done
# complete WORD...: COMPREPLY for the command line WORD... (last word: the
# one being completed), one per line.  A function of the sourced file.
cat > "$T/complete.sh" << 'EOF'
. tools/completion/ppctl.bash
. tools/completion/ppctld.bash
fn=_ppctl
[ "${1##*/}" = ppctld ] && fn=_ppctld
COMP_WORDS=("$@")
COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
COMPREPLY=()
"$fn"
printf '%s\n' "${COMPREPLY[@]}"
EOF
complete_line() { bash "$T/complete.sh" "$@"; }
check 'ppctl st<TAB>: stats' grep -qx stats <(complete_line ppctl st)
check 'ppctl sim set IF --pool <TAB>: ppkit native none' \
	test "$(complete_line ppctl sim set sim0 --pool '' | tr '\n' ' ')" = 'ppkit native none '
check 'ppctl --source <TAB>: ppkit netdev all' \
	test "$(complete_line ppctl --source '' | tr '\n' ' ')" = 'ppkit netdev all '
check 'ppctl sim --<TAB> does not offer --source' \
	test -z "$(complete_line ppctl sim add -- | grep -x -- --source)"
check 'ppctld --alert-l<TAB>: both leak options' \
	test "$(complete_line ppctld --alert-l | tr '\n' ' ')" = '--alert-leak-for --alert-leak-min-pages '
# Pool ids from `ppctl --json list`: a stand-in ppctl that prints two pools.
cat > "$T/ppctl" << 'EOF'
#!/bin/sh
case "$*" in
*"sim list"*) echo '{"command": "sim-list", "devices": [{"ifname": "sim0", "peer_ifname": "sim1"}, {"ifname": "sim1", "peer_ifname": "sim0"}], "version": 1}' ;;
*list*) echo '{"command": "list", "pools": [{"id": 3, "napi_id": 77, "queue": 0}, {"id": 12, "napi_id": 78}], "version": 1}' ;;
*) exit 2 ;;
esac
EOF
chmod +x "$T/ppctl"
check 'ppctl stats <TAB>: the pool ids of ppctl --json list' \
	test "$(complete_line "$T/ppctl" stats '' | tr '\n' ' ')" = '3 12 '
check 'ppctl set 1<TAB>: 12' test "$(complete_line "$T/ppctl" set 1)" = 12
check 'ppctl sim gen start <TAB>: the ppsim devices' \
	test "$(complete_line "$T/ppctl" sim gen start '' | tr '\n' ' ')" = 'sim0 sim1 '
check 'no pool ids when ppctl fails' test -z "$(complete_line /bin/false stats '')"
if [ -x "$PPCTL" ]; then
	missing=()
	while read -r path; do
		# shellcheck disable=SC2086
		set -- $path
		last=${!#}
		parent=("${@:1:$#-1}")
		grep -qx -- "$last" <(complete_line ppctl "${parent[@]}" '') || missing+=("$path")
		complete_line ppctl "$@" -- > "$T/offered"
		for o in $(help_options "$PPCTL" "$@"); do
			grep -qx -- "$o" "$T/offered" || missing+=("$path $o")
		done
	done < <(ppctl_paths)
	complete_line ppctl -- > "$T/offered"
	for o in $(help_options "$PPCTL"); do
		grep -qx -- "$o" "$T/offered" || missing+=("ppctl $o")
	done
	if [ ${#missing[@]} -eq 0 ]; then
		ok "ppctl completion: every command and option of ppctl's --help"
	else
		bad "ppctl completion misses: ${missing[*]}"
	fi
else
	skip "ppctl completion against the binary: no $PPCTL"
fi
if [ -x "$PPCTLD" ]; then
	missing=()
	complete_line ppctld -- > "$T/offered"
	for o in $(help_options "$PPCTLD"); do
		grep -qx -- "$o" "$T/offered" || missing+=("$o")
	done
	if [ ${#missing[@]} -eq 0 ]; then
		ok "ppctld completion: every option of ppctld --help"
	else
		bad "ppctld completion misses: ${missing[*]}"
	fi
else
	skip "ppctld completion against the binary: no $PPCTLD"
fi

note=
[ $skipped -gt 0 ] && note=" ($skipped skipped: build the tools for them)"
echo "docs: $pass passed, $failn failed$note"
[ $failn -eq 0 ]
