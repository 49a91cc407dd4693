/* The shared evaluations (struct eval; called "request shapes" before,
 * a word that also names RequestedToCapacityRatio's shape and the FGD
 * paper's pod shapes): the classes whose pods read the same of a node
 * share one evaluation of each node the change log names. Here: an
 * eval's life (made or shared by eval_attach, let go by eval_release),
 * its own sync over the log (eval_sync), the warm evals' joint pass
 * (evals_sync_warm: four fast plans to an AVX2 vector) and the table of
 * results, a row per slot and a column per eval (eval_table_resize).
 * The classes replay an eval's ring into their indexes in
 * engine_sync.c. See engine_types_internal.h for the invalidation rules.
 * Calls run down: called by engine_sync.c and engine_classes.c; calls
 * engine_leaf.c alone. */
#include "workers/engine_evals_internal.h"
#include "workers/engine_leaf_internal.h"

static int eval_table_resize(struct engine *e, uint32_t cols);

/* Eval e->warm[w] goes cold: out of the array. */
static void eval_cool(struct engine *e, unsigned w)
{
	e->warm[w]->warm = false;
	e->warm[w] = e->warm[--e->n_warm];
	e->warm_changed = true;
}

void eval_release(struct engine *e, struct eval *sh)
{
	if (sh == NULL || --sh->refs > 0)
		return;
	for (unsigned w = 0; w < e->n_warm; w++)
		if (e->warm[w] == sh) {
			eval_cool(e, w);
			break;
		}
	struct eval **at = &e->evals;
	while (*at != sh)
		at = &(*at)->next;
	*at = sh->next;
	e->class_bytes -= sh->bytes;
	/* Its column back to zeros (EVAL_UNHELD) where it held a slot:
	 * the next eval to take it starts with none. */
	for (uint32_t w = 0; w * 64 < sh->n_slots; w++)
		for (uint64_t bits = sh->member[w]; bits != 0; bits &= bits - 1) {
			uint32_t slot = w * 64 + (uint32_t)__builtin_ctzll(bits);
			*leaf_of(e, sh, slot) = (struct eval_leaf){0, 0};
		}
	e->eval_free[e->n_eval_free++] = sh->col;
	free(sh->member);
	free(sh);
	/* The table narrower when three quarters of it are free (kept as it
	 * is when memory is short), gone with its last eval. */
	uint32_t live = e->eval_cols - e->n_eval_free;
	if (live == 0)
		(void)eval_table_resize(e, 0);
	else if (e->eval_cols > e->eval_cols_min && live <= e->eval_cols / 4)
		(void)eval_table_resize(e, e->eval_cols / 2);
}

/* The eval key of `pod`: the fields leaf_eval() reads but the inter-pod
 * filter's, every other byte 0 (so equal evals are equal bytes). */
static void eval_key(const struct pod_spec *pod, struct pod_spec *out)
{
	memset(out, 0, sizeof(*out));
	out->profile = pod->profile;
	out->request = pod->request;
	out->nonzero_cpu_milli = pod->nonzero_cpu_milli;
	out->nonzero_mem_bytes = pod->nonzero_mem_bytes;
	out->n_ports = pod->n_ports;
	memcpy(out->ports, pod->ports, sizeof(out->ports));
}

/* Evaluates every slot it holds, from the counters now; its classes
 * rebuild from it (the epoch moves on). */
static void eval_rebuild(struct engine *e, const struct snapshot *s, struct eval *sh)
{
	/* The head first: a change logged after it is read again later. */
	sh->log_pos = ledger_changes_head(e->ledger);
	for (uint32_t w = 0; w * 64 < sh->n_slots; w++)
		for (uint64_t bits = sh->member[w]; bits != 0; bits &= bits - 1) {
			uint32_t slot = w * 64 + (uint32_t)__builtin_ctzll(bits);
			int64_t d = 0;
			uint32_t m = leaf_eval(e, s, &sh->plan, false, slot, &d);
			eval_store(e, sh, slot, m, d);
			e->stats.shape_evals++;
		}
	sh->epoch++;
	e->stats.shape_rebuilds++;
}

/* The slot's new result: stored and appended to the ring when it
 * changed. */
static void eval_apply(struct engine *e, struct eval *sh, uint32_t slot, uint32_t m,
			int64_t d)
{
	e->stats.shape_evals++;
	struct eval_leaf was = *leaf_of(e, sh, slot);
	if (m == leaf_mask(&was) && (m != 0 || (int32_t)d == was.d))
		return;
	eval_store(e, sh, slot, m, d);
	sh->ring[sh->head++ & (EVAL_RING - 1)] = slot;
}

/* The slot's result read again from the counters now. */
static void eval_follow(struct engine *e, const struct snapshot *s,
			 struct eval *sh, uint32_t slot)
{
	int64_t d = 0;
	uint32_t m = leaf_eval(e, s, &sh->plan, false, slot, &d);
	eval_apply(e, sh, slot, m, d);
}

/* The node in `slot` as the fast leaf reads it. */
static struct leaf_node leaf_node_of(const struct engine *e, const struct snapshot *s,
				     uint32_t slot)
{
	const struct node_alloc *a = ledger_node(e->ledger, slot);
	/* Relaxed loads, as leaf_fast(): a view, the commit decides. */
	return (struct leaf_node){
		.pods = __atomic_load_n(&a->used[RES_PODS], __ATOMIC_RELAXED),
		.uc = __atomic_load_n(&a->used[RES_CPU], __ATOMIC_RELAXED),
		.um = __atomic_load_n(&a->used[RES_MEMORY], __ATOMIC_RELAXED),
		.nz_cpu = __atomic_load_n(&a->used_nonzero_cpu_milli, __ATOMIC_RELAXED),
		.nz_mem = __atomic_load_n(&a->used_nonzero_mem_bytes, __ATOMIC_RELAXED),
		.ac = s->allocatable[RES_CPU][slot],
		.am = s->allocatable[RES_MEMORY][slot],
		.ap = s->allocatable[RES_PODS][slot],
	};
}

/* Prefetches what leaf_node_of(e, s, slot) reads: the two lines of the
 * node's record, and its allocatable (at 100,000 nodes the allocatable's
 * load, not prefetched, took a tenth of index_sync's own samples;
 * prefetched, about as many: the batch's misses are more than the core
 * keeps in flight). */
static inline void prefetch_node(const struct snapshot *s,
				 const struct node_alloc *recs, uint32_t slot)
{
	const char *rec = (const char *)(recs + slot);
	__builtin_prefetch(rec);
	__builtin_prefetch(rec + offsetof(struct node_alloc, used_nonzero_cpu_milli));
	prefetch_allocatable(s, slot);
}

/* Brings the eval's results up to the cluster's change log: each slot the
 * log names, if the eval holds it, evaluated once, and appended to the
 * ring when its result changed. */
void eval_sync(struct engine *e, const struct snapshot *s, struct eval *sh)
{
	uint64_t head = ledger_changes_head(e->ledger);
	if (head == sh->log_pos)
		return;
	if (ledger_changes_rebuild(head, sh->log_pos, sh->n_slots)) {
		eval_rebuild(e, s, sh);
		return;
	}
	/* In batches: a batch's slots are read from the log first and their
	 * results and node records prefetched, so the misses of a batch
	 * overlap instead of following one another (a sync reads about 25
	 * changes on the default; each is a random slot). */
	const struct node_alloc *recs = ledger_nodes(e->ledger);
	uint64_t i = sh->log_pos;
	bool more = true;
	while (more) {
		/* EVAL_SYNC_BATCH of the eval's slots, read on past the
		 * others until the log ends or stalls on an entry. */
		uint32_t batch[EVAL_SYNC_BATCH], n = 0;
		while (more && n < EVAL_SYNC_BATCH) {
			unsigned want = EVAL_SYNC_BATCH - n;
			int got = ledger_changes_read(e->ledger, &i, head, batch + n, want);
			if (got < 0) {
				eval_rebuild(e, s, sh);
				return;
			}
			more = (unsigned)got == want;
			uint32_t end = n + (uint32_t)got;
			for (uint32_t b = n; b < end; b++) {
				uint32_t slot = batch[b];
				if (!eval_holds(e, sh, slot))
					continue;
				batch[n++] = slot;
				prefetch_node(s, recs, slot);
			}
		}
		for (uint32_t b = 0; b < n; b++)
			eval_follow(e, s, sh, batch[b]);
	}
	sh->log_pos = i;
}

/* The warm evals in groups: those whose plans are fast four to a group
 * with their plans laid out by lane, the others apart. */
static void warm_regroup(struct engine *e)
{
	e->warm_changed = false;
	e->n_groups = 0;
	e->n_slow = 0;
	e->warm_col_end = 0;
	for (unsigned w = 0; w < e->n_warm; w++) {
		struct eval *sh = e->warm[w];
		if (sh->col + 1 > e->warm_col_end)
			e->warm_col_end = sh->col + 1;
		if (!sh->plan.fast) {
			e->warm_slow[e->n_slow++] = sh;
			continue;
		}
		if (e->n_groups == 0 || e->groups[e->n_groups - 1].n == 4)
			e->groups[e->n_groups++].n = 0;
		struct warm_group *g = &e->groups[e->n_groups - 1];
		g->sh[g->n++] = sh;
	}
	for (unsigned j = 0; j < e->n_groups; j++) {
		struct warm_group *g = &e->groups[j];
		const struct leaf_fast_plan *k[4];
		for (unsigned i = 0; i < g->n; i++)
			k[i] = &g->sh[i]->plan.f;
		leaf_plans_init(&g->plans, k, g->n);
	}
}

/* Whether the warm eval takes log entry `pos` for `slot`: it has not
 * read the entry, and holds the slot. */
static inline bool warm_takes(const struct engine *e, const struct eval *sh,
			      uint64_t pos, uint32_t slot)
{
	return pos >= sh->log_pos && eval_holds(e, sh, slot);
}

/* Brings every warm eval (read by a class within EVALS_WARM_CHANGES
 * changes) up to the change log in one pass. On the default an eval is
 * read about once a change, so eval_sync() alone had one change per
 * call: each of the ~15 evals that follow a change read the node and
 * waited on its own result line in turn, and evaluated it alone (its
 * divisions one at a time). Here a batch's nodes are read once for all
 * warm evals, their result lines prefetched before the first
 * evaluation, and the fast plans evaluated four at a time
 * (leaf_fast_plans(); a lane it leaves out by eval_follow()). Each eval
 * gets what eval_sync() would give it: the entries from its own log
 * position on, in log order. An eval goes cold when no class has read it
 * for EVALS_WARM_CHANGES changes (looked for every 64, so an eval nobody
 * reads again costs at most EVALS_WARM_CHANGES + 64 changes'
 * evaluations), or when it is so far behind that its own sync would read
 * it whole again (eval_sync()'s test). */
void evals_sync_warm(struct engine *e, const struct snapshot *s)
{
	uint64_t head = ledger_changes_head(e->ledger);
	if (e->warm_pos == head)
		return;
	e->warm_pos = head;
	/* Evals no class has read lately go cold, looked for every 64
	 * changes, not every pass: the test reads each warm eval, 23 on the
	 * default, for every pod. */
	if (head - e->warm_checked >= 64) {
		e->warm_checked = head;
		for (unsigned w = 0; w < e->n_warm;) {
			if (head - e->warm[w]->used_pos > EVALS_WARM_CHANGES)
				eval_cool(e, w); /* e->warm[w] is another now */
			else
				w++;
		}
	}
	/* Every warm eval has read the log at least to warm_from (the last
	 * pass's end, or an eval's own position when it joined; an eval's
	 * own sync only moves it on), so the pass starts there; an eval
	 * further on skips what it has read (warm_takes()). */
	uint64_t from = e->warm_from;
	if (head - from > 64) {
		/* Behind since the last pass (an eval alone, or a pass cut
		 * short): from the evals' own positions, and one so far behind
		 * that its own sync would read it whole goes cold. */
		from = head;
		for (unsigned w = 0; w < e->n_warm;) {
			const struct eval *sh = e->warm[w];
			if (ledger_changes_rebuild(head, sh->log_pos, sh->n_slots)) {
				eval_cool(e, w);
				continue;
			}
			from = sh->log_pos < from ? sh->log_pos : from;
			w++;
		}
		e->warm_from = from;
	}
	if (e->n_warm < 2 || from >= head)
		return; /* nothing to share: its own sync */
	if (e->warm_changed)
		warm_regroup(e);
	const struct node_alloc *recs = ledger_nodes(e->ledger);
	uint64_t i = from;
	for (bool more = true; more;) {
		uint32_t batch[EVAL_SYNC_BATCH];
		uint64_t first = i; /* batch[b] is entry first + b */
		int got = ledger_changes_read(e->ledger, &i, head, batch, EVAL_SYNC_BATCH);
		if (got < 0)
			return; /* overwritten: each eval's own sync reads it whole */
		more = got == EVAL_SYNC_BATCH;
		for (int b = 0; b < got; b++) {
			prefetch_node(s, recs, batch[b]);
			prefetch_eval_row(e, batch[b]);
		}
		for (int b = 0; b < got; b++) {
			uint32_t slot = batch[b];
			uint64_t pos = first + (uint64_t)b;
			struct leaf_node v = leaf_node_of(e, s, slot);
			for (unsigned j = 0; j < e->n_groups; j++) {
				struct warm_group *g = &e->groups[j];
				unsigned lanes = 0;
				for (unsigned w = 0; w < g->n; w++)
					lanes |= (unsigned)warm_takes(e, g->sh[w], pos, slot) << w;
				if (lanes == 0)
					continue;
				uint32_t m[4];
				int64_t d[4];
				unsigned done = leaf_fast_plans(&g->plans, &v, m, d);
				for (unsigned w = 0; w < g->n; w++) {
					if (!((lanes >> w) & 1))
						continue;
					if ((done >> w) & 1)
						eval_apply(e, g->sh[w], slot, m[w], d[w]);
					else
						eval_follow(e, s, g->sh[w], slot);
				}
			}
			for (unsigned w = 0; w < e->n_slow; w++)
				if (warm_takes(e, e->warm_slow[w], pos, slot))
					eval_follow(e, s, e->warm_slow[w], slot);
		}
	}
	for (unsigned w = 0; w < e->n_warm; w++)
		if (i > e->warm[w]->log_pos)
			e->warm[w]->log_pos = i;
	e->warm_from = i;
}

/* The eval table's bytes in use, as the class cache counts them: every
 * column of the rows any eval holds. */
static size_t eval_table_size(const struct engine *e)
{
	return (size_t)e->eval_cols * e->eval_rows * sizeof(struct eval_leaf);
}

/* The eval table made `cols` wide (0: freed), the live evals' columns
 * copied to columns 0.. in list order and the rest free: the rows in use
 * are read once (at 100,000 nodes and 32 columns, about 25 MB; once per
 * doubling or halving). Returns 0, or -ENOMEM (the table stays as it
 * was). */
static int eval_table_resize(struct engine *e, uint32_t cols)
{
	uint32_t live = e->eval_cols - e->n_eval_free;
	struct eval_leaf *t = NULL;
	uint32_t *f = NULL, *was = NULL;
	if (cols > 0) {
		size_t rows = cluster_capacity(e->cluster);
		/* calloc: the rows no slot reaches are never backed. */
		t = calloc(rows ? rows : 1, cols * sizeof(*t));
		f = malloc(cols * sizeof(*f));
		was = malloc((live ? live : 1) * sizeof(*was));
		if (t == NULL || f == NULL || was == NULL) {
			free(t);
			free(f);
			free(was);
			return -ENOMEM;
		}
	}
	size_t size_was = eval_table_size(e);
	uint32_t c = 0;
	for (struct eval *sh = e->evals; sh != NULL; sh = sh->next) {
		was[c] = sh->col;
		sh->col = c++;
	}
	e->warm_changed = true; /* warm_col_end, from the new columns */
	for (uint32_t r = 0; r < e->eval_rows && c > 0; r++) {
		const struct eval_leaf *from = e->eval_leaf + (size_t)r * e->eval_cols;
		struct eval_leaf *to = t + (size_t)r * cols;
		for (uint32_t i = 0; i < c; i++)
			to[i] = from[was[i]];
	}
	free(was);
	free(e->eval_leaf);
	free(e->eval_free);
	e->eval_leaf = t;
	e->eval_free = f;
	e->eval_cols = cols;
	e->n_eval_free = 0;
	for (uint32_t i = cols; i > c; i--)
		e->eval_free[e->n_eval_free++] = i - 1;
	if (cols == 0)
		e->eval_rows = 0;
	e->class_bytes = e->class_bytes - size_was + eval_table_size(e);
	e->stats.shape_resizes += c > 0;
	return 0;
}

/* A free column of the eval table for an eval of n_slots slots, the
 * table twice as wide when none is. Returns it, or UINT32_MAX when out
 * of memory. */
static uint32_t eval_col_take(struct engine *e, uint32_t n_slots)
{
	if (e->n_eval_free == 0 &&
	    eval_table_resize(e, e->eval_cols ? e->eval_cols * 2 : e->eval_cols_min) < 0)
		return UINT32_MAX;
	if (n_slots > e->eval_rows) {
		size_t size_was = eval_table_size(e);
		e->eval_rows = n_slots;
		e->class_bytes = e->class_bytes - size_was + eval_table_size(e);
	}
	return e->eval_free[--e->n_eval_free];
}

/* Class k's eval, made or shared (its slots are added by
 * eval_add_word). Returns 0 or -ENOMEM. */
int eval_attach(struct engine *e, const struct snapshot *s, struct eclass *k)
{
	struct pod_spec key;
	eval_key(&k->spec, &key);
	uint64_t h = pod_class_hash(&key);
	struct eval *sh = e->evals;
	while (sh != NULL && (sh->hash != h || !pod_class_equal(&sh->spec, &key)))
		sh = sh->next;
	size_t words = s->n_slots / 64 + 1;
	if (sh == NULL) {
		sh = calloc(1, sizeof(*sh));
		if (sh == NULL)
			return -ENOMEM;
		sh->hash = h;
		sh->spec = key;
		leaf_plan_init(e, &sh->plan, &sh->spec);
		sh->n_slots = s->n_slots;
		sh->member = calloc(words, sizeof(*sh->member));
		sh->col = sh->member != NULL ? eval_col_take(e, s->n_slots) : UINT32_MAX;
		if (sh->col == UINT32_MAX) {
			free(sh->member);
			free(sh);
			return -ENOMEM;
		}
		sh->log_pos = ledger_changes_head(e->ledger);
		/* Its column is counted with the table (eval_table_size()). */
		sh->bytes = sizeof(*sh) + words * sizeof(*sh->member);
		e->class_bytes += sh->bytes;
		sh->next = e->evals;
		e->evals = sh;
		e->stats.shapes++;
	}
	e->stats.shape_shares += sh->refs > 0;
	sh->refs++;
	k->eval = sh;
	return 0;
}

/* The node in `slot` changed: an eval that holds the slot reads it again
 * (its classes replay the ring; one whose static results refuse the slot
 * now ignores it). */
void eval_node_changed(struct engine *e, const struct snapshot *s,
		       struct eval *sh, uint32_t slot)
{
	if (eval_holds(e, sh, slot))
		eval_follow(e, s, sh, slot);
}

uint64_t engine_shape_table_violations(const struct engine *e)
{
	if (e->eval_leaf == NULL)
		return 0;
	uint64_t bad = 0;
	uint8_t *live = calloc(e->eval_cols ? e->eval_cols : 1, 1);
	if (live == NULL)
		return UINT64_MAX;
	for (const struct eval *sh = e->evals; sh != NULL; sh = sh->next) {
		live[sh->col] = 1;
		for (uint32_t r = 0; r < e->eval_rows; r++) {
			const struct eval_leaf *l = leaf_of(e, sh, r);
			bool member = r < sh->n_slots && ((sh->member[r / 64] >> (r % 64)) & 1);
			bool zeros = l->nmask == 0 && l->d == 0;
			bad += member ? leaf_mask(l) == EVAL_UNHELD : !zeros;
		}
	}
	for (uint32_t c = 0; c < e->eval_cols; c++)
		for (uint32_t r = 0; r < e->eval_rows && !live[c]; r++) {
			const struct eval_leaf *l = &e->eval_leaf[(size_t)r * e->eval_cols + c];
			bad += l->nmask != 0 || l->d != 0;
		}
	free(live);
	return bad;
}

void engine_set_shape_cols_min(struct engine *e, uint32_t cols)
{
	e->eval_cols_min = cols > 0 ? cols : 1;
}
