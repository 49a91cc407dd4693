/* A log-linear histogram of durations in nanoseconds: 64 powers of two,
 * each cut in HIST_SUB linear steps (a bucket is within 1/16 of its
 * values), so percentiles from microseconds to seconds cost a fixed 8 KiB
 * of counters and one bucket computation per sample. The benchmark's
 * latencies and the workers' service times (daemon/serve.c) use it. */
#ifndef SHMSCHED_BASE_HIST_H
#define SHMSCHED_BASE_HIST_H

#include <stdint.h>

#define HIST_SUB 16
#define HIST_BUCKETS (64 * HIST_SUB)

/* The bucket of a duration of `ns` nanoseconds. */
static inline unsigned hist_bucket(uint64_t ns)
{
	if (ns < HIST_SUB)
		return (unsigned)ns;
	unsigned log2 = 63u - (unsigned)__builtin_clzll(ns);
	unsigned sub = (unsigned)((ns >> (log2 - 4)) & (HIST_SUB - 1));
	return log2 * HIST_SUB + sub;
}

/* Bucket b's representative duration (its middle) and its upper bound. */
static inline double hist_bucket_ns(unsigned b)
{
	if (b < HIST_SUB)
		return b;
	unsigned log2 = b / HIST_SUB, sub = b % HIST_SUB;
	return (double)(UINT64_C(1) << log2) * (1.0 + (sub + 0.5) / HIST_SUB);
}

static inline double hist_bucket_upper_ns(unsigned b)
{
	if (b < HIST_SUB)
		return b + 1;
	unsigned log2 = b / HIST_SUB, sub = b % HIST_SUB;
	return (double)(UINT64_C(1) << log2) * (1.0 + (sub + 1.0) / HIST_SUB);
}

/* The duration under which a share q (0..1) of the samples fall, in
 * nanoseconds (0 with no sample). */
static inline double hist_percentile_ns(const uint64_t *hist, double q)
{
	uint64_t total = 0, seen = 0;
	for (unsigned b = 0; b < HIST_BUCKETS; b++)
		total += hist[b];
	uint64_t want = (uint64_t)(q * (double)total);
	for (unsigned b = 0; b < HIST_BUCKETS; b++) {
		seen += hist[b];
		if (seen > want)
			return hist_bucket_ns(b);
	}
	return 0;
}

#endif
