/* Kueue's fair-sharing order of waiting heads: see fair_share.h.
 *
 * Design: a key per head, computed from the live tree (quota_share with
 * the head's request in its ClusterQueue's first flavor), and a total
 * order on keys; the caller (daemon/wait.c) keeps only the best key while
 * it walks its ClusterQueues, so choosing the next head costs one key per
 * ClusterQueue with waiting pods and no memory.
 */
#include "quota/fair_share.h"

#include <errno.h>
#include <string.h>

#include "quota/quota.h"

int fair_share_key(const struct quota_tree *t, int cq, const int64_t *request,
		   int32_t priority, uint32_t arrival, struct fair_key *out)
{
	if (cq < 0 || cq >= quota_n_nodes(t) || quota_node_is_cohort(t, cq))
		return -EINVAL;
	const int *order;
	int flavor = quota_node_flavors(t, cq, &order) > 0 ? order[0] : -1;
	struct quota_share s;
	int rc = quota_share(t, cq, flavor, flavor >= 0 ? request : NULL, &s);
	if (rc < 0)
		return rc;
	*out = (struct fair_key){ .drs = quota_share_rounded(&s),
				  .priority = priority, .arrival = arrival,
				  .cq = cq };
	return 0;
}

int fair_share_compare(const struct quota_tree *t, const struct fair_key *a,
		       const struct fair_key *b)
{
	/* kueue pkg/scheduler/fair_sharing_iterator.go, entryComparer.less:
	 * "1: DRF", "2: Priority", "3: FIFO"; then the name (ours). */
	if (a->drs != b->drs)
		return a->drs < b->drs ? -1 : 1;
	if (a->priority != b->priority)
		return a->priority > b->priority ? -1 : 1;
	if (a->arrival != b->arrival)
		return (int32_t)(a->arrival - b->arrival) < 0 ? -1 : 1;
	if (a->cq == b->cq)
		return 0;
	int c = strcmp(quota_node_name(t, a->cq), quota_node_name(t, b->cq));
	return c != 0 ? c : (a->cq < b->cq ? -1 : 1);
}
