/* What engine_classes.c gives the engine's files above it
 * (engine_sync.c, engine.c): the class cache's flush, a class found or
 * prepared, its compile a budget at a time, and the sweep of prepared
 * classes no pod asked for. engine_classes.c calls engine_evals.c and
 * engine_leaf.c. */
#ifndef SHMSCHED_WORKERS_ENGINE_CLASSES_INTERNAL_H
#define SHMSCHED_WORKERS_ENGINE_CLASSES_INTERNAL_H

#include "workers/engine_types_internal.h"

void flush_classes(struct engine *e);
int class_work(struct engine *e, const struct snapshot *s, struct eclass *k,
	       int64_t *budget);
int engine_work(struct engine *e, const struct snapshot *s, int64_t budget);
struct eclass *sibling_of(struct engine *e, const struct pod_spec *pod);
/* The class the memo holds for template `pod` on the fast path (its key
 * without the inter-pod group, pod_class_equal_ungrouped), without
 * building the key; NULL: none, ask class_get. */
struct eclass *class_memo_ungrouped(struct engine *e, const struct pod_spec *pod);
struct eclass *class_get(struct engine *e, const struct snapshot *s,
			 const struct pod_spec *pod, const struct pod_spec *memo_as,
			 uint32_t lazy_want, bool *first_sight);
int class_prepare(struct engine *e, const struct snapshot *s,
		  const struct pod_spec *pod, const struct class_static *cs);
void sweep_prepared(struct engine *e);

#endif
