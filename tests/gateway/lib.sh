# tests/gateway/lib.sh: what the gateway's shell tests (test_*.sh) share,
# and the tests/cli ones that start a daemon (test_approve.sh,
# test_drain.sh, test_status.sh on $dir/cluster.json; test_node.sh,
# test_drain_crash.sh, test_policy.sh for daemon_ready, with exit traps
# and checks of their own defined after), sourced after they set
#   dir   their temporary directory (removed on exit),
#   name  the daemon's state region (/dev/shm/$name removed on exit).
# It sets pids (add each background process: killed and waited for on
# exit), failed=0 and the exit trap, and defines:
#   check NAME COMMAND...   runs COMMAND: "ok: NAME" or "FAIL: NAME" and
#                           one more in $failed;
#   wait_until FILE PATTERN whether FILE says PATTERN within 10 s;
#   wait_for FILE PATTERN   the same, or the test stops (exit 1) showing
#                           FILE;
#   daemon_ready LOG PID    waits until shmschedd PID, logging to LOG, says
#                           its own ready line ("shmschedd: ready": 'ready'
#                           alone also matches "already" in a refusal),
#                           up to 20 s; a daemon that exits first or is
#                           not ready by then stops the test (exit 1)
#                           showing LOG;
#   gateway_up LOG          waits until the gateway logging to LOG listens
#                           and has reached the daemon, and sets port and
#                           url to its main listener's;
#   code CURL-ARG...        curl, the body into $dir/body, the status out;
#   admin CURL-ARG...       code on the admin listener, $dir/admin.sock
#                           (URL http://localhost/...);
#   says PATTERN            whether $dir/body has PATTERN (if not, shows it).
# The tests of the admin listener (test_evict.sh, test_failure.sh,
# test_queues.sh, test_surge.sh) also set daemon and gateway (the
# programs) and use (daemon_start: test_owners.sh and the tests/cli ones
# too, setting daemon):
#   daemon_start [ARG...]   runs $daemon on $dir/cluster.json (written by
#                           then), socket $dir/s.sock, one worker, ARGs
#                           added, logging to $dir/daemon.log, until ready;
#                           its pid in dpid;
#   gateway_start           writes alice's token (ALICE, the header) and a
#                           policy giving her namespace team-a unless the
#                           test wrote $dir/tokens.csv and $dir/policy.json
#                           (with alice's token among its own), runs
#                           $gateway on the daemon with its main listener on
#                           a free port and its admin listener on
#                           $dir/admin.sock, logging to $dir/gateway.log,
#                           until gateway_up; its pid in gpid;
#   drain_until NODE PATTERN whether GET of NODE's drain (the admin
#                           listener's) says PATTERN within 10 s, its
#                           record then in $dir/body;
#   logs_if_failed          the two logs' tails when a check failed.
# The pool quarantine's tests (test_failure.sh, test_pools.sh) also use:
#   pool_cluster            writes $dir/cluster.json: nodes n0..n24 of 4
#                           cpu, n0..n4 in pool "bad" (the label
#                           node.kubernetes.io/instance-type), the rest in
#                           "good": 5 of 25, as daemon/quarantine.c's 20 %
#                           cap lets a pool go;
#   bad_pod NAME            a pod of team-a, NAME, of 3 cpu that only pool
#                           bad takes (one a node), all of one template;
#   placement_id NAME       team-a/NAME's placement id (GET as alice);
#   place_bad_three         web-0, web-1, web-2 placed on pool bad (checked),
#                           their placement ids in id0, id1, id2.
pids=""
cleanup() {
	for p in $pids; do kill "$p" 2>/dev/null; done
	for p in $pids; do wait "$p" 2>/dev/null; done
	rm -f "/dev/shm/$name"
	rm -rf "$dir"
}
trap cleanup EXIT
failed=0
check() { # NAME COMMAND...
	what=$1
	shift
	if "$@"; then echo "ok: $what"; else echo "FAIL: $what"; failed=$((failed + 1)); fi
}
wait_until() { # FILE PATTERN
	for _ in $(seq 200); do
		grep -q "$2" "$1" 2>/dev/null && return 0
		sleep 0.05
	done
	return 1
}
wait_for() { # FILE PATTERN
	wait_until "$1" "$2" && return 0
	echo "FAIL: $1 never said $2:"; cat "$1"; exit 1
}
daemon_ready() { # LOG PID
	for _ in $(seq 200); do
		grep -q 'shmschedd: ready' "$1" 2>/dev/null && return 0
		kill -0 "$2" 2>/dev/null || break
		sleep 0.1
	done
	grep -q 'shmschedd: ready' "$1" 2>/dev/null && return 0
	echo "FAIL: the daemon (pid $2) did not start:"; cat "$1"; exit 1
}
gateway_up() { # LOG
	wait_for "$1" "ready: listening on port"
	wait_for "$1" "connected to the daemon"
	port=$(sed -n 's/.*listening on port \([0-9]*\).*/\1/p' "$1")
	url=http://127.0.0.1:$port
}
daemon_start() { # [ARG...]
	"$daemon" --cluster "$dir/cluster.json" --socket "$dir/s.sock" --workers 1 \
		--no-pin --name "$name" --fresh "$@" >"$dir/daemon.log" 2>&1 &
	dpid=$!
	pids="$pids $dpid"
	daemon_ready "$dir/daemon.log" "$dpid"
}
gateway_start() {
	if [ ! -f "$dir/tokens.csv" ]; then
		echo 'alice-token-0123456789,alice,1001' >"$dir/tokens.csv"
		echo '{"apiVersion":"shmsched.io/v1alpha1","kind":"Policy","rules":[
 {"users":["alice"],"namespaces":["team-a"]}]}' >"$dir/policy.json"
	fi
	chmod 600 "$dir/tokens.csv"
	"$gateway" --socket "$dir/s.sock" --name "$name" --listen 127.0.0.1:0 \
		--token-file "$dir/tokens.csv" --policy "$dir/policy.json" \
		--admin-listen "unix:$dir/admin.sock" >"$dir/gateway.log" 2>&1 &
	gpid=$!
	pids="$pids $gpid"
	gateway_up "$dir/gateway.log"
	ALICE="Authorization: Bearer alice-token-0123456789"
}
code() { curl -s -o "$dir/body" -w '%{http_code}' "$@"; }
admin() { code --unix-socket "$dir/admin.sock" "$@"; }
says() { grep -q "$1" "$dir/body" || { echo "  the body: $(cat "$dir/body")"; false; }; }
drain_until() { # NODE PATTERN
	for _ in $(seq 100); do
		admin "http://localhost/v1/nodes/$1/drain" >/dev/null
		grep -q "$2" "$dir/body" && return 0
		sleep 0.1
	done
	return 1
}
logs_if_failed() {
	[ "$failed" -eq 0 ] && return
	echo "--- gateway.log"; tail -20 "$dir/gateway.log"
	echo "--- daemon.log"; tail -20 "$dir/daemon.log"
}
pool_cluster() {
	{
		printf '{"kind":"List","items":['
		for i in $(seq 0 24); do
			[ "$i" -lt 5 ] && pool=bad || pool=good
			[ "$i" -gt 0 ] && printf ','
			printf '{"kind":"Node","metadata":{"name":"n%d","labels":{"node.kubernetes.io/instance-type":"%s"}},"status":{"allocatable":{"cpu":"4","memory":"16Gi","pods":"110"}}}\n' "$i" "$pool"
		done
		printf ']}\n'
	} >"$dir/cluster.json"
}
bad_pod() { # NAME
	printf '{"kind":"Pod","metadata":{"name":"%s","namespace":"team-a"},"spec":{"nodeSelector":{"node.kubernetes.io/instance-type":"bad"},"containers":[{"name":"c","resources":{"requests":{"cpu":"3"}}}]}}' "$1"
}
placement_id() { # NAME
	curl -s -H "$ALICE" "$url/v1/placements/team-a/$1" |
		sed -n 's/.*"placement_id":\([0-9]*\).*/\1/p'
}
place_bad_three() {
	for i in 0 1 2; do
		check "web-$i placed on pool bad" test "$(code -H "$ALICE" -X POST -d "$(bad_pod web-$i)" "$url/v1/placements")" = 200
	done
	id0=$(placement_id web-0) id1=$(placement_id web-1) id2=$(placement_id web-2)
	check "three placement ids" test -n "$id0" -a -n "$id1" -a -n "$id2"
}
