/* The shard watch's key ranges: see shard_runs_internal.h.
 *
 * Design: the known and owned names in one array (owned marked), sorted
 * by key order (an owned name before the same name known, so it wins),
 * then one pass: a run opens at a name not owned, takes every next one
 * not owned, and closes at an owned one. Cost: O((nk + n) log(nk + n))
 * name comparisons on the membership thread, once a tick; 8 KiB of its
 * stack. */
#include "daemon/shard_runs_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int shard_key_order(const char *a, const char *b)
{
	for (size_t i = 0;; i++) {
		unsigned char x = a[i] != '\0' ? (unsigned char)a[i] : '/';
		unsigned char y = b[i] != '\0' ? (unsigned char)b[i] : '/';
		if (x != y)
			return x < y ? -1 : 1;
		if (a[i] == '\0' || b[i] == '\0')
			return 0;
	}
}

struct named {
	const char *name;
	bool owned;
};

static int by_key(const void *a, const void *b)
{
	const struct named *x = a, *y = b;
	int c = shard_key_order(x->name, y->name);
	return c != 0 ? c : (int)y->owned - (int)x->owned;
}

void shard_runs_of(const shard_name_t *known, size_t nk, const shard_name_t *owned, size_t n,
		   struct shard_runs *out)
{
	struct named all[2 * SHARD_MAX];
	size_t k = 0;
	for (size_t i = 0; i < n && i < SHARD_MAX; i++)
		all[k++] = (struct named){owned[i], true};
	for (size_t i = 0; i < nk && i < SHARD_MAX; i++)
		all[k++] = (struct named){known[i], false};
	qsort(all, k, sizeof(all[0]), by_key);
	out->n = 0;
	bool open = false;
	for (size_t i = 0; i < k; i++) {
		if (i > 0 && shard_key_order(all[i].name, all[i - 1].name) == 0)
			continue; /* a duplicate, or known and owned: the first decided */
		if (all[i].owned) {
			open = false;
			continue;
		}
		if (!open) {
			snprintf(out->first[out->n++], SHARD_NAME_MAX, "%s", all[i].name);
			open = true;
		}
		snprintf(out->last[out->n - 1], SHARD_NAME_MAX, "%s", all[i].name);
	}
}

bool shard_runs_equal(const struct shard_runs *a, const struct shard_runs *b)
{
	if (a->n != b->n)
		return false;
	for (size_t i = 0; i < a->n; i++)
		if (strcmp(a->first[i], b->first[i]) != 0 || strcmp(a->last[i], b->last[i]) != 0)
			return false;
	return true;
}
