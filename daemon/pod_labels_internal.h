/* A pod's namespace and labels between its pod group (shm/pod_group.h:
 * what inter-pod rules know of a pod) and a version 2 placement value in
 * etcd (coord/placement_value.h): what a host writes beside each
 * placement so that other hosts' inter-pod affinity and topology spread
 * count the pod (docs/design/multi-host.md, "Rules across shards"), and
 * what those hosts make of it again. Only the namespace and the labels
 * travel: the pod's own (anti-)affinity terms and spread constraints do
 * not, so another host's placed pod is matched by selectors, never
 * matches itself against a new pod (its anti-affinity is not symmetric
 * across shards). */
#ifndef SHMSCHED_DAEMON_POD_LABELS_INTERNAL_H
#define SHMSCHED_DAEMON_POD_LABELS_INTERNAL_H

#include <stdint.h>

#include "coord/coord.h"
#include "shm/shm.h"

/* Fills pv's version (2), ns, labels and n_labels from pod group `group`
 * (0: none; its ids' strings in `strings`, any thread holding the id).
 * 0; -E2BIG the labels pass PLACEMENT_LABELS_MAX bytes, or one is not a
 * label placement_label_ok takes, or the group does not decode: pv left
 * at version 1 (no namespace, no labels), to be written so. */
int pod_labels_to_value(const struct intern *strings, uint32_t group, struct placement_value *pv);

/* The intern id of the pod group holding pv's namespace and labels (and
 * nothing else) into *group (0 when pv is version 1 or has neither).
 * The intern table's writer's (under the producers' lock). 0, or the
 * errno of intern_add / pod_group_encode (-ENOSPC the table full). */
int pod_labels_group(struct intern *strings, const struct placement_value *pv, uint32_t *group);

#endif
