/* libshmsched-client: observing a daemon's state region, read-only.
 *
 * A daemon started with --name NAME keeps its cluster state in one
 * shared-memory file, /dev/shm/NAME (or NAME in a hugetlbfs mount): node
 * specs, what the pods placed on each node use, every placement record,
 * the producer identities and each worker's counters. An observer maps
 * that file read-only and reads it in place: no socket, no request to the
 * daemon, nothing written, no lock taken, and the daemon never waits for
 * an observer. The file outlives the daemon, so a crashed daemon's region
 * (kill -9) reads the same as a running one's; shmsched_observe_summary()
 * tells which it is.
 *
 * Who may observe is decided by the region file's permissions alone (the
 * daemon's --region-mode and --region-group; 0600, its own uid, by
 * default): whoever may read the file sees every node and placement.
 *
 * The read protocol (the "state region" part of shm/layout.h, O1-O4):
 *   O1  open: the region's header (magic, ABI version, kind, ready) and
 *       every section's size against the capacities in its meta, which
 *       the handle then copies once: every index is checked against the
 *       copy, whatever the shared meta says later.
 *   O2  strings (node names): the table's count loaded with acquire; an
 *       entry below it is complete, and still checked against the arena.
 *   O3  nodes: the current snapshot's index (acquire), its buffer's
 *       sequence (acquire; odd: being rewritten), a copy of what is
 *       needed, an acquire fence, the sequence again: changed, and the
 *       copy is thrown away and made again (a bounded number of times,
 *       then -EAGAIN). A copy that passed is checked against the
 *       buffer's checksum, so what a call returns is one snapshot exactly
 *       as the daemon published it.
 *   O4  counters (what nodes use, live placements, worker counters,
 *       connections): each loaded on its own, relaxed. They are figures
 *       of the moment, not one snapshot: two of them may come from
 *       instants a few placements apart while the daemon runs.
 *
 * Every byte of the region is treated as untrusted (a crash, or a writer
 * with write permission, may leave anything there): offsets, counts and
 * indices are checked before use and a damaged region is refused with a
 * message saying what is wrong, never followed. One thing no check can
 * catch: a writer that shrinks the file under the mapping makes reads
 * past the new end fault (SIGBUS), as for any mapped file; the daemon
 * never does, and the region's permissions decide who else could.
 *
 * Errors: functions that return int return 0 or a negative errno; those
 * that take `err` also write a message for a person there (NUL-terminated,
 * cut to err_len; err may be NULL when err_len is 0).
 *
 * Threads: every function but shmsched_observe_close() may be called from
 * any thread at any time, also concurrently on one handle (each call
 * copies what it reads into its own memory). A child process may use a
 * handle it inherited through fork().
 */
#ifndef SHMSCHED_OBSERVE_H
#define SHMSCHED_OBSERVE_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#ifndef SHMSCHED_EXPORT
#if defined(__GNUC__) || defined(__clang__)
#define SHMSCHED_EXPORT __attribute__((visibility("default")))
#else
#define SHMSCHED_EXPORT
#endif
#endif

/* The region observed when shmsched_observe_open() is given no name: the
 * daemon's default --name. */
#define SHMSCHED_OBSERVE_DEFAULT_NAME "shmsched"

/* Bytes of a node name kept in struct shmsched_observe_node, its NUL
 * included (Kubernetes node names have at most 253):
 * shmsched_observe_node_name() returns longer ones whole. */
#define SHMSCHED_OBSERVE_NODE_NAME_MAX 256

/* A read-only mapping of one state region. Opaque. */
struct shmsched_observer;

/* The region as a whole. */
struct shmsched_observe_summary {
	char name[64];           /* the region's name (the daemon's --name) */
	char path[512];          /* its file */
	uint64_t total_bytes;    /* its size */
	uint64_t page_bytes;     /* page size of this process's mapping */
	char page_info[160];     /* what backs it, as its creator found it */
	int daemon_running;      /* 1: a daemon holds the region now (its
				  * lock is taken); 0: none does */
	int32_t daemon_pid;      /* the daemon running on it, or the last */
	int clean_stop;          /* no daemon running: 1 when the last one
				  * stopped cleanly, 0 when it crashed or was
				  * killed; a daemon running: 0 */
	uint64_t starts;         /* daemons that have attached, the first too */
	uint64_t created_s;      /* CLOCK_REALTIME seconds */
	uint64_t started_s;      /* when the last daemon attached */
	uint64_t generation;     /* the current snapshot's: 1 for the first,
				  * +1 per node event batch */
	uint32_t nodes;          /* nodes in it */
	uint32_t node_slots;     /* slots in use or empty: node ids are below */
	uint32_t max_nodes;      /* capacities the region was made with */
	uint32_t max_placements;
	uint32_t max_strings;
	uint32_t strings;        /* strings interned now */
	uint64_t arena_bytes;
	uint32_t workers;        /* worker stats blocks in use */
	uint32_t producers;      /* producer identities in use */
	uint64_t placements;     /* live placement records */
	uint64_t bound_placements; /* of them, pods declared bound (a cluster
				    * file's running pods, a resync), which no
				    * producer owns */
	uint64_t recovered_placements; /* live records the last daemon found
					* when it attached */
	uint64_t rolled_back;    /* nodes whose counters its recount moved */
	uint64_t resyncs;        /* resyncs, and the pods they changed */
	uint64_t resync_added;
	uint64_t resync_removed;
	uint64_t resync_resized;
	uint32_t durability;     /* the store's mode: 0 none, 1 async, 2 sync */
};

/* A node of the current snapshot, and what it holds now. */
struct shmsched_observe_node {
	uint32_t node_id;        /* its slot: what a placed pod's answer names
				  * (struct shmsched_result.node_id) */
	uint32_t name_id;        /* its name's string id
				  * (shmsched_observe_string) */
	char name[SHMSCHED_OBSERVE_NODE_NAME_MAX]; /* NUL-terminated; cut to
						    * fit, see above */
	int64_t cpu_milli;       /* allocatable */
	int64_t mem_bytes;
	int64_t pods;
	int64_t used_cpu_milli;  /* what the pods placed on it use now (O4) */
	int64_t used_mem_bytes;
	int64_t used_pods;
	uint64_t placements;     /* live placement records on it (the pods
				  * declared bound included) */
	uint32_t labels;
	uint32_t taints;
	uint32_t gpus;           /* GPU devices */
	uint32_t cores;          /* cores for exclusive use (0: not opted in) */
	int cordoned;            /* 1: spec.unschedulable */
	int unreachable;         /* 1: tainted node.kubernetes.io/unreachable
				  * NoExecute: Unknown (its lease expired,
				  * shmschedd --node-monitor-grace-period) */
};

/* A producer identity (a uid and the name it connects under), which owns
 * the placements made for any of its connections. */
struct shmsched_observe_producer {
	uint32_t owner;          /* the identity's id, 1.. */
	uint32_t uid;
	char name[64];           /* NUL-terminated */
	uint32_t connections;    /* live connections under it now (O4) */
	uint64_t placements;     /* live placements it owns */
};

/* One worker's counters since its daemon started (O4). */
struct shmsched_observe_worker {
	uint32_t index;
	uint64_t pods;           /* pods taken from producers' rings */
	uint64_t placed;
	uint64_t unschedulable;
	uint64_t rejected;       /* refused before placing: a bad pod */
	uint64_t cancelled;      /* answered CANCELLED (shutdown) */
	uint64_t conflicts;      /* commits that lost to another worker and
				  * were placed again */
	uint64_t gave_up;        /* pods that lost too often: unschedulable */
	uint64_t bad_handles;    /* ring entries naming no slot */
	uint64_t completion_overflows; /* answers that found the ring full */
	/* The scheduling queue of this worker's producers' waiting pods,
	 * as kube-scheduler's metrics name them (libshmsched-client.so.3):
	 * scheduler_schedule_attempts_total{result} is placed (scheduled),
	 * unschedulable, gave_up (error), attempts from the queue included. */
	uint64_t pending_active;        /* scheduler_pending_pods{queue="active"} */
	uint64_t pending_backoff;       /* ...{queue="backoff"} */
	uint64_t pending_unschedulable; /* ...{queue="unschedulable"} */
	uint64_t pending_gated;         /* ...{queue="gated"}: always 0 */
	uint64_t preemption_attempts;   /* scheduler_preemption_attempts_total */
	uint64_t preemption_victims;    /* scheduler_preemption_victims (a sum) */
	/* scheduler_pod_scheduling_attempts: pods placed after 1, 2, 3-4,
	 * 5-8, 9-16 and more attempts (not cumulative) */
	uint64_t attempts[6];
	uint64_t waited;            /* pods that waited in the queue ... */
	uint64_t waited_placed;     /* ... and were placed */
	uint64_t timed_out;         /* ... answered at their deadline */
	uint64_t waiting_cancelled; /* ... cancelled by their producer */
	uint64_t forgotten;         /* ... whose producer went away */
	uint64_t queue_woken;       /* moved out of unschedulable by an event */
};

/* What this handle's snapshot reads have met (O3), for tests and tools. */
struct shmsched_observe_stats {
	uint64_t reads;          /* consistent copies returned */
	uint64_t retries;        /* copies thrown away because the daemon
				  * rewrote the buffer meanwhile */
	uint64_t refused;        /* reads that gave up (-EAGAIN) or found a
				  * stable copy whose checksum failed
				  * (-EBADMSG) */
};

/* Maps the state region called `name` (NULL: SHMSCHED_OBSERVE_DEFAULT_NAME)
 * read-only and checks it (O1). Returns 0 with the handle in *out, or a
 * negative errno with *out NULL and a message naming the region's file in
 * err:
 *   -EINVAL           out is NULL, or a bad name (1 to 63 of A-Z a-z 0-9
 *                     . _ -, not starting with '.')
 *   -ENOENT           no such region (no daemon of that name has run since
 *                     boot, or its region was removed)
 *   -EACCES           the file's permissions do not let this process read
 *   -EAGAIN           the region is being made: try again
 *   -EPROTONOSUPPORT  made by another version of shmsched (err names both
 *                     ABI versions)
 *   -EPROTO           not a state region (magic, kind, header sizes)
 *   -EBADMSG          damaged: capacities out of range, or a section whose
 *                     size they do not give (err says which)
 *   -ENOMEM           out of memory
 *   any other errno of open(2), fstat(2) or mmap(2)
 * Thread-safety: any thread; handles are independent. */
SHMSCHED_EXPORT int shmsched_observe_open(const char *name,
					  struct shmsched_observer **out,
					  char *err, size_t err_len);

/* Unmaps and frees. NULL: no-op. Never touches the region's contents.
 * Thread-safety: no other call on obs may be running or follow. */
SHMSCHED_EXPORT void shmsched_observe_close(struct shmsched_observer *obs);

/* Fills *out: the region, its daemon (whether one runs now: the lock
 * test), the current snapshot's generation and node count (O3), the
 * capacities, and the counters (O4; placements counted over the records).
 * Returns 0, or:
 *   -EINVAL   NULL arguments
 *   -EAGAIN   the snapshot kept changing under the read, or none has been
 *             published yet (a daemon still starting): try again
 *   -EBADMSG  the current snapshot's header is damaged, or it is odd or
 *             was never published and no daemon holds the region (a live
 *             daemon leaves neither; without one it never changes)
 * Thread-safety: any thread, concurrently on one handle. */
SHMSCHED_EXPORT int shmsched_observe_summary(struct shmsched_observer *obs,
					     struct shmsched_observe_summary *out,
					     char *err, size_t err_len);

/* Writes the nodes of the current snapshot, in node id order, to
 * out[0..max), and in *n_out how many there are (which may be more than
 * max: call again with more room), and the snapshot's generation in
 * *generation (NULL: not wanted). The nodes are one snapshot exactly
 * (O3, checked against its checksum); what they use and the placements
 * on them are counted now (O4). Cost: a copy of the snapshot's node specs
 * and a pass over the placement records.
 * Returns 0, or:
 *   -EINVAL   NULL obs or n_out, or out NULL with max > 0
 *   -EAGAIN   the daemon rewrote the snapshot under every try (node events
 *             faster than the copy), or none has been published yet
 *   -EBADMSG  a stable copy whose checksum fails, a node whose name is
 *             not in the string table, or a current snapshot that is odd
 *             or never published with no daemon holding the region: the
 *             region is damaged
 *   -ENOMEM   out of memory for the copy
 * Thread-safety: any thread, concurrently on one handle. */
SHMSCHED_EXPORT int shmsched_observe_nodes(struct shmsched_observer *obs,
					   struct shmsched_observe_node *out,
					   unsigned max, unsigned *n_out,
					   uint64_t *generation, char *err,
					   size_t err_len);

/* Writes the producer identities in use to out[0..max), in owner order,
 * and in *n_out how many there are (possibly more than max), with the
 * live placements each owns (O4). A slot the daemon frees and gives to
 * another identity while it is copied is copied again (a seqlock: never
 * half of one name and half of another).
 * Returns 0, or:
 *   -EINVAL   NULL obs or n_out, or out NULL with max > 0
 *   -EAGAIN   the daemon rewrote one identity under every try (not seen
 *             in practice: a slot is rewritten only when taken again)
 *   -ENOMEM   out of memory
 * Thread-safety: any thread, concurrently on one handle. */
SHMSCHED_EXPORT int shmsched_observe_producers(struct shmsched_observer *obs,
					       struct shmsched_observe_producer *out,
					       unsigned max, unsigned *n_out,
					       char *err, size_t err_len);

/* Writes each worker's counters to out[0..max) and in *n_out how many
 * workers the daemon runs (or ran) with (possibly more than max) (O4).
 * Returns 0, or -EINVAL (NULL obs or n_out, or out NULL with max > 0).
 * Thread-safety: any thread, concurrently on one handle. */
SHMSCHED_EXPORT int shmsched_observe_workers(struct shmsched_observer *obs,
					     struct shmsched_observe_worker *out,
					     unsigned max, unsigned *n_out);

/* Writes the name of node `node_id` (a placed pod's answer's node_id) in
 * the current snapshot to buf, NUL-terminated: what a producer that may
 * read the region uses instead of asking the daemon (shmsched_node_name()).
 * An id of a removed node may name a later node in the same slot.
 * Returns 0, or:
 *   -EINVAL   NULL obs, or buf NULL with len > 0
 *   -ENOENT   no node has that id now
 *   -ENOBUFS  the name and its NUL do not fit len bytes (buf then holds ""
 *             when len > 0)
 *   -EAGAIN   the snapshot kept changing under the read, or none has been
 *             published yet
 *   -EBADMSG  the node's name is not in the string table, or the current
 *             snapshot is odd with no daemon holding the region (damaged)
 * Thread-safety: any thread, concurrently on one handle. */
SHMSCHED_EXPORT int shmsched_observe_node_name(struct shmsched_observer *obs,
					       uint32_t node_id, char *buf,
					       size_t len);

/* Writes interned string `id` (e.g. a node's name_id) to buf,
 * NUL-terminated (O2). Returns 0, or:
 *   -EINVAL   NULL obs, or buf NULL with len > 0
 *   -ENOENT   no string has that id (the daemon frees the strings
 *             producers' templates added that nothing holds, at a start
 *             and after producers leave: an id copied earlier may be
 *             free, or name another string once reused)
 *   -ENOBUFS  it and its NUL do not fit len bytes (buf holds "")
 *   -EBADMSG  its entry lies outside the string arena (damaged)
 * Thread-safety: any thread, concurrently on one handle. */
SHMSCHED_EXPORT int shmsched_observe_string(struct shmsched_observer *obs,
					    uint32_t id, char *buf, size_t len);

/* Fills *out with what this handle's snapshot reads have met so far.
 * Returns 0, or -EINVAL (NULL arguments).
 * Thread-safety: any thread, concurrently on one handle. */
SHMSCHED_EXPORT int shmsched_observe_stats(const struct shmsched_observer *obs,
					   struct shmsched_observe_stats *out);

#ifdef __cplusplus
}
#endif

#endif
