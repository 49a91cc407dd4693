/* The sync guarantee's checker: see sync_check.h.
 *
 * Design: one open-addressing table of two kinds of entries: a key's
 * (uid and shard: present, node, what it holds, as the history replays)
 * and a uid's (shard -1: the last PLACED answer that names it, how many
 * of its keys are present, in any shard). The answers are walked in the order they were placed (to
 * find a uid answered twice while the first was live), the events in
 * revision order (the owners' puts and deletes decide who may write a
 * shard's pods at each revision), then the table once for the end's
 * state. The answers' overcommit is a sweep per node over +/- events
 * sorted by time, a release before a placement at one instant.
 * Invariant: a count only grows; ok is decided once, at the end. */
#define _GNU_SOURCE 1

#include "sync_check.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct uid_entry {
	uint64_t hi, lo; /* hi 0: empty slot (a host hash is never 0) */
	int shard;	 /* index in the shards seen; -1: the uid's entry */
	/* A key's entry. */
	int node;	 /* index in nodes; -1: a node not in the input */
	int64_t cpu_milli, mem_bytes;
	int64_t put_revision; /* its last put */
	bool present;
	/* The uid's entry. */
	long answer;	   /* the last PLACED answer naming it; -1: none */
	size_t n_present; /* its keys present, in all shards */
};

struct uid_table {
	struct uid_entry *e;
	size_t cap, n;
};

struct shard_state {
	char name[SYNC_NAME_MAX];
	char owner[SYNC_NAME_MAX]; /* "" none */
};

uint64_t sync_host_hash(const char *name)
{
	uint64_t h = 14695981039346656037ull;
	for (const char *p = name; *p != '\0'; p++)
		h = (h ^ (uint8_t)*p) * 1099511628211ull;
	return h != 0 ? h : 1;
}

__attribute__((format(printf, 2, 3)))
static void note(struct sync_report *r, const char *fmt, ...)
{
	size_t len = strlen(r->detail);
	if (len + 2 >= sizeof(r->detail))
		return;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(r->detail + len, sizeof(r->detail) - len, fmt, ap);
	va_end(ap);
	len = strlen(r->detail);
	if (len + 1 < sizeof(r->detail)) {
		r->detail[len] = '\n';
		r->detail[len + 1] = '\0';
	}
}

static uint64_t mix(uint64_t hi, uint64_t lo, int shard)
{
	uint64_t x = hi ^ (lo * 0x9e3779b97f4a7c15ull) ^ ((uint64_t)(uint32_t)shard << 17);
	x ^= x >> 31;
	return x * 0xbf58476d1ce4e5b9ull;
}

static int table_grow(struct uid_table *t)
{
	size_t cap = t->cap ? t->cap * 2 : 1024;
	struct uid_entry *e = calloc(cap, sizeof(*e));
	if (e == NULL)
		return -ENOMEM;
	for (size_t i = 0; i < t->cap; i++) {
		if (t->e[i].hi == 0)
			continue;
		size_t j = mix(t->e[i].hi, t->e[i].lo, t->e[i].shard) & (cap - 1);
		while (e[j].hi != 0)
			j = (j + 1) & (cap - 1);
		e[j] = t->e[i];
	}
	free(t->e);
	t->e = e;
	t->cap = cap;
	return 0;
}

/* Room for k more entries: 0 or -ENOMEM. Entries move only here. */
static int table_reserve(struct uid_table *t, size_t k)
{
	return (t->n + k) * 2 > t->cap ? table_grow(t) : 0;
}

/* The entry of (hi, lo) in shard (-1: the uid's), made when absent
 * (after table_reserve). */
static struct uid_entry *table_get(struct uid_table *t, uint64_t hi, uint64_t lo, int shard)
{
	size_t j = mix(hi, lo, shard) & (t->cap - 1);
	while (t->e[j].hi != 0) {
		if (t->e[j].hi == hi && t->e[j].lo == lo && t->e[j].shard == shard)
			return &t->e[j];
		j = (j + 1) & (t->cap - 1);
	}
	t->e[j] = (struct uid_entry){.hi = hi, .lo = lo, .shard = shard, .node = -1,
				     .answer = -1};
	t->n++;
	return &t->e[j];
}

/* Whether a present key's uid was answered PLACED and then released:
 * its room was given back, the key kept only by a delete not waited for
 * and lost (the uid's entry exists: the replay made it with the key's). */
static bool key_released(const struct sync_input *in, const struct uid_table *t,
			 const struct uid_entry *key)
{
	size_t j = mix(key->hi, key->lo, -1) & (t->cap - 1);
	while (t->e[j].hi != 0) {
		const struct uid_entry *u = &t->e[j];
		if (u->hi == key->hi && u->lo == key->lo && u->shard == -1)
			return u->answer >= 0 && in->answers[u->answer].released_ns != 0;
		j = (j + 1) & (t->cap - 1);
	}
	return false;
}

static int parse_hex16(const char *s, uint64_t *out)
{
	uint64_t v = 0;
	for (int i = 0; i < 16; i++) {
		char c = s[i];
		int d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
		if (d < 0)
			return -EINVAL;
		v = v << 4 | (uint64_t)d;
	}
	*out = v;
	return 0;
}

static int parse_uid(const char *uid, uint64_t *hi, uint64_t *lo)
{
	if (strlen(uid) != 32 || parse_hex16(uid, hi) != 0 || parse_hex16(uid + 16, lo) != 0 ||
	    *hi == 0)
		return -EINVAL;
	return 0;
}

static int node_index(const struct sync_input *in, const char *name)
{
	for (size_t i = 0; i < in->n_nodes; i++)
		if (strcmp(in->nodes[i].name, name) == 0)
			return (int)i;
	return -1;
}

struct step {
	uint64_t t;
	int64_t cpu, mem; /* + placed, - released */
};

static int cmp_step(const void *a, const void *b)
{
	const struct step *x = a, *y = b;
	if (x->t != y->t)
		return x->t < y->t ? -1 : 1;
	/* A release before a placement at one instant. */
	return (x->cpu > y->cpu) - (x->cpu < y->cpu);
}

static int cmp_placed(const void *a, const void *b, void *ctx)
{
	const struct sync_answer *answers = ctx;
	uint64_t x = answers[*(const size_t *)a].placed_ns;
	uint64_t y = answers[*(const size_t *)b].placed_ns;
	return (x > y) - (x < y);
}

/* The answers' sweep: each node's live cpu and memory over time. */
static int sweep_answers(const struct sync_input *in, struct sync_report *r, bool *over)
{
	struct step *s = malloc((2 * in->n_answers + 1) * sizeof(*s));
	if (s == NULL)
		return -ENOMEM;
	for (size_t n = 0; n < in->n_nodes; n++) {
		size_t k = 0;
		for (size_t i = 0; i < in->n_answers; i++) {
			const struct sync_answer *a = &in->answers[i];
			if (strcmp(a->node, in->nodes[n].name) != 0)
				continue;
			s[k++] = (struct step){a->placed_ns, a->cpu_milli, a->mem_bytes};
			if (a->released_ns != 0)
				s[k++] = (struct step){a->released_ns, -a->cpu_milli, -a->mem_bytes};
		}
		qsort(s, k, sizeof(*s), cmp_step);
		int64_t cpu = 0, mem = 0;
		for (size_t i = 0; i < k; i++) {
			cpu += s[i].cpu;
			mem += s[i].mem;
			if (cpu > r->peak_cpu_milli)
				r->peak_cpu_milli = cpu;
			if (!over[n] && (cpu > in->nodes[n].cpu_milli || mem > in->nodes[n].mem_bytes)) {
				over[n] = true;
				note(r, "overcommit: %s holds %" PRId64 "m cpu, %" PRId64 " bytes of "
				     "answered placements (of %" PRId64 "m, %" PRId64 ")",
				     in->nodes[n].name, cpu, mem, in->nodes[n].cpu_milli,
				     in->nodes[n].mem_bytes);
			}
		}
	}
	free(s);
	return 0;
}

/* Who wrote a uid's first half, learned so the checker does not depend
 * on how a host makes it (its name's hash, or that mixed with something
 * of its incarnation). With the incarnations' start revisions, each pod
 * put votes for the incarnation of its shard's owner at that revision
 * (the one whose start is the latest before it): exact while writes are
 * fenced, and an unfenced write is outvoted by its host's fenced ones.
 * Without them, a put votes for every host and incarnation with a PLACED
 * answer of its id and node (ids repeat across incarnations, so this
 * guess is only good for few of them: the unit tests). A host and
 * incarnation with no vote falls back to sync_host_hash(name), the
 * documented scheme. */
struct vote {
	uint64_t hi;
	int host;
	uint32_t inc;
	size_t n;
};

struct writers {
	struct vote *v;
	size_t n, cap;
	const uint64_t *hashes; /* [n_hosts]: sync_host_hash */
};

static int cmp_id(const void *a, const void *b, void *ctx)
{
	const struct sync_answer *answers = ctx;
	uint64_t x = answers[*(const size_t *)a].placement_id;
	uint64_t y = answers[*(const size_t *)b].placement_id;
	return (x > y) - (x < y);
}

static int vote(struct writers *w, uint64_t hi, int host, uint32_t inc)
{
	for (size_t i = 0; i < w->n; i++)
		if (w->v[i].hi == hi && w->v[i].host == host && w->v[i].inc == inc) {
			w->v[i].n++;
			return 0;
		}
	if (w->n == w->cap) {
		size_t cap = w->cap ? 2 * w->cap : 64;
		struct vote *v = realloc(w->v, cap * sizeof(*v));
		if (v == NULL)
			return -ENOMEM;
		w->v = v;
		w->cap = cap;
	}
	w->v[w->n++] = (struct vote){hi, host, inc, 1};
	return 0;
}

static int owner_host(const struct sync_input *in, const char *name)
{
	for (int h = 0; h < in->n_hosts; h++)
		if (strcmp(in->hosts[h], name) == 0)
			return h;
	return -1;
}

/* Votes by the owner at each put and the incarnations' start revisions. */
static int learn_by_owner(const struct sync_input *in, struct writers *w)
{
	struct owned {
		char shard[SYNC_NAME_MAX];
		int host;
	} *own = NULL;
	size_t n_own = 0;
	int rc = 0;
	for (size_t i = 0; i < in->n_events && rc == 0; i++) {
		const struct sync_event *ev = &in->events[i];
		size_t k = 0;
		while (k < n_own && strcmp(own[k].shard, ev->shard) != 0)
			k++;
		if (k == n_own) {
			struct owned *o = realloc(own, (n_own + 1) * sizeof(*o));
			if (o == NULL) {
				rc = -ENOMEM;
				break;
			}
			own = o;
			snprintf(own[n_own].shard, sizeof(own[n_own].shard), "%s", ev->shard);
			own[n_own++].host = -1;
		}
		if (ev->kind == SYNC_EVENT_OWNER) {
			own[k].host = ev->deleted ? -1 : owner_host(in, ev->name);
			continue;
		}
		uint64_t hi, lo;
		int h = own[k].host;
		if (ev->deleted || h < 0 || parse_uid(ev->name, &hi, &lo) != 0)
			continue;
		const struct sync_incarnation *best = NULL;
		for (size_t j = 0; j < in->n_incarnations; j++) {
			const struct sync_incarnation *c = &in->incarnations[j];
			if (c->host == h && c->from_revision < ev->revision &&
			    (best == NULL || c->from_revision > best->from_revision))
				best = c;
		}
		if (best != NULL)
			rc = vote(w, hi, h, best->incarnation);
	}
	free(own);
	return rc;
}

static int learn_writers(const struct sync_input *in, struct writers *w)
{
	if (in->n_incarnations > 0)
		return learn_by_owner(in, w);
	size_t *by_id = malloc((in->n_answers + 1) * sizeof(*by_id));
	if (by_id == NULL)
		return -ENOMEM;
	for (size_t i = 0; i < in->n_answers; i++)
		by_id[i] = i;
	qsort_r(by_id, in->n_answers, sizeof(*by_id), cmp_id, (void *)in->answers);
	int rc = 0;
	for (size_t i = 0; i < in->n_events && rc == 0; i++) {
		const struct sync_event *ev = &in->events[i];
		uint64_t hi, lo;
		if (ev->kind != SYNC_EVENT_POD || ev->deleted || parse_uid(ev->name, &hi, &lo) != 0)
			continue;
		size_t a = 0, b = in->n_answers; /* the first answer of id lo */
		while (a < b) {
			size_t m = a + (b - a) / 2;
			if (in->answers[by_id[m]].placement_id < lo)
				a = m + 1;
			else
				b = m;
		}
		for (; a < in->n_answers && in->answers[by_id[a]].placement_id == lo && rc == 0; a++) {
			const struct sync_answer *x = &in->answers[by_id[a]];
			if (strcmp(x->node, ev->node) == 0)
				rc = vote(w, hi, x->host, x->incarnation);
		}
	}
	free(by_id);
	return rc;
}

/* The first half of the uids of a host's incarnation. */
static uint64_t hi_of(const struct writers *w, int host, uint32_t inc)
{
	size_t best = 0;
	uint64_t hi = w->hashes[host];
	for (size_t i = 0; i < w->n; i++)
		if (w->v[i].host == host && w->v[i].inc == inc && w->v[i].n > best) {
			best = w->v[i].n;
			hi = w->v[i].hi;
		}
	return hi;
}

/* The host that writes uids of first half hi (-1: none known). */
static int host_of(const struct sync_input *in, const struct writers *w, uint64_t hi)
{
	int host = -1;
	size_t best = 0;
	for (int h = 0; h < in->n_hosts; h++) {
		size_t n = 0;
		for (size_t i = 0; i < w->n; i++)
			if (w->v[i].hi == hi && w->v[i].host == h)
				n += w->v[i].n;
		if (n > best) {
			best = n;
			host = h;
		}
	}
	for (int h = 0; h < in->n_hosts && host < 0; h++)
		if (w->hashes[h] == hi)
			host = h;
	return host;
}

/* Answers in placed order: each names its uid's entry; a uid answered
 * while an earlier answer of it is live is twice. */
static int link_answers(const struct sync_input *in, const struct writers *w,
			struct uid_table *t, struct sync_report *r)
{
	size_t *order = malloc((in->n_answers + 1) * sizeof(*order));
	if (order == NULL)
		return -ENOMEM;
	for (size_t i = 0; i < in->n_answers; i++)
		order[i] = i;
	qsort_r(order, in->n_answers, sizeof(*order), cmp_placed, (void *)in->answers);
	int rc = 0;
	for (size_t k = 0; k < in->n_answers; k++) {
		const struct sync_answer *a = &in->answers[order[k]];
		if (a->host < 0 || a->host >= in->n_hosts || node_index(in, a->node) < 0) {
			note(r, "answer %zu: host %d or node \"%s\" not in the input", order[k],
			     a->host, a->node);
			rc = -EINVAL;
			break;
		}
		r->placed++;
		r->released += a->released_ns != 0;
		if (table_reserve(t, 1) != 0) {
			rc = -ENOMEM;
			break;
		}
		struct uid_entry *e = table_get(t, hi_of(w, a->host, a->incarnation),
						a->placement_id, -1);
		if (e->answer >= 0) {
			const struct sync_answer *b = &in->answers[e->answer];
			if (b->released_ns == 0 || b->released_ns > a->placed_ns) {
				r->twice++;
				note(r, "twice: %s answered placement %016" PRIx64 " on %s and again "
				     "on %s, the first not released", in->hosts[a->host],
				     a->placement_id, b->node, a->node);
			}
		}
		e->answer = (long)order[k];
	}
	free(order);
	return rc;
}

static int shard_index(struct shard_state **shards, size_t *n, const char *name)
{
	for (size_t i = 0; i < *n; i++)
		if (strcmp((*shards)[i].name, name) == 0)
			return (int)i;
	struct shard_state *s = realloc(*shards, (*n + 1) * sizeof(*s));
	if (s == NULL)
		return -ENOMEM;
	*shards = s;
	snprintf(s[*n].name, sizeof(s[*n].name), "%s", name);
	s[*n].owner[0] = '\0';
	return (int)(*n)++;
}

/* The history replayed: who owns each shard, each key's state, every
 * pod write checked against its shard's owner at that revision. */
/* A node's keys back within its capacity after over_since[n]: by the
 * delete of a placement its producer had released (a delete, not waited
 * for, landing after a later put of the same host: room the host had
 * given back), or otherwise (unexplained, noted). */
static void over_ends(const struct sync_input *in, struct sync_report *r, int64_t *over_since,
		      const int64_t *etcd_cpu, int n, const struct uid_entry *u,
		      const struct sync_event *ev)
{
	if (over_since[n] == 0 || etcd_cpu[n] > in->nodes[n].cpu_milli)
		return;
	bool released = ev->deleted && u->answer >= 0 && in->answers[u->answer].released_ns != 0;
	if (!released) {
		r->etcd_over_unexplained++;
		note(r, "etcd over capacity: %s's keys held more than its %" PRId64 "m cpu from "
		     "revision %" PRId64 " to %" PRId64 ", ended by a %s", in->nodes[n].name,
		     in->nodes[n].cpu_milli, over_since[n], ev->revision,
		     ev->deleted ? "delete of a key no released answer names" : "put over a key");
	}
	over_since[n] = 0;
}

static int replay(const struct sync_input *in, const struct writers *w, struct uid_table *t,
		  int64_t *etcd_cpu, struct sync_report *r)
{
	int64_t *over_since = calloc(in->n_nodes + 1, sizeof(*over_since));
	if (over_since == NULL)
		return -ENOMEM;
	struct shard_state *shards = NULL;
	size_t n_shards = 0;
	int rc = 0;
	for (size_t i = 0; i < in->n_events && rc == 0; i++) {
		const struct sync_event *ev = &in->events[i];
		int s = shard_index(&shards, &n_shards, ev->shard);
		if (s < 0) {
			rc = s;
			break;
		}
		if (ev->kind == SYNC_EVENT_OWNER) {
			snprintf(shards[s].owner, sizeof(shards[s].owner), "%s",
				 ev->deleted ? "" : ev->name);
			continue;
		}
		uint64_t hi, lo;
		if (parse_uid(ev->name, &hi, &lo) != 0) {
			note(r, "revision %" PRId64 ": pod key uid \"%s\" is not 32 hex digits",
			     ev->revision, ev->name);
			rc = -EINVAL;
			break;
		}
		int host = host_of(in, w, hi);
		if (host < 0 || strcmp(shards[s].owner, in->hosts[host]) != 0) {
			r->unfenced++;
			note(r, "unfenced: revision %" PRId64 ": %s of shards/%s/pods/%s by %s while "
			     "the shard's owner was %s", ev->revision, ev->deleted ? "delete" : "put",
			     ev->shard, ev->name, host >= 0 ? in->hosts[host] : "an unknown host",
			     shards[s].owner[0] ? shards[s].owner : "none");
		}
		if (table_reserve(t, 2) != 0) {
			rc = -ENOMEM;
			break;
		}
		struct uid_entry *e = table_get(t, hi, lo, s), *u = table_get(t, hi, lo, -1);
		if (e->present) {
			u->n_present--;
			if (e->node >= 0) {
				etcd_cpu[e->node] -= e->cpu_milli;
				over_ends(in, r, over_since, etcd_cpu, e->node, u, ev);
			}
		}
		if (ev->deleted) {
			e->present = false;
			continue;
		}
		if (e->present || u->n_present > 0) {
			r->twice++;
			note(r, "twice: revision %" PRId64 ": shards/%s/pods/%s put %s", ev->revision,
			     ev->shard, ev->name,
			     e->present ? "over a placement there" : "while one is in another shard");
		}
		e->present = true;
		e->put_revision = ev->revision;
		u->n_present++;
		e->node = node_index(in, ev->node);
		e->cpu_milli = ev->cpu_milli;
		e->mem_bytes = ev->mem_bytes;
		if (e->node >= 0) {
			etcd_cpu[e->node] += e->cpu_milli;
			if (etcd_cpu[e->node] > r->peak_etcd_cpu_milli)
				r->peak_etcd_cpu_milli = etcd_cpu[e->node];
			if (etcd_cpu[e->node] > in->nodes[e->node].cpu_milli &&
			    over_since[e->node] == 0) {
				over_since[e->node] = ev->revision;
				r->etcd_over++;
			}
		}
	}
	free(shards);
	free(over_since);
	return rc;
}

int sync_check(const struct sync_input *in, struct sync_report *r)
{
	memset(r, 0, sizeof(*r));
	uint64_t *hashes = calloc((size_t)in->n_hosts + 1, sizeof(*hashes));
	size_t *unanswered = calloc((size_t)in->n_hosts + 1, sizeof(*unanswered));
	int64_t *etcd_cpu = calloc(in->n_nodes + 1, sizeof(*etcd_cpu));
	int64_t *end_cpu = calloc(in->n_nodes + 1, sizeof(*end_cpu));
	int64_t *end_mem = calloc(in->n_nodes + 1, sizeof(*end_mem));
	int64_t *kept_cpu = calloc(in->n_nodes + 1, sizeof(*kept_cpu));
	bool *over = calloc(in->n_nodes + 1, sizeof(*over));
	struct uid_table t = {0};
	int rc = -ENOMEM;
	if (hashes == NULL || unanswered == NULL || etcd_cpu == NULL || end_cpu == NULL ||
	    end_mem == NULL || kept_cpu == NULL || over == NULL)
		goto out;
	for (int h = 0; h < in->n_hosts; h++)
		hashes[h] = sync_host_hash(in->hosts[h]);
	struct writers w = {.hashes = hashes};
	rc = learn_writers(in, &w);
	if (rc == 0)
		rc = link_answers(in, &w, &t, r);
	if (rc == 0)
		rc = replay(in, &w, &t, etcd_cpu, r);
	if (rc == 0)
		rc = sweep_answers(in, r, over);
	if (rc != 0) {
		free(w.v);
		goto out;
	}
	for (size_t i = 0; i < t.cap; i++) {
		const struct uid_entry *e = &t.e[i];
		if (e->hi == 0)
			continue;
		if (e->shard >= 0) {
			if (e->present) {
				r->keys_end++;
				if (e->node >= 0 && !key_released(in, &t, e)) {
					end_cpu[e->node] += e->cpu_milli;
					end_mem[e->node] += e->mem_bytes;
				} else if (e->node >= 0) {
					kept_cpu[e->node] += e->cpu_milli;
				}
			}
			continue;
		}
		if (e->answer < 0) {
			if (e->n_present == 0)
				continue;
			int host = host_of(in, &w, e->hi);
			if (host >= 0) {
				unanswered[host] += e->n_present;
			} else {
				r->phantom += e->n_present;
				note(r, "phantom: key %016" PRIx64 "%016" PRIx64 " of no host", e->hi,
				     e->lo);
			}
			r->unanswered += e->n_present;
			continue;
		}
		const struct sync_answer *a = &in->answers[e->answer];
		if (a->released_ns != 0) {
			r->released_kept += e->n_present;
		} else if (e->n_present == 0) {
			r->lost++;
			note(r, "lost: %s answered placement %016" PRIx64 " on %s PLACED; its key is "
			     "absent", in->hosts[a->host], a->placement_id, a->node);
		}
	}
	free(w.v);
	for (int h = 0; h < in->n_hosts; h++) {
		r->unanswered_allowed += in->died_in_flight[h];
		if (unanswered[h] > in->died_in_flight[h]) {
			r->phantom += unanswered[h] - in->died_in_flight[h];
			note(r, "phantom: %zu keys of %s no answer names, %zu of its pods in flight "
			     "when it died", unanswered[h], in->hosts[h], in->died_in_flight[h]);
		}
	}
	/* The keys no answer names, for a person (a few). */
	for (size_t i = 0, shown = 0; r->unanswered > 0 && i < t.cap && shown < 4; i++) {
		const struct uid_entry *e = &t.e[i];
		if (e->hi == 0 || e->shard < 0 || !e->present)
			continue;
		const struct uid_entry *u = table_get(&t, e->hi, e->lo, -1);
		if (u->answer >= 0)
			continue;
		shown++;
		note(r, "unanswered: key of uid %016" PRIx64 "%016" PRIx64 " put at revision %"
		     PRId64 " on %s", e->hi, e->lo, e->put_revision,
		     e->node >= 0 ? in->nodes[e->node].name : "?");
	}
	for (size_t n = 0; n < in->n_nodes; n++)
		if (end_cpu[n] <= in->nodes[n].cpu_milli &&
		    end_cpu[n] + kept_cpu[n] > in->nodes[n].cpu_milli)
			r->etcd_over_end_kept++;
	for (size_t n = 0; n < in->n_nodes; n++)
		if (!over[n] && (end_cpu[n] > in->nodes[n].cpu_milli ||
				 end_mem[n] > in->nodes[n].mem_bytes)) {
			over[n] = true;
			note(r, "overcommit: %s's keys at the end hold %" PRId64 "m cpu, %" PRId64
			     " bytes (of %" PRId64 "m, %" PRId64 ")", in->nodes[n].name, end_cpu[n],
			     end_mem[n], in->nodes[n].cpu_milli, in->nodes[n].mem_bytes);
		}
	for (size_t n = 0; n < in->n_nodes; n++)
		r->overcommit += over[n];
	r->ok = (in->lost_ok || r->lost == 0) && r->phantom == 0 && r->twice == 0 &&
		r->unfenced == 0 && r->overcommit == 0;
out:
	free(t.e);
	free(hashes);
	free(unanswered);
	free(etcd_cpu);
	free(end_cpu);
	free(end_mem);
	free(kept_cpu);
	free(over);
	return rc;
}

void sync_report_format(const struct sync_report *r, char *buf, size_t len)
{
	snprintf(buf, len,
		 "placed %zu (released %zu, %zu of them keeping their key), keys at the end "
		 "%zu; lost %zu, unanswered keys %zu (allowed %zu: pods in flight at a "
		 "kill or rolled back), phantom %zu, twice %zu, unfenced %zu, overcommitted nodes %zu; "
		 "fullest node %" PRId64 "m cpu answered, %" PRId64 "m in etcd (keys over a "
		 "node's cpu %zu times, %zu not by a released pod's late delete; %zu nodes over "
		 "at the end by released pods' kept keys alone): %s",
		 r->placed, r->released, r->released_kept, r->keys_end, r->lost, r->unanswered,
		 r->unanswered_allowed, r->phantom, r->twice, r->unfenced, r->overcommit,
		 r->peak_cpu_milli, r->peak_etcd_cpu_milli, r->etcd_over,
		 r->etcd_over_unexplained, r->etcd_over_end_kept, r->ok ? "ok" : "FAILED");
}
