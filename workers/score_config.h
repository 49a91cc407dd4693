/* Which scores run, with which weights and arguments: the part of each
 * KubeSchedulerConfiguration profile the engine uses, filled by
 * ingest/sched_config.h (defaults or a file); the profiles, chosen by a
 * pod's schedulerName; and the table of score plugins. */
#ifndef SHMSCHED_WORKERS_SCORE_CONFIG_H
#define SHMSCHED_WORKERS_SCORE_CONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "shm/shm.h"

/* The score plugins shmsched implements, in kube's default order
 * (default_plugins.go, getDefaultPlugins), then ours; also the order of
 * scores in explain output. Their names and default weights are rows of
 * the one plugin table (workers/plugin_table.h). */
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

/* Names as a KubeSchedulerConfiguration spells them: each the name of
 * its row in plugin_table (workers/plugin_table.c), the same pointer. */
extern const char *const score_plugin_names[SCORE_PLUGINS];

/* GpuFragmentationArgs maxShapes: at most, and the default. */
#define SCORE_GPU_FRAG_MAX_SHAPES 256

enum fit_strategy {
	FIT_LEAST_ALLOCATED = 0, /* the default */
	FIT_MOST_ALLOCATED = 1,
	FIT_REQUESTED_TO_CAPACITY_RATIO = 2, /* shape below */
};

struct res_weight {
	uint8_t resource; /* enum res_index */
	int64_t weight;   /* 1..100 */
};

/* RequestedToCapacityRatio's shape (requestedToCapacityRatio.shape): a
 * point's utilization in 0..100, strictly increasing, and its score in
 * 0..SHAPE_MAX_SCORE (kube's MaxCustomPriorityScore, scaled to 0..100 when
 * scored). Strictly increasing utilizations in 0..100 are at most 101. */
#define SHAPE_MAX_POINTS 101
#define SHAPE_MAX_SCORE 10

struct shape_point {
	uint8_t utilization;
	uint8_t score;
};

/* A topology spread constraint a profile gives pods that have none of
 * their own (PodTopologySpreadArgs.defaultConstraints, defaultingType
 * List), with each pod's default selector (shm/pod_group.h). */
#define SPREAD_MAX_DEFAULTS 8

struct spread_default {
	uint32_t topology_key;        /* interned, never 0 */
	int32_t max_skew;             /* >= 1 */
	int32_t min_domains;          /* >= 1 (1 when not given) */
	bool hard;                    /* whenUnsatisfiable DoNotSchedule */
	uint8_t node_affinity_policy; /* enum spread_policy; default Honor */
	uint8_t node_taints_policy;   /* enum spread_policy; default Ignore */
};

/* What one profile's plugins do: the part of a KubeSchedulerConfiguration
 * profile the engine uses, filled by ingest/sched_config.h (defaults or a
 * file). */
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
	/* GpuFragmentationArgs (ours). maxShapes: the most shapes in the mix
	 * the score measures against, 1..SCORE_GPU_FRAG_MAX_SHAPES (the
	 * default: the paper's rule alone, the most frequent shapes covering
	 * 95 % of pods). modelReservation: percent, 0..1000, default 0 (the
	 * paper's FGD): how much a GPU pod's score counts the demand that pods
	 * bound to the node's GPU model put on that model (workers/frag.c). */
	int32_t gpu_frag_max_shapes;
	int32_t gpu_frag_model_reservation;
	/* cpuLimited: count as usable by a sharing shape only what the node's
	 * free cpu lets its pods fill (workers/frag_internal.h); default
	 * false (the paper's). */
	bool gpu_frag_cpu_limited;

	/* NodeResourcesFit args: scoringStrategy (default LeastAllocated over
	 * cpu and memory, weight 1 each); for RequestedToCapacityRatio, its
	 * shape. */
	uint8_t fit_strategy; /* enum fit_strategy */
	uint8_t n_fit_resources;
	struct res_weight fit_resources[RES_MAX];
	uint8_t n_shape;      /* RequestedToCapacityRatio: 1..SHAPE_MAX_POINTS */
	struct shape_point shape[SHAPE_MAX_POINTS];

	/* NodeResourcesBalancedAllocation args: resources (default cpu and
	 * memory). Kubernetes' validation requires every weight to be 1 and
	 * the score ignores them. */
	uint8_t n_balanced_resources;
	struct res_weight balanced_resources[RES_MAX];

	/* InterPodAffinityArgs. */
	int32_t hard_pod_affinity_weight;        /* 0..100, default 1 */
	bool ignore_preferred_terms_of_existing; /* default false */
	/* PodTopologySpreadArgs: defaultingType System (kube's defaults) or
	 * List with the profile's defaultConstraints (none: no default
	 * spreading). */
	uint8_t spread_defaulting;               /* enum spread_defaulting */
	uint8_t n_default_spread;                /* List: 0..SPREAD_MAX_DEFAULTS */
	struct spread_default default_spread[SPREAD_MAX_DEFAULTS];

	/* NodeAffinityArgs.addedAffinity: node affinity every pod of the
	 * profile gets beside its own (required terms ANDed with the pod's,
	 * preferred terms added to its score), held in a pod spec's affinity
	 * fields (has_required, terms, preferred, exprs, values; every other
	 * field 0), so the plugins read it as they read a pod's. */
	bool has_added_affinity;
	struct pod_spec added_affinity;
};

enum spread_defaulting {
	SPREAD_DEFAULTING_SYSTEM = 0,
	SPREAD_DEFAULTING_LIST = 1,
};

/* Profiles: a pod is scheduled by the profile whose schedulerName is its
 * spec.schedulerName (pod_spec.profile is that profile's index; ingest/
 * maps the name). */
#define SCHED_MAX_PROFILES 16
#define SCHED_NAME_MAX 253 /* a DNS subdomain, as kube validates a pod's */
#define SCHED_DEFAULT_NAME "default-scheduler"

struct sched_profile {
	char scheduler_name[SCHED_NAME_MAX + 1];
	/* The profile's percentageOfNodesToScore: 0..100, or -1 when it has
	 * none and the scheduler-wide one applies. */
	int32_t percentage_of_nodes_to_score;
	struct score_config score;
};

/* The scheduler-wide settings and the profiles. */
struct sched_config {
	/* 0: kube-scheduler's adaptive default; 1..100 otherwise. */
	int32_t percentage_of_nodes_to_score;
	uint32_t n_profiles; /* 1..SCHED_MAX_PROFILES */
	struct sched_profile profiles[SCHED_MAX_PROFILES];
	/* parallelism: read and kept, no effect; the two backoffs: the
	 * scheduling queue's (workers/queue.h, daemon/wait.c). */
	int32_t parallelism;                  /* default 16 */
	int32_t pod_initial_backoff_seconds;  /* default 1 */
	int32_t pod_max_backoff_seconds;      /* default 10 */
};

/* The weight field of score plugin `plugin` (enum score_plugin) in `sc`:
 * the one map from a score to its field, which the configuration writes
 * through and score_plugin_enabled() reads; NULL for no such score. */
static inline int64_t *score_config_weight(struct score_config *sc, int plugin)
{
	switch (plugin) {
	case SCORE_TAINT:
		return &sc->weight_taint;
	case SCORE_AFFINITY:
		return &sc->weight_affinity;
	case SCORE_FIT:
		return &sc->weight_fit;
	case SCORE_BALANCED:
		return &sc->weight_balanced;
	case SCORE_SPREAD:
		return &sc->weight_spread;
	case SCORE_INTER_POD:
		return &sc->weight_inter_pod;
	case SCORE_GPU_BEST_FIT:
		return &sc->weight_gpu_best_fit;
	case SCORE_GPU_FRAG:
		return &sc->weight_gpu_frag;
	default:
		return NULL;
	}
}

/* Whether score plugin `plugin` (enum score_plugin) runs in profile `sc`:
 * what explain output lists (`shmsched place --explain`, the daemon's
 * evaluation). */
static inline bool score_plugin_enabled(const struct score_config *sc, int plugin)
{
	/* Read only: the cast lets one map serve both. */
	const int64_t *w = score_config_weight((struct score_config *)sc, plugin);
	return w != NULL && *w > 0;
}

/* The percentageOfNodesToScore profile `p` places with. */
static inline int32_t sched_profile_percentage(const struct sched_config *cfg,
					       unsigned p)
{
	int32_t own = cfg->profiles[p].percentage_of_nodes_to_score;
	return own >= 0 ? own : cfg->percentage_of_nodes_to_score;
}

/* Every profile places with `pct` (0..100): an option that overrides
 * the file's percentageOfNodesToScore, the profiles' own included. */
static inline void sched_config_set_percentage(struct sched_config *cfg,
					       int32_t pct)
{
	cfg->percentage_of_nodes_to_score = pct;
	for (unsigned i = 0; i < cfg->n_profiles && i < SCHED_MAX_PROFILES; i++)
		cfg->profiles[i].percentage_of_nodes_to_score = -1;
}

/* The index of the profile for a pod's spec.schedulerName (`len` bytes;
 * empty is default-scheduler, as the API server defaults it), or -1 when
 * no profile has it: kube-scheduler leaves such a pod to another
 * scheduler. NULL `cfg` is kube's default: one profile, default-scheduler.
 * O(profiles * name length). */
static inline int sched_profile_of(const struct sched_config *cfg,
				   const char *name, size_t len)
{
	if (len == 0) {
		name = SCHED_DEFAULT_NAME;
		len = sizeof(SCHED_DEFAULT_NAME) - 1;
	}
	if (cfg == NULL)
		return len == sizeof(SCHED_DEFAULT_NAME) - 1 &&
		       memcmp(name, SCHED_DEFAULT_NAME, len) == 0 ? 0 : -1;
	for (unsigned i = 0; i < cfg->n_profiles && i < SCHED_MAX_PROFILES; i++) {
		const char *have = cfg->profiles[i].scheduler_name;
		if (strnlen(have, SCHED_NAME_MAX + 1) == len &&
		    memcmp(have, name, len) == 0)
			return (int)i;
	}
	return -1;
}

#endif
