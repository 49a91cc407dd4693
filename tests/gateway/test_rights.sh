#!/bin/sh
# stress.gateway_rights: issue 41, disruption per gateway user. Pods through
# the gateway reach the daemon under its one producer identity, whose daemon
# rule here may disrupt any namespace ("*"); each user's own
# disruptNamespaces (shmsched-gateway --policy; absent: its namespaces) go
# with its templates (OP_TEMPLATE_SCOPED) and the daemon intersects them
# with that rule. With curl, against a real shmschedd with --policy, one
# node of 2 cpu and PriorityClasses low (10) and high (1000):
#   - alice (team-a, class low) fills the node;
#   - bob (team-b, class high, disruptNamespaces [team-b]) outranks her but
#     may not disrupt team-a: his pod waits and times out, hers stays. On
#     the old code the gateway identity's rule alone held his pod, and it
#     evicted hers;
#   - carol (team-c, class high, disruptNamespaces [team-a]): her pod
#     evicts alice's, as kube-scheduler's preemption would (a pod of lower
#     priority on the one node that fits).
# usage: test_rights.sh SHMSCHEDD SHMSCHED_GATEWAY
set -u
daemon=$1 gateway=$2
command -v curl >/dev/null 2>&1 || { echo "SKIP: curl is missing"; exit 77; }
dir=$(mktemp -d /tmp/shmsched-gwrights-XXXXXX)
name=gwrights-$$
. "$(dirname "$0")/lib.sh"

cat >"$dir/cluster.json" <<'EOF2'
{"kind":"List","items":[
 {"kind":"Node","metadata":{"name":"n0"},"status":{"allocatable":{"cpu":"2","memory":"4Gi","pods":"110"}}},
 {"kind":"PriorityClass","metadata":{"name":"low"},"value":10},
 {"kind":"PriorityClass","metadata":{"name":"high"},"value":1000}]}
EOF2
# The daemon's rule for the gateway's identity: every team, any victim.
printf '{"apiVersion":"shmsched.io/v1alpha1","kind":"Policy","rules":[{"uids":[%s],"names":["gw-rights"],"namespaces":["team-*"],"priorityClasses":["*"],"disruptNamespaces":["*"]}]}\n' \
	"$(id -u)" >"$dir/daemon-policy.json"
"$daemon" --cluster "$dir/cluster.json" --socket "$dir/s.sock" --workers 1 \
	--no-pin --name "$name" --fresh --policy "$dir/daemon-policy.json" \
	>"$dir/daemon.log" 2>&1 &
pids="$pids $!"
wait_for "$dir/daemon.log" "ready:"

cat >"$dir/tokens.csv" <<'EOF2'
alice-token-0123456789,alice,1001
bob-token-9876543210,bob,1002
carol-token-5555555555,carol,1003
root-token-abcdef,root-admin,0,"system:masters"
EOF2
chmod 600 "$dir/tokens.csv"
cat >"$dir/policy.json" <<'EOF2'
{"apiVersion":"shmsched.io/v1alpha1","kind":"Policy","rules":[
 {"users":["alice"],"namespaces":["team-a"],"priorityClasses":["low"]},
 {"users":["bob"],"namespaces":["team-b"],"priorityClasses":["high"],"disruptNamespaces":["team-b"]},
 {"users":["carol"],"namespaces":["team-c"],"priorityClasses":["high"],"disruptNamespaces":["team-a"]}]}
EOF2
"$gateway" --socket "$dir/s.sock" --name "$name" --listen 127.0.0.1:0 \
	--producer-name gw-rights --token-file "$dir/tokens.csv" \
	--policy "$dir/policy.json" >"$dir/gateway.log" 2>&1 &
gpid=$!
pids="$pids $gpid"
gateway_up "$dir/gateway.log"
ALICE="Authorization: Bearer alice-token-0123456789"
BOB="Authorization: Bearer bob-token-9876543210"
CAROL="Authorization: Bearer carol-token-5555555555"
ROOT="Authorization: Bearer root-token-abcdef"
pod() { # NAME NAMESPACE CLASS: a pod of 2 cpu, the whole node
	printf '{"kind":"Pod","metadata":{"name":"%s","namespace":"%s"},"spec":{"priorityClassName":"%s","containers":[{"name":"c","resources":{"requests":{"cpu":"2"}}}]}}\n' \
		"$1" "$2" "$3"
}

check "alice fills the node (team-a, low)" test "$(code -H "$ALICE" -X POST -d "$(pod a1 team-a low)" "$url/v1/placements")" = 200
check "  ... placed" grep -q '"pod":"team-a/a1","node":"n0"' "$dir/body"
code -H "$BOB" -X POST -d "$(pod b1 team-b high)" "$url/v1/placements?wait=2" >/dev/null
cp "$dir/body" "$dir/bob.body"
check "bob (high, disruptNamespaces [team-b]): not placed" sh -c "! grep -q '\"node\":\"n0\"' '$dir/bob.body'"
check "  ... it waited and was answered unschedulable" grep -qi 'unschedulable\|nodes are available' "$dir/bob.body"
check "  ... alice's pod stays" test "$(code -H "$ALICE" "$url/v1/placements/team-a/a1")" = 200
check "carol (high, disruptNamespaces [team-a]): placed" test "$(code -H "$CAROL" -X POST -d "$(pod c1 team-c high)" "$url/v1/placements?wait=5")" = 200
cp "$dir/body" "$dir/carol.body"
check "  ... on n0" grep -q '"pod":"team-c/c1","node":"n0"' "$dir/carol.body"
check "  ... alice's pod was evicted" test "$(code -H "$ROOT" "$url/v1/placements/team-a/a1")" = 404
kill -TERM "$gpid"
wait "$gpid"
check "the gateway stops cleanly (exit 0; sanitizers would say otherwise)" test $? -eq 0
if [ "$failed" -ne 0 ]; then
	for f in bob.body carol.body gateway.log daemon.log; do echo "--- $f"; cat "$dir/$f"; done
fi
echo "$failed failed"
exit $((failed > 0))
