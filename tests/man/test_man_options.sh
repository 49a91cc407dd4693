#!/usr/bin/env bash
# Every option a program's --help names is in its manual page (man/), as
# mdoc's "Fl Fl NAME": a flag added to a program without its page fails
# here.
#
# usage: test_man_options.sh MAN_DIR PAGE=PROGRAM[,ARGS...]...
#   e.g. man shmschedd.8=build/cli/shmschedd  shmsched.1=build/cli/shmsched,place
#   ARGS (comma-separated) come before --help.
set -u
man=$1
shift
fail=0
checked=0
for spec in "$@"; do
	page=$man/${spec%%=*}
	IFS=, read -r -a cmd <<<"${spec#*=}"
	help=$("${cmd[@]}" --help 2>&1)
	rc=$?
	if ((rc != 0)); then
		echo "FAIL: ${cmd[*]} --help exits $rc" >&2
		fail=1
		continue
	fi
	for opt in $(grep -o -- '--[a-z][a-z0-9-]*' <<<"$help" | sort -u); do
		name=${opt#--}
		checked=$((checked + 1))
		grep -Eq "Fl Fl $name( |\$)" "$page" ||
			{ echo "FAIL: ${cmd[*]} --help names $opt; ${page##*/} does not (Fl Fl $name)" >&2; fail=1; }
	done
done
((checked > 50)) || { echo "FAIL: only $checked options checked" >&2; fail=1; }
((fail == 0)) && echo "ok: $checked options, each in its page"
exit $fail
