#!/bin/sh
# bench.gateway_load_grow: shmsched-gateway-load's open loop has enough
# connections for the latency it meets (issue 39 item 4). A server that
# answers each request 40 ms late, asked 100 requests a second, needs
# about 4 connections at once: from 1 connection, --max-connections 1
# queues most requests behind the load generator's own connection (and
# warns), while the default opens more as requests queue, so that only
# the first few queue. Before, the connections stayed at --connections.
# usage: test_gateway_load_grow.sh SHMSCHED-GATEWAY-LOAD PYTHON3
set -u
load=$1
python=$2
dir=$(mktemp -d /tmp/shmsched-loadgrow-XXXXXX)
spid=
cleanup() {
	[ -n "$spid" ] && kill "$spid" 2>/dev/null && wait "$spid" 2>/dev/null
	rm -rf "$dir"
}
trap cleanup EXIT
failed=0
fail() { echo "FAIL: $*"; failed=$((failed + 1)); }

# A keep-alive HTTP/1.1 server, a thread a connection, every POST answered
# after 40 ms with one placed pod's line.
cat >"$dir/slow.py" <<'PY'
import http.server, socketserver, sys, time
class H(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    def do_POST(self):
        self.rfile.read(int(self.headers.get("Content-Length", "0")))
        time.sleep(0.04)
        body = b'{"name":"p","node":"n1"}\n'
        self.send_response(200)
        self.send_header("Content-Type", "application/x-ndjson")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
    def log_message(self, *args):
        pass
class S(socketserver.ThreadingMixIn, http.server.HTTPServer):
    daemon_threads = True
s = S(("127.0.0.1", 0), H)
print(s.server_address[1], flush=True)
s.serve_forever()
PY
"$python" "$dir/slow.py" >"$dir/port" 2>"$dir/server.err" &
spid=$!
for _ in $(seq 100); do [ -s "$dir/port" ] && break; sleep 0.05; done
port=$(cat "$dir/port")
[ -n "$port" ] || { echo "FAIL: the slow server did not start: $(cat "$dir/server.err")"; exit 1; }

# field JSON NAME: a number of the load generator's JSON.
field() {
	"$python" -c 'import json, sys; print(int(json.loads(sys.argv[1])[sys.argv[2]]))' "$1" "$2"
}

one=$("$load" --url "127.0.0.1:$port" --mode single --rate 100 --seconds 1 \
	--connections 1 --max-connections 1 --json 2>"$dir/one.err")
echo "max 1: $one"
[ "$(field "$one" connections_at_end)" -eq 1 ] || fail "--max-connections 1 grew: $one"
req=$(field "$one" requests)
queued=$(field "$one" queued)
[ "$req" -gt 0 ] && [ "$queued" -gt $((req / 2)) ] ||
	fail "--max-connections 1: $queued of $req queued, want most"
grep -q "WARNING: .* queued: every one of the connections (1 at the start, 1 at the end, at most 1)" "$dir/one.err" ||
	fail "--max-connections 1: no warning: $(cat "$dir/one.err")"

grown=$("$load" --url "127.0.0.1:$port" --mode single --rate 100 --seconds 1 \
	--connections 1 --json 2>"$dir/grown.err")
echo "default: $grown"
conns=$(field "$grown" connections_at_end)
req=$(field "$grown" requests)
queued=$(field "$grown" queued)
[ "$conns" -ge 3 ] && [ "$conns" -le 256 ] || fail "default: $conns connections at the end, want 3..256"
[ "$req" -ge 90 ] || fail "default: $req requests in 1 s at 100/s"
# Each queued request opened one connection: no more queued than that.
[ "$queued" -le $((conns - 1)) ] || fail "default: $queued queued with $conns connections"
[ "$(field "$grown" errors)" -eq 0 ] || fail "default: errors: $grown"

[ "$failed" -eq 0 ] && echo "ok: bench.gateway_load_grow" || exit 1
