/* Optimistic conflict resolution: see resolver.h. Cost: one placement and
 * one commit per attempt; attempts are bounded by RESOLVER_MAX_ATTEMPTS. */
#include "bind/resolver.h"

#include "bind/commit.h"

#include <errno.h>

/* The loop, with the commit as a parameter: resolver_place() passes
 * commit_pod (inlined: the pointer is a constant here), tests pass a step
 * of their own. */
static inline int place_loop(struct engine *e, const struct pod_spec *pod,
			     uint64_t seq, resolver_commit_fn commit, void *arg,
			     struct resolve_result *out, struct resolver_stats *st)
{
	*out = (struct resolve_result){0};
	for (uint32_t attempt = 0; attempt < RESOLVER_MAX_ATTEMPTS; attempt++) {
		/* Attempt 0 uses the pod's own stream, so a single thread gets the
		 * engine's answer; later ones a stream of their own. */
		uint64_t stream = seq ^ ((uint64_t)attempt << 56);
		int rc = engine_place(e, pod, stream, &out->placement);
		out->attempts = attempt + 1;
		if (rc < 0)
			return rc;
		if (out->placement.slot < 0) {
			stat_inc(&st->unschedulable);
			return 0;
		}
		rc = commit(arg, e, pod, (uint32_t)out->placement.slot,
			    &out->placement.devices);
		if (rc == 0) {
			stat_inc(&st->placed);
			return 0;
		}
		stat_inc(&st->conflicts);
	}
	out->placement.slot = -1;
	out->gave_up = true;
	stat_inc(&st->gave_up);
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
