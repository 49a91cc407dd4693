/* The zone tainter: see taint_evict_internal.h.
 *
 * Per tick, O(nodes log nodes): the nodes' zones are read into `nodes`
 * and sorted by zone, so each zone is one run of it; `zones` keeps each
 * zone's state and limiter between ticks, sorted by key, found by binary
 * search and rebuilt (zones gone dropped) each tick.
 *
 * The limiter is Kubernetes' token bucket of burst 1
 * (flowcontrol.NewTokenBucketRateLimiter(qps, 1)): full at first; a taint
 * takes its token; the next is whole 1/qps later. With burst 1 that is
 * one number, `full_at`: the clock from which the bucket holds a token
 * again. SwapLimiter (rate_limited_queue.go): the same rate keeps the
 * limiter; a rate of 0 never lets one through (NewFakeNeverRateLimiter);
 * another rate starts full, unless the old one was empty ("If we're
 * currently waiting on limiter, we drain the new one").
 *
 * The taint manager's scheduled evictions: an open-addressing table of
 * (placement id, due time), linear probing, at most half full. Each pass
 * builds the next table from the placements it is handed, carrying each
 * one's due time over from the last table, and drops the last: what was
 * not handed is cancelled with no separate removal. O(placements handed)
 * a pass, after producers_taint_evict's O(placements) walk, which it
 * makes only while some node has a NoExecute taint.
 *
 * What a placement tolerates: its worker hands it (taint_evict_placed), kept
 * by placement id as the index of a set of tolerations kept once each
 * (hash-consed), under tol_mu; the placements gone are swept when the
 * table has doubled since the last sweep.
 */
#include "daemon/taint_evict_internal.h"

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "base/base.h"
#include "daemon/lease_internal.h"
#include "ingest/ingest.h"
#include "shm/shm.h"

struct te_node {
	uint32_t name, region, zone;
	int state;          /* enum lease_state */
	bool tainted;
	uint64_t unknown_ns;
};

struct te_zone {
	uint32_t region, zone;
	int state;        /* enum zone_state */
	double qps;       /* the limiter's rate; 0: never */
	uint64_t full_at; /* the bucket holds a token from this clock on */
};

struct te_work {
	uint64_t id;      /* 0: empty */
	uint64_t trigger; /* the lease clock it is due at */
};

struct te_works {
	struct te_work *w;
	uint32_t cap, n; /* cap a power of two, or 0 */
};

/* A placement's tolerations that a NoExecute taint can match (effect
 * NoExecute or every effect), kept as its worker placed it: the id of a
 * set of tolerations, each set kept once (pods of one template share
 * it), so a placement costs 16 bytes (32 with the table's slack). */
struct te_set {
	uint32_t n;
	struct toleration t[POD_MAX_TOLERATIONS];
};

struct te_tol {
	uint64_t id;  /* 0: empty */
	uint32_t set; /* index into sets */
};

struct te_tols {
	struct te_tol *e;
	uint32_t cap, n; /* cap a power of two (or 0), at most half full */
	uint32_t swept;  /* n after the last sweep */
};

struct taint_evict {
	struct taint_evict_config cfg;
	pthread_mutex_t tol_mu; /* tols and sets: the workers' and the tick's */
	struct te_tols tols;
	struct te_set *sets;    /* [n_sets], never freed: few (a template's each) */
	uint32_t n_sets, cap_sets;
	uint32_t *set_idx;      /* [cap_idx]: set + 1 by hash, 0 empty; half full */
	uint32_t cap_idx;
	uint64_t tols_dropped;  /* not kept: out of memory (under tol_mu) */
	struct te_works works, works_next;
	uint64_t now;  /* the pass's clock */
	bool oom;      /* the pass could not schedule one */
	struct lease_table *leases;
	struct te_node *nodes;
	uint32_t n_nodes, cap_nodes;
	struct te_zone *zones, *zones_next;
	uint32_t n_zones, cap_zones;
	pthread_mutex_t mu; /* counts */
	struct taint_evict_counts counts;
};

struct taint_evict *taint_evict_create(const struct taint_evict_config *cfg,
				       struct lease_table *leases)
{
	if (cfg == NULL || leases == NULL || !(cfg->rate >= 0) ||
	    !(cfg->secondary_rate >= 0) || !(cfg->unhealthy > 0) ||
	    !(cfg->unhealthy <= 1)) {
		errno = EINVAL;
		return NULL;
	}
	struct taint_evict *te = calloc(1, sizeof(*te));
	if (te == NULL)
		return NULL;
	te->cfg = *cfg;
	te->leases = leases;
	pthread_mutex_init(&te->mu, NULL);
	pthread_mutex_init(&te->tol_mu, NULL);
	return te;
}

void taint_evict_destroy(struct taint_evict *te)
{
	if (te == NULL)
		return;
	pthread_mutex_destroy(&te->mu);
	pthread_mutex_destroy(&te->tol_mu);
	free(te->tols.e);
	free(te->sets);
	free(te->set_idx);
	free(te->works.w);
	free(te->works_next.w);
	free(te->nodes);
	free(te->zones);
	free(te->zones_next);
	free(te);
}

const char *taint_evict_zone_state_name(int state)
{
	switch (state) {
	case ZONE_NORMAL: return "Normal";
	case ZONE_PARTIAL: return "PartialDisruption";
	case ZONE_FULL: return "FullDisruption";
	default: return "Initial";
	}
}

static void add_node(void *arg, uint32_t name, uint32_t region, uint32_t zone)
{
	struct taint_evict *te = arg;
	if (te->n_nodes == te->cap_nodes)
		return; /* counted by the caller: more nodes than room */
	te->nodes[te->n_nodes++] = (struct te_node){.name = name, .region = region,
						    .zone = zone};
}

static int zone_cmp(uint32_t ra, uint32_t za, uint32_t rb, uint32_t zb)
{
	if (ra != rb)
		return ra < rb ? -1 : 1;
	return za < zb ? -1 : za > zb;
}

/* By zone, then oldest Unknown first (the tainter queue's order), then name. */
static int node_cmp(const void *a, const void *b)
{
	const struct te_node *x = a, *y = b;
	int c = zone_cmp(x->region, x->zone, y->region, y->zone);
	if (c != 0)
		return c;
	if (x->unknown_ns != y->unknown_ns)
		return x->unknown_ns < y->unknown_ns ? -1 : 1;
	return x->name < y->name ? -1 : x->name > y->name;
}

static struct te_zone *zone_find(struct te_zone *z, uint32_t n, uint32_t region,
				 uint32_t zone)
{
	uint32_t lo = 0, hi = n;
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;
		int c = zone_cmp(z[mid].region, z[mid].zone, region, zone);
		if (c == 0)
			return &z[mid];
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

/* Reads every present node and its lease into `nodes`, sorted. */
static int read_nodes(struct taint_evict *te, struct producers *p)
{
	for (;;) {
		te->n_nodes = 0;
		int k = producers_node_zones(p, add_node, te);
		if (k < 0)
			return k;
		if ((uint32_t)k <= te->cap_nodes)
			break;
		/* More nodes than room: grow and read again. */
		uint32_t cap = (uint32_t)k + (uint32_t)k / 2 + 16;
		struct te_node *n = realloc(te->nodes, cap * sizeof(*n));
		if (n == NULL)
			return -ENOMEM;
		te->nodes = n;
		te->cap_nodes = cap;
	}
	for (uint32_t i = 0; i < te->n_nodes; i++) {
		struct te_node *n = &te->nodes[i];
		n->state = lease_node(te->leases, n->name, &n->tainted, &n->unknown_ns);
		if (n->state != LEASE_UNKNOWN)
			n->unknown_ns = 0;
	}
	qsort(te->nodes, te->n_nodes, sizeof(*te->nodes), node_cmp);
	return 0;
}

/* ComputeZoneState over nodes [a, b). */
static int zone_state(const struct taint_evict *te, uint32_t a, uint32_t b)
{
	uint32_t ready = 0, not_ready = 0;
	for (uint32_t i = a; i < b; i++) {
		if (te->nodes[i].state == LEASE_UNKNOWN)
			not_ready++;
		else
			ready++;
	}
	if (ready == 0 && not_ready > 0)
		return ZONE_FULL;
	if (not_ready > 2 &&
	    (float)not_ready / (float)(not_ready + ready) >= (float)te->cfg.unhealthy)
		return ZONE_PARTIAL;
	return ZONE_NORMAL;
}

static uint64_t period_ns(double qps)
{
	double ns = 1e9 / qps;
	return ns >= 1.8e19 ? UINT64_MAX : (uint64_t)llround(ns);
}

/* SwapLimiter(qps). */
static void swap_limiter(struct te_zone *z, double qps, uint64_t now)
{
	if (z->qps == qps)
		return;
	bool old_empty = z->qps <= 0 || now < z->full_at;
	z->qps = qps;
	if (qps <= 0)
		return;
	z->full_at = old_empty ? now + period_ns(qps) : 0;
}

/* setLimiterInZone: normal and full disruption at the healthy rate,
 * partial at ReducedQPSFunc's (the secondary rate in a zone of more than
 * `large` nodes, else 0). */
static void set_limiter(const struct taint_evict *te, struct te_zone *z,
			uint32_t size, int state, uint64_t now)
{
	double qps = te->cfg.rate;
	if (state == ZONE_PARTIAL)
		qps = size > te->cfg.large ? te->cfg.secondary_rate : 0;
	swap_limiter(z, qps, now);
}

/* TryAccept. */
static bool take_token(struct te_zone *z, uint64_t now)
{
	if (z->qps <= 0 || now < z->full_at)
		return false;
	uint64_t per = period_ns(z->qps);
	z->full_at = now > UINT64_MAX - per ? UINT64_MAX : now + per;
	return true;
}

int taint_evict_tick(struct taint_evict *te, struct producers *p)
{
	int rc = read_nodes(te, p);
	if (rc < 0)
		return rc;
	uint64_t now = lease_now(te->leases);
	/* The zones of this pass, in order; each keeps its old state and
	 * limiter, a new one starts Initial with the healthy rate, full
	 * (addPodEvictorForNewZone). */
	uint32_t n_zones = 0;
	for (uint32_t i = 0; i < te->n_nodes; i++)
		if (i == 0 || zone_cmp(te->nodes[i - 1].region, te->nodes[i - 1].zone,
				       te->nodes[i].region, te->nodes[i].zone) != 0)
			n_zones++;
	if (n_zones > te->cap_zones) {
		struct te_zone *a = realloc(te->zones_next, n_zones * sizeof(*a));
		if (a == NULL)
			return -ENOMEM;
		te->zones_next = a;
		struct te_zone *b = realloc(te->zones, n_zones * sizeof(*b));
		if (b == NULL)
			return -ENOMEM;
		te->zones = b;
		te->cap_zones = n_zones;
	}
	bool all_are_full = true, all_were_full = true;
	uint32_t z = 0;
	for (uint32_t i = 0; i < te->n_nodes; z++) {
		uint32_t j = i + 1;
		while (j < te->n_nodes &&
		       zone_cmp(te->nodes[i].region, te->nodes[i].zone,
				te->nodes[j].region, te->nodes[j].zone) == 0)
			j++;
		struct te_zone *old = zone_find(te->zones, te->n_zones,
						te->nodes[i].region, te->nodes[i].zone);
		struct te_zone *nz = &te->zones_next[z];
		if (old != NULL)
			*nz = *old;
		else
			*nz = (struct te_zone){.region = te->nodes[i].region,
					       .zone = te->nodes[i].zone,
					       .state = ZONE_INITIAL,
					       .qps = te->cfg.rate, .full_at = 0};
		if (nz->state != ZONE_FULL)
			all_were_full = false;
		i = j;
	}
	/* Each zone's new state, by its run of nodes (the same order). */
	int *states = NULL;
	uint32_t *sizes = NULL;
	if (n_zones > 0) {
		states = malloc(n_zones * sizeof(*states));
		sizes = malloc(n_zones * sizeof(*sizes));
		if (states == NULL || sizes == NULL) {
			free(states);
			free(sizes);
			return -ENOMEM;
		}
	}
	uint32_t *first = NULL;
	if (n_zones > 0 && (first = malloc((n_zones + 1) * sizeof(*first))) == NULL) {
		free(states);
		free(sizes);
		return -ENOMEM;
	}
	z = 0;
	for (uint32_t i = 0; i < te->n_nodes; z++) {
		uint32_t j = i + 1;
		while (j < te->n_nodes &&
		       zone_cmp(te->nodes[i].region, te->nodes[i].zone,
				te->nodes[j].region, te->nodes[j].zone) == 0)
			j++;
		first[z] = i;
		sizes[z] = j - i;
		states[z] = zone_state(te, i, j);
		if (states[z] != ZONE_FULL)
			all_are_full = false;
		i = j;
	}
	if (first != NULL)
		first[n_zones] = te->n_nodes;
	int changed = 0;
	if (!all_are_full || !all_were_full) {
		if (all_are_full) {
			/* Every zone down: stop every eviction, take back
			 * every taint. */
			changed += (int)lease_untaint_all(te->leases);
			for (z = 0; z < n_zones; z++) {
				swap_limiter(&te->zones_next[z], 0, now);
				te->zones_next[z].state = ZONE_FULL;
			}
			log_msg(LOG_LEVEL_WARN, "node lifecycle: every zone is fully "
				"disrupted (no node Ready): no node is tainted "
				"unreachable and no pod evicted until one is Ready");
		} else if (all_were_full && n_zones > 0) {
			lease_touch_all(te->leases);
			for (z = 0; z < n_zones; z++) {
				set_limiter(te, &te->zones_next[z], sizes[z], states[z], now);
				te->zones_next[z].state = states[z];
			}
			log_msg(LOG_LEVEL_INFO, "node lifecycle: a node is Ready "
				"again: zones left full disruption");
		} else {
			for (z = 0; z < n_zones; z++) {
				struct te_zone *nz = &te->zones_next[z];
				if (nz->state == states[z])
					continue;
				set_limiter(te, nz, sizes[z], states[z], now);
				nz->state = states[z];
			}
		}
	}
	/* doNoExecuteTaintingPass: each zone's Unknown nodes, oldest first,
	 * one per token. */
	struct taint_evict_counts c = {.zones = n_zones};
	for (z = 0; z < n_zones; z++) {
		struct te_zone *nz = &te->zones_next[z];
		c.zones_normal += nz->state == ZONE_NORMAL;
		c.zones_partial += nz->state == ZONE_PARTIAL;
		c.zones_full += nz->state == ZONE_FULL;
		for (uint32_t i = first[z]; i < first[z + 1]; i++) {
			struct te_node *n = &te->nodes[i];
			if (n->state != LEASE_UNKNOWN || n->tainted)
				continue;
			if (!take_token(nz, now)) {
				c.queued++;
				continue;
			}
			if (lease_set_tainted(te->leases, n->name, true) == 0) {
				changed++;
				c.tainted++;
			}
		}
	}
	free(states);
	free(sizes);
	free(first);
	struct te_zone *t = te->zones;
	te->zones = te->zones_next;
	te->zones_next = t;
	te->n_zones = n_zones;
	pthread_mutex_lock(&te->mu);
	c.tainted += te->counts.tainted;
	c.pending = te->counts.pending;
	c.evicted = te->counts.evicted;
	c.kept = te->counts.kept;
	te->counts = c;
	pthread_mutex_unlock(&te->mu);
	return changed;
}

static struct te_work *work_find(const struct te_works *t, uint64_t id)
{
	uint32_t i = (uint32_t)rng_hash(id) & (t->cap - 1);
	while (t->w[i].id != 0 && t->w[i].id != id)
		i = (i + 1) & (t->cap - 1);
	return &t->w[i];
}

static int work_grow(struct te_works *t)
{
	uint32_t cap = t->cap ? t->cap * 2 : 64;
	if (cap == 0 || cap > UINT32_MAX / 2)
		return -ENOMEM;
	struct te_work *w = calloc(cap, sizeof(*w));
	if (w == NULL)
		return -ENOMEM;
	struct te_works n = {.w = w, .cap = cap, .n = t->n};
	for (uint32_t i = 0; i < t->cap; i++)
		if (t->w[i].id != 0)
			*work_find(&n, t->w[i].id) = t->w[i];
	free(t->w);
	*t = n;
	return 0;
}

static int u64_cmp(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return (x > y) - (x < y);
}

static struct te_tol *tol_find(const struct te_tols *t, uint64_t id)
{
	uint32_t i = (uint32_t)rng_hash(id) & (t->cap - 1);
	while (t->e[i].id != 0 && t->e[i].id != id)
		i = (i + 1) & (t->cap - 1);
	return &t->e[i];
}

/* A table of capacity `cap` with t's entries but those `gone` (sorted
 * ids, n_gone of them) says. */
static int tol_rebuild(struct te_tols *t, uint32_t cap, const uint64_t *gone,
		       uint32_t n_gone)
{
	struct te_tols n = {.e = calloc(cap, sizeof(struct te_tol)), .cap = cap};
	if (n.e == NULL)
		return -ENOMEM;
	for (uint32_t i = 0; i < t->cap; i++) {
		const struct te_tol *x = &t->e[i];
		if (x->id == 0)
			continue;
		if (n_gone > 0 && bsearch(&x->id, gone, n_gone, sizeof(*gone),
					  u64_cmp) != NULL)
			continue;
		*tol_find(&n, x->id) = *x;
		n.n++;
	}
	free(t->e);
	n.swept = t->swept;
	*t = n;
	return 0;
}

static uint32_t set_hash(const struct te_set *x)
{
	uint64_t h = 1469598103934665603u; /* FNV-1a */
	const unsigned char *b = (const unsigned char *)x->t;
	for (size_t i = 0; i < x->n * sizeof(x->t[0]); i++)
		h = (h ^ b[i]) * 1099511628211u;
	return (uint32_t)(h ^ (h >> 32)) ^ x->n;
}

static bool set_same(const struct te_set *a, const struct te_set *b)
{
	return a->n == b->n && memcmp(a->t, b->t, a->n * sizeof(a->t[0])) == 0;
}

static uint32_t *set_slot(uint32_t *idx, uint32_t cap, const struct te_set *sets,
			  const struct te_set *x)
{
	uint32_t i = set_hash(x) & (cap - 1);
	while (idx[i] != 0 && !set_same(&sets[idx[i] - 1], x))
		i = (i + 1) & (cap - 1);
	return &idx[i];
}

/* x's set index (kept once), or -ENOMEM. Under tol_mu. */
static int64_t set_intern(struct taint_evict *te, const struct te_set *x)
{
	if ((te->n_sets + 1) * 2 > te->cap_idx) {
		uint32_t cap = te->cap_idx ? te->cap_idx * 2 : 16;
		if (cap == 0 || cap > UINT32_MAX / 4)
			return -ENOMEM;
		uint32_t *idx = calloc(cap, sizeof(*idx));
		if (idx == NULL)
			return -ENOMEM;
		for (uint32_t i = 0; i < te->n_sets; i++)
			*set_slot(idx, cap, te->sets, &te->sets[i]) = i + 1;
		free(te->set_idx);
		te->set_idx = idx;
		te->cap_idx = cap;
	}
	uint32_t *slot = set_slot(te->set_idx, te->cap_idx, te->sets, x);
	if (*slot != 0)
		return *slot - 1;
	if (te->n_sets == te->cap_sets) {
		uint32_t cap = te->cap_sets ? te->cap_sets * 2 : 8;
		struct te_set *a = realloc(te->sets, (size_t)cap * sizeof(*a));
		if (a == NULL)
			return -ENOMEM;
		te->sets = a;
		te->cap_sets = cap;
	}
	te->sets[te->n_sets] = *x;
	*slot = ++te->n_sets;
	return te->n_sets - 1;
}

void taint_evict_placed(struct taint_evict *te, uint64_t id, const struct pod_spec *pod)
{
	struct te_set x;
	x.n = 0;
	for (unsigned i = 0; i < pod->n_tolerations; i++) {
		const struct toleration *t = &pod->tolerations[i];
		if (t->effect == TAINT_NO_EXECUTE || t->effect == TAINT_EFFECT_ALL)
			x.t[x.n++] = *t;
	}
	if (x.n == 0)
		return;
	pthread_mutex_lock(&te->tol_mu);
	struct te_tols *t = &te->tols;
	int64_t set = set_intern(te, &x);
	if (set < 0 || ((t->n + 1) * 2 > t->cap &&
			(t->cap > UINT32_MAX / 4 ||
			 tol_rebuild(t, t->cap ? t->cap * 2 : 64, NULL, 0) < 0))) {
		te->tols_dropped++;
		pthread_mutex_unlock(&te->tol_mu);
		return;
	}
	struct te_tol *e = tol_find(t, id);
	if (e->id == 0)
		t->n++;
	*e = (struct te_tol){.id = id, .set = (uint32_t)set};
	pthread_mutex_unlock(&te->tol_mu);
}

void taint_evict_mark_strings(void *arg, producers_mark_fn mark, void *mark_arg)
{
	struct taint_evict *te = arg;
	/* Every set, also those of placements gone (sets are kept for the
	 * daemon's life): more marked than held, never less. */
	pthread_mutex_lock(&te->tol_mu);
	for (uint32_t i = 0; i < te->n_sets; i++)
		for (uint32_t k = 0; k < te->sets[i].n; k++) {
			mark(mark_arg, te->sets[i].t[k].key);
			mark(mark_arg, te->sets[i].t[k].value);
		}
	pthread_mutex_unlock(&te->tol_mu);
}

/* producers_taint_evict's tols(). */
static unsigned tols_of(void *arg, uint64_t id, struct toleration *out)
{
	struct taint_evict *te = arg;
	unsigned n = 0;
	pthread_mutex_lock(&te->tol_mu);
	if (te->tols.cap > 0) {
		const struct te_tol *e = tol_find(&te->tols, id);
		if (e->id == id) {
			const struct te_set *x = &te->sets[e->set];
			n = x->n;
			memcpy(out, x->t, n * sizeof(*out));
		}
	}
	pthread_mutex_unlock(&te->tol_mu);
	return n;
}

/* Drops the kept tolerations of placements gone, once the table has
 * doubled since the last sweep: amortised O(1) a placement kept. The
 * producers are asked without tol_mu held (workers keep placing). */
static int tols_sweep(struct taint_evict *te, struct producers *p)
{
	pthread_mutex_lock(&te->tol_mu);
	uint32_t n = te->tols.n;
	bool due = n >= 2 * te->tols.swept + 64;
	uint64_t *ids = due ? malloc(n * sizeof(*ids)) : NULL;
	uint32_t k = 0;
	for (uint32_t i = 0; ids != NULL && i < te->tols.cap; i++)
		if (te->tols.e[i].id != 0)
			ids[k++] = te->tols.e[i].id;
	pthread_mutex_unlock(&te->tol_mu);
	if (!due)
		return 0;
	if (ids == NULL)
		return -ENOMEM;
	uint64_t *gone = malloc(((size_t)k + 1) * sizeof(*gone));
	if (gone == NULL) {
		free(ids);
		return -ENOMEM;
	}
	memcpy(gone, ids, (size_t)k * sizeof(*gone));
	producers_placements_gone(p, ids, k);
	/* The ones it zeroed are gone. */
	uint32_t g = 0;
	for (uint32_t i = 0; i < k; i++)
		if (ids[i] == 0)
			gone[g++] = gone[i];
	free(ids);
	qsort(gone, g, sizeof(*gone), u64_cmp);
	pthread_mutex_lock(&te->tol_mu);
	/* Same room: entries kept meanwhile stay (their ids were not asked). */
	int rc = g > 0 ? tol_rebuild(&te->tols, te->tols.cap, gone, g) : 0;
	if (rc == 0)
		te->tols.swept = te->tols.n;
	pthread_mutex_unlock(&te->tol_mu);
	free(gone);
	return rc;
}

/* producers_taint_evict's due(): processPodOnNode's schedule. */
static bool work_due(void *arg, uint64_t id, int64_t ns)
{
	struct taint_evict *te = arg;
	/* A new work is due at now + ns; one scheduled already keeps its
	 * time (processPodOnNode returns when CreatedAt + the new minimum is
	 * before now + it, which holds for any work created before now). */
	uint64_t trigger = te->now > UINT64_MAX - (uint64_t)ns ? UINT64_MAX
			 : te->now + (uint64_t)ns;
	if (te->works.cap > 0) {
		const struct te_work *old = work_find(&te->works, id);
		if (old->id == id)
			trigger = old->trigger;
	}
	if (ns == 0 || te->now >= trigger)
		return true;
	struct te_works *nx = &te->works_next;
	if ((nx->n + 1) * 2 > nx->cap && work_grow(nx) < 0) {
		te->oom = true; /* not scheduled: its time starts anew */
		return false;
	}
	struct te_work *w = work_find(nx, id);
	if (w->id == 0) {
		*w = (struct te_work){.id = id, .trigger = trigger};
		nx->n++;
	}
	return false;
}

int taint_evict_pods(struct taint_evict *te, struct producers *p)
{
	te->now = lease_now(te->leases);
	te->oom = false;
	if (te->works_next.cap > 0)
		memset(te->works_next.w, 0, te->works_next.cap * sizeof(*te->works_next.w));
	te->works_next.n = 0;
	uint32_t evicted = 0;
	int swept = tols_sweep(te, p);
	int rc = producers_taint_evict(p, tols_of, work_due, te, &evicted);
	struct te_works t = te->works;
	te->works = te->works_next;
	te->works_next = t;
	pthread_mutex_lock(&te->tol_mu);
	uint32_t kept = te->tols.n;
	pthread_mutex_unlock(&te->tol_mu);
	pthread_mutex_lock(&te->mu);
	te->counts.kept = kept;
	te->counts.pending = te->works.n;
	te->counts.evicted += evicted;
	pthread_mutex_unlock(&te->mu);
	if (rc < 0)
		return rc;
	return te->oom || swept < 0 ? -ENOMEM : (int)evicted;
}

void taint_evict_counts(struct taint_evict *te, struct taint_evict_counts *out)
{
	pthread_mutex_lock(&te->mu);
	*out = te->counts;
	pthread_mutex_unlock(&te->mu);
}
