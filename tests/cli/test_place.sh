#!/bin/sh
# unit.place: `shmsched place` with a KubeSchedulerConfiguration of two
# profiles, as a user runs it: a pod's spec.schedulerName picks its profile
# (default-scheduler, or "packer": RequestedToCapacityRatio bin packing
# confined to pool=batch by NodeAffinity addedAffinity, its NodeResourcesFit
# weighted 10 through multiPoint); a pod for a scheduler no profile has is
# skipped and counted; --explain names the profile and its plugins' scores;
# the fast path and --reference agree; a file with several mistakes is
# refused (exit 2) with every one of them, each with file, line and path.
# usage: test_place.sh SHMSCHED
set -u
cli=$1
dir=$(mktemp -d /tmp/shmsched-place-XXXXXX)
trap 'rm -rf "$dir"' EXIT
failed=0
fail() { echo "FAIL: $*"; failed=$((failed + 1)); }

cat >"$dir/cluster.json" <<'JSON'
{"kind":"List","items":[
{"kind":"Node","metadata":{"name":"n1","labels":{"zone":"a","pool":"batch"}},"status":{"allocatable":{"cpu":"4","memory":"8Gi","pods":"110"}}},
{"kind":"Node","metadata":{"name":"n2","labels":{"zone":"b","pool":"batch"}},"status":{"allocatable":{"cpu":"4","memory":"8Gi","pods":"110"}}},
{"kind":"Node","metadata":{"name":"n3","labels":{"zone":"a","pool":"web"}},"status":{"allocatable":{"cpu":"4","memory":"8Gi","pods":"110"}}},
{"kind":"Pod","metadata":{"name":"busy"},"spec":{"nodeName":"n2","containers":[{"name":"c","resources":{"requests":{"cpu":"2","memory":"4Gi"}}}]},"status":{"phase":"Running"}}
]}
JSON
cat >"$dir/pods.jsonl" <<'JSON'
{"kind":"Pod","metadata":{"name":"spread-1"},"spec":{"containers":[{"name":"c","resources":{"requests":{"cpu":"1","memory":"1Gi"}}}]}}
{"kind":"Pod","metadata":{"name":"pack-1"},"spec":{"schedulerName":"packer","containers":[{"name":"c","resources":{"requests":{"cpu":"1","memory":"1Gi"}}}]}}
{"kind":"Pod","metadata":{"name":"pack-2"},"spec":{"schedulerName":"packer","containers":[{"name":"c","resources":{"requests":{"cpu":"1","memory":"1Gi"}}}]}}
{"kind":"Pod","metadata":{"name":"other"},"spec":{"schedulerName":"volcano","containers":[{"name":"c"}]}}
{"kind":"Pod","metadata":{"name":"spread-2"},"spec":{"containers":[{"name":"c","resources":{"requests":{"cpu":"1","memory":"1Gi"}}}]}}
JSON
cat >"$dir/sched.yaml" <<'YAML'
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
clientConnection:
  kubeconfig: /etc/kubernetes/scheduler.conf
profiles:
- schedulerName: default-scheduler
- schedulerName: packer
  plugins:
    multiPoint:
      enabled:
      - name: NodeResourcesFit
        weight: 10
    score:
      disabled:
      - name: NodeResourcesBalancedAllocation
  pluginConfig:
  - name: NodeResourcesFit
    args:
      scoringStrategy:
        type: RequestedToCapacityRatio
        requestedToCapacityRatio:
          shape:
          - {utilization: 0, score: 0}
          - {utilization: 100, score: 10}
  - name: NodeAffinity
    args:
      addedAffinity:
        requiredDuringSchedulingIgnoredDuringExecution:
          nodeSelectorTerms:
          - matchExpressions:
            - {key: pool, operator: In, values: [batch]}
YAML

"$cli" place --cluster "$dir/cluster.json" --pods "$dir/pods.jsonl" \
	--config "$dir/sched.yaml" >"$dir/fast" 2>"$dir/fast.err" ||
	fail "place exited $?: $(cat "$dir/fast.err")"
"$cli" place --cluster "$dir/cluster.json" --pods "$dir/pods.jsonl" \
	--config "$dir/sched.yaml" --reference >"$dir/ref" 2>/dev/null ||
	fail "place --reference exited $?"
cmp -s "$dir/fast" "$dir/ref" || fail "fast path and --reference differ"
# The packer's pods bin-pack onto n2, the fullest batch node (n2 holds the
# busy pod): RequestedToCapacityRatio scores it 69 against n1's 38, and
# n3 is not in pool=batch. Default-scheduler pods spread (LeastAllocated).
grep -qx '{"pod":"default/pack-1","node":"n2"}' "$dir/fast" || fail "pack-1: $(cat "$dir/fast")"
grep -qx '{"pod":"default/pack-2","node":"n2"}' "$dir/fast" || fail "pack-2"
grep -q '"pod":"default/spread-2","node":"n[13]"' "$dir/fast" || fail "spread-2"
grep -q 'default/other' "$dir/fast" && fail "the volcano pod was placed"
[ "$(wc -l <"$dir/fast")" -eq 4 ] || fail "expected 4 answers"
grep -q '1 pod for other schedulers skipped' "$dir/fast.err" || fail "no skip count"
grep -q 'sched.yaml:3: clientConnection: accepted, no effect' "$dir/fast.err" ||
	fail "no warning for clientConnection: $(cat "$dir/fast.err")"

"$cli" place --cluster "$dir/cluster.json" --pods "$dir/pods.jsonl" \
	--config "$dir/sched.yaml" --explain >"$dir/explain" 2>/dev/null ||
	fail "place --explain exited $?"
pack=$(grep '"default/pack-1"' "$dir/explain")
echo "$pack" | grep -q '"profile":"packer"' || fail "explain names no profile: $pack"
echo "$pack" | grep -q '"n3":\["node(s) didn'"'"'t match scheduler-enforced node affinity"\]' ||
	fail "explain: n3's reason: $pack"
echo "$pack" | grep -q '"n2":{[^}]*"NodeResourcesFit":69,' || fail "explain: n2's fit score: $pack"
echo "$pack" | grep -q '"n1":{[^}]*"NodeResourcesFit":38,' || fail "explain: n1's fit score: $pack"
echo "$pack" | grep -q 'NodeResourcesBalancedAllocation' && fail "explain: a disabled score shows"
grep '"default/spread-1"' "$dir/explain" | grep -q '"profile":"default-scheduler"' ||
	fail "explain: spread-1's profile"

cat >"$dir/bad.yaml" <<'YAML'
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
paralelism: 4
profiles:
- schedulerName: a
  plugins:
    multiPoint:
      disabled: [{name: NodePorts}]
- schedulerName: a
  pluginConfig:
  - name: NodeResourcesFit
    args:
      scoringStrategy:
        type: RequestedToCapacityRatio
        requestedToCapacityRatio:
          shape: [{utilization: 50, score: 5}, {utilization: 20, score: 12}]
YAML
"$cli" place --cluster "$dir/cluster.json" --pods "$dir/pods.jsonl" \
	--config "$dir/bad.yaml" >"$dir/out" 2>"$dir/err"
rc=$?
[ "$rc" -eq 2 ] || fail "bad config: exit $rc, want 2"
[ -s "$dir/out" ] && fail "bad config: something on stdout"
for want in 'bad.yaml:3: paralelism: unknown field "paralelism"' \
	'bad.yaml:8: profiles[0].plugins.multiPoint.disabled[0].name: disables NodePorts' \
	'shape[1].utilization: 20 is not more than' \
	'shape[1].score: 12 is not in 0..10' \
	'bad.yaml:9: profiles[1].schedulerName: "a" is profiles[0]'"'"'s schedulerName too'; do
	grep -qF "$want" "$dir/err" || fail "bad config: missing \"$want\" in: $(cat "$dir/err")"
done

# Issue 35: a misspelt Pod field is refused, not dropped (kube-apiserver's
# fieldValidation=Strict, kubectl's default: "fail the request with a
# BadRequest error if any unknown fields would be dropped from the object";
# meta/v1 CreateOptions.fieldValidation). Before, "nodeSelectr" placed the
# pod on any node and "request" placed it as if it asked for nothing.
cat >"$dir/typo.json" <<'JSON'
{"kind":"Pod","metadata":{"name":"big","lables":{"a":"b"}},"spec":{"nodeSelectr":{"pool":"web"},"containers":[{"name":"c","resources":{"request":{"cpu":"64"}}}]}}
JSON
"$cli" place --cluster "$dir/cluster.json" --pods "$dir/typo.json" >"$dir/out" 2>"$dir/err"
rc=$?
[ "$rc" -eq 2 ] || fail "typo: exit $rc, want 2"
[ -s "$dir/out" ] && fail "typo: something on stdout"
for want in 'typo.json: pod default/big: metadata.lables: unknown field (did you mean metadata.labels?)' \
	'spec.nodeSelectr: unknown field (did you mean spec.nodeSelector?)' \
	'spec.containers[0].resources.request: unknown field (did you mean spec.containers[0].resources.requests?)'; do
	grep -qF "$want" "$dir/err" || fail "typo: missing \"$want\" in: $(cat "$dir/err")"
done
# Warn: placed (the fields dropped, as the API server drops them), each
# named on stderr; Ignore: placed, nothing said.
"$cli" place --cluster "$dir/cluster.json" --pods "$dir/typo.json" \
	--field-validation=Warn >"$dir/out" 2>"$dir/err"
rc=$?
[ "$rc" -eq 0 ] || fail "Warn: exit $rc, want 0: $(cat "$dir/err")"
grep -q '"pod":"default/big","node":"n' "$dir/out" || fail "Warn: not placed: $(cat "$dir/out")"
grep -qF 'warning: ' "$dir/err" && grep -qF 'spec.nodeSelectr: unknown field' "$dir/err" ||
	fail "Warn: no warning naming spec.nodeSelectr: $(cat "$dir/err")"
"$cli" place --cluster "$dir/cluster.json" --pods "$dir/typo.json" \
	--field-validation Ignore >"$dir/out" 2>"$dir/err"
rc=$?
[ "$rc" -eq 0 ] || fail "Ignore: exit $rc, want 0"
grep -q '"pod":"default/big","node":"n' "$dir/out" || fail "Ignore: not placed"
grep -qF 'unknown field' "$dir/err" && fail "Ignore: said something: $(cat "$dir/err")"
"$cli" place --cluster "$dir/cluster.json" --pods "$dir/typo.json" \
	--field-validation=Lenient >"$dir/out" 2>"$dir/err"
[ "$?" -eq 2 ] || fail "bad level: not exit 2"
grep -qF '"Lenient": expected Strict, Warn or Ignore' "$dir/err" || fail "bad level: $(cat "$dir/err")"
# The cluster file too: a Node's misspelt field.
sed 's/"allocatable"/"alocatable"/' "$dir/cluster.json" >"$dir/cluster-typo.json"
"$cli" place --cluster "$dir/cluster-typo.json" --pods "$dir/pods.jsonl" \
	--config "$dir/sched.yaml" >"$dir/out" 2>"$dir/err"
[ "$?" -eq 2 ] || fail "cluster typo: not exit 2"
grep -qF 'node n1: status.alocatable: unknown field (did you mean status.allocatable?)' "$dir/err" ||
	fail "cluster typo: $(cat "$dir/err")"

[ "$failed" -eq 0 ] && echo "place: all checks passed"
exit "$failed"
