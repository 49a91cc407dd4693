# Sourced by the guides' tests (stress.maintenance_guide,
# stress.multi_host_guide): the check that a guide's answers are what its
# commands printed.
#
# guide_answers GUIDE OUT MIN: every line of GUIDE's plain ``` blocks (an
# opening fence with no language: the output shown) that is not trimmed
# with "..." must be a whole line of OUT (the run's output). Prints each
# line that is not, and the run's output and a FAIL line when any is not
# or when fewer than MIN lines were checked (the extraction broke);
# otherwise an ok line. Writes the lines it checks to OUT.expected.
# Returns 0 when every line matched, else 1.
guide_answers() {
	_ga_guide=$1 _ga_out=$2 _ga_min=$3
	_ga_name=docs/${_ga_guide##*/docs/}
	_ga_checked=0 _ga_missing=0
	awk '/^```/ { if (inb) { inb = 0; plain = 0 } else { inb = 1; plain = ($0 == "```") }; next }
		inb && plain' "$_ga_guide" | grep -v -F '...' >"$_ga_out.expected"
	while IFS= read -r _ga_line; do
		[ -n "$_ga_line" ] || continue
		_ga_checked=$((_ga_checked + 1))
		if ! grep -Fxq -e "$_ga_line" "$_ga_out"; then
			echo "not in the run's output: $_ga_line"
			_ga_missing=$((_ga_missing + 1))
		fi
	done <"$_ga_out.expected"
	if [ "$_ga_missing" != 0 ] || [ "$_ga_checked" -lt "$_ga_min" ]; then
		echo "== the run's output"
		cat "$_ga_out"
		echo "FAIL: $_ga_name: $_ga_missing of $_ga_checked answer lines differ from the run"
		return 1
	fi
	echo "ok: $_ga_name: its sh blocks ran, $_ga_checked answer lines match"
	return 0
}
