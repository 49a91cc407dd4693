#!/bin/sh
# stress.owner (issue 41): the daemon uses only a state region and a store
# it owns, and checks what it finds in them before use. As root:
#  (a) a region another user (nobody) made, by running its own shmschedd:
#      refused (exit non-zero, the message names the owner's uid), where
#      the old daemon adopted it and served nobody's nodes;
#  (b) a region of ours that group or others may write, or others read
#      with no group named: refused; 0640 with --region-group: accepted;
#  (c) a symbolic link at the region's name: refused; a fifo there: the
#      daemon refuses it and `shmsched status` does not hang on it;
#  (d) a --state-dir directory owned by nobody: refused;
#  (e) a store whose data.mdb is owned by nobody, or is a symbolic link:
#      refused;
#  (f) an intern entry's offset moved by 2^40 in a region of ours: refused
#      at attach with a message naming the string, not a crash;
#  (g) --fresh over a region nobody made: a new region of ours.
# Every /dev/shm file made here is removed on exit.
# usage: test_owner.sh SHMSCHEDD SHMSCHED
set -u
daemon=$(readlink -f "$1") cli=$(readlink -f "$2")
if [ "$(id -u)" != 0 ] || ! command -v setpriv >/dev/null; then
	echo "skipped: needs root and setpriv"
	exit 77
fi
nobody_uid=$(id -u nobody)
tag=owner-$$
dir=$(mktemp -d /tmp/shmsched-owner-XXXXXX)
chmod 755 "$dir"
cleanup() {
	rm -f /dev/shm/"$tag"-* /dev/shm/."$tag"-*
	rm -rf "$dir"
}
trap cleanup EXIT
. "$(dirname "$0")/lib.sh"

common="--synthetic 4 --workers 1 --no-pin --no-warm"

# refused LOG WHAT PATTERN ARGS...: shmschedd must exit non-zero, not by a
# signal, before it is ready, saying PATTERN.
refused() {
	log=$1 what=$2 pattern=$3
	shift 3
	run_daemon "$log" "$daemon" $common "$@"
	rc=$?
	if [ "$rc" = 0 ]; then
		fail "$what: the daemon started"
	elif [ "$rc" -ge 124 ]; then
		fail "$what: exit $rc (a signal or a hang)"; cat "$log"
	elif ! grep -q -- "$pattern" "$log"; then
		fail "$what: no \"$pattern\" in:"; cat "$log"
	else
		ok "$what: refused ($(grep -m1 -- "$pattern" "$log"))"
	fi
}

started() {
	log=$1 what=$2
	shift 2
	run_daemon "$log" "$daemon" $common "$@"
	rc=$?
	if [ "$rc" = 0 ]; then
		ok "$what: started"
	else
		fail "$what: exit $rc"; cat "$log"
	fi
}

# (a) nobody's own daemon makes the region; root's must not adopt it.
mkdir "$dir/nobody"
chown nobody "$dir/nobody"
name=$tag-a
# setpriv itself in the background (not a function's subshell): $! is
# the daemon's pid once setpriv and sh exec.
setpriv --reuid=nobody --regid=nogroup --clear-groups \
	sh -c "cd '$dir/nobody' && exec \"\$@\"" sh \
	"$daemon" $common --name "$name" --socket "$dir/nobody/s.sock" \
	>"$dir/a-nobody.log" 2>&1 &
p=$!
for _ in $(seq 200); do
	grep -q 'shmschedd: ready' "$dir/a-nobody.log" && break
	sleep 0.1
done
kill -TERM "$p"
wait "$p"
grep -q 'shmschedd: ready' "$dir/a-nobody.log" ||
	fail "(a) nobody's daemon never was ready"
if [ "$(stat -c %u "/dev/shm/$name" 2>/dev/null)" != "$nobody_uid" ]; then
	fail "(a) nobody's daemon made no region:"; cat "$dir/a-nobody.log"
else
	refused "$dir/a.log" "(a) region owned by nobody" \
		"owned by uid $nobody_uid" --name "$name" --socket "$dir/a.sock"
	grep -q 'remove it' "$dir/a.log" || fail "(a) no fix named"
fi
# (g) --fresh: nobody's region removed, ours made exclusively.
started "$dir/g.log" "(g) --fresh over nobody's region" --name "$name" \
	--fresh --socket "$dir/g.sock"
[ "$(stat -c %u "/dev/shm/$name" 2>/dev/null)" = 0 ] ||
	fail "(g) the region is not root's after --fresh"

# (b) modes: a region of ours, then its mode changed.
name=$tag-b
started "$dir/b0.log" "(b) a new region" --name "$name" --socket "$dir/b.sock"
mode=$(stat -c %a "/dev/shm/$name")
[ "$mode" = 600 ] || fail "(b) a new region has mode $mode, expected 600"
chmod 0666 "/dev/shm/$name"
refused "$dir/b1.log" "(b) mode 0666" "mode 0666" --name "$name" \
	--socket "$dir/b.sock"
chmod 0620 "/dev/shm/$name"
refused "$dir/b2.log" "(b) mode 0620" "may write" --name "$name" \
	--socket "$dir/b.sock"
chmod 0644 "/dev/shm/$name"
refused "$dir/b3.log" "(b) mode 0644, no group named" "may read" \
	--name "$name" --socket "$dir/b.sock"
chmod 0640 "/dev/shm/$name"
started "$dir/b4.log" "(b) mode 0640 with --region-group" --name "$name" \
	--region-group 0 --socket "$dir/b.sock"
refused "$dir/b5.log" "(b) --region-mode 0666" "at most 0644" \
	--name "$tag-b2" --region-mode 0666 --socket "$dir/b.sock"
name=$tag-b3
started "$dir/b6.log" "(b) a new region with --region-group" --name "$name" \
	--region-group 0 --socket "$dir/b.sock"
mode=$(stat -c %a "/dev/shm/$name")
[ "$mode" = 640 ] || fail "(b) --region-group: mode $mode, expected 640"

# (c) a link, and a fifo, at the region's name.
ln -s "/dev/shm/$tag-b" "/dev/shm/$tag-c"
refused "$dir/c1.log" "(c) a symbolic link" "symbolic link: refused" \
	--name "$tag-c" --socket "$dir/c.sock"
mkfifo "/dev/shm/$tag-c2"
refused "$dir/c2.log" "(c) a fifo" "not a regular file" --name "$tag-c2" \
	--socket "$dir/c.sock"
timeout 10 "$cli" status --name "$tag-c2" >"$dir/c3.log" 2>&1
rc=$?
if [ "$rc" = 0 ] || [ "$rc" -ge 124 ]; then
	fail "(c) shmsched status on a fifo: exit $rc"; cat "$dir/c3.log"
else
	ok "(c) shmsched status on a fifo: exit $rc, $(head -c 200 "$dir/c3.log")"
fi

# (d) a --state-dir nobody owns.
mkdir "$dir/store-d"
chown nobody "$dir/store-d"
refused "$dir/d.log" "(d) --state-dir owned by nobody" \
	"owned by uid $nobody_uid" --name "$tag-d" --state-dir "$dir/store-d" \
	--socket "$dir/d.sock"
ln -s "$dir/store-d" "$dir/store-d2"
refused "$dir/d2.log" "(d) --state-dir a symbolic link" "symbolic link" \
	--name "$tag-d" --fresh --state-dir "$dir/store-d2" --socket "$dir/d.sock"

# (e) a store of ours, then its data file given to nobody, then a link.
started "$dir/e0.log" "(e) a new store" --name "$tag-e" \
	--state-dir "$dir/store-e" --socket "$dir/e.sock"
chown nobody "$dir/store-e/data.mdb"
refused "$dir/e1.log" "(e) data.mdb owned by nobody" \
	"owned by uid $nobody_uid" --name "$tag-e" --fresh \
	--state-dir "$dir/store-e" --socket "$dir/e.sock"
chown root "$dir/store-e/data.mdb"
mv "$dir/store-e/data.mdb" "$dir/data.mdb"
ln -s "$dir/data.mdb" "$dir/store-e/data.mdb"
refused "$dir/e2.log" "(e) data.mdb a symbolic link" "not a regular file" \
	--name "$tag-e" --fresh --state-dir "$dir/store-e" --socket "$dir/e.sock"

# (f) entry 1 of the intern table moved by 2^40.
name=$tag-f
started "$dir/f0.log" "(f) a new region" --name "$name" --socket "$dir/f.sock"
python3 - "/dev/shm/$name" <<'PY'
import struct, sys
with open(sys.argv[1], "r+b") as f:
    head = f.read(4096)
    count, = struct.unpack_from("<I", head, 28)
    for i in range(count):
        off, size, sid, _ = struct.unpack_from("<QQII", head, 64 + 24 * i)
        if sid == 11:  # SHM_SECTION_STRINGS
            at = off + 64 + 32  # intern_shared, then entry 1's offset
            f.seek(at)
            old, = struct.unpack("<Q", f.read(8))
            f.seek(at)
            f.write(struct.pack("<Q", old + (1 << 40)))
            break
    else:
        sys.exit("no strings section")
PY
refused "$dir/f1.log" "(f) an intern offset moved by 2^40" \
	"string 1 is damaged: offset 1099511627" --name "$name" \
	--socket "$dir/f.sock"

echo "$failed failed"
[ "$failed" = 0 ]
