#!/bin/bash
# Runs shellcheck (warnings and errors) on every shell script of scripts/ and
# tests/: *.sh, and any other file there whose first line runs a shell.
#
#   tests/tier/shellcheck.sh
#
# Prints the findings and "shellcheck: N files, N findings"; exits non-zero
# on any finding, or when shellcheck is missing (scripts/deps.sh installs it).
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 1
command -v shellcheck > /dev/null || { echo "shellcheck: missing: run scripts/deps.sh"; exit 1; }
mapfile -t files < <({ git ls-files 'scripts/*' 'tests/*'
	git ls-files --others --exclude-standard 'scripts/*' 'tests/*'; } | sort -u |
	while read -r f; do
		[ -f "$f" ] || continue
		case $f in
		*.sh) echo "$f" ;;
		*.*) ;;
		*) head -n 1 "$f" | grep -qE '^#!.*/(env )?(ba|da)?sh\b' && echo "$f" ;;
		esac
	done)
[ ${#files[@]} -gt 0 ] || { echo "shellcheck: no scripts found"; exit 1; }
out=$(shellcheck -x -S warning -f gcc "${files[@]}" 2>&1)
rc=$?
n=$(grep -c ': \(warning\|error\):' <<< "$out")
[ -n "$out" ] && echo "$out"
echo "shellcheck: ${#files[@]} files, $n findings"
[ $rc -eq 0 ] && [ "$n" -eq 0 ]
