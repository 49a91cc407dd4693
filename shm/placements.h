/* The placement table: every placement the daemon has made for a
 * producer, with its owner, its node slot and that node's generation, and
 * exactly what it took (requests, devices, host ports), so that a release
 * names a placement by id and gives back exactly that, once, and only for
 * its owner (docs/concepts.md, invariant 7).
 *
 * A placement id is (generation << 32) | index: the generation of a record
 * moves on every time it is freed, so an id never names a later placement
 * that reused the record.
 *
 * Free records form a lock-free stack (a Treiber stack whose head carries
 * a tag against ABA): a worker takes one (from its own cache of records
 * popped in batches, PC1) before it places a pod and fills it after the
 * commit, without a system call; the releasing thread pushes it back.
 *
 * Protocol (labels cited by the atomics in placements.c):
 *   F1  Pop: load the head with acquire (partner F2), read the top
 *       record's next relaxed, and swing the head to (tag + 1, next) with
 *       a compare-and-swap (acquire on success): a pusher's record writes
 *       are then visible to the popper.
 *   F2  Push: store the record's next (relaxed), then swing the head to
 *       (tag + 1, index) with a release compare-and-swap.
 *       A pop may take a batch: the links from the head it loaded, the
 *       head swung past the last of them in the one compare-and-swap
 *       (while the tag stays, no record walked was popped or pushed).
 *   PC1  Each worker has a cache of free records taken off the stack in
 *       batches (placements_set_workers), so a placement moves no head
 *       every worker moves: takes and untakes go to the cache first, which
 *       a small lock guards (exchange with acquire, store 0 with release),
 *       held by its worker but for a steal (PC2), so a w shared by two
 *       threads stays safe. Frees (the releasing thread's) push to the
 *       stack (F2), whence caches refill.
 *   PC2  A take whose cache and the stack are empty steals one record from
 *       another worker's cache (under that one's lock; a plain take, from
 *       any worker's): a take fails only
 *       when every record is live or taken (a cache is refilled under
 *       its lock, so a batch in flight is waited for, not missed).
 *   PL1  The live figure is the shared count (placements_publish adds,
 *       placements_free subtracts: relaxed read-modify-writes) plus each
 *       worker's publishes (a relaxed store under its cache's lock),
 *       summed modulo 2^64 by placements_live: a figure, not exact while
 *       threads place and free.
 *   P1  A worker fills a record, then stores its owner with release: a
 *       thread that loads a non-zero owner with acquire sees the record.
 *   H1  A take at or past the high-water mark moves it past the record
 *       (relaxed compare-and-swap; a cache's batch, once, past its highest
 *       record): records at or past it have never been used, so scans
 *       (listings, the recount) stop there; records below it may be free
 *       (owner 0), which scans skip.
 *   P2  The releasing thread loads the owner with acquire (partner P1),
 *       checks the generation, and when it frees the record stores owner 0
 *       (relaxed) and a new generation before pushing it (F2, which orders
 *       them for the next popper).
 *   PN1  Each node slot below the capacity has a chain of the live records
 *       on it (private memory, like the free stack's links), for
 *       preemption, which reads one node's pods without a walk of the
 *       table. A publisher (P1 first) links its record at the chain's
 *       head: stores the record's link (relaxed), then swings the head
 *       with a release compare-and-swap. Only the freeing thread unlinks
 *       (before P2): the head with a compare-and-swap (a publisher may
 *       have pushed meanwhile: then it looks again), any other link with
 *       a plain store (release), which no publisher writes: they write
 *       only the head and their own record's link.
 *   PN2  A reader of a chain loads the head and each link with acquire
 *       (partners of PN1's release): it sees each record it reaches
 *       filled (P1 came before). It must hold off frees (run on the
 *       freeing thread, or under the lock frees are made under: the
 *       producers'), so no record it reaches is unlinked and reused
 *       meanwhile; records published meanwhile may or may not be seen.
 *   PN3  The freeing thread counts each record it unlinks from a chain
 *       (node_unlinks, relaxed: the chains' readers hold off frees, PN2,
 *       so the count they read is the one after the last free). A
 *       reader that keeps a summary of a chain keys it by (head, count):
 *       equal, the chain is the one it summed up; a record published
 *       since with a head it loaded before the walk is seen by a later
 *       key's change (PN1's release, PN2's acquire).
 * Pops and pushes are lock-free: a compare-and-swap fails only when
 * another thread moved the head meanwhile. The tag makes a head value
 * unique for 2^32 operations, which no pop spans.
 *
 * Concurrency: placements_take, _untake and _fill (and their _w forms) by
 * any worker;
 * placements_get, _free and _next by the one releasing thread (the
 * daemon's control thread); placements_live by anyone; the node chains
 * (placements_node_first, _node_next) as PN2 says.
 *
 * Cost: a publish links its record at its node's chain (one
 * compare-and-swap more); a free unlinks it, O(the node's pods).
 */
#ifndef SHMSCHED_SHM_PLACEMENTS_H
#define SHMSCHED_SHM_PLACEMENTS_H

#include <stdbool.h>
#include <stdint.h>

#include "shm/model.h"
#include "shm/offset.h"

/* The owner of pods declared bound (a cluster file's running pods, a
 * resync): an admin may release them; no producer identity owns them. */
#define PLACEMENT_OWNER_BOUND UINT32_MAX

/* One placement: what a release gives back, and what preemption weighs.
 * 304 bytes, in the state region (shm/layout.h). */
struct placement_record {
	uint32_t owner;          /* 0: free; else the owner's id (P1, P2):
				  * an identity's index + 1, or
				  * PLACEMENT_OWNER_BOUND */
	uint32_t gen;            /* the record's generation, >= 1 */
	uint32_t slot;           /* the node's slot */
	uint32_t node_gen;       /* the slot's generation when placed */
	struct res_vec request;  /* as the commit took it; pods counts 1 */
	int64_t nonzero_cpu_milli;
	int64_t nonzero_mem_bytes;
	struct device_assignment dev;
	uint8_t n_ports;
	struct host_port ports[POD_MAX_PORTS];
	uint32_t pod_name;       /* interned "namespace/name" (a producer's:
				  * its template's), 0 unknown */
	uint64_t cookie;         /* the producer's id for the pod, as submitted */
	uint32_t group;          /* the pod's group (shm/pod_group.h), 0 none */
	uint8_t group_terms;     /* 1: the group has pod affinity terms */
	uint8_t reserved[3];     /* 0 */
	int32_t priority;        /* the pod's priority: who may preempt it */
	uint32_t quota;          /* the quota charge the placement holds
				  * (daemon/quota_charge_internal.h): 0 none
				  * (a record of an older daemon reads 0) */
	uint64_t placed_ns;      /* CLOCK_MONOTONIC when placed (0: bound, or
				  * from before a restart): preemption's
				  * "start time" */
};

struct placements;

/* A table of `capacity` records (1 .. 2^32 - 2) in private memory. The
 * kernel backs the records' pages only as they are first used. Returns
 * NULL with errno EINVAL or ENOMEM. */
struct placements *placements_create(uint32_t capacity);

/* The bytes a table of `capacity` records takes in the state region. */
uint64_t placements_section_size(uint32_t capacity);

/* For observers (read-only mappings): the records of a placements section
 * of `capacity` records, and in *high_water how many have been used (the
 * rest are zero). Each record's owner is loaded with acquire before the
 * rest is read (P1). NULL when the section does not hold such a table. */
const struct placement_record *placements_records_in(struct shm_span span,
						     uint32_t capacity,
						     uint32_t *high_water);

/* A table whose records live in `span` (its section of the state region):
 * `fresh` sets it up empty; otherwise it re-attaches the records a previous
 * daemon left there: a record with an owner is live, every other one is
 * free (the caller validates the live ones before trusting them). Returns
 * NULL with errno EINVAL (capacity, span too small), EPROTO (made for
 * another capacity) or ENOMEM. */
struct placements *placements_create_in(struct shm_span span, uint32_t capacity,
					bool fresh);
void placements_destroy(struct placements *t);

uint32_t placements_capacity(const struct placements *t);

/* Rebuilding a table from the durable store, before any other use: puts
 * `r` (owner set) at the index and generation `id` names, so the ids
 * producers hold stay valid. Returns 0, -EINVAL (index past the capacity,
 * generation 0, no owner) or -EEXIST (that record is taken). Then call
 * placements_reindex(). */
int placements_restore(struct placements *t, uint64_t id,
		       const struct placement_record *r);

/* Rebuilds the free stack and the live count from the records' owners:
 * after restores, before any other thread uses the table. */
void placements_reindex(struct placements *t);

/* Worker side: takes a free record for a placement about to be made (F1).
 * Returns its index, or -ENOSPC when every record is live. */
int64_t placements_take(struct placements *t);

/* Gives the table a cache of free records for each of `workers` workers
 * (PC1, PC2, PL1), before any other thread uses it. Returns 0, -EINVAL (0
 * workers, or set already) or -ENOMEM. */
int placements_set_workers(struct placements *t, unsigned workers);

/* placements_take, _untake and _publish for worker `w`: through its cache
 * (the plain calls when `w` has none). A take fails with -ENOSPC only
 * when the stack and every cache are empty (PC2). */
int64_t placements_take_w(struct placements *t, unsigned w);
void placements_untake_w(struct placements *t, unsigned w, uint32_t index);
void placements_publish_w(struct placements *t, unsigned w, uint32_t index,
			  uint32_t owner);

/* Worker side: gives back a taken record that was not used (the pod was
 * not placed) (F2). */
void placements_untake(struct placements *t, uint32_t index);

/* Worker side: fills the taken record `index` with the pod's use of
 * `slot` (generation `node_gen`), its devices (NULL: none), its name and
 * the producer's `cookie`, without publishing it: until
 * placements_publish() the record is the worker's alone, to read (for the
 * durable store, whose put must be queued before any release of the
 * placement can be). Returns the record; its id in *id. */
const struct placement_record *placements_prepare(struct placements *t,
						  uint32_t index, uint32_t slot,
						  uint32_t node_gen,
						  const struct pod_spec *pod,
						  const struct device_assignment *dev,
						  uint64_t cookie, uint64_t *id);

/* Worker side: publishes the prepared record `index` for `owner`
 * (non-zero) (P1). From then on the releasing thread may free it at any
 * moment: the worker does not read it again. */
void placements_publish(struct placements *t, uint32_t index, uint32_t owner);

/* Worker side, between placements_prepare() and placements_publish():
 * the quota charge (non-zero) the placement holds, which
 * placements_free() hands to the hook of placements_set_free_hook(). Also
 * the quota's replacement (daemon/quota_charge.c), on a live record, with
 * every charge and release held off. */
void placements_set_quota(struct placements *t, uint32_t index, uint32_t quota);

/* Called by placements_free() with each record whose quota is not 0,
 * before it is freed, on the freeing thread: every way a placement ends
 * frees its record exactly once (P2), so the hook gives back its quota
 * exactly once. */
typedef void (*placements_free_fn)(void *arg, const struct placement_record *r);

/* Sets the hook (NULL: none), before any thread but the caller's uses the
 * table. */
void placements_set_free_hook(struct placements *t, placements_free_fn fn,
			      void *arg);

/* placements_prepare() then placements_publish(). Returns the id. */
uint64_t placements_fill(struct placements *t, uint32_t index, uint32_t owner,
			 uint32_t slot, uint32_t node_gen,
			 const struct pod_spec *pod,
			 const struct device_assignment *dev, uint64_t cookie);

/* Releasing thread: the live record that `id` names, or NULL when it names
 * none (out of range, free, or freed and reused since: a generation that
 * is not the record's). */
const struct placement_record *placements_get(const struct placements *t, uint64_t id);

/* Releasing thread: frees the live record `id` names (placements_get() not
 * NULL) (P2, F2). */
void placements_free(struct placements *t, uint64_t id);

/* Releasing thread: the first live record with an index at or after
 * `*cursor`: returns its id and sets *cursor past it, or returns 0 when
 * there is none. For listings, in index order. */
uint64_t placements_next(const struct placements *t, uint32_t *cursor);

/* Any thread: the live record at `index` (its id in *id), or NULL when
 * it is free or out of range. For listings and the recount. */
const struct placement_record *placements_at(const struct placements *t,
					     uint32_t index, uint64_t *id);

/* What a record holds, as the pod fields ledger_account() takes (its
 * requests without the pod count, non-zero requests, host ports): a
 * release gives back, and a recount adds, exactly this. */
void placement_use(const struct placement_record *r, struct pod_spec *pod);

/* The index of record `r` of the table (a pointer placements_at() or
 * the free hook gave). */
uint32_t placements_index_of(const struct placements *t,
			     const struct placement_record *r);

/* Records below this index have been used at least once (H1). */
uint32_t placements_high_water(const struct placements *t);

/* One thread's (the daemon's warmer, daemon/warm.c): makes the kernel
 * back the pages of the records up to `ahead` past the high-water mark
 * (MADV_POPULATE_WRITE: the pages are faulted in, their bytes untouched,
 * so a worker filling a record there meanwhile loses nothing), so that
 * a worker taking a new record does not fault on it; at most 16 pages a
 * call (call again while it returns more than 0). Returns the records
 * newly backed; 0 when there were none, or when the kernel cannot (before
 * Linux 5.14: EINVAL), after which it does nothing. */
uint32_t placements_populate_ahead(struct placements *t, uint32_t ahead);

/* The node chains (PN1, PN2): records whose slot is below the capacity
 * are linked on their node's chain; others (a table smaller than the
 * cluster's node slots) are on none. */
#define PLACEMENTS_NIL UINT32_MAX

/* Whether every record of a node slot below `n_slots` is on a chain. */
bool placements_node_indexed(const struct placements *t, uint32_t n_slots);

/* The index of the first record on node slot `slot`'s chain, then of the
 * next after `index`; PLACEMENTS_NIL at the end. In no particular order
 * (the latest linked first); read each with placements_at(). */
uint32_t placements_node_first(const struct placements *t, uint32_t slot);
uint32_t placements_node_next(const struct placements *t, uint32_t index);

/* How many records have left node slot `slot`'s chain (PN3: counted by
 * placements_free after the unlink, and once more for every slot by
 * placements_reindex; wraps after 2^32). With the chain's first index,
 * a key that moves whenever the chain changes: a publish puts a record
 * not on the chain at its head, and only a free (counted) takes one off,
 * so the head cannot come back to an earlier value unchanged. Read it
 * where PN2's chains are read (frees held off), before the chain. */
uint32_t placements_node_unlinks(const struct placements *t, uint32_t slot);

/* The chains' heads and unlink counts of every slot below the capacity,
 * [capacity] each, for loops over many slots without a call per slot:
 * load a head as placements_node_first does (acquire, PN2) and a count
 * as placements_node_unlinks does (relaxed, PN3), under the same rule. */
const uint32_t *placements_node_heads(const struct placements *t);
const uint32_t *placements_node_unlink_counts(const struct placements *t);

/* Live records now (taken by workers and not freed), any thread, relaxed:
 * a figure. */
uint64_t placements_live(const struct placements *t);

#endif
