/* Kueue's fair-sharing order of the ClusterQueues of one cohort tree
 * that have workloads waiting (kueue pkg/scheduler/fair_sharing_iterator.go,
 * entryComparer.less): each ClusterQueue nominates its head, and the head
 * whose ClusterQueue would have the lowest dominant resource share after
 * admitting it goes first.
 *
 * The key of a head, compared in this order:
 *   1. the rounded weighted share (quota_share_rounded) its ClusterQueue
 *      would have with the head's request added, lower first (Kueue's
 *      "1: DRF", which compares DominantResourceShare() after
 *      SimulateUsageAddition of the workload);
 *   2. the priority, higher first (Kueue's "2: Priority", under the
 *      PrioritySortingWithinCohort feature gate, on by default);
 *   3. arrival, earlier first (Kueue's "3: FIFO",
 *      GetQueueOrderTimestamp);
 *   4. the ClusterQueue's name (ours: Kueue leaves this tie to map
 *      order, "non-deterministic" in its getCq comment).
 * The request is counted in the ClusterQueue's first flavor (the first
 * Kueue's flavor assigner tries), since which flavor it gets is known only
 * when it is charged. The share compared is the ClusterQueue's own: for a
 * cohort tree of one level (ClusterQueues under a root Cohort) that is
 * Kueue's tournament; in nested Cohorts Kueue compares at each level the
 * share of the child Cohort, which this does not (docs/guides/quotas.md).
 *
 * No allocation; O(flavors x resources) per key. Any thread that may read
 * the tree (relaxed reads of usage: a view of the moment).
 */
#ifndef SHMSCHED_QUOTA_FAIR_SHARE_H
#define SHMSCHED_QUOTA_FAIR_SHARE_H

#include <stdint.h>

struct quota_tree;

struct fair_key {
	int64_t drs;       /* quota_share_rounded() after admission */
	int32_t priority;
	uint32_t arrival;  /* a wrapping counter: compared as a difference */
	int cq;
};

/* The key of ClusterQueue `cq`'s head requesting `request` (quota
 * resource order, quota_n_resources() entries; NULL: nothing) with
 * `priority` and `arrival`. 0, or -EINVAL (not sealed, not a
 * ClusterQueue, a request out of range). */
int fair_share_key(const struct quota_tree *t, int cq, const int64_t *request,
		   int32_t priority, uint32_t arrival, struct fair_key *out);

/* < 0 when head `a` goes before head `b`, > 0 after, 0 for the same
 * ClusterQueue and arrival. */
int fair_share_compare(const struct quota_tree *t, const struct fair_key *a,
		       const struct fair_key *b);

#endif
