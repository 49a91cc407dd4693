#!/bin/sh
# stress.gateway_queues_many: the daemon's metrics text of 1,000
# ClusterQueues (issue 37; ~1 MB, far past one control answer's 64 KiB),
# whole on the gateway's /metrics and in `shmsched status --queues`: the
# daemon passes it in a sealed memfd (OP_QUEUE_METRICS,
# ingest/producers_queue.c) that both readers check and read. The LAST
# queue's series are there (kueue_cluster_queue_nominal_quota,
# kueue_admitted_workloads_total, kueue_pending_workloads: Kueue's
# pkg/metrics/metrics.go names and labels), no "not shown" line is, and
# promtool accepts the whole text. On the old code the text was cut at
# 256 ClusterQueues a family and then at one answer ("# N more bytes not
# shown"): cq-0999 was missing from both.
# usage: test_queues_many.sh SHMSCHEDD SHMSCHED_GATEWAY SHMSCHED
set -u
daemon=$1 gateway=$2 cli=$3
command -v curl >/dev/null 2>&1 || { echo "SKIP: curl is missing"; exit 77; }
dir=$(mktemp -d /tmp/shmsched-gwmany-XXXXXX)
name=gwmany-$$
. "$(dirname "$0")/lib.sh"

python3 - "$dir/cluster.json" <<'PY'
import json, sys
items = [{"kind": "Node", "metadata": {"name": "n1"}, "status": {"allocatable":
         {"cpu": "64", "memory": "64Gi", "pods": "110"}}},
         {"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "ResourceFlavor",
          "metadata": {"name": "default-flavor"}}]
for i in range(1000):
    items.append({"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "ClusterQueue",
                  "metadata": {"name": "cq-%04d" % i}, "spec": {"resourceGroups": [
                      {"coveredResources": ["cpu", "memory"], "flavors": [
                          {"name": "default-flavor", "resources": [
                              {"name": "cpu", "nominalQuota": "2"},
                              {"name": "memory", "nominalQuota": "4Gi"}]}]}]}})
json.dump({"kind": "List", "items": items}, open(sys.argv[1], "w"))
PY
daemon_start
gateway_start
curl -s -H "$ALICE" "$url/metrics" >"$dir/metrics"
has() { grep -qxF "$1" "$dir/metrics" || { echo "  /metrics has no line: $1"; false; }; }
L='cohort="",cluster_queue="cq-0999",flavor="default-flavor",resource="cpu"'
echo "  /metrics: $(wc -c <"$dir/metrics") bytes, $(wc -l <"$dir/metrics") lines"
check "/metrics: the last queue's nominal quota" has "kueue_cluster_queue_nominal_quota{$L} 2"
check "/metrics: the last queue's usage" has "kueue_cluster_queue_resource_usage{$L} 0"
check "/metrics: the last queue's admitted total" has 'kueue_admitted_workloads_total{cluster_queue="cq-0999"} 0'
check "/metrics: the last queue's pending workloads" has 'kueue_pending_workloads{cluster_queue="cq-0999",status="active"} 0'
check "/metrics: 1,000 queues' nominal quotas (cpu and memory)" test "$(grep -c '^kueue_cluster_queue_nominal_quota{' "$dir/metrics")" -eq 2000
check "/metrics: nothing 'not shown'" test -z "$(grep 'not shown\|not known' "$dir/metrics")"
check "/metrics: the daemon's other series still there" has 'shmsched_approval_registrations 0'
if command -v promtool >/dev/null 2>&1; then
	check "promtool check metrics" promtool check metrics <"$dir/metrics"
fi

out=$("$cli" status --name "$name" --summary --queues --admin-socket "$dir/s.sock.admin" 2>&1)
rc=$?
check "shmsched status --queues: exit 0" test "$rc" -eq 0
# 1,000 queues, 3 lines each (the queue, cpu, memory): 40 shown.
check "shmsched status --queues: 40 lines, then ... and 2960 more" sh -c \
	'printf "%s\n" "$1" | grep -qxF "  ... and 2960 more"' - "$out"
check "shmsched status --queues: nothing the daemon left out" sh -c \
	'! printf "%s\n" "$1" | grep -q "not shown"' - "$out"
[ "$failed" -eq 0 ] || printf '%s\n' "$out" | tail -5

logs_if_failed
exit "$failed"
