/* Device fit and choice on one node: GPUs shared per device or taken
 * whole, and exclusive cores packed on one NUMA node when they fit.
 *
 * Pure functions of a node's device spec (struct node_devices), a view of
 * what is free on it (struct device_view, read from the live counters by
 * cluster_load_devices()) and a pod: the filter and the scores in workers/
 * and the commit in shm/cluster.c use the same rules, so they cannot
 * disagree on what fits.
 *
 * Rules (the GPU-sharing scheduler of Alibaba's trace, and Kubernetes'
 * static CPU manager):
 * - The pod's model set, when not empty, must contain the node's model.
 * - num_gpu 1, gpu_milli below a device: one device with that much free.
 * - num_gpu N, whole devices: N devices with nothing taken from them.
 * - exclusive_cores k on a node that opted in: k pool cores not held by
 *   another pod; all on one NUMA node when one has k free.
 */
#ifndef SHMSCHED_SHM_DEVICES_H
#define SHMSCHED_SHM_DEVICES_H

#include <stdbool.h>
#include <stdint.h>

#include "shm/model.h"

/* What is free of a node's devices. */
struct device_view {
	uint16_t gpu_free[NODE_MAX_GPUS]; /* milli free per device; 0 past n_gpus */
	uint64_t cores_free[CORE_WORDS];  /* pool cores held by no pod */
};

enum device_misfit {
	DEVICE_FITS = 0,
	DEVICE_MISFIT_MODEL = 1, /* the node's GPU model is not in the pod's set */
	DEVICE_MISFIT_GPU = 2,   /* no device (or not N whole ones) has enough free */
	DEVICE_MISFIT_CORES = 3, /* too few free exclusive cores */
};

/* A view of an empty node: every device and pool core free. */
void devices_view_empty(const struct node_devices *d, struct device_view *out);

/* True when the pod asks for anything this file decides. */
static inline bool devices_wanted(const struct pod_spec *pod)
{
	return pod->num_gpu > 0 || pod->exclusive_cores > 0;
}

/* True when the pod takes exclusive cores on this node. */
static inline bool devices_takes_cores(const struct node_devices *d,
				       const struct pod_spec *pod)
{
	return pod->exclusive_cores > 0 && d->n_cores > 0;
}

bool devices_model_ok(const struct node_devices *d, const struct pod_spec *pod);

/* Devices with all GPU_MILLI_PER_DEVICE free. */
unsigned devices_whole_free(const struct node_devices *d,
			    const struct device_view *v);

/* Whether the pod's GPU request fits the devices as they are now (model
 * included); true for a pod that asks for no GPU. */
bool devices_gpu_fits(const struct node_devices *d, const struct device_view *v,
		      const struct pod_spec *pod);

/* enum device_misfit: the first rule above the pod fails, in that order. */
int devices_fit(const struct node_devices *d, const struct device_view *v,
		const struct pod_spec *pod);

/* The device a sharing pod takes by best fit: the one with the least free
 * that still holds gpu_milli (lowest index on a tie), or -1. */
int devices_best_fit_gpu(const struct node_devices *d, const struct device_view *v,
			 uint16_t gpu_milli);

/* Chooses cores for k exclusive cores: the NUMA node with the fewest free
 * cores that still has k (lowest first), else NUMA nodes from the most
 * free down. Lowest free cores within a NUMA node. Returns false (out
 * zeroed) when fewer than k pool cores are free. */
bool devices_pick_cores(const struct node_devices *d, const struct device_view *v,
			unsigned k, uint64_t out[CORE_WORDS]);

/* The whole assignment for a pod that fits (devices_fit() == 0): `gpu`
 * is the device a sharing pod takes (-1: best fit); whole devices are the
 * lowest-numbered free ones; cores by devices_pick_cores(). Returns
 * enum device_misfit, with *out zeroed unless DEVICE_FITS. */
int devices_assign(const struct node_devices *d, const struct device_view *v,
		   const struct pod_spec *pod, int gpu,
		   struct device_assignment *out);

/* Applies an assignment to a view (sign +1 takes, -1 gives back). */
void devices_view_apply(struct device_view *v, const struct device_assignment *a,
			int sign);

/* The NUMA node of a core. */
static inline unsigned devices_numa_of(const struct node_devices *d, unsigned core)
{
	return core / (d->n_cores / d->n_numa);
}

/* Writes a cpuset as Linux's list format ("0-3,8"). Returns snprintf's result. */
int devices_format_cpuset(const uint64_t set[CORE_WORDS], char *buf, unsigned long len);

#endif
