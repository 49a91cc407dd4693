/* A cluster from a Kubernetes JSON file: its Nodes become the first
 * snapshot, and its Pods that are bound to a node (spec.nodeName) and not
 * finished (phase Succeeded or Failed) are counted as that node's use, as
 * kube-scheduler's cache counts assigned pods.
 *
 * The calling thread must be allowed to call cluster_apply() (shm/cluster.h).
 */
#ifndef SHMSCHED_INGEST_CLUSTER_LOAD_H
#define SHMSCHED_INGEST_CLUSTER_LOAD_H

#include <stddef.h>
#include <stdint.h>

#include "shm/shm.h"

struct cluster_load_stats {
	uint32_t nodes;
	uint32_t running_pods;     /* counted on their node */
	uint32_t orphan_pods;      /* bound to a node the file does not have: skipped */
	uint32_t pods_without_devices; /* bound pods whose devices were not free: counted without */
	uint32_t finished_pods;    /* Succeeded or Failed: skipped */
	uint32_t pending_pods;     /* no spec.nodeName: not the cluster's use; skipped */
};

/* Loads `path` into a new cluster with room for its nodes plus
 * `extra_slots`. Returns 0 and sets *out, or a negative errno with a
 * message in `err` (the decoder's messages; duplicate node names:
 * -EEXIST). */
int cluster_load_file(const char *path, struct intern *strings,
		      struct res_names *res, uint32_t extra_slots,
		      struct cluster **out, struct cluster_load_stats *stats,
		      char *err, size_t err_len);

#endif
