# shellcheck shell=bash
# Sourced by the guest-side lab tests of the KTAP modules.
#   ktap_load KO [PARAM=VALUE...]   insmod a module whose cases run on load
#                                   (pp_selftest, pp_race), print its KTAP
#                                   lines from the kernel log, return insmod's
#                                   status (non-zero when a case failed)
# The module's lines are those after a marker this writes to /dev/kmsg just
# before the insmod (a line count of dmesg would point to the wrong line once
# the ring buffer wraps and drops its oldest lines).  If the marker itself is
# gone from the ring buffer, some of the module's lines may be too: that is
# said, and the return is 1 (tests/tier/tap.py --ktap also fails a run whose
# cases do not match its plan "1..N").  KMSG: where the marker is written
# (default /dev/kmsg; a file, to test this with a dmesg of one's own).
ktap_load() {
	local mark rc lines
	mark="ppkit-ktap: load $(basename "$1") $$-$RANDOM$RANDOM"
	echo "$mark" >> "${KMSG:-/dev/kmsg}" || { echo "# ktap_load: cannot write the marker to ${KMSG:-/dev/kmsg}"; return 1; }
	insmod "$@"
	rc=$?
	lines=$(dmesg | sed 's/^\[[^]]*\] //')
	if ! grep -qxF "$mark" <<< "$lines"; then
		echo "# ktap_load: the marker '$mark' is no longer in the kernel log (its ring buffer wrapped): $1's KTAP lines may be incomplete"
		return 1
	fi
	awk -v m="$mark" 'found { print } $0 == m { found = 1 }' <<< "$lines" |
		grep -E '^(KTAP version|1\.\.|ok |not ok |    #|# )'
	return $rc
}
