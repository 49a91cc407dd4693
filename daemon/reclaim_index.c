/* The reclaim index: see reclaim_index_internal.h.
 *
 * Design: one doubly linked list per bucket, through arrays indexed by
 * record (next, prev, bucket), each entry stored + 1 so that the zeroed
 * arrays calloc gives are the empty index. Each record keeps its key
 * (RO2: priority, admission time, uid), and each list is kept in the key's
 * order as far as a short walk keeps it: an add walks from the head past
 * at most RIX_WALK records that come before it (a new placement is the
 * most recently admitted: the first of its priority, found at once when
 * the bucket's pods are of one priority), and each bucket counts its
 * adjacent pairs out of order (disorder), moved by each add and remove
 * from its neighbours alone: 0 is a list in order. A remove unlinks. A
 * few stores each, under the mutex, and the walk. Memory: 36 bytes a
 * record and 12 a bucket, backed only where touched.
 */
#include "daemon/reclaim_index_internal.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

/* RO2: records an add walks past, at most. */
#define RIX_WALK 16u

struct reclaim_index {
	pthread_mutex_t m;
	uint32_t capacity, buckets;
	uint32_t *head;   /* [buckets]: first record + 1, 0 none */
	uint32_t *next;   /* [capacity]: record + 1, 0 the end */
	uint32_t *prev;   /* [capacity]: record + 1, 0 the head */
	uint32_t *bucket; /* [capacity]: bucket + 1, 0 in none */
	struct rix_key *key; /* [capacity]: while in a bucket */
	uint32_t *count;     /* [buckets]: records in it */
	uint32_t *disorder;  /* [buckets]: adjacent pairs out of key order */
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
	ix->key = calloc(capacity, sizeof(*ix->key));
	ix->count = calloc(buckets, sizeof(*ix->count));
	ix->disorder = calloc(buckets, sizeof(*ix->disorder));
	if (ix->head == NULL || ix->next == NULL || ix->prev == NULL ||
	    ix->bucket == NULL || ix->key == NULL || ix->count == NULL ||
	    ix->disorder == NULL || pthread_mutex_init(&ix->m, NULL) != 0) {
		free(ix->head);
		free(ix->next);
		free(ix->prev);
		free(ix->bucket);
		free(ix->key);
		free(ix->count);
		free(ix->disorder);
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
	free(ix->key);
	free(ix->count);
	free(ix->disorder);
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

bool rix_key_before(const struct rix_key *a, const struct rix_key *b)
{
	if (a->priority != b->priority)
		return a->priority < b->priority;
	if (a->admitted_ns != b->admitted_ns)
		return a->admitted_ns > b->admitted_ns;
	return a->uid < b->uid;
}

/* RO2: 1 when records a then b (each + 1; 0: none) are out of order. */
static uint32_t bad(const struct reclaim_index *ix, uint32_t a, uint32_t b)
{
	return a != 0 && b != 0 && rix_key_before(&ix->key[b - 1], &ix->key[a - 1]);
}

void rix_remove(struct reclaim_index *ix, uint32_t rec)
{
	if (rec >= ix->capacity || ix->bucket[rec] == 0)
		return;
	uint32_t b = ix->bucket[rec] - 1, n = ix->next[rec], p = ix->prev[rec];
	ix->disorder[b] += bad(ix, p, n);
	ix->disorder[b] -= bad(ix, p, rec + 1) + bad(ix, rec + 1, n);
	ix->count[b]--;
	if (p != 0)
		ix->next[p - 1] = n;
	else
		ix->head[b] = n;
	if (n != 0)
		ix->prev[n - 1] = p;
	ix->next[rec] = ix->prev[rec] = ix->bucket[rec] = 0;
}

void rix_add(struct reclaim_index *ix, uint32_t rec, uint32_t bucket,
	     const struct rix_key *key)
{
	if (rec >= ix->capacity || bucket >= ix->buckets)
		return;
	rix_remove(ix, rec);
	ix->key[rec] = *key;
	/* After the records before it, RIX_WALK at most (RO2). */
	uint32_t p = 0, n = ix->head[bucket];
	for (uint32_t k = 0; k < RIX_WALK && n != 0 &&
	     rix_key_before(&ix->key[n - 1], key); k++) {
		p = n;
		n = ix->next[n - 1];
	}
	ix->next[rec] = n;
	ix->prev[rec] = p;
	if (p != 0)
		ix->next[p - 1] = rec + 1;
	else
		ix->head[bucket] = rec + 1;
	if (n != 0)
		ix->prev[n - 1] = rec + 1;
	ix->bucket[rec] = bucket + 1;
	ix->count[bucket]++;
	ix->disorder[bucket] += bad(ix, p, rec + 1) + bad(ix, rec + 1, n);
	ix->disorder[bucket] -= bad(ix, p, n);
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
		if (ix->count[b] != 0 || ix->disorder[b] != 0)
			ix->count[b] = ix->disorder[b] = 0; /* pages left unwritten */
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

const struct rix_key *rix_key_of(const struct reclaim_index *ix, uint32_t rec)
{
	return &ix->key[rec];
}

uint32_t rix_count(const struct reclaim_index *ix, uint32_t bucket)
{
	return bucket < ix->buckets ? ix->count[bucket] : 0;
}

bool rix_ordered(const struct reclaim_index *ix, uint32_t bucket)
{
	return bucket >= ix->buckets || ix->disorder[bucket] == 0;
}
