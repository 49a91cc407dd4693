/* The chooser of hosts to forward a pod to (coord/forward_choose.h). Pure.
 * Cost: O(hosts x shards a host x fan_out) comparisons (the best kept by
 * insertion into out); no allocation. */
#include "coord/forward_choose.h"

#include <stdbool.h>
#include <string.h>

/* Host h's best shard that may fit req: its sums into *cpu, *mem; false
 * when none may. */
static bool best_fit(const struct forward_host *h, const struct forward_need *req,
		     int64_t *cpu, int64_t *mem)
{
	bool any = false;
	const struct host_status *st = h->status;
	for (uint32_t i = 0; st != NULL && i < st->n && i < HOST_STATUS_SHARDS; i++) {
		const struct host_status_shard *s = &st->shards[i];
		if (s->nodes == 0 || s->largest_cpu_milli < req->cpu_milli ||
		    s->largest_mem_bytes < req->mem_bytes || s->largest_pods < 1)
			continue;
		if (!any || s->sum_cpu_milli > *cpu ||
		    (s->sum_cpu_milli == *cpu && s->sum_mem_bytes > *mem)) {
			*cpu = s->sum_cpu_milli;
			*mem = s->sum_mem_bytes;
		}
		any = true;
	}
	return any;
}

/* Whether host a ranks before host b (both may fit). */
static bool before(const struct forward_host *hosts, size_t a, size_t b,
		   const struct forward_need *req)
{
	int64_t ac = 0, am = 0, bc = 0, bm = 0;
	(void)best_fit(&hosts[a], req, &ac, &am);
	(void)best_fit(&hosts[b], req, &bc, &bm);
	if (ac != bc)
		return ac > bc;
	if (am != bm)
		return am > bm;
	if (hosts[a].status->lag_records != hosts[b].status->lag_records)
		return hosts[a].status->lag_records < hosts[b].status->lag_records;
	return strcmp(hosts[a].name, hosts[b].name) < 0;
}

size_t forward_candidates(const struct forward_host *hosts, size_t n, const char *self,
			  const struct forward_need *req, size_t fan_out, size_t *out)
{
	size_t k = 0;
	for (size_t i = 0; i < n && fan_out > 0; i++) {
		int64_t cpu = 0, mem = 0;
		if (hosts[i].name == NULL || (self != NULL && strcmp(hosts[i].name, self) == 0) ||
		    !best_fit(&hosts[i], req, &cpu, &mem))
			continue;
		/* Insert i in rank; past fan_out, the last falls off. */
		size_t at = k;
		while (at > 0 && before(hosts, i, out[at - 1], req))
			at--;
		if (at >= fan_out)
			continue;
		size_t last = k < fan_out ? k : fan_out - 1;
		memmove(&out[at + 1], &out[at], (last - at) * sizeof(out[0]));
		out[at] = i;
		if (k < fan_out)
			k++;
	}
	return k;
}
