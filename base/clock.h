/* The one clock: CLOCK_MONOTONIC in nanoseconds (and the milliseconds and
 * seconds derived from it), for deadlines, timestamps in answers and
 * benchmark timing. On Linux clock_gettime() is served by the vDSO, so
 * reading it makes no system call: it may sit on a pod's path.
 */
#ifndef SHMSCHED_BASE_CLOCK_H
#define SHMSCHED_BASE_CLOCK_H

#include <stdint.h>
#include <time.h>

static inline uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * UINT64_C(1000000000) + (uint64_t)ts.tv_nsec;
}

static inline int64_t now_ms(void)
{
	return (int64_t)(now_ns() / 1000000u);
}

static inline double now_s(void)
{
	return (double)now_ns() * 1e-9;
}

#endif
