/* KubeSchedulerConfiguration (kubescheduler.config.k8s.io/v1), YAML or
 * JSON: the settings the engine implements, strictly. Anything else in the
 * file is an error that names it.
 *
 * Read: percentageOfNodesToScore (top level, or the first profile's, which
 * wins); the first profile's plugins.score enabled/disabled lists with
 * weights (merged with the default profile as kube-scheduler merges them;
 * besides kube's four, our GpuBestFit and GpuFragmentation, off unless
 * enabled);
 * pluginConfig args of NodeResourcesFit (scoringStrategy.type
 * LeastAllocated / MostAllocated, scoringStrategy.resources) and
 * NodeResourcesBalancedAllocation (resources).
 */
#ifndef SHMSCHED_INGEST_SCHED_CONFIG_H
#define SHMSCHED_INGEST_SCHED_CONFIG_H

#include <stddef.h>

#include "shm/shm.h"
#include "workers/workers.h"

/* The most errors one load reports (the rest are counted). */
#define SCHED_CONFIG_ERRORS_MAX 20

/* kube-scheduler's defaults: adaptive percentage, TaintToleration 3,
 * NodeAffinity 2, NodeResourcesFit 1 (LeastAllocated, cpu 1, memory 1),
 * NodeResourcesBalancedAllocation 1 (cpu, memory); GpuBestFit and
 * GpuFragmentation 0 (not run). */
void sched_config_default(struct sched_config *cfg);

/* Reads `path` over the defaults. Resource names in the file are registered
 * in `res`. Returns 0, or a negative errno with a message in `err` that
 * names the file, the field path and the value. */
int sched_config_load(const char *path, struct sched_config *cfg,
		      struct res_names *res, char *err, size_t err_len);

/* The same for `len` bytes in memory named `name` (tests, fuzzing). */
int sched_config_load_buffer(const char *name, const char *buf, size_t len,
			     struct sched_config *cfg, struct res_names *res,
			     char *err, size_t err_len);

#endif
