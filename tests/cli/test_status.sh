#!/bin/sh
# stress.status: `shmsched status` on a real shmschedd's state region: while
# it runs (nodes, the 5 pods the example producer placed and the cluster
# file's bound one, the producer that owns them), as text and as JSON; then
# after kill -9, the region the crash left (still read, no daemon holding
# it, no clean stop); the totals on the first line, --summary (no tables),
# --node NAME (that node; an unknown one is exit 1 naming those there
# are); then the refusals (no such region: exit 1 naming its file; bad
# usage: exit 2).
# usage: test_status.sh SHMSCHEDD SHMSCHED CLUSTER_JSON PRODUCER_EXAMPLE
set -u
daemon=$1 cli=$2 cluster=$3 producer=$4
name=obs-cli-$$
dir=$(mktemp -d /tmp/shmsched-status-XXXXXX)
log=$dir/daemon.log
. "$(dirname "$0")/../gateway/lib.sh"
cp "$cluster" "$dir/cluster.json"
daemon_start
pid=$dpid
fail() { echo "FAIL: $*"; failed=$((failed + 1)); }
ok() { echo "ok: $*"; }

SHMSCHED_SOCKET=$dir/s.sock "$producer" --keep 5 >"$dir/producer.out" 2>&1 &&
	grep -q '5 placed' "$dir/producer.out" ||
	fail "example producer: $(cat "$dir/producer.out")"

# check_json FILE RUNNING: the JSON answer's figures, checked by python3.
check_json() {
	python3 - "$1" "$2" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
running = sys.argv[2] == "true"
problems = []
def want(what, got, expected):
    if got != expected:
        problems.append(f"{what}: {got!r}, expected {expected!r}")
want("daemon.running", s["daemon"]["running"], running)
want("daemon.clean_stop", s["daemon"]["clean_stop"], False)
want("snapshot.nodes", s["snapshot"]["nodes"], 3)
want("node names", sorted(n["name"] for n in s["nodes"]), ["n1", "n2", "n3"])
want("placements.live", s["placements"]["live"], 6)
want("placements.bound", s["placements"]["bound"], 1)
want("placements on nodes", sum(n["placements"] for n in s["nodes"]), 6)
want("pods used on nodes", sum(n["used_pods"] for n in s["nodes"]), 6)
want("totals.placements_on_nodes", s["totals"]["placements_on_nodes"], 6)
want("cordoned", [n["name"] for n in s["nodes"] if n["cordoned"]], ["n3"])
want("producers", len(s["producers"]), 1)
want("producer placements", s["producers"][0]["placements"], 5)
want("workers", len(s["workers"]), 1)
want("worker placed", s["workers"][0]["placed"], 5)
q = s["workers"][0]["queue"]
want("queue now", [q["active"], q["backoff"], q["unschedulable"], q["gated"]],
     [0, 0, 0, 0])
want("pods that waited", q["waited"], 0)
want("attempt counts", len(q["attempts"]), 6)
for p in problems:
    print(p)
sys.exit(1 if problems else 0)
PY
}

# status_text STATE: the table's lines that say what runs and what is placed.
status_text() {
	out=$("$cli" status --name "$name" 2>&1)
	rc=$?
	if [ $rc -ne 0 ]; then
		fail "shmsched status ($1): exit $rc: $out"
		return
	fi
	printf '%s\n' "$out" >"$dir/status-$1.txt"
	for pattern in "$2" "region      $name (/dev/shm/$name" "3 nodes" \
		"placements  6 live (1 declared bound)" "6 placements on nodes" \
		"UNSCHEDULABLE   WAITED"; do
		printf '%s' "$out" | grep -qF -- "$pattern" ||
			fail "shmsched status ($1): no \"$pattern\" in: $out"
	done
	ok "shmsched status ($1)"
}

status_text running "daemon      running, pid $pid"
if "$cli" status --name "$name" --json >"$dir/running.json" 2>&1 &&
	check_json "$dir/running.json" true; then
	ok "shmsched status --json (running)"
else
	fail "shmsched status --json (running): $(cat "$dir/running.json")"
fi

# Totals first; --summary (no tables); --node (one node, or exit 1).
first=$("$cli" status --name "$name" | head -n 1)
case $first in
"totals      3 nodes (1 cordoned): cpu "*" of "*" cores ("*"%), memory "*"Gi of "*"Gi ("*"%), pods 6 of "*"; 6 placements on nodes")
	ok "totals first" ;;
*) fail "the first line is not the totals: $first" ;;
esac
out=$("$cli" status --name "$name" --summary 2>&1)
if printf '%s\n' "$out" | grep -q '^totals ' && printf '%s\n' "$out" | grep -q '^daemon ' &&
	! printf '%s\n' "$out" | grep -q '^nodes\|^workers\|^producers\|^queue'; then
	ok "shmsched status --summary: totals, no tables"
else
	fail "shmsched status --summary: $out"
fi
if "$cli" status --name "$name" --summary --json >"$dir/summary.json" &&
	python3 -c 'import json, sys
s = json.load(open(sys.argv[1]))
sys.exit(0 if s["totals"]["placements_on_nodes"] == 6 and "nodes" not in s
	 and "workers" not in s else 1)' "$dir/summary.json"; then
	ok "shmsched status --summary --json: totals, no lists"
else
	fail "shmsched status --summary --json: $(cat "$dir/summary.json")"
fi
out=$("$cli" status --name "$name" --node n3 2>&1)
if printf '%s\n' "$out" | grep -q '^node        n3 (id [0-9]*), cordoned$' &&
	printf '%s\n' "$out" | grep -q '^cpu         .* of [0-9]* cores (' &&
	! printf '%s\n' "$out" | grep -q 'n1\|^totals'; then
	ok "shmsched status --node n3: that node only"
else
	fail "shmsched status --node n3: $out"
fi
if "$cli" status --name "$name" --node n1 --json >"$dir/n1.json" &&
	python3 -c 'import json, sys
n = json.load(open(sys.argv[1]))
sys.exit(0 if n["name"] == "n1" and not n["cordoned"] else 1)' "$dir/n1.json"; then
	ok "shmsched status --node n1 --json: its object"
else
	fail "shmsched status --node n1 --json: $(cat "$dir/n1.json")"
fi
out=$("$cli" status --name "$name" --node nope 2>&1)
rc=$?
if [ $rc -eq 1 ] && printf '%s' "$out" | grep -qF 'no node "nope" in snapshot generation' &&
	printf '%s' "$out" | grep -qF '(3 nodes: n1, n2, n3)'; then
	ok "shmsched status --node nope -> 1, naming the nodes there are"
else
	fail "shmsched status --node nope: exit $rc: $out"
fi

# --queues: what the region does not hold, asked of the admin socket
# (OP_QUEUE_METRICS). This daemon has no Kueue objects: it says so, and
# the node lifecycle's counts follow. Old code: --queues was refused (2).
out=$("$cli" status --name "$name" --summary --queues --admin-socket "$dir/s.sock.admin" 2>&1)
rc=$?
if [ $rc -eq 0 ] && printf '%s\n' "$out" | grep -q '^totals ' &&
	printf '%s\n' "$out" | grep -qF '  none (the daemon has no Kueue quotas)' &&
	printf '%s\n' "$out" | grep -q '^Node lifecycle: zones [0-9]* initial, [0-9]* normal, .*; 0 node(s) tainted unreachable'; then
	ok "shmsched status --summary --queues: no quotas, the lifecycle's counts"
else
	fail "shmsched status --summary --queues: exit $rc: $out"
fi
out=$("$cli" status --name "$name" --summary --queues --admin-socket "$dir/none.admin" 2>&1)
rc=$?
if [ $rc -eq 1 ] && printf '%s' "$out" | grep -qF "$dir/none.admin"; then
	ok "shmsched status --queues without a daemon's admin socket -> 1, naming it"
else
	fail "shmsched status --queues (no admin socket): exit $rc: $out"
fi
# 45 ClusterQueues (a second daemon): at most 40 rows, then "... and K
# more"; each queue's usage of its nominal quota (cpu in cores, Kueue's
# kueue_cluster_queue_* values).
python3 - "$dir/kueue.json" <<'PY'
import json, sys
items = [{"kind": "Node", "metadata": {"name": "k1"}, "status": {"allocatable":
         {"cpu": "64", "memory": "64Gi", "pods": "110"}}},
         {"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "ResourceFlavor",
          "metadata": {"name": "default-flavor"}}]
for i in range(45):
    items.append({"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "ClusterQueue",
                  "metadata": {"name": "cq-%02d" % i}, "spec": {"resourceGroups": [
                      {"coveredResources": ["cpu"], "flavors": [{"name": "default-flavor",
                       "resources": [{"name": "cpu", "nominalQuota": "2500m"}]}]}]}})
json.dump({"kind": "List", "items": items}, open(sys.argv[1], "w"))
PY
"$daemon" --name "$name-q" --fresh --cluster "$dir/kueue.json" --socket "$dir/q.sock" \
	--workers 1 --no-pin >"$dir/q.log" 2>&1 &
qpid=$!
pids="$pids $qpid"
daemon_ready "$dir/q.log" "$qpid"
out=$("$cli" status --name "$name-q" --summary --queues --admin-socket "$dir/q.sock.admin" 2>&1)
rc=$?
kill "$qpid"
wait "$qpid" 2>/dev/null
rm -f "/dev/shm/$name-q"
rows=$(printf '%s\n' "$out" | grep -c '^  cq-\|^    default-flavor')
if [ $rc -eq 0 ] && [ "$rows" -eq 40 ] &&
	printf '%s\n' "$out" | grep -qxF '  cq-00: weighted share 0; pending 0 active, 0 inadmissible; admitted 0' &&
	printf '%s\n' "$out" | grep -qxF '    default-flavor cpu: usage 0 of nominal 2.500, borrowing limit +Inf' &&
	printf '%s\n' "$out" | grep -qxF '  cq-19: weighted share 0; pending 0 active, 0 inadmissible; admitted 0' &&
	printf '%s\n' "$out" | grep -qxF '  ... and 50 more'; then
	ok "shmsched status --queues: 40 lines of 45 ClusterQueues (2 each), then ... and 50 more"
else
	fail "shmsched status --queues (45 queues): exit $rc, $rows rows: $out"
fi

# The crash: the region stays, no daemon holds it.
kill -9 "$pid"
wait "$pid" 2>/dev/null
status_text crashed "no daemon holds it: crashed or stopped (clean stop: no); last pid $pid"
if "$cli" status --name "$name" --json >"$dir/crashed.json" 2>&1 &&
	check_json "$dir/crashed.json" false; then
	ok "shmsched status --json (crashed)"
else
	fail "shmsched status --json (crashed): $(cat "$dir/crashed.json")"
fi

# Refusals.
out=$("$cli" status --name "$name-none" 2>&1)
rc=$?
if [ $rc -eq 1 ] && printf '%s' "$out" | grep -qF "/dev/shm/$name-none"; then
	ok "no such region -> 1"
else
	fail "no such region: exit $rc, output: $out"
fi
for args in "--bogus" "--name" "--name .hidden" "--node" "--summary --node n1" \
	"--queues --json" "--queues --node n1" "--admin-socket"; do
	# shellcheck disable=SC2086
	out=$("$cli" status $args 2>&1)
	rc=$?
	if [ $rc -eq 2 ]; then
		ok "shmsched status $args -> 2"
	else
		fail "shmsched status $args: exit $rc (want 2), output: $out"
	fi
done

if [ $failed -ne 0 ]; then
	echo "$failed failure(s); daemon log:"
	cat "$log"
	exit 1
fi
echo "all ok"
