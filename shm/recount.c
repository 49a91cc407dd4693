/* The recount after a re-attach: see recount.h. Two passes over the live
 * records (below the high-water mark): check them all, then count them,
 * so a damaged region changes nothing. Cost: O(records used + nodes).
 * Every field a later step indexes with or adds is checked (issue 41:
 * owner a used identity, slot in range, node generation not past the
 * slot's, requests non-negative, devices the node's), and a damaged
 * record is named with its field and value.
 * strings_reclaim (issue 41): the ids the region's records hold, marked
 * in a bitmap (max_strings / 8 bytes for the while), then
 * intern_reclaim() frees the producers' strings left unmarked. A group
 * (shm/pod_group.h) is a string of ids: a pod's labels, namespace and
 * selectors are held only inside it, so each held group is decoded once
 * (a second bitmap) and its ids marked too; freeing them would let a
 * later string take a placed pod's label id, and a new pod's selector
 * would match pods it does not select. Cost: O(slots x (labels +
 * taints) + records + distinct groups x their size + the table).
 */
#include "shm/recount.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "shm/pod_group.h"

#include "base/base.h"

/* Whether record `r` is well formed, against its node `n` (NULL: the
 * node is gone or was replaced). False with the field and its value in
 * `why` when not. */
static bool record_ok(const struct placement_record *r, const struct node_spec *n,
		      const struct ledger *l, uint32_t max_owner,
		      const struct state_identity *ids, char *why, size_t len)
{
	if (r->owner != PLACEMENT_OWNER_BOUND && r->owner > max_owner) {
		snprintf(why, len, "owner out of range: %u (1..%u, or bound)",
			 r->owner, max_owner);
		return false;
	}
	if (r->owner != PLACEMENT_OWNER_BOUND && ids != NULL &&
	    !__atomic_load_n(&ids[r->owner - 1].used, __ATOMIC_RELAXED)) {
		/* Relaxed: start-up, no other thread. */
		snprintf(why, len, "owner %u is no identity the daemon gave "
			 "(owner out of range of the used identities)", r->owner);
		return false;
	}
	if (r->gen == 0) {
		snprintf(why, len, "generation 0");
		return false;
	}
	if (r->slot >= ledger_capacity(l)) {
		snprintf(why, len, "node slot %u out of range (0..%u)", r->slot,
			 ledger_capacity(l) - 1);
		return false;
	}
	/* A slot's generation only moves on: a record cannot name a later one. */
	uint32_t slot_gen = ledger_node_generation(l, r->slot);
	if (r->node_gen > slot_gen) {
		snprintf(why, len, "node generation %u, newer than node slot %u's "
			 "%u", r->node_gen, r->slot, slot_gen);
		return false;
	}
	if (r->n_ports > POD_MAX_PORTS) {
		snprintf(why, len, "%u host ports (at most %u): too many host ports",
			 r->n_ports, POD_MAX_PORTS);
		return false;
	}
	for (int k = 0; k < RES_MAX; k++)
		if (r->request.v[k] < 0) {
			snprintf(why, len, "request of resource %d is %lld: a "
				 "negative request", k, (long long)r->request.v[k]);
			return false;
		}
	if (r->nonzero_cpu_milli < 0 || r->nonzero_mem_bytes < 0) {
		snprintf(why, len, "non-zero cpu %lld / memory %lld: a negative "
			 "request", (long long)r->nonzero_cpu_milli,
			 (long long)r->nonzero_mem_bytes);
		return false;
	}
	if (n == NULL)
		return true; /* its node is gone: only the record's own fields */
	const struct device_assignment *d = &r->dev;
	if (d->gpu_mask >> n->devices.n_gpus != 0 ||
	    d->gpu_milli > GPU_MILLI_PER_DEVICE) {
		snprintf(why, len, "GPU mask 0x%llx, %u milli-GPU: GPUs the node "
			 "does not have (it has %u)", (unsigned long long)d->gpu_mask,
			 (unsigned)d->gpu_milli, (unsigned)n->devices.n_gpus);
		return false;
	}
	for (unsigned w = 0; w < CORE_WORDS; w++) {
		unsigned first = w * 64;
		uint64_t allowed = n->devices.n_cores <= first ? 0
				   : n->devices.n_cores - first >= 64 ? UINT64_MAX
				   : (UINT64_C(1) << (n->devices.n_cores - first)) - 1;
		if (d->cpuset[w] & ~allowed) {
			snprintf(why, len, "cpuset word %u 0x%llx: cores the node "
				 "does not have (it has %u)", w,
				 (unsigned long long)d->cpuset[w],
				 (unsigned)n->devices.n_cores);
			return false;
		}
	}
	return true;
}

/* A request above its node's allocatable: a node may shrink under the
 * pods on it (an update keeps its generation), so this is told, loudly,
 * and counted, not refused. */
static void warn_over(uint32_t i, const struct placement_record *r,
		      const struct node_spec *n)
{
	for (int k = 0; k < RES_MAX; k++)
		if (r->request.v[k] > n->allocatable.v[k]) {
			log_msg(LOG_LEVEL_WARN, "placement record %u (owner %u, node "
				"slot %u): request of resource %d is %lld, above "
				"the node's allocatable %lld (a node shrunk, or a "
				"damaged record: `shmsched store check`, or "
				"--fresh)", i, r->owner, r->slot, k,
				(long long)r->request.v[k],
				(long long)n->allocatable.v[k]);
			return;
		}
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
		   const struct state_identity *ids, struct recount_stats *out,
		   char *err, size_t err_len)
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
		char why[160];
		if (!record_ok(r, n, l, max_owner, ids, why, sizeof(why)))
			return errmsg_rc(-EBADMSG, err, err_len, "placement record "
					 "%u (owner %u, node slot %u): %s", i,
					 r->owner, r->slot, why);
		if (n != NULL)
			warn_over(i, r, n);
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

static void mark(uint64_t *held, uint32_t count, uint32_t id, uint32_t *bad)
{
	if (id >= count) {
		(*bad)++;
		return;
	}
	held[id / 64] |= UINT64_C(1) << (id % 64);
}

struct group_marks {
	uint64_t *held;
	uint32_t count;
	uint32_t *bad;
};

static int mark_group_id(void *arg, uint32_t *id)
{
	struct group_marks *m = arg;
	mark(m->held, m->count, *id, m->bad);
	return 0;
}

/* Marks group `id` and every id its encoding holds (shm/pod_group.h: the
 * namespace, label keys and values, topology keys, requirement keys and
 * values, term namespaces): a pod's labels are in its group alone, so a
 * label value no node has is held by nothing else. `decoded` (count bits;
 * NULL: none) skips a group already decoded. A group that does not
 * decode is counted in *bad (its own id is still marked). */
static void mark_group(const struct intern *strings, uint64_t *held,
		       uint64_t *decoded, uint32_t count, uint32_t id,
		       struct pod_group *g, uint32_t *bad)
{
	mark(held, count, id, bad);
	if (id == 0 || id >= count)
		return;
	if (decoded != NULL) {
		if (decoded[id / 64] >> (id % 64) & 1)
			return;
		decoded[id / 64] |= UINT64_C(1) << (id % 64);
	}
	if (pod_group_decode(intern_str(strings, id), intern_len(strings, id),
			     g) < 0) {
		(*bad)++;
		return;
	}
	struct group_marks m = {held, count, bad};
	(void)pod_group_map_ids(g, mark_group_id, &m);
}

uint32_t strings_held(const struct intern *strings, struct cluster *c,
		      struct placements *t, uint64_t *held)
{
	uint32_t count = intern_count(strings), bad = 0;
	const struct snapshot *snap = cluster_snapshot(c);
	/* Each group decoded once (without the memory: once per holder). */
	uint64_t *decoded = calloc((size_t)count / 64 + 1, sizeof(*decoded));
	struct pod_group *g = malloc(sizeof(*g));
	if (g == NULL) {
		/* Nothing can be decoded: every string stays (bad > 0 says the
		 * marks are not to be trusted; strings_reclaim frees none). */
		free(decoded);
		memset(held, 0xff, ((size_t)count + 63) / 64 * sizeof(*held));
		return 1;
	}
	/* Every slot, present or not: a slot's stale spec costs nothing
	 * kept, and a slot is not trusted to be empty. */
	for (uint32_t s = 0; s < snap->n_slots; s++) {
		const struct node_spec *n = &snap->nodes[s];
		mark(held, count, n->name, &bad);
		mark(held, count, n->devices.gpu_model, &bad);
		for (uint32_t i = 0; i < n->n_labels && i < NODE_MAX_LABELS; i++) {
			mark(held, count, n->labels[i].key, &bad);
			mark(held, count, n->labels[i].value, &bad);
		}
		for (uint32_t i = 0; i < n->n_taints && i < NODE_MAX_TAINTS; i++) {
			mark(held, count, n->taints[i].key, &bad);
			mark(held, count, n->taints[i].value, &bad);
		}
	}
	uint32_t hw = placements_high_water(t);
	for (uint32_t i = 0; i < hw; i++) {
		uint64_t id;
		const struct placement_record *r = placements_at(t, i, &id);
		if (r == NULL)
			continue;
		mark(held, count, r->pod_name, &bad);
		mark_group(strings, held, decoded, count, r->group, g, &bad);
		for (uint32_t k = 0; k < r->n_ports && k < POD_MAX_PORTS; k++)
			mark(held, count, r->ports[k].ip, &bad);
	}
	struct ledger *l = cluster_ledger(c);
	uint32_t groups = ledger_term_groups(l);
	if (groups == UINT32_MAX) /* overflowed: the list is full */
		groups = LEDGER_TERM_GROUPS;
	for (uint32_t i = 0; i < groups; i++)
		mark_group(strings, held, decoded, count,
			   ledger_term_group_at(l, i), g, &bad);
	free(decoded);
	free(g);
	return bad;
}

uint32_t strings_held_group(const struct intern *strings, uint64_t *held,
			    uint64_t *decoded, uint32_t id,
			    struct pod_group *scratch)
{
	uint32_t bad = 0;
	mark_group(strings, held, decoded, intern_count(strings), id, scratch,
		   &bad);
	return bad;
}

int strings_reclaim(struct intern *strings, struct cluster *c,

		    struct placements *t, struct intern_reclaim_stats *out)
{
	uint32_t max_strings;
	uint64_t arena;
	intern_limits(strings, &max_strings, &arena);
	uint64_t *held = calloc((size_t)max_strings / 64 + 1, sizeof(*held));
	if (held == NULL)
		return -ENOMEM;
	(void)strings_held(strings, c, t, held);
	int rc = intern_reclaim(strings, held, out);
	free(held);
	return rc;
}
