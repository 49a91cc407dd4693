/* Kueue's quotas in `shmsched place`: see place_quota.h.
 *
 * The daemon's rules (daemon/quota_charge.c, daemon/attempt.c
 * place_under_quota) on one thread, through the pieces both share
 * (quota/quota_pod.c): the pod's LocalQueue from its namespace and the
 * label kueue.x-k8s.io/queue-name (quota_pod_queue), its charge
 * (quota_pod_charge), then each flavor of its ClusterQueue in order: the
 * flavor's nodeLabels merged into its nodeSelector
 * (quota_pod_flavor_spec), charged (quota_try_charge), placed; a flavor
 * where no node fits gives the charge back before the next. Which flavor
 * refused how is told by quota_refusal_message, the daemon's own words.
 *
 * Cost per pod under quota: one group decode, one LocalQueue lookup, one
 * charge per flavor tried and one placement per flavor with room. A pod
 * without the label: one group decode.
 */
#include "cli/place_quota.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct place_quota {
	struct quota_tree *t;
	struct intern *strings;
	const struct res_names *res;
	struct quota_pod_names names;
	struct quota_pod_map map;
	struct pod_group scratch;
	struct pod_spec flavored;
};

struct place_quota *place_quota_create(struct quota_tree *t, struct intern *strings,
				       const struct res_names *res)
{
	struct place_quota *q = calloc(1, sizeof(*q));
	if (q == NULL)
		return NULL;
	q->t = t;
	q->strings = strings;
	q->res = res;
	int rc = quota_pod_names_intern(&q->names, t, strings);
	if (rc < 0) {
		free(q);
		errno = -rc;
		return NULL;
	}
	return q;
}

void place_quota_destroy(struct place_quota *q)
{
	if (q != NULL)
		quota_tree_free(q->t);
	free(q);
}

int place_quota_place(struct place_quota *q, const struct pod_spec *spec,
		      int (*place)(void *arg, const struct pod_spec *spec, int *slot),
		      void *arg, int *slot, char *why, size_t why_len)
{
	why[0] = '\0';
	*slot = -1;
	struct quota_tree *t = q->t;
	int cq = quota_pod_queue(t, &q->names, q->strings, spec->group, &q->scratch,
				 NULL, why, why_len);
	if (cq == QUOTA_POD_NONE)
		return place(arg, spec, slot);
	if (cq == QUOTA_POD_REFUSED)
		return 0;
	int64_t charge[QUOTA_MAX_RESOURCES];
	unsigned missing;
	if (quota_pod_charge(t, q->res, &q->map, &spec->request, charge, &missing) < 0) {
		quota_uncovered_message(t, cq, q->res->name[missing], "the pod", why,
					why_len);
		return 0;
	}
	const int *order;
	int n = quota_node_flavors(t, cq, &order);
	int rcs[QUOTA_MAX_FLAVORS];
	bool placed_any = false, full = false;
	for (int k = 0; k < n; k++) {
		int f = order[k];
		const struct pod_spec *sp = spec;
		if (q->names.flavors[f].n > 0) {
			if (!quota_pod_flavor_spec(&q->names, f, spec, &q->flavored)) {
				rcs[k] = -EXDEV;
				continue;
			}
			sp = &q->flavored;
		}
		rcs[k] = quota_try_charge(t, cq, f, charge);
		full = full || rcs[k] == -ENOSPC;
		if (rcs[k] < 0)
			continue;
		placed_any = true;
		int rc = place(arg, sp, slot);
		if (rc < 0 || *slot >= 0) {
			if (rc < 0)
				quota_release(t, cq, f, charge);
			return rc;
		}
		quota_release(t, cq, f, charge);
	}
	if (placed_any)
		return 0; /* a flavor had room, no node: the engine says why */
	if (full) {
		quota_refusal_message(t, cq, order, rcs, n, charge, why, why_len);
		return 0;
	}
	quota_unfit_message(t, cq, order, n, charge, "the pod", why, why_len);
	return 0;
}
