#!/bin/sh
# unit.place_quota (issue 37 Deliver 2): `shmsched place` applies the
# cluster file's Kueue quotas in its one pass, as the daemon does
# (cli/place_quota.h). On docs/guides/quotas.md's example
# (examples/quotas/teams.json), team-a's five pods get the daemon's
# answers, copied from the guide's run through shmschedd (a-1 within
# nominal, a-2 and a-3 borrowing, a-4 on the spot flavor's node, a-5
# refused naming the ClusterQueue, each flavor and the cohort), with no
# warning; --reference gives the same; team-b's pods after them get the
# daemon's answers too (b-2 refused: the cohort lent out); a label naming
# no LocalQueue is refused by name. The old `place` warned and placed
# all five on capacity.
# usage: test_place_quota.sh SHMSCHED EXAMPLES_DIR
set -u
cli=$1 ex=$2
dir=$(mktemp -d /tmp/shmsched-place-quota-XXXXXX)
trap 'rm -rf "$dir"' EXIT
failed=0
fail() { echo "FAIL: $*"; failed=$((failed + 1)); }
ok() { echo "ok: $*"; }

cat >"$dir/want-a" <<'WANT'
{"pod":"team-a/a-1","node":"od-2"}
{"pod":"team-a/a-2","node":"od-1"}
{"pod":"team-a/a-3","node":"od-1"}
{"pod":"team-a/a-4","node":"spot-1"}
{"pod":"team-a/a-5","node":null,"message":"ClusterQueue \"team-a\": cpu 6000m/4000m of its nominal quota in flavor \"on-demand\" (asks 1000m); its borrowingLimit 2000m from cohort \"org\" is reached. Flavor \"spot\": cpu 2000m/2000m of its nominal quota (asks 1000m); cohort \"org\": nothing left to borrow (2000m/2000m in use)"}
WANT
for mode in fast reference; do
	flag=
	[ "$mode" = reference ] && flag=--reference
	"$cli" place --cluster "$ex/quotas/teams.json" --pods "$ex/quotas/team-a.jsonl" \
		$flag >"$dir/out" 2>"$dir/err"
	rc=$?
	[ "$rc" -eq 0 ] || fail "$mode: exit status $rc: $(cat "$dir/err")"
	if cmp -s "$dir/want-a" "$dir/out"; then
		ok "$mode: team-a's answers are the daemon's"
	else
		fail "$mode: team-a's answers differ from the daemon's:"
		diff "$dir/want-a" "$dir/out"
	fi
	[ -s "$dir/err" ] && fail "$mode: stderr: $(cat "$dir/err")"
done

cat "$ex/quotas/team-a.jsonl" "$ex/quotas/team-b.jsonl" >"$dir/ab.jsonl"
"$cli" place --cluster "$ex/quotas/teams.json" --pods "$dir/ab.jsonl" >"$dir/out" 2>&1
# has LINE: the output holds that exact line.
has() { grep -qxF -- "$1" "$dir/out" && ok "$1" || fail "no line $1"; }
has '{"pod":"team-b/b-1","node":"od-2"}'
has '{"pod":"team-b/b-2","node":null,"message":"ClusterQueue \"team-b\": cpu 4000m/6000m of its nominal quota in flavor \"on-demand\" (asks 1000m); cohort \"org\": nothing left to borrow (7000m/7000m in use). Flavor \"spot\": cpu 0m/0m of its nominal quota (asks 1000m); cohort \"org\": nothing left to borrow (2000m/2000m in use)"}'

sed -e 's/"name": "a-1"/"name": "a-7"/' -e 's/queue-name": "jobs"/queue-name": "batch"/' \
	"$ex/quotas/team-a.jsonl" | head -n 1 >"$dir/bad.jsonl"
"$cli" place --cluster "$ex/quotas/teams.json" --pods "$dir/bad.jsonl" >"$dir/out" 2>&1
has '{"pod":"team-a/a-7","node":null,"message":"metadata.labels[\"kueue.x-k8s.io/queue-name\"]: LocalQueue team-a/batch doesn'"'"'t exist (expected a LocalQueue of the pod'"'"'s namespace)"}'

[ "$failed" -eq 0 ] || { echo "$failed check(s) failed"; exit 1; }
echo "place_quota: all checks passed"
