#!/usr/bin/env bash
# Failover benchmark for multi-host shmschedd (issue 40; design bound in
# docs/design/multi-host.md, figures in docs/perf/2026-11-29-etcd-failover.md).
#
# A 3-member etcd on loopback (tests/coord/etcd_cluster.sh), 3 shmschedd
# hosts with --etcd and lease TTL T on one cluster file of 6 nodes, one a
# zone z0..z5 (the shards, --shard-by's default label); waits until the
# shards are split 2/2/2, then KILLS times: SIGKILL one host (in turn a, b,
# c, so the coordinator is among them), poll etcd's owner keys
# (/shmsched/<cluster>/shards/<z>/owner, with etcdctl) every 50 ms until
# every shard the killed host owned is owned by a live host; that time,
# from the kill, is one sample. Then restart the host and wait for 2/2/2.
# With --kill-etcd-leader, each kill of a host is followed at once by a
# SIGKILL of etcd's leader (restarted, same data directory, after the
# sample), so the failover spans an etcd leader election.
#
# Prints one line a sample and a summary: median, max, and the design's
# bound (TTL + 1 s; 2 x TTL across an etcd leader change). Exit 0 when the
# median is within the bound (with --no-bound: whatever it is), 1 when not
# or when a host's shards are not taken over or re-split within 60 s, 2 on
# bad usage, 77 without etcd.
#
# usage: bench/failover.sh [--build DIR] [--ttl S] [--kills N]
#                          [--kill-etcd-leader] [--poll-ms MS] [--no-bound]
#   --build DIR  the meson build directory (default build): DIR/cli/shmschedd
#   --ttl S      the hosts' --etcd-lease-ttl (default 2; etcd's least)
#   --kills N    samples (default 20)
# It is a benchmark, not a test; stress.failover_smoke runs it with
# --kills 2 --no-bound (a failover works end to end, timing not judged on
# a loaded CI machine).
set -uo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
build=build ttl=2 kills=20 kill_leader=0 poll_ms=50 check_bound=1
args=("$@")
while (($#)); do
	case $1 in
	--build) build=$2; shift 2 ;;
	--ttl) ttl=$2; shift 2 ;;
	--kills) kills=$2; shift 2 ;;
	--poll-ms) poll_ms=$2; shift 2 ;;
	--kill-etcd-leader) kill_leader=1; shift ;;
	--no-bound) check_bound=0; shift ;;
	*)
		echo "failover.sh: unknown option $1 (see the usage at the top of $0)" >&2
		exit 2
		;;
	esac
done
for v in ttl kills poll_ms; do
	if ! [[ ${!v} =~ ^[1-9][0-9]*$ ]]; then
		echo "failover.sh: --${v//_/-} ${!v}: expected a positive integer" >&2
		exit 2
	fi
done
[[ $build = /* ]] || build=$root/$build
shmschedd=$build/cli/shmschedd
if [[ ! -x $shmschedd ]]; then
	echo "failover.sh: $shmschedd is absent: build first (ninja -C $build)" >&2
	exit 2
fi
if ! command -v etcdctl >/dev/null; then
	echo "SKIP: etcdctl is absent (Debian package etcd-client)"
	exit 77
fi

# Run inside a throwaway etcd cluster.
if [[ -z ${SHMSCHED_ETCD_ENDPOINTS:-} ]]; then
	exec "$root/tests/coord/etcd_cluster.sh" -- "$0" "${args[@]}"
fi

export ETCDCTL_API=3
cluster=failover
prefix=/shmsched/$cluster
zones=6
names=(host-a host-b host-c)
dir=$SHMSCHED_ETCD_DIR/hosts
mkdir -p "$dir"
IFS=, read -r -a etcd_pids <<<"$SHMSCHED_ETCD_PIDS"
IFS=, read -r -a etcd_eps <<<"$SHMSCHED_ETCD_ENDPOINTS"
declare -A hpid
restarted_etcd=()

now() { date +%s.%N; }
ms_since() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%d", (b - a) * 1000 }'; }
nap() { sleep "$(awk -v m="$poll_ms" 'BEGIN { print m / 1000 }')"; }

{
	printf '{"kind":"List","items":['
	for ((z = 0; z < zones; z++)); do
		((z)) && printf ','
		printf '{"kind":"Node","metadata":{"name":"n%d","labels":{"topology.kubernetes.io/zone":"z%d"}},"status":{"allocatable":{"cpu":"4","memory":"8Gi","pods":"110"}}}' "$z" "$z"
	done
	printf ']}\n'
} >"$dir/cluster.json"

start_host() {
	local h=$1
	"$shmschedd" --ephemeral --cluster "$dir/cluster.json" \
		--socket "$dir/${names[h]}.sock" --workers 1 --no-pin --no-warm \
		--etcd "$SHMSCHED_ETCD_ENDPOINTS" --etcd-lease-ttl "$ttl" \
		--etcd-cluster "$cluster" --host-name "${names[h]}" \
		>>"$dir/${names[h]}.log" 2>&1 &
	hpid[$h]=$!
}

stop_all() {
	local h p
	for h in "${!hpid[@]}"; do
		kill -TERM "${hpid[$h]}" 2>/dev/null
	done
	for h in "${!hpid[@]}"; do
		wait "${hpid[$h]}" 2>/dev/null
	done
	for p in "${restarted_etcd[@]}"; do
		kill -TERM "$p" 2>/dev/null
		wait "$p" 2>/dev/null
	done
}
trap stop_all EXIT

# owner[z]: the owner of shard z now ("" when none), from one etcd range.
declare -A owner
read_owners() {
	local k v z
	owner=()
	while IFS= read -r k && IFS= read -r v; do
		z=${k#"$prefix"/shards/}
		z=${z%/owner}
		owner[$z]=$v
	done < <(etcdctl --endpoints "$SHMSCHED_ETCD_ENDPOINTS" --command-timeout=1s \
		get --prefix "$prefix/shards/" 2>/dev/null | paste - - | grep '/owner	' | tr '\t' '\n')
}

# Waits (60 s at most) until every shard is owned by a live host and each
# live host owns zones/live of them.
await_split() {
	local live=$1 deadline=$((SECONDS + 60)) z h n ok
	local per=$((zones / live))
	while ((SECONDS < deadline)); do
		read_owners
		ok=1
		declare -A count=()
		for ((z = 0; z < zones; z++)); do
			[[ -n ${owner[z$z]:-} ]] || { ok=0; break; }
			count[${owner[z$z]}]=$((${count[${owner[z$z]}]:-0} + 1))
		done
		if ((ok)); then
			for h in "${!count[@]}"; do
				((count[$h] == per)) || ok=0
			done
			((${#count[@]} == live)) || ok=0
		fi
		((ok)) && return 0
		nap
	done
	echo "failover.sh: the shards were not split among $live hosts within 60 s:" >&2
	for ((z = 0; z < zones; z++)); do echo "  z$z: ${owner[z$z]:-none}" >&2; done
	for h in "${!hpid[@]}"; do
		kill -0 "${hpid[$h]}" 2>/dev/null || echo "  ${names[h]} (pid ${hpid[$h]}) exited" >&2
		echo "--- ${names[h]}.log, its end:" >&2
		tail -n 8 "$dir/${names[h]}.log" >&2
	done
	return 1
}

# The index in etcd_pids of the member that leads now (-1: unknown).
etcd_leader() {
	local i
	for i in "${!etcd_eps[@]}"; do
		if etcdctl --endpoints "${etcd_eps[i]}" --command-timeout=1s endpoint status \
			-w fields 2>/dev/null | awk '
				/"MemberID"/ { m = $NF } /"Leader"/ { l = $NF }
				END { exit !(m != "" && m == l) }'; then
			echo "$i"
			return
		fi
	done
	echo -1
}

for h in 0 1 2; do start_host "$h"; done
await_split 3 || exit 1
coordinator() { etcdctl --endpoints "$SHMSCHED_ETCD_ENDPOINTS" get --print-value-only "$prefix/coordinator" 2>/dev/null; }

bound_ms=$(((ttl + 1) * 1000))
((kill_leader)) && bound_ms=$((2 * ttl * 1000))
echo "failover.sh: ttl ${ttl} s, ${kills} kills, ${zones} shards on 3 hosts, poll ${poll_ms} ms$( ((kill_leader)) && echo ', etcd leader killed with each host')"
samples=()
for ((i = 0; i < kills; i++)); do
	h=$((i % 3))
	name=${names[h]}
	read_owners
	mine=()
	for ((z = 0; z < zones; z++)); do
		[[ ${owner[z$z]:-} == "$name" ]] && mine+=("z$z")
	done
	was_coord=$(coordinator)
	t0=$(now)
	# (braces: no "Killed" notice from the shell)
	{
		kill -KILL "${hpid[$h]}"
		wait "${hpid[$h]}"
	} 2>/dev/null
	leader_note=""
	if ((kill_leader)); then
		li=$(etcd_leader)
		if ((li >= 0)); then
			lp=${etcd_pids[li]}
			cmd=()
			while IFS= read -r -d '' a; do cmd+=("$a"); done <"/proc/$lp/cmdline"
			# Reaped here when a restart of ours (a child), else by
			# etcd_cluster.sh (wait answers 127 at once).
			{
				kill -KILL "$lp"
				wait "$lp"
			} 2>/dev/null
			leader_note=" (etcd leader m$li killed)"
		fi
	fi
	while :; do
		read_owners
		done_all=1
		for z in "${mine[@]}"; do
			o=${owner[$z]:-}
			if [[ -z $o || $o == "$name" ]]; then
				done_all=0
				break
			fi
		done
		((done_all)) && break
		if (($(ms_since "$t0") > 60000)); then
			echo "failover.sh: kill $i: $name's shards ${mine[*]} not taken over in 60 s" >&2
			exit 1
		fi
		nap
	done
	ms=$(ms_since "$t0")
	samples+=("$ms")
	echo "kill $((i + 1)): $name (owned ${mine[*]}$([[ $was_coord == "$name" ]] && echo ', coordinator'))$leader_note: taken over in $ms ms"
	if [[ -n $leader_note ]]; then
		# Restart the member on its data directory: it rejoins as itself.
		"${cmd[@]}" >>"$SHMSCHED_ETCD_DIR/m$li.log" 2>&1 &
		etcd_pids[li]=$!
		restarted_etcd+=($!)
		until curl -s -m 1 "${etcd_eps[li]}/health" 2>/dev/null | grep -q '"health":"true"'; do
			sleep 0.2
		done
	fi
	start_host "$h"
	await_split 3 || exit 1
done

sorted=$(printf '%s\n' "${samples[@]}" | sort -n)
n=${#samples[@]}
median=$(echo "$sorted" | awk -v n="$n" '{ a[NR] = $1 } END {
	if (n % 2) print a[(n + 1) / 2]; else print int((a[n / 2] + a[n / 2 + 1]) / 2) }')
max=$(echo "$sorted" | tail -n 1)
min=$(echo "$sorted" | head -n 1)
echo "failover.sh: ttl ${ttl} s: ${n} samples: min ${min} ms, median ${median} ms, max ${max} ms; bound ${bound_ms} ms ($( ((kill_leader)) && echo '2 x TTL' || echo 'TTL + 1 s'))"
((!check_bound || median <= bound_ms))
