/* Preemption in the daemon: the evictor. A worker whose waiting pod fits
 * nowhere and may preempt hands a request to the evictor thread, which
 * runs DefaultPreemption under the producers' lock
 * (producers_preempt(): no release or node event meanwhile, and records
 * freed by the one thread that frees them) and answers the worker: the
 * node whose room is now held for the pod, or none. Victims' owners get
 * an EVICTED notice, which the evictor hands to the worker serving a
 * producer of that identity, the one thread that writes its completion
 * ring.
 *
 * Mailboxes: per worker, four single-producer single-consumer rings of
 * fixed records (requests and reclaims worker -> evictor, replies and notices evictor
 * -> worker), labelled M1-M2 in evict.c. A full ring refuses (the pod is
 * not preempted this time; a notice waits at the evictor). Slow path:
 * preemption is per failed attempt of a preempting pod, not per pod.
 *
 * Threads: evict_request, evict_reply, evict_notice_next on worker w's
 * thread (for w); the evictor thread's own; start and stop by the daemon.
 */
#ifndef SHMSCHED_DAEMON_EVICT_INTERNAL_H
#define SHMSCHED_DAEMON_EVICT_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>

#include "ingest/ingest.h"

struct evictor;

/* Preemption requests a worker may have in flight: its request and reply
 * rings' size. 64: with the choice made from the rows (ingest/
 * preempt_rows.h), a request's round trip through both threads' wake-ups
 * is most of a pod's time; the more a worker's preemptors have asked
 * before the evictor finishes one, the less the evictor waits between
 * them (bench --kind preemption, 5,000 nodes: ~1.6x the pods a second of
 * 4, docs/perf/2026-11-29-preemption-2.md). ~3.7 KB a slot: ~236 KB of
 * rings a worker. */
#define EVICT_REQUESTS 64u

struct evict_reply {
	uint32_t queue_id;   /* the pod's, in the worker's queue */
	uint32_t producer;   /* as in the request */
	uint64_t key;
	struct preempt_outcome outcome;
	struct pod_spec spec; /* the spec its use was taken with */
	uint64_t cookie;
};

/* Starts the evictor thread for `workers` workers. Returns NULL with
 * errno. */
struct evictor *evict_start(struct producers *p, unsigned workers);
/* Stops the thread (a request in flight is finished first); replies and
 * notices stay to be taken (the shutdown gives back what replies hold). */
void evict_stop(struct evictor *ev);
/* Stops it if need be and frees everything. NULL: no-op. */
void evict_destroy(struct evictor *ev);

/* Worker w asks to preempt for its pod `queue_id`. Returns false when its
 * request ring is full. */
bool evict_request(struct evictor *ev, unsigned w, uint32_t queue_id,
		   const struct preempt_request *rq);

/* Calls waker(arg) after each reply or notice, so a sleeping worker
 * takes it at once (the daemon gives pool_wake). Any thread. */
void evict_set_waker(struct evictor *ev, void (*waker)(void *), void *arg);
/* Wakes the evictor for a turn of its loop (EK1), from any thread (arg:
 * the evictor): producers_set_approval_kick's kick (AQ1). */
void evict_kick(void *arg);

/* Hands notice `n` to the worker serving its producer (a full ring drops
 * it, counted). Only under the producers' lock: the evictor thread's
 * preemptions and OP_DRAIN (producers_set_notifier) both write the rings
 * so. `arg`: the evictor. */
void evict_notify(void *arg, const struct evict_notice *n);

/* Worker w's next reply / notice, if any. */
bool evict_reply(struct evictor *ev, unsigned w, struct evict_reply *out);
bool evict_notice_next(struct evictor *ev, unsigned w, struct evict_notice *out);

/* Reclaim by quota (issue 37 item 4): worker w's pod, refused by its
 * ClusterQueue's quota and parked for it (daemon/wait.c), asks the
 * evictor to evict what .spec.preemption allows; no reply: the victims'
 * quota given back wakes the pod (QW2 in daemon/wait.c). `spec` has the
 * flavor's nodeLabels in its nodeSelector (the nodes it may use). */
struct evict_reclaim {
	struct pod_spec spec;
	int cq, flavor;      /* of the quota tree of qc_serial `serial` */
	uint64_t serial;
	uint64_t created_ns; /* the preemptor's (queue order) */
};
/* The choice (daemon/quota_charge.c qc_reclaim_choose), on the evictor
 * thread under the producers' lock: ingest/producers.h's
 * producers_reclaim_choose_fn for request `rc`. */
typedef int (*evict_reclaim_fn)(void *arg, const struct evict_reclaim *rc,
				bool (*node_ok)(void *, const uint64_t *, size_t),
				bool (*victim_ok)(void *, uint64_t),
				void *node_arg, const uint64_t **ids, uint32_t *n,
				char *why, size_t why_len);
/* Before the workers run; not set: evict_reclaim refuses. nudge(arg)
 * moves every quota tree's generation (RN2 in evict.c), on the evictor
 * thread outside the producers' lock. */
void evict_set_reclaim(struct evictor *ev, evict_reclaim_fn fn,
		       void (*nudge)(void *arg), void *arg);
/* done(arg, rc, evicted), when set (before the workers run): on the
 * evictor thread, outside the producers' lock, once request `rc` was
 * served (whatever came of it), with the pods it evicted (RN3 in
 * evict.c). */
void evict_set_reclaim_done(struct evictor *ev,
			    void (*done)(void *arg, const struct evict_reclaim *rc,
					 uint32_t evicted),
			    void *arg);
/* Worker w's request; false when its ring is full or no choice is set
 * (the pod waits on; its next refusal asks again). */
bool evict_reclaim(struct evictor *ev, unsigned w, const struct evict_reclaim *rc);
/* Figures: reclaim requests served, pods evicted by them, and requests
 * refused before the choice because no node could hold the pod. */
void evict_reclaim_counts(const struct evictor *ev, uint64_t *requests,
			  uint64_t *victims, uint64_t *no_node);

/* Figures: rings of the evictor's doorbell (requests, reclaims, kicks)
 * that woke it with a system call, and those that found it awake and
 * made none (daemon/evict_bell.c). */
void evict_bell_figures(const struct evictor *ev, uint64_t *wakes,
			uint64_t *avoided);

/* Figures: requests served, nodes found, victims. */
void evict_counts(const struct evictor *ev, uint64_t *requests, uint64_t *held,
		  uint64_t *victims, uint64_t *notices_dropped);

#endif
