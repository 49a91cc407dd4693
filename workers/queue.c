/* The scheduling queue and its events: see queue.h.
 *
 * One worker's pods are numbered by the caller (owner * per_owner +
 * index), and each has one fixed entry, so parking and waking allocate
 * nothing. An entry is in at most one list:
 *   activeQ   a binary heap of ids: priority high first, then queued_ns,
 *             then the order it was queued (seq), so ties are stable;
 *   backoffQ  a binary heap: backoff_until first, then seq;
 *   unschedulable  a doubly linked list in the order pods were parked:
 *             its head is the pod unschedulable longest (the flush after
 *             max_unschedulable_ns reads only the head), and events walk
 *             it whole, but for an event whose node's room no pod there
 *             can use (QS1 sums the list up, QS2 decides from that sum:
 *             O(RES_MAX) instead of O(parked)).
 * Besides, a pod with a deadline is in the deadline heap from its first
 * park until it is answered.
 *
 * The events ring (struct queue_events), every thread a writer, every
 * queue a reader with its own position:
 *   E1  A writer takes index i by a relaxed fetch-add on head (the index
 *       is all it claims; E2 publishes).
 *   E2  It stores the entry for i, (lap << 56) | (slot << 32) | (codes <<
 *       16) | res (codes folded into 16 bits: ev_fold) with lap = (i / QUEUE_EVENTS + 1) mod 256, with release:
 *       the change the event announces (ledger counters, a snapshot) was
 *       made before, so a reader that acquires the entry sees it.
 *   E3  A reader loads head (acquire) and reads the entries from its
 *       position to it.
 *   E4  It loads entry i with acquire (partner of E2). A lap other than
 *       i's: the writer took i but has not stored it yet; stop, and read
 *       from i next time.
 *   E5  After the entry, it loads head again (acquire). Past i +
 *       QUEUE_EVENTS, a writer may have overwritten the entry: everything
 *       from the position on is lost. The check is sound because a
 *       writer's E1 precedes its E2 in its order, so a reader whose E4
 *       read a later writer's entry sees that writer's E1 in E5.
 *       A queue that loses events wakes every unschedulable pod.
 * Placements (queue_events_want_placed, queue_event_placed), for pods
 * refused by pod affinity or spread, which only a placement can help:
 *   E6  A worker that parks such a pod adds 1 to interpod_waiting with an
 *       acquire-release fetch-add, then loads the ledger's change head
 *       (the change log's L3, acquire); if it moved since before the
 *       attempt, the pod goes to backoffQ at once, as woken.
 *   E7  A worker that placed a pod with a group reads interpod_waiting by
 *       an acquire-release fetch-add of 0 after its commit (whose change
 *       log entry, L1, came first), and publishes an event when it is
 *       not 0. The two fetch-adds are ordered on the one counter: if E7's
 *       comes first, E6's acquires it, so the parking worker sees the
 *       commit's change log entry and wakes its pod; if E6's comes first,
 *       E7 reads a count above 0 and publishes. Either way no such pod
 *       misses a placement made while it was being attempted.
 *   Leaving unschedulable subtracts 1 (relaxed: it only lets placements
 *   skip publishing, and a pod that left is not waiting for one).
 */
#include "workers/queue.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

/* --- events ------------------------------------------------------------- */

#define EV_LAP_SHIFT 56
#define EV_SLOT_SHIFT 32
#define EV_SLOT_MASK UINT64_C(0xffffff)

_Static_assert((QUEUE_EVENTS & (QUEUE_EVENTS - 1)) == 0, "a power of two");
_Static_assert(REASON_INSUFFICIENT < 32, "reason codes fit a mask of 32 bits");
_Static_assert(RES_MAX <= 16, "resources fit an event's 16 bits");

struct queue_events {
	_Alignas(64) uint64_t head;            /* E1, E3, E5 */
	_Alignas(64) uint64_t interpod_waiting; /* E6, E7 */
	_Alignas(64) uint64_t ring[QUEUE_EVENTS]; /* E2, E4 */
};

struct queue_events *queue_events_create(void)
{
	struct queue_events *ev = aligned_alloc(64, sizeof(*ev));
	if (ev == NULL) {
		errno = ENOMEM;
		return NULL;
	}
	memset(ev, 0, sizeof(*ev));
	return ev;
}

void queue_events_destroy(struct queue_events *ev)
{
	free(ev);
}

static uint64_t ev_lap(uint64_t i)
{
	return (i / QUEUE_EVENTS + 1) & 0xff;
}

/* The codes an event can name: QUEUE_EV_NODE and the reasons a change on
 * a node can resolve (the static ones come back only through
 * QUEUE_EV_NODE). The ring carries them folded into 16 bits, bit k for
 * ev_codes[k]: every reason code need not fit there. */
static const uint8_t ev_codes[] = {
	0, /* QUEUE_EV_NODE */
	REASON_TOO_MANY_PODS, REASON_INSUFFICIENT, REASON_PORTS, REASON_GPU,
	REASON_CORES, REASON_SPREAD, REASON_POD_AFFINITY, REASON_POD_ANTI_AFFINITY,
	REASON_EXISTING_ANTI_AFFINITY,
};
_Static_assert(sizeof(ev_codes) <= 16, "an event's codes fold into 16 bits");

static uint16_t ev_fold(uint32_t codes)
{
	uint16_t w = 0;
	for (unsigned k = 0; k < sizeof(ev_codes); k++)
		if (codes >> ev_codes[k] & 1)
			w |= (uint16_t)(1u << k);
	return w;
}

static uint32_t ev_unfold(uint16_t w)
{
	uint32_t codes = 0;
	for (unsigned k = 0; k < sizeof(ev_codes); k++)
		if (w >> k & 1)
			codes |= 1u << ev_codes[k];
	return codes;
}

void queue_events_publish(struct queue_events *ev, const struct queue_event *e)
{
	/* E1, relaxed: only the index is claimed here. */
	uint64_t i = __atomic_fetch_add(&ev->head, 1, __ATOMIC_RELAXED);
	uint64_t slot = e->slot < QUEUE_ANY_NODE ? e->slot : QUEUE_ANY_NODE;
	uint64_t w = ev_lap(i) << EV_LAP_SHIFT | slot << EV_SLOT_SHIFT |
		     (uint64_t)ev_fold(e->codes) << 16 | e->res;
	/* E2, release: the announced change before the entry. */
	__atomic_store_n(&ev->ring[i & (QUEUE_EVENTS - 1)], w, __ATOMIC_RELEASE);
}

uint64_t queue_events_head(const struct queue_events *ev)
{
	/* E3. */
	return __atomic_load_n(&ev->head, __ATOMIC_ACQUIRE);
}

#define LOCAL_CODES (QUEUE_CODE(REASON_TOO_MANY_PODS) | QUEUE_CODE(REASON_PORTS) | \
		     QUEUE_CODE(REASON_GPU) | QUEUE_CODE(REASON_CORES) | \
		     QUEUE_CODE(REASON_INSUFFICIENT))
#define INTERPOD_CODES (QUEUE_CODE(REASON_SPREAD) | QUEUE_CODE(REASON_POD_AFFINITY) | \
			QUEUE_CODE(REASON_POD_ANTI_AFFINITY) | \
			QUEUE_CODE(REASON_EXISTING_ANTI_AFFINITY))
/* What only a placement can resolve. */
#define PLACED_CODES (QUEUE_CODE(REASON_SPREAD) | QUEUE_CODE(REASON_POD_AFFINITY))

struct queue_event queue_event_release(uint32_t slot, const struct pod_spec *pod,
				       const struct device_assignment *dev)
{
	struct queue_event e = {.slot = slot,
				.codes = QUEUE_CODE(REASON_TOO_MANY_PODS)};
	for (unsigned r = 0; r < RES_MAX; r++)
		if (r != RES_PODS && pod->request.v[r] > 0)
			e.res |= (uint16_t)(1u << r);
	if (e.res != 0)
		e.codes |= QUEUE_CODE(REASON_INSUFFICIENT);
	if (pod->n_ports > 0)
		e.codes |= QUEUE_CODE(REASON_PORTS);
	if (dev != NULL && dev->gpu_mask != 0)
		e.codes |= QUEUE_CODE(REASON_GPU);
	if (dev != NULL && dev->n_cores != 0)
		e.codes |= QUEUE_CODE(REASON_CORES);
	if (pod->group != 0)
		e.codes |= INTERPOD_CODES;
	return e;
}

struct queue_event queue_event_room(uint32_t slot)
{
	return (struct queue_event){.slot = slot,
				    .codes = QUEUE_CODE(REASON_TOO_MANY_PODS) |
					     QUEUE_CODE(REASON_INSUFFICIENT),
				    .res = (uint16_t)((1u << RES_MAX) - 1)};
}

struct queue_event queue_event_node(uint32_t slot)
{
	return (struct queue_event){.slot = slot, .codes = QUEUE_EV_NODE};
}

struct queue_event queue_event_placed(void)
{
	return (struct queue_event){.slot = QUEUE_ANY_NODE, .codes = PLACED_CODES};
}

bool queue_events_want_placed(const struct queue_events *ev)
{
	/* E7: a read by read-modify-write, ordered with E6's on the counter. */
	return __atomic_fetch_add((uint64_t *)&ev->interpod_waiting, 0,
				  __ATOMIC_ACQ_REL) != 0;
}

/* --- the queue ------------------------------------------------------------ */

struct qentry {
	const struct pod_spec *spec;
	struct res_vec request; /* what it asks, extras included */
	uint64_t queued_ns;     /* when last queued: PrioritySort's timestamp */
	uint64_t seq;           /* the order it was last queued, for ties */
	uint64_t backoff_until;
	uint64_t deadline_ns;
	uint64_t events_from;   /* queue_pod's: events before it skip it */
	int32_t priority;
	uint32_t attempts;
	uint32_t codes, res;
	uint32_t pos;           /* in its heap; unschedulable: unused */
	uint32_t prev, next;    /* unschedulable list */
	uint32_t dpos;          /* in the deadline heap, or QUEUE_NONE */
	uint32_t woken_for;     /* the node whose room woke it (+1), 0: none */
	uint16_t asks;          /* bit r: request.v[r] > 0, r not RES_PODS */
	uint8_t where;          /* enum queue_where */
	bool interpod;          /* counted in interpod_waiting (E6) */
};

/* Reasons a node's counters decide alone (with the static filters): a pod
 * refused only for these fits a node iff its requests fit there. */
#define COUNTER_CODES (QUEUE_CODE(REASON_INSUFFICIENT) | QUEUE_CODE(REASON_TOO_MANY_PODS))
#define STATIC_CODES (QUEUE_CODE(REASON_UNSCHEDULABLE) | QUEUE_CODE(REASON_NODE_NAME) | \
		      QUEUE_CODE(REASON_TAINT) | QUEUE_CODE(REASON_AFFINITY) | \
		      QUEUE_CODE(REASON_GPU_MODEL) | QUEUE_CODE(REASON_SPREAD_LABEL))

/* QS1: whether the node's room alone may not decide pod x's hint. */
static bool hint_beyond_room(const struct qentry *x)
{
	return (x->codes & ~(COUNTER_CODES | STATIC_CODES)) != 0;
}

struct heap {
	uint32_t *ids;
	uint32_t n;
};

struct sched_queue {
	struct queue_config cfg;
	struct queue_events *ev;
	uint64_t ev_pos;
	uint32_t capacity;
	struct qentry *e;
	struct heap active, backoff, deadline;
	uint32_t unsched_head, unsched_tail;
	/* QS1: the unschedulable list summed up for queue_absorb. Pods in it
	 * whose hint the node's room alone may not decide (codes beyond
	 * COUNTER_CODES and STATIC_CODES), exactly; and, over the pods
	 * appended since the list was last empty (a superset of those in
	 * it), the resources every one asks and the least each asks. */
	uint32_t unsched_other;
	uint16_t unsched_asks;
	struct res_vec unsched_low;
	uint32_t *owner_count;
	uint32_t *scratch;      /* [capacity]: pods a node's room decides */
	uint32_t len;           /* entries not QUEUE_OUT */
	uint64_t seq;
	struct queue_stats st;
};

/* Heap order: true when a goes before b. */
static bool before(const struct sched_queue *q, const struct heap *h, uint32_t a,
		   uint32_t b)
{
	const struct qentry *x = &q->e[a], *y = &q->e[b];
	if (h == &q->active) {
		if (x->priority != y->priority)
			return x->priority > y->priority;
		if (x->queued_ns != y->queued_ns)
			return x->queued_ns < y->queued_ns;
		return x->seq < y->seq;
	}
	if (h == &q->backoff) {
		if (x->backoff_until != y->backoff_until)
			return x->backoff_until < y->backoff_until;
		return x->seq < y->seq;
	}
	if (x->deadline_ns != y->deadline_ns)
		return x->deadline_ns < y->deadline_ns;
	return a < b;
}

static uint32_t *pos_of(struct sched_queue *q, const struct heap *h, uint32_t id)
{
	return h == &q->deadline ? &q->e[id].dpos : &q->e[id].pos;
}

static void heap_set(struct sched_queue *q, struct heap *h, uint32_t at, uint32_t id)
{
	h->ids[at] = id;
	*pos_of(q, h, id) = at;
}

static void heap_up(struct sched_queue *q, struct heap *h, uint32_t at)
{
	uint32_t id = h->ids[at];
	while (at > 0) {
		uint32_t parent = (at - 1) / 2;
		if (!before(q, h, id, h->ids[parent]))
			break;
		heap_set(q, h, at, h->ids[parent]);
		at = parent;
	}
	heap_set(q, h, at, id);
}

static void heap_down(struct sched_queue *q, struct heap *h, uint32_t at)
{
	uint32_t id = h->ids[at];
	for (;;) {
		uint32_t c = 2 * at + 1;
		if (c >= h->n)
			break;
		if (c + 1 < h->n && before(q, h, h->ids[c + 1], h->ids[c]))
			c++;
		if (!before(q, h, h->ids[c], id))
			break;
		heap_set(q, h, at, h->ids[c]);
		at = c;
	}
	heap_set(q, h, at, id);
}

static void heap_push(struct sched_queue *q, struct heap *h, uint32_t id)
{
	h->ids[h->n] = id;
	*pos_of(q, h, id) = h->n;
	heap_up(q, h, h->n++);
}

static void heap_remove(struct sched_queue *q, struct heap *h, uint32_t id)
{
	uint32_t at = *pos_of(q, h, id);
	uint32_t last = h->ids[--h->n];
	*pos_of(q, h, id) = QUEUE_NONE;
	if (at == h->n)
		return;
	heap_set(q, h, at, last);
	heap_down(q, h, at);
	heap_up(q, h, *pos_of(q, h, last));
}

static uint64_t backoff_duration(const struct sched_queue *q, uint32_t attempts)
{
	/* calculateBackoffDuration: doubled per attempt after the first,
	 * by subtraction so nothing overflows. */
	if (attempts == 0)
		return 0;
	uint64_t d = q->cfg.initial_backoff_ns, max = q->cfg.max_backoff_ns;
	for (uint32_t i = 1; i < attempts; i++) {
		if (d > max - d)
			return max;
		d += d;
	}
	return d < max ? d : max;
}

static void set_interpod(struct sched_queue *q, struct qentry *x, bool on)
{
	if (x->interpod == on)
		return;
	x->interpod = on;
	if (q->ev == NULL)
		return;
	if (on)
		/* E6: acquire-release, partner of E7. */
		__atomic_fetch_add(&q->ev->interpod_waiting, 1, __ATOMIC_ACQ_REL);
	else
		/* Relaxed: see the note at the top (leaving). */
		__atomic_fetch_sub(&q->ev->interpod_waiting, 1, __ATOMIC_RELAXED);
}

static void unsched_unlink(struct sched_queue *q, uint32_t id)
{
	struct qentry *x = &q->e[id];
	if (x->prev != QUEUE_NONE)
		q->e[x->prev].next = x->next;
	else
		q->unsched_head = x->next;
	if (x->next != QUEUE_NONE)
		q->e[x->next].prev = x->prev;
	else
		q->unsched_tail = x->prev;
	x->prev = x->next = QUEUE_NONE;
	q->unsched_other -= hint_beyond_room(x);
	set_interpod(q, x, false);
}

static void unsched_append(struct sched_queue *q, uint32_t id)
{
	struct qentry *x = &q->e[id];
	/* QS1: a bound only while the list is not empty; afresh after. */
	if (q->unsched_head == QUEUE_NONE) {
		q->unsched_asks = x->asks;
		q->unsched_low = x->request;
	} else {
		q->unsched_asks &= x->asks;
		for (unsigned r = 0; r < RES_MAX; r++)
			if (x->request.v[r] < q->unsched_low.v[r])
				q->unsched_low.v[r] = x->request.v[r];
	}
	q->unsched_other += hint_beyond_room(x);
	x->prev = q->unsched_tail;
	x->next = QUEUE_NONE;
	if (q->unsched_tail != QUEUE_NONE)
		q->e[q->unsched_tail].next = id;
	else
		q->unsched_head = id;
	q->unsched_tail = id;
}

/* Takes `id` out of whichever list holds it (not the deadline heap). */
static void unlist(struct sched_queue *q, uint32_t id)
{
	struct qentry *x = &q->e[id];
	switch (x->where) {
	case QUEUE_ACTIVE:
		heap_remove(q, &q->active, id);
		q->st.active--;
		break;
	case QUEUE_BACKOFF:
		heap_remove(q, &q->backoff, id);
		q->st.backoff--;
		break;
	case QUEUE_UNSCHEDULABLE:
		unsched_unlink(q, id);
		q->st.unschedulable--;
		break;
	default:
		break;
	}
	x->where = QUEUE_OUT;
}

static void to_active(struct sched_queue *q, uint32_t id)
{
	q->e[id].where = QUEUE_ACTIVE;
	heap_push(q, &q->active, id);
	q->st.active++;
}

static void to_backoff(struct sched_queue *q, uint32_t id)
{
	q->e[id].where = QUEUE_BACKOFF;
	heap_push(q, &q->backoff, id);
	q->st.backoff++;
}

/* An unschedulable pod an event (or the flush) moves: to backoffQ while
 * its backoff runs, else to activeQ (movePodsToActiveOrBackoffQueue). */
static void wake(struct sched_queue *q, uint32_t id, uint64_t now)
{
	unlist(q, id);
	if (now < q->e[id].backoff_until)
		to_backoff(q, id);
	else
		to_active(q, id);
}

/* Zeroed memory backed only as it is touched: a queue has room for every
 * slot of every producer its worker may serve, and most of it is never
 * used. mmap rather than calloc, which writes its whole block when
 * MALLOC_PERTURB_ is set (meson's test runner sets it). NULL on failure. */
static void *lazy_zeroed(size_t bytes)
{
	void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	return p == MAP_FAILED ? NULL : p;
}

static void lazy_free(void *p, size_t bytes)
{
	if (p != NULL)
		munmap(p, bytes);
}

struct sched_queue *queue_create(const struct queue_config *cfg,
				 struct queue_events *ev)
{
	uint64_t cap = (uint64_t)cfg->owners * cfg->per_owner;
	if (cap == 0 || cap >= (UINT64_C(1) << 31) || cfg->ctx == NULL) {
		errno = EINVAL;
		return NULL;
	}
	struct sched_queue *q = calloc(1, sizeof(*q));
	if (q == NULL)
		return NULL;
	q->cfg = *cfg;
	q->ev = ev;
	q->ev_pos = ev != NULL ? queue_events_head(ev) : 0;
	q->capacity = (uint32_t)cap;
	q->unsched_head = q->unsched_tail = QUEUE_NONE;
	q->e = lazy_zeroed(cap * sizeof(*q->e));
	q->active.ids = lazy_zeroed(cap * sizeof(uint32_t));
	q->backoff.ids = lazy_zeroed(cap * sizeof(uint32_t));
	q->deadline.ids = lazy_zeroed(cap * sizeof(uint32_t));
	q->scratch = lazy_zeroed(cap * sizeof(uint32_t));
	q->owner_count = calloc(cfg->owners, sizeof(uint32_t));
	if (q->e == NULL || q->active.ids == NULL || q->backoff.ids == NULL ||
	    q->deadline.ids == NULL || q->scratch == NULL || q->owner_count == NULL) {
		queue_destroy(q);
		errno = ENOMEM;
		return NULL;
	}
	return q;
}

void queue_destroy(struct sched_queue *q)
{
	if (q == NULL)
		return;
	/* What it counted in the shared counter goes with it. */
	for (uint32_t id = q->unsched_head; id != QUEUE_NONE; id = q->e[id].next)
		set_interpod(q, &q->e[id], false);
	size_t cap = q->capacity;
	lazy_free(q->e, cap * sizeof(*q->e));
	lazy_free(q->active.ids, cap * sizeof(uint32_t));
	lazy_free(q->backoff.ids, cap * sizeof(uint32_t));
	lazy_free(q->deadline.ids, cap * sizeof(uint32_t));
	lazy_free(q->scratch, cap * sizeof(uint32_t));
	free(q->owner_count);
	free(q);
}

uint32_t queue_capacity(const struct sched_queue *q)
{
	return q->capacity;
}

uint32_t queue_id(const struct sched_queue *q, uint32_t owner, uint32_t index)
{
	return owner * q->cfg.per_owner + index;
}

uint32_t queue_owner(const struct sched_queue *q, uint32_t id)
{
	return id / q->cfg.per_owner;
}

uint32_t queue_index(const struct sched_queue *q, uint32_t id)
{
	return id % q->cfg.per_owner;
}

enum queue_where queue_where(const struct sched_queue *q, uint32_t id)
{
	return id < q->capacity ? (enum queue_where)q->e[id].where : QUEUE_OUT;
}

uint32_t queue_woken_for(const struct sched_queue *q, uint32_t id)
{
	return id < q->capacity && q->e[id].woken_for != 0 ? q->e[id].woken_for - 1
							  : QUEUE_NONE;
}

uint32_t queue_attempts(const struct sched_queue *q, uint32_t id)
{
	return id < q->capacity ? q->e[id].attempts : 0;
}

const struct pod_spec *queue_spec(const struct sched_queue *q, uint32_t id)
{
	return id < q->capacity ? q->e[id].spec : NULL;
}

const struct res_vec *queue_request(const struct sched_queue *q, uint32_t id)
{
	return id < q->capacity ? &q->e[id].request : NULL;
}

int queue_park(struct sched_queue *q, uint32_t id, const struct queue_pod *p,
	       uint64_t now)
{
	if (id >= q->capacity)
		return -EINVAL;
	struct qentry *x = &q->e[id];
	if (x->where != QUEUE_OUT && x->where != QUEUE_ATTEMPT)
		return -EINVAL;
	if (x->where == QUEUE_OUT) {
		/* A new pod: its first attempt was made by the caller. */
		x->attempts = 1;
		x->dpos = QUEUE_NONE;
		x->prev = x->next = QUEUE_NONE;
		q->owner_count[queue_owner(q, id)]++;
		q->len++;
	}
	x->spec = p->spec;
	x->woken_for = 0;
	x->events_from = p->events_from;
	x->priority = p->priority;
	x->codes = p->codes;
	x->request = p->request;
	x->asks = 0;
	for (unsigned r = 0; r < RES_MAX; r++)
		if (r != RES_PODS && p->request.v[r] > 0)
			x->asks |= (uint16_t)(1u << r);
	x->res = p->res;
	x->queued_ns = now;
	x->seq = q->seq++;
	x->backoff_until = now + backoff_duration(q, x->attempts);
	if (x->deadline_ns != p->deadline_ns && x->dpos != QUEUE_NONE)
		heap_remove(q, &q->deadline, id);
	x->deadline_ns = p->deadline_ns;
	if (p->deadline_ns != 0 && x->dpos == QUEUE_NONE)
		heap_push(q, &q->deadline, id);
	q->st.parked++;
	if (p->error) {
		to_backoff(q, id);
		return 0;
	}
	x->where = QUEUE_UNSCHEDULABLE;
	unsched_append(q, id);
	q->st.unschedulable++;
	if (p->codes & PLACED_CODES) {
		set_interpod(q, x, true);
		/* E6: a placement since the attempt began may not have seen
		 * this pod waiting: treat it as the event it would have been. */
		if (q->cfg.ledger != NULL &&
		    ledger_changes_head(q->cfg.ledger) != p->change_head) {
			wake(q, id, now);
			q->st.woken++;
		}
	}
	return 0;
}

/* Whether `spec` passes its static filters on `slot` of `snap`: the
 * plugins filter_node() runs first, in its order. */
static bool static_pass(const struct sched_queue *q, const struct snapshot *snap,
			const struct pod_spec *spec, uint32_t slot)
{
	if (snap == NULL || slot >= snap->n_slots || !snap->present[slot])
		return false;
	const struct node_spec *node = &snap->nodes[slot];
	const struct plugin_ctx *ctx = q->cfg.ctx;
	return filter_unschedulable(ctx, spec, node) && filter_node_name(spec, node) &&
	       filter_taints(spec, node) < 0 && filter_affinity(ctx, spec, node) &&
	       filter_device_model(spec, node);
}

/* What an event's node offers now, for the hints: its allocatable less
 * the ledger's counters (V1), less what the pods this event woke ask. */
struct room {
	bool known;
	struct res_vec free; /* v[RES_PODS]: pod slots */
};

static void room_of(const struct sched_queue *q, const struct snapshot *snap,
		    uint32_t slot, struct room *r)
{
	r->known = false;
	if (q->cfg.ledger == NULL || snap == NULL || slot >= snap->n_slots ||
	    !snap->present[slot])
		return;
	struct res_vec used;
	int64_t nz_cpu, nz_mem;
	ledger_load_used(ledger_node(q->cfg.ledger, slot), &used, &nz_cpu, &nz_mem);
	for (unsigned r2 = 0; r2 < RES_MAX; r2++)
		r->free.v[r2] = snap->nodes[slot].allocatable.v[r2] - used.v[r2];
	r->known = true;
}

/* NodeResourcesFit against what is left: a pod slot, and each resource
 * in `asks` (a pass over a few bits, not all RES_MAX). */
static bool room_holds(const struct room *r, uint32_t asks, const struct res_vec *req)
{
	if (r->free.v[RES_PODS] < 1)
		return false;
	for (uint32_t m = asks; m != 0; m &= m - 1) {
		unsigned k = (unsigned)__builtin_ctz(m);
		if (req->v[k] > r->free.v[k])
			return false;
	}
	return true;
}

static bool room_fits(const struct room *r, const struct qentry *x)
{
	return room_holds(r, x->asks, &x->request);
}

static void room_take(struct room *r, const struct res_vec *req)
{
	for (unsigned k = 0; k < RES_MAX; k++)
		r->free.v[k] -= k == RES_PODS ? 1 : req->v[k];
}

enum hint_says {
	HINT_SKIP,  /* the event cannot help it */
	HINT_QUEUE, /* it may: wake it */
	HINT_ROOM,  /* it may if it fits in what the node has left: decided
		     * after every pod is looked at, by PrioritySort's order */
};

/* The QueueingHint: whether event `ev` may help pod `x` (see queue.h).
 * For a pod refused only for its node's counters (and static filters),
 * on an event of one node whose room is known, "may help" is "fits in
 * what is left of it" (HINT_ROOM), so a release wakes as many such pods
 * as its room holds, not every pod short of that resource. */
static enum hint_says hint(const struct sched_queue *q, const struct qentry *x,
			   const struct queue_event *ev, const struct snapshot *snap,
			   const struct room *room)
{
	bool anywhere = ev->slot == QUEUE_ANY_NODE;
	bool by_room = !anywhere && room->known &&
		       (x->codes & ~(COUNTER_CODES | STATIC_CODES)) == 0;
	if (ev->codes & QUEUE_EV_NODE) {
		if (anywhere)
			return HINT_QUEUE;
		if (!static_pass(q, snap, x->spec, ev->slot))
			return HINT_SKIP;
		return by_room ? HINT_ROOM : HINT_QUEUE;
	}
	uint32_t both = x->codes & ev->codes;
	bool local = (both & LOCAL_CODES & ~QUEUE_CODE(REASON_INSUFFICIENT)) != 0 ||
		     ((both & QUEUE_CODE(REASON_INSUFFICIENT)) && (x->res & ev->res));
	if (local && (anywhere || static_pass(q, snap, x->spec, ev->slot)))
		return by_room ? HINT_ROOM : HINT_QUEUE;
	return (both & INTERPOD_CODES) != 0 ? HINT_QUEUE : HINT_SKIP;
}

static int by_active_order(const void *a, const void *b, void *arg)
{
	const struct sched_queue *q = arg;
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	return before(q, &q->active, x, y) ? -1 : before(q, &q->active, y, x) ? 1 : 0;
}

/* Passes of selection before give_room sorts what is left instead. */
#define ROOM_SELECTIONS 8u

static void give_one(struct sched_queue *q, struct room *room, uint32_t id,
		     uint32_t slot, uint64_t now)
{
	room_take(room, &q->e[id].request);
	q->e[id].woken_for = slot + 1;
	wake(q, id, now);
	q->st.woken++;
}

/* The room of one event goes to the pods activeQ would take first: the
 * first in PrioritySort's order that fits what is left, then again while
 * one does. The same pods as a sort and one pass in that order (the room
 * only shrinks, so a pod that did not fit never fits later), at O(n) per
 * pod woken instead of O(n log n) per event: a release leaves room for a
 * pod or two, and hundreds may be parked short of it (churn: the sort
 * was two thirds of queue_absorb's instructions). Candidates that no
 * longer fit leave the scratch as a pass meets them. A room that holds
 * more (a node added: up to its pod slots) gets ROOM_SELECTIONS passes,
 * then the sort and one pass over what is left, so an event costs at most
 * O(n log n) more than before. Returns the number woken; the scratch is
 * consumed. */
static unsigned give_room(struct sched_queue *q, struct room *room, uint32_t n_room,
			  uint32_t slot, uint64_t now)
{
	unsigned woken = 0;
	for (;;) {
		if (woken == ROOM_SELECTIONS) {
			qsort_r(q->scratch, n_room, sizeof(uint32_t), by_active_order, q);
			for (uint32_t k = 0; k < n_room; k++) {
				if (room_fits(room, &q->e[q->scratch[k]])) {
					give_one(q, room, q->scratch[k], slot, now);
					woken++;
				} else {
					q->st.hints_skipped++;
				}
			}
			return woken;
		}
		uint32_t keep = 0, best = QUEUE_NONE, best_k = 0;
		for (uint32_t k = 0; k < n_room; k++) {
			uint32_t c = q->scratch[k];
			if (!room_fits(room, &q->e[c]))
				continue;
			if (best == QUEUE_NONE || before(q, &q->active, c, best)) {
				best = c;
				best_k = keep;
			}
			q->scratch[keep++] = c;
		}
		q->st.hints_skipped += n_room - keep;
		if (best == QUEUE_NONE)
			return woken;
		q->scratch[best_k] = q->scratch[--keep];
		n_room = keep;
		give_one(q, room, best, slot, now);
		woken++;
	}
}

/* QS2: whether event `ev`, of one node whose room is known, can help no
 * pod of the unschedulable list: with no pod there whose hint the room
 * may not decide (QS1's count 0), each pod's hint is HINT_SKIP or
 * HINT_ROOM, and HINT_ROOM wakes only a pod that fits the room; one that
 * lacks a pod slot, or less of a resource that every pod asks than the
 * least of them asks, fits none (a pod asking the least of each of
 * those, and nothing else, does not fit). The walk would then count
 * every pod in hints_skipped and wake nobody. O(RES_MAX) instead of
 * O(parked): a full cluster's releases (preemption: the victim's room is
 * held for the preemptor) leave nothing for the pods parked behind it. */
static bool room_helps_none(const struct sched_queue *q, const struct queue_event *ev,
			    const struct room *room)
{
	return ev->slot != QUEUE_ANY_NODE && room->known && q->unsched_other == 0 &&
	       !room_holds(room, q->unsched_asks, &q->unsched_low);
}

static unsigned wake_all(struct sched_queue *q, uint64_t now)
{
	unsigned n = 0;
	while (q->unsched_head != QUEUE_NONE) {
		wake(q, q->unsched_head, now);
		n++;
	}
	q->st.woken += n;
	return n;
}

unsigned queue_absorb(struct sched_queue *q, const struct snapshot *snap,
		      uint64_t now)
{
	if (q->ev == NULL)
		return 0;
	unsigned moved = 0;
	uint64_t head = queue_events_head(q->ev); /* E3 */
	if (head - q->ev_pos > QUEUE_EVENTS) {
		q->st.lost_events++;
		q->ev_pos = head;
		return wake_all(q, now);
	}
	for (; q->ev_pos < head; q->ev_pos++) {
		uint64_t i = q->ev_pos;
		/* E4, acquire: partner of E2. */
		uint64_t w = __atomic_load_n(&q->ev->ring[i & (QUEUE_EVENTS - 1)],
					     __ATOMIC_ACQUIRE);
		if (w >> EV_LAP_SHIFT != ev_lap(i))
			break; /* not stored yet: read it next time */
		/* E5: overwritten meanwhile? */
		if (queue_events_head(q->ev) - i > QUEUE_EVENTS) {
			q->st.lost_events++;
			q->ev_pos = queue_events_head(q->ev);
			return moved + wake_all(q, now);
		}
		struct queue_event ev = {
			.slot = (uint32_t)(w >> EV_SLOT_SHIFT & EV_SLOT_MASK),
			.codes = ev_unfold((uint16_t)(w >> 16)),
			.res = (uint16_t)w,
		};
		q->st.events++;
		struct room room = {0};
		if (ev.slot != QUEUE_ANY_NODE)
			room_of(q, snap, ev.slot, &room);
		if (room_helps_none(q, &ev, &room)) {
			q->st.hints_skipped += q->st.unschedulable;
			q->st.events_unwalked++;
			continue;
		}
		uint32_t id = q->unsched_head, n_room = 0;
		/* The hint reads of a pod only its spec, codes and res: pods
		 * of one template share the spec, so one call answers a run
		 * of them (churn: every parked pod is of one template). */
		const struct qentry *memo = NULL;
		enum hint_says memo_says = HINT_SKIP;
		while (id != QUEUE_NONE) {
			uint32_t next = q->e[id].next;
			const struct qentry *x = &q->e[id];
			enum hint_says says;
			if (i < x->events_from) {
				says = HINT_SKIP;
			} else if (memo != NULL && x->spec == memo->spec &&
				   x->codes == memo->codes && x->res == memo->res) {
				says = memo_says;
			} else {
				says = memo_says = hint(q, x, &ev, snap, &room);
				memo = x;
			}
			switch (says) {
			case HINT_QUEUE:
				wake(q, id, now);
				q->st.woken++;
				moved++;
				break;
			case HINT_ROOM:
				q->scratch[n_room++] = id;
				break;
			case HINT_SKIP:
				q->st.hints_skipped++;
				break;
			}
			id = next;
		}
		moved += give_room(q, &room, n_room, ev.slot, now);
	}
	return moved;
}

unsigned queue_tick(struct sched_queue *q, uint64_t now)
{
	unsigned moved = 0;
	while (q->backoff.n > 0 && q->e[q->backoff.ids[0]].backoff_until <= now) {
		uint32_t id = q->backoff.ids[0];
		unlist(q, id);
		to_active(q, id);
		moved++;
	}
	/* flushUnschedulablePodsLeftover: the list is in parking order. */
	while (q->unsched_head != QUEUE_NONE &&
	       now - q->e[q->unsched_head].queued_ns >= q->cfg.max_unschedulable_ns) {
		wake(q, q->unsched_head, now);
		q->st.flushed++;
		moved++;
	}
	return moved;
}

bool queue_wake(struct sched_queue *q, uint32_t id, uint64_t now)
{
	if (id >= q->capacity || q->e[id].where != QUEUE_UNSCHEDULABLE)
		return false;
	wake(q, id, now);
	q->st.woken++;
	return true;
}

uint32_t queue_pop(struct sched_queue *q, uint64_t now)
{
	(void)now;
	struct heap *h = q->active.n > 0 ? &q->active
			 : q->cfg.pop_from_backoff && q->backoff.n > 0 ? &q->backoff
								      : NULL;
	if (h == NULL)
		return QUEUE_NONE;
	uint32_t id = h->ids[0];
	unlist(q, id);
	struct qentry *x = &q->e[id];
	x->where = QUEUE_ATTEMPT;
	x->attempts++;
	q->st.popped++;
	return id;
}

int queue_take(struct sched_queue *q, uint32_t id)
{
	if (id >= q->capacity)
		return -EINVAL;
	struct qentry *x = &q->e[id];
	if (x->where == QUEUE_OUT || x->where == QUEUE_ATTEMPT)
		return -EINVAL;
	unlist(q, id);
	x->where = QUEUE_ATTEMPT;
	x->attempts++;
	q->st.popped++;
	return 0;
}

bool queue_done(struct sched_queue *q, uint32_t id)
{
	if (id >= q->capacity || q->e[id].where == QUEUE_OUT)
		return false;
	struct qentry *x = &q->e[id];
	unlist(q, id);
	if (x->dpos != QUEUE_NONE)
		heap_remove(q, &q->deadline, id);
	q->owner_count[queue_owner(q, id)]--;
	q->len--;
	memset(x, 0, sizeof(*x));
	return true;
}

uint32_t queue_expired(const struct sched_queue *q, uint64_t now)
{
	if (q->deadline.n == 0)
		return QUEUE_NONE;
	uint32_t id = q->deadline.ids[0];
	return q->e[id].deadline_ns <= now ? id : QUEUE_NONE;
}

uint32_t queue_first_of(const struct sched_queue *q, uint32_t owner)
{
	if (owner >= q->cfg.owners || q->owner_count[owner] == 0)
		return QUEUE_NONE;
	uint32_t first = owner * q->cfg.per_owner;
	for (uint32_t i = 0; i < q->cfg.per_owner; i++)
		if (q->e[first + i].where != QUEUE_OUT)
			return first + i;
	return QUEUE_NONE;
}

uint32_t queue_len(const struct sched_queue *q)
{
	return q->len;
}

uint32_t queue_owner_count(const struct sched_queue *q, uint32_t owner)
{
	return owner < q->cfg.owners ? q->owner_count[owner] : 0;
}

void queue_get_stats(const struct sched_queue *q, struct queue_stats *out)
{
	*out = q->st;
}

static bool heap_ok(const struct sched_queue *q, const struct heap *h,
		    enum queue_where where)
{
	for (uint32_t i = 0; i < h->n; i++) {
		uint32_t id = h->ids[i];
		if (id >= q->capacity)
			return false;
		const struct qentry *x = &q->e[id];
		uint32_t pos = h == &q->deadline ? x->dpos : x->pos;
		if (pos != i || (where != QUEUE_OUT && x->where != where))
			return false;
		if (i > 0 && before(q, h, id, h->ids[(i - 1) / 2]))
			return false;
	}
	return true;
}

int queue_check(const struct sched_queue *q)
{
	if (!heap_ok(q, &q->active, QUEUE_ACTIVE) ||
	    !heap_ok(q, &q->backoff, QUEUE_BACKOFF) ||
	    !heap_ok(q, &q->deadline, QUEUE_OUT))
		return -EPROTO;
	if (q->active.n != q->st.active || q->backoff.n != q->st.backoff)
		return -EPROTO;
	uint64_t n = 0;
	uint32_t prev = QUEUE_NONE;
	for (uint32_t id = q->unsched_head; id != QUEUE_NONE; id = q->e[id].next) {
		if (id >= q->capacity || q->e[id].where != QUEUE_UNSCHEDULABLE ||
		    q->e[id].prev != prev || ++n > q->capacity)
			return -EPROTO;
		prev = id;
	}
	if (prev != q->unsched_tail || n != q->st.unschedulable)
		return -EPROTO;
	/* QS1: the count exact, the bound a bound. */
	uint32_t other = 0;
	for (uint32_t id = q->unsched_head; id != QUEUE_NONE; id = q->e[id].next) {
		const struct qentry *x = &q->e[id];
		other += hint_beyond_room(x);
		if ((x->asks & q->unsched_asks) != q->unsched_asks)
			return -EPROTO;
		for (uint32_t m = q->unsched_asks; m != 0; m &= m - 1) {
			unsigned k = (unsigned)__builtin_ctz(m);
			if (x->request.v[k] < q->unsched_low.v[k])
				return -EPROTO;
		}
	}
	if (other != q->unsched_other)
		return -EPROTO;
	uint64_t queued = 0, deadlines = 0;
	for (uint32_t o = 0; o < q->cfg.owners; o++) {
		uint32_t c = 0;
		for (uint32_t i = 0; i < q->cfg.per_owner; i++) {
			const struct qentry *x = &q->e[o * q->cfg.per_owner + i];
			if (x->where == QUEUE_OUT)
				continue;
			c++;
			deadlines += x->deadline_ns != 0;
			if ((x->deadline_ns != 0) != (x->dpos != QUEUE_NONE))
				return -EPROTO;
		}
		if (c != q->owner_count[o])
			return -EPROTO;
		queued += c;
	}
	if (deadlines != q->deadline.n || queued != q->len)
		return -EPROTO;
	return 0;
}
