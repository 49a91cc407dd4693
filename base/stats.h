/* Single-writer statistics counters: a counter that only its owner thread
 * writes, and that other threads read while it runs (the daemon's figures,
 * status, the benchmark).
 *
 * The owner adds with a relaxed atomic store of its own previous value
 * plus n: no read-modify-write instruction on the hot path, and no data
 * race for a reader. Relaxed is enough: a tally publishes nothing else, and
 * a reader takes it as an approximate figure (an exact one once the owner
 * has stopped, ordered by whatever stopped it, e.g. a thread join).
 */
#ifndef SHMSCHED_BASE_STATS_H
#define SHMSCHED_BASE_STATS_H

#include <stdint.h>

/* Owner thread only. */
static inline void stat_add(uint64_t *counter, uint64_t n)
{
	__atomic_store_n(counter, *counter + n, __ATOMIC_RELAXED);
}

static inline void stat_inc(uint64_t *counter)
{
	stat_add(counter, 1);
}

/* Owner thread only: a gauge, the owner's figure of the moment. */
static inline void stat_set(uint64_t *counter, uint64_t v)
{
	__atomic_store_n(counter, v, __ATOMIC_RELAXED);
}

/* Any thread. */
static inline uint64_t stat_read(const uint64_t *counter)
{
	return __atomic_load_n(counter, __ATOMIC_RELAXED);
}

#endif
