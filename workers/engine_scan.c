/* The visits of the fast path (see engine_types_internal.h for the files):
 * an indexed class's pick (place_indexed: O(log n) from its index); a
 * class's scan of its static results (place_scan), pruned by its index
 * (scan_pruned), by shard where no node can fit (shard_cannot_fit), or
 * leaf_scan()'s AVX2/AVX-512 pass over the node rows (scan_fast); the
 * scan of an indexed class's leaves under inter-pod rules
 * (place_scan_leaves); and the diagnosis of a pod that fits nowhere, the
 * reference's message from the class's counts. Calls run down: called by
 * engine.c alone; calls engine_sync.c, engine_leaf.c and engine_score.c. */
#include "workers/engine_scan_internal.h"
#include "workers/engine_sync_internal.h"
#include "workers/engine_leaf_internal.h"
#include "workers/engine_score_internal.h"

static void shard_refresh(struct engine *e, const struct snapshot *s, uint32_t sh)
{
	struct shard_free *f = &e->shards[sh];
	/* A resource no node of the shard has leaves nothing free: 0 is at
	 * least every node's free amount (allocatable 0 less any use), so a
	 * pod that requests it is skipped, rightly, without reading nodes. */
	for (int r = 0; r < RES_MAX; r++)
		f->max_free[r] = (f->live >> r) & 1 ? INT64_MIN : 0;
	uint32_t end = (sh + 1) * SNAP_SHARD_SLOTS;
	if (end > s->n_slots)
		end = s->n_slots;
	for (uint32_t i = sh * SNAP_SHARD_SLOTS; i < end; i++) {
		if (!s->present[i])
			continue;
		const struct node_alloc *a = ledger_node(e->ledger, i);
		for (unsigned live = f->live; live != 0; live &= live - 1) {
			unsigned r = (unsigned)__builtin_ctz(live);
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

/* Marks dirty the shards of the nodes whose counters moved since the
 * last call (any engine's commits, releases), so a shard is never skipped
 * on a stale "most free". */
static void shards_sync(struct engine *e)
{
	uint64_t head = ledger_changes_head(e->ledger), i = e->shard_log_pos;
	bool all = head - i > LEDGER_CHANGE_LOG_SLOTS;
	for (; !all && i < head; i++) {
		uint32_t slot;
		int got = ledger_change_at(e->ledger, i, &slot);
		if (got <= 0) /* not stored yet, or overwritten: slot unknown */
			all = true;
		else if (slot / SNAP_SHARD_SLOTS < e->n_shards)
			e->shards[slot / SNAP_SHARD_SLOTS].dirty = true;
	}
	for (uint32_t sh = 0; all && sh < e->n_shards; sh++)
		e->shards[sh].dirty = true;
	e->shard_log_pos = head;
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
 * only the resources the pod requests, from the snapshot's columns. */
static bool fits(const uint8_t *requested, unsigned n_requested,
		 const struct snapshot *s, const struct node_alloc *a,
		 const struct pod_spec *pod, uint32_t slot)
{
	/* Relaxed loads: a view; the commit decides (bind/commit.c, shm/ledger.c). */
	if (__atomic_load_n(&a->used[RES_PODS], __ATOMIC_RELAXED) + 1 >
	    s->allocatable[RES_PODS][slot])
		return false;
	for (unsigned i = 0; i < n_requested; i++) {
		unsigned r = requested[i];
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

/* An unschedulable pod's diagnosis begins with class k's static reasons
 * (its statically infeasible nodes). */
static void diagnose_begin(struct engine *e, const struct snapshot *s,
			   const struct eclass *k)
{
	e->diag = *k->static_diag;
	e->diag_all_nodes = s->n_nodes;
	e->diag_no_nodes = s->n_nodes == 0;
}

/* The unschedulable pod's diagnosis: class k's static reasons plus the
 * dynamic ones counted in c (the index's, k->dyn, or a scan's), as the
 * reference scan would count them. */
static void diagnose_counts(struct engine *e, const struct snapshot *s,
			    const struct eclass *k, const struct reason_counts *c)
{
	diagnose_begin(e, s, k);
	e->diag.by_code[REASON_TOO_MANY_PODS] += c->pods;
	e->diag.by_code[REASON_PORTS] += c->ports;
	e->diag.by_code[REASON_GPU] += c->gpu;
	e->diag.by_code[REASON_CORES] += c->cores;
	e->diag.by_code[REASON_POD_ANTI_AFFINITY] += c->anti;
	e->diag.by_code[REASON_EXISTING_ANTI_AFFINITY] += c->existing_anti;
	for (int r = 0; r < RES_MAX; r++)
		e->diag.insufficient[r] += c->insufficient[r];
}

/* The sampled scan answered from the class index: the window is the first
 * p->want passing positions cyclically from the start (one or two ranges),
 * its best per group gives the normalising maxima and the best total, and
 * the draw picks the k-th tie in window order, as select_best() would. */
void place_indexed(struct engine *e, const struct snapshot *s,
		   struct eclass *k, struct pass *p, struct placement *out)
{
	const struct score_config *sc = sc_of(e, &k->spec);
	/* The window's first lines, asked for while the index catches up. */
	class_index_prefetch_from(&k->ix, p->start);
	index_sync(e, s, k);
	e->stats.indexed_pods++;
	const struct class_index *x = &k->ix;
	uint32_t total = class_index_total(x);
	if (total == 0) {
		diagnose_counts(e, s, k, &k->dyn);
		return;
	}
	/* Positions are slots: the window starts at the start slot. */
	uint32_t n = k->n_pos, p0 = p->start < n ? p->start : 0;
	uint32_t lo[2] = {p0, 0}, hi[2] = {n, p0}, window = total;
	if (total > p->want) {
		window = p->want;
		uint32_t after;
		uint32_t end = class_index_select_from(x, p0, p->want - 1, &after);
		if (end != UINT32_MAX) {
			hi[0] = end + 1;
			hi[1] = 0;
		} else {
			hi[1] = class_index_select(x, p->want - after - 1) + 1;
		}
	}
	unsigned G = x->groups;
	struct ci_best agg[CLASS_INDEX_MAX_GROUPS];
	for (unsigned g = 0; g < G; g++)
		agg[g] = (struct ci_best){CLASS_INDEX_NONE, 0};
	for (int r = 0; r < 2; r++)
		class_index_range(x, lo[r], hi[r], agg);
	/* score_normalize()'s maxima over the window (from 0, as Go). */
	int64_t max_t = 0, max_a = 0;
	for (unsigned g = 0; g < G; g++)
		if (agg[g].ties > 0) {
			if (k->group_taint[g] > max_t)
				max_t = k->group_taint[g];
			if (k->group_aff[g] > max_a)
				max_a = k->group_aff[g];
		}
	int64_t tot[CLASS_INDEX_MAX_GROUPS], best = INT64_MIN;
	for (unsigned g = 0; g < G; g++) {
		if (agg[g].ties == 0)
			continue;
		int64_t t = 0, a = 0;
		if (k->taint_raw != NULL)
			t = taint_normalized(k->group_taint[g], max_t);
		if (k->affinity_raw != NULL)
			a = max_a == 0 ? k->group_aff[g]
				       : MAX_NODE_SCORE * k->group_aff[g] / max_a;
		tot[g] = SCORE_FINE * (sc->weight_taint * t + sc->weight_affinity * a) +
			 agg[g].d;
		if (tot[g] > best)
			best = tot[g];
	}
	uint64_t ties = 0;
	int32_t want[CLASS_INDEX_MAX_GROUPS];
	for (unsigned g = 0; g < G; g++) {
		bool q = agg[g].ties > 0 && tot[g] == best;
		want[g] = q ? agg[g].d : CLASS_INDEX_NONE;
		ties += q ? agg[g].ties : 0;
	}
	uint64_t pick = ties > 1 ? rng_below(&p->rng, ties) : 0;
	uint32_t pos = class_index_find_tie(x, lo[0], hi[0], want, &pick);
	if (pos == UINT32_MAX)
		pos = class_index_find_tie(x, lo[1], hi[1], want, &pick);
	out->slot = pos;
	out->score = best;
	out->feasible = window;
}

/* The diagnosis over a class's static results: its static reasons, then
 * the dynamic filters (filter_node()'s order) on its feasible slots for
 * `pod`, whose requests may differ from the class's. */
static void diagnose_scan(struct engine *e, const struct snapshot *s,
			  const struct eclass *k, const struct pod_spec *pod)
{
	struct reason reasons[FILTER_MAX_REASONS];
	diagnose_begin(e, s, k);
	e->stats.diagnosis_scans++;
	for (uint32_t j = 0; j < k->n_feasible; j++) {
		struct node_read nd;
		read_node(e->ledger, s, k->feasible[j], pod, reads_devices(e, pod), &nd);
		unsigned nr;
		if (pod->n_ports > 0 && !filter_ports(&e->ctx, pod, &nd.v)) {
			reasons[0] = (struct reason){.code = REASON_PORTS};
			nr = 1;
		} else {
			nr = filter_resources(pod, &nd.v, reasons);
			if (nr == 0 && devices_wanted(pod))
				nr = filter_devices(pod, &nd.v, reasons);
		}
		/* The inter-pod filters run last, as in place_reference(). */
		uint8_t code;
		if (nr == 0 && e->ip_on &&
		    (code = interpod_filter(e->ip, s, k->feasible[j])) != 0) {
			reasons[0] = (struct reason){.code = code};
			nr = 1;
		}
		for (unsigned r = 0; r < nr; r++)
			diagnosis_add(&e->diag, &reasons[r]);
	}
}

/* Whether `pod`, of class k's static key, fails every dynamic filter k's
 * own pod fails: it asks at least as much of every resource, for the same
 * host ports, and neither wants devices (whose fit is not monotone in the
 * request). Then a node k's leaf refuses (MASK_PODS, MASK_RES, MASK_PORTS)
 * refuses `pod` too. */
static bool asks_at_least(const struct pod_spec *pod, const struct eclass *k)
{
	const struct pod_spec *b = &k->spec;
	if (pod->profile != b->profile || pod->n_ports != b->n_ports ||
	    memcmp(pod->ports, b->ports, pod->n_ports * sizeof(pod->ports[0])) != 0 ||
	    devices_wanted(pod) || devices_wanted(b))
		return false;
	for (int r = 0; r < RES_MAX; r++)
		if (pod->request.v[r] < b->request.v[r])
			return false;
	return true;
}

/* Candidate i of a scan without inter-pod scores, for select_plain():
 * its slot and dynamic score d (the static ones are read from the class
 * then). */
static inline void plain_candidate(struct engine *e, uint32_t i, uint32_t slot,
				   int64_t d)
{
	e->slots[i] = slot;
	e->tmp[i] = d;
}

/* Candidate i of a scan over class k for select_best(): slot, the class's
 * static raw scores and the dynamic score d. */
static inline void add_candidate(struct engine *e, const struct eclass *k,
				 uint32_t i, uint32_t slot, int64_t d)
{
	e->slots[i] = slot;
	struct candidate *cd = &e->cand[i];
	cd->slot = slot;
	cd->raw[SCORE_AFFINITY] = k->affinity_raw ? k->affinity_raw[slot] : 0;
	cd->raw[SCORE_TAINT] = k->taint_raw ? k->taint_raw[slot] : 0;
	/* Set after PreScore (interpod_scores) when the rules apply. */
	cd->raw[SCORE_SPREAD] = cd->raw[SCORE_INTER_POD] = 0;
	cd->dyn = d;
}

/* How many changes index_sync() would read to bring k's index up (a
 * eval's log and then the class's replay of the eval's ring). */
static uint64_t index_lag(const struct engine *e, const struct eclass *k)
{
	uint64_t head = ledger_changes_head(e->ledger);
	if (!from_eval(k))
		return head - k->log_pos;
	const struct eval *sh = k->eval;
	return (head - sh->log_pos) + (sh->head - k->eval_pos);
}

/* leaf_scan()'s general rules: leaf_eval(). */
struct scan_general {
	struct engine *e;
	const struct snapshot *s;
	const struct leaf_plan *lp;
};

static uint32_t scan_general(void *arg, uint32_t slot, int64_t *d)
{
	const struct scan_general *g = arg;
	return leaf_eval(g->e, g->s, g->lp, false, slot, d);
}

/* What leaf_scan() reads of the nodes: the rows brought up to the change
 * log first; and, for a scan of class k whose candidates select_plain()
 * will choose among by k's raw static scores, those to prefetch. */
static struct leaf_nodes scan_nodes(struct engine *e, const struct snapshot *s,
				    const struct eclass *k)
{
	struct node_allocatable alloc = allocatable_of(s);
	node_rows_sync(&e->rows, e->ledger, &alloc, s->n_slots);
	bool raw = k != NULL && k->raw_set != 0;
	return (struct leaf_nodes){
		.rows = e->rows.row,
		.raw_taint = raw ? k->taint_raw : NULL,
		.raw_affinity = raw ? k->affinity_raw : NULL,
	};
}

/* Index blocks whose passing positions one leaf_scan() reads. Re-measured
 * by the engine's pods/s, and the statistics' pruned scans, at 10,000 and
 * 100,000 nodes:
 *   shmsched-bench --sweep-nodes 10000,100000 --sweep-runs 3 --no-reference --no-quality */
#define PRUNED_BLOCKS 8u

/* place_scan() for `pod` over indexed class k when asks_at_least():
 * only the nodes k's index passes are read, cyclically from the start
 * slot as the scan goes, so the same `want` nodes are found and scored.
 * On a full cluster the plain scan reads every node to find them. A fast
 * plan reads them by leaf_scan(), PRUNED_BLOCKS blocks of the index's
 * pass bits at a time. Returns the candidates found. */
static uint32_t scan_pruned(struct engine *e, const struct snapshot *s,
			    struct eclass *k, const struct leaf_plan *lp,
			    const struct pass *p)
{
	index_sync(e, s, k);
	const struct class_index *x = &k->ix;
	uint32_t n = 0, start = p->start < k->n_pos ? p->start : 0;
	struct leaf_nodes nodes = scan_nodes(e, s, k);
	struct scan_general g = {e, s, lp};
	/* Positions are slots. The passing ones of PRUNED_BLOCKS blocks at
	 * a time, so a scan's set-up is paid once for many blocks. */
	uint32_t pos_of[PRUNED_BLOCKS * CLASS_INDEX_BLOCK];
	for (int r = 0; r < 2 && n < p->want; r++) {
		uint32_t pos = r == 0 ? start : 0, hi = r == 0 ? k->n_pos : start;
		while (lp->fast && n < p->want && pos < hi) {
			uint32_t m = 0;
			for (unsigned b = 0; b < PRUNED_BLOCKS && pos < hi; b++) {
				m += class_index_block_passing(x, pos, hi, pos_of + m);
				pos = (pos / CLASS_INDEX_BLOCK + 1) * CLASS_INDEX_BLOCK;
			}
			e->stats.nodes_checked += leaf_scan(&lp->f, &nodes, pos_of, 0, m, p->want,
							    &n, e->slots, e->tmp,
							    scan_general, &g);
		}
		while (!lp->fast && n < p->want && pos < hi) {
			uint32_t counted;
			pos = class_index_select_from(x, pos, 0, &counted);
			if (pos == UINT32_MAX || pos >= hi)
				break;
			uint32_t slot = pos++;
			e->stats.nodes_checked++;
			int64_t d;
			if (leaf_eval(e, s, lp, false, slot, &d) != 0)
				continue;
			plain_candidate(e, n++, slot, d);
		}
	}
	e->stats.pruned_scans++;
	return n;
}

/* place_scan()'s visit for a fast plan without inter-pod rules: the same
 * slots in the same order, cyclically from the start, by leaf_scan(),
 * into plain candidates. Returns how many. */
static uint32_t scan_fast(struct engine *e, const struct snapshot *s,
			  const struct eclass *k, const struct leaf_plan *lp,
			  const struct pass *p)
{
	struct leaf_nodes nodes = scan_nodes(e, s, k);
	struct scan_general g = {e, s, lp};
	uint32_t n = 0, from = first_at_or_after(k, p->start);
	e->stats.nodes_checked += leaf_scan(&lp->f, &nodes, k->feasible, from,
					    k->n_feasible, p->want, &n, e->slots,
					    e->tmp, scan_general, &g);
	if (n < p->want)
		e->stats.nodes_checked += leaf_scan(&lp->f, &nodes, k->feasible, 0, from,
						    p->want, &n, e->slots, e->tmp,
						    scan_general, &g);
	return n;
}

/* diagnose_scan() from the leaves' reasons, counted as the index counts
 * them: for a pod without inter-pod filters (the caller's) or devices,
 * whose leaf reports what filter_ports() and filter_resources() do, in
 * the same order. Each node costs the leaf's reads (the counters it
 * requests; for the fast leaf four nodes at a time) instead of
 * read_node()'s of every counter; on the default's full cluster
 * diagnose_scan() took a quarter of the run. */
static void diagnose_leaves(struct engine *e, const struct snapshot *s,
			    const struct eclass *k, const struct leaf_plan *lp)
{
	struct reason_counts c = {0};
	e->stats.diagnosis_scans++;
	if (lp->fast) {
		uint32_t fast[LEAF_REASONS];
		struct leaf_nodes nodes = scan_nodes(e, s, NULL);
		leaf_reasons(&lp->f, &nodes, k->feasible, k->n_feasible, fast);
		c.pods = fast[LEAF_REASON_PODS];
		c.insufficient[RES_CPU] = fast[LEAF_REASON_CPU];
		c.insufficient[RES_MEMORY] = fast[LEAF_REASON_MEMORY];
	} else {
		for (uint32_t j = 0; j < k->n_feasible; j++) {
			int64_t d;
			reasons_add(&c, lp, leaf_eval(e, s, lp, false, k->feasible[j], &d), +1);
		}
	}
	diagnose_counts(e, s, k, &c);
}

/* A scan's answer from its n plain candidates, or its diagnosis when
 * there are none (no inter-pod rules: the caller's). */
static void plain_answer(struct engine *e, const struct snapshot *s,
			 const struct eclass *k, const struct pod_spec *pod,
			 const struct leaf_plan *lp, uint32_t n, struct pass *p,
			 struct placement *out)
{
	if (n > 0)
		select_plain(e, k, pod, n, &p->rng, out);
	else if (!lp->devices)
		diagnose_leaves(e, s, k, lp);
	else
		diagnose_scan(e, s, k, pod);
}

/* The sampled scan over a class's statically feasible slots, with the
 * dynamic filters and scores of `pod` (the class's own pod, or one that
 * differs only in its requests), and the inter-pod filters and scores
 * when they apply (e->ip_on, after interpod_prefilter_view). */
int place_scan(struct engine *e, const struct snapshot *s,
	       struct eclass *k, const struct pod_spec *pod,
	       struct pass *p, struct placement *out)
{
	uint8_t requested[RES_MAX];
	unsigned n_requested = requested_of(pod, requested);
	/* The pod's dynamic filters and scores, as a class's leaves (the
	 * class's own when it is the class's pod). */
	struct leaf_plan own;
	const struct leaf_plan *lp = &k->plan;
	if (pod != &k->spec && !pod_class_equal(pod, &k->spec)) {
		leaf_plan_init(e, &own, pod);
		lp = &own;
		/* A sibling that asks more, of a class whose index is at most
		 * `want` changes behind (bringing it up costs less than the
		 * scan's `want` reads at least): read only where it passes. */
		if (!e->ip_on && k->indexed && !k->ix_ip && index_lag(e, k) <= p->want &&
		    asks_at_least(pod, k)) {
			plain_answer(e, s, k, pod, lp, scan_pruned(e, s, k, lp, p), p, out);
			return 0;
		}
	}
	if (lp->fast && !e->ip_on) {
		plain_answer(e, s, k, pod, lp, scan_fast(e, s, k, lp, p), p, out);
		return 0;
	}
	/* Shards whose most free node cannot hold the pod are skipped, but
	 * for a fast plan: its leaf refuses a node in fewer instructions than
	 * a shard's figures take to refresh. */
	bool skip = !lp->fast;
	if (skip)
		shards_sync(e);
	/* A shard is asked once per run of its slots: the last one skipped,
	 * and the last one that may fit. */
	uint32_t n = 0, skipped_shard = UINT32_MAX, fitting_shard = UINT32_MAX;
	uint32_t j = k->n_feasible ? first_at_or_after(k, p->start) : 0;
	for (uint32_t visited = 0; visited < k->n_feasible && n < p->want; visited++) {
		uint32_t slot = k->feasible[j];
		j = j + 1 == k->n_feasible ? 0 : j + 1;
		uint32_t sh = slot / SNAP_SHARD_SLOTS;
		if (sh == skipped_shard)
			continue;
		if (skip && sh != fitting_shard) {
			if (shard_cannot_fit(e, s, sh, pod)) {
				skipped_shard = sh;
				e->stats.shards_skipped++;
				continue;
			}
			fitting_shard = sh;
		}
		e->stats.nodes_checked++;
		/* Order does not matter here: each only decides feasibility (the
		 * reasons come from diagnose_scan() when nothing fits); the
		 * cheap ones first. */
		if (e->ip_on && (!fits(requested, n_requested, s,
				       ledger_node(e->ledger, slot), pod, slot) ||
				 interpod_filter(e->ip, s, slot) != 0))
			continue;
		int64_t d;
		if (leaf_eval(e, s, lp, false, slot, &d) != 0)
			continue;
		if (e->ip_on)
			add_candidate(e, k, n++, slot, d);
		else
			plain_candidate(e, n++, slot, d);
	}
	if (!e->ip_on) {
		plain_answer(e, s, k, pod, lp, n, p, out);
		return 0;
	}
	if (n > 0 && interpod_scores(e, s, pod, n) < 0)
		return -ENOMEM;
	if (n > 0)
		select_best(e, pod, n, &p->rng, NULL, out);
	else
		diagnose_scan(e, s, k, pod);
	return 0;
}

/* place_scan() for a pod under inter-pod rules of an indexed class, after
 * index_sync(): a leaf says whether its node passes the dynamic filters
 * and holds its dynamic score, so a node costs the inter-pod filter alone
 * and a candidate its scores from the view. */
int place_scan_leaves(struct engine *e, const struct snapshot *s,
		      const struct eclass *k, const struct pod_spec *pod,
		      struct pass *p, struct placement *out)
{
	uint32_t n = 0, nf = k->n_feasible;
	uint32_t refused[256] = {0}; /* by inter-pod reason code */
	uint32_t j = nf ? first_at_or_after(k, p->start) : 0;
	for (uint32_t visited = 0; visited < nf && n < p->want; visited++) {
		uint32_t slot = k->feasible[j];
		j = j + 1 == nf ? 0 : j + 1;
		if (cw_reasons(k->word[slot]) != 0)
			continue;
		uint8_t code = interpod_filter(e->ip, s, slot);
		if (code != 0) {
			refused[code]++;
			continue;
		}
		e->slots[n] = slot;
		struct candidate *cd = &e->cand[n++];
		memset(cd, 0, sizeof(*cd));
		cd->slot = slot;
		cd->raw[SCORE_AFFINITY] = k->affinity_raw ? k->affinity_raw[slot] : 0;
		cd->raw[SCORE_TAINT] = k->taint_raw ? k->taint_raw[slot] : 0;
		cd->dyn = class_index_leaf(&k->ix, slot, cw_group(k->word[slot]));
	}
	e->stats.interpod_leaf_scans++;
	if (n > 0) {
		if (interpod_scores(e, s, pod, n) < 0)
			return -ENOMEM;
		select_best(e, pod, n, &p->rng, NULL, out);
		return 0;
	}
	/* Every node visited: the class's reasons, and the inter-pod ones of
	 * the nodes that passed the rest, as the reference counts them. */
	diagnose_counts(e, s, k, &k->dyn);
	for (unsigned code = 0; code < 256; code++)
		if (refused[code] > 0 && code <= REASON_INSUFFICIENT)
			e->diag.by_code[code] += refused[code];
	return 0;
}
