/* The ledger: what the pods placed on each node use right now, and the
 * change log that tells caches which nodes' use moved.
 *
 * Node specs change rarely and live in immutable snapshots (shm/cluster.h);
 * use changes with every placement and lives here, one cache-line-aligned
 * record per node slot, moved only by the commit protocol specified at the
 * top of shm/ledger.c (labels V1, C1-C4, U1, X1-X4, A1, NR1, L1-L4). Every counter
 * stays within the node's allocatable at every instant, under any number of
 * threads committing at once (invariant 1).
 *
 * Concurrency contract:
 * - Any thread may call any function here at any time, except that
 *   ledger_reset_node() needs the caller to know that no thread can reach
 *   the slot (shm/cluster.c calls it after an RCU grace period).
 * - ledger_reserve() never waits; ledger_account() and ledger_copy_ports()
 *   may spin while another thread holds a node's port table for a few
 *   dozen instructions.
 * - The views (ledger_load_used, ledger_load_devices) are not a
 *   consistent snapshot of a record: each counter is read on its own. The
 *   commit re-checks, so a stale view costs a conflict, never an
 *   overcommit.
 */
#ifndef SHMSCHED_SHM_LEDGER_H
#define SHMSCHED_SHM_LEDGER_H

#include <stdbool.h>
#include <stdint.h>

#include "shm/devices.h"
#include "shm/model.h"
#include "shm/offset.h"

/* Host ports held on one node at most (pods with host ports are rare:
 * agents and daemons); a pod that would pass it does not fit there. */
#define NODE_MAX_HOST_PORTS 32

/* Pod groups (shm/pod_group.h) counted on one node at most: a node holds
 * pods of at most this many distinct groups (kube's default is 110 pods a
 * node); a placement that would bring one more does not fit there
 * (-ENOSPC), as with host ports. */
#define NODE_MAX_GROUPS 128

/* Live use of a node by the pods placed on it. Which operation moves which
 * field, and with what order, is the protocol in shm/ledger.c. */
struct node_alloc {
	_Alignas(64) int64_t used[RES_MAX]; /* actual requests; used[RES_PODS] = pods (C1) */
	int64_t used_nonzero_cpu_milli;     /* with the 100m stand-ins (C4) */
	int64_t used_nonzero_mem_bytes;     /* with the 200Mi stand-ins (C4) */
	uint32_t gpu_used[NODE_MAX_GPUS];   /* milli taken per GPU device (C2) */
	uint64_t cores_used[CORE_WORDS];    /* exclusive cores held (C2) */
	uint32_t port_lock;                 /* 0 free, 1 held (C3) */
	uint32_t n_ports;                   /* under port_lock */
	struct host_port ports[NODE_MAX_HOST_PORTS]; /* under port_lock */
	/* The pods on the node by group (T1-T3): entries below n_groups are
	 * (group << 32) | pods of that group; an entry whose count is 0 is
	 * free for any group. A group may hold two entries (two placements
	 * that claimed one at once): readers add them up. */
	uint32_t n_groups;
	uint32_t term_pods; /* pods whose group has pod (anti-)affinity terms (T4) */
	uint64_t groups[NODE_MAX_GROUPS];
};

struct ledger;

/* Creates a ledger of `capacity` zeroed node records and an empty change
 * log in private memory. Returns NULL with errno EINVAL (capacity 0) or
 * ENOMEM. */
struct ledger *ledger_create(uint32_t capacity);

/* The bytes a ledger of `capacity` slots takes in the state region. */
uint64_t ledger_section_size(uint32_t capacity);

/* A ledger whose records, generations and change log live in `span` (its
 * section of the state region): `fresh` zeroes it; otherwise it re-attaches
 * what a previous daemon left there, whose counters the caller then
 * recomputes (ledger_recount). Returns NULL with errno EINVAL (capacity 0,
 * span too small), EPROTO (the section was made for another capacity) or
 * ENOMEM. */
struct ledger *ledger_create_in(struct shm_span span, uint32_t capacity,
				bool fresh);

/* Frees it (and its memory, if ledger_create made it). No other thread
 * may be using it. */
void ledger_destroy(struct ledger *l);

uint32_t ledger_capacity(const struct ledger *l);

/* The record of a slot (< capacity). */
struct node_alloc *ledger_node(struct ledger *l, uint32_t slot);

/* Every slot's record, [capacity]: ledger_node(l, i) is ledger_nodes(l) + i
 * (for loops over many slots, without a call per slot). */
struct node_alloc *ledger_nodes(struct ledger *l);

/* Clears a slot's record and moves its generation on (NR1): only when no
 * thread can reach the slot (a node added there, or removed from it). */
void ledger_reset_node(struct ledger *l, uint32_t slot);

/* The slot's generation: it moves on each time the slot gets a new node or
 * loses one, so a placement that remembers it can tell its node from a
 * later one in the same slot. Read (relaxed) inside an RCU read-side
 * section of a snapshot that holds the node: the node's own generation. */
uint32_t ledger_node_generation(const struct ledger *l, uint32_t slot);

/* Every slot's generation, [capacity], for loops over many slots: load
 * each as ledger_node_generation does (relaxed, NR1), under its rule. */
const uint32_t *ledger_node_generations(const struct ledger *l);

struct snapshot;

/* Whether a placement made on `slot` at generation `node_gen` is on a node
 * of `snap` still: the slot holds a node and it is the same node. Only
 * such a placement counts in its node's use (a recount, a resync, the
 * durable store); one whose node was removed counts nowhere. */
bool ledger_slot_current(const struct ledger *l, const struct snapshot *snap,
			 uint32_t slot, uint32_t node_gen);

/* Adds (sign +1) or removes (sign -1) a pod's use of a node without
 * checking it fits (A1): for pods already bound (loading a cluster) and
 * for releases. Requests, non-zero requests, one pod, its host ports, and
 * the devices of `dev` (NULL: none), one pod of its group. Returns 0, or
 * -ENOSPC when the node's port table or group table is full (nothing is
 * changed then). */
int ledger_account(struct ledger *l, uint32_t slot, const struct pod_spec *pod,
		   const struct device_assignment *dev, int sign);

/* Decides whether a pod's host ports are free beside those in use (the
 * NodePorts rule lives in workers/, not here). */
typedef bool (*ledger_ports_free_fn)(const void *arg, const struct pod_spec *pod,
				     const struct host_port *in_use, unsigned n);

/* The pods on a node by group (T1, V1): writes at most NODE_MAX_GROUPS
 * entries with a non-zero count into out[] (a group may come twice: add
 * them up) and returns how many. */
struct group_count {
	uint32_t group;
	uint32_t pods;
};
unsigned ledger_load_groups(const struct node_alloc *a,
			    struct group_count out[NODE_MAX_GROUPS]);

/* Pods placed or bound, on present nodes, whose group has pod affinity or
 * anti-affinity terms (T4): while it is 0, no placed pod's terms can
 * touch a new pod. Sequentially consistent (see ledger.c, T4). */
uint64_t ledger_term_pods(const struct ledger *l);

/* The inter-pod guard (T5 in ledger.c; bind/resolver.c uses it): the
 * lock that places pods under inter-pod rules one at a time; a pod with
 * terms announcing itself (+1) before it reads other nodes' groups and
 * withdrawing (-1) after its commit; and, after a commit made without the
 * lock, whether a pod with terms may have been placed unseen: one is
 * announced, or the term epoch moved from `epoch`, which the caller read
 * (ledger_term_epoch) before it placed. False means no rule can refuse
 * the commit. */
void ledger_interpod_lock(struct ledger *l);
void ledger_interpod_unlock(struct ledger *l);
void ledger_interpod_announce(struct ledger *l, int sign);
bool ledger_interpod_watch(struct ledger *l, uint64_t epoch);

/* The term groups (T6): every group with pod (anti-)affinity terms ever
 * placed or bound in this process, each once, in a list that only grows,
 * and an epoch that every such placement moves. ledger_term_groups() is
 * the list's length (UINT32_MAX once more than LEDGER_TERM_GROUPS were
 * seen: then any group may have terms that touch a pod);
 * ledger_term_group_at(i) its i-th id, or 0 while its writer has not
 * stored it yet (read again later). Any thread. */
#define LEDGER_TERM_GROUPS 4096u
uint64_t ledger_term_epoch(const struct ledger *l);
uint32_t ledger_term_groups(const struct ledger *l);
uint32_t ledger_term_group_at(const struct ledger *l, uint32_t i);

/* Sets the ledger's term_pods to 0: for the recount (shm/recount.h) only,
 * after it cleared every node's record and before it adds the records up
 * again, with no other thread running. */
void ledger_clear_term_pods(struct ledger *l);

/* Reserves a pod's use of a node if it fits (C1-C4, U1): each counter is
 * moved by a compare-and-swap that refuses to pass `allocatable` (the
 * node's, from the snapshot the caller placed with), in index order; then
 * the exact devices of `dev` (NULL: none); then one pod of its group
 * (T2); then the host ports, under the port try-lock, if `ports_free`
 * says they are free. On any refusal what
 * was taken is given back. Never waits, never overcommits.
 * Returns 0, or (nothing reserved):
 *   -EAGAIN      a resource, the pod count or one of the devices no longer
 *                fits (another placement got there first)
 *   -EBUSY       the node's port table is held by another placement
 *   -EADDRINUSE  a requested host port is in use
 *   -ENOSPC      the node's port table or group table is full */
int ledger_reserve(struct ledger *l, uint32_t slot,
		   const struct res_vec *allocatable, const struct pod_spec *pod,
		   const struct device_assignment *dev,
		   ledger_ports_free_fn ports_free, const void *arg);

/* Preemption (X1-X4 in shm/ledger.c): in one move, `pod` takes its use of
 * node `slot` and the n_victims pods of `victims` (with their devices,
 * victim_devs[k], NULL: none) give theirs back, each counter moved once
 * and never past `allocatable`, so the room the victims leave is the
 * preemptor's. `pod` takes no devices and no host ports. Returns 0, or
 * (nothing changed): -EAGAIN (a counter would pass allocatable even with
 * the victims gone: another placement took the room), -ENOSPC (the
 * node's group table is full). */
int ledger_swap(struct ledger *l, uint32_t slot, const struct res_vec *allocatable,
		const struct pod_spec *pod, const struct pod_spec *victims,
		const struct device_assignment *victim_devs, unsigned n_victims);

/* The used counters of a record, each loaded on its own (V1). */
void ledger_load_used(const struct node_alloc *a, struct res_vec *used,
		      int64_t *nonzero_cpu_milli, int64_t *nonzero_mem_bytes);

/* What is free of a node's devices now (V1). */
void ledger_load_devices(const struct node_alloc *a, const struct node_devices *d,
			 struct device_view *out);

/* Copies the node's host ports in use (at most NODE_MAX_HOST_PORTS) under
 * the port lock, waiting for it briefly if held (C3). Returns how many. */
unsigned ledger_copy_ports(struct node_alloc *a, struct host_port *out);

/* The change log (L1-L4): every change to a slot's counters
 * (ledger_account, a successful ledger_reserve, and a refused one that had
 * moved a counter before rolling back) appends the slot, after the
 * counters moved. A reader keeps an index into it and re-reads the slots
 * logged since, so a cache of per-node results (workers/class_index.c)
 * stays exact without rescanning every node. The log keeps the last
 * LEDGER_CHANGE_LOG_SLOTS entries; a reader further behind rescans. */
#define LEDGER_CHANGE_LOG_SLOTS 65536u /* a power of two */

/* Entries ever appended (L3). */
uint64_t ledger_changes_head(const struct ledger *l);

/* Whether a reader at `pos`, caching results for n slots, does better to
 * read all n again than to follow the log up to `head`: the log has
 * overwritten entries it has not read, or more wait than it has slots
 * (and 64 more). The test every cache over the log makes. */
static inline bool ledger_changes_rebuild(uint64_t head, uint64_t pos, uint64_t n)
{
	return head - pos > LEDGER_CHANGE_LOG_SLOTS || head - pos > n + 64;
}

/* Entry `idx` (< the head) (L4): returns 1 and sets *slot; 0 when its
 * writer has taken the index but not stored it yet (read it again later);
 * -1 when it has been overwritten (the reader is too far behind: rescan). */
int ledger_change_at(const struct ledger *l, uint64_t idx, uint32_t *slot);

/* Up to `max` entries from *pos (< head) by ledger_change_at(): their
 * slots into out[], *pos moved past them. Stops early at an entry whose
 * writer has not stored it yet (*pos stays on it: read it again later).
 * Returns how many were read, or -1 when an entry has been overwritten
 * (the reader is too far behind: rescan). For readers that take the log
 * in batches, to prefetch what a batch's slots will touch. */
int ledger_changes_read(const struct ledger *l, uint64_t *pos, uint64_t head,
			uint32_t *out, unsigned max);

/* The invariant checkers, for tests, soaks and the benchmark: counted now
 * over the nodes present in `snap`, with V1's loads, so exact only while
 * no placement or node event is in flight. */
struct snapshot;

/* Node counters (any resource, or the pod count) above the node's
 * allocatable: zero unless something is broken, or a cluster file's bound
 * pods already exceeded a node when it was loaded. */
uint64_t ledger_overcommits(const struct ledger *l, const struct snapshot *snap);

/* The pods the nodes hold (the sum of their pod counters). */
uint64_t ledger_pods(const struct ledger *l, const struct snapshot *snap);

/* GPU milli summed over every device, and exclusive cores held. */
void ledger_devices_in_use(const struct ledger *l, const struct snapshot *snap,
			   uint64_t *gpu_milli, uint64_t *cores);

#endif
