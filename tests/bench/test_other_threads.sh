#!/bin/sh
# bench.other_threads: the latency run's report of what other threads on
# the machine ran meanwhile (bench/others.h). A busy loop in a process of
# its own, started before the bench, must top the list with CPU time
# comparable to the run's window; the bench's own threads (its workers,
# its producers) must not appear at all: no thread of its process or of a
# child of it (by pid, not by name: the tests run in parallel, and another
# test's shmschedd may well be among the busiest other threads).
# usage: test_other_threads.sh SHMSCHED_BENCH PYTHON3
set -eu
bench=$1
python=$2
out=$(mktemp)
busy_pid=
trap 'rm -f "$out"; [ -z "$busy_pid" ] || kill "$busy_pid" 2>/dev/null || true' EXIT
sh -c 'while :; do :; done' &
busy_pid=$!
"$bench" --pods 20000 --nodes 200 --running 400 --latency-pods 20000 \
	--rate 20000 --no-quality --no-reference --handles 20000 --runs 1 \
	--json >"$out" &
bench_pid=$!
wait "$bench_pid"
kill "$busy_pid"
busy_pid=
"$python" - "$out" "$bench_pid" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
bench_pid = int(sys.argv[2])
o = d["latency"]["other_threads"]
top = o["top"]
assert o["window_s"] > 0.5, o
assert top, o
names = [t["comm"] for t in top]
assert not any(t["pid"] == bench_pid or t["ppid"] == bench_pid for t in top), (bench_pid, top)
busy = [t for t in top if t["comm"] == "sh"]
assert busy, names
# It shares the cores with the run: a tenth of the window at least; and
# no more than 64 cores' whole window in all.
assert busy[0]["cpu_ms"] > 100 * o["window_s"], (busy, o["window_s"])
assert o["cpu_ms"] <= 1000 * o["window_s"] * 64, o
print("other_threads: the busy loop %.1f ms of a %.2f s window, top %s"
      % (busy[0]["cpu_ms"], o["window_s"], names))
PY
