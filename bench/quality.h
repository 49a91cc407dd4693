/* The in-process baselines of a benchmark run, on the same cluster and the
 * same pod stream (bench/workload.h) as the engine run:
 *
 * - reference_run(): kube-scheduler's algorithm done literally, one pod at
 *   a time on one thread: filter every node, score every feasible node with
 *   the same plugins, pick the best (engine_place_reference() with
 *   percentageOfNodesToScore 100: no caches, no sampling), commit, next
 *   pod. Its pods/s is the `reference` baseline.
 * - quality_run(): how good the engine's choices are against the
 *   reference's, on a cluster small enough that the reference can fill it:
 *   the stream is placed one pod at a time, in process, until the first pod
 *   fails; for each pod the reference's best total score (over every
 *   feasible node, normalised over all of them) is compared with the total,
 *   scored the same way, of the node the engine chose. Run once with the
 *   engine at percentageOfNodesToScore's default and once at 100.
 */
#ifndef SHMSCHED_BENCH_QUALITY_H
#define SHMSCHED_BENCH_QUALITY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "bench/workload.h"

struct baseline_config {
	const char *cluster_path;  /* Kubernetes JSON; NULL: synthetic */
	uint32_t nodes, running;   /* synthetic cluster (as the daemon's) */
	uint64_t seed;             /* synthetic cluster and tie-breaks */
	const struct workload *w;
	uint64_t pods;             /* at most this many pods of the stream */
	double max_seconds;        /* stop after this long (0: no bound) */
	bool progress;             /* a progress bar on stderr */
	/* KubeSchedulerConfiguration as the daemon's --config (scores; the
	 * percentage is each run's own, see below); NULL: the defaults. */
	const char *config_path;
};

struct reference_result {
	uint64_t pods, placed, unschedulable;
	double wall_s, pods_per_sec;
};

/* Places the stream's first cfg->pods pods (fewer if max_seconds runs out;
 * cfg->pods 0: until max_seconds, which must then be set) with the literal
 * reference algorithm at percentageOfNodesToScore 100, one thread, pod k
 * of the stream as sequence number k. The cluster is cfg->cluster_path's,
 * or synthetic (nodes, running, seed) as the daemon builds it; the engine's
 * seed is cfg->seed. wall_s covers the placements only, not the setup.
 *
 * Threads: call from a thread that is not a registered RCU reader
 * (shm/rcu.h); it is registered for the placements and unregistered
 * before return. Returns 0, or a negative errno with a message in `err`:
 * -EINVAL (no workload, no bound, a template that is not one Pod, a
 * workload pod naming a template or resource that does not exist), the
 * cluster's or the configuration's loader's errors, -ENOMEM, or a failed
 * commit's error (one thread: a commit of a placement cannot fail). */
int reference_run(const struct baseline_config *cfg, struct reference_result *out,
		  char *err, size_t err_len);

struct quality_side {
	int32_t percentage;       /* percentageOfNodesToScore the engine ran at (0: default) */
	uint64_t placed;          /* pods placed before the first failure */
	double cpu_alloc_ratio;   /* sum of cpu requested / allocatable then */
	double mem_alloc_ratio;
	uint64_t compared;        /* pods whose choice was compared */
	uint64_t same_score;      /* ... where the engine's node scored the reference's best */
	double same_score_pct;
	bool full;                /* stopped at an unschedulable pod (not a bound) */
	double wall_s;            /* this side's placements, with the reference's scoring */
};

struct quality_result {
	uint32_t nodes;           /* of the quality cluster */
	struct quality_side engine_default, engine_100, reference;
};

/* cfg->nodes is the quality cluster's size (synthetic, running pods scaled
 * in proportion); cfg->pods bounds the pods tried.
 *
 * Each side runs on a fresh synthetic cluster (cfg->nodes, cfg->running,
 * cfg->seed; cluster_path is not used) with engines seeded cfg->seed:
 * engine_default: engine_place() at the configuration's percentage (0,
 * the adaptive default, without config_path); engine_100: engine_place()
 * at 100; reference: engine_place_reference() at 100. Before each commit a
 * second engine scores pod k with engine_place_reference() at 100 over
 * the same state; the side's node scored the best total or not. cfg->pods
 * 0: until the first unschedulable pod; max_seconds bounds each side
 * (a third of it each). Threads, errors: as reference_run(). */
int quality_run(const struct baseline_config *cfg, struct quality_result *out,
		char *err, size_t err_len);

#endif
