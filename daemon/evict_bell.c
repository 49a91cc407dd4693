/* The evictor's doorbell: see evict_bell_internal.h.
 *
 * What: a ring is a sequentially consistent add to `kick` and, only when
 * the consumer said it sleeps, a FUTEX_WAKE. Before this, every ring
 * (each preemption request) made the system call whether or not the
 * evictor slept; with a worker's 64 requests in flight it is busy nearly
 * always (bench --kind preemption: 2,000 wakes for ~50 sleeps).
 *
 * The protocol, store-buffering (Dekker) on two words, all seq_cst:
 *   ringer:   (publishes work: a ring's release store in evict.c)
 *             ER1 kick += 1                          seq_cst RMW
 *             ER2 if load(sleeping) == 1: FUTEX_WAKE seq_cst
 *   consumer: ER3 seen = load(kick)                  seq_cst
 *             (looks for work: finds none)
 *             ER4 sleeping = 1                       seq_cst
 *             ER5 if load(kick) == seen:             seq_cst
 *                   FUTEX_WAIT(kick, seen)           the kernel compares
 *             sleeping = 0                           relaxed (see below)
 * If ER2 reads 0, ER2 comes before ER4 in the single order of seq_cst
 * operations (a later 0, the store after a wait, means that sleep is
 * over), so ER1 < ER2 < ER4 < ER5: ER5 reads kick with the ring's add. If
 * ER3 already read it, ER3 acquired ER1's release, so the look after it
 * saw the work (nothing found is then impossible); if not, ER5 reads a
 * value other than seen and the consumer does not sleep. If ER2 reads 1,
 * the FUTEX_WAKE comes after ER1 changed kick: the kernel's compare in
 * FUTEX_WAIT either sees the change (EAGAIN) or the waiter is queued and
 * woken. The clear of sleeping is relaxed: a ringer that still reads 1
 * makes one FUTEX_WAKE nobody needs; one that reads 0 came after it in
 * the order, and the consumer's next look (after an ER3 of its own) is
 * the case above. kick is 32 bits: only exactly 2^32 rings between ER3
 * and ER5 could fool the compare, and the wait's timeout bounds that.
 *   ER6 The counts, relaxed fetch-adds by any ringer: figures only.
 *
 * Cost: a ring to a busy consumer is one RMW and one load on kick's
 * cache line (no system call); to a sleeping one, as before, a
 * FUTEX_WAKE.
 */
#include "daemon/evict_bell_internal.h"

#include <linux/futex.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

void evict_bell_ring(struct evict_bell *b)
{
	/* ER1: seq_cst, partner of ER3 and ER5. */
	__atomic_fetch_add(&b->kick, 1, __ATOMIC_SEQ_CST);
	/* ER2: seq_cst, partner of ER4. */
	if (__atomic_load_n(&b->sleeping, __ATOMIC_SEQ_CST)) {
		syscall(SYS_futex, &b->kick, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
		/* ER6: relaxed, a figure. */
		__atomic_fetch_add(&b->wakes, 1, __ATOMIC_RELAXED);
	} else {
		/* ER6: relaxed, a figure. */
		__atomic_fetch_add(&b->avoided, 1, __ATOMIC_RELAXED);
	}
}

uint32_t evict_bell_seen(struct evict_bell *b)
{
	/* ER3: seq_cst, partner of ER1 (acquires the work before it). */
	return __atomic_load_n(&b->kick, __ATOMIC_SEQ_CST);
}

bool evict_bell_prepare(struct evict_bell *b, uint32_t seen)
{
	/* ER4: seq_cst, partner of ER2. */
	__atomic_store_n(&b->sleeping, 1, __ATOMIC_SEQ_CST);
	/* ER5: seq_cst, partner of ER1. */
	return __atomic_load_n(&b->kick, __ATOMIC_SEQ_CST) == seen;
}

void evict_bell_wait(struct evict_bell *b, uint32_t seen, long timeout_ns)
{
	struct timespec ts = {timeout_ns / 1000000000L, timeout_ns % 1000000000L};
	syscall(SYS_futex, &b->kick, FUTEX_WAIT_PRIVATE, seen, &ts, NULL, 0);
}

void evict_bell_awake(struct evict_bell *b)
{
	/* Relaxed, partner of ER2: see the note at the top. */
	__atomic_store_n(&b->sleeping, 0, __ATOMIC_RELAXED);
}

void evict_bell_counts(const struct evict_bell *b, uint64_t *wakes,
		       uint64_t *avoided)
{
	/* ER6: relaxed, figures. */
	*wakes = __atomic_load_n(&b->wakes, __ATOMIC_RELAXED);
	*avoided = __atomic_load_n(&b->avoided, __ATOMIC_RELAXED);
}
