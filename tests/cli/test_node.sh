#!/bin/sh
# stress.node: `shmsched node` against a real shmschedd: add, cordon, uncordon,
# update and remove through the admin socket; each refusal (unknown node,
# a node that already exists, a missing file, bad usage) with its exit
# status and a message; and the producer socket refusing the same event.
# Then `shmsched placements` lists what the example producer placed, under
# a header line, its requests in kubectl's units.
# usage: test_node.sh SHMSCHEDD SHMSCHED CLUSTER_JSON PRODUCER_EXAMPLE
set -u
daemon=$1 cli=$2 cluster=$3 producer=$4
dir=$(mktemp -d /tmp/shmsched-cli-XXXXXX)
log=$dir/daemon.log
. "$(dirname "$0")/../gateway/lib.sh"
"$daemon" --cluster "$cluster" --socket "$dir/s.sock" --workers 1 --no-pin --ephemeral \
	--socket-mode 0660 --socket-group "$(id -g)" >"$log" 2>&1 &
pid=$!
cleanup() { kill "$pid" 2>/dev/null; wait "$pid" 2>/dev/null; rm -rf "$dir"; }
trap cleanup EXIT
daemon_ready "$log" "$pid"
grep -q "ready: socket $dir/s.sock, admin socket $dir/s.sock.admin" "$log" ||
	{ echo "daemon did not start:"; cat "$log"; exit 1; }
failed=0
# --socket-mode and --socket-group reach the producer socket; the admin
# socket stays 0600 whatever they say.
modes="$(stat -c '%a %g' "$dir/s.sock") $(stat -c '%a' "$dir/s.sock.admin")"
if [ "$modes" != "660 $(id -g) 600" ]; then
	echo "FAIL: socket modes and group: $modes (want 660 $(id -g) 600)"
	failed=$((failed + 1))
else
	echo "ok: socket modes $modes"
fi
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
cat >"$dir/n9.json" <<'JSON'
{"kind": "Node", "metadata": {"name": "n9"},
 "status": {"allocatable": {"cpu": "2", "memory": "4Gi", "pods": "10"}}}
JSON
cat >"$dir/n9b.json" <<'JSON'
{"kind": "Node", "metadata": {"name": "n9"},
 "status": {"allocatable": {"cpu": "4", "memory": "4Gi", "pods": "10"}}}
JSON
A="--admin-socket $dir/s.sock.admin"
expect 0 "done" node add "$dir/n9.json" $A
expect 1 "already exists" node add "$dir/n9.json" $A
expect 0 "done" node cordon n9 $A
expect 0 "done" node uncordon n9 $A
expect 0 "done" node update "$dir/n9b.json" $A
expect 0 "done" node remove n9 $A
expect 1 "no such node" node remove n9 $A
expect 1 "no such node" node cordon nobody $A
expect 1 "No such file" node add "$dir/missing.json" $A
expect 2 "unknown event" node explode n1 $A
expect 2 "needs a NAME" node cordon $A
# The same event through the producer socket is refused: admins only.
expect 1 "admin socket" node cordon n1 --admin-socket "$dir/s.sock"
# The environment names the daemon's socket; the admin one follows it.
SHMSCHED_SOCKET=$dir/s.sock expect 0 "done" node cordon n1
expect 0 "done" node uncordon n1 $A
# Placements: the example producer places 5 pods and leaves them placed;
# the listing shows them and the cluster file's one bound pod (owner
# "(bound)"), 6, each with its owner, as lines and as JSON.
SHMSCHED_SOCKET=$dir/s.sock "$producer" --keep 5 >"$dir/producer.out" 2>&1 &&
	grep -q '5 placed' "$dir/producer.out" ||
	{ echo "FAIL: example producer:"; cat "$dir/producer.out"; failed=$((failed + 1)); }
lines=$("$cli" placements $A 2>"$dir/list.err" | grep -c 'uid ')
bound=$("$cli" placements $A 2>/dev/null | grep -c '(bound)')
if [ "$lines" -ne 6 ] || [ "$bound" -ne 1 ] || ! grep -q '6 live' "$dir/list.err"; then
	echo "FAIL: shmsched placements listed $lines, said: $(cat "$dir/list.err")"
	failed=$((failed + 1))
else
	echo "ok: shmsched placements -> 6 live, 1 bound"
fi
# A header line, then the requests as kubectl prints them: the example
# producer's pods ask 100m and 128Mi (examples/producer.c).
"$cli" placements $A >"$dir/list.txt" 2>/dev/null
if head -n 1 "$dir/list.txt" | grep -q '^ID  *NODE  *OWNER  *CPU  *MEMORY  *GPUS  *CPUSET$' &&
	[ "$(grep -c ' 100m  *128Mi ' "$dir/list.txt")" -eq 5 ]; then
	echo "ok: shmsched placements: header, cpu 100m, memory 128Mi"
else
	echo "FAIL: shmsched placements, header and units:"; cat "$dir/list.txt"
	failed=$((failed + 1))
fi
json=$("$cli" placements --json $A | grep -c '"placement_id":[0-9]*,"node":"n[0-9]"')
if [ "$json" -ne 6 ]; then
	echo "FAIL: shmsched placements --json: $json lines"
	failed=$((failed + 1))
else
	echo "ok: shmsched placements --json -> 6 objects"
fi
expect 2 "unexpected argument" placements --bogus $A
if [ "$failed" -ne 0 ]; then
	echo "$failed failed"
	exit 1
fi
echo "all passed"
