/* The warmer: a thread that keeps the pages of the placement table's
 * next WARM_AHEAD records backed (placements_populate_ahead), so that a
 * worker taking a record never used before does not stop on the page
 * fault and the kernel zeroing the page. perf at 100,000 nodes put 11 %
 * of the worker's samples there (a fresh daemon's records are all new;
 * docs/perf/2026-11-history-engine-v2.md). The pages are backed a little ahead of use, not
 * all at start (the first WARM_AHEAD at warm_start(), before the
 * workers): the table's memory still grows with the placements.
 *
 * It runs under SCHED_IDLE: on a core that would idle, never preempting a
 * spinning worker or producer on wake-up (whose page faults it then
 * leaves them); it touches nothing else, takes no lock and is not an RCU
 * reader. It backs 16 pages (one call) per wake and sleeps WARM_STEP_NS
 * while the table grows, WARM_IDLE_NS when it is ahead. One call per
 * wake, because where every core spins the scheduler still gives an idle
 * thread its share, about 0.3 % (its weight 3 against 1,024), as a slice
 * of about a millisecond every third of a second: a warmer that caught up
 * on the whole third in that slice stopped a worker or producer for
 * 1.1 ms every 363 ms (device machine, 2 of its cores by taskset).
 */
#ifndef SHMSCHED_DAEMON_WARM_INTERNAL_H
#define SHMSCHED_DAEMON_WARM_INTERNAL_H

#include "shm/shm.h"

#define WARM_AHEAD 16384u /* records: 5 MB, about 60 ms of pods at 280,000 a second */
/* 16 pages per 20 us (plus the timer's slack, 50 us by default) is about
 * 800 MB/s, over twice the table's growth at 1,000,000 pods a second. */
#define WARM_STEP_NS 20000L
#define WARM_IDLE_NS 10000000L
/* warm_start()'s calls at most: a call backs 16 pages (of 4 KiB at
 * least), the first shared with the last call's, so over 8 pages' worth
 * of new records each; twice what WARM_AHEAD records need. */
#define WARM_PREFILL_CALLS \
	((size_t)WARM_AHEAD * sizeof(struct placement_record) / (8u * 4096u) + 2)

struct warmer;

/* Starts the thread on `t`, which must outlive warm_stop(). NULL with
 * errno when it cannot. */
struct warmer *warm_start(struct placements *t);

/* Stops and joins the thread, and frees it; NULL is a no-op. */
void warm_stop(struct warmer *w);

#endif
