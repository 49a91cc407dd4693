/* What engine_leaf.c gives the engine's files above it (engine_evals.c,
 * engine_classes.c, engine_sync.c, engine_scan.c): a node's static
 * filters and scores, a leaf's plan, a leaf's evaluation (leaf_eval: the
 * fast rules inline, the general ones leaf_general()'s) and the counting
 * of its reasons. engine_leaf.c calls engine_score.c alone. */
#ifndef SHMSCHED_WORKERS_ENGINE_LEAF_INTERNAL_H
#define SHMSCHED_WORKERS_ENGINE_LEAF_INTERNAL_H

#include "workers/engine_types_internal.h"

bool static_feasible(const struct plugin_ctx *ctx, const struct score_config *sc,
		     const struct snapshot *s, const struct pod_spec *pod,
		     uint32_t i, struct reason *why);
void static_slot(const struct plugin_ctx *ctx, const struct score_config *sc,
		 const struct snapshot *s, const struct pod_spec *pod, uint32_t i,
		 uint32_t *feasible, uint32_t *n_feasible, int32_t *affinity_raw,
		 int32_t *taint_raw, struct diagnosis *diag, struct reason *whys);
void leaf_plan_init(const struct engine *e, struct leaf_plan *lp,
		    const struct pod_spec *pod);
uint32_t leaf_general(struct engine *e, const struct snapshot *s,
		      const struct leaf_plan *k, bool ix_ip, uint32_t slot,
		      const struct node_alloc *a, int64_t *d);
void reasons_add(struct reason_counts *c, const struct leaf_plan *lp,
		 uint32_t m, int sign);

/* Inline for the fast plan; the general rules (and their large frame) in
 * a call of their own. */
static inline uint32_t leaf_eval(struct engine *e, const struct snapshot *s,
				 const struct leaf_plan *k, bool ix_ip, uint32_t slot,
				 int64_t *d)
{
	const struct node_alloc *a = ledger_node(e->ledger, slot);
	if (k->fast && !ix_ip) {
		bool general = false;
		uint32_t m = leaf_fast(&k->f, a, s->allocatable[RES_CPU][slot],
				       s->allocatable[RES_MEMORY][slot],
				       s->allocatable[RES_PODS][slot], d, &general);
		if (!general)
			return m;
	}
	return leaf_general(e, s, k, ix_ip, slot, a, d);
}

#endif
