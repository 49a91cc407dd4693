/* Following the cluster (see engine_types_internal.h for the cache
 * table): a new snapshot generation either flushes every cache
 * (sync_flush) or, when the cluster can name the slots that changed, is
 * followed node by node (class_node_changed: a class's static results,
 * index and diagnosis for that node alone); and the change log is
 * replayed into each class's index (index_sync: its own leaves, or its
 * eval's ring, index_sync_eval), or the index is built again
 * (index_rebuild). Calls
 * run down: called by engine_scan.c and engine.c; calls engine_classes.c
 * (a flush), engine_evals.c, engine_leaf.c and engine_score.c. */
#include "workers/engine_sync_internal.h"
#include "workers/engine_classes_internal.h"
#include "workers/engine_evals_internal.h"
#include "workers/engine_leaf_internal.h"
#include "workers/engine_score_internal.h"

/* What slot i's node counts towards the GPU models' capacities and
 * gpu_max (frag_models_add ignores a node without a model or GPUs): its
 * model and GPU count, 0 for an empty slot. */
static uint64_t gpu_counted(const struct snapshot *s, uint32_t i)
{
	if (!s->present[i])
		return 0;
	const struct node_devices *d = &s->nodes[i].devices;
	return d->gpu_model == 0 || d->n_gpus == 0
		       ? 0 : (uint64_t)d->gpu_model << 32 | d->n_gpus;
}

/* The largest cpu allocatable of a present node, from the shards'
 * summaries. */
static int64_t cpu_max_of(const struct snapshot *s)
{
	int64_t m = 0;
	for (uint32_t i = 0; i < s->n_shards; i++)
		if (s->shards[i].max_allocatable[RES_CPU] > m)
			m = s->shards[i].max_allocatable[RES_CPU];
	return m;
}

/* A new snapshot generation, every cache started over: classes, evals,
 * shard figures, fragmentation, the device scores' scale. */
static int sync_flush(struct engine *e, const struct snapshot *s)
{
	flush_classes(e);
	node_rows_forget(&e->rows); /* a slot may hold another node now */
	e->n_slots = s->n_slots;
	if (s->n_shards != e->n_shards) {
		struct shard_free *sh = calloc(s->n_shards ? s->n_shards : 1,
					       sizeof(*sh));
		if (sh == NULL)
			return -ENOMEM;
		free(e->shards);
		e->shards = sh;
		e->n_shards = s->n_shards;
	}
	for (uint32_t i = 0; i < e->n_shards; i++) {
		e->shards[i].dirty = true;
		e->shards[i].live = 0;
		for (int r = 0; r < RES_MAX; r++)
			if (s->shards[i].max_allocatable[r] > 0)
				e->shards[i].live |= (uint16_t)(1u << r);
	}
	e->shard_log_pos = ledger_changes_head(e->ledger);
	e->generation = s->generation;
	/* A slot may hold another node now: forget its fragmentation. */
	memset(e->before, 0, (size_t)cluster_capacity(e->cluster) * sizeof(*e->before));
	memset(e->memo, 0, GROWTH_MEMO_SLOTS * sizeof(*e->memo));
	e->cpu_max = e->gpu_max = 0;
	frag_models_reset(&e->models);
	memset(e->gpu_counted, 0, (size_t)cluster_capacity(e->cluster) * sizeof(*e->gpu_counted));
	for (uint32_t i = 0; i < s->n_slots; i++) {
		if (!s->present[i])
			continue;
		const struct node_spec *n = &s->nodes[i];
		e->gpu_counted[i] = gpu_counted(s, i);
		frag_models_add(&e->models, n->devices.gpu_model, n->devices.n_gpus);
		if (n->allocatable.v[RES_CPU] > e->cpu_max)
			e->cpu_max = n->allocatable.v[RES_CPU];
		if ((int64_t)n->devices.n_gpus * GPU_MILLI_PER_DEVICE > e->gpu_max)
			e->gpu_max = (int64_t)n->devices.n_gpus * GPU_MILLI_PER_DEVICE;
	}
	return 0;
}

/* Every leaf from the counters now (or from its eval's results, brought
 * up to the change log). */
void index_rebuild(struct engine *e, const struct snapshot *s, struct eclass *k)
{
	k->mix_epoch = e->mix.epoch;
	index_counts_reset(k);
	e->stats.index_rebuilds++;
	if (from_eval(k)) {
		struct eval *sh = k->eval;
		eval_sync(e, s, sh);
		k->eval_pos = sh->head;
		k->eval_epoch = sh->epoch;
		for (uint32_t p = 0; p < k->n_feasible; p++) {
			uint32_t slot = k->feasible[p];
			const struct eval_leaf *l = leaf_of(e, sh, slot);
			uint32_t m = leaf_mask(l), w = k->word[slot];
			k->word[slot] = (w & ~CW_REASONS) | m;
			reasons_add(&k->dyn, &k->plan, m, +1);
			class_index_set_leaf(&k->ix, slot, cw_group(w), m == 0, l->d);
		}
		class_index_build(&k->ix);
		return;
	}
	/* The head first: a change logged after it is read again later. */
	k->log_pos = index_head(e, k);
	for (uint32_t p = 0; p < k->n_feasible; p++) {
		int64_t d = 0;
		uint32_t slot = k->feasible[p];
		uint32_t m = leaf_eval(e, s, &k->plan, k->ix_ip, slot, &d);
		uint32_t w = k->word[slot];
		k->word[slot] = (w & ~CW_REASONS) | m;
		reasons_add(&k->dyn, &k->plan, m, +1);
		class_index_set_leaf(&k->ix, slot, cw_group(w), m == 0, (int32_t)d);
	}
	class_index_build(&k->ix);
}

/* The leaf of slot p now has reasons m and score d. */
static void index_leaf(struct engine *e, struct eclass *k, uint32_t p, uint32_t m,
		       int64_t d)
{
	uint32_t w = k->word[p];
	if (m != cw_reasons(w)) { /* most changes keep a node's reasons */
		reasons_add(&k->dyn, &k->plan, cw_reasons(w), -1);
		reasons_add(&k->dyn, &k->plan, m, +1);
		k->word[p] = (w & ~CW_REASONS) | m;
	}
	class_index_update(&k->ix, p, cw_group(w), m == 0, (int32_t)d);
	e->stats.index_updates++;
}

/* Prefetches what replaying ring entries [from, to) of class k's eval
 * reads first: each slot's class word, the eval's result and the
 * index's word (one array for all groups, so its address needs no
 * group). Always inlined: GCC may delete the calls of a helper that only
 * prefetches (class_index.c's prefetch_block()). */
static inline __attribute__((always_inline)) void
replay_prefetch(const struct engine *e, const struct eclass *k, const struct eval *sh,
		uint64_t from, uint64_t to)
{
	for (uint64_t j = from; j < to; j++) {
		uint32_t slot = sh->ring[j & (EVAL_RING - 1)];
		if (slot >= k->n_pos)
			continue;
		__builtin_prefetch(&k->word[slot]);
		__builtin_prefetch(leaf_of(e, sh, slot));
		class_index_prefetch_word(&k->ix, slot);
	}
}

/* Replays the eval's ring into the class's index. */
static void index_sync_eval(struct engine *e, const struct snapshot *s,
			     struct eclass *k)
{
	struct eval *sh = k->eval;
	/* The entries already in the ring (a batch's worth at most) are
	 * asked for before the warm evals read the log's new changes, so
	 * that their misses overlap that pass's: a pod's catch-up is most
	 * often a handful of entries, each waiting on memory at 100,000
	 * nodes. */
	if (k->eval_epoch == sh->epoch && sh->head - k->eval_pos <= EVAL_SYNC_BATCH)
		replay_prefetch(e, k, sh, k->eval_pos, sh->head);
	evals_sync_warm(e, s);
	eval_sync(e, s, sh);
	eval_used(e, sh); /* after its own sync: it joins the others at the head */
	if (k->eval_epoch != sh->epoch || sh->head - k->eval_pos > EVAL_RING) {
		index_rebuild(e, s, k);
		return;
	}
	/* In batches of ring entries, as eval_sync(), in three passes: each
	 * slot's class word, eval result and index word prefetched; then,
	 * for the members, the block's maxima and pass bits (whose address
	 * needs the group); then the updates. In one pass the class's own
	 * misses had come before any prefetch was issued (a third of
	 * index_sync's own samples at 100,000 nodes). */
	uint64_t head = sh->head;
	uint64_t end = head - k->eval_pos < EVAL_SYNC_BATCH ? head
							      : k->eval_pos + EVAL_SYNC_BATCH;
	replay_prefetch(e, k, sh, k->eval_pos, end);
	for (uint64_t i = k->eval_pos; i < head;) {
		uint32_t batch[EVAL_SYNC_BATCH], n = 0;
		end = head - i < EVAL_SYNC_BATCH ? head : i + EVAL_SYNC_BATCH;
		/* The next batch's first pass, a batch ahead of its use. */
		replay_prefetch(e, k, sh, end,
				head - end < EVAL_SYNC_BATCH ? head : end + EVAL_SYNC_BATCH);
		for (; i < end; i++) {
			uint32_t slot = sh->ring[i & (EVAL_RING - 1)];
			if (!class_member(k, slot))
				continue;
			batch[n++] = slot;
			class_index_prefetch(&k->ix, slot, cw_group(k->word[slot]));
		}
		for (uint32_t b = 0; b < n; b++) {
			const struct eval_leaf *l = leaf_of(e, sh, batch[b]);
			index_leaf(e, k, batch[b], leaf_mask(l), l->d);
		}
	}
	k->eval_pos = head;
}

/* Brings the index up to the cluster's change log. */
void index_sync(struct engine *e, const struct snapshot *s, struct eclass *k)
{
	if (from_eval(k)) {
		index_sync_eval(e, s, k);
		return;
	}
	uint64_t head = index_head(e, k);
	/* Far behind (or the log moved on, or the fragmentation mix every
	 * leaf was scored with): a rebuild costs less. */
	if (k->mix_epoch != e->mix.epoch ||
	    ledger_changes_rebuild(head, k->log_pos, k->n_feasible)) {
		index_rebuild(e, s, k);
		return;
	}
	uint64_t i = k->log_pos;
	for (; i < head; i++) {
		uint32_t slot;
		int got = ledger_change_at(e->ledger, i, &slot);
		if (got == 0)
			break; /* its writer is between taking and storing it */
		if (got < 0) {
			index_rebuild(e, s, k);
			return;
		}
		if (slot >= s->n_slots || !class_member(k, slot))
			continue;
		int64_t d = 0;
		uint32_t m = leaf_eval(e, s, &k->plan, k->ix_ip, slot, &d);
		index_leaf(e, k, slot, m, d);
	}
	k->log_pos = i;
}

/* Drops class k's index (the class scans; one wanted is built again, a
 * budget at a time): a node event it cannot follow in place. */
static void index_drop(struct engine *e, struct eclass *k)
{
	size_t freed = class_index_bytes(&k->ix);
	if (k->word != NULL)
		freed += (k->n_pos ? k->n_pos : 1) * sizeof(*k->word);
	class_index_free(&k->ix);
	free(k->word);
	k->word = NULL;
	eval_release(e, k->eval);
	k->eval = NULL;
	k->indexed = false;
	/* Built again a budget at a time, between other pods: without the
	 * inter-pod filter, which only a pod of this class can read; its next
	 * such pod puts it back (index_ready). */
	k->ix_ip = false;
	k->ix_builds = 0;
	k->bytes -= freed;
	e->class_bytes -= freed;
	k->phase = PHASE_SCAN;
	k->cursor = 0;
	if (k->want_index)
		pending_push(e, k);
}

/* Slot `slot` of class k's sorted feasible list: its index, or where it
 * would go. */
static uint32_t feasible_find(const struct eclass *k, uint32_t slot)
{
	uint32_t lo = 0, hi = k->n_feasible;
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;
		if (k->feasible[mid] < slot)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* The group of static raw scores (t, a) in class k's index, or -1 when
 * the index has no room for another. */
static int index_group(struct eclass *k, int32_t t, int32_t a)
{
	for (unsigned g = 0; g < k->n_groups; g++)
		if (k->group_taint[g] == t && k->group_aff[g] == a)
			return (int)g;
	if (k->n_groups >= k->ix.groups)
		return -1;
	k->group_taint[k->n_groups] = t;
	k->group_aff[k->n_groups] = a;
	return (int)k->n_groups++;
}

/* The node in `slot` changed (added, updated, removed, cordoned): class
 * k's static results (feasible list, raw scores, reasons) and its index
 * follow, from that node alone. The class's eval has re-read the slot
 * already (sync_generation). */
static void class_node_changed(struct engine *e, const struct snapshot *s,
			       struct eclass *k, uint32_t slot)
{
	if (k->phase == PHASE_STATIC && slot >= k->cursor)
		return; /* read with this snapshot when its turn comes */
	const struct score_config *sc = sc_of(e, &k->spec);
	uint32_t at = feasible_find(k, slot);
	bool was = at < k->n_feasible && k->feasible[at] == slot, now = false;
	if (k->why[slot].code != 0)
		diagnosis_sub(k->static_diag, &k->why[slot]);
	k->why[slot] = (struct reason){0};
	struct reason why;
	if (s->present[slot]) {
		if (static_feasible(&e->ctx, sc, s, &k->spec, slot, &why)) {
			now = true;
		} else {
			diagnosis_add(k->static_diag, &why);
			k->why[slot] = why;
		}
	}
	if (now) {
		struct candidate cd;
		score_static(&e->ctx, sc, k->affinity_raw != NULL, &k->spec,
			     &s->nodes[slot], &cd);
		/* raw_set follows (a slot left behind keeps its count: one
		 * too many only costs select_plain() its fast way). */
		k->raw_set -= raw_of(k, slot);
		if (k->affinity_raw != NULL)
			k->affinity_raw[slot] = (int32_t)cd.raw[SCORE_AFFINITY];
		if (k->taint_raw != NULL)
			k->taint_raw[slot] = (int32_t)cd.raw[SCORE_TAINT];
		k->raw_set += raw_of(k, slot);
	}
	if (was && !now) {
		memmove(&k->feasible[at], &k->feasible[at + 1],
			(k->n_feasible - at - 1) * sizeof(*k->feasible));
		k->n_feasible--;
	} else if (!was && now) {
		memmove(&k->feasible[at + 1], &k->feasible[at],
			(k->n_feasible - at) * sizeof(*k->feasible));
		k->feasible[at] = slot;
		k->n_feasible++;
	}
	/* Inter-pod rules: which feasible slots have the spread keys, asked
	 * again at the next pod. */
	k->ip_keys = 0;
	if (k->phase == PHASE_STATIC || k->phase == PHASE_SCAN ||
	    (k->phase == PHASE_DONE && !k->indexed))
		return;
	if (k->phase != PHASE_DONE || k->ix_ip) {
		/* An index being built, or leaves holding the inter-pod filter
		 * (which read the pod's PreFilter): built again. */
		index_drop(e, k);
		return;
	}
	bool member = class_member(k, slot);
	uint32_t w = slot < k->n_pos ? k->word[slot] : 0;
	if (member && !now) {
		reasons_add(&k->dyn, &k->plan, cw_reasons(w), -1);
		class_index_update(&k->ix, slot, cw_group(w), false, 0);
		k->word[slot] = 0;
		return;
	}
	if (!now)
		return;
	int g = index_group(k, k->taint_raw ? k->taint_raw[slot] : 0,
			    k->affinity_raw ? k->affinity_raw[slot] : 0);
	if (g < 0) { /* more groups than the index has: built again */
		index_drop(e, k);
		return;
	}
	if (member) {
		reasons_add(&k->dyn, &k->plan, cw_reasons(w), -1);
		if ((unsigned)g != cw_group(w))
			class_index_update(&k->ix, slot, cw_group(w), false, 0);
	}
	uint32_t m;
	int64_t d = 0;
	if (from_eval(k)) {
		struct eval *sh = k->eval;
		/* The eval evaluates only the slots its classes hold. */
		if (!((sh->member[slot / 64] >> (slot % 64)) & 1)) {
			int64_t sd = 0;
			sh->member[slot / 64] |= UINT64_C(1) << (slot % 64);
			uint32_t sm = leaf_eval(e, s, &sh->plan, false, slot, &sd);
			eval_store(e, sh, slot, sm, sd);
			e->stats.shape_evals++;
		}
		const struct eval_leaf *l = leaf_of(e, k->eval, slot);
		m = leaf_mask(l);
		d = l->d;
	} else {
		m = leaf_eval(e, s, &k->plan, false, slot, &d);
	}
	k->word[slot] = CW_MEMBER | (uint32_t)g << CW_GROUP_SHIFT | m;
	reasons_add(&k->dyn, &k->plan, m, +1);
	class_index_update(&k->ix, slot, (unsigned)g, m == 0, (int32_t)d);
}

int sync_generation(struct engine *e, const struct snapshot *s)
{
	/* Issue 41: a run-time reclaim of the intern table moved its epoch
	 * and waits a grace period before it frees ids no holder it sees
	 * has: this engine's caches (classes keyed by specs of ids, their
	 * evaluations and views, the inter-pod groups decoded by id) are not
	 * seen, so every one is dropped here, before a cache is read in this
	 * call (shm/intern.h). One load a call. */
	uint32_t epoch = intern_epoch(e->ctx.strings);
	if (epoch != e->strings_epoch) {
		int rc = sync_flush(e, s); /* the classes first: their views */
		if (e->ip != NULL)
			interpod_forget_groups(e->ip);
		e->strings_epoch = epoch;
		return rc;
	}
	if (s->generation == e->generation)
		return 0;
	int n = -1;
	if (e->generation != 0 && s->n_slots == e->n_slots && s->n_shards == e->n_shards)
		n = cluster_changed_slots(e->cluster, e->generation, s->generation,
					  e->changed, CLUSTER_SPEC_LOG);
	/* The device scores' scale is the largest node's, and the GPU
	 * models' reservation reads each model's capacity: where either
	 * moved, every such leaf moved too. The cpu maximum comes from the
	 * shards' summaries; the GPUs can only have moved where a changed
	 * slot counts other GPUs than the last flush counted (then flush,
	 * even when two changes cancel out). O(shards + changed slots): a
	 * scan of every node's spec here cost a node event milliseconds. */
	if (n >= 0 && cpu_max_of(s) != e->cpu_max)
		n = -1;
	for (int i = 0; i < n; i++) {
		uint32_t slot = e->changed[i];
		if (slot < s->n_slots && gpu_counted(s, slot) != e->gpu_counted[slot]) {
			n = -1;
			break;
		}
	}
	if (n < 0)
		return sync_flush(e, s);
	e->generation = s->generation;
	struct node_allocatable alloc = allocatable_of(s);
	for (int i = 0; i < n; i++) {
		uint32_t slot = e->changed[i], sh = slot / SNAP_SHARD_SLOTS;
		if (slot >= s->n_slots)
			continue;
		/* Its shard's figures, and its fragmentation, read again. */
		e->shards[sh].dirty = true;
		e->shards[sh].live = 0;
		for (int r = 0; r < RES_MAX; r++)
			if (s->shards[sh].max_allocatable[r] > 0)
				e->shards[sh].live |= (uint16_t)(1u << r);
		/* Its fragmentation read again; the stamp moves on (not back
		 * to 0), so no growth_memo entry of the old node matches. */
		e->before[slot] = (struct frag_before){.stamp = e->before[slot].stamp};
		/* Its row: new allocatables, or an added node's reset record. */
		node_rows_copy(&e->rows, e->ledger, &alloc, slot);
		for (struct eval *shp = e->evals; shp != NULL; shp = shp->next)
			eval_node_changed(e, s, shp, slot);
		for (uint32_t t = 0; t <= e->table_mask; t++)
			if (e->table[t] != NULL)
				class_node_changed(e, s, e->table[t], slot);
		e->stats.node_changes++;
	}
	return 0;
}
