/* Quota across shards by escrow (issue 40; docs/design/multi-host.md,
 * "Quota by escrow"): the coordinator's split of one queue's nominal quota
 * in one (flavor, resource) into slices, one a shard, and the rule that
 * says which changes of the slices it may write now. Pure functions: the
 * etcd keys (quota/<queue>/<s> and its acknowledgement) are the caller's.
 *
 * A host admits against the slices of the shards it owns. QE1: at every
 * instant the sum over shards of what any host may admit against for a
 * shard is at most the nominal quota. The coordinator keeps it with two
 * phases: a slice shrinks first, and the shard's owner acknowledges the
 * shrink (it admits against the new, smaller slice) before another slice
 * grows into the room it left. What a host may admit against for shard s,
 * as the coordinator can know it from etcd, is quota_escrow_hold():
 *
 *   - no owner key: nothing is admitted on s now, and a host that takes s
 *     reads its slice after the take: the slice written (`granted`);
 *   - an owner whose acknowledgement is of the slice written (the same
 *     key revision): `granted`;
 *   - an owner without an acknowledgement: `granted` (it took s after
 *     the slice was written: no change is written to an unsettled shard,
 *     and a write to an unowned one is compared against the owner key);
 *   - an owner whose acknowledgement is of an older revision: the larger
 *     of `granted` and the value acknowledged: it admits against one or
 *     the other.
 *
 * QE2: a slice is written only while its shard is settled (no owner, or
 * acknowledged at the slice's revision): one change in flight a shard, so
 * the host's value is the acknowledged one or the one written, nothing
 * older. The caller writes the plan in one transaction fenced by the
 * coordinator's lease and compared against the revisions it read of each
 * written shard's owner, slice and acknowledgement keys: a take, an
 * acknowledgement or a release of such a shard in between makes it commit
 * nothing. The shards it does not write need no compare: between two
 * writes of the coordinator a hold only falls (an acknowledgement of a
 * newer revision, a release, an expiry) or stays (a take).
 *
 * The hosts' rule (coord/quota_escrow_member.c; modelled by
 * unit.quota_escrow), QE4: a
 * host reads a shard's slice after its take and on every change, puts it
 * in force (a shrink before it is acknowledged), never one of an older
 * revision than the one in force, and acknowledges the revision in
 * force (0 while the slice key is absent), fenced by its owner key's
 * lease; a release stops admitting on
 * the shard before the owner and acknowledgement keys go. */
#ifndef SHMSCHED_COORD_QUOTA_ESCROW_H
#define SHMSCHED_COORD_QUOTA_ESCROW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Shards in one call, at most (coord/shard_map.h's SHARD_MAX). */
#define QUOTA_ESCROW_MAX 256u
/* A quantity, at most: 2^54 (16 PiB in bytes), so that a sum over
 * QUOTA_ESCROW_MAX shards fits an int64. */
#define QUOTA_ESCROW_QUANTITY_MAX (INT64_C(1) << 54)
/* quota_escrow_plan's "no write" for a shard. */
#define QUOTA_ESCROW_KEEP INT64_C(-1)

/* One shard's part of one (queue, flavor, resource), as the coordinator
 * read it from etcd. Quantities in [0, QUOTA_ESCROW_QUANTITY_MAX]. */
struct quota_escrow_shard {
	int64_t granted; /* the slice written (0: none yet) */
	bool owned;      /* shards/<s>/owner exists */
	bool acked;      /* the owner acknowledged some slice */
	bool acked_current; /* ... of the slice written (its revision) */
	int64_t acked_value; /* what it acknowledged (when acked) */
	int64_t use;  /* the owner's reported use attributed to s */
	int64_t want; /* use plus what pods wait for on s (>= use; 0: none) */
};

/* Nominal quota split evenly into n slices: nominal / n each and one
 * more to the first nominal % n. Their sum is nominal. n >= 1. */
void quota_escrow_split(int64_t nominal, size_t n, int64_t *out);

/* The slices the coordinator aims at, out[0..n), from the shards as read:
 *
 *   1. each starts at max(granted, use);
 *   2. if their sum is over the nominal (a cut quota, or use over it), the
 *      room above use is taken back, largest first, then (only if the use
 *      alone is over) the slices themselves, largest first;
 *   3. shards that want more than they hold (want > the slice) get it from
 *      the room no slice holds, then from the room above use of the
 *      shards that want nothing more, largest first, never below their
 *      use: the room is filled evenly, the lowest shard first on a tie;
 *   4. room that no slice holds and no shard wants goes first to the
 *      shards below their even share (quota_escrow_split of the nominal),
 *      filled evenly, then is split evenly over all shards: the first
 *      split, when nothing is granted yet, is the even one, and a round
 *      written in parts (quota_escrow_round.h) aims at the same slices.
 *
 * QE3: the sum of out is at most the nominal (exactly it when the use
 * alone is not over it); out[s] >= use[s] unless the use alone is over
 * the nominal. Unchanged inputs (nothing wanted, nothing unheld) give
 * out == granted. -EINVAL: n 0 or over QUOTA_ESCROW_MAX, a quantity out
 * of range. */
int quota_escrow_target(int64_t nominal, size_t n, const struct quota_escrow_shard *in,
			int64_t *out);

/* What any host may admit against for shard s now (see above). */
int64_t quota_escrow_hold(const struct quota_escrow_shard *s);
/* Whether a new slice may be written to s now (QE2). */
bool quota_escrow_settled(const struct quota_escrow_shard *s);

/* The writes the coordinator may make now towards target[0..n):
 * write[s] = the new slice, or QUOTA_ESCROW_KEEP. A settled shard's
 * shrink is always written; a settled shard's growth only while the sum
 * over all shards of the hold after these writes stays within the
 * nominal (a shrink of an owned shard frees its room only once
 * acknowledged; of an unowned one, in the same transaction), in shard
 * order. Returns how many writes, or -EINVAL as quota_escrow_target. */
int quota_escrow_plan(int64_t nominal, size_t n, const struct quota_escrow_shard *in,
		      const int64_t *target, int64_t *write);

/* Helpers, public for their tests. Both take from or give to x[0..n)
 * (each >= 0) a total of `amount`, the largest first or the smallest
 * first, ties to the lower index, as one unit at a time would:
 * quota_escrow_cut: cut[s] taken from x[s], amount <= sum of x;
 * quota_escrow_fill: give[s] <= need[s], amount <= sum of need. */
void quota_escrow_cut(const int64_t *x, size_t n, int64_t amount, int64_t *cut);
void quota_escrow_fill(const int64_t *need, size_t n, int64_t amount, int64_t *give);

#endif
