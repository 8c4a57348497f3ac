# shellcheck shell=bash
# Sourced by the guest-side lab tests of the KTAP modules.
#   ktap_load KO [PARAM=VALUE...]   insmod a module whose cases run on load
#                                   (pp_selftest, pp_race), print its KTAP
#                                   lines from the kernel log, return insmod's
#                                   status (non-zero when a case failed)
ktap_load() {
	local mark rc
	mark=$(dmesg | wc -l)
	insmod "$@"
	rc=$?
	dmesg | tail -n +"$((mark + 1))" | sed 's/^\[[^]]*\] //' |
		grep -E '^(KTAP version|1\.\.|ok |not ok |    #|# )'
	return $rc
}
