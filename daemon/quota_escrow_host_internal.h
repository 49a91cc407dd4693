/* Quota by escrow, the host's side in shmschedd (issue 40;
 * docs/design/multi-host.md, "Quota by escrow"): with --etcd and Kueue
 * quotas, a host admits against the slices of the shards it owns, not
 * against the whole nominal quota, so the hosts together admit at most
 * the nominal.
 *
 * The queues split are the ClusterQueues of the quota tree given at the
 * start (their nominalQuota entries; borrowingLimit, lendingLimit and
 * Cohorts' quotas are not split). The tree in force is a copy of the
 * base tree (the file's, or OP_QUEUE's latest) whose ClusterQueues'
 * nominals are the sums of the owned shards' slices
 * (quota_tree_copy_nominals), swapped in by qc_replace (QA4), the one
 * policy swap `shmsched queue apply` uses. Before a slice is read, and for
 * a ClusterQueue not split (added later by `shmsched queue apply`, a name
 * or a resource the keys cannot carry, more than QUOTA_ESCROW_CELLS
 * entries or QUOTA_ESCROW_MEMBER_QUEUES queues), the nominal is 0: the
 * safe side, nothing is admitted against it.
 *
 * Threads: qe_host_in_force on the membership thread (it takes the
 * producers' lock for the swap: qc_replace is the intern table's writer's);
 * qe_host_replace under the producers' lock (OP_QUEUE's); the rest on the
 * starting thread. */
#ifndef SHMSCHED_DAEMON_QUOTA_ESCROW_HOST_INTERNAL_H
#define SHMSCHED_DAEMON_QUOTA_ESCROW_HOST_INTERNAL_H

#include <stddef.h>

#include "coord/coord.h"
#include "daemon/quota_charge_internal.h"
#include "ingest/ingest.h"

struct qe_host;

/* For the sealed `base` (not owned; it must outlive its use, as the tree
 * in force did), in force now in `q` (no other thread running yet): the
 * queues to split, and a copy of base with every ClusterQueue's nominal 0
 * swapped in (qc_replace: the live charges carried). The swaps take p's
 * lock. 0, or a negative errno with a message. */
int qe_host_create(struct qe_host **out, const struct quota_tree *base, struct producers *p,
		   struct quota_charge *q, struct placements *pl, char *err, size_t errlen);
/* After qc_destroy: frees the tree in force it made. NULL: nothing. */
void qe_host_destroy(struct qe_host *h);
/* The queues for the membership (coord/membership.h's escrow_queues). */
const struct quota_escrow_queue *qe_host_queues(const struct qe_host *h, size_t *n);
/* coord/membership.h's escrow_in_force: the sums put in force (a new tree
 * swapped in) before it returns, when they changed. 0, or a negative
 * errno (the tree in force stays). */
int qe_host_in_force(struct qe_host *h, const struct quota_escrow_value *sums, size_t n);
/* coord/membership.h's escrow_use (QE7): each queue's use on this host,
 * read under the producers' lock from the tree in force: a cell's
 * `amount` is the ClusterQueue's usage in that (flavor, resource) (every
 * live placement charged to it, on whichever node), its `more` the
 * queue's waiting pods times the latest one's charge in that resource
 * (qc_waiting, qc_parked_ask: QE8), at most the cell's nominal. A queue
 * the tree in force lacks (deleted by `shmsched queue apply`) reports 0.
 * 0, or -EINVAL (n not the queues'). */
int qe_host_use(struct qe_host *h, struct quota_escrow_value *use, size_t n);
/* OP_QUEUE's new base tree `t` (not owned; the caller keeps it as the
 * base): a copy of it with the sums in force swapped in instead, the
 * previous copy freed. Under the producers' lock. */
int qe_host_replace(struct qe_host *h, const struct quota_tree *t, struct qc_carried *c);

#endif
