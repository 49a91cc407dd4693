/* Other shards' placements, followed by a watch (issue 40, "Rules across
 * shards"; docs/design/multi-host.md): one thread per sharded host in
 * sync mode lists the shards it does not own (runs of them in key order,
 * each a key range under <prefix>shards/) at one revision, then watches
 * those ranges from that revision + 1 (coord/watch.h; every shard owned:
 * no list, no watch), and keeps every placement of a
 * shard this host does not own (shards/<s>/pods/<uid>, another host's
 * uid) in the ledger as a bound placement record (PLACEMENT_OWNER_BOUND)
 * with its pod group made of the value's namespace and labels (version 2,
 * coord/placement_value.h; a version 1 value: no group), so that
 * inter-pod affinity and topology spread count it and its room is held;
 * a delete of its key frees it. Its cookie is the hash of its uid, as
 * daemon/etcd_sync.c's count_shard gives the records it counts on a take,
 * so neither counts a placement the other has (see "claims").
 *
 * Claims: the shards this host owns (shard_watch_owned, told before
 * etcd_sync_owned reads a newly taken shard) are the take's: the watch
 * counts nothing there and stops following them (it lists the other
 * ranges again), and a record it holds there stays (the take's dedup
 * sees its cookie). A shard given up is the watch's again: it re-lists,
 * the shard's range included, adopting the bound records whose cookies
 * the list holds, and watches from the list's revision + 1.
 *
 * Staleness: a placement on another shard is seen here one watch lag
 * after its commit (measured in docs/design/multi-host.md); nothing is
 * re-checked at commit across shards. A compacted watch re-lists.
 * Bounded: at most max_records foreign records (a put past it is refused,
 * logged once a minute, and counted).
 *
 * Threads: its own thread; its records are made and freed under the
 * producers' lock (producers_locked), where frees of the placement table
 * and the intern table's writes belong. shard_watch_owned on the
 * membership thread, shard_watch_get_counts anywhere. */
#ifndef SHMSCHED_DAEMON_SHARD_WATCH_INTERNAL_H
#define SHMSCHED_DAEMON_SHARD_WATCH_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "coord/coord.h"
#include "shm/shm.h"

struct producers;
struct queue_events;
struct shard_watch;

struct shard_watch_config {
	const char *endpoints;
	const char *prefix; /* "/shmsched/<cluster>/" */
	const char *host;   /* this host's name, for its messages */
	uint64_t host_hash; /* the first half of this host's own uids, which
			     * are skipped (etcd_sync_host_hash: the name's
			     * hash, with the incarnation's number mixed in
			     * for an --ephemeral host) */
	struct cluster *cluster;
	struct placements *placements;
	struct producers *producers;
	struct queue_events *events; /* a freed record's room published; may be NULL */
	size_t max_records;          /* 0: SHARD_WATCH_DEFAULT_MAX */
};

#define SHARD_WATCH_DEFAULT_MAX 65536

/* Starts the thread. 0, or a negative errno with err saying why. */
int shard_watch_start(struct shard_watch **out, const struct shard_watch_config *cfg, char *err,
		      size_t errlen);
/* Stops the thread (within about 100 ms of a watch's poll) and frees.
 * The records it made stay. NULL: nothing. */
void shard_watch_stop(struct shard_watch *w);

/* The membership thread: the shards this host knows now (its nodes'
 * shards, `known`, nk) and owns (claims, `names`, n), before
 * etcd_sync_owned counts a new one. The watch follows the known shards
 * not owned; until the first call, nothing. */
void shard_watch_owned(struct shard_watch *w, const shard_name_t *known, size_t nk,
		       const shard_name_t *names, size_t n);

struct shard_watch_counts {
	uint64_t records;  /* foreign records held now */
	int64_t revision;  /* the last revision applied (0: none yet) */
	/* Events: puts and deletes of other hosts' placements seen by the
	 * watch, lists, placements not held (the bound, a table full), on
	 * nodes this host lacks, errors. The lag behind a commit is not
	 * known here (etcd's headers carry no time): compare revision with
	 * a commit's (docs/perf/2026-11-29-cross-shard-lag.md). */
	uint64_t puts, deletes, relists, refused, unknown_node, errors;
	/* Key ranges followed now (0: every shard owned, no watch), watch
	 * streams opened, events received from etcd (any key in the ranges:
	 * other hosts' placements, this host's own, lane and owner keys). */
	uint64_t ranges, streams, received;
};
void shard_watch_get_counts(struct shard_watch *w, struct shard_watch_counts *out);

#endif
