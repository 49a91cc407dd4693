/* The placement engine: see engine.h for what the two paths do and why they
 * agree. This file: the engine's life, the reference path and the choice
 * of path per pod (engine_place); the mechanisms it chooses among are in
 * the files below it. Calls run down: engine.c -> engine_scan.c ->
 * engine_sync.c -> engine_classes.c -> engine_evals.c -> engine_leaf.c ->
 * engine_score.c, each file's functions declared in its own header
 * (engine_scan_internal.h, ...), over engine_types_internal.h, which also
 * holds the table of every cache and what invalidates it.
 *
 * Fast-path data, per engine (one per thread):
 * - the class cache: open addressing by a 64-bit hash of the pod spec's
 *   scheduling part, each class holding, for the snapshot generation it was
 *   compiled for, its statically feasible slots in slot order, the static
 *   raw scores of every slot and the static filters' diagnosis. A new
 *   snapshot generation flushes the cache.
 * - for a hot class, its index (class_index.h): every feasible node's
 *   dynamic filter result and score, kept exact through the cluster's
 *   change log, so a pod costs O(log n) plus one leaf per node changed
 *   since the class's last pod, instead of a scan of ~numFeasibleNodesToFind
 *   nodes. Its dynamic reasons are counted too: an unschedulable pod's
 *   message costs nothing more.
 * - per shard of SNAP_SHARD_SLOTS slots, the most free of each resource over
 *   its nodes, recomputed lazily after the change log shows a change in the
 *   shard (a dirty mark), so a scan skips a shard only when no node in it
 *   can fit the pod.
 * A spec seen once takes the reference scan, unless a compiled class
 * differs from it only in requests: then it scans that class's static
 * results with its own dynamic filters (and, if nothing fits, builds the
 * message from the class's static diagnosis plus its own dynamic reasons).
 *
 * Cost of a schedulable pod of a cold class: one hash of the spec, then per
 * visited candidate the dynamic filters (O(resources + ports)), until
 * numFeasibleNodesToFind are found; then O(found) scoring.
 */
#include "workers/engine.h"
#include "workers/engine_types_internal.h"
#include "workers/engine_scan_internal.h"
#include "workers/engine_sync_internal.h"
#include "workers/engine_classes_internal.h"
#include "workers/engine_score_internal.h"

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

/* --- creation ----------------------------------------------------------- */

struct engine *engine_create(struct cluster *c, const struct plugin_ctx *ctx,
			     const struct sched_config *cfg, uint64_t seed,
			     size_t class_cache_bytes)
{
	if (c == NULL || ctx == NULL || cfg == NULL || cfg->n_profiles == 0 ||
	    cfg->n_profiles > SCHED_MAX_PROFILES) {
		errno = EINVAL;
		return NULL;
	}
	struct engine *e = calloc(1, sizeof(*e));
	if (e == NULL)
		return NULL;
	e->cluster = c;
	e->ledger = cluster_ledger(c);
	e->ctx = *ctx;
	e->cfg = *cfg;
	e->seed = seed;
	size_t by_slots = (size_t)cluster_capacity(c) * ENGINE_CLASS_BYTES_PER_SLOT;
	e->class_bytes_max = class_cache_bytes ? class_cache_bytes
			   : by_slots > ((size_t)256 << 20) ? by_slots : (size_t)256 << 20;
	e->pod_budget = ENGINE_POD_BUDGET;
	e->pods_pay = true;
	e->clock_ns = now_ns;
	e->eval_cols_min = EVAL_COLS_MIN;
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
	e->changed = malloc(CLUSTER_SPEC_LOG * sizeof(*e->changed));
	e->frag_count = malloc(sizeof(*e->frag_count));
	e->before = calloc(cap ? cap : 1, sizeof(*e->before));
	e->gpu_counted = calloc(cap ? cap : 1, sizeof(*e->gpu_counted));
	e->memo = calloc(GROWTH_MEMO_SLOTS, sizeof(*e->memo));
	if (e->frag_count == NULL || e->before == NULL || e->changed == NULL ||
	    e->memo == NULL || e->gpu_counted == NULL) {
		engine_destroy(e);
		errno = ENOMEM;
		return NULL;
	}
	frag_counter_init(e->frag_count);
	diagnosis_reset(&e->diag);
	e->ip = interpod_create(ctx);
	e->slots = malloc((cap ? cap : 1) * sizeof(*e->slots));
	if (e->ip == NULL || e->slots == NULL || node_rows_init(&e->rows, cap) < 0) {
		engine_destroy(e);
		errno = ENOMEM;
		return NULL;
	}
	for (uint32_t p = 0; p < cfg->n_profiles; p++)
		interpod_args_from(&e->ip_args[p], ctx, &cfg->profiles[p].score);
	return e;
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
	free(e->frag_count);
	free(e->changed);
	free(e->before);
	free(e->gpu_counted);
	free(e->memo);
	interpod_destroy(e->ip);
	free(e->slots);
	node_rows_free(&e->rows);
	free(e->eval_leaf);
	free(e->eval_free);
	free(e);
}

/* --- a pod's pass, and the reference path -------------------------------- */

static void begin(struct engine *e, const struct snapshot *s,
		  const struct pod_spec *pod, uint64_t seq, struct pass *p,
		  struct placement *out)
{
	p->rng = e->seed ^ (seq * UINT64_C(0xd1342543de82ef95));
	rng_next(&p->rng);
	p->start = s->n_slots ? (uint32_t)rng_below(&p->rng, s->n_slots) : 0;
	p->want = engine_nodes_to_find(sched_profile_percentage(&e->cfg, pod->profile),
				       s->n_nodes);
	p->sc = sc_of(e, pod);
	p->skip_balanced = score_balanced_skips(p->sc, pod);
	p->affinity = wants_affinity_score(e, pod);
	*out = (struct placement){.slot = -1, .all_nodes = s->n_nodes};
	e->stats.pods++;
	/* The mix GpuFragmentation scores against learns from every pod that
	 * comes, placed or not; it changes only at the counter's refresh
	 * points (frag.h), which makes cached leaves stale (mix.epoch). */
	const struct score_config *sc = sc_of(e, pod);
	if (sc->weight_gpu_frag && frag_counter_add(e->frag_count, pod))
		frag_mix_build(&e->mix, e->frag_count, (unsigned)sc->gpu_frag_max_shapes,
			       sc->gpu_frag_cpu_limited);
}

/* `ip_on`: inter-pod rules apply to the pod (interpod_applies, which the
 * caller has asked). */
static int place_reference(struct engine *e, const struct pod_spec *pod,
			   uint64_t seq, bool ip_on, const struct engine_explain *x,
			   struct placement *out)
{
	const struct snapshot *s = cluster_snapshot(e->cluster);
	if (sync_generation(e, s) < 0)
		return -ENOMEM;
	struct pass p;
	begin(e, s, pod, seq, &p, out);
	score_plan_init(&p.plan, p.sc, pod);
	struct reason reasons[FILTER_MAX_REASONS];
	uint32_t n = 0;
	diagnosis_reset(&e->diag);
	e->diag_all_nodes = s->n_nodes;
	e->diag_no_nodes = s->n_nodes == 0;
	/* InterPodAffinity and PodTopologySpread: PreFilter walks every
	 * node's pods once; Filter runs last, as in kube's plugin order. */
	e->ip_on = ip_on;
	if (e->ip_on) {
		e->stats.interpod_pods++;
		if (interpod_prefilter(e->ip, s, e->ledger, &e->ctx, pod,
				       args_of(e, pod)) < 0)
			return -ENOMEM;
	}
	for (uint32_t k = 0; k < s->n_slots && n < p.want; k++) {
		uint32_t i = p.start + k < s->n_slots ? p.start + k
						      : p.start + k - s->n_slots;
		if (!s->present[i])
			continue;
		struct node_read nd;
		read_node(e->ledger, s, i, pod, reads_devices(e, pod), &nd);
		unsigned nr = filter_node_profile(&e->ctx, p.sc, pod, &nd.v, reasons);
		if (nr == 0 && e->ip_on) {
			uint8_t code = interpod_filter(e->ip, s, i);
			if (code != 0) {
				reasons[0] = (struct reason){.code = code};
				nr = 1;
			}
		}
		if (nr > 0) {
			for (unsigned r = 0; r < nr; r++)
				diagnosis_add(&e->diag, &reasons[r]);
			if (x != NULL && x->filtered != NULL)
				x->filtered(x->arg, i, reasons, nr);
			continue;
		}
		struct candidate *cd = &e->cand[n];
		e->slots[n++] = i;
		cd->slot = i;
		score_static(&e->ctx, p.sc, p.affinity, pod, nd.v.spec, cd);
		score_dynamic(e, p.sc, &p.plan, pod, &nd.v, p.skip_balanced, cd);
	}
	if (n > 0 && e->ip_on && interpod_scores(e, s, pod, n) < 0)
		return -ENOMEM;
	if (n > 0)
		select_best(e, pod, n, &p.rng, x, out);
	return 0;
}

int engine_place_reference(struct engine *e, const struct pod_spec *pod,
			   uint64_t seq, const struct engine_explain *x,
			   struct placement *out)
{
	if (!profile_ok(e, pod))
		return -EINVAL;
	e->diag_conflict = affinity_terms_conflict(pod);
	int rc = place_reference(e, pod, seq,
				 interpod_applies(e->ip, e->ledger, pod, args_of(e, pod)),
				 x, out);
	if (rc == 0)
		assign_devices(e, cluster_snapshot(e->cluster), pod, out);
	return rc;
}

/* --- the choice of path -------------------------------------------------- */

/* A pod of class k: from its index when the class is hot, else a scan.
 * `ip_index`: the index's leaves must hold the inter-pod filter (the pod
 * is under inter-pod rules that are node-local, and e->ip holds its
 * PreFilter from the class's view); an index built the other way, or
 * from a view since built again, is rebuilt first. */
/* Whether class k's index may answer for its pod now: 1 yes, 0 no (scan),
 * or -ENOMEM. The index pays one leaf update per node change since the
 * class's last pod; a scan visits about `want` nodes. So a class whose
 * pods come more often than every `want` changes is indexed (compiled on
 * its first such pod); a rarer one scans (its index, if any, catches up
 * or rebuilds when it is hot again). Either way the same node is chosen.
 * `ip_index`: the leaves must hold the inter-pod filter (see place_class);
 * an index built the other way, or from a view since built again, is
 * rebuilt first. */
static int index_ready(struct engine *e, const struct snapshot *s,
		       struct eclass *k, bool ip_index, uint32_t want)
{
	uint64_t head = ledger_changes_head(e->ledger);
	bool hot = k->last_use != LAST_USE_NEVER && head - k->last_use <= want;
	k->last_use = head;
	if (!hot && !k->want_index)
		return 0;
	if (!k->want_index) {
		k->want_index = true;
		pending_push(e, k);
	}
	uint64_t builds = ip_index ? interpod_view_builds(k->ipv) : 0;
	if (k->phase != PHASE_DONE) {
		/* Leaves that hold the inter-pod filter read e->ip, which holds
		 * this pod's PreFilter now only: built at once, as rare as
		 * pods under inter-pod rules are. Others are built a budget at
		 * a time (engine_work); until then the class scans. */
		if (!ip_index)
			return 0;
		int64_t all = INT64_MAX;
		int rc = class_work(e, s, k, &all);
		if (rc < 0)
			return rc;
		k->ix_builds = builds;
	}
	if (k->indexed && (k->ix_ip != ip_index || k->ix_builds != builds)) {
		k->ix_ip = ip_index;
		k->ix_builds = builds;
		index_rebuild(e, s, k);
	}
	return k->indexed ? 1 : 0;
}

/* A pod of class k: from its index when the class is hot, else a scan.
 * `ip_index`: the pod is under inter-pod rules that are node-local, and
 * e->ip holds its PreFilter from the class's view: the index's leaves
 * hold the inter-pod filter too. */
static int place_class(struct engine *e, const struct snapshot *s,
		       struct eclass *k, const struct pod_spec *pod, bool ip_index,
		       struct pass *p, struct placement *out)
{
	int ready = index_ready(e, s, k, ip_index, p->want);
	if (ready < 0)
		return ready;
	if (ready) {
		place_indexed(e, s, k, p, out);
		return 0;
	}
	if (ip_index)
		e->ip_on = true; /* the scan runs the inter-pod filter itself */
	return place_scan(e, s, k, pod, p, out);
}

/* The class key of a pod that no inter-pod rule applies to (the fast
 * path): its spec with its inter-pod group cleared. The fast path reads
 * nothing of the group (engine_place), so pods that differ only in it
 * place alike: a gang's pods carry their PodGroup's label
 * (scheduling.x-k8s.io/pod-group), which makes a group per gang, and were
 * a class per gang, each compiled and indexed for its few pods (issue
 * 39). Returns `pod` when its group is 0 already, else e->key_spec. */
static const struct pod_spec *fast_key(struct engine *e, const struct pod_spec *pod)
{
	if (pod->group == 0 && !pod->group_terms)
		return pod;
	memcpy(&e->key_spec, pod, sizeof(*pod)); /* every byte: keys compare by memcmp */
	e->key_spec.group = 0;
	e->key_spec.group_terms = false;
	return &e->key_spec;
}

static int place_fast(struct engine *e, const struct snapshot *s,
		      const struct pod_spec *pod, uint64_t seq, struct placement *out)
{
	bool first_sight = false;
	uint32_t want = engine_nodes_to_find(sched_profile_percentage(&e->cfg, pod->profile),
					     s->n_nodes);
	/* GC2: the run's last pod again; else a memo hit, which needs no
	 * key copy (fast_key); else the pod's class as the memo holds it. */
	struct eclass *k = NULL;
	if (pod == e->run_pod && e->run_epoch == e->class_epoch &&
	    e->run_k->phase != PHASE_STATIC) {
		e->stats.class_hits++;
		k = e->run_k;
	}
	if (k == NULL)
		k = class_memo_ungrouped(e, pod);
	if (k == NULL)
		k = class_get(e, s, fast_key(e, pod), pod, want ? want : 1, &first_sight);
	if (e->in_run && k != NULL && !first_sight) {
		e->run_pod = pod;
		e->run_k = k;
		e->run_epoch = e->class_epoch;
	}
	if (first_sight) {
		e->stats.first_sights++;
		struct eclass *base = sibling_of(e, pod);
		if (base == NULL)
			return place_reference(e, pod, seq, false, NULL, out);
		e->stats.static_reuses++;
		struct pass p;
		begin(e, s, pod, seq, &p, out);
		return place_scan(e, s, base, pod, &p, out);
	}
	if (k == NULL)
		return -ENOMEM;
	struct pass p;
	begin(e, s, pod, seq, &p, out);
	return place_class(e, s, k, pod, false, &p, out);
}

/* A pod under inter-pod rules: the literal path on a spec's first sight;
 * after that its class's static results and its view of the inter-pod
 * counts, scanned as the reference scans (the class index holds no
 * inter-pod state); or, when the rules can change nothing for it
 * (interpod_uniform), as a pod under no rule, index included. */
static int place_interpod(struct engine *e, const struct snapshot *s,
			  const struct pod_spec *pod, uint64_t seq,
			  struct placement *out)
{
	bool first_sight;
	/* Not lazy: a first sight here pays the literal path. */
	struct eclass *k = class_get(e, s, pod, pod, 0, &first_sight);
	if (first_sight)
		return place_reference(e, pod, seq, true, NULL, out);
	if (k == NULL)
		return -ENOMEM;
	if (k->ipv == NULL && (k->ipv = interpod_view_create()) == NULL)
		return -ENOMEM;
	struct pass p;
	begin(e, s, pod, seq, &p, out);
	e->stats.interpod_pods++;
	e->stats.interpod_viewed++;
	size_t before = interpod_view_bytes(k->ipv);
	if (interpod_prefilter_view(e->ip, k->ipv, s, e->ledger, &e->ctx, pod,
				    args_of(e, pod)) < 0)
		return -ENOMEM;
	size_t after = interpod_view_bytes(k->ipv);
	k->bytes += after - before;
	e->class_bytes += after - before;
	if (k->ip_keys == 0) { /* once per class: a snapshot flushes classes */
		k->ip_keys = 1;
		for (uint32_t j = 0; j < k->n_feasible && k->ip_keys == 1; j++)
			if (!interpod_hard_keys(e->ip, k->feasible[j]))
				k->ip_keys = 2;
	}
	if (k->ip_keys == 1 && interpod_uniform(e->ip, args_of(e, pod))) {
		e->stats.interpod_uniform++;
		return place_class(e, s, k, pod, false, &p, out);
	}
	if (k->ip_keys == 1 && interpod_node_local(e->ip, s, args_of(e, pod))) {
		e->stats.interpod_node_local++;
		return place_class(e, s, k, pod, true, &p, out);
	}
	/* A scan with the inter-pod filter and scores: over the class index's
	 * leaves when the class is hot, else node by node. */
	e->ip_on = true;
	int ready = index_ready(e, s, k, false, p.want);
	if (ready < 0)
		return ready;
	if (ready) {
		index_sync(e, s, k);
		return place_scan_leaves(e, s, k, pod, &p, out);
	}
	return place_scan(e, s, k, pod, &p, out);
}

/* The chosen node's allocatables and its row of eval results, which the
 * next pod's pass of the warm evals reads once the commit has logged the
 * change (its record the commit itself reads and writes): asked for now,
 * so that the miss overlaps the commit and the next pod's start. Always
 * inlined, as replay_prefetch(). */
static inline __attribute__((always_inline)) void
prefetch_chosen(const struct engine *e, const struct snapshot *s, uint32_t slot)
{
	if (slot >= s->n_slots)
		return;
	prefetch_allocatable(s, slot);
	prefetch_eval_row(e, slot);
}

int engine_place(struct engine *e, const struct pod_spec *pod, uint64_t seq,
		 struct placement *out)
{
	const struct snapshot *s = cluster_snapshot(e->cluster);
	if (sync_generation(e, s) < 0)
		return -ENOMEM;
	/* A pod under inter-pod rules scans its class with the class's view
	 * of the inter-pod counts (place_interpod); any other takes the fast
	 * path, where no inter-pod rule is scored. */
	if (!profile_ok(e, pod))
		return -EINVAL;
	bool ip_on = interpod_applies(e->ip, e->ledger, pod, args_of(e, pod));
	e->ip_on = false;
	e->diag_conflict = affinity_terms_conflict(pod);
	int rc = ip_on ? place_interpod(e, s, pod, seq, out)
		       : place_fast(e, s, pod, seq, out);
	if (rc == 0)
		assign_devices(e, s, pod, out);
	if (rc == 0 && out->slot >= 0)
		prefetch_chosen(e, s, (uint32_t)out->slot);
	/* Then a bounded share of the compiles waiting (the pod's answer is
	 * made; this only delays its delivery, by a bounded amount). */
	if (rc == 0 && e->pending != NULL && e->pods_pay)
		rc = engine_work(e, s, (int64_t)e->pod_budget);
	return rc;
}

bool engine_idle(struct engine *e)
{
	sweep_prepared(e);
	const struct snapshot *s = cluster_snapshot(e->cluster);
	if (e->pending == NULL && e->rows.n_slots == s->n_slots)
		return false;
	if (sync_generation(e, s) < 0)
		return false;
	/* The scans' rows first: a fresh worker's first scan copied them
	 * all on a pod's path (node_rows_warm). */
	struct node_allocatable alloc = allocatable_of(s);
	if (!node_rows_warm(&e->rows, e->ledger, &alloc, s->n_slots, ENGINE_IDLE_ROWS))
		return true;
	if (e->pending == NULL)
		return false;
	if (engine_work(e, s, ENGINE_IDLE_BUDGET) < 0)
		return false;
	return e->pending != NULL;
}

void engine_set_busy(struct engine *e, bool busy)
{
	e->pods_pay = busy;
}

void engine_run_begin(struct engine *e)
{
	e->in_run = true;
	e->run_pod = NULL;
}

void engine_run_end(struct engine *e)
{
	e->in_run = false;
	e->run_pod = NULL;
}

void engine_set_clock(struct engine *e, uint64_t (*clock_ns)(void))
{
	e->clock_ns = clock_ns != NULL ? clock_ns : now_ns;
}

void engine_set_compile_budget(struct engine *e, uint64_t per_pod)
{
	e->pod_budget = per_pod > INT64_MAX ? INT64_MAX : per_pod;
}

int engine_prepare(struct engine *e, const struct pod_spec *pod,
		   const struct class_static *cs)
{
	if (!profile_ok(e, pod))
		return -EINVAL;
	const struct snapshot *s = cluster_snapshot(e->cluster);
	if (sync_generation(e, s) < 0)
		return -ENOMEM;
	/* The class its pods will look for: the fast path's key when no
	 * inter-pod rule applies to them now (place_fast). */
	if (!interpod_applies(e->ip, e->ledger, pod, args_of(e, pod)))
		pod = fast_key(e, pod);
	return class_prepare(e, s, pod, cs);
}

int engine_assign_devices(struct engine *e, const struct pod_spec *pod,
			  uint32_t slot, struct placement *out)
{
	const struct snapshot *s = cluster_snapshot(e->cluster);
	if (slot >= s->n_slots || !s->present[slot])
		return -EINVAL;
	if (sync_generation(e, s) < 0)
		return -ENOMEM;
	out->slot = slot;
	memset(&out->devices, 0, sizeof(out->devices));
	assign_devices(e, s, pod, out);
	return 0;
}

bool engine_interpod_applies(struct engine *e, const struct pod_spec *pod)
{
	return profile_ok(e, pod) &&
	       interpod_applies(e->ip, e->ledger, pod, args_of(e, pod));
}

int engine_interpod_allows(struct engine *e, const struct pod_spec *pod,
			   uint32_t slot)
{
	const struct snapshot *s = cluster_snapshot(e->cluster);
	if (slot >= s->n_slots || !s->present[slot] || !profile_ok(e, pod))
		return 0;
	if (interpod_prefilter(e->ip, s, e->ledger, &e->ctx, pod, args_of(e, pod)) < 0)
		return -ENOMEM;
	return interpod_filter(e->ip, s, slot) == 0;
}

/* --- after a placement ---------------------------------------------------- */

int engine_message(const struct engine *e, char *buf, size_t len)
{
	if (e->diag_no_nodes)
		return snprintf(buf, len, "no nodes available to schedule pods");
	/* A PreFilter rejection: FitError.Error() writes its message alone
	 * ("0/N nodes are available: <PreFilterMsg>."), not the nodes'
	 * reasons. The nodes' counts stay in e->diag for engine_failure()'s
	 * hints (NodeAffinity, as kube records the plugin). */
	if (e->diag_conflict)
		return snprintf(buf, len, "0/%u nodes are available: "
				AFFINITY_CONFLICT_MSG ".", (unsigned)e->diag_all_nodes);
	return diagnosis_format(&e->diag, &e->ctx, e->diag_all_nodes, buf, len);
}

void engine_failure(const struct engine *e, uint32_t *codes, uint32_t *res)
{
	/* The queue's hints (workers/queue.h) read what the message says,
	 * as bits: every code some node gave, every resource short. */
	uint32_t c = 0, r = 0;
	for (unsigned k = 1; k < REASON_INSUFFICIENT; k++)
		if (e->diag.by_code[k] != 0)
			c |= 1u << k;
	if (e->diag.n_taints != 0 || e->diag.taints_other != 0)
		c |= 1u << REASON_TAINT;
	for (unsigned k = 0; k < RES_MAX; k++)
		if (e->diag.insufficient[k] != 0)
			r |= 1u << k;
	if (r != 0)
		c |= 1u << REASON_INSUFFICIENT;
	*codes = e->diag_no_nodes ? 0 : c;
	*res = e->diag_no_nodes ? 0 : r;
}

struct cluster *engine_cluster(const struct engine *e)
{
	return e->cluster;
}

const struct plugin_ctx *engine_plugin_ctx(const struct engine *e)
{
	return &e->ctx;
}

void engine_get_stats(const struct engine *e, struct engine_stats *out)
{
	*out = e->stats;
}
