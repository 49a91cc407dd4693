/* Kueue's quotas in `shmsched place` (cli/place.c): the cluster file's
 * ClusterQueues and LocalQueues applied in its one pass, as the daemon
 * applies them (daemon/quota_charge_internal.h): a pod labelled
 * kueue.x-k8s.io/queue-name is charged to its LocalQueue's ClusterQueue,
 * trying the queue's flavors in order (the flavor's nodeLabels added to
 * its nodeSelector), and refused in the daemon's words
 * (quota_refusal_message) when none has room. One thread; nothing is
 * ever given back (place releases nothing). */
#ifndef SHMSCHED_CLI_PLACE_QUOTA_H
#define SHMSCHED_CLI_PLACE_QUOTA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "quota/quota.h"
#include "shm/shm.h"

struct place_quota;

/* For the sealed tree `t` (owned from now on, freed by
 * place_quota_destroy), the run's `strings` and `res`. NULL with errno
 * ENOMEM or ENOSPC. */
struct place_quota *place_quota_create(struct quota_tree *t, struct intern *strings,
				       const struct res_names *res);
void place_quota_destroy(struct place_quota *q);

/* Places one pod: `place` is called with the pod's spec (or that spec
 * with a flavor's nodeLabels added) and fills *slot (< 0: no node); it
 * returns 0 or -errno. A pod without the queue label is placed once
 * as it is. Returns 0 with *slot the node (< 0 with `why` set when quota
 * refused it, or with why "" when no node fits: the engine says why),
 * or the first -errno `place` returned. A pod placed under quota stays
 * charged. */
int place_quota_place(struct place_quota *q, const struct pod_spec *spec,
		      int (*place)(void *arg, const struct pod_spec *spec, int *slot),
		      void *arg, int *slot, char *why, size_t why_len);

#endif
