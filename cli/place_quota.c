/* Kueue's quotas in `shmsched place`: see place_quota.h.
 *
 * The daemon's rules (daemon/quota_charge.c, daemon/attempt.c
 * place_under_quota) on one thread: the pod's LocalQueue from its
 * namespace and the label kueue.x-k8s.io/queue-name (its group decoded),
 * its charge (its requests per resource the tree names, and 1 for "pods"
 * where the tree names it), then each flavor of its ClusterQueue in
 * order: the flavor's nodeLabels merged into its nodeSelector, charged
 * (quota_try_charge), placed; a flavor where no node fits gives the
 * charge back before the next. Which flavor refused how is told by
 * quota_refusal_message, the daemon's own words.
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

/* Kueue's label naming a pod's LocalQueue (constants.QueueLabel). */
#define PQ_QUEUE_LABEL "kueue.x-k8s.io/queue-name"

struct pq_flavor {
	unsigned n;
	struct label labels[QUOTA_MAX_FLAVOR_LABELS]; /* sorted by key */
};

struct place_quota {
	struct quota_tree *t;
	struct intern *strings;
	const struct res_names *res;
	uint32_t queue_key;
	struct pq_flavor flavors[QUOTA_MAX_FLAVORS];
	struct pod_group scratch;
	struct pod_spec flavored;
};

static int cmp_label(const void *a, const void *b)
{
	const struct label *x = a, *y = b;
	return x->key < y->key ? -1 : x->key > y->key;
}

struct place_quota *place_quota_create(struct quota_tree *t, struct intern *strings,
				       const struct res_names *res)
{
	struct place_quota *q = calloc(1, sizeof(*q));
	if (q == NULL)
		return NULL;
	q->t = t;
	q->strings = strings;
	q->res = res;
	int rc = intern_add_str(strings, PQ_QUEUE_LABEL, &q->queue_key);
	for (int f = 0; rc == 0 && f < quota_n_flavors(t); f++) {
		struct pq_flavor *fl = &q->flavors[f];
		fl->n = (unsigned)quota_flavor_n_labels(t, f);
		for (unsigned i = 0; rc == 0 && i < fl->n; i++) {
			const char *key, *value;
			quota_flavor_label(t, f, (int)i, &key, &value);
			rc = intern_add_str(strings, key, &fl->labels[i].key);
			if (rc == 0)
				rc = intern_add_str(strings, value, &fl->labels[i].value);
		}
		qsort(fl->labels, fl->n, sizeof(fl->labels[0]), cmp_label);
	}
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

/* The pod's ClusterQueue (>= 0), -1 (no label), or -2 with why. */
static int queue_of(struct place_quota *q, const struct pod_spec *pod, char *why,
		    size_t len)
{
	if (pod->group == 0)
		return -1;
	const char *enc = intern_str(q->strings, pod->group);
	uint32_t value;
	if (pod_group_decode(enc, intern_len(q->strings, pod->group), &q->scratch) < 0 ||
	    !labels_get(q->scratch.labels, q->scratch.n_labels, q->queue_key, &value))
		return -1;
	const char *ns = intern_str(q->strings, q->scratch.ns);
	const char *name = intern_str(q->strings, value);
	int cq = quota_local_queue_find(q->t, ns, name);
	if (cq >= 0)
		return cq;
	/* The daemon's words (daemon/quota_charge.c lookup). */
	snprintf(why, len, "metadata.labels[\"" PQ_QUEUE_LABEL "\"]: LocalQueue "
		 "%s/%s doesn't exist (expected a LocalQueue of the pod's "
		 "namespace)", ns, name);
	return -2;
}

/* `pod` with flavor f's nodeLabels merged into its nodeSelector, into
 * q->flavored: false when a key is asked another value or the selector
 * would be too long (daemon/quota_charge.c qc_flavor_spec's rule). */
static bool flavor_spec(struct place_quota *q, int f, const struct pod_spec *pod)
{
	const struct pq_flavor *fl = &q->flavors[f];
	struct label merged[POD_MAX_SELECTOR + QUOTA_MAX_FLAVOR_LABELS];
	unsigned n = 0, i = 0, j = 0;
	while (i < pod->n_selector || j < fl->n) {
		bool mine = j == fl->n ||
			    (i < pod->n_selector && pod->selector[i].key < fl->labels[j].key);
		bool theirs = !mine && (i == pod->n_selector ||
					fl->labels[j].key < pod->selector[i].key);
		if (mine)
			merged[n++] = pod->selector[i++];
		else if (theirs)
			merged[n++] = fl->labels[j++];
		else if (pod->selector[i].value != fl->labels[j].value)
			return false;
		else
			merged[n++] = pod->selector[i++], j++;
	}
	if (n > POD_MAX_SELECTOR)
		return false;
	q->flavored = *pod;
	memset(q->flavored.selector, 0, sizeof(q->flavored.selector));
	memcpy(q->flavored.selector, merged, n * sizeof(merged[0]));
	q->flavored.n_selector = (uint8_t)n;
	return true;
}

int place_quota_place(struct place_quota *q, const struct pod_spec *spec,
		      int (*place)(void *arg, const struct pod_spec *spec, int *slot),
		      void *arg, int *slot, char *why, size_t why_len)
{
	why[0] = '\0';
	*slot = -1;
	int cq = queue_of(q, spec, why, why_len);
	if (cq == -1)
		return place(arg, spec, slot);
	if (cq == -2)
		return 0;
	struct quota_tree *t = q->t;
	int64_t charge[QUOTA_MAX_RESOURCES] = {0};
	for (unsigned i = 0; i < RES_MAX; i++) {
		if (i == RES_PODS || spec->request.v[i] == 0)
			continue;
		int r = i < q->res->count ? quota_resource_find(t, q->res->name[i]) : -1;
		if (r < 0) {
			snprintf(why, why_len, "ClusterQueue \"%s\" covers no resource "
				 "\"%s\", which the pod requests (no ClusterQueue "
				 "names it)", quota_node_name(t, cq), q->res->name[i]);
			return 0;
		}
		charge[r] = spec->request.v[i];
	}
	int pods = quota_resource_find(t, q->res->name[RES_PODS]);
	if (pods >= 0)
		charge[pods] = 1;
	const int *order;
	int n = quota_node_flavors(t, cq, &order);
	int rcs[QUOTA_MAX_FLAVORS];
	bool placed_any = false, full = false;
	for (int k = 0; k < n; k++) {
		int f = order[k];
		const struct pod_spec *sp = spec;
		if (q->flavors[f].n > 0) {
			if (!flavor_spec(q, f, spec)) {
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
