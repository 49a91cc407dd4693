#!/usr/bin/env bash
# Pods/s per host through etcd with 1, 2 or 3 hosts, sync or async (issue
# 40's benchmark item; figures in docs/perf/2026-11-29-etcd-hosts.md).
#
# Runs tests/daemon/etcd_hosts_bench.c (its comment says what it does)
# inside a throwaway 3-member etcd (tests/coord/etcd_cluster.sh): N
# shmschedd hosts on six one-node zones, one producer a host streaming
# its pods to its own shards, all started together. Printed: each host's
# pods/s, the rate of its first --burst answers and of the rest, its
# transactions/s and records a transaction; the total and the etcd-bound
# figures (transactions/s x records a transaction, and x 127, a full
# transaction); a warning when the
# machine's pauses make the run unreliable; the check of etcd's history
# against the answers (sync_check.h: 0 lost, 0 twice, 0 unfenced, 0
# overcommits). This script adds the load average and etcd's CPU (its
# three members' utime + stime over the program, a 1,000 pods).
# The hosts share this machine's cores with etcd and the producers: read
# per-host figures as what one machine gives all of them together.
#
# usage: bench/etcd_hosts.sh [--build DIR] [--hosts N] [--durability MODE]
#                            [--pods N] [--burst N] [--ttl S] [--runs N]
#   --build DIR        the meson build directory (default build)
#   --hosts N          1 to 3 shmschedd hosts (default 1)
#   --durability MODE  sync or async, the hosts' --etcd-durability
#                      (default sync); none: one host without --etcd,
#                      the same stream (the figure async is held to)
#   --pods N           pods a host (default 20000)
#   --burst N          the answers counted as the first burst (default
#                      8192: one shard's committer's capacity)
#   --ttl S            the hosts' --etcd-lease-ttl (default 5; a stream
#                      that saturates etcd on a loaded machine can delay
#                      a keep-alive past the TTL: the run then fails,
#                      saying so; 60 rides it out at load 25)
#   --runs N           runs, each with a fresh etcd (default 1)
# Exit 0, 1 when a run fails its check (its output printed), 2 on bad
# usage, 77 without etcd.
set -uo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
build=build hosts=1 durability=sync pods=20000 burst=8192 ttl=5 runs=1
while (($#)); do
	case $1 in
	--build) build=$2; shift 2 ;;
	--hosts) hosts=$2; shift 2 ;;
	--durability) durability=$2; shift 2 ;;
	--pods) pods=$2; shift 2 ;;
	--burst) burst=$2; shift 2 ;;
	--ttl) ttl=$2; shift 2 ;;
	--runs) runs=$2; shift 2 ;;
	*)
		echo "etcd_hosts.sh: unknown option $1 (see the usage at the top of $0)" >&2
		exit 2
		;;
	esac
done
for v in pods burst ttl runs; do
	if ! [[ ${!v} =~ ^[1-9][0-9]*$ ]]; then
		echo "etcd_hosts.sh: --$v ${!v}: expected a positive integer" >&2
		exit 2
	fi
done
if ((ttl < 2 || ttl > 60)); then
	echo "etcd_hosts.sh: --ttl $ttl: expected 2 to 60 seconds" >&2
	exit 2
fi
if ! [[ $hosts =~ ^[1-3]$ ]]; then
	echo "etcd_hosts.sh: --hosts $hosts: expected 1, 2 or 3" >&2
	exit 2
fi
if [[ $durability != sync && $durability != async && $durability != none ]]; then
	echo "etcd_hosts.sh: --durability $durability: expected sync, async or none" >&2
	exit 2
fi
if [[ $durability = none && $hosts != 1 ]]; then
	echo "etcd_hosts.sh: --durability none: one host without etcd (--hosts 1)" >&2
	exit 2
fi
[[ $build = /* ]] || build=$root/$build
for exe in tests/daemon/etcd_hosts_bench cli/shmschedd; do
	if [[ ! -x $build/$exe ]]; then
		echo "etcd_hosts.sh: $build/$exe is absent: build first (ninja -C $build)" >&2
		exit 2
	fi
done

# One run inside a throwaway etcd cluster: this script again, with
# SHMSCHED_ETCD_ENDPOINTS set.
if [[ -z ${SHMSCHED_ETCD_ENDPOINTS:-} ]]; then
	for ((i = 1; i <= runs; i++)); do
		echo "=== run $i of $runs: $hosts host(s), $durability, $pods pods a host, TTL $ttl s, load average $(cut -d' ' -f1-3 /proc/loadavg)"
		SHMSCHED_ETCD_TTL=$ttl "$root/tests/coord/etcd_cluster.sh" -- "$0" --build "$build" \
			--hosts "$hosts" --durability "$durability" --pods "$pods" --burst "$burst"
		rc=$?
		((rc == 0)) || exit "$rc"
	done
	exit 0
fi

# etcd_pids, hz, etcd_ticks and member_ticks.
. "$here/etcd_cpu.sh"
t0=$(etcd_ticks)
s0=$(date +%s.%N)
"$build/tests/daemon/etcd_hosts_bench" "$build/cli/shmschedd" --hosts "$hosts" \
	--durability "$durability" --pods "$pods" --burst "$burst"
rc=$?
s1=$(date +%s.%N)
t1=$(etcd_ticks)
((rc == 0)) || exit "$rc"
awk -v t="$((t1 - t0))" -v hz="$hz" -v s0="$s0" -v s1="$s1" -v pods="$((pods * hosts))" 'BEGIN {
	cpu = t / hz
	printf "etcd (3 members): %.1f CPU s over the program'"'"'s %.1f s (%.0f%% of one core); "\
	       "%.3f CPU s a 1,000 pods (the streams, the start and the history read for the "\
	       "check); load average now %s\n", cpu, s1 - s0, 100 * cpu / (s1 - s0),
	       1000 * cpu / pods, "'"$(cut -d' ' -f1-3 /proc/loadavg)"'"
}'
