/* Quota by escrow in a host's membership (issue 40; docs/design/multi-host.md,
 * "Quota by escrow"): what coord/membership.c does each tick with the
 * queues it is given, through coord/quota_escrow_round.h's calls.
 *
 *   - As coordinator: one round (read, then write of what it planned) for
 *     each of at most QUOTA_ESCROW_MEMBER_ROUNDS queues a tick, in turn,
 *     over the shards it assigns (at most QUOTA_ESCROW_ROUND_SHARDS; more:
 *     no round, logged).
 *   - As owner, QE4: for each owned shard and queue it reads the slice;
 *     when one changed, it tells the sums over its owned shards
 *     (in_force: the caller puts them in force before it returns, QE5),
 *     then acknowledges each slice's revision in force (0: no slice key,
 *     the slice empty), fenced by its owner key's lease.
 *   - A release, QE6: the shard's slices leave the sums (told) before its
 *     owner, acknowledgement and use keys are deleted in one transaction.
 *
 * A shard's slice is 0 until read: a taken shard adds nothing before its
 * first read. Use is not reported yet (the coordinator's split stays the
 * even one: coord/quota_escrow.h's step 4).
 *
 * Threads: the membership thread's; in_force runs on it. */
#ifndef SHMSCHED_COORD_QUOTA_ESCROW_MEMBER_H
#define SHMSCHED_COORD_QUOTA_ESCROW_MEMBER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "coord/etcd_client.h"
#include "coord/quota_escrow_round.h"

/* Queues a coordinator's tick runs a round for, at most. */
#define QUOTA_ESCROW_MEMBER_ROUNDS 4u
/* Queues, at most: a release deletes two keys of each in one
 * transaction with the owner key. */
#define QUOTA_ESCROW_MEMBER_QUEUES 63u

/* A queue split by escrow: its name (as in the keys) and its nominal
 * quotas (a QUOTA_ESCROW_SLICE value, cells in the value's order). */
struct quota_escrow_queue {
	char name[QUOTA_ESCROW_QUEUE_MAX + 1];
	struct quota_escrow_value nominal;
};

/* The sums over the owned shards, one a queue (in the order given):
 * sums[q] a QUOTA_ESCROW_SLICE value with queue q's nominal cells. 0:
 * in force; else not (nothing is acknowledged or released; told again at
 * the next tick). */
typedef int (*quota_escrow_in_force_fn)(void *arg, const struct quota_escrow_value *sums,
					size_t n);

struct quota_escrow_member;

/* queues[0..n) copied; n 1 to QUOTA_ESCROW_MEMBER_QUEUES. NULL: out of
 * memory or n out of range. */
struct quota_escrow_member *quota_escrow_member_new(const struct quota_escrow_queue *queues,
						    size_t n, quota_escrow_in_force_fn in_force,
						    void *arg);
void quota_escrow_member_free(struct quota_escrow_member *e);
size_t quota_escrow_member_queues(const struct quota_escrow_member *e);
const char *quota_escrow_member_queue(const struct quota_escrow_member *e, size_t i);

/* The coordinator's rounds of this tick over shards[0..n) (sorted). 0 or
 * a negative errno with err. */
int quota_escrow_member_coordinate(struct quota_escrow_member *e, struct etcd_client *c,
				   const char *prefix, int64_t lease,
				   const char (*shards)[SHARD_NAME_MAX], size_t n, char *err,
				   size_t errlen);
/* The owner's step: owned[0..n) the shards owned now, with `lease`
 * (0: none; nothing read). */
int quota_escrow_member_owned(struct quota_escrow_member *e, struct etcd_client *c,
			      const char *prefix, int64_t lease,
			      const char (*owned)[SHARD_NAME_MAX], size_t n, char *err,
			      size_t errlen);
/* A release of `shard` (the caller stopped placing on it): its slices out
 * of the sums (told), then its keys deleted while LEASE(owner) == lease;
 * *owned: whether they were. */
int quota_escrow_member_release(struct quota_escrow_member *e, struct etcd_client *c,
				const char *prefix, int64_t lease, const char *shard,
				bool *owned, char *err, size_t errlen);

#endif
