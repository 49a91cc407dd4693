#!/bin/sh
# stress.start (issue 35, item 2): the daemon's start-up state is explicit.
#  (a) a bad --cluster path, or a --config that does not parse: exit
#      non-zero and no /dev/shm/NAME made (the old daemon made an empty
#      region first, and the corrected start then came up with 0 nodes);
#  (b) the corrected start: "created" with the file's nodes;
#  (c) the same --cluster again: "resumed"; another cluster file: refused,
#      naming both files and --resume/--fresh; --resume: resumed (the old
#      nodes); --fresh: rebuilt from the new file (the count changes);
#  (d) --state-dir: the region removed, a start rebuilds it "from the
#      store"; --fresh with --state-dir reads --cluster (the old daemon
#      rebuilt from the store whatever --fresh said);
#  (e) neither --cluster nor --synthetic on a new state: exit 2 naming both
#      (the old daemon invented 1,000 nodes); both: exit 2.
# Every /dev/shm file made here is removed on exit.
# usage: test_start.sh SHMSCHEDD
set -u
daemon=$(readlink -f "$1")
tag=start-$$
dir=$(mktemp -d /tmp/shmsched-start-XXXXXX)
cleanup() {
	rm -f /dev/shm/"$tag"-* /dev/shm/."$tag"-*
	rm -rf "$dir"
}
trap cleanup EXIT
. "$(dirname "$0")/lib.sh"

# start LOG ARGS...: run_daemon (lib.sh) of shmschedd on $dir/s.sock with
# ARGS.
start() {
	start_log=$1
	shift
	run_daemon "$start_log" "$daemon" --socket "$dir/s.sock" --workers 1 \
		--no-pin --no-warm "$@"
}

# A cluster file of N nodes.
nodes_file() {
	out=$1 n=$2
	{
		echo '{"apiVersion": "v1", "kind": "List", "items": ['
		i=1
		while [ "$i" -le "$n" ]; do
			[ "$i" -gt 1 ] && echo ','
			echo "{\"apiVersion\": \"v1\", \"kind\": \"Node\", \"metadata\": {\"name\": \"n$i\"},"
			echo " \"status\": {\"allocatable\": {\"cpu\": \"4\", \"memory\": \"8Gi\", \"pods\": \"110\"}}}"
			i=$((i + 1))
		done
		echo ']}'
	} >"$out"
}
nodes_file "$dir/three.json" 3
nodes_file "$dir/five.json" 5
printf 'apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\nprofiles: [\n' \
	>"$dir/typo.yaml"

# expect NAME LOG RC PATTERN...: the run's status was RC and its log
# matches every PATTERN (grep -E).
expect() {
	what=$1 log=$2 want=$3 got=$4
	shift 4
	if [ "$got" != "$want" ]; then
		fail "$what: exit $got, expected $want ($(cat "$log"))"
		return
	fi
	for pat in "$@"; do
		if ! grep -Eq -- "$pat" "$log"; then
			fail "$what: no \"$pat\" in: $(cat "$log")"
			return
		fi
	done
	ok "$what"
}
nonzero() { [ "$1" != 0 ] && [ "$1" != 124 ] && echo 1 || echo "$1"; }

r=$tag-a
# (a)
start "$dir/a1.log" --name "$r" --cluster "$dir/missing.json"
expect "(a) a missing --cluster file: refused" "$dir/a1.log" 1 "$(nonzero $?)" \
	"missing.json"
[ -e /dev/shm/"$r" ] && fail "(a) the refused start made /dev/shm/$r" ||
	ok "(a) ... and made no /dev/shm/$r"
start "$dir/a2.log" --name "$r" --cluster "$dir/three.json" \
	--config "$dir/typo.yaml"
expect "(a) a --config that does not parse: refused" "$dir/a2.log" 1 \
	"$(nonzero $?)" "typo.yaml"
[ -e /dev/shm/"$r" ] && fail "(a) the refused start made /dev/shm/$r" ||
	ok "(a) ... and made no /dev/shm/$r"
[ -e "$dir/s.sock" ] && fail "(a) the refused start left its socket" ||
	ok "(a) ... nor its socket"

# (b)
start "$dir/b.log" --name "$r" --cluster "$dir/three.json"
expect "(b) the corrected start: created with 3 nodes" "$dir/b.log" 0 $? \
	"ready: .* 3 nodes, .*; state created, built from cluster $dir/three.json"

# (c)
start "$dir/c1.log" --name "$r" --cluster "$dir/three.json"
expect "(c) the same --cluster again: resumed" "$dir/c1.log" 0 $? \
	"3 nodes, .*; state resumed, built from cluster $dir/three.json"
start "$dir/c2.log" --name "$r" --cluster "$dir/five.json"
expect "(c) another cluster file: refused, naming both and the ways on" \
	"$dir/c2.log" 1 "$(nonzero $?)" "built from cluster $dir/three.json" \
	"given: cluster $dir/five.json" "--resume" "--fresh"
start "$dir/c3.log" --name "$r" --cluster "$dir/five.json" --resume
expect "(c) --resume: resumed, the old nodes" "$dir/c3.log" 0 $? \
	"3 nodes, .*; state resumed, built from cluster $dir/three.json"
start "$dir/c4.log" --name "$r"
expect "(c) nothing given: resumed" "$dir/c4.log" 0 $? "3 nodes, .*; state resumed"
start "$dir/c5.log" --name "$r" --cluster "$dir/five.json" --fresh
expect "(c) --fresh: rebuilt from the new file" "$dir/c5.log" 0 $? \
	"5 nodes, .*; state created, built from cluster $dir/five.json"
start "$dir/c6.log" --name "$r" --synthetic 7
expect "(c) --synthetic over a cluster file's region: refused" "$dir/c6.log" 1 \
	"$(nonzero $?)" "built from cluster $dir/five.json" "given: synthetic 7:0"

# (d)
r=$tag-d
start "$dir/d1.log" --name "$r" --cluster "$dir/three.json" \
	--state-dir "$dir/store"
expect "(d) --state-dir: created" "$dir/d1.log" 0 $? "3 nodes, .*; state created"
rm -f /dev/shm/"$r"
start "$dir/d2.log" --name "$r" --state-dir "$dir/store"
expect "(d) the region removed: rebuilt from the store" "$dir/d2.log" 0 $? \
	"3 nodes, .*; state rebuilt from the store, built from cluster $dir/three.json"
rm -f /dev/shm/"$r"
start "$dir/d3.log" --name "$r" --cluster "$dir/five.json" \
	--state-dir "$dir/store"
expect "(d) the store with another cluster file: refused" "$dir/d3.log" 1 \
	"$(nonzero $?)" "store $dir/store was built from cluster $dir/three.json" \
	"given: cluster $dir/five.json"
[ -e /dev/shm/"$r" ] && fail "(d) the refused start made /dev/shm/$r" ||
	ok "(d) ... and made no /dev/shm/$r"
start "$dir/d4.log" --name "$r" --cluster "$dir/five.json" \
	--state-dir "$dir/store" --fresh
expect "(d) --fresh with --state-dir reads --cluster" "$dir/d4.log" 0 $? \
	"5 nodes, .*; state created, built from cluster $dir/five.json"
rm -f /dev/shm/"$r"
start "$dir/d5.log" --name "$r" --state-dir "$dir/store"
expect "(d) ... and cleared the store: rebuilt with the new file's nodes" \
	"$dir/d5.log" 0 $? "5 nodes, .*; state rebuilt from the store"

# (e)
r=$tag-e
start "$dir/e1.log" --name "$r"
expect "(e) neither --cluster nor --synthetic on a new state: exit 2" \
	"$dir/e1.log" 2 $? "--cluster" "--synthetic"
start "$dir/e2.log" --ephemeral
expect "(e) ... nor with --ephemeral" "$dir/e2.log" 2 $? "--cluster" "--synthetic"
start "$dir/e3.log" --name "$r" --cluster "$dir/three.json" --synthetic 4
expect "(e) both: exit 2" "$dir/e3.log" 2 $? "--cluster and --synthetic: give one"
[ -e /dev/shm/"$r" ] && fail "(e) a refused start made /dev/shm/$r" ||
	ok "(e) ... and no /dev/shm/$r made"

echo "$failed failed"
[ "$failed" = 0 ]
