#!/bin/bash
# Guest side of `make run`'s last step: pools with traffic, seen through ppctl.
set -eu
cd "$(dirname "$0")/../.."
insmod kmod/pool/pp_backport.ko
insmod kmod/tests/pp_poolgen.ko pools=4 inflight=8 churn=64
echo "\$ ppctl list"
build/bin/ppctl list
echo
echo "\$ ppctl stats --interval 1 --count 3"
build/bin/ppctl stats --interval 1 --count 3
echo
echo "\$ ppctl stats"
build/bin/ppctl stats
rmmod pp_poolgen
rmmod pp_backport
