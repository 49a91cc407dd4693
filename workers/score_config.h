/* Which scores run, with which weights and arguments: the part of a
 * KubeSchedulerConfiguration profile the engine uses, filled by
 * ingest/sched_config.c (defaults or a file); and the table of score
 * plugins. */
#ifndef SHMSCHED_WORKERS_SCORE_CONFIG_H
#define SHMSCHED_WORKERS_SCORE_CONFIG_H

#include <stdbool.h>
#include <stdint.h>

#include "shm/shm.h"

/* The score plugins shmsched implements, in kube's default order
 * (default_plugins.go, getDefaultPlugins), then ours; also the order of
 * scores in explain output. The one table of their names and default
 * weights is score_plugin_names / score_plugin_default_weight
 * (workers/plugins.c). */
enum score_plugin {
	SCORE_TAINT = 0,    /* TaintToleration */
	SCORE_AFFINITY = 1, /* NodeAffinity */
	SCORE_FIT = 2,      /* NodeResourcesFit */
	SCORE_SPREAD = 3,   /* PodTopologySpread */
	SCORE_INTER_POD = 4, /* InterPodAffinity */
	SCORE_BALANCED = 5, /* NodeResourcesBalancedAllocation */
	SCORE_GPU_BEST_FIT = 6, /* GpuBestFit (ours), thousandths */
	SCORE_GPU_FRAG = 7,     /* GpuFragmentation (ours), thousandths */
	SCORE_PLUGINS = 8,
};

/* Names as a KubeSchedulerConfiguration spells them. */
extern const char *const score_plugin_names[SCORE_PLUGINS];

/* kube-scheduler's default weights; ours are 0: they run only when a
 * profile enables them. */
extern const int64_t score_plugin_default_weight[SCORE_PLUGINS];

enum fit_strategy {
	FIT_LEAST_ALLOCATED = 0, /* the default */
	FIT_MOST_ALLOCATED = 1,
};

struct res_weight {
	uint8_t resource; /* enum res_index */
	int64_t weight;   /* 1..100 */
};

struct score_config {
	/* Plugin weights; 0 = plugin not enabled. Defaults: TaintToleration 3,
	 * NodeAffinity 2, NodeResourcesFit 1, PodTopologySpread 2,
	 * InterPodAffinity 2, NodeResourcesBalancedAllocation 1. */
	int64_t weight_taint;
	int64_t weight_affinity;
	int64_t weight_fit;
	int64_t weight_balanced;
	int64_t weight_spread;    /* PodTopologySpread, default 2 */
	int64_t weight_inter_pod; /* InterPodAffinity, default 2 */
	/* Ours, not enabled by default: GpuBestFit (least cpu and GPU left
	 * over) and GpuFragmentation (least growth of GPU fragmentation). */
	int64_t weight_gpu_best_fit;
	int64_t weight_gpu_frag;

	/* NodeResourcesFit args: scoringStrategy (default LeastAllocated over
	 * cpu and memory, weight 1 each). */
	uint8_t fit_strategy; /* enum fit_strategy */
	uint8_t n_fit_resources;
	struct res_weight fit_resources[RES_MAX];

	/* NodeResourcesBalancedAllocation args: resources (default cpu and
	 * memory). Kubernetes' validation requires every weight to be 1 and
	 * the score ignores them. */
	uint8_t n_balanced_resources;
	struct res_weight balanced_resources[RES_MAX];

	/* InterPodAffinityArgs. */
	int32_t hard_pod_affinity_weight;        /* 0..100, default 1 */
	bool ignore_preferred_terms_of_existing; /* default false */
	/* PodTopologySpreadArgs defaultingType: System (kube's defaults) or
	 * List with no defaultConstraints (no default spreading). */
	uint8_t spread_defaulting;               /* enum spread_defaulting */
};

enum spread_defaulting {
	SPREAD_DEFAULTING_SYSTEM = 0,
	SPREAD_DEFAULTING_NONE = 1,
};

/* The scheduler-wide settings plus the first profile's scores. */
struct sched_config {
	/* 0: kube-scheduler's adaptive default; 1..100 otherwise. */
	int32_t percentage_of_nodes_to_score;
	struct score_config score;
	/* parallelism: read and kept, no effect; the two backoffs: the
	 * scheduling queue's (workers/queue.h, daemon/wait.c). */
	int32_t parallelism;                  /* default 16 */
	int32_t pod_initial_backoff_seconds;  /* default 1 */
	int32_t pod_max_backoff_seconds;      /* default 10 */
};

#endif
