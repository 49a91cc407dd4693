# tests/gateway/lib.sh: what the gateway's shell tests (test_security.sh, test_rights.sh,
# test_service.sh, test_nginx.sh) share, sourced after they set
#   dir   their temporary directory (removed on exit),
#   name  the daemon's state region (/dev/shm/$name removed on exit).
# It sets pids (add each background process: killed and waited for on
# exit), failed=0 and the exit trap, and defines:
#   check NAME COMMAND...   runs COMMAND: "ok: NAME" or "FAIL: NAME" and
#                           one more in $failed;
#   wait_until FILE PATTERN whether FILE says PATTERN within 10 s;
#   wait_for FILE PATTERN   the same, or the test stops (exit 1) showing
#                           FILE;
#   gateway_up LOG          waits until the gateway logging to LOG listens
#                           and has reached the daemon, and sets port and
#                           url to its main listener's.
pids=""
cleanup() {
	for p in $pids; do kill "$p" 2>/dev/null; done
	for p in $pids; do wait "$p" 2>/dev/null; done
	rm -f "/dev/shm/$name"
	rm -rf "$dir"
}
trap cleanup EXIT
failed=0
check() { # NAME COMMAND...
	what=$1
	shift
	if "$@"; then echo "ok: $what"; else echo "FAIL: $what"; failed=$((failed + 1)); fi
}
wait_until() { # FILE PATTERN
	for _ in $(seq 200); do
		grep -q "$2" "$1" 2>/dev/null && return 0
		sleep 0.05
	done
	return 1
}
wait_for() { # FILE PATTERN
	wait_until "$1" "$2" && return 0
	echo "FAIL: $1 never said $2:"; cat "$1"; exit 1
}
gateway_up() { # LOG
	wait_for "$1" "ready: listening on port"
	wait_for "$1" "connected to the daemon"
	port=$(sed -n 's/.*listening on port \([0-9]*\).*/\1/p' "$1")
	url=http://127.0.0.1:$port
}
