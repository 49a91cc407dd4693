#!/bin/sh
# stress.admin_uid (issue 41): --admin-uid and --admin-gid admit another
# user to the admin socket. The socket's mode lets exactly them reach it
# (0666 for another uid, 0660 and the group for one gid); the credential
# check (SO_PEERCRED) refuses everyone else with an ERROR naming who is
# admitted. Without them the socket stays 0600 and nobody is refused.
# Runs `shmsched node` and `shmsched placements` as nobody (setpriv).
# usage: test_admin_uid.sh SHMSCHEDD SHMSCHED CLUSTER_JSON
set -u
daemon=$1 cli=$2 cluster=$3
if [ "$(id -u)" -ne 0 ] || ! command -v setpriv >/dev/null; then
	echo "skipped: needs root and setpriv to run as nobody"
	exit 77
fi
dir=$(mktemp -d /tmp/shmsched-admin-XXXXXX)
chmod 0711 "$dir" # others may enter, not list
pid=
stop() { [ -n "$pid" ] && kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null; pid=; }
cleanup() { stop; rm -rf "$dir"; }
trap cleanup EXIT
failed=0
fail() { echo "FAIL: $*"; failed=$((failed + 1)); }
# start ARGS...: a daemon on $dir/s.sock with ARGS; waits until ready.
start() {
	stop
	log=$dir/daemon.log
	"$daemon" --cluster "$cluster" --socket "$dir/s.sock" --workers 1 --no-pin \
		--ephemeral "$@" >"$log" 2>&1 &
	pid=$!
	# Its own ready line and the admin socket both there ('ready' alone
	# also matches "already" in a refusal); a daemon that exits is told.
	for _ in $(seq 100); do
		grep -q 'shmschedd: ready' "$log" && [ -S "$dir/s.sock.admin" ] &&
			return 0
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.1
	done
	echo "daemon did not start:"; cat "$log"; exit 1
}
# as UID GID STATUS PATTERN ARGS...: shmsched ARGS as UID:GID, checks both.
as() {
	uid=$1 gid=$2 want=$3 pattern=$4
	shift 4
	out=$(setpriv --reuid="$uid" --regid="$gid" --clear-groups "$cli" "$@" 2>&1)
	got=$?
	if [ "$got" -ne "$want" ] || ! printf '%s' "$out" | grep -q -- "$pattern"; then
		fail "as $uid:$gid: shmsched $*: exit $got (want $want), output: $out"
	else
		echo "ok: as $uid:$gid: shmsched $* -> $got"
	fi
}
mode() {
	got=$(stat -c '%a %g' "$dir/s.sock.admin")
	[ "$got" = "$1" ] && echo "ok: admin socket mode and group $got" ||
		fail "admin socket mode and group $got (want $1)"
}
A="--admin-socket $dir/s.sock.admin"

# Without --admin-uid: 0600, and nobody cannot even connect.
start
mode "600 $(id -g)"
as 65534 65534 1 "ermission denied" node cordon n1 $A
as 65534 65534 1 "ermission denied" placements $A

# --admin-uid 65534: 0666, nobody is an admin; another uid reaches the
# socket but the credential check refuses it, naming who is admitted.
start --admin-uid 65534
mode "666 $(id -g)"
as 65534 65534 0 "done" node cordon n1 $A
as 65534 65534 0 "done" node uncordon n1 $A
as 65534 65534 0 "live" placements $A
as 65533 65533 1 "may not use the shmsched daemon.*allowed uids {65534}" node cordon n1 $A
# The daemon's own uid was not named: not an admin either.
as 0 0 1 "may not use" node cordon n1 $A

# --admin-gid 65533: 0660 and that group; a member gets in, others not.
start --admin-gid 65533
mode "660 65533"
as 65534 65533 0 "done" node cordon n1 $A
as 65534 65534 1 "ermission denied" node cordon n1 $A

if [ "$failed" -ne 0 ]; then
	echo "$failed failed"
	exit 1
fi
echo "all passed"
