/* One node judged for one pod (see engine_types_internal.h for the
 * files): the static filters and scores of a class's compile
 * (static_slot), a leaf's plan (what leaf_eval() reads of a pod, fixed
 * once per class or shared evaluation) and the general rules of
 * leaf_eval(), whose fast rules are inline in engine_leaf_internal.h
 * (leaf_fast(), workers/leaf_fast_internal.h). A leaf gives the same
 * answer as filter_node() and score_dynamic() on the same counters.
 * Calls run down: called by engine_scan.c, engine_sync.c,
 * engine_classes.c and engine_evals.c; calls engine_score.c alone. */
#include "workers/engine_leaf_internal.h"
#include "workers/engine_score_internal.h"

/* A node's static filters for the class, in filter_node()'s order; false
 * with the reason when one fails. A shard with no cordoned node or no hard
 * taint passes those two unasked. */
bool static_feasible(const struct plugin_ctx *ctx, const struct score_config *sc,
		     const struct snapshot *s, const struct pod_spec *pod,
		     uint32_t i, struct reason *why)
{
	const struct node_spec *node = &s->nodes[i];
	const struct shard_summary *sh = &s->shards[i / SNAP_SHARD_SLOTS];
	if (sh->any_unschedulable && !filter_unschedulable(ctx, pod, node)) {
		*why = (struct reason){.code = REASON_UNSCHEDULABLE};
		return false;
	}
	if (!filter_node_name(pod, node)) {
		*why = (struct reason){.code = REASON_NODE_NAME};
		return false;
	}
	int t = sh->any_hard_taint ? filter_taints(pod, node) : -1;
	if (t >= 0) {
		*why = (struct reason){.code = REASON_TAINT,
				       .key = node->taints[t].key,
				       .value = node->taints[t].value};
		return false;
	}
	if (!filter_added_affinity(ctx, sc, node)) {
		*why = (struct reason){.code = REASON_ENFORCED_AFFINITY};
		return false;
	}
	if (!filter_affinity(ctx, pod, node)) {
		*why = (struct reason){.code = REASON_AFFINITY};
		return false;
	}
	if (pod->num_gpu > 0 && !filter_device_model(pod, node)) {
		*why = (struct reason){.code = REASON_GPU_MODEL};
		return false;
	}
	return true;
}

/* Slot i's static results for `pod`: appended to feasible[] (with its
 * static raw scores, where those arrays are given) or counted in `diag`. */
void static_slot(const struct plugin_ctx *ctx, const struct score_config *sc,
		 const struct snapshot *s, const struct pod_spec *pod, uint32_t i,
		 uint32_t *feasible, uint32_t *n_feasible, int32_t *affinity_raw,
		 int32_t *taint_raw, struct diagnosis *diag, struct reason *whys)
{
	if (!s->present[i])
		return;
	struct reason why;
	if (!static_feasible(ctx, sc, s, pod, i, &why)) {
		diagnosis_add(diag, &why);
		whys[i] = why;
		return;
	}
	feasible[(*n_feasible)++] = i;
	struct candidate cd;
	score_static(ctx, sc, affinity_raw != NULL, pod, &s->nodes[i], &cd);
	if (affinity_raw != NULL)
		affinity_raw[i] = (int32_t)cd.raw[SCORE_AFFINITY];
	if (taint_raw != NULL)
		taint_raw[i] = (int32_t)cd.raw[SCORE_TAINT];
}

/* Whether entry e of a score plan is resource r read from `used`. */
static bool plan_is(const struct score_plan_res *pe, unsigned r, uint8_t used)
{
	return pe->res == r && pe->used == used;
}

static void leaf_fast_init(const struct score_config *sc, struct leaf_plan *lp,
			   const struct pod_spec *pod)
{
	const struct score_plan *sp = &lp->score;
	lp->fast = false;
	if (pod->n_ports > 0 || lp->devices ||
	    sc->fit_strategy == FIT_REQUESTED_TO_CAPACITY_RATIO)
		return;
	for (unsigned i = 0; i < lp->n_requested; i++)
		if (lp->requested[i] != RES_CPU && lp->requested[i] != RES_MEMORY)
			return;
	lp->f.w_fit = sc->weight_fit;
	lp->f.w_balanced = lp->skip_balanced ? 0 : sc->weight_balanced;
	if (lp->f.w_fit != 0) {
		/* The order of the two does not matter: a weighted sum. */
		unsigned c = 0, m = 1;
		if (sp->n_fit != 2)
			return;
		if (!plan_is(&sp->fit[c], RES_CPU, SCORE_USED_NONZERO_CPU)) {
			c = 1;
			m = 0;
		}
		if (!plan_is(&sp->fit[c], RES_CPU, SCORE_USED_NONZERO_CPU) ||
		    !plan_is(&sp->fit[m], RES_MEMORY, SCORE_USED_NONZERO_MEM))
			return;
		lp->f.w_cpu = sp->fit[c].weight;
		lp->f.w_mem = sp->fit[m].weight;
		lp->f.w_sum = lp->f.w_cpu + lp->f.w_mem;
	}
	/* Nor here: |f0 - f1| / 2 is the same either way round. */
	if (lp->f.w_balanced != 0 &&
	    (sp->n_balanced != 2 ||
	     !((plan_is(&sp->balanced[0], RES_CPU, SCORE_USED_ACTUAL) &&
		plan_is(&sp->balanced[1], RES_MEMORY, SCORE_USED_ACTUAL)) ||
	       (plan_is(&sp->balanced[1], RES_CPU, SCORE_USED_ACTUAL) &&
		plan_is(&sp->balanced[0], RES_MEMORY, SCORE_USED_ACTUAL)))))
		return;
	lp->f.most = sc->fit_strategy == FIT_MOST_ALLOCATED;
	lp->f.check_cpu = pod->request.v[RES_CPU] > 0;
	lp->f.check_mem = pod->request.v[RES_MEMORY] > 0;
	lp->f.req_cpu = pod->request.v[RES_CPU];
	lp->f.req_mem = pod->request.v[RES_MEMORY];
	lp->f.nz_cpu = pod->nonzero_cpu_milli;
	lp->f.nz_mem = pod->nonzero_mem_bytes;
	lp->fast = true;
}

void leaf_plan_init(const struct engine *e, struct leaf_plan *lp,
		    const struct pod_spec *pod)
{
	const struct score_config *sc = sc_of(e, pod);
	memset(lp, 0, sizeof(*lp));
	lp->pod = pod;
	lp->n_requested = requested_of(pod, lp->requested);
	lp->skip_balanced = score_balanced_skips(sc, pod);
	score_plan_init(&lp->score, sc, pod);
	lp->devices = devices_wanted(pod) || sc->weight_gpu_best_fit ||
		      sc->weight_gpu_frag;
	bool load[RES_MAX] = {[RES_PODS] = true, [RES_CPU] = lp->devices};
	for (unsigned i = 0; i < lp->n_requested; i++)
		load[lp->requested[i]] = true;
	for (unsigned i = 0; i < sc->n_fit_resources && i < RES_MAX; i++)
		if (sc->fit_resources[i].resource < RES_MAX)
			load[sc->fit_resources[i].resource] = true;
	for (unsigned i = 0; i < sc->n_balanced_resources && i < RES_MAX; i++)
		if (sc->balanced_resources[i].resource < RES_MAX)
			load[sc->balanced_resources[i].resource] = true;
	for (int r = 0; r < RES_MAX; r++)
		if (load[r])
			lp->load[lp->n_load++] = (uint8_t)r;
	leaf_fast_init(sc, lp, pod);
}

uint32_t leaf_general(struct engine *e, const struct snapshot *s,
		      const struct leaf_plan *k, bool ix_ip, uint32_t slot,
		      const struct node_alloc *a, int64_t *d)
{
	const struct pod_spec *pod = k->pod;
	struct res_vec used;
	struct host_port ports[NODE_MAX_HOST_PORTS];
	struct node_view v = {.spec = &s->nodes[slot], .used = &used};
	memset(&used, 0, sizeof(used));
	/* Relaxed loads, as ledger_load_used(): a view, the commit decides;
	 * the change log re-reads a node whose counters move after this. */
	for (unsigned i = 0; i < k->n_load; i++)
		used.v[k->load[i]] = __atomic_load_n(&a->used[k->load[i]],
						     __ATOMIC_RELAXED);
	if (pod->n_ports > 0) {
		v.n_ports = ledger_copy_ports(ledger_node(e->ledger, slot), ports);
		v.ports = ports;
		if (!filter_ports(&e->ctx, pod, &v))
			return MASK_PORTS;
	}
	uint32_t m = 0;
	if (used.v[RES_PODS] + 1 > s->allocatable[RES_PODS][slot])
		m |= MASK_PODS;
	for (unsigned i = 0; i < k->n_requested; i++) {
		unsigned r = k->requested[i];
		if (pod->request.v[r] > s->allocatable[r][slot] - used.v[r])
			m |= MASK_RES(r);
	}
	if (m != 0)
		return m;
	struct device_view dev;
	if (k->devices) {
		ledger_load_devices(a, &s->nodes[slot].devices, &dev);
		v.dev = &dev;
		switch (devices_wanted(pod) ? devices_fit(&v.spec->devices, &dev, pod)
					    : DEVICE_FITS) {
		case DEVICE_FITS:
			break;
		case DEVICE_MISFIT_CORES:
			return MASK_CORES;
		default: /* the model is a static filter: GPU */
			return MASK_GPU;
		}
	}
	/* The inter-pod filter runs last, as in place_reference(); here only
	 * when it depends on this node's pods alone (interpod_node_local). */
	if (ix_ip) {
		uint8_t code = interpod_filter(e->ip, s, slot);
		if (code == REASON_POD_ANTI_AFFINITY)
			return MASK_ANTI;
		if (code != 0)
			return MASK_EXISTING_ANTI;
	}
	v.used_nonzero_cpu_milli = __atomic_load_n(&a->used_nonzero_cpu_milli,
						   __ATOMIC_RELAXED);
	v.used_nonzero_mem_bytes = __atomic_load_n(&a->used_nonzero_mem_bytes,
						   __ATOMIC_RELAXED);
	struct candidate cd;
	const struct score_config *sc = sc_of(e, pod);
	score_dynamic(e, sc, &k->score, pod, &v, k->skip_balanced, &cd);
	*d = cd.dyn;
	return 0;
}

/* A node's reasons m (of a leaf of plan lp) counted in c, or taken back
 * (sign -1). */
void reasons_add(struct reason_counts *c, const struct leaf_plan *lp,
		 uint32_t m, int sign)
{
	c->pods += (uint32_t)sign * ((m & MASK_PODS) != 0);
	c->ports += (uint32_t)sign * ((m & MASK_PORTS) != 0);
	c->gpu += (uint32_t)sign * ((m & MASK_GPU) != 0);
	c->cores += (uint32_t)sign * ((m & MASK_CORES) != 0);
	c->anti += (uint32_t)sign * ((m & MASK_ANTI) != 0);
	c->existing_anti += (uint32_t)sign * ((m & MASK_EXISTING_ANTI) != 0);
	for (unsigned i = 0; i < lp->n_requested; i++) {
		unsigned r = lp->requested[i];
		c->insufficient[r] += (uint32_t)sign * ((m & MASK_RES(r)) != 0);
	}
}
