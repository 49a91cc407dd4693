/* A sharded host's capacity summary (issue 40; docs/design/multi-host.md,
 * "Pods that do not fit at home"): per owned shard, its nodes and what is
 * free there, read from the cluster's snapshot and ledger at one moment,
 * into the status value the membership thread puts in hosts/<host>
 * (coord/host_status.h). Called by the membership thread at most once a
 * second (coord/membership.c), never on a placement's path.
 *
 * The figures are relaxed: each node's use is loaded counter by counter
 * (ledger_load_used), while workers place, so a node's free cpu and its
 * free memory may be of two instants a placement apart, and the whole is
 * no one instant's. Free is allocatable minus use, at least 0; a cordoned
 * node (spec.unschedulable) counts as a node with nothing free. Only the
 * first HOST_STATUS_SHARDS owned shards by name are summed; the others
 * are counted in `more`. Cost: one pass over the snapshot's slots, a
 * label lookup and up to HOST_STATUS_SHARDS id compares a node. */
#ifndef SHMSCHED_DAEMON_CAPACITY_SUMMARY_INTERNAL_H
#define SHMSCHED_DAEMON_CAPACITY_SUMMARY_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "coord/coord.h"
#include "shm/shm.h"

/* The owned shards `owned` (n, sorted by name) of cluster `c`, whose
 * nodes carry them as the value of label `key` (names in `strings`),
 * into out's shards, n and more (its lag left as it is). The calling
 * thread must not be an RCU reader already (it registers for the pass). */
void capacity_summary(struct cluster *c, const struct intern *strings, uint32_t key,
		      const shard_name_t *owned, size_t n, struct host_status *out);

#endif
