/* The engine's pods per second through the real path: K producer processes
 * (libshmsched-client) submit P pods of a workload (bench/workload.h)
 * through their shared-memory rings to a daemon (daemon/daemon.c) running in
 * this process, on a synthetic cluster or a cluster file, and read every
 * answer back.
 *
 * Two modes: closed loop (rate 0: every producer keeps its region full;
 * pods/s is the throughput, latencies include queueing) and open loop
 * (rate R: the producers together submit pod k at start + k/R seconds, and
 * latency runs from that scheduled time, so a daemon that falls behind
 * shows it as latency instead of slowing the submitter down).
 */
#ifndef SHMSCHED_BENCH_ENGINE_RUN_H
#define SHMSCHED_BENCH_ENGINE_RUN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct workload;

/* Latency histogram: base/hist.h's, through base/base.h (64 powers of
 * two of nanoseconds, 16 linear steps each). */
#include "base/base.h"
#include "bench/others.h"
#include "daemon/daemon.h"
#define ENGINE_RUN_HIST_SUB HIST_SUB
#define ENGINE_RUN_HIST_BUCKETS HIST_BUCKETS

struct engine_run_config {
	const char *cluster_path; /* Kubernetes JSON; NULL: synthetic */
	uint32_t nodes;           /* synthetic cluster */
	uint32_t running;
	const struct workload *w; /* required */
	uint64_t pods;
	unsigned producers;
	unsigned workers; /* 0: the daemon's default */
	uint64_t seed;
	double rate;      /* pods/s over all producers; 0: closed loop */
	bool progress;    /* a progress bar on stderr while it runs */
	const char *phase; /* its label; NULL: "engine" */
	/* Set: run shmschedd at this path as a child under `strace -f -c -o
	 * strace_out` instead of the daemon in this process (counting its
	 * system calls; the overcommit check then cannot run: it reads the
	 * daemon's memory). */
	const char *daemon_exe;
	const char *strace_out;
	/* Set: one more producer process (not counted in the results) floods
	 * the daemon with unique, unschedulable pods from the start until
	 * the counted producers have their answers: the fair-share check. */
	bool noisy;
	/* Set: the start waits until the daemon's workers are asleep (the
	 * producers' classes compiled ahead on idle polls, as a producer
	 * registered a while before its pods finds them); then, with noisy,
	 * the flood begins and the start waits for its first answers, so
	 * that the counted producers meet it in full flow and both runs of
	 * a pair start alike. The daemon in process only. */
	bool settle;
	/* Slots of each producer's region (0: 4096). With settle the flood
	 * fills its region before the start: a flood that a loaded machine
	 * (or chrt -f beside a spinning worker and a busy-polling producer)
	 * leaves no core still has that many pods queued. */
	uint32_t slots;
	/* Set: the daemon keeps a durable store in this directory, with
	 * `durability` (0 none, 1 async, 2 sync): what a placement costs
	 * when it is made durable. */
	const char *state_dir;
	int durability;
	/* Set: the daemon runs without its warmer thread (shmschedd
	 * --no-warm). */
	bool no_warm;
	/* Set: the daemon runs without its doorbells (daemon_config
	 * no_doorbells; in process only). */
	bool no_doorbells;
	/* Set: producers float over every allowed core, as the kernel
	 * places them (see engine_run.c, producer_cpu). */
	bool no_pin_producers;
	/* > 0: node events at this rate (per second) beside the run, through
	 * the admin socket (cordon a synthetic node, uncordon it next). */
	double churn_rate;
	/* Set: what other threads on the machine ran from just before the
	 * start to the last producer's exit (bench/others.h), into
	 * result.others. */
	bool watch_others;
};

struct engine_run_result {
	double wall_s;       /* start (all producers ready) to last answer */
	double pods_per_sec; /* answered / wall_s */
	double rate;          /* as configured (0: closed loop) */
	double achieved_rate; /* open loop: answered / wall_s, the rate delivered */
	uint64_t pods, answered, placed, unschedulable, rejected, cancelled;
	uint64_t conflicts, overcommits, templates;
	uint64_t late_submits; /* open loop: pods submitted over 1 ms after their time */
	uint64_t syscalls; /* with daemon_exe: the daemon's, from strace */
	/* Closed loop: submit to answer. Open loop: scheduled submit time to
	 * answer. The answer's time is the daemon's (complete_ns, when it
	 * answered the slot); seen_*: to when the producer's poll found it
	 * (handed back through the completion ring), what a client waits. */
	double p50_us, p90_us, p99_us, p999_us;
	double seen_p50_us, seen_p90_us, seen_p99_us, seen_p999_us;
	unsigned workers;
	bool producers_pinned; /* each to a core of its own, past the workers' */
	uint32_t nodes;
	uint64_t noisy_answered; /* with noisy: the flood's pods answered */
	/* The fair share's figure (daemon_identity_times): worker time
	 * spent on the counted producers' pods over the run, and with noisy
	 * on the flood's from the start (the flood runs before it) until the
	 * counted producers had every answer (the parent looks every
	 * millisecond then). have_worker_ns: false
	 * when the daemon ran as a child. */
	bool have_worker_ns;
	uint64_t counted_worker_ns, noisy_worker_ns;
	/* How much longer than the run the flood's figure spans: from its
	 * read before the start (about a millisecond ahead) to its read
	 * after the counted producers' last answer (the parent's poll; more
	 * when it waited for a core). The worker served the flood alone
	 * then, so the flood's time in the run is between noisy_worker_ns
	 * less this and noisy_worker_ns. */
	uint64_t worker_ns_lag_ns;
	uint64_t hist[ENGINE_RUN_HIST_BUCKETS]; /* counts per bucket */
	uint64_t seen_hist[ENGINE_RUN_HIST_BUCKETS]; /* the same, to the poll */
	/* Each pod's service time on its worker (decode, placement, commit,
	 * answer; no queueing): the daemon's own histogram (daemon/serve.c);
	 * 0 when the daemon ran as a child. */
	uint64_t service_hist[ENGINE_RUN_HIST_BUCKETS];
	double service_p50_us, service_p99_us, service_p999_us;
	double service_ns;          /* summed over pods (bucket middles) */
	uint64_t service_over_1ms;  /* pods that took over 1 ms */
	uint64_t churn_events, churn_failed; /* with churn_rate: node events sent */
	/* The daemon's class caches; all 0 when the daemon ran as a child. */
	struct daemon_cache_stats caches;
	bool have_others; /* with watch_others, when /proc could be read */
	struct others others;
};

/* Runs it. Returns 0, or a negative errno with a message in `err` (a pod
 * the daemon refused to register is named, with the daemon's reason). */
int engine_run(const struct engine_run_config *cfg, struct engine_run_result *out,
	       char *err, size_t err_len);

/* Bucket b's representative latency in nanoseconds (its middle) and upper
 * bound, for percentiles and plots. */
double engine_run_bucket_ns(unsigned b);
double engine_run_bucket_upper_ns(unsigned b);

/* The latency under which a share q (0..1) of `hist`'s samples fall, in µs. */
double engine_run_percentile_us(const uint64_t *hist, double q);

#endif
