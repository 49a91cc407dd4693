/* The daemon's guarded end of a ring in untrusted memory: see ring.h,
 * struct ring_guard. The same code serves both ring implementations: each
 * one's ring_guard_init() points the guard at its layout's table and
 * indices. Cost: one acquire load, at most n relaxed loads or stores, one
 * release store per call; no loop depends on a value the peer wrote.
 */
#include "shm/ring.h"

#include <errno.h>

/* Moves this side's index on by n and publishes it to the peer. */
static int advance(struct ring_guard *g, unsigned n)
{
	/* Relaxed: only this side writes head; ring_guard_pending() may read
	 * it from another thread as a figure. */
	__atomic_store_n(&g->head, g->head + n, __ATOMIC_RELAXED);
	if (g->own_head != NULL) /* relaxed: the peer orders on the tail */
		__atomic_store_n(g->own_head, g->head, __ATOMIC_RELAXED);
	__atomic_store_n(g->own_tail, g->head, __ATOMIC_RELEASE); /* G2 */
	return (int)n;
}

int ring_guard_dequeue(struct ring_guard *g, uint64_t *handles, unsigned n)
{
	uint32_t peer = __atomic_load_n(g->peer, __ATOMIC_ACQUIRE); /* G1 */
	uint32_t avail = peer - g->head;
	if (avail > g->capacity)
		return -EPROTO;
	if (n > avail)
		n = avail;
	for (unsigned i = 0; i < n; i++) /* relaxed: ordered by G1 */
		handles[i] = __atomic_load_n(&g->table[(g->head + i) & g->mask],
					     __ATOMIC_RELAXED);
	return advance(g, n);
}

int ring_guard_enqueue(struct ring_guard *g, const uint64_t *handles, unsigned n)
{
	uint32_t peer = __atomic_load_n(g->peer, __ATOMIC_ACQUIRE); /* G1 */
	uint32_t used = g->head - peer;
	if (used > g->capacity)
		return -EPROTO;
	uint32_t room = g->capacity - used;
	if (n > room)
		n = room;
	for (unsigned i = 0; i < n; i++) /* relaxed: published by G2 */
		__atomic_store_n(&g->table[(g->head + i) & g->mask], handles[i],
				 __ATOMIC_RELAXED);
	return advance(g, n);
}

