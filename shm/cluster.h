/* Cluster state: node specs in immutable snapshots published with RCU
 * (liburcu, QSBR flavour), the slot map, and the ledger of live use beside
 * them (shm/ledger.h).
 *
 * - A node keeps its slot for as long as it exists; removal empties the
 *   slot, and a later add may reuse it. Slots index every per-node array.
 * - A snapshot is never changed once published (invariant 4): a writer
 *   applies node add / update / remove / cordon / uncordon by building a
 *   new snapshot and publishing it; the old one is freed after a grace
 *   period, when no reader can still hold it.
 * - Live use (the ledger: struct node_alloc, one cache-line-aligned record
 *   per slot) lives outside snapshots: what pods use changes per placement,
 *   node specs change rarely. A removed node's record is cleared after the
 *   grace period of the snapshot that removed it.
 *
 * Concurrency contract:
 * - Readers are threads registered with urcu_qsbr_register_thread(). Between
 *   two quiescent states (urcu_qsbr_quiescent_state(), or offline periods)
 *   a reader may use the snapshot cluster_snapshot() returned; it must not
 *   keep it across a quiescent state.
 * - One writer at a time calls cluster_apply() (callers serialise writers).
 *   It returns after the old snapshot's grace period; it must not be called
 *   from inside a reader's critical section.
 * - The ledger: any thread, with the protocol of shm/ledger.c.
 */
#ifndef SHMSCHED_SHM_CLUSTER_H
#define SHMSCHED_SHM_CLUSTER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "shm/devices.h"
#include "shm/intern.h"
#include "shm/ledger.h"
#include "shm/model.h"
#include "shm/offset.h"

/* Snapshot slots per shard summary (a power of two). */
#define SNAP_SHARD_SLOTS 64u

/* What a shard's nodes have, so a scan can skip a shard whole. Computed
 * when the snapshot is built; covers present nodes only. */
struct shard_summary {
	int64_t max_allocatable[RES_MAX];
	uint32_t present;        /* nodes present in the shard */
	bool any_hard_taint;     /* a NoSchedule or NoExecute taint */
	bool any_unschedulable;  /* spec.unschedulable */
};

struct snapshot {
	uint64_t generation;    /* 1 for the first, +1 per publish */
	uint32_t n_slots;       /* slots in use or empty, <= the cluster's capacity */
	uint32_t n_nodes;       /* present nodes */
	uint32_t n_shards;      /* ceil(n_slots / SNAP_SHARD_SLOTS) */
	uint8_t *present;       /* [n_slots] 1 when the slot holds a node */
	struct node_spec *nodes;/* [n_slots] zeroed when empty */
	int64_t *allocatable[RES_MAX]; /* [r][n_slots]: structure of arrays */
	struct shard_summary *shards;  /* [n_shards] */
};

struct cluster;

enum node_event_kind {
	NODE_EVENT_ADD = 1,     /* a new node; its name must be new */
	NODE_EVENT_UPDATE = 2,  /* replace the spec of the node of that name */
	NODE_EVENT_REMOVE = 3,  /* remove the node of that name and its use */
	NODE_EVENT_CORDON = 4,  /* spec.unschedulable = true */
	NODE_EVENT_UNCORDON = 5,/* spec.unschedulable = false */
	/* The node's lease renewed (the admin socket's, daemon/lease_internal.h);
	 * never applied to a cluster (cluster_apply refuses it). */
	NODE_EVENT_LEASE = 6,
};

struct node_event {
	uint8_t kind;           /* enum node_event_kind */
	uint32_t name;          /* interned node name (all kinds) */
	struct node_spec spec;  /* ADD, UPDATE */
};

/* Creates an empty cluster (generation-1 snapshot with no node) with room
 * for `capacity` slots in private memory, using (not owning) `strings`.
 * Returns NULL with errno EINVAL or ENOMEM. The calling thread must be a
 * registered QSBR thread or call no reader function. */
struct cluster *cluster_create(struct intern *strings, uint32_t capacity);

/* Where a cluster lives in the state region (shm/layout.h). */
struct cluster_memory {
	struct shm_span snapshots; /* SHM_SECTION_SNAPSHOTS */
	struct shm_span ledger;    /* SHM_SECTION_LEDGER */
	uint32_t *current;         /* state_meta.current_snapshot */
};

/* The bytes the two snapshot buffers of `capacity` slots take. */
uint64_t cluster_snapshots_section_size(uint32_t capacity);

/* Where the two buffers of a snapshots section of `capacity` slots lie in
 * `span` (shm/layout.h): each one's header in headers[b], its arrays in
 * views[b] (present, nodes, allocatable, shards; the counts are left
 * alone). Reads and writes nothing in the span, so an observer may call it
 * on a read-only mapping. Returns 0, or -EINVAL when the span does not
 * hold them. Any thread. (shm/snapshots.c: no liburcu.) */
struct state_snapshot;
int cluster_snapshots_in(struct shm_span span, uint32_t capacity,
			 struct state_snapshot *headers[2],
			 struct snapshot views[2]);

/* The checksum a buffer's header carries (struct state_snapshot.checksum):
 * of s->generation, s->n_slots, s->n_nodes and the sum of one term per
 * slot below n_slots, of its index, present[] and nodes[] (the formula is
 * in shm/snapshots.c). An observer runs it over its copy to tell that the
 * copy is the one the writer published (O3). Any thread. */
uint64_t cluster_snapshot_checksum(const struct snapshot *s);

/* Its pieces, for a writer that keeps the sum as slots change: slot
 * `slot`'s term (slot < s->n_slots), the sum of every slot's term, and the
 * checksum of s's counts with a given sum. cluster_snapshot_checksum(s) is
 * cluster_checksum_of(s, cluster_slot_sum(s)). Any thread. */
uint64_t cluster_slot_term(const struct snapshot *s, uint32_t slot);
uint64_t cluster_slot_sum(const struct snapshot *s);
uint64_t cluster_checksum_of(const struct snapshot *s, uint64_t sum);

/* A cluster in `mem`: `fresh` sets up an empty one; otherwise it re-attaches
 * what a previous daemon left: checks the current snapshot (sequence,
 * sizes, checksum, each node's counts, names unique and interned in
 * `strings`) and rebuilds the name map; the ledger's counters are the
 * caller's to recount. Returns NULL with errno and a message in `err`:
 * EINVAL (capacity, sections too small), EPROTO, EBADMSG (damaged), ENOMEM. */
struct cluster *cluster_create_in(struct intern *strings, uint32_t capacity,
				  const struct cluster_memory *mem, bool fresh,
				  char *err, size_t err_len);

/* Frees everything. No reader may be running. */
void cluster_destroy(struct cluster *c);

/* Applies `n` events in order as one new snapshot, publishes it, waits for
 * the grace period of the old one and frees it. All or nothing: on an
 * error nothing is published. Returns 0, or a negative errno with a message
 * in `err`:
 *   -EEXIST  ADD of a name already present
 *   -ENOENT  UPDATE / REMOVE / (UN)CORDON of a name not present
 *   -ENOSPC  no free slot (capacity reached)
 *   -EINVAL  an unknown event kind, or a spec whose name differs
 *   -ENOMEM */
int cluster_apply(struct cluster *c, const struct node_event *events, size_t n,
		  char *err, size_t err_len);

/* The current snapshot (an acquire load, as rcu_dereference: see the
 * contract above). */
const struct snapshot *cluster_snapshot(const struct cluster *c);

/* The slots whose node changed (added, updated, removed, cordoned,
 * uncordoned) in the publishes after snapshot generation `from` up to
 * `to` (the reader's current snapshot's): written to out[] (a slot may
 * come more than once) and counted; -1 when the cluster no longer knows
 * (more than `max`, a batch of more than CLUSTER_SPEC_LOG / 2 events, or
 * publishes since that overran the log): then the caller starts over from
 * the whole snapshot. So a cache of per-node results (workers/engine.c)
 * follows node events by re-reading the changed slots alone. Any thread
 * that holds snapshot `to` (an RCU reader); the writer may be appending
 * meanwhile (N1 in cluster.c). */
#define CLUSTER_SPEC_LOG 4096u
#define CLUSTER_SPEC_ALL UINT32_MAX
int cluster_changed_slots(const struct cluster *c, uint64_t from, uint64_t to,
			  uint32_t *out, uint32_t max);

/* The slot of a node name in the current snapshot, or -1. Writer side. */
int64_t cluster_slot_of(const struct cluster *c, uint32_t name);

/* The ledger of the cluster's nodes: live use per slot, the commit
 * protocol and the change log (shm/ledger.h). It lives as long as the
 * cluster; its records follow the slots of the snapshots. */
struct ledger *cluster_ledger(const struct cluster *c);

uint32_t cluster_capacity(const struct cluster *c);

/* Nodes in the current snapshot: a figure any thread may read (a thread
 * that is not an RCU reader must not read a snapshot itself). */
uint32_t cluster_nodes(const struct cluster *c);

/* Snapshots retired so far: old buffers past their grace period (for
 * tests of the grace period). */
uint64_t cluster_snapshots_freed(const struct cluster *c);

/* Writes that copied every slot into the other buffer rather than the
 * slots the publish before changed (shm/cluster.c, catch-up): the first
 * write, one after a failed write or a batch of more than
 * CLUSTER_SPEC_LOG / 2 events. Writer side; for tests and figures. */
uint64_t cluster_full_copies(const struct cluster *c);

#endif
