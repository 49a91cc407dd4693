# Sourced by the guides' tests (stress.getting_started, quotas_guide,
# maintenance_guide, multi_host_guide): a guide's commands run as written,
# and the check that its answers are what those commands printed.
#
# guide_run [-x] GUIDE DIR SECONDS [LOG...]: GUIDE's ```sh blocks,
# extracted as written after a trap that ends every job the steps started
# (SIGTERM, then waits for them: a daemon flushes its log), run in order
# as one `bash -e` script (DIR/steps.sh; -x: traced) in DIR within
# SECONDS, with the caller's PATH; its output in DIR/out. When a step
# fails: the output, the last 40 lines of each LOG that exists (a LOG
# may be a glob, expanded then), a FAIL line naming GUIDE, and the test
# exits 1.
guide_run() {
	_gr_trace=
	[ "$1" = -x ] && { _gr_trace=-x; shift; }
	_gr_guide=$1 _gr_dir=$2 _gr_secs=$3
	shift 3
	{
		# Under bash -e: a trap command that fails (kill with no job
		# left) would be the script's status.
		echo 'trap '\''kill $(jobs -p) 2>/dev/null || true; wait 2>/dev/null || true'\'' EXIT'
		awk '/^```sh$/ { on = 1; next } /^```/ { on = 0 } on' "$_gr_guide"
	} >"$_gr_dir/steps.sh"
	(cd "$_gr_dir" && timeout "$_gr_secs" bash -e $_gr_trace steps.sh) \
		>"$_gr_dir/out" 2>&1
	_gr_rc=$?
	[ "$_gr_rc" = 0 ] && return 0
	cat "$_gr_dir/out"
	for _gr_pattern in "$@"; do
		for _gr_log in $_gr_pattern; do
			[ -f "$_gr_log" ] && { echo "== $_gr_log"; tail -n 40 "$_gr_log"; }
		done
	done
	echo "FAIL: docs/${_gr_guide##*/docs/}'s commands: exit $_gr_rc"
	exit 1
}

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
