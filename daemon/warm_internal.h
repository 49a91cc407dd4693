/* The warmer: a thread that keeps the pages of the placement table's
 * next WARM_AHEAD records backed (placements_populate_ahead), so that a
 * worker taking a record never used before does not stop on the page
 * fault and the kernel zeroing the page. perf at 100,000 nodes put 11 %
 * of the worker's samples there (a fresh daemon's records are all new;
 * README, "Engine v2"). The pages are backed a little ahead of use, not
 * all at start: the table's memory still grows with the placements.
 *
 * It wakes every millisecond while the table grows and every 10 ms when
 * it is ahead, under SCHED_IDLE: it runs only where a core would idle,
 * never preempting a spinning worker or producer (whose page faults it
 * then leaves them); it touches nothing else, takes no lock and is not
 * an RCU reader.
 */
#ifndef SHMSCHED_DAEMON_WARM_INTERNAL_H
#define SHMSCHED_DAEMON_WARM_INTERNAL_H

#include "shm/shm.h"

#define WARM_AHEAD 16384u /* records: 5 MB, about 60 ms of pods at 280,000 a second */

struct warmer;

/* Starts the thread on `t`, which must outlive warm_stop(). NULL with
 * errno when it cannot. */
struct warmer *warm_start(struct placements *t);

/* Stops and joins the thread, and frees it; NULL is a no-op. */
void warm_stop(struct warmer *w);

#endif
