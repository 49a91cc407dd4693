/* unit.quota_oracle: the quota tree (quota/quota.c) against a literal model
 * of Kueue's rules, on random trees and random charges and releases.
 *
 * The model is Kueue's own code, transcribed function by function, simple
 * and slow (recursive, no lock-free anything), from
 * pkg/cache/scheduler/resource_node.go: localQuota, LocalAvailable,
 * available, potentialAvailable, addUsage, removeUsage,
 * updateCohortResourceNode, accumulateFromChild;
 * pkg/cache/scheduler/clusterqueue_snapshot.go: Fits (and Available's
 * max(0, ...)); pkg/scheduler/flavorassigner/flavorassigner.go: a resource
 * the ClusterQueue does not cover is "unavailable in ClusterQueue";
 * pkg/cache/scheduler/fair_sharing.go: dominantResourceShare,
 * calculateLendable, with Go's map order (random) drawn at random.
 *
 * Trees: 1-3 cohort levels (some roots implicit, only named), 1-20
 * ClusterQueues (some without a cohort), 1-3 flavors, 1-3 resources, each
 * entry with or without borrowingLimit and lendingLimit. Events: a charge
 * (random queue, flavor and request) or the release of a live one. Checked
 * after every event:
 *   - the same admit or refuse decision as the model, from
 *     quota_would_charge (nothing charged) and then quota_try_charge;
 *   - every counter (queues and cohorts) equal to the model's Usage;
 *   - each queue's usage equal to the sum of its live charges;
 *   - each cohort's usage equal to the sum of its children's usage past
 *     what they keep, recomputed from the queues up;
 *   - no queue above nominal + borrowingLimit (nominal without a cohort),
 *     no root above its subtree quota, no cohort above subtree quota +
 *     borrowingLimit;
 *   - no lender below what it keeps: every node with a lendingLimit can
 *     still take what it keeps and does not use (available() covers it);
 *   - the dominant resource share of every node, with a random request,
 *     equal to the model's (ratio bit for bit, dominant resource,
 *     borrowing, rounded share).
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "base/base.h"
#include "quota/quota.h"

#define MAXF 3
#define MAXR 3
#define MAXCQ 20
#define MAXCO 12
#define MAXN (MAXCQ + MAXCO)
#define TREES 400
#define EVENTS 300
#define MAXLIVE 64

/* --- the model: Kueue's resourceNode ------------------------------------ */

struct onode {
	bool cohort;
	bool implicit;
	bool referenced;
	int parent;              /* model index, -1 none */
	int qid;                 /* the quota tree's node id */
	int64_t weight_milli;
	bool has[MAXF][MAXR];    /* in Quotas */
	int64_t nominal[MAXF][MAXR];
	int64_t bl[MAXF][MAXR];  /* -1: nil */
	int64_t ll[MAXF][MAXR];  /* -1: nil */
	bool present[MAXF][MAXR]; /* a key of SubtreeQuota */
	int64_t sq[MAXF][MAXR];  /* SubtreeQuota */
	int64_t usage[MAXF][MAXR];
	char name[32];
};

struct model {
	int nf, nr, n;
	struct onode nodes[MAXN];
	char resources[MAXR][24];
};

static int64_t max64(int64_t a, int64_t b)
{
	return a > b ? a : b;
}

static int64_t min64(int64_t a, int64_t b)
{
	return a < b ? a : b;
}

/* resourceNode.localQuota */
static int64_t o_local_quota(const struct onode *r, int f, int res)
{
	if (r->ll[f][res] >= 0)
		return max64(0, r->sq[f][res] - r->ll[f][res]);
	return 0;
}

/* LocalAvailable */
static int64_t o_local_available(const struct onode *r, int f, int res)
{
	return max64(0, o_local_quota(r, f, res) - r->usage[f][res]);
}

/* available */
static int64_t o_available(const struct model *m, int n, int f, int res)
{
	const struct onode *r = &m->nodes[n];
	if (r->parent < 0)
		return r->sq[f][res] - r->usage[f][res];
	int64_t parent_available = o_available(m, r->parent, f, res);
	if (r->bl[f][res] >= 0) {
		int64_t lq = o_local_quota(r, f, res);
		int64_t stored_in_parent = r->sq[f][res] - lq;
		int64_t used_in_parent = max64(0, r->usage[f][res] - lq);
		int64_t with_max_from_parent = stored_in_parent - used_in_parent +
					       r->bl[f][res];
		parent_available = min64(with_max_from_parent, parent_available);
	}
	return o_local_available(r, f, res) + parent_available;
}

/* potentialAvailable */
static int64_t o_potential_available(const struct model *m, int n, int f, int res)
{
	const struct onode *r = &m->nodes[n];
	if (r->parent < 0)
		return r->sq[f][res];
	int64_t avail = o_local_quota(r, f, res) +
			o_potential_available(m, r->parent, f, res);
	if (r->bl[f][res] >= 0)
		avail = min64(r->sq[f][res] + r->bl[f][res], avail);
	return avail;
}

/* addUsage */
static void o_add_usage(struct model *m, int n, int f, int res, int64_t val)
{
	struct onode *r = &m->nodes[n];
	int64_t local_available = o_local_available(r, f, res);
	r->usage[f][res] += val;
	if (r->parent >= 0 && val > local_available)
		o_add_usage(m, r->parent, f, res, val - local_available);
}

/* removeUsage */
static void o_remove_usage(struct model *m, int n, int f, int res, int64_t val)
{
	struct onode *r = &m->nodes[n];
	int64_t stored_in_parent = r->usage[f][res] - o_local_quota(r, f, res);
	r->usage[f][res] -= val;
	if (stored_in_parent <= 0 || r->parent < 0)
		return;
	o_remove_usage(m, r->parent, f, res, min64(val, stored_in_parent));
}

/* accumulateFromChild */
static void o_accumulate(struct model *m, int parent, int child)
{
	struct onode *p = &m->nodes[parent], *c = &m->nodes[child];
	for (int f = 0; f < m->nf; f++)
		for (int res = 0; res < m->nr; res++) {
			if (!c->present[f][res])
				continue;
			p->present[f][res] = true;
			p->sq[f][res] += c->sq[f][res] - o_local_quota(c, f, res);
			p->usage[f][res] += max64(0, c->usage[f][res] -
						      o_local_quota(c, f, res));
		}
}

/* updateClusterQueueResourceNode */
static void o_update_cq(struct model *m, int n)
{
	struct onode *r = &m->nodes[n];
	for (int f = 0; f < m->nf; f++)
		for (int res = 0; res < m->nr; res++) {
			r->present[f][res] = r->has[f][res];
			r->sq[f][res] = r->has[f][res] ? r->nominal[f][res] : 0;
		}
}

/* updateCohortResourceNode: child cohorts first, then child queues. */
static void o_update_cohort(struct model *m, int n)
{
	struct onode *r = &m->nodes[n];
	for (int f = 0; f < m->nf; f++)
		for (int res = 0; res < m->nr; res++) {
			r->present[f][res] = r->has[f][res];
			r->sq[f][res] = r->has[f][res] ? r->nominal[f][res] : 0;
			r->usage[f][res] = 0;
		}
	for (int c = 0; c < m->n; c++)
		if (m->nodes[c].cohort && m->nodes[c].parent == n) {
			o_update_cohort(m, c);
			o_accumulate(m, n, c);
		}
	for (int c = 0; c < m->n; c++)
		if (!m->nodes[c].cohort && m->nodes[c].parent == n) {
			o_update_cq(m, c);
			o_accumulate(m, n, c);
		}
}

/* ClusterQueueSnapshot.Fits, with the flavor assigner's "unavailable":
 * 0 fits, -ENOENT unavailable, -ENOSPC does not fit. */
static int o_fits(const struct model *m, int cq, int f, const int64_t *req)
{
	for (int res = 0; res < m->nr; res++)
		if (req[res] > 0 && !m->nodes[cq].has[f][res])
			return -ENOENT;
	for (int res = 0; res < m->nr; res++) {
		if (req[res] == 0)
			continue;
		if (max64(0, o_available(m, cq, f, res)) < req[res])
			return -ENOSPC;
	}
	return 0;
}

struct odrs {
	double ratio;
	int dominant;
	bool borrowing;
};

/* dominantResourceShare, map iteration in a random order as Go's. */
static struct odrs o_drs(const struct model *m, int n, int rf,
			 const int64_t *req, uint64_t *rng)
{
	struct odrs d = { 0, -1, false };
	const struct onode *r = &m->nodes[n];
	if (r->parent < 0)
		return d;
	int64_t borrowing[MAXR] = { 0 };
	bool in_map[MAXR] = { false };
	for (int f = 0; f < m->nf; f++)
		for (int res = 0; res < m->nr; res++) {
			if (!r->present[f][res])
				continue;
			int64_t wl = (f == rf && req) ? req[res] : 0;
			int64_t amount_borrowed = wl + r->usage[f][res] - r->sq[f][res];
			if (amount_borrowed > 0) {
				borrowing[res] += amount_borrowed;
				in_map[res] = true;
			}
		}
	bool any = false;
	for (int res = 0; res < m->nr; res++)
		any |= in_map[res];
	if (!any)
		return d;
	d.borrowing = true;
	/* calculateLendable(parent) */
	int root = r->parent;
	while (m->nodes[root].parent >= 0)
		root = m->nodes[root].parent;
	int64_t lendable[MAXR] = { 0 };
	for (int f = 0; f < m->nf; f++)
		for (int res = 0; res < m->nr; res++)
			if (m->nodes[root].present[f][res])
				lendable[res] += o_potential_available(m, r->parent, f, res);
	int order[MAXR];
	for (int i = 0; i < m->nr; i++)
		order[i] = i;
	for (int i = m->nr - 1; i > 0; i--) {
		int j = (int)rng_below(rng, (uint64_t)i + 1);
		int x = order[i];
		order[i] = order[j];
		order[j] = x;
	}
	const char *dominant_name = "";
	for (int i = 0; i < m->nr; i++) {
		int res = order[i];
		if (!in_map[res] || lendable[res] <= 0)
			continue;
		double ratio = (double)borrowing[res] * 1000.0 / (double)lendable[res];
		if (ratio > d.ratio ||
		    (ratio == d.ratio && strcmp(m->resources[res], dominant_name) < 0)) {
			d.ratio = ratio;
			d.dominant = res;
			dominant_name = m->resources[res];
		}
	}
	return d;
}

/* --- random trees ----------------------------------------------------------- */

static struct quota_tree *build(struct model *m, uint64_t *rng)
{
	static const char *const names[] = { "cpu", "memory", "nvidia.com/gpu" };
	static const int64_t weights[] = { 0, 500, 1000, 1000, 2000 };
	memset(m, 0, sizeof(*m));
	m->nf = 1 + (int)rng_below(rng, MAXF);
	m->nr = 1 + (int)rng_below(rng, MAXR);
	/* Resource names in a random order: index order is not name order. */
	int perm[3] = { 0, 1, 2 };
	for (int i = 2; i > 0; i--) {
		int j = (int)rng_below(rng, (uint64_t)i + 1);
		int x = perm[i];
		perm[i] = perm[j];
		perm[j] = x;
	}
	for (int res = 0; res < m->nr; res++)
		snprintf(m->resources[res], sizeof(m->resources[res]), "%s",
			 names[perm[res]]);

	int depth = 1 + (int)rng_below(rng, 3);
	int level_start = 0, level_end = 0;
	for (int level = 1; level <= depth; level++) {
		int count = level == 1 ? 1 + (int)rng_below(rng, 2) :
					 1 + (int)rng_below(rng, 3);
		for (int i = 0; i < count && m->n < MAXCO; i++) {
			struct onode *c = &m->nodes[m->n];
			c->cohort = true;
			c->parent = level == 1 ? -1 :
				    level_start + (int)rng_below(rng,
						(uint64_t)(level_end - level_start));
			c->implicit = level == 1 && rng_below(rng, 4) == 0;
			snprintf(c->name, sizeof(c->name), "co-%d", m->n);
			m->n++;
		}
		level_start = level_end;
		level_end = m->n;
	}
	int n_cohorts = m->n;
	int ncq = 1 + (int)rng_below(rng, MAXCQ);
	for (int i = 0; i < ncq; i++) {
		struct onode *q = &m->nodes[m->n];
		q->parent = rng_below(rng, 10) == 0 ? -1 :
			    (int)rng_below(rng, (uint64_t)n_cohorts);
		snprintf(q->name, sizeof(q->name), "cq-%d", m->n);
		m->n++;
	}
	for (int n = 0; n < m->n; n++) {
		struct onode *x = &m->nodes[n];
		x->weight_milli = weights[rng_below(rng, 5)];
		if (x->parent >= 0)
			m->nodes[x->parent].referenced = true;
		for (int f = 0; f < m->nf; f++)
			for (int res = 0; res < m->nr; res++) {
				x->bl[f][res] = x->ll[f][res] = -1;
				if (x->implicit)
					continue;
				if (x->cohort ? rng_below(rng, 3) != 0 :
						rng_below(rng, 5) == 0)
					continue;
				x->has[f][res] = true;
				x->nominal[f][res] = (int64_t)rng_below(rng, x->cohort ? 7 : 11);
				if (x->parent < 0)
					continue;
				if (rng_below(rng, 3) == 0)
					x->bl[f][res] = (int64_t)rng_below(rng, 7);
				if (rng_below(rng, 3) == 0)
					x->ll[f][res] = (int64_t)rng_below(rng,
						x->cohort ? 9 : (uint64_t)x->nominal[f][res] + 1);
			}
	}

	/* The same tree, by calls. */
	char err[512];
	struct quota_tree *t = NULL;
	assert_int_equal(quota_tree_new(&t), 0);
	for (int f = 0; f < m->nf; f++) {
		char name[32];
		snprintf(name, sizeof(name), "flavor-%d", f);
		assert_int_equal(quota_flavor_add(t, name, err, sizeof(err)), f);
	}
	for (int res = 0; res < m->nr; res++)
		assert_int_equal(quota_resource_add(t, m->resources[res], err,
						    sizeof(err)), res);
	for (int n = 0; n < m->n; n++) {
		struct onode *x = &m->nodes[n];
		const char *parent = x->parent >= 0 ? m->nodes[x->parent].name : NULL;
		x->qid = -1;
		if (x->implicit)
			continue;
		x->qid = x->cohort ?
			 quota_cohort_add(t, x->name, parent, x->weight_milli, err,
					  sizeof(err)) :
			 quota_cluster_queue_add(t, x->name, parent, x->weight_milli,
						 NULL, err, sizeof(err));
		if (x->qid < 0)
			fail_msg("%s: %s", x->name, err);
		for (int f = 0; f < m->nf; f++)
			for (int res = 0; res < m->nr; res++)
				if (x->has[f][res] &&
				    quota_set(t, x->qid, f, res, x->nominal[f][res],
					      x->bl[f][res] < 0 ? QUOTA_NO_LIMIT : x->bl[f][res],
					      x->ll[f][res] < 0 ? QUOTA_NO_LIMIT : x->ll[f][res],
					      err, sizeof(err)) != 0)
					fail_msg("%s: %s", x->name, err);
	}
	if (quota_seal(t, err, sizeof(err)) != 0)
		fail_msg("seal: %s", err);
	for (int n = 0; n < m->n; n++) {
		struct onode *x = &m->nodes[n];
		if (x->implicit) {
			/* Kueue makes a Cohort that is only named; unnamed
			 * ones do not exist at all. */
			x->qid = quota_cohort_find(t, x->name);
			assert_true(x->referenced ? x->qid >= 0 : x->qid == -ENOENT);
			x->weight_milli = QUOTA_WEIGHT_DEFAULT_MILLI;
		}
	}

	/* The model's tree resources. */
	for (int n = 0; n < m->n; n++) {
		if (m->nodes[n].parent >= 0)
			continue;
		if (m->nodes[n].cohort)
			o_update_cohort(m, n);
		else
			o_update_cq(m, n);
	}
	for (int n = 0; n < m->n; n++) {
		const struct onode *x = &m->nodes[n];
		if (x->qid < 0)
			continue;
		int qp = quota_node_parent(t, x->qid);
		assert_int_equal(qp, x->parent >= 0 ? m->nodes[x->parent].qid : -1);
		for (int f = 0; f < m->nf; f++)
			for (int res = 0; res < m->nr; res++) {
				assert_int_equal(quota_subtree_quota(t, x->qid, f, res),
						 x->sq[f][res]);
				assert_int_equal(quota_kept(t, x->qid, f, res),
						 o_local_quota(x, f, res));
			}
	}
	return t;
}

/* --- events and checks -------------------------------------------------------- */

struct charge {
	int cq; /* model index */
	int flavor;
	int64_t req[MAXR];
};

static void check_state(const struct model *m, const struct quota_tree *t,
			const struct charge *live, int n_live, uint64_t *rng,
			unsigned long long seed, int event)
{
	for (int n = 0; n < m->n; n++) {
		const struct onode *x = &m->nodes[n];
		if (x->qid < 0)
			continue;
		for (int f = 0; f < m->nf; f++)
			for (int res = 0; res < m->nr; res++) {
				int64_t got = quota_usage(t, x->qid, f, res);
				if (got != x->usage[f][res])
					fail_msg("seed %llu event %d: %s flavor %d res %d: "
						 "usage %lld, Kueue's %lld", seed, event,
						 x->name, f, res, (long long)got,
						 (long long)x->usage[f][res]);
			}
	}
	/* From scratch: queues from their live charges, cohorts from their
	 * children, deepest first (cohort indexes grow with depth). */
	int64_t real[MAXN][MAXF][MAXR];
	memset(real, 0, sizeof(real));
	for (int i = 0; i < n_live; i++)
		for (int res = 0; res < m->nr; res++)
			real[live[i].cq][live[i].flavor][res] += live[i].req[res];
	for (int pass = 0; pass < 2; pass++)
		for (int n = m->n - 1; n >= 0; n--) {
			const struct onode *x = &m->nodes[n];
			if ((pass == 0) == x->cohort || x->parent < 0)
				continue;
			for (int f = 0; f < m->nf; f++)
				for (int res = 0; res < m->nr; res++)
					real[x->parent][f][res] +=
						max64(0, real[n][f][res] -
							 o_local_quota(x, f, res));
		}
	for (int n = 0; n < m->n; n++) {
		const struct onode *x = &m->nodes[n];
		if (x->qid < 0)
			continue;
		for (int f = 0; f < m->nf; f++)
			for (int res = 0; res < m->nr; res++) {
				int64_t u = quota_usage(t, x->qid, f, res);
				if (u != real[n][f][res])
					fail_msg("seed %llu event %d: %s: usage %lld, its "
						 "charges and children make %lld", seed,
						 event, x->name, (long long)u,
						 (long long)real[n][f][res]);
				int64_t cap = INT64_MAX;
				if (x->parent < 0)
					cap = x->sq[f][res];
				else if (x->bl[f][res] >= 0)
					cap = x->sq[f][res] + x->bl[f][res];
				if (u > cap)
					fail_msg("seed %llu event %d: %s: usage %lld over "
						 "%lld", seed, event, x->name,
						 (long long)u, (long long)cap);
				if (x->ll[f][res] >= 0) {
					int64_t keeps = max64(0, o_local_quota(x, f, res) - u);
					if (max64(0, o_available(m, n, f, res)) < keeps)
						fail_msg("seed %llu event %d: lender %s keeps "
							 "%lld unused but may take only %lld",
							 seed, event, x->name, (long long)keeps,
							 (long long)o_available(m, n, f, res));
				}
			}
	}
	/* The share of every node, with a random request for queues. */
	for (int n = 0; n < m->n; n++) {
		const struct onode *x = &m->nodes[n];
		if (x->qid < 0)
			continue;
		int64_t req[MAXR] = { 0 };
		int f = -1;
		if (!x->cohort && rng_below(rng, 2)) {
			f = (int)rng_below(rng, (uint64_t)m->nf);
			for (int res = 0; res < m->nr; res++)
				req[res] = (int64_t)rng_below(rng, 5);
		}
		struct odrs want = o_drs(m, n, f, f >= 0 ? req : NULL, rng);
		struct quota_share got;
		assert_int_equal(quota_share(t, x->qid, f, f >= 0 ? req : NULL, &got), 0);
		if (got.ratio != want.ratio || got.dominant != want.dominant ||
		    got.borrowing != want.borrowing)
			fail_msg("seed %llu event %d: %s: share %.17g (resource %d, "
				 "borrowing %d), Kueue's %.17g (resource %d, "
				 "borrowing %d)", seed, event, x->name, got.ratio,
				 got.dominant, got.borrowing, want.ratio,
				 want.dominant, want.borrowing);
		assert_int_equal(got.weight_milli, x->weight_milli);
	}
}

static void test_oracle(void **state)
{
	(void)state;
	static struct model m;
	struct charge live[MAXLIVE];
	unsigned long long admitted = 0, refused = 0, unavailable = 0, borrowed = 0;
	for (unsigned long long seed = 1; seed <= TREES; seed++) {
		uint64_t rng = seed * 0x9e3779b97f4a7c15ULL;
		struct quota_tree *t = build(&m, &rng);
		int n_live = 0;
		int first_cq = 0;
		while (m.nodes[first_cq].cohort)
			first_cq++;
		for (int event = 0; event < EVENTS; event++) {
			bool charge = n_live == 0 ||
				      (n_live < MAXLIVE && rng_below(&rng, 10) < 6);
			if (charge) {
				struct charge c;
				c.cq = first_cq + (int)rng_below(&rng,
						(uint64_t)(m.n - first_cq));
				c.flavor = (int)rng_below(&rng, (uint64_t)m.nf);
				for (int res = 0; res < m.nr; res++)
					c.req[res] = rng_below(&rng, 4) == 0 ? 0 :
						     (int64_t)rng_below(&rng, 7);
				int want = o_fits(&m, c.cq, c.flavor, c.req);
				/* quota_would_charge: the same verdict,
				 * nothing charged (the charge below would
				 * fail on a counter it moved). */
				int would = quota_would_charge(t, m.nodes[c.cq].qid,
							       c.flavor, c.req);
				if (would != want)
					fail_msg("seed %llu event %d: %s flavor %d: "
						 "quota_would_charge %d, Kueue %d",
						 seed, event, m.nodes[c.cq].name,
						 c.flavor, would, want);
				int got = quota_try_charge(t, m.nodes[c.cq].qid,
							   c.flavor, c.req);
				if (got != want)
					fail_msg("seed %llu event %d: %s flavor %d: "
						 "quota_try_charge %d, Kueue %d", seed,
						 event, m.nodes[c.cq].name, c.flavor,
						 got, want);
				if (want == 0) {
					for (int res = 0; res < m.nr; res++) {
						if (c.req[res] == 0)
							continue;
						if (m.nodes[c.cq].usage[c.flavor][res] + c.req[res] >
						    m.nodes[c.cq].nominal[c.flavor][res])
							borrowed++;
						o_add_usage(&m, c.cq, c.flavor, res, c.req[res]);
					}
					live[n_live++] = c;
					admitted++;
				} else if (want == -ENOENT) {
					unavailable++;
				} else {
					refused++;
				}
			} else {
				int i = (int)rng_below(&rng, (uint64_t)n_live);
				struct charge c = live[i];
				live[i] = live[--n_live];
				quota_release(t, m.nodes[c.cq].qid, c.flavor, c.req);
				for (int res = 0; res < m.nr; res++)
					if (c.req[res] > 0)
						o_remove_usage(&m, c.cq, c.flavor, res,
							       c.req[res]);
			}
			check_state(&m, t, live, n_live, &rng, seed, event);
		}
		/* Everything back: every counter 0. */
		while (n_live > 0) {
			struct charge c = live[--n_live];
			quota_release(t, m.nodes[c.cq].qid, c.flavor, c.req);
			for (int res = 0; res < m.nr; res++)
				if (c.req[res] > 0)
					o_remove_usage(&m, c.cq, c.flavor, res, c.req[res]);
		}
		check_state(&m, t, live, 0, &rng, seed, EVENTS);
		for (int n = 0; n < m.n; n++)
			for (int f = 0; f < m.nf; f++)
				for (int res = 0; res < m.nr; res++)
					if (m.nodes[n].qid >= 0)
						assert_int_equal(quota_usage(t, m.nodes[n].qid,
									     f, res), 0);
		quota_tree_free(t);
	}
	printf("quota_oracle: %d trees, %llu admitted (%llu borrowing), "
	       "%llu refused, %llu unavailable\n", TREES, admitted, borrowed,
	       refused, unavailable);
	/* The runs exercise every branch: admissions that borrow, refusals
	 * for quota, refusals for an uncovered resource. */
	assert_true(borrowed > 1000);
	assert_true(refused > 1000);
	assert_true(unavailable > 100);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_oracle),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
