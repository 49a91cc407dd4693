/* Cluster state: node specs in immutable snapshots published with RCU
 * (liburcu, QSBR flavour), and live allocation counters beside them.
 *
 * - A node keeps its slot for as long as it exists; removal empties the
 *   slot, and a later add may reuse it. Slots index every per-node array.
 * - A snapshot is never changed once published (invariant 4): a writer
 *   applies node add / update / remove / cordon / uncordon by building a
 *   new snapshot and publishing it; the old one is freed after a grace
 *   period, when no reader can still hold it.
 * - Allocation counters (struct node_alloc, one cache-line-aligned record
 *   per slot) live outside snapshots: what pods use changes per placement,
 *   node specs change rarely.
 *
 * Concurrency contract:
 * - Readers are threads registered with urcu_qsbr_register_thread(). Between
 *   two quiescent states (urcu_qsbr_quiescent_state(), or offline periods)
 *   a reader may use the snapshot cluster_snapshot() returned; it must not
 *   keep it across a quiescent state.
 * - One writer at a time calls cluster_apply() (callers serialise writers).
 *   It returns after the old snapshot's grace period; it must not be called
 *   from inside a reader's critical section.
 * - Counters: any thread, with the protocol of struct node_alloc.
 */
#ifndef SHMSCHED_SHM_CLUSTER_H
#define SHMSCHED_SHM_CLUSTER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "shm/devices.h"
#include "shm/intern.h"
#include "shm/model.h"

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

/* Host ports held on one node at most (pods with host ports are rare:
 * agents and daemons); a pod that would pass it does not fit there. */
#define NODE_MAX_HOST_PORTS 32

/* Live use of a node by the pods placed on it.
 *
 * Protocol (bind/resolver.c is the writer that matters):
 * - used[], used_nonzero_*: only __atomic operations. A placement moves
 *   each counter with a compare-and-swap that refuses to pass the node's
 *   allocatable, so no counter ever exceeds it, even for an instant; a
 *   release subtracts. Relaxed order throughout: each counter is its own
 *   fact, and nothing else is published through it.
 * - gpu_used[], cores_used[]: the same, per device: a GPU's milli move by
 *   a compare-and-swap that refuses to pass GPU_MILLI_PER_DEVICE, and a
 *   core's bit is set by a compare-and-swap that refuses a word where any
 *   wanted bit is already set. Relaxed, for the same reason.
 * - ports[] and n_ports: read and written only while holding port_lock
 *   (acquire on taking it, release on dropping it). A placement only tries
 *   the lock and counts a busy lock as a conflict: it never waits.
 * - A removed node's record is cleared only after a grace period, when no
 *   reader can still hold a snapshot that has the node, so no placement
 *   lands on a record that is being reused. */
struct node_alloc {
	_Alignas(64) int64_t used[RES_MAX]; /* actual requests; used[RES_PODS] = pods */
	int64_t used_nonzero_cpu_milli;     /* with the 100m stand-ins */
	int64_t used_nonzero_mem_bytes;     /* with the 200Mi stand-ins */
	uint32_t gpu_used[NODE_MAX_GPUS];   /* milli taken per GPU device */
	uint64_t cores_used[CORE_WORDS];    /* exclusive cores held */
	uint32_t port_lock;                 /* 0 free, 1 held */
	uint32_t n_ports;
	struct host_port ports[NODE_MAX_HOST_PORTS];
};

struct cluster;

enum node_event_kind {
	NODE_EVENT_ADD = 1,     /* a new node; its name must be new */
	NODE_EVENT_UPDATE = 2,  /* replace the spec of the node of that name */
	NODE_EVENT_REMOVE = 3,  /* remove the node of that name and its use */
	NODE_EVENT_CORDON = 4,  /* spec.unschedulable = true */
	NODE_EVENT_UNCORDON = 5,/* spec.unschedulable = false */
};

struct node_event {
	uint8_t kind;           /* enum node_event_kind */
	uint32_t name;          /* interned node name (all kinds) */
	struct node_spec spec;  /* ADD, UPDATE */
};

/* Creates an empty cluster (generation-1 snapshot with no node) with room
 * for `capacity` slots, using (not owning) `strings`.
 * Returns NULL with errno EINVAL or ENOMEM. The calling thread must be a
 * registered QSBR thread or call no reader function. */
struct cluster *cluster_create(struct intern *strings, uint32_t capacity);

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

/* The current snapshot (rcu_dereference: see the contract above). */
const struct snapshot *cluster_snapshot(const struct cluster *c);

/* The slot of a node name in the current snapshot, or -1. Writer side. */
int64_t cluster_slot_of(const struct cluster *c, uint32_t name);

/* The allocation record of a slot. */
struct node_alloc *cluster_alloc(struct cluster *c, uint32_t slot);
const struct node_alloc *cluster_alloc_const(const struct cluster *c,
					     uint32_t slot);

/* Adds (sign +1) or removes (sign -1) a pod's use of a node without
 * checking it fits: for pods already bound (loading a cluster) and for
 * releases. Requests, non-zero requests, one pod, its host ports, and the
 * devices of `dev` (NULL: none). Returns 0, or -ENOSPC when the node's port
 * table is full (nothing is changed then). Safe beside concurrent
 * placements (see struct node_alloc). */
int cluster_account(struct cluster *c, uint32_t slot, const struct pod_spec *pod,
		    const struct device_assignment *dev, int sign);

/* Decides whether a pod's host ports are free beside those in use (the
 * NodePorts rule lives in workers/, not here). */
typedef bool (*cluster_ports_free_fn)(const void *arg, const struct pod_spec *pod,
				      const struct host_port *in_use, unsigned n);

/* Reserves a pod's use of a node if it fits: each counter is moved by a
 * compare-and-swap that refuses to pass `allocatable` (the node's, from the
 * snapshot the caller placed with), in index order, rolling back on the
 * first refusal; then the exact devices of `dev` (NULL: none), each by a
 * compare-and-swap; then the host ports, under the port try-lock, if
 * `ports_free` says they are free. Never waits, never overcommits.
 * Returns 0, or (nothing reserved):
 *   -EAGAIN      a resource, the pod count or one of the devices no longer
 *                fits (another placement got there first)
 *   -EBUSY       the node's port table is held by another placement
 *   -EADDRINUSE  a requested host port is in use
 *   -ENOSPC      the node's port table is full */
int cluster_reserve(struct cluster *c, uint32_t slot,
		    const struct res_vec *allocatable, const struct pod_spec *pod,
		    const struct device_assignment *dev,
		    cluster_ports_free_fn ports_free, const void *arg);

/* What is free of a node's devices now, each counter loaded atomically
 * (relaxed): a view for filters and scores; the commit re-checks. */
void cluster_load_devices(const struct node_alloc *a, const struct node_devices *d,
			  struct device_view *out);

/* Copies the node's host ports in use (at most NODE_MAX_HOST_PORTS) under
 * the port lock, waiting for it briefly if held. Returns how many. */
unsigned cluster_copy_ports(struct node_alloc *a, struct host_port *out);

/* The used counters of a record, each loaded atomically (relaxed). */
void cluster_load_used(const struct node_alloc *a, struct res_vec *used,
		       int64_t *nonzero_cpu_milli, int64_t *nonzero_mem_bytes);

uint32_t cluster_capacity(const struct cluster *c);

/* The change log: every change to a slot's counters (cluster_account, a
 * successful cluster_reserve, and a refused one that had moved a counter
 * before rolling back) appends the slot, after the counters moved. A
 * reader keeps an index into it and re-reads the slots logged since, so a
 * cache of per-node results (workers/engine.c's class index) stays exact
 * without rescanning every node.
 *
 * Protocol: a writer takes index i with a release fetch-add on the head,
 * then stores the entry for i with release. A reader that loads the head
 * with acquire sees every counter change of the entries below it; an entry
 * it loads with acquire shows the changes before it. The log keeps the
 * last CLUSTER_CHANGE_LOG_SLOTS entries; a reader further behind rescans. */
#define CLUSTER_CHANGE_LOG_SLOTS 65536u /* a power of two */

/* Entries ever appended. */
uint64_t cluster_changes_head(const struct cluster *c);

/* Entry `idx` (< the head): returns 1 and sets *slot; 0 when its writer
 * has taken the index but not stored it yet (read it again later); -1 when
 * it has been overwritten (the reader is too far behind: rescan). */
int cluster_change_at(const struct cluster *c, uint64_t idx, uint32_t *slot);

/* Snapshots freed so far (for tests of the grace period). */
uint64_t cluster_snapshots_freed(const struct cluster *c);

#endif
