#!/bin/sh
# unit.cli_drain: `shmsched node drain` against a real shmschedd (issue 38),
# kubectl drain's semantics (kubernetes/kubectl pkg/drain/drain.go and
# cordon.go): its output and exit status.
# The cluster: n1 holds a bound pod (no producer manages it: kubectl's
# unmanaged pod), n2 one under a PodDisruptionBudget that allows no
# disruption, n3 nothing.
# - a bound pod stops the drain, nothing evicted, exit 1 naming --force;
#   --dry-run says the same and cordons nothing;
# - --force evicts it: "evicted 1 of 1", "node/n1 drained", exit 0, and
#   the node is cordoned (a pod pinned there is not placed);
# - the budget blocks n2's pod: --timeout 1s stops, names the budget and
#   what is left, exit 1; the pod is still placed; each wave's line is
#   followed by "drain: 1 left, blocked (listed above), no ETA" (issue 38:
#   no number while a budget holds every pod left; none once drained);
# - --surge with a bound pod: no template, so it stays, the line saying so;
# - --pod-selector leaves the pods it does not select (n2 drains at once);
# - an empty node drains at once; an unknown one is refused (exit 1);
#   bad usage (no NAME, a bad duration, an unknown option) exits 2.
# usage: test_drain.sh SHMSCHEDD SHMSCHED
set -u
daemon=$1 cli=$2
dir=$(mktemp -d /tmp/shmsched-drain-XXXXXX)
log=$dir/daemon.log
cat >"$dir/cluster.json" <<'JSON'
{"apiVersion": "v1", "kind": "List", "items": [
 {"kind": "Node", "metadata": {"name": "n1"},
  "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"}}},
 {"kind": "Node", "metadata": {"name": "n2"},
  "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"}}},
 {"kind": "Node", "metadata": {"name": "n3"},
  "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"}}},
 {"kind": "Pod", "metadata": {"name": "web-0", "namespace": "default"},
  "spec": {"nodeName": "n1", "containers": [{"name": "c", "resources": {"requests": {"cpu": "1"}}}]},
  "status": {"phase": "Running"}},
 {"kind": "Pod", "metadata": {"name": "db-0", "namespace": "default", "labels": {"app": "db"}},
  "spec": {"nodeName": "n2", "containers": [{"name": "c", "resources": {"requests": {"cpu": "1"}}}]},
  "status": {"phase": "Running"}},
 {"apiVersion": "policy/v1", "kind": "PodDisruptionBudget",
  "metadata": {"name": "db", "namespace": "default"},
  "spec": {"minAvailable": 1, "selector": {"matchLabels": {"app": "db"}}},
  "status": {"disruptionsAllowed": 0}}
]}
JSON
name=shmsched-drain-test-$$
. "$(dirname "$0")/../gateway/lib.sh"
daemon_start
wait_for "$log" "ready: socket $dir/s.sock"
# expect STATUS PATTERN ARGS...: runs shmsched with ARGS, checks both.
expect() {
	want=$1 pattern=$2
	shift 2
	out=$("$cli" "$@" 2>&1)
	got=$?
	if [ "$got" -ne "$want" ] || ! printf '%s' "$out" | grep -q -- "$pattern"; then
		echo "FAIL: shmsched $*: exit $got (want $want), output: $out"
		failed=$((failed + 1))
	else
		echo "ok: shmsched $* -> $got"
	fi
}
# live PATTERN: how many placements the listing shows matching it.
live() { "$cli" placements $A 2>/dev/null | grep -c -- "$1"; }
A="--admin-socket $dir/s.sock.admin"
expect 1 "refused placement .*pod default/web-0.*--force evicts it" node drain n1 --dry-run $A
expect 1 "nothing evicted (--force evicts them)" node drain n1 $A
[ "$(live ' n1 ')" -eq 1 ] || { echo "FAIL: n1's bound pod went without --force"; failed=$((failed + 1)); }
expect 0 "would evict placement .*default/web-0" node drain n1 --dry-run --force $A
[ "$(live ' n1 ')" -eq 1 ] || { echo "FAIL: --dry-run evicted"; failed=$((failed + 1)); }
# --surge: a bound pod has no template to place a replacement from, so
# it stays (blocked until the timeout), the line saying why.
expect 1 "no replacement (--surge) for pod default/web-0: a bound pod has no template" \
	node drain n1 --force --surge --timeout 1s $A
out=$("$cli" node drain n1 --force $A 2>&1)
got=$?
if [ "$got" -eq 0 ] && printf '%s' "$out" | grep -q '^node/n1 cordoned$' &&
	printf '%s' "$out" | grep -q '^evicted placement .*default/web-0' &&
	printf '%s' "$out" | grep -q '^drain: evicted 1 of 1$' &&
	printf '%s' "$out" | grep -q '^node/n1 drained$' && [ "$(live ' n1 ')" -eq 0 ] &&
	! printf '%s' "$out" | grep -q '^drain: [0-9]* left'; then
	echo "ok: node drain n1 --force -> 0, evicted 1 of 1, drained"
else
	echo "FAIL: node drain n1 --force: exit $got, output: $out"
	failed=$((failed + 1))
fi
# Cordoned first: the status of n1 says so.
if "$cli" status --name "$name" --node n1 2>/dev/null | grep -q ', cordoned'; then
	echo "ok: n1 cordoned"
else
	echo "FAIL: n1 not cordoned: $("$cli" status --name "$name" --node n1 2>&1)"
	failed=$((failed + 1))
fi
# The budget blocks db-0: the timeout stops the drain and names it.
out=$("$cli" node drain n2 n3 --force --timeout 1s $A 2>&1)
got=$?
if [ "$got" -eq 1 ] &&
	printf '%s' "$out" | grep -q '^blocked placement .*default/db-0.*PodDisruptionBudget default/db allows no more disruptions' &&
	printf '%s' "$out" | grep -q 'timed out after 1s: 0 of 1 evicted, 1 left' &&
	printf '%s' "$out" | grep -q '^drain: 1 left, blocked (listed above), no ETA$' &&
	[ "$(live ' n2 ')" -eq 1 ]; then
	echo "ok: node drain n2 n3 --timeout 1s -> 1, blocked by default/db"
else
	echo "FAIL: node drain n2 n3 --timeout 1s: exit $got, output: $out"
	failed=$((failed + 1))
fi
# --pod-selector: db-0 is not selected, so nothing blocks n2's drain; a
# selector the daemon cannot read is refused.
expect 0 "node/n2 drained" node drain n2 --pod-selector 'app!=db' --timeout 5s $A
[ "$(live ' n2 ')" -eq 1 ] || { echo "FAIL: --pod-selector evicted db-0"; failed=$((failed + 1)); }
expect 1 "pod selector" node drain n2 --pod-selector 'app=a=b' $A
expect 0 "node/n3 drained" node drain n3 $A
expect 1 "no such node" node drain nx $A
expect 1 "admin socket" node drain n3 --admin-socket "$dir/s.sock"
expect 2 "needs a NAME" node drain $A
expect 2 "expected a duration" node drain n3 --timeout soon $A
expect 2 "unrecognized option" node drain n3 --ignore-daemonsets $A
if [ "$failed" -ne 0 ]; then
	echo "$failed failed"
	exit 1
fi
echo "all passed"
