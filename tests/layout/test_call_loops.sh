#!/bin/sh
# unit.call_loops_check: scripts/check-call-loops itself, on objects made
# here: two files that call each other are a circle (named with the symbol
# on each edge), refused unless the allow file lists it; a listed circle
# that no longer exists is refused too; one-way calls are no circle.
#
# usage: test_call_loops.sh CHECK-CALL-LOOPS CC...
set -eu
check=$1
shift
dir=$(mktemp -d /tmp/shmsched-call-loops-XXXXXX)
trap 'rm -rf "$dir"' EXIT
fails=0
say() { printf '%s\n' "$*"; }
bad() { say "FAIL: $*"; fails=$((fails + 1)); }

cat >"$dir/a.c" <<'C'
int b_fn(int);
int a_fn(int x) { return x > 0 ? b_fn(x - 1) : 0; }
C
cat >"$dir/b.c" <<'C'
int a_fn(int);
int b_table[4];
int b_fn(int x) { return x > 0 ? a_fn(x - 1) : b_table[0]; }
C
cat >"$dir/b_oneway.c" <<'C'
int b_table[4];
int b_fn(int x) { return x + b_table[0]; }
C
cat >"$dir/c.c" <<'C'
int a_fn(int);
extern int b_table[4];
int c_fn(int x) { return a_fn(x) + b_table[1]; }
C
cd "$dir"
# One compiler run for the four (ccache would only add its own).
[ "$1" = ccache ] && shift
"$@" -c a.c b.c b_oneway.c c.c

# The loop a <-> b, with the symbol on each edge; c only calls in.
if "$check" a.o b.o c.o >out 2>&1; then
	bad "a <-> b not refused"
fi
cat out
grep -q '^check-call-loops: circle of 2 files: a.o, b.o$' out || bad "circle not named"
grep -q '^  a.o -> b.o: b_fn$' out || bad "edge a -> b not named with b_fn"
grep -q '^  b.o -> a.o: a_fn$' out || bad "edge b -> a not named with a_fn"
grep -q 'c.o,' out && bad "c.o, which is called by nobody, is in a circle"

# Listed: allowed.
printf '# known\nb.o a.o\n' >allow
"$check" --allow allow a.o b.o c.o >out 2>&1 || { cat out; bad "a listed circle refused"; }

# Broken, but still listed: refused, naming the line to remove.
if "$check" --allow allow a.o b_oneway.o c.o >out 2>&1; then
	bad "a listed circle that is gone not refused"
fi
cat out
grep -q '^allow:2: the allowed circle a.o b.o no longer exists' out ||
	bad "the stale line not named"

# One-way calls (a -> b, c -> a, c -> b's data): no circle.
"$check" a.o b_oneway.o c.o >out 2>&1 || { cat out; bad "one-way calls refused"; }

[ "$fails" -eq 0 ] && say "ok" || exit 1
