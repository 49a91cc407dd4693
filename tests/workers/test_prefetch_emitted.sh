#!/bin/sh
# The scans' and the index's prefetches are in the code the compiler made.
# GCC 12 once deleted every call of a static helper that only prefetched
# (it found it "looping pure"), and no answer changed: only this sees it.
# usage: test_prefetch_emitted.sh OBJDUMP LIBRARY FUNCTION...
set -eu
objdump=$1
lib=$2
shift 2
listing=$("$objdump" -d --no-show-raw-insn "$lib")
status=0
for fn in "$@"; do
	body=$(printf '%s\n' "$listing" | awk -v f="<$fn>:" '
		$2 == f { on = 1; found = 1; next }
		on && /^[0-9a-f]+ <.*>:$/ { on = 0 }
		on { print }
		END { if (!found) exit 3 }') || {
		echo "$fn: not in $lib"
		status=1
		continue
	}
	if printf '%s\n' "$body" | grep -q 'prefetch'; then
		echo "$fn: prefetches"
	else
		echo "$fn: no prefetch instruction"
		status=1
	fi
done
exit $status
