/* The evictor: see evict_internal.h.
 *
 * Each mailbox is a ring of N fixed records with a producer index `tail`
 * and a consumer index `head`, each written by its one side only:
 *   M1  The producer writes record tail % N, then stores tail + 1 with
 *       release; it knows there is room by loading head with acquire (the
 *       consumer has finished reading the record it reuses).
 *   M2  The consumer loads tail with acquire (partner of M1's store: the
 *       record is complete), copies record head % N out (or, a request,
 *       reads it where it is until it is served: EW4), then stores
 *       head + 1 with release (partner of M1's load).
 * EW4 A request is served in its ring record and its reply written in
 *     the reply ring's record, not copied through the thread's own: each
 *     carries a pod_spec (~1.8 KB), and two of the four copies a request
 *     made were ~1 K of the evictor's ~24 K instructions. The request's
 *     record is given back (M2) after it is served, before its reply is
 *     published (M1): a worker has at most REQS requests in flight until
 *     it reads their replies (daemon/wait.c, WAIT_PREEMPTS), so the ring
 *     it writes has room whenever it has a request to send.
 * The evictor thread sleeps on its doorbell (daemon/evict_bell.c, ER1-ER6)
 * when it finds no request:
 *   EK1  A worker, after M1, rings it (evict_bell_ring: an add, and a
 *       FUTEX_WAKE only when the evictor said it sleeps).
 *   EK2  The evictor takes the bell's value (evict_bell_seen) before it
 *       scans the rings, and sleeps only if no ring came since
 *       (evict_bell_prepare, then FUTEX_WAIT on its sleeping mark, at
 *       most EVICT_IDLE_NS): a request whose M1 its scan missed came
 *       with a ring after it. evict_stop() rings too, after setting `stop`.
 * Replies and notices wake the workers through the pool (evict_set_waker:
 * pool_wake, one load when no worker sleeps).
 * Reclaim requests (RECLAIMS a worker) carry no reply; a full ring drops
 * one:
 *   RN1  the worker sets `rcl_dropped`;
 *   RN2  the evictor, after a pass over the rings, nudges (quota
 *        generations moved: the waiting pods retry and ask again) when a
 *        request was dropped and a reclaim evicted pods since the last
 *        nudge; each nudge needs an eviction before it, so a reclaim
 *        that cannot help does not loop.
 *   RN3  Each request served (its evictions done, their quota given
 *        back) is told to the done hook (qc_reclaim_done in
 *        daemon/quota_charge.c: the asker's ClusterQueue may ask again)
 *        before the workers are woken.
 * Approving managers (AQ1 in ingest/producers_approval.c): an answer to
 * a reclaim's or preemption's ask kicks the evictor as a worker's EK1
 * does (evict_kick, from the admin thread); each turn of the loop, after
 * its EK2 load, calls producers_approval_tick, and when it woke an asker
 * nudges the quota trees (as RN2) and wakes the workers.
 */
#include "daemon/evict_internal.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <limits.h>
#include <sched.h>
#include <unistd.h>

#include "base/base.h"
#include "daemon/evict_bell_internal.h"

#define REQS EVICT_REQUESTS /* a worker's requests in flight, at most */
/* The idle evictor's sleep, at most: EK1 and evict_stop() wake it, so this
 * only bounds a wake the protocol cannot miss. It once was 1 ms: a
 * thousand wakes a second, each taking a core from a spinning worker or
 * producer on a machine with no idle core (the bench's 2 cores). */
#define EVICT_IDLE_NS 100000000L
#define NOTICES 256u
#define RECLAIMS 64u /* reclaim requests in flight per worker, at most */

struct req_rec {
	uint32_t queue_id;
	struct preempt_request rq;
};

struct worker_box {
	_Alignas(64) uint32_t req_head, rep_head, note_head; /* consumer ends */
	_Alignas(64) uint32_t req_tail, rep_tail, note_tail; /* producer ends */
	struct req_rec req[REQS];
	struct evict_reply rep[REQS];
	struct evict_notice note[NOTICES];
	_Alignas(64) uint32_t rcl_head; /* consumer end */
	_Alignas(64) uint32_t rcl_tail; /* producer end */
	struct evict_reclaim rcl[RECLAIMS];
};

struct evictor {
	struct producers *producers;
	unsigned workers;
	struct worker_box *box; /* [workers] */
	pthread_t thread;
	bool running;
	int stop;               /* __atomic, relaxed: a flag polled each turn */
	struct evict_bell bell; /* EK1, EK2 */
	void (*waker)(void *);  /* wakes the workers; may be NULL */
	void *waker_arg;
	uint64_t requests, held, victims, dropped; /* the evictor's; relaxed */
	evict_reclaim_fn reclaim;  /* set before the workers run */
	void (*reclaim_nudge)(void *arg);
	void *reclaim_arg;
	/* RN1: a worker found its reclaim ring full (relaxed store; the
	 * evictor's relaxed load: a flag, each side re-checks it). */
	int rcl_dropped;
	bool rcl_progress; /* the evictor's: evicted since the last nudge */
	struct evict_reclaim cur_rcl; /* the reclaim being served: the thread's */
	void (*reclaim_done)(void *arg, const struct evict_reclaim *rc,
			     uint32_t evicted); /* RN3; set before the workers run */
	void *reclaim_done_arg;
	uint64_t rcl_requests, rcl_victims, rcl_no_node; /* relaxed */
};

/* M1: room for one more record? */
static bool has_room(uint32_t *head, uint32_t tail, uint32_t n)
{
	return tail - __atomic_load_n(head, __ATOMIC_ACQUIRE) < n;
}

/* M2: a record to read? */
static bool has_one(uint32_t head, uint32_t *tail)
{
	return __atomic_load_n(tail, __ATOMIC_ACQUIRE) != head;
}

bool evict_request(struct evictor *ev, unsigned w, uint32_t queue_id,
		   const struct preempt_request *rq)
{
	struct worker_box *b = &ev->box[w];
	if (!has_room(&b->req_head, b->req_tail, REQS))
		return false;
	struct req_rec *r = &b->req[b->req_tail % REQS];
	r->queue_id = queue_id;
	r->rq = *rq;
	/* M1: release. */
	__atomic_store_n(&b->req_tail, b->req_tail + 1, __ATOMIC_RELEASE);
	/* EK1: a system call only when the evictor sleeps. */
	evict_bell_ring(&ev->bell);
	return true;
}

void evict_set_waker(struct evictor *ev, void (*waker)(void *), void *arg)
{
	ev->waker_arg = arg;
	/* Release: the argument before the function a reader may call. */
	__atomic_store_n(&ev->waker, waker, __ATOMIC_RELEASE);
}

static void wake_workers(struct evictor *ev)
{
	/* Acquire, partner of evict_set_waker()'s release. */
	void (*fn)(void *) = __atomic_load_n(&ev->waker, __ATOMIC_ACQUIRE);
	if (fn != NULL)
		fn(ev->waker_arg);
}

bool evict_reply(struct evictor *ev, unsigned w, struct evict_reply *out)
{
	struct worker_box *b = &ev->box[w];
	if (!has_one(b->rep_head, &b->rep_tail))
		return false;
	*out = b->rep[b->rep_head % REQS];
	/* M2: release. */
	__atomic_store_n(&b->rep_head, b->rep_head + 1, __ATOMIC_RELEASE);
	return true;
}

bool evict_notice_next(struct evictor *ev, unsigned w, struct evict_notice *out)
{
	struct worker_box *b = &ev->box[w];
	if (!has_one(b->note_head, &b->note_tail))
		return false;
	*out = b->note[b->note_head % NOTICES];
	/* M2: release. */
	__atomic_store_n(&b->note_head, b->note_head + 1, __ATOMIC_RELEASE);
	return true;
}

/* producers_preempt's notice callback, on the evictor thread, and
 * OP_DRAIN's, on the admin socket's control thread: to the worker of the
 * victim owner's producer. Both call it under the producers' lock, so the
 * rings' producer ends have one writer at a time (the mutex orders them). */
void evict_notify(void *arg, const struct evict_notice *n)
{
	struct evictor *ev = arg;
	struct worker_box *b = &ev->box[n->producer % ev->workers];
	if (!has_room(&b->note_head, b->note_tail, NOTICES)) {
		stat_inc(&ev->dropped);
		/* Under the producers' lock: the table cannot change. The
		 * owner counts what it lost (wire.h's `lost`). */
		struct producer *pr = producers_get(ev->producers, n->producer);
		if (pr != NULL && producers_key(pr) == n->key && !producers_faulted(pr))
			producers_notice_lost(pr);
		return;
	}
	b->note[b->note_tail % NOTICES] = *n;
	/* M1: release. */
	__atomic_store_n(&b->note_tail, b->note_tail + 1, __ATOMIC_RELEASE);
	wake_workers(ev);
}

/* Worker w's request at the head of its ring, served where it is and
 * answered in the reply ring's next record (EW4); its record given back
 * (M2) before the reply is published (M1). */
static void serve_one(struct evictor *ev, unsigned w)
{
	struct worker_box *b = &ev->box[w];
	const struct req_rec *r = &b->req[b->req_head % REQS];
	/* At most REQS requests in flight per worker (daemon/wait.c,
	 * WAIT_PREEMPTS): its reply always has room. */
	while (!has_room(&b->rep_head, b->rep_tail, REQS))
		sched_yield();
	struct evict_reply *rep = &b->rep[b->rep_tail % REQS];
	rep->queue_id = r->queue_id;
	rep->producer = r->rq.producer;
	rep->key = r->rq.key;
	rep->spec = r->rq.spec;
	rep->cookie = r->rq.cookie;
	if (producers_preempt(ev->producers, &r->rq, evict_notify, ev, &rep->outcome) < 0)
		rep->outcome.slot = -1;
	/* M2: release, the request read. */
	__atomic_store_n(&b->req_head, b->req_head + 1, __ATOMIC_RELEASE);
	stat_inc(&ev->requests);
	if (rep->outcome.slot >= 0) {
		stat_inc(&ev->held);
		stat_add(&ev->victims, rep->outcome.victims);
	}
	/* M1: release. */
	__atomic_store_n(&b->rep_tail, b->rep_tail + 1, __ATOMIC_RELEASE);
	wake_workers(ev);
}

void evict_kick(void *arg)
{
	struct evictor *ev = arg;
	evict_bell_ring(&ev->bell); /* EK1 */
}

void evict_set_reclaim(struct evictor *ev, evict_reclaim_fn fn,
		       void (*nudge)(void *arg), void *arg)
{
	ev->reclaim = fn;
	ev->reclaim_nudge = nudge;
	ev->reclaim_arg = arg;
}

void evict_set_reclaim_done(struct evictor *ev,
			    void (*done)(void *arg, const struct evict_reclaim *rc,
					 uint32_t evicted),
			    void *arg)
{
	ev->reclaim_done = done;
	ev->reclaim_done_arg = arg;
}

bool evict_reclaim(struct evictor *ev, unsigned w, const struct evict_reclaim *rc)
{
	struct worker_box *b = &ev->box[w];
	if (ev->reclaim == NULL)
		return false;
	if (!has_room(&b->rcl_head, b->rcl_tail, RECLAIMS)) {
		/* RN1: relaxed, a flag. */
		__atomic_store_n(&ev->rcl_dropped, 1, __ATOMIC_RELAXED);
		return false;
	}
	b->rcl[b->rcl_tail % RECLAIMS] = *rc;
	/* M1: release. */
	__atomic_store_n(&b->rcl_tail, b->rcl_tail + 1, __ATOMIC_RELEASE);
	evict_bell_ring(&ev->bell); /* EK1 */
	return true;
}

struct reclaim_call {
	struct evictor *ev;
	const struct evict_reclaim *rc;
};

static int reclaim_choose_call(void *arg,
			       bool (*node_ok)(void *, const uint64_t *, size_t),
			       bool (*victim_ok)(void *, uint64_t),
			       void *node_arg, const uint64_t **ids, uint32_t *n,
			       char *why, size_t why_len)
{
	struct reclaim_call *c = arg;
	return c->ev->reclaim(c->ev->reclaim_arg, c->rc, node_ok, victim_ok,
			      node_arg, ids, n, why, why_len);
}

static void serve_reclaim(struct evictor *ev, const struct evict_reclaim *rc)
{
	struct reclaim_call c = {.ev = ev, .rc = rc};
	struct producers_reclaimed out;
	/* The victims' notices go through evict_notify, under the lock. */
	(void)producers_reclaim(ev->producers, &rc->spec, reclaim_choose_call, &c,
				evict_notify, ev, &out);
	stat_inc(&ev->rcl_requests);
	stat_add(&ev->rcl_victims, out.evicted);
	if (out.no_node)
		stat_inc(&ev->rcl_no_node);
	/* RN3: before the wake, so a woken pod refused again may ask. */
	if (ev->reclaim_done != NULL)
		ev->reclaim_done(ev->reclaim_done_arg, rc, out.evicted);
	if (out.evicted > 0) {
		ev->rcl_progress = true;
		wake_workers(ev);
	}
}

void evict_reclaim_counts(const struct evictor *ev, uint64_t *requests,
			  uint64_t *victims, uint64_t *no_node)
{
	*requests = stat_read(&ev->rcl_requests);
	*victims = stat_read(&ev->rcl_victims);
	*no_node = stat_read(&ev->rcl_no_node);
}

static void *evictor_main(void *arg)
{
	struct evictor *ev = arg;
	for (;;) {
		/* EK2 (ER3, seq_cst): before `stop`: a ring from
		 * evict_stop() that it reads orders `stop` before it. */
		uint32_t seen = evict_bell_seen(&ev->bell);
		if (__atomic_load_n(&ev->stop, __ATOMIC_RELAXED))
			break;
		bool any = false;
		for (unsigned w = 0; w < ev->workers; w++) {
			struct worker_box *b = &ev->box[w];
			while (has_one(b->req_head, &b->req_tail)) {
				serve_one(ev, w); /* EW4: M2 there */
				any = true;
			}
			while (has_one(b->rcl_head, &b->rcl_tail)) {
				ev->cur_rcl = b->rcl[b->rcl_head % RECLAIMS];
				/* M2: release. */
				__atomic_store_n(&b->rcl_head, b->rcl_head + 1,
						 __ATOMIC_RELEASE);
				serve_reclaim(ev, &ev->cur_rcl);
				any = true;
			}
		}
		/* RN2: requests were dropped (their pods wait for quota, and
		 * ask again only when quota moves): once the rings are served
		 * and something was evicted since the last nudge, the trees'
		 * waiting pods are woken to ask again. Only after progress: a
		 * reclaim that can evict nothing does not wake them in a loop. */
		if (ev->rcl_progress && ev->reclaim_nudge != NULL &&
		    __atomic_load_n(&ev->rcl_dropped, __ATOMIC_RELAXED)) {
			__atomic_store_n(&ev->rcl_dropped, 0, __ATOMIC_RELAXED);
			ev->rcl_progress = false;
			ev->reclaim_nudge(ev->reclaim_arg);
			wake_workers(ev);
		}
		/* AQ1: askers that managers answered (or whose wait ended)
		 * try again. */
		if (producers_approval_tick(ev->producers)) {
			if (ev->reclaim_nudge != NULL)
				ev->reclaim_nudge(ev->reclaim_arg);
			wake_workers(ev);
		}
		if (!any) {
			/* EK2: asleep only if no ring came since `seen`. */
			if (evict_bell_prepare(&ev->bell, seen))
				evict_bell_wait(&ev->bell, EVICT_IDLE_NS);
			evict_bell_awake(&ev->bell);
		}
	}
	return NULL;
}

struct evictor *evict_start(struct producers *p, unsigned workers)
{
	struct evictor *ev = calloc(1, sizeof(*ev));
	if (ev == NULL)
		return NULL;
	ev->producers = p;
	ev->workers = workers;
	ev->box = aligned_alloc(64, workers * sizeof(*ev->box));
	if (ev->box == NULL) {
		free(ev);
		errno = ENOMEM;
		return NULL;
	}
	memset(ev->box, 0, workers * sizeof(*ev->box));
	int rc = pthread_create(&ev->thread, NULL, evictor_main, ev);
	if (rc != 0) {
		free(ev->box);
		free(ev);
		errno = rc;
		return NULL;
	}
	ev->running = true;
	return ev;
}

void evict_stop(struct evictor *ev)
{
	if (ev == NULL || !ev->running)
		return;
	__atomic_store_n(&ev->stop, 1, __ATOMIC_RELAXED);
	/* EK1's ring, so a sleeping evictor sees `stop` now. */
	evict_bell_ring(&ev->bell);
	pthread_join(ev->thread, NULL);
	ev->running = false;
}

void evict_destroy(struct evictor *ev)
{
	if (ev == NULL)
		return;
	evict_stop(ev);
	free(ev->box);
	free(ev);
}

void evict_bell_figures(const struct evictor *ev, uint64_t *wakes,
			uint64_t *avoided)
{
	evict_bell_counts(&ev->bell, wakes, avoided);
}

void evict_counts(const struct evictor *ev, uint64_t *requests, uint64_t *held,
		  uint64_t *victims, uint64_t *notices_dropped)
{
	*requests = stat_read(&ev->requests);
	*held = stat_read(&ev->held);
	*victims = stat_read(&ev->victims);
	*notices_dropped = stat_read(&ev->dropped);
}
