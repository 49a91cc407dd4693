#!/bin/sh
# bench.warnings: the table a person reads (not --json) scales durations
# (no "2617245.7 us": us below 1 ms, then ms, then s; base/units.h) and
# ends with a WARNING when this machine made the figures unreliable
# (bench/report.c, report_warnings). A busy loop, started before the
# bench, takes a whole core: well over the 10 % of all cores' time that
# the other-threads WARNING allows (up to 10 cores); the same run in --json has no warnings and
# keeps its raw microseconds.
# usage: test_warnings.sh SHMSCHED_BENCH PYTHON3
set -eu
bench=$1
python=$2
out=$(mktemp)
busy=""
trap 'rm -f "$out" "$out.json"; for p in $busy; do kill "$p" 2>/dev/null || true; done' EXIT
sh -c 'while :; do :; done' &
busy=$!
args="--pods 10000 --nodes 200 --running 400 --latency-pods 5000 --rate 5000
	--no-quality --no-reference --handles 20000 --runs 1"
# shellcheck disable=SC2086
"$bench" $args >"$out"
# shellcheck disable=SC2086
"$bench" $args --json >"$out.json"
for p in $busy; do kill "$p"; done
busy=""
failed=0
if grep -q '^WARNING: other threads on this machine used [0-9]* % of its' "$out"; then
	echo "ok: WARNING: other threads"
else
	echo "FAIL: no other-threads WARNING under busy loops:"; cat "$out"; failed=1
fi
if grep -Eq '[0-9]{4,}(\.[0-9]+)? us' "$out"; then
	echo "FAIL: a duration of 1000 us or more not scaled:"
	grep -E '[0-9]{4,}(\.[0-9]+)? us' "$out"; failed=1
else
	echo "ok: no duration of 1000 us or more in us"
fi
grep -Eq 'p50 [0-9.]+ (us|ms|s), p90' "$out" || { echo "FAIL: no scaled p50:"; cat "$out"; failed=1; }
"$python" - "$out.json" <<'PY' || failed=1
import json, sys
text = open(sys.argv[1]).read()
d = json.loads(text)
assert "WARNING" not in text, "a warning in --json"
assert isinstance(d["latency"]["p50_us"], (int, float)), d["latency"]
print("ok: --json: raw p50_us %.1f, no warnings" % d["latency"]["p50_us"])
PY
exit $failed
