#!/bin/sh
# stress.gateway_evict: issue 38 through the gateway, with curl against a
# real shmschedd.
# The Eviction API on the main listener, answered as kube-apiserver's
# eviction subresource answers (kubernetes/kubernetes
# pkg/registry/core/pod/storage/eviction.go, and the create handler that
# turns its Success Status into 201):
#   - a pod no budget selects: 201, a Status of Success; the pod is gone;
#     deleteOptions.dryRun ["All"]: 201 and the pod stays;
#   - a pod under a budget that allows no disruption: 429 TooManyRequests,
#     "Cannot evict pod as it would violate the pod's disruption budget.",
#     a DisruptionBudget cause naming the budget; the pod stays;
#   - a pod two budgets select: 500, "This pod has more than one
#     PodDisruptionBudget, which the eviction subresource does not support.";
#   - an unknown pod: 404 (pods "NAME" not found); a body whose name is not
#     the URL's: 400 ("name in URL does not match name in Eviction object");
#   - another user's pod: 403; its policy's disruptNamespaces refusing the
#     namespace: 403 before any lookup.
# Drains on the admin listener (kubectl drain's loop, kubernetes/kubectl
# pkg/drain): POST /v1/nodes/n2/drain answers 202 at once, GET follows it
# to Succeeded with both pods evicted and n2 cordoned; a drain blocked by
# a budget runs until its timeoutSeconds (TimedOut), a second POST
# meanwhile is 409; a bad body is 400, a node never drained 404. DELETE
# cancels a running drain (200, Cancelled, the node left cordoned as
# kubectl leaves it), 404 without one, 409 once it ended; a POST for a
# node the daemon does not know is 404 at once (it was 202, then Failed).
# The record's ETA (issue 38): etaSeconds 0 once drained; null, and
# stalled true, while a budget holds every pod left and nothing was
# evicted, and after the drain timed out so.
# On the old code every route here was 404 (no such route).
# usage: test_evict.sh SHMSCHEDD SHMSCHED_GATEWAY
set -u
daemon=$1 gateway=$2
command -v curl >/dev/null 2>&1 || { echo "SKIP: curl is missing"; exit 77; }
dir=$(mktemp -d /tmp/shmsched-gwevict-XXXXXX)
name=gwevict-$$
. "$(dirname "$0")/lib.sh"

cat >"$dir/cluster.json" <<'EOF'
{"kind":"List","items":[
 {"kind":"Node","metadata":{"name":"n1","labels":{"zone":"a"}},"status":{"allocatable":{"cpu":"8","memory":"8Gi","pods":"110"}}},
 {"kind":"Node","metadata":{"name":"n2","labels":{"zone":"b"}},"status":{"allocatable":{"cpu":"8","memory":"8Gi","pods":"110"}}},
 {"apiVersion":"policy/v1","kind":"PodDisruptionBudget","metadata":{"name":"db","namespace":"team-a"},
  "spec":{"minAvailable":1,"selector":{"matchLabels":{"app":"db"}}},"status":{"disruptionsAllowed":0}},
 {"apiVersion":"policy/v1","kind":"PodDisruptionBudget","metadata":{"name":"multi-1","namespace":"team-a"},
  "spec":{"maxUnavailable":5,"selector":{"matchLabels":{"app":"multi"}}}},
 {"apiVersion":"policy/v1","kind":"PodDisruptionBudget","metadata":{"name":"multi-2","namespace":"team-a"},
  "spec":{"maxUnavailable":5,"selector":{"matchLabels":{"app":"multi"}}}}]}
EOF
daemon_start
cat >"$dir/tokens.csv" <<'EOF'
alice-token-0123456789,alice,1001
bob-token-9876543210,bob,1002
carol-token-5555555555,carol,1003
EOF
cat >"$dir/policy.json" <<'EOF'
{"apiVersion":"shmsched.io/v1alpha1","kind":"Policy","rules":[
 {"users":["alice"],"namespaces":["team-a"]},
 {"users":["bob"],"namespaces":["team-a"]},
 {"users":["carol"],"namespaces":["team-c"],"disruptNamespaces":["team-c"]}]}
EOF
gateway_start
BOB="Authorization: Bearer bob-token-9876543210"
CAROL="Authorization: Bearer carol-token-5555555555"
pod() { # NAME APP ZONE
	printf '{"kind":"Pod","metadata":{"name":"%s","namespace":"team-a","labels":{"app":"%s"}},"spec":{"nodeSelector":{"zone":"%s"},"containers":[{"name":"c","resources":{"requests":{"cpu":"100m"}}}]}}\n' "$1" "$2" "$3"
}
eviction() { # NAME [EXTRA deleteOptions]
	printf '{"apiVersion":"policy/v1","kind":"Eviction","metadata":{"name":"%s","namespace":"team-a"}%s}\n' "$1" "${2:-}"
}
evict() { # TOKEN-HEADER NAME BODY
	code -H "$1" -X POST -H 'Content-Type: application/json' -d "$3" \
		"$url/api/v1/namespaces/team-a/pods/$2/eviction"
}
for p in "free-0 free a" "free-1 free a" "db-0 db a" "multi-0 multi a" "w-0 web b" "w-1 web b"; do
	set -- $p
	check "alice places $1 (app=$2, zone $3)" test "$(code -H "$ALICE" -X POST -d "$(pod "$1" "$2" "$3")" "$url/v1/placements")" = 200
done

check "evict free-1 with dryRun [All]: 201" test "$(evict "$ALICE" free-1 "$(eviction free-1 ',"deleteOptions":{"dryRun":["All"]}')")" = 201
check "  ... and free-1 stays" test "$(code -H "$ALICE" "$url/v1/placements/team-a/free-1")" = 200
check "evict free-0 (no budget): 201" test "$(evict "$ALICE" free-0 "$(eviction free-0)")" = 201
check "  ... a Status of Success, code 201" grep -q '"kind":"Status","apiVersion":"v1","metadata":{},"status":"Success","code":201' "$dir/body"
gone=1
for _ in $(seq 100); do
	[ "$(code -H "$ALICE" "$url/v1/placements/team-a/free-0")" = 404 ] && { gone=0; break; }
	sleep 0.05
done
check "  ... and free-0 is gone (its EVICTED notice reached the gateway)" test "$gone" -eq 0
check "  ... free-1, on the same node under no budget, stays (one pod, not a drain)" test "$(code -H "$ALICE" "$url/v1/placements/team-a/free-1")" = 200
check "evict db-0 (its budget allows no disruption): 429" test "$(evict "$ALICE" db-0 "$(eviction db-0)")" = 429
cp "$dir/body" "$dir/429.body"
check "  ... TooManyRequests, kube's message" grep -q "\"message\":\"Cannot evict pod as it would violate the pod's disruption budget.\",\"reason\":\"TooManyRequests\"" "$dir/429.body"
check "  ... a DisruptionBudget cause naming team-a/db" grep -q '"causes":\[{"reason":"DisruptionBudget","message":"blocked placement [0-9]* (.*PodDisruptionBudget team-a/db allows no more' "$dir/429.body"
check "  ... and db-0 stays" test "$(code -H "$ALICE" "$url/v1/placements/team-a/db-0")" = 200
check "evict multi-0 (two budgets): 500" test "$(evict "$ALICE" multi-0 "$(eviction multi-0)")" = 500
check "  ... kube's message" grep -q '"message":"This pod has more than one PodDisruptionBudget, which the eviction subresource does not support.","code":500' "$dir/body"
check "evict nothing-0: 404" test "$(evict "$ALICE" nothing-0 "$(eviction nothing-0)")" = 404
check "  ... pods \"nothing-0\" not found" grep -q 'pods \\"nothing-0\\" not found' "$dir/body"
check "a body naming another pod than the URL: 400" test "$(evict "$ALICE" free-1 "$(eviction db-0)")" = 400
check "  ... kube's words" grep -q 'name in URL does not match name in Eviction object' "$dir/body"
check "a body that is no Eviction: 400" test "$(evict "$ALICE" free-1 '{"apiVersion":"v1","kind":"Pod","metadata":{"name":"free-1"}}')" = 400
check "GET on an eviction: 405" test "$(code -H "$ALICE" "$url/api/v1/namespaces/team-a/pods/free-1/eviction")" = 405
check "bob evicts alice's free-1: 403" test "$(evict "$BOB" free-1 "$(eviction free-1)")" = 403
check "  ... and free-1 stays" test "$(code -H "$ALICE" "$url/v1/placements/team-a/free-1")" = 200
check "carol (disruptNamespaces [team-c]) evicts in team-a: 403" test "$(evict "$CAROL" free-1 "$(eviction free-1)")" = 403
check "  ... naming her rule" grep -q 'may not evict pods in namespace' "$dir/body"
check "no credentials: 401" test "$(code -X POST -d "$(eviction free-1)" "$url/api/v1/namespaces/team-a/pods/free-1/eviction")" = 401

# Drains on the admin listener.
check "drain on the main listener: 405" test "$(code -H "$ALICE" -X POST "$url/v1/nodes/n2/drain")" = 405
check "GET the drain of a node never drained: 404" test "$(admin http://x/v1/nodes/n2/drain)" = 404
check "a drain body with an unknown field: 400" test "$(admin -X POST -d '{"gracePeriodSeconds":1}' http://x/v1/nodes/n2/drain)" = 400
check "POST /v1/nodes/n2/drain: 202" test "$(admin -X POST -d '{"timeoutSeconds":30}' http://x/v1/nodes/n2/drain)" = 202
check "  ... its record, Running or done" grep -q '"kind":"NodeDrain".*"node":"n2".*"phase":"\(Running\|Succeeded\)"' "$dir/body"
check "GET until done: Succeeded" drain_until n2 '"phase":"Succeeded"'
cp "$dir/body" "$dir/drain2.body"
check "  ... etaSeconds 0, not stalled (issue 38's ETA)" grep -q '"etaSeconds":0.000,"stalled":false,' "$dir/drain2.body"
check "  ... 2 evicted, the report naming both" sh -c "grep -q '\"evicted\":2,' '$dir/drain2.body' && test \$(grep -o 'evicted placement [0-9]* ([^)]*node n2' '$dir/drain2.body' | wc -l) -eq 2"
# The drain's end is the daemon's; the gateway forgets w-0 when its
# EVICTED notice arrives, a moment later (as free-0's above).
gone=1
for _ in $(seq 100); do
	[ "$(code -H "$ALICE" "$url/v1/placements/team-a/w-0")" = 404 ] && { gone=0; break; }
	sleep 0.05
done
check "  ... w-0 is gone" test "$gone" -eq 0
check "  ... n2 is cordoned" sh -c "curl -s '$url/v1/nodes/n2' -H '$ALICE' | grep -q '\"cordoned\":true'"
check "drain n1 (db-0 blocked) for 2 s: 202" test "$(admin -X POST -d '{"timeoutSeconds":2,"podSelector":"app=db"}' http://x/v1/nodes/n1/drain)" = 202
check "  ... a second POST while it runs: 409" test "$(admin -X POST http://x/v1/nodes/n1/drain)" = 409
check "  ... TimedOut after its 2 s" drain_until n1 '"phase":"TimedOut"'
cp "$dir/body" "$dir/drain1.body"
check "  ... ended with db-0 left: etaSeconds null, stalled" grep -q '"etaSeconds":null,"stalled":true,' "$dir/drain1.body"
check "  ... blocked 1, the budget named" sh -c "grep -q '\"blocked\":1,' '$dir/drain1.body' && grep -q 'PodDisruptionBudget team-a/db allows no more' '$dir/drain1.body'"
check "  ... db-0 stays" test "$(code -H "$ALICE" "$url/v1/placements/team-a/db-0")" = 200
# Cancel (DELETE), and a node the daemon does not know.
check "POST the drain of an unknown node n9: 404 at once" test "$(admin -X POST http://x/v1/nodes/n9/drain)" = 404
check "  ... nodes \"n9\" not found" grep -q 'nodes \\"n9\\" not found' "$dir/body"
check "DELETE the drain of a node never drained: 404" test "$(admin -X DELETE http://x/v1/nodes/n9/drain)" = 404
check "drain n1 (db-0 blocked), no timeout: 202" test "$(admin -X POST -d '{"podSelector":"app=db"}' http://x/v1/nodes/n1/drain)" = 202
check "  ... Running, blocked by db" drain_until n1 '"phase":"Running".*"blocked":1,'
check "  ... nothing evicted, held by db: etaSeconds null, stalled" grep -q '"evicted":0,.*"etaSeconds":null,"stalled":true,' "$dir/body"
check "  ... DELETE cancels it: 200" test "$(admin -X DELETE http://x/v1/nodes/n1/drain)" = 200
cp "$dir/body" "$dir/cancel.body"
check "  ... its record Cancelled, the node left cordoned" grep -q '"phase":"Cancelled".*"message":"cancelled (DELETE): 0 evicted, 1 left; the node stays cordoned"' "$dir/cancel.body"
check "  ... GET says Cancelled" sh -c "test \"\$(curl -s --unix-socket '$dir/admin.sock' http://x/v1/nodes/n1/drain | grep -o '\"phase\":\"[A-Za-z]*\"')\" = '\"phase\":\"Cancelled\"'"
check "  ... n1 is still cordoned" sh -c "curl -s '$url/v1/nodes/n1' -H '$ALICE' | grep -q '\"cordoned\":true'"
check "  ... db-0 stays" test "$(code -H "$ALICE" "$url/v1/placements/team-a/db-0")" = 200
check "  ... a second DELETE: 409 (nothing running)" test "$(admin -X DELETE http://x/v1/nodes/n1/drain)" = 409
kill -TERM "$gpid"
wait "$gpid"
check "the gateway stops cleanly (exit 0; sanitizers would say otherwise)" test $? -eq 0
if [ "$failed" -ne 0 ]; then
	for f in 429.body drain2.body drain1.body cancel.body gateway.log daemon.log; do echo "--- $f"; cat "$dir/$f" 2>/dev/null; done
fi
echo "$failed failed"
exit $((failed > 0))
