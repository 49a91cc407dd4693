#!/bin/sh
# bench.pending_quota: shmsched-pending-bench --kind quota on a small
# cluster. The oracle is the bench's own literal reference, Kueue's
# admission done as its scheduler does (bench/pending_bench.c, "quota,
# literally", after kubernetes-sigs/kueue pkg/scheduler/scheduler.go and
# pkg/cache/scheduler/resource_node.go): every pod is 1 cpu, so whatever
# the order, a cohort fills to min(its pool, the sum over its queues of
# min(asked, nominal + borrowingLimit)); the daemon must place exactly as
# many pods as the reference admits and places, refuse the rest by quota,
# and overcommit nothing. Contention must really happen (refusals > 0).
# --metrics: Kueue's metrics of the daemon's queues after the run agree
# with the pods placed. --no-quota: the same pods, no Kueue objects:
# every pod placed.
# usage: test_pending_quota.sh SHMSCHED_PENDING_BENCH
set -eu
bench=$1
out=$(mktemp)
trap 'rm -f "$out"' EXIT
fail() { echo "FAIL: $*"; cat "$out"; exit 1; }

"$bench" --kind quota --nodes 200 --pods 400 --cohorts 4 --queues 5 \
	--reference-seconds 60 --metrics >"$out" 2>/dev/null || fail "the run failed"
engine=$(grep 'quota      engine  ' "$out") || fail "no engine line"
ref=$(grep 'quota      reference  ' "$out") || fail "no reference line"
e_placed=$(echo "$engine" | sed -n 's/.*: \([0-9]*\) placed, \([0-9]*\) refused by quota; \([0-9]*\) overcommits.*/\1/p')
e_refused=$(echo "$engine" | sed -n 's/.*: \([0-9]*\) placed, \([0-9]*\) refused by quota; \([0-9]*\) overcommits.*/\2/p')
e_over=$(echo "$engine" | sed -n 's/.*: \([0-9]*\) placed, \([0-9]*\) refused by quota; \([0-9]*\) overcommits.*/\3/p')
r_placed=$(echo "$ref" | sed -n 's/.*; \([0-9]*\) placed, \([0-9]*\) refused by quota, \([0-9]*\) admitted and not placed.*/\1/p')
r_refused=$(echo "$ref" | sed -n 's/.*; \([0-9]*\) placed, \([0-9]*\) refused by quota, \([0-9]*\) admitted and not placed.*/\2/p')
r_unplaced=$(echo "$ref" | sed -n 's/.*; \([0-9]*\) placed, \([0-9]*\) refused by quota, \([0-9]*\) admitted and not placed.*/\3/p')
[ -n "$e_placed" ] && [ -n "$r_placed" ] || fail "lines not understood"
[ "$e_over" = 0 ] || fail "$e_over overcommits"
[ "$r_unplaced" = 0 ] || fail "the reference admitted $r_unplaced pods no node took"
[ "$e_refused" -gt 0 ] || fail "no pod refused by quota: no contention"
[ $((e_placed + e_refused)) = 400 ] || fail "engine answered $((e_placed + e_refused)) of 400"
[ "$e_placed" = "$r_placed" ] || fail "engine placed $e_placed, Kueue literally admitted $r_placed"
[ "$e_refused" = "$r_refused" ] || fail "engine refused $e_refused, Kueue literally $r_refused"
echo "pending_quota: engine and Kueue's literal admission agree: $e_placed placed, $e_refused refused"

# --metrics: Kueue's metrics of the daemon's queues, its placements live
# (quota_metrics_text): 20 queues x (cpu, memory) series per family; the
# usage sums to the pods placed (1 cpu, 1Gi each); every nominal quota is
# the bench's (4/5 of 400 pods over 20 queues: 16 cpu).
usage_cpu=$(awk '/^kueue_cluster_queue_resource_usage\{.*resource="cpu"\}/ { s += $2; n++ }
	END { print n ":" s }' "$out")
usage_mem=$(awk '/^kueue_cluster_queue_resource_usage\{.*resource="memory"\}/ { s += $2 / 1073741824 }
	END { print s }' "$out")
nominal=$(awk '/^kueue_cluster_queue_nominal_quota\{.*resource="cpu"\}/ { print $2 }' "$out" | sort -u)
[ "$usage_cpu" = "20:$e_placed" ] || fail "usage series:sum $usage_cpu, expected 20:$e_placed"
[ "$usage_mem" = "$e_placed" ] || fail "memory usage $usage_mem Gi, expected $e_placed"
[ "$nominal" = 16 ] || fail "nominal quotas \"$nominal\", expected 16"
grep -q '^kueue_cluster_queue_borrowing_limit{cohort="c0",cluster_queue="q0",flavor="default",resource="cpu"} 8$' "$out" ||
	fail "no borrowing limit of 8 for q0"
if command -v promtool >/dev/null 2>&1; then
	grep -E '^(# |kueue_)' "$out" | promtool check metrics || fail "promtool check metrics"
fi
echo "pending_quota: metrics: usage $usage_cpu (series:cpus), $usage_mem Gi"

"$bench" --kind quota --no-quota --nodes 200 --pods 400 --cohorts 4 --queues 5 \
	--reference-seconds 60 >"$out" 2>/dev/null || fail "the --no-quota run failed"
grep -q 'quota      engine .*: 400 placed, 0 refused by quota; 0 overcommits' "$out" ||
	fail "--no-quota: not every pod placed"

for bad in "--cohorts 0" "--queues 0" "--cohorts 100 --queues 100"; do
	# shellcheck disable=SC2086 # the words are the options
	if "$bench" --kind quota $bad >"$out" 2>&1; then
		fail "$bad accepted"
	fi
	grep -q -e '--cohorts' -e '--queues' "$out" || fail "$bad: no message naming it"
done
echo "pending_quota: bad shapes refused"

# --reclaim: every lender's pod is placed by reclaiming exactly one
# borrowed pod of 1 cpu (the fewest: Kueue's fillBackWorkloads), none
# refused; and --reclaim is refused without --kind quota.
"$bench" --kind quota --reclaim --pods 400 --cohorts 4 --queues 4 >"$out" 2>&1 ||
	fail "the --reclaim run failed"
grep -q 'quota      reclaim .*(400 pods placed by reclaiming 400 borrowed pods in .*, 0 refused' "$out" ||
	fail "--reclaim: not every lender's pod placed by one victim"
# Through the daemon too, each cohort's victims its own (the evictor's
# candidates: daemon/quota_charge.c, qc_reclaim_choose): one eviction a
# pod placed, none past the quota.
grep -q 'quota      reclaim .*(400 pods placed, 0 answered otherwise, .* 400 pods evicted; 0 overcommits' "$out" ||
	fail "--reclaim through the daemon: not one eviction per pod placed, or an overcommit"
if "$bench" --reclaim >"$out" 2>&1; then
	fail "--reclaim without --kind quota accepted"
fi
grep -q -e '--reclaim: expected --kind quota' "$out" || fail "--reclaim: no message naming it"
echo "pending_quota: reclaim: 400 reclaimed, one victim each"
