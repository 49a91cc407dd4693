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
blocks=$(grep -c '^```sh$' "$src/docs/getting-started.md")
if [ "$blocks" -lt 5 ]; then
	echo "FAIL: only $blocks sh blocks in docs/getting-started.md"
	exit 1
fi
. "$src/tests/docs/guide_answers.sh"
PATH="$build/cli:$build/examples:$build/bench:$PATH"
guide_run -x "$src/docs/getting-started.md" "$dir" 240 '/tmp/gs-*.log'
echo "ok: docs/getting-started.md: $blocks sh blocks ran"
