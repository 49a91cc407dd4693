#!/bin/sh
# stress.gateway_nginx: Debian's nginx, with examples/nginx/shmsched.conf, in
# front of a real shmsched-gateway and shmschedd, driven with curl as a user
# would: the example pods placed exactly as `shmsched place` places them,
# GET and DELETE, bad input (malformed JSON with its JSON path, 404, 405,
# 413), the daemon killed (503 through nginx) and restarted (recovery);
# kube-scheduler's extender filter; `promtool check metrics` on /metrics; a
# real Prometheus scraping the gateway finds its series; nginx's own
# refusals (413, 429, 502, 504) answered as Kubernetes Status JSON. The
# gateway takes bearer tokens (--token-file): every curl here sends one
# (the curl function below), and nginx passes it through (a request
# without one is 401). nginx runs from a temporary prefix on loopback ports,
# its logs and pid inside it.
# usage: test_nginx.sh SHMSCHEDD SHMSCHED_GATEWAY SHMSCHED SOURCE_ROOT
set -u
daemon=$1 gateway=$2 cli=$3 src=$4
for tool in nginx curl promtool prometheus python3; do
	if ! command -v "$tool" >/dev/null 2>&1 && [ ! -x "/usr/sbin/$tool" ]; then
		echo "SKIP: $tool is not installed (scripts/setup installs it)"
		exit 77
	fi
done
PATH=$PATH:/usr/sbin
dir=$(mktemp -d /tmp/shmsched-nginx-XXXXXX)
name=gwnginx-$$
. "$(dirname "$0")/lib.sh"
free_port() {
	python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

start_daemon() { # [--fresh]
	"$daemon" --cluster "$src/examples/cluster.json" --socket "$dir/s.sock" \
		--workers 1 --no-pin --name "$name" "$@" >"$dir/daemon.log" 2>&1 &
	dpid=$!
	pids="$pids $dpid"
	wait_for "$dir/daemon.log" "ready:"
}
start_daemon --fresh
token=nginx-test-token-$$
printf '%s,tester,1000,"dev"\n' "$token" >"$dir/tokens.csv"
chmod 600 "$dir/tokens.csv"
# Every request of this test carries the token (nginx forwards it).
curl() { command curl -H "Authorization: Bearer $token" "$@"; }
"$gateway" --socket "$dir/s.sock" --name "$name" --listen 127.0.0.1:0 \
	--token-file "$dir/tokens.csv" --daemon-grace 20000 >"$dir/gateway.log" 2>&1 &
gwpid=$!
pids="$pids $gwpid"
wait_for "$dir/gateway.log" "ready: listening on port"
gport=$(sed -n 's/.*listening on port \([0-9]*\).*/\1/p' "$dir/gateway.log")

# nginx: the example file, pointed at this gateway and a free port.
user=""
[ "$(id -u)" -eq 0 ] && user="user root;"
start_nginx() { # DIR UPSTREAM_PORT LISTEN_PORT [SED_ARG...]: the example file, edited
	d=$1 up=$2 port=$3
	shift 3
	mkdir -p "$d"
	sed -e "s/server 127.0.0.1:8080;/server 127.0.0.1:$up;/" \
		-e "s/listen 8000;/listen 127.0.0.1:$port;/" "$@" \
		"$src/examples/nginx/shmsched.conf" >"$d/shmsched.conf"
	cat >"$d/nginx.conf" <<EOF
$user
worker_processes 1;
pid $d/nginx.pid;
error_log $d/error.log;
events { worker_connections 256; }
http {
    access_log $d/access.log;
    client_body_temp_path $d/client_body;
    proxy_temp_path $d/proxy;
    fastcgi_temp_path $d/fastcgi;
    uwsgi_temp_path $d/uwsgi;
    scgi_temp_path $d/scgi;
    include $d/shmsched.conf;
}
EOF
	nginx -p "$d" -c "$d/nginx.conf" -g 'daemon off;' 2>"$d/nginx.err" &
	pids="$pids $!"
}
nport=$(free_port)
start_nginx "$dir" "$gport" "$nport"
# status_of FILE CODE REASON: FILE (headers, then body) is a Kubernetes
# Status with that code and reason, typed application/json.
status_of() {
	python3 - "$@" <<'PY'
import json, sys
f, code, reason = sys.argv[1], int(sys.argv[2]), sys.argv[3]
s = json.load(open(f))
sys.exit(0 if (s["kind"] == "Status" and s["apiVersion"] == "v1"
               and s["metadata"] == {} and s["status"] == "Failure"
               and s["reason"] == reason and s["code"] == code
               and s["message"]) else 1)
PY
}
# code_type ARGS...: "CODE TYPE" of one request, its body in $dir/body.
code_type() { curl -s -o "$dir/body" -w '%{http_code} %{content_type}' "$@"; }
url=http://127.0.0.1:$nport
for _ in $(seq 100); do curl -s "$url/version" | grep -q shmsched-gateway && break; sleep 0.05; done
# free_port's port could have been taken meanwhile: it must be our nginx.
curl -s "$url/version" | grep -q shmsched-gateway ||
	{ echo "FAIL: nginx on port $nport does not reach the gateway:"; cat "$dir/nginx.err" "$dir/error.log"; exit 1; }
for _ in $(seq 100); do [ "$(curl -s "$url/readyz")" = ok ] && break; sleep 0.05; done
check "nginx up, gateway ready through it" test "$(curl -s "$url/readyz")" = ok
check "no token through nginx: 401" test "$(command curl -s -o /dev/null -w '%{http_code}' -X POST -d '{}' "$url/v1/placements")" = 401

# The example pods through nginx: the same lines `shmsched place` prints.
curl -s -X POST -H 'Content-Type: application/x-ndjson' \
	--data-binary @"$src/examples/pods.jsonl" "$url/v1/placements" >"$dir/http.jsonl"
"$cli" place --cluster "$src/examples/cluster.json" --pods "$src/examples/pods.jsonl" \
	>"$dir/place.jsonl"
check "POST /v1/placements answers as shmsched place" cmp -s "$dir/http.jsonl" "$dir/place.jsonl"
[ "$failed" -eq 0 ] || { echo "gateway:"; cat "$dir/http.jsonl"; echo "place:"; cat "$dir/place.jsonl"; }

check "GET a placement" test "$(code "$url/v1/placements/default/trainer")" = 200
check "  ... on its node with its GPU" grep -q '"node":"n2","gpus":\[0\],"gpu_milli":1000' "$dir/body"
check "DELETE it" test "$(code -X DELETE "$url/v1/placements/default/trainer")" = 200
check "  ... then GET is 404" test "$(code "$url/v1/placements/default/trainer")" = 404
check "  ... as a Status" grep -q '"kind":"Status".*"reason":"NotFound","code":404' "$dir/body"
check "malformed JSON: 400" test "$(code -X POST -d '{"kind":"Pod","metadata":{"name":"x"},"spec":{"containers":[{"name":1,}]}}' "$url/v1/placements")" = 400
check "  ... saying where" grep -q 'line 1, column' "$dir/body"
check "a bad field: 400 with its path" test "$(code -X POST -d '{"kind":"List","items":[{"metadata":{"name":"q"},"spec":{"containers":[{"name":"c","resources":{"requests":{"memory":"lots"}}}]}}]}' "$url/v1/placements")" = 400
check "  ... items[0] and the field" grep -q 'line 1: items\[0\]: the daemon refused the pod: spec.containers\[0\].resources.requests.memory' "$dir/body"
check "unknown route: 404" test "$(code "$url/v2/anything")" = 404
check "wrong method: 405" test "$(code -X PATCH "$url/v1/placements")" = 405
head -c 40000000 /dev/zero >"$dir/huge"
check "a 40 MB body: 413" test "$(code_type -X POST --data-binary @"$dir/huge" "$url/v1/placements")" = "413 application/json"
check "  ... nginx's own, a Status" status_of "$dir/body" 413 RequestEntityTooLarge
check "JSON Lines stream through nginx (proxy_buffering off)" \
	test "$(curl -s -X POST --data-binary @"$src/examples/pods.jsonl" "$url/v1/placements" | grep -c AlreadyExists)" = 1

# kube-scheduler's extender, as its HTTPExtender would call it through nginx.
check "extender filter through nginx" test "$(code -X POST -d '{"Pod":{"metadata":{"name":"ext","uid":"u1"},"spec":{"containers":[{"name":"c","resources":{"requests":{"cpu":"100m"}}}]}},"NodeNames":["n1","n2","n3"]}' "$url/extender/filter")" = 200
check "  ... n1 passes, n2 (tainted) and n3 (cordoned) are unresolvable" \
	grep -q '"NodeNames":\["n1"\],"FailedNodes":{},"FailedAndUnresolvableNodes":{"n2":"node(s) had untolerated taint {dedicated: gpu}","n3":"node(s) were unschedulable"}' "$dir/body"

# /metrics, checked by Prometheus' own linter.
curl -s "$url/metrics" >"$dir/metrics.txt"
check "promtool check metrics" promtool check metrics <"$dir/metrics.txt"
check "  ... kube-scheduler's names" grep -q '^scheduler_schedule_attempts_total{profile="default-scheduler",result="scheduled"} [1-9]' "$dir/metrics.txt"
check "  ... requests by route and code" grep -q '^shmsched_gateway_requests_total{route="placements",code="400"} [1-9]' "$dir/metrics.txt"

# A real Prometheus scrapes the gateway for a few seconds and finds the series.
pport=$(free_port)
cat >"$dir/prometheus.yml" <<EOF
global:
  scrape_interval: 500ms
  scrape_timeout: 400ms
scrape_configs:
  - job_name: shmsched
    authorization:
      credentials: $token
    static_configs:
      - targets: ['127.0.0.1:$nport']
EOF
prometheus --config.file="$dir/prometheus.yml" --storage.tsdb.path="$dir/prom" \
	--web.listen-address="127.0.0.1:$pport" >"$dir/prometheus.log" 2>&1 &
ppid_=$!
pids="$pids $ppid_"
found=""
for _ in $(seq 80); do
	sleep 0.25
	q=$(curl -s "http://127.0.0.1:$pport/api/v1/query?query=scheduler_schedule_attempts_total%7Bresult%3D%22scheduled%22%7D")
	case $q in *'"result":[{'*) found=$q; break ;; esac
done
check "Prometheus scraped scheduler_schedule_attempts_total" test -n "$found"
up=$(curl -s "http://127.0.0.1:$pport/api/v1/query?query=up%7Bjob%3D%22shmsched%22%7D")
check "  ... and the target is up" sh -c "printf '%s' '$up' | grep -q '\"value\":\[[0-9.]*,\"1\"\]'"
kill "$ppid_" 2>/dev/null

# The daemon killed: 503 through nginx, then recovery once it is back.
kill -9 "$dpid"
wait "$dpid" 2>/dev/null
sleep 0.3
check "daemon killed: POST is 503" test "$(code -X POST -d '{"metadata":{"name":"late"},"spec":{"containers":[{"name":"c"}]}}' "$url/v1/placements")" = 503
check "  ... a Status saying why" grep -q '"reason":"ServiceUnavailable"' "$dir/body"
check "  ... /readyz is 503" test "$(code "$url/readyz")" = 503
start_daemon
for _ in $(seq 100); do [ "$(curl -s "$url/readyz")" = ok ] && break; sleep 0.05; done
check "daemon back: /readyz ok" test "$(curl -s "$url/readyz")" = ok
check "  ... the placements it kept are found" test "$(code "$url/v1/placements/default/web-1")" = 200
check "  ... and new pods are placed" test "$(code -X POST -d '{"metadata":{"name":"late"},"spec":{"containers":[{"name":"c","resources":{"requests":{"cpu":"10m"}}}]}}' "$url/v1/placements")" = 200
check "  ... on a node" grep -q '"pod":"default/late","node":"n' "$dir/body"

# nginx's own refusals are Status objects (error_page to named locations),
# typed application/json. A second nginx, the same file with a limit of one
# request a minute (no burst) and a 1 s proxy_read_timeout, in front of a
# listener that takes connections into its backlog and never answers (it
# exits by itself after 20 s): the first request times out (504), the
# second is over the limit (429, not 503).
python3 -c 'import socket, time
s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen(64)
print(s.getsockname()[1], flush=True); time.sleep(20)' >"$dir/mute.port" &
pids="$pids $!"
wait_for "$dir/mute.port" "[0-9]"
mport=$(cat "$dir/mute.port")
n2port=$(free_port)
start_nginx "$dir/n2" "$mport" "$n2port" -e 's|rate=2000r/s|rate=1r/m|' \
	-e 's|burst=4000 nodelay|nodelay|' \
	-e 's|proxy_read_timeout 310s|proxy_read_timeout 1s|'
for _ in $(seq 100); do [ -s "$dir/n2/nginx.pid" ] && break; sleep 0.05; done
sleep 0.1
url2=http://127.0.0.1:$n2port
check "the gateway never answers: 504" test "$(code_type -X POST -d '{}' "$url2/v1/placements?wait=10s")" = "504 application/json"
check "  ... a Status" status_of "$dir/body" 504 Timeout
check "over limit_req: 429" test "$(code_type -X POST -d '{}' "$url2/v1/placements")" = "429 application/json"
check "  ... a Status" status_of "$dir/body" 429 TooManyRequests
# The gateway stopped: nginx cannot connect, 502 (503 stays "the daemon is
# not reachable", the gateway's own answer, tested above).
kill "$gwpid"
wait "$gwpid" 2>/dev/null
check "the gateway stopped: 502" test "$(code_type "$url/v1/placements/default/web-1")" = "502 application/json"
check "  ... a Status" status_of "$dir/body" 502 InternalError

for log in "$dir/error.log" "$dir/n2/error.log" "$dir/n2/nginx.err"; do
	if grep -q '\[emerg\]\|\[alert\]' "$log" 2>/dev/null; then
		echo "nginx error log $log:"; cat "$log"
	fi
done
if [ "$failed" -ne 0 ]; then
	echo "$failed failed; gateway log:"
	cat "$dir/gateway.log"
	exit 1
fi
echo "all passed"
