/* The class cache (see engine_types_internal.h for the files and the
 * cache table): a pod's class found by spec address, hash or static sibling
 * (class_get); a class compiled a bounded amount at a time (class_work:
 * static filters and scores, then its index's members and groups, its
 * eval's slots, its leaves), paid for by pods (ENGINE_POD_BUDGET) and
 * idle calls (ENGINE_IDLE_BUDGET); the cache's byte budget (evict_cold,
 * a flush past it); and the classes compiled ahead for a template
 * (class_prepare, engine_prepare's once engine.c has followed the
 * generation), let go when unused (sweep_prepared). Calls run down: called
 * by engine_sync.c and engine.c; calls engine_evals.c and engine_leaf.c. */
#include "workers/engine_classes_internal.h"
#include "workers/engine_evals_internal.h"
#include "workers/engine_leaf_internal.h"

static void class_free(struct engine *e, struct eclass *k)
{
	if (k == NULL)
		return;
	e->class_epoch++; /* no memo entry may name it now */
	eval_release(e, k->eval);
	free(k->feasible);
	free(k->affinity_raw);
	free(k->taint_raw);
	class_index_free(&k->ix);
	free(k->word);
	free(k->static_diag);
	free(k->why);
	interpod_view_free(k->ipv);
	free(k);
}

void flush_classes(struct engine *e)
{
	for (uint32_t i = 0; i <= e->table_mask; i++) {
		class_free(e, e->table[i]);
		e->table[i] = NULL;
	}
	memset(e->seen, 0, SEEN_SLOTS * sizeof(*e->seen));
	memset(e->by_static, 0, sizeof(e->by_static));
	e->pending = e->pending_tail = NULL;
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

/* A new class for `pod` (hash h), its static results not read yet
 * (PHASE_STATIC). NULL with errno ENOMEM. */
static struct eclass *class_new(struct engine *e, const struct snapshot *s,
				const struct pod_spec *pod, uint64_t h)
{
	struct eclass *k = calloc(1, sizeof(*k));
	if (k == NULL)
		return NULL;
	k->hash = h;
	k->spec = *pod;
	k->spec.ns_name = 0;
	k->n_pos = s->n_slots;
	size_t n = s->n_slots ? s->n_slots : 1;
	k->feasible = malloc(n * sizeof(*k->feasible));
	k->static_diag = malloc(sizeof(*k->static_diag));
	k->why = calloc(n, sizeof(*k->why));
	const struct score_config *sc = sc_of(e, pod);
	bool aff = wants_affinity_score(e, pod), taint = sc->weight_taint > 0;
	if (aff)
		k->affinity_raw = calloc(n, sizeof(*k->affinity_raw));
	if (taint)
		k->taint_raw = calloc(n, sizeof(*k->taint_raw));
	if (k->feasible == NULL || k->static_diag == NULL || k->why == NULL ||
	    (aff && k->affinity_raw == NULL) || (taint && k->taint_raw == NULL)) {
		class_free(e, k);
		errno = ENOMEM;
		return NULL;
	}
	leaf_plan_init(e, &k->plan, &k->spec);
	diagnosis_reset(k->static_diag);
	k->bytes = sizeof(*k) + sizeof(*k->static_diag) +
		   n * (sizeof(uint32_t) + sizeof(*k->why) + (aff ? 4 : 0) + (taint ? 4 : 0));
	/* Not hot yet: the pod that compiles a class proves nothing about
	 * the next; an index is built once a pod follows within `want`
	 * changes (index_ready). */
	k->last_use = LAST_USE_NEVER;
	k->phase = PHASE_STATIC;
	return k;
}

/* Its static results are in: its pods may scan it. */
static void static_done(struct engine *e, struct eclass *k)
{
	k->raw_set = 0;
	for (uint32_t i = 0; i < k->n_pos; i++)
		k->raw_set += raw_of(k, i);
	k->phase = PHASE_SCAN;
	k->cursor = 0;
	/* Now a first-sight pod that differs only in requests may scan it. */
	e->by_static[pod_static_hash(&k->spec) & (STATIC_SLOTS - 1)] = k;
}

/* Static filters and scores of slots from k->cursor, within *budget. */
static void work_static(struct engine *e, const struct snapshot *s, struct eclass *k,
			int64_t *budget)
{
	const struct score_config *sc = sc_of(e, &k->spec);
	for (; k->cursor < k->n_pos && *budget > 0; k->cursor++) {
		*budget -= COST_STATIC;
		static_slot(&e->ctx, sc, s, &k->spec, k->cursor, k->feasible, &k->n_feasible,
			    k->affinity_raw, k->taint_raw, k->static_diag, k->why);
	}
	if (k->cursor < k->n_pos)
		return;
	static_done(e, k);
}

/* Class k (new, PHASE_STATIC) takes static results read elsewhere for the
 * same snapshot and static key: they are what work_static would find. */
static void class_adopt(struct engine *e, struct eclass *k, uint32_t n_feasible,
			const uint32_t *feasible, const int32_t *affinity_raw,
			const int32_t *taint_raw, const struct diagnosis *diag,
			const struct reason *why)
{
	size_t n = k->n_pos;
	memcpy(k->why, why, n * sizeof(*k->why));
	k->n_feasible = n_feasible;
	memcpy(k->feasible, feasible, n_feasible * sizeof(*k->feasible));
	if (k->affinity_raw != NULL && affinity_raw != NULL)
		memcpy(k->affinity_raw, affinity_raw, n * sizeof(*k->affinity_raw));
	if (k->taint_raw != NULL && taint_raw != NULL)
		memcpy(k->taint_raw, taint_raw, n * sizeof(*k->taint_raw));
	*k->static_diag = *diag;
	k->cursor = k->n_pos;
	static_done(e, k);
}

/* Starts the index: whether the profile's weights keep d in an int32, and
 * the per-slot arrays. Returns 0 (k->phase DONE when refused) or -ENOMEM. */
static int index_begin(struct engine *e, struct eclass *k)
{
	const struct score_config *sc = sc_of(e, &k->spec);
	/* d must fit the index's words (weights up to about 2,600 in all;
	 * they are small in practice). */
	if (sc->weight_fit < 0 || sc->weight_balanced < 0 ||
	    sc->weight_gpu_best_fit < 0 || sc->weight_gpu_frag < 0 ||
	    (sc->weight_fit + sc->weight_balanced + sc->weight_gpu_best_fit +
	     sc->weight_gpu_frag) * MAX_NODE_SCORE * SCORE_FINE > CLASS_INDEX_D_MAX) {
		k->phase = PHASE_DONE;
		return 0;
	}
	size_t n = k->n_pos ? k->n_pos : 1;
	k->word = calloc(n, sizeof(*k->word));
	if (k->word == NULL)
		return -ENOMEM;
	class_grew(e, k, n * sizeof(*k->word));
	k->n_groups = 0;
	k->cursor = 0;
	k->phase = PHASE_GROUPS;
	return 0;
}

/* Members and groups (nodes with the same static raw scores) of the
 * feasible slots from k->cursor; past CLASS_INDEX_MAX_GROUPS the class is
 * refused an index and scans. Then the index and, for a class whose
 * leaves read no devices, its eval. */
static int work_groups(struct engine *e, const struct snapshot *s, struct eclass *k,
		       int64_t *budget)
{
	for (; k->cursor < k->n_feasible && *budget > 0; k->cursor++) {
		uint32_t slot = k->feasible[k->cursor];
		*budget -= COST_GROUP;
		int32_t t = k->taint_raw ? k->taint_raw[slot] : 0;
		int32_t a = k->affinity_raw ? k->affinity_raw[slot] : 0;
		unsigned g = 0;
		while (g < k->n_groups && (k->group_taint[g] != t || k->group_aff[g] != a))
			g++;
		if (g == k->n_groups) {
			if (g == CLASS_INDEX_MAX_GROUPS) {
				k->phase = PHASE_DONE; /* too many: the class scans */
				return 0;
			}
			k->group_taint[g] = t;
			k->group_aff[g] = a;
			k->n_groups++;
		}
		k->word[slot] = CW_MEMBER | (uint32_t)g << CW_GROUP_SHIFT;
	}
	if (k->cursor < k->n_feasible)
		return 0;
	int rc = class_index_init(&k->ix, k->n_pos, k->n_groups ? k->n_groups : 1);
	if (rc < 0)
		return rc;
	class_grew(e, k, class_index_bytes(&k->ix));
	k->cursor = 0;
	/* A class whose leaves read devices (whose scores may depend on the
	 * fragmentation mix) evaluates its own. */
	if (k->plan.devices) {
		k->phase = PHASE_FILL;
		k->log_pos = index_head(e, k);
		k->mix_epoch = e->mix.epoch;
		index_counts_reset(k);
		return 0;
	}
	if ((rc = eval_attach(e, s, k)) < 0)
		return rc;
	k->phase = PHASE_EVAL;
	return 0;
}

/* The members among slots 64 w .. 64 w + 63 of class k, a bit each. */
static uint64_t members_of(const struct eclass *k, size_t w)
{
	uint64_t bits = 0;
	uint32_t lo = (uint32_t)(w * 64), hi = k->n_pos - lo < 64 ? k->n_pos : lo + 64;
	for (uint32_t slot = lo; slot < hi; slot++)
		bits |= (uint64_t)((k->word[slot] & CW_MEMBER) != 0) << (slot - lo);
	return bits;
}

/* The eval evaluates the class's slots it did not hold, 64 at a time. */
static void work_eval(struct engine *e, const struct snapshot *s, struct eclass *k,
		       int64_t *budget)
{
	struct eval *sh = k->eval;
	size_t words = k->n_pos / 64 + 1;
	for (; k->cursor < words && *budget > 0; k->cursor++)
		*budget -= COST_EVAL * eval_add_word(e, s, sh, members_of(k, k->cursor),
						      k->cursor);
	if (k->cursor < words)
		return;
	/* The leaves come from the eval's results as they are now; what
	 * changes while they are copied is in its ring after here. */
	eval_sync(e, s, sh);
	k->eval_pos = sh->head;
	k->eval_epoch = sh->epoch;
	k->mix_epoch = e->mix.epoch;
	index_counts_reset(k);
	k->cursor = 0;
	k->phase = PHASE_FILL;
}

/* The leaves of the feasible slots from k->cursor: the eval's results,
 * or the class's own (a change logged while they are read is read again
 * by the next index_sync, from k->log_pos). */
static void work_fill(struct engine *e, const struct snapshot *s, struct eclass *k,
		      int64_t *budget)
{
	bool own = !from_eval(k);
	for (; k->cursor < k->n_feasible && *budget > 0; k->cursor++) {
		uint32_t slot = k->feasible[k->cursor], m;
		int64_t d = 0;
		if (own) {
			*budget -= COST_EVAL;
			m = leaf_eval(e, s, &k->plan, k->ix_ip, slot, &d);
		} else {
			*budget -= COST_FILL;
			const struct eval_leaf *l = leaf_of(e, k->eval, slot);
			m = leaf_mask(l);
			d = l->d;
		}
		uint32_t w = k->word[slot];
		k->word[slot] = (w & ~CW_REASONS) | m;
		reasons_add(&k->dyn, &k->plan, m, +1);
		class_index_set_leaf(&k->ix, slot, cw_group(w), m == 0, (int32_t)d);
	}
	if (k->cursor < k->n_feasible)
		return;
	class_index_build(&k->ix);
	k->indexed = true;
	k->phase = PHASE_DONE;
	e->stats.index_rebuilds++;
}

/* Compiles class k within *budget (lowered by what it spent). Returns 0 or
 * -ENOMEM. */
int class_work(struct engine *e, const struct snapshot *s, struct eclass *k,
	       int64_t *budget)
{
	int rc = 0;
	while (rc == 0 && *budget > 0 && !class_settled(k)) {
		switch ((enum class_phase)k->phase) {
		case PHASE_STATIC:
			work_static(e, s, k, budget);
			break;
		case PHASE_SCAN:
			rc = index_begin(e, k);
			break;
		case PHASE_GROUPS:
			rc = work_groups(e, s, k, budget);
			break;
		case PHASE_EVAL:
			work_eval(e, s, k, budget);
			break;
		case PHASE_FILL:
			work_fill(e, s, k, budget);
			break;
		case PHASE_DONE:
			break;
		}
	}
	return rc;
}

/* Spends `budget` on the queue of classes being compiled, first come
 * first served. Returns 0 or -ENOMEM. */
int engine_work(struct engine *e, const struct snapshot *s, int64_t budget)
{
	while (budget > 0 && e->pending != NULL) {
		struct eclass *k = e->pending;
		int rc = class_work(e, s, k, &budget);
		if (rc < 0)
			return rc;
		if (class_settled(k)) {
			k->queued = false;
			e->pending = k->next_pending;
			if (e->pending == NULL)
				e->pending_tail = NULL;
		}
	}
	return 0;
}

static void class_insert(struct engine *e, struct eclass *k)
{
	uint32_t i = (uint32_t)k->hash & e->table_mask;
	while (e->table[i] != NULL)
		i = (i + 1) & e->table_mask;
	e->table[i] = k;
	e->n_classes++;
	if (k->phase != PHASE_STATIC)
		e->by_static[pod_static_hash(&k->spec) & (STATIC_SLOTS - 1)] = k;
}

/* Frees every class without an index, keeping the hot ones. */
static void evict_cold(struct engine *e)
{
	uint32_t n = e->table_mask + 1, m = 0;
	struct eclass **hot = calloc(n, sizeof(*hot));
	if (hot == NULL) {
		flush_classes(e);
		return;
	}
	for (uint32_t i = 0; i < n; i++) {
		struct eclass *k = e->table[i];
		e->table[i] = NULL;
		if (k == NULL)
			continue;
		if (k->indexed || k->want_index) {
			hot[m++] = k;
		} else {
			e->class_bytes -= k->bytes;
			class_free(e, k);
		}
	}
	memset(e->by_static, 0, sizeof(e->by_static));
	e->n_classes = 0;
	e->pending = e->pending_tail = NULL;
	for (uint32_t j = 0; j < m; j++) {
		class_insert(e, hot[j]);
		if (hot[j]->queued) {
			hot[j]->queued = false;
			pending_push(e, hot[j]);
		}
	}
	free(hot);
	e->stats.class_evictions++;
}

/* Adds class k to the cache, within its memory budget. Returns 0, or
 * -ENOMEM (k is freed). */
static int class_add(struct engine *e, struct eclass *k)
{
	/* Over the memory budget: drop the cold classes (no index), which
	 * cost only a scan to compile again; if that is not enough, start
	 * over rather than evict one by one. */
	if (e->class_bytes + k->bytes > e->class_bytes_max)
		evict_cold(e);
	if (e->class_bytes + k->bytes > e->class_bytes_max) {
		flush_classes(e);
	} else if ((e->n_classes + 1) * 2 > e->table_mask + 1 && grow_classes(e) < 0) {
		class_free(e, k);
		return -ENOMEM;
	}
	class_insert(e, k);
	e->class_bytes += k->bytes;
	return 0;
}

static struct eclass *class_find(struct engine *e, const struct pod_spec *pod,
				 uint64_t h)
{
	for (uint32_t i = (uint32_t)h & e->table_mask; e->table[i] != NULL;
	     i = (i + 1) & e->table_mask) {
		struct eclass *k = e->table[i];
		if (k->hash == h && pod_class_equal(&k->spec, pod))
			return k;
	}
	return NULL;
}

/* The compiled class that differs from `pod` only in its requests, or
 * NULL. */
struct eclass *sibling_of(struct engine *e, const struct pod_spec *pod)
{
	struct eclass *base = e->by_static[pod_static_hash(pod) & (STATIC_SLOTS - 1)];
	if (base == NULL || base->phase == PHASE_STATIC || !pod_static_equal(&base->spec, pod))
		return NULL;
	return base;
}

/* The pod's class once its static results are in. Sets *first_sight and
 * returns NULL the first time a spec is seen (the caller scans without a
 * class), and while its class is still being compiled (the second sight
 * queues it; pods give the queue a budget, engine_place). With
 * `lazy_want` > 0, a spec that has a compiled sibling (sibling_of) gets a
 * class of its own only once it has come SIBLING_STREAK times in a row
 * each within `lazy_want` changes of the sight before (index_ready()'s
 * test for hot, passed more than once: one repeat of a pod with random
 * extras is chance). Its class would copy the sibling's static results
 * (megabytes at 100,000 nodes, from the cache's budget) and, until it is
 * indexed, scan them as the sibling's pods do; so until then it is a
 * first sight too, and scans the sibling. NULL without *first_sight: out
 * of memory. */
struct eclass *class_memo_ungrouped(struct engine *e, const struct pod_spec *pod)
{
	struct spec_memo *mm = &e->by_address[((uintptr_t)pod * UINT64_C(0x9e3779b97f4a7c15)) >>
					(64 - __builtin_ctz(SPEC_MEMO))];
	if (mm->spec == pod && mm->epoch == e->class_epoch &&
	    mm->k->phase != PHASE_STATIC && pod_class_equal_ungrouped(&mm->k->spec, pod)) {
		e->stats.class_hits++;
		return mm->k;
	}
	return NULL;
}

struct eclass *class_get(struct engine *e, const struct snapshot *s,
			 const struct pod_spec *pod, const struct pod_spec *memo_as,
			 uint32_t lazy_want, bool *first_sight)
{
	*first_sight = false;
	/* The memo saves the hash over the key; the comparison stays, so a
	 * spec whose address held another's (a template freed and another
	 * made there, or a copy with extras) is never taken for it. It is
	 * found by `memo_as`, the template's own address: the fast path's
	 * key (place_fast's fast_key) is one scratch copy for every
	 * template, whose address would share one memo entry among them. */
	struct spec_memo *mm = &e->by_address[((uintptr_t)memo_as * UINT64_C(0x9e3779b97f4a7c15)) >>
					(64 - __builtin_ctz(SPEC_MEMO))];
	if (mm->spec == memo_as && mm->epoch == e->class_epoch &&
	    mm->k->phase != PHASE_STATIC && pod_class_equal(&mm->k->spec, pod)) {
		e->stats.class_hits++;
		return mm->k;
	}
	uint64_t h = pod_class_hash(pod);
	struct eclass *k = class_find(e, pod, h);
	if (k != NULL) {
		if (k->phase == PHASE_STATIC) {
			*first_sight = true;
			return NULL;
		}
		e->stats.class_hits++;
		*mm = (struct spec_memo){memo_as, k, e->class_epoch};
		return k;
	}
	struct seen *seen = &e->seen[h & (SEEN_SLOTS - 1)];
	uint64_t head = ledger_changes_head(e->ledger);
	*first_sight = true;
	if (seen->hash != h) {
		*seen = (struct seen){h, head, 0};
		return NULL;
	}
	seen->streak = head - seen->head <= lazy_want ? seen->streak + 1 : 0;
	seen->head = head;
	if (lazy_want > 0 && seen->streak < SIBLING_STREAK && sibling_of(e, pod) != NULL) {
		e->stats.cold_siblings++;
		return NULL;
	}
	e->stats.class_misses++;
	k = class_new(e, s, pod, h);
	if (k == NULL || class_add(e, k) < 0) {
		*first_sight = false;
		return NULL;
	}
	/* A spec that differs from a compiled class only in its requests
	 * (a template's pod with extras, seen again) has that class's static
	 * results: copied, not read again; its pods scan it from now on. */
	struct eclass *base = sibling_of(e, pod);
	if (base != NULL && base != k && base->n_pos == k->n_pos) {
		class_adopt(e, k, base->n_feasible, base->feasible, base->affinity_raw,
			    base->taint_raw, base->static_diag, base->why);
		e->stats.static_siblings++;
		*first_sight = false;
		e->stats.class_hits++;
		return k;
	}
	pending_push(e, k);
	return NULL;
}

struct class_static {
	uint64_t generation;    /* of the snapshot it was read from */
	uint32_t n_slots;
	uint32_t n_feasible;
	uint32_t *feasible;     /* [n_slots] */
	int32_t *affinity_raw;  /* [n_slots] or NULL when not scored */
	int32_t *taint_raw;     /* [n_slots] or NULL when not scored */
	struct reason *why;     /* [n_slots] as eclass.why */
	struct diagnosis diag;
};

void engine_static_free(struct class_static *cs)
{
	if (cs == NULL)
		return;
	free(cs->feasible);
	free(cs->affinity_raw);
	free(cs->taint_raw);
	free(cs->why);
	free(cs);
}

size_t engine_static_bytes_max(uint32_t n_slots)
{
	size_t n = n_slots ? n_slots : 1;
	return sizeof(struct class_static) +
	       n * (sizeof(uint32_t) + sizeof(int32_t) * 2 + sizeof(struct reason));
}

size_t engine_static_bytes(const struct class_static *cs)
{
	if (cs == NULL)
		return 0;
	size_t n = cs->n_slots ? cs->n_slots : 1;
	return sizeof(*cs) + n * (sizeof(*cs->feasible) + sizeof(*cs->why) +
				  (cs->affinity_raw != NULL ? sizeof(int32_t) : 0) +
				  (cs->taint_raw != NULL ? sizeof(int32_t) : 0));
}

struct class_static *engine_static_compile(const struct snapshot *s,
					   const struct plugin_ctx *ctx,
					   const struct sched_config *cfg,
					   const struct pod_spec *pod)
{
	if (pod->profile >= cfg->n_profiles) {
		errno = EINVAL;
		return NULL;
	}
	const struct score_config *sc = &cfg->profiles[pod->profile].score;
	struct class_static *cs = calloc(1, sizeof(*cs));
	if (cs == NULL)
		return NULL;
	size_t n = s->n_slots ? s->n_slots : 1;
	cs->generation = s->generation;
	cs->n_slots = s->n_slots;
	cs->feasible = malloc(n * sizeof(*cs->feasible));
	cs->why = calloc(n, sizeof(*cs->why));
	if (affinity_scored(sc, pod))
		cs->affinity_raw = calloc(n, sizeof(*cs->affinity_raw));
	if (sc->weight_taint > 0)
		cs->taint_raw = calloc(n, sizeof(*cs->taint_raw));
	if (cs->feasible == NULL || cs->why == NULL ||
	    (affinity_scored(sc, pod) && cs->affinity_raw == NULL) ||
	    (sc->weight_taint > 0 && cs->taint_raw == NULL)) {
		engine_static_free(cs);
		errno = ENOMEM;
		return NULL;
	}
	diagnosis_reset(&cs->diag);
	for (uint32_t i = 0; i < s->n_slots; i++)
		static_slot(ctx, sc, s, pod, i, cs->feasible, &cs->n_feasible,
			    cs->affinity_raw, cs->taint_raw, &cs->diag, cs->why);
	return cs;
}

/* engine_prepare()'s class, its snapshot's generation followed already
 * (engine.c). */
int class_prepare(struct engine *e, const struct snapshot *s,
		  const struct pod_spec *pod, const struct class_static *cs)
{
	uint64_t h = pod_class_hash(pod);
	struct eclass *k = class_find(e, pod, h);
	if (k == NULL) {
		k = class_new(e, s, pod, h);
		if (k == NULL || class_add(e, k) < 0)
			return -ENOMEM;
	}
	/* Read for this snapshot, with this class's scores: taken as they
	 * are (a node event since: compiled here, a budget at a time). */
	if (cs != NULL && k->phase == PHASE_STATIC && k->cursor == 0 &&
	    cs->generation == s->generation && cs->n_slots == k->n_pos &&
	    (cs->affinity_raw != NULL) == (k->affinity_raw != NULL) &&
	    (cs->taint_raw != NULL) == (k->taint_raw != NULL)) {
		class_adopt(e, k, cs->n_feasible, cs->feasible, cs->affinity_raw,
			    cs->taint_raw, &cs->diag, cs->why);
		e->stats.static_adopted++;
	}
	k->prepared_ns = e->clock_ns();
	if (!k->want_index) {
		k->want_index = true;
		e->stats.prepared++;
	}
	if (!class_settled(k))
		pending_push(e, k);
	return 0;
}

/* Whether class k was compiled ahead for a template (engine_prepare) and
 * no pod has used it for ENGINE_PREPARED_TTL_NS since. */
static bool prepared_stale(const struct eclass *k, uint64_t now)
{
	return k->prepared_ns != 0 && k->last_use == LAST_USE_NEVER &&
	       now - k->prepared_ns > ENGINE_PREPARED_TTL_NS;
}

/* Issue 41: frees the classes compiled ahead for templates that no pod
 * has used for ENGINE_PREPARED_TTL_NS: a producer that registered many
 * templates and left (or never sent their pods) no longer holds this
 * worker's memory until the class cache budget pushes them out. A pod of
 * such a template later compiles its class again, a budget at a time,
 * placed by a scan meanwhile (the same answer). At most one look a
 * second; a look walks the class table; a sweep rebuilds it as
 * evict_cold() does. */
void sweep_prepared(struct engine *e)
{
	uint64_t now = e->clock_ns();
	if (now < e->next_sweep_ns)
		return;
	e->next_sweep_ns = now + ENGINE_SWEEP_NS;
	uint32_t n = e->table_mask + 1, stale = 0;
	for (uint32_t i = 0; i < n; i++)
		if (e->table[i] != NULL && prepared_stale(e->table[i], now))
			stale++;
	if (stale == 0)
		return;
	struct eclass **keep = calloc(n, sizeof(*keep));
	if (keep == NULL)
		return;
	uint32_t m = 0;
	for (uint32_t i = 0; i < n; i++) {
		struct eclass *k = e->table[i];
		e->table[i] = NULL;
		if (k == NULL)
			continue;
		if (prepared_stale(k, now)) {
			e->class_bytes -= k->bytes;
			class_free(e, k);
		} else {
			keep[m++] = k;
		}
	}
	memset(e->by_static, 0, sizeof(e->by_static));
	e->n_classes = 0;
	e->pending = e->pending_tail = NULL;
	for (uint32_t j = 0; j < m; j++) {
		class_insert(e, keep[j]);
		if (keep[j]->queued) {
			keep[j]->queued = false;
			pending_push(e, keep[j]);
		}
	}
	free(keep);
	e->stats.class_evictions++;
	/* Their pages back to the system, not kept by malloc (an idle
	 * worker's time; once per sweep that freed something). */
	malloc_trim(0);
}
