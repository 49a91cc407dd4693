/* shmsched status: what a daemon's state region holds, read in place
 * through the observer API (include/shmsched/observe.h), so it works on a
 * running daemon's region and on one a crashed daemon left behind alike,
 * and asks the daemon nothing. Thin: the library reads and checks; this
 * file lays the answer out, as a table for a person or as one JSON
 * object: the cluster's totals first, then the region and daemon, then
 * the tables; --summary stops before the tables, --node NAME shows that
 * one node. */
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/base.h"
#include "cli/status.h"
#include "shmsched/observe.h"

static void usage(FILE *to)
{
	fprintf(to,
		"usage: shmsched status [--name NAME] [--summary | --node NODE] [--json]\n"
		"                       [--queues [--admin-socket PATH]]\n"
		"\n"
		"Reads the state region of the daemon started with --name NAME\n"
		"(default " SHMSCHED_OBSERVE_DEFAULT_NAME ", /dev/shm/NAME) read-only, without\n"
		"asking the daemon: whether a daemon runs on it, the current\n"
		"snapshot's totals (first), its nodes with what they hold, producers,\n"
		"workers and their scheduling queues. Works on a crashed daemon's\n"
		"region too. Reading it takes read permission on the region's file\n"
		"(the daemon's --region-mode).\n"
		"--summary: the totals, region and daemon only, no tables.\n"
		"--node NODE: that one node only (exit 1 when the snapshot has none).\n"
		"--json: one JSON object (with --summary: without the nodes, producers\n"
		"and workers lists; with --node: that node's object).\n"
		"--queues: then asks the daemon's admin socket (it must run) for what\n"
		"the region does not hold: each ClusterQueue's usage, nominal quota,\n"
		"borrowing limit and weighted share per flavor and resource, its\n"
		"pending and admitted workloads (at most 40 lines, then \"... and K\n"
		"more\"), the node lifecycle's counts, the pool quarantine's (pairs\n"
		"quarantined, failures reported, trips, refusals) and the approving\n"
		"managers' (asks, grants, denials, deadlines passed). Not with --json\n"
		"or --node.\n"
		"--admin-socket PATH: for --queues: else $SHMSCHED_ADMIN_SOCKET, else\n"
		"the daemon's socket with \".admin\" appended.\n"
		"\n"
		"exit status: 0; 1 no such region or node, or it could not be read;\n"
		"2 bad usage\n");
}

/* Everything one status shows, read before anything is printed. */
struct status {
	struct shmsched_observe_summary sum;
	struct shmsched_observe_node *nodes;
	unsigned n_nodes;
	uint64_t generation;
	struct shmsched_observe_producer *producers;
	unsigned n_producers;
	struct shmsched_observe_worker *workers;
	unsigned n_workers;
};

static void status_free(struct status *s)
{
	free(s->nodes);
	free(s->producers);
	free(s->workers);
}

/* Grows *arr to hold `want` entries of `size` bytes (plus room for a few
 * more, as a list may grow between two reads). */
static int grow(void **arr, unsigned *room, unsigned want, size_t size)
{
	unsigned n = want + 16;
	void *p = realloc(*arr, n * size);
	if (p == NULL)
		return -ENOMEM;
	*arr = p;
	*room = n;
	return 0;
}

/* Each list is read once for its length, then again with room for it,
 * until it fits (it may grow in between). */
static int status_read(const char *name, struct status *s, char *err,
		       size_t err_len)
{
	struct shmsched_observer *obs;
	int rc = shmsched_observe_open(name, &obs, err, err_len);
	if (rc < 0)
		return rc;
	rc = shmsched_observe_summary(obs, &s->sum, err, err_len);
	unsigned room = 0;
	while (rc == 0) {
		rc = shmsched_observe_nodes(obs, s->nodes, room, &s->n_nodes,
					    &s->generation, err, err_len);
		if (rc < 0 || s->n_nodes <= room)
			break;
		rc = grow((void **)&s->nodes, &room, s->n_nodes, sizeof(*s->nodes));
	}
	room = 0;
	while (rc == 0) {
		rc = shmsched_observe_producers(obs, s->producers, room,
						&s->n_producers, err, err_len);
		if (rc < 0 || s->n_producers <= room)
			break;
		rc = grow((void **)&s->producers, &room, s->n_producers,
			  sizeof(*s->producers));
	}
	room = 0;
	while (rc == 0) {
		rc = shmsched_observe_workers(obs, s->workers, room, &s->n_workers);
		if (rc < 0 || s->n_workers <= room)
			break;
		rc = grow((void **)&s->workers, &room, s->n_workers,
			  sizeof(*s->workers));
	}
	if (rc == -ENOMEM)
		snprintf(err, err_len, "out of memory");
	shmsched_observe_close(obs);
	return rc;
}

/* Bytes for a person: the largest binary unit that leaves a number >= 1. */
static const char *human_bytes(int64_t v, char *buf, size_t len)
{
	static const char *units[] = {"", "Ki", "Mi", "Gi", "Ti", "Pi"};
	double d = (double)v;
	unsigned u = 0;
	while ((d >= 1024.0 || d <= -1024.0) && u + 1 < sizeof(units) / sizeof(units[0])) {
		d /= 1024.0;
		u++;
	}
	if (u == 0)
		snprintf(buf, len, "%" PRId64, v);
	else
		snprintf(buf, len, "%.1f%s", d, units[u]);
	return buf;
}

static const char *durability_name(uint32_t d)
{
	return d == 0 ? "none" : d == 1 ? "async" : d == 2 ? "sync" : "unknown";
}

struct totals {
	int64_t cpu, used_cpu, mem, used_mem, pods, used_pods;
	uint64_t placements;
	unsigned cordoned;
	unsigned unreachable;
};

static struct totals totals_of(const struct status *s)
{
	struct totals t = {0};
	for (unsigned i = 0; i < s->n_nodes; i++) {
		const struct shmsched_observe_node *n = &s->nodes[i];
		t.cpu += n->cpu_milli;
		t.used_cpu += n->used_cpu_milli;
		t.mem += n->mem_bytes;
		t.used_mem += n->used_mem_bytes;
		t.pods += n->pods;
		t.used_pods += n->used_pods;
		t.placements += n->placements;
		t.cordoned += n->cordoned != 0;
		t.unreachable += n->unreachable != 0;
	}
	return t;
}

/* used as a share of all, for a person: "15%" (0 of 0 is 0%). */
static int percent(int64_t used, int64_t all)
{
	return all > 0 ? (int)((100 * (double)used) / (double)all + 0.5) : 0;
}

static void print_totals(const struct status *s)
{
	struct totals t = totals_of(s);
	char a[32], b[32], c[32], d[32];
	char unknown[48] = "";
	if (t.unreachable > 0)
		snprintf(unknown, sizeof(unknown), ", %u Unknown", t.unreachable);
	printf("totals      %u nodes (%u cordoned%s): cpu %s of %s cores (%d%%), "
	       "memory %s of %s (%d%%), pods %" PRId64 " of %" PRId64 "; %"
	       PRIu64 " placements on nodes\n", s->n_nodes, t.cordoned, unknown,
	       units_cpu(t.used_cpu, a, sizeof(a)), units_cpu(t.cpu, b, sizeof(b)),
	       percent(t.used_cpu, t.cpu), human_bytes(t.used_mem, c, sizeof(c)),
	       human_bytes(t.mem, d, sizeof(d)), percent(t.used_mem, t.mem),
	       t.used_pods, t.pods, t.placements);
}

/* One node, for `--node NAME`: what it has, what is used. */
static void print_node_text(const struct shmsched_observe_node *n)
{
	char a[32], b[32], c[32], d[32];
	printf("node        %s (id %" PRIu32 ")%s%s\n", n->name, n->node_id,
	       n->cordoned ? ", cordoned" : "",
	       n->unreachable ? ", Unknown (lease expired: tainted "
				"node.kubernetes.io/unreachable:NoExecute)" : "");
	printf("cpu         %s of %s cores (%d%%)\n",
	       units_cpu(n->used_cpu_milli, a, sizeof(a)),
	       units_cpu(n->cpu_milli, b, sizeof(b)),
	       percent(n->used_cpu_milli, n->cpu_milli));
	printf("memory      %s of %s (%d%%)\n",
	       human_bytes(n->used_mem_bytes, c, sizeof(c)),
	       human_bytes(n->mem_bytes, d, sizeof(d)),
	       percent(n->used_mem_bytes, n->mem_bytes));
	printf("pods        %" PRId64 " of %" PRId64 "; %" PRIu64 " placement%s\n",
	       n->used_pods, n->pods, n->placements,
	       n->placements == 1 ? "" : "s");
	printf("devices     %" PRIu32 " GPU%s, %" PRIu32 " exclusive core%s\n",
	       n->gpus, n->gpus == 1 ? "" : "s", n->cores, n->cores == 1 ? "" : "s");
	printf("labels      %" PRIu32 ", taints %" PRIu32 "\n", n->labels, n->taints);
}

static void print_text(const struct status *s, bool summary)
{
	const struct shmsched_observe_summary *m = &s->sum;
	char a[32], b[32];
	print_totals(s);
	printf("region      %s (%s, %sB)\n", m->name, m->path,
	       human_bytes((int64_t)m->total_bytes, a, sizeof(a)));
	printf("backing     %" PRIu64 "-byte pages: %s\n", m->page_bytes,
	       m->page_info[0] ? m->page_info : "(not recorded)");
	if (m->daemon_running)
		printf("daemon      running, pid %" PRId32 " (%" PRIu64 " start%s "
		       "on this region)\n", m->daemon_pid, m->starts,
		       m->starts == 1 ? "" : "s");
	else
		printf("daemon      no daemon holds it: crashed or stopped (clean "
		       "stop: %s); last pid %" PRId32 "\n",
		       m->clean_stop ? "yes" : "no", m->daemon_pid);
	printf("snapshot    generation %" PRIu64 ", %u node%s (room for %" PRIu32
	       "), %" PRIu32 " strings\n", s->generation, s->n_nodes,
	       s->n_nodes == 1 ? "" : "s", m->max_nodes, m->strings);
	printf("placements  %" PRIu64 " live (%" PRIu64 " declared bound) of %"
	       PRIu32 "; at the last start: %" PRIu64 " recovered, %" PRIu64
	       " node%s recounted\n", m->placements, m->bound_placements,
	       m->max_placements, m->recovered_placements, m->rolled_back,
	       m->rolled_back == 1 ? "" : "s");
	printf("resyncs     %" PRIu64 " (pods added %" PRIu64 ", removed %" PRIu64
	       ", resized %" PRIu64 ")\n", m->resyncs, m->resync_added,
	       m->resync_removed, m->resync_resized);
	printf("durability  %s\n", durability_name(m->durability));
	if (summary)
		return;

	int w = 4;
	for (unsigned i = 0; i < s->n_nodes; i++) {
		int len = (int)strlen(s->nodes[i].name);
		if (len > w)
			w = len;
	}
	printf("\nnodes\n  %-*s %8s %8s %10s %10s %6s %6s %10s %s\n", w, "NAME",
	       "CPU", "CPU USED", "MEMORY", "MEM USED", "PODS", "USED",
	       "PLACEMENTS", "CORDONED");
	for (unsigned i = 0; i < s->n_nodes; i++) {
		const struct shmsched_observe_node *n = &s->nodes[i];
		printf("  %-*s %7" PRId64 "m %7" PRId64 "m %10s %10s %6" PRId64
		       " %6" PRId64 " %10" PRIu64 " %s%s\n", w, n->name, n->cpu_milli,
		       n->used_cpu_milli, human_bytes(n->mem_bytes, a, sizeof(a)),
		       human_bytes(n->used_mem_bytes, b, sizeof(b)), n->pods,
		       n->used_pods, n->placements, n->cordoned ? "yes" : "no",
		       n->unreachable ? " (Unknown)" : "");
	}
	if (s->n_nodes == 0)
		printf("  (none)\n");

	printf("\nproducers\n  %6s %-24s %9s %10s\n", "UID", "NAME", "CONNECTED",
	       "PLACEMENTS");
	for (unsigned i = 0; i < s->n_producers; i++) {
		const struct shmsched_observe_producer *p = &s->producers[i];
		printf("  %6" PRIu32 " %-24s %9" PRIu32 " %10" PRIu64 "\n", p->uid,
		       p->name[0] ? p->name : "\"\"", p->connections, p->placements);
	}
	if (s->n_producers == 0)
		printf("  (none)\n");

	printf("\nworkers\n  %3s %10s %10s %13s %8s %9s %9s %7s\n", "#", "PODS",
	       "PLACED", "UNSCHEDULABLE", "REJECTED", "CANCELLED", "CONFLICTS",
	       "GAVE UP");
	for (unsigned i = 0; i < s->n_workers; i++) {
		const struct shmsched_observe_worker *k = &s->workers[i];
		printf("  %3" PRIu32 " %10" PRIu64 " %10" PRIu64 " %13" PRIu64 " %8"
		       PRIu64 " %9" PRIu64 " %9" PRIu64 " %7" PRIu64 "\n", k->index,
		       k->pods, k->placed, k->unschedulable, k->rejected,
		       k->cancelled, k->conflicts, k->gave_up);
	}
	if (s->n_workers == 0)
		printf("  (none)\n");

	printf("\nqueue\n  %3s %7s %8s %13s %8s %8s %9s %9s %10s %8s\n", "#",
	       "ACTIVE", "BACKOFF", "UNSCHEDULABLE", "WAITED", "PLACED",
	       "TIMED OUT", "CANCELLED", "PREEMPTING", "VICTIMS");
	for (unsigned i = 0; i < s->n_workers; i++) {
		const struct shmsched_observe_worker *k = &s->workers[i];
		printf("  %3" PRIu32 " %7" PRIu64 " %8" PRIu64 " %13" PRIu64 " %8"
		       PRIu64 " %8" PRIu64 " %9" PRIu64 " %9" PRIu64 " %10" PRIu64
		       " %8" PRIu64 "\n", k->index, k->pending_active,
		       k->pending_backoff, k->pending_unschedulable, k->waited,
		       k->waited_placed, k->timed_out,
		       k->waiting_cancelled + k->forgotten, k->preemption_attempts,
		       k->preemption_victims);
	}
	if (s->n_workers == 0)
		printf("  (none)\n");

}

static void print_node_json(const struct shmsched_observe_node *n)
{
	printf("{\"id\":%" PRIu32 ",\"name\":", n->node_id);
	json_out_string(stdout, n->name);
	printf(",\"cpu_milli\":%" PRId64 ",\"used_cpu_milli\":%" PRId64
	       ",\"mem_bytes\":%" PRId64 ",\"used_mem_bytes\":%" PRId64
	       ",\"pods\":%" PRId64 ",\"used_pods\":%" PRId64 ",\"placements\":%"
	       PRIu64 ",\"labels\":%" PRIu32 ",\"taints\":%" PRIu32 ",\"gpus\":%"
	       PRIu32 ",\"cores\":%" PRIu32 ",\"cordoned\":%s,\"unreachable\":%s}",
	       n->cpu_milli, n->used_cpu_milli, n->mem_bytes, n->used_mem_bytes,
	       n->pods, n->used_pods, n->placements, n->labels, n->taints, n->gpus,
	       n->cores, n->cordoned ? "true" : "false",
	       n->unreachable ? "true" : "false");
}

/* ,"totals":{...}: a member of the object being written. */
static void print_json_totals(const struct status *s)
{
	struct totals t = totals_of(s);
	printf(",\"totals\":{\"nodes\":%u,\"cordoned\":%u,\"unreachable\":%u,"
	       "\"cpu_milli\":%" PRId64
	       ",\"used_cpu_milli\":%" PRId64 ",\"mem_bytes\":%" PRId64
	       ",\"used_mem_bytes\":%" PRId64 ",\"pods\":%" PRId64 ",\"used_pods\":%"
	       PRId64 ",\"placements_on_nodes\":%" PRIu64 "}", s->n_nodes,
	       t.cordoned, t.unreachable, t.cpu, t.used_cpu, t.mem, t.used_mem, t.pods,
	       t.used_pods, t.placements);
}

static void print_json(const struct status *s, bool summary)
{
	const struct shmsched_observe_summary *m = &s->sum;
	printf("{\"region\":{\"name\":");
	json_out_string(stdout, m->name);
	printf(",\"path\":");
	json_out_string(stdout, m->path);
	printf(",\"bytes\":%" PRIu64 ",\"page_bytes\":%" PRIu64 ",\"page_info\":",
	       m->total_bytes, m->page_bytes);
	json_out_string(stdout, m->page_info);
	printf("},\"daemon\":{\"running\":%s,\"pid\":%" PRId32 ",\"clean_stop\":%s,"
	       "\"starts\":%" PRIu64 ",\"created_s\":%" PRIu64 ",\"started_s\":%"
	       PRIu64 "}", m->daemon_running ? "true" : "false", m->daemon_pid,
	       m->clean_stop ? "true" : "false", m->starts, m->created_s,
	       m->started_s);
	printf(",\"snapshot\":{\"generation\":%" PRIu64 ",\"nodes\":%u,"
	       "\"node_slots\":%" PRIu32 "}", s->generation, s->n_nodes,
	       m->node_slots);
	printf(",\"capacities\":{\"nodes\":%" PRIu32 ",\"placements\":%" PRIu32
	       ",\"strings\":%" PRIu32 ",\"arena_bytes\":%" PRIu64 "}",
	       m->max_nodes, m->max_placements, m->max_strings, m->arena_bytes);
	printf(",\"strings\":%" PRIu32 ",\"placements\":{\"live\":%" PRIu64
	       ",\"bound\":%" PRIu64 ",\"recovered\":%" PRIu64 ",\"nodes_recounted\":%"
	       PRIu64 "}", m->strings, m->placements, m->bound_placements,
	       m->recovered_placements, m->rolled_back);
	printf(",\"resync\":{\"runs\":%" PRIu64 ",\"added\":%" PRIu64 ",\"removed\":%"
	       PRIu64 ",\"resized\":%" PRIu64 "},\"durability\":\"%s\"", m->resyncs,
	       m->resync_added, m->resync_removed, m->resync_resized,
	       durability_name(m->durability));
	if (summary) {
		print_json_totals(s);
		printf("}\n");
		return;
	}
	printf(",\"nodes\":[");
	for (unsigned i = 0; i < s->n_nodes; i++) {
		printf("%s", i ? "," : "");
		print_node_json(&s->nodes[i]);
	}
	printf("],\"producers\":[");
	for (unsigned i = 0; i < s->n_producers; i++) {
		const struct shmsched_observe_producer *p = &s->producers[i];
		printf("%s{\"owner\":%" PRIu32 ",\"uid\":%" PRIu32 ",\"name\":",
		       i ? "," : "", p->owner, p->uid);
		json_out_string(stdout, p->name);
		printf(",\"connections\":%" PRIu32 ",\"placements\":%" PRIu64 "}",
		       p->connections, p->placements);
	}
	printf("],\"workers\":[");
	for (unsigned i = 0; i < s->n_workers; i++) {
		const struct shmsched_observe_worker *k = &s->workers[i];
		printf("%s{\"index\":%" PRIu32 ",\"pods\":%" PRIu64 ",\"placed\":%"
		       PRIu64 ",\"unschedulable\":%" PRIu64 ",\"rejected\":%" PRIu64
		       ",\"cancelled\":%" PRIu64 ",\"conflicts\":%" PRIu64
		       ",\"gave_up\":%" PRIu64 ",\"bad_handles\":%" PRIu64
		       ",\"completion_overflows\":%" PRIu64, i ? "," : "", k->index,
		       k->pods, k->placed, k->unschedulable, k->rejected, k->cancelled,
		       k->conflicts, k->gave_up, k->bad_handles,
		       k->completion_overflows);
		printf(",\"queue\":{\"active\":%" PRIu64 ",\"backoff\":%" PRIu64
		       ",\"unschedulable\":%" PRIu64 ",\"gated\":%" PRIu64
		       ",\"waited\":%" PRIu64 ",\"waited_placed\":%" PRIu64
		       ",\"timed_out\":%" PRIu64 ",\"cancelled\":%" PRIu64
		       ",\"forgotten\":%" PRIu64 ",\"woken\":%" PRIu64
		       ",\"preemption_attempts\":%" PRIu64 ",\"preemption_victims\":%"
		       PRIu64 ",\"attempts\":[", k->pending_active,
		       k->pending_backoff, k->pending_unschedulable, k->pending_gated,
		       k->waited, k->waited_placed, k->timed_out,
		       k->waiting_cancelled, k->forgotten, k->queue_woken,
		       k->preemption_attempts, k->preemption_victims);
		for (unsigned a = 0; a < sizeof(k->attempts) / sizeof(k->attempts[0]); a++)
			printf("%s%" PRIu64, a ? "," : "", k->attempts[a]);
		printf("]}}");
	}
	printf("]");
	print_json_totals(s);
	printf("}\n");
}

int status_main(int argc, char **argv)
{
	const char *name = NULL, *node = NULL, *admin = NULL;
	bool json = false, summary = false, queues = false;
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
			usage(stdout);
			return 0;
		} else if (strcmp(argv[i], "--json") == 0) {
			json = true;
		} else if (strcmp(argv[i], "--summary") == 0) {
			summary = true;
		} else if (strcmp(argv[i], "--queues") == 0) {
			queues = true;
		} else if (strcmp(argv[i], "--admin-socket") == 0 && i + 1 < argc) {
			admin = argv[++i];
		} else if (strcmp(argv[i], "--name") == 0 && i + 1 < argc) {
			name = argv[++i];
		} else if (strcmp(argv[i], "--node") == 0 && i + 1 < argc) {
			node = argv[++i];
		} else {
			bool valued = strcmp(argv[i], "--name") == 0 ||
				      strcmp(argv[i], "--node") == 0 ||
				      strcmp(argv[i], "--admin-socket") == 0;
			fprintf(stderr, "shmsched status: %s \"%s\"\n"
				"Try 'shmsched status --help' for more "
				"information.\n", valued ? "a value is needed after" :
				"unexpected argument", argv[i]);
			return 2;
		}
	}
	if (summary && node != NULL) {
		fprintf(stderr, "shmsched status: --summary and --node \"%s\" do not "
			"go together (one shows no node, the other one)\n", node);
		return 2;
	}
	if (queues && (json || node != NULL)) {
		fprintf(stderr, "shmsched status: --queues goes with the text of the "
			"whole status or --summary, not with --json or --node\n");
		return 2;
	}
	struct status s = {0};
	char why[1024] = "";
	int rc = status_read(name, &s, why, sizeof(why));
	if (rc < 0) {
		fprintf(stderr, "shmsched status: %s\n", why);
		status_free(&s);
		/* -EINVAL from the open: the name given is not one a region
		 * can have. */
		return rc == -EINVAL ? 2 : 1;
	}
	if (node != NULL) {
		const struct shmsched_observe_node *n = NULL;
		for (unsigned i = 0; i < s.n_nodes && n == NULL; i++)
			if (strcmp(s.nodes[i].name, node) == 0)
				n = &s.nodes[i];
		if (n == NULL) {
			fprintf(stderr, "shmsched status: no node \"%s\" in snapshot "
				"generation %" PRIu64 " (%u node%s%s", node,
				s.generation, s.n_nodes, s.n_nodes == 1 ? "" : "s",
				s.n_nodes ? ": " : "");
			for (unsigned i = 0; i < s.n_nodes && i < 8; i++)
				fprintf(stderr, "%s%s", i ? ", " : "", s.nodes[i].name);
			fprintf(stderr, "%s)\n", s.n_nodes > 8 ? ", ..." : "");
			status_free(&s);
			return 1;
		}
		if (json) {
			print_node_json(n);
			printf("\n");
		} else {
			print_node_text(n);
		}
	} else if (json) {
		print_json(&s, summary);
	} else {
		print_text(&s, summary);
	}
	status_free(&s);
	return queues ? status_queues(admin) : 0;
}
