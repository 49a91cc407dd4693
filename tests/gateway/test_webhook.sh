#!/bin/sh
# stress.gateway_webhook: approval webhooks (issue 38) through the
# gateway's admin listener, against a real shmschedd and a tiny webhook
# server on loopback (python3's http.server): POST /v1/approvals/webhooks
# registers a URL as the manager of the pods a selector picks; the
# gateway registers it with the daemon on an admin connection of its own
# and calls the URL with each ask, relaying the answer. Five nodes, one
# pod each (bound, so the drains force), each pod picked by one webhook:
#   - n1, app=g, a webhook that grants: the drain Succeeds, g-0 gone, the
#     webhook was asked about default/g-0 on n1 (its JSON), the record
#     counts one grant;
#   - n2, app=d, a webhook that denies: the drain times out (TimedOut,
#     its report "waiting on manager denier ... denied"), d-0 kept; after
#     DELETE of that webhook (200, then 404 once it ended) the same drain
#     Succeeds: the registration went with its connection;
#   - n3, app=c, a webhook that never answers, failurePolicy Closed,
#     deadline 2 s: the drain times out, c-0 kept, the report says
#     fail-closed; the record counts the failed calls;
#   - n4, app=o, the same with failurePolicy Open: the drain Succeeds, o-0
#     evicted at the deadline;
#   - n5, app=l, a webhook that answers notBefore an hour from now (RFC
#     3339, offset +02:00): the drain times out, its report "until N s
#     from now" with N about 3,600, l-0 kept;
#   - a webhook registered with "disruptions":["reclaim","preempt"]
#     shows them in its record (after "drain", which always asks) and the
#     daemon registers it for quota reclaim and preemption too; an unknown
#     disruption ("preemption") is 400 naming it (the old gateway
#     refused the field: 400 "unknown field");
#   - URLs off loopback refused with 400 and why (10.0.0.1, localhost,
#     https, a userinfo trick), a bad body 400, a name taken 409; the main
#     listener has no such route (404).
# `shmsched status --queues` then counts the daemon's decisions; the
# daemon restarted, each webhook registers again. On the old code every
# /v1/approvals route was 404.
# usage: test_webhook.sh SHMSCHEDD SHMSCHED_GATEWAY SHMSCHED
set -u
daemon=$1 gateway=$2 cli=$3
command -v curl >/dev/null 2>&1 || { echo "SKIP: curl is missing"; exit 77; }
command -v python3 >/dev/null 2>&1 || { echo "SKIP: python3 is missing"; exit 77; }
dir=$(mktemp -d /tmp/shmsched-gwhook-XXXXXX)
name=gwhook-$$
. "$(dirname "$0")/lib.sh"

pod() { # NAME APP NODE
	printf '{"kind":"Pod","metadata":{"name":"%s","namespace":"default","labels":{"app":"%s"}},"spec":{"nodeName":"%s","containers":[{"name":"c","resources":{"requests":{"cpu":"1"}}}]},"status":{"phase":"Running"}}' "$1" "$2" "$3"
}
node() { printf '{"kind":"Node","metadata":{"name":"%s"},"status":{"allocatable":{"cpu":"8","memory":"8Gi","pods":"110"}}}' "$1"; }
printf '{"kind":"List","items":[%s,%s,%s,%s,%s,%s,%s,%s,%s,%s]}\n' \
	"$(node n1)" "$(node n2)" "$(node n3)" "$(node n4)" "$(node n5)" \
	"$(pod g-0 g n1)" "$(pod d-0 d n2)" "$(pod c-0 c n3)" "$(pod o-0 o n4)" \
	"$(pod l-0 l n5)" \
	>"$dir/cluster.json"

# The webhook (webhook_server.py): POST /grant, /deny, /later, /hang;
# each ask appended to asks.log.
python3 "$(dirname "$0")/webhook_server.py" "$dir/hook.port" "$dir/asks.log" &
pids="$pids $!"
wait_for "$dir/hook.port" "[0-9]"
hook=http://127.0.0.1:$(cat "$dir/hook.port")

daemon_start
gateway_start
A="--admin-socket $dir/s.sock.admin"
live() { "$cli" placements $A 2>/dev/null | grep -c -- " $1 "; }
register() { # NAME SELECTOR PATH DEADLINE POLICY
	admin -X POST -d "{\"name\":\"$1\",\"url\":\"$hook$3\",\"selector\":\"$2\",\"deadlineSeconds\":$4,\"failurePolicy\":\"$5\"}" \
		http://x/v1/approvals/webhooks
}
registered() { wait_until "$dir/daemon.log" "approval: manager $1 registered"; }

# Refusals first: nothing off loopback, no bad body, no main listener.
refused() { # URL PATTERN
	got=$(admin -X POST -d "{\"name\":\"x\",\"url\":\"$1\"}" http://x/v1/approvals/webhooks)
	[ "$got" = 400 ] && says "$2"
}
check "a URL on 10.0.0.1: 400, loopback only" refused "http://10.0.0.1:80/" "loopback only"
check "a URL on localhost: 400 (no name is resolved)" refused "http://localhost:80/" "no name is resolved"
check "https: 400" refused "https://127.0.0.1:443/" "not plain http"
check "a userinfo trick: 400" refused "http://127.0.0.1:80@evil.example/" "after the port"
check "an unknown field: 400" test "$(admin -X POST -d '{"name":"x","url":"http://127.0.0.1:9/","retries":3}' http://x/v1/approvals/webhooks)" = 400
check "  ... naming it" says 'unknown field \\"retries\\"'
check "the main listener: 404" test "$(code -H "$ALICE" -X POST -d '{}' "$url/v1/approvals/webhooks")" = 404
check "the daemon refuses a bad selector: 400" test "$(register bad 'a=b=c' /grant 5 Closed)" = 400
check "nothing registered yet: an empty list" sh -c \
	'[ "$(curl -s --unix-socket "$1/admin.sock" http://x/v1/approvals/webhooks)" = "{\"kind\":\"ApprovalWebhookList\",\"apiVersion\":\"shmsched.io/v1alpha1\",\"items\":[]}" ]' - "$dir"

check "register granter (app=g): 201" test "$(register granter app=g /grant 30 Closed)" = 201
check "  ... its record" says '"name":"granter".*"state":"Registered","connected":true'
check "  ... granter's record: asked by the drain only" says '"failurePolicy":"Closed","disruptions":\["drain"\],'
check "register denier (app=d): 201" test "$(register denier app=d /deny 30 Closed)" = 201
check "register sleeper-c (app=c, 2 s, Closed): 201" test "$(register sleeper-c app=c /hang 2 Closed)" = 201
check "register sleeper-o (app=o, 2 s, Open): 201" test "$(register sleeper-o app=o /hang 2 Open)" = 201
check "register later (app=l): 201" test "$(register later app=l /later 30 Closed)" = 201
check "the name granter again: 409" test "$(register granter app=x /grant 30 Closed)" = 409
check "disruptions [\"preemption\"]: 400 naming it" test "$(admin -X POST -d "{\"name\":\"x\",\"url\":\"$hook/grant\",\"disruptions\":[\"preemption\"]}" http://x/v1/approvals/webhooks)" = 400
check "  ... naming it" says 'unknown disruption \\"preemption\\"'
check "register scoped (disruptions reclaim, preempt): 201" test "$(admin -X POST -d "{\"name\":\"scoped\",\"url\":\"$hook/grant\",\"selector\":\"app=s\",\"disruptions\":[\"reclaim\",\"preempt\"]}" http://x/v1/approvals/webhooks)" = 201
check "  ... its record shows the scope" says '"disruptions":\["drain","reclaim","preempt"\],'
check "  ... the daemon registered it for reclaim and preemption" wait_until "$dir/daemon.log" \
	"approval: manager scoped registered (.*asked by the drain, quota reclaim, preemption)"
check "  ... DELETE scoped: 200" test "$(admin -X DELETE http://x/v1/approvals/webhooks/scoped)" = 200
check "  ... the daemon dropped it" wait_until "$dir/daemon.log" "approval: manager scoped gone"
check "the daemon registered all four" sh -c 'for m in granter denier sleeper-c sleeper-o; do
	grep -q "approval: manager $m registered" "$1" || exit 1; done' - "$dir/daemon.log"

drain() { # NODE TIMEOUT
	admin -X POST -d "{\"force\":true,\"timeoutSeconds\":$2}" "http://x/v1/nodes/$1/drain"
}
check "drain n1 (granter): 202" test "$(drain n1 20)" = 202
check "  ... Succeeded" drain_until n1 '"phase":"Succeeded"'
check "  ... g-0 gone" test "$(live n1)" -eq 0
check "  ... the webhook was asked about default/g-0 on n1" \
	grep -q '^/grant {"apiVersion":"shmsched.io/v1alpha1","kind":"DisruptionAsk","ask":[0-9]*,"placement":[0-9]*,"pod":"default/g-0","node":"n1","reason":"drain","asker":"granter"}$' "$dir/asks.log"
check "  ... its record counts the grant" sh -c \
	'curl -s --unix-socket "$1/admin.sock" http://x/v1/approvals/webhooks/granter | grep -q "\"granted\":1,"' - "$dir"

check "drain n2 (denier) for 3 s: 202" test "$(drain n2 3)" = 202
check "  ... TimedOut" drain_until n2 '"phase":"TimedOut"'
check "  ... the report says denied" says 'waiting on manager denier for pod default/d-0: denied'
check "  ... d-0 kept" test "$(live n2)" -eq 1
check "  ... the gateway logged the denial" grep -q "webhook denier: ask [0-9]* (pod default/d-0 on node n2, drain): denied (its message: from the test.s webhook)" "$dir/gateway.log"

check "drain n3 (never answers, Closed) for 5 s: 202" test "$(drain n3 5)" = 202
check "  ... TimedOut" drain_until n3 '"phase":"TimedOut"'
check "  ... the report says fail-closed" says 'fail-closed: kept'
check "  ... c-0 kept" test "$(live n3)" -eq 1
check "  ... the record counts failed calls" sh -c \
	'curl -s --unix-socket "$1/admin.sock" http://x/v1/approvals/webhooks/sleeper-c | grep -q "\"failed\":[1-9]"' - "$dir"

check "drain n5 (later: not before an hour from now) for 3 s: 202" test "$(drain n5 3)" = 202
check "  ... TimedOut" drain_until n5 '"phase":"TimedOut"'
check "  ... the report says until about an hour from now" says 'waiting on manager later for pod default/l-0: until 3[56][0-9][0-9] s from now'
check "  ... l-0 kept" test "$(live n5)" -eq 1
check "  ... its record counts it" sh -c \
	'curl -s --unix-socket "$1/admin.sock" http://x/v1/approvals/webhooks/later | grep -q "\"notBefore\":1,"' - "$dir"

check "drain n4 (never answers, Open) for 15 s: 202" test "$(drain n4 15)" = 202
check "  ... Succeeded" drain_until n4 '"phase":"Succeeded"'
check "  ... o-0 evicted at the deadline" test "$(live n4)" -eq 0

check "DELETE denier: 200" test "$(admin -X DELETE http://x/v1/approvals/webhooks/denier)" = 200
check "  ... the daemon dropped it" wait_until "$dir/daemon.log" "approval: manager denier gone"
check "  ... then 404" sh -c 'for _ in $(seq 50); do
	[ "$(curl -s -o /dev/null -w "%{http_code}" --unix-socket "$1/admin.sock" http://x/v1/approvals/webhooks/denier)" = 404 ] && exit 0
	sleep 0.1; done; exit 1' - "$dir"
check "  ... DELETE again: 404" test "$(admin -X DELETE http://x/v1/approvals/webhooks/denier)" = 404
check "drain n2 again: 202" test "$(drain n2 20)" = 202
check "  ... Succeeded, d-0 gone" drain_until n2 '"phase":"Succeeded"'
check "GET lists the four left" sh -c \
	'[ "$(curl -s --unix-socket "$1/admin.sock" http://x/v1/approvals/webhooks | grep -o "\"kind\":\"ApprovalWebhook\"" | wc -l)" -eq 4 ]' - "$dir"

out=$("$cli" status --name "$name" --queues $A 2>&1)
check "status --queues: 4 registered, a grant, denials, a not-before, one evicted and kept at deadlines" sh -c \
	'printf "%s\n" "$1" | grep -Eq "^Approving managers: 4 registered; [0-9]+ ask\(s\); 1 granted, [1-9][0-9]* denied, 1 not before a time; deadlines passed unanswered: [1-9][0-9]* evicted \(fail-open\), [1-9][0-9]* kept \(fail-closed\)$"' - "$out"
[ "$failed" -eq 0 ] || printf '%s\n' "$out" | tail -3

# The daemon restarted: each webhook's thread connects and registers again
# (its registration died with the old daemon's connection).
kill "$dpid"
wait "$dpid" 2>/dev/null
daemon_start
check "the daemon restarted: granter registered again" \
	wait_until "$dir/gateway.log" "webhook granter: registered again"
check "  ... the new daemon has it" wait_until "$dir/daemon.log" "approval: manager granter registered"
check "  ... its record says connected" sh -c 'for _ in $(seq 50); do
	curl -s --unix-socket "$1/admin.sock" http://x/v1/approvals/webhooks/granter |
		grep -q "\"connected\":true" && exit 0
	sleep 0.1; done; exit 1' - "$dir"

logs_if_failed
exit "$failed"
