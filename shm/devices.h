/* A node's devices as the ledger holds them: GPUs shared per device or
 * taken whole, and a pool of exclusive cores split over NUMA nodes.
 *
 * This is what shm/ledger.c needs to take and give back devices and what a
 * reader sees of them (struct device_view, loaded from the live counters
 * by ledger_load_devices()). Which devices a pod should take, and whether
 * it fits at all, is policy: workers/device_choice.h.
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

/* Word w of the node's exclusive-core pool: bits for cores 0 .. n_cores-1.
 * The one definition of which cores exist; a core outside it is never
 * free, taken or given back. */
static inline uint64_t devices_core_pool_word(const struct node_devices *d,
					      unsigned w)
{
	unsigned lo = w * 64;
	return d->n_cores >= lo + 64 ? UINT64_MAX
	       : d->n_cores > lo     ? (UINT64_C(1) << (d->n_cores - lo)) - 1
				     : 0;
}

/* A view of an empty node: every device and pool core free. */
void devices_view_empty(const struct node_devices *d, struct device_view *out);

/* True when the pod asks for any device. */
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
