/* The idle ladder of one pool worker: after a poll that found nothing,
 * whether to poll again at once (spin), after a sched_yield(), or to sleep;
 * and, where the pool spins by time, whether to spin at all.
 *
 * A plain struct stepped by its worker alone (no atomics, no locks), with
 * the clock passed in, so that tests drive it with made-up times
 * (tests/workers/test_idle_ladder.c). workers/pool.c owns the sleep, the
 * yield and the doorbells; this decides only which.
 */
#ifndef SHMSCHED_WORKERS_IDLE_LADDER_H
#define SHMSCHED_WORKERS_IDLE_LADDER_H

#include <stdbool.h>
#include <stdint.h>

/* Idle polls that spin, in a ladder that spins by time, before the clock
 * is first read: a gap shorter than this costs no clock read. */
#define IDLE_LADDER_CLOCK_POLLS 16u

enum idle_step {
	IDLE_SPIN,  /* poll again (after a pause instruction) */
	IDLE_YIELD, /* sched_yield(), then poll again */
	IDLE_SLEEP, /* sleep until woken or the timeout, then poll again */
};

struct idle_ladder {
	/* Set by idle_ladder_init(), read-only afterwards. */
	unsigned spin_end;  /* idle polls that spin */
	unsigned yield_end; /* idle polls that spin or yield */
	uint64_t spin_ns;   /* then idle time that spins; 0: counts only */

	/* The stretch of idle polls under way. */
	unsigned idle;        /* idle polls since the last work */
	unsigned timed_polls; /* of them in the timed spin */
	uint64_t idle_since;  /* clock at its start (read late); 0: unread */
	uint64_t spin_until;  /* the timed spin's end: 0 not started, UINT64_MAX over */

	/* The recent gaps between work: a moving average in which each new
	 * gap weighs a quarter. */
	uint64_t gap_avg_ns;
};

/* A ladder that spins spin_polls idle polls, then (spin_ns > 0) until
 * spin_ns after the first clock read of the stretch, then yields up to
 * yield_polls times, then sleeps. With spin_ns > 0 it adapts: while the
 * recent gaps between work are longer than spin_ns (sparse work, which a
 * spin would not have caught), a stretch of idle polls skips the spin and
 * the yields and sleeps after one more poll (the one that announces the
 * sleep to the doorbells). With spin_ns == 0 it counts polls alone and
 * never reads the clock. */
void idle_ladder_init(struct idle_ladder *l, unsigned spin_polls,
		      uint64_t spin_ns, unsigned yield_polls);

/* Changes the timed spin (spin_ns > 0 before and after), keeping the
 * gaps' average. */
void idle_ladder_set_spin(struct idle_ladder *l, uint64_t spin_ns);

/* A poll did work: `did` (> 0) items, as the poll function counts them.
 * Reads the clock (now) only when the stretch it ends had read it. */
void idle_ladder_work(struct idle_ladder *l, unsigned did, uint64_t (*now)(void));

/* A poll found nothing: what to do before the next. */
enum idle_step idle_ladder_idle(struct idle_ladder *l, uint64_t (*now)(void));

/* Whether the next poll, if it finds nothing, is followed by a sleep (so
 * the sleep must be announced to the doorbells before it). */
static inline bool idle_ladder_sleep_next(const struct idle_ladder *l)
{
	return l->idle >= l->yield_end;
}

/* Whether the recent gaps between work are longer than the spin (the
 * next stretch of idle polls goes to sleep at once). */
static inline bool idle_ladder_sparse(const struct idle_ladder *l)
{
	return l->spin_ns != 0 && l->gap_avg_ns > l->spin_ns;
}

#endif
