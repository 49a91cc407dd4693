#!/bin/sh
# stress.quotas_guide (issue 37): docs/guides/quotas.md's `sh` blocks,
# extracted as written and run in order (one bash -e script), in a
# temporary directory where build/ is this build and examples/ the
# source's. Then the guide's answers are checked against that run: every
# line of its plain ``` blocks (the output shown) that is not trimmed with
# "..." must be a line of the run's output, so an answer that changes
# (a node, a quota message, a refusal's file:line) fails here. Its first
# ```json block must be examples/quotas/teams.json as it is, and its
# second the first pod of examples/quotas/team-a.jsonl. Its daemons use
# fixed names (qg-*) and port 18081: the test is not run in parallel.
# A line of `shmsched placements` is compared without its first column:
# a placement's id says which free record its worker's cache held
# (shm/placements.c), which depends on which worker served the pod.
# usage: test_quotas_guide.sh SRCDIR BUILDDIR
set -u
src=$(readlink -f "$1") build=$(readlink -f "$2")
guide="$src/docs/guides/quotas.md"
dir=$(mktemp -d /tmp/shmsched-quotas-guide-XXXXXX)
cleanup() {
	rm -rf "$dir"
	rm -f /dev/shm/qg-teams /dev/shm/qg-taints /tmp/qg-teams.* \
		/tmp/qg-gw.* /tmp/qg-taints.* /tmp/qg-a6.json
}
trap cleanup EXIT
ln -s "$build" "$dir/build"
ln -s "$src/examples" "$dir/examples"

# The json blocks are the example files.
awk '/^```json$/ { n++; on = (n == 1); next } /^```/ { on = 0 } on' \
	"$guide" >"$dir/json1"
if ! cmp -s "$dir/json1" "$src/examples/quotas/teams.json"; then
	diff -u "$src/examples/quotas/teams.json" "$dir/json1"
	echo "FAIL: the guide's cluster file is not examples/quotas/teams.json"
	exit 1
fi
awk '/^```json$/ { n++; on = (n == 2); next } /^```/ { on = 0 } on' \
	"$guide" >"$dir/json2"
head -n 1 "$src/examples/quotas/team-a.jsonl" >"$dir/pod1"
if ! cmp -s "$dir/json2" "$dir/pod1"; then
	diff -u "$dir/pod1" "$dir/json2"
	echo "FAIL: the guide's pod is not examples/quotas/team-a.jsonl's first"
	exit 1
fi

. "$src/tests/docs/guide_answers.sh"
PATH="$build/cli:$PATH"
guide_run "$guide" "$dir" 120 /tmp/qg-teams.log /tmp/qg-gw.log

# The output blocks: plain ``` fences (an opening fence with no language).
awk '/^```/ { if (inb) { inb = 0; plain = 0 } else { inb = 1; plain = ($0 == "```") }; next }
	inb && plain' "$guide" | grep -v -F '...' >"$dir/expected"
sed -E 's/^[0-9]{10,} +//' "$dir/out" >"$dir/out_noid"
checked=0 missing=0
while IFS= read -r line; do
	[ -n "$line" ] || continue
	checked=$((checked + 1))
	noid=$(printf '%s\n' "$line" | sed -E 's/^[0-9]{10,} +//')
	if [ "$noid" != "$line" ]; then
		grep -Fxq -e "$noid" "$dir/out_noid" && continue
		echo "not in the run's output (its id aside): $line"
		missing=$((missing + 1))
	elif ! grep -Fxq -e "$line" "$dir/out"; then
		echo "not in the run's output: $line"
		missing=$((missing + 1))
	fi
done <"$dir/expected"
if [ "$missing" != 0 ] || [ "$checked" -lt 20 ]; then
	echo "== the run's output"
	cat "$dir/out"
	echo "FAIL: docs/guides/quotas.md: $missing of $checked answer lines differ from the run"
	exit 1
fi
echo "ok: docs/guides/quotas.md: its sh blocks ran, $checked answer lines match"
