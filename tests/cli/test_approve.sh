#!/bin/sh
# unit.cli_approve: `shmsched approve` (issue 38 item 3, KEP-4563's
# interceptors) against a real shmschedd, with `shmsched node drain`.
# The cluster: n1 holds two bound pods, web-0 and db-0 (app=db).
# - a manager that denies app=db: the drain evicts web-0, keeps db-0 and
#   says "waiting on manager keeper for pod default/db-0: denied" until
#   its --timeout (exit 1); db-0 still placed;
# - the manager gone (SIGTERM), one that grants: the drain ends, exit 0,
#   and the manager printed its answer and exited after --count 1;
# - `shmsched status --queues` then counts the grant and the denials
#   (shmsched_approval_decisions_total; absent before);
# - bad usage (no --name, no verdict, a bad --deadline) exits 2; a
#   registration on the producer socket is refused (exit 1).
# usage: test_approve.sh SHMSCHEDD SHMSCHED
set -u
daemon=$1 cli=$2
dir=$(mktemp -d /tmp/shmsched-approve-XXXXXX)
log=$dir/daemon.log
cat >"$dir/cluster.json" <<'JSON'
{"apiVersion": "v1", "kind": "List", "items": [
 {"kind": "Node", "metadata": {"name": "n1"},
  "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"}}},
 {"kind": "Pod", "metadata": {"name": "web-0", "namespace": "default"},
  "spec": {"nodeName": "n1", "containers": [{"name": "c", "resources": {"requests": {"cpu": "1"}}}]},
  "status": {"phase": "Running"}},
 {"kind": "Pod", "metadata": {"name": "db-0", "namespace": "default", "labels": {"app": "db"}},
  "spec": {"nodeName": "n1", "containers": [{"name": "c", "resources": {"requests": {"cpu": "1"}}}]},
  "status": {"phase": "Running"}}
]}
JSON
name=shmsched-approve-test-$$
. "$(dirname "$0")/../gateway/lib.sh"
daemon_start
wait_for "$log" "ready: socket $dir/s.sock"
fail() { echo "FAIL: $*"; failed=$((failed + 1)); }
A="--admin-socket $dir/s.sock.admin"
live() { "$cli" placements $A 2>/dev/null | grep -c -- "$1"; }
# registered WHO: waits until the daemon logged the manager's registration.
registered() {
	for _ in $(seq 100); do
		grep -q "approval: manager $1 registered" "$log" && return 0
		sleep 0.05
	done
	fail "manager $1 never registered: $(cat "$dir/$1.err" 2>/dev/null)"
}

"$cli" approve --name keeper --selector app=db --deny --interval 50 $A \
	>"$dir/keeper.out" 2>"$dir/keeper.err" &
mgr=$!
pids="$pids $mgr"
registered keeper
out=$("$cli" node drain n1 --force --timeout 2s $A 2>&1)
got=$?
if [ "$got" -eq 1 ] &&
	printf '%s' "$out" | grep -q '^evicted placement .*default/web-0' &&
	printf '%s' "$out" | grep -q 'waiting on manager keeper for pod default/db-0: denied' &&
	[ "$(live ' n1 ')" -eq 1 ]; then
	echo "ok: a denying manager keeps db-0 (exit 1, its line says so)"
else
	fail "node drain n1 under a denying manager: exit $got, output: $out"
fi
grep -q 'pod default/db-0 on node n1: denied' "$dir/keeper.out" ||
	fail "the manager's answer line: $(cat "$dir/keeper.out")"
kill "$mgr"
wait "$mgr"
rc=$?
[ "$rc" -eq 0 ] || fail "the manager ended with $rc on SIGTERM"
# Its registration is gone with its connection; a granting one lets go.
for _ in $(seq 100); do
	grep -q "approval: manager keeper gone" "$log" && break
	sleep 0.05
done
grep -q "approval: manager keeper gone" "$log" || fail "keeper's registration stayed"
"$cli" approve --name letgo --selector app=db --grant --count 1 --interval 50 $A \
	>"$dir/letgo.out" 2>"$dir/letgo.err" &
mgr=$!
pids="$pids $mgr"
registered letgo
out=$("$cli" node drain n1 --force --timeout 10s $A 2>&1)
got=$?
if [ "$got" -eq 0 ] && printf '%s' "$out" | grep -q '^node/n1 drained$' &&
	[ "$(live ' n1 ')" -eq 0 ]; then
	echo "ok: a granting manager lets db-0 go (exit 0, drained)"
else
	fail "node drain n1 under a granting manager: exit $got, output: $out"
fi
wait "$mgr"
rc=$?
[ "$rc" -eq 0 ] && grep -q 'default/db-0 on node n1: granted' "$dir/letgo.out" ||
	fail "the granting manager: exit $rc, $(cat "$dir/letgo.out" "$dir/letgo.err")"
# The decisions counted (OP_QUEUE_METRICS' shmsched_approval_*), as
# `shmsched status --queues` prints them: keeper's denials, letgo's one
# grant, no deadline passed, no manager left.
out=$("$cli" status --name "$name" --queues $A 2>&1)
printf '%s\n' "$out" | grep -Eq '^Approving managers: 0 registered; [0-9]+ ask\(s\); 1 granted, [1-9][0-9]* denied, 0 not before a time; deadlines passed unanswered: 0 evicted \(fail-open\), 0 kept \(fail-closed\)$' &&
	echo "ok: status --queues counts 1 grant and the denials" ||
	fail "status --queues: $out"

expect_usage() {
	out=$("$cli" approve "$@" 2>&1)
	got=$?
	[ "$got" -eq 2 ] && echo "ok: approve $* -> 2" || fail "approve $*: exit $got: $out"
}
expect_usage --grant $A
expect_usage --name x $A
expect_usage --name x --grant --deny $A
expect_usage --name x --grant --deadline 0 $A
out=$("$cli" approve --name x --grant --admin-socket "$dir/s.sock" 2>&1)
got=$?
[ "$got" -eq 1 ] && printf '%s' "$out" | grep -q 'admin socket' &&
	echo "ok: the producer socket refuses a manager" ||
	fail "approve on the producer socket: exit $got: $out"
if [ "$failed" -ne 0 ]; then
	echo "$failed failed"
	exit 1
fi
echo "all passed"
