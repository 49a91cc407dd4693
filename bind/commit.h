/* The commit of one pod's placement on the ledger: the step between the
 * engine's choice (workers/) and the answer (bind/answer.h).
 *
 * The engine chose a node by reading counters that other workers are
 * moving; the commit takes the pod's resources, devices and host ports on
 * that node with the ledger's lock-free protocol (shm/ledger.c, C1-C4 and
 * U1), which refuses rather than overcommit. A refusal is a lost race: the
 * resolver (bind/resolver.h) places the pod again.
 *
 * Concurrency: any thread, with the engine it placed with, inside the
 * same RCU read-side period as the placement (the node's allocatable is
 * read from the snapshot the placement used).
 */
#ifndef SHMSCHED_BIND_COMMIT_H
#define SHMSCHED_BIND_COMMIT_H

#include <stdint.h>

#include "shm/shm.h"
#include "workers/workers.h"

/* Commits `pod` to `slot` with the devices `dev` (the placement's; NULL:
 * none) if it still fits there. Returns 0, or (nothing committed):
 *   -EAGAIN      a resource, the pod count or a device no longer fits, or
 *                the placement's devices were already stale (DEVICES_STALE)
 *   -EBUSY       another placement holds the node's port table
 *   -EADDRINUSE  a requested host port is in use
 *   -ENOSPC      the node's port table is full */
int commit_pod(struct engine *e, const struct pod_spec *pod, uint32_t slot,
	       const struct device_assignment *dev);

#endif
