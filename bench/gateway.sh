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
#                about requests that found all of them busy: queued)
#   4. single    closed loop straight to the gateway, without nginx
#   5. batch     JSON Lines of BATCH pods per request through nginx
#   6. batch     the same straight to the gateway, without nginx
# Environment: NODES (20000), SECS (5 per phase), CONNECTIONS (4),
# BATCH (1000), BATCH_CONNECTIONS (2), DIRECT_PODS (300000), WORKERS (1),
# OPEN_CONNECTIONS (16). Each HTTP phase first measures the machine's own
# pauses and warns when they make its latencies unreliable.
set -u
build=${1:-build}
src=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "$build" && pwd)
NODES=${NODES:-20000} SECS=${SECS:-5} CONNECTIONS=${CONNECTIONS:-4}
BATCH=${BATCH:-1000} BATCH_CONNECTIONS=${BATCH_CONNECTIONS:-2}
DIRECT_PODS=${DIRECT_PODS:-300000} WORKERS=${WORKERS:-1}
OPEN_CONNECTIONS=${OPEN_CONNECTIONS:-16}
PATH=$PATH:/usr/sbin
for tool in nginx python3; do
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
free_port() {
	python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

"$build/cli/shmschedd" --synthetic "$NODES:0" --max-placements 4000000 \
	--workers "$WORKERS" --no-pin --name "$name" --fresh --socket "$dir/s.sock" \
	>"$dir/daemon.log" 2>&1 &
pids="$pids $!"
wait_for "$dir/daemon.log" "ready:"
# Anonymous (the load generator sends no token), and budgets past what the
# load asks: this measures throughput, not the limits (issue 41).
"$build/cli/shmsched-gateway" --socket "$dir/s.sock" --name "$name" \
	--listen 127.0.0.1:0 --allow-anonymous --max-pods-per-request 100000 \
	--max-slots-per-client 100000000 --max-connections-per-ip 0 \
	>"$dir/gateway.log" 2>&1 &
pids="$pids $!"
wait_for "$dir/gateway.log" "connected to the daemon"
gport=$(sed -n 's/.*listening on port \([0-9]*\).*/\1/p' "$dir/gateway.log")
nport=$(free_port)
sed -e "s/server 127.0.0.1:8080;/server 127.0.0.1:$gport;/" \
	-e "s/listen 8000;/listen 127.0.0.1:$nport;/" \
	-e '/limit_req/d' "$src/examples/nginx/shmsched.conf" >"$dir/shmsched.conf"
user=""
[ "$(id -u)" -eq 0 ] && user="user root;"
cat >"$dir/nginx.conf" <<EOF
$user
worker_processes 1;
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
nginx -p "$dir" -c "$dir/nginx.conf" -g 'daemon off;' 2>"$dir/nginx.err" &
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
echo "shmsched gateway benchmark: $(nproc) cores ($(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1)), $NODES synthetic nodes, $WORKERS daemon worker(s); nginx 1 worker; $SECS s a phase"
"$load" --direct "$dir/s.sock" --pods "$DIRECT_PODS" --prefix direct
single=$("$load" --url "127.0.0.1:$nport" --mode single --connections "$CONNECTIONS" \
	--seconds "$SECS" --prefix single --json)
echo "$single" | python3 -c 'import json,sys; o=json.load(sys.stdin); print("single nginx: %d connections, closed loop: %.0f pods/s (one per request); per request p50 %.0f us, p90 %.0f us, p99 %.0f us, p99.9 %.0f us; %d errors, %d reconnects" % (o["connections"], o["pods_per_sec"], o["p50_us"], o["p90_us"], o["p99_us"], o["p999_us"], o["errors"], o["reconnects"]))'
half=$(echo "$single" | python3 -c 'import json,sys; print(int(json.load(sys.stdin)["requests_per_sec"] / 2))')
"$load" --url "127.0.0.1:$nport" --mode single --connections "$OPEN_CONNECTIONS" \
	--seconds "$SECS" --rate "$half" --prefix half
"$load" --url "127.0.0.1:$gport" --mode single --connections "$CONNECTIONS" \
	--seconds "$SECS" --prefix bare-single
"$load" --url "127.0.0.1:$nport" --mode batch --batch "$BATCH" \
	--connections "$BATCH_CONNECTIONS" --seconds "$SECS" --prefix batch
"$load" --url "127.0.0.1:$gport" --mode batch --batch "$BATCH" \
	--connections "$BATCH_CONNECTIONS" --seconds "$SECS" --prefix bare
echo "(the gateway's own view: $(curl -s "http://127.0.0.1:$gport/metrics" | grep -E '^shmsched_gateway_pods_total\{result="scheduled"\}'))"
