#!/bin/sh
# stress.gateway_surge: a surge drain end to end (issue 38), with curl
# against a real shmschedd: POST /v1/nodes/{name}/drain with "surge": true
# on the admin listener (gateway/drain_routes.c) answers 202, GET follows
# it to Succeeded with each pod of the node "replaced by placement NEW on
# node OTHER" before it was evicted (ingest/producers_drain.c,
# OP_DRAIN_SURGE). The gateway is the pods' producer: it hears the
# REPLACED notice of each, then the EVICTED of the old placement, in that
# order (its log says both), and moves the pod to its replacement, so GET
# /v1/placements/team-a/POD names the new node and placement, and DELETE
# releases the replacement (200). No anchor does this: kubectl drain
# (kubernetes/kubectl pkg/drain/drain.go) evicts and leaves the
# replacement to the pod's controller.
# On the old code the gateway took the REPLACED notice for a stray answer
# and the EVICTED one deleted the pod: GET said 404 while its replacement
# held its room in the daemon, which nobody could release through the
# gateway.
# usage: test_surge.sh SHMSCHEDD SHMSCHED_GATEWAY
set -u
daemon=$1 gateway=$2
command -v curl >/dev/null 2>&1 || { echo "SKIP: curl is missing"; exit 77; }
dir=$(mktemp -d /tmp/shmsched-gwsurge-XXXXXX)
name=gwsurge-$$
. "$(dirname "$0")/lib.sh"

cat >"$dir/cluster.json" <<'EOF2'
{"kind":"List","items":[
 {"kind":"Node","metadata":{"name":"n1"},"status":{"allocatable":{"cpu":"8","memory":"8Gi","pods":"110"}}},
 {"kind":"Node","metadata":{"name":"n2"},"status":{"allocatable":{"cpu":"8","memory":"8Gi","pods":"110"}}}]}
EOF2
daemon_start
gateway_start
pod() { printf '{"kind":"Pod","metadata":{"name":"%s","namespace":"team-a"},"spec":{"containers":[{"name":"c","resources":{"requests":{"cpu":"1"}}}]}}' "$1"; }
field() { # NAME: its value in $dir/body (a number or a string)
	sed -n "s/.*\"$1\":\"\{0,1\}\([^\",}]*\).*/\1/p" "$dir/body"
}


check "p0 placed" test "$(code -H "$ALICE" -X POST -d "$(pod p0)" "$url/v1/placements")" = 200
check "GET p0: 200" test "$(code -H "$ALICE" "$url/v1/placements/team-a/p0")" = 200
from=$(field node) old=$(field placement_id)
[ "$from" = n1 ] && to=n2 || to=n1
check "  ... on a node ($from), placement $old" test -n "$from" -a -n "$old"

check "POST /v1/nodes/$from/drain with surge: 202" test "$(admin -X POST -d '{"surge":true,"timeoutSeconds":30}' "http://localhost/v1/nodes/$from/drain")" = 202
check "  ... its record says surge" says '"kind":"NodeDrain".*"surge":true'
check "GET until done: Succeeded" drain_until "$from" '"phase":"Succeeded"'
cp "$dir/body" "$dir/drain.body"
check "  ... 1 evicted" grep -q '"evicted":1,' "$dir/drain.body"
check "  ... the report: placement $old replaced on $to" grep -q "evicted placement $old (.*node $from.*replaced by placement [0-9]* on node $to" "$dir/drain.body"
new=$(sed -n "s/.*replaced by placement \([0-9]*\) on node $to.*/\1/p" "$dir/drain.body")
check "  ... the replacement is a new placement" test -n "$new" -a "$new" != "$old"

# The producer's notices: REPLACED (the new placement, naming the old),
# then EVICTED (the old), both in the gateway's log.
wait_until "$dir/gateway.log" "placement $old .* evicted"
rep=$(grep -n "placement $new (pod cookie [0-9a-f]*) on node $to: replaces placement $old: " "$dir/gateway.log" | cut -d: -f1)
evi=$(grep -n "placement $old (pod cookie [0-9a-f]*) on node $from evicted" "$dir/gateway.log" | cut -d: -f1)
check "the gateway heard REPLACED ($new on $to, naming $old)" test -n "$rep"
check "  ... then EVICTED ($old)" test -n "$evi" -a "${rep:-0}" -lt "${evi:-0}"
check "GET p0: 200 (the pod lives on in its replacement)" test "$(code -H "$ALICE" "$url/v1/placements/team-a/p0")" = 200
check "  ... on $to" test "$(field node)" = "$to"
check "  ... placement $new" test "$(field placement_id)" = "$new"
check "  ... $from stays cordoned" sh -c "curl -s '$url/v1/nodes/$from' -H '$ALICE' | grep -q '\"cordoned\":true'"
check "DELETE p0 releases the replacement: 200" test "$(code -H "$ALICE" -X DELETE "$url/v1/placements/team-a/p0")" = 200
check "  ... then GET p0: 404" test "$(code -H "$ALICE" "$url/v1/placements/team-a/p0")" = 404

# A surge with no room: the other node cordoned too, the pod stays.
check "p1 placed (on $to: $from is cordoned)" test "$(code -H "$ALICE" -X POST -d "$(pod p1)" "$url/v1/placements")" = 200
check "POST /v1/nodes/$to/drain with surge, 1 s: 202" test "$(admin -X POST -d '{"surge":true,"timeoutSeconds":1}' "http://localhost/v1/nodes/$to/drain")" = 202
check "  ... TimedOut" drain_until "$to" '"phase":"TimedOut"'
cp "$dir/body" "$dir/noroom.body"
check "  ... 1 left: no room for its replacement" test -n "$(grep '"blocked":1,.*no room for the replacement of pod team-a/gw-[0-9a-f]*: 0/2 nodes are available: 2 node(s) were unschedulable' "$dir/noroom.body")"
check "  ... p1 stays on $to" test "$(code -H "$ALICE" "$url/v1/placements/team-a/p1")" = 200 -a "$(field node)" = "$to"

if [ "$failed" -ne 0 ]; then
	for f in drain.body noroom.body; do echo "--- $f"; cat "$dir/$f" 2>/dev/null; done
fi
logs_if_failed
exit "$failed"
