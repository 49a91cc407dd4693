# Sourced by bench/etcd_pipe.sh and bench/etcd_hosts.sh inside a throwaway
# etcd (tests/coord/etcd_cluster.sh sets SHMSCHED_ETCD_PIDS): the members'
# CPU in clock ticks (hz of them a second), all of them or one process's.
IFS=, read -r -a etcd_pids <<<"$SHMSCHED_ETCD_PIDS"
hz=$(getconf CLK_TCK)
# A process's utime + stime: fields 14 and 15 of /proc/PID/stat (after
# the parenthesised name, which has no spaces here); nothing once gone.
member_ticks() {
	local f
	read -r -a f <"/proc/$1/stat" 2>/dev/null && echo $((f[13] + f[14]))
}
etcd_ticks() {
	local t=0 pid n
	for pid in "${etcd_pids[@]}"; do
		n=$(member_ticks "$pid") || continue
		t=$((t + n))
	done
	echo "$t"
}
