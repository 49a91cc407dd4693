/* A progress bar on stderr for a benchmark phase:
 *   engine      [##########..........]   412000/1000000  15.2k/s  ETA 0:38
 * drawn only once the phase has run a second (short phases leave no
 * trace), at most ten times a second, and erased at the end. Whether bars
 * are drawn at all is the caller's choice (shmsched-bench: stderr is a
 * terminal, unless --progress / --no-progress).
 *
 * One thread at a time per struct progress; nothing is shared between
 * them but stderr.
 */
#ifndef SHMSCHED_BENCH_PROGRESS_H
#define SHMSCHED_BENCH_PROGRESS_H

#include <stdbool.h>
#include <stdint.h>

struct progress {
	const char *phase;
	uint64_t total;     /* 0: unknown (no bar, no ETA) */
	uint64_t start_ns, last_draw_ns;
	bool enabled, drawn;
};

/* Starts a phase of `total` steps; `phase` must outlive it. */
void progress_begin(struct progress *p, bool enabled, const char *phase,
		    uint64_t total);

/* `done` steps so far (cheap when nothing is drawn: one clock read). */
void progress_update(struct progress *p, uint64_t done);

/* Erases the bar, if one was drawn. */
void progress_end(struct progress *p);

/* CLOCK_MONOTONIC in nanoseconds. */
uint64_t progress_now_ns(void);

#endif
