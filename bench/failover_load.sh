#!/usr/bin/env bash
# Failover under load with the sync guarantee checked (issue 40's
# Done-when: "0 placements lost in sync over 20 kills, 0 overcommits
# ever"; figures in docs/perf/2026-11-29-etcd-failover-load.md).
#
# Runs tests/daemon/failover_load.c (its comment says what it does)
# inside a throwaway 3-member etcd (tests/coord/etcd_cluster.sh): three
# shmschedd hosts, one producer each submitting a stream of pods and
# logging every answer, KILLS hosts SIGKILLed in turn and restarted (and,
# with the options, etcd's leader killed, a host stopped past its TTL);
# then etcd's history against the answers: pods placed, lost (0),
# unanswered keys (only pods in flight at a kill), twice (0), unfenced
# writes (0), overcommitted nodes (0), failover median and max.
#
# usage: bench/failover_load.sh [--build DIR] [--kills N] [--ttl S]
#                               [--rate PODS/S] [--node-cpu CORES]
#                               [--kill-etcd-leader] [--stop-host]
#                               [--durability MODE] [--lost-ok]
#   --build DIR  the meson build directory (default build)
#   --kills N    hosts SIGKILLed (default 20)
#   --node-cpu   each node's cores (default 16: a killed host's placements
#                stay, and so do the keys of pods released after their
#                shard moved; 20 kills fill 8-core nodes by the 13th)
#   --durability the hosts' --etcd-durability (default: theirs, sync)
#   --lost-ok    count lost placements without failing (async mode)
# Exit 0 when the checker finds nothing wrong, 1 when it does, 2 on bad
# usage, 77 without etcd.
set -uo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
build=build
args=()
kills=20 node_cpu=16
while (($#)); do
	case $1 in
	--build) build=$2; shift 2 ;;
	--kills) kills=$2; shift 2 ;;
	--node-cpu) node_cpu=$2; shift 2 ;;
	--ttl | --rate | --durability) args+=("$1" "$2"); shift 2 ;;
	--kill-etcd-leader | --stop-host | --lost-ok) args+=("$1"); shift ;;
	*)
		echo "failover_load.sh: unknown option $1 (see the usage at the top of $0)" >&2
		exit 2
		;;
	esac
done
[[ $build = /* ]] || build=$root/$build
for f in "$build/cli/shmschedd" "$build/tests/daemon/failover_load"; do
	if [[ ! -x $f ]]; then
		echo "failover_load.sh: $f is absent: build first (ninja -C $build)" >&2
		exit 2
	fi
done
exec "$root/tests/coord/etcd_cluster.sh" -- "$build/tests/daemon/failover_load" \
	"$build/cli/shmschedd" --kills "$kills" --node-cpu "$node_cpu" "${args[@]}"
