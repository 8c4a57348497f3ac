#!/bin/bash
# `make run`: the most complete demo the project gives so far. Boots the lab,
# loads the pool and runs its KTAP selftests, then the benchmark of the pool
# against the kernel's page_pool and the page allocator (one boot), and
# prints its table.
set -uo pipefail
cd "$(dirname "$0")/../.."
mkdir -p build/lab
echo "== ppkit demo: kernel $(scripts/lab/kver), QEMU TCG"
echo "== 1/2 pool selftests (2 vCPUs, 2 NUMA nodes)"
scripts/lab/run -v --smp 2 --numa 2 -- tests/lab/pool-selftest.sh > build/lab/demo-selftest.out 2>&1
rc=$?
python3 tests/lab/ktap.py --min-pass 20 < build/lab/demo-selftest.out | tail -n 1
[ $rc -eq 0 ] || { echo "selftests failed (exit $rc): build/lab/demo-selftest.out"; tail -n 20 build/lab/demo-selftest.out; exit 1; }
echo "== 2/2 benchmark: ppkit vs native page_pool vs page allocator"
exec scripts/bench/pool-bench.sh
