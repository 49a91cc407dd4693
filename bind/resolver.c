/* Optimistic conflict resolution: see resolver.h. Cost: one placement and
 * one commit per attempt; attempts are bounded by RESOLVER_MAX_ATTEMPTS. */
#include "bind/resolver.h"

#include "bind/commit.h"

#include <errno.h>

/* The attempts, with the commit as a parameter: resolver_place() passes
 * commit_pod (inlined: the pointer is a constant here), tests pass a step
 * of their own. Returns 0 with out->placement.slot >= 0 when committed. */
static inline int attempts(struct engine *e, const struct pod_spec *pod,
			   uint64_t seq, uint32_t first, resolver_commit_fn commit,
			   void *arg, struct resolve_result *out,
			   struct resolver_stats *st)
{
	for (uint32_t attempt = first; attempt < RESOLVER_MAX_ATTEMPTS; attempt++) {
		/* Attempt 0 uses the pod's own stream, so a single thread gets the
		 * engine's answer; later ones a stream of their own. */
		uint64_t stream = seq ^ ((uint64_t)attempt << 56);
		int rc = engine_place(e, pod, stream, &out->placement);
		out->attempts = attempt + 1;
		if (rc < 0 || out->placement.slot < 0)
			return rc;
		rc = commit(arg, e, pod, (uint32_t)out->placement.slot,
			    &out->placement.devices);
		if (rc == 0)
			return 0;
		stat_inc(&st->conflicts);
	}
	out->placement.slot = -1;
	out->gave_up = true;
	return 0;
}

/* A pod committed without the inter-pod lock, checked after its commit
 * (T5, T6 in shm/ledger.c): when a pod with terms may have been placed
 * unseen, and a term group now touches the pod (only the lock's holders
 * place such pods, so under it the term groups are complete), its node is
 * checked again, and a placement a rule now refuses is given back and
 * placed again under the lock. Called with the lock held. */
static inline int recheck(struct engine *e, const struct pod_spec *pod,
			  uint64_t seq, resolver_commit_fn commit, void *arg,
			  struct resolve_result *out, struct resolver_stats *st)
{
	if (!engine_interpod_applies(e, pod))
		return 0;
	uint32_t slot = (uint32_t)out->placement.slot;
	int ok = engine_interpod_allows(e, pod, slot);
	if (ok != 0)
		return ok < 0 ? ok : 0;
	ledger_account(cluster_ledger(engine_cluster(e)), slot, pod,
		       &out->placement.devices, -1);
	stat_inc(&st->conflicts);
	return attempts(e, pod, seq, out->attempts, commit, arg, out, st);
}

static inline int place_loop(struct engine *e, const struct pod_spec *pod,
			     uint64_t seq, resolver_commit_fn commit, void *arg,
			     struct resolve_result *out, struct resolver_stats *st)
{
	*out = (struct resolve_result){0};
	struct ledger *l = cluster_ledger(engine_cluster(e));
	/* T5: pods under inter-pod rules are placed one at a time; one with
	 * terms announces itself before it reads other nodes. T6: the epoch
	 * before the pod is found to be under no rule. */
	uint64_t epoch = ledger_term_epoch(l);
	bool guarded = engine_interpod_applies(e, pod);
	if (guarded) {
		ledger_interpod_lock(l);
		if (pod->group_terms)
			ledger_interpod_announce(l, +1);
	}
	int rc = attempts(e, pod, seq, 0, commit, arg, out, st);
	if (!guarded && rc == 0 && out->placement.slot >= 0 &&
	    ledger_interpod_watch(l, epoch)) {
		ledger_interpod_lock(l);
		rc = recheck(e, pod, seq, commit, arg, out, st);
		ledger_interpod_unlock(l);
	}
	if (guarded) {
		if (pod->group_terms)
			ledger_interpod_announce(l, -1);
		ledger_interpod_unlock(l);
	}
	if (rc < 0)
		return rc;
	if (out->gave_up)
		stat_inc(&st->gave_up);
	else if (out->placement.slot >= 0)
		stat_inc(&st->placed);
	else
		stat_inc(&st->unschedulable);
	return 0;
}

static int commit_direct(void *arg, struct engine *e, const struct pod_spec *pod,
			 uint32_t slot, const struct device_assignment *dev)
{
	(void)arg;
	return commit_pod(e, pod, slot, dev);
}

int resolver_place(struct engine *e, const struct pod_spec *pod, uint64_t seq,
		   struct resolve_result *out, struct resolver_stats *st)
{
	return place_loop(e, pod, seq, commit_direct, NULL, out, st);
}

int resolver_place_stepped(struct engine *e, const struct pod_spec *pod,
			   uint64_t seq, resolver_commit_fn commit, void *arg,
			   struct resolve_result *out, struct resolver_stats *st)
{
	return place_loop(e, pod, seq, commit, arg, out, st);
}
