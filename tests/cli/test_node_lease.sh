#!/bin/sh
# unit.node_lease_cli: `shmsched node lease NAME` and shmschedd
# --node-monitor-grace-period (issue 38) end to end, the daemon's own
# clock and lease thread: a node leased under a 1s grace period and then
# silent is shown Unknown by `shmsched status --node` within 3 s (the
# thread checks every second); a renewal clears it at once; a node never
# leased is never shown so; a lease for no such node is refused; bad
# durations are exit 2 naming the value. Before, `node lease` was an
# unknown event (exit 2) and the option unrecognized. (The timing itself
# is checked on a stepped clock by unit.node_lease.)
# usage: test_node_lease.sh SHMSCHEDD SHMSCHED
set -u
daemon=$1
cli=$2
dir=$(mktemp -d /tmp/shmsched-lease-XXXXXX)
name=shmsched-lease-cli-$$
pid=
cleanup() {
	[ -n "$pid" ] && kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null
	rm -f "/dev/shm/$name"
	rm -rf "$dir"
}
trap cleanup EXIT
failed=0
fail() { echo "FAIL: $*"; failed=$((failed + 1)); }

for bad in 0s 10x -5s 25h ""; do
	"$daemon" --node-monitor-grace-period "$bad" >"$dir/out" 2>"$dir/err"
	[ "$?" -eq 2 ] || fail "duration \"$bad\": not exit 2"
	grep -qF -e "--node-monitor-grace-period: \"$bad\" is not a duration" "$dir/err" ||
		fail "duration \"$bad\": $(cat "$dir/err")"
done

cat >"$dir/cluster.json" <<'JSON'
{"kind":"List","items":[
{"kind":"Node","metadata":{"name":"n1"},"status":{"allocatable":{"cpu":"4","memory":"8Gi","pods":"110"}}},
{"kind":"Node","metadata":{"name":"n2"},"status":{"allocatable":{"cpu":"4","memory":"8Gi","pods":"110"}}}]}
JSON
"$daemon" --cluster "$dir/cluster.json" --name "$name" --fresh --workers 1 \
	--no-pin --socket "$dir/s.sock" --node-monitor-grace-period 1s \
	>"$dir/out" 2>"$dir/err" &
pid=$!
i=0
while [ "$i" -lt 100 ] && ! [ -S "$dir/s.sock.admin" ]; do
	sleep 0.1
	i=$((i + 1))
done
[ -S "$dir/s.sock.admin" ] || fail "the daemon did not start: $(cat "$dir/err")"
admin="--admin-socket $dir/s.sock.admin"

"$cli" node lease nope $admin >"$dir/out" 2>"$dir/err"
[ "$?" -eq 1 ] || fail "lease of no such node: not exit 1"
grep -qF 'node nope: lease: no such node' "$dir/err" || fail "nope: $(cat "$dir/err")"

"$cli" node lease n1 $admin >"$dir/out" 2>"$dir/err" || fail "lease n1: $(cat "$dir/err")"
unknown() { "$cli" status --name "$name" --node "$1" | head -1 | grep -q 'Unknown'; }
unknown n1 && fail "n1 Unknown right after its lease"
i=0
while [ "$i" -lt 40 ] && ! unknown n1; do
	sleep 0.1
	i=$((i + 1))
done
unknown n1 || fail "n1 not Unknown 4 s after its last lease: $("$cli" status --name "$name" --node n1)"
unknown n2 && fail "n2, never leased, shown Unknown"
"$cli" status --name "$name" --summary | grep -qF '(0 cordoned, 1 Unknown)' ||
	fail "totals: $("$cli" status --name "$name" --summary)"
"$cli" node lease n1 $admin >"$dir/out" 2>"$dir/err" || fail "lease n1 again: $(cat "$dir/err")"
unknown n1 && fail "n1 still Unknown after its renewal"

[ "$failed" -eq 0 ] && echo "node_lease_cli: all checks passed"
exit "$failed"
