/* Reclaim and preemption by quota (quota/quota.h, its last part): Kueue's classical
 * preemption over a private copy of one flavor of the tree.
 *
 * The view. For the preemptor's flavor and every node of its cohort tree,
 * reclaim_choose copies the usage counters (quota_usage, relaxed: a
 * moment's figure) and the bounds quota_seal computed (a root: its
 * subtree quota; a node with a borrowingLimit: subtree + limit; else
 * none), and mirrors quota.c's charge_at / release_at on them without
 * atomics: view_fits is quota_try_charge's check, view_add and view_remove
 * move a pod's usage up its path by the rise or fall of each node's excess
 * over what it keeps (Kueue's addUsage / removeUsage). A remove then an add
 * of the same pod restores every counter exactly (excess is a function of
 * the counter).
 *
 * The choice, as Kueue's classicalPreemptions:
 *   RCL1 Resources needing preemption: those the preemptor asks that do not
 *      fit alone (Kueue's frsNeedPreemption). A candidate must use one of
 *      them, be of the same flavor and cohort tree, and satisfy the
 *      policy: withinClusterQueue for its own queue (LowerPriority:
 *      strictly lower priority; LowerOrNewerEqualPriority: or equal and
 *      created later, common/preemption_policy.go), reclaimWithinCohort
 *      for the others (LowerPriority or Any).
 *   RCL2 Order (common/ordering.go CandidatesOrdering): other queues before
 *      its own, lower priority first, most recently admitted first, then
 *      uid.
 *   RCL3 Attempts (preemption.go, the switch on attemptPossibleOpts): with
 *      borrowing allowed (the preemptor may end past nominal; a pod of
 *      another queue is then a victim only if the preemptor had the
 *      hierarchical advantage: it fits in its own nominal quota now, or
 *      under RCL6), and without (it must end within nominal), in Kueue's
 *      order of the two.
 *   RCL4 A candidate of another queue stays valid while its queue, and each
 *      cohort between it and the common ancestor, is still past its quota
 *      in a needed resource (candidateIsValid), with the victims so far
 *      removed from the view.
 *   RCL5 Candidates are removed in order until the preemptor fits (and
 *      node_ok says a node takes it); then, from the next to last back to
 *      the first, each is put back if the preemptor still fits
 *      (fillBackWorkloads).
 *   RCL6 borrowWithinCohort LowerPriority (classical/hierarchical_preemption.go,
 *      classifyPreemptionVariant: ReclaimWhileBorrowing): without the
 *      advantage, a pod of another queue (still one RCL1 and RCL4 allow:
 *      its queue past nominal) stays a victim in the borrowing attempt if
 *      its priority is below the preemptor's and, when set, at most
 *      maxPriorityThreshold (isAboveBorrowingThreshold); the others are
 *      victims only in the attempt that ends within nominal.
 *
 * No cycle (the "preemption that provably terminates"). Two rules
 * beyond Kueue's:
 *   NCY1 A pod of another ClusterQueue is a victim only if its own admission
 *      took its queue past nominal quota (`borrowed`).
 *   NCY2 A preemptor evicts pods of other queues only when it ends within
 *      its own queue's nominal quota (RCL3: the advantage taken at the
 *      ClusterQueue's level), so it is admitted with borrowed = false;
 *      or, under borrowWithinCohort (RCL6), when every pod of another
 *      queue it evicts has a lower priority than its own.
 * Then no pod X is evicted to admit Y while Y, still so admitted, is
 * later evicted to readmit X, but for one round under borrowWithinCohort:
 * across queues, X.borrowed and !Y.borrowed (NCY1, NCY2), and the second
 * eviction would need Y.borrowed (NCY1; a pod's flag is its admission's;
 * Kueue's rules alone allow this cycle: test_no_cycle_where_kueue_has_one);
 * under borrowWithinCohort Y may be admitted borrowing (X.priority <
 * Y.priority), and X's queue, under nominal again, may reclaim Y
 * (reclaimWithinCohort Any) as in Kueue; X is then admitted within
 * nominal (NCY2: Y's priority is not below X's), so Y cannot evict it
 * again (NCY1): a round does not repeat;
 * within one queue, Y > X and X > Y in the fixed order (priority, then
 * creation) that both policies require. Termination of reclaim without
 * new pods: give each admitted pod the key (borrowed ? 0 : 1, priority,
 * -created); every preemption replaces a set of admitted pods by one whose
 * key is above each of theirs (NCY1-NCY2 across queues: borrowed = false
 * over borrowed, or under RCL6 borrowed over borrowed at a higher
 * priority; the policy within),
 * every other admission only adds one, so the multiset of admitted keys
 * rises in the Dershowitz-Manna order, which over a finite set of pods
 * and keys rises finitely often. Across queues without borrowWithinCohort,
 * the sum over queues of usage past nominal strictly falls too: each
 * victim's queue was past it in the resource it frees (RCL4), the
 * preemptor's does not pass it (NCY2); under it the preemptor's may, and
 * the keys alone bound the evictions.
 * tests/quota/test_reclaim.c drives 100,000 random events (two queues with
 * borrowWithinCohort) and counts cycles, falling keys across queues, usage
 * past nominal + borrowingLimit and the budgets: all zero.
 *
 * Cost: O(nodes of the cohort tree x resources) to copy its view, O(n)
 * to classify n candidates, O(depth x resources) per candidate removed, put
 * back or checked; the order is a heap taken as far as the choice goes
 * (O(n + k log n) for k candidates looked at).
 */
#include "quota/quota.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A candidate's class: another queue's pod (CLS_CROSS: Kueue's
 * HierarchicalReclaim or ReclaimWithoutBorrowing; CLS_CROSS_BWC: its
 * ReclaimWhileBorrowing, RCL6), or one of the preemptor's own queue. */
enum cls { CLS_NONE = 0, CLS_CROSS, CLS_CROSS_BWC, CLS_SAME };

struct reclaim_work {
	int n_nodes, n_res;
	int64_t *usage, *bound, *kept, *subtree; /* [n_nodes * n_res] */
	int *parent;                             /* [n_nodes] */
	int *by_root;                            /* node ids, grouped by root */
	int *root_of;                            /* [n_nodes]: its tree's root */
	int *root_at;                            /* [n_nodes]: root's first in by_root */
	int *root_n;                             /* [n_nodes]: nodes of that root */
	uint32_t *heap;                          /* candidates kept: a heap in RCL2 order */
	uint32_t *seq;                           /* ... taken off it, in order */
	uint8_t *cls;                            /* [n]: enum cls */
	size_t cap;                              /* of heap, seq and cls */
	bool ran_out; /* RO1: the last choice's attempt went past its last
		       * candidate without the preemptor fitting */
};

struct reclaim_work *reclaim_work_new(const struct quota_tree *t)
{
	struct reclaim_work *w = calloc(1, sizeof(*w));
	if (w == NULL)
		return NULL;
	w->n_nodes = quota_n_nodes(t);
	w->n_res = quota_n_resources(t);
	size_t cells = (size_t)w->n_nodes * (size_t)(w->n_res > 0 ? w->n_res : 1);
	w->usage = calloc(cells, sizeof(int64_t));
	w->bound = calloc(cells, sizeof(int64_t));
	w->kept = calloc(cells, sizeof(int64_t));
	w->subtree = calloc(cells, sizeof(int64_t));
	w->parent = calloc((size_t)w->n_nodes + 1, sizeof(int));
	w->by_root = calloc((size_t)w->n_nodes + 1, sizeof(int));
	w->root_at = calloc((size_t)w->n_nodes + 1, sizeof(int));
	w->root_of = calloc((size_t)w->n_nodes + 1, sizeof(int));
	w->root_n = calloc((size_t)w->n_nodes + 1, sizeof(int));
	if (w->usage == NULL || w->bound == NULL || w->kept == NULL ||
	    w->subtree == NULL || w->parent == NULL || w->by_root == NULL ||
	    w->root_at == NULL || w->root_of == NULL || w->root_n == NULL) {
		reclaim_work_free(w);
		errno = ENOMEM;
		return NULL;
	}
	/* The nodes of each cohort tree, so that a view copies its own. */
	for (int i = 0; i < w->n_nodes; i++) {
		w->parent[i] = quota_node_parent(t, i);
		int r = quota_node_root(t, i);
		w->root_of[i] = r;
		if (r >= 0)
			w->root_n[r]++;
	}
	for (int i = 0, at = 0; i < w->n_nodes; i++) {
		w->root_at[i] = at;
		at += w->root_n[i];
		w->root_n[i] = 0;
	}
	for (int i = 0; i < w->n_nodes; i++) {
		int r = quota_node_root(t, i);
		if (r >= 0)
			w->by_root[w->root_at[r] + w->root_n[r]++] = i;
	}
	return w;
}

void reclaim_work_free(struct reclaim_work *w)
{
	if (w == NULL)
		return;
	free(w->usage);
	free(w->bound);
	free(w->kept);
	free(w->subtree);
	free(w->parent);
	free(w->by_root);
	free(w->root_at);
	free(w->root_of);
	free(w->root_n);
	free(w->heap);
	free(w->seq);
	free(w->cls);
	free(w);
}

static int64_t max64(int64_t a, int64_t b)
{
	return a > b ? a : b;
}

static size_t cell(const struct reclaim_work *w, int node, int r)
{
	return (size_t)node * (size_t)w->n_res + (size_t)r;
}

static int64_t excess(const struct reclaim_work *w, size_t c, int64_t u)
{
	return max64(0, u - w->kept[c]);
}

/* The view of flavor f for the nodes of tree `root`. */
static void view_load(struct reclaim_work *w, const struct quota_tree *t,
		      int root, int f)
{
	for (int i = 0; i < w->root_n[root]; i++) {
		int n = w->by_root[w->root_at[root] + i];
		for (int r = 0; r < w->n_res; r++) {
			size_t c = cell(w, n, r);
			int64_t nominal, bl, ll;
			quota_entry(t, n, f, r, &nominal, &bl, &ll);
			w->subtree[c] = quota_subtree_quota(t, n, f, r);
			w->kept[c] = quota_kept(t, n, f, r);
			w->usage[c] = quota_usage(t, n, f, r);
			if (w->parent[n] < 0)
				w->bound[c] = w->subtree[c];
			else if (bl != QUOTA_NO_LIMIT)
				w->bound[c] = w->subtree[c] + bl; /* both < 2^60 */
			else
				w->bound[c] = INT64_MAX;
		}
	}
}

/* quota.c's charge_at check for one resource. */
static bool view_fits_one(const struct reclaim_work *w, int node, int r,
			  int64_t amount)
{
	while (amount > 0) {
		size_t c = cell(w, node, r);
		int64_t u = w->usage[c];
		if (amount > w->bound[c] - u)
			return false;
		if (w->parent[node] < 0)
			return true;
		amount = excess(w, c, u + amount) - excess(w, c, u);
		node = w->parent[node];
	}
	return true;
}

static bool view_fits(const struct reclaim_work *w, int cq, const int64_t *req)
{
	for (int r = 0; r < w->n_res; r++)
		if (req[r] > 0 && !view_fits_one(w, cq, r, req[r]))
			return false;
	return true;
}

static void view_move(struct reclaim_work *w, int node, const int64_t *req,
		      int sign)
{
	for (int r = 0; r < w->n_res; r++) {
		int64_t amount = req[r];
		for (int n = node; amount > 0;) {
			size_t c = cell(w, n, r);
			int64_t u = w->usage[c];
			int64_t v = sign > 0 ? u + amount : u - amount;
			w->usage[c] = v;
			if (w->parent[n] < 0)
				break;
			amount = sign > 0 ? excess(w, c, v) - excess(w, c, u)
					  : excess(w, c, u) - excess(w, c, v);
			n = w->parent[n];
		}
	}
}

/* Kueue's BorrowingWith for a ClusterQueue: past its nominal quota (its
 * subtree quota) with `req` added. */
static bool view_borrowing_with(const struct reclaim_work *w, int cq,
				const int64_t *req)
{
	for (int r = 0; r < w->n_res; r++) {
		size_t c = cell(w, cq, r);
		if (req[r] > 0 && w->usage[c] + req[r] > w->subtree[c])
			return true;
	}
	return false;
}

/* IsWithinNominalInResources over the needed resources. */
static bool view_within(const struct reclaim_work *w, int node, const bool *need)
{
	for (int r = 0; r < w->n_res; r++) {
		size_t c = cell(w, node, r);
		if (need[r] && w->usage[c] > w->subtree[c])
			return false;
	}
	return true;
}

static bool satisfies(enum quota_preempt_policy p, const struct reclaim_pod *pre,
		      const struct reclaim_pod *c)
{
	bool lower = pre->priority > c->priority;
	switch (p) {
	case QUOTA_PREEMPT_LOWER_PRIORITY:
		return lower;
	case QUOTA_PREEMPT_LOWER_OR_NEWER_EQUAL_PRIORITY:
		return lower || (pre->priority == c->priority &&
				 pre->created_ns < c->created_ns);
	case QUOTA_PREEMPT_ANY:
		return true;
	case QUOTA_PREEMPT_NEVER:
		break;
	}
	return false;
}

struct order_ctx {
	const struct reclaim_pod *cand;
	const uint8_t *cls;
};

/* RCL2. */
static int cmp_cand(const void *a, const void *b, void *arg)
{
	const struct order_ctx *o = arg;
	uint32_t i = *(const uint32_t *)a, j = *(const uint32_t *)b;
	const struct reclaim_pod *x = &o->cand[i], *y = &o->cand[j];
	bool xi = o->cls[i] != CLS_SAME, xj = o->cls[j] != CLS_SAME;
	if (xi != xj)
		return xi ? -1 : 1;
	if (x->priority != y->priority)
		return x->priority < y->priority ? -1 : 1;
	if (x->admitted_ns != y->admitted_ns)
		return x->admitted_ns > y->admitted_ns ? -1 : 1;
	return x->uid < y->uid ? -1 : x->uid > y->uid;
}

/* The candidates in RCL2 order, taken off a heap as the attempts reach
 * them: a preemption that needs k victims of n candidates costs O(n + k
 * log n), not a sort of all n (a cohort of 40,000 admitted pods). */
struct order {
	struct order_ctx ctx;
	uint32_t *heap, *seq;
	size_t n_heap, n_seq;
};

static void sift_down(struct order *o, size_t i)
{
	for (;;) {
		size_t l = 2 * i + 1, m = i;
		if (l < o->n_heap && cmp_cand(&o->heap[l], &o->heap[m], &o->ctx) < 0)
			m = l;
		if (l + 1 < o->n_heap &&
		    cmp_cand(&o->heap[l + 1], &o->heap[m], &o->ctx) < 0)
			m = l + 1;
		if (m == i)
			return;
		uint32_t x = o->heap[i];
		o->heap[i] = o->heap[m];
		o->heap[m] = x;
		i = m;
	}
}

/* The i-th candidate in order, or UINT32_MAX past the last. */
static uint32_t order_at(struct order *o, size_t i)
{
	while (o->n_seq <= i && o->n_heap > 0) {
		o->seq[o->n_seq++] = o->heap[0];
		o->heap[0] = o->heap[--o->n_heap];
		sift_down(o, 0);
	}
	return i < o->n_seq ? o->seq[i] : UINT32_MAX;
}

/* RCL6: Kueue's isAboveBorrowingThreshold, negated: a pod of another
 * queue that a preemptor ending past its nominal quota may evict under
 * borrowWithinCohort LowerPriority: strictly lower priority than the
 * preemptor's, and at most maxPriorityThreshold when set. */
static bool while_borrowing(const struct quota_preemption *pol,
			    const struct reclaim_pod *pre, const struct reclaim_pod *c)
{
	if (pol->borrow_within_cohort != QUOTA_PREEMPT_LOWER_PRIORITY ||
	    c->priority >= pre->priority)
		return false;
	return !pol->has_max_priority_threshold ||
	       c->priority <= pol->max_priority_threshold;
}

/* RCL4: is cand still a victim worth taking, in this attempt? */
static bool valid(const struct reclaim_work *w, int cq, const struct reclaim_pod *c,
		  enum cls k, bool borrow, bool hier, const bool *need)
{
	if (k == CLS_SAME)
		return true;
	if (borrow && !hier && k != CLS_CROSS_BWC)
		return false; /* ReclaimWithoutBorrowing */
	if (view_within(w, c->cq, need))
		return false;
	/* Up to the lowest common ancestor (exclusive). */
	for (int n = w->parent[c->cq]; n >= 0; n = w->parent[n]) {
		bool common = false;
		for (int m = w->parent[cq]; m >= 0 && !common; m = w->parent[m])
			common = m == n;
		if (common)
			break;
		if (view_within(w, n, need))
			return false;
	}
	return true;
}

static bool grow(struct reclaim_work *w, size_t n)
{
	if (n <= w->cap)
		return true;
	uint32_t *h = realloc(w->heap, n * sizeof(*h));
	if (h == NULL)
		return false;
	w->heap = h;
	h = realloc(w->seq, n * sizeof(*h));
	if (h == NULL)
		return false;
	w->seq = h;
	uint8_t *c = realloc(w->cls, n);
	if (c == NULL)
		return false;
	w->cls = c;
	w->cap = n;
	return true;
}

static bool fits_now(const struct reclaim_work *w, const struct reclaim_pod *pre,
		     bool borrow,
		     bool (*node_ok)(void *, const uint32_t *, size_t), void *arg,
		     const uint32_t *victims, size_t k)
{
	if (!view_fits(w, pre->cq, pre->request))
		return false;
	if (!borrow && view_borrowing_with(w, pre->cq, pre->request))
		return false;
	return node_ok == NULL || node_ok(arg, victims, k);
}

/* Over the cap? */
static bool over_cap(const struct reclaim_pod *pre, const struct reclaim_pod *cand,
		     const uint32_t *victims, size_t k, const bool *need, int n_res,
		     uint32_t cap_milli)
{
	if (cap_milli == 0)
		return false;
	for (int r = 0; r < n_res; r++) {
		if (!need[r])
			continue;
		int64_t sum = 0;
		for (size_t i = 0; i < k; i++)
			sum += cand[victims[i]].request[r]; /* each < 2^56, k small */
		/* sum x 1000 > cap x asked, in doubles: no overflow. */
		if ((double)sum * 1000.0 > (double)cap_milli * (double)pre->request[r])
			return true;
	}
	return false;
}

int reclaim_choose(struct reclaim_work *w, const struct quota_tree *t,
		   const struct reclaim_pod *pre, const struct reclaim_pod *cand,
		   size_t n, const struct reclaim_budget *budget,
		   bool (*node_ok)(void *arg, const uint32_t *victims, size_t k),
		   void *node_ok_arg, uint32_t *victims, size_t *n_victims,
		   enum reclaim_why *why)
{
	enum reclaim_why dummy;
	if (why == NULL)
		why = &dummy;
	w->ran_out = false;
	*n_victims = 0;
	*why = RECLAIM_WHY_NONE;
	int cq = pre->cq, f = pre->flavor;
	if (cq < 0 || cq >= w->n_nodes || quota_node_is_cohort(t, cq) || f < 0 ||
	    f >= quota_n_flavors(t) || w->n_nodes != quota_n_nodes(t) ||
	    w->n_res != quota_n_resources(t))
		return -EINVAL;
	for (int r = 0; r < w->n_res; r++) {
		int64_t nom, bl, ll;
		if (pre->request[r] < 0 || pre->request[r] > QUOTA_QUANTITY_MAX ||
		    (pre->request[r] > 0 && !quota_entry(t, cq, f, r, &nom, &bl, &ll)))
			return -EINVAL;
	}
	const struct quota_preemption *pol = quota_node_preemption(t, cq);
	bool in_cohort = w->parent[cq] >= 0;
	if (pol->within_cluster_queue == QUOTA_PREEMPT_NEVER &&
	    (pol->reclaim_within_cohort == QUOTA_PREEMPT_NEVER || !in_cohort)) {
		*why = RECLAIM_WHY_POLICY;
		return -ENOSPC;
	}
	int root = quota_node_root(t, cq);
	view_load(w, t, root, f);
	/* RCL1. */
	bool need[QUOTA_MAX_RESOURCES] = {0}, any = false;
	for (int r = 0; r < w->n_res; r++) {
		need[r] = pre->request[r] > 0 &&
			  !view_fits_one(w, cq, r, pre->request[r]);
		any |= need[r];
	}
	if (!any) {
		*why = RECLAIM_WHY_FITS;
		return -ENOSPC;
	}
	if (!grow(w, n))
		return -ENOMEM;
	size_t kept = 0, n_cross = 0, n_cross_plain = 0;
	bool young = false;
	bool bwc = in_cohort && pol->borrow_within_cohort != QUOTA_PREEMPT_NEVER;
	for (size_t i = 0; i < n; i++) {
		const struct reclaim_pod *c = &cand[i];
		w->cls[i] = CLS_NONE;
		/* NCY1 first: the cheapest test that turns most pods away. */
		if (c->flavor != f || (c->cq != cq && !c->borrowed) || c->cq < 0 ||
		    c->cq >= w->n_nodes || w->root_of[c->cq] != root ||
		    quota_node_is_cohort(t, c->cq))
			continue;
		bool uses = false;
		for (int r = 0; r < w->n_res && !uses; r++)
			uses = need[r] && c->request[r] > 0;
		if (!uses)
			continue;
		enum cls k;
		if (c->cq == cq) {
			if (!satisfies(pol->within_cluster_queue, pre, c))
				continue;
			k = CLS_SAME;
		} else {
			/* NCY1 (c->borrowed: tested above). */
			if (!in_cohort ||
			    !satisfies(pol->reclaim_within_cohort, pre, c))
				continue;
			k = while_borrowing(pol, pre, c) ? CLS_CROSS_BWC : CLS_CROSS;
		}
		uint64_t age = budget == NULL || budget->now_ns < c->admitted_ns ?
				       0 : budget->now_ns - c->admitted_ns;
		if (budget != NULL && budget->min_run_ns > 0 &&
		    age < budget->min_run_ns) {
			young = true;
			continue;
		}
		w->cls[i] = (uint8_t)k;
		w->heap[kept++] = (uint32_t)i;
		n_cross += k != CLS_SAME;
		n_cross_plain += k == CLS_CROSS;
	}
	struct order ord = {.ctx = {cand, w->cls}, .heap = w->heap, .seq = w->seq,
			    .n_heap = kept};
	for (size_t i = kept / 2; i-- > 0;)
		sift_down(&ord, i);
	/* RCL3: QuantitiesFitInQuota at the ClusterQueue (NCY2), and Kueue's
	 * queueUnderNominalInResourcesNeedingPreemption. */
	bool hier = !view_borrowing_with(w, cq, pre->request);
	bool under = true;
	for (int r = 0; r < w->n_res; r++) {
		size_t c = cell(w, cq, r);
		if (need[r] && w->usage[c] >= w->subtree[c])
			under = false;
	}
	/* Kueue's switch: with borrowWithinCohort Never, only the borrowing
	 * attempt when the queue is not under nominal in a needed resource,
	 * and the other first when no candidate gives the advantage; with
	 * it, both (borrowing first) whenever another queue has a
	 * candidate. */
	bool attempts[2];
	int n_attempts;
	if (n_cross == 0 || (!bwc && !under)) {
		attempts[0] = true;
		n_attempts = 1;
	} else if (!bwc && !hier) {
		attempts[0] = false;
		attempts[1] = true;
		n_attempts = 2;
	} else {
		attempts[0] = true;
		attempts[1] = false;
		n_attempts = 2;
	}
	bool capped = false;
	for (int a = 0; a < n_attempts; a++) {
		bool borrow = attempts[a];
		size_t k = 0;
		bool fit = false;
		for (size_t i = 0; i < kept && !fit; i++) {
			uint32_t ci = order_at(&ord, i);
			const struct reclaim_pod *c = &cand[ci];
			if (!valid(w, cq, c, (enum cls)w->cls[ci], borrow, hier, need))
				continue;
			view_move(w, c->cq, c->request, -1);
			victims[k++] = ci;
			fit = fits_now(w, pre, borrow, node_ok, node_ok_arg, victims, k);
		}
		if (!fit)
			w->ran_out = true; /* RO1: more candidates might have fit */
		if (fit) {
			/* RCL5: fillBackWorkloads, its swap with the last kept. */
			for (size_t i = k - 1; i-- > 0;) {
				const struct reclaim_pod *c = &cand[victims[i]];
				view_move(w, c->cq, c->request, +1);
				uint32_t saved = victims[i];
				victims[i] = victims[k - 1];
				if (fits_now(w, pre, borrow, node_ok, node_ok_arg,
					     victims, k - 1)) {
					k--;
				} else {
					victims[i] = saved;
					view_move(w, c->cq, c->request, -1);
				}
			}
		}
		/* Back to the tree's figures for the next attempt. */
		for (size_t i = 0; i < k; i++)
			view_move(w, cand[victims[i]].cq, cand[victims[i]].request, +1);
		if (!fit)
			continue;
		if (over_cap(pre, cand, victims, k, need, w->n_res,
			     budget != NULL ? budget->evict_cap_milli : 0)) {
			capped = true;
			continue;
		}
		*n_victims = k;
		*why = RECLAIM_OK;
		return 0;
	}
	if (capped)
		*why = RECLAIM_WHY_CAP;
	else if (young)
		*why = RECLAIM_WHY_YOUNG;
	else if (bwc && !hier && n_cross_plain > 0)
		*why = RECLAIM_WHY_BORROW;
	return -ENOSPC;
}

bool reclaim_ran_out(const struct reclaim_work *w)
{
	return w->ran_out;
}

void reclaim_message(const struct quota_tree *t, int cq, enum reclaim_why why,
		     char *buf, size_t len)
{
	const char *name = quota_node_name(t, cq);
	const char *what;
	switch (why) {
	case RECLAIM_OK:
		what = "victims found";
		break;
	case RECLAIM_WHY_POLICY:
		what = "its .spec.preemption (withinClusterQueue, "
		       "reclaimWithinCohort) allows no preemption";
		break;
	case RECLAIM_WHY_FITS:
		what = "the pod fits its quota now: nothing to preempt";
		break;
	case RECLAIM_WHY_YOUNG:
		what = "the only pods it could preempt have run less than the "
		       "minimum run time before a pod may be preempted";
		break;
	case RECLAIM_WHY_CAP:
		what = "the fewest pods it could preempt hold more than the cap "
		       "on evicted over requested resources";
		break;
	case RECLAIM_WHY_BORROW:
		what = "preempting would leave it borrowing, and "
		       ".spec.preemption.borrowWithinCohort then allows only "
		       "pods of a priority lower than the pod's (and at most "
		       "its maxPriorityThreshold) to be preempted";
		break;
	case RECLAIM_WHY_NONE:
	default:
		what = "no pods its .spec.preemption allows it to preempt "
		       "(lower priority in its queue, or admitted by borrowing "
		       "in its cohort) free enough quota";
		break;
	}
	snprintf(buf, len, "ClusterQueue \"%s\": preemption: %s", name, what);
}
