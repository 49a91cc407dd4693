/* The shard watch's batch keys: see batch_held_internal.h. Cost: a set
 * is a probe, one free and one malloc of at most 1 KiB; a clear walks
 * the map's slots. */
#include "daemon/batch_held_internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

int batch_held_init(struct batch_held *h, size_t max)
{
	return record_map_init(&h->keys, max);
}

void batch_held_clear(struct batch_held *h)
{
	for (size_t i = 0; i < h->keys.cap; i++)
		if (h->keys.e[i].cookie != 0)
			free((void *)(uintptr_t)h->keys.e[i].id);
	record_map_clear(&h->keys);
}

void batch_held_free(struct batch_held *h)
{
	if (h->keys.e != NULL)
		batch_held_clear(h);
	record_map_free(&h->keys);
}

const uint64_t *batch_held_get(const struct batch_held *h, uint64_t key, size_t *n)
{
	const struct record_entry *e = record_map_find(&h->keys, key);
	*n = e != NULL ? (size_t)e->shard : 0;
	return e != NULL ? (const uint64_t *)(uintptr_t)e->id : NULL;
}

int batch_held_set(struct batch_held *h, uint64_t key, const uint64_t *cookies, size_t n)
{
	if (key == 0)
		return -EINVAL;
	struct record_entry *e = record_map_find(&h->keys, key);
	if (n == 0) {
		if (e != NULL) {
			free((void *)(uintptr_t)e->id);
			record_map_del(&h->keys, e);
		}
		return 0;
	}
	uint64_t *copy = malloc(n * sizeof(*copy));
	if (copy == NULL)
		return -ENOMEM;
	memcpy(copy, cookies, n * sizeof(*copy));
	if (e != NULL) {
		free((void *)(uintptr_t)e->id);
		e->id = (uint64_t)(uintptr_t)copy;
		e->shard = n;
		return 0;
	}
	int rc = record_map_put(&h->keys, key, (uint64_t)(uintptr_t)copy, n);
	if (rc < 0)
		free(copy);
	return rc;
}

void batch_held_swap(struct batch_held *a, struct batch_held *b)
{
	struct batch_held t = *a;
	*a = *b;
	*b = t;
}

bool batch_held_has(const uint64_t *set, size_t n, uint64_t c)
{
	size_t lo = 0, hi = n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (set[mid] == c)
			return true;
		if (set[mid] < c)
			lo = mid + 1;
		else
			hi = mid;
	}
	return false;
}

void batch_held_sort(uint64_t *c, size_t n)
{
	for (size_t i = 1; i < n; i++) {
		uint64_t x = c[i];
		size_t j = i;
		for (; j > 0 && c[j - 1] > x; j--)
			c[j] = c[j - 1];
		c[j] = x;
	}
}
