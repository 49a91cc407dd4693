/* Pools that fail together: see quarantine_internal.h for what it does.
 *
 * Design: one fixed table of entries under one mutex. Entries are found
 * by a linear scan: the table is small (256 by default), and only
 * failures (the control thread), and placements or attempts of a template
 * while some entry is in use, look (an attempt twice: its quarantined
 * pools, and its failed nodes for crash-pair avoidance, at most
 * QUARANTINE_NODES more looks per entry of its template). `live` (the
 * entries in use) lets the workers' calls skip the mutex while none is:
 * stored under the mutex (relaxed; a figure), loaded relaxed without it.
 * A worker that reads 0 just as a first failure is counted misses one
 * placement's count or one check; the next one sees it (the mutex orders
 * the entry itself).
 */
#include "daemon/quarantine_internal.h"
#include "daemon/node_require_internal.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/base.h"
#include "shm/shm.h"

struct q_node {
	uint32_t slot;
	bool used;
	uint64_t last_ns; /* its last failure */
};

struct q_entry {
	bool used;
	bool quarantined;
	struct quarantine_key key;
	uint64_t epoch[QUARANTINE_BUCKETS]; /* the bucket's number (now / width) + 1 */
	uint32_t failures[QUARANTINE_BUCKETS];
	uint32_t placements[QUARANTINE_BUCKETS];
	struct q_node nodes[QUARANTINE_NODES];
	uint64_t last_failure_ns;
	uint64_t capped_log_ns; /* the last "capped" line (one per window) */
	bool capped_logged;
	uint32_t pool_nodes;
	struct quarantine_info trip; /* as of the trip */
};

struct quarantine {
	pthread_mutex_t mu;
	struct quarantine_config cfg;
	uint64_t width; /* a bucket's ns */
	uint32_t live;  /* entries in use (the header's note) */
	uint64_t (*clock_ns)(void *arg); /* NULL: now_ns */
	void *clock_arg;
	struct quarantine_counts c;
	struct q_entry *e; /* [cfg.entries] */
};

struct quarantine *quarantine_create(const struct quarantine_config *cfg)
{
	if (!(cfg->threshold > 0 && cfg->threshold <= 1) || cfg->min_nodes == 0 ||
	    cfg->min_nodes > QUARANTINE_NODES || cfg->window_ns < QUARANTINE_BUCKETS ||
	    cfg->entries == 0 || cfg->entries > 65536) {
		errno = EINVAL;
		return NULL;
	}
	struct quarantine *q = calloc(1, sizeof(*q));
	if (q == NULL)
		return NULL;
	q->e = calloc(cfg->entries, sizeof(*q->e));
	if (q->e == NULL) {
		free(q);
		errno = ENOMEM;
		return NULL;
	}
	q->cfg = *cfg;
	q->width = cfg->window_ns / QUARANTINE_BUCKETS;
	pthread_mutex_init(&q->mu, NULL);
	return q;
}

void quarantine_destroy(struct quarantine *q)
{
	if (q == NULL)
		return;
	pthread_mutex_destroy(&q->mu);
	free(q->e);
	free(q);
}

static bool key_eq(const struct quarantine_key *a, const struct quarantine_key *b)
{
	return a->pool == b->pool && a->owner == b->owner && a->template == b->template;
}

/* The bucket of `now`, zeroed when it held an older one. */
static unsigned bucket(struct quarantine *q, struct q_entry *e, uint64_t now)
{
	uint64_t n = now / q->width + 1;
	unsigned b = (unsigned)(n % QUARANTINE_BUCKETS);
	if (e->epoch[b] != n) {
		e->epoch[b] = n;
		e->failures[b] = 0;
		e->placements[b] = 0;
	}
	return b;
}

/* The window's sums as of `now` into *info. */
static void window(const struct quarantine *q, const struct q_entry *e, uint64_t now,
		   struct quarantine_info *info)
{
	uint64_t n = now / q->width + 1;
	uint32_t f = 0, p = 0, nodes = 0;
	for (unsigned b = 0; b < QUARANTINE_BUCKETS; b++) {
		if (e->epoch[b] != 0 && e->epoch[b] + QUARANTINE_BUCKETS > n &&
		    e->epoch[b] <= n) {
			f += e->failures[b];
			p += e->placements[b];
		}
	}
	for (unsigned i = 0; i < QUARANTINE_NODES; i++)
		nodes += e->nodes[i].used && e->nodes[i].last_ns + q->cfg.window_ns > now;
	memset(info, 0, sizeof(*info));
	info->key = e->key;
	info->quarantined = e->quarantined;
	info->failures = f;
	info->placements = p > f ? p : f;
	info->nodes = nodes;
	info->pool_nodes = e->pool_nodes;
}

static double rate(const struct quarantine_info *w)
{
	return w->placements == 0 ? 0.0 : (double)w->failures / (double)w->placements;
}

static void set_live(struct quarantine *q, uint32_t live)
{
	/* Relaxed: the header's note (a figure the workers may read late). */
	__atomic_store_n(&q->live, live, __ATOMIC_RELAXED);
}

static void lift(struct quarantine *q, struct q_entry *e)
{
	e->quarantined = false;
	q->c.quarantined--;
}

/* Lifts e when due as of `now`. Returns whether it lifted. */
static bool lift_if_due(struct quarantine *q, struct q_entry *e, uint64_t now)
{
	if (!e->quarantined || now < e->trip.since_ns + q->cfg.window_ns)
		return false;
	struct quarantine_info w;
	window(q, e, now, &w);
	if (w.failures != 0 && rate(&w) >= q->cfg.threshold / 2)
		return false;
	lift(q, e);
	q->c.lifts++;
	log_msg(LOG_LEVEL_INFO, "quarantine: pool %u lifted for template %u of "
		"identity %u: %u failures in the last %.0f s (lifts below %.2f)",
		e->key.pool, e->key.template, e->key.owner, w.failures,
		(double)q->cfg.window_ns * 1e-9, q->cfg.threshold / 2);
	return true;
}

/* The nodes of the distinct quarantined pools, plus `pool`'s `pool_nodes`
 * when it is not one of them. */
static uint64_t nodes_held(const struct quarantine *q, uint32_t pool, uint32_t pool_nodes)
{
	uint64_t sum = 0;
	bool pool_in = false;
	for (uint32_t i = 0; i < q->cfg.entries; i++) {
		const struct q_entry *e = &q->e[i];
		if (!e->used || !e->quarantined)
			continue;
		bool seen = false; /* its pool counted by an earlier entry */
		for (uint32_t j = 0; j < i && !seen; j++)
			seen = q->e[j].used && q->e[j].quarantined &&
			       q->e[j].key.pool == e->key.pool;
		if (!seen)
			sum += e->pool_nodes;
		pool_in |= e->key.pool == pool;
	}
	return pool_in ? sum : sum + pool_nodes;
}

/* An entry for a new key, per the header's "table full" rule; NULL when
 * every entry is quarantined. */
static struct q_entry *take_entry(struct quarantine *q, uint64_t now)
{
	struct q_entry *oldest = NULL;
	for (uint32_t i = 0; i < q->cfg.entries; i++) {
		struct q_entry *e = &q->e[i];
		if (!e->used)
			return e;
		if (e->quarantined)
			continue;
		if (e->last_failure_ns + q->cfg.window_ns <= now)
			return e; /* quiet for a window: nothing to lose */
		if (oldest == NULL || e->last_failure_ns < oldest->last_failure_ns)
			oldest = e;
	}
	if (oldest != NULL)
		q->c.evicted++;
	return oldest;
}

static struct q_entry *find(struct quarantine *q, const struct quarantine_key *k)
{
	for (uint32_t i = 0; i < q->cfg.entries; i++)
		if (q->e[i].used && key_eq(&q->e[i].key, k))
			return &q->e[i];
	return NULL;
}

/* Remembers a failure on `node`: its own place, or a free one, or the
 * one whose last failure is the oldest. */
static void note_node(struct q_entry *e, uint32_t node, uint64_t now)
{
	struct q_node *free_one = NULL, *oldest = NULL, *n = NULL;
	for (unsigned i = 0; i < QUARANTINE_NODES && n == NULL; i++) {
		struct q_node *c = &e->nodes[i];
		if (c->used && c->slot == node)
			n = c;
		else if (!c->used && free_one == NULL)
			free_one = c;
		else if (c->used && (oldest == NULL || c->last_ns < oldest->last_ns))
			oldest = c;
	}
	if (n == NULL)
		n = free_one != NULL ? free_one : oldest;
	n->used = true;
	n->slot = node;
	n->last_ns = now;
}

enum quarantine_verdict quarantine_failure(struct quarantine *q, uint64_t now,
					   const struct quarantine_key *k,
					   uint32_t node, uint32_t pool_nodes,
					   uint32_t total_nodes)
{
	enum quarantine_verdict v = QUARANTINE_COUNTED;
	pthread_mutex_lock(&q->mu);
	q->c.failures++;
	struct q_entry *e = find(q, k);
	if (e == NULL) {
		e = take_entry(q, now);
		if (e == NULL) {
			q->c.untracked++;
			v = QUARANTINE_UNTRACKED;
			goto out;
		}
		if (!e->used) {
			q->c.tracked++;
			set_live(q, q->live + 1);
		}
		memset(e, 0, sizeof(*e));
		e->used = true;
		e->key = *k;
	}
	e->pool_nodes = pool_nodes;
	e->last_failure_ns = now;
	e->failures[bucket(q, e, now)]++;
	note_node(e, node, now);
	lift_if_due(q, e, now);
	if (e->quarantined) {
		v = QUARANTINE_HELD;
		goto out;
	}
	struct quarantine_info w;
	window(q, e, now, &w);
	if (w.nodes < q->cfg.min_nodes || rate(&w) < q->cfg.threshold)
		goto out;
	uint64_t held = nodes_held(q, k->pool, pool_nodes);
	if (held * 100 > (uint64_t)total_nodes * QUARANTINE_CAP_PERCENT) {
		q->c.capped++;
		v = QUARANTINE_CAPPED;
		if (!e->capped_logged || e->capped_log_ns + q->cfg.window_ns <= now) {
			e->capped_logged = true;
			e->capped_log_ns = now;
			log_msg(LOG_LEVEL_WARN, "quarantine: pool %u would be "
				"quarantined for template %u of identity %u (%u "
				"failures on %u nodes), but %llu of %u nodes would "
				"then be: over the %u %% cap; left open",
				k->pool, k->template, k->owner, w.failures, w.nodes,
				(unsigned long long)held, total_nodes,
				QUARANTINE_CAP_PERCENT);
		}
		goto out;
	}
	e->quarantined = true;
	w.quarantined = true;
	w.since_ns = now;
	e->trip = w;
	q->c.quarantined++;
	q->c.trips++;
	v = QUARANTINE_TRIPPED;
	log_msg(LOG_LEVEL_WARN, "quarantine: pool %u quarantined for template %u "
		"of identity %u: %u failures of %u placements on %u nodes in "
		"%.0f s (threshold %.2f on %u nodes)", k->pool, k->template,
		k->owner, w.failures, w.placements, w.nodes,
		(double)q->cfg.window_ns * 1e-9, q->cfg.threshold, q->cfg.min_nodes);
out:
	pthread_mutex_unlock(&q->mu);
	return v;
}

void quarantine_set_clock(struct quarantine *q, uint64_t (*clock_ns)(void *arg),
			  void *arg)
{
	q->clock_ns = clock_ns;
	q->clock_arg = arg;
}

uint64_t quarantine_now(const struct quarantine *q)
{
	return q->clock_ns != NULL ? q->clock_ns(q->clock_arg) : now_ns();
}

bool quarantine_active(const struct quarantine *q)
{
	/* Relaxed: the header's note. */
	return __atomic_load_n(&q->live, __ATOMIC_RELAXED) != 0;
}

void quarantine_placed(struct quarantine *q, uint64_t now, const struct quarantine_key *k)
{
	if (__atomic_load_n(&q->live, __ATOMIC_RELAXED) == 0)
		return; /* relaxed: the header's note */
	pthread_mutex_lock(&q->mu);
	struct q_entry *e = find(q, k);
	if (e != NULL)
		e->placements[bucket(q, e, now)]++;
	pthread_mutex_unlock(&q->mu);
}

bool quarantine_blocks(struct quarantine *q, uint64_t now,
		       const struct quarantine_key *k, struct quarantine_info *info)
{
	if (__atomic_load_n(&q->live, __ATOMIC_RELAXED) == 0)
		return false; /* relaxed: the header's note */
	pthread_mutex_lock(&q->mu);
	struct q_entry *e = find(q, k);
	bool blocked = e != NULL && e->quarantined && !lift_if_due(q, e, now);
	if (blocked && info != NULL)
		*info = e->trip;
	pthread_mutex_unlock(&q->mu);
	return blocked;
}

uint32_t quarantine_pools(struct quarantine *q, uint64_t now, uint32_t owner,
			  uint32_t template, uint32_t *pools, uint32_t cap,
			  struct quarantine_info *first)
{
	if (__atomic_load_n(&q->live, __ATOMIC_RELAXED) == 0)
		return 0; /* relaxed: the header's note */
	uint32_t n = 0;
	pthread_mutex_lock(&q->mu);
	for (uint32_t i = 0; i < q->cfg.entries; i++) {
		struct q_entry *e = &q->e[i];
		if (!e->used || !e->quarantined || e->key.owner != owner ||
		    e->key.template != template || lift_if_due(q, e, now))
			continue;
		if (n == 0 && first != NULL)
			*first = e->trip;
		/* Insertion in ascending order. */
		uint32_t k = n < cap ? n : cap;
		while (k > 0 && pools[k - 1] > e->key.pool) {
			if (k < cap)
				pools[k] = pools[k - 1];
			k--;
		}
		if (k < cap)
			pools[k] = e->key.pool;
		n++;
	}
	pthread_mutex_unlock(&q->mu);
	return n;
}

bool quarantine_exclude(const struct pod_spec *pod, uint32_t key,
			const uint32_t *pools, uint32_t n, struct pod_spec *out)
{
	return node_require(pod, key, SEL_NOT_IN, pools, n, out);
}

uint32_t quarantine_failed_nodes(struct quarantine *q, uint64_t now, uint32_t owner,
				 uint32_t template, uint32_t *nodes, uint32_t cap)
{
	if (__atomic_load_n(&q->live, __ATOMIC_RELAXED) == 0)
		return 0; /* relaxed: the header's note */
	uint32_t n = 0;
	pthread_mutex_lock(&q->mu);
	for (uint32_t i = 0; i < q->cfg.entries && n < cap; i++) {
		const struct q_entry *e = &q->e[i];
		if (!e->used || e->key.owner != owner || e->key.template != template ||
		    e->last_failure_ns + q->cfg.window_ns <= now)
			continue;
		for (unsigned k = 0; k < QUARANTINE_NODES && n < cap; k++) {
			const struct q_node *c = &e->nodes[k];
			if (!c->used || c->last_ns + q->cfg.window_ns <= now)
				continue;
			bool seen = false; /* in another pool's entry: a node moved */
			for (uint32_t j = 0; j < n && !seen; j++)
				seen = nodes[j] == c->slot;
			if (!seen)
				nodes[n++] = c->slot;
		}
	}
	pthread_mutex_unlock(&q->mu);
	return n;
}

bool quarantine_avoid(struct pod_spec *pod, uint32_t name_key,
		      const uint32_t *names, uint32_t n)
{
	uint32_t room = (uint32_t)(POD_MAX_EXPRS - pod->n_exprs);
	if ((uint32_t)(POD_MAX_VALUES - pod->n_values) < room)
		room = (uint32_t)(POD_MAX_VALUES - pod->n_values);
	if (n > room)
		n = room;
	if (n == 0 || pod->n_preferred >= POD_MAX_PREFERRED)
		return false;
	struct pref_term *t = &pod->preferred[pod->n_preferred++];
	*t = (struct pref_term){.weight = QUARANTINE_AVOID_WEIGHT,
		.term = {.first_expr = pod->n_exprs, .n_exprs = (uint16_t)n}};
	for (uint32_t i = 0; i < n; i++) {
		pod->values[pod->n_values] = names[i];
		pod->exprs[pod->n_exprs++] = (struct sel_expr){.key = name_key,
			.op = SEL_NOT_IN, .field = 1, .n_values = 1,
			.first_value = pod->n_values++};
	}
	return true;
}

unsigned quarantine_tick(struct quarantine *q, uint64_t now)
{
	unsigned lifted = 0;
	pthread_mutex_lock(&q->mu);
	for (uint32_t i = 0; i < q->cfg.entries; i++) {
		struct q_entry *e = &q->e[i];
		if (!e->used)
			continue;
		lifted += lift_if_due(q, e, now);
		/* An open entry quiet for a window is forgotten. */
		if (!e->quarantined && e->last_failure_ns + q->cfg.window_ns <= now) {
			e->used = false;
			q->c.tracked--;
			set_live(q, q->live - 1);
		}
	}
	pthread_mutex_unlock(&q->mu);
	return lifted;
}

unsigned quarantine_release(struct quarantine *q, uint32_t pool, uint32_t template)
{
	unsigned lifted = 0;
	pthread_mutex_lock(&q->mu);
	for (uint32_t i = 0; i < q->cfg.entries; i++) {
		struct q_entry *e = &q->e[i];
		if (!e->used || !e->quarantined || e->key.pool != pool ||
		    (template != 0 && e->key.template != template))
			continue;
		lift(q, e);
		/* Its history goes too: the next failure starts a new window. */
		memset(e->failures, 0, sizeof(e->failures));
		memset(e->placements, 0, sizeof(e->placements));
		memset(e->nodes, 0, sizeof(e->nodes));
		q->c.released++;
		lifted++;
	}
	pthread_mutex_unlock(&q->mu);
	return lifted;
}

uint32_t quarantine_list(struct quarantine *q, uint64_t now, struct quarantine_info *out,
			 uint32_t n)
{
	uint32_t k = 0;
	pthread_mutex_lock(&q->mu);
	for (int pass = 0; pass < 2; pass++) {
		for (uint32_t i = 0; i < q->cfg.entries; i++) {
			struct q_entry *e = &q->e[i];
			if (!e->used || e->quarantined != (pass == 0))
				continue;
			if (k < n) {
				if (e->quarantined)
					out[k] = e->trip;
				else
					window(q, e, now, &out[k]);
			}
			k++;
		}
	}
	pthread_mutex_unlock(&q->mu);
	return k;
}

void quarantine_counts(struct quarantine *q, struct quarantine_counts *out)
{
	pthread_mutex_lock(&q->mu);
	*out = q->c;
	out->nodes_quarantined = (uint32_t)nodes_held(q, 0, 0);
	pthread_mutex_unlock(&q->mu);
}

void quarantine_refused(struct quarantine *q)
{
	pthread_mutex_lock(&q->mu);
	q->c.refused++;
	pthread_mutex_unlock(&q->mu);
}

void quarantine_message(const struct quarantine *q, const struct quarantine_info *info,
			const char *pool, const char *template, char *buf, size_t len)
{
	snprintf(buf, len, "pool %s quarantined for template %s: %u failures on %u "
		 "nodes in %.0f s (shmsched pool release %s lifts it)", pool, template,
		 info->failures, info->nodes, (double)q->cfg.window_ns * 1e-9, pool);
}
