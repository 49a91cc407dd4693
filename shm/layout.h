/* The layout of every shmsched shared-memory region: types only.
 *
 * A region is one memfd, mapped whole by each process that uses it, at
 * whatever address that process gets. Nothing inside a region is a pointer:
 * every reference is a byte offset from the region's first byte.
 *
 * Header (offset 0, SHM_HEADER_SIZE bytes, little-endian, native alignment):
 *
 *   offset  size  field          meaning
 *   ------  ----  -------------  ---------------------------------------------
 *        0     8  magic          SHM_MAGIC ("SHMSCHED" read as a u64)
 *        8     4  abi_version    SHM_ABI_VERSION of the creator
 *       12     4  header_size    SHM_HEADER_SIZE of the creator
 *       16     8  total_size     bytes in the region (= the memfd's size)
 *       24     4  kind           enum shm_region_kind
 *       28     4  section_count  entries used in sections[], <= SHM_SECTION_MAX
 *       32     4  page_size      bytes per page the creator obtained (info only)
 *       36     4  ready          0 while the creator fills the region; then
 *                                SHM_READY, stored with release order
 *       40    24  reserved       zero
 *       64   384  sections[16]   { u64 offset; u64 size; u32 id; u32 reserved }
 *      448    64  reserved       zero
 *
 * Sections start at multiples of SHM_SECTION_ALIGN, after the header, in
 * increasing offset order, do not overlap, and end inside total_size. Each
 * id appears at most once.
 *
 * Version rule: SHM_ABI_VERSION changes with any change to this header or to
 * the layout of any section. Both sides of a region ship together, so a
 * reader accepts exactly its own version and refuses any other with a message
 * that names both versions (there is no compatibility window to get wrong).
 *
 * Read protocol: the creator writes every field and section, then stores
 * ready = SHM_READY with release order; an attacher loads ready with acquire
 * order and refuses the region (EAGAIN) until it reads SHM_READY. After that
 * the header never changes. Sections that change afterwards have their own
 * protocols (rings: rte_ring head/tail; snapshots: RCU), stated where defined.
 * An attacher that did not create the region treats every byte of it as
 * untrusted and validates it before use (shm/layout_check.c).
 *
 * Crashes: a producer region is a memfd: it lasts while any process maps
 * it or holds its fd. The creator seals its size, so a peer cannot shrink
 * it under another's mapping (which would SIGBUS). The state region is a
 * named file (see "The state region" below) that outlives the daemon.
 *
 * ---------------------------------------------------------------------
 * The state region (kind SHM_REGION_KIND_STATE)
 *
 * One per daemon name: /dev/shm/NAME (POSIX shm; MADV_HUGEPAGE advised),
 * or NAME in a hugetlbfs mount when the huge-page pool can hold it. Mode
 * and group as the daemon was told (--region-mode, --region-group; 0600 by
 * default): whoever may read the file may observe every placement. Its
 * sections, each described below by the struct at its start:
 *
 *   id  section               what                                  writer
 *   10  SHM_SECTION_META      struct state_meta                     control thread
 *   11  SHM_SECTION_STRINGS   struct intern_shared, entries, arena  control thread
 *   12  SHM_SECTION_SNAPSHOTS 2 x (struct state_snapshot + arrays)  control thread
 *   13  SHM_SECTION_LEDGER    shm/ledger.c's section: generations,
 *                             struct node_alloc per slot, change log workers
 *   14  SHM_SECTION_PLACEMENTS placements' header, then struct
 *                             placement_record[max_placements]      workers
 *   15  SHM_SECTION_IDENTITIES struct state_identity[STATE_IDENTITIES]
 *                                                                   control thread
 *   16  SHM_SECTION_WORKER_STATS struct state_worker_stats[STATE_WORKERS_MAX]
 *                                                                   each worker its own
 *
 * Exactly one daemon writes a state region: it holds an exclusive flock(2)
 * on the file for as long as it runs; a second daemon of that name is
 * refused, and the lock's absence tells an observer no daemon runs.
 *
 * Read protocol for observers (other processes, read-only mappings):
 *   O1  Attach as any region (header, ready, version); then check the
 *       sections' sizes against the meta's capacities before indexing.
 *   O2  Strings: load intern_shared.count with acquire (partner I1 in
 *       shm/intern.c); entries below it are complete. Bound-check each
 *       entry against the arena anyway (a crash can leave anything).
 *       A free entry (tag INTERN_TAG_FREE) names no string. An id copied
 *       from a record may be reused once a reclaim freed it (at a start,
 *       or while the daemon runs, after producers left: shm/intern.h):
 *       load intern_shared.epoch with acquire before copying the records
 *       and again after copying their strings; moved: read again (I2).
 *   O3  Snapshots: load meta.current_snapshot with acquire (partner S3),
 *       then that buffer's seq with acquire; odd: being rewritten, retry.
 *       Copy what is needed, then an acquire fence and load seq again:
 *       changed: retry (the buffer was reused meanwhile). Check the copy
 *       against the buffer's checksum if it must be exact.
 *   O4  Counters (node_alloc, placements, stats): each value loaded on
 *       its own, relaxed: figures, as the ledger's V1.
 * The observer that follows them is libshmsched-client's (client/observe.c,
 * include/shmsched/observe.h: steps R1-R5 there).
 * The writer of snapshots (shm/cluster.c):
 *   S1  Store seq + 1 (odd) relaxed, then a release fence; write the
 *       buffer (which no daemon thread reads: its last reader passed a
 *       grace period before it was chosen): only the slots that differ
 *       from the current snapshot are copied, then the events applied.
 *   S2  Store seq + 2 (even) with release, after the checksum (kept by
 *       the writer per changed slot; its formula: shm/snapshots.c).
 *   S3  Store meta.current_snapshot with release.
 *
 * What a crash leaves, and what a restarted daemon does with it: the
 * header and sections as they were; strings below the count; the current
 * snapshot (complete: a buffer is rewritten only while it is not current);
 * placement records whose owner is set (complete: P1 publishes the owner
 * last); node counters that may include commits whose record was never
 * filled, and may lack releases in flight. The daemon re-attaches, checks
 * every section (any damage: refused, with what is wrong), and recounts
 * every node's use from the live placement records (ledger_recount): so a
 * commit without a record is rolled back, and a placement with a record
 * counts once, whether or not its answer reached the producer. The
 * producer gets such a placement back, with its cookie, when it lists its
 * placements under its identity.
 */
#ifndef SHMSCHED_SHM_LAYOUT_H
#define SHMSCHED_SHM_LAYOUT_H

#include <stdint.h>

#include "shm/model.h"

#define SHM_MAGIC UINT64_C(0x44454843534d4853) /* "SHMSCHED" in memory order */
#define SHM_ABI_VERSION 12u /* 2: a placed slot names its devices; 3: and its
                            * placement id, which a release names; 4: the
                            * state region; 5: pod groups in the ledger
                            * and in placement records; 6: a slot's wait
                            * flags and deadline, cancel handles
                            * (include/shmsched/wire.h), the queue's
                            * figures in the worker stats, a placement
                            * record's priority and time; 7: a snapshot's
                            * checksum sums one term per slot; 8: the
                            * state meta records what the region was
                            * built from (origin); 9: an intern
                            * entry's tag (the uid charged, or free)
                            * and the strings' epoch, an identity
                            * slot's seqlock generation (issue 41); 10:
                            * OP_TEMPLATE's scoped form, a template's
                            * narrowing disrupt scope
                            * (ingest/control_ops.h, issue 41); 11:
                            * the notices header's `lost` count
                            * (include/shmsched/wire.h); 12: a
                            * notice's replaced_id and the REPLACED
                            * kind (SHMSCHED_NOTICE_VERSION 2) */
#define SHM_READY UINT32_C(0x59444552) /* "REDY"; any other value: not ready */
#define SHM_HEADER_SIZE 512u
#define SHM_SECTION_MAX 16u
#define SHM_SECTION_ALIGN 4096u
/* Regions are sized and aligned to 2 MiB whatever the page size obtained, so
 * a huge-page and a fallback region have the same layout. */
#define SHM_REGION_ALIGN (UINT64_C(2) << 20)

enum shm_region_kind {
	SHM_REGION_KIND_STATE = 1,    /* the daemon's cluster state */
	SHM_REGION_KIND_PRODUCER = 2, /* one producer's slots and rings */
};

/* Section ids. More arrive with the stages that own them. */
enum shm_section_id {
	SHM_SECTION_SUBMIT_RING = 1,     /* producer -> daemon handles */
	SHM_SECTION_COMPLETION_RING = 2, /* daemon -> producer handles */
	SHM_SECTION_SLOTS = 3,           /* struct shmsched_slot[] (shmsched/wire.h) */
	SHM_SECTION_NOTICES = 4,         /* struct shmsched_notices (shmsched/wire.h) */
	SHM_SECTION_META = 10,           /* the state region: see above */
	SHM_SECTION_STRINGS = 11,
	SHM_SECTION_SNAPSHOTS = 12,
	SHM_SECTION_LEDGER = 13,
	SHM_SECTION_PLACEMENTS = 14,
	SHM_SECTION_IDENTITIES = 15,
	SHM_SECTION_WORKER_STATS = 16,
};

struct shm_section {
	uint64_t offset;
	uint64_t size;
	uint32_t id;
	uint32_t reserved;
};

struct shm_header {
	uint64_t magic;
	uint32_t abi_version;
	uint32_t header_size;
	uint64_t total_size;
	uint32_t kind;
	uint32_t section_count;
	uint32_t page_size;
	uint32_t ready; /* accessed only with __atomic builtins; see above */
	uint8_t reserved0[24];
	struct shm_section sections[SHM_SECTION_MAX];
	uint8_t reserved1[64];
};

_Static_assert(sizeof(struct shm_section) == 24, "section entry is 24 bytes");
_Static_assert(sizeof(struct shm_header) == SHM_HEADER_SIZE, "header size");
_Static_assert(__builtin_offsetof(struct shm_header, sections) == 64,
	       "sections start at byte 64");
_Static_assert(__builtin_offsetof(struct shm_header, ready) == 36,
	       "ready is at byte 36");

/* --- the state region's records ------------------------------------- */

#define STATE_IDENTITIES 4096u   /* producer identities kept */
#define STATE_WORKERS_MAX 256u   /* worker stats blocks */
#define STATE_NAME_MAX 64u       /* NAME of /dev/shm/NAME, with its NUL */
#define STATE_ORIGIN_MAX 512u    /* state_meta.origin, with its NUL */

/* SHM_SECTION_META. */
struct state_meta {
	uint32_t max_nodes;        /* node slots: every per-node array's length */
	uint32_t max_placements;   /* placement records */
	uint32_t max_strings;      /* intern entries */
	uint32_t workers;          /* stats blocks in use */
	uint64_t arena_size;       /* intern arena bytes */
	uint32_t current_snapshot; /* 0 or 1: S3 (release), O3 (acquire) */
	uint32_t clean_stop;       /* 1 while no daemon runs after a clean stop */
	int32_t daemon_pid;        /* the daemon running (or last run) on it */
	uint32_t reserved0;
	uint64_t created_s;        /* CLOCK_REALTIME seconds */
	uint64_t started_s;        /* when the current (or last) daemon attached */
	uint64_t starts;           /* daemons attached, the first included */
	uint64_t recovered_placements; /* live records found at the last attach */
	uint64_t rolled_back;      /* node counters moved by the last recount */
	uint64_t resync_added;     /* pods a resync added, removed, resized */
	uint64_t resync_removed;
	uint64_t resync_resized;
	uint64_t resyncs;
	uint8_t durability;        /* the store's mode: 0 none, 1 async, 2 sync */
	uint8_t reserved1[7];
	struct res_names res;      /* resource names by index */
	char name[STATE_NAME_MAX]; /* the daemon's --name */
	char page_info[160];       /* what backs the region, for a person */
	/* What the nodes came from, NUL-terminated text: "cluster PATH (hash
	 * H); config ..." or "synthetic N:R seed S; config ...", written by
	 * the daemon that filled the region (from its inputs, or the store's
	 * record when rebuilt from the store); "" unknown. A later start
	 * compares its inputs with it (daemon/daemon.c). */
	char origin[STATE_ORIGIN_MAX];
};

/* SHM_SECTION_STRINGS starts with this; then max_strings entries (64-byte
 * aligned), then the arena (64-byte aligned): NUL-terminated strings. */
struct intern_shared {
	uint32_t max_strings;
	uint32_t count;       /* I1: release by the writer, O2: acquire */
	uint64_t arena_size;
	uint64_t arena_used;  /* the writer's */
	uint32_t epoch;       /* I2: moved (release) by a reclaim (before its
			       * grace period at run time, and after freeing)
			       * before any freed id is reused; O2 loads it

			       * (acquire) before and after a read (ABI 9) */
	uint32_t n_free;      /* entries below count whose tag is
			       * INTERN_TAG_FREE (shm/intern.h) */
};

struct intern_entry {
	uint64_t offset;      /* of the string in the arena */
	uint32_t len;         /* bytes, the NUL not counted */
	uint32_t hash;        /* shm/intern.c's hash of the bytes */
	int64_t number;       /* the string as a base-10 int64, if is_number */
	uint32_t is_number;
	uint32_t tag;         /* 0: the daemon's (kept); INTERN_TAG_FREE:
			       * free (len 0, its bytes "" and reusable);
			       * else the producer uid + 1 whose template
			       * added it, charged to that uid and freed at
			       * a start when no record holds it (ABI 9) */
};

/* SHM_SECTION_SNAPSHOTS: two buffers, each cluster_snapshots_section_size
 * (max_nodes) / 2 bytes from the section's start: this header, then present[max_nodes]
 * (uint8), nodes[max_nodes] (struct node_spec), allocatable[RES_MAX]
 * [max_nodes] (int64), shards[max_nodes / 64 + 1] (shm/cluster.h's struct
 * shard_summary), each 64-byte aligned, as shm/cluster.c lays them out. */
struct state_snapshot {
	uint64_t seq;         /* S1, S2, O3: even when stable */
	uint64_t generation;
	uint32_t n_slots;
	uint32_t n_nodes;
	uint32_t n_shards;
	uint32_t reserved;
	uint64_t checksum;    /* of the fields above but seq, and of one term
			       * per slot below n_slots: its index, present[]
			       * and nodes[] (cluster_snapshot_checksum,
			       * shm/snapshots.c; ABI 7) */
};

/* SHM_SECTION_IDENTITIES: a producer identity (uid, name). A placement's
 * owner is its index + 1. */
struct state_identity {
	uint32_t used;        /* stored last, with release; observers load
			       * it with acquire: uid and name complete */
	uint32_t uid;
	uint32_t connections; /* live connections under it now */
	uint32_t generation;  /* a seqlock over uid and name, odd while a
			       * reused slot is rewritten (shm/identity.h) */
	char name[64];        /* NUL-terminated */
};

/* SHM_SECTION_WORKER_STATS: one per worker, written by it alone (relaxed
 * stores: figures). Field for field the daemon's struct serve_stats. The
 * fields after `seq` are named after kube-scheduler's metrics, for the
 * waiting pods of that worker's producers (ABI 6). */
#define STATE_ATTEMPT_BUCKETS 6 /* pods placed after <= 1, 2, 4, 8, 16, more */
struct state_worker_stats {
	uint64_t pods;
	uint64_t rejected;
	uint64_t cancelled;
	uint64_t bad_handles;
	uint64_t completion_overflows;
	uint64_t placed;        /* scheduler_schedule_attempts_total{result="scheduled"} */
	uint64_t unschedulable; /* ...{result="unschedulable"} */
	uint64_t conflicts;
	uint64_t gave_up;       /* ...{result="error"}: every commit lost its race */
	uint64_t seq;
	/* scheduler_pending_pods{queue=...}: gauges, pods there now */
	uint64_t pending_active;
	uint64_t pending_backoff;
	uint64_t pending_unschedulable;
	uint64_t pending_gated;       /* always 0: no scheduling gates */
	/* scheduler_preemption_attempts_total, scheduler_preemption_victims */
	uint64_t preemption_attempts;
	uint64_t preemption_victims;
	/* scheduler_pod_scheduling_attempts: placed pods by the attempts they
	 * took, not cumulative: [0] 1, [1] 2, [2] 3-4, [3] 5-8, [4] 9-16,
	 * [5] more */
	uint64_t attempts[STATE_ATTEMPT_BUCKETS];
	/* waiting pods: parked at least once, and how they ended */
	uint64_t waited;
	uint64_t waited_placed;
	uint64_t timed_out;
	uint64_t waiting_cancelled;   /* by their producer */
	uint64_t forgotten;           /* their producer went away */
	uint64_t queue_woken;         /* moved out of unschedulable by an event */
	uint64_t reserved[4];
};

_Static_assert(sizeof(struct state_worker_stats) == 256, "worker stats: 256 bytes");
_Static_assert(sizeof(struct state_identity) == 80, "identity: 80 bytes");

/* The checksum of a snapshot's words: 64-bit, not cryptographic; it tells
 * an observer that the copy it made is the one the writer published. */
static inline uint64_t state_checksum(uint64_t h, const void *p, uint64_t len)
{
	const unsigned char *b = (const unsigned char *)p;
	uint64_t i = 0;
	for (; i + 8 <= len; i += 8) {
		uint64_t w;
		__builtin_memcpy(&w, b + i, 8);
		h = (h ^ w) * UINT64_C(0x100000001b3);
		h ^= h >> 29;
	}
	for (; i < len; i++)
		h = (h ^ b[i]) * UINT64_C(0x100000001b3);
	return h;
}

/* The fences of S1 (release) and O3 (acquire), for the writer and the
 * observers of snapshots. Under -fsanitize=thread GCC refuses a fence
 * (-Wtsan: ThreadSanitizer does not model fences); the fence stays and
 * the warning is silenced, since the other side of these fences is in
 * another process, through another mapping, where TSan sees nothing
 * either way. */
#if defined(__SANITIZE_THREAD__) && defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wtsan"
#endif
static inline void state_fence_release(void)
{
	__atomic_thread_fence(__ATOMIC_RELEASE);
}

static inline void state_fence_acquire(void)
{
	__atomic_thread_fence(__ATOMIC_ACQUIRE);
}

/* The full fences of a producer's doorbell (include/shmsched/wire.h: D1
 * on the daemon's worker, D2 in the client library), whose other side is
 * likewise in another process. */
static inline void state_fence_full(void)
{
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
}
#if defined(__SANITIZE_THREAD__) && defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif

#endif
