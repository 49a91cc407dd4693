#!/bin/sh
# stress.cli_drain_crash: the daemon killed (SIGKILL) in the middle of
# `shmsched node drain` (issue 38): the drain reports what it evicted,
# and after the restart nothing is evicted twice.
# The cluster: n1 holds three bound pods app=web (--force drains them)
# under a PodDisruptionBudget of maxUnavailable 1, so the drain evicts one
# and then waits on the budget, asking every second; the daemon is killed
# then.
# - the drain exits 1 and says it stopped after 1 evicted, the nodes
#   cordoned, to run it again (the old CLI said only that the daemon
#   closed the connection);
# - the daemon resumes its state region: n1 still cordoned, two pods on
#   it, the evicted one not among them;
# - the drain run again never evicts a placement the first run evicted,
#   and evicts only pods still placed (the budget, declared again by the
#   restart from the cluster file, counts afresh: pdb.h).
# usage: test_drain_crash.sh SHMSCHEDD SHMSCHED
set -u
daemon=$1 cli=$2
dir=$(mktemp -d /tmp/shmsched-drain-crash-XXXXXX)
name=shmsched-drain-crash-$$
pid=
drain_pid=
. "$(dirname "$0")/../gateway/lib.sh"
cleanup() {
	[ -n "$drain_pid" ] && kill "$drain_pid" 2>/dev/null
	[ -n "$pid" ] && kill -9 "$pid" 2>/dev/null
	wait 2>/dev/null
	rm -f "/dev/shm/$name"
	rm -rf "$dir"
}
trap cleanup EXIT
pod() { # NAME
	printf ' {"kind": "Pod", "metadata": {"name": "%s", "namespace": "default", "labels": {"app": "web"}}, "spec": {"nodeName": "n1", "containers": [{"name": "c", "resources": {"requests": {"cpu": "100m"}}}]}, "status": {"phase": "Running"}},\n' "$1"
}
{
	echo '{"apiVersion": "v1", "kind": "List", "items": ['
	echo ' {"kind": "Node", "metadata": {"name": "n1"}, "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"}}},'
	echo ' {"kind": "Node", "metadata": {"name": "n2"}, "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"}}},'
	pod web-0
	pod web-1
	pod web-2
	echo ' {"apiVersion": "policy/v1", "kind": "PodDisruptionBudget", "metadata": {"name": "web", "namespace": "default"}, "spec": {"maxUnavailable": 1, "selector": {"matchLabels": {"app": "web"}}}}'
	echo ']}'
} >"$dir/cluster.json"
start() { # LOG [--fresh]
	"$daemon" --name "$name" ${2:-} --cluster "$dir/cluster.json" --socket "$dir/s.sock" \
		--workers 1 --no-pin >"$1" 2>&1 &
	pid=$!
	daemon_ready "$1" "$pid"
}
A="--admin-socket $dir/s.sock.admin"
start "$dir/daemon1.log" --fresh
"$cli" placements $A >"$dir/before" 2>/dev/null
check "three pods on n1 before" test "$(grep -c ' n1 ' "$dir/before")" -eq 3

"$cli" node drain n1 --force $A >"$dir/drain1.out" 2>"$dir/drain1.err" &
drain_pid=$!
waiting=1
for _ in $(seq 100); do
	grep -q '^drain: evicted 1 of 3$' "$dir/drain1.out" && { waiting=0; break; }
	sleep 0.05
done
check "the drain evicts one, then waits on the budget" test "$waiting" -eq 0
kill -9 "$pid"
wait "$pid" 2>/dev/null
pid=
wait "$drain_pid"
got=$?
drain_pid=
check "  ... killed under it, the drain exits 1" test "$got" -eq 1
check "  ... and says what it did and how to go on" grep -q 'stopped after 1 evicted (listed above), 2 left at the last wave; the nodes stay cordoned and what was evicted stays evicted: run the same drain again' "$dir/drain1.err"
first=$(grep -o '^evicted placement [0-9]*' "$dir/drain1.out" | awk '{print $3}')
check "  ... one placement evicted: $first" test "$(echo "$first" | grep -c .)" -eq 1

start "$dir/daemon2.log"
check "the restarted daemon resumes its state" grep -q 'state region .* resumed' "$dir/daemon2.log"
"$cli" placements $A >"$dir/after" 2>/dev/null
check "  ... two pods on n1" test "$(grep -c ' n1 ' "$dir/after")" -eq 2
check "  ... the evicted one is not back" sh -c "! grep -q '^$first ' '$dir/after'"
check "  ... n1 is still cordoned" sh -c "'$cli' status --name '$name' --node n1 2>/dev/null | grep -q ', cordoned'"

"$cli" node drain n1 --force --timeout 2s $A >"$dir/drain2.out" 2>"$dir/drain2.err"
got=$?
echo "the second run: $(grep '^drain:' "$dir/drain2.out" | tail -1), exit $got"
check "the drain run again ends (exit 0, or 1 at its timeout)" test "$got" -le 1
check "  ... never evicts what the first run evicted" sh -c "! grep -q '^evicted placement $first ' '$dir/drain2.out'"
ok=0
for id in $(grep -o '^evicted placement [0-9]*' "$dir/drain2.out" | awk '{print $3}'); do
	grep -q "^$id " "$dir/after" || ok=1
done
check "  ... evicts only pods still placed after the restart" test "$ok" -eq 0
check "  ... no placement evicted twice across both runs" test -z "$(cat "$dir/drain1.out" "$dir/drain2.out" | grep -o '^evicted placement [0-9]*' | sort | uniq -d)"
if [ "$failed" -ne 0 ]; then
	for f in drain1.out drain1.err before after drain2.out drain2.err daemon2.log; do echo "--- $f"; cat "$dir/$f"; done
	echo "$failed failed"
	exit 1
fi
echo "all passed"
