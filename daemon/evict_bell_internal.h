/* The evictor's doorbell (daemon/evict_bell.c): how the workers, the admin
 * thread and evict_stop() wake the evictor thread when they hand it work,
 * with a FUTEX_WAKE only when it sleeps.
 *
 * One consumer (the evictor thread) and any number of ringers. The
 * consumer's turn:
 *     seen = evict_bell_seen(b);
 *     ... look for work (the rings), do what it finds ...
 *     if nothing was found:
 *         if (evict_bell_prepare(b, seen)) evict_bell_wait(b, ns);
 *         evict_bell_awake(b);
 * A ringer publishes its work (a ring's release store), then calls
 * evict_bell_ring(b). No lost wake-up: work published before a ring is
 * found by the consumer's next look, or its sleep is woken (ER1-ER5 in
 * evict_bell.c); one FUTEX_WAKE at most a sleep. Split in steps so that
 * a test can interleave them by hand.
 */
#ifndef SHMSCHED_DAEMON_EVICT_BELL_INTERNAL_H
#define SHMSCHED_DAEMON_EVICT_BELL_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>

struct evict_bell {
	_Alignas(64) uint32_t kick; /* ER1, ER3, ER5: rings so far (mod 2^32) */
	uint32_t sleeping;          /* ER2, ER4: 1 from prepare until a ring
				     * takes it or awake; the futex word */
	uint64_t wakes;             /* ER6: rings that called FUTEX_WAKE */
	uint64_t avoided;           /* ER6: rings that found it awake, or
				     * woken by another ring already */
};

/* Any thread, after publishing work. */
void evict_bell_ring(struct evict_bell *b);

/* The consumer, before it looks for work. */
uint32_t evict_bell_seen(struct evict_bell *b);
/* The consumer, having found nothing since `seen`: marks it asleep and
 * returns whether it may sleep (false: a ring came since `seen`; look
 * again). evict_bell_awake() follows either way. */
bool evict_bell_prepare(struct evict_bell *b, uint32_t seen);
/* Sleeps until a ring, at most timeout_ns (FUTEX_WAIT on the sleeping
 * mark: returns at once if a ring took it since evict_bell_prepare). */
void evict_bell_wait(struct evict_bell *b, long timeout_ns);
void evict_bell_awake(struct evict_bell *b);

/* Figures, any thread: rings that woke a sleeper (a system call each),
 * and rings that found the consumer awake (none). */
void evict_bell_counts(const struct evict_bell *b, uint64_t *wakes,
		       uint64_t *avoided);

#endif
