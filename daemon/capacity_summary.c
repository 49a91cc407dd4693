/* A host's capacity summary: see daemon/capacity_summary_internal.h. */
#include "daemon/capacity_summary_internal.h"

#include <stdio.h>
#include <string.h>

static int64_t free_of(int64_t allocatable, int64_t used)
{
	return allocatable > used ? allocatable - used : 0;
}

static void add(struct host_status_shard *s, int64_t cpu, int64_t mem, int64_t pods)
{
	s->nodes++;
	s->sum_cpu_milli += cpu;
	s->sum_mem_bytes += mem;
	s->sum_pods += pods;
	if (cpu > s->largest_cpu_milli)
		s->largest_cpu_milli = cpu;
	if (mem > s->largest_mem_bytes)
		s->largest_mem_bytes = mem;
	if (pods > s->largest_pods)
		s->largest_pods = pods;
}

void capacity_summary(struct cluster *c, const struct intern *strings, uint32_t key,
		      const shard_name_t *owned, size_t n, struct host_status *out)
{
	uint32_t k = n < HOST_STATUS_SHARDS ? (uint32_t)n : HOST_STATUS_SHARDS;
	uint32_t ids[HOST_STATUS_SHARDS];
	bool known[HOST_STATUS_SHARDS];
	memset(out->shards, 0, sizeof(out->shards));
	out->n = k;
	out->more = (uint32_t)(n - k);
	for (uint32_t i = 0; i < k; i++) {
		snprintf(out->shards[i].name, SHARD_NAME_MAX, "%s", owned[i]);
		/* A shard no node names (its nodes gone): listed with none. */
		known[i] = intern_find(strings, owned[i], strlen(owned[i]), &ids[i]);
	}
	rcu_register();
	const struct snapshot *s = cluster_snapshot(c);
	struct ledger *l = cluster_ledger(c);
	for (uint32_t slot = 0; slot < s->n_slots; slot++) {
		uint32_t v;
		if (!s->present[slot] ||
		    !labels_get(s->nodes[slot].labels, s->nodes[slot].n_labels, key, &v))
			continue;
		uint32_t i = 0;
		while (i < k && !(known[i] && ids[i] == v))
			i++;
		if (i == k)
			continue;
		if (s->nodes[slot].unschedulable) {
			add(&out->shards[i], 0, 0, 0);
			continue;
		}
		struct res_vec used;
		int64_t nz_cpu, nz_mem;
		ledger_load_used(ledger_node(l, slot), &used, &nz_cpu, &nz_mem);
		const struct res_vec *a = &s->nodes[slot].allocatable;
		add(&out->shards[i], free_of(a->v[RES_CPU], used.v[RES_CPU]),
		    free_of(a->v[RES_MEMORY], used.v[RES_MEMORY]),
		    free_of(a->v[RES_PODS], used.v[RES_PODS]));
	}
	rcu_unregister();
}
