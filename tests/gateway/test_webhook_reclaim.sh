#!/bin/sh
# stress.gateway_webhook_reclaim: a webhook registered with
# "disruptions":["reclaim"] (issue 38) is asked by quota reclaim, not only
# by drains, and its grant lets the reclaim evict. Kueue's classical
# preemption (docs/guides/quotas.md, *Reclaim*; kubernetes-sigs/kueue
# pkg/scheduler/preemption: reclaimWithinCohort Any): cohort ml, team-a
# and team-b 2 cpu nominal each; team-b's four 1-cpu pods (b-0..b-3, the
# last two borrowing team-a's quota) fill the cohort; team-a's 1-cpu pod
# a-0 waits (?wait=30), so the daemon reclaims the most recently admitted
# borrowing pod, b-3. The webhook selects team-b's queue: the gateway
# POSTs it a DisruptionAsk with "reason":"reclaim", it grants, b-3 goes
# and a-0 is placed; its record counts one ask and one grant.
# On the old gateway the registration was 400 (an unknown field
# "disruptions"), and a webhook could not be asked by reclaim at all.
# usage: test_webhook_reclaim.sh SHMSCHEDD SHMSCHED_GATEWAY
set -u
daemon=$1 gateway=$2
command -v curl >/dev/null 2>&1 || { echo "SKIP: curl is missing"; exit 77; }
command -v python3 >/dev/null 2>&1 || { echo "SKIP: python3 is missing"; exit 77; }
dir=$(mktemp -d /tmp/shmsched-gwhookr-XXXXXX)
name=gwhookr-$$
. "$(dirname "$0")/lib.sh"

cq() { # NAME PREEMPTION
	printf '{"apiVersion":"kueue.x-k8s.io/v1beta2","kind":"ClusterQueue","metadata":{"name":"%s"},"spec":{"cohortName":"ml",%s"resourceGroups":[{"coveredResources":["cpu"],"flavors":[{"name":"default-flavor","resources":[{"name":"cpu","nominalQuota":"2"}]}]}]}}' "$1" "$2"
}
lq() { # NAME CLUSTERQUEUE
	printf '{"apiVersion":"kueue.x-k8s.io/v1beta2","kind":"LocalQueue","metadata":{"name":"%s","namespace":"team-a"},"spec":{"clusterQueue":"%s"}}' "$1" "$2"
}
cat >"$dir/cluster.json" <<EOF
{"kind":"List","items":[
 {"kind":"Node","metadata":{"name":"n1"},"status":{"allocatable":{"cpu":"32","memory":"64Gi","pods":"110"}}},
 {"apiVersion":"kueue.x-k8s.io/v1beta2","kind":"ResourceFlavor","metadata":{"name":"default-flavor"}},
 $(cq team-a '"preemption":{"reclaimWithinCohort":"Any"},'), $(cq team-b ''),
 $(lq qa team-a), $(lq qb team-b)]}
EOF
pod() { # NAME QUEUE
	printf '{"kind":"Pod","metadata":{"name":"%s","namespace":"team-a","labels":{"kueue.x-k8s.io/queue-name":"%s"}},"spec":{"containers":[{"name":"c","resources":{"requests":{"cpu":"1"}}}]}}' "$1" "$2"
}

# The webhook (webhook_server.py): POST /grant grants; each ask appended
# to asks.log.
python3 "$(dirname "$0")/webhook_server.py" "$dir/hook.port" "$dir/asks.log" &
pids="$pids $!"
wait_for "$dir/hook.port" "[0-9]"
hook=http://127.0.0.1:$(cat "$dir/hook.port")

daemon_start --reclaim-min-run 0
gateway_start
check "register reclaimer (team-b's queue, disruptions [reclaim]): 201" test "$(admin -X POST \
	-d "{\"name\":\"reclaimer\",\"url\":\"$hook/grant\",\"selector\":\"kueue.x-k8s.io/queue-name=qb\",\"disruptions\":[\"reclaim\"]}" \
	http://x/v1/approvals/webhooks)" = 201
check "  ... its record: the drain and reclaim" says '"disruptions":\["drain","reclaim"\],'
check "  ... the daemon registered it for quota reclaim" wait_until "$dir/daemon.log" \
	"approval: manager reclaimer registered (.*asked by the drain, quota reclaim)"
for i in 0 1 2 3; do
	check "team-b's b-$i placed" test "$(code -H "$ALICE" -X POST -d "$(pod "b-$i" qb)" "$url/v1/placements")" = 200
done
check "  ... b-3 on n1" grep -q '"pod":"team-a/b-3","node":"n1"' "$dir/body"

# team-a's pod waits for its quota, lent to team-b: reclaim asks the webhook.
curl -s -H "$ALICE" -X POST -d "$(pod a-0 qa)" "$url/v1/placements?wait=30" >"$dir/a0.body" &
a0=$!
check "the webhook was asked by reclaim" wait_until "$dir/asks.log" \
	'"kind":"DisruptionAsk",.*"reason":"reclaim","asker":"reclaimer"}$'
wait "$a0"
check "  ... granted: team-a's a-0 placed" grep -q '"pod":"team-a/a-0","node":"n1"' "$dir/a0.body"
grep -q '"node":"n1"' "$dir/a0.body" || echo "  a-0's answer: $(cat "$dir/a0.body")"
check "  ... b-3 evicted" sh -c 'for _ in $(seq 50); do
	[ "$(curl -s -o /dev/null -w "%{http_code}" -H "$2" "$1/v1/placements/team-a/b-3")" = 404 ] && exit 0
	sleep 0.1; done; exit 1' - "$url" "$ALICE"
check "  ... b-2 kept" test "$(code -H "$ALICE" "$url/v1/placements/team-a/b-2")" = 200
check "  ... one ask only" test "$(wc -l <"$dir/asks.log")" -eq 1
check "  ... the record counts one ask and one grant" sh -c \
	'curl -s --unix-socket "$1/admin.sock" http://x/v1/approvals/webhooks/reclaimer | grep -q "\"asks\":1,\"granted\":1,"' - "$dir"

logs_if_failed
exit "$failed"
