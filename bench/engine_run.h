/* The engine's pods per second through the real path: K producer processes
 * (libshmsched-client) submit P pods from a mix of templates through their
 * shared-memory rings to a daemon (cli/daemon.c) running in this process on
 * a synthetic cluster, and read every answer back.
 */
#ifndef SHMSCHED_BENCH_ENGINE_RUN_H
#define SHMSCHED_BENCH_ENGINE_RUN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct engine_run_config {
	uint32_t nodes;
	uint32_t running;
	uint64_t pods;
	unsigned producers;
	unsigned workers; /* 0: the daemon's default */
	uint64_t seed;
	bool progress;    /* a progress line on stderr while it runs */
	/* Set: run shmschedd at this path as a child under `strace -f -c -o
	 * strace_out` instead of the daemon in this process (counting its
	 * system calls; the overcommit check then cannot run: it reads the
	 * daemon's memory). */
	const char *daemon_exe;
	const char *strace_out;
};

struct engine_run_result {
	double wall_s;       /* first submit to last answer, over all producers */
	double pods_per_sec; /* pods / wall_s */
	uint64_t pods, answered, placed, unschedulable, rejected, cancelled;
	uint64_t conflicts, overcommits, templates;
	uint64_t syscalls; /* with daemon_exe: the daemon's, from strace */
	double p50_us, p90_us, p99_us, p999_us; /* submit to answer */
	unsigned workers;
	uint32_t nodes;
};

/* Runs it. Returns 0, or a negative errno with a message in `err`. */
int engine_run(const struct engine_run_config *cfg, struct engine_run_result *out,
	       char *err, size_t err_len);

#endif
