#!/bin/sh
# Guest side: load pp_backport (with PARAM=VALUE... if given) and ppsim with
# no devices, the way every lab test loads them.  ppsim's xdp_dispatcher comes
# from the lab (scripts/lab/run exports PPSIM_XDP_DISPATCHER=N: QEMU's TCG
# runs stale code after the kernel patches the XDP dispatcher), Y elsewhere.
#   tests/lab/ppsim-load.sh [PARAM=VALUE...]     modules from $PPSIM_KMOD (kmod)
set -e
kmod=${PPSIM_KMOD:-kmod}
insmod "$kmod/pool/pp_backport.ko" "$@"
insmod "$kmod/sim/ppsim.ko" devs=0 xdp_dispatcher="${PPSIM_XDP_DISPATCHER:-Y}"
