#!/bin/sh
# stress.gateway_service: shmschedd and shmsched-gateway as services: each
# tells systemd READY=1 once it serves and STOPPING=1 when it stops (a
# notify socket made here stands in for systemd); with --log-file and
# --log-format json every line is a JSON object with its time; SIGHUP
# reopens the log file (moved away as logrotate does) instead of stopping;
# and the units in examples/systemd pass `systemd-analyze verify` with
# nothing to say (skipped where systemd-analyze is missing).
# usage: test_service.sh SHMSCHEDD SHMSCHED_GATEWAY SOURCE_ROOT UNIT_DIR
set -u
daemon=$(readlink -f "$1") gateway=$(readlink -f "$2") src=$3 units=$4
command -v python3 >/dev/null || { echo "SKIP: python3 is missing"; exit 77; }
dir=$(mktemp -d /tmp/shmsched-service-XXXXXX)
name=gwservice-$$
. "$(dirname "$0")/lib.sh"

# What systemd would hear: each datagram a line in $dir/notified.<who>.
listen() { # SOCKET FILE
	python3 -c '
import socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind(sys.argv[1])
with open(sys.argv[2], "a") as f:
    while True:
        f.write(s.recv(4096).decode().replace("\n", " ") + "\n")
        f.flush()
' "$1" "$2" &
	pids="$pids $!"
}
listen "$dir/notify.d" "$dir/notified.d"
listen "$dir/notify.g" "$dir/notified.g"
for _ in $(seq 100); do [ -S "$dir/notify.d" ] && [ -S "$dir/notify.g" ] && break; sleep 0.05; done

NOTIFY_SOCKET=$dir/notify.d "$daemon" --cluster "$src/examples/cluster.json" \
	--socket "$dir/s.sock" --workers 1 --no-pin --name "$name" --fresh \
	--log-format json --log-file "$dir/daemon.log" >"$dir/daemon.out" 2>&1 &
dpid=$!
pids="$pids $dpid"
check "shmschedd: READY=1 once it serves" wait_until "$dir/notified.d" "READY=1"
check "  ... after its ready line" grep -q "ready:" "$dir/daemon.out"
# No authentication configured: refused at start, saying what to give.
"$gateway" --socket "$dir/s.sock" --name "$name" --listen 127.0.0.1:0 \
	>"$dir/noauth.out" 2>&1
check "no --token-file nor --allow-anonymous: refused at start" test $? -ne 0
check "  ... naming both" grep -q -- "--token-file FILE.*--allow-anonymous" "$dir/noauth.out"
NOTIFY_SOCKET=$dir/notify.g "$gateway" --socket "$dir/s.sock" --name "$name" \
	--allow-anonymous \
	--listen 127.0.0.1:0 --log-format json --log-file "$dir/gateway.log" \
	>"$dir/gateway.out" 2>&1 &
gpid=$!
pids="$pids $gpid"
check "shmsched-gateway: READY=1 once it listens" wait_until "$dir/notified.g" "READY=1"
check "  ... and it logged that it connected" wait_until "$dir/gateway.log" "connected to the daemon"
check "--allow-anonymous: said loudly at start" grep -q '"level":"warn".*--allow-anonymous.*ANY LOCAL USER' "$dir/gateway.log"

# Every line of both logs: a JSON object with time, level, program, msg.
json_lines() { # FILE PROGRAM
	python3 -c '
import json, re, sys
n = 0
for line in open(sys.argv[1]):
    o = json.loads(line)
    assert set(o) == {"time", "level", "program", "msg"}, o
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z", o["time"]), o
    assert o["program"] == sys.argv[2] and o["level"] in ("error", "warn", "info", "debug"), o
    n += 1
assert n > 0
' "$1" "$2"
}
check "--log-format json: the daemon's lines" json_lines "$dir/daemon.log" shmschedd
check "--log-format json: the gateway's lines" json_lines "$dir/gateway.log" shmsched-gateway

# logrotate's way: move the files, SIGHUP, new files appear.
mv "$dir/daemon.log" "$dir/daemon.log.1"
mv "$dir/gateway.log" "$dir/gateway.log.1"
kill -HUP "$dpid" "$gpid"
check "SIGHUP: the daemon reopened its log" wait_until "$dir/daemon.log" "log reopened"
check "SIGHUP: the gateway reopened its log" wait_until "$dir/gateway.log" "log reopened"
check "  ... and both still run" kill -0 "$dpid" "$gpid"
check "  ... the old files kept what they had" grep -q "ready\|registered\|listening" "$dir/daemon.log.1"
check "  ... and told systemd RELOADING=1" grep -q "RELOADING=1" "$dir/notified.g"

kill -TERM "$gpid"
wait "$gpid" 2>/dev/null
kill -TERM "$dpid"
wait "$dpid" 2>/dev/null
check "SIGTERM: the gateway told STOPPING=1" grep -q "STOPPING=1" "$dir/notified.g"
check "SIGTERM: the daemon told STOPPING=1" grep -q "STOPPING=1" "$dir/notified.d"
check "  ... and logged that it stopped" grep -q '"msg":"stopped: ' "$dir/daemon.log"

# The units, pointed at this build, as systemd would read them.
if command -v systemd-analyze >/dev/null 2>&1; then
	sed "s|^ExecStart=[^ ]*|ExecStart=$daemon|" "$units/shmschedd.service" \
		>"$dir/shmschedd.service"
	sed "s|^ExecStart=[^ ]*|ExecStart=$gateway|" "$units/shmsched-gateway.service" \
		>"$dir/shmsched-gateway.service"
	for u in shmschedd.service shmsched-gateway.service; do
		out=$(systemd-analyze verify "$dir/$u" 2>&1)
		check "systemd-analyze verify $u: nothing to say" test -z "$out"
		[ -z "$out" ] || echo "$out"
	done
else
	echo "skip: systemd-analyze is missing"
fi

if [ "$failed" -ne 0 ]; then
	echo "$failed failed"
	for f in "$dir"/*.out "$dir"/notified.*; do echo "== $f"; cat "$f"; done
	exit 1
fi
echo "all passed"
