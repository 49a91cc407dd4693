#!/bin/sh
# Pods per second through the HTTP gateway behind a real nginx, beside the
# shared-memory path, in one run on one machine (compare them as ratios).
#
#   bench/gateway.sh [BUILDDIR]          (default build)
#
# Starts shmschedd on a synthetic cluster, shmsched-gateway on loopback,
# and Debian's nginx with examples/nginx/shmsched.conf (its per-client
# rate limit taken out: the load comes from one address), then runs
# shmsched-gateway-load:
#   1. direct    one producer through libshmsched-client (the path the
#                gateway itself sits on)
#   2. single    one Pod per request through nginx, closed loop: the most
#                requests per second
#   3. single    the same open loop at half that rate: latency per request
#                from its due time, over OPEN_CONNECTIONS connections that
#                share the schedule (the load generator counts and warns
#                about requests that found all of them busy: queued; each
#                such request opens one more connection, up to 256)
#   4. single    closed loop straight to the gateway, without nginx
#   5. batch     JSON Lines of BATCH pods per request through nginx
#   6. batch     the same straight to the gateway, without nginx
# Environment: NODES (20000), SECS (5 per phase), CONNECTIONS (4),
# BATCH (1000), BATCH_CONNECTIONS (2), DIRECT_PODS (300000), WORKERS (1),
# OPEN_CONNECTIONS (16), GATEWAY_THREADS (its --threads: 2),
# NGINX_WORKERS (worker_processes: 1), UPSTREAM (how nginx and the
# straight-to-the-gateway phases reach the gateway: unix, its --listen
# unix:/PATH socket, the cheaper of examples/nginx/shmsched.conf's two; or
# tcp, a loopback port). Each HTTP phase first measures the
# machine's own pauses and warns when they make its latencies unreliable.
#
# PROFILE=load|nginx|gateway|daemon: instead of the phases, instructions
# per single-pod request in that one process of the path, counted by
# valgrind's callgrind (the others run natively): the process starts
# uninstrumented, is switched on (callgrind_control -i on) for SECS of
# single pods through nginx closed loop (the load generator: its
# http_worker only, --toggle-collect), and its counts are divided by the
# requests answered; nginx runs as one process (master_process off). The
# callgrind file stays in PROFILE_OUT (default /tmp/shmsched-gwprofile)
# for callgrind_annotate. Counts of a loop that waits by spinning
# (the dispatcher's, the daemon worker's) grow with the time it waits, so
# they are the least exact of these figures.
# PROFILE=cpu: the CPU time (user and system, from /proc/PID/stat and the
# load generator's getrusage) and the context switches (all threads) of
# each process per single-pod request through nginx, closed loop, all
# running natively: where the wall-clock CPU goes, the kernel's included.
set -u
build=${1:-build}
src=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "$build" && pwd)
NODES=${NODES:-20000} SECS=${SECS:-5} CONNECTIONS=${CONNECTIONS:-4}
BATCH=${BATCH:-1000} BATCH_CONNECTIONS=${BATCH_CONNECTIONS:-2}
DIRECT_PODS=${DIRECT_PODS:-300000} WORKERS=${WORKERS:-1}
OPEN_CONNECTIONS=${OPEN_CONNECTIONS:-16}
GATEWAY_THREADS=${GATEWAY_THREADS:-2} NGINX_WORKERS=${NGINX_WORKERS:-1}
UPSTREAM=${UPSTREAM:-unix}
PROFILE=${PROFILE:-} PROFILE_OUT=${PROFILE_OUT:-/tmp/shmsched-gwprofile}
PATH=$PATH:/usr/sbin
case $UPSTREAM in
unix | tcp) ;;
*) echo "bench/gateway.sh: UPSTREAM=$UPSTREAM: expected unix or tcp" >&2; exit 2 ;;
esac
case $PROFILE in
'' | load | nginx | gateway | daemon | cpu) ;;
*) echo "bench/gateway.sh: PROFILE=$PROFILE: expected load, nginx, gateway, daemon or cpu" >&2; exit 2 ;;
esac
tools="nginx python3"
[ -n "$PROFILE" ] && [ "$PROFILE" != cpu ] &&
	tools="$tools valgrind callgrind_control callgrind_annotate"
for tool in $tools; do
	command -v "$tool" >/dev/null || { echo "bench/gateway.sh: $tool is missing (scripts/setup installs it)" >&2; exit 1; }
done
dir=$(mktemp -d /tmp/shmsched-gwbench-XXXXXX)
name=gwbench-$$
pids=""
cleanup() {
	for p in $pids; do kill "$p" 2>/dev/null || true; done
	for p in $pids; do wait "$p" 2>/dev/null || true; done
	rm -f "/dev/shm/$name"
	[ -n "${KEEP:-}" ] && echo "kept $dir" || rm -rf "$dir"
}
trap cleanup EXIT
wait_for() {
	for _ in $(seq 600); do grep -q "$2" "$1" 2>/dev/null && return 0; sleep 0.05; done
	echo "bench/gateway.sh: $1 never said $2:" >&2; cat "$1" >&2; exit 1
}
# cg WHO: the command prefix that runs WHO under callgrind, uninstrumented
# until switched on, when PROFILE names it; nothing otherwise.
cg() {
	[ "$PROFILE" = "$1" ] || return 0
	mkdir -p "$PROFILE_OUT"
	rm -f "$PROFILE_OUT/callgrind.$1"*
	echo valgrind --tool=callgrind --instr-atstart=no \
		--callgrind-out-file="$PROFILE_OUT/callgrind.$1"
}
free_port() {
	python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

$(cg daemon) "$build/cli/shmschedd" --synthetic "$NODES:0" --max-placements 4000000 \
	--workers "$WORKERS" --no-pin --name "$name" --fresh --socket "$dir/s.sock" \
	>"$dir/daemon.log" 2>&1 &
pids="$pids $!"
dpid=$!
wait_for "$dir/daemon.log" "ready:"
# Anonymous (the load generator sends no token), and budgets past what the
# load asks: this measures throughput, not the limits (issue 41).
listen=127.0.0.1:0
[ "$UPSTREAM" = unix ] && listen=unix:$dir/gw.sock
$(cg gateway) "$build/cli/shmsched-gateway" --socket "$dir/s.sock" --name "$name" \
	--listen "$listen" --threads "$GATEWAY_THREADS" --allow-anonymous --max-pods-per-request 100000 \
	--max-slots-per-client 100000000 --max-connections-per-ip 0 \
	>"$dir/gateway.log" 2>&1 &
gwpid=$!
pids="$pids $!"
wait_for "$dir/gateway.log" "connected to the daemon"
if [ "$UPSTREAM" = unix ]; then
	gurl=unix:$dir/gw.sock upstream=unix:$dir/gw.sock
	gcurl() { curl -s --unix-socket "$dir/gw.sock" "http://localhost$1"; }
else
	gport=$(sed -n 's/.*listening on port \([0-9]*\).*/\1/p' "$dir/gateway.log")
	gurl=127.0.0.1:$gport upstream=127.0.0.1:$gport
	gcurl() { curl -s "http://127.0.0.1:$gport$1"; }
fi
nport=$(free_port)
sed -e "s|^ *server 127.0.0.1:8080;|    server $upstream;|" \
	-e "s/listen 8000;/listen 127.0.0.1:$nport;/" \
	-e '/limit_req/d' "$src/examples/nginx/shmsched.conf" >"$dir/shmsched.conf"
user=""
[ "$(id -u)" -eq 0 ] && user="user root;"
cat >"$dir/nginx.conf" <<EOF
$user
worker_processes $NGINX_WORKERS;
pid $dir/nginx.pid;
error_log $dir/error.log;
events { worker_connections 1024; }
http {
    access_log off;
    client_body_temp_path $dir/client_body;
    proxy_temp_path $dir/proxy;
    fastcgi_temp_path $dir/fastcgi;
    uwsgi_temp_path $dir/uwsgi;
    scgi_temp_path $dir/scgi;
    include $dir/shmsched.conf;
}
EOF
master=""
[ -n "$PROFILE" ] && [ "$PROFILE" != cpu ] && master="master_process off;"
$(cg nginx) nginx -p "$dir" -c "$dir/nginx.conf" -g "daemon off; $master" 2>"$dir/nginx.err" &
npid=$!
pids="$pids $!"
# The port came from free_port: make sure our nginx has it, in front of
# our gateway (another process could have taken it meanwhile).
for _ in $(seq 100); do
	curl -s "http://127.0.0.1:$nport/version" 2>/dev/null | grep -q shmsched-gateway && break
	sleep 0.05
done
curl -s "http://127.0.0.1:$nport/version" | grep -q shmsched-gateway ||
	{ echo "bench/gateway.sh: nginx on port $nport does not reach the gateway:" >&2; cat "$dir/nginx.err" "$dir/error.log" >&2; exit 1; }

load=$build/bench/shmsched-gateway-load
# cpu_of PID...: their user and their system clock ticks, and their
# context switches (voluntary and not, every thread's).
cpu_of() {
	for p in "$@"; do
		sed 's/.*) //' "/proc/$p/stat" | awk '{print $12, $13}'
		cat /proc/"$p"/task/*/status 2>/dev/null |
			awk '/ctxt_switches/ {n += $2} END {print n}'
	done | tr '\n' ' ' | awk '{for (i = 1; i <= NF; i += 3) {u += $i; s += $(i + 1); c += $(i + 2)} print u, s, c}'
}
if [ "$PROFILE" = cpu ]; then
	hz=$(getconf CLK_TCK)
	# nginx: the master and its workers.
	npids="$npid $(pgrep -P "$npid" | tr '\n' ' ')"
	# shellcheck disable=SC2086
	before="$(cpu_of "$dpid") $(cpu_of "$gwpid") $(cpu_of $npids)"
	out=$("$load" --url "127.0.0.1:$nport" --mode single \
		--connections "$CONNECTIONS" --seconds "$SECS" --prefix profile --json)
	# shellcheck disable=SC2086
	after="$(cpu_of "$dpid") $(cpu_of "$gwpid") $(cpu_of $npids)"
	echo "$out" | python3 -c '
import json, sys
o = json.load(sys.stdin)
hz = float(sys.argv[1])
b = [int(x) for x in sys.argv[2].split()]
a = [int(x) for x in sys.argv[3].split()]
n = max(o["requests"], 1)
print("CPU per single-pod request through nginx, closed loop, %d connections: "
      "%.0f requests/s over %.1f s" % (o["connections"], o["requests_per_sec"], o["seconds"]))
total = 0.0
for i, who in enumerate(("daemon", "gateway", "nginx")):
    user, system, switches = ((a[3 * i + k] - b[3 * i + k]) for k in range(3))
    us = (user + system) / hz * 1e6 / n
    total += us
    print("  %-8s %6.1f us CPU (%.1f us in the kernel), %5.2f context switches"
          % (who, us, system / hz * 1e6 / n, switches / n))
us = (o["cpu_user_s"] + o["cpu_system_s"]) * 1e6 / n
total += us
print("  %-8s %6.1f us CPU (%.1f us in the kernel)" % ("load", us, o["cpu_system_s"] * 1e6 / n))
print("  all      %6.1f us CPU a request (%d cores: %.1f us of CPU time a request at this rate)" % (total, int(sys.argv[4]), int(sys.argv[4]) * 1e6 / max(o["requests_per_sec"], 1)))
' "$hz" "$before" "$after" "$(nproc)"
	exit 0
fi
if [ -n "$PROFILE" ]; then
	case $PROFILE in
	daemon) pid=$dpid ;;
	gateway) pid=$gwpid ;;
	nginx) pid=$npid ;;
	load) pid="" ;;
	esac
	[ -n "$pid" ] && callgrind_control -i on "$pid" >/dev/null 2>&1
	if [ "$PROFILE" = load ]; then
		mkdir -p "$PROFILE_OUT"
		rm -f "$PROFILE_OUT/callgrind.load"*
		out=$(valgrind --tool=callgrind --toggle-collect=http_worker \
			--callgrind-out-file="$PROFILE_OUT/callgrind.load" "$load" \
			--url "127.0.0.1:$nport" --mode single --connections "$CONNECTIONS" \
			--seconds "$SECS" --prefix profile --json 2>"$dir/valgrind.err")
	else
		out=$("$load" --url "127.0.0.1:$nport" --mode single \
			--connections "$CONNECTIONS" --seconds "$SECS" --prefix profile --json)
		callgrind_control -d "$pid" >/dev/null 2>&1
		for _ in $(seq 100); do
			ls "$PROFILE_OUT/callgrind.$PROFILE"* >/dev/null 2>&1 && break
			sleep 0.1
		done
	fi
	requests=$(echo "$out" | python3 -c 'import json,sys; print(json.load(sys.stdin)["requests"])')
	file=$(ls -t "$PROFILE_OUT/callgrind.$PROFILE"* | head -1)
	total=$(callgrind_annotate "$file" 2>/dev/null | sed -n 's/^\([0-9,]*\) .*PROGRAM TOTALS.*/\1/p' | tr -d ,)
	echo "$PROFILE: $total instructions over $requests single-pod requests through nginx ($CONNECTIONS connections, $SECS s closed loop): $((total / (requests > 0 ? requests : 1))) a request; callgrind_annotate $file"
	exit 0
fi
echo "shmsched gateway benchmark: $(nproc) cores ($(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1)), $NODES synthetic nodes, $WORKERS daemon worker(s), $GATEWAY_THREADS gateway HTTP thread(s); nginx $NGINX_WORKERS worker(s); $SECS s a phase"
"$load" --direct "$dir/s.sock" --pods "$DIRECT_PODS" --prefix direct
single=$("$load" --url "127.0.0.1:$nport" --mode single --connections "$CONNECTIONS" \
	--seconds "$SECS" --prefix single --json)
echo "$single" | python3 -c 'import json,sys; o=json.load(sys.stdin); print("single nginx: %d connections, closed loop: %.0f pods/s (one per request); per request p50 %.0f us, p90 %.0f us, p99 %.0f us, p99.9 %.0f us; %d errors, %d reconnects" % (o["connections"], o["pods_per_sec"], o["p50_us"], o["p90_us"], o["p99_us"], o["p999_us"], o["errors"], o["reconnects"]))'
half=$(echo "$single" | python3 -c 'import json,sys; print(int(json.load(sys.stdin)["requests_per_sec"] / 2))')
"$load" --url "127.0.0.1:$nport" --mode single --connections "$OPEN_CONNECTIONS" \
	--seconds "$SECS" --rate "$half" --prefix half
"$load" --url "$gurl" --mode single --connections "$CONNECTIONS" \
	--seconds "$SECS" --prefix bare-single
"$load" --url "127.0.0.1:$nport" --mode batch --batch "$BATCH" \
	--connections "$BATCH_CONNECTIONS" --seconds "$SECS" --prefix batch
"$load" --url "$gurl" --mode batch --batch "$BATCH" \
	--connections "$BATCH_CONNECTIONS" --seconds "$SECS" --prefix bare
echo "(the gateway's own view: $(gcurl /metrics | grep -E '^shmsched_gateway_pods_total\{result="scheduled"\}'))"
