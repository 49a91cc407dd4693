/* shmsched status --queues: the daemon's figures that its state region
 * does not hold, asked of its admin socket (OP_QUEUE_METRICS,
 * ingest/control_ops.h) and laid out for a person: each ClusterQueue's
 * usage, nominal quota and borrowing limit per flavor and resource, its
 * weighted share and its workloads (pending, admitted), then the node
 * lifecycle's counts, the pool quarantine's and the approving managers'.
 * The answer is Prometheus text (Kueue's names, shmsched_*); it
 * is read here line by line, each sample's labels and value taken as
 * they come and anything else passed over, so an unexpected line costs
 * nothing but its row. At most STATUS_QUEUE_LINES rows, then "... and K
 * more". */
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/admin_call.h"
#include "cli/node.h"
#include "cli/status.h"
#include "ingest/ingest.h"

#define STATUS_QUEUE_LINES 40u
#define LABEL_MAX 256

struct sample {
	char name[64];
	char cq[LABEL_MAX], flavor[LABEL_MAX], resource[LABEL_MAX];
	char status[32], state[32], event[32], decision[32];
	char value[40];
};

/* One label value, escapes undone, cut to fit; returns past its quote or
 * NULL. */
static const char *label_value(const char *p, char *out, size_t len)
{
	size_t k = 0;
	for (; *p != '\0' && *p != '"'; p++) {
		char c = *p;
		if (c == '\\' && p[1] != '\0') {
			p++;
			c = *p == 'n' ? '\n' : *p;
		}
		if (k + 1 < len)
			out[k++] = c;
	}
	out[k] = '\0';
	return *p == '"' ? p + 1 : NULL;
}

/* A sample line "name{k="v",...} value": false for anything else. */
static bool parse(const char *line, struct sample *s)
{
	memset(s, 0, sizeof(*s));
	size_t n = strcspn(line, "{ ");
	if (n == 0 || n >= sizeof(s->name) || line[0] == '#')
		return false;
	memcpy(s->name, line, n);
	const char *p = line + n;
	if (*p == '{') {
		p++;
		while (*p != '}') {
			size_t kl = strcspn(p, "=");
			if (p[kl] != '=' || p[kl + 1] != '"')
				return false;
			char *to = NULL;
			size_t to_len = 0;
			static char skip[LABEL_MAX];
#define KEY(k, f) else if (kl == strlen(k) && strncmp(p, k, kl) == 0) \
	(to = s->f, to_len = sizeof(s->f))
			if (0) {}
			KEY("cluster_queue", cq);
			KEY("flavor", flavor);
			KEY("resource", resource);
			KEY("status", status);
			KEY("state", state);
			KEY("event", event);
			KEY("decision", decision);
			else
				(to = skip, to_len = sizeof(skip));
#undef KEY
			p = label_value(p + kl + 2, to, to_len);
			if (p == NULL)
				return false;
			if (*p == ',')
				p++;
			else if (*p != '}')
				return false;
		}
		p++;
	}
	if (*p != ' ')
		return false;
	snprintf(s->value, sizeof(s->value), "%.*s", (int)strcspn(p + 1, "\n"), p + 1);
	return true;
}

static bool is(const struct sample *s, const char *name)
{
	return strcmp(s->name, name) == 0;
}

/* The value of sample `name` with the labels of `like` (the fields given
 * as non-NULL), or "-". */
static const char *find(const struct sample *v, size_t n, const char *name,
			const char *cq, const char *flavor, const char *resource,
			const char *status)
{
	for (size_t i = 0; i < n; i++)
		if (is(&v[i], name) && strcmp(v[i].cq, cq) == 0 &&
		    (flavor == NULL || strcmp(v[i].flavor, flavor) == 0) &&
		    (resource == NULL || strcmp(v[i].resource, resource) == 0) &&
		    (status == NULL || strcmp(v[i].status, status) == 0))
			return v[i].value;
	return "-";
}

/* Prints each ClusterQueue's line (by its admitted total's sample: one
 * per queue, in the daemon's order, written before the gauges that an
 * answer cut for its size loses first), then its flavors' and resources'
 * rows; at most STATUS_QUEUE_LINES lines. Returns how many were left out. */
static unsigned print_rows(const struct sample *v, size_t n)
{
	unsigned shown = 0, left = 0;
	bool any = false;
	printf("ClusterQueues (the daemon's admin socket; cpu in cores):\n");
	for (size_t i = 0; i < n; i++) {
		if (!is(&v[i], "kueue_admitted_workloads_total"))
			continue;
		any = true;
		if (shown < STATUS_QUEUE_LINES) {
			shown++;
			printf("  %s: weighted share %s; pending %s active, %s "
			       "inadmissible; admitted %s\n", v[i].cq,
			       find(v, n, "kueue_cluster_queue_weighted_share",
				    v[i].cq, NULL, NULL, NULL),
			       find(v, n, "kueue_pending_workloads", v[i].cq, NULL,
				    NULL, "active"),
			       find(v, n, "kueue_pending_workloads", v[i].cq, NULL,
				    NULL, "inadmissible"),
			       v[i].value);
		} else {
			left++;
		}
		for (size_t k = 0; k < n; k++) {
			const struct sample *u = &v[k];
			if (!is(u, "kueue_cluster_queue_resource_usage") ||
			    strcmp(u->cq, v[i].cq) != 0)
				continue;
			if (shown == STATUS_QUEUE_LINES) {
				left++;
				continue;
			}
			shown++;
			printf("    %s %s: usage %s of nominal %s, borrowing limit "
			       "%s\n", u->flavor, u->resource, u->value,
			       find(v, n, "kueue_cluster_queue_nominal_quota", u->cq,
				    u->flavor, u->resource, NULL),
			       find(v, n, "kueue_cluster_queue_borrowing_limit", u->cq,
				    u->flavor, u->resource, NULL));
		}
	}
	if (!any)
		printf("  none (the daemon has no Kueue quotas)\n");
	if (left > 0)
		printf("  ... and %u more\n", left);
	return left;
}

static void print_lifecycle(const struct sample *v, size_t n)
{
	bool any = false;
	for (size_t i = 0; i < n && !any; i++)
		any = strncmp(v[i].name, "shmsched_node_", 14) == 0;
	if (!any)
		return;
	const char *zone[4] = {"-", "-", "-", "-"};
	static const char *const states[4] = {"Initial", "Normal",
					      "PartialDisruption", "FullDisruption"};
	for (size_t i = 0; i < n; i++)
		for (int k = 0; k < 4; k++)
			if (is(&v[i], "shmsched_node_zones") &&
			    strcmp(v[i].state, states[k]) == 0)
				zone[k] = v[i].value;
	const char *val[6] = {"-", "-", "-", "-", "-", "-"};
	static const char *const names[6] = {
		"shmsched_node_tainted", "shmsched_node_taints_queued",
		"shmsched_node_taints_total", "shmsched_node_evictions_pending",
		"shmsched_node_evictions_total", "shmsched_node_tolerations_kept"};
	for (size_t i = 0; i < n; i++)
		for (int k = 0; k < 6; k++)
			if (is(&v[i], names[k]))
				val[k] = v[i].value;
	printf("Node lifecycle: zones %s initial, %s normal, %s partial "
	       "disruption, %s full disruption; %s node(s) tainted unreachable "
	       "(%s queued for their zone's rate, %s ever); taint evictions %s "
	       "scheduled, %s done; %s placement(s) with tolerations kept\n",
	       zone[0], zone[1], zone[2], zone[3], val[0], val[1], val[2], val[3],
	       val[4], val[5]);
}

/* The value of sample `name` whose label `key` (event or decision) is
 * `v` (NULL: any), or "-". */
static const char *value_of(const struct sample *v, size_t n, const char *name,
			    const char *event, const char *decision)
{
	for (size_t i = 0; i < n; i++)
		if (is(&v[i], name) &&
		    (event == NULL || strcmp(v[i].event, event) == 0) &&
		    (decision == NULL || strcmp(v[i].decision, decision) == 0))
			return v[i].value;
	return "-";
}

/* The pool quarantine's and the approving managers' counts (issue 38):
 * one line each, when the daemon sent them. */
static void print_quarantine_approval(const struct sample *v, size_t n)
{
	const char *q = "shmsched_pool_quarantine_events_total";
	if (strcmp(value_of(v, n, "shmsched_pool_quarantined", NULL, NULL), "-") != 0)
		printf("Pool quarantine: %s (pool, template) pair(s) quarantined on %s "
		       "node(s); %s failure(s) reported; %s tripped, %s lifted, %s "
		       "released, %s capped, %s untracked; %s placement attempt(s) "
		       "refused by it\n",
		       value_of(v, n, "shmsched_pool_quarantined", NULL, NULL),
		       value_of(v, n, "shmsched_pool_quarantined_nodes", NULL, NULL),
		       value_of(v, n, "shmsched_pool_failures_total", NULL, NULL),
		       value_of(v, n, q, "trip", NULL), value_of(v, n, q, "lift", NULL),
		       value_of(v, n, q, "release", NULL),
		       value_of(v, n, q, "capped", NULL),
		       value_of(v, n, q, "untracked", NULL),
		       value_of(v, n, "shmsched_pool_refused_total", NULL, NULL));
	const char *d = "shmsched_approval_decisions_total";
	if (strcmp(value_of(v, n, "shmsched_approval_registrations", NULL, NULL),
		   "-") != 0)
		printf("Approving managers: %s registered; %s ask(s); %s granted, %s "
		       "denied, %s not before a time; deadlines passed unanswered: %s "
		       "evicted (fail-open), %s kept (fail-closed)\n",
		       value_of(v, n, "shmsched_approval_registrations", NULL, NULL),
		       value_of(v, n, "shmsched_approval_asks_total", NULL, NULL),
		       value_of(v, n, d, NULL, "grant"), value_of(v, n, d, NULL, "deny"),
		       value_of(v, n, d, NULL, "not_before"),
		       value_of(v, n, d, NULL, "deadline_open"),
		       value_of(v, n, d, NULL, "deadline_closed"));
}

int status_queues(const char *admin_socket)
{
	static char msg[CONTROL_MAX_PAYLOAD + 1];
	char buf[4096 + 16];
	const char *sock = cli_admin_socket(admin_socket, buf, sizeof(buf));
	struct op_queue_shown shown;
	uint32_t got;
	int fd;
	if (cli_admin_call_fd("status", sock, OP_QUEUE, OP_QUEUE_METRICS, NULL, 0,
			      5000, sizeof(shown), msg, CONTROL_MAX_PAYLOAD, &got,
			      &fd) < 0)
		return 1;
	memcpy(&shown, msg, sizeof(shown));
	if (shown.text_bytes != got - sizeof(shown) ||
	    (shown.fd_bytes > 0 && shown.text_bytes > 0)) {
		fprintf(stderr, "shmsched status: the daemon's answer holds %zu bytes "
			"of text; it says %u (and %u in a memfd)\n",
			got - sizeof(shown), shown.text_bytes, shown.fd_bytes);
		if (fd >= 0)
			close(fd);
		return 1;
	}
	/* Past one answer the text comes whole in a sealed memfd. */
	char *text = msg + sizeof(shown), *whole = NULL;
	text[shown.text_bytes] = '\0';
	if (shown.fd_bytes > 0 || fd >= 0) {
		char err[512];
		int rc = sealed_text_read(fd, shown.fd_bytes, OP_QUEUE_METRICS_MAX_BYTES,
					  "the daemon's metrics", &whole, err,
					  sizeof(err));
		if (fd >= 0)
			close(fd);
		if (rc < 0) {
			fprintf(stderr, "shmsched status: %s\n", err);
			return 1;
		}
		text = whole;
	}
	size_t lines = 1;
	for (const char *p = text; *p; p++)
		lines += *p == '\n';
	struct sample *v = calloc(lines, sizeof(*v));
	if (v == NULL) {
		fprintf(stderr, "shmsched status: out of memory\n");
		free(whole);
		return 1;
	}
	size_t n = 0;
	for (const char *p = text; *p;) {
		if (parse(p, &v[n]))
			n++;
		p += strcspn(p, "\n");
		if (*p == '\n')
			p++;
	}
	print_rows(v, n);
	/* What the daemon left out (its comment lines: queues past its
	 * bound, an answer cut at its size), said so. */
	for (const char *p = text; *p;) {
		size_t l = strcspn(p, "\n");
		bool said = false;
		for (size_t k = 0; p[0] == '#' && l < 512 && k + 9 <= l && !said; k++)
			said = memcmp(p + k, "not shown", 9) == 0;
		if (said && p[1] == ' ')
			printf("  (the daemon: %.*s)\n", (int)(l - 2), p + 2);
		p += l;
		if (*p == '\n')
			p++;
	}
	print_lifecycle(v, n);
	print_quarantine_approval(v, n);
	free(v);
	free(whole);
	return 0;
}
