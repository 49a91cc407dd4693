/* The shard watch's batch keys (daemon/shard_watch.c; coord/batch_value.h):
 * for each batch key it follows, the cookies (uid hashes, as the records
 * it makes carry) of the placements the key held at its last version,
 * sorted. A watch event carries a key's new value only: a rewrite (the key
 * put again without a released placement) and a delete (its last one
 * released) are told apart from the placements that stay by a merge of
 * the new cookies against these. A map from the key's hash to a malloc'd
 * sorted array of at most BATCH_PLACEMENTS_MAX cookies (record_map's
 * entries: the array's address in `id`, its count in `shard`). One
 * thread's (the watch's). */
#ifndef SHMSCHED_DAEMON_BATCH_HELD_INTERNAL_H
#define SHMSCHED_DAEMON_BATCH_HELD_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "daemon/record_map_internal.h"

struct batch_held {
	struct record_map keys;
};

/* Room for max keys. 0 or -ENOMEM. */
int batch_held_init(struct batch_held *h, size_t max);
void batch_held_free(struct batch_held *h);
void batch_held_clear(struct batch_held *h);
/* The sorted cookies key `key` (its hash, not 0) held, *n of them; NULL
 * and 0 when it is not known. Valid until the next set or clear. */
const uint64_t *batch_held_get(const struct batch_held *h, uint64_t key, size_t *n);
/* Key's cookies set to `cookies` (n of them, sorted ascending; copied);
 * n 0 forgets the key. 0, or -ENOMEM, -ENOSPC (max keys known, this one
 * not among them: it stays unknown), -EINVAL (key 0). */
int batch_held_set(struct batch_held *h, uint64_t key, const uint64_t *cookies, size_t n);
/* Exchanges a and b (a list's map made in full, put in force). */
void batch_held_swap(struct batch_held *a, struct batch_held *b);
/* Whether sorted `set` (n) has c: a binary search. */
bool batch_held_has(const uint64_t *set, size_t n, uint64_t c);
/* Sorts n cookies ascending (n <= BATCH_PLACEMENTS_MAX: insertion). */
void batch_held_sort(uint64_t *c, size_t n);

#endif
