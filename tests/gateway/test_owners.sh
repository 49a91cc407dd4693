#!/bin/sh
# stress.gateway_owners: issue 41, who placed each pod kept across a gateway
# restart (shmsched-gateway --owners-file, gateway/owners_log.h). With curl
# against a real shmschedd:
#   - the file is created 0600; a placement appends "+ USER NS/NAME" (a
#     user name with a space escaped %20), a release "- USER NS/NAME";
#   - after a restart (SIGTERM, and kill -9) with the same file, each user
#     reaches its own pods again (GET, DELETE), another user still gets 404
#     (as kube hides what one may not read), the admin group sees all, and
#     another user cannot take the name (409);
#   - an entry for a pod the daemon does not hold (a crash between append
#     and placement, simulated by a line written by hand; a pod answered
#     unschedulable) is dropped at the start and the file compacted: its
#     user gets nothing, and another user may then place that name;
#   - a tampered file is refused at start naming PATH:LINE (a bad line, a
#     NUL byte), or PATH and what was expected (mode 0644, a symlink, a
#     directory, another uid's when run as root); an unfinished last line
#     (a crash mid-write) is cut off with a warning;
#   - dead lines (pods answered unschedulable) are compacted away at run
#     time once they outnumber the live entries.
# On the code before --owners-file the option is unknown (the first start
# fails), and without the file a restarted gateway answers alice 404 for
# her own pod (stress.gateway_security checks that behaviour).
# usage: test_owners.sh SHMSCHEDD SHMSCHED_GATEWAY SOURCE_ROOT
set -u
daemon=$1 gateway=$2 src=$3
command -v curl >/dev/null 2>&1 || { echo "SKIP: curl is missing"; exit 77; }
dir=$(mktemp -d /tmp/shmsched-gwowners-XXXXXX)
name=gwowners-$$
. "$(dirname "$0")/lib.sh"

cp "$src/examples/cluster.json" "$dir/cluster.json"
daemon_start

cat >"$dir/tokens.csv" <<'EOF'
alice-token-0123456789,alice,1001
bob-token-9876543210,bob,1002
carol-token-5555555555,"carol smith",1003
root-token-abcdef,root-admin,0,"system:masters"
EOF
chmod 600 "$dir/tokens.csv"
ALICE="Authorization: Bearer alice-token-0123456789"
BOB="Authorization: Bearer bob-token-9876543210"
CAROL="Authorization: Bearer carol-token-5555555555"
ROOT="Authorization: Bearer root-token-abcdef"
pod() { # NAME [CPU]
	printf '{"kind":"Pod","metadata":{"name":"%s","namespace":"own"},"spec":{"containers":[{"name":"c","resources":{"requests":{"cpu":"%s"}}}]}}\n' "$1" "${2:-10m}"
}
owners=$dir/owners
gw_start() { # LOG [OWNERS]: a gateway in the background, up
	"$gateway" --socket "$dir/s.sock" --name "$name" --listen 127.0.0.1:0 \
		--token-file "$dir/tokens.csv" --owners-file "${2:-$owners}" \
		>"$1" 2>&1 &
	gpid=$!
	pids="$pids $gpid"
	gateway_up "$1"
}
gw_refused() { # LOG OWNERS: the gateway does not start
	"$gateway" --socket "$dir/s.sock" --name "$name" --listen 127.0.0.1:0 \
		--token-file "$dir/tokens.csv" --owners-file "$2" >"$1" 2>&1
	test $? -ne 0
}

# --- a first gateway: the file is written ---------------------------------
gw_start "$dir/gw1.log"
check "the owners file is created 0600" test "$(stat -c %a "$owners")" = 600
check "alice places own/a1" test "$(code -H "$ALICE" -X POST -d "$(pod a1)" "$url/v1/placements")" = 200
check "alice places own/a2" test "$(code -H "$ALICE" -X POST -d "$(pod a2)" "$url/v1/placements")" = 200
check "bob places own/b1" test "$(code -H "$BOB" -X POST -d "$(pod b1)" "$url/v1/placements")" = 200
check "carol smith places own/c1" test "$(code -H "$CAROL" -X POST -d "$(pod c1)" "$url/v1/placements")" = 200
code -H "$ALICE" -X POST -d "$(pod huge 1000)" "$url/v1/placements" >/dev/null
check "alice's own/huge is not placed (1000 cpu)" grep -q '"node":null' "$dir/body"
check "alice releases own/a2" test "$(code -H "$ALICE" -X DELETE "$url/v1/placements/own/a2")" = 200
check "the file: its header" test "$(head -n 1 "$owners")" = "shmsched-gateway owners v1"
check "  ... alice's a1" grep -qx '+ alice own/a1' "$owners"
check "  ... a user name with a space escaped" grep -qx '+ carol%20smith own/c1' "$owners"
check "  ... a2's tombstone" grep -qx -- '- alice own/a2' "$owners"
kill -TERM "$gpid"
wait "$gpid"
check "the gateway stops cleanly (exit 0; sanitizers would say otherwise)" test $? -eq 0

# A crash between append and placement leaves a line for a pod the daemon
# does not hold: bob's own/ghost.
echo '+ bob own/ghost' >>"$owners"

# --- restarted with the same file ----------------------------------------
gw_start "$dir/gw2.log"
check "restarted: the log counts the owners kept and the entries dropped" \
	grep -q 'owners-file: 3 owner(s) of placements the daemon holds, 2 entry(ies) it does not hold dropped' "$dir/gw2.log"
check "restarted: alice reaches her own/a1" test "$(code -H "$ALICE" "$url/v1/placements/own/a1")" = 200
check "  ... bob gets 404 for it (GET)" test "$(code -H "$BOB" "$url/v1/placements/own/a1")" = 404
check "  ... and DELETE" test "$(code -H "$BOB" -X DELETE "$url/v1/placements/own/a1")" = 404
check "  ... nor may he place that name" test "$(code -H "$BOB" -X POST -d "$(pod a1)" "$url/v1/placements")" = 409
check "  ... system:masters sees it" test "$(code -H "$ROOT" "$url/v1/placements/own/a1")" = 200
check "restarted: bob reaches his own/b1" test "$(code -H "$BOB" "$url/v1/placements/own/b1")" = 200
check "  ... alice does not" test "$(code -H "$ALICE" "$url/v1/placements/own/b1")" = 404
check "restarted: carol smith reaches her own/c1" test "$(code -H "$CAROL" "$url/v1/placements/own/c1")" = 200
check "the file was compacted: no tombstone" sh -c "! grep -q '^-' '$owners'"
check "  ... no stale own/ghost, no unplaced own/huge" sh -c "! grep -q 'ghost\|huge' '$owners'"
check "  ... still 0600" test "$(stat -c %a "$owners")" = 600
check "bob's stale own/ghost gave him nothing" test "$(code -H "$BOB" "$url/v1/placements/own/ghost")" = 404
check "  ... alice places that name" test "$(code -H "$ALICE" -X POST -d "$(pod ghost)" "$url/v1/placements")" = 200
check "  ... hers, not bob's" test "$(code -H "$BOB" "$url/v1/placements/own/ghost")" = 404
check "alice releases her own/a1 after the restart" test "$(code -H "$ALICE" -X DELETE "$url/v1/placements/own/a1")" = 200
check "alice places own/a3" test "$(code -H "$ALICE" -X POST -d "$(pod a3)" "$url/v1/placements")" = 200
# kill -9: the lines were synced before the pods were submitted.
kill -KILL "$gpid"
wait "$gpid" 2>/dev/null
gw_start "$dir/gw3.log"
check "after kill -9: alice reaches own/a3" test "$(code -H "$ALICE" "$url/v1/placements/own/a3")" = 200
check "  ... and own/ghost" test "$(code -H "$ALICE" "$url/v1/placements/own/ghost")" = 200
check "  ... not own/a1 (released)" test "$(code -H "$ALICE" "$url/v1/placements/own/a1")" = 404
check "  ... bob gets 404 for own/a3" test "$(code -H "$BOB" "$url/v1/placements/own/a3")" = 404
kill -TERM "$gpid"
wait "$gpid"
check "the third gateway stops cleanly" test $? -eq 0

# --- tampered files: refused at start, naming what is wrong ------------------
cp "$owners" "$dir/bad"
echo '+ alice own' >>"$dir/bad"
lines=$(wc -l <"$dir/bad")
check "a bad line: refused" gw_refused "$dir/bad.out" "$dir/bad"
check "  ... naming PATH:LINE" grep -q "$dir/bad:$lines: the pod: no '/' between namespace and name" "$dir/bad.out"
cp "$owners" "$dir/bad2"
printf '+ alice own/x\000y\n' >>"$dir/bad2"
lines=$(wc -l <"$dir/bad2")
check "a NUL byte: refused" gw_refused "$dir/nul.out" "$dir/bad2"
check "  ... naming PATH:LINE and the column" grep -q "$dir/bad2:$lines: a NUL byte at column 14" "$dir/nul.out"
cp "$owners" "$dir/bad3"
echo '+ alice own/%41' >>"$dir/bad3"
check "a needless escape (one spelling only): refused" gw_refused "$dir/esc.out" "$dir/bad3"
check "  ... saying so" grep -q "bad3:[0-9]*: the pod, column 13: an escape of a byte" "$dir/esc.out"
cp "$owners" "$dir/mode"
chmod 644 "$dir/mode"
check "mode 0644: refused" gw_refused "$dir/mode.out" "$dir/mode"
check "  ... naming the path and what was expected" grep -q "$dir/mode: mode 0644; expected 0600" "$dir/mode.out"
ln -s "$owners" "$dir/link"
check "a symbolic link: refused" gw_refused "$dir/link.out" "$dir/link"
check "  ... saying so" grep -q "$dir/link: a symbolic link; expected a regular file" "$dir/link.out"
mkdir "$dir/adir"
check "a directory: refused" gw_refused "$dir/dir.out" "$dir/adir"
check "  ... saying so" grep -q "$dir/adir: a directory; expected a regular file" "$dir/dir.out"
if [ "$(id -u)" = 0 ]; then
	cp "$owners" "$dir/theirs"
	chown nobody "$dir/theirs"
	check "another uid's file: refused" gw_refused "$dir/uid.out" "$dir/theirs"
	check "  ... naming the uids" grep -q "$dir/theirs: owned by uid $(id -u nobody); expected the gateway's uid 0" "$dir/uid.out"
else
	echo "skip: another uid's file needs root (chown)"
fi
check "the refusals wrote nothing: the file is as it was" cmp -s "$owners" "$dir/mode"

# An unfinished last line: cut off, with a warning; the gateway starts.
printf '+ alice own/torn' >>"$owners"
gw_start "$dir/gw4.log"
check "an unfinished last line: cut off, with a warning" grep -q 'had no end: a write the gateway did not finish, cut off' "$dir/gw4.log"
check "  ... and alice still reaches own/a3" test "$(code -H "$ALICE" "$url/v1/placements/own/a3")" = 200
check "  ... the file ends in a whole line" test "$(tail -c 1 "$owners" | od -An -c | tr -d ' ')" = '\n'
# Run-time compaction: 1,500 pods answered unschedulable leave 1,500 dead
# lines; once they outnumber the live ones (and pass 1,024) the file is
# rewritten with the live ones alone.
for batch in 1 2 3; do
	i=0
	while [ "$i" -lt 500 ]; do pod "dead-$batch-$i" 1000; i=$((i + 1)); done >"$dir/dead.jsonl"
	code -H "$ALICE" -X POST --data-binary "@$dir/dead.jsonl" "$url/v1/placements" >/dev/null
done
check "1,500 unschedulable pods: answered" test "$(grep -c '"node":null' "$dir/body")" = 500
check "  ... their dead lines compacted away at run time" test "$(wc -l <"$owners")" -lt 600
check "  ... alice still reaches own/a3" test "$(code -H "$ALICE" "$url/v1/placements/own/a3")" = 200
kill -TERM "$gpid"
wait "$gpid"
check "the fourth gateway stops cleanly" test $? -eq 0

if [ "$failed" -ne 0 ]; then
	for f in gw1.log gw2.log gw3.log gw4.log owners; do echo "--- $f"; cat "$dir/$f"; done
fi
echo "$failed failed"
exit $((failed > 0))
