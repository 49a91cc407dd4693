/* The engine's scoring and selection, shared by both paths (see
 * engine_types_internal.h for the files): a node read as the plugins see it
 * (read_node: the reference's visit, a scan's diagnosis, a placed pod's
 * devices); a candidate's dynamic raw scores (NodeResourcesFit,
 * BalancedAllocation, the GPU scores, GpuFragmentation through the
 * per-slot fragmentation memo) and static ones (NodeAffinity,
 * TaintToleration); the normalising, the totals and the one random draw
 * among the ties (select_best, and select_plain's ways for a class's
 * plain candidates); the inter-pod scores of a candidate list; and a
 * placed pod's devices. Each way of selecting gives the general way's
 * answer: the property test (tests/workers/test_engine.c) compares them
 * with the reference pod by pod. Calls run down, and this file is the
 * floor: it calls no other engine file. */
#include "workers/engine_score_internal.h"

/* A node as the plugins see it (struct node_read), read for one pod.
 * `devices`: the plugins will read the node's devices (the pod wants
 * some, or a device score is on); else r->v.dev is NULL. */
void read_node(struct ledger *l, const struct snapshot *s, uint32_t slot,
	       const struct pod_spec *pod, bool devices, struct node_read *r)
{
	struct node_alloc *a = ledger_node(l, slot);
	r->v = (struct node_view){.spec = &s->nodes[slot], .used = &r->used};
	ledger_load_used(a, &r->used, &r->v.used_nonzero_cpu_milli,
			  &r->v.used_nonzero_mem_bytes);
	/* Only NodePorts reads the ports, and only for a pod that has some. */
	if (pod->n_ports > 0) {
		r->v.n_ports = ledger_copy_ports(a, r->ports);
		r->v.ports = r->ports;
	}
	if (devices) {
		ledger_load_devices(a, &s->nodes[slot].devices, &r->dev);
		r->v.dev = &r->dev;
	}
}

/* The fragmentation of a node as it is now, from the per-slot cache when
 * its state has not changed since. */
static int64_t frag_before(struct engine *e, const struct node_view *v,
			   int64_t cpu_left)
{
	const struct snapshot *s = cluster_snapshot(e->cluster);
	struct frag_before *b = &e->before[v->spec - s->nodes];
	const struct node_devices *d = &v->spec->devices;
	if (b->epoch == e->mix.epoch + 1 && b->cpu_left == cpu_left &&
	    memcmp(b->gpu_free, v->dev->gpu_free, d->n_gpus * sizeof(uint16_t)) == 0)
		return b->value;
	b->epoch = e->mix.epoch + 1;
	b->cpu_left = cpu_left;
	memcpy(b->gpu_free, v->dev->gpu_free, sizeof(b->gpu_free));
	b->value = frag_amount(&e->mix, d, cpu_left, v->dev->gpu_free);
	if (++b->stamp == 0)
		b->stamp = 1; /* 0 marks an empty memo entry */
	return b->value;
}

/* frag_growth of `pod` on the node as it is now, through growth_memo. */
static int64_t frag_growth_memo(struct engine *e, const struct node_view *v,
				int64_t cpu_left, const struct pod_spec *pod, int *gpu)
{
	const struct snapshot *s = cluster_snapshot(e->cluster);
	uint32_t slot = (uint32_t)(v->spec - s->nodes);
	int64_t before = frag_before(e, v, cpu_left);
	uint32_t stamp = e->before[slot].stamp;
	int64_t cpu = pod->request.v[RES_CPU];
	uint64_t h = ((uint64_t)slot * UINT64_C(0x9e3779b97f4a7c15)) ^
		     ((uint64_t)cpu * UINT64_C(0xc2b2ae3d27d4eb4f)) ^
		     ((uint64_t)pod->gpu_milli << 8 | pod->num_gpu);
	h *= UINT64_C(0xd6e8feb86659fd93);
	struct growth_memo *g = &e->memo[(h >> 40) & (GROWTH_MEMO_SLOTS - 1)];
	if (g->stamp == stamp && g->slot == slot && g->cpu == cpu &&
	    g->milli == pod->gpu_milli && g->num_gpu == pod->num_gpu) {
		*gpu = g->gpu;
		return g->growth;
	}
	int64_t growth = frag_growth(&e->mix, &v->spec->devices, cpu_left, v->dev,
				     before, pod, gpu);
	*g = (struct growth_memo){.slot = slot, .stamp = stamp, .cpu = cpu,
				  .milli = pod->gpu_milli, .num_gpu = pod->num_gpu,
				  .gpu = (int8_t)*gpu, .growth = growth};
	return growth;
}

/* The weighted dynamic part of a total, in SCORE_FINE units. */
static int64_t dynamic_total(const struct score_config *sc, const int64_t *raw)
{
	return SCORE_FINE * (sc->weight_fit * raw[SCORE_FIT] +
			     sc->weight_balanced * raw[SCORE_BALANCED]) +
	       sc->weight_gpu_best_fit * raw[SCORE_GPU_BEST_FIT] +
	       sc->weight_gpu_frag * raw[SCORE_GPU_FRAG];
}

/* Raw scores of one candidate; static ones may come from a class. `sc` is
 * the pod's profile's (sc_of), looked up once by the caller. */
void score_dynamic(struct engine *e, const struct score_config *sc,
		   const struct score_plan *sp, const struct pod_spec *pod,
		   const struct node_view *v, bool skip_balanced,
		   struct candidate *cd)
{
	cd->raw[SCORE_FIT] = sc->weight_fit ? score_plan_fit(sp, v) : 0;
	cd->raw[SCORE_BALANCED] =
		sc->weight_balanced && !skip_balanced ? score_plan_balanced(sp, v) : 0;
	cd->raw[SCORE_GPU_BEST_FIT] = sc->weight_gpu_best_fit
		? score_gpu_best_fit(pod, v, e->cpu_max, e->gpu_max) : 0;
	cd->raw[SCORE_GPU_FRAG] = 0;
	/* Inter-pod scores: set after PreScore (place_reference) when the
	 * rules apply to the pod; 0 and not normalised otherwise. */
	cd->raw[SCORE_SPREAD] = 0;
	cd->raw[SCORE_INTER_POD] = 0;
	if (sc->weight_gpu_frag) {
		int gpu;
		int64_t cpu_left = v->spec->allocatable.v[RES_CPU] - v->used->v[RES_CPU];
		int64_t growth = frag_growth_memo(e, v, cpu_left, pod, &gpu);
		growth += frag_reservation(&e->models, &e->mix,
					   v->spec->devices.gpu_model, pod,
					   sc->gpu_frag_model_reservation);
		cd->raw[SCORE_GPU_FRAG] = score_gpu_frag_of_growth(growth, e->mix.total);
	}
	cd->dyn = dynamic_total(sc, cd->raw);
}

/* `affinity`: wants_affinity_score(), asked once by the caller. */
void score_static(const struct plugin_ctx *ctx, const struct score_config *sc,
		  bool affinity, const struct pod_spec *pod,
		  const struct node_spec *node, struct candidate *cd)
{
	cd->raw[SCORE_AFFINITY] = 0;
	if (affinity) {
		/* nodeaffinity Score: the profile's added terms, then the pod's. */
		if (sc->has_added_affinity)
			cd->raw[SCORE_AFFINITY] =
				score_affinity_raw(ctx, &sc->added_affinity, node);
		cd->raw[SCORE_AFFINITY] += score_affinity_raw(ctx, pod, node);
	}
	cd->raw[SCORE_TAINT] = sc->weight_taint ? score_taint_raw(pod, node) : 0;
}

/* One uniform draw among the `ties` candidates whose total is `best`, the
 * k-th in visiting order: the distribution of selectHost's reservoir
 * sampling, with one random number, so the indexed path can draw the same
 * one. */
static inline void pick_tie(const struct engine *e, const int64_t *total, uint32_t n,
			    int64_t best, uint64_t ties, uint64_t *rng,
			    struct placement *out)
{
	uint64_t k = ties > 1 ? rng_below(rng, ties) : 0;
	uint32_t chosen = candidates_kth(total, n, best, k);
	out->slot = e->slots[chosen < n ? chosen : 0];
	out->score = best;
	out->feasible = n;
}

/* Normalises the static scores over the candidates, totals them with the
 * profile weights, and picks the best, ties at random. */
void select_best(struct engine *e, const struct pod_spec *pod, uint32_t n,
		 uint64_t *rng, const struct engine_explain *x,
		 struct placement *out)
{
	const struct score_config *sc = sc_of(e, pod);
	bool p_affinity = wants_affinity_score(e, pod);
	const struct interpod_args *args = args_of(e, pod);
	int64_t *norm_aff = e->tmp;
	/* Normalise in place in the candidates, one plugin at a time. */
	if (p_affinity) {
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
	if (e->ip_on && args->score_spread) {
		for (uint32_t i = 0; i < n; i++)
			norm_aff[i] = e->cand[i].raw[SCORE_SPREAD];
		interpod_normalize_spread(e->ip, e->slots, norm_aff, n);
		for (uint32_t i = 0; i < n; i++)
			e->cand[i].raw[SCORE_SPREAD] = norm_aff[i];
	}
	if (e->ip_on && args->score_interpod) {
		for (uint32_t i = 0; i < n; i++)
			norm_aff[i] = e->cand[i].raw[SCORE_INTER_POD];
		interpod_normalize_affinity(e->ip, norm_aff, n);
		for (uint32_t i = 0; i < n; i++)
			e->cand[i].raw[SCORE_INTER_POD] = norm_aff[i];
	}
	int64_t best = INT64_MIN;
	uint64_t ties = 0;
	int64_t *total = e->tmp;
	for (uint32_t i = 0; i < n; i++) {
		const struct candidate *cd = &e->cand[i];
		total[i] = SCORE_FINE * (sc->weight_taint * cd->raw[SCORE_TAINT] +
					 sc->weight_affinity * cd->raw[SCORE_AFFINITY] +
					 sc->weight_spread * cd->raw[SCORE_SPREAD] +
					 sc->weight_inter_pod * cd->raw[SCORE_INTER_POD]) +
			   cd->dyn;
		if (x != NULL && x->scored != NULL)
			x->scored(x->arg, cd->slot, cd->raw, total[i]);
		if (total[i] > best) {
			best = total[i];
			ties = 1;
		} else if (total[i] == best) {
			ties++;
		}
	}
	pick_tie(e, total, n, best, ties, rng, out);
}

/* select_plain() where every raw static score is 0: each candidate's
 * static total is the same (taint normalises to the maximum, affinity to
 * 0), so the best and its ties are those of the dynamic scores
 * (candidates_best()); the arrays of raw scores, read by slot, are not
 * touched (at 100,000 nodes they missed the cache: a quarter of a
 * classless pod's time). */
static void select_flat(struct engine *e, const struct score_config *sc, bool taint,
			uint32_t n, uint64_t *rng, struct placement *out)
{
	int64_t best;
	uint64_t ties;
	candidates_best(e->tmp, n, &best, &ties);
	pick_tie(e, e->tmp, n, best, ties, rng, out);
	out->score = best + (taint ? SCORE_FINE * sc->weight_taint * taint_normalized(0, 0) : 0);
}

/* select_plain() for a class with taint raw scores and no affinity ones
 * (most classes: PreferNoSchedule taints on a few nodes, no preferred
 * affinity): one pass keeps, by raw count (at most a node's taints), the
 * best dynamic score and its ties (candidates_by_taint()); the best total
 * and its ties follow from those 17 pairs, and the draw's pass stops at
 * the chosen tie. The general way read the raw array twice and totalled
 * every candidate. Returns false, having drawn nothing, on a raw count
 * outside [0, NODE_MAX_TAINTS]. */
static bool select_by_taint(struct engine *e, const struct score_config *sc,
			    const int32_t *tr, uint32_t n, uint64_t *rng,
			    struct placement *out)
{
	struct by_taint b;
	if (!candidates_by_taint(e->tmp, e->slots, tr, n, &b))
		return false;
	/* TaintToleration's normalised score by raw count, weighted. */
	int64_t add[NODE_MAX_TAINTS + 1];
	int64_t best = INT64_MIN;
	uint64_t ties = 0;
	for (int32_t t = 0; t <= b.max_t; t++) {
		add[t] = SCORE_FINE * sc->weight_taint * taint_normalized(t, b.max_t);
		if (b.ties_at[t] == 0)
			continue;
		int64_t total = b.best_at[t] + add[t];
		if (total > best) {
			best = total;
			ties = b.ties_at[t];
		} else if (total == best) {
			ties += b.ties_at[t];
		}
	}
	/* pick_tie()'s draw, the totals made as the pass goes. */
	uint64_t k = ties > 1 ? rng_below(rng, ties) : 0;
	uint32_t chosen = candidates_kth_by_taint(e->tmp, e->slots, tr, n, add, best, k);
	out->slot = e->slots[chosen < n ? chosen : 0];
	out->score = best;
	out->feasible = n;
	return true;
}

/* select_best() when the inter-pod scores are off and nobody explains,
 * over plain candidates of class k (plain_candidate: the slot in
 * e->slots[i], the dynamic score in e->tmp[i]): the same normalising of
 * k's static raw scores (score_normalize: maxima from 0, TaintToleration
 * reversed), the same totals and draw (the general way totals in place
 * in e->tmp; select_flat() and select_by_taint() leave it as it was). */
void select_plain(struct engine *e, const struct eclass *k,
		  const struct pod_spec *pod, uint32_t n, uint64_t *rng,
		  struct placement *out)
{
	const struct score_config *sc = sc_of(e, pod);
	bool aff = wants_affinity_score(e, pod), taint = sc->weight_taint != 0;
	if (k->raw_set == 0) {
		select_flat(e, sc, taint, n, rng, out);
		return;
	}
	const int32_t *ar = k->affinity_raw, *tr = k->taint_raw;
	if (ar == NULL && tr != NULL && taint && select_by_taint(e, sc, tr, n, rng, out))
		return;
	const struct raw_scores r = {ar, tr, aff, taint, sc->weight_affinity, sc->weight_taint};
	int64_t best;
	uint64_t ties;
	candidates_totals(e->tmp, e->slots, n, &r, &best, &ties);
	pick_tie(e, e->tmp, n, best, ties, rng, out);
}

void engine_learn_shapes(struct engine *e, const struct pod_spec *pods, size_t n)
{
	for (size_t i = 0; i < n; i++)
		frag_counter_add(e->frag_count, &pods[i]);
	/* The replay's one profile: the mix is the engine's, not a profile's. */
	const struct score_config *sc = &e->cfg.profiles[0].score;
	frag_mix_build(&e->mix, e->frag_count, (unsigned)sc->gpu_frag_max_shapes,
		       sc->gpu_frag_cpu_limited);
}

/* The exact devices for a placed pod that wants any: the sharing pod's
 * device is the one GpuFragmentation's score assumed when that score is
 * on, else the best fit; whole devices and cores as devices_assign(). */
void assign_devices(struct engine *e, const struct snapshot *s,
		    const struct pod_spec *pod, struct placement *out)
{
	if (out->slot < 0 || !devices_wanted(pod))
		return;
	uint32_t slot = (uint32_t)out->slot;
	struct node_read nd;
	read_node(e->ledger, s, slot, pod, reads_devices(e, pod), &nd);
	int gpu = -1;
	if (sc_of(e, pod)->weight_gpu_frag && pod->num_gpu == 1 &&
	    pod->gpu_milli < GPU_MILLI_PER_DEVICE) {
		int64_t cpu_left = nd.v.spec->allocatable.v[RES_CPU] - nd.used.v[RES_CPU];
		frag_growth_memo(e, &nd.v, cpu_left, pod, &gpu);
	}
	/* The node passed the device filter against the same counters a
	 * moment ago; if another engine took them since, the assignment is
	 * empty-handed and the commit refuses it (-EAGAIN). */
	if (devices_assign(&nd.v.spec->devices, &nd.dev, pod, gpu, &out->devices) !=
	    DEVICE_FITS)
		out->devices = (struct device_assignment){.gpu_milli = DEVICES_STALE};
}

/* InterPodAffinity's and PodTopologySpread's PreScore and raw scores for
 * the n candidates (their slots in e->slots, in visiting order). */
int interpod_scores(struct engine *e, const struct snapshot *s,
		    const struct pod_spec *pod, uint32_t n)
{
	const struct interpod_args *args = args_of(e, pod);
	if (interpod_prescore(e->ip, s, e->ledger, &e->ctx, pod, args, e->slots, n) < 0)
		return -ENOMEM;
	for (uint32_t c = 0; c < n; c++) {
		struct candidate *cd = &e->cand[c];
		if (args->score_spread)
			cd->raw[SCORE_SPREAD] = interpod_score_spread(e->ip, s, e->ledger,
								     cd->slot);
		if (args->score_interpod)
			cd->raw[SCORE_INTER_POD] = interpod_score_affinity(e->ip, s,
									   cd->slot);
	}
	return 0;
}
