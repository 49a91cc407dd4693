#!/bin/sh
# stress.gateway_queues: Kueue's queues through the gateway (issues 37 and
# 38), with curl against a real shmschedd.
# /metrics serves the daemon's quota figures under Kueue's own names and
# labels (kubernetes-sigs/kueue pkg/metrics/metrics.go:
# kueue_cluster_queue_resource_usage and _nominal_quota {cohort,
# cluster_queue, flavor, resource}, cpu in cores;
# kueue_cluster_queue_weighted_share {cluster_queue, cohort};
# kueue_pending_workloads {cluster_queue, status}; kueue_admitted_workloads_total
# {cluster_queue}) and the node lifecycle's shmsched_node_* counts, asked
# of the daemon's admin socket at most once a second.
# The admin listener's /v1/queues: GET lists, POST applies Kueue JSON as
# `shmsched queue apply -f` takes it (200 with what changed; 400 with the
# decoder's "request body:LINE:" message; 413 past the admin body bound),
# DELETE /v1/queues/{kind}/{name} removes one (404: no such object). The
# main listener answers 404 to every /v1/queues route.
# On the old code /metrics had no kueue_* series and every route here was
# 404 (no such route).
# usage: test_queues.sh SHMSCHEDD SHMSCHED_GATEWAY
set -u
daemon=$1 gateway=$2
command -v curl >/dev/null 2>&1 || { echo "SKIP: curl is missing"; exit 77; }
dir=$(mktemp -d /tmp/shmsched-gwqueues-XXXXXX)
name=gwqueues-$$
. "$(dirname "$0")/lib.sh"

cq() { # CPU
	printf '{"apiVersion":"kueue.x-k8s.io/v1beta2","kind":"ClusterQueue","metadata":{"name":"team-a"},\n"spec":{"resourceGroups":[{"coveredResources":["cpu"],"flavors":[{"name":"default-flavor",\n"resources":[{"name":"cpu","nominalQuota":"%s"}]}]}]}}\n' "$1"
}
cat >"$dir/cluster.json" <<EOF
{"kind":"List","items":[
 {"kind":"Node","metadata":{"name":"n1"},"status":{"allocatable":{"cpu":"8","memory":"8Gi","pods":"110"}}},
 {"apiVersion":"kueue.x-k8s.io/v1beta2","kind":"ResourceFlavor","metadata":{"name":"default-flavor"}},
 $(cq 2),
 {"apiVersion":"kueue.x-k8s.io/v1beta2","kind":"LocalQueue","metadata":{"name":"qa","namespace":"team-a"},"spec":{"clusterQueue":"team-a"}}]}
EOF
daemon_start
gateway_start
metrics() { curl -s -H "$ALICE" "$url/metrics" >"$dir/metrics"; }
has() { grep -qxF "$1" "$dir/metrics" || { echo "  /metrics has no line: $1"; grep -F "${1%% *}" "$dir/metrics" | head -5; false; }; }
pod='{"kind":"Pod","metadata":{"name":"p0","namespace":"team-a","labels":{"kueue.x-k8s.io/queue-name":"qa"}},"spec":{"containers":[{"name":"c","resources":{"requests":{"cpu":"1"}}}]}}'

check "a pod under team-a's quota is placed" test "$(code -H "$ALICE" -X POST -d "$pod" "$url/v1/placements")" = 200
metrics
L='cohort="",cluster_queue="team-a",flavor="default-flavor",resource="cpu"'
check "/metrics: kueue_cluster_queue_resource_usage 1 (cores)" has "kueue_cluster_queue_resource_usage{$L} 1"
check "/metrics: kueue_cluster_queue_nominal_quota 2" has "kueue_cluster_queue_nominal_quota{$L} 2"
check "/metrics: kueue_cluster_queue_weighted_share" grep -q '^kueue_cluster_queue_weighted_share{cluster_queue="team-a",cohort=""} ' "$dir/metrics"
check "/metrics: kueue_admitted_workloads_total 1" has 'kueue_admitted_workloads_total{cluster_queue="team-a"} 1'
check "/metrics: kueue_pending_workloads inadmissible 0" has 'kueue_pending_workloads{cluster_queue="team-a",status="inadmissible"} 0'
check "/metrics: kueue_pending_workloads active 0" has 'kueue_pending_workloads{cluster_queue="team-a",status="active"} 0'
check "/metrics: TYPE of kueue_pending_workloads is gauge" has '# TYPE kueue_pending_workloads gauge'
check "/metrics: shmsched_node_tainted 0" has 'shmsched_node_tainted 0'
check "/metrics: shmsched_node_zones" grep -q '^shmsched_node_zones{state="Normal"} ' "$dir/metrics"
check "/metrics: the gateway's own series still there" grep -q '^scheduler_schedule_attempts_total' "$dir/metrics"
if command -v promtool >/dev/null 2>&1; then
	check "promtool check metrics" promtool check metrics <"$dir/metrics"
fi

check "GET /v1/queues (admin): 200" test "$(admin http://localhost/v1/queues)" = 200
check "  ... lists team-a with its usage" grep -q 'ClusterQueue team-a' "$dir/body"
cq 4 >"$dir/raise.json"
check "POST /v1/queues (admin) raising team-a to 4: 200" test "$(admin -X POST --data-binary "@$dir/raise.json" http://localhost/v1/queues)" = 200
check "  ... says what changed" grep -q 'applied: .* 1 live placement(s) charged again' "$dir/body"
sleep 1.1 # the gateway asks the daemon at most once a second
metrics
check "/metrics: the new nominal quota 4" has "kueue_cluster_queue_nominal_quota{$L} 4"
check "  ... and the admitted total kept" has 'kueue_admitted_workloads_total{cluster_queue="team-a"} 1'
printf '\n\n%s' "$(cq -3)" >"$dir/bad.json"
check "POST a negative quota: 400" test "$(admin -X POST --data-binary "@$dir/bad.json" http://localhost/v1/queues)" = 400
check "  ... with the decoder's request body:LINE: message" grep -q '"message":"request body:[0-9]*:' "$dir/body"
head -c 70000 /dev/zero | tr '\0' ' ' >"$dir/big.json"
# Expect: 100-continue, so that curl sends no byte of the body before the
# gateway's answer: the gateway answers 413 from Content-Length at once
# and closes, and a body still being written then met a reset (curl's
# 000) in 1 run of 5.
check "POST past the admin body bound: 413" test "$(admin -X POST -H 'Expect: 100-continue' --data-binary "@$dir/big.json" http://localhost/v1/queues)" = 413
check "DELETE an unknown ClusterQueue: 404" test "$(admin -X DELETE http://localhost/v1/queues/ClusterQueue/team-z)" = 404
check "DELETE /v1/queues/LocalQueue/team-a/qa: 200" test "$(admin -X DELETE http://localhost/v1/queues/LocalQueue/team-a/qa)" = 200
code -H "$ALICE" -X POST -d "$(echo "$pod" | sed 's/"p0"/"p1"/')" "$url/v1/placements" >/dev/null
check "  ... the pod's LocalQueue is gone: a new pod is refused by name" grep -q "LocalQueue team-a/qa doesn't exist" "$dir/body"
check "PUT /v1/queues (admin): 405" test "$(admin -X PUT -d '{}' http://localhost/v1/queues)" = 405

check "main listener: GET /v1/queues is 404" test "$(code -H "$ALICE" "$url/v1/queues")" = 404
check "main listener: POST /v1/queues is 404" test "$(code -H "$ALICE" -X POST --data-binary "@$dir/raise.json" "$url/v1/queues")" = 404
check "main listener: DELETE /v1/queues/ClusterQueue/team-a is 404" test "$(code -H "$ALICE" -X DELETE "$url/v1/queues/ClusterQueue/team-a")" = 404
check "  ... and team-a is still there" test "$(admin http://localhost/v1/queues)" = 200 -a -n "$(grep 'ClusterQueue team-a' "$dir/body")"

logs_if_failed
exit "$failed"
