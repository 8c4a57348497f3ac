# shellcheck shell=bash
# Sourced by the guest-side lab tests: counted checks.
#   ok WHAT / bad WHAT       count a pass or a failure, print "ok: ..." / "FAIL: ..."
#   check WHAT COMMAND...    ok if COMMAND succeeds, else bad
#   wait_for SEC COMMAND...  until COMMAND succeeds, at most SEC seconds
# The test ends with: echo "NAME: $pass passed, $failn failed"
pass=0 failn=0

ok() { echo "ok: $*"; pass=$((pass + 1)); }
bad() { echo "FAIL: $*"; failn=$((failn + 1)); }
check() {
	local what=$1
	shift
	if "$@"; then ok "$what"; else bad "$what"; fi
}
wait_for() {
	local end=$((SECONDS + $1))
	shift
	until "$@"; do
		[ $SECONDS -ge $end ] && return 1
		sleep 0.25
	done
}
