/* A sharded host's placements committed to etcd, in sync mode (issue 40
 * item 2; docs/design/multi-host.md, "Fenced commits"): with --etcd and
 * --etcd-durability sync (the default with --etcd), each placement on a
 * node of an owned shard is put as <prefix>shards/<s>/pods/<uid> (value:
 * coord/placement_value.h) through that shard's committer
 * (coord/commit_queue.h), fenced by the shard's owner key carrying this
 * host's lease, and the pod is answered only once etcd says committed.
 * <uid> is a hash of the host's name and the placement's id (the one its
 * producer is answered with), 16 hexadecimal digits each: unique among
 * the cluster's live placements (ids alone are per host), and known
 * before the placement is published.
 *
 * One committer per owned shard: opened by the membership thread when
 * the shard is taken, then the shard read from etcd at one revision
 * (coord/rebuild.h) and each placement there that this host does not
 * hold counted in its ledger as a bound placement record
 * (PLACEMENT_OWNER_BOUND: an admin's release or a drain finds it; its
 * cookie a hash of its key's uid, so a later take does not count it
 * twice), and only then the gate opens the shard to placements,
 * closed when the shard is released or the lease changes (after the gate
 * closed it; the close drains what is queued, so pods placed before the
 * release are committed before the owner key goes).
 *
 * Deferred (etcd_sync_defer, the burst of daemon/serve.c): the worker
 * pushes the record without waiting, keeps what it needs to finish the
 * placement in a bounded table of its own (ETCD_SYNC_PENDING), and goes
 * on placing; the completions come back to it (etcd_sync_collect) and it
 * publishes and answers each pod then, or rolls it back. So one worker's
 * consecutive pods share transactions. The blocking version
 * (etcd_sync_put: a condition variable a worker) is kept where deferring
 * is not done (daemon/attempt.c says which) and when the table or the
 * queue is full (backpressure: the worker waits for one commit).
 * Async (--etcd-durability async): etcd_sync_put returns once the record
 * is queued, the pod answered placed before etcd commits it; the commit
 * comes within the committer's window (commit_queue.h: a lane refuses
 * records while its oldest unanswered one is older than 1 s, and a full
 * queue or table is waited out: the worker stops, never drops); a record
 * etcd does not commit (the lease lost, the shard released) is listed
 * lost (etcd_sync_take_lost) for the membership thread, which rolls the
 * placement back and reports it (daemon.c).
 * A released or evicted pod's key is deleted
 * (etcd_sync_delete), not waited for. Not done: a counted
 * placement's later release by its old owner (out of scope: the old
 * owner no longer places there; an admin releases the bound record, but
 * its key stays: a later owner counts it again, room held, never an
 * overcommit); its devices (gpus are not counted). A placement charged
 * to a quota queue is written as version 3, with its ClusterQueue's and
 * flavor's names, and a take charges it to the same names in this host's
 * tree (QV1, QV2 in daemon/etcd_sync.c): the bound record's tag, given
 * back when it is released, marked borrowed when that charge left its
 * queue past nominal (QV3: a lender's reclaim may evict it); a name this
 * host's tree lacks is counted on the node only (queue_unknown).
 *
 * Threads: etcd_sync_owned and etcd_sync_ready on the membership thread
 * only; etcd_sync_put on workers (each its own index); etcd_sync_delete
 * on the releasing thread; the committers' completions on their lane
 * threads. */
#ifndef SHMSCHED_DAEMON_ETCD_SYNC_INTERNAL_H
#define SHMSCHED_DAEMON_ETCD_SYNC_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "coord/coord.h"
#include "shm/shm.h"

/* How long a worker waits for its placement's commit before giving up
 * on it (rolled back, the pod answered unschedulable; the record may
 * still land: a key for a pod not placed, counted by a new owner, never
 * an overcommit). */
#define ETCD_SYNC_WAIT_MS 10000

struct etcd_sync;
struct membership;
struct producers;
struct quota_charge;

/* A host's committers (none open yet): keys under `prefix`
 * ("/shmsched/<cluster>/") for host `host`, etcd at `endpoints`, shards by
 * the node label
 * `key` of `c`'s nodes (names in `strings`), other hosts' placements
 * counted in `pl` and `c`'s ledger, `workers` workers. NULL: out of
 * memory.
 * `incarnation` is mixed into the first half of this host's uids when not
 * 0: a daemon whose placement ids restart at every start (an anonymous
 * region and no store: --ephemeral) passes a random number, else its
 * restarted self would put a new placement over its dead self's key of
 * the same id (one key for two placements: a later owner undercounts the
 * node). 0 keeps the name's hash alone, for a region or store whose ids
 * continue. */
struct etcd_sync *etcd_sync_create(const char *endpoints, const char *prefix,
				   const char *host, uint64_t incarnation, struct cluster *c,
				   struct placements *pl, const struct intern *strings,
				   uint32_t key, unsigned workers, bool async);
/* Whether it was created async. */
bool etcd_sync_async(const struct etcd_sync *s);
/* The first half of this host's uids (the name's hash, with the
 * incarnation mixed in): what its shard watch skips as its own. */
uint64_t etcd_sync_host_hash(const struct etcd_sync *s);
/* The producers whose lock a take's count of a shard holds while it walks
 * and adds to the placement table (the control thread frees records
 * there). Set before the membership thread starts; unset (unit tests):
 * no lock. */
void etcd_sync_set_producers(struct etcd_sync *s, struct producers *p);
/* The membership whose lease the committers fence with (set after
 * membership_start; until then no committer opens). */
void etcd_sync_set_membership(struct etcd_sync *s, struct membership *m);
/* Kueue's quotas (daemon/quota_charge_internal.h): the tree a put names
 * its queue from and a take charges counted placements to. Set before
 * the membership thread and the workers start; unset: no queues. */
void etcd_sync_set_quota(struct etcd_sync *s, struct quota_charge *q);
/* Closes every committer (drain_ms to commit what is queued) and frees.
 * After the workers have stopped. NULL: nothing. */
void etcd_sync_destroy(struct etcd_sync *s, long drain_ms);

/* Membership thread, for the owned set `names` (n): writes to `ready`
 * (SHARD_MAX names) those of them whose committer is open at the lease
 * held now, and returns how many. Changes nothing. */
size_t etcd_sync_ready(struct etcd_sync *s, const shard_name_t *names, size_t n,
		       shard_name_t *ready);
/* Membership thread: closes the committers of shards not in `names` (or
 * of an older lease), opens one for each of `names` without one and
 * counts the placements etcd holds for it (a shard whose read fails stays
 * closed: tried on the next call), then as etcd_sync_ready. */
size_t etcd_sync_owned(struct etcd_sync *s, const shard_name_t *names, size_t n,
		       shard_name_t *ready);

/* Worker `w`, inside its read-side section: commits placement `id` of
 * `pod` on node `slot` (generation `node_gen`) and waits for etcd's
 * answer (async: for the record to be queued, 0 then). 0 committed; else the placement is not to be kept, and `why`
 * (len bytes) says so for the pod's answer: -ESTALE the shard's lease
 * was lost (or the shard released) before the commit, -ETIMEDOUT no
 * answer within ETCD_SYNC_WAIT_MS, -ENOENT the node is in no owned
 * shard, or the committer's other errors. A full queue (-EAGAIN) is
 * waited out (backpressure), never dropped. `quota`: the placement's
 * quota tag (0 none), charged inside worker w's gate (QA4), which the
 * value names by ClusterQueue and flavor (version 3). */
int etcd_sync_put(struct etcd_sync *s, unsigned w, uint32_t slot, uint32_t node_gen,
		  const struct pod_spec *pod, uint64_t id, uint32_t quota, char *why, size_t len);

/* A placement whose commit is deferred: what its worker needs to finish
 * it when etcd answers, carried through the commit untouched. */
struct etcd_pending {
	uint32_t producer; /* the producer's index in the table (producers_get) */
	uint64_t key;      /* producers_key() then: the same producer still */
	uint32_t index;    /* its slot */
	uint32_t rec;      /* the placement's record (taken, prepared) */
	uint32_t node;     /* the node's slot */
	uint32_t owner;    /* the producer's identity: the record's owner */
	uint32_t attempt;  /* the pod's attempt (its scheduling attempts' bucket) */
	uint64_t id;       /* the placement's id */
	const struct placement_record *made; /* the prepared record */
};

/* A worker's deferred placements at most (its table). */
#define ETCD_SYNC_PENDING 4096

/* Worker `w`, inside its read-side section: as etcd_sync_put, but
 * without waiting: 0 the record is queued and `p` kept until its
 * completion, which etcd_sync_collect hands back to worker w; -EAGAIN no
 * room (w's table full, or the shard's queue: nothing kept, nothing
 * counted; the caller waits, with etcd_sync_put); else refused as
 * etcd_sync_put says (`why`), nothing kept. */
int etcd_sync_defer(struct etcd_sync *s, unsigned w, uint32_t slot, uint32_t node_gen,
		    const struct pod_spec *pod, uint64_t id, const struct etcd_pending *p,
		    char *why, size_t len);

/* One deferred placement answered: rc 0 committed; else refused, and
 * `why` says so for the pod's answer (as etcd_sync_put's). */
struct etcd_done {
	struct etcd_pending p;
	int rc;
	char why[SHMSCHED_MESSAGE_MAX];
};

/* Worker `w`'s deferred placements answered since its last call, up to
 * `max` into out (each once); when none is and some are pending, waits
 * up to wait_ns for one. Returns how many. */
size_t etcd_sync_collect(struct etcd_sync *s, unsigned w, struct etcd_done *out, size_t max,
			 int64_t wait_ns);
/* Worker `w`'s deferred placements not yet collected. Its own thread. */
size_t etcd_sync_pending(const struct etcd_sync *s, unsigned w);

/* Async: the records in flight at most (the table of their placements),
 * and a placement answered placed whose record etcd did not commit. */
#define ETCD_SYNC_ASYNC_MAX 16384
struct etcd_lost {
	uint64_t id;
	uint32_t node; /* its node's slot */
	int rc;        /* the committer's answer (commit_queue.h) */
	shard_name_t shard;
};
/* Async: the placements lost since the last call, up to max into out
 * (each once). Any thread. */
size_t etcd_sync_take_lost(struct etcd_sync *s, struct etcd_lost *out, size_t max);

/* The releasing thread, just before placement `id` is freed (a release,
 * an eviction, a drain, a resync; producers_persist.placement_freed):
 * its key deleted from etcd, not waited for (its lane keeps it after the
 * placement's put). A bound record (a counted placement of another host,
 * a cluster file's pod) deletes nothing. Not deleted (the key
 * stays, and a new owner counts it: room held, never an overcommit): a
 * shard not owned now, a fenced committer, a queue still full after
 * ETCD_SYNC_DELETE_TRIES ms. */
#define ETCD_SYNC_DELETE_TRIES 100
void etcd_sync_delete(struct etcd_sync *s, uint64_t id);

/* Counters: placements committed, refused (any error), other hosts'
 * placements counted on taking their shards, deletes not queued, and
 * placements written without their labels (version 1: labels over
 * PLACEMENT_LABELS_MAX bytes), and (async) placements answered placed and
 * then not committed. */
struct etcd_sync_counts {
	uint64_t committed, refused, counted, deletes_dropped, labels_dropped, lost;
	uint64_t queue_dropped, queue_unknown;
};
void etcd_sync_get_counts(struct etcd_sync *s, struct etcd_sync_counts *out);

/* The replication lag: records pushed to the owned shards' committers
 * and not yet answered by etcd (queued or in flight; sync and async
 * alike), and the oldest one's age in ms (0: none). Any thread; takes
 * each committer's lanes' locks in turn (commit_queue_window), so the
 * sum is no one instant's. */
void etcd_sync_lag(struct etcd_sync *s, int64_t *records, int64_t *oldest_ms);

#endif
