/* Waiting pods in the daemon: the worker side of the scheduling queue
 * (workers/queue.h). A pod that asked to wait (its slot's
 * SHMSCHED_SLOT_WAIT, or shmschedd --wait without SHMSCHED_SLOT_NO_WAIT)
 * and fits no node is parked in its worker's queue instead of being
 * answered; its slot stays the daemon's. Each poll the worker then:
 * forgets the pods of producers that went away (their slots are gone with
 * the region: nothing to answer), reads the cluster events, moves pods
 * whose backoff ended, answers pods whose deadline passed (after one last
 * attempt), and attempts the pods activeQ hands out. The pod gets exactly
 * one answer: PLACED, UNSCHEDULABLE (its deadline passed), CANCELLED (its
 * producer's SHMSCHED_HANDLE_CANCEL, or the daemon's shutdown). A pod
 * that quota refused (attempt.c's ATTEMPT_QUOTA) waits too, for quota
 * given back in its ClusterQueue's cohort tree, and is then tried in
 * Kueue's fair-sharing order between ClusterQueues (wait.c, QW1-QW7).
 *
 * A producer's pods are served by one worker (table index i % workers),
 * which alone writes its completion ring: so a worker's queue holds its
 * own producers' pods, numbered (i / workers) * slots + slot.
 *
 * Bounds: at most a region's slots per producer (a waiting pod holds its
 * slot: a producer whose pods all wait can submit no more, which is its
 * back-pressure); the queues' memory is allocated when the daemon starts
 * (touched only as pods wait).
 *
 * Threads: wait_park, wait_gang, wait_burst_end, wait_cancel, wait_holds
 * and wait_poll on worker w's thread, inside its read-side section
 * (QSBR), for its own producers;
 * wait_shutdown on the thread that stopped the workers; wait_get_stats
 * anywhere (relaxed figures).
 */
#ifndef SHMSCHED_DAEMON_WAIT_INTERNAL_H
#define SHMSCHED_DAEMON_WAIT_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>

#include "ingest/ingest.h"
#include "workers/workers.h"
#include "daemon/evict_internal.h"

struct attempt_ctx;
struct serve_wait;

struct serve_wait_config {
	struct queue_events *events; /* what wakes waiting pods */
	const struct plugin_ctx *ctx;
	struct ledger *ledger;
	uint32_t slots;              /* per producer region */
	uint64_t initial_backoff_ns; /* podInitialBackoffSeconds */
	uint64_t max_backoff_ns;     /* podMaxBackoffSeconds */
	bool wait_default;           /* pods wait unless their slot says NO_WAIT */
	struct evictor *evictor;     /* preemption (daemon/evict_internal.h);
				      * NULL: none */
};

/* Totals over the workers (relaxed figures while they run). */
struct wait_stats {
	uint64_t waited;       /* pods that waited (parked at least once) */
	uint64_t placed;       /* ... and were placed after waiting */
	uint64_t timed_out;    /* ... answered UNSCHEDULABLE at their deadline */
	uint64_t cancelled;    /* ... cancelled by their producer */
	uint64_t shutdown;     /* ... cancelled at shutdown */
	uint64_t forgotten;    /* ... whose producer went away */
	uint64_t retries;      /* attempts made from the queue */
	uint64_t cancel_misses; /* cancels naming no waiting pod */
	uint64_t preemptions;   /* requests sent to the evictor */
	uint64_t preempted;     /* ... that held a node, and the pod placed */
	uint64_t victims;       /* pods evicted for them */
	uint64_t notices;       /* EVICTED notices written to producers */
	uint64_t notices_dropped; /* ... that found the producer's notices full */
	uint64_t gangs_placed;  /* gangs placed whole */
	uint64_t gang_failures; /* gang attempts that placed none ... */
	uint64_t gang_rollbacks; /* ... after committing some of it */
	uint64_t gang_timeouts; /* gangs that did not gather minMember in time */
	uint64_t quota_parked;  /* times a pod parked refused by quota */
	uint64_t quota_wakeups; /* times a cohort tree's quota came back and
				 * its pods waiting on it were looked at */
	uint64_t quota_woken;   /* ... pods so woken (PW2 in daemon/wait.c:
				 * those quota might take) */
	uint64_t quota_skipped; /* woken pods parked again unattempted: quota
				 * would refuse them (QW9 in daemon/wait.c) */
	struct queue_stats queue; /* summed, gauges included */
};

/* The waiting pods of `workers` workers, attempted and answered through
 * `a` (daemon/attempt.c), which the queue calls down into and which never
 * calls back. Returns NULL with errno (ENOMEM, EINVAL). */
struct serve_wait *wait_create(struct attempt_ctx *a, const struct serve_wait_config *c,
			       unsigned workers);
void wait_destroy(struct serve_wait *wt);

enum wait_park {
	WAIT_NOT = 0,     /* it does not wait: answer it UNSCHEDULABLE now */
	WAIT_PARKED,      /* parked: not answered now */
	WAIT_EXPIRED,     /* it would wait, but its deadline has passed: answer
			   * it as a deadline's answer (WAIT_DEADLINE_PREFIX) */
};
#define WAIT_DEADLINE_PREFIX "its deadline passed after %u attempt%s: "

/* After an attempt of slot `index` of `pr` that found no node (gave_up:
 * it lost every race): parks the pod when it may wait and its deadline
 * has not passed. change_head: the ledger's change head before the
 * attempt. */
enum wait_park wait_park(struct serve_wait *wt, unsigned w, struct producer *pr,
			 uint32_t index, const struct record_pod *pod, bool gave_up,
			 uint64_t change_head);

/* A gang's pod (pod->spec.gang): never placed alone. It waits in the
 * queue with its gang; once minMember of the gang's pods wait, all of them
 * are placed together or none is (bind/gang.h), again on each wake-up;
 * a gang that does not gather minMember pods within its timeout has its
 * pods answered UNSCHEDULABLE. Under quota the gang takes its quota all
 * or nothing with its placement, and waits as one for quota given back
 * in its cohort tree when refused (QG1 in daemon/wait.c). Returns WAIT_PARKED, or WAIT_NOT when the
 * worker's gang table (GANGS_PER_WORKER) or the gang (GANG_MIN_MAX) is
 * full: answer it REJECTED. */
enum wait_park wait_gang(struct serve_wait *wt, unsigned w, struct producer *pr,
			 uint32_t index, const struct record_pod *pod);

/* The end of a burst of worker w's producer: the figures of the pods
 * wait_park and wait_gang parked in it published, once (not once a pod:
 * issue 39). */
void wait_burst_end(struct serve_wait *wt, unsigned w);

/* Whether slot `index` of `pr` holds a waiting pod (a producer that
 * submits it again breaks the hand-over: the daemon ignores that). */
bool wait_holds(struct serve_wait *wt, unsigned w, struct producer *pr,
		uint32_t index);

/* A cancel handle for slot `index`: answers the pod CANCELLED and returns
 * true when it waits; false otherwise (nothing to hand back). */
bool wait_cancel(struct serve_wait *wt, unsigned w, struct producer *pr,
		 uint32_t index);

/* The queue's work of one poll (see above). Returns how much it did. */
unsigned wait_poll(struct serve_wait *wt, unsigned w);

/* Answers every waiting pod CANCELLED ("the daemon shut down"), once the
 * workers have stopped. Returns how many. */
unsigned wait_shutdown(struct serve_wait *wt);

void wait_get_stats(const struct serve_wait *wt, struct wait_stats *out);

#endif
