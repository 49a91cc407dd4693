/* The optimistic conflict resolver: place with the engine, commit without
 * locks, and when another thread's commit took what the pod needed, place
 * again, a bounded number of times.
 *
 * A placement reads counters that other workers are changing; its commit
 * (bind/commit.h, then the ledger's C1-C3 in shm/ledger.c) re-checks them
 * with compare-and-swap and refuses rather than overcommit. A refused commit is a conflict: the
 * pod is placed again against the counters as they are now (with the next
 * random stream, so a tie goes elsewhere), at most RESOLVER_MAX_ATTEMPTS
 * times in all. No overcommit, ever: every counter stays within
 * allocatable at every instant (shm/ledger.c).
 *
 * Concurrency: one resolver call per engine at a time; any number of
 * threads, each with its own engine, on one cluster.
 */
#ifndef SHMSCHED_BIND_RESOLVER_H
#define SHMSCHED_BIND_RESOLVER_H

#include <stdbool.h>
#include <stdint.h>

#include "base/base.h"
#include "shm/shm.h"
#include "workers/workers.h"

#define RESOLVER_MAX_ATTEMPTS 8

/* Per worker: written by their worker alone with stat_inc()
 * (base/stats.h), so other threads may read them, relaxed, while it runs. */
struct resolver_stats {
	uint64_t placed;
	uint64_t unschedulable;  /* no feasible node (engine_message() says why) */
	uint64_t conflicts;      /* commits refused: placed again */
	uint64_t gave_up;        /* still conflicting after every attempt */
};

struct resolve_result {
	struct placement placement; /* slot -1 unless committed */
	uint32_t attempts;          /* placements made, 1..RESOLVER_MAX_ATTEMPTS */
	bool gave_up;               /* every attempt found a node and lost it */
};

/* Places and commits `pod`, the `seq`-th of its stream. Returns 0, or
 * -ENOMEM from the engine (nothing committed). */
int resolver_place(struct engine *e, const struct pod_spec *pod, uint64_t seq,
		   struct resolve_result *out, struct resolver_stats *st);

/* A commit step: commit_pod()'s contract (0, or a negative errno and
 * nothing committed). */
typedef int (*resolver_commit_fn)(void *arg, struct engine *e,
				  const struct pod_spec *pod, uint32_t slot,
				  const struct device_assignment *dev);

/* resolver_place() with `commit` called in place of commit_pod(): for
 * tests that step other actors by hand between a placement and its commit
 * (tests/bind/test_resolver.c). Same results and statistics. */
int resolver_place_stepped(struct engine *e, const struct pod_spec *pod,
			   uint64_t seq, resolver_commit_fn commit, void *arg,
			   struct resolve_result *out, struct resolver_stats *st);

#endif
