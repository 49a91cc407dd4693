#!/usr/bin/env bash
# Counts the daemon's system calls per pod: runs build/cli/shmschedd under
# `strace -f -c` twice, once while the example producer places N pods and
# once for 2N, and prints (calls(2N) - calls(N)) / N, the calls that grow
# with pods. Start-up, registration and idle sleeps are the same in both
# runs, apart from the longer run's extra idle time, so they cancel out
# (within noise). Needs strace and a built tree (scripts/setup, ninja).
#
# usage: bench/syscalls.sh [N]     (default 50000)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
n=${1:-50000}
command -v strace >/dev/null || { echo "syscalls.sh: strace is not installed" >&2; exit 1; }
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT

run() {
	local pods=$1 out=$2 sock=$dir/s.sock
	strace -f -c -o "$out" build/cli/shmschedd --synthetic 2000:0 --workers 1 --ephemeral \
		--socket "$sock" >"$dir/daemon.log" 2>&1 &
	local pid=$!
	for _ in $(seq 100); do [[ -S $sock ]] && break; sleep 0.1; done
	SHMSCHED_SOCKET=$sock build/examples/shmsched-producer-example "$pods" \
		>"$dir/producer.log"
	# strace is the parent: signal the daemon, its child.
	pkill -TERM -P "$pid" shmschedd || kill -TERM "$pid"
	wait "$pid" || true
	awk '$NF == "total" { print $(NF-2) }' "$out"
}

a=$(run "$n" "$dir/a.txt")
b=$(run $((2 * n)) "$dir/b.txt")
echo "daemon system calls: $a with $n pods, $b with $((2 * n)) pods"
awk -v a="$a" -v b="$b" -v n="$n" 'BEGIN {
	printf "syscalls per pod (marginal): %.4f\n", (b - a) / n }'
echo "largest counts of the longer run:"
sort -k4 -n -r "$dir/b.txt" | awk 'NF >= 5 && $NF != "total" && $NF != "syscall"' | head -5
