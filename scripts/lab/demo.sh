#!/bin/bash
# `make run`: the most complete demo the project gives so far. Boots the lab,
# loads the pool and runs its KTAP selftests, then the benchmark of the pool
# against the kernel's page_pool and the page allocator (one boot), prints
# its table, then ppsim (the software NIC) carrying traffic, seen live
# through ppctl, and last the patched stmmac on an emulated Orange Pi PC
# (armhf): TCP both ways, then the armhf ppctl's view of its pool.
#
# DEMO_PARTS (default "selftest bench ppsim stmmac"): which parts; make test
# runs "bench ppsim" (its rows pool-selftest and drivers: orangepi run the
# other two's scripts).
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 1
mkdir -p build/lab
PARTS=" ${DEMO_PARTS:-selftest bench ppsim stmmac} "
part() { [[ "$PARTS" = *" $1 "* ]]; }
echo "== ppkit demo: kernel $(scripts/lab/kver), QEMU TCG"
if part selftest; then
	echo "== 1/4 pool selftests (2 vCPUs, 2 NUMA nodes)"
	scripts/lab/run -v --smp 2 --numa 2 -- tests/lab/pool-selftest.sh > build/lab/demo-selftest.out 2>&1
	rc=$?
	python3 tests/tier/tap.py --ktap < build/lab/demo-selftest.out | tail -n 1
	[ $rc -eq 0 ] || { echo "selftests failed (exit $rc): build/lab/demo-selftest.out"; tail -n 20 build/lab/demo-selftest.out; exit 1; }
fi
if part bench; then
	echo "== 2/4 benchmark: ppkit vs native page_pool vs page allocator"
	scripts/bench/pool-bench.sh > build/lab/demo-bench.out 2>&1 ||
		{ cat build/lab/demo-bench.out; echo "benchmark failed"; exit 1; }
	sed -n '/^median ns\/op/,$p' build/lab/demo-bench.out
	grep -q '^median ns/op' build/lab/demo-bench.out || { echo "benchmark printed no table"; exit 1; }
fi
if part ppsim; then
	echo "== 3/4 ppsim with traffic (generator, TCP, XDP), live through ppctl"
	scripts/lab/run --smp 2 --mem 1536 -- tests/lab/demo-ppsim.sh || exit 1
fi
part stmmac || exit 0
echo "== 4/4 stmmac on pp_backport: qemu -M orangepi-pc (armhf), TCP both ways, ppctl"
make -s drivers ARCH=arm >build/lab/demo-drivers.out 2>&1 &&
	make -s tools ARCH=arm >>build/lab/demo-drivers.out 2>&1 ||
	{ tail -n 20 build/lab/demo-drivers.out; echo "building the armhf modules or ppctl failed"; exit 1; }
exec tests/drivers/run.sh orangepi-demo
