#!/bin/sh
# unit.place_examples: `shmsched place` on a cluster and pods as
# `kubectl get -o json` prints them (examples/kubectl-*.json). Checks, by
# their lines: pods that need volume binding or gates answered on their own
# ("unsupported":true, exit status 0), another scheduler's pod skipped,
# default spreading from the api Service and ReplicaSet (the four api pods
# on four nodes, none beside the two already on worker-2, and a different
# first node once a configuration turns default spreading off), a
# namespaceSelector resolved against the Namespaces (analytics-0 in db-0's
# zone), pod-level resources, the fast path equal to the reference, and
# --stats counting what was skipped.
# usage: test_place_examples.sh SHMSCHED CLUSTER_JSON PODS_JSON
set -u
cli=$1 cluster=$2 pods=$3
dir=$(mktemp -d /tmp/shmsched-place-XXXXXX)
trap 'rm -rf "$dir"' EXIT
failed=0
fail() { echo "FAIL: $*"; failed=$((failed + 1)); }
ok() { echo "ok: $*"; }

"$cli" place --cluster "$cluster" --pods "$pods" --stats >"$dir/out" 2>"$dir/err"
rc=$?
[ "$rc" -eq 0 ] && ok "exit status 0" || fail "exit status $rc: $(cat "$dir/err")"
# has LINE: the output holds that exact line.
has() { grep -qxF -- "$1" "$dir/out" && ok "$1" || fail "no line $1"; }
has '{"pod":"shop/db-1","node":null,"unsupported":true,"message":"not scheduled by shmsched: spec.volumes[0].persistentVolumeClaim: volume binding is not supported"}'
has '{"pod":"batch/ingest-1","node":null,"unsupported":true,"message":"not scheduled by shmsched: spec.schedulingGates: the pod waits for its scheduling gates to be removed, and shmsched keeps no pod waiting"}'
# The bound volcano pod holds GPUs 0 and 1.
has '{"pod":"batch/gpu-inference-0","node":"gpu-1","gpus":[2],"gpu_milli":1000}'
# Nine answers: the volcano pod is skipped.
[ "$(wc -l <"$dir/out")" -eq 9 ] && ok "9 answers" || fail "$(wc -l <"$dir/out") answers, want 9"
grep -q 'volcano' "$dir/out" && fail "the volcano pod was answered"
# Default spreading: the api pods avoid worker-2 and take four nodes.
api=$(grep -F '"pod":"shop/api-' "$dir/out" | sed 's/.*"node":"\([^"]*\)".*/\1/')
[ "$(printf '%s\n' "$api" | grep -c .)" -eq 4 ] || fail "api pods: $api"
[ "$(printf '%s\n' "$api" | sort -u | grep -c .)" -eq 4 ] && ok "api pods on four nodes" ||
	fail "api pods not spread: $api"
printf '%s\n' "$api" | grep -qx worker-2 && fail "an api pod beside the two on worker-2: $api"
# analytics-0 follows db-0 (worker-4, zone eu-west-1b) through a
# namespaceSelector on team=shop.
grep -qE '^\{"pod":"batch/analytics-0","node":"worker-(3|4)"\}$' "$dir/out" &&
	ok "analytics-0 in db-0's zone" || fail "analytics-0: $(grep analytics "$dir/out")"
# Pod-level limits give the etl pod requests: placed.
grep -qE '^\{"pod":"batch/etl-28817700-k2j4d","node":"worker-[0-9]"\}$' "$dir/out" &&
	ok "etl placed" || fail "etl: $(grep etl "$dir/out")"
# --stats and the skipped pod.
for want in '1 pod for other schedulers skipped' \
	'2 pods not scheduled by shmsched ("unsupported":true): 1 volume binding, 1 scheduling gates' \
	'7 nodes, 22 running pods counted (0 orphan, 1 finished, 1 pending skipped), 7 pods in' \
	'objects read: 5 namespaces, 4 services with a selector, 5 controllers' \
	'12 objects of other kinds skipped (' 'Event 4'; do
	grep -qF -- "$want" "$dir/err" && ok "stderr: $want" || fail "stderr lacks: $want"
done

# The reference path answers the same.
"$cli" place --cluster "$cluster" --pods "$pods" --reference >"$dir/ref" 2>/dev/null
cmp -s "$dir/out" "$dir/ref" && ok "fast path and reference agree" ||
	fail "fast path and reference differ: $(diff "$dir/out" "$dir/ref")"
# --explain: the unsupported lines are unchanged, the others explained.
"$cli" place --cluster "$cluster" --pods "$pods" --explain >"$dir/explain" 2>/dev/null
grep -qxF '{"pod":"shop/db-1","node":null,"unsupported":true,"message":"not scheduled by shmsched: spec.volumes[0].persistentVolumeClaim: volume binding is not supported"}' "$dir/explain" &&
	[ "$(grep -c '"scores":' "$dir/explain")" -eq 7 ] && ok "--explain" || fail "--explain"

# Default spreading off (defaultingType List): the first api pod goes
# elsewhere, so the Service and ReplicaSet decided where it went.
cat >"$dir/list.yaml" <<'YAML'
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- pluginConfig:
  - name: PodTopologySpread
    args:
      defaultingType: List
YAML
"$cli" place --cluster "$cluster" --pods "$pods" --config "$dir/list.yaml" >"$dir/list" 2>/dev/null
first_on=$(printf '%s\n' "$api" | head -1)
first_off=$(grep -F '"pod":"shop/api-' "$dir/list" | head -1 | sed 's/.*"node":"\([^"]*\)".*/\1/')
[ -n "$first_off" ] && [ "$first_on" != "$first_off" ] &&
	ok "default spreading moved the first api pod ($first_off -> $first_on)" ||
	fail "default spreading changed nothing ($first_on, $first_off)"

# A malformed pod is still an error for the whole file.
sed 's/"cpu": "250m"/"cpu": "12x"/' "$pods" >"$dir/bad.json"
"$cli" place --cluster "$cluster" --pods "$dir/bad.json" >"$dir/bad.out" 2>"$dir/bad.err"
rc=$?
[ "$rc" -eq 2 ] && [ ! -s "$dir/bad.out" ] &&
	grep -qF 'spec.containers[0].resources.requests.cpu: "12x" is not a quantity' "$dir/bad.err" &&
	ok "a bad quantity refuses the file" || fail "bad quantity: exit $rc, $(cat "$dir/bad.err")"
[ "$failed" -eq 0 ] || { echo "$failed failed"; exit 1; }
