/* One node requirement added to a pod's required node affinity, in a copy
 * of its spec: the engine then places the copy, whose nodes failing the
 * requirement no longer fit (counted as "didn't match Pod's node
 * affinity/selector"). The pool quarantine excludes pools with it
 * (quarantine_exclude, NotIn); the shard gate keeps a host to its shards
 * (daemon/shard_gate_internal.h, In). */
#ifndef SHMSCHED_DAEMON_NODE_REQUIRE_INTERNAL_H
#define SHMSCHED_DAEMON_NODE_REQUIRE_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>

#include "shm/shm.h"

/* `pod` with the requirement (label `key`, `op` an enum sel_op, the
 * values[0..n) ids) in each required node selector term (one term made
 * when it has none), into *out. false (out unset) when n is 0, when the
 * requirements do not fit the spec's arrays (POD_MAX_EXPRS,
 * POD_MAX_VALUES), or when the pod's required terms are present but empty
 * (they match no node anyway). */
bool node_require(const struct pod_spec *pod, uint32_t key, uint8_t op,
		  const uint32_t *values, uint32_t n, struct pod_spec *out);

#endif
