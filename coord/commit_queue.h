/* The fenced committer of one shard (issue 40, item 2): placement records
 * (put or delete of <prefix>shards/<s>/pods/<uid>) pushed by worker
 * threads, committed to etcd in transactions of up to
 * COMMIT_MAX_BATCH records, several transactions in flight at once, each
 * guarded by "compare LEASE(<prefix>shards/<s>/owner) == the host's
 * lease", so a host that has lost its lease commits nothing.
 *
 * Pipelining: the queue has `in_flight` lanes, each a bounded ring, one
 * thread and one etcd connection with at most one transaction in flight.
 * A record goes to the lane its uid hashes to, so every record of one pod
 * is in one lane, committed in push order: a release never overtakes its
 * placement. Lanes are independent; batches of different pods commit in
 * any order.
 *
 * Exactly once: each lane owns a key, <prefix>shards/<s>/commit/<lease
 * hex>/<lane>, whose etcd version counts the lane's committed batches.
 * A batch also compares VERSION(lane key) == committed so far and puts
 * the lane key; a transaction whose answer was lost (timeout, connection
 * cut, leader killed) is sent again, unchanged, until the lane learns its
 * outcome, and a retry of a batch that had landed fails that compare and
 * reads the lane key one version ahead: committed, once. Lane keys carry
 * no lease, so a resend after the lease has ended can still tell; they
 * stay (one a lane a lease) until removed by a shard's next owner (not
 * done yet: docs/design/multi-host.md).
 *
 * Completion: on_done(ctx, cookie, rc, revision) once per pushed record,
 * on the lane's thread, in the lane's order. rc: 0 committed (revision:
 * the transaction's); -ESTALE the fence failed: the shard's owner key no
 * longer carries this lease; nothing of that batch was committed, and
 * every record after it (queued or pushed later, every lane) fails
 * -ESTALE too without being sent; -ECANCELED the queue was closed before
 * the record was sent; -EIO closed while its outcome was unknown (etcd
 * did not answer until the close's deadline: it may or may not be in
 * etcd); -EINVAL, -E2BIG, -ENOSPC, -EACCES, -ENOMEM etcd (or the client)
 * refused the batch and no earlier send of it landed (nothing committed;
 * commit_queue_error says why); -EPROTO the lane key was not at the
 * version this lane left it (another committer on the same lease and
 * shard): nothing of the batch committed, the lane reads the key again.
 *
 * Durability modes are the caller's: sync answers a pod in on_done; async
 * answers it when push returns 0. The async window is bounded
 * (commit_queue_window_bound): at most max_records records unanswered by
 * etcd, and a lane refuses new records (-EAGAIN) while its transaction in
 * flight has gone unanswered for more than max_window_ms, so a stalled
 * etcd is felt by the producer within that time. A record's own wait is
 * its lane's backlog at etcd's pace: a full ring (capacity / in_flight
 * records) refuses until a batch commits.
 *
 * Memory: capacity records in the rings (capacity / in_flight a lane) and
 * one batch a lane in flight, each record COMMIT_RECORD_BYTES or less;
 * nothing grows. A full lane refuses a push with -EAGAIN (backpressure:
 * the caller holds the pod or answers it "retry").
 *
 * Threads: push from any number of threads; on_done runs on lane threads
 * and must not call commit_queue_close. The lease is kept alive by the
 * caller (the membership code), not here. */
#ifndef SHMSCHED_COORD_COMMIT_QUEUE_H
#define SHMSCHED_COORD_COMMIT_QUEUE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "coord/placement_value.h"

/* A transaction is the records, and the lane key's put (one operation):
 * etcd's 128 in all. */
#define COMMIT_MAX_BATCH 127
#define COMMIT_MAX_IN_FLIGHT 16
/* A uid: Kubernetes' are 36 bytes; any [A-Za-z0-9._-] up to this. */
#define COMMIT_UID_MAX 63
#define COMMIT_PREFIX_MAX 128

enum commit_op {
	COMMIT_PUT,
	COMMIT_DELETE,
};

struct commit_record {
	enum commit_op op;
	const char *uid;
	/* PUT only: the value of shards/<s>/pods/<uid>. */
	const struct placement_value *value;
	/* Handed back to on_done. */
	uint64_t cookie;
};

struct commit_queue_config {
	/* etcd endpoints, comma separated (etcd_client_open). */
	const char *endpoints;
	/* The cluster's key prefix, ending in '/' ("/shmsched/c1/"). */
	const char *prefix;
	uint32_t shard;
	/* The shard's name in the keys (shards/<name>/...: a node label's
	 * value, as the membership names shards, coord/membership.h); NULL:
	 * the number above. 1 to SHARD_NAME_MAX - 1 bytes of [A-Za-z0-9._-]. */
	const char *shard_name;
	/* The lease the shard's owner key carries (taken by the caller). */
	int64_t lease;
	/* Lanes: transactions in flight at once; 0: 4. At most
	 * COMMIT_MAX_IN_FLIGHT. */
	unsigned in_flight;
	/* Records a transaction; 0: 60. At most COMMIT_MAX_BATCH. */
	unsigned batch;
	/* Records queued in all, split evenly between lanes; 0: 8192. */
	unsigned capacity;
	/* Async bound (above); 0: 1000 ms. */
	long max_window_ms;
	/* One request's timeout; 0: 3000 ms. */
	long timeout_ms;
	/* Called once a record (above). */
	void (*on_done)(void *ctx, uint64_t cookie, int rc, int64_t revision);
	void *ctx;
	/* The clock, in ns (CLOCK_MONOTONIC when NULL): the window's ages. */
	int64_t (*now_ns)(void *clock_ctx);
	void *clock_ctx;
};

struct commit_queue;

/* Opens the lanes' connections and starts their threads. -EINVAL a
 * setting out of range (err says which), -ENOMEM, or the client's open
 * error. */
int commit_queue_open(struct commit_queue **out, const struct commit_queue_config *cfg,
		      char *err, size_t errlen);

/* Copies the record into its lane. 0 queued; -EAGAIN the lane is full or
 * its transaction in flight is older than max_window_ms; -ESTALE the
 * fence has failed; -ESHUTDOWN closing; -EINVAL a uid not of 1 to
 * COMMIT_UID_MAX bytes of [A-Za-z0-9._-], or a PUT whose value does not
 * encode (placement_value_encode). on_done is called only for 0. */
int commit_queue_push(struct commit_queue *q, const struct commit_record *r);

/* Waits until every record pushed before the call is answered. */
void commit_queue_flush(struct commit_queue *q);

/* Stops taking records, commits what is queued for up to drain_ms, then
 * fails the rest (-ECANCELED unsent, -EIO unknown) and frees the queue. */
void commit_queue_close(struct commit_queue *q, long drain_ms);

/* Now: records pushed and not yet answered, and the age of the oldest. */
void commit_queue_window(struct commit_queue *q, size_t *records, long *oldest_ms);
/* The async window's bound: records (capacity plus a batch a lane) and
 * ms (max_window_ms). */
void commit_queue_window_bound(const struct commit_queue *q, size_t *records, long *ms);

/* Counters since open. */
struct commit_queue_stats {
	uint64_t committed;    /* records answered 0 */
	uint64_t stale;	       /* records answered -ESTALE */
	uint64_t failed;       /* records answered any other error */
	uint64_t txns;	       /* transactions committed */
	uint64_t retries;      /* transactions sent again (outcome unknown) */
	uint64_t landed_twice; /* retries that found the batch had landed */
};
void commit_queue_stats(const struct commit_queue *q, struct commit_queue_stats *out);

/* Whether the fence has failed (every later record is -ESTALE). */
bool commit_queue_fenced(const struct commit_queue *q);

/* The last error's text ("" if none), copied into buf. */
void commit_queue_error(struct commit_queue *q, char *buf, size_t len);

/* The keys, as the queue writes them (buf of len bytes; the length, or
 * -ENAMETOOLONG). */
int commit_owner_key(const char *prefix, uint32_t shard, char *buf, size_t len);
int commit_pod_key(const char *prefix, uint32_t shard, const char *uid, char *buf, size_t len);

#endif
