#!/bin/bash
# The lab must fail a run whose guest kernel log shows a splat, even when the
# command itself succeeds, and name the offending line.
cd "$(dirname "$0")/../.."
out=$(scripts/lab/run -- sh -c 'echo "<4>WARNING: CPU: 0 PID: 1 at ppkit-lab-probe" > /dev/kmsg; exit 0' 2>&1)
rc=$?
echo "$out"
[ $rc -eq 99 ] || { echo "expected exit 99, got $rc"; exit 1; }
echo "$out" | grep -q 'ppkit-lab-probe' || { echo "offending line not shown"; exit 1; }
