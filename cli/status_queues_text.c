/* shmsched status --queues' layout of the daemon's OP_QUEUE_METRICS text
 * (ingest/control_ops.h; Prometheus text, Kueue's names and shmsched_*):
 * each ClusterQueue's usage, nominal quota and borrowing limit per flavor
 * and resource, its weighted share and its workloads (pending, admitted),
 * then the node lifecycle's counts, the pool quarantine's and the
 * approving managers'. Each sample line's labels and value are taken as
 * they come and anything else is passed over, so an unexpected line costs
 * nothing but its row.
 *
 * Memory: the ClusterQueues' names (an index of their admitted totals'
 * cluster_queue labels, each with how many samples give it: about 40
 * bytes and the name a queue, none for any other line) and the rows
 * printed (at most STATUS_QUEUE_LINES, about 40 KiB on the stack),
 * whatever else the text holds (up to OP_QUEUE_METRICS_MAX_BYTES).
 * Invariant: the rows are printed in the order the daemon's text gives,
 * each ClusterQueue's line (its admitted total's sample) then its usage
 * samples; shown + left = every row, shown <= STATUS_QUEUE_LINES.
 * Cost: linear in the text. A pass counts the queues, one indexes their
 * names (keeping the first STATUS_QUEUE_LINES queues' lines), one over
 * the usage samples looks each up (counting the rows left out, keeping
 * the first queues' rows), one fills the printed rows' values (each
 * sample of their four families compared with at most
 * STATUS_QUEUE_LINES rows), and one each for what the daemon left out,
 * the lifecycle's counts and the quarantine's and approval's. The layout
 * this replaced read the usage samples again for every queue and the
 * whole text for every value printed: O(queues x usage samples), 92 s
 * at 20,000 ClusterQueues (cli/status_queues_text_internal.h counts the
 * steps for unit.status_queues). */
#include "cli/status_queues_text.h"
#include "cli/status_queues_text_internal.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

unsigned long long status_queues_steps;

#define LABEL_MAX 256
#define VALUE_MAX 40

struct sample {
	char name[64];
	char cq[LABEL_MAX], flavor[LABEL_MAX], resource[LABEL_MAX];
	char status[32], state[32], event[32], decision[32], asker[32];
	char value[VALUE_MAX];
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
	/* Every field empty (a string's first byte: the whole struct is a
	 * kilobyte, and the usage pass parses a line per queue). */
	s->cq[0] = s->flavor[0] = s->resource[0] = s->status[0] = '\0';
	s->state[0] = s->event[0] = s->decision[0] = s->value[0] = '\0';
	s->asker[0] = '\0';
	memset(s->name, 0, sizeof(s->name));
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
			KEY("asker", asker);
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

/* Whether the line at `line` may be a sample of `name`: its name alone,
 * before any label is parsed (as parse reads it). */
static bool named(const char *line, const char *name)
{
	size_t n = strcspn(line, "{ ");
	return n == strlen(name) && memcmp(line, name, n) == 0;
}

/* The next sample at or after *at named `name` (NULL: any); *at moves
 * past its line, *line (if not NULL) to its start. False at the end. */
static bool next_sample(const char **at, const char **line, const char *name,
			struct sample *s)
{
	while (**at != '\0') {
		const char *l = *at, *nl = strchr(l, '\n');
		*at = nl != NULL ? nl + 1 : l + strlen(l);
		status_queues_steps++;
		if ((name == NULL || named(l, name)) && parse(l, s) &&
		    (name == NULL || strcmp(s->name, name) == 0)) {
			if (line != NULL)
				*line = l;
			return true;
		}
	}
	return false;
}

#define USAGE "kueue_cluster_queue_resource_usage"
#define ADMITTED "kueue_admitted_workloads_total"

/* The ClusterQueues' names (their admitted totals' cluster_queue labels,
 * as parse cuts them), each with how many samples give it: open
 * addressing, linear probing, at most half full. */
struct name_slot {
	size_t off;     /* into the arena, + 1; 0: an empty slot */
	uint64_t hash;
	unsigned count; /* admitted samples of that name */
	int head;       /* its index among the heads (the names of the first
			 * STATUS_QUEUE_LINES queues), or -1 */
};

struct names {
	struct name_slot *slot;
	size_t cap;     /* a power of 2 */
	char *arena;    /* the names, NUL-terminated */
	size_t used, room;
};

static uint64_t name_hash(const char *s)
{
	uint64_t h = UINT64_C(14695981039346656037);
	for (; *s != '\0'; s++)
		h = (h ^ (unsigned char)*s) * UINT64_C(1099511628211);
	return h;
}

/* The slot of `name`: its own, or the empty one where it would go. */
static struct name_slot *names_slot(const struct names *t, const char *name)
{
	uint64_t h = name_hash(name);
	for (size_t i = (size_t)h & (t->cap - 1);; i = (i + 1) & (t->cap - 1)) {
		struct name_slot *s = &t->slot[i];
		status_queues_steps++;
		if (s->off == 0 || (s->hash == h &&
				    strcmp(t->arena + s->off - 1, name) == 0))
			return s;
	}
}

/* Adds one sample of `name`; NULL when out of memory. */
static struct name_slot *names_add(struct names *t, const char *name)
{
	struct name_slot *s = names_slot(t, name);
	if (s->off == 0) {
		size_t n = strlen(name) + 1;
		if (t->used + n > t->room) {
			size_t room = t->room * 2 + n + 4096;
			char *a = realloc(t->arena, room);
			if (a == NULL)
				return NULL;
			t->arena = a;
			t->room = room;
		}
		memcpy(t->arena + t->used, name, n);
		*s = (struct name_slot){.off = t->used + 1, .hash = name_hash(name),
					.head = -1};
		t->used += n;
	}
	s->count++;
	return s;
}

/* One printed row: a ClusterQueue's line or one of its usage samples',
 * with the values looked up for it ("-" until found). */
struct row {
	const char *line;  /* its sample's line */
	bool usage;
	char cq[LABEL_MAX], flavor[LABEL_MAX], resource[LABEL_MAX];
	char value[VALUE_MAX];
	char v[3][VALUE_MAX]; /* queue: weighted share, pending active and
			       * inadmissible; usage: nominal, borrowing limit */
};

/* The usage lines of one of the first queues' names, in the text's order
 * (no more than can be printed). */
struct head {
	const char *line[STATUS_QUEUE_LINES];
	unsigned n;
};

/* The families the rows' values come from, and which value of a row each
 * fills: the first sample whose labels are the row's (as the daemon
 * writes one sample a series, the only one). */
static void fill_values(const char *text, struct row *rows, unsigned n)
{
	static const char *const fam[4] = {
		"kueue_cluster_queue_weighted_share", "kueue_pending_workloads",
		"kueue_cluster_queue_nominal_quota",
		"kueue_cluster_queue_borrowing_limit"};
	struct sample s;
	for (const char *at = text; *at != '\0';) {
		const char *line = at, *nl = strchr(line, '\n');
		at = nl != NULL ? nl + 1 : line + strlen(line);
		status_queues_steps++;
		int f = 0;
		while (f < 4 && !named(line, fam[f]))
			f++;
		if (f == 4 || !parse(line, &s))
			continue;
		for (unsigned r = 0; r < n; r++) {
			struct row *w = &rows[r];
			status_queues_steps++;
			if (w->usage != (f >= 2) || strcmp(s.cq, w->cq) != 0)
				continue;
			int k = f == 0 ? 0 : f == 2 ? 0 : f == 3 ? 1
				: strcmp(s.status, "active") == 0 ? 1
				: strcmp(s.status, "inadmissible") == 0 ? 2 : -1;
			if (k < 0 || strcmp(w->v[k], "-") != 0 ||
			    (w->usage && (strcmp(s.flavor, w->flavor) != 0 ||
					  strcmp(s.resource, w->resource) != 0)))
				continue;
			memcpy(w->v[k], s.value, VALUE_MAX);
		}
	}
}

/* Prints each ClusterQueue's line (by its admitted total's sample: one
 * per queue, in the daemon's order, written before the gauges that an
 * answer cut for its size loses first), then its flavors' and resources'
 * rows (its usage samples, in the text's order); at most
 * STATUS_QUEUE_LINES lines. Returns how many were left out: every
 * queue's line and every usage sample of a queue's name (once per queue
 * of that name), less those printed. */
static unsigned print_rows(const char *text, FILE *out)
{
	fprintf(out, "ClusterQueues (the daemon's admin socket; cpu in cores):\n");
	size_t nq = 0;
	for (const char *at = text; *at != '\0';) {
		const char *nl = strchr(at, '\n');
		status_queues_steps++;
		nq += named(at, ADMITTED);
		at = nl != NULL ? nl + 1 : at + strlen(at);
	}
	struct names t = {.cap = 16};
	while (t.cap < 2 * nq)
		t.cap *= 2;
	t.slot = calloc(t.cap, sizeof(*t.slot));
	/* The first queues (as many as may be printed): their lines and
	 * their names' heads. */
	const char *qline[STATUS_QUEUE_LINES];
	int qhead[STATUS_QUEUE_LINES];
	struct head heads[STATUS_QUEUE_LINES];
	unsigned nfirst = 0, nheads = 0;
	struct sample s;
	size_t queues = 0, usages = 0;
	bool oom = t.slot == NULL;
	for (const char *at = text, *line = at; !oom &&
	     next_sample(&at, &line, ADMITTED, &s);) {
		struct name_slot *g = names_add(&t, s.cq);
		oom = g == NULL;
		if (oom)
			break;
		queues++;
		if (nfirst == STATUS_QUEUE_LINES)
			continue;
		if (g->head < 0) {
			g->head = (int)nheads;
			heads[nheads++].n = 0;
		}
		qline[nfirst] = line;
		qhead[nfirst++] = g->head;
	}
	if (oom) {
		fprintf(out, "  not shown: out of memory for the names of %zu "
			"ClusterQueues\n", nq);
		free(t.slot);
		free(t.arena);
		return 0;
	}
	for (const char *at = text, *line = at; queues > 0 &&
	     next_sample(&at, &line, USAGE, &s);) {
		struct name_slot *g = names_slot(&t, s.cq);
		if (g->off == 0)
			continue;
		usages += g->count;
		if (g->head >= 0 && heads[g->head].n < STATUS_QUEUE_LINES)
			heads[g->head].line[heads[g->head].n++] = line;
	}
	free(t.slot);
	free(t.arena);
	/* The rows printed, in order: each first queue's line, then its
	 * name's usage rows. */
	struct row rows[STATUS_QUEUE_LINES];
	unsigned shown = 0;
	for (unsigned i = 0; i < nfirst && shown < STATUS_QUEUE_LINES; i++) {
		const struct head *h = &heads[qhead[i]];
		for (unsigned k = 0; k <= h->n && shown < STATUS_QUEUE_LINES; k++) {
			struct row *w = &rows[shown++];
			w->usage = k > 0;
			w->line = k == 0 ? qline[i] : h->line[k - 1];
			(void)parse(w->line, &s);
			memcpy(w->cq, s.cq, LABEL_MAX);
			memcpy(w->flavor, s.flavor, LABEL_MAX);
			memcpy(w->resource, s.resource, LABEL_MAX);
			memcpy(w->value, s.value, VALUE_MAX);
			for (int v = 0; v < 3; v++)
				strcpy(w->v[v], "-");
		}
	}
	fill_values(text, rows, shown);
	for (unsigned r = 0; r < shown; r++) {
		const struct row *w = &rows[r];
		if (!w->usage)
			fprintf(out, "  %s: weighted share %s; pending %s active, %s "
				"inadmissible; admitted %s\n", w->cq, w->v[0],
				w->v[1], w->v[2], w->value);
		else
			fprintf(out, "    %s %s: usage %s of nominal %s, borrowing "
				"limit %s\n", w->flavor, w->resource, w->value,
				w->v[0], w->v[1]);
	}
	if (queues == 0)
		fprintf(out, "  none (the daemon has no Kueue quotas)\n");
	unsigned left = (unsigned)(queues + usages - shown);
	if (left > 0)
		fprintf(out, "  ... and %u more\n", left);
	return left;
}

/* What the daemon left out (its comment lines: queues past its bound, an
 * answer cut at its size), said so. */
static void print_not_shown(const char *text, FILE *out)
{
	for (const char *p = text; *p;) {
		size_t l = strcspn(p, "\n");
		bool said = false;
		for (size_t k = 0; p[0] == '#' && l < 512 && k + 9 <= l && !said; k++)
			said = memcmp(p + k, "not shown", 9) == 0;
		if (said && p[1] == ' ')
			fprintf(out, "  (the daemon: %.*s)\n", (int)(l - 2), p + 2);
		p += l;
		if (*p == '\n')
			p++;
	}
}

/* The node lifecycle's counts, when the daemon sent any: each the last
 * sample of its name (and zone state). */
static void print_lifecycle(const char *text, FILE *out)
{
	static const char *const states[4] = {"Initial", "Normal",
					      "PartialDisruption", "FullDisruption"};
	static const char *const names[6] = {
		"shmsched_node_tainted", "shmsched_node_taints_queued",
		"shmsched_node_taints_total", "shmsched_node_evictions_pending",
		"shmsched_node_evictions_total", "shmsched_node_tolerations_kept"};
	char zone[4][VALUE_MAX], val[6][VALUE_MAX];
	for (int k = 0; k < 4; k++)
		strcpy(zone[k], "-");
	for (int k = 0; k < 6; k++)
		strcpy(val[k], "-");
	bool any = false;
	struct sample s;
	for (const char *at = text; next_sample(&at, NULL, NULL, &s);) {
		if (strncmp(s.name, "shmsched_node_", 14) != 0)
			continue;
		any = true;
		for (int k = 0; k < 4; k++)
			if (strcmp(s.name, "shmsched_node_zones") == 0 &&
			    strcmp(s.state, states[k]) == 0)
				memcpy(zone[k], s.value, VALUE_MAX);
		for (int k = 0; k < 6; k++)
			if (strcmp(s.name, names[k]) == 0)
				memcpy(val[k], s.value, VALUE_MAX);
	}
	if (!any)
		return;
	fprintf(out, "Node lifecycle: zones %s initial, %s normal, %s partial "
		"disruption, %s full disruption; %s node(s) tainted unreachable "
		"(%s queued for their zone's rate, %s ever); taint evictions %s "
		"scheduled, %s done; %s placement(s) with tolerations kept\n",
		zone[0], zone[1], zone[2], zone[3], val[0], val[1], val[2], val[3],
		val[4], val[5]);
}

/* One value the quarantine's and approval's lines print: the first
 * sample of `name` whose event (or decision) label is the one given
 * (NULL: any). */
struct wanted {
	const char *name, *event, *decision;
	char value[VALUE_MAX];
};

/* The approving managers' counts by asker (quota reclaim's and
 * preemption's; the drain's are the rest of the totals): one line each,
 * when the daemon sent them and the asker asked. */
static void print_approval_askers(const char *text, FILE *out)
{
	static const char *const askers[] = {"reclaim", "preemption"};
	static const char *const events[] = {"asked", "grant", "deny", "not_before",
					     "deadline_open", "deadline_closed"};
	enum { N_EVENTS = sizeof(events) / sizeof(events[0]) };
	for (size_t k = 0; k < sizeof(askers) / sizeof(askers[0]); k++) {
		char v[N_EVENTS][VALUE_MAX];
		bool any = false;
		for (size_t e = 0; e < N_EVENTS; e++)
			snprintf(v[e], sizeof(v[e]), "-");
		struct sample s;
		for (const char *at = text;
		     next_sample(&at, NULL, "shmsched_approval_by_asker_total", &s);) {
			if (strcmp(s.asker, askers[k]) != 0)
				continue;
			for (size_t e = 0; e < N_EVENTS; e++)
				if (strcmp(s.event, events[e]) == 0) {
					memcpy(v[e], s.value, VALUE_MAX);
					any = any || strcmp(s.value, "0") != 0;
				}
		}
		if (any)
			fprintf(out, "  asked by %s: %s ask(s); %s granted, %s denied, "
				"%s not before a time; deadlines passed unanswered: "
				"%s evicted (fail-open), %s kept (fail-closed)\n",
				askers[k], v[0], v[1], v[2], v[3], v[4], v[5]);
	}
}

/* The pool quarantine's and the approving managers' counts (issue 38):
 * one line each, when the daemon sent them. */
static void print_quarantine_approval(const char *text, FILE *out)
{
	const char *q = "shmsched_pool_quarantine_events_total";
	const char *d = "shmsched_approval_decisions_total";
	struct wanted w[] = {
		{"shmsched_pool_quarantined", NULL, NULL, "-"},
		{"shmsched_pool_quarantined_nodes", NULL, NULL, "-"},
		{"shmsched_pool_failures_total", NULL, NULL, "-"},
		{q, "trip", NULL, "-"}, {q, "lift", NULL, "-"},
		{q, "release", NULL, "-"}, {q, "capped", NULL, "-"},
		{q, "untracked", NULL, "-"},
		{"shmsched_pool_refused_total", NULL, NULL, "-"},
		{"shmsched_approval_registrations", NULL, NULL, "-"},
		{"shmsched_approval_asks_total", NULL, NULL, "-"},
		{d, NULL, "grant", "-"}, {d, NULL, "deny", "-"},
		{d, NULL, "not_before", "-"}, {d, NULL, "deadline_open", "-"},
		{d, NULL, "deadline_closed", "-"},
	};
	enum { N_WANTED = sizeof(w) / sizeof(w[0]) };
	bool found[N_WANTED] = {false};
	struct sample s;
	for (const char *at = text; next_sample(&at, NULL, NULL, &s);)
		for (size_t k = 0; k < N_WANTED; k++)
			if (!found[k] && strcmp(s.name, w[k].name) == 0 &&
			    (w[k].event == NULL || strcmp(s.event, w[k].event) == 0) &&
			    (w[k].decision == NULL ||
			     strcmp(s.decision, w[k].decision) == 0)) {
				found[k] = true;
				memcpy(w[k].value, s.value, VALUE_MAX);
			}
	if (strcmp(w[0].value, "-") != 0)
		fprintf(out, "Pool quarantine: %s (pool, template) pair(s) "
			"quarantined on %s node(s); %s failure(s) reported; %s "
			"tripped, %s lifted, %s released, %s capped, %s untracked; "
			"%s placement attempt(s) refused by it\n",
			w[0].value, w[1].value, w[2].value, w[3].value, w[4].value,
			w[5].value, w[6].value, w[7].value, w[8].value);
	if (strcmp(w[9].value, "-") != 0)
		fprintf(out, "Approving managers: %s registered; %s ask(s); %s "
			"granted, %s denied, %s not before a time; deadlines passed "
			"unanswered: %s evicted (fail-open), %s kept (fail-closed)\n",
			w[9].value, w[10].value, w[11].value, w[12].value,
			w[13].value, w[14].value, w[15].value);
	print_approval_askers(text, out);
}

unsigned status_queues_print(const char *text, FILE *out)
{
	unsigned left = print_rows(text, out);
	print_not_shown(text, out);
	print_lifecycle(text, out);
	print_quarantine_approval(text, out);
	return left;
}
