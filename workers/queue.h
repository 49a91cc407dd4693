/* The scheduling queue: pods that asked to wait and fit nowhere yet, kept
 * in kube-scheduler's three queues (pkg/scheduler/backend/queue/
 * scheduling_queue.go), and the cluster events that move them.
 *
 * - activeQ: pods to attempt now, highest priority first, then the one
 *   queued earliest (PrioritySort's Less: priority, then the time it was
 *   last queued).
 * - backoffQ: pods an event may have helped, waiting out their backoff:
 *   podInitialBackoffSeconds doubled per attempt after the first, at most
 *   podMaxBackoffSeconds (calculateBackoffDuration). When activeQ is empty
 *   the pod whose backoff ends first is attempted early (kube 1.33's
 *   SchedulerPopFromBackoffQ, on by default there).
 * - unschedulable: pods whose last attempt failed. They stay until an
 *   event that could resolve one of their recorded failure reasons
 *   arrives (a QueueingHint that says Queue), or for
 *   podMaxInUnschedulablePodsDuration (5 min) at most; then they move to
 *   backoffQ if still backing off, else to activeQ.
 *
 * Hints (what an event can resolve), per waiting pod and its recorded
 * reasons (the engine's diagnosis of its last attempt: which reason codes
 * some node gave, and which resources were insufficient somewhere):
 * - a node added, updated (labels, taints, allocatable) or uncordoned:
 *   the pod is woken when the node passes its static filters now
 *   (NodeUnschedulable, NodeName, TaintToleration, NodeAffinity, the GPU
 *   model): a node it cannot use helps nothing;
 * - a pod released from node X: resources, a pod slot, host ports or
 *   devices came free on X, which wakes a pod short of one of exactly
 *   those, and only if X passes its static filters (a cpu release does
 *   not wake a pod blocked by memory, nor one blocked by a taint on X);
 *   a pod refused only for resources and pod slots (and static filters)
 *   is woken only if it fits in what X has left now, less what the pods
 *   woken before it by this event ask (parking order): a release wakes as
 *   many such pods as its room holds, and a node added or uncordoned as
 *   many as fit on it;
 *   a released pod of a group may also end an anti-affinity or a spread
 *   skew anywhere in X's domains, which wakes pods refused by those rules
 *   wherever X is;
 * - a pod placed with a group may satisfy a pod affinity term or even
 *   out a spread: it wakes pods refused by those rules (published only
 *   while such a pod waits).
 * A pod is never woken by an event that cannot help it; an event that
 * might is enough (the attempt decides). A queue that misses events (it
 * fell a whole ring behind) wakes every unschedulable pod.
 *
 * The events: a ring every thread may publish to and every queue reads,
 * labelled E1-E5 in queue.c. A change is published after it is visible
 * (the ledger's counters, the new snapshot), so a queue that reads the
 * event reads the change.
 *
 * Concurrency: one struct sched_queue per worker, used by that worker
 * alone (or by the thread that stops the workers, after they stopped).
 * Time is passed in (now_ns), never read here, so tests step it by hand.
 * Memory: everything is allocated by queue_create(); nothing after.
 * Cost: park, pop, remove O(log n); absorbing one event O(unschedulable
 * pods) with a few compares each, and the static filters of the event's
 * node for the pods whose reasons match.
 */
#ifndef SHMSCHED_WORKERS_QUEUE_H
#define SHMSCHED_WORKERS_QUEUE_H

#include <stdbool.h>
#include <stdint.h>

#include "shm/shm.h"
#include "workers/plugins.h"

/* An event's codes: bit c (1..REASON_INSUFFICIENT) is reason code c that
 * the event may resolve; bit 0: the node itself changed, so any reason it
 * gave may be gone. */
#define QUEUE_EV_NODE 1u
#define QUEUE_CODE(c) (1u << (c))
/* An event's node when it has none (or a slot past 24 bits). */
#define QUEUE_ANY_NODE 0xffffffu

struct queue_event {
	uint32_t slot;  /* the node's slot, or QUEUE_ANY_NODE */
	uint32_t codes; /* what it may resolve (above) */
	uint16_t res;   /* with QUEUE_CODE(REASON_INSUFFICIENT): bit r,
			 * resource r came free */
};

/* The events ring: slots kept, a power of two. */
#define QUEUE_EVENTS 4096u

struct queue_events;

/* Creates an empty ring. Returns NULL with errno ENOMEM. */
struct queue_events *queue_events_create(void);
void queue_events_destroy(struct queue_events *ev);

/* Publishes `e` (E1, E2) after the change it announces is visible. Any
 * thread; wait-free. */
void queue_events_publish(struct queue_events *ev, const struct queue_event *e);

/* Events ever published. */
uint64_t queue_events_head(const struct queue_events *ev);

/* The event a release of `pod` from `slot` is, its devices `dev` (NULL:
 * none): resources it requested, a pod slot, its ports, its devices, and
 * with a group the inter-pod rules. */
struct queue_event queue_event_release(uint32_t slot, const struct pod_spec *pod,
				       const struct device_assignment *dev);

/* The event a node added, updated or uncordoned at `slot` is. */
struct queue_event queue_event_node(uint32_t slot);

/* Whether a pod refused by pod affinity or spread waits in any queue: only
 * then is a placement published (queue_event_placed). Relaxed: a pod
 * parked after a placement that read 0 here was attempted after that
 * placement, so it saw it. */
bool queue_events_want_placed(const struct queue_events *ev);

/* The event a pod placed with a group is (it may satisfy affinity and
 * spread anywhere). */
struct queue_event queue_event_placed(void);

/* --- one worker's queue --------------------------------------------------- */

struct queue_config {
	/* Pods are numbered owner * per_owner + index: an owner is the
	 * caller's (a producer's place among the worker's), index its own
	 * (a slot). owners * per_owner pods fit, at most 2^31. */
	uint32_t owners;
	uint32_t per_owner;
	uint64_t initial_backoff_ns; /* podInitialBackoffSeconds (1 s) */
	uint64_t max_backoff_ns;     /* podMaxBackoffSeconds (10 s) */
	uint64_t max_unschedulable_ns; /* podMaxInUnschedulablePodsDuration (5 min) */
	bool pop_from_backoff;       /* SchedulerPopFromBackoffQ */
	const struct plugin_ctx *ctx; /* the static filters' strings */
	/* The ledger whose change log tells whether anything was placed
	 * while a pod was attempted (E6 in queue.c), and whose counters tell
	 * the hints what room an event's node has; NULL: neither. */
	struct ledger *ledger;
};

#define QUEUE_NONE UINT32_MAX

enum queue_where {
	QUEUE_OUT = 0,         /* not queued (never, answered, or being attempted) */
	QUEUE_ACTIVE,
	QUEUE_BACKOFF,
	QUEUE_UNSCHEDULABLE,
	QUEUE_ATTEMPT,         /* popped: its attempt is under way */
};

/* A pod as it is parked after a failed attempt. */
struct queue_pod {
	/* Its scheduling spec for the static filters (the extra requests do
	 * not matter to them): must stay valid until the pod is answered or
	 * its owner purged. */
	const struct pod_spec *spec;
	struct res_vec request; /* what it asks, the slot's extras included */
	int32_t priority;
	uint64_t deadline_ns; /* answer it by then (queue_expired); 0: none */
	/* Why its attempt failed: bit c, reason code c given by some node;
	 * res: bit r, "Insufficient r" on some node. Both 0 with error. */
	uint32_t codes;
	uint32_t res;
	/* The attempt failed for another reason than the nodes (it lost
	 * every commit race): straight to backoffQ, as kube's error path. */
	bool error;
	/* The ledger's change head (ledger_changes_head) read before the
	 * attempt began: a pod refused by pod affinity or spread is woken at
	 * once when it moved (E6). */
	uint64_t change_head;
	/* Events before this position (queue_events_head) cannot help it:
	 * they told what its own attempt gave back (a gang's rollback), and
	 * waking it for them would repeat that attempt for ever. 0: any. */
	uint64_t events_from;
};

struct queue_stats {
	/* Gauges: pods in each queue now (scheduler_pending_pods{queue}). */
	uint64_t active, backoff, unschedulable;
	/* Counters. */
	uint64_t parked;     /* failed attempts queued */
	uint64_t popped;     /* attempts handed out */
	uint64_t woken;      /* unschedulable -> backoff or active by an event */
	uint64_t hints_skipped; /* (event, pod) pairs the hint said cannot help */
	uint64_t flushed;    /* unschedulable too long: moved anyway */
	uint64_t lost_events; /* times the queue fell behind: everything woken */
	uint64_t events;     /* events absorbed */
	uint64_t events_unwalked; /* of those, ones no parked pod could use,
				   * told without walking them (QS2) */
};

struct sched_queue;

/* Returns NULL with errno EINVAL (no room, too many pods) or ENOMEM. The
 * queue reads events published after this call. */
struct sched_queue *queue_create(const struct queue_config *cfg,
				 struct queue_events *ev);
void queue_destroy(struct sched_queue *q);

/* Pods it has room for: owners * per_owner. */
uint32_t queue_capacity(const struct sched_queue *q);

/* The id of an owner's pod, and back. */
uint32_t queue_id(const struct sched_queue *q, uint32_t owner, uint32_t index);
uint32_t queue_owner(const struct sched_queue *q, uint32_t id);
uint32_t queue_index(const struct sched_queue *q, uint32_t id);

/* Where pod `id` is. */
enum queue_where queue_where(const struct sched_queue *q, uint32_t id);

/* The node whose room woke pod `id` (a hint by room, see above), or
 * QUEUE_NONE. A pod so woken may be placed elsewhere: the caller then
 * publishes that node's room again (queue_event_room), so that another
 * pod is woken for it and no room is left unclaimed. Cleared when the pod
 * is parked again. */
uint32_t queue_woken_for(const struct sched_queue *q, uint32_t id);

/* The event "node `slot` has room for pods refused by resources": what a
 * pod woken for that room and placed elsewhere leaves behind. */
struct queue_event queue_event_room(uint32_t slot);

/* The pod's attempts so far (scheduler_pod_scheduling_attempts), and its
 * spec and deadline as parked. */
uint32_t queue_attempts(const struct sched_queue *q, uint32_t id);
const struct pod_spec *queue_spec(const struct sched_queue *q, uint32_t id);
/* What it asks as parked (queue_pod.request, the slot's extras
 * included), or NULL for an id out of range. */
const struct res_vec *queue_request(const struct sched_queue *q, uint32_t id);

/* Pod `id` failed an attempt at `now`: a new pod (QUEUE_OUT) or the one
 * popped (QUEUE_ATTEMPT). It goes to unschedulable (backoffQ on error),
 * its attempts counted, its backoff starting now. Returns 0, or -EINVAL
 * for an id out of range or already queued. */
int queue_park(struct sched_queue *q, uint32_t id, const struct queue_pod *p,
	       uint64_t now);

/* Reads the events published since the last call and moves the
 * unschedulable pods they can help (with `snap` for the static filters:
 * the current snapshot, read after the events). Returns pods moved. */
unsigned queue_absorb(struct sched_queue *q, const struct snapshot *snap,
		      uint64_t now);

/* Time passes: pods whose backoff ended move to activeQ; pods
 * unschedulable for max_unschedulable_ns to backoffQ or activeQ. Returns
 * pods moved. */
unsigned queue_tick(struct sched_queue *q, uint64_t now);

/* Moves unschedulable pod `id` as an event that may help it would (to
 * backoffQ while its backoff runs, else to activeQ), counted woken: for a
 * caller that knows what helps it where no event says so (a pod refused
 * by quota, daemon/wait.c). Returns true when it was unschedulable. */
bool queue_wake(struct sched_queue *q, uint32_t id, uint64_t now);

/* The next pod to attempt: activeQ's first, else (pop_from_backoff) the
 * backoffQ pod whose backoff ends first. It is QUEUE_ATTEMPT until
 * queue_park() or queue_done(). QUEUE_NONE when there is none. */
uint32_t queue_pop(struct sched_queue *q, uint64_t now);

/* Takes queued pod `id` out of its list for an attempt made now, as
 * queue_pop() would (a gang attempts its members together). Returns 0,
 * or -EINVAL when it is not queued (out, or in its attempt already). */
int queue_take(struct sched_queue *q, uint32_t id);

/* Pod `id` is answered (placed, or anything else): forgotten, from any
 * state. Returns true when it was queued or in an attempt. */
bool queue_done(struct sched_queue *q, uint32_t id);

/* A queued pod whose deadline is at or before `now` (QUEUE_NONE: none);
 * it stays where it is until queue_done(). */
uint32_t queue_expired(const struct sched_queue *q, uint64_t now);

/* Some queued or attempted pod of `owner` (QUEUE_NONE: none): for
 * answering or forgetting them all, one by one, with queue_done(). */
uint32_t queue_first_of(const struct sched_queue *q, uint32_t owner);

/* Pods queued now (or in their attempt), in all. */
uint32_t queue_len(const struct sched_queue *q);

/* Pods of `owner` queued now. */
uint32_t queue_owner_count(const struct sched_queue *q, uint32_t owner);

void queue_get_stats(const struct sched_queue *q, struct queue_stats *out);

/* Checks every internal structure (heaps ordered, positions and counts
 * consistent). Returns 0, or -EPROTO. For tests. */
int queue_check(const struct sched_queue *q);

#endif
