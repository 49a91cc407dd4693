/* What engine_evals.c gives the engine's files above it
 * (engine_classes.c, engine_sync.c): a shared evaluation's life, its sync
 * over the change log, the warm evals' joint pass, a node event it holds,
 * and the slots a class adds to it (eval_add_word, inline). engine_evals.c
 * calls engine_leaf.c alone. */
#ifndef SHMSCHED_WORKERS_ENGINE_EVALS_INTERNAL_H
#define SHMSCHED_WORKERS_ENGINE_EVALS_INTERNAL_H

#include "workers/engine_types_internal.h"
#include "workers/engine_leaf_internal.h"

void eval_release(struct engine *e, struct eval *sh);
void eval_sync(struct engine *e, const struct snapshot *s, struct eval *sh);
void evals_sync_warm(struct engine *e, const struct snapshot *s);
int eval_attach(struct engine *e, const struct snapshot *s, struct eclass *k);
void eval_node_changed(struct engine *e, const struct snapshot *s,
		       struct eval *sh, uint32_t slot);

/* The eval now holds the slots of `member` (bit i: slot 64 w + i) too,
 * each new one evaluated from the counters now (a change logged since the
 * eval's log position is read again by its next sync, so its results
 * stay exact). Returns how many it evaluated. */
static inline unsigned eval_add_word(struct engine *e, const struct snapshot *s,
				     struct eval *sh, uint64_t member, size_t w)
{
	uint64_t add = member & ~sh->member[w];
	unsigned n = 0;
	sh->member[w] |= add;
	for (; add != 0; add &= add - 1, n++) {
		uint32_t slot = (uint32_t)(w * 64) + (uint32_t)__builtin_ctzll(add);
		int64_t d = 0;
		uint32_t m = leaf_eval(e, s, &sh->plan, false, slot, &d);
		eval_store(e, sh, slot, m, d);
	}
	e->stats.shape_evals += n;
	return n;
}

#endif
