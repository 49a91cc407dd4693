/* The placement engine: see engine.h for what the two paths do and why they
 * agree.
 *
 * Fast-path data, per engine (one per thread):
 * - the class cache: open addressing by a 64-bit hash of the pod spec's
 *   scheduling part, each class holding, for the snapshot generation it was
 *   compiled for, its statically feasible slots in slot order and the static
 *   raw scores of every slot. A new snapshot generation flushes the cache.
 * - per shard of SNAP_SHARD_SLOTS slots, the most free of each resource over
 *   its nodes, recomputed lazily after a commit to the shard (a dirty mark),
 *   so a shard is skipped only when no node in it can fit the pod.
 * When no node is feasible, the diagnosis is rebuilt by the reference
 * filters over every node: exact messages, paid only by unschedulable pods.
 *
 * Cost of a schedulable pod in the fast path: one hash of the spec, then per
 * visited candidate the dynamic filters (O(resources + ports)), until
 * numFeasibleNodesToFind are found; then O(found) scoring.
 */
#include "workers/engine.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "workers/diagnosis.h"
#include "workers/pod_class.h"

const char *const score_plugin_names[SCORE_PLUGINS] = {
	[SCORE_TAINT] = "TaintToleration",
	[SCORE_AFFINITY] = "NodeAffinity",
	[SCORE_FIT] = "NodeResourcesFit",
	[SCORE_BALANCED] = "NodeResourcesBalancedAllocation",
};

struct eclass {
	uint64_t hash;
	struct pod_spec spec;  /* ns_name zeroed: the key is the rest */
	uint32_t n_feasible;   /* statically feasible slots */
	uint32_t *feasible;    /* [n_feasible] in slot order */
	int32_t *affinity_raw; /* [n_slots] or NULL when not scored */
	int32_t *taint_raw;    /* [n_slots] or NULL when not scored */
	size_t bytes;
	uint8_t n_requested;   /* resources the pods request (> 0), pods excluded */
	uint8_t requested[RES_MAX];
};

#define SEEN_SLOTS 65536u /* a power of two */

struct candidate {
	uint32_t slot;
	int64_t raw[SCORE_PLUGINS];
};

struct shard_free {
	int64_t max_free[RES_MAX];
	bool dirty;
};

struct engine {
	struct cluster *cluster;
	struct plugin_ctx ctx;
	struct sched_config cfg;
	uint64_t seed;

	uint64_t generation;   /* of the snapshot the caches were built for */
	struct eclass **table; /* open addressing, NULL = empty */
	uint32_t table_mask;
	uint32_t n_classes;
	size_t class_bytes, class_bytes_max;

	/* Hashes of specs seen once: a class is compiled on its second pod, so
	 * a unique pod pays a sampled reference scan, not a full compile. A
	 * collision only compiles a class early. */
	uint64_t *seen;

	struct shard_free *shards;
	uint32_t n_shards;

	struct candidate *cand; /* [capacity] */
	int64_t *tmp;           /* [capacity] scratch for normalising */
	struct diagnosis diag;
	uint32_t diag_all_nodes;
	bool diag_no_nodes;

	struct engine_stats stats;
};

/* --- small helpers ------------------------------------------------------ */

static uint64_t splitmix64(uint64_t *state)
{
	uint64_t z = (*state += UINT64_C(0x9e3779b97f4a7c15));
	z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
	z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
	return z ^ (z >> 31);
}

/* Uniform in [0, n) for n > 0 (Lemire's multiply-shift; the tiny bias is
 * irrelevant to tie-breaking and start offsets). */
static uint64_t draw(uint64_t *state, uint64_t n)
{
	return (uint64_t)(((unsigned __int128)splitmix64(state) * n) >> 64);
}

uint32_t engine_nodes_to_find(int32_t percentage, uint32_t all_nodes)
{
	const uint32_t min_feasible = 100; /* minFeasibleNodesToFind */
	if (all_nodes < min_feasible)
		return all_nodes;
	int64_t pct = percentage;
	if (pct <= 0) {
		pct = 50 - (int64_t)all_nodes / 125;
		if (pct < 5) /* minFeasibleNodesPercentageToFind */
			pct = 5;
	}
	if (pct >= 100)
		return all_nodes;
	uint64_t n = (uint64_t)all_nodes * (uint64_t)pct / 100;
	return n < min_feasible ? min_feasible : (uint32_t)n;
}

/* A node as the plugins see it: its spec, and its counters (and, for a pod
 * with host ports, its ports) read atomically into `r` by read_node(). */
struct node_read {
	struct res_vec used;
	struct host_port ports[NODE_MAX_HOST_PORTS];
	struct node_view v;
};

static void read_node(struct cluster *c, const struct snapshot *s, uint32_t slot,
		      const struct pod_spec *pod, struct node_read *r)
{
	struct node_alloc *a = cluster_alloc(c, slot);
	r->v = (struct node_view){.spec = &s->nodes[slot], .used = &r->used};
	cluster_load_used(a, &r->used, &r->v.used_nonzero_cpu_milli,
			  &r->v.used_nonzero_mem_bytes);
	/* Only NodePorts reads the ports, and only for a pod that has some. */
	if (pod->n_ports > 0) {
		r->v.n_ports = cluster_copy_ports(a, r->ports);
		r->v.ports = r->ports;
	}
}

/* --- creation ----------------------------------------------------------- */

struct engine *engine_create(struct cluster *c, const struct plugin_ctx *ctx,
			     const struct sched_config *cfg, uint64_t seed,
			     size_t class_cache_bytes)
{
	if (c == NULL || ctx == NULL || cfg == NULL) {
		errno = EINVAL;
		return NULL;
	}
	struct engine *e = calloc(1, sizeof(*e));
	if (e == NULL)
		return NULL;
	e->cluster = c;
	e->ctx = *ctx;
	e->cfg = *cfg;
	e->seed = seed;
	e->class_bytes_max = class_cache_bytes ? class_cache_bytes : (size_t)256 << 20;
	e->table_mask = 1023;
	e->table = calloc(e->table_mask + 1, sizeof(*e->table));
	uint32_t cap = cluster_capacity(c);
	e->cand = malloc((size_t)cap * sizeof(*e->cand));
	e->tmp = malloc((size_t)cap * sizeof(*e->tmp));
	e->seen = calloc(SEEN_SLOTS, sizeof(*e->seen));
	if (e->table == NULL || e->cand == NULL || e->tmp == NULL || e->seen == NULL) {
		engine_destroy(e);
		errno = ENOMEM;
		return NULL;
	}
	diagnosis_reset(&e->diag);
	return e;
}

static void class_free(struct eclass *k)
{
	if (k == NULL)
		return;
	free(k->feasible);
	free(k->affinity_raw);
	free(k->taint_raw);
	free(k);
}

static void flush_classes(struct engine *e)
{
	for (uint32_t i = 0; i <= e->table_mask; i++) {
		class_free(e->table[i]);
		e->table[i] = NULL;
	}
	memset(e->seen, 0, SEEN_SLOTS * sizeof(*e->seen));
	e->n_classes = 0;
	e->class_bytes = 0;
	e->stats.class_flushes++;
}

/* Doubles the class table. Returns 0 or -ENOMEM (the table stays as it was). */
static int grow_classes(struct engine *e)
{
	uint32_t n = (e->table_mask + 1) * 2;
	struct eclass **t = calloc(n, sizeof(*t));
	if (t == NULL)
		return -ENOMEM;
	for (uint32_t i = 0; i <= e->table_mask; i++) {
		struct eclass *k = e->table[i];
		if (k == NULL)
			continue;
		uint32_t j = (uint32_t)k->hash & (n - 1);
		while (t[j] != NULL)
			j = (j + 1) & (n - 1);
		t[j] = k;
	}
	free(e->table);
	e->table = t;
	e->table_mask = n - 1;
	return 0;
}

void engine_destroy(struct engine *e)
{
	if (e == NULL)
		return;
	if (e->table != NULL)
		flush_classes(e);
	free(e->table);
	free(e->seen);
	free(e->shards);
	free(e->cand);
	free(e->tmp);
	free(e);
}

/* A new snapshot generation: classes and shard summaries start over. */
static int sync_generation(struct engine *e, const struct snapshot *s)
{
	if (s->generation == e->generation)
		return 0;
	flush_classes(e);
	if (s->n_shards != e->n_shards) {
		struct shard_free *sh = calloc(s->n_shards ? s->n_shards : 1,
					       sizeof(*sh));
		if (sh == NULL)
			return -ENOMEM;
		free(e->shards);
		e->shards = sh;
		e->n_shards = s->n_shards;
	}
	for (uint32_t i = 0; i < e->n_shards; i++)
		e->shards[i].dirty = true;
	e->generation = s->generation;
	return 0;
}

/* --- scoring and selection, shared by both paths ------------------------ */

static bool wants_affinity_score(const struct engine *e, const struct pod_spec *pod)
{
	return e->cfg.score.weight_affinity > 0 && pod->n_preferred > 0;
}

/* Raw scores of one candidate; static ones may come from a class. */
static void score_dynamic(const struct engine *e, const struct pod_spec *pod,
			  const struct node_view *v, bool skip_balanced,
			  struct candidate *cd)
{
	const struct score_config *sc = &e->cfg.score;
	cd->raw[SCORE_FIT] = sc->weight_fit ? score_fit(sc, pod, v) : 0;
	cd->raw[SCORE_BALANCED] =
		sc->weight_balanced && !skip_balanced ? score_balanced(sc, pod, v) : 0;
}

static void score_static(const struct engine *e, const struct pod_spec *pod,
			 const struct node_spec *node, struct candidate *cd)
{
	cd->raw[SCORE_AFFINITY] = wants_affinity_score(e, pod)
		? score_affinity_raw(&e->ctx, pod, node) : 0;
	cd->raw[SCORE_TAINT] = e->cfg.score.weight_taint
		? score_taint_raw(pod, node) : 0;
}

/* Normalises the static scores over the candidates, totals them with the
 * profile weights, and picks the best, ties at random in candidate order
 * (selectHost's reservoir sampling). */
static void select_best(struct engine *e, const struct pod_spec *pod, uint32_t n,
			 uint64_t *rng, const struct engine_explain *x,
			 struct placement *out)
{
	const struct score_config *sc = &e->cfg.score;
	int64_t *norm_aff = e->tmp;
	/* Normalise in place in the candidates, one plugin at a time. */
	if (wants_affinity_score(e, pod)) {
		for (uint32_t i = 0; i < n; i++)
			norm_aff[i] = e->cand[i].raw[SCORE_AFFINITY];
		score_normalize(norm_aff, n, false);
		for (uint32_t i = 0; i < n; i++)
			e->cand[i].raw[SCORE_AFFINITY] = norm_aff[i];
	}
	if (sc->weight_taint) {
		for (uint32_t i = 0; i < n; i++)
			norm_aff[i] = e->cand[i].raw[SCORE_TAINT];
		score_normalize(norm_aff, n, true);
		for (uint32_t i = 0; i < n; i++)
			e->cand[i].raw[SCORE_TAINT] = norm_aff[i];
	}
	int64_t best = INT64_MIN;
	uint64_t ties = 0;
	uint32_t chosen = 0;
	for (uint32_t i = 0; i < n; i++) {
		const struct candidate *cd = &e->cand[i];
		int64_t total = sc->weight_taint * cd->raw[SCORE_TAINT] +
				sc->weight_affinity * cd->raw[SCORE_AFFINITY] +
				sc->weight_fit * cd->raw[SCORE_FIT] +
				sc->weight_balanced * cd->raw[SCORE_BALANCED];
		if (x != NULL && x->scored != NULL)
			x->scored(x->arg, cd->slot, cd->raw, total);
		if (total > best) {
			best = total;
			ties = 1;
			chosen = i;
		} else if (total == best) {
			ties++;
			if (draw(rng, ties) == 0)
				chosen = i;
		}
	}
	out->slot = e->cand[chosen].slot;
	out->score = best;
	out->feasible = n;
}

/* What both paths fix before visiting nodes, the same way for the same pod. */
struct pass {
	uint64_t rng;        /* this pod's random stream */
	uint32_t start;      /* the slot the visit starts at */
	uint32_t want;       /* numFeasibleNodesToFind */
	bool skip_balanced;  /* BalancedAllocation's PreScore skip */
};

static void begin(struct engine *e, const struct snapshot *s,
		  const struct pod_spec *pod, uint64_t seq, struct pass *p,
		  struct placement *out)
{
	p->rng = e->seed ^ (seq * UINT64_C(0xd1342543de82ef95));
	splitmix64(&p->rng);
	p->start = s->n_slots ? (uint32_t)draw(&p->rng, s->n_slots) : 0;
	p->want = engine_nodes_to_find(e->cfg.percentage_of_nodes_to_score,
				       s->n_nodes);
	p->skip_balanced = score_balanced_skips(&e->cfg.score, pod);
	*out = (struct placement){.slot = -1, .all_nodes = s->n_nodes};
	e->stats.pods++;
}

/* The reference filters over every node, for the message of a pod that
 * fits nowhere (and the whole of the reference path's diagnosis). */
static void diagnose_all(struct engine *e, const struct snapshot *s,
			 const struct pod_spec *pod)
{
	struct reason reasons[FILTER_MAX_REASONS];
	diagnosis_reset(&e->diag);
	e->diag_all_nodes = s->n_nodes;
	e->diag_no_nodes = s->n_nodes == 0;
	e->stats.diagnosis_scans++;
	for (uint32_t i = 0; i < s->n_slots; i++) {
		if (!s->present[i])
			continue;
		struct node_read nd;
		read_node(e->cluster, s, i, pod, &nd);
		unsigned nr = filter_node(&e->ctx, pod, &nd.v, reasons);
		for (unsigned k = 0; k < nr; k++)
			diagnosis_add(&e->diag, &reasons[k]);
	}
}

/* --- the reference path -------------------------------------------------- */

int engine_place_reference(struct engine *e, const struct pod_spec *pod,
			   uint64_t seq, const struct engine_explain *x,
			   struct placement *out)
{
	const struct snapshot *s = cluster_snapshot(e->cluster);
	struct pass p;
	begin(e, s, pod, seq, &p, out);
	struct reason reasons[FILTER_MAX_REASONS];
	uint32_t n = 0;
	diagnosis_reset(&e->diag);
	e->diag_all_nodes = s->n_nodes;
	e->diag_no_nodes = s->n_nodes == 0;
	for (uint32_t k = 0; k < s->n_slots && n < p.want; k++) {
		uint32_t i = p.start + k < s->n_slots ? p.start + k
						      : p.start + k - s->n_slots;
		if (!s->present[i])
			continue;
		struct node_read nd;
		read_node(e->cluster, s, i, pod, &nd);
		unsigned nr = filter_node(&e->ctx, pod, &nd.v, reasons);
		if (nr > 0) {
			for (unsigned r = 0; r < nr; r++)
				diagnosis_add(&e->diag, &reasons[r]);
			if (x != NULL && x->filtered != NULL)
				x->filtered(x->arg, i, reasons, nr);
			continue;
		}
		struct candidate *cd = &e->cand[n++];
		cd->slot = i;
		score_static(e, pod, nd.v.spec, cd);
		score_dynamic(e, pod, &nd.v, p.skip_balanced, cd);
	}
	if (n > 0)
		select_best(e, pod, n, &p.rng, x, out);
	return 0;
}

/* --- the fast path -------------------------------------------------------- */

static struct eclass *class_compile(struct engine *e, const struct snapshot *s,
				    const struct pod_spec *pod, uint64_t h)
{
	struct eclass *k = calloc(1, sizeof(*k));
	if (k == NULL)
		return NULL;
	k->hash = h;
	k->spec = *pod;
	k->spec.ns_name = 0;
	size_t n = s->n_slots ? s->n_slots : 1;
	k->feasible = malloc(n * sizeof(*k->feasible));
	bool aff = wants_affinity_score(e, pod), taint = e->cfg.score.weight_taint > 0;
	if (aff)
		k->affinity_raw = calloc(n, sizeof(*k->affinity_raw));
	if (taint)
		k->taint_raw = calloc(n, sizeof(*k->taint_raw));
	if (k->feasible == NULL || (aff && k->affinity_raw == NULL) ||
	    (taint && k->taint_raw == NULL)) {
		class_free(k);
		return NULL;
	}
	for (int r = 0; r < RES_MAX; r++)
		if (r != RES_PODS && pod->request.v[r] > 0)
			k->requested[k->n_requested++] = (uint8_t)r;
	for (uint32_t i = 0; i < s->n_slots; i++) {
		if (!s->present[i])
			continue;
		const struct node_spec *node = &s->nodes[i];
		const struct shard_summary *sh = &s->shards[i / SNAP_SHARD_SLOTS];
		/* The static filters, in filter_node()'s order; a shard with no
		 * cordoned node or no hard taint passes those two unasked. */
		if ((sh->any_unschedulable && !filter_unschedulable(&e->ctx, pod, node)) ||
		    !filter_node_name(pod, node) ||
		    (sh->any_hard_taint && filter_taints(pod, node) >= 0) ||
		    !filter_affinity(&e->ctx, pod, node))
			continue;
		k->feasible[k->n_feasible++] = i;
		struct candidate cd;
		score_static(e, pod, node, &cd);
		if (aff)
			k->affinity_raw[i] = (int32_t)cd.raw[SCORE_AFFINITY];
		if (taint)
			k->taint_raw[i] = (int32_t)cd.raw[SCORE_TAINT];
	}
	k->bytes = sizeof(*k) + n * (sizeof(uint32_t) + (aff ? 4 : 0) + (taint ? 4 : 0));
	return k;
}

/* The pod's class, compiled if needed. Sets *first_sight and returns NULL
 * the first time a spec is seen (the caller scans without a class). */
static struct eclass *class_get(struct engine *e, const struct snapshot *s,
				const struct pod_spec *pod, bool *first_sight)
{
	*first_sight = false;
	uint64_t h = pod_class_hash(pod);
	uint32_t i = (uint32_t)h & e->table_mask;
	for (; e->table[i] != NULL; i = (i + 1) & e->table_mask) {
		struct eclass *k = e->table[i];
		if (k->hash == h && pod_class_equal(&k->spec, pod)) {
			e->stats.class_hits++;
			return k;
		}
	}
	uint64_t *seen = &e->seen[h & (SEEN_SLOTS - 1)];
	if (*seen != h) {
		*seen = h;
		*first_sight = true;
		return NULL;
	}
	e->stats.class_misses++;
	struct eclass *k = class_compile(e, s, pod, h);
	if (k == NULL)
		return NULL;
	/* Over the memory budget: start over rather than evict one by one. */
	if (e->class_bytes + k->bytes > e->class_bytes_max) {
		flush_classes(e);
		*seen = h;
	} else if ((e->n_classes + 1) * 2 > e->table_mask + 1 && grow_classes(e) < 0) {
		class_free(k);
		return NULL;
	}
	i = (uint32_t)h & e->table_mask;
	while (e->table[i] != NULL)
		i = (i + 1) & e->table_mask;
	e->table[i] = k;
	e->n_classes++;
	e->class_bytes += k->bytes;
	return k;
}

static void shard_refresh(struct engine *e, const struct snapshot *s, uint32_t sh)
{
	struct shard_free *f = &e->shards[sh];
	for (int r = 0; r < RES_MAX; r++)
		f->max_free[r] = INT64_MIN;
	uint32_t end = (sh + 1) * SNAP_SHARD_SLOTS;
	if (end > s->n_slots)
		end = s->n_slots;
	for (uint32_t i = sh * SNAP_SHARD_SLOTS; i < end; i++) {
		if (!s->present[i])
			continue;
		const struct node_alloc *a = cluster_alloc_const(e->cluster, i);
		for (int r = 0; r < RES_MAX; r++) {
			/* Relaxed: a hint; a stale value only skips less or more
			 * than it could, and the commit re-checks. */
			int64_t free_r = s->allocatable[r][i] -
					 __atomic_load_n(&a->used[r], __ATOMIC_RELAXED);
			if (free_r > f->max_free[r])
				f->max_free[r] = free_r;
		}
	}
	f->dirty = false;
}

/* True when no node of the shard can pass NodeResourcesFit for `pod`. */
static bool shard_cannot_fit(struct engine *e, const struct snapshot *s,
			     uint32_t sh, const struct pod_spec *pod)
{
	/* The snapshot's static bound first: free never exceeds allocatable. */
	const int64_t *ma = s->shards[sh].max_allocatable;
	for (int r = 0; r < RES_MAX; r++)
		if (r != RES_PODS && pod->request.v[r] > ma[r])
			return true;
	if (e->shards[sh].dirty)
		shard_refresh(e, s, sh);
	const int64_t *mf = e->shards[sh].max_free;
	if (mf[RES_PODS] < 1)
		return true;
	for (int r = 0; r < RES_MAX; r++)
		if (r != RES_PODS && pod->request.v[r] > 0 && pod->request.v[r] > mf[r])
			return true;
	return false;
}

/* filter_resources() == 0, without building reasons: the pods count, then
 * only the resources the class requests, from the snapshot's columns. */
static bool fits(const struct eclass *k, const struct snapshot *s,
		 const struct node_alloc *a, const struct pod_spec *pod,
		 uint32_t slot)
{
	/* Relaxed loads: a view; the commit decides (cluster_reserve). */
	if (__atomic_load_n(&a->used[RES_PODS], __ATOMIC_RELAXED) + 1 >
	    s->allocatable[RES_PODS][slot])
		return false;
	for (unsigned i = 0; i < k->n_requested; i++) {
		unsigned r = k->requested[i];
		if (pod->request.v[r] > s->allocatable[r][slot] -
					__atomic_load_n(&a->used[r], __ATOMIC_RELAXED))
			return false;
	}
	return true;
}

/* The first index in k->feasible whose slot is >= start (binary search). */
static uint32_t first_at_or_after(const struct eclass *k, uint32_t start)
{
	uint32_t lo = 0, hi = k->n_feasible;
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;
		if (k->feasible[mid] < start)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo == k->n_feasible ? 0 : lo;
}

int engine_place(struct engine *e, const struct pod_spec *pod, uint64_t seq,
		 struct placement *out)
{
	const struct snapshot *s = cluster_snapshot(e->cluster);
	if (sync_generation(e, s) < 0)
		return -ENOMEM;
	bool first_sight;
	struct eclass *k = class_get(e, s, pod, &first_sight);
	if (first_sight) {
		e->stats.first_sights++;
		return engine_place_reference(e, pod, seq, NULL, out);
	}
	if (k == NULL)
		return -ENOMEM;
	struct pass p;
	begin(e, s, pod, seq, &p, out);
	uint32_t n = 0, skipped_shard = UINT32_MAX;
	uint32_t j = k->n_feasible ? first_at_or_after(k, p.start) : 0;
	for (uint32_t visited = 0; visited < k->n_feasible && n < p.want; visited++) {
		uint32_t slot = k->feasible[j];
		j = j + 1 == k->n_feasible ? 0 : j + 1;
		uint32_t sh = slot / SNAP_SHARD_SLOTS;
		if (sh == skipped_shard)
			continue;
		if (shard_cannot_fit(e, s, sh, pod)) {
			skipped_shard = sh;
			e->stats.shards_skipped++;
			continue;
		}
		e->stats.nodes_checked++;
		/* Order does not matter here: both only decide feasibility (the
		 * reasons come from diagnose_all() when nothing fits). */
		if (!fits(k, s, cluster_alloc_const(e->cluster, slot), pod, slot))
			continue;
		struct node_read nd;
		read_node(e->cluster, s, slot, pod, &nd);
		if (pod->n_ports > 0 && !filter_ports(&e->ctx, pod, &nd.v))
			continue;
		struct candidate *cd = &e->cand[n++];
		cd->slot = slot;
		cd->raw[SCORE_AFFINITY] = k->affinity_raw ? k->affinity_raw[slot] : 0;
		cd->raw[SCORE_TAINT] = k->taint_raw ? k->taint_raw[slot] : 0;
		score_dynamic(e, pod, &nd.v, p.skip_balanced, cd);
	}
	if (n > 0)
		select_best(e, pod, n, &p.rng, NULL, out);
	else
		diagnose_all(e, s, pod);
	return 0;
}

/* --- after a placement ---------------------------------------------------- */

int engine_message(const struct engine *e, char *buf, size_t len)
{
	if (e->diag_no_nodes)
		return snprintf(buf, len, "no nodes available to schedule pods");
	return diagnosis_format(&e->diag, &e->ctx, e->diag_all_nodes, buf, len);
}

/* cluster_reserve()'s port rule: NodePorts against the ports in use. */
static bool ports_free(const void *arg, const struct pod_spec *pod,
		       const struct host_port *in_use, unsigned n)
{
	const struct plugin_ctx *ctx = arg;
	struct node_view v = {.ports = in_use, .n_ports = n};
	return filter_ports(ctx, pod, &v);
}

int engine_commit(struct engine *e, const struct pod_spec *pod, uint32_t slot)
{
	const struct snapshot *s = cluster_snapshot(e->cluster);
	int rc = cluster_reserve(e->cluster, slot, &s->nodes[slot].allocatable, pod,
				 ports_free, &e->ctx);
	if (rc == 0 && slot / SNAP_SHARD_SLOTS < e->n_shards)
		e->shards[slot / SNAP_SHARD_SLOTS].dirty = true;
	return rc;
}

void engine_get_stats(const struct engine *e, struct engine_stats *out)
{
	*out = e->stats;
}
