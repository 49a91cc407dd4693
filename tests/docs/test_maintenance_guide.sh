#!/bin/sh
# stress.maintenance_guide (issue 38): docs/guides/maintenance.md's `sh`
# blocks, extracted as written and run in order (one bash -e script), in
# a temporary directory where build/ is this build. Then the guide's
# answers are checked against that run: every line of its plain ```
# blocks (the output shown) that is not trimmed with "..." must be a line
# of the run's output, so an answer that changes (a drain's line, a
# lease's taint, a failure report's verdict, a pool's listing, a metric)
# fails here. Its daemon uses a fixed name (mg-guide), /tmp/mg-guide and
# port 18082: the test is not run in parallel.
# usage: test_maintenance_guide.sh SRCDIR BUILDDIR
set -u
src=$(readlink -f "$1") build=$(readlink -f "$2")
guide="$src/docs/guides/maintenance.md"
command -v curl >/dev/null 2>&1 || { echo "SKIP: curl is missing"; exit 77; }
dir=$(mktemp -d /tmp/shmsched-maintenance-guide-XXXXXX)
cleanup() {
	rm -rf "$dir" /tmp/mg-guide
	rm -f /dev/shm/mg-guide
}
trap cleanup EXIT
ln -s "$build" "$dir/build"
. "$src/tests/docs/guide_answers.sh"
PATH="$build/cli:$PATH"
guide_run "$guide" "$dir" 120 /tmp/mg-guide/daemon.log /tmp/mg-guide/gw.log
guide_answers "$guide" "$dir/out" 30
