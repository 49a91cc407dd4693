/* What engine_score.c gives the engine's files above it (engine_leaf.c,
 * engine_sync.c, engine_scan.c, engine.c): a node read as the plugins see
 * it, the raw scores, the selection, the inter-pod scores and a placed
 * pod's devices. engine_score.c calls no other engine file. */
#ifndef SHMSCHED_WORKERS_ENGINE_SCORE_INTERNAL_H
#define SHMSCHED_WORKERS_ENGINE_SCORE_INTERNAL_H

#include "workers/engine_types_internal.h"

void score_dynamic(struct engine *e, const struct score_config *sc,
		   const struct score_plan *sp, const struct pod_spec *pod,
		   const struct node_view *v, bool skip_balanced,
		   struct candidate *cd);
void score_static(const struct plugin_ctx *ctx, const struct score_config *sc,
		  bool affinity, const struct pod_spec *pod,
		  const struct node_spec *node, struct candidate *cd);
void select_best(struct engine *e, const struct pod_spec *pod, uint32_t n,
		 uint64_t *rng, const struct engine_explain *x,
		 struct placement *out);
void select_plain(struct engine *e, const struct eclass *k,
		  const struct pod_spec *pod, uint32_t n, uint64_t *rng,
		  struct placement *out);
void assign_devices(struct engine *e, const struct snapshot *s,
		    const struct pod_spec *pod, struct placement *out);
int interpod_scores(struct engine *e, const struct snapshot *s,
		    const struct pod_spec *pod, uint32_t n);
void read_node(struct ledger *l, const struct snapshot *s, uint32_t slot,
	       const struct pod_spec *pod, bool devices, struct node_read *r);

#endif
