#!/usr/bin/env bash
# GNU command-line conventions, for every program cli/ and bench/ build:
#   -h and --help: the usage on stdout, nothing on stderr, exit 0
#   --version: one line "PROG VERSION" on stdout, exit 0
#   a bad option: nothing on stdout; on stderr ONE line saying what is
#     wrong, then "Try 'PROG --help' for more information.", exit 2
#   a refused value: nothing on stdout, a line on stderr naming the
#     option or value, exit 2 (bad usage or input), never a start
# Every refusal here exits before a daemon would start; a value wrongly
# accepted would start one, so each run has a time limit and an ephemeral
# region, and a time-out fails.
#
# usage: test_conventions.sh SHMSCHEDD GATEWAY SHMSCHED BENCH INTERPOD \
#                            PENDING GATEWAY_LOAD POOL_WAKEUP VERSION
set -u
abs() { realpath -e -- "$1"; }
shmschedd=$(abs "$1") gateway=$(abs "$2") shmsched=$(abs "$3")
bench=$(abs "$4") interpod=$(abs "$5") pending=$(abs "$6")
gwload=$(abs "$7") poolwake=$(abs "$8") version=$9
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# A daemon that starts by mistake must not use the default socket or region.
export XDG_RUNTIME_DIR=$tmp SHMSCHED_SOCKET=$tmp/none.sock
fail=0
runs=0
bad() {
	echo "FAIL: $*" >&2
	fail=1
}

# run CMD...: runs it with a limit; $rc, $tmp/out, $tmp/err.
run() {
	runs=$((runs + 1))
	(cd "$tmp" && timeout 20 "$@") >"$tmp/out" 2>"$tmp/err" </dev/null
	rc=$?
	[[ $rc -eq 124 ]] && bad "$* ran on (accepted, and started?)"
}
lines() { grep -c '' "$1"; }

# help NAME CMD...: CMD -h and CMD --help.
help() {
	local name=$1
	shift
	for h in -h --help; do
		run "$@" "$h"
		[[ $rc -eq 0 ]] || bad "$name $h: exit $rc, want 0"
		[[ -s $tmp/out ]] || bad "$name $h: no usage on stdout"
		[[ -s $tmp/err ]] && bad "$name $h: stderr: $(cat "$tmp/err")"
		grep -qi usage "$tmp/out" || bad "$name $h: stdout has no usage line"
	done
}

# version NAME CMD...: CMD --version.
version() {
	local name=$1
	shift
	run "$@" --version
	[[ $rc -eq 0 ]] || bad "$name --version: exit $rc, want 0"
	[[ $(cat "$tmp/out") == "$name $version" ]] ||
		bad "$name --version: \"$(cat "$tmp/out")\", want \"$name $version\""
}

# bad_option TRY CMD... ARG: ONE line, then the Try line, exit 2.
bad_option() {
	local try=$1
	shift
	run "$@"
	local what="${*: -1}"
	[[ $rc -eq 2 ]] || bad "$try $what: exit $rc, want 2"
	[[ -s $tmp/out ]] && bad "$try $what: stdout: $(cat "$tmp/out")"
	[[ $(lines "$tmp/err") -eq 2 ]] ||
		bad "$try $what: $(lines "$tmp/err") lines on stderr, want 2: $(cat "$tmp/err")"
	[[ $(sed -n 2p "$tmp/err") == "Try '$try --help' for more information." ]] ||
		bad "$try $what: second line \"$(sed -n 2p "$tmp/err")\", want the Try line"
	grep -q -- "${what##*-}" "$tmp/err" || bad "$try $what: the message does not name it"
}

# refused WORD CMD...: exit 2, nothing on stdout, the first stderr line
# names WORD (the option or the value), at most the Try line after it.
refused() {
	local word=$1
	shift
	run "$@"
	[[ $rc -eq 2 ]] || bad "$*: exit $rc, want 2 ($(head -c 300 "$tmp/err"))"
	[[ -s $tmp/out ]] && bad "$*: stdout: $(head -c 300 "$tmp/out")"
	local n
	n=$(lines "$tmp/err")
	((n >= 1 && n <= 2)) || bad "$*: $n lines on stderr, want 1 or 2: $(head -c 600 "$tmp/err")"
	head -n1 "$tmp/err" | grep -qF -- "$word" ||
		bad "$*: the message \"$(head -n1 "$tmp/err")\" does not name $word"
}

d=(--ephemeral --socket "$tmp/d.sock")

# --- every program: help, version, a bad option --------------------------
help shmschedd "$shmschedd"
version shmschedd "$shmschedd"
bad_option shmschedd "$shmschedd" --bogus
bad_option shmschedd "$shmschedd" -x
help shmsched-gateway "$gateway"
version shmsched-gateway "$gateway"
bad_option shmsched-gateway "$gateway" --bogus
help shmsched "$shmsched"
version shmsched "$shmsched"
bad_option shmsched "$shmsched" --bogus
for cmd in place node placements resync store status; do
	help "shmsched $cmd" "$shmsched" "$cmd"
	bad_option "shmsched $cmd" "$shmsched" "$cmd" --bogus
done
help shmsched-bench "$bench"
version shmsched-bench "$bench"
bad_option shmsched-bench "$bench" --bogus
help "shmsched-bench --trace openb" "$bench" --trace openb
bad_option "shmsched-bench --trace openb" "$bench" --trace openb --bogus
help shmsched-interpod-bench "$interpod"
version shmsched-interpod-bench "$interpod"
bad_option shmsched-interpod-bench "$interpod" --bogus
help shmsched-pending-bench "$pending"
version shmsched-pending-bench "$pending"
bad_option shmsched-pending-bench "$pending" --bogus
help shmsched-gateway-load "$gwload"
version shmsched-gateway-load "$gwload"
bad_option shmsched-gateway-load "$gwload" --bogus
help pool-wakeup "$poolwake"
version pool-wakeup "$poolwake"
bad_option pool-wakeup "$poolwake" --bogus

# A missing value is a bad option too (getopt_long's message).
bad_option shmschedd "$shmschedd" --slots
bad_option shmsched-gateway "$gateway" --threads

# --- `shmsched store check --help` is help, not a directory called --help --
run "$shmsched" store check --help
[[ $rc -eq 0 ]] || bad "shmsched store check --help: exit $rc, want 0"
grep -q "usage: shmsched store check DIR" "$tmp/out" ||
	bad "shmsched store check --help: no usage on stdout: $(cat "$tmp/out" "$tmp/err")"
bad_option "shmsched store" "$shmsched" store check --bogus
refused "a directory is needed" "$shmsched" store check
refused "unknown command" "$shmsched" frob

# --- refused values: 0, -1, huge, garbage ---------------------------------
refused --slots "$shmschedd" "${d[@]}" --slots 0
for v in -1 99999999999999999999 x ""; do
	refused --slots "$shmschedd" "${d[@]}" --slots "$v"
done
refused --workers "$shmschedd" "${d[@]}" --workers 257
refused --max-nodes "$shmschedd" "${d[@]}" --max-nodes 0
refused --max-placements "$shmschedd" "${d[@]}" --max-placements 0
refused --socket-mode "$shmschedd" "${d[@]}" --socket-mode 0644x
refused --socket-mode "$shmschedd" "${d[@]}" --socket-mode 0400
refused --synthetic "$shmschedd" "${d[@]}" --synthetic 0
refused --durability "$shmschedd" "${d[@]}" --durability maybe
refused --log-format "$shmschedd" "${d[@]}" --log-format xml
refused --state-dir "$shmschedd" "${d[@]}" --state-dir ""
refused --allow-uid "$shmschedd" "${d[@]}" --allow-uid -1
refused --name "$shmschedd" --name x --ephemeral
refused unexpected "$shmschedd" "${d[@]}" stray

for v in 0 65 -1 x; do
	refused --threads "$gateway" --threads "$v"
done
refused --max-body "$gateway" --max-body 1
refused --max-wait "$gateway" --max-wait 99999999999999999999
refused --max-connections "$gateway" --max-connections 0

refused --percentage-of-nodes-to-score "$shmsched" place --cluster x --pods y \
	--percentage-of-nodes-to-score 101
refused --seed "$shmsched" place --cluster x --pods y --seed x
refused "--cluster and --pods" "$shmsched" place
refused "--pods" "$shmsched" resync
refused frob "$shmsched" node frob x

refused --burst "$bench" --burst 0
refused --ring-slots "$bench" --ring-slots 3
refused --noisy "$bench" --noisy=0
refused --noisy-rate "$bench" --noisy-rate=0
refused --noisy-rate "$bench" --noisy-rate=fast
refused --durability "$bench" --durability maybe
refused --rate "$bench" --rate 0
refused --seeds "$bench" --trace openb --seeds 0

refused --nodes "$interpod" --nodes 0
refused --pods "$interpod" --pods x
refused --pods "$pending" --pods 2
refused --workers "$pending" --workers 0
refused --kind "$pending" --kind x
refused --connections "$gwload" --connections 0
refused --seconds "$gwload" --url 127.0.0.1:1 --mode single --seconds -1
refused --pods "$gwload" --direct "$tmp/none.sock" --pods x
refused --url "$gwload" --url 10.0.0.1:80 --mode single
refused WORKERS "$poolwake" 0
refused TRIALS "$poolwake" 1 x

((fail == 0)) && echo "ok: $runs runs"
exit $fail
