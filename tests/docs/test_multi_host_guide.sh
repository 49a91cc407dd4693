#!/bin/sh
# stress.multi_host_guide (issue 40): docs/guides/multi-host.md's `sh`
# blocks, extracted as written and run in order (one bash -e script), in
# a temporary directory where build/ is this build: a 3-member etcd from
# Debian's etcd-server with auto-compaction, a defragmentation, three
# shmschedd hosts joining, `shmsched cluster status`, pods refused with
# the shard message, a host SIGKILLed and its shards taken over. Then
# every line of the guide's plain ``` blocks (the output shown) that is
# not trimmed with "..." must be a line of the run's output. The guide
# uses fixed ports (etcd 23791-23793 and 23801-23803, the gateway 18083)
# and /tmp/mh-guide: the test is not run in parallel. Exit 77 (skip)
# without etcd, etcdctl or curl.
# usage: test_multi_host_guide.sh SRCDIR BUILDDIR
set -u
src=$(readlink -f "$1") build=$(readlink -f "$2")
guide="$src/docs/guides/multi-host.md"
for tool in etcd etcdctl curl; do
	command -v "$tool" >/dev/null 2>&1 || {
		echo "SKIP: $tool is missing (Debian packages etcd-server, etcd-client, curl)"
		exit 77
	}
done
if [ -e /tmp/mh-guide ]; then
	echo "FAIL: /tmp/mh-guide exists (another run of this guide?): remove it first"
	exit 1
fi
dir=$(mktemp -d /tmp/shmsched-multi-host-guide-XXXXXX)
cleanup() {
	rm -rf "$dir" /tmp/mh-guide
}
trap cleanup EXIT
ln -s "$build" "$dir/build"
. "$src/tests/docs/guide_answers.sh"
# A failed step leaves no member or host behind: every one is a job of
# the steps, which guide_run's trap ends (etcd flushes its log).
PATH="$build/cli:$PATH"
guide_run "$guide" "$dir" 120 /tmp/mh-guide/host-a.log /tmp/mh-guide/host-b.log \
	/tmp/mh-guide/host-c.log /tmp/mh-guide/gw.log /tmp/mh-guide/m1.log
guide_answers "$guide" "$dir/out" 25
