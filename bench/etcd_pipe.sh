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
# 1,000 + 3,000 + ~4,000 pods besides).
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

IFS=, read -r -a etcd_pids <<<"$SHMSCHED_ETCD_PIDS"
hz=$(getconf CLK_TCK)
etcd_ticks() {
	local t=0 pid f
	for pid in "${etcd_pids[@]}"; do
		# utime and stime: fields 14 and 15 of /proc/PID/stat (after
		# the parenthesised name, which has no spaces here).
		read -r -a f <"/proc/$pid/stat" || continue
		t=$((t + f[13] + f[14]))
	done
	echo "$t"
}
t0=$(etcd_ticks)
s0=$(date +%s.%N)
out=$(SHMSCHED_TEST_FILTER=sync_answers_after_commits SHMSCHED_ETCD_PIPE_PODS=$pods \
	"$build/tests/daemon/test_etcd_hosts" "$build/cli/shmschedd" "$build/cli/shmsched" 2>&1)
rc=$?
s1=$(date +%s.%N)
t1=$(etcd_ticks)
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
