# tests/daemon/lib.sh: what the daemon's shell tests (test_owner.sh,
# test_start.sh) share, sourced after they set $dir. It sets failed=0 and
# defines:
#   fail MESSAGE            "FAIL: MESSAGE", one more in $failed;
#   ok MESSAGE              "ok: MESSAGE";
#   run_daemon LOG COMMAND...  starts COMMAND (a shmschedd) with its output
#                           in LOG, waits for "ready" (then stops it with
#                           SIGTERM: 0) or for its exit (its status). 124:
#                           neither in 20 s (it is killed).
failed=0
fail() { echo "FAIL: $*"; failed=$((failed + 1)); }
ok() { echo "ok: $*"; }
run_daemon() {
	log=$1
	shift
	"$@" >"$log" 2>&1 &
	p=$!
	for _ in $(seq 200); do
		if grep -q 'shmschedd: ready' "$log"; then
			kill -TERM "$p"
			wait "$p"
			return 0
		fi
		kill -0 "$p" 2>/dev/null || break
		sleep 0.1
	done
	if kill -0 "$p" 2>/dev/null; then
		kill -9 "$p"
		wait "$p" 2>/dev/null
		return 124
	fi
	wait "$p"
}
