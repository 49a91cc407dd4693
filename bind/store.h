/* The durable store: placements, the node inventory and producer
 * identities on disk, in LMDB (Debian's liblmdb), so that a reboot (which
 * empties /dev/shm and with it the state region) loses nothing that the
 * durability mode promised.
 *
 * Values are opaque bytes (bind/store_codec.h encodes them); each is kept
 * with a 64-bit checksum of its key and bytes, checked when read back.
 * Tables: nodes (key: the node's name), placements (key: the placement id),
 * identities (key: the owner id), meta (the store's format version), afs
 * (key: a LocalQueue's namespace/name: admission fair sharing's usage).
 *
 * Placements arrive on the hot path: store_put_placement() and
 * store_del_placement() put an op on a bounded lock-free queue (no lock, no
 * allocation, no system call) and return its sequence number. One writer
 * thread drains the queue in batches: one LMDB write transaction per batch
 * (group commit); unless the mode is none, the commit flushes the batch's
 * data pages and the writer then flushes the meta page (MDB_NOMETASYNC and
 * mdb_env_sync: two fdatasyncs per batch however many ops it holds, in
 * the order that keeps the file sound through a machine crash); then it
 * publishes the batch's last sequence number as durable.
 *
 * Durability modes:
 *   none   written to LMDB (so a later start can read it) but never
 *          fsynced: a crash of the machine may lose any of it, or damage
 *          the file (then refused); a crash of the daemon alone loses
 *          nothing the writer committed.
 *   async  (the default) the writer commits and flushes every
 *          STORE_INTERVAL_MS (1 ms): a power loss loses the ops queued
 *          since the last completed flush: at most about one interval
 *          plus two batches' commit and flush time (measured: see
 *          docs/guides/operations.md). A full queue makes enqueuers wait (back-pressure).
 *   sync   a caller that must not answer before its op is durable calls
 *          store_wait(seq): it returns once that op's batch is committed
 *          and fsynced. The daemon answers PLACED only after that.
 *
 * Concurrency: the hot-path calls from any number of threads at once;
 * store_wait from any thread; the slow-path calls (nodes, identities,
 * replace, load) from one thread at a time, beside the writer (LMDB
 * serialises write transactions; this module serialises them first with
 * its own mutex, which also guards map growth).
 */
#ifndef SHMSCHED_BIND_STORE_H
#define SHMSCHED_BIND_STORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum store_durability {
	STORE_DURABILITY_NONE = 0,
	STORE_DURABILITY_ASYNC = 1,
	STORE_DURABILITY_SYNC = 2,
};

#define STORE_BLOB_MAX 8192u      /* a queued placement's bytes (a group's
                                   * labels and terms by value) */
#define STORE_QUEUE_SLOTS 2048u   /* queued ops, a power of two (x 8 KiB) */
#define STORE_INTERVAL_MS 1       /* the writer's group-commit interval */
#define STORE_FORMAT_VERSION 1u   /* the tables' layout, in meta */

struct store;

/* Opens or creates the store in directory `dir` (made 0700 if missing;
 * refused, -EPERM, unless it, its data.mdb and lock.mdb are ours: not
 * links, owned by the euid, not group- or other-writable, and every
 * directory above it owned by root or the euid and not open to others;
 * LMDB's data.mdb and lock.mdb in it) and starts its writer thread.
 * Returns 0, or a negative errno with a message naming the path:
 *   -EINVAL    bad arguments
 *   -EPROTO    the store's format version is not this program's (both named)
 *   -EBADMSG   damaged: not an LMDB file, truncated, or LMDB says corrupt
 *   any errno of mkdir, open, LMDB or pthread_create. */
int store_open(const char *dir, enum store_durability mode, struct store **out,
	       char *err, size_t err_len);

/* Commits (and syncs, per mode) everything queued, stops the writer,
 * closes. NULL is a no-op. */
void store_close(struct store *s);

enum store_durability store_mode(const struct store *s);
const char *store_durability_name(enum store_durability m);
/* "none", "async", "sync" -> *out. Returns 0 or -EINVAL. */
int store_durability_parse(const char *text, enum store_durability *out);

/* Hot path, any thread: queue the put of placement `id` (len <=
 * STORE_BLOB_MAX, checked: a longer one is counted as dropped and not
 * queued, returning 0) or its delete. Returns the op's sequence number
 * (>= 1). When the queue is full, waits for the writer (spinning, then
 * yielding): back-pressure, never a drop. */
uint64_t store_put_placement(struct store *s, uint64_t id, const void *blob,
			     uint32_t len);
uint64_t store_del_placement(struct store *s, uint64_t id);

/* Every op with a sequence number up to this one is committed (and
 * fsynced, unless the mode is none). Any thread. */
uint64_t store_durable_seq(const struct store *s);

/* Waits until op `seq` is durable, waking the writer first so that it
 * does not sleep out its interval. Returns 0, or -EIO when the writer has
 * failed (store_error() says why). Any thread. */
int store_wait(struct store *s, uint64_t seq);

/* The writer's failure, or "" while it works. */
const char *store_error(const struct store *s);

/* Slow path, one thread at a time: one transaction each, durable (per
 * mode) when they return. Names are at most 4096 bytes, blobs at most
 * 1 MiB (-E2BIG). Returns 0 or a negative errno with a message. */
int store_put_node(struct store *s, const char *name, size_t name_len,
		   const void *blob, size_t len, char *err, size_t err_len);
int store_del_node(struct store *s, const char *name, size_t name_len,
		   char *err, size_t err_len);
int store_put_identity(struct store *s, uint32_t owner, const void *blob,
		       uint32_t len, char *err, size_t err_len);

/* Replaces nodes, placements and identities with what `fill` writes, in
 * one transaction, after everything queued is committed: the daemon does
 * it when it resumes a state region, which is never older than the store. */
struct store_replace;
int store_replace_all(struct store *s,
		      int (*fill)(struct store_replace *w, void *arg), void *arg,
		      char *err, size_t err_len);
int store_replace_node(struct store_replace *w, const char *name,
		       size_t name_len, const void *blob, size_t len);
int store_replace_placement(struct store_replace *w, uint64_t id,
			    const void *blob, uint32_t len);
int store_replace_identity(struct store_replace *w, uint32_t owner,
			   const void *blob, uint32_t len);

/* Reads everything back, every value's checksum checked: nodes first,
 * then identities, then placements. A callback's non-zero return stops
 * the walk and is returned. Returns 0, or -EBADMSG naming the table and
 * key of a damaged value, or an LMDB error. */
struct store_visitor {
	int (*node)(void *arg, const char *name, size_t name_len,
		    const void *blob, size_t len);
	int (*identity)(void *arg, uint32_t owner, const void *blob, uint32_t len);
	int (*placement)(void *arg, uint64_t id, const void *blob, uint32_t len);
	void *arg;
};
int store_load(struct store *s, const struct store_visitor *v, char *err,
	       size_t err_len);

/* Admission fair sharing's records (bind/store_codec.h,
 * store_encode_afs), in table "afs", keyed by the LocalQueue's
 * "namespace/name": store_replace_afs makes the table exactly b[0..n) in
 * one write transaction (a slow-path call); store_put_afs writes (adds or
 * overwrites) b[0..n) in one write transaction, the other records kept
 * (the daemon's save at each sampling interval, of the LocalQueues whose
 * usage changed); store_load_afs visits each
 * value, checksums checked (a non-zero return from `visit` stops the walk
 * and is returned). 0, or an LMDB error or -EBADMSG with a message. */
struct store_blob {
	const void *key;
	size_t klen;
	const void *val;
	size_t len;
};
int store_replace_afs(struct store *s, const struct store_blob *b, size_t n,
		      char *err, size_t err_len);
int store_put_afs(struct store *s, const struct store_blob *b, size_t n,
		  char *err, size_t err_len);
int store_load_afs(struct store *s, int (*visit)(void *arg, const void *blob,
						 size_t len),
		   void *arg, char *err, size_t err_len);

/* How many entries each table holds, from LMDB's own counts (nothing is
 * read or checked). Returns 0 or an LMDB error with a message. */
int store_counts(struct store *s, uint64_t *nodes, uint64_t *placements,
		 uint64_t *identities, char *err, size_t err_len);

/* Checks a store without starting a writer or changing anything: LMDB's
 * own checks, then every value's checksum. The counts per table in out
 * (any may be NULL). Returns 0 or the first problem (as store_open,
 * store_load). For `shmsched store check DIR`. */
int store_check(const char *dir, uint64_t *nodes, uint64_t *placements,
		uint64_t *identities, char *err, size_t err_len);

/* What the store was built from (the daemon's record of its cluster input
 * and configuration, text of at most STORE_ORIGIN_MAX - 1 bytes), in meta
 * under "origin". store_put_origin() writes it (one transaction, durable
 * per mode); store_peek() reads it without creating anything: with
 * *has_state false and "" when DIR or its data.mdb does not exist, else
 * whether the nodes table holds anything and the record ("" when the
 * store predates it). The same ownership checks as store_open(), and a
 * data file ending before its last page extended as store_open() extends
 * it (the daemon's peek, before its open for writing). Return
 * 0 or a negative errno with a message naming the path. */
#define STORE_ORIGIN_MAX 512u
int store_put_origin(struct store *s, const char *origin, char *err,
		     size_t err_len);
int store_peek(const char *dir, bool *has_state, char *origin,
	       size_t origin_len, char *err, size_t err_len);

struct store_stats {
	uint64_t ops;         /* queued ops committed */
	uint64_t txns;        /* writer transactions (group commits) */
	uint64_t syncs;       /* fsyncs */
	uint64_t max_batch;   /* the largest batch */
	uint64_t full_waits;  /* enqueues that found the queue full */
	uint64_t dropped;     /* placements too large to queue */
};
void store_get_stats(const struct store *s, struct store_stats *out);

#endif
