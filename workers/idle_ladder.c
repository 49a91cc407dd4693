/* The idle ladder of one pool worker (see idle_ladder.h).
 *
 * What: after each poll that found nothing, SPIN (poll again), YIELD
 * (sched_yield, then poll) or SLEEP (on the futex and doorbells, by
 * workers/pool.c). Counted in idle polls since the last work: spin_end
 * polls spin; then, in a ladder that spins by time (spin_ns > 0), polls
 * spin until spin_ns after the clock's first read (at poll spin_end,
 * then every 16th poll); then yield_end - spin_end polls yield; then
 * every idle poll sleeps.
 *
 * Adapting (spin_ns > 0 only): a spin pays for itself only if work comes
 * before it ends; a gap longer than the spin costs the whole spin on a
 * core that other processes of a small machine (the producers: nginx, the
 * gateway, a load generator) are waiting for, and the sleep at its end
 * anyway. So each stretch of idle polls that read the clock gives a gap
 * (from that read, at poll spin_end or at the first idle poll of a
 * stretch that skips the spin, to the work that ended it; a stretch of
 * fewer than spin_end polls counts as 0, no clock read), and gap_avg_ns
 * follows them:
 * avg = avg - avg/4 + gap/4. While gap_avg_ns > spin_ns the next stretch
 * skips the spin and the yields: one more poll (announced to the doorbells
 * by the pool) and it sleeps, to be woken by the producer's doorbell. A
 * gap measured across a sleep includes the wake-up (tens of microseconds,
 * more on a loaded machine); a stream closer together than the wake-up
 * still shows, since the poll after it finds several items: the stretch's
 * time is divided by the items its work found (without that, a 20 us
 * stream with 40 us wake-ups measured 60 us gaps and stayed asleep
 * between every two pods). A run of short gaps brings the spin back (from
 * a steady 500 us to 20 us against a 50 us spin with 10 us wake-ups: 11
 * gaps; after one long gap among short ones: 4 or 5).
 *
 * Invariants: the ladder belongs to one worker thread (no sharing); with
 * spin_ns == 0 it never reads the clock and never adapts (the tests'
 * ladders that count polls); idle_ladder_sleep_next() is true before every
 * poll after which idle_ladder_idle() returns IDLE_SLEEP, so the pool
 * announces each sleep before the poll that precedes it (D1 in pool.c).
 *
 * Cost: a poll that did work after another that did is one branch; an idle
 * stretch reads the clock at poll spin_end, every 16th timed poll and at
 * the work that ends it.
 */
#include "workers/idle_ladder.h"

#include <limits.h>
#include <string.h>

void idle_ladder_init(struct idle_ladder *l, unsigned spin_polls,
		      uint64_t spin_ns, unsigned yield_polls)
{
	memset(l, 0, sizeof(*l));
	/* At least one: idle counts from 1 in every stretch, which is how
	 * idle_ladder_work() knows a stretch ended. */
	if (spin_polls == 0)
		spin_polls = 1;
	l->spin_end = spin_polls;
	l->spin_ns = spin_ns;
	l->yield_end = spin_polls > UINT_MAX - yield_polls ? UINT_MAX :
							     spin_polls + yield_polls;
}

void idle_ladder_set_spin(struct idle_ladder *l, uint64_t spin_ns)
{
	if (l->spin_ns != 0 && spin_ns != 0)
		l->spin_ns = spin_ns;
}

void idle_ladder_work(struct idle_ladder *l, unsigned did, uint64_t (*now)(void))
{
	if (l->idle == 0)
		return;
	if (l->spin_ns != 0) {
		uint64_t gap = 0;
		if (l->idle_since != 0) {
			uint64_t t = now();
			gap = t > l->idle_since ? t - l->idle_since : 0;
			/* Items found together came closer than the stretch:
			 * its time shared among them. */
			if (did > 1)
				gap /= did;
		}
		l->gap_avg_ns = l->gap_avg_ns - l->gap_avg_ns / 4 + gap / 4;
	}
	l->idle = 0;
	l->timed_polls = 0;
	l->idle_since = 0;
	l->spin_until = 0;
}

enum idle_step idle_ladder_idle(struct idle_ladder *l, uint64_t (*now)(void))
{
	if (l->idle == 0 && idle_ladder_sparse(l)) {
		/* Sparse work: straight to the poll before the sleep. */
		l->idle_since = now();
		l->spin_until = UINT64_MAX;
		l->idle = l->yield_end;
		return IDLE_SPIN;
	}
	if (l->idle < l->spin_end) {
		l->idle++;
		return IDLE_SPIN;
	}
	if (l->spin_ns != 0 && l->spin_until != UINT64_MAX) {
		if (l->spin_until == 0) {
			l->idle_since = now();
			l->spin_until = l->idle_since + l->spin_ns;
		} else if ((++l->timed_polls & 15) == 0 && now() >= l->spin_until) {
			l->spin_until = UINT64_MAX;
		}
		if (l->spin_until != UINT64_MAX)
			return IDLE_SPIN;
	}
	if (l->idle < l->yield_end) {
		l->idle++;
		return IDLE_YIELD;
	}
	return IDLE_SLEEP;
}
