/* The reclaim index: see reclaim_index_internal.h.
 *
 * Design: one doubly linked list per bucket, through arrays indexed by
 * record (next, prev, bucket), each entry stored + 1 so that the zeroed
 * arrays calloc gives are the empty index. An add links at the head, a
 * remove unlinks: a few stores each, under the mutex. Memory: 12 bytes a
 * record and 4 a bucket, backed only where touched.
 */
#include "daemon/reclaim_index_internal.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

struct reclaim_index {
	pthread_mutex_t m;
	uint32_t capacity, buckets;
	uint32_t *head;   /* [buckets]: first record + 1, 0 none */
	uint32_t *next;   /* [capacity]: record + 1, 0 the end */
	uint32_t *prev;   /* [capacity]: record + 1, 0 the head */
	uint32_t *bucket; /* [capacity]: bucket + 1, 0 in none */
};

struct reclaim_index *rix_create(uint32_t capacity, uint32_t buckets)
{
	if (capacity == 0 || buckets == 0 || capacity == RIX_NIL ||
	    buckets == RIX_NIL) {
		errno = EINVAL;
		return NULL;
	}
	struct reclaim_index *ix = calloc(1, sizeof(*ix));
	if (ix == NULL)
		return NULL;
	ix->capacity = capacity;
	ix->buckets = buckets;
	ix->head = calloc(buckets, sizeof(*ix->head));
	ix->next = calloc(capacity, sizeof(*ix->next));
	ix->prev = calloc(capacity, sizeof(*ix->prev));
	ix->bucket = calloc(capacity, sizeof(*ix->bucket));
	if (ix->head == NULL || ix->next == NULL || ix->prev == NULL ||
	    ix->bucket == NULL || pthread_mutex_init(&ix->m, NULL) != 0) {
		free(ix->head);
		free(ix->next);
		free(ix->prev);
		free(ix->bucket);
		free(ix);
		errno = ENOMEM;
		return NULL;
	}
	return ix;
}

void rix_destroy(struct reclaim_index *ix)
{
	if (ix == NULL)
		return;
	pthread_mutex_destroy(&ix->m);
	free(ix->head);
	free(ix->next);
	free(ix->prev);
	free(ix->bucket);
	free(ix);
}

void rix_lock(struct reclaim_index *ix)
{
	pthread_mutex_lock(&ix->m);
}

void rix_unlock(struct reclaim_index *ix)
{
	pthread_mutex_unlock(&ix->m);
}

void rix_remove(struct reclaim_index *ix, uint32_t rec)
{
	if (rec >= ix->capacity || ix->bucket[rec] == 0)
		return;
	uint32_t b = ix->bucket[rec] - 1, n = ix->next[rec], p = ix->prev[rec];
	if (p != 0)
		ix->next[p - 1] = n;
	else
		ix->head[b] = n;
	if (n != 0)
		ix->prev[n - 1] = p;
	ix->next[rec] = ix->prev[rec] = ix->bucket[rec] = 0;
}

void rix_add(struct reclaim_index *ix, uint32_t rec, uint32_t bucket)
{
	if (rec >= ix->capacity || bucket >= ix->buckets)
		return;
	rix_remove(ix, rec);
	uint32_t h = ix->head[bucket];
	ix->next[rec] = h;
	ix->prev[rec] = 0;
	if (h != 0)
		ix->prev[h - 1] = rec + 1;
	ix->head[bucket] = rec + 1;
	ix->bucket[rec] = bucket + 1;
}

void rix_clear(struct reclaim_index *ix)
{
	/* Record by record: the pages of records never added stay untouched. */
	for (uint32_t b = 0; b < ix->buckets; b++) {
		uint32_t r = ix->head[b];
		while (r != 0) {
			uint32_t n = ix->next[r - 1];
			ix->next[r - 1] = ix->prev[r - 1] = ix->bucket[r - 1] = 0;
			r = n;
		}
		ix->head[b] = 0;
	}
}

uint32_t rix_bucket_of(const struct reclaim_index *ix, uint32_t rec)
{
	return rec < ix->capacity ? ix->bucket[rec] - 1 : RIX_NIL;
}

uint32_t rix_first(const struct reclaim_index *ix, uint32_t bucket)
{
	return bucket < ix->buckets ? ix->head[bucket] - 1 : RIX_NIL;
}

uint32_t rix_next(const struct reclaim_index *ix, uint32_t rec)
{
	return rec < ix->capacity ? ix->next[rec] - 1 : RIX_NIL;
}
