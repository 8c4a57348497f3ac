# shellcheck shell=bash
# Sourced by the guest-side lab tests that read the kernel log.
#   kmsg_mark WHAT                  write a marker line (WHAT and a random
#                                   tag) to /dev/kmsg; $kmsg_mark is it
#   kmsg_since                      the kernel log after the last marker,
#                                   without timestamps; returns 1 (and says
#                                   so) when the marker is gone
#   ktap_load KO [PARAM=VALUE...]   insmod a module whose cases run on load
#                                   (pp_selftest, pp_race), print its KTAP
#                                   lines from the kernel log, return insmod's
#                                   status (non-zero when a case failed)
# What happened since a point is found after a marker, not by a line count
# of dmesg, which points to the wrong line once the ring buffer wraps and
# drops its oldest lines.  If the marker itself is gone from the ring
# buffer, some of the lines after it may be too: that is said, and the
# return is 1 (tests/tier/tap.py --ktap also fails a run whose cases do not
# match its plan "1..N").  KMSG: where the marker is written (default
# /dev/kmsg; a file, to test this with a dmesg of one's own).
kmsg_mark() {
	kmsg_mark="ppkit-lab: mark $* $$-$RANDOM$RANDOM"
	echo "$kmsg_mark" >> "${KMSG:-/dev/kmsg}" ||
		{ echo "# kmsg_mark: cannot write the marker to ${KMSG:-/dev/kmsg}"; return 1; }
}
kmsg_since() {
	local lines
	lines=$(dmesg | sed 's/^\[[^]]*\] //')
	if ! grep -qxF "$kmsg_mark" <<< "$lines"; then
		echo "# kmsg_since: the marker '$kmsg_mark' is no longer in the kernel log (its ring buffer wrapped): what came after it may be incomplete"
		return 1
	fi
	awk -v m="$kmsg_mark" 'found { print } $0 == m { found = 1 }' <<< "$lines"
}
ktap_load() {
	local rc lines
	kmsg_mark "load $(basename "$1")" || return 1
	insmod "$@"
	rc=$?
	lines=$(kmsg_since) || { echo "$lines"; echo "# ktap_load: $1's KTAP lines may be incomplete"; return 1; }
	grep -E '^(KTAP version|1\.\.|ok |not ok |    #|# )' <<< "$lines"
	return $rc
}
