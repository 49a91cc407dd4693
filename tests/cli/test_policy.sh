#!/bin/sh
# stress.policy_uids: issue 41's identities with rights, across uids, through a
# real shmschedd and `shmsched policy`. As nobody (setpriv), a template
# naming system-node-critical is refused without a policy while root's
# through the admin socket is accepted (kube-apiserver kept these classes
# to kube-system: kubernetes PR #65593); `shmsched policy apply` puts a
# policy in force, after which nobody may place pods only in its
# namespaces; a bad file is refused naming its path and JSON path and
# leaves the old policy; a narrower policy closes the connections holding
# templates it refuses; reload without --policy is refused; a daemon
# started with --policy FILE holds to it and `policy reload` reads FILE
# again, and so does SIGHUP (a file it refuses keeps the policy in force,
# logging why); OP_POLICY through the producer socket is refused.
# usage: test_policy.sh SHMSCHEDD SHMSCHED CLUSTER_JSON POLICY_PROBE
set -u
daemon=$1 cli=$2 cluster=$3 probe=$4
dir=$(mktemp -d /tmp/shmsched-policy-XXXXXX)
chmod 755 "$dir"
log=$dir/daemon.log
pid=
. "$(dirname "$0")/../gateway/lib.sh"
start() {
	: >"$log"
	SHMSCHED_LOG=info "$daemon" --cluster "$cluster" --socket "$dir/s.sock" --workers 1 --no-pin \
		--ephemeral --socket-mode 0666 --allow-uid 65534 "$@" >"$log" 2>&1 &
	pid=$!
	daemon_ready "$log" "$pid"
}
stop() {
	kill "$pid" 2>/dev/null
	wait "$pid" 2>/dev/null
	# In a sanitizer build, the daemon's own reports land in its log.
	if grep -q -e 'Sanitizer' -e 'runtime error' "$log"; then
		echo "FAIL: the daemon's log:"; cat "$log"; failed=$((failed + 1))
	fi
}
cleanup() { kill "$pid" 2>/dev/null; wait "$pid" 2>/dev/null; rm -rf "$dir"; }
trap cleanup EXIT
failed=0
# check WANT_STATUS PATTERN COMMAND...: runs it, checks status and output.
check() {
	want=$1 pattern=$2
	shift 2
	out=$("$@" 2>&1)
	got=$?
	if [ "$got" -ne "$want" ] || ! printf '%s' "$out" | grep -q -- "$pattern"; then
		echo "FAIL: $*: exit $got (want $want), output: $out"
		failed=$((failed + 1))
	else
		echo "ok: $* -> $got: $(printf '%s' "$out" | head -1)"
	fi
}
nobody() { setpriv --reuid=nobody --regid=nogroup --clear-groups "$@"; }
S=$dir/s.sock
A="--admin-socket $dir/s.sock.admin"

start
# No policy: a system- class only through the admin socket.
check 1 'uid 65534, name "b".*system-node-critical.*admin' \
	nobody "$probe" "$S" b default system-node-critical
check 1 'system-cluster-critical' nobody "$probe" "$S" b default system-cluster-critical
check 0 accepted "$probe" "$S.admin" ops kube-system system-node-critical
check 0 accepted nobody "$probe" "$S" b team-a
check 0 '# no policy' "$cli" policy show $A
check 1 'started without --policy' "$cli" policy reload $A
# A policy applied: nobody's name "b" gets team-b only.
cat >"$dir/p.json" <<'JSON'
{"apiVersion": "shmsched.io/v1alpha1", "kind": "Policy", "rules": [
  {"uids": [65534], "names": ["b"], "namespaces": ["team-b", "team-b-*"],
   "priorityClasses": ["*"]}]}
JSON
check 0 'in force: 1 rule(s) from (applied through the admin socket by uid 0)' \
	"$cli" policy apply "$dir/p.json" $A
check 1 'uid 65534, name "b".*metadata.namespace "team-a".*applied through' \
	nobody "$probe" "$S" b team-a
check 0 accepted nobody "$probe" "$S" b team-b-dev
# A narrower policy closes the connections holding templates it refuses
# (their placements stay); the others keep theirs.
POLICY_PROBE_HOLD=20 nobody "$probe" "$S" b team-b-dev >"$dir/held-dev" 2>&1 &
held_dev=$!
POLICY_PROBE_HOLD=3 nobody "$probe" "$S" b team-b >"$dir/held-b" 2>&1 &
held_b=$!
for _ in $(seq 100); do
	grep -q accepted "$dir/held-dev" && grep -q accepted "$dir/held-b" && break
	sleep 0.1
done
sed 's/"team-b", "team-b-\*"/"team-b"/' "$dir/p.json" >"$dir/narrow.json"
check 0 'in force: 1 rule' "$cli" policy apply "$dir/narrow.json" $A
wait "$held_dev"
check 0 'disconnected' cat "$dir/held-dev"
wait "$held_b"
check 0 'still connected' cat "$dir/held-b"
grep -q 'policy: producer .*metadata.namespace "team-b-dev".*disconnecting it' "$log" ||
	{ echo "FAIL: no log line for the closed connection"; cat "$log"; failed=$((failed + 1)); }
check 0 'in force: 1 rule' "$cli" policy apply "$dir/p.json" $A
check 1 'no rule of the policy' nobody "$probe" "$S" other team-b
check 1 'exact name' nobody "$probe" "$S" b team-b system-node-critical
check 0 '"team-b-\*"' "$cli" policy show $A
# A bad file: refused here, naming it and the field; the old one stays.
printf '{"apiVersion":"shmsched.io/v1alpha1","kind":"Policy","rules":[{"uids":[1],"namespaces":["Team_A"]}]}' >"$dir/bad.json"
check 2 "bad.json: \$.rules\[0\].namespaces\[0\]: \"Team_A\"" "$cli" policy apply "$dir/bad.json" $A
check 1 "bad.json" "$cli" policy check "$dir/bad.json"
check 0 "would take it" "$cli" policy check "$dir/p.json"
check 0 'in force: 1 rule' "$cli" policy show $A
# Only admins: the producer socket refuses OP_POLICY (to nobody, whom it
# admits); root is not among its --allow-uid, and hears why.
check 1 'need the admin socket' nobody "$cli" policy show --admin-socket "$S"
check 1 'refused' "$cli" policy show --admin-socket "$S"
stop

# --policy FILE at start; reload reads FILE again.
cp "$dir/p.json" "$dir/live.json"
start --policy "$dir/live.json"
grep -q "policy: 1 rule(s) from $dir/live.json" "$log" ||
	{ echo "FAIL: no log line for the policy"; failed=$((failed + 1)); }
check 1 "team-a.*$dir/live.json" nobody "$probe" "$S" b team-a
sed -i 's/"team-b", "team-b-\*"/"team-a"/' "$dir/live.json"
check 0 "in force: 1 rule(s) from $dir/live.json" "$cli" policy reload $A
check 0 accepted nobody "$probe" "$S" b team-a
check 1 'team-b' nobody "$probe" "$S" b team-b
# SIGHUP reads FILE again, as `policy reload` does (nginx, sshd): a rule
# changed in the file applies once the daemon has logged it.
sighup() {
	n=$(grep -c "$1" "$log")
	kill -HUP "$pid"
	for _ in $(seq 100); do
		[ "$(grep -c "$1" "$log")" -gt "$n" ] && return 0
		sleep 0.1
	done
	echo "FAIL: no log line \"$1\" after SIGHUP:"; cat "$log"; failed=$((failed + 1))
}
sed -i 's/"team-a"/"team-c"/' "$dir/live.json"
sighup "policy: 1 rule(s) from $dir/live.json in force"
check 0 accepted nobody "$probe" "$S" b team-c
check 1 "team-a.*$dir/live.json" nobody "$probe" "$S" b team-a
# A file it refuses keeps the policy in force, and the log says why.
cp "$dir/bad.json" "$dir/live.json"
sighup 'SIGHUP: policy not reloaded'
grep -q "SIGHUP: policy not reloaded, the one in force stays: .*live.json: \$.rules\[0\].namespaces\[0\]: \"Team_A\"" "$log" ||
	{ echo "FAIL: the refused file's log line does not say why:"; cat "$log"; failed=$((failed + 1)); }
check 0 accepted nobody "$probe" "$S" b team-c
kill -0 "$pid" || { echo "FAIL: the daemon died on SIGHUP"; failed=$((failed + 1)); }
stop
# A file the daemon cannot take stops its start, naming it.
check 1 "bad.json: \$.rules\[0\].namespaces\[0\]" "$daemon" --cluster "$cluster" \
	--socket "$dir/s.sock" --workers 1 --no-pin --ephemeral --policy "$dir/bad.json"
pid=
[ "$failed" -eq 0 ] || { echo "$failed check(s) failed"; exit 1; }
echo "all policy checks passed"
