/* The warmer: see warm_internal.h. */
#include "daemon/warm_internal.h"

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdbool.h>
#include <stdlib.h>
#include <time.h>

struct warmer {
	struct placements *table;
	pthread_t thread;
	bool stop; /* set by warm_stop(): relaxed (STOP), the join orders the rest */
};

static void *warm_main(void *arg)
{
	struct warmer *w = arg;
	/* Only on a core that would idle: a warmer that preempts a spinning
	 * producer or worker cost the open loop's latency (docs/perf/2026-11-history-engine-v2.md). Refused
	 * (it is not, to an unprivileged thread lowering itself): it runs at
	 * the normal priority. */
	struct sched_param none = {0};
	pthread_setschedparam(pthread_self(), SCHED_IDLE, &none);
	while (!__atomic_load_n(&w->stop, __ATOMIC_RELAXED)) { /* STOP */
		/* One call (16 pages) per wake, then the core is handed back:
		 * see warm_internal.h. */
		uint32_t grown = placements_populate_ahead(w->table, WARM_AHEAD);
		struct timespec ts = {0, grown ? WARM_STEP_NS : WARM_IDLE_NS};
		nanosleep(&ts, NULL);
	}
	return NULL;
}

struct warmer *warm_start(struct placements *t)
{
	struct warmer *w = calloc(1, sizeof(*w));
	if (w == NULL)
		return NULL;
	w->table = t;
	/* The first WARM_AHEAD records backed now, before any worker runs,
	 * so that a fresh daemon's first pods find their records backed
	 * rather than fault them beside a warmer that may be given no core
	 * (SCHED_IDLE). About 5 MB, 1-2 ms; bounded by calls, so a daemon
	 * re-attaching a large table (backed from its first record up) does
	 * not wait for all of it here. */
	for (size_t i = 0; i < WARM_PREFILL_CALLS; i++)
		if (placements_populate_ahead(t, WARM_AHEAD) == 0)
			break;
	int rc = pthread_create(&w->thread, NULL, warm_main, w);
	if (rc != 0) {
		free(w);
		errno = rc;
		return NULL;
	}
	return w;
}

void warm_stop(struct warmer *w)
{
	if (w == NULL)
		return;
	__atomic_store_n(&w->stop, true, __ATOMIC_RELAXED); /* STOP */
	pthread_join(w->thread, NULL);
	free(w);
}
