/* Quota by escrow through etcd (issue 40; docs/design/multi-host.md,
 * "Quota by escrow"): the coordinator's round for one queue, in two
 * calls, and the owner's steps. The arithmetic is coord/quota_escrow.h's,
 * the values coord/quota_escrow_value.h's. Keys under the cluster's
 * prefix: quota/<queue>/<s> (the slice), quota/<queue>/<s>/ack and
 * quota/<queue>/<s>/use (the owner's, with its lease), and
 * shards/<s>/owner (coord/membership.h).
 *
 * A round: quota_escrow_round_read reads the queue's keys and the shards'
 * owner keys in one transaction (one revision), and plans every cell
 * (quota_escrow_target, quota_escrow_plan); quota_escrow_round_write
 * writes the changed slices in one transaction fenced by
 * LEASE(coordinator) == the coordinator's lease and compared against the
 * modification revisions read of each written shard's owner, slice and
 * acknowledgement keys (QE1, QE2: see coord/quota_escrow.h). A refused
 * compare writes nothing; the next round reads again. More than
 * QUOTA_ESCROW_ROUND_WRITES shards to write: the first of them, only the
 * shrinks when there are any (the growths wait for a later round), else
 * growths.
 *
 * The owner's steps (QE4): quota_escrow_read_slice after its take and on
 * a change; the slice put in force; quota_escrow_put_owned(ack) of the
 * revision in force; quota_escrow_put_owned(use) for the rebalance. Both
 * puts are fenced by LEASE(shards/<s>/owner) == the owner's lease and put
 * with it, so they go with the lease; a release deletes them with the
 * owner key (quota_escrow_release_keys). shmschedd's membership runs them
 * (coord/quota_escrow_member.h).
 *
 * Cost: a round is two transactions (one read of 1 + shards ranges, one
 * write of 1 + 3 a written shard compares) and O(cells x shards x 55). */
#ifndef SHMSCHED_COORD_QUOTA_ESCROW_ROUND_H
#define SHMSCHED_COORD_QUOTA_ESCROW_ROUND_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "coord/etcd_client.h"
#include "coord/quota_escrow.h"
#include "coord/quota_escrow_value.h"
#include "coord/shard_map.h"

/* Shards in one round: one read transaction of 1 + n ranges. */
#define QUOTA_ESCROW_ROUND_SHARDS 127u
/* Shards written in one round: 1 + 3 a shard compares, at most 128. */
#define QUOTA_ESCROW_ROUND_WRITES 42u
/* A queue's name in the keys: 1 to 253 bytes of [a-z0-9.-]. */
#define QUOTA_ESCROW_QUEUE_MAX 253u

struct quota_escrow_round;

/* A round's state (what the last read saw and planned); NULL: out of
 * memory. */
struct quota_escrow_round *quota_escrow_round_new(void);
void quota_escrow_round_free(struct quota_escrow_round *r);
/* n shards (names valid as in coord/shard_map.h, 1 to
 * QUOTA_ESCROW_ROUND_SHARDS of them, distinct), nominal: a
 * QUOTA_ESCROW_SLICE value whose cells are the queue's nominal quotas.
 * Reads and plans; *writes: the shards it would write. 0, or a negative
 * errno with err saying why (etcd's error, a key's value that does not
 * decode, an input out of range). */
int quota_escrow_round_read(struct quota_escrow_round *r, struct etcd_client *c,
			    const char *prefix, const char *queue,
			    const struct quota_escrow_value *nominal,
			    const char (*shards)[SHARD_NAME_MAX], size_t n, size_t *writes, char *err,
			    size_t errlen);
/* Writes what the last read planned. *committed: whether the compares
 * held (false: nothing written, not an error). */
int quota_escrow_round_write(struct quota_escrow_round *r, struct etcd_client *c,
			     int64_t coordinator_lease, bool *committed, char *err,
			     size_t errlen);
/* The slice planned for shard i (0..n) of the last read, into *out. */
void quota_escrow_round_slice(const struct quota_escrow_round *r, size_t i,
			      struct quota_escrow_value *out);

/* The owner's read of its slice: *out (n 0 when the key is absent) and
 * the key's modification revision (0: absent). */
int quota_escrow_read_slice(struct etcd_client *c, const char *prefix, const char *queue,
			    const char *shard, struct quota_escrow_value *out,
			    int64_t *revision, char *err, size_t errlen);
/* Puts v (an ACK or a USE) as quota/<queue>/<shard>/ack or /use with
 * `lease`, only while LEASE(shards/<shard>/owner) == lease: *owned says
 * whether it did. */
int quota_escrow_put_owned(struct etcd_client *c, const char *prefix, const char *queue,
			   const char *shard, int64_t lease, const struct quota_escrow_value *v,
			   bool *owned, char *err, size_t errlen);
/* A release: deletes shards/<shard>/owner and the ack and use keys of
 * each of the queues (n, at most 63: one transaction), only while
 * LEASE(owner) == lease. The caller stops admitting on the shard first. */
int quota_escrow_release_keys(struct etcd_client *c, const char *prefix, const char *shard,
			      int64_t lease, const char *const *queues, size_t n, bool *owned,
			      char *err, size_t errlen);

#endif
