/* What engine_scan.c gives engine.c, the one file above it: the visits
 * of the fast path (an indexed class's pick, a class's scan of its static
 * results, the scan of its leaves under inter-pod rules). engine_scan.c
 * calls engine_sync.c, engine_leaf.c and engine_score.c. */
#ifndef SHMSCHED_WORKERS_ENGINE_SCAN_INTERNAL_H
#define SHMSCHED_WORKERS_ENGINE_SCAN_INTERNAL_H

#include "workers/engine_types_internal.h"

void place_indexed(struct engine *e, const struct snapshot *s,
		   struct eclass *k, struct pass *p, struct placement *out);
int place_scan(struct engine *e, const struct snapshot *s,
	       struct eclass *k, const struct pod_spec *pod,
	       struct pass *p, struct placement *out);
int place_scan_leaves(struct engine *e, const struct snapshot *s,
		      const struct eclass *k, const struct pod_spec *pod,
		      struct pass *p, struct placement *out);

#endif
