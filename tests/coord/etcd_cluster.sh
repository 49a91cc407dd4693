#!/usr/bin/env bash
# Starts a throwaway etcd cluster on loopback from Debian's etcd-server
# (/usr/bin/etcd, 3.4), runs one command against it, and always tears it
# down: every member stopped, the temporary data directory removed (trap).
#
# usage: tests/coord/etcd_cluster.sh [--members N] [--] COMMAND [ARG...]
#   N defaults to 3. Each member listens on two free loopback ports (client
#   and peer), picked by binding port 0; a start that loses a port to a
#   race is retried (3 tries).
#
# The command sees, in its environment:
#   SHMSCHED_ETCD_ENDPOINTS  the members' client URLs, comma separated
#                            (http://127.0.0.1:PORT), in member order
#   SHMSCHED_ETCD_PIDS       the members' process ids, same order: a test
#                            kills (kill -9) or stops (SIGSTOP) one by these
#   SHMSCHED_ETCD_DIR        the cluster's temporary directory (members'
#                            data directories and logs, m<i>.log)
# and its exit status is the script's. Without /usr/bin/etcd (or
# SHMSCHED_ETCD_BIN) the script prints why and exits 77, which meson reads
# as a skip; scripts/setup installs etcd-server, so CI runs these tests.
set -uo pipefail

members=3
if [[ ${1:-} == --members ]]; then
	members=$2
	shift 2
fi
[[ ${1:-} == -- ]] && shift
if (($# == 0)); then
	echo "usage: $0 [--members N] [--] COMMAND [ARG...]" >&2
	exit 2
fi
if ! [[ $members =~ ^[1-9]$ ]]; then
	echo "etcd_cluster.sh: --members $members: expected 1 to 9" >&2
	exit 2
fi
etcd_bin=${SHMSCHED_ETCD_BIN:-/usr/bin/etcd}
if [[ ! -x $etcd_bin ]]; then
	echo "SKIP: $etcd_bin is absent (Debian package etcd-server; scripts/setup installs it)"
	exit 77
fi
for tool in curl python3; do
	if ! command -v "$tool" >/dev/null; then
		echo "SKIP: $tool is absent (scripts/setup installs it)"
		exit 77
	fi
done

dir=$(mktemp -d "${TMPDIR:-/tmp}/shmsched-etcd.XXXXXX")
pids=()
stop_members() {
	local p
	for p in "${pids[@]}"; do
		# A test may have stopped one (SIGSTOP): wake it so it can die.
		kill -CONT "$p" 2>/dev/null
		kill -TERM "$p" 2>/dev/null
	done
	for p in "${pids[@]}"; do
		for _ in $(seq 50); do
			kill -0 "$p" 2>/dev/null || break
			sleep 0.1
		done
		kill -KILL "$p" 2>/dev/null
		wait "$p" 2>/dev/null
	done
	pids=()
}
cleanup() {
	stop_members
	rm -rf "$dir"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# 2 x members free ports, each held by a socket while the others are
# picked (so no two are the same), then released for etcd to bind.
free_ports() {
	python3 - "$1" <<'EOF'
import socket, sys
socks = []
for _ in range(int(sys.argv[1])):
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    socks.append(s)
print(" ".join(str(s.getsockname()[1]) for s in socks))
EOF
}

start_cluster() {
	local ports i initial="" endpoints=""
	read -r -a ports <<<"$(free_ports $((2 * members)))"
	for ((i = 0; i < members; i++)); do
		initial+="${initial:+,}m$i=http://127.0.0.1:${ports[2 * i + 1]}"
		endpoints+="${endpoints:+,}http://127.0.0.1:${ports[2 * i]}"
	done
	rm -rf "$dir"/m*
	for ((i = 0; i < members; i++)); do
		# Election and heartbeat at etcd's defaults (1000 ms, 100 ms): a
		# leader change in a test takes what it takes in production.
		"$etcd_bin" --name "m$i" --data-dir "$dir/m$i.etcd" \
			--listen-client-urls "http://127.0.0.1:${ports[2 * i]}" \
			--advertise-client-urls "http://127.0.0.1:${ports[2 * i]}" \
			--listen-peer-urls "http://127.0.0.1:${ports[2 * i + 1]}" \
			--initial-advertise-peer-urls "http://127.0.0.1:${ports[2 * i + 1]}" \
			--initial-cluster "$initial" \
			--initial-cluster-token "shmsched-test-$$" \
			--initial-cluster-state new \
			>"$dir/m$i.log" 2>&1 &
		pids+=($!)
	done
	ENDPOINTS=$endpoints
	# Healthy: every member answers /health with "true" (it has a leader
	# and serves reads), within 30 s.
	local deadline=$((SECONDS + 30)) ep ok
	while ((SECONDS < deadline)); do
		ok=1
		for ep in ${endpoints//,/ }; do
			curl -s -m 1 "$ep/health" 2>/dev/null | grep -q '"health":"true"' || ok=0
		done
		((ok)) && return 0
		for i in "${!pids[@]}"; do
			kill -0 "${pids[i]}" 2>/dev/null || {
				echo "etcd_cluster.sh: member m$i exited at start:" >&2
				tail -n 5 "$dir/m$i.log" >&2
				return 1
			}
		done
		sleep 0.2
	done
	echo "etcd_cluster.sh: the cluster was not healthy within 30 s" >&2
	return 1
}

started=0
for try in 1 2 3; do
	if start_cluster; then
		started=1
		break
	fi
	echo "etcd_cluster.sh: start $try failed; retrying on new ports" >&2
	stop_members
done
if ((!started)); then
	for ((i = 0; i < members; i++)); do
		echo "--- $dir/m$i.log" >&2
		tail -n 20 "$dir/m$i.log" >&2
	done
	exit 1
fi

pid_list=$(
	IFS=,
	echo "${pids[*]}"
)
SHMSCHED_ETCD_ENDPOINTS=$ENDPOINTS SHMSCHED_ETCD_PIDS=$pid_list \
	SHMSCHED_ETCD_DIR=$dir "$@"
exit $?
