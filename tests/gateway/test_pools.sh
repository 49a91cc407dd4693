#!/bin/sh
# stress.gateway_pools: PUT /v1/nodes/{name}/lease, GET /v1/pools and POST
# /v1/pools/{pool}/release on the admin listener (issue 38), with curl
# against a real shmschedd (--node-monitor-grace-period 1s).
# Leases, as `shmsched node lease NAME` (tests/cli/test_node_lease.sh):
# n1 leased through the gateway (200 NodeLease) and then silent is shown
# Unknown by `shmsched status --node` within 4 s; a PUT renews it at once
# (no longer Unknown). Refused: no such node (404, the daemon's ENOENT), a
# body with a member (400), not JSON (400), a body past 16 KiB (413), GET
# of the path on the admin listener (405), the main listener's PUT (404,
# as for the failure route).
# Pools, as `shmsched pool list|release` (cli/pool.c): three failures of
# one template on pool bad (as stress.gateway_failure) quarantine it; GET
# /v1/pools says 1 quarantined and its line names pool bad; a release
# with a bad body (400) or a bad pool (400) lifts nothing; POST
# /v1/pools/bad/release lifts it (released 1), GET then says 0, and the
# template's next pod is placed on pool bad again. The main listener
# answers 404 for both.
# On the old code every one of these routes was 404 (lease: 405, only
# the node's cordon verbs).
# usage: test_pools.sh SHMSCHEDD SHMSCHED_GATEWAY SHMSCHED
set -u
daemon=$1 gateway=$2 cli=$3
command -v curl >/dev/null 2>&1 || { echo "SKIP: curl is missing"; exit 77; }
dir=$(mktemp -d /tmp/shmsched-gwpools-XXXXXX)
name=gwpools-$$
. "$(dirname "$0")/lib.sh"

pool_cluster
daemon_start --node-monitor-grace-period 1s
gateway_start

# --- leases ---------------------------------------------------------------
lease() { # NODE BODY
	admin -X PUT -H 'Content-Type: application/json' -d "$2" \
		"http://localhost/v1/nodes/$1/lease"
}
unknown() { "$cli" status --name "$name" --node "$1" | head -1 | grep -q 'Unknown'; }
known() { ! unknown "$1"; }
check "PUT n1's lease (admin, no body): 200" test "$(lease n1 '')" = 200
check "  ... a NodeLease naming n1, renewed" says '"kind":"NodeLease".*"node":"n1","renewed":true'
check "  ... n1 not Unknown right after" known n1
i=0
while [ "$i" -lt 40 ] && ! unknown n1; do
	sleep 0.1
	i=$((i + 1))
done
check "n1 silent: Unknown within 4 s (its lease was kept)" unknown n1
check "PUT n1's lease with {}: 200" test "$(lease n1 '{}')" = 200
check "  ... n1 no longer Unknown (renewed)" known n1
check "n2, never leased, not Unknown" known n2
check "no such node: 404" test "$(lease nope '{}')" = 404
check "  ... saying so" says 'no such node'
check "a body with a member: 400" test "$(lease n1 '{"holderIdentity":"n1"}')" = 400
check "  ... naming it" says 'unknown field \\"holderIdentity\\"'
check "not JSON: 400" test "$(lease n1 '{')" = 400
head -c 17000 /dev/zero | tr '\0' ' ' >"$dir/big.json"
check "a body past 16 KiB: 413" test "$(admin -X PUT -H 'Expect: 100-continue' --data-binary "@$dir/big.json" "http://localhost/v1/nodes/n1/lease")" = 413
check "GET of the lease (admin): 405" test "$(admin "http://localhost/v1/nodes/n1/lease")" = 405
check "the main listener's PUT: 404" test "$(code -H "$ALICE" -X PUT -d '{}' "$url/v1/nodes/n1/lease")" = 404

# --- pools ----------------------------------------------------------------
report() { # ID
	admin -X POST -d '{}' "http://localhost/v1/placements/$1/failure"
}
check "GET /v1/pools before any failure: 200" test "$(admin http://localhost/v1/pools)" = 200
check "  ... none quarantined" says '"kind":"PoolQuarantineList".*"quarantined":0,"lines":\['
place_bad_three
report "$id0" >/dev/null
report "$id1" >/dev/null
check "the third failure: 202 Tripped" test "$(report "$id2")" = 202 -a -n "$(grep '"verdict":"Tripped"' "$dir/body")"
check "web-3 is not placed: the quarantine" test "$(code -H "$ALICE" -X POST -d "$(bad_pod web-3)" "$url/v1/placements")" = 200
check "  ... naming it" says 'pool bad quarantined for template'
check "GET /v1/pools: 200" test "$(admin http://localhost/v1/pools)" = 200
check "  ... 1 quarantined" says '"quarantined":1,'
check "  ... its line, as the daemon writes it" says '"lines":\["quarantined pool bad template team-a/gw-[0-9a-f]* identity [0-9]*: 3 failures of 3 placements on 3 nodes (pool of 5 nodes)"\]'
check "the main listener's GET /v1/pools: 404" test "$(code -H "$ALICE" "$url/v1/pools")" = 404
check "the main listener's release: 404" test "$(code -H "$ALICE" -X POST "$url/v1/pools/bad/release")" = 404
check "POST /v1/pools: 405" test "$(admin -X POST http://localhost/v1/pools)" = 405
check "release, unknown member: 400" test "$(admin -X POST -d '{"pool":"bad"}' http://localhost/v1/pools/bad/release)" = 400
check "  ... naming it" says 'unknown field \\"pool\\": expected template'
check "release, a template that is no namespace/name: 400" test "$(admin -X POST -d '{"template":"web"}' http://localhost/v1/pools/bad/release)" = 400
check "GET of a release: 405" test "$(admin http://localhost/v1/pools/bad/release)" = 405
check "GET /v1/pools: still 1 quarantined" test "$(admin http://localhost/v1/pools)" = 200 -a -n "$(grep '"quarantined":1,' "$dir/body")"
check "POST /v1/pools/bad/release: 200" test "$(admin -X POST http://localhost/v1/pools/bad/release)" = 200
check "  ... released 1, none left" says '"kind":"PoolRelease".*"pool":"bad","template":null,"released":1,"quarantined":0'
check "GET /v1/pools: 0 quarantined" test "$(admin http://localhost/v1/pools)" = 200 -a -n "$(grep '"quarantined":0,' "$dir/body")"
check "web-4 (the same template) placed on pool bad again" test "$(code -H "$ALICE" -X POST -d "$(bad_pod web-4)" "$url/v1/placements")" = 200
check "  ... placed" test -n "$(placement_id web-4)"
check "releasing again: 200, 0 released" test "$(admin -X POST -d '{"template":"team-a/web"}' http://localhost/v1/pools/bad/release)" = 200 -a -n "$(grep '"released":0' "$dir/body")"

logs_if_failed
exit "$failed"
