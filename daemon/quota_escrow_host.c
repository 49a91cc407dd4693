/* Quota by escrow, the host's side: see
 * daemon/quota_escrow_host_internal.h.
 *
 * Design: the host keeps the base tree (full nominals), the sums last
 * told and the copy in force. A change of the sums builds a copy of the
 * base with them (O(objects)) and swaps it in with qc_replace (O(the
 * placement table), every live charge carried by name, usage over a cut
 * nominal kept: Kueue's rule for a cut quota) under the producers' lock,
 * which also orders it with OP_QUEUE's swaps; the old copy is freed once
 * qc_replace returns (no thread reaches it then). Unchanged sums (every
 * tick's) cost a comparison.
 *
 * The use reports (QE7, qe_host_use): each tick the usage of each split
 * (queue, flavor, resource) and its waiting pods' ask, read from the
 * tree in force under the producers' lock (O(queues x cells) name
 * lookups; no walk of the placements): the host's whole use of a queue,
 * which coord/quota_escrow_member.c attributes to its owned shards. Not
 * by the node's shard of each placement: a shard given up leaves its
 * placements charged here (its pods run on), so a report by node would
 * tell the coordinator less than this host admits against, and its
 * slices could shrink below its use.
 *
 * Invariants: everything but `p` and the immutable queues is read and
 * written under the producers' lock (the membership thread's callback
 * takes it, OP_QUEUE holds it), so a copy is always of the latest base
 * with the latest sums. QE5: qe_host_in_force returns after the swap. */
#include "daemon/quota_escrow_host_internal.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/base.h"
#include "quota/quota.h"

struct qe_host {
	struct quota_escrow_queue *queues;
	size_t n;
	struct quota_escrow_value *sums; /* [n]: amounts 0 until told */
	const struct quota_tree *base;
	struct quota_tree *in_force; /* the copy, owned */
	struct producers *p;
	struct quota_charge *q;
	struct placements *pl;
	/* qe_host_in_force's sums, for its locked swap. */
	const struct quota_escrow_value *told;
	bool swapped; /* the tree in force has h->sums */
};

static int by_cell(const void *a, const void *b)
{
	const struct quota_escrow_cell *x = a, *y = b;
	int c = strcmp(x->flavor, y->flavor);
	return c != 0 ? c : strcmp(x->resource, y->resource);
}

/* ClusterQueue `node`'s nominal entries as a SLICE value; false: none, or
 * one the keys cannot carry. */
static bool queue_of(const struct quota_tree *t, int node, struct quota_escrow_queue *out,
		     char *probe)
{
	const char *name = quota_node_name(t, node);
	if (strlen(name) > QUOTA_ESCROW_QUEUE_MAX)
		return false;
	for (const char *c = name; *c; c++)
		if (!((*c >= 'a' && *c <= 'z') || (*c >= '0' && *c <= '9') || *c == '.' ||
		      *c == '-'))
			return false;
	memset(out, 0, sizeof(*out));
	snprintf(out->name, sizeof(out->name), "%s", name);
	out->nominal.kind = QUOTA_ESCROW_SLICE;
	for (int f = 0; f < quota_n_flavors(t); f++)
		for (int r = 0; r < quota_n_resources(t); r++) {
			int64_t nom, borrow, lend;
			if (!quota_entry(t, node, f, r, &nom, &borrow, &lend))
				continue;
			if (out->nominal.n == QUOTA_ESCROW_CELLS ||
			    nom > QUOTA_ESCROW_QUANTITY_MAX)
				return false;
			struct quota_escrow_cell *c = &out->nominal.cells[out->nominal.n++];
			snprintf(c->flavor, sizeof(c->flavor), "%s", quota_flavor_name(t, f));
			snprintf(c->resource, sizeof(c->resource), "%s",
				 quota_resource_name(t, r));
			c->amount = nom;
		}
	qsort(out->nominal.cells, out->nominal.n, sizeof(out->nominal.cells[0]), by_cell);
	return out->nominal.n > 0 && quota_escrow_value_encode(&out->nominal, probe) >= 0;
}

/* quota_tree_copy_nominals' callback: the sum told for (cq, flavor,
 * resource); 0 for what is not split or not told yet. */
static int64_t slice_sum(void *arg, int cq, int flavor, int resource, int64_t nominal)
{
	(void)nominal;
	const struct qe_host *h = arg;
	const struct quota_tree *t = h->base;
	const char *name = quota_node_name(t, cq);
	const char *fl = quota_flavor_name(t, flavor), *res = quota_resource_name(t, resource);
	for (size_t i = 0; i < h->n; i++) {
		if (strcmp(h->queues[i].name, name) != 0)
			continue;
		const struct quota_escrow_value *s = &h->sums[i];
		for (size_t j = 0; j < s->n; j++)
			if (strcmp(s->cells[j].flavor, fl) == 0 &&
			    strcmp(s->cells[j].resource, res) == 0)
				return s->cells[j].amount < QUOTA_QUANTITY_MAX
				       ? s->cells[j].amount : QUOTA_QUANTITY_MAX;
	}
	return 0;
}

void qe_host_destroy(struct qe_host *h)
{
	if (h == NULL)
		return;
	quota_tree_free(h->in_force);
	free(h->sums);
	free(h->queues);
	free(h);
}

const struct quota_escrow_queue *qe_host_queues(const struct qe_host *h, size_t *n)
{
	*n = h->n;
	return h->queues;
}

/* A copy of h->base with h->sums in force; the old copy freed. Under the
 * producers' lock. */
static int swap_in(struct qe_host *h, struct qc_carried *c)
{
	char err[512];
	struct quota_tree *t, *old;
	int rc = quota_tree_copy_nominals(h->base, slice_sum, h, &t, err, sizeof(err));
	if (rc < 0) {
		log_msg(LOG_LEVEL_WARN, "quota by escrow: the tree of this host's slices: %s",
			err);
		return rc;
	}
	rc = qc_replace(h->q, t, h->pl, &old, c);
	if (rc < 0) {
		quota_tree_free(t);
		return rc;
	}
	if (old == h->in_force)
		quota_tree_free(old);
	h->in_force = t;
	return 0;
}

static int in_force_locked(void *arg)
{
	struct qe_host *h = arg;
	bool same = true;
	for (size_t i = 0; i < h->n && same; i++)
		for (size_t j = 0; j < h->sums[i].n && same; j++)
			same = h->sums[i].cells[j].amount == h->told[i].cells[j].amount;
	if (same && h->swapped)
		return 0;
	memcpy(h->sums, h->told, h->n * sizeof(*h->sums));
	struct qc_carried c;
	int rc = swap_in(h, &c);
	/* A failed swap leaves h->sums ahead of the tree in force: the next
	 * call swaps even with the same sums (QE5: no success without it). */
	h->swapped = rc == 0;
	if (rc == 0 && c.dropped > 0)
		log_msg(LOG_LEVEL_WARN, "quota by escrow: %llu placement(s) charged to no "
			"ClusterQueue after a swap (first of queue %s)",
			(unsigned long long)c.dropped, c.first_dropped);
	return rc;
}

int qe_host_in_force(struct qe_host *h, const struct quota_escrow_value *sums, size_t n)
{
	if (h == NULL || h->q == NULL || n != h->n || n == 0)
		return -EINVAL;
	h->told = sums;
	int rc = producers_with_lock(h->p, in_force_locked, h);
	if (rc < 0)
		log_msg(LOG_LEVEL_WARN, "quota by escrow: this host's slices could not be put "
			"in force: %s (the tree in force stays)", strerror(-rc));
	return rc;
}

/* qe_host_use's arguments, for its locked read. */
struct use_call {
	struct qe_host *h;
	struct quota_escrow_value *use;
};

/* At most cap: n pods asking `ask` each. */
static int64_t asked(int64_t n, int64_t ask, int64_t cap)
{
	if (n <= 0 || ask <= 0 || cap <= 0)
		return 0;
	return n > cap / ask ? cap : n * ask;
}

static int use_locked(void *arg)
{
	struct use_call *u = arg;
	const struct qe_host *h = u->h;
	const struct quota_tree *t = qc_tree(h->q);
	for (size_t i = 0; i < h->n; i++) {
		struct quota_escrow_value *v = &u->use[i];
		int cq = quota_cluster_queue_find(t, h->queues[i].name);
		if (cq < 0)
			continue;
		int64_t waiting = qc_waiting(h->q, cq);
		for (size_t j = 0; j < v->n; j++) {
			struct quota_escrow_cell *c = &v->cells[j];
			int f = quota_flavor_find(t, c->flavor);
			int r = quota_resource_find(t, c->resource);
			if (f < 0 || r < 0)
				continue;
			int64_t used = quota_usage(t, cq, f, r);
			c->amount = used < 0 ? 0 : used < QUOTA_ESCROW_QUANTITY_MAX
				    ? used : QUOTA_ESCROW_QUANTITY_MAX;
			int64_t cap = h->queues[i].nominal.cells[j].amount;
			c->more = asked(waiting, qc_parked_ask(h->q, cq, r), cap);
		}
	}
	return 0;
}

int qe_host_use(struct qe_host *h, struct quota_escrow_value *use, size_t n)
{
	if (h == NULL || h->q == NULL || n != h->n)
		return -EINVAL;
	struct use_call u = {h, use};
	return producers_with_lock(h->p, use_locked, &u);
}

int qe_host_replace(struct qe_host *h, const struct quota_tree *t, struct qc_carried *c)
{
	const struct quota_tree *was = h->base;
	h->base = t;
	int rc = swap_in(h, c);
	if (rc < 0)
		h->base = was;
	return rc;
}

int qe_host_create(struct qe_host **out, const struct quota_tree *base, struct producers *p,
		   struct quota_charge *q, struct placements *pl, char *err, size_t errlen)
{
	*out = NULL;
	struct qe_host *h = calloc(1, sizeof(*h));
	int nodes = quota_n_nodes(base);
	char *probe = malloc(QUOTA_ESCROW_VALUE_MAX + 1);
	if (h != NULL)
		h->queues = calloc(QUOTA_ESCROW_MEMBER_QUEUES, sizeof(*h->queues));
	if (h != NULL)
		h->sums = calloc(QUOTA_ESCROW_MEMBER_QUEUES, sizeof(*h->sums));
	if (h == NULL || probe == NULL || h->queues == NULL || h->sums == NULL) {
		free(probe);
		qe_host_destroy(h);
		return errmsg_rc(-ENOMEM, err, errlen, "quota by escrow: out of memory");
	}
	for (int node = 0; node < nodes; node++) {
		if (quota_node_is_cohort(base, node))
			continue;
		if (h->n < QUOTA_ESCROW_MEMBER_QUEUES &&
		    queue_of(base, node, &h->queues[h->n], probe)) {
			h->n++;
			continue;
		}
		log_msg(LOG_LEVEL_WARN, "quota by escrow: ClusterQueue %s is not split across "
			"hosts (a name, flavor or resource the keys cannot carry, more than %d "
			"quotas, or more than %u queues): this host admits nothing against "
			"its nominal quota", quota_node_name(base, node), QUOTA_ESCROW_CELLS,
			QUOTA_ESCROW_MEMBER_QUEUES);
	}
	free(probe);
	h->base = base;
	h->p = p;
	h->q = q;
	h->pl = pl;
	/* The first tree: every nominal 0 until a slice is read. The caller
	 * keeps `base` (the tree given back is it). */
	struct qc_carried c;
	int rc = swap_in(h, &c);
	if (rc < 0) {
		qe_host_destroy(h);
		return errmsg_rc(rc, err, errlen, "quota by escrow: the first tree of this "
				 "host's slices: %s", strerror(-rc));
	}
	*out = h;
	return 0;
}
