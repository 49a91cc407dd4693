/* The evictor's doorbell: see evict_bell_internal.h.
 *
 * What: a ring is a sequentially consistent add to `kick` and, only when
 * the consumer said it sleeps and no other ring has woken it since, a
 * FUTEX_WAKE. Before this, every ring (each preemption request) made the
 * system call whether or not the evictor slept. The first ring to find it
 * asleep takes the mark back (an exchange), so the rings that follow
 * while the woken evictor waits for a core make none either: on the
 * bench's 2 busy cores that wait is most of a request's round trip.
 *
 * The protocol, store-buffering (Dekker) on two words, all seq_cst:
 *   ringer:   (publishes work: a ring's release store in evict.c)
 *             ER1 kick += 1                          seq_cst RMW
 *             ER2 if exchange(sleeping, 0) == 1:     seq_cst RMW
 *                   FUTEX_WAKE(sleeping)
 *   consumer: ER3 seen = load(kick)                  seq_cst
 *             (looks for work: finds none)
 *             ER4 sleeping = 1                       seq_cst
 *             ER5 if load(kick) == seen:             seq_cst
 *                   FUTEX_WAIT(sleeping, 1)          the kernel compares
 *             sleeping = 0                           relaxed (see below)
 * Take one sleep (an ER4 that ER5 let through) and a ring whose work the
 * look before it missed (so its ER1 came after that look's ER3). If
 * ER1 < ER5 in the single order of seq_cst operations, ER5 reads the add:
 * no sleep. Else ER4 < ER5 < ER1 < ER2, and ER2 reads this ER4's 1 or a 0
 * a later exchange wrote (only rings write 0 between an ER4 and its
 * wait). Either way some ring took this ER4's mark and makes a FUTEX_WAKE
 * on `sleeping` after its exchange: the kernel's compare in FUTEX_WAIT
 * then either reads the 0 (EAGAIN) or the waiter is queued and woken.
 * Why the wait is on `sleeping`, not on kick against `seen`: a ring whose
 * ER1 came before ER3 (its work already found) may take the mark after
 * ER4 and make its FUTEX_WAKE before the consumer's FUTEX_WAIT is queued;
 * on kick the compare passes (that add is in `seen`), the waiter sleeps,
 * and a later ring finds the mark taken and wakes no one: a lost wake-up
 * (unit.evict_bell under TSan found it: a 3 s wait with work pending;
 * test_mark_taken_before_wait steps it). On `sleeping` the taken mark
 * fails the compare. The clear after the wait is relaxed: a ringer that
 * still reads 1 makes one FUTEX_WAKE nobody needs.
 *   ER6 The counts, relaxed fetch-adds by any ringer: figures only.
 *
 * Cost: a ring to a busy (or already woken) consumer is two RMWs on
 * kick's cache line (no system call); to a sleeping one, as before, a
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
	/* ER2: seq_cst, partner of ER4: only the first ring after the
	 * consumer said it sleeps makes the system call. */
	if (__atomic_exchange_n(&b->sleeping, 0, __ATOMIC_SEQ_CST)) {
		syscall(SYS_futex, &b->sleeping, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
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

void evict_bell_wait(struct evict_bell *b, long timeout_ns)
{
	/* ER5 compared kick with seen; the kernel compares the mark. */
	struct timespec ts = {timeout_ns / 1000000000L, timeout_ns % 1000000000L};
	syscall(SYS_futex, &b->sleeping, FUTEX_WAIT_PRIVATE, 1, &ts, NULL, 0);
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
