/* Device fit and choice on one node: GPUs shared per device or taken
 * whole, and exclusive cores packed on one NUMA node when they fit.
 *
 * Pure functions of a node's device spec (struct node_devices), a view of
 * what is free on it (struct device_view, shm/devices.h) and a pod: the
 * DeviceFit filter, the GPU scores, the choice of devices and the checks of
 * bound pods and releases (ingest/) all use these rules, so they cannot
 * disagree on what fits. The commit (shm/ledger.c) takes exactly the
 * devices chosen here and refuses any already taken.
 *
 * Rules (the GPU-sharing scheduler of Alibaba's trace, and Kubernetes'
 * static CPU manager):
 * - The pod's model set, when not empty, must contain the node's model.
 * - num_gpu 1, gpu_milli below a device: one device with that much free.
 * - num_gpu N, whole devices: N devices with nothing taken from them.
 * - exclusive_cores k on a node that opted in: k pool cores not held by
 *   another pod; all on one NUMA node when one has k free.
 */
#ifndef SHMSCHED_WORKERS_DEVICE_CHOICE_H
#define SHMSCHED_WORKERS_DEVICE_CHOICE_H

#include <stdbool.h>
#include <stdint.h>

#include "shm/shm.h"

enum device_misfit {
	DEVICE_FITS = 0,
	DEVICE_MISFIT_MODEL = 1, /* the node's GPU model is not in the pod's set */
	DEVICE_MISFIT_GPU = 2,   /* no device (or not N whole ones) has enough free */
	DEVICE_MISFIT_CORES = 3, /* too few free exclusive cores */
};

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

#endif
