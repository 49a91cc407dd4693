/* What engine_sync.c gives the engine's files above it (engine_scan.c,
 * engine.c): a new snapshot generation followed (or every cache flushed)
 * and a class's index brought up to the change log's head, or built
 * again. engine_sync.c calls engine_classes.c, engine_evals.c,
 * engine_leaf.c and engine_score.c. */
#ifndef SHMSCHED_WORKERS_ENGINE_SYNC_INTERNAL_H
#define SHMSCHED_WORKERS_ENGINE_SYNC_INTERNAL_H

#include "workers/engine_types_internal.h"

void index_rebuild(struct engine *e, const struct snapshot *s, struct eclass *k);
void index_sync(struct engine *e, const struct snapshot *s, struct eclass *k);
int sync_generation(struct engine *e, const struct snapshot *s);

#endif
