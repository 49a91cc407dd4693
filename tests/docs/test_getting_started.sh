#!/bin/sh
# stress.getting_started (issue 35): docs/getting-started.md's `sh` code
# blocks, extracted as written and run in order (one bash -e script, so a
# failing command fails the test), in a temporary directory where build/
# is this build and examples/ the source's, with PATH at the build's
# programs. The guide's other blocks (```bash: the build itself; plain:
# sample output) are not run. Its daemons use fixed names (gs-*): the
# test is not run in parallel, and removes what they leave.
# usage: test_getting_started.sh SRCDIR BUILDDIR
set -u
src=$(readlink -f "$1") build=$(readlink -f "$2")
dir=$(mktemp -d /tmp/shmsched-guide-XXXXXX)
cleanup() {
	rm -rf "$dir"
	rm -f /dev/shm/gs-producer /dev/shm/gs-nodes /dev/shm/gs-gateway \
		/dev/shm/gs-crash
}
trap cleanup EXIT
ln -s "$build" "$dir/build"
ln -s "$src/examples" "$dir/examples"
{
	# A failed step leaves no daemon behind.
	echo 'trap '\''kill $(jobs -p) 2>/dev/null || true'\'' EXIT'
	awk '/^```sh$/ { on = 1; next } /^```/ { on = 0 } on' \
		"$src/docs/getting-started.md"
} >"$dir/steps.sh"
blocks=$(grep -c '^```sh$' "$src/docs/getting-started.md")
if [ "$blocks" -lt 5 ]; then
	echo "FAIL: only $blocks sh blocks in docs/getting-started.md"
	exit 1
fi
cd "$dir" || exit 1
PATH="$build/cli:$build/examples:$build/bench:$PATH" timeout 240 \
	bash -e -x steps.sh >"$dir/out" 2>&1
rc=$?
if [ "$rc" != 0 ]; then
	cat "$dir/out"
	for f in /tmp/gs-*.log; do [ -f "$f" ] && { echo "== $f"; cat "$f"; }; done
	echo "FAIL: docs/getting-started.md's commands: exit $rc"
	exit 1
fi
echo "ok: docs/getting-started.md: $blocks sh blocks ran"
