/* The machine's own pauses: the floor under every latency measured here.
 *
 * One thread pinned to each core the process may use spins reading the
 * clock; a gap between two reads is time it did not run (another thread,
 * an interrupt, the hypervisor taking the vCPU). A pod whose producer or
 * worker is paused that long waits that long, whatever the engine does.
 */
#ifndef SHMSCHED_BENCH_PAUSES_H
#define SHMSCHED_BENCH_PAUSES_H

#include <stdint.h>

struct pauses {
	unsigned cores;       /* threads that spun, one per core */
	double seconds;       /* each spun this long */
	double over_100us_s;  /* gaps over 100 us per second, per core */
	double over_1ms_s;    /* gaps over 1 ms per second, per core */
	double longest_us;    /* the longest gap seen on any core */
	double lost_share;    /* of spinning time, in gaps over 10 us */
};

/* Spins for `ms` milliseconds on every allowed core at once. Returns 0, or
 * a negative errno (no core, no thread). */
int pauses_measure(unsigned ms, struct pauses *out);

#endif
