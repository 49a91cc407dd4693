#!/bin/sh
# unit.daemon_fields: shmschedd --field-validation (issue 35). A --cluster
# file with a misspelt field (status.alocatable) is refused at start under
# Strict, the default, naming the field and the one meant; under Warn the
# daemon starts and logs the field; a bad level is exit 2. Before, the
# node loaded with no allocatable at all, silently.
# usage: test_daemon_fields.sh SHMSCHEDD
set -u
daemon=$1
dir=$(mktemp -d /tmp/shmsched-dfields-XXXXXX)
pid=
cleanup() {
	[ -n "$pid" ] && kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null
	rm -rf "$dir"
}
trap cleanup EXIT
failed=0
fail() { echo "FAIL: $*"; failed=$((failed + 1)); }

cat >"$dir/cluster.json" <<'JSON'
{"kind":"List","items":[{"kind":"Node","metadata":{"name":"n1"},"status":{"alocatable":{"cpu":"4","memory":"8Gi","pods":"110"}}}]}
JSON
timeout 20 "$daemon" --cluster "$dir/cluster.json" --ephemeral --workers 1 \
	--socket "$dir/s.sock" >"$dir/out" 2>"$dir/err"
rc=$?
[ "$rc" -ne 0 ] && [ "$rc" -ne 124 ] || fail "Strict: exit $rc, want a refusal"
grep -qF 'node n1: status.alocatable: unknown field (did you mean status.allocatable?)' "$dir/err" ||
	fail "Strict: $(cat "$dir/err")"

"$daemon" --cluster "$dir/cluster.json" --ephemeral --workers 1 \
	--socket "$dir/w.sock" --field-validation=Warn >"$dir/out" 2>"$dir/err" &
pid=$!
i=0
while [ "$i" -lt 100 ] && ! [ -S "$dir/w.sock" ]; do
	sleep 0.1
	i=$((i + 1))
done
[ -S "$dir/w.sock" ] || fail "Warn: the daemon did not start: $(cat "$dir/err")"
grep -q 'warn.*status.alocatable: unknown field' "$dir/err" ||
	fail "Warn: no warning logged: $(cat "$dir/err")"
kill "$pid"
wait "$pid"
pid=

"$daemon" --field-validation=Lax >"$dir/out" 2>"$dir/err"
[ "$?" -eq 2 ] || fail "bad level: not exit 2"
grep -qF '"Lax": expected Strict, Warn or Ignore' "$dir/err" || fail "bad level: $(cat "$dir/err")"

[ "$failed" -eq 0 ] && echo "daemon_fields: all checks passed"
exit "$failed"
