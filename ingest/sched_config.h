/* KubeSchedulerConfiguration (kubescheduler.config.k8s.io/v1), YAML or
 * JSON: the settings the engine implements, strictly. A field the v1 type
 * does not have is an unknown field; a field it has that shmsched cannot
 * honour and that would change placements is refused saying so; a field
 * that means nothing here is accepted with one warning naming it.
 *
 * Read: every profile (up to SCHED_MAX_PROFILES, each with its
 * schedulerName and percentageOfNodesToScore); each profile's plugins at
 * every extension point, multiPoint included, merged with the default
 * profile and expanded as kube-scheduler does (score weights; besides
 * kube's, our GpuBestFit and GpuFragmentation, off unless enabled);
 * pluginConfig args of NodeResourcesFit (scoringStrategy LeastAllocated,
 * MostAllocated or RequestedToCapacityRatio with its shape; resources),
 * NodeResourcesBalancedAllocation (resources), InterPodAffinity,
 * PodTopologySpread (defaultingType, defaultConstraints) and NodeAffinity
 * (addedAffinity); the rest of the v1 type (docs/reference/configuration.md, "Scheduler
 * configuration").
 */
#ifndef SHMSCHED_INGEST_SCHED_CONFIG_H
#define SHMSCHED_INGEST_SCHED_CONFIG_H

#include <stddef.h>

#include "shm/shm.h"
#include "workers/workers.h"

/* The most errors one load reports (the rest are counted). */
#define SCHED_CONFIG_ERRORS_MAX 20

/* kube-scheduler's defaults: one profile, default-scheduler, adaptive
 * percentage, TaintToleration 3, NodeAffinity 2, NodeResourcesFit 1
 * (LeastAllocated, cpu 1, memory 1), PodTopologySpread 2 (System
 * defaulting), InterPodAffinity 2, NodeResourcesBalancedAllocation 1 (cpu,
 * memory); GpuBestFit and GpuFragmentation 0 (not run). */
void sched_config_default(struct sched_config *cfg);

/* Reads `path` over the defaults. Resource names in the file are registered
 * in `res`; strings of plugin args (topology keys, added affinity) are
 * interned in `strings` (NULL: a file with such args is refused). Returns
 * 0, or a negative errno (the first error's) with every error in `err`,
 * one a line, each naming the file, line, field path and value. `cfg`,
 * `res` and `strings` change only on success. Call before any reader sees
 * `strings` (a refused file's strings are rolled back). */
int sched_config_load(const char *path, struct sched_config *cfg,
		      struct res_names *res, struct intern *strings, char *err,
		      size_t err_len);

/* The same for `len` bytes in memory named `name` (tests, fuzzing). */
int sched_config_load_buffer(const char *name, const char *buf, size_t len,
			     struct sched_config *cfg, struct res_names *res,
			     struct intern *strings, char *err, size_t err_len);

#endif
