/* The requests a producer makes of the daemon over the control socket (the
 * payloads of CONTROL_MSG_REQUEST / _RESPONSE, ingest/control_proto.h).
 * Types only; shared by the daemon (ingest/producers_requests.c) and the client
 * library (client/client.c). Slow path: registration, templates, node
 * events, releases, names. Pods themselves never travel here: they go
 * through the producer's region.
 *
 * Every request starts with struct op_request; what follows depends on its
 * kind. A refusal is an ERROR (errno and a text for a person), never a
 * RESPONSE. All integers little-endian, native alignment.
 *
 *   kind          arg              body after the header  RESPONSE
 *   ------------  ---------------  ---------------------  ---------------------------
 *   OP_REGISTER   0                none, or struct        struct op_registered, and
 *                                  op_register (a name)   the region's memfd (SCM_RIGHTS)
 *   OP_TEMPLATE   0                a Pod, Kubernetes JSON struct op_template
 *                 OP_TEMPLATE_     struct op_template_   struct op_template
 *                 SCOPED           scope, the scope, then
 *                                  a Pod, Kubernetes JSON
 *   OP_NODE_EVENT node_event_kind  ADD/UPDATE: a Node as  none (an empty payload)
 *                 (shm/cluster.h)  Kubernetes JSON;
 *                                  REMOVE/CORDON/UNCORDON/
 *                                  LEASE: the node's name
 *   OP_RELEASE    0                struct op_release      none
 *                                  (a placement id)
 *   OP_NODE_NAME  node id          none                   the name (no NUL)
 *   OP_RESOURCE   0                a resource name        struct op_resource
 *   OP_PLACEMENTS 0                struct op_list         struct op_placements: a page
 *                                                         of live placements, the
 *                                                         caller's own (an admin: all)
 *   OP_RESYNC     0                struct op_resync, and  struct op_resync_result
 *                                  a regular file of Pods
 *                                  (SCM_RIGHTS): admins
 *   OP_EVALUATE   0                struct op_evaluate     struct op_evaluated, and a
 *                                  (a template id)        sealed memfd of its bytes:
 *                                                         every node's filter result
 *                                                         and score (JSON; client.h)
 *   OP_PRIORITY_CLASS 0            a PriorityClass (or a  none
 *                                  list), Kubernetes JSON:
 *                                  admins
 *   OP_POLICY     op_policy_action APPLY: a policy's text struct op_policy_shown,
 *                                  (policy/policy.h):     then the text of the
 *                                  admins                 policy in force
 *   OP_DRAIN      op_drain_flags   struct op_drain, a pod struct op_drained, then
 *                                  selector, n_nodes      its report's text
 *                                  names, each NUL-ended: (lines, no NUL)
 *                                  admins
 *   OP_QUEUE      op_queue_action  APPLY: struct          struct op_queue_shown,
 *                                  op_queue_apply, the    then its report's text
 *                                  source's name, then    (lines, no NUL); METRICS
 *                                                         past one answer: a sealed
 *                                                         memfd of its text
 *                                  Kueue objects (JSON);
 *                                  DELETE: struct
 *                                  op_queue_delete;
 *                                  LIST, METRICS: none.
 *                                  admins
 *   OP_APPROVAL   op_approval_     REGISTER: struct       REGISTER: struct
 *                 action           op_approval_register,  op_approval_registered;
 *                                  then the selector;     PENDING: struct
 *                                  PENDING: none;         op_approval_pending and
 *                                  ANSWER: struct         its asks; ANSWER: none.
 *                                  op_approval_answer.    admins
 *   OP_FAILURE    op_failure_action REPORT: struct        REPORT: struct
 *                                  op_failure, then its   op_failure_result;
 *                                  reason (no NUL);       LIST: struct
 *                                  RELEASE: struct        op_pools_shown, then
 *                                  op_pool_release, the   its text (lines, no
 *                                  pool, the template's   NUL); RELEASE: struct
 *                                  "namespace/name" or    op_pools_shown
 *                                  none: admins; LIST:
 *                                  admins
 *
 * OP_REGISTER comes once per connection, before anything that names a
 * template; templates belong to the connection that registered them, and
 * so does the region: when the connection ends (however it ends), the
 * daemon stops reading the region and frees it.
 */
#ifndef SHMSCHED_INGEST_CONTROL_OPS_H
#define SHMSCHED_INGEST_CONTROL_OPS_H

#include <stdint.h>

#include "shmsched/wire.h"

enum op_kind {
	OP_REGISTER = 1,
	OP_TEMPLATE = 2,
	OP_NODE_EVENT = 3,
	OP_RELEASE = 4,
	OP_NODE_NAME = 5,
	OP_RESOURCE = 6,
	OP_PLACEMENTS = 7,
	OP_RESYNC = 8,
	OP_EVALUATE = 9,
	OP_PRIORITY_CLASS = 10,
	OP_POLICY = 11,
	OP_DRAIN = 12,
	OP_QUEUE = 13,
	OP_APPROVAL = 14,
	OP_FAILURE = 15,
};

struct op_request {
	uint32_t kind; /* enum op_kind */
	uint32_t arg;
};

struct op_registered {
	uint32_t n_slots;     /* slots in the region */
	uint32_t producer_id; /* the daemon's name for this producer, for logs */
};

struct op_template {
	uint32_t template_id; /* 1.. within this connection */
	uint32_t reserved;
};

/* OP_TEMPLATE's arg. OP_TEMPLATE_SCOPED (issue 41): the template's pods
 * may disrupt (preempt) only pods whose namespace both the connection's
 * policy rule and this scope allow: a producer narrows its own rights,
 * never widens them (the gateway sends each HTTP user's disruptNamespaces
 * so). The body is struct op_template_scope, scope_len bytes of scope text
 * (policy/policy.h's policy_scope_parse: namespace patterns separated by
 * ','; 0 bytes: none), then the Pod. Any other arg is refused (EPROTO). */
enum op_template_arg {
	OP_TEMPLATE_PLAIN = 0,
	OP_TEMPLATE_SCOPED = 1,
};
#define OP_TEMPLATE_SCOPE_MAX 4160u /* == POLICY_SCOPE_BYTES_MAX */
struct op_template_scope {
	uint32_t scope_len; /* <= OP_TEMPLATE_SCOPE_MAX */
	uint32_t reserved;  /* 0 */
};
_Static_assert(sizeof(struct op_template_scope) == 8, "op_template_scope is 8 bytes");

/* Gives back what a placement took: the placement's id, from its answer.
 * The daemon gives back exactly what it recorded for that placement, once,
 * and only to its owner (or an admin). */
struct op_release {
	uint64_t placement_id;
};

/* The body's size is the version check of this request: both sides
 * ship together (SHM_ABI_VERSION), and the daemon refuses any other. */
_Static_assert(sizeof(struct op_release) == 8, "op_release is 8 bytes");

/* OP_REGISTER's body: empty (the name ""), or the producer's name. The
 * daemon knows a producer by its uid and this name: every connection with
 * the same uid and name (at once, or after a reconnect) owns the
 * placements made under it, and may release them. */
#define OP_PRODUCER_NAME_MAX 64
struct op_register {
	char name[OP_PRODUCER_NAME_MAX]; /* NUL-padded; "" is a name too */
};

/* OP_PLACEMENTS: the page of live placements from `cursor` (0 first). */
struct op_list {
	uint32_t cursor;
	uint32_t reserved; /* 0 */
};

/* One live placement, as a listing shows it. */
struct op_placement {
	uint64_t placement_id;
	uint32_t node_id;
	uint32_t owner_uid;
	char owner_name[OP_PRODUCER_NAME_MAX];
	int64_t cpu_milli;
	int64_t mem_bytes;
	struct shmsched_devices devices;
	uint64_t cookie; /* the producer's id for the pod, as submitted; 0
			  * for a bound pod */
};

/* A page: `n` entries follow; `cursor` is where the next page starts, or
 * UINT32_MAX when this was the last. At most as many as fit a control
 * message. */
struct op_placements {
	uint32_t cursor;
	uint32_t n;
	struct op_placement entries[];
};

struct op_resource {
	uint32_t resource; /* index for struct shmsched_extra */
	uint32_t reserved;
};

/* OP_RESYNC: the pods bound on `node` ("": every node) are exactly those
 * in the file that comes with the request (ingest/resync.h). */
#define OP_RESYNC_FILE_MAX (UINT64_C(1) << 30) /* bytes of the file, at most */
struct op_resync {
	char node[256]; /* NUL-terminated */
};

/* OP_EVALUATE: one of the connection's templates, evaluated against every
 * node without placing it. */
struct op_evaluate {
	uint32_t template_id;
	uint32_t reserved; /* 0 */
};

/* The memfd that comes with the answer holds exactly `bytes` bytes. */
#define OP_EVALUATE_MAX_BYTES (UINT64_C(1) << 30)
struct op_evaluated {
	uint64_t bytes;
};

struct op_resync_result {
	uint64_t added, removed, resized, unchanged, skipped;
};

/* OP_POLICY: show the policy in force, read the daemon's --policy file
 * again, or apply the policy that comes in the body (at most
 * POLICY_BYTES_MAX bytes). A refused reload or apply leaves the old one in
 * force. The answer is the policy in force after it: this header, then
 * `text_bytes` bytes of its text exactly as read (none without one). */
enum op_policy_action {
	OP_POLICY_SHOW = 0,
	OP_POLICY_RELOAD = 1,
	OP_POLICY_APPLY = 2,
};
struct op_policy_shown {
	uint32_t loaded;     /* 1: a policy is in force; 0: the default */
	uint32_t rules;
	uint32_t text_bytes;
	uint32_t reserved;   /* 0 */
	char source[256];    /* NUL-terminated: its file, or who applied it */
};

/* OP_DRAIN (issue 38): one wave of a drain of the named nodes, planned
 * across all of them (ingest/producers_drain.c): every live placement on
 * them is evicted now unless a PodDisruptionBudget allows no more
 * disruptions (blocked, naming the budget), more than one budget selects
 * it (an error, as the Eviction API's 500), or it is a bound pod no
 * producer manages and OP_DRAIN_FORCE is not set (refused, as kubectl's
 * unmanaged pods). The caller cordons the nodes first and repeats the
 * request until nothing remains (kubectl drain's loop); its timeout is
 * the caller's. OP_DRAIN_DRY_RUN plans the wave and evicts nothing. */
enum op_drain_flags {
	OP_DRAIN_DRY_RUN = 1u,
	OP_DRAIN_FORCE = 2u,
	OP_DRAIN_PLACEMENT = 4u, /* the selector is one placement's id
				  * (decimal): only it, if on a named node
				  * (the Eviction API of one pod) */
	OP_DRAIN_SURGE = 8u,     /* each pod's replacement placed first, on a
				  * node not drained, its owner told
				  * (SHMSCHED_NOTICE_REPLACED); a pod whose
				  * replacement has no room is left
				  * (ingest/producers_drain.c) */
};
#define OP_DRAIN_NODES_MAX 1024u /* a whole plan in one wave (issue 38) */
#define OP_DRAIN_SELECTOR_MAX 1024u
struct op_drain {
	uint32_t n_nodes;      /* 1..OP_DRAIN_NODES_MAX names follow */
	uint32_t selector_len; /* <= OP_DRAIN_SELECTOR_MAX bytes of a label
				* selector (kubectl drain's --pod-selector:
				* key=value, key==value, key!=value, joined
				* by ','), before the names; 0: every pod */
};
/* The answer's header; `text_bytes` bytes of lines follow, one per pod
 * evicted, blocked, in error or refused (cut short, with a last line
 * saying how many more, to fit one control message). */
struct op_drained {
	uint32_t evicted;   /* this wave (dry run: would be) */
	uint32_t blocked;   /* by a budget that allows no disruption now */
	uint32_t errors;    /* selected by more than one budget */
	uint32_t unmanaged; /* bound pods, refused without OP_DRAIN_FORCE */
	uint32_t text_bytes;
	uint32_t reserved;  /* 0 */
};
_Static_assert(sizeof(struct op_drained) == 24, "op_drained is 24 bytes");

/* OP_QUEUE (issue 37): Kueue's objects (ResourceFlavor, Cohort,
 * ClusterQueue, LocalQueue) changed while the daemon runs
 * (ingest/producers_queue.c). APPLY adds the objects of the body or
 * replaces those of the same kind and name; DELETE removes one; either
 * builds a new quota tree from the daemon's objects as changed and puts
 * it in force, live placements' charges carried over by name; a refused
 * change leaves everything as it was. LIST changes nothing. The answer:
 * struct op_queue_shown, then `text_bytes` bytes of lines (each
 * ClusterQueue's quota, usage and borrowing; what an apply carried). */
enum op_queue_action {
	OP_QUEUE_LIST = 0,
	OP_QUEUE_APPLY = 1,
	OP_QUEUE_DELETE = 2,
	/* The daemon's own figures in the Prometheus text format (version
	 * 0.0.4), which no reader of the state region sees: Kueue's quota
	 * gauges and workload counts (when the daemon has quotas) and the
	 * node lifecycle's shmsched_node_* counts. Answered with or without
	 * Kueue objects; op_queue_shown's counts are 0 without them. */
	OP_QUEUE_METRICS = 3,
};
#define OP_QUEUE_SOURCE_MAX 256u
/* APPLY's body: this, `source_len` bytes naming the objects' source for
 * messages (a file's name; not read by the daemon), then the objects. */
struct op_queue_apply {
	uint32_t source_len; /* <= OP_QUEUE_SOURCE_MAX */
	uint32_t reserved;   /* 0 */
};
_Static_assert(sizeof(struct op_queue_apply) == 8, "op_queue_apply is 8 bytes");
/* DELETE's body: the kind ("ClusterQueue", ...) and the name (a
 * LocalQueue's as "namespace/name"), each NUL-terminated. */
struct op_queue_delete {
	char kind[32];
	char name[320];
};
_Static_assert(sizeof(struct op_queue_delete) == 352, "op_queue_delete is 352 bytes");
/* METRICS' text past one answer's room (CONTROL_MAX_PAYLOAD less this
 * header) comes whole in a sealed memfd (sealed_text_create) beside the
 * answer: `text_bytes` is then 0 and `fd_bytes` the memfd's size, at most
 * OP_QUEUE_METRICS_MAX_BYTES (the daemon cuts its text there, with a
 * "# N more bytes not shown" line). A text that fits comes inline, no fd,
 * `fd_bytes` 0, as before the fd existed (the word was reserved). */
#define OP_QUEUE_METRICS_MAX_BYTES (UINT32_C(64) << 20)
struct op_queue_shown {
	uint32_t objects;        /* Kueue objects in force */
	uint32_t cluster_queues;
	uint64_t carried;        /* APPLY/DELETE: placements charged again */
	uint64_t dropped;        /* ... left charged to nothing */
	uint32_t text_bytes;     /* inline, after this header */
	uint32_t fd_bytes;       /* METRICS: in the memfd; otherwise 0 */
};
_Static_assert(sizeof(struct op_queue_shown) == 32, "op_queue_shown is 32 bytes");

/* OP_APPROVAL (issue 38 item 3; KEP-4563's interceptors, kubernetes/
 * enhancements keps/sig-apps/4563-eviction-request-api): a manager
 * approves the voluntary disruption of the pods a label selector picks
 * (ingest/producers_approval.c). REGISTER puts the connection's one
 * registration in the table (the connection closed: it is gone); a drain
 * that would evict a pod it selects posts an ask instead and keeps the
 * pod; the manager fetches its asks (PENDING: every ask not yet answered,
 * each time) and answers each (ANSWER). The daemon never waits on a
 * manager: the drain's next wave reads the answer. A registration with
 * OP_APPROVAL_RECLAIM_TOO or OP_APPROVAL_PREEMPT_TOO is asked by quota
 * reclaim or priority preemption as well before either evicts a pod it
 * selects (ingest/producers_approval.c): the pod is kept, the preemptor
 * waits, and the answer wakes it. Those two flags came without a version
 * move: a daemon before them refuses them (EINVAL, "flags ... only"),
 * and a registration without them means what it meant. */
enum op_approval_action {
	OP_APPROVAL_REGISTER = 0,
	OP_APPROVAL_PENDING = 1,
	OP_APPROVAL_ANSWER = 2,
};
#define OP_APPROVAL_NAME_MAX 64u        /* bytes of a registration's name, NUL-padded */
#define OP_APPROVAL_SELECTOR_MAX 1024u  /* == OP_DRAIN_SELECTOR_MAX */
#define OP_APPROVAL_DEADLINE_MAX_MS (UINT32_C(24) * 3600 * 1000) /* a day */
#define OP_APPROVAL_NOT_BEFORE_MAX_MS OP_APPROVAL_DEADLINE_MAX_MS
enum op_approval_flags {
	OP_APPROVAL_FAIL_OPEN = 1u, /* no answer by the deadline: evict (else keep) */
	OP_APPROVAL_RECLAIM_TOO = 2u, /* asked by quota reclaim too (the drain always) */
	OP_APPROVAL_PREEMPT_TOO = 4u, /* asked by priority preemption too */
};
#define OP_APPROVAL_FLAGS_ALL \
	((uint32_t)(OP_APPROVAL_FAIL_OPEN | OP_APPROVAL_RECLAIM_TOO | OP_APPROVAL_PREEMPT_TOO))
/* REGISTER's body: this, then `selector_len` bytes of a label selector
 * (the drain's --pod-selector syntax; 0 bytes: every pod). */
struct op_approval_register {
	char name[OP_APPROVAL_NAME_MAX]; /* NUL-padded, not empty, printable */
	uint32_t deadline_ms;  /* 1..OP_APPROVAL_DEADLINE_MAX_MS: an ask's time to an answer */
	uint32_t flags;        /* enum op_approval_flags */
	uint32_t selector_len; /* <= OP_APPROVAL_SELECTOR_MAX */
	uint32_t reserved;     /* 0 */
};
_Static_assert(sizeof(struct op_approval_register) == 80, "op_approval_register is 80 bytes");
struct op_approval_registered {
	uint32_t registration; /* 1.., for logs */
	uint32_t reserved;
};
/* Why a pod would be disrupted. */
enum op_approval_reason {
	OP_APPROVAL_DRAIN = 1,
	OP_APPROVAL_RECLAIM = 2,
	OP_APPROVAL_PREEMPT = 3,
};
struct op_approval_ask {
	uint64_t ask_id;   /* for ANSWER */
	uint64_t placement_id;
	uint32_t reason;   /* enum op_approval_reason */
	uint32_t reserved;
	char pod[256];     /* "namespace/name", or "cookie N"; NUL-terminated */
	char node[256];    /* NUL-terminated */
};
_Static_assert(sizeof(struct op_approval_ask) == 536, "op_approval_ask is 536 bytes");
#define OP_APPROVAL_PAGE 64u /* asks in one PENDING answer, at most */
struct op_approval_pending {
	uint32_t n;        /* asks that follow */
	uint32_t more;     /* unanswered asks left out (the next PENDING has them) */
	struct op_approval_ask asks[];
};
enum op_approval_verdict {
	OP_APPROVAL_GRANT = 1,
	OP_APPROVAL_DENY = 2,
	OP_APPROVAL_NOT_BEFORE = 3, /* evict no sooner than not_before_ms from now */
};
struct op_approval_answer {
	uint64_t ask_id;
	uint32_t verdict;       /* enum op_approval_verdict */
	uint32_t not_before_ms; /* NOT_BEFORE: 1..OP_APPROVAL_NOT_BEFORE_MAX_MS; else 0 */
};
_Static_assert(sizeof(struct op_approval_answer) == 16, "op_approval_answer is 16 bytes");
/* OP_FAILURE (issue 38 item 5): a placed pod failed (REPORT, by its
 * owner: another producer's placement is refused, EPERM; an admin may
 * report any), and the pools quarantined for a template because their
 * pods fail together (daemon/quarantine_internal.h): LIST shows them,
 * RELEASE lifts a pool's (every template's, or one template's). */
enum op_failure_action {
	OP_FAILURE_REPORT = 0,
	OP_FAILURE_POOL_LIST = 1,
	OP_FAILURE_POOL_RELEASE = 2,
};
#define OP_FAILURE_REASON_MAX 256u
#define OP_POOL_NAME_MAX 256u /* a label value: 63 bytes in Kubernetes */
struct op_failure {
	uint64_t placement_id;
	uint32_t reason_len; /* <= OP_FAILURE_REASON_MAX bytes follow */
	uint32_t reserved;   /* 0 */
};
_Static_assert(sizeof(struct op_failure) == 16, "op_failure is 16 bytes");
/* What the report did (enum quarantine_verdict's numbers, and one more:
 * OP_FAILURE_UNPOOLED, the node has no pool label). */
#define OP_FAILURE_UNPOOLED 5u
struct op_failure_result {
	uint32_t verdict;
	uint32_t reserved;
};
_Static_assert(sizeof(struct op_failure_result) == 8, "op_failure_result is 8 bytes");
struct op_pool_release {
	uint32_t pool_len;     /* 1..OP_POOL_NAME_MAX bytes of the pool */
	uint32_t template_len; /* 0..OP_POOL_NAME_MAX bytes: "namespace/name" */
};
_Static_assert(sizeof(struct op_pool_release) == 8, "op_pool_release is 8 bytes");
struct op_pools_shown {
	uint32_t quarantined; /* pairs quarantined now */
	uint32_t released;    /* RELEASE: pairs lifted by it */
};
_Static_assert(sizeof(struct op_pools_shown) == 8, "op_pools_shown is 8 bytes");

#endif
