/* Attempts and answers: the one layer of the daemon that places a pod,
 * records its placement and answers its slot, below both intakes that
 * hand it pods: new slots off the submit rings (daemon/serve.c) and
 * waiting pods out of the scheduling queue (daemon/wait.c), the
 * evictor's replies included. Both call down into this file; it calls
 * neither (kube-scheduler's ScheduleOne pops from the queue, and the
 * queue never calls back: pkg/scheduler/schedule_one.go).
 *
 * Every answer a slot gets is written here, by attempt_record_and_answer
 * (PLACED) or attempt_answer (any other status), and handed back by
 * attempt_complete: attempt.c's opening has the table of who answers a
 * slot, when, and why only once.
 *
 * Threads: every function but attempt_create, attempt_destroy,
 * attempt_set_persist and attempt_lowest_priority on worker w's thread
 * (for w), inside its read-side section (QSBR), for its own producers; or
 * on the thread that drains once the workers have stopped.
 */
#ifndef SHMSCHED_DAEMON_ATTEMPT_INTERNAL_H
#define SHMSCHED_DAEMON_ATTEMPT_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>

#include "base/base.h"
#include "bind/bind.h"
#include "ingest/ingest.h"
#include "quota/quota.h"
#include "shm/shm.h"
#include "workers/workers.h"

/* One per worker, written by that worker alone; read by others only when
 * the workers have stopped (or as approximate, relaxed figures). It is the
 * state region's worker stats section, field for field (daemon/daemon.c
 * checks). */
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

struct persist;
struct quota_charge;
struct taint_evict;

/* Worker w's last attempt_place when quota refused it (ATTEMPT_QUOTA):
 * what a pod that waits for quota waits on, and what it is told. The
 * message is not written here: a pod that parks is not told it (most
 * refusals under reclaim are of pods that park again), so only what
 * qc_full_message needs is kept, and attempt_unschedulable writes it when
 * the pod is answered (~7,000 instructions a refusal saved). */
struct attempt_quota_refusal {
	bool refused;     /* the last attempt_place returned ATTEMPT_QUOTA */
	int cq;           /* the pod's ClusterQueue (quota/quota.h node) */
	uint64_t gen;     /* quota_generation() of its tree, read before its
			   * first charge: quota given back since moves it */
	int flavor;       /* the first of its flavors quota refused */
	uint64_t serial;  /* qc_serial() of the tree cq and flavor are of */
	int n;            /* flavors tried, in the order tried: */
	int flavors[QUOTA_MAX_FLAVORS];
	int rcs[QUOTA_MAX_FLAVORS];             /* why each refused it */
	int64_t charge[QUOTA_MAX_RESOURCES];    /* the pod's (a gang's: the sum) */
	/* A gang's refusal (attempt_gang, attempt_gang_refusal) in words,
	 * written at once: a gang that waits keeps it for its deadline's
	 * answer (daemon/wait.c QG1), and gangs are few. */
	char gang_why[SHMSCHED_MESSAGE_MAX];
};

/* What both intakes share. The pointers are set by attempt_create and
 * never change: the intakes read them (worker w's engine and stats only on
 * worker w's thread). The rest is attempt.c's. */
struct attempt_ctx {
	struct producers *producers;
	struct placements *placements;
	struct ledger *ledger;         /* the cluster's (engines[0]'s) */
	const struct res_names *res;
	struct engine **engines;       /* [workers]: worker w's own */
	struct serve_stats *stats;     /* [workers]: worker w's own */
	struct queue_events *events;   /* what wakes waiting pods; may be NULL */
	unsigned workers;
	/* The lowest priority ever placed (live or not): a pod at or below it
	 * has nobody to preempt. Relaxed, moved only down by compare-and-swap:
	 * a stale read makes one preemption request more or less, which the
	 * evictor's own search settles. */
	int32_t lowest;
	struct persist *persist;       /* NULL: no durable store */
	struct quota_charge *quota;    /* NULL: no quotas (attempt_set_quota) */
	struct attempt_quota_refusal *refusal; /* [workers]: worker w's own */
	/* [workers]: worker w's GANG_MIN_MAX gang pods with a flavor's
	 * nodeLabels added (attempt_gang under quota), made on first use. */
	struct pod_spec **gang_flavored;
	uint64_t *store_seq;           /* [workers]: the last store op not yet
					* waited for */
	/* The taint manager's (daemon/taint_evict_internal.h): told of each
	 * placement. __atomic: stored once with release by
	 * attempt_set_lifecycle, loaded with acquire per placement (its
	 * partner); NULL: none yet. */
	struct taint_evict *lifecycle;
	/* Pools quarantined per template (daemon/quarantine_internal.h):
	 * stored with release by attempt_set_quarantine before the workers
	 * start, loaded with acquire per attempt (its partner); NULL: none.
	 * The pool label's key, the strings for the message, and each
	 * worker's quarantine message of its last attempt ("": none); the
	 * field "metadata.name"'s id (crash-pair avoidance's term). */
	struct quarantine *quarantine;
	uint32_t pool_key;
	uint32_t name_key;
	const struct intern *strings;
	char (*quarantine_why)[SHMSCHED_MESSAGE_MAX]; /* [workers] */
	/* The shard gate (daemon/shard_gate_internal.h), with --etcd: stored
	 * with release by attempt_set_shard_gate before the workers start,
	 * loaded with acquire per attempt (its partner); NULL: one host. Each
	 * worker's copy of its pod kept to the owned shards, and the pod's
	 * own spec from its attempt until that attempt's answer
	 * (attempt_unschedulable names the node it would have had; set by
	 * each attempt_place, cleared by that answer; the caller holds the
	 * pod in between). */
	struct shard_gate *shard_gate;
	struct pod_spec *shard_spec;          /* [workers] */
	const struct pod_spec **shard_orig;   /* [workers] */
	/* With --etcd-durability sync (daemon/etcd_sync_internal.h): each
	 * placement committed to etcd before its answer. ES2: stored with
	 * release by attempt_set_etcd_sync before the workers start, loaded
	 * with acquire per placement; NULL: not committed. */
	struct etcd_sync *etcd_sync;
	/* [workers], worker w's own: whether its placement now may be
	 * answered from its commit's completion instead of waiting for it
	 * (ATTEMPT_DEFER_*; attempt_defer_allow, attempt_defer_end). */
	uint8_t *defer;
};

/* a->defer[w]: a placement waits for its commit; may defer it; did. */
enum { ATTEMPT_DEFER_NO, ATTEMPT_DEFER_MAY, ATTEMPT_DEFER_DID };

/* With --etcd: placements only on the nodes of the shards `g` says this
 * host owns, and none while its lease is not surely alive. Before the
 * workers start. Returns 0 or -ENOMEM. */
struct shard_gate;
int attempt_set_shard_gate(struct attempt_ctx *a, struct shard_gate *g);

/* With --etcd-durability sync: every placement committed to etcd before
 * the pod is answered placed; one refused is rolled back (its node's use
 * and quota given back) and the pod answered unschedulable. Before the
 * workers start. */
struct etcd_sync;
void attempt_set_etcd_sync(struct attempt_ctx *a, struct etcd_sync *s);
/* With --etcd-durability sync, around worker w's attempt_place in
 * serve.c's burst: a placement not under quota made by that attempt
 * (attempt_record_and_answer) is not waited for: its record pushed to
 * etcd, it stays prepared (taken, its node's use charged, unpublished)
 * and its slot unanswered until the commit's completion, which
 * attempt_etcd_collect finishes (published and answered placed, or rolled
 * back and answered unschedulable) and hands back. attempt_defer_end
 * says whether the attempt did so (then the caller neither answers nor
 * hands the slot back: it is the commit's now). */
void attempt_defer_allow(struct attempt_ctx *a, unsigned w);
bool attempt_defer_end(struct attempt_ctx *a, unsigned w);
/* Worker w (or the drain, once the workers have stopped): its deferred
 * placements whose commits etcd has answered finished and handed back;
 * when none is answered yet and some are pending, waits up to wait_ns
 * for one. Returns how many. Inside a read-side section. */
unsigned attempt_etcd_collect(struct attempt_ctx *a, unsigned w, int64_t wait_ns);
/* Whether worker w has deferred placements not yet finished. */
bool attempt_etcd_pending(const struct attempt_ctx *a, unsigned w);
/* Whether the shard gate is set (preemption is off then: its victims
 * may be on other hosts' nodes). */
bool attempt_sharded(struct attempt_ctx *a);

/* Placements skip the nodes of pools quarantined for their template
 * (`q`; pools are the values of label `pool_key`, named from `strings`),
 * score the nodes where their template failed within the window lower
 * (quarantine_avoid), and are counted for it. Before the workers start.
 * Returns 0 or -ENOMEM. */
struct quarantine;
int attempt_set_quarantine(struct attempt_ctx *a, struct quarantine *q,
			   uint32_t pool_key, const struct intern *strings);

/* `engines[i]` is worker i's engine (all on one cluster); `stats` has room
 * for `workers`; every placement is recorded in `placements`; a placed pod
 * of an inter-pod group is told on `events` (NULL: none). Returns NULL
 * with errno. */
struct attempt_ctx *attempt_create(struct producers *p,
				   struct placements *placements,
				   const struct res_names *res, struct engine **engines,
				   struct serve_stats *stats, unsigned workers,
				   struct queue_events *events);
void attempt_destroy(struct attempt_ctx *a);

/* Every placement's record also goes to the durable store `p` (sync
 * durability: the intake waits with attempt_persist_wait before it hands
 * answers back). Before the pool starts. Returns 0 or -ENOMEM. */
int attempt_set_persist(struct attempt_ctx *a, struct persist *p);

/* Pods labelled with a LocalQueue of `q`'s tree are placed under its
 * quota (daemon/quota_charge_internal.h). Before the pool starts. */
void attempt_set_quota(struct attempt_ctx *a, struct quota_charge *q);

/* Each placement from now on is told to `te` (taint_evict_placed). Any
 * thread, once. */
void attempt_set_lifecycle(struct attempt_ctx *a, struct taint_evict *te);

/* With sync durability, waits until worker w's placements so far are on
 * disk (one wait, one group commit). */
void attempt_persist_wait(struct attempt_ctx *a, unsigned w);

/* The lowest priority any pod was placed with (bound pods included): a
 * pod at or below it has nobody to preempt. Any thread, relaxed. */
int32_t attempt_lowest_priority(const struct attempt_ctx *a);

enum attempt_result {
	ATTEMPT_ANSWERED,      /* the slot is answered (placed, or refused) */
	ATTEMPT_UNSCHEDULABLE, /* no node fits: the engine says why */
	ATTEMPT_GAVE_UP,       /* every commit lost a race */
	ATTEMPT_QUOTA,         /* no flavor of its ClusterQueue had quota left:
				* attempt_quota_refused() says why */
};

/* After worker w's attempt_place returned ATTEMPT_QUOTA: why, its
 * ClusterQueue and its tree's generation before the charge (a pod that
 * waits is woken once that moves); NULL after any other result. */
const struct attempt_quota_refusal *attempt_quota_refused(const struct attempt_ctx *a,
							  unsigned w);

/* Worker w's pod `spec`, refused by quota as `qr` says and parking for
 * it: reclaim asked of the evictor when its ClusterQueue's
 * .spec.preemption allows (qc_reclaim_ask, daemon/quota_charge.c QA6).
 * No-op without quota or reclaim. */
void attempt_quota_reclaim(struct attempt_ctx *a, unsigned w,
			   const struct pod_spec *spec,
			   const struct attempt_quota_refusal *qr);

/* One attempt at placing `pod`, decoded from `slot` of `pr`, its
 * `attempt`-th (1: its first): its placement record taken, placed and
 * committed; on success recorded and answered PLACED. Also answered here
 * (REJECTED, UNSCHEDULABLE): no record left, no memory, and for a pod
 * under quota (attempt_set_quota): a LocalQueue that does not exist, a
 * resource its ClusterQueue covers in no flavor. Otherwise not answered:
 * the caller answers or parks it; ATTEMPT_QUOTA when no flavor had quota
 * left (attempt_quota_refused: the message names the queue, each flavor
 * tried, the resource and the cohort; attempt_unschedulable answers with
 * it). A pod under
 * quota is charged to the first of its queue's flavors that has room and
 * where a node fits (the flavor's nodeLabels added to its nodeSelector),
 * and the charge is recorded with its placement (released with it). */
enum attempt_result attempt_place(struct attempt_ctx *a, unsigned w, struct producer *pr,
				  struct shmsched_slot *slot,
				  const struct record_pod *pod, uint32_t attempt,
				  struct resolve_result *r);

/* Answers `slot` PLACED on `node` for a pod whose use of it is taken
 * already (preemption's ledger_swap): records the placement with `spec`
 * and `cookie`, counts it placed at its `attempt`-th attempt. Returns 0,
 * or -ENOSPC (no placement record free: nothing done). */
int attempt_place_held(struct attempt_ctx *a, unsigned w, struct producer *pr,
		       struct shmsched_slot *slot, const struct pod_spec *spec,
		       uint64_t cookie, uint32_t node, uint32_t attempt);

/* attempt_gang's answers besides 0, 1 and -errno. */
#define ATTEMPT_GANG_QUOTA 2   /* no flavor of its ClusterQueue had quota
				* for the whole gang: nothing charged,
				* attempt_quota_refused() says why */
#define ATTEMPT_GANG_REFUSED 3 /* under quota and never admissible as it
				* is: attempt_gang_refusal() says why */

/* A gang's attempt (bind/gang.h): pods[0..n) (n <= GANG_MIN_MAX), from
 * slots[i] of prs[i], at their attempts[i]-th attempt, placed all or
 * none. Returns 0 with every slot answered PLACED; 1 with nothing placed
 * and *failed the pod that found no node (r[*failed]: gave_up, or the
 * engine's diagnosis); -ENOSPC (not enough placement records), -ENOMEM,
 * -E2BIG (too many): nothing placed. Slots are not handed back. The pods
 * committed before a failure (r[0..*failed) with 1 or -ENOMEM) are given
 * back and published as release events, *told of them in all (under
 * quota, one rollback per flavor tried: more than *failed).
 *
 * Under quota (attempt_set_quota; every pod naming the same LocalQueue
 * by kueue.x-k8s.io/queue-name): Kueue admits a pod group as one
 * workload, so the sum of the pods' requests is charged at once to the
 * first flavor of their ClusterQueue with room for all of it
 * (quota_try_charge: all or nothing), the flavor's nodeLabels added to
 * every pod's nodeSelector; a flavor where the gang finds no nodes gives
 * the charge back before the next is tried. Placed, each pod's record
 * carries the charge's tag and gives back its own requests (QA1, QA2 in
 * daemon/quota_charge.c). ATTEMPT_GANG_QUOTA when no flavor had quota
 * for it; ATTEMPT_GANG_REFUSED when its pods name a LocalQueue that does
 * not exist or different LocalQueues (or some none), or request a
 * resource the ClusterQueue covers in no flavor, or no flavor's
 * nodeLabels agree with their nodeSelector. */
int attempt_gang(struct attempt_ctx *a, unsigned w, struct producer *const *prs,
		 struct shmsched_slot *const *slots, const struct record_pod *const *pods,
		 const uint32_t *attempts, unsigned n, struct resolve_result *r,
		 unsigned *failed, unsigned *told);

/* After worker w's attempt_gang returned ATTEMPT_GANG_REFUSED: why, for a
 * person. */
const char *attempt_gang_refusal(const struct attempt_ctx *a, unsigned w);

/* Answers `slot` with `status` (not PLACED) and `why` (NULL: none). Not
 * handed back. */
void attempt_answer(struct shmsched_slot *slot, uint32_t status, const char *why);

/* Answers `slot` UNSCHEDULABLE after the attempt `r` (worker w's engine's
 * message, the lost races, or the quota's refusal after ATTEMPT_QUOTA),
 * `prefix` (may be NULL) first. */
void attempt_unschedulable(struct attempt_ctx *a, unsigned w, struct shmsched_slot *slot,
			   const struct resolve_result *r, const char *prefix);

/* Hands answered slots (and notices, SHMSCHED_HANDLE_NOTICE) back on pr's
 * completion ring (a broken ring disconnects the producer; a full one is
 * counted). */
void attempt_complete(struct attempt_ctx *a, unsigned w, struct producer *pr,
		      const uint64_t *h, unsigned k);

/* attempt_answer, then attempt_complete of that one slot: slot `index`
 * of `pr`. */
void attempt_answer_one(struct attempt_ctx *a, unsigned w, struct producer *pr,
			uint32_t index, uint32_t status, const char *why);

#endif
