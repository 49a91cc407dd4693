/* What else ran on this machine during a run: every thread outside the
 * bench's own processes, by the CPU time its /proc/<pid>/task/<tid>/
 * schedstat counts (nanoseconds on a CPU, and how many times it was
 * switched in), read before the run and after.
 *
 * Why: a latency run's tail is mostly other threads taking a core from the
 * worker or the producer for a millisecond at a time. On the 2-vCPU VMs
 * that was kdamond (the kernel's DAMON reclaim, about 1.1 ms twice a
 * second) and rcu_preempt (1-2 ms about once a second); this names them
 * run by run. Not seen: the hypervisor taking a vCPU (the guest has no
 * thread for it; bench/pauses.h measures that with the rest).
 */
#ifndef SHMSCHED_BENCH_OTHERS_H
#define SHMSCHED_BENCH_OTHERS_H

#include <stdint.h>

#define OTHERS_TOP 3
#define OTHERS_MAX 8192 /* threads followed; beyond, only counted */

struct other_thread {
	char comm[20];   /* its name, as /proc has it (TASK_COMM_LEN 16) */
	double ms;       /* CPU time in the window */
	uint64_t slices; /* times it was switched in */
	uint32_t pid, ppid; /* its process and that one's parent */
};

struct others {
	double window_s;   /* from the first read to the second */
	double total_ms;   /* every other thread's CPU time in it */
	unsigned threads;  /* other threads that ran in it */
	unsigned n_top;
	struct other_thread top[OTHERS_TOP]; /* most CPU time first */
	unsigned missed;   /* threads past OTHERS_MAX, not followed */
};

/* The first read (malloc'd; others_end() frees it). */
struct others_window;

/* Reads every other thread's CPU time now. Returns NULL with errno
 * (ENOMEM; ENOENT: no /proc). */
struct others_window *others_begin(void);

/* Reads them again, fills *out with the difference and frees w. */
void others_end(struct others_window *w, struct others *out);

#endif
