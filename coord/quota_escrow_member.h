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
 *   - As owner, QE7: after the acknowledgements, the host's use of each
 *     queue (quota_escrow_use_fn: what its placements charge, over all it
 *     owns, and what its waiting pods ask beyond it) attributed to its
 *     owned shards: the use fills each shard's slice in force in shard
 *     name order, what is over their sum is split evenly over them; the
 *     ask first fills each shard's room above its use, what is beyond
 *     the room is split evenly, at least 1 a shard (so no shard of a
 *     host that waits gives room to a sibling). A host's reports sum to
 *     its use (and to its ask, or up to one unit a shard more). Each
 *     (shard, queue)'s USE value is put (quota/<queue>/<s>/use, fenced by
 *     the owner key's lease as the acknowledgements) only when it
 *     differs from the last one put there (an absent key reads as zeros:
 *     nothing is written for a shard without use or waiting pods). The
 *     coordinator's rounds read them (coord/quota_escrow.h's
 *     quota_escrow_target).
 *
 * A shard's slice is 0 until read: a taken shard adds nothing before its
 * first read.
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

/* The host's use of each queue (in the order given) over all it owns,
 * into use[q]: a QUOTA_ESCROW_USE value that comes with queue q's nominal
 * cells (their names, in order) and amounts and `more` 0; the callback
 * sets each cell's `amount` (what the host's live placements charge to the
 * queue) and `more` (what its pods waiting for the queue's quota ask
 * beyond it), each at most QUOTA_ESCROW_QUANTITY_MAX. 0, or a negative
 * errno: nothing reported this tick. */
typedef int (*quota_escrow_use_fn)(void *arg, struct quota_escrow_value *use, size_t n);

struct quota_escrow_member;

/* queues[0..n) copied; n 1 to QUOTA_ESCROW_MEMBER_QUEUES. NULL: out of
 * memory or n out of range. */
struct quota_escrow_member *quota_escrow_member_new(const struct quota_escrow_queue *queues,
						    size_t n, quota_escrow_in_force_fn in_force,
						    void *arg);
void quota_escrow_member_free(struct quota_escrow_member *e);
/* The use reports (QE7), with the `arg` of quota_escrow_member_new; NULL
 * (the default): none, the coordinator's split stays the even one. */
void quota_escrow_member_set_use(struct quota_escrow_member *e, quota_escrow_use_fn use);
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
