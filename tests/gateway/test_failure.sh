#!/bin/sh
# stress.gateway_failure: POST /v1/placements/{id}/failure (issue 38), with
# curl against a real shmschedd, and the quarantine's and approvals'
# counters on /metrics.
# The admin listener reports a placed pod's failure as
# shmsched_report_failure does (OP_FAILURE): 202 with the daemon's verdict
# (Counted; the third failure of one template on 3 nodes of pool "bad",
# 5 of 25 nodes as the 20 % cap allows, Tripped: daemon/quarantine.c's
# rule); the template's next pod, which only pool bad can take, is then
# unschedulable naming the quarantine. Refused: an id that is no
# placement (404, as kube-apiserver's "placements \"ID\" not found"), an
# id that is not a number (404), a body with an unknown member or a
# control character in its reason (400), a body past 16 KiB (413, from
# Content-Length). The main listener answers 404 (not 405), as for
# /v1/queues; GET of the same path stays a pod lookup.
# /metrics then carries the quarantine's counters (shmsched_pool_quarantined
# 1 on 5 nodes, shmsched_pool_failures_total 4, one trip, web-3's attempt
# in shmsched_pool_refused_total) and the approvals' (none:
# shmsched_approval_decisions_total{decision=...} 0), which promtool
# accepts.
# On the old code the failure route was 405 (only GET and DELETE) and
# /metrics had no shmsched_pool_* or shmsched_approval_* series.
# usage: test_failure.sh SHMSCHEDD SHMSCHED_GATEWAY
set -u
daemon=$1 gateway=$2
command -v curl >/dev/null 2>&1 || { echo "SKIP: curl is missing"; exit 77; }
dir=$(mktemp -d /tmp/shmsched-gwfailure-XXXXXX)
name=gwfailure-$$
. "$(dirname "$0")/lib.sh"

pool_cluster
daemon_start
gateway_start
report() { # ID BODY
	admin -X POST -H 'Content-Type: application/json' -d "$2" \
		"http://localhost/v1/placements/$1/failure"
}

place_bad_three

check "report web-0 (admin): 202" test "$(report "$id0" '{"reason":"OOMKilled","exitCode":137}')" = 202
check "  ... Counted, the reason with its exit code" says '"verdict":"Counted".*"reason":"exit code 137: OOMKilled"'
check "  ... the main listener's POST of it: 404" test "$(code -H "$ALICE" -X POST -d '{}' "$url/v1/placements/$id1/failure")" = 404
check "  ... GET of the path on the main listener stays a pod lookup (404: no pod $id1/failure)" test "$(code -H "$ALICE" "$url/v1/placements/$id1/failure")" = 404
check "  ...   saying so" says "pod $id1/failure: no placement"
check "report web-1 with no body: 202 Counted" test "$(report "$id1" '')" = 202 -a -n "$(grep '"verdict":"Counted"' "$dir/body")"
check "report web-2: 202 Tripped (3 failures on 3 nodes)" test "$(report "$id2" '{"reason":"CrashLoopBackOff"}')" = 202
check "  ... Tripped" says '"verdict":"Tripped"'
check "  ... the daemon logged the quarantine" wait_until "$dir/daemon.log" "quarantine: pool node.kubernetes.io/instance-type=bad quarantined"
check "web-3 (the same template) is not placed" test "$(code -H "$ALICE" -X POST -d "$(bad_pod web-3)" "$url/v1/placements")" = 200
check "  ... unschedulable, naming the quarantine" says 'pool bad quarantined for template'
check "report web-0 again: 202 Held" test "$(report "$id0" '{}')" = 202 -a -n "$(grep '"verdict":"Held"' "$dir/body")"

# The counters, on /metrics (the daemon's OP_QUEUE_METRICS text).
curl -s -H "$ALICE" "$url/metrics" >"$dir/metrics"
has() { grep -qxF "$1" "$dir/metrics" || { echo "  /metrics has no line: $1"; grep -F "${1%%[ {]*}" "$dir/metrics" | head -8; false; }; }
check "/metrics: shmsched_pool_quarantined 1" has 'shmsched_pool_quarantined 1'
check "/metrics: shmsched_pool_quarantined_nodes 5" has 'shmsched_pool_quarantined_nodes 5'
check "/metrics: shmsched_pool_failures_total 4" has 'shmsched_pool_failures_total 4'
check "/metrics: one trip" has 'shmsched_pool_quarantine_events_total{event="trip"} 1'
check "/metrics: no release yet" has 'shmsched_pool_quarantine_events_total{event="release"} 0'
check "/metrics: web-3's attempt refused by the quarantine" grep -q '^shmsched_pool_refused_total [1-9]' "$dir/metrics"
check "/metrics: TYPE of shmsched_pool_failures_total is counter" has '# TYPE shmsched_pool_failures_total counter'
check "/metrics: no manager registered" has 'shmsched_approval_registrations 0'
check "/metrics: shmsched_approval_decisions_total{decision=\"grant\"} 0" has 'shmsched_approval_decisions_total{decision="grant"} 0'
check "/metrics: ... and deadline_closed" has 'shmsched_approval_decisions_total{decision="deadline_closed"} 0'
check "/metrics: the node lifecycle's still there" has 'shmsched_node_tainted 0'
if command -v promtool >/dev/null 2>&1; then
	check "promtool check metrics" promtool check metrics <"$dir/metrics"
fi

check "an id no placement has: 404" test "$(report 999999 '{}')" = 404
check "  ... placements \"999999\" not found" says 'placements \\"999999\\" not found'
check "an id that is not a number: 404" test "$(report abc '{}')" = 404
check "id 0: 404" test "$(report 0 '{}')" = 404
check "an id past UINT64_MAX: 404" test "$(report 18446744073709551616 '{}')" = 404
check "an unknown member: 400" test "$(report "$id0" '{"reason":"x","signal":9}')" = 400
check "  ... naming it" says 'unknown field \\"signal\\": expected reason or exitCode'
check "a control character in the reason: 400" test "$(report "$id0" '{"reason":"a\nforged line"}')" = 400
check "exitCode not an int32: 400" test "$(report "$id0" '{"exitCode":4294967296}')" = 400
check "not JSON: 400" test "$(report "$id0" '{"reason":')" = 400
head -c 17000 /dev/zero | tr '\0' ' ' >"$dir/big.json"
# Expect: 100-continue: curl sends no byte before the 413 (test_queues.sh).
check "a body past 16 KiB: 413" test "$(admin -X POST -H 'Expect: 100-continue' --data-binary "@$dir/big.json" "http://localhost/v1/placements/$id0/failure")" = 413
check "  ... saying what the bound is for" says 'at most 16384 are taken (an Eviction, a drain.s flags, a failure report, a lease or a pool release)'
check "GET /v1/placements/ID/failure (admin): a pod lookup, not a report (404)" test "$(admin "http://localhost/v1/placements/$id0/failure")" = 404

logs_if_failed
exit "$failed"
