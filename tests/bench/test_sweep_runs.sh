#!/bin/sh
# bench.sweep_runs: shmsched-bench --sweep-runs on a tiny node sweep: each
# point reports R runs with its median run's pods/s between the least and
# the greatest, and one ratio per round; values out of 1..25 are refused
# with a message that names the option.
# usage: test_sweep_runs.sh SHMSCHED_BENCH PYTHON3
set -eu
bench=$1
python=$2
out=$(mktemp)
trap 'rm -f "$out"' EXIT
"$bench" --pods 4000 --nodes 400 --running 800 --no-latency --no-quality \
	--no-reference --sweep-nodes 100,400 --sweep-runs 3 \
	--sweep-reference-seconds 0.05 --handles 20000 --runs 1 --json >"$out"
"$python" - "$out" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
points = d["sweep"]
assert [p["nodes"] for p in points] == [100, 400], points
for p in points:
    assert p["engine_runs"] == 3, p["engine_runs"]
    lo, mid, hi = (p["engine_min_pods_per_sec"], p["engine"]["pods_per_sec"],
                   p["engine_max_pods_per_sec"])
    assert 0 < lo <= round(mid) <= hi, (lo, mid, hi)
ratios = d["sweep_round_ratios"]
assert len(ratios) == 3 and all(r > 0 for r in ratios), ratios
print("sweep_runs: 2 points x 3 runs, medians within their spread, ratios", ratios)
PY
for bad in 0 26 x; do
	if "$bench" --sweep-runs "$bad" >"$out" 2>&1; then
		echo "--sweep-runs $bad was accepted"
		exit 1
	fi
	grep -q -- '--sweep-runs: "'"$bad"'"' "$out" || {
		echo "--sweep-runs $bad: unexpected message:"
		cat "$out"
		exit 1
	}
done
echo "sweep_runs: 0, 26 and x refused"
