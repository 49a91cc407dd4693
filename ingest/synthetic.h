/* A synthetic cluster, reproducible from a seed: what `shmschedd
 * --synthetic NODES[:RUNNING]` and the benchmark run on when no cluster
 * file is given.
 *
 * Nodes: shapes of 8 to 128 cores and 32 to 1024 GiB (8 instance types),
 * labels kubernetes.io/hostname, topology.kubernetes.io/zone (3 zones,
 * round robin), topology.kubernetes.io/rack (20 per zone),
 * node.kubernetes.io/instance-type and cores; about 10 % in dedicated pools
 * tainted NoSchedule or NoExecute (label pool=<name>), 5 % with a
 * PreferNoSchedule spot taint, 2 % cordoned; allocatable pods 110. Running
 * pods: small (100m..1 cpu, 128Mi..1Gi) on random untainted nodes where
 * they fit. The shapes follow bench/gen_k8s.py, which writes the same kind
 * of cluster as Kubernetes JSON (not the same nodes: the two generators
 * draw differently).
 */
#ifndef SHMSCHED_INGEST_SYNTHETIC_H
#define SHMSCHED_INGEST_SYNTHETIC_H

#include <stddef.h>
#include <stdint.h>

#include "shm/shm.h"

struct synthetic_stats {
	uint32_t nodes;
	uint32_t running;      /* running pods placed */
	uint32_t running_lost; /* running pods that fit nowhere they were tried */
};

/* Creates a cluster of `nodes` nodes (room for `extra_slots` more) and
 * counts `running` pods on it. Returns 0 and sets *out, or a negative errno
 * with a message in `err` (-EINVAL: 0 nodes or more than 2^24; -ENOMEM). */
int synthetic_cluster(uint32_t nodes, uint32_t running, uint64_t seed,
		      uint32_t extra_slots, struct intern *strings,
		      struct cluster **out,
		      struct synthetic_stats *stats, char *err, size_t err_len);

/* The same into `c`, an empty cluster the caller made, each running pod
 * also recorded as a placement of PLACEMENT_OWNER_BOUND in `records`
 * (NULL: counted only). -EINVAL for more nodes than `c` holds; -ENOSPC for
 * more running pods than `records` holds. */
int synthetic_cluster_into(uint32_t nodes, uint32_t running, uint64_t seed,
			   struct intern *strings, struct cluster *c,
			   struct placements *records,
			   struct synthetic_stats *stats, char *err, size_t err_len);

#endif
