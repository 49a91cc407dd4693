/* A gang's commit: see gang.h. */
#include "bind/gang.h"

#include <errno.h>

#include "shm/shm.h"

static void give_back(struct engine *e, const struct pod_spec *const *pods,
		      const struct resolve_result *out, unsigned n)
{
	struct ledger *l = cluster_ledger(engine_cluster(e));
	while (n-- > 0)
		ledger_account(l, (uint32_t)out[n].placement.slot, pods[n],
			       &out[n].placement.devices, -1);
}

int gang_place(struct engine *e, const struct pod_spec *const *pods, unsigned n,
	       uint64_t seq, struct resolve_result *out, unsigned *failed,
	       struct resolver_stats *st)
{
	/* GC2: the specs stay the caller's, unchanged, through the call. */
	engine_run_begin(e);
	for (unsigned i = 0; i < n; i++) {
		int rc = resolver_place(e, pods[i], seq + i, &out[i], st);
		if (rc < 0 || out[i].placement.slot < 0) {
			engine_run_end(e);
			give_back(e, pods, out, i);
			*failed = i;
			return rc < 0 ? rc : 1;
		}
	}
	engine_run_end(e);
	return 0;
}
