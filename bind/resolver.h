/* The optimistic conflict resolver: place with the engine, commit without
 * locks, and when another thread's commit took what the pod needed, place
 * again, a bounded number of times.
 *
 * A placement reads counters that other workers are changing; its commit
 * (engine_commit -> cluster_reserve) re-checks them with compare-and-swap
 * and refuses rather than overcommit. A refused commit is a conflict: the
 * pod is placed again against the counters as they are now (with the next
 * random stream, so a tie goes elsewhere), at most RESOLVER_MAX_ATTEMPTS
 * times in all. No overcommit, ever: every counter stays within
 * allocatable at every instant (shm/cluster.h, struct node_alloc).
 *
 * Concurrency: one resolver call per engine at a time; any number of
 * threads, each with its own engine, on one cluster.
 */
#ifndef SHMSCHED_BIND_RESOLVER_H
#define SHMSCHED_BIND_RESOLVER_H

#include <stdbool.h>
#include <stdint.h>

#include "shm/model.h"
#include "workers/engine.h"

#define RESOLVER_MAX_ATTEMPTS 8

/* Per worker: written by their worker alone with resolver_stat_add()
 * (relaxed atomic stores), so other threads may read them, relaxed, while
 * it runs. */
struct resolver_stats {
	uint64_t placed;
	uint64_t unschedulable;  /* no feasible node (engine_message() says why) */
	uint64_t conflicts;      /* commits refused: placed again */
	uint64_t gave_up;        /* still conflicting after every attempt */
};

/* Adds one to a counter only its owner writes. Relaxed: a tally, read by
 * others as an approximate figure; the atomic store keeps it race-free. */
static inline void resolver_stat_add(uint64_t *counter)
{
	__atomic_store_n(counter, *counter + 1, __ATOMIC_RELAXED);
}

struct resolve_result {
	struct placement placement; /* slot -1 unless committed */
	uint32_t attempts;          /* placements made, 1..RESOLVER_MAX_ATTEMPTS */
	bool gave_up;               /* every attempt found a node and lost it */
};

/* Places and commits `pod`, the `seq`-th of its stream. Returns 0, or
 * -ENOMEM from the engine (nothing committed). */
int resolver_place(struct engine *e, const struct pod_spec *pod, uint64_t seq,
		   struct resolve_result *out, struct resolver_stats *st);

#endif
