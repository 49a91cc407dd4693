/* The answer doorbell: a producer's thread sleeps until the daemon
 * answers, instead of spinning on its completion ring.
 *
 * One word in the producer's region (struct shmsched_notices.answer_wait,
 * include/shmsched/wire.h): the producer sets it to 1 when it is about to
 * sleep for answers; the daemon, after putting answers on that producer's
 * completion ring, takes it back to 0 and makes a FUTEX_WAKE (a shared
 * futex: both processes map the region). The protocol and its proof are
 * in answer_bell.c (AB1-AB6). Any word that two processes (or threads)
 * map will do; the unit test steps it on a plain static one.
 *
 * Trust: the daemon never decides anything from the word. A producer that
 * keeps it at 1 makes the daemon spend one FUTEX_WAKE per answer burst
 * to it, on its own region; one that never sets it is never woken and
 * polls as before. */
#ifndef SHMSCHED_SHM_ANSWER_BELL_H
#define SHMSCHED_SHM_ANSWER_BELL_H

#include <stdbool.h>
#include <stdint.h>

/* The daemon's side, after the answers went on the ring (their release
 * store): true when it found the producer asleep and woke it. */
bool answer_bell_ring(uint32_t *mark);

/* The sleeper's side, in this order:
 *   answer_bell_prepare(mark);
 *   if (the ring holds no answer)        a look after the prepare
 *           answer_bell_wait(mark, timeout_ns);
 *   answer_bell_awake(mark);
 * answer_bell_wait returns 0 when woken (or the mark was taken before it
 * slept: a ring came), -ETIMEDOUT, -EINTR, or another negative errno of
 * FUTEX_WAIT (EFAULT). timeout_ns > 0. */
void answer_bell_prepare(uint32_t *mark);
int answer_bell_wait(uint32_t *mark, int64_t timeout_ns);
void answer_bell_awake(uint32_t *mark);

#endif
