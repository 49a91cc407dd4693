/* The per-pod loop of the daemon's workers: each worker polls the submit
 * rings of its share of producers (table index i where i % workers ==
 * worker), and for every slot handed over: decode and check it
 * (ingest/record.c), place and commit it (bind/resolver.c), answer it in
 * the slot and hand it back on the completion ring. Exactly one answer per
 * slot handed over: placed, unschedulable (kube-scheduler's message),
 * rejected (what was wrong with the slot), or, at shutdown, cancelled.
 *
 * No system call, lock or allocation per pod: clock_gettime(CLOCK_MONOTONIC)
 * is served by the vDSO.
 *
 * Threads: serve_poll() is the worker pool's callback (workers/pool.h), one
 * call at a time per worker index, on QSBR reader threads.
 */
#ifndef SHMSCHED_DAEMON_SERVE_INTERNAL_H
#define SHMSCHED_DAEMON_SERVE_INTERNAL_H

#include <stdint.h>

#include "base/base.h"
#include "bind/bind.h"
#include "ingest/ingest.h"
#include "shm/shm.h"
#include "workers/workers.h"

/* One per worker, written by that worker alone; read by others only when
 * the workers have stopped (or as approximate, relaxed figures). */
struct serve_stats {
	_Alignas(64) uint64_t pods;    /* slots answered */
	uint64_t rejected;
	uint64_t cancelled;
	uint64_t bad_handles;          /* submitted handles that name no slot */
	uint64_t completion_overflows; /* answers that found the completion ring
					* full: only a producer that submitted a
					* slot twice can cause it */
	struct resolver_stats resolver;
	uint64_t seq;                  /* this worker's pods so far: random streams */
	/* The waiting pods' figures, as kube-scheduler names them (see
	 * shm/layout.h, struct state_worker_stats): gauges stored by
	 * daemon/wait.c after each change, counters added as they happen. */
	uint64_t pending_active;
	uint64_t pending_backoff;
	uint64_t pending_unschedulable;
	uint64_t pending_gated;
	uint64_t preemption_attempts;
	uint64_t preemption_victims;
	uint64_t attempts[STATE_ATTEMPT_BUCKETS];
	uint64_t waited;
	uint64_t waited_placed;
	uint64_t timed_out;
	uint64_t waiting_cancelled;
	uint64_t forgotten;
	uint64_t queue_woken;
	uint64_t reserved[4];
};

struct serve;
struct serve_wait_config;

/* `engines[i]` is worker i's engine (all on one cluster); `stats` has
 * room for `workers`; every placement is recorded in `placements`; pods
 * that wait are kept as `wc` says (daemon/wait_internal.h). Returns NULL
 * with errno. */
struct serve *serve_create(struct producers *p, struct placements *placements,
			   const struct res_names *res, struct engine **engines,
			   struct serve_stats *stats, unsigned workers,
			   const struct serve_wait_config *wc);
void serve_destroy(struct serve *s);

struct persist;
/* Every placement's record also goes to the durable store `p` (sync
 * durability: answers wait for it). Before the pool starts. Returns 0 or
 * -ENOMEM. */
int serve_set_persist(struct serve *s, struct persist *p);

/* From now on, answer every submitted pod SHMSCHED_CANCELLED instead of
 * placing it (shutdown after the drain deadline). Any thread. */
void serve_cancel_all(struct serve *s);

/* The service times of every pod so far (a pod's decode, placement,
 * commit and answer on its worker), summed over the workers: relaxed
 * reads, exact once the workers have stopped. Any thread. */
void serve_service_hist(const struct serve *s, uint64_t out[HIST_BUCKETS]);

/* The pool callback: returns the number of slots answered. */
unsigned serve_poll(void *arg, unsigned worker, void *scratch);

/* The pool's doorbells (workers/pool.h): a worker about to sleep marks
 * `asleep` in the regions of the producers it serves and sleeps on their
 * doorbells too, so a producer's submit wakes it (include/shmsched/wire.h
 * has the protocol). Its arg is the serve. */
extern struct pool_doorbells_ops serve_doorbells;

/* Answers every slot left in the submit rings, on the calling thread, once
 * the workers have stopped: what serve_poll would do, with the current
 * mode (placing, or cancelling after serve_cancel_all); then every waiting
 * pod, cancelled. Returns how many. */
unsigned serve_drain(struct serve *s);

/* --- for the waiting pods (daemon/wait.c), on worker w's thread --- */

enum serve_attempt {
	SERVE_ANSWERED,      /* the slot is answered (placed, or refused) */
	SERVE_UNSCHEDULABLE, /* no node fits: the engine says why */
	SERVE_GAVE_UP,       /* every commit lost a race */
};

/* One attempt at placing `pod`, decoded from `slot` of `pr`, its
 * `attempt`-th (1: its first): see serve.c. Not answered unless
 * SERVE_ANSWERED. */
enum serve_attempt serve_attempt(struct serve *s, unsigned w, struct producer *pr,
				 struct shmsched_slot *slot,
				 const struct record_pod *pod, uint32_t attempt,
				 struct resolve_result *r);

/* Answers `slot` PLACED on `node` for a pod whose use of it is taken
 * already (preemption's ledger_swap): records the placement with `spec`
 * and `cookie`, counts it placed at its `attempt`-th attempt. Returns 0,
 * or -ENOSPC (no placement record free: nothing done). */
int serve_place_held(struct serve *s, unsigned w, struct producer *pr,
		     struct shmsched_slot *slot, const struct pod_spec *spec,
		     uint64_t cookie, uint32_t node, uint32_t attempt);

/* A gang's attempt (bind/gang.h): pods[0..n) (n <= GANG_MIN_MAX), from
 * slots[i] of prs[i], at their attempts[i]-th attempt, placed all or
 * none. Returns 0 with every slot answered PLACED; 1 with nothing placed
 * and *failed the pod that found no node (r[*failed]: gave_up, or the
 * engine's diagnosis); -ENOSPC (not enough placement records), -ENOMEM,
 * -E2BIG (too many): nothing placed. Slots are not handed back. The pods
 * committed before a failure (r[0..*failed) with 1 or -ENOMEM) are given
 * back and published as release events. */
int serve_gang(struct serve *s, unsigned w, struct producer *const *prs,
	       struct shmsched_slot *const *slots, const struct record_pod *const *pods,
	       const uint32_t *attempts, unsigned n, struct resolve_result *r,
	       unsigned *failed);

struct ledger *serve_ledger(const struct serve *s);

/* The lowest priority any pod was placed with (bound pods included): a
 * pod at or below it has nobody to preempt. Any thread, relaxed. */
int32_t serve_lowest_priority(const struct serve *s);
struct queue_events *serve_events(const struct serve *s);

/* Answers `slot` UNSCHEDULABLE after the attempt `r` (worker w's engine's
 * message, or the lost races), `prefix` (may be NULL) first. */
void serve_unschedulable(struct serve *s, unsigned w, struct shmsched_slot *slot,
			 const struct resolve_result *r, const char *prefix);

/* Hands answered slots back on pr's completion ring (a broken ring
 * disconnects the producer; a full one is counted). */
void serve_complete(struct serve *s, unsigned w, struct producer *pr,
		    const uint64_t *h, unsigned k);

struct wait_stats;
/* The waiting pods' figures (daemon/wait_internal.h). Any thread. */
void serve_wait_stats(const struct serve *s, struct wait_stats *out);

struct producers *serve_producers(const struct serve *s);
struct serve_stats *serve_stats_of(struct serve *s, unsigned w);
const struct res_names *serve_res(const struct serve *s);
struct engine *serve_engine(const struct serve *s, unsigned w);

#endif
