/* shmschedd: the scheduling daemon. Thin: it reads options, starts the
 * daemon (daemon/daemon.c), prints one ready line, and stops it gracefully on
 * SIGINT or SIGTERM. */
#include <errno.h>
#include <getopt.h>
#include <grp.h>
#include <inttypes.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/base.h"
#include "cli/service.h"
#include "daemon/daemon.h"
#include "ingest/ingest.h"
#include "policy/policy.h"
#include "quota/quota.h"
#include "shmsched/version.h"

#define MAX_ALLOWED 64

static void usage(FILE *to)
{
	fprintf(to,
		"usage: shmschedd [--cluster FILE | --synthetic NODES[:RUNNING]]\n"
		"                 [--fresh | --resume]\n"
		"                 [--workers N] [--socket PATH] [--config FILE]\n"
		"                 [--slots N] [--allow-uid UID]... [--allow-gid GID]...\n"
		"                 [--socket-mode MODE] [--socket-group GROUP]\n"
		"                 [--admin-socket PATH] [--admin-uid UID]... [--admin-gid GID]...\n"
		"                 [--policy FILE]\n"
		"                 [--idle-timeout SECONDS]\n"
		"                 [--max-placements N] [--seed N] [--no-pin] [--no-warm]\n"
		"                 [--name NAME | --ephemeral] [--max-nodes N]\n"
		"                 [--region-mode MODE] [--region-group GROUP]\n"
		"                 [--state-dir DIR [--durability none|async|sync]]\n"
		"                 [--log-format text|json] [--log-file PATH]\n"
		"                 [--strings-per-identity BYTES]\n"
		"                 [--template-bytes-per-identity BYTES]\n"
		"                 [--wait] [--field-validation Strict|Warn|Ignore]\n"
		"                 [--node-monitor-grace-period DURATION]\n"
		"                 [--node-eviction-rate RATE]\n"
		"                 [--secondary-node-eviction-rate RATE]\n"
		"                 [--unhealthy-zone-threshold FRACTION]\n"
		"                 [--large-cluster-size-threshold NODES]\n"
		"                 [--pool-label KEY] [--quarantine-threshold RATE]\n"
		"                 [--quarantine-min-nodes NODES]\n"
		"                 [--quarantine-window DURATION]\n"
		"                 [--admission-fair-sharing-half-life DURATION\n"
		"                  [--admission-fair-sharing-sampling DURATION]\n"
		"                  [--admission-fair-sharing-weight RESOURCE=WEIGHT]...]\n"
		"                 [--reclaim-min-run SECONDS] [--reclaim-evict-cap RATIO]\n"
		"                 [--etcd ENDPOINTS [--etcd-lease-ttl SECONDS]\n"
		"                  [--etcd-cluster NAME] [--host-name NAME]\n"
		"                  [--shard-by LABEL] [--etcd-durability MODE]]\n"
		"\n"
		"Serves pods from producers over shared memory: producers connect to\n"
		"the control socket, get a region of slots and rings, and submit pods\n"
		"there; every pod gets one answer.\n"
		"\n"
		"  --cluster FILE       Nodes, and Pods bound to them, as Kubernetes JSON\n"
		"  --synthetic N[:R]    a generated cluster of N nodes with R running pods\n"
		"                       One of the two is needed to create the state;\n"
		"                       the state records it (the file's path and a\n"
		"                       hash of its bytes) and the --config file's\n"
		"                       hash. An existing state built from the same\n"
		"                       inputs (or with none given) is resumed; from\n"
		"                       other ones: refused, naming both\n"
		"  --resume             keep the existing state whatever it was built\n"
		"                       from; the given --cluster/--synthetic not read\n"
		"  --workers N          worker threads (default: one per core less one,\n"
		"                       at least 1), each pinned to its own core\n"
		"  --socket PATH        the control socket (default:\n"
		"                       $XDG_RUNTIME_DIR/shmsched.sock, else\n"
		"                       /run/shmsched/shmsched.sock)\n"
		"  --config FILE        a KubeSchedulerConfiguration (YAML or JSON)\n"
		"  --slots N            pod slots per producer (default 4096)\n"
		"  --allow-uid UID      admit producers running as UID (repeatable)\n"
		"  --allow-gid GID      admit producers in group GID (repeatable)\n"
		"                       (default: only this daemon's own uid)\n"
		"  --socket-mode MODE   the control socket's mode, octal (default 0600);\n"
		"                       other users need 0660 with --socket-group, or 0666\n"
		"  --socket-group GROUP the control socket's group (name or number)\n"
		"  --admin-socket PATH  the admin socket: node events, resource names\n"
		"                       (default: the control socket's path + \".admin\");\n"
		"                       mode 0600, 0660 and the group for one --admin-gid,\n"
		"                       0666 for another --admin-uid (or several gids):\n"
		"                       the uid/gid check refuses everyone else\n"
		"  --admin-uid UID      admit admins running as UID (repeatable)\n"
		"  --admin-gid GID      admit admins in group GID (repeatable)\n"
		"                       (default: only this daemon's own uid)\n"
		"  --policy FILE        which namespaces and PriorityClasses each producer\n"
		"                       (uid and name) may use, and whose pods it may\n"
		"                       preempt (JSON; `shmsched policy --help`). Default:\n"
		"                       any namespace; system- classes for admins only.\n"
		"                       Read again on SIGHUP and `shmsched policy reload`\n"
		"  --idle-timeout SECONDS close a connection (either socket) that sends no\n"
		"                       request for this long while its producer has no pod\n"
		"                       submitted, waiting or answered (default 300; 0:\n"
		"                       never); the producer sees ECONNRESET, reconnects\n"
		"  --max-placements N   live placements kept, bound pods included (default\n"
		"                       1048576, 280 bytes each, backed as used); a pod\n"
		"                       past it is rejected. A new state region only\n"
		"  --name NAME          the state region, /dev/shm/NAME (default shmsched):\n"
		"                       an existing one is resumed (nodes, placements,\n"
		"                       identities) when its inputs match (above)\n"
		"  --ephemeral          an anonymous state region, gone when the daemon\n"
		"                       exits (benchmarks, tests)\n"
		"  --fresh              remove the state region NAME first, if any, and\n"
		"                       make a new one exclusively (never adopt a file\n"
		"                       that appears meanwhile) from --cluster or\n"
		"                       --synthetic; the --state-dir store is cleared\n"
		"                       and rewritten from it too\n"
		"  --max-nodes N        node slots of a new state region (default 65536)\n"
		"  --region-mode MODE   the state region's file mode, octal (default 0600,\n"
		"                       0640 with --region-group; at most 0644): who may\n"
		"                       read it sees every placement\n"
		"  --region-group GROUP the state region's group (name or number): the\n"
		"                       observers' (shmsched status), who may read it.\n"
		"                       A region or --state-dir this uid does not own,\n"
		"                       or that group/others may write, is refused\n"
		"  --state-dir DIR      the durable store (LMDB, in DIR): nodes, placements\n"
		"                       and identities survive a reboot; a new state region\n"
		"                       is rebuilt from it when it holds nodes (unless\n"
		"                       --fresh), checked against the inputs as a region\n"
		"  --log-format FORMAT  text (the default) or json: one object a line;\n"
		"                       every line has its UTC time\n"
		"  --log-file PATH      log there instead of stderr; SIGHUP reopens it\n"
		"  --strings-per-identity BYTES  string table bytes one producer identity's\n"
		"                       templates may add (default 3/4 of the table / 64);\n"
		"                       past it a template is refused (EDQUOT)\n"
		"  --template-bytes-per-identity BYTES  compiled template results one\n"
		"                       identity may hold (default 268435456); past it\n"
		"                       its templates are compiled by their worker\n"
		"  --durability MODE    none (written, never fsynced), async (the default:\n"
		"                       fsynced every millisecond; a power loss loses at\n"
		"                       most the last few milliseconds), sync (PLACED only\n"
		"                       once the placement is on disk)\n"
		"  --seed N             the synthetic cluster and tie-breaks (default 1)\n"
		"  --no-pin             do not pin workers to cores\n"
		"  --no-warm            no thread faulting the placement table's next\n"
		"                       pages in ahead of the workers (they fault them)\n"
		"  --wait               pods that fit no node wait in the scheduling queue\n"
		"                       until one does (unless their slot says NO_WAIT);\n"
		"                       default: only pods whose slot says WAIT wait\n"
		"  --field-validation Strict|Warn|Ignore\n"
		"                       a field that is not a field of the object's\n"
		"                       Kubernetes type (\"spec.nodeSelectr\") in --cluster,\n"
		"                       a producer's template or PriorityClass, a resync\n"
		"                       file: Strict (the default) refuses it naming the\n"
		"                       field, Warn logs it and drops it, Ignore drops it\n"
		"                       (kube-apiserver's fieldValidation)\n"
		"  --node-monitor-grace-period DURATION\n"
		"                       a node that renews its lease (`shmsched node\n"
		"                       lease NAME`) and then sends none for longer than\n"
		"                       this is Unknown: tainted\n"
		"                       node.kubernetes.io/unreachable:NoExecute until\n"
		"                       its next renewal (default 50s; like 40s, 1m30s,\n"
		"                       500ms; nodes never leased are not affected)\n"
		"  --admission-fair-sharing-half-life DURATION\n"
		"                       Kueue's admission fair sharing on (its\n"
		"                       admissionFairSharing.usageHalfLifeTime): in a\n"
		"                       ClusterQueue whose admissionScope.admissionMode\n"
		"                       is UsageBasedAdmissionFairSharing, waiting pods\n"
		"                       of the LocalQueue that used less (decayed with\n"
		"                       this half-life; 0: no memory) go first\n"
		"  --admission-fair-sharing-sampling DURATION\n"
		"                       usageSamplingInterval (default 5m); with\n"
		"                       --state-dir the usage is saved each interval\n"
		"  --admission-fair-sharing-weight RESOURCE=WEIGHT\n"
		"                       resourceWeights: a resource's weight in the\n"
		"                       usage (default 1; repeat per resource)\n"
		"  --node-eviction-rate RATE\n"
		"                       Unknown nodes tainted unreachable per second in\n"
		"                       each zone (topology.kubernetes.io/zone), as\n"
		"                       Kubernetes' node lifecycle controller (default\n"
		"                       0.1; 0: never); pods not tolerating the taint are\n"
		"                       evicted at once, others after their\n"
		"                       tolerationSeconds (300 by default)\n"
		"  --secondary-node-eviction-rate RATE\n"
		"                       the rate in a partially disrupted zone larger than\n"
		"                       --large-cluster-size-threshold (default 0.01)\n"
		"  --unhealthy-zone-threshold FRACTION\n"
		"                       a zone with more than 2 Unknown nodes and at least\n"
		"                       this fraction of its nodes Unknown is partially\n"
		"                       disrupted (default 0.55; in (0, 1]); every zone\n"
		"                       fully down: no node tainted, no pod evicted\n"
		"  --large-cluster-size-threshold NODES\n"
		"                       a partially disrupted zone of more nodes than this\n"
		"                       taints at the secondary rate, a smaller one not at\n"
		"                       all (default 50)\n"
		"  --pool-label KEY     the node label whose value is a node's pool\n"
		"                       (default node.kubernetes.io/instance-type): a\n"
		"                       pool whose pods of one template fail together\n"
		"                       (reported: shmsched_report_failure(3)) is\n"
		"                       quarantined for that template: none of its new\n"
		"                       pods placed there, none evicted; never over 20 %%\n"
		"                       of nodes; `shmsched pool release` lifts it\n"
		"  --quarantine-threshold RATE\n"
		"                       the window's failures per placement that trip a\n"
		"                       quarantine (default 0.5; in (0, 1]); it lifts once\n"
		"                       a window since the trip the rate is below half\n"
		"  --quarantine-min-nodes NODES\n"
		"                       distinct nodes of the pool that must have failed\n"
		"                       in the window (default 3; 1 to 16)\n"
		"  --quarantine-window DURATION\n"
		"                       the window failures are counted over (default\n"
		"                       60s)\n"
		"  --reclaim-min-run SECONDS\n"
		"                       a pod admitted under quota less than this long\n"
		"                       ago is never evicted to reclaim quota (Kueue's\n"
		"                       ClusterQueue .spec.preemption; default 0: none)\n"
		"  --reclaim-evict-cap RATIO\n"
		"                       the pods one reclaim evicts hold at most RATIO\n"
		"                       times the preemptor's requests in each resource\n"
		"                       it needs (default 1.5; 1 to 1000)\n"
		"  --etcd ENDPOINTS     be one host of a multi-host cluster through etcd\n"
		"                       (its client URLs, comma separated): hold a lease,\n"
		"                       own the shards a coordinator elected through etcd\n"
		"                       assigns, and place only on their nodes, only while\n"
		"                       the lease is surely alive; gangs are refused and\n"
		"                       preemption is off (docs/design/multi-host.md)\n"
		"  --etcd-lease-ttl SECONDS\n"
		"                       the host's lease (default 5; 2 to 3600): renewed\n"
		"                       every third of it; a host whose renewals fail\n"
		"                       stops placing after three quarters of it\n"
		"  --etcd-cluster NAME  the cluster's keys are under /shmsched/NAME/\n"
		"                       (default \"default\")\n"
		"  --host-name NAME     this host's name in the cluster (default: the\n"
		"                       machine's host name); unique among its hosts\n"
		"  --shard-by LABEL     the node label whose value is a node's shard\n"
		"                       (default topology.kubernetes.io/zone); a node\n"
		"                       without it is in no shard: no host places there\n"
		"  --etcd-durability MODE\n"
		"                       sync (the default): each placement is committed\n"
		"                       to etcd (shards/S/pods/ID, fenced by the shard's\n"
		"                       lease) before its pod is answered; one not\n"
		"                       committed is rolled back and the pod answered\n"
		"                       unschedulable. async: answered at once, committed\n"
		"                       within about 1 s (placing waits while a commit is\n"
		"                       older); one then not committed is rolled back,\n"
		"                       its owner told (evicted) and logged. none:\n"
		"                       placements stay on this host (a shard's next\n"
		"                       owner does not see them)\n"
		"\n"
		"SIGINT or SIGTERM: stop accepting producers, answer every pod already\n"
		"submitted (placing for up to 5 s, then cancelled), exit 0. SIGHUP:\n"
		"reopen --log-file and read --policy again (a file it refuses keeps\n"
		"the policy in force; the log says why).\n");
}

/* SIGHUP: --policy read again, as `shmsched policy reload` (the daemon
 * logs a policy it puts in force; a refused one is logged here). */
static void reload_policy(void *arg)
{
	struct daemon *d = arg;
	char err[1024];
	int rc = daemon_reload_policy(d, err, sizeof(err));
	if (rc < 0)
		log_msg(LOG_LEVEL_ERROR, "SIGHUP: policy not reloaded, the one in "
			"force stays: %s", err);
}

/* --field-validation=Warn: an object's unknown fields, logged. */
static void warn_field(void *arg, const char *line)
{
	(void)arg;
	log_msg(LOG_LEVEL_WARN, "%s", line);
}

static int parse_u64(const char *opt, const char *s, uint64_t max, uint64_t *out)
{
	char *end;
	errno = 0;
	unsigned long long v = strtoull(s, &end, 10);
	if (errno != 0 || end == s || *end != '\0' || s[0] == '-' || v > max) {
		fprintf(stderr, "shmschedd: %s: \"%s\" is not a whole number in "
			"0..%" PRIu64 "\n", opt, s, max);
		return -EINVAL;
	}
	*out = v;
	return 0;
}

/* A duration as Go writes one ("50s", "1m30s", "500ms"; units h, m, s,
 * ms), or bare seconds, in nanoseconds: more than 0, at most `max` (a
 * whole number of hours). */
static int parse_duration_max(const char *opt, const char *s, uint64_t max,
			      uint64_t *out_ns)
{
	static const struct {
		const char *unit;
		uint64_t ns;
	} units[] = {{"ms", 1000000u}, {"h", 3600000000000u}, {"m", 60000000000u},
		     {"s", 1000000000u}};
	uint64_t sum = 0;
	const char *p = s;
	bool ok = *p != '\0';
	while (ok && *p != '\0') {
		char *end;
		errno = 0;
		unsigned long long v = strtoull(p, &end, 10);
		ok = errno == 0 && end != p && *p != '-' && *p != '+' && v <= max / 1000000u;
		uint64_t ns = 0;
		for (size_t i = 0; ok && ns == 0 && i < sizeof(units) / sizeof(units[0]); i++)
			if (strncmp(end, units[i].unit, strlen(units[i].unit)) == 0) {
				ns = units[i].ns;
				end += strlen(units[i].unit);
			}
		if (ok && ns == 0 && *end == '\0' && p == s)
			ns = 1000000000u; /* bare seconds */
		ok = ok && ns != 0 && v <= max / ns && sum + v * ns <= max;
		if (ok)
			sum += v * ns;
		p = end;
	}
	if (!ok || sum == 0) {
		fprintf(stderr, "shmschedd: %s: \"%s\" is not a duration from 1ms to "
			"%" PRIu64 "h (like 50s, 1m30s, 500ms)\n", opt, s,
			max / UINT64_C(3600000000000));
		return -EINVAL;
	}
	*out_ns = sum;
	return 0;
}

/* At most a day. */
static int parse_duration(const char *opt, const char *s, uint64_t *out_ns)
{
	return parse_duration_max(opt, s, 86400u * UINT64_C(1000000000), out_ns);
}

/* Admission fair sharing's durations: up to a year (Kueue's examples
 * give usageHalfLifeTime 168h). */
#define AFS_DURATION_MAX_NS (UINT64_C(8760) * 3600u * 1000000000u)

/* --admission-fair-sharing-weight RESOURCE=WEIGHT into s (checked with
 * the rest by afs_settings_check). */
static int parse_afs_weight(const char *arg, struct afs_settings *s)
{
	const char *eq = strchr(arg, '=');
	char *end;
	double w = 0;
	size_t n = eq != NULL ? (size_t)(eq - arg) : 0;
	bool ok = n > 0 && n <= QUOTA_NAME_MAX;
	if (ok) {
		errno = 0;
		w = strtod(eq + 1, &end);
		ok = errno == 0 && end != eq + 1 && *end == '\0';
	}
	if (!ok) {
		fprintf(stderr, "shmschedd: --admission-fair-sharing-weight: \"%s\": "
			"expected RESOURCE=WEIGHT (like cpu=2, memory=0.5)\n", arg);
		return -EINVAL;
	}
	if (s->n_weights >= AFS_MAX_WEIGHTS) {
		fprintf(stderr, "shmschedd: --admission-fair-sharing-weight: more "
			"than %d; expected at most one per resource\n",
			AFS_MAX_WEIGHTS);
		return -EINVAL;
	}
	memcpy(s->weight_name[s->n_weights], arg, n);
	s->weight_name[s->n_weights][n] = '\0';
	s->weight[s->n_weights++] = w;
	return 0;
}

static int parse_synthetic(const char *s, struct daemon_config *c)
{
	char nodes[32];
	const char *colon = strchr(s, ':');
	size_t len = colon ? (size_t)(colon - s) : strlen(s);
	uint64_t n, r = 0;
	if (len == 0 || len >= sizeof(nodes)) {
		fprintf(stderr, "shmschedd: --synthetic: \"%s\" is not NODES[:RUNNING]\n",
			s);
		return -EINVAL;
	}
	memcpy(nodes, s, len);
	nodes[len] = '\0';
	if (parse_u64("--synthetic NODES", nodes, 1u << 24, &n) < 0 ||
	    (colon && parse_u64("--synthetic RUNNING", colon + 1, UINT32_MAX, &r) < 0))
		return -EINVAL;
	if (n == 0) {
		fprintf(stderr, "shmschedd: --synthetic: a cluster needs a node\n");
		return -EINVAL;
	}
	c->synthetic_nodes = (uint32_t)n;
	c->synthetic_running = (uint32_t)r;
	return 0;
}

/* --socket-mode, --region-mode: octal, with no bits beyond rwx for user,
 * group, other. */
static int parse_mode(const char *opt, const char *s, mode_t *out)
{
	char *end;
	errno = 0;
	unsigned long v = strtoul(s, &end, 8);
	if (errno != 0 || end == s || *end != '\0' || s[0] == '-' || v > 0777 ||
	    (v & 0600) != 0600) {
		fprintf(stderr, "shmschedd: %s: \"%s\" is not an octal "
			"mode in 0600..0777 (the daemon's own user keeps rw)\n", opt, s);
		return -EINVAL;
	}
	*out = (mode_t)v;
	return 0;
}

/* --socket-group: a group name, or a number. */
static int parse_group(const char *s, gid_t *out)
{
	struct group *g = getgrnam(s);
	if (g != NULL) {
		*out = g->gr_gid;
		return 0;
	}
	uint64_t v;
	char *end;
	errno = 0;
	unsigned long long n = strtoull(s, &end, 10);
	if (errno == 0 && end != s && *end == '\0' && s[0] != '-' &&
	    n < UINT32_MAX) {
		v = n;
		*out = (gid_t)v;
		return 0;
	}
	fprintf(stderr, "shmschedd: --socket-group: \"%s\" is neither a group "
		"name nor a number\n", s);
	return -EINVAL;
}

/* The default socket path. Makes /run/shmsched when that is the one, with
 * the access the socket's mode and group ask for: a socket others may use
 * is useless in a directory they cannot enter. */
static const char *default_socket(char *buf, size_t len,
				  const struct daemon_config *cfg)
{
	const char *xdg = getenv("XDG_RUNTIME_DIR");
	if (xdg != NULL && *xdg != '\0') {
		snprintf(buf, len, "%s/shmsched.sock", xdg);
		return buf;
	}
	mode_t sock = cfg->socket_mode ? cfg->socket_mode : 0600;
	mode_t dir = 0700 | (sock & 0060 ? 0050 : 0) | (sock & 0006 ? 0005 : 0);
	if (mkdir("/run/shmsched", dir) < 0 && errno != EEXIST)
		fprintf(stderr, "shmschedd: cannot create /run/shmsched: %s\n",
			strerror(errno));
	else if (chmod("/run/shmsched", dir) < 0 ||
		 (cfg->has_socket_group &&
		  chown("/run/shmsched", (uid_t)-1, cfg->socket_group) < 0))
		fprintf(stderr, "shmschedd: cannot give /run/shmsched mode %04o%s: "
			"%s\n", (unsigned)dir,
			cfg->has_socket_group ? " and the socket's group" : "",
			strerror(errno));
	snprintf(buf, len, "/run/shmsched/shmsched.sock");
	return buf;
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{"cluster", required_argument, NULL, 'c'},
		{"synthetic", required_argument, NULL, 'y'},
		{"workers", required_argument, NULL, 'w'},
		{"socket", required_argument, NULL, 's'},
		{"config", required_argument, NULL, 'f'},
		{"slots", required_argument, NULL, 'l'},
		{"allow-uid", required_argument, NULL, 'u'},
		{"allow-gid", required_argument, NULL, 'g'},
		{"socket-mode", required_argument, NULL, 'm'},
		{"socket-group", required_argument, NULL, 'G'},
		{"admin-socket", required_argument, NULL, 'a'},
		{"admin-uid", required_argument, NULL, 'U'},
		{"admin-gid", required_argument, NULL, 'A'},
		{"policy", required_argument, NULL, 'Q'},
		{"seed", required_argument, NULL, 'e'},
		{"max-placements", required_argument, NULL, 'M'},
		{"no-pin", no_argument, NULL, 'p'},
		{"no-warm", no_argument, NULL, 'n'},
		{"wait", no_argument, NULL, 'W'},
		{"idle-timeout", required_argument, NULL, 'I'},
		{"name", required_argument, NULL, 'N'},
		{"ephemeral", no_argument, NULL, 'E'},
		{"fresh", no_argument, NULL, 'F'},
		{"resume", no_argument, NULL, 'r'},
		{"max-nodes", required_argument, NULL, 'X'},
		{"region-mode", required_argument, NULL, 'R'},
		{"region-group", required_argument, NULL, 'P'},
		{"state-dir", required_argument, NULL, 'D'},
		{"durability", required_argument, NULL, 'B'},
		{"log-format", required_argument, NULL, 'L'},
		{"log-file", required_argument, NULL, 'O'},
		{"strings-per-identity", required_argument, NULL, 0x4101},
		{"template-bytes-per-identity", required_argument, NULL, 0x4102},
		{"field-validation", required_argument, NULL, 'V'},
		{"node-monitor-grace-period", required_argument, NULL, 0x4103},
		{"node-eviction-rate", required_argument, NULL, 0x4104},
		{"secondary-node-eviction-rate", required_argument, NULL, 0x4105},
		{"unhealthy-zone-threshold", required_argument, NULL, 0x4106},
		{"large-cluster-size-threshold", required_argument, NULL, 0x4107},
		{"pool-label", required_argument, NULL, 0x4180},
		{"quarantine-threshold", required_argument, NULL, 0x4181},
		{"quarantine-min-nodes", required_argument, NULL, 0x4182},
		{"quarantine-window", required_argument, NULL, 0x4183},
		{"admission-fair-sharing-half-life", required_argument, NULL, 0x4190},
		{"admission-fair-sharing-sampling", required_argument, NULL, 0x4191},
		{"admission-fair-sharing-weight", required_argument, NULL, 0x4192},
		{"reclaim-min-run", required_argument, NULL, 0x41a0},
		{"reclaim-evict-cap", required_argument, NULL, 0x41a1},
		{"etcd", required_argument, NULL, 0x41b0},
		{"etcd-lease-ttl", required_argument, NULL, 0x41b1},
		{"etcd-cluster", required_argument, NULL, 0x41b2},
		{"host-name", required_argument, NULL, 0x41b3},
		{"shard-by", required_argument, NULL, 0x41b4},
		{"etcd-durability", required_argument, NULL, 0x41b5},
		{"help", no_argument, NULL, 'h'},
		{"version", no_argument, NULL, 'v'},
		{NULL, 0, NULL, 0},
	};
	struct daemon_config cfg = {.seed = 1, .pin = true,
				    .state_name = "shmsched"};
	bool ephemeral = false, named = false, durability_given = false;
	/* Admission fair sharing: its settings, Kueue's default sampling. */
	static struct afs_settings afs = {.sampling_ns = AFS_SAMPLING_DEFAULT_NS};
	bool afs_on = false, afs_given = false;
	enum log_format log_format = LOG_FORMAT_TEXT;
	const char *log_file = NULL;
	static uid_t uids[MAX_ALLOWED], admin_uids[MAX_ALLOWED];
	static gid_t gids[MAX_ALLOWED], admin_gids[MAX_ALLOWED];
	char socket_buf[PATH_MAX];
	uint64_t v;
	int c;
	while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		switch (c) {
		case 'c':
			cfg.cluster_path = optarg;
			break;
		case 'y':
			if (parse_synthetic(optarg, &cfg) < 0)
				return 2;
			break;
		case 'w':
			if (parse_u64("--workers", optarg, 256, &v) < 0)
				return 2;
			cfg.workers = (unsigned)v;
			break;
		case 's':
			cfg.socket_path = optarg;
			break;
		case 'f':
			cfg.config_path = optarg;
			break;
		case 'l':
			if (parse_u64("--slots", optarg, 1u << 20, &v) < 0)
				return 2;
			if (v == 0) {
				fprintf(stderr, "shmschedd: --slots: \"%s\": at least "
					"1\n", optarg);
				return 2;
			}
			cfg.slots = (uint32_t)v;
			break;
		case 'u':
		case 'g':
			if (parse_u64(c == 'u' ? "--allow-uid" : "--allow-gid", optarg,
				      UINT32_MAX - 1, &v) < 0)
				return 2;
			if ((c == 'u' ? cfg.n_allowed_uids : cfg.n_allowed_gids) ==
			    MAX_ALLOWED) {
				fprintf(stderr, "shmschedd: at most %d --allow-uid and "
					"%d --allow-gid\n", MAX_ALLOWED, MAX_ALLOWED);
				return 2;
			}
			if (c == 'u')
				uids[cfg.n_allowed_uids++] = (uid_t)v;
			else
				gids[cfg.n_allowed_gids++] = (gid_t)v;
			break;
		case 'U':
		case 'A':
			if (parse_u64(c == 'U' ? "--admin-uid" : "--admin-gid", optarg,
				      UINT32_MAX - 1, &v) < 0)
				return 2;
			if ((c == 'U' ? cfg.n_admin_uids : cfg.n_admin_gids) ==
			    MAX_ALLOWED) {
				fprintf(stderr, "shmschedd: at most %d --admin-uid and "
					"%d --admin-gid\n", MAX_ALLOWED, MAX_ALLOWED);
				return 2;
			}
			if (c == 'U')
				admin_uids[cfg.n_admin_uids++] = (uid_t)v;
			else
				admin_gids[cfg.n_admin_gids++] = (gid_t)v;
			break;
		case 'a':
			cfg.admin_socket_path = optarg;
			break;
		case 'I':
			if (parse_u64("--idle-timeout", optarg, 1000000, &v) < 0)
				return 2;
			cfg.idle_timeout_s = (unsigned)v;
			cfg.no_idle_timeout = v == 0;
			break;
		case 'm':
			if (parse_mode("--socket-mode", optarg, &cfg.socket_mode) < 0)
				return 2;
			break;
		case 'G':
			if (parse_group(optarg, &cfg.socket_group) < 0)
				return 2;
			cfg.has_socket_group = true;
			break;
		case 'M':
			if (parse_u64("--max-placements", optarg, UINT32_MAX - 1, &v) < 0)
				return 2;
			if (v == 0) {
				fprintf(stderr, "shmschedd: --max-placements: \"%s\": "
					"at least 1\n", optarg);
				return 2;
			}
			cfg.max_placements = (uint32_t)v;
			break;
		case 'e':
			if (parse_u64("--seed", optarg, UINT64_MAX, &v) < 0)
				return 2;
			cfg.seed = v;
			break;
		case 'p':
			cfg.pin = false;
			break;
		case 'n':
			cfg.no_warm = true;
			break;
		case 'Q':
			cfg.policy_path = optarg;
			break;
		case 'N':
			cfg.state_name = optarg;
			named = true;
			break;
		case 'E':
			ephemeral = true;
			break;
		case 'F':
			cfg.fresh = true;
			break;
		case 'r':
			cfg.resume = true;
			break;
		case 'W':
			cfg.wait_default = true;
			break;
		case 'X':
			if (parse_u64("--max-nodes", optarg, 1u << 24, &v) < 0)
				return 2;
			if (v == 0) {
				fprintf(stderr, "shmschedd: --max-nodes: \"%s\": at "
					"least 1\n", optarg);
				return 2;
			}
			cfg.max_nodes = (uint32_t)v;
			break;
		case 'R':
			if (parse_mode("--region-mode", optarg, &cfg.region_mode) < 0)
				return 2;
			break;
		case 'P':
			if (parse_group(optarg, &cfg.region_group) < 0)
				return 2;
			cfg.has_region_group = true;
			break;
		case 'D':
			if (optarg[0] == '\0') {
				fprintf(stderr, "shmschedd: --state-dir: an empty path\n");
				return 2;
			}
			cfg.state_dir = optarg;
			break;
		case 'B':
			if (strcmp(optarg, "none") == 0)
				cfg.durability = 0;
			else if (strcmp(optarg, "async") == 0)
				cfg.durability = 1;
			else if (strcmp(optarg, "sync") == 0)
				cfg.durability = 2;
			else {
				fprintf(stderr, "shmschedd: --durability: \"%s\": expected "
					"none, async or sync\n", optarg);
				return 2;
			}
			durability_given = true;
			break;
		case 'L':
			if (log_format_parse(optarg, &log_format) < 0) {
				fprintf(stderr, "shmschedd: --log-format: \"%s\": expected "
					"text or json\n", optarg);
				return 2;
			}
			break;
		case 'O':
			log_file = optarg;
			break;
		case 0x4101: /* issue 41's budgets (ingest/producers.h) */
		case 0x4102:
			if (parse_u64(c == 0x4101 ? "--strings-per-identity"
				      : "--template-bytes-per-identity", optarg,
				      UINT64_MAX - 1, &v) < 0 || v == 0) {
				fprintf(stderr, "shmschedd: %s: at least 1 byte\n",
					c == 0x4101 ? "--strings-per-identity"
					: "--template-bytes-per-identity");
				return 2;
			}
			*(c == 0x4101 ? &cfg.strings_per_identity
			  : &cfg.template_bytes_per_identity) = v;
			break;
		case 0x4103:
			if (parse_duration("--node-monitor-grace-period", optarg,
					   &cfg.node_monitor_grace_ns) < 0)
				return 2;
			break;
		case 0x4104:
		case 0x4105:
		case 0x4106: {
			const char *flag = c == 0x4104 ? "--node-eviction-rate"
					 : c == 0x4105 ? "--secondary-node-eviction-rate"
					 : "--unhealthy-zone-threshold";
			char *end;
			errno = 0;
			double rate = strtod(optarg, &end);
			bool frac = c == 0x4106;
			if (errno != 0 || end == optarg || *end != '\0' || !(rate >= 0) ||
			    rate > 1e9 || (frac && (rate <= 0 || rate > 1))) {
				fprintf(stderr, "shmschedd: %s: \"%s\": expected %s\n",
					flag, optarg, frac ? "a fraction in (0, 1], "
					"like 0.55" : "nodes per second >= 0, like 0.1");
				return 2;
			}
			/* daemon_config: 0 is the default, negative 0/s. */
			if (c == 0x4104)
				cfg.node_eviction_rate = rate > 0 ? rate : -1;
			else if (c == 0x4105)
				cfg.secondary_node_eviction_rate = rate > 0 ? rate : -1;
			else
				cfg.unhealthy_zone_threshold = rate;
			break;
		}
		case 0x4107: {
			char *end;
			errno = 0;
			unsigned long long nodes = strtoull(optarg, &end, 10);
			if (errno != 0 || end == optarg || *end != '\0' ||
			    optarg[0] == '-' || nodes > UINT32_MAX) {
				fprintf(stderr, "shmschedd: --large-cluster-size-threshold: "
					"\"%s\": expected a number of nodes, 0 to %u\n",
					optarg, UINT32_MAX);
				return 2;
			}
			cfg.large_cluster_size_threshold = nodes > 0 ? (int64_t)nodes : -1;
			break;
		}
		case 0x4180:
			if (optarg[0] == '\0') {
				fprintf(stderr, "shmschedd: --pool-label: \"\": expected a "
					"node label's key, like "
					"node.kubernetes.io/instance-type\n");
				return 2;
			}
			cfg.pool_label = optarg;
			break;
		case 0x4181: {
			char *end;
			errno = 0;
			double rate = strtod(optarg, &end);
			if (errno != 0 || end == optarg || *end != '\0' || !(rate > 0) ||
			    rate > 1) {
				fprintf(stderr, "shmschedd: --quarantine-threshold: \"%s\": "
					"expected failures per placement in (0, 1], like "
					"0.5\n", optarg);
				return 2;
			}
			cfg.quarantine_threshold = rate;
			break;
		}
		case 0x4182: {
			char *end;
			errno = 0;
			unsigned long nodes = strtoul(optarg, &end, 10);
			if (errno != 0 || end == optarg || *end != '\0' ||
			    optarg[0] == '-' || nodes < 1 || nodes > 16) {
				fprintf(stderr, "shmschedd: --quarantine-min-nodes: \"%s\": "
					"expected a number of nodes, 1 to 16\n", optarg);
				return 2;
			}
			cfg.quarantine_min_nodes = (uint32_t)nodes;
			break;
		}
		case 0x4190:
		case 0x4191: {
			uint64_t ns = 0;
			/* usageHalfLifeTime 0: "usage will be reset to 0". */
			if (!(c == 0x4190 && strcmp(optarg, "0") == 0) &&
			    parse_duration_max(c == 0x4190 ?
					       "--admission-fair-sharing-half-life" :
					       "--admission-fair-sharing-sampling",
					       optarg, AFS_DURATION_MAX_NS, &ns) < 0)
				return 2;
			if (c == 0x4190) {
				afs.half_life_ns = ns;
				afs_on = true;
			} else {
				afs.sampling_ns = ns;
			}
			afs_given = true;
			break;
		}
		case 0x4192:
			if (parse_afs_weight(optarg, &afs) < 0)
				return 2;
			afs_given = true;
			break;
		case 0x4183:
			if (parse_duration("--quarantine-window", optarg,
					   &cfg.quarantine_window_ns) < 0)
				return 2;
			if (cfg.quarantine_window_ns < UINT64_C(1000000000)) {
				fprintf(stderr, "shmschedd: --quarantine-window: \"%s\": "
					"expected at least 1s\n", optarg);
				return 2;
			}
			break;
		case 0x41a0:
			if (parse_u64("--reclaim-min-run", optarg, 31536000u, &v) < 0)
				return 2;
			cfg.reclaim_min_run_s = (uint32_t)v;
			break;
		case 0x41a1: {
			char *end;
			errno = 0;
			double ratio = strtod(optarg, &end);
			if (errno != 0 || end == optarg || *end != '\0' ||
			    !(ratio >= 1.0 && ratio <= 1000.0)) {
				fprintf(stderr, "shmschedd: --reclaim-evict-cap: \"%s\": "
					"expected a ratio from 1 to 1000 (1.5: evicted "
					"pods hold at most 1.5x what the preemptor asks)\n",
					optarg);
				return 2;
			}
			cfg.reclaim_evict_cap_milli = (uint32_t)(ratio * 1000.0 + 0.5);
			break;
		}
		case 0x41b0:
			if (*optarg == '\0') {
				fprintf(stderr, "shmschedd: --etcd: \"\": expected etcd's "
					"client URLs, comma separated "
					"(http://127.0.0.1:2379)\n");
				return 2;
			}
			cfg.etcd_endpoints = optarg;
			break;
		case 0x41b1:
			if (parse_u64("--etcd-lease-ttl", optarg, 3600, &v) < 0)
				return 2;
			if (v < 2) {
				fprintf(stderr, "shmschedd: --etcd-lease-ttl: \"%s\": "
					"expected 2 to 3600 seconds (etcd's least TTL "
					"is 2)\n", optarg);
				return 2;
			}
			cfg.etcd_lease_ttl_s = (int64_t)v;
			break;
		case 0x41b2:
			cfg.etcd_cluster = optarg; /* checked by the membership's start */
			break;
		case 0x41b3:
			cfg.host_name = optarg;
			break;
		case 0x41b4:
			if (*optarg == '\0' || strcmp(optarg, "hash") == 0) {
				fprintf(stderr, "shmschedd: --shard-by: \"%s\": expected a "
					"node label key (topology.kubernetes.io/zone); "
					"shards by a hash of the node's name are not "
					"built yet\n", optarg);
				return 2;
			}
			cfg.shard_label = optarg;
			break;
		case 0x41b5:
			if (strcmp(optarg, "sync") == 0) {
				cfg.etcd_durability = ETCD_DURABILITY_SYNC;
			} else if (strcmp(optarg, "async") == 0) {
				cfg.etcd_durability = ETCD_DURABILITY_ASYNC;
			} else if (strcmp(optarg, "none") == 0) {
				cfg.etcd_durability = ETCD_DURABILITY_NONE;
			} else {
				fprintf(stderr, "shmschedd: --etcd-durability: \"%s\": "
					"expected sync, async or none\n", optarg);
				return 2;
			}
			break;
		case 'V': {
			enum k8s_field_validation fv;
			if (k8s_field_validation_parse(optarg, &fv) < 0) {
				fprintf(stderr, "shmschedd: --field-validation: \"%s\": "
					"expected Strict, Warn or Ignore\n", optarg);
				return 2;
			}
			/* Before any load or thread (k8s_json.h). */
			k8s_set_field_validation((int)fv, warn_field, NULL);
			break;
		}
		case 'h':
			usage(stdout);
			return 0;
		case 'v':
			printf("shmschedd %s\n", SHMSCHED_VERSION_STRING);
			return 0;
		default: /* getopt_long has said what is wrong */
			fprintf(stderr, "Try 'shmschedd --help' for more information.\n");
			return 2;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "shmschedd: unexpected argument \"%s\"\n", argv[optind]);
		fprintf(stderr, "Try 'shmschedd --help' for more information.\n");
		return 2;
	}
	if (afs_given && !afs_on) {
		fprintf(stderr, "shmschedd: --admission-fair-sharing-sampling and "
			"--admission-fair-sharing-weight need "
			"--admission-fair-sharing-half-life (what turns it on)\n");
		return 2;
	}
	if (afs_on) {
		char afs_err[512];
		if (afs_settings_check(&afs, afs_err, sizeof(afs_err)) < 0) {
			fprintf(stderr, "shmschedd: %s\n", afs_err);
			return 2;
		}
		cfg.admission_fair_sharing = &afs;
	}
	if (ephemeral && named) {
		fprintf(stderr, "shmschedd: --name and --ephemeral: one or the other\n");
		return 2;
	}
	if (ephemeral)
		cfg.state_name = NULL;
	if (cfg.cluster_path != NULL && cfg.synthetic_nodes > 0) {
		fprintf(stderr, "shmschedd: --cluster and --synthetic: give one\n");
		return 2;
	}
	if (cfg.fresh && cfg.resume) {
		fprintf(stderr, "shmschedd: --fresh and --resume: give one\n");
		return 2;
	}
	bool input = cfg.cluster_path != NULL || cfg.synthetic_nodes > 0;
	if (!input && (cfg.fresh || !daemon_state_exists(&cfg))) {
		fprintf(stderr, "shmschedd: %s: give --cluster FILE or --synthetic "
			"NODES[:RUNNING] (what the state is built from)\n",
			cfg.fresh ? "--fresh rebuilds the state"
			: "no state to resume (no state region of that name, no "
			  "--state-dir store)");
		return 2;
	}
	if (durability_given && cfg.state_dir == NULL) {
		fprintf(stderr, "shmschedd: --durability needs --state-dir\n");
		return 2;
	}
	if (!durability_given)
		cfg.durability = 1; /* async */
	cfg.allowed_uids = uids;
	cfg.allowed_gids = gids;
	cfg.admin_uids = admin_uids;
	cfg.admin_gids = admin_gids;
	if (cfg.socket_path == NULL)
		cfg.socket_path = default_socket(socket_buf, sizeof(socket_buf), &cfg);

	int lrc = log_open("shmschedd", log_format, log_file);
	if (lrc < 0) {
		fprintf(stderr, "shmschedd: --log-file: %s: %s\n", log_file,
			strerror(-lrc));
		return 1;
	}

	/* Before any thread starts: all of them inherit the mask. */
	sigset_t stop;
	cli_service_signals(&stop);

	char err[1024];
	struct daemon *d = daemon_start(&cfg, err, sizeof(err));
	if (d == NULL) {
		fprintf(stderr, "shmschedd: %s\n", err);
		return 1;
	}
	struct daemon_stats st;
	daemon_get_stats(d, &st);
	char admin_buf[PATH_MAX];
	const char *origin = daemon_origin(d);
	printf("shmschedd: ready: socket %s, admin socket %s, %u nodes, %u "
	       "workers, pid %d; state %s, built from %s\n", cfg.socket_path,
	       daemon_admin_socket(&cfg, admin_buf, sizeof(admin_buf)), st.nodes,
	       st.workers, (int)getpid(), daemon_start_kind(d),
	       origin[0] ? origin : "(not recorded)");
	fflush(stdout);
	cli_notify("READY=1\nSTATUS=serving");

	cli_service_wait_hup(&stop, log_file,
			     cfg.policy_path != NULL ? reload_policy : NULL, d);
	daemon_stop(d, 5000, &st);
	log_msg(LOG_LEVEL_INFO, "stopped: %" PRIu64 " pods answered (%" PRIu64
		" placed, %" PRIu64 " unschedulable, %" PRIu64 " rejected, %" PRIu64
		" cancelled), %" PRIu64 " conflicts, %" PRIu64 " producers served",
		st.pods, st.placed, st.unschedulable, st.rejected, st.cancelled,
		st.conflicts, st.producers_registered);
	if (st.waited > 0)
		fprintf(stderr, "shmschedd: %" PRIu64 " pods waited: %" PRIu64
			" placed, %" PRIu64 " past their deadline, %" PRIu64
			" cancelled by their producer, %" PRIu64 " at the stop, %"
			PRIu64 " forgotten with their producer; %" PRIu64
			" attempts from the queue, %" PRIu64 " woken by events\n",
			st.waited, st.waited_placed, st.timed_out,
			st.cancelled_by_producer, st.cancelled_waiting_at_shutdown,
			st.forgotten_with_producer, st.queue_retries, st.queue_woken);
	return 0;
}
