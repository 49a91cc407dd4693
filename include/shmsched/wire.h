/* shmsched wire records: a pod slot in a producer's region, as the
 * producer (through the client library) and the daemon see it. Types only.
 *
 * A producer region (shm/layout.h, kind SHM_REGION_KIND_PRODUCER) holds an
 * array of n_slots slots (shmschedd --slots, told at registration) and two
 * rings of 8-byte handles: the submit ring (producer -> daemon) and the
 * completion ring (daemon -> producer). A handle is a slot index.
 *
 * Ownership and ordering: a slot belongs to the producer until it enqueues
 * the slot's index on the submit ring, then to the daemon until the daemon
 * enqueues the index on the completion ring, then to the producer again.
 * The rings order the hand-overs: an enqueue releases what was written to
 * the slot before it, the matching dequeue acquires it (shm/ring.h).
 *
 * Trust: the daemon copies a slot out of shared memory once, then checks
 * the copy (ingest/record.c); a producer can write anything into its own
 * region at any time, and a bad slot is answered SHMSCHED_REJECTED with a
 * reason, never trusted. The version rule is the region's (shm/layout.h):
 * any change here changes SHM_ABI_VERSION.
 *
 * Waiting (SHM_ABI_VERSION 6): a pod whose slot says SHMSCHED_SLOT_WAIT
 * (or whose daemon waits by default and whose slot does not say
 * SHMSCHED_SLOT_NO_WAIT) and that fits no node now is not answered
 * UNSCHEDULABLE: it waits in the daemon's scheduling queue, its slot still
 * the daemon's, until it is placed (PLACED), its deadline_ns passes
 * (UNSCHEDULABLE, the message saying so), its producer cancels it
 * (CANCELLED) or the daemon shuts down (CANCELLED). To cancel, the producer
 * enqueues the slot's index with SHMSCHED_HANDLE_CANCEL set on the submit
 * ring: that handle hands nothing over; the daemon answers the slot
 * CANCELLED if the pod is still waiting, and ignores the handle otherwise
 * (the pod was answered, or is about to be: its one answer comes as usual).
 *
 * Notices (SHM_ABI_VERSION 6): the daemon also tells a producer of things
 * that happen to its placements, through its notices section: an array of
 * SHMSCHED_NOTICES records of struct shmsched_notice after a 64-byte
 * header whose first word, `consumed`, the producer writes (notices it has
 * read, counting from 0). The daemon writes notice number s into record
 * s % SHMSCHED_NOTICES only while s - consumed < SHMSCHED_NOTICES, then
 * enqueues (s % SHMSCHED_NOTICES) | SHMSCHED_HANDLE_NOTICE on the
 * completion ring. Kinds: SHMSCHED_NOTICE_EVICTED (the placement was
 * preempted: its pod must stop; what it held is given back already) and
 * SHMSCHED_NOTICE_REPLACED (a surge drain, OP_DRAIN_SURGE, placed a
 * replacement of the placement replaced_id: placement_id and node_id are
 * the replacement's, cookie the old pod's; start its pod there. The
 * EVICTED notice of replaced_id comes after it).
 * A notice that finds no room (the producer has 64 unread, or the
 * daemon's own box per worker is full in a large drain) is not written:
 * the daemon adds 1 to the header's `lost` instead (release), so the
 * producer knows to list its placements (OP_PLACEMENTS) and learn which
 * are gone; the placement is gone either way.
 *
 * Byte layout of struct shmsched_slot (little-endian, 640 bytes):
 *   offset  size  field
 *        0     8  cookie          producer's own id for the pod, returned as is
 *        8     4  template_id     1.. from template registration
 *       12     2  n_extra         extra requests used, 0..SHMSCHED_MAX_EXTRA
 *       14     2  flags           SHMSCHED_SLOT_WAIT or SHMSCHED_SLOT_NO_WAIT
 *                                 (not both), or 0: the daemon's default
 *       16     8  submit_ns       CLOCK_MONOTONIC when submitted
 *       24    64  extra[4]        { u32 resource; u32 reserved; i64 quantity }
 *       88     8  deadline_ns     a waiting pod: CLOCK_MONOTONIC time by which
 *                                 it must be placed, else it is answered
 *                                 UNSCHEDULABLE; 0: none (never with NO_WAIT)
 *       96     4  status          enum shmsched_status, written by the daemon
 *      100     4  node_id         SHMSCHED_PLACED: the node's id
 *      104     8  complete_ns     CLOCK_MONOTONIC when answered
 *      112   528  (union, by status)
 *                 SHMSCHED_PLACED: devices and the placement's id, 48
 *                 bytes, the rest unused:
 *      112     2    gpu_mask      bit i: GPU device i of the node
 *      114     2    gpu_milli     milli taken from each GPU in gpu_mask
 *      116     2    n_cores       exclusive cores: the bits set in cpuset
 *      118     2    reserved      0
 *      120    32    cpuset[4]     bit i of word i / 64: core i
 *      152     8    placement_id  the daemon's id for this placement: what
 *                                 a release names
 *                 SHMSCHED_UNSCHEDULABLE / _REJECTED / _CANCELLED: message,
 *                   why, NUL-terminated, cut with "..." if longer
 */
#ifndef SHMSCHED_WIRE_H
#define SHMSCHED_WIRE_H

#include <stdint.h>

#define SHMSCHED_MAX_EXTRA 4
#define SHMSCHED_MESSAGE_MAX 528
#define SHMSCHED_MAX_GPUS 16        /* bits of shmsched_devices.gpu_mask */
#define SHMSCHED_MAX_CORES 256      /* bits of shmsched_devices.cpuset */
#define SHMSCHED_CPUSET_WORDS 4

/* struct shmsched_slot.flags. */
#define SHMSCHED_SLOT_WAIT 0x1u    /* wait in the queue while no node fits */
#define SHMSCHED_SLOT_NO_WAIT 0x2u /* answer at once, whatever the default */
#define SHMSCHED_SLOT_FLAGS 0x3u   /* every flag there is */

/* A submit-ring handle with this bit set asks the daemon to cancel the
 * waiting pod in slot (handle & ~SHMSCHED_HANDLE_CANCEL); see above. */
#define SHMSCHED_HANDLE_CANCEL (UINT64_C(1) << 63)
/* A completion-ring handle with this bit set names notice record (handle &
 * ~SHMSCHED_HANDLE_NOTICE), not a slot; see above. */
#define SHMSCHED_HANDLE_NOTICE (UINT64_C(1) << 62)
#define SHMSCHED_NOTICES 64u

enum shmsched_notice_kind {
	SHMSCHED_NOTICE_EVICTED = 1,  /* placement_id was preempted */
	SHMSCHED_NOTICE_REPLACED = 2, /* placement_id replaces replaced_id */
};
/* 2: SHMSCHED_NOTICE_REPLACED, and replaced_id in the last 8 bytes of
 * what was the message (216 bytes, now 208). */
#define SHMSCHED_NOTICE_VERSION 2u

/* One notice, written by the daemon (256 bytes). */
struct shmsched_notice {
	uint32_t kind;          /* enum shmsched_notice_kind */
	uint32_t version;       /* SHMSCHED_NOTICE_VERSION */
	uint64_t placement_id;  /* the placement it is about */
	uint64_t cookie;        /* that pod's cookie, as submitted */
	uint32_t node_id;       /* its node */
	uint32_t reserved;      /* 0 */
	uint64_t complete_ns;   /* CLOCK_MONOTONIC when it happened */
	char message[208];      /* why, NUL-terminated */
	uint64_t replaced_id;   /* REPLACED: the placement replaced; else 0 */
};

/* The notices section: this header, then SHMSCHED_NOTICES records.
 *
 * The doorbell: a worker with nothing to do spins 2 ms, then sleeps, and
 * a sleeping worker polls again only every millisecond unless woken. So
 * it sets `asleep` (nonzero) before its last look at the submit ring and
 * clears it once it finds work again; a producer that has put handles on
 * the ring and then (after a full fence) reads `asleep` nonzero adds 1 to
 * `doorbell` and calls FUTEX_WAKE on it (a shared futex: the region is a
 * memfd both map). The worker sleeps on the doorbells of the producers it
 * serves along with its own word (futex_waitv), having read each doorbell
 * before that last look, so a ring it missed comes with a doorbell it has
 * not read. The client library does this in shmsched_submit() and
 * shmsched_cancel(). A producer that never rings waits for the worker's
 * next poll, as before; one that rings needlessly only wakes the worker
 * that serves it.
 *
 * The answer doorbell, the other way: a producer with pods in flight and
 * no answer may sleep instead of polling. It sets `answer_wait` to 1,
 * fences, looks at the completion ring once more and, finding no answer,
 * waits on `answer_wait` while it reads 1 (FUTEX_WAIT, shared). A daemon
 * that sets `answer_bell`, after it enqueues answers on a completion ring
 * (and a full fence), reads `answer_wait`; if nonzero it exchanges it for
 * 0 and, if it took a 1, calls FUTEX_WAKE on it. The client library does
 * this in shmsched_wait() (shm/answer_bell.c). */
struct shmsched_notices {
	uint32_t consumed;      /* written by the producer: notices read */
	uint32_t asleep;        /* written by the daemon: ring the doorbell */
	uint32_t doorbell;      /* written by the producer: rung so often */
	uint32_t lost;          /* written by the daemon: notices for this
				 * producer it could not deliver (this
				 * section full, or its own box); 0 from a
				 * daemon older than this field */
	uint32_t answer_wait;   /* the answer doorbell (below): set to 1 by
				 * the producer before it sleeps for answers,
				 * taken back to 0 by the daemon that wakes it */
	uint32_t answer_bell;   /* written by the daemon: 1 when it rings
				 * answer_wait; 0 from a daemon older than
				 * this field */
	uint32_t reserved[10];
	struct shmsched_notice notice[SHMSCHED_NOTICES];
};

enum shmsched_status {
	SHMSCHED_PENDING = 0,       /* not answered yet */
	SHMSCHED_PLACED = 1,        /* node_id holds the node, devices its devices */
	SHMSCHED_UNSCHEDULABLE = 2, /* message: kube-scheduler's "0/N nodes are available: ..." */
	SHMSCHED_REJECTED = 3,      /* message: what was wrong with the slot */
	SHMSCHED_CANCELLED = 4,     /* the daemon shut down before placing it, or
				     * (a waiting pod) its producer cancelled it */
	SHMSCHED_EVICTED = 5,       /* not a pod's answer: a notice that the
				     * placement placement_id was preempted */
	SHMSCHED_REPLACED = 6,      /* not a pod's answer: a notice that the
				     * placement placement_id was made to
				     * replace another (a surge drain) */
};

/* A request added to the template's: `resource` is an index in the
 * daemon's resource table (the client library resolves names), and
 * `quantity` is in the resource's unit (millicores for cpu, bytes, ...). */
struct shmsched_extra {
	uint32_t resource;
	uint32_t reserved; /* 0 */
	int64_t quantity;  /* >= 0 */
};

/* The exact devices a placement takes on its node, for the node agent to
 * apply (NVIDIA_VISIBLE_DEVICES, a cpuset cgroup) and for the release to
 * give back. All zero: the pod takes none. A pod sharing a GPU has one bit
 * in gpu_mask and gpu_milli below 1000; a pod taking whole GPUs has one bit
 * per device and gpu_milli 1000. cpuset holds exclusive cores only on a
 * node that opted in to them; n_cores is its bit count. */
struct shmsched_devices {
	uint16_t gpu_mask;
	uint16_t gpu_milli;
	uint16_t n_cores;
	uint16_t reserved; /* 0 */
	uint64_t cpuset[SHMSCHED_CPUSET_WORDS];
};

struct shmsched_slot {
	/* written by the producer */
	uint64_t cookie;
	uint32_t template_id;
	uint16_t n_extra;
	uint16_t flags;
	uint64_t submit_ns;
	struct shmsched_extra extra[SHMSCHED_MAX_EXTRA];
	uint64_t deadline_ns;
	/* written by the daemon */
	uint32_t status;
	uint32_t node_id;
	uint64_t complete_ns;
	union {
		struct {                            /* SHMSCHED_PLACED */
			struct shmsched_devices devices;
			uint64_t placement_id;
		};
		char message[SHMSCHED_MESSAGE_MAX]; /* any other status */
	};
};

_Static_assert(sizeof(struct shmsched_extra) == 16, "extra is 16 bytes");
_Static_assert(sizeof(struct shmsched_notice) == 256, "a notice is 256 bytes");
_Static_assert(sizeof(struct shmsched_slot) == 640, "a slot is 640 bytes");
_Static_assert(__builtin_offsetof(struct shmsched_notice, replaced_id) == 248,
	       "replaced_id at byte 248 of a notice");
_Static_assert(__builtin_offsetof(struct shmsched_slot, deadline_ns) == 88,
	       "deadline_ns at byte 88");
_Static_assert(__builtin_offsetof(struct shmsched_slot, status) == 96,
	       "status at byte 96");
_Static_assert(sizeof(struct shmsched_devices) == 40, "devices are 40 bytes");
_Static_assert(__builtin_offsetof(struct shmsched_devices, cpuset) == 8,
	       "cpuset at byte 8 of devices");
_Static_assert(__builtin_offsetof(struct shmsched_slot, devices) == 112,
	       "devices at byte 112");
_Static_assert(__builtin_offsetof(struct shmsched_slot, message) == 112,
	       "message at byte 112");
_Static_assert(__builtin_offsetof(struct shmsched_slot, placement_id) == 152,
	       "placement_id at byte 152");

#endif
