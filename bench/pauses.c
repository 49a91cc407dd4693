/* The machine's own pauses: see pauses.h. */
#include "bench/pauses.h"
#include "base/base.h"

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <string.h>

#define MAX_THREADS 256

struct spinner {
	pthread_t thread;
	int cpu;
	uint64_t run_ns;
	uint64_t over_100us, over_1ms, longest_ns, lost_ns;
};

static void *spin(void *arg)
{
	struct spinner *sp = arg;
	cpu_set_t set;
	CPU_ZERO(&set);
	CPU_SET(sp->cpu, &set);
	/* Unpinned it still measures: only its core is not fixed. */
	(void)pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
	uint64_t prev = now_ns(), end = prev + sp->run_ns;
	while (prev < end) {
		uint64_t t = now_ns(), gap = t - prev;
		prev = t;
		if (gap <= 10000)
			continue;
		sp->lost_ns += gap;
		sp->over_100us += gap > 100000;
		sp->over_1ms += gap > 1000000;
		if (gap > sp->longest_ns)
			sp->longest_ns = gap;
	}
	return NULL;
}

int pauses_measure(unsigned ms, struct pauses *out)
{
	memset(out, 0, sizeof(*out));
	cpu_set_t allowed;
	if (sched_getaffinity(0, sizeof(allowed), &allowed) < 0)
		return -errno;
	static struct spinner sp[MAX_THREADS];
	unsigned n = 0;
	for (int c = 0; c < CPU_SETSIZE && n < MAX_THREADS; c++)
		if (CPU_ISSET(c, &allowed))
			sp[n++] = (struct spinner){.cpu = c,
						   .run_ns = (uint64_t)ms * 1000000u};
	if (n == 0)
		return -ENODEV;
	unsigned started = 0;
	for (; started < n; started++)
		if (pthread_create(&sp[started].thread, NULL, spin, &sp[started]) != 0)
			break;
	for (unsigned i = 0; i < started; i++)
		pthread_join(sp[i].thread, NULL);
	if (started == 0)
		return -EAGAIN;
	double secs = (double)ms / 1e3, lost = 0;
	for (unsigned i = 0; i < started; i++) {
		out->over_100us_s += (double)sp[i].over_100us;
		out->over_1ms_s += (double)sp[i].over_1ms;
		lost += (double)sp[i].lost_ns;
		if ((double)sp[i].longest_ns / 1e3 > out->longest_us)
			out->longest_us = (double)sp[i].longest_ns / 1e3;
	}
	out->cores = started;
	out->seconds = secs;
	out->over_100us_s /= secs * started;
	out->over_1ms_s /= secs * started;
	out->lost_share = lost / (secs * 1e9 * started);
	return 0;
}
