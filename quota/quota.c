/* The quota tree (quota/quota.h): Kueue's quota model, built by calls,
 * then sealed and charged without a lock.
 *
 * Kueue's rules (pkg/cache/scheduler/resource_node.go), per (flavor,
 * resource), each ClusterQueue or Cohort a node:
 *   subtree(cq)     = nominalQuota
 *   subtree(cohort) = own nominalQuota + sum over children c of
 *                     (subtree(c) - kept(c))
 *   kept(n)         = max(0, subtree(n) - lendingLimit(n)); 0 without one
 *                     (Kueue's localQuota: never lent to the parent)
 *   usage(cq)       = the sum of its live charges
 *   usage(cohort)   = sum over children c of excess(c) where
 *   excess(c)       = max(0, usage(c) - kept(c))
 * A request r fits iff r <= max(0, available(cq)), Kueue's available()
 * recursing up the tree. Unrolled, that is a bound per node on its usage
 * after the charge: at a root (no parent), usage <= subtree; at a node
 * with a parent and a borrowingLimit, usage <= subtree + borrowingLimit;
 * elsewhere, none. The amount a node passes to its parent is the rise of
 * its excess, excess(u + r) - excess(u) (Kueue's addUsage); a release
 * passes down the fall (removeUsage: what was stored in the parent goes
 * first).
 *
 * Lock-free charge and release. State: one int64 counter usage[n][f][r]
 * per node; nothing else moves after the seal.
 *   QC1 A charge (charge_at) reads the node's counter, relaxed: the CAS
 *       below re-checks it. Refuses when u + r passes the node's bound.
 *       It computes up = excess(u + r) - excess(u), charges `up` to the
 *       parent FIRST (the same step there, recursively: the root moves
 *       first), and only then moves the node by a CAS from u to u + r.
 *   QC2 That CAS is acq_rel on success: release, so whoever reads the new
 *       value also sees the parent's charge made before it; acquire, so
 *       this charge sees the parent charges of every charge its u counts
 *       (partner: QC2 and QC3 on the same counter). If the CAS loses (u
 *       moved), the parent's charge is given back (QC3 up the tree) and
 *       the step starts again from the fresh u; a parent refusal gives
 *       back nothing at this node, which has not moved.
 *   QC3 A release (release_at) moves the node down by a CAS loop, acq_rel
 *       (partner of QC2: a release whose CAS reads a value counting a
 *       charge is ordered after that charge's parent charge, so its
 *       subtraction at the parent comes after the charge's addition
 *       there), then releases the fall of its excess at the parent.
 *   QC4 The conflict count: a relaxed fetch-add per lost CAS (a
 *       statistic; nothing is ordered by it).
 *   QC5 The generation of a tree (its root's gen): quota_release() adds 1
 *       with release after its counters fell; quota_generation() loads it
 *       with acquire. A caller that read generation g before a charge
 *       that was refused and reads g again later knows no quota_release()
 *       of the tree raced that charge: one whose fetch-add came before
 *       the read of g is seen by the charge (acquire), and one after it
 *       moves the counter, which the later reads see in time. The
 *       give-backs inside a charge (a lost CAS, an all-or-nothing
 *       rollback) do not count: they return what that same charge took
 *       an instant before, and counting them would wake a refused pod by
 *       its own attempt.
 *
 * Invariants (tests/quota/test_quota_race.c counts violations of them):
 *   I-bound  every counter is always within its node's bound: each rise
 *            is a CAS from the value it checked; falls need no check.
 *   I-cover  for every cohort P, at every instant,
 *            usage(P) >= sum over children c of excess(c),
 *            and equality holds when no charge or release is in flight:
 *            a charge raises the parent before the child (the child's
 *            CAS is validated, so the child's excess rises by exactly
 *            what the parent took) and gives it back when the child's
 *            CAS loses; a release lowers the child before the parent by
 *            exactly the fall of the child's excess. Hence the real
 *            usage of every cohort (the sum of its children's excess) is
 *            within its bound too, and so no lender is ever left below
 *            what it keeps (kept is excluded from what the parent may
 *            give out), and no queue passes nominal + borrowingLimit.
 *   I-sum    usage(cq) is the sum of its live charges (every successful
 *            charge adds r once; every release subtracts r once).
 * A charge refused for a counter that was high only for an instant (a
 * racing charge whose parent part was taken before its own CAS) is a
 * refusal a serial order might not give; no admission is ever one a
 * serial order would refuse. Single-threaded, the decisions are Kueue's
 * exactly (tests/quota/test_quota_oracle.c).
 *
 * Cost: a charge of R resources through D levels is R x D CAS, plus the
 * retries of lost races.
 */
#include "quota/quota.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/base.h"

/* A bound that no counter reaches (counters stay under 2^62). */
#define QUOTA_UNBOUNDED INT64_MAX

struct quota_node {
	char *name;
	char *parent_name; /* cohortName or parentName, NULL when none */
	bool is_cohort;
	bool implicit;     /* a Cohort only named, never added */
	int parent;        /* node id, -1 when none (after the seal) */
	int root;          /* its tree's root: itself without a parent (seal) */
	int depth;         /* cohort levels above and including this cohort */
	int64_t weight_milli;
	/* A ClusterQueue's .spec.admissionScope.admissionMode is
	 * UsageBasedAdmissionFairSharing (quota/admission_usage.h). */
	bool admission_fair_sharing;
	struct quota_preemption preemption;
	/* The flavors its resourceGroups name, in the order given (Kueue
	 * tries them in that order: flavorassigner.go). */
	int n_flavor_order;
	int flavor_order[QUOTA_MAX_FLAVORS];
};

/* A ResourceFlavor's .spec.nodeLabels. */
struct quota_flavor_labels {
	int n;
	char *key[QUOTA_MAX_FLAVOR_LABELS];
	char *value[QUOTA_MAX_FLAVOR_LABELS];
};

/* One entry of quota_set(), kept until the seal lays out the slots. */
struct quota_entry_in {
	int node;
	int flavor;
	int resource;
	int64_t nominal;
	int64_t borrowing_limit;
	int64_t lending_limit;
};

/* Per (node, flavor, resource), after the seal; read-only from then on. */
struct quota_slot {
	int64_t nominal;
	int64_t borrowing_limit; /* QUOTA_NO_LIMIT when absent */
	int64_t lending_limit;   /* QUOTA_NO_LIMIT when absent */
	int64_t subtree;
	int64_t kept;
	int64_t bound;           /* usage may not pass it (QUOTA_UNBOUNDED) */
	bool defined;            /* quota_set() gave an entry */
	bool present;            /* in Kueue's SubtreeQuota map */
};

struct quota_local_queue {
	char *ns;
	char *name;
	char *cq_name;
	int cq;
	int64_t weight_milli; /* .spec.fairSharing.weight (admission fair sharing) */
};

/* Open addressing, linear probing: the index + 1 of an item, 0 empty. */
struct quota_names {
	uint32_t *slots;
	uint64_t *hashes;
	uint32_t cap; /* a power of two, or 0 */
	uint32_t n;
};

struct quota_tree {
	bool sealed;
	int n_flavors;
	char *flavors[QUOTA_MAX_FLAVORS];
	struct quota_flavor_labels flavor_labels[QUOTA_MAX_FLAVORS];
	int n_resources;
	char *resources[QUOTA_MAX_RESOURCES];

	struct quota_node *nodes;
	int n_nodes, cap_nodes;
	int n_cluster_queues, n_cohorts;
	struct quota_names cq_names, cohort_names;

	struct quota_entry_in *entries;
	size_t n_entries, cap_entries;

	struct quota_local_queue *lqs;
	int n_lqs, cap_lqs;
	struct quota_names lq_names;

	/* After the seal: [node][flavor][resource]. */
	size_t per_node; /* n_flavors x n_resources */
	struct quota_slot *slots;
	int64_t *usage;
	uint64_t conflicts;
	/* [node]: releases into the tree this root heads (QC5); 0 elsewhere. */
	uint64_t *gen;
};

/* --- names ------------------------------------------------------------- */

static uint64_t lq_hash(const char *ns, const char *name)
{
	uint64_t h = hash64_add(HASH64_SEED, ns, strlen(ns));
	h = hash64_add(h, "/", 1);
	return rng_hash(hash64_add(h, name, strlen(name)));
}

static bool names_eq(const struct quota_tree *t, const struct quota_names *nt,
		     uint32_t idx, const char *a, const char *b)
{
	if (nt == &t->lq_names)
		return strcmp(t->lqs[idx].ns, a) == 0 &&
		       strcmp(t->lqs[idx].name, b) == 0;
	return strcmp(t->nodes[idx].name, a) == 0;
}

/* The item named (a[, b]) or -ENOENT. */
static int names_find(const struct quota_tree *t, const struct quota_names *nt,
		      uint64_t h, const char *a, const char *b)
{
	if (nt->cap == 0)
		return -ENOENT;
	for (uint32_t i = (uint32_t)h & (nt->cap - 1);; i = (i + 1) & (nt->cap - 1)) {
		uint32_t v = nt->slots[i];
		if (v == 0)
			return -ENOENT;
		if (nt->hashes[i] == h && names_eq(t, nt, v - 1, a, b))
			return (int)(v - 1);
	}
}

static int names_put(struct quota_names *nt, uint64_t h, uint32_t idx)
{
	if ((nt->n + 1) * 2 > nt->cap) {
		uint32_t cap = nt->cap ? nt->cap * 2 : 64;
		uint32_t *slots = calloc(cap, sizeof(*slots));
		uint64_t *hashes = calloc(cap, sizeof(*hashes));
		if (!slots || !hashes) {
			free(slots);
			free(hashes);
			return -ENOMEM;
		}
		for (uint32_t i = 0; i < nt->cap; i++) {
			if (nt->slots[i] == 0)
				continue;
			uint32_t j = (uint32_t)nt->hashes[i] & (cap - 1);
			while (slots[j])
				j = (j + 1) & (cap - 1);
			slots[j] = nt->slots[i];
			hashes[j] = nt->hashes[i];
		}
		free(nt->slots);
		free(nt->hashes);
		nt->slots = slots;
		nt->hashes = hashes;
		nt->cap = cap;
	}
	uint32_t j = (uint32_t)h & (nt->cap - 1);
	while (nt->slots[j])
		j = (j + 1) & (nt->cap - 1);
	nt->slots[j] = idx + 1;
	nt->hashes[j] = h;
	nt->n++;
	return 0;
}

static void names_free(struct quota_names *nt)
{
	free(nt->slots);
	free(nt->hashes);
}

/* A name for `what` (e.g. "ClusterQueue .metadata.name"): non-empty, at
 * most `max` bytes. */
static int check_name(const char *name, size_t max, const char *what,
		      char *err, size_t err_len)
{
	if (!name || !name[0])
		return errmsg_rc(-EINVAL, err, err_len,
				 "%s: empty; expected a name", what);
	size_t n = strnlen(name, max + 1);
	if (n > max)
		return errmsg_rc(-ENAMETOOLONG, err, err_len,
				 "%s \"%.40s...\": longer than %zu bytes",
				 what, name, max);
	return 0;
}

static int check_weight(const char *kind, const char *name, int64_t weight,
			char *err, size_t err_len)
{
	if (weight < 0 || weight > QUOTA_WEIGHT_MAX_MILLI)
		return errmsg_rc(-EINVAL, err, err_len,
				 "%s \"%s\": .spec.fairSharing.weight %lld/1000: "
				 "expected 0 to %lld/1000",
				 kind, name, (long long)weight,
				 (long long)QUOTA_WEIGHT_MAX_MILLI);
	return 0;
}

/* --- building ------------------------------------------------------------ */

int quota_tree_new(struct quota_tree **out)
{
	struct quota_tree *t = calloc(1, sizeof(*t));
	if (!t)
		return -ENOMEM;
	*out = t;
	return 0;
}

void quota_tree_free(struct quota_tree *t)
{
	if (!t)
		return;
	for (int i = 0; i < t->n_flavors; i++) {
		free(t->flavors[i]);
		for (int j = 0; j < t->flavor_labels[i].n; j++) {
			free(t->flavor_labels[i].key[j]);
			free(t->flavor_labels[i].value[j]);
		}
	}
	for (int i = 0; i < t->n_resources; i++)
		free(t->resources[i]);
	for (int i = 0; i < t->n_nodes; i++) {
		free(t->nodes[i].name);
		free(t->nodes[i].parent_name);
	}
	for (int i = 0; i < t->n_lqs; i++) {
		free(t->lqs[i].ns);
		free(t->lqs[i].name);
		free(t->lqs[i].cq_name);
	}
	free(t->nodes);
	free(t->entries);
	free(t->lqs);
	free(t->slots);
	free(t->usage);
	free(t->gen);
	names_free(&t->cq_names);
	names_free(&t->cohort_names);
	names_free(&t->lq_names);
	free(t);
}

static int name_list_add(char **list, int *n, int max, const char *name,
			 const char *what, bool existing_ok, char *err,
			 size_t err_len)
{
	int rc = check_name(name, QUOTA_NAME_MAX, what, err, err_len);
	if (rc < 0)
		return rc;
	for (int i = 0; i < *n; i++)
		if (strcmp(list[i], name) == 0)
			return existing_ok ? i :
			       errmsg_rc(-EEXIST, err, err_len,
					 "%s \"%s\": added twice", what, name);
	if (*n >= max)
		return errmsg_rc(-ENOSPC, err, err_len,
				 "%s \"%s\": more than %d; expected at most %d",
				 what, name, max, max);
	char *copy = strdup(name);
	if (!copy)
		return -ENOMEM;
	list[*n] = copy;
	return (*n)++;
}

int quota_flavor_add(struct quota_tree *t, const char *name, char *err,
		     size_t err_len)
{
	if (t->sealed)
		return errmsg_rc(-EBUSY, err, err_len,
				 "ResourceFlavor: the quota tree is sealed");
	return name_list_add(t->flavors, &t->n_flavors, QUOTA_MAX_FLAVORS, name,
			     "ResourceFlavor .metadata.name", false, err, err_len);
}

int quota_flavor_label_add(struct quota_tree *t, int flavor, const char *key,
			   const char *value, char *err, size_t err_len)
{
	if (t->sealed)
		return errmsg_rc(-EBUSY, err, err_len,
				 "ResourceFlavor: the quota tree is sealed");
	if (flavor < 0 || flavor >= t->n_flavors)
		return errmsg_rc(-EINVAL, err, err_len,
				 "ResourceFlavor %d: expected one this tree has",
				 flavor);
	struct quota_flavor_labels *l = &t->flavor_labels[flavor];
	const char *fname = t->flavors[flavor];
	if (key == NULL || key[0] == '\0' || strlen(key) > QUOTA_LABEL_KEY_MAX)
		return errmsg_rc(-EINVAL, err, err_len,
				 "ResourceFlavor \"%s\": .spec.nodeLabels: a key of "
				 "%zu bytes: expected 1 to %d", fname,
				 key ? strlen(key) : 0, QUOTA_LABEL_KEY_MAX);
	if (value == NULL || strlen(value) > QUOTA_LABEL_VALUE_MAX)
		return errmsg_rc(-EINVAL, err, err_len,
				 "ResourceFlavor \"%s\": .spec.nodeLabels \"%s\": a "
				 "value of %zu bytes: expected at most %d", fname,
				 key, value ? strlen(value) : 0,
				 QUOTA_LABEL_VALUE_MAX);
	for (int i = 0; i < l->n; i++)
		if (strcmp(l->key[i], key) == 0)
			return errmsg_rc(-EEXIST, err, err_len,
					 "ResourceFlavor \"%s\": .spec.nodeLabels "
					 "\"%s\": given twice", fname, key);
	if (l->n >= QUOTA_MAX_FLAVOR_LABELS)
		return errmsg_rc(-ENOSPC, err, err_len,
				 "ResourceFlavor \"%s\": .spec.nodeLabels: more "
				 "than %d; expected at most %d (Kueue's "
				 "MaxProperties)", fname, QUOTA_MAX_FLAVOR_LABELS,
				 QUOTA_MAX_FLAVOR_LABELS);
	char *k = strdup(key), *v = strdup(value);
	if (k == NULL || v == NULL) {
		free(k);
		free(v);
		return -ENOMEM;
	}
	l->key[l->n] = k;
	l->value[l->n] = v;
	l->n++;
	return 0;
}

int quota_flavor_n_labels(const struct quota_tree *t, int flavor)
{
	return flavor >= 0 && flavor < t->n_flavors ? t->flavor_labels[flavor].n : 0;
}

void quota_flavor_label(const struct quota_tree *t, int flavor, int i,
			const char **key, const char **value)
{
	const struct quota_flavor_labels *l = &t->flavor_labels[flavor];
	*key = l->key[i];
	*value = l->value[i];
}

const char *quota_flavor_name(const struct quota_tree *t, int flavor)
{
	return flavor >= 0 && flavor < t->n_flavors ? t->flavors[flavor] : NULL;
}

int quota_resource_add(struct quota_tree *t, const char *name, char *err,
		       size_t err_len)
{
	if (t->sealed) {
		int i = quota_resource_find(t, name);
		return i >= 0 ? i :
		       errmsg_rc(-EBUSY, err, err_len,
				 "resource \"%s\": the quota tree is sealed",
				 name ? name : "");
	}
	return name_list_add(t->resources, &t->n_resources,
			     QUOTA_MAX_RESOURCES, name, "resource name", true,
			     err, err_len);
}

static int node_add(struct quota_tree *t, bool cohort, const char *name,
		    const char *parent, int64_t weight_milli, bool implicit,
		    char *err, size_t err_len)
{
	const char *kind = cohort ? "Cohort" : "ClusterQueue";
	char what[QUOTA_NAME_MAX + 64];
	if (t->sealed && !implicit)
		return errmsg_rc(-EBUSY, err, err_len,
				 "%s: the quota tree is sealed", kind);
	snprintf(what, sizeof(what), "%s .metadata.name", kind);
	int rc = check_name(name, QUOTA_NAME_MAX, what, err, err_len);
	if (rc < 0)
		return rc;
	if (parent && parent[0]) {
		snprintf(what, sizeof(what), "%s \"%s\": .spec.%s", kind,
			 name, cohort ? "parentName" : "cohortName");
		rc = check_name(parent, QUOTA_NAME_MAX, what, err, err_len);
		if (rc < 0)
			return rc;
	}
	rc = check_weight(kind, name, weight_milli, err, err_len);
	if (rc < 0)
		return rc;
	struct quota_names *names = cohort ? &t->cohort_names : &t->cq_names;
	uint64_t h = hash64(name, strlen(name));
	if (names_find(t, names, h, name, NULL) >= 0)
		return errmsg_rc(-EEXIST, err, err_len, "%s \"%s\": added twice",
				 kind, name);
	int *count = cohort ? &t->n_cohorts : &t->n_cluster_queues;
	int max = cohort ? QUOTA_MAX_COHORTS : QUOTA_MAX_CLUSTER_QUEUES;
	if (*count >= max)
		return errmsg_rc(-ENOSPC, err, err_len,
				 "%s \"%s\": more than %d; expected at most %d",
				 kind, name, max, max);
	if (t->n_nodes == t->cap_nodes) {
		int cap = t->cap_nodes ? t->cap_nodes * 2 : 16;
		struct quota_node *nodes = realloc(t->nodes, (size_t)cap * sizeof(*nodes));
		if (!nodes)
			return -ENOMEM;
		t->nodes = nodes;
		t->cap_nodes = cap;
	}
	struct quota_node *n = &t->nodes[t->n_nodes];
	memset(n, 0, sizeof(*n));
	n->name = strdup(name);
	n->parent_name = parent && parent[0] ? strdup(parent) : NULL;
	if (!n->name || (parent && parent[0] && !n->parent_name)) {
		free(n->name);
		free(n->parent_name);
		return -ENOMEM;
	}
	n->is_cohort = cohort;
	n->implicit = implicit;
	n->parent = -1;
	n->weight_milli = weight_milli;
	rc = names_put(names, h, (uint32_t)t->n_nodes);
	if (rc < 0) {
		free(n->name);
		free(n->parent_name);
		return rc;
	}
	(*count)++;
	return t->n_nodes++;
}

int quota_cohort_add(struct quota_tree *t, const char *name,
		     const char *parent, int64_t weight_milli, char *err,
		     size_t err_len)
{
	return node_add(t, true, name, parent, weight_milli, false, err,
			err_len);
}

static const char *policy_name(enum quota_preempt_policy p)
{
	switch (p) {
	case QUOTA_PREEMPT_NEVER:
		return "Never";
	case QUOTA_PREEMPT_LOWER_PRIORITY:
		return "LowerPriority";
	case QUOTA_PREEMPT_ANY:
		return "Any";
	case QUOTA_PREEMPT_LOWER_OR_NEWER_EQUAL_PRIORITY:
		return "LowerOrNewerEqualPriority";
	}
	return "?";
}

/* Kueue's enums (clusterqueue_types.go): reclaimWithinCohort
 * Never|LowerPriority|Any; borrowWithinCohort.policy Never|LowerPriority;
 * withinClusterQueue Never|LowerPriority|LowerOrNewerEqualPriority; and
 * the rule that reclaimWithinCohort Never forbids borrowWithinCohort. */
static int check_preemption(const char *name, const struct quota_preemption *p,
			    char *err, size_t err_len)
{
	if ((unsigned)p->reclaim_within_cohort > QUOTA_PREEMPT_ANY)
		return errmsg_rc(-EINVAL, err, err_len,
				 "ClusterQueue \"%s\": .spec.preemption.reclaimWithinCohort %d: "
				 "expected Never, LowerPriority or Any",
				 name, (int)p->reclaim_within_cohort);
	if ((unsigned)p->borrow_within_cohort > QUOTA_PREEMPT_LOWER_PRIORITY)
		return errmsg_rc(-EINVAL, err, err_len,
				 "ClusterQueue \"%s\": .spec.preemption.borrowWithinCohort.policy %d: "
				 "expected Never or LowerPriority",
				 name, (int)p->borrow_within_cohort);
	if (p->within_cluster_queue == QUOTA_PREEMPT_ANY ||
	    (unsigned)p->within_cluster_queue > QUOTA_PREEMPT_LOWER_OR_NEWER_EQUAL_PRIORITY)
		return errmsg_rc(-EINVAL, err, err_len,
				 "ClusterQueue \"%s\": .spec.preemption.withinClusterQueue %d: "
				 "expected Never, LowerPriority or LowerOrNewerEqualPriority",
				 name, (int)p->within_cluster_queue);
	if (p->reclaim_within_cohort == QUOTA_PREEMPT_NEVER &&
	    p->borrow_within_cohort != QUOTA_PREEMPT_NEVER)
		return errmsg_rc(-EINVAL, err, err_len,
				 "ClusterQueue \"%s\": .spec.preemption.borrowWithinCohort.policy %s "
				 "with reclaimWithinCohort Never: expected Never "
				 "(Kueue refuses reclaimWithinCohort=Never and "
				 "borrowWithinCohort.Policy!=Never)",
				 name, policy_name(p->borrow_within_cohort));
	return 0;
}

int quota_cluster_queue_add(struct quota_tree *t, const char *name,
			    const char *cohort, int64_t weight_milli,
			    const struct quota_preemption *preemption,
			    char *err, size_t err_len)
{
	if (preemption && name) {
		int rc = check_preemption(name, preemption, err, err_len);
		if (rc < 0)
			return rc;
	}
	int id = node_add(t, false, name, cohort, weight_milli, false, err,
			  err_len);
	if (id >= 0 && preemption)
		t->nodes[id].preemption = *preemption;
	return id;
}

static bool node_ok(const struct quota_tree *t, int node)
{
	return node >= 0 && node < t->n_nodes;
}

static const char *kind_of(const struct quota_tree *t, int node)
{
	return t->nodes[node].is_cohort ? "Cohort" : "ClusterQueue";
}

int quota_set(struct quota_tree *t, int node, int flavor, int resource,
	      int64_t nominal, int64_t borrowing_limit, int64_t lending_limit,
	      char *err, size_t err_len)
{
	if (t->sealed)
		return errmsg_rc(-EBUSY, err, err_len,
				 "resourceGroups: the quota tree is sealed");
	if (!node_ok(t, node) || flavor < 0 || flavor >= t->n_flavors ||
	    resource < 0 || resource >= t->n_resources)
		return errmsg_rc(-EINVAL, err, err_len,
				 "resourceGroups: node %d, flavor %d, resource %d: "
				 "expected ones this tree has", node, flavor,
				 resource);
	const struct quota_node *n = &t->nodes[node];
	const char *kind = kind_of(t, node);
	const char *fname = t->flavors[flavor], *rname = t->resources[resource];
	struct {
		const char *field;
		int64_t v;
		bool optional;
	} vals[] = {
		{ "nominalQuota", nominal, false },
		{ "borrowingLimit", borrowing_limit, true },
		{ "lendingLimit", lending_limit, true },
	};
	for (size_t i = 0; i < sizeof(vals) / sizeof(vals[0]); i++) {
		if (vals[i].optional && vals[i].v == QUOTA_NO_LIMIT)
			continue;
		if (vals[i].v < 0 || vals[i].v > QUOTA_QUANTITY_MAX)
			return errmsg_rc(-EINVAL, err, err_len,
					 "%s \"%s\": .spec.resourceGroups flavor \"%s\" "
					 "resource \"%s\": %s %lld: expected 0 to %lld%s",
					 kind, n->name, fname, rname, vals[i].field,
					 (long long)vals[i].v,
					 (long long)QUOTA_QUANTITY_MAX,
					 vals[i].optional ? ", or absent" : "");
	}
	/* Kueue's webhook (validateLendingLimit): a ClusterQueue lends at
	 * most its nominalQuota; a Cohort's lendingLimit covers its subtree. */
	if (!n->is_cohort && lending_limit != QUOTA_NO_LIMIT &&
	    lending_limit > nominal)
		return errmsg_rc(-EINVAL, err, err_len,
				 "ClusterQueue \"%s\": .spec.resourceGroups flavor \"%s\" "
				 "resource \"%s\": lendingLimit %lld: expected at most "
				 "nominalQuota %lld",
				 n->name, fname, rname, (long long)lending_limit,
				 (long long)nominal);
	for (size_t i = 0; i < t->n_entries; i++) {
		const struct quota_entry_in *e = &t->entries[i];
		if (e->node == node && e->flavor == flavor && e->resource == resource)
			return errmsg_rc(-EEXIST, err, err_len,
					 "%s \"%s\": .spec.resourceGroups flavor \"%s\" "
					 "resource \"%s\": given twice; expected each "
					 "flavor and resource once",
					 kind, n->name, fname, rname);
	}
	if (t->n_entries == t->cap_entries) {
		size_t cap = t->cap_entries ? t->cap_entries * 2 : 64;
		struct quota_entry_in *e = realloc(t->entries, cap * sizeof(*e));
		if (!e)
			return -ENOMEM;
		t->entries = e;
		t->cap_entries = cap;
	}
	t->entries[t->n_entries++] = (struct quota_entry_in){
		.node = node, .flavor = flavor, .resource = resource,
		.nominal = nominal, .borrowing_limit = borrowing_limit,
		.lending_limit = lending_limit,
	};
	struct quota_node *m = &t->nodes[node];
	int f = 0;
	while (f < m->n_flavor_order && m->flavor_order[f] != flavor)
		f++;
	if (f == m->n_flavor_order) /* at most n_flavors <= QUOTA_MAX_FLAVORS */
		m->flavor_order[m->n_flavor_order++] = flavor;
	return 0;
}

int quota_local_queue_add(struct quota_tree *t, const char *ns,
			  const char *name, const char *cluster_queue,
			  char *err, size_t err_len)
{
	if (t->sealed)
		return errmsg_rc(-EBUSY, err, err_len,
				 "LocalQueue: the quota tree is sealed");
	int rc = check_name(ns, QUOTA_NAMESPACE_MAX,
			    "LocalQueue .metadata.namespace", err, err_len);
	if (rc < 0)
		return rc;
	rc = check_name(name, QUOTA_NAME_MAX, "LocalQueue .metadata.name", err,
			err_len);
	if (rc < 0)
		return rc;
	char what[QUOTA_NAME_MAX + QUOTA_NAMESPACE_MAX + 64];
	snprintf(what, sizeof(what), "LocalQueue \"%s/%s\": .spec.clusterQueue",
		 ns, name);
	rc = check_name(cluster_queue, QUOTA_NAME_MAX, what, err, err_len);
	if (rc < 0)
		return rc;
	uint64_t h = lq_hash(ns, name);
	if (names_find(t, &t->lq_names, h, ns, name) >= 0)
		return errmsg_rc(-EEXIST, err, err_len,
				 "LocalQueue \"%s/%s\": added twice", ns, name);
	if (t->n_lqs >= QUOTA_MAX_LOCAL_QUEUES)
		return errmsg_rc(-ENOSPC, err, err_len,
				 "LocalQueue \"%s/%s\": more than %d; expected at most %d",
				 ns, name, QUOTA_MAX_LOCAL_QUEUES,
				 QUOTA_MAX_LOCAL_QUEUES);
	if (t->n_lqs == t->cap_lqs) {
		int cap = t->cap_lqs ? t->cap_lqs * 2 : 16;
		struct quota_local_queue *l = realloc(t->lqs, (size_t)cap * sizeof(*l));
		if (!l)
			return -ENOMEM;
		t->lqs = l;
		t->cap_lqs = cap;
	}
	struct quota_local_queue *l = &t->lqs[t->n_lqs];
	l->ns = strdup(ns);
	l->name = strdup(name);
	l->cq_name = strdup(cluster_queue);
	l->cq = -1;
	l->weight_milli = QUOTA_WEIGHT_DEFAULT_MILLI;
	if (!l->ns || !l->name || !l->cq_name)
		goto nomem;
	rc = names_put(&t->lq_names, h, (uint32_t)t->n_lqs);
	if (rc < 0)
		goto nomem;
	return t->n_lqs++;
nomem:
	free(l->ns);
	free(l->name);
	free(l->cq_name);
	return -ENOMEM;
}

int quota_local_queue_set_weight(struct quota_tree *t, int lq,
				 int64_t weight_milli, char *err, size_t err_len)
{
	if (t->sealed)
		return errmsg_rc(-EBUSY, err, err_len,
				 "LocalQueue: the quota tree is sealed");
	if (lq < 0 || lq >= t->n_lqs)
		return errmsg_rc(-EINVAL, err, err_len,
				 "LocalQueue %d: no such LocalQueue (expected 0 to %d)",
				 lq, t->n_lqs - 1);
	char what[QUOTA_NAME_MAX + QUOTA_NAMESPACE_MAX + 2];
	snprintf(what, sizeof(what), "%s/%s", t->lqs[lq].ns, t->lqs[lq].name);
	int rc = check_weight("LocalQueue", what, weight_milli, err, err_len);
	if (rc == 0)
		t->lqs[lq].weight_milli = weight_milli;
	return rc;
}

int quota_cluster_queue_set_admission_fair_sharing(struct quota_tree *t,
						   int node, bool on)
{
	if (t->sealed)
		return -EBUSY;
	if (!node_ok(t, node) || t->nodes[node].is_cohort)
		return -EINVAL;
	t->nodes[node].admission_fair_sharing = on;
	return 0;
}

/* --- a copy with other nominal quotas --------------------------------------- */

/* The objects as added (implicit cohorts left to the seal, which adds
 * them again after the others: every explicit node keeps its id), the
 * entries in their order (so each node's flavor order is the same). */
int quota_tree_copy_nominals(const struct quota_tree *src,
			     int64_t (*nominal)(void *arg, int cq, int flavor, int resource,
						int64_t nominal),
			     void *arg, struct quota_tree **out, char *err, size_t err_len)
{
	*out = NULL;
	if (!src->sealed)
		return errmsg_rc(-EINVAL, err, err_len, "quota copy: the tree is not sealed");
	struct quota_tree *t = NULL;
	int rc = quota_tree_new(&t);
	for (int f = 0; rc >= 0 && f < src->n_flavors; f++) {
		rc = quota_flavor_add(t, src->flavors[f], err, err_len);
		const struct quota_flavor_labels *l = &src->flavor_labels[f];
		for (int i = 0; rc >= 0 && i < l->n; i++)
			rc = quota_flavor_label_add(t, f, l->key[i], l->value[i], err, err_len);
	}
	for (int r = 0; rc >= 0 && r < src->n_resources; r++)
		rc = quota_resource_add(t, src->resources[r], err, err_len);
	for (int i = 0; rc >= 0 && i < src->n_nodes; i++) {
		const struct quota_node *n = &src->nodes[i];
		if (n->implicit)
			continue;
		if (n->is_cohort) {
			rc = quota_cohort_add(t, n->name, n->parent_name, n->weight_milli, err,
					      err_len);
		} else {
			rc = quota_cluster_queue_add(t, n->name, n->parent_name, n->weight_milli,
						     &n->preemption, err, err_len);
			if (rc >= 0 && n->admission_fair_sharing)
				rc = quota_cluster_queue_set_admission_fair_sharing(t, rc, true);
		}
	}
	for (size_t i = 0; rc >= 0 && i < src->n_entries; i++) {
		const struct quota_entry_in *e = &src->entries[i];
		int64_t nom = e->nominal, lend = e->lending_limit;
		if (!src->nodes[e->node].is_cohort) {
			nom = nominal(arg, e->node, e->flavor, e->resource, e->nominal);
			if (lend != QUOTA_NO_LIMIT && lend > nom)
				lend = nom;
		}
		rc = quota_set(t, e->node, e->flavor, e->resource, nom, e->borrowing_limit, lend,
			       err, err_len);
	}
	for (int i = 0; rc >= 0 && i < src->n_lqs; i++) {
		const struct quota_local_queue *q = &src->lqs[i];
		rc = quota_local_queue_add(t, q->ns, q->name, q->cq_name, err, err_len);
		if (rc >= 0)
			rc = quota_local_queue_set_weight(t, rc, q->weight_milli, err, err_len);
	}
	if (rc >= 0)
		rc = quota_seal(t, err, err_len);
	if (rc < 0) {
		quota_tree_free(t);
		return rc;
	}
	*out = t;
	return 0;
}

/* --- the seal --------------------------------------------------------------- */

static int64_t sat_add(int64_t a, int64_t b)
{
	int64_t s = a + b; /* both in [0, QUOTA_SUM_MAX]: no overflow */
	return s > QUOTA_SUM_MAX ? QUOTA_SUM_MAX : s;
}

static int64_t max64(int64_t a, int64_t b)
{
	return a > b ? a : b;
}

static int64_t min64(int64_t a, int64_t b)
{
	return a < b ? a : b;
}

/* Resolves parent names to ids, adding implicit cohorts. */
static int seal_parents(struct quota_tree *t, char *err, size_t err_len)
{
	for (int i = 0; i < t->n_nodes; i++) {
		const char *pname = t->nodes[i].parent_name;
		if (!pname)
			continue;
		int p = names_find(t, &t->cohort_names,
				   hash64(pname, strlen(pname)), pname, NULL);
		if (p < 0) {
			/* Kueue: a cohortName or parentName naming no Cohort
			 * makes an implicit one, a root with no quota. */
			p = node_add(t, true, pname, NULL,
				     QUOTA_WEIGHT_DEFAULT_MILLI, true, err, err_len);
			if (p < 0)
				return p;
		}
		t->nodes[i].parent = p;
	}
	return 0;
}

/* Refuses a cycle of parentName and a tree too deep; sets each cohort's
 * depth (levels from it to its root, both counted). */
static int seal_depths(struct quota_tree *t, char *err, size_t err_len)
{
	int *stamp = calloc((size_t)(unsigned)t->n_nodes + 1, sizeof(*stamp));
	if (!stamp)
		return -ENOMEM;
	int rc = 0;
	for (int i = 0; i < t->n_nodes && rc == 0; i++) {
		if (!t->nodes[i].is_cohort)
			continue;
		int levels = 0;
		for (int c = i; c >= 0; c = t->nodes[c].parent) {
			if (stamp[c] == i + 1) {
				rc = errmsg_rc(-ELOOP, err, err_len,
					       "Cohort \"%s\": .spec.parentName \"%s\": "
					       "a cycle (it leads back to Cohort \"%s\"); "
					       "expected a tree",
					       t->nodes[i].name,
					       t->nodes[i].parent_name,
					       t->nodes[c].name);
				break;
			}
			stamp[c] = i + 1;
			levels++;
		}
		if (rc == 0 && levels > QUOTA_MAX_DEPTH)
			rc = errmsg_rc(-E2BIG, err, err_len,
				       "Cohort \"%s\": .spec.parentName \"%s\": %d levels "
				       "of Cohorts up to the root; expected at most %d",
				       t->nodes[i].name, t->nodes[i].parent_name,
				       levels, QUOTA_MAX_DEPTH);
		t->nodes[i].depth = levels;
	}
	free(stamp);
	return rc;
}

static int cmp_depth_desc(const void *a, const void *b, void *arg)
{
	const struct quota_tree *t = arg;
	int da = t->nodes[*(const int *)a].is_cohort ? t->nodes[*(const int *)a].depth :
						      QUOTA_MAX_DEPTH + 1;
	int db = t->nodes[*(const int *)b].is_cohort ? t->nodes[*(const int *)b].depth :
						      QUOTA_MAX_DEPTH + 1;
	if (da != db)
		return db - da;
	return *(const int *)a - *(const int *)b;
}

int quota_seal(struct quota_tree *t, char *err, size_t err_len)
{
	if (t->sealed)
		return 0;
	int *order = NULL;
	int rc = seal_parents(t, err, err_len);
	if (rc < 0)
		return rc;
	rc = seal_depths(t, err, err_len);
	if (rc < 0)
		return rc;
	for (size_t i = 0; i < t->n_entries; i++) {
		const struct quota_entry_in *e = &t->entries[i];
		const struct quota_node *n = &t->nodes[e->node];
		if (n->parent >= 0)
			continue;
		const char *field = e->borrowing_limit != QUOTA_NO_LIMIT ? "borrowingLimit" :
				    e->lending_limit != QUOTA_NO_LIMIT ? "lendingLimit" : NULL;
		if (field)
			return errmsg_rc(-EINVAL, err, err_len,
					 "%s \"%s\": .spec.resourceGroups flavor \"%s\" "
					 "resource \"%s\": %s %lld without a %s; expected "
					 "none (Kueue: limits only under a %s)",
					 kind_of(t, e->node), n->name,
					 t->flavors[e->flavor], t->resources[e->resource],
					 field,
					 (long long)(e->borrowing_limit != QUOTA_NO_LIMIT ?
						     e->borrowing_limit : e->lending_limit),
					 n->is_cohort ? "parentName" : "cohortName",
					 n->is_cohort ? "parent" : "cohort");
	}
	for (int i = 0; i < t->n_lqs; i++) {
		struct quota_local_queue *l = &t->lqs[i];
		l->cq = names_find(t, &t->cq_names,
				   hash64(l->cq_name, strlen(l->cq_name)),
				   l->cq_name, NULL);
		if (l->cq < 0)
			return errmsg_rc(-ENOENT, err, err_len,
					 "LocalQueue \"%s/%s\": .spec.clusterQueue \"%s\": "
					 "no such ClusterQueue",
					 l->ns, l->name, l->cq_name);
	}

	t->per_node = (size_t)t->n_flavors * (size_t)t->n_resources;
	size_t n_slots = t->per_node * (size_t)t->n_nodes;
	t->slots = calloc(n_slots ? n_slots : 1, sizeof(*t->slots));
	t->usage = calloc(n_slots ? n_slots : 1, sizeof(*t->usage));
	t->gen = calloc((size_t)t->n_nodes + 1, sizeof(*t->gen));
	order = malloc(((size_t)t->n_nodes + 1) * sizeof(*order));
	if (!t->slots || !t->usage || !t->gen || !order) {
		rc = -ENOMEM;
		goto cleanup;
	}
	for (size_t i = 0; i < n_slots; i++) {
		t->slots[i].borrowing_limit = QUOTA_NO_LIMIT;
		t->slots[i].lending_limit = QUOTA_NO_LIMIT;
	}
	for (size_t i = 0; i < t->n_entries; i++) {
		const struct quota_entry_in *e = &t->entries[i];
		struct quota_slot *s = &t->slots[(size_t)e->node * t->per_node +
						 (size_t)e->flavor * (size_t)t->n_resources +
						 (size_t)e->resource];
		s->nominal = e->nominal;
		s->borrowing_limit = e->borrowing_limit;
		s->lending_limit = e->lending_limit;
		s->subtree = e->nominal;
		s->defined = true;
		s->present = true;
	}
	/* Children before parents: Kueue's updateCohortResourceNode and
	 * accumulateFromChild, bottom-up. */
	for (int i = 0; i < t->n_nodes; i++)
		order[i] = i;
	qsort_r(order, (size_t)t->n_nodes, sizeof(*order), cmp_depth_desc, t);
	for (int k = 0; k < t->n_nodes; k++) {
		int n = order[k];
		int p = t->nodes[n].parent;
		struct quota_slot *s = &t->slots[(size_t)n * t->per_node];
		for (size_t fr = 0; fr < t->per_node; fr++) {
			struct quota_slot *x = &s[fr];
			x->kept = x->lending_limit == QUOTA_NO_LIMIT ? 0 :
				  max64(0, x->subtree - x->lending_limit);
			if (p < 0)
				x->bound = x->subtree;
			else if (x->borrowing_limit != QUOTA_NO_LIMIT)
				x->bound = sat_add(x->subtree, x->borrowing_limit);
			else
				x->bound = QUOTA_UNBOUNDED;
			if (p < 0)
				continue;
			struct quota_slot *ps = &t->slots[(size_t)p * t->per_node + fr];
			ps->subtree = sat_add(ps->subtree, x->subtree - x->kept);
			ps->present |= x->present;
		}
	}
	for (int i = 0; i < t->n_nodes; i++) {
		int r = i;
		while (t->nodes[r].parent >= 0)
			r = t->nodes[r].parent;
		t->nodes[i].root = r;
	}
	t->sealed = true;
	rc = 0;
cleanup:
	free(order);
	if (rc < 0) {
		free(t->slots);
		free(t->usage);
		free(t->gen);
		t->slots = NULL;
		t->usage = NULL;
		t->gen = NULL;
	}
	return rc;
}

/* --- lookups ------------------------------------------------------------- */

static int list_find(char *const *list, int n, const char *name)
{
	if (!name)
		return -ENOENT;
	for (int i = 0; i < n; i++)
		if (strcmp(list[i], name) == 0)
			return i;
	return -ENOENT;
}

int quota_flavor_find(const struct quota_tree *t, const char *name)
{
	return list_find(t->flavors, t->n_flavors, name);
}

int quota_resource_find(const struct quota_tree *t, const char *name)
{
	return list_find(t->resources, t->n_resources, name);
}

int quota_cluster_queue_find(const struct quota_tree *t, const char *name)
{
	return name ? names_find(t, &t->cq_names, hash64(name, strlen(name)),
				 name, NULL) : -ENOENT;
}

int quota_cohort_find(const struct quota_tree *t, const char *name)
{
	return name ? names_find(t, &t->cohort_names,
				 hash64(name, strlen(name)), name, NULL) :
		      -ENOENT;
}

int quota_local_queue_find(const struct quota_tree *t, const char *ns,
			   const char *name)
{
	if (!t->sealed || !ns || !name)
		return -ENOENT;
	int i = names_find(t, &t->lq_names, lq_hash(ns, name), ns, name);
	return i < 0 ? i : t->lqs[i].cq;
}

int quota_local_queue_index(const struct quota_tree *t, const char *ns,
			    const char *name)
{
	if (!t->sealed || !ns || !name)
		return -ENOENT;
	return names_find(t, &t->lq_names, lq_hash(ns, name), ns, name);
}

int quota_n_local_queues(const struct quota_tree *t)
{
	return t->n_lqs;
}

int quota_local_queue_cq(const struct quota_tree *t, int lq)
{
	return t->sealed && lq >= 0 && lq < t->n_lqs ? t->lqs[lq].cq : -ENOENT;
}

void quota_local_queue_name(const struct quota_tree *t, int lq,
			    const char **ns, const char **name)
{
	bool ok = lq >= 0 && lq < t->n_lqs;
	*ns = ok ? t->lqs[lq].ns : NULL;
	*name = ok ? t->lqs[lq].name : NULL;
}

int64_t quota_local_queue_weight_milli(const struct quota_tree *t, int lq)
{
	return lq >= 0 && lq < t->n_lqs ? t->lqs[lq].weight_milli : 0;
}

bool quota_node_admission_fair_sharing(const struct quota_tree *t, int node)
{
	return node_ok(t, node) && t->nodes[node].admission_fair_sharing;
}

int quota_n_nodes(const struct quota_tree *t)
{
	return t->n_nodes;
}

int quota_n_flavors(const struct quota_tree *t)
{
	return t->n_flavors;
}

int quota_n_resources(const struct quota_tree *t)
{
	return t->n_resources;
}

bool quota_node_is_cohort(const struct quota_tree *t, int node)
{
	return node_ok(t, node) && t->nodes[node].is_cohort;
}

int quota_node_parent(const struct quota_tree *t, int node)
{
	return node_ok(t, node) ? t->nodes[node].parent : -1;
}

const char *quota_node_name(const struct quota_tree *t, int node)
{
	return node_ok(t, node) ? t->nodes[node].name : NULL;
}

const char *quota_resource_name(const struct quota_tree *t, int resource)
{
	return resource >= 0 && resource < t->n_resources ? t->resources[resource] : NULL;
}

int quota_node_flavors(const struct quota_tree *t, int node, const int **order)
{
	if (!node_ok(t, node)) {
		*order = NULL;
		return 0;
	}
	*order = t->nodes[node].flavor_order;
	return t->nodes[node].n_flavor_order;
}

int64_t quota_node_weight_milli(const struct quota_tree *t, int node)
{
	return node_ok(t, node) ? t->nodes[node].weight_milli : 0;
}

const struct quota_preemption *quota_node_preemption(const struct quota_tree *t,
						     int node)
{
	return node_ok(t, node) ? &t->nodes[node].preemption : NULL;
}

/* --- charge and release ----------------------------------------------------- */

static size_t slot_index(const struct quota_tree *t, int node, int flavor,
			 int resource)
{
	return (size_t)node * t->per_node + (size_t)flavor * (size_t)t->n_resources +
	       (size_t)resource;
}

/* What a node with counter value u holds in its parent. */
static int64_t excess(const struct quota_slot *s, int64_t u)
{
	return max64(0, u - s->kept);
}

static void release_at(struct quota_tree *t, int node, size_t fr, int64_t amount)
{
	while (amount > 0) {
		int64_t *usage = &t->usage[(size_t)node * t->per_node + fr];
		const struct quota_slot *s = &t->slots[(size_t)node * t->per_node + fr];
		/* QC1: relaxed; the CAS below re-reads. */
		int64_t u = __atomic_load_n(usage, __ATOMIC_RELAXED);
		/* QC3: acq_rel, partner of QC2 on this counter. */
		while (!__atomic_compare_exchange_n(usage, &u, u - amount, true,
						    __ATOMIC_ACQ_REL,
						    __ATOMIC_RELAXED))
			/* QC4: relaxed, a statistic. */
			__atomic_fetch_add(&t->conflicts, 1, __ATOMIC_RELAXED);
		int parent = t->nodes[node].parent;
		if (parent < 0)
			return;
		amount = excess(s, u) - excess(s, u - amount);
		node = parent;
	}
}

/* `force`: no bound checked (quota_force_charge). On 0, *after (when not
 * NULL) is `node`'s counter as this charge's own CAS left it.
 *
 * QC1-QC2's recursion (the parent charged first, then this node by its
 * CAS; a lost CAS gives the parent's part back and starts this node
 * again from the fresh value), unrolled into a climb and a descent:
 * level 0 is `node`, level k + 1 the parent of level k, charged amt[k +
 * 1], what level k passes up at the value u[k] it read. The climb reads
 * and checks each level (a refusal there leaves nothing charged: the
 * levels below have not moved, the levels above were not reached); the
 * descent moves the levels from the top down, each CAS after its
 * parent's. A CAS lost at level k gives level k + 1's charge back
 * (release_at: QC3 up the tree) and climbs again from level k with the
 * value the CAS read. The same steps in the same order as the recursion,
 * without a call per level: in the default benchmark (issue 37, two
 * resources, one cohort) quota_try_charge_borrowed costs 378 instructions
 * a pod so, 442 with the recursion passing `after` up. A path has at most
 * QUOTA_MAX_DEPTH cohorts above its ClusterQueue (quota_seal). */
static int charge_at(struct quota_tree *t, int node, size_t fr, int64_t amount,
		     bool force, int64_t *after)
{
	int at[QUOTA_MAX_DEPTH + 1];
	int64_t amt[QUOTA_MAX_DEPTH + 1], u[QUOTA_MAX_DEPTH + 1];
	int k = 0, top;
	at[0] = node;
	amt[0] = amount;
	/* QC1: relaxed; the CAS below re-checks u. */
	u[0] = __atomic_load_n(&t->usage[(size_t)node * t->per_node + fr],
			       __ATOMIC_RELAXED);
	for (;;) {
		/* Climb from level k, u[k] read. */
		for (;;) {
			const struct quota_slot *s =
				&t->slots[(size_t)at[k] * t->per_node + fr];
			if (!force && amt[k] > s->bound - u[k])
				return -ENOSPC;
			int parent = t->nodes[at[k]].parent;
			int64_t up = parent < 0 ? 0 : excess(s, u[k] + amt[k]) -
						      excess(s, u[k]);
			if (up <= 0)
				break;
			k++;
			at[k] = parent;
			amt[k] = up;
			/* QC1: relaxed; the CAS below re-checks u. */
			u[k] = __atomic_load_n(&t->usage[(size_t)parent * t->per_node + fr],
					       __ATOMIC_RELAXED);
		}
		top = k;
		/* Descend: level k's CAS, every level above it charged. */
		for (;;) {
			int64_t *usage = &t->usage[(size_t)at[k] * t->per_node + fr];
			/* QC2: acq_rel on success, partner of QC2 and QC3 on
			 * this counter; relaxed on failure (u[k] is re-read and
			 * re-checked). */
			if (__atomic_compare_exchange_n(usage, &u[k], u[k] + amt[k],
							false, __ATOMIC_ACQ_REL,
							__ATOMIC_RELAXED)) {
				if (k == 0) {
					if (after != NULL)
						*after = u[0] + amt[0];
					return 0;
				}
				k--;
				continue;
			}
			/* QC4: relaxed, a statistic. */
			__atomic_fetch_add(&t->conflicts, 1, __ATOMIC_RELAXED);
			if (k < top)
				release_at(t, at[k + 1], fr, amt[k + 1]);
			break; /* climb again from level k */
		}
	}
}

static int check_request(const struct quota_tree *t, int cq, int flavor,
			 const int64_t *request)
{
	if (!t->sealed || !node_ok(t, cq) || t->nodes[cq].is_cohort ||
	    flavor < 0 || flavor >= t->n_flavors || !request)
		return -EINVAL;
	const struct quota_slot *s = &t->slots[slot_index(t, cq, flavor, 0)];
	for (int r = 0; r < t->n_resources; r++) {
		/* One test for both ends: a negative request is a huge one. */
		if ((uint64_t)request[r] > (uint64_t)QUOTA_QUANTITY_MAX)
			return -EINVAL;
		if (request[r] > 0 && !s[r].defined)
			return -ENOENT;
	}
	return 0;
}

/* *borrowed (when not NULL, on 0): the charge took cq past its subtree
 * quota in some resource it asks, by the values its own CASes left. */
static int charge(struct quota_tree *t, int cq, int flavor,
		  const int64_t *request, bool force, bool *borrowed)
{
	int rc = check_request(t, cq, flavor, request);
	if (rc < 0)
		return rc;
	size_t base = (size_t)flavor * (size_t)t->n_resources;
	const struct quota_slot *s = &t->slots[(size_t)cq * t->per_node + base];
	bool past = false;
	for (int r = 0; r < t->n_resources; r++) {
		if (request[r] == 0)
			continue;
		int64_t after;
		rc = charge_at(t, cq, base + (size_t)r, request[r], force, &after);
		if (rc == 0) {
			past |= after > s[r].subtree;
			continue;
		}
		while (r-- > 0)
			if (request[r] > 0)
				release_at(t, cq, base + (size_t)r, request[r]);
		return rc;
	}
	if (borrowed != NULL)
		*borrowed = past;
	return 0;
}

int quota_try_charge(struct quota_tree *t, int cq, int flavor,
		     const int64_t *request)
{
	return charge(t, cq, flavor, request, false, NULL);
}

int quota_try_charge_borrowed(struct quota_tree *t, int cq, int flavor,
			      const int64_t *request, bool *borrowed)
{
	return charge(t, cq, flavor, request, false, borrowed);
}

int quota_force_charge(struct quota_tree *t, int cq, int flavor,
		       const int64_t *request)
{
	return charge(t, cq, flavor, request, true, NULL);
}

int quota_force_charge_borrowed(struct quota_tree *t, int cq, int flavor,
				const int64_t *request, bool *borrowed)
{
	return charge(t, cq, flavor, request, true, borrowed);
}

/* charge_at's test without its charge, up the path from `node`. */
static bool fits_at(const struct quota_tree *t, int node, size_t fr, int64_t amount)
{
	while (amount > 0) {
		size_t i = (size_t)node * t->per_node + fr;
		const struct quota_slot *s = &t->slots[i];
		/* QC1: relaxed, a view. */
		int64_t u = __atomic_load_n(&t->usage[i], __ATOMIC_RELAXED);
		if (amount > s->bound - u)
			return false;
		int parent = t->nodes[node].parent;
		if (parent < 0)
			return true;
		amount = excess(s, u + amount) - excess(s, u);
		node = parent;
	}
	return true;
}

int quota_would_charge(const struct quota_tree *t, int cq, int flavor,
		       const int64_t *request)
{
	int rc = check_request(t, cq, flavor, request);
	if (rc < 0)
		return rc;
	size_t base = (size_t)flavor * (size_t)t->n_resources;
	for (int r = 0; r < t->n_resources; r++)
		if (request[r] > 0 && !fits_at(t, cq, base + (size_t)r, request[r]))
			return -ENOSPC;
	return 0;
}

void quota_release(struct quota_tree *t, int cq, int flavor,
		   const int64_t *request)
{
	if (check_request(t, cq, flavor, request) < 0)
		return;
	size_t base = (size_t)flavor * (size_t)t->n_resources;
	for (int r = 0; r < t->n_resources; r++)
		if (request[r] > 0)
			release_at(t, cq, base + (size_t)r, request[r]);
	/* QC5: release, after the counters fell; partner of the acquire in
	 * quota_generation(). */
	__atomic_fetch_add(&t->gen[t->nodes[cq].root], 1, __ATOMIC_RELEASE);
}

int quota_node_root(const struct quota_tree *t, int node)
{
	return t->sealed && node_ok(t, node) ? t->nodes[node].root : -1;
}

uint64_t quota_generation(const struct quota_tree *t, int node)
{
	if (!t->sealed || !node_ok(t, node))
		return 0;
	/* QC5: acquire, partner of quota_release()'s release. */
	return __atomic_load_n(&t->gen[t->nodes[node].root], __ATOMIC_ACQUIRE);
}

/* --- read-outs ------------------------------------------------------------ */

static bool fr_ok(const struct quota_tree *t, int node, int flavor, int resource)
{
	return t->sealed && node_ok(t, node) && flavor >= 0 &&
	       flavor < t->n_flavors && resource >= 0 && resource < t->n_resources;
}

int64_t quota_usage(const struct quota_tree *t, int node, int flavor,
		    int resource)
{
	if (!fr_ok(t, node, flavor, resource))
		return 0;
	/* QC1: relaxed, a view. */
	return __atomic_load_n(&t->usage[slot_index(t, node, flavor, resource)],
			       __ATOMIC_RELAXED);
}

int64_t quota_subtree_quota(const struct quota_tree *t, int node, int flavor,
			    int resource)
{
	return fr_ok(t, node, flavor, resource) ?
	       t->slots[slot_index(t, node, flavor, resource)].subtree : 0;
}

/* reclaim_borrowed (quota/quota.h, reclaim's section) lives here, beside
 * the counters it reads (through quota_usage and quota_subtree_quota, with
 * their checks per resource, it cost 210 instructions a pod at two
 * resources: docs/perf/2026-11-29-quota-default.md). The daemon no longer
 * asks it after each charge: quota_try_charge_borrowed gives the verdict
 * of the charge's own compare-and-swap. */
bool reclaim_borrowed(const struct quota_tree *t, int cq, int flavor,
		      const int64_t *request)
{
	if (!fr_ok(t, cq, flavor, 0))
		return false;
	size_t at = slot_index(t, cq, flavor, 0);
	for (int r = 0; r < t->n_resources; r++)
		/* QC1: relaxed, a view. */
		if (request[r] > 0 && __atomic_load_n(&t->usage[at + (size_t)r],
						      __ATOMIC_RELAXED) >
					      t->slots[at + (size_t)r].subtree)
			return true;
	return false;
}

int64_t quota_kept(const struct quota_tree *t, int node, int flavor,
		   int resource)
{
	return fr_ok(t, node, flavor, resource) ?
	       t->slots[slot_index(t, node, flavor, resource)].kept : 0;
}

bool quota_entry(const struct quota_tree *t, int node, int flavor,
		 int resource, int64_t *nominal, int64_t *borrowing_limit,
		 int64_t *lending_limit)
{
	*nominal = 0;
	*borrowing_limit = *lending_limit = QUOTA_NO_LIMIT;
	if (!fr_ok(t, node, flavor, resource))
		return false;
	const struct quota_slot *s = &t->slots[slot_index(t, node, flavor, resource)];
	*nominal = s->nominal;
	*borrowing_limit = s->borrowing_limit;
	*lending_limit = s->lending_limit;
	return s->defined;
}

uint64_t quota_conflicts(const struct quota_tree *t)
{
	/* QC4: relaxed, a statistic. */
	return __atomic_load_n(&t->conflicts, __ATOMIC_RELAXED);
}

/* --- fair sharing -------------------------------------------------------- */

/* Kueue's potentialAvailable: the most the node could use, nothing used. */
static int64_t potential_available(const struct quota_tree *t, int node, size_t fr)
{
	const struct quota_slot *s = &t->slots[(size_t)node * t->per_node + fr];
	int parent = t->nodes[node].parent;
	if (parent < 0)
		return s->subtree;
	int64_t avail = sat_add(s->kept, potential_available(t, parent, fr));
	if (s->borrowing_limit != QUOTA_NO_LIMIT)
		avail = min64(sat_add(s->subtree, s->borrowing_limit), avail);
	return avail;
}

int quota_share(const struct quota_tree *t, int node, int flavor,
		const int64_t *request, struct quota_share *out)
{
	if (!t->sealed || !node_ok(t, node) || flavor >= t->n_flavors)
		return -EINVAL;
	*out = (struct quota_share){ .ratio = 0, .dominant = -1,
				     .weight_milli = t->nodes[node].weight_milli };
	int parent = t->nodes[node].parent;
	if (parent < 0)
		return 0;
	int64_t borrowed[QUOTA_MAX_RESOURCES] = { 0 };
	const struct quota_slot *s = &t->slots[(size_t)node * t->per_node];
	const int64_t *usage = &t->usage[(size_t)node * t->per_node];
	for (int f = 0; f < t->n_flavors; f++) {
		for (int r = 0; r < t->n_resources; r++) {
			size_t fr = (size_t)f * (size_t)t->n_resources + (size_t)r;
			if (!s[fr].present)
				continue;
			int64_t req = (f == flavor && request) ? request[r] : 0;
			if (req < 0 || req > QUOTA_QUANTITY_MAX)
				return -EINVAL;
			/* QC1: relaxed, a view. */
			int64_t u = __atomic_load_n(&usage[fr], __ATOMIC_RELAXED);
			int64_t b = req + u - s[fr].subtree;
			if (b > 0) {
				borrowed[r] = sat_add(borrowed[r], b);
				out->borrowing = true;
			}
		}
	}
	if (!out->borrowing)
		return 0;
	/* calculateLendable(parent): every flavor-resource of the root. */
	int root = parent;
	while (t->nodes[root].parent >= 0)
		root = t->nodes[root].parent;
	const struct quota_slot *rs = &t->slots[(size_t)root * t->per_node];
	for (int r = 0; r < t->n_resources; r++) {
		if (borrowed[r] <= 0)
			continue;
		int64_t lendable = 0;
		for (int f = 0; f < t->n_flavors; f++) {
			size_t fr = (size_t)f * (size_t)t->n_resources + (size_t)r;
			if (rs[fr].present)
				lendable = sat_add(lendable,
						   potential_available(t, parent, fr));
		}
		if (lendable <= 0)
			continue;
		double ratio = (double)borrowed[r] * 1000.0 / (double)lendable;
		/* Kueue: the larger ratio; on a tie, the name first in
		 * alphabetical order. */
		if (ratio > out->ratio ||
		    (ratio == out->ratio && out->dominant >= 0 &&
		     strcmp(t->resources[r], t->resources[out->dominant]) < 0)) {
			out->ratio = ratio;
			out->dominant = r;
		}
	}
	return 0;
}

double quota_share_weighted(const struct quota_share *s)
{
	if (s->ratio == 0)
		return 0.0;
	if (s->weight_milli == 0)
		return HUGE_VAL; /* +infinity, a double (INFINITY is a float) */
	return s->ratio / ((double)s->weight_milli / 1000.0);
}

static bool zero_weight_borrows(const struct quota_share *s)
{
	return s->weight_milli == 0 && s->ratio != 0;
}

int64_t quota_share_rounded(const struct quota_share *s)
{
	if (zero_weight_borrows(s))
		return INT64_MAX;
	/* math.Ceil, without libm: a share is at most 2^60 x 1000 / 0.001. */
	double w = quota_share_weighted(s);
	int64_t v = (int64_t)w;
	return (double)v < w ? v + 1 : v;
}

static int cmp_double(double a, double b)
{
	return a < b ? -1 : a > b ? 1 : 0;
}

int quota_share_compare(const struct quota_share *a, const struct quota_share *b)
{
	bool za = zero_weight_borrows(a), zb = zero_weight_borrows(b);
	if (za && zb)
		return cmp_double(a->ratio, b->ratio);
	if (za)
		return 1;
	if (zb)
		return -1;
	return cmp_double(quota_share_weighted(a), quota_share_weighted(b));
}
