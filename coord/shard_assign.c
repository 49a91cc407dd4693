/* Shards to hosts, balanced and moving as few as possible: see
 * coord/shard_assign.h. O(S + H log H) with two arrays of H counters;
 * the coordinator runs it on each change of the hosts it sees. */
#include "coord/shard_assign.h"

#include <errno.h>
#include <stdlib.h>

struct held {
	size_t host;
	size_t n;
};

/* Most held first, then the lower index. */
static int by_held(const void *a, const void *b)
{
	const struct held *x = a, *y = b;
	if (x->n != y->n)
		return x->n > y->n ? -1 : 1;
	return x->host < y->host ? -1 : x->host > y->host;
}

int shard_assign(const int32_t *prior, size_t n_shards, size_t n_hosts, int32_t *out)
{
	if (n_hosts > SHARD_ASSIGN_MAX || n_shards > SHARD_ASSIGN_MAX)
		return -EINVAL;
	if (n_hosts == 0) {
		int moved = 0;
		for (size_t s = 0; s < n_shards; s++) {
			moved += prior[s] >= 0;
			out[s] = -1;
		}
		return moved;
	}
	struct held held[SHARD_ASSIGN_MAX];
	size_t cap[SHARD_ASSIGN_MAX], now[SHARD_ASSIGN_MAX];
	for (size_t h = 0; h < n_hosts; h++)
		held[h] = (struct held){.host = h, .n = 0};
	for (size_t s = 0; s < n_shards; s++)
		if (prior[s] >= 0 && (size_t)prior[s] < n_hosts)
			held[prior[s]].n++;
	qsort(held, n_hosts, sizeof(held[0]), by_held);
	size_t base = n_shards / n_hosts, extra = n_shards % n_hosts;
	for (size_t i = 0; i < n_hosts; i++) {
		cap[held[i].host] = base + (i < extra);
		now[held[i].host] = 0;
	}
	/* Keep what fits, in shard order. */
	for (size_t s = 0; s < n_shards; s++) {
		int32_t h = prior[s];
		if (h >= 0 && (size_t)h < n_hosts && now[h] < cap[h]) {
			out[s] = h;
			now[h]++;
		} else {
			out[s] = -1;
		}
	}
	int moved = 0;
	for (size_t s = 0; s < n_shards; s++) {
		if (out[s] >= 0)
			continue;
		size_t best = n_hosts;
		for (size_t h = 0; h < n_hosts; h++)
			if (now[h] < cap[h] &&
			    (best == n_hosts || cap[h] - now[h] > cap[best] - now[best]))
				best = h;
		out[s] = (int32_t)best; /* the caps sum to n_shards: one has room */
		now[best]++;
		moved++;
	}
	return moved;
}
