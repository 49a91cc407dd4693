/* The answer doorbell: see answer_bell.h.
 *
 * What: a producer thread with pods in flight and no answer sleeps on a
 * futex word in its region, and the daemon's worker that answers wakes
 * it; before this it spun, yielded and napped 50 us at a time (the
 * gateway's dispatcher, gateway/dispatch.c), on the same two cores as the
 * worker it waited for.
 *
 * The protocol, store-buffering (Dekker) on the ring's tail and the mark,
 * with a full fence on each side:
 *   daemon:  (enqueues answers: the ring's release store of its tail)
 *            AB1 fence                                 seq_cst
 *            AB2 if load(mark) != 0:                   relaxed
 *            AB3   if exchange(mark, 0) != 0:          seq_cst RMW
 *                    FUTEX_WAKE(mark)
 *   sleeper: AB4 mark = 1                              seq_cst
 *            AB5 fence                                 seq_cst
 *            (looks at the ring: finds no answer)
 *            FUTEX_WAIT(mark, 1)                       the kernel compares
 *            AB6 mark = 0                              relaxed
 * Take one sleep and an answer the look after AB5 missed. By the fences
 * (AB1, AB5) AB2 then reads this AB4's 1 or a later value of the mark;
 * the only later writes before the wait are exchanges (AB3) by rings,
 * which write 0 and then wake. So some ring took this AB4's mark and
 * makes a FUTEX_WAKE after its exchange: the kernel's compare in the
 * FUTEX_WAIT then reads the 0 (EAGAIN, no sleep) or the waiter is queued
 * and woken. The wait is on the mark, not on the ring's tail, for the
 * reason daemon/evict_bell.c gives (ER): a ring that took the mark and
 * woke before the wait was queued must fail the wait's compare. AB6 is
 * relaxed: a ring that still reads a stale 1 makes one FUTEX_WAKE that
 * nobody needs, and the exchange stops the rings after it. The fences
 * are shm/layout.h's state_fence_full (TSan does not model fences; the
 * other side is in another process).
 *
 * Cost: on the daemon, one fence and one load per answer burst while the
 * producer is awake (the fence is one `lock`ed instruction on x86); one
 * exchange and one FUTEX_WAKE per sleep. On the sleeper, a fence, a
 * store and the system calls of one sleep.
 */
#include "shm/answer_bell.h"

#include <errno.h>
#include <linux/futex.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "shm/layout.h"

bool answer_bell_ring(uint32_t *mark)
{
	/* AB1: seq_cst fence, partner of AB5: the answers' tail store before
	 * the mark's load. */
	state_fence_full();
	/* AB2: relaxed, ordered by AB1; a 0 is a producer awake. */
	if (__atomic_load_n(mark, __ATOMIC_RELAXED) == 0)
		return false;
	/* AB3: seq_cst, partner of AB4: only the first ring after the
	 * producer said it sleeps makes the system call. */
	if (__atomic_exchange_n(mark, 0, __ATOMIC_SEQ_CST) == 0)
		return false;
	syscall(SYS_futex, mark, FUTEX_WAKE, 1, NULL, NULL, 0);
	return true;
}

void answer_bell_prepare(uint32_t *mark)
{
	/* AB4: seq_cst, partner of AB3. */
	__atomic_store_n(mark, 1, __ATOMIC_SEQ_CST);
	/* AB5: seq_cst fence, partner of AB1: the mark before the caller's
	 * look at the ring. */
	state_fence_full();
}

int answer_bell_wait(uint32_t *mark, int64_t timeout_ns)
{
	struct timespec ts = {(time_t)(timeout_ns / 1000000000),
			      (long)(timeout_ns % 1000000000)};
	/* Shared (no FUTEX_PRIVATE_FLAG): the daemon maps the word too. The
	 * kernel compares the mark with 1 (see AB3). */
	long r = syscall(SYS_futex, mark, FUTEX_WAIT, 1, &ts, NULL, 0);
	if (r == 0 || errno == EAGAIN)
		return 0;
	return -errno;
}

void answer_bell_awake(uint32_t *mark)
{
	/* AB6: relaxed, partner of AB2: see the note at the top. */
	__atomic_store_n(mark, 0, __ATOMIC_RELAXED);
}
