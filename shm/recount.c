/* The recount after a re-attach: see recount.h. Two passes over the live
 * records (below the high-water mark): check them all, then count them,
 * so a damaged region changes nothing. Cost: O(records used + nodes).
 */
#include "shm/recount.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/base.h"

/* Whether record `r` is well formed for node `n`; `why` when not. */
static const char *record_damage(const struct placement_record *r,
				 const struct node_spec *n, uint32_t max_owner)
{
	if (r->owner != PLACEMENT_OWNER_BOUND && r->owner > max_owner)
		return "owner out of range";
	if (r->gen == 0)
		return "generation 0";
	if (r->n_ports > POD_MAX_PORTS)
		return "too many host ports";
	for (int k = 0; k < RES_MAX; k++)
		if (r->request.v[k] < 0)
			return "a negative request";
	if (r->nonzero_cpu_milli < 0 || r->nonzero_mem_bytes < 0)
		return "a negative request";
	if (n == NULL)
		return NULL; /* its node is gone: only the record's own fields */
	const struct device_assignment *d = &r->dev;
	if (d->gpu_mask >> n->devices.n_gpus != 0 ||
	    d->gpu_milli > GPU_MILLI_PER_DEVICE)
		return "GPUs the node does not have";
	for (unsigned w = 0; w < CORE_WORDS; w++) {
		unsigned first = w * 64;
		uint64_t allowed = n->devices.n_cores <= first ? 0
				   : n->devices.n_cores - first >= 64 ? UINT64_MAX
				   : (UINT64_C(1) << (n->devices.n_cores - first)) - 1;
		if (d->cpuset[w] & ~allowed)
			return "cores the node does not have";
	}
	return NULL;
}

/* The same pods per group, whatever entries hold them. */
static bool same_groups(const struct node_alloc *a, const struct node_alloc *b)
{
	struct group_count ga[NODE_MAX_GROUPS], gb[NODE_MAX_GROUPS];
	unsigned na = ledger_load_groups(a, ga), nb = ledger_load_groups(b, gb);
	uint64_t pods_a = 0, pods_b = 0;
	for (unsigned i = 0; i < na; i++) {
		uint64_t in_a = 0, in_b = 0;
		for (unsigned j = 0; j < na; j++)
			in_a += ga[j].group == ga[i].group ? ga[j].pods : 0;
		for (unsigned j = 0; j < nb; j++)
			in_b += gb[j].group == ga[i].group ? gb[j].pods : 0;
		if (in_a != in_b)
			return false;
		pods_a += ga[i].pods;
	}
	for (unsigned j = 0; j < nb; j++)
		pods_b += gb[j].pods;
	return pods_a == pods_b;
}

static int same_use(const struct node_alloc *a, const struct node_alloc *b)
{
	return memcmp(a->used, b->used, sizeof(a->used)) == 0 &&
	       a->used_nonzero_cpu_milli == b->used_nonzero_cpu_milli &&
	       a->used_nonzero_mem_bytes == b->used_nonzero_mem_bytes &&
	       memcmp(a->gpu_used, b->gpu_used, sizeof(a->gpu_used)) == 0 &&
	       memcmp(a->cores_used, b->cores_used, sizeof(a->cores_used)) == 0 &&
	       a->n_ports == b->n_ports && a->term_pods == b->term_pods &&
	       same_groups(a, b);
}

int ledger_recount(struct cluster *c, struct placements *t, uint32_t max_owner,
		   struct recount_stats *out, char *err, size_t err_len)
{
	memset(out, 0, sizeof(*out));
	const struct snapshot *snap = cluster_snapshot(c);
	struct ledger *l = cluster_ledger(c);
	uint32_t hw = placements_high_water(t);

	/* Pass 1: every live record checked before anything changes. */
	for (uint32_t i = 0; i < hw; i++) {
		uint64_t id;
		const struct placement_record *r = placements_at(t, i, &id);
		if (r == NULL)
			continue;
		const struct node_spec *n =
			ledger_slot_current(l, snap, r->slot, r->node_gen)
			? &snap->nodes[r->slot] : NULL;
		const char *why = record_damage(r, n, max_owner);
		if (why != NULL)
			return errmsg_rc(-EBADMSG, err, err_len, "placement record "
					 "%u (owner %u, node slot %u): %s", i,
					 r->owner, r->slot, why);
	}

	struct node_alloc *before = malloc((snap->n_slots ? snap->n_slots : 1) *
					   sizeof(*before));
	if (before == NULL)
		return errmsg_rc(-ENOMEM, err, err_len, "out of memory");
	for (uint32_t s = 0; s < snap->n_slots; s++) {
		if (!snap->present[s])
			continue;
		struct node_alloc *a = ledger_node(l, s);
		memcpy(&before[s], a, sizeof(*a));
		/* The port lock too: a holder that died left it taken. The
		 * slot's generation is not in the record: it stays. */
		memset(a, 0, sizeof(*a));
	}

	ledger_clear_term_pods(l);

	/* Pass 2: the sum of the records, node by node. */
	struct pod_spec pod;
	for (uint32_t i = 0; i < hw; i++) {
		uint64_t id;
		const struct placement_record *r = placements_at(t, i, &id);
		if (r == NULL)
			continue;
		out->records++;
		if (!ledger_slot_current(l, snap, r->slot, r->node_gen)) {
			out->stale++;
			continue;
		}
		placement_use(r, &pod);
		if (ledger_account(l, r->slot, &pod, &r->dev, +1) < 0) {
			free(before);
			return errmsg_rc(-EBADMSG, err, err_len, "placement record "
					 "%u: node slot %u's host-port table overflows",
					 i, r->slot);
		}
		out->counted++;
	}
	for (uint32_t s = 0; s < snap->n_slots; s++)
		if (snap->present[s] && !same_use(&before[s], ledger_node(l, s)))
			out->nodes_fixed++;
	free(before);
	return 0;
}
