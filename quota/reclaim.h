/* Reclaim and preemption by quota: which admitted pods a pod refused by
 * its ClusterQueue's quota may evict so that it fits, as Kueue's classical
 * preemption chooses them (pkg/scheduler/preemption/preemption.go,
 * classicalPreemptions; classical/candidate_generator.go;
 * common/ordering.go, CandidatesOrdering), with the ClusterQueue's
 * .spec.preemption (quota_node_preemption) and disruption budgets. Pure:
 * it reads the tree's quotas and a copy of its usage, never charges or
 * releases; the caller evicts the victims, gives their quota back, then
 * places the preemptor by a normal attempt.
 *
 * Where this differs from Kueue (quota/reclaim.c says why: no pod is ever
 * evicted in a cycle):
 *   - A pod of another ClusterQueue is a victim only if its own admission
 *     took its queue past nominal quota (`borrowed`, reclaim_borrowed()),
 *     and a preemptor evicts pods of other queues only if it is then within
 *     its own queue's nominal quota (Kueue's hierarchical advantage taken at
 *     the ClusterQueue's own level, and its ReclaimWithoutBorrowing).
 *   - borrowWithinCohort is not acted on (reclaim_choose refuses with
 *     RECLAIM_WHY_BORROW, a message saying so).
 *   - Budgets Kueue has not: a minimum run time before a pod may be
 *     evicted, and a cap on what the victims hold over what the preemptor
 *     asks.
 *
 * Threads: a struct reclaim_work is one thread's; the tree is only read
 * (relaxed reads of usage: a view, which the caller's charge re-checks).
 */
#ifndef SHMSCHED_QUOTA_RECLAIM_H
#define SHMSCHED_QUOTA_RECLAIM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "quota/quota.h"

/* An admitted pod (a candidate) or the pod that asks (the preemptor). */
struct reclaim_pod {
	uint64_t uid;          /* unique; the last tie-break, smaller first */
	int cq;                /* its ClusterQueue node */
	int flavor;            /* the flavor charged (a candidate's) */
	int32_t priority;
	uint64_t created_ns;   /* queue order (LowerOrNewerEqualPriority) */
	uint64_t admitted_ns;  /* quota reserved (a candidate's) */
	bool borrowed;         /* its admission took its queue past nominal */
	int64_t request[QUOTA_MAX_RESOURCES]; /* in the tree's resources */
};

/* Disruption budgets (the daemon's flags). */
struct reclaim_budget {
	uint64_t now_ns;
	/* A pod admitted less than this long ago is no victim (0: none). */
	uint64_t min_run_ns;
	/* Victims' requests in a resource needing preemption, over the
	 * preemptor's, at most this many thousandths (0: no cap). */
	uint32_t evict_cap_milli;
};

#define RECLAIM_EVICT_CAP_DEFAULT_MILLI 1500u

enum reclaim_why {
	RECLAIM_OK = 0,
	RECLAIM_WHY_POLICY,   /* withinClusterQueue and reclaimWithinCohort Never */
	RECLAIM_WHY_FITS,     /* nothing needs preemption: it fits now */
	RECLAIM_WHY_NONE,     /* no set of allowed victims makes room */
	RECLAIM_WHY_YOUNG,    /* ... none without pods under the minimum run time */
	RECLAIM_WHY_CAP,      /* the fewest victims hold more than the cap */
	RECLAIM_WHY_BORROW,   /* it would have to borrow: borrowWithinCohort */
};

struct reclaim_work;

/* Scratch for `t` (sized by its nodes and resources). NULL with errno. */
struct reclaim_work *reclaim_work_new(const struct quota_tree *t);
void reclaim_work_free(struct reclaim_work *w);

/* Whether a pod just charged `request` of `flavor` to `cq` stands past
 * its queue's nominal quota in a resource it asks (Kueue's BorrowingWith,
 * read after the charge): the `borrowed` of its reclaim_pod. */
bool reclaim_borrowed(const struct quota_tree *t, int cq, int flavor,
		      const int64_t *request);

/* The victims for `pre` (its flavor: the one to try; its request does
 * not fit there now) among `cand[0..n)` (admitted pods; those of other
 * trees or flavors are ignored), under its ClusterQueue's
 * .spec.preemption and `budget`. On 0, victims[0..*n_victims) are
 * indices into cand, the fewest Kueue's heuristic finds (candidates in
 * order, then each but the last put back if the preemptor still fits),
 * in the order chosen; `victims` must hold n. `node_ok`, when given, is
 * asked as Kueue asks its TAS check: whether, with the victims so far
 * gone, a node takes the preemptor (arg, victims, count); NULL: yes.
 * Returns 0, -ENOSPC (no victims: *why says which reason), -EINVAL (a
 * bad node, flavor or request), -ENOMEM. `why` may be NULL. */
int reclaim_choose(struct reclaim_work *w, const struct quota_tree *t,
		   const struct reclaim_pod *pre, const struct reclaim_pod *cand,
		   size_t n, const struct reclaim_budget *budget,
		   bool (*node_ok)(void *arg, const uint32_t *victims, size_t k),
		   void *node_ok_arg, uint32_t *victims, size_t *n_victims,
		   enum reclaim_why *why);

/* A sentence for `why` about ClusterQueue `cq` (for a refusal). */
void reclaim_message(const struct quota_tree *t, int cq, enum reclaim_why why,
		     char *buf, size_t len);

#endif
