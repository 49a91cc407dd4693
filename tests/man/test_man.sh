#!/usr/bin/env bash
# The manual pages (man/): every function include/shmsched/*.h exports
# (SHMSCHED_EXPORT) has its page in section 3, every program cli/ and
# bench/ build (executable() in their meson.build) has its page in section
# 1 or 8, every page is in man/meson.build, and each renders with groff's
# mdoc without a warning (groff -ww: every warning on).
#
# usage: test_man.sh SOURCE_ROOT
set -u
src=$1
man=$src/man
fail=0
bad() {
	echo "FAIL: $*" >&2
	fail=1
}

command -v groff >/dev/null || { echo "SKIP: no groff (Debian: groff-base)"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# Exported functions: "SHMSCHED_EXPORT <type> name(" at the start of a line.
funcs=$(sed -n 's/^SHMSCHED_EXPORT[^(]*[^A-Za-z0-9_(]\([A-Za-z_][A-Za-z0-9_]*\)(.*/\1/p' \
	"$src"/include/shmsched/*.h)
nfuncs=$(wc -w <<<"$funcs")
((nfuncs >= 20)) || bad "found only $nfuncs exported functions in include/shmsched/*.h: the parse is broken"
for f in $funcs; do
	[[ -f $man/$f.3 ]] || bad "exported function $f has no page man/$f.3"
	[[ -f $man/$f.3 ]] && ! grep -q "^\.Nm $f\$" "$man/$f.3" &&
		bad "man/$f.3 does not name $f (.Nm $f)"
	grep -q "^\.It Xr $f 3\$" "$man/libshmsched-client.3" ||
		bad "libshmsched-client(3) does not list $f"
done

# Programs: executable('NAME', ...) in cli/ and bench/.
progs=$(sed -n "s/.*executable('\([^']*\)'.*/\1/p" "$src"/cli/meson.build "$src"/bench/meson.build)
[[ -n $progs ]] || bad "no executable() found in cli/ or bench/meson.build"
for p in $progs; do
	ls "$man/$p".[18] >/dev/null 2>&1 || bad "program $p has no page man/$p.1 or man/$p.8"
done
for p in shmsched-wire.7 libshmsched-client.3; do
	[[ -f $man/$p ]] || bad "no page man/$p"
done

# Every page is either installed or named in man/meson.build's comment.
for page in "$man"/*.[1-8]; do
	name=${page##*/}
	grep -q "'$name'\|$name" "$man/meson.build" || bad "man/$name is not in man/meson.build"
	# Renders without a warning: nothing on stderr, and something on stdout.
	groff -mandoc -ww -Tutf8 "$page" >"$tmp/out" 2>"$tmp/err"
	[[ -s $tmp/err ]] && bad "man/$name: groff warns: $(cat "$tmp/err")"
	out=$(wc -l <"$tmp/out")
	((out > 10)) || bad "man/$name renders to $out lines"
	# Each page has the sections of its kind.
	case $name in
	*.3) want="NAME SYNOPSIS DESCRIPTION" ;;
	*) want="NAME SYNOPSIS DESCRIPTION" ;;
	esac
	for s in $want "SEE ALSO"; do
		grep -q "^\.Sh $s\$" "$page" || bad "man/$name has no $s section"
	done
	if [[ $name == shmsched_*.3 ]]; then
		for s in "RETURN VALUE" "THREAD SAFETY"; do
			grep -q "^\.Sh $s\$" "$page" || bad "man/$name has no $s section"
		done
	fi
done

((fail == 0)) && echo "ok: $nfuncs function pages, programs: $(echo $progs)"
exit $fail
