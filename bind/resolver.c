/* Optimistic conflict resolution: see resolver.h. Cost: one placement and
 * one commit per attempt; attempts are bounded. */
#include "bind/resolver.h"

#include <errno.h>

int resolver_place(struct engine *e, const struct pod_spec *pod, uint64_t seq,
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
			resolver_stat_add(&st->unschedulable);
			return 0;
		}
		rc = engine_commit(e, pod, (uint32_t)out->placement.slot,
				   &out->placement.devices);
		if (rc == 0) {
			resolver_stat_add(&st->placed);
			return 0;
		}
		resolver_stat_add(&st->conflicts);
	}
	out->placement.slot = -1;
	out->gave_up = true;
	resolver_stat_add(&st->gave_up);
	return 0;
}
