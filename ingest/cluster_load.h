/* A cluster from a Kubernetes JSON file: its Nodes become the first
 * snapshot, and its Pods that are bound to a node (spec.nodeName) and not
 * finished (phase Succeeded or Failed) are counted as that node's use, as
 * kube-scheduler's cache counts assigned pods. Its Namespaces resolve the
 * bound pods' namespaceSelectors (ingest/k8s_json.h, k8s_objects); its
 * Kueue ResourceFlavors, Cohorts, ClusterQueues and LocalQueues become a
 * sealed quota tree (ingest/kueue_json.h; stats.quota); objects of kinds
 * shmsched does not read are skipped and counted.
 *
 * The calling thread must be allowed to call cluster_apply() (shm/cluster.h).
 */
#ifndef SHMSCHED_INGEST_CLUSTER_LOAD_H
#define SHMSCHED_INGEST_CLUSTER_LOAD_H

#include <stddef.h>
#include <stdint.h>

#include "ingest/k8s_json.h"
#include "shm/shm.h"

struct quota_tree; /* quota/quota.h */

struct cluster_load_stats {
	uint32_t nodes;
	uint32_t running_pods;     /* counted on their node */
	uint32_t orphan_pods;      /* bound to a node the file does not have: skipped */
	uint32_t pods_without_devices; /* bound pods whose devices were not free: counted without */
	uint32_t finished_pods;    /* Succeeded or Failed: skipped */
	uint32_t pending_pods;     /* no spec.nodeName: not the cluster's use; skipped */
	struct k8s_skipped skipped; /* objects of other kinds (ConfigMap, Event, ...) */
	/* The file's Kueue objects (kueue.x-k8s.io ResourceFlavor, Cohort,
	 * ClusterQueue, LocalQueue), sealed; NULL when it has none. Set by a
	 * load that succeeds (NULL after one that fails); the caller's to
	 * free with quota_tree_free(). */
	struct quota_tree *quota;
};

/* Loads `path` into a new cluster with room for its nodes plus
 * `extra_slots`. Returns 0 and sets *out, or a negative errno with a
 * message in `err` (the decoder's messages; duplicate node names:
 * -EEXIST). */
int cluster_load_file(const char *path, struct intern *strings,
		      struct res_names *res, uint32_t extra_slots,
		      struct cluster **out, struct cluster_load_stats *stats,
		      char *err, size_t err_len);

/* The same, with the Namespaces, Services and controllers already read
 * into `objects` by the caller (k8s_objects_read_file, of this file and
 * any other whose objects count, e.g. the pods file): the bound pods'
 * namespaceSelectors resolve against them. */
int cluster_load_file_objects(const char *path, struct intern *strings,
			      struct res_names *res, struct k8s_objects *objects,
			      uint32_t extra_slots, struct cluster **out,
			      struct cluster_load_stats *stats, char *err,
			      size_t err_len);

/* The same into `cl`, an empty cluster the caller made (the daemon's, in
 * the state region), each bound pod also recorded as a placement owned by
 * PLACEMENT_OWNER_BOUND in `records` (NULL: counted only). Errors as
 * above, and -ENOSPC for more nodes than `cl` holds, or more bound pods
 * than `records` does. */
int cluster_load_file_into(const char *path, struct intern *strings,
			   struct res_names *res, struct cluster *cl,
			   struct placements *records,
			   struct cluster_load_stats *stats, char *err,
			   size_t err_len);

/* Counts a bound pod's use on node `slot` (ledger_account) and, when
 * `records` is not NULL, records it as a placement of
 * PLACEMENT_OWNER_BOUND, its id in *id (NULL: not wanted; 0 when not
 * recorded). Returns 0, or -ENOSPC (no free record, or the node's
 * host-port table is full). */
int cluster_record_bound(struct cluster *cl, struct placements *records,
			 uint32_t slot, const struct pod_spec *pod,
			 const struct device_assignment *dev, uint64_t *id);

#endif
