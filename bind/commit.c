/* One pod's commit: see commit.h. Cost: O(resources + devices + ports)
 * compare-and-swaps, no wait. */
#include "bind/commit.h"

#include <errno.h>
#include <stdbool.h>

#include "shm/shm.h"
#include "workers/workers.h"

/* The ledger's port rule (C3): NodePorts against the ports in use. */
static bool ports_free(const void *arg, const struct pod_spec *pod,
		       const struct host_port *in_use, unsigned n)
{
	const struct plugin_ctx *ctx = arg;
	struct node_view v = {.ports = in_use, .n_ports = n};
	return filter_ports(ctx, pod, &v);
}

int commit_pod(struct engine *e, const struct pod_spec *pod, uint32_t slot,
	       const struct device_assignment *dev)
{
	if (dev != NULL && dev->gpu_milli == DEVICES_STALE)
		return -EAGAIN;
	struct cluster *c = engine_cluster(e);
	const struct snapshot *s = cluster_snapshot(c);
	/* The shard summaries and class indexes learn of the change from the
	 * ledger's change log (L1-L4), as they do of other engines' commits. */
	return ledger_reserve(cluster_ledger(c), slot, &s->nodes[slot].allocatable,
			      pod, dev, ports_free, engine_plugin_ctx(e));
}
