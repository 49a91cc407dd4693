/* The reclaim index: placement records by bucket (daemon/quota_charge.c
 * keys a bucket by a charge's ClusterQueue, flavor and borrowed bit), so
 * that the evictor's choice visits only the records it may take as
 * candidates instead of the whole placement table (issue 37).
 *
 * A record index (shm/placements.h) is in at most one bucket, with its
 * key (RO2: the order in which reclaim_choose takes candidates, RCL2 in
 * quota/reclaim.c, within one ClusterQueue: priority, then the most
 * recently admitted, then uid); a bucket's records are in key order when
 * rix_ordered says so. Every call but rix_create and rix_destroy is made
 * holding the index's lock (rix_lock); the caller says which thread may
 * hold it (RX1 in daemon/quota_charge.c). All calls are O(1) but
 * rix_clear, O(buckets + records in), and rix_add, which walks past at
 * most 16 records.
 */
#ifndef SHMSCHED_DAEMON_RECLAIM_INDEX_INTERNAL_H
#define SHMSCHED_DAEMON_RECLAIM_INDEX_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>

/* No record: the end of a bucket. */
#define RIX_NIL UINT32_MAX

struct reclaim_index;

/* RO2: a record's place in RCL2's order (quota/reclaim.c), as
 * reclaim_choose reads its reclaim_pod: priority, admitted_ns, uid. */
struct rix_key {
	int32_t priority;
	uint64_t admitted_ns;
	uint64_t uid;
};

/* Whether key a comes before key b: lower priority, then more recently
 * admitted, then the smaller uid. */
bool rix_key_before(const struct rix_key *a, const struct rix_key *b);

/* An empty index of records 0 .. capacity - 1 in buckets 0 .. buckets - 1
 * (both at least 1), or NULL with errno EINVAL or ENOMEM. The arrays are
 * zeroed pages the kernel backs as they are first used. */
struct reclaim_index *rix_create(uint32_t capacity, uint32_t buckets);
void rix_destroy(struct reclaim_index *ix);

void rix_lock(struct reclaim_index *ix);
void rix_unlock(struct reclaim_index *ix);

/* Record `rec` with `key` into bucket `bucket`, out of the one it was
 * in: after the records of the bucket that come before it, as far as a
 * walk of 16 from the head finds them (past that: the bucket is out of
 * order until that record leaves). Either out of range: nothing. */
void rix_add(struct reclaim_index *ix, uint32_t rec, uint32_t bucket,
	     const struct rix_key *key);
/* Record `rec` out of its bucket (none: nothing). */
void rix_remove(struct reclaim_index *ix, uint32_t rec);
/* Every record out. */
void rix_clear(struct reclaim_index *ix);
/* The bucket `rec` is in, or RIX_NIL. */
uint32_t rix_bucket_of(const struct reclaim_index *ix, uint32_t rec);
/* The first record of `bucket`, then the one after `rec`: RIX_NIL at the
 * end. */
uint32_t rix_first(const struct reclaim_index *ix, uint32_t bucket);
uint32_t rix_next(const struct reclaim_index *ix, uint32_t rec);
/* The key record `rec` (in a bucket) was added with. */
const struct rix_key *rix_key_of(const struct reclaim_index *ix, uint32_t rec);
/* The records in `bucket` (0 out of range). */
uint32_t rix_count(const struct reclaim_index *ix, uint32_t bucket);
/* Whether `bucket`'s records, first to last, are in key order (RO2). */
bool rix_ordered(const struct reclaim_index *ix, uint32_t bucket);

#endif
