#!/usr/bin/env bash
# One sharded host's placements through etcd, sync mode, pipelined (issue
# 40; figures in docs/perf/2026-11-29-etcd-pipe.md).
#
# A 3-member etcd on loopback (tests/coord/etcd_cluster.sh) and one
# shmschedd with --etcd (--workers 1, lease TTL 5 s, the default
# --etcd-durability sync), started by stress.etcd_hosts' program
# (tests/daemon/test_etcd_hosts.c, its sync_answers_after_commits alone):
# a producer streams PODS pods (no requests, one node) as fast as the host
# answers them, each answered PLACED only once its transaction has
# committed. The program prints pods/s, etcd's transactions/s and records
# a transaction (the lane keys' versions, coord/commit_queue.h); this
# script adds the load average and etcd's CPU (its three members'
# utime + stime over the whole program: the stream and the test's own
# 1,000 + 3,000 + ~4,000 pods besides), then each process's CPU a pod
# over the timed stream alone (between the program's marks, sampled
# every 0.1 s): each member's (the host's client talks to m0, the first
# endpoint: it serves the JSON gateway) and shmschedd's.
#
# usage: bench/etcd_pipe.sh [--build DIR] [--pods N] [--runs N]
#   --build DIR  the meson build directory (default build)
#   --pods N     the timed stream's pods (default 50000)
#   --runs N     runs, each with a fresh etcd (default 1)
# Exit 0, 1 when a run fails (its output printed), 2 on bad usage, 77
# without etcd.
set -uo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
build=build pods=50000 runs=1
args=("$@")
while (($#)); do
	case $1 in
	--build) build=$2; shift 2 ;;
	--pods) pods=$2; shift 2 ;;
	--runs) runs=$2; shift 2 ;;
	*)
		echo "etcd_pipe.sh: unknown option $1 (see the usage at the top of $0)" >&2
		exit 2
		;;
	esac
done
for v in pods runs; do
	if ! [[ ${!v} =~ ^[1-9][0-9]*$ ]]; then
		echo "etcd_pipe.sh: --$v ${!v}: expected a positive integer" >&2
		exit 2
	fi
done
[[ $build = /* ]] || build=$root/$build
for exe in tests/daemon/test_etcd_hosts cli/shmschedd cli/shmsched; do
	if [[ ! -x $build/$exe ]]; then
		echo "etcd_pipe.sh: $build/$exe is absent: build first (ninja -C $build)" >&2
		exit 2
	fi
done

# One run inside a throwaway etcd cluster: this script again, with
# SHMSCHED_ETCD_ENDPOINTS set.
if [[ -z ${SHMSCHED_ETCD_ENDPOINTS:-} ]]; then
	for ((i = 1; i <= runs; i++)); do
		echo "=== run $i of $runs: $pods pods, load average $(cut -d' ' -f1-3 /proc/loadavg)"
		"$root/tests/coord/etcd_cluster.sh" -- "$0" --build "$build" --pods "$pods"
		rc=$?
		((rc == 0)) || exit "$rc"
	done
	exit 0
fi

# etcd_pids, hz, etcd_ticks and member_ticks.
. "$here/etcd_cpu.sh"
# The leader: the member whose /v3/maintenance/status names itself.
IFS=, read -r -a endpoints <<<"$SHMSCHED_ETCD_ENDPOINTS"
leader_index() {
	local i body
	for i in "${!endpoints[@]}"; do
		body=$(curl -s -m 2 -X POST -d '{}' "${endpoints[i]}/v3/maintenance/status")
		if python3 -c 'import json, sys; j = json.loads(sys.argv[1])
sys.exit(0 if j["header"]["member_id"] == j["leader"] else 1)' "$body" 2>/dev/null; then
			echo "$i"
			return
		fi
	done
	echo -1
}
t0=$(etcd_ticks)
s0=$(date +%s.%N)
samples=$SHMSCHED_ETCD_DIR/samples
SHMSCHED_TEST_FILTER=sync_answers_after_commits SHMSCHED_ETCD_PIPE_PODS=$pods \
	"$build/tests/daemon/test_etcd_hosts" "$build/cli/shmschedd" "$build/cli/shmsched" \
	>"$SHMSCHED_ETCD_DIR/out" 2>&1 &
prog=$!
# Every 0.1 s: each member's and the host's (shmschedd, the program's
# child) utime + stime, and how far the program is (0 before the timed
# stream's start mark, 1 in it, 2 after).
host=0
while kill -0 "$prog" 2>/dev/null; do
	for c in $(pgrep -P "$prog" -x shmschedd); do
		t=$(member_ticks "$c") && ((t > host)) && host=$t
	done
	line="$(date +%s.%N)"
	for pid in "${etcd_pids[@]}"; do line+=" $(member_ticks "$pid")"; done
	stage=$(grep -c '^deferred sync: the timed stream' "$SHMSCHED_ETCD_DIR/out")
	echo "$line $host $stage" >>"$samples"
	sleep 0.1
done
wait "$prog"
rc=$?
out=$(cat "$SHMSCHED_ETCD_DIR/out")
s1=$(date +%s.%N)
t1=$(etcd_ticks)
# The timed stream's window (between the samples that first saw its
# marks, 0.1 s apart): each process's CPU a pod; printed even when the
# program fails after it (a loaded machine's later checks).
python3 - "$samples" "$hz" "$pods" "$(leader_index)" <<'EOF'
import sys
rows = [l.split() for l in open(sys.argv[1])]
hz, pods, lead = float(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
a = next((r for r in rows if r[-1] == "1"), None)
b = next((r for r in rows if r[-1] == "2"), None)
if a is None or b is None:
    sys.exit("no timed stream marked: no CPU split")
names = ["m%d%s" % (i, " (leader at the end)" if i == lead else "") for i in range(len(a) - 3)]
names.append("shmschedd")
cpu = [1e6 * (int(y) - int(x)) / hz / pods for x, y in zip(a[1:-1], b[1:-1])]
print("the timed stream's %.2f s (0.1 s samples): CPU a pod, us: " % (float(b[0]) - float(a[0])) +
      ", ".join("%s %.1f" % (n, c) for n, c in zip(names, cpu)) +
      "; etcd %.1f, all these %.1f" % (sum(cpu[:-1]), sum(cpu)))
EOF
if ((rc != 0)); then
	echo "$out"
	exit 1
fi
grep -E '^deferred sync, 1 host' <<<"$out"
awk -v t="$((t1 - t0))" -v hz="$hz" -v s0="$s0" -v s1="$s1" -v pods="$pods" 'BEGIN {
	cpu = t / hz
	printf "etcd (3 members): %.1f CPU s over the program'"'"'s %.1f s (%.0f%% of one core); "\
	       "%.3f CPU s a 1,000 pods of the stream (an upper bound: the program places "\
	       "about 8,000 more); load average now %s\n", cpu, s1 - s0, 100 * cpu / (s1 - s0),
	       1000 * cpu / pods, "'"$(cut -d' ' -f1-3 /proc/loadavg)"'"
}'
