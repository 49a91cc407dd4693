#!/bin/sh
# bench.pending_gangs: shmsched-pending-bench --kind gangs on a small
# cluster. Both sides place every gang whole (gangs of 4 pods of 1 cpu,
# PodGroups of minMember 4), the daemon overcommits nothing, and the
# reference does coscheduling's per-pod work of kubernetes-sigs/
# scheduler-plugins (pkg/coscheduling/core/core.go; bench/pending_bench.c,
# "gangs, literally"): PreFilter's List looks at every pod created (m per
# pod), Permit's CalculateAssignedPods at every node and every pod assumed
# before it (N + k for pod k), and the last pod of each gang at the 3
# waiting ones: m*m + m*N + m*(m-1)/2 + 3*m/4 in all.
# usage: test_pending_gangs.sh SHMSCHED_PENDING_BENCH
set -eu
bench=$1
out=$(mktemp)
trap 'rm -f "$out"' EXIT
fail() { echo "FAIL: $*"; cat "$out"; exit 1; }

n=100 m=200
"$bench" --kind gangs --nodes $n --pods $m --reference-seconds 60 >"$out" 2>/dev/null ||
	fail "the run failed"
grep -q "gangs      engine .*($m placed in .* $((m / 4)) gangs; 0 overcommits)" "$out" ||
	fail "engine: not $m pods placed as $((m / 4)) gangs, or an overcommit"
looked=$((m * m + m * n + m * (m - 1) / 2 + 3 * m / 4))
grep -q "gangs      reference .*($m placed in [0-9.]* s; coscheduling's PreFilter and Permit looked at $looked pods and nodes)" "$out" ||
	fail "reference: not $m placed, or its walks not $looked pods and nodes"
echo "pending_gangs: $m pods in $((m / 4)) gangs placed on both sides; the reference's walks: $looked"
