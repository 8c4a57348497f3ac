#!/bin/bash
# Guest side: the pool under concurrency (tests/lab/run-all.sh, pool-races).
# Boot with --smp 3 and --append 'slub_debug=FZP swiotlb=force preempt=full':
# slab poisoning and red zones make a write into a freed pool or a double
# free a report the lab fails on, every DMA mapping takes swiotlb slots that
# can be counted, and a kthread can be preempted wherever preemption is
# enabled again.
#   1. pages lent to the stack are unmapped when their pool is destroyed,
#      not when the stack lets go (swiotlb slots in use, before and after);
#   2. pp_race.ko: statistics read during refills, returns racing destroy,
#      one pool shared by two NAPI contexts under a driver's lock (mvpp2),
#      direct returns after destroy, the ring resized under refills,
#      holders-get's snapshot while the lent FIFO is replaced (KTAP);
#   3. rmmod pp_backport racing sockets that give the last pages back.
# READS, ROUNDS (pp_race) and UNLOAD_ROUNDS scale it (make test, make soak).
set -u
cd "$(dirname "$0")/../.." || exit 1
. tests/lab/ktap-load.sh
# The debug kernel (KASAN, lockdep) runs everything several times slower:
# in make test's debug lane, half the reads and the destroy rounds, and 60
# unloads (1.8 s each there), the close swept over the same 10 ms in steps
# of 0.17 ms instead of 0.1; make soak (SOAK_RACE_ENV, LAB_KERNEL=debug)
# runs the long forms.
case $(uname -r) in
*-ppkit-debug) DEF_READS=500000 DEF_ROUNDS=2000 DEF_UNLOAD=60 ;;
*) DEF_READS=1000000 DEF_ROUNDS=4000 DEF_UNLOAD=200 ;;
esac
READS=${READS:-$DEF_READS}
ROUNDS=${ROUNDS:-$DEF_ROUNDS}
UNLOAD_ROUNDS=${UNLOAD_ROUNDS:-$DEF_UNLOAD}
fail=0
say() { echo "# $*"; }
ip link set lo up

# 1. DMA mappings do not outlive the pool's destroy.
mountpoint -q /sys/kernel/debug || mount -t debugfs debugfs /sys/kernel/debug
USED=/sys/kernel/debug/swiotlb/io_tlb_used
if ! grep -q 'swiotlb=force' /proc/cmdline || [ ! -r $USED ]; then
	say "FAIL: no swiotlb=force or no $USED: cannot count DMA mappings"; fail=1
else
	insmod kmod/pool/pp_backport.ko lend_timeout_ms=600000 || exit 1
	python3 - "$USED" <<'PY' || fail=1
import os, socket, sys
used = lambda: int(open(sys.argv[1]).read())
s = socket.socket(socket.AF_PACKET, socket.SOCK_DGRAM, socket.htons(0x0800))
s.bind(("lo", 0x0800))
s.setsockopt(socket.SOL_SOCKET, 33, 4 << 20)   # SO_RCVBUFFORCE
before = used()
if os.system("insmod kmod/tests/pp_sockhold.ko port=9999 count=64"):
    print("# FAIL: insmod pp_sockhold"); sys.exit(1)
after = used()
held = 0
s.setblocking(False)
try:
    while s.recv(4096):
        held += 1
except BlockingIOError:
    pass
ok = after == before and held == 64
print(f"# {'ok' if ok else 'FAIL'}: swiotlb slots in use {before} before, {after} after "
      f"the destroy with {held} pages in the socket: lent pages unmapped at destroy")
sys.exit(0 if ok else 1)
PY
	rmmod pp_sockhold
	rmmod pp_backport || { say "FAIL: rmmod pp_backport"; fail=1; }
fi

# 2. The race harness, with the release work running every millisecond.
insmod kmod/pool/pp_backport.ko release_retry_ms=1 || exit 1
ktap_load kmod/tests/pp_race.ko reads="$READS" rounds="$ROUNDS"
rc=$?
[ $rc -eq 0 ] || { say "FAIL: pp_race load returned $rc"; fail=1; }
rmmod pp_race 2>/dev/null
rmmod pp_backport || { say "FAIL: rmmod pp_backport after pp_race"; fail=1; }

# 3. Unload against the release work.
tests/lab/race-unload.py "$UNLOAD_ROUNDS" || fail=1
exit $fail
