/* The workers' per-pod loop: see serve.h.
 *
 * Per poll and producer: a turn of bursts (the fair share, see
 * serve_producer), each one burst dequeue of up to SERVE_BURST handles,
 * then per handle a bounds check, record_decode() (a copy and checks),
 * resolver_place() (placement and a compare-and-swap commit, bounded
 * retries) and answer_slot(); then one burst enqueue of the answered
 * handles. A completion ring holds every slot of its region, so it can be
 * full only if a producer submitted the same slot twice; such answers are
 * retried a bounded number of times and then counted and dropped (the
 * producer broke its side of the hand-over; no one else is affected).
 */
#include "daemon/serve_internal.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/base.h"
#include "bind/bind.h"
#include "ingest/ingest.h"
#include "daemon/persist_internal.h"
#include "daemon/wait_internal.h"

/* The fair share's (workers/pool.h, pool_fair_turn). */
#define SERVE_BURST POOL_FAIR_BURST
#define SERVE_QUANTUM_NS POOL_FAIR_QUANTUM_NS
/* A worker that has found no pod in any poll for this long makes its
 * pods pay for compiles (engine_set_busy): it may never idle again.
 * Not 2 ms: a pause of the VM that long made pods pay, and the queue
 * behind them grew while they did. */
#define SERVE_BUSY_NS UINT64_C(50000000)

struct serve {
	struct producers *producers;
	struct serve_wait *wait;     /* waiting pods (daemon/wait.c) */
	struct queue_events *events; /* what wakes them */
	struct placements *placements;
	struct ledger *ledger;
	const struct res_names *res;
	struct engine **engines;
	struct serve_stats *stats;
	unsigned workers;
	int cancel; /* __atomic, relaxed: a mode switch read once per pod */
	/* The lowest priority ever placed (live or not): a pod at or below it
	 * has nobody to preempt. Relaxed, moved only down by compare-and-swap:
	 * a stale read makes one preemption request more or less, which the
	 * evictor's own search settles. */
	int32_t lowest;
	struct persist *persist; /* NULL: no durable store */
	uint64_t *store_seq;     /* [workers]: the burst's last store op */
	/* [workers]: each pod's service time on its worker (decode, place,
	 * commit, answer), each worker's own (stat_inc); process-private, so
	 * not in the state region's worker stats. */
	uint64_t (*service)[HIST_BUCKETS];
	/* [workers]: when each worker's poll last found no pod, each
	 * worker's own. */
	uint64_t *idle_ns;
};

struct serve *serve_create(struct producers *p, struct placements *placements,
			   const struct res_names *res, struct engine **engines,
			   struct serve_stats *stats, unsigned workers,
			   const struct serve_wait_config *wc)
{
	struct serve *s = calloc(1, sizeof(*s));
	if (s == NULL)
		return NULL;
	s->wait = wait_create(s, wc, workers);
	if (s->wait == NULL) {
		free(s);
		return NULL;
	}
	s->events = wc->events;
	s->producers = p;
	s->lowest = INT32_MAX;
	/* What a cluster file or a previous daemon placed (no worker runs
	 * yet: the table is this thread's to read). */
	uint32_t cursor = 0;
	uint64_t id;
	while ((id = placements_next(placements, &cursor)) != 0) {
		const struct placement_record *r = placements_get(placements, id);
		if (r != NULL && r->priority < s->lowest)
			s->lowest = r->priority;
	}
	s->placements = placements;
	s->ledger = cluster_ledger(engine_cluster(engines[0]));
	s->res = res;
	s->engines = engines;
	s->stats = stats;
	s->workers = workers;
	s->service = calloc(workers ? workers : 1, sizeof(*s->service));
	s->idle_ns = calloc(workers ? workers : 1, sizeof(*s->idle_ns));
	if (s->service == NULL || s->idle_ns == NULL) {
		serve_destroy(s);
		return NULL;
	}
	return s;
}

void serve_destroy(struct serve *s)
{
	if (s != NULL) {
		wait_destroy(s->wait);
		free(s->store_seq);
		free(s->service);
		free(s->idle_ns);
	}
	free(s);
}

void serve_service_hist(const struct serve *s, uint64_t out[HIST_BUCKETS])
{
	for (unsigned b = 0; b < HIST_BUCKETS; b++)
		out[b] = 0;
	for (unsigned w = 0; w < s->workers; w++)
		for (unsigned b = 0; b < HIST_BUCKETS; b++)
			out[b] += stat_read(&s->service[w][b]);
}

int serve_set_persist(struct serve *s, struct persist *p)
{
	s->store_seq = calloc(s->workers, sizeof(*s->store_seq));
	if (s->store_seq == NULL)
		return -ENOMEM;
	s->persist = p;
	return 0;
}

void serve_cancel_all(struct serve *s)
{
	__atomic_store_n(&s->cancel, 1, __ATOMIC_RELAXED);
}

/* One attempt at placing a decoded pod of `pr`: its placement record
 * taken, placed and committed; on success its record made and the slot
 * answered PLACED. Also answered here (REJECTED, UNSCHEDULABLE): no record
 * left, no memory. Otherwise the slot is left for the caller: no node
 * fits (the engine's message and failure bits say why) or every commit
 * lost its race (r->gave_up). */
static void note_priority(struct serve *s, int32_t priority)
{
	int32_t cur = __atomic_load_n(&s->lowest, __ATOMIC_RELAXED);
	while (priority < cur &&
	       !__atomic_compare_exchange_n(&s->lowest, &cur, priority, true,
					    __ATOMIC_RELAXED, __ATOMIC_RELAXED))
		;
}

int32_t serve_lowest_priority(const struct serve *s)
{
	return __atomic_load_n(&s->lowest, __ATOMIC_RELAXED);
}

/* scheduler_pod_scheduling_attempts' bucket of a pod placed at its
 * `attempt`-th attempt: 1, 2, 3-4, 5-8, 9-16, more. */
static unsigned attempts_bucket(uint32_t attempt)
{
	unsigned b = 0;
	for (uint32_t top = 1; b < STATE_ATTEMPT_BUCKETS - 1 && attempt > top; top *= 2)
		b++;
	return b;
}

enum serve_attempt serve_attempt(struct serve *s, unsigned w, struct producer *pr,
				 struct shmsched_slot *slot,
				 const struct record_pod *pod, uint32_t attempt,
				 struct resolve_result *r)
{
	struct serve_stats *st = &s->stats[w];
	char why[SHMSCHED_MESSAGE_MAX];
	/* The placement's record first: a pod is placed only if the daemon
	 * can remember whose it is (invariant 7). */
	int64_t rec = placements_take(s->placements);
	if (rec < 0) {
		stat_inc(&st->rejected);
		snprintf(why, sizeof(why), "the daemon holds %u placements, the most "
			 "it keeps (--max-placements): release some first",
			 placements_capacity(s->placements));
		answer_slot(slot, SHMSCHED_REJECTED, 0, now_ns(), why);
		return SERVE_ANSWERED;
	}
	struct engine *e = s->engines[w];
	uint64_t seq = ((uint64_t)w << 48) | st->seq++; /* the worker's own */
	if (resolver_place(e, pod->spec, seq, r, &st->resolver) < 0) {
		placements_untake(s->placements, (uint32_t)rec);
		answer_slot(slot, SHMSCHED_UNSCHEDULABLE, 0, now_ns(),
			      "the daemon ran out of memory placing this pod");
		return SERVE_ANSWERED;
	}
	if (r->placement.slot >= 0) {
		uint32_t node = (uint32_t)r->placement.slot;
		/* Inside the placement's read-side section: its node's own
		 * generation (shm/ledger.h). */
		uint64_t id;
		const struct placement_record *made = placements_prepare(
			s->placements, (uint32_t)rec, node,
			ledger_node_generation(s->ledger, node), pod->spec,
			&r->placement.devices, pod->cookie, &id);
		/* Queued before it is published: no release of it (an
		 * admin's, a resync's, a guessed id's) can queue its delete
		 * ahead of this put. */
		if (s->persist != NULL)
			s->store_seq[w] = persist_placement(s->persist, id, made,
							    pr->owner);
		/* The record's own time (read before it is published: then
		 * it may be freed): one clock read fewer per pod. */
		uint64_t placed_ns = made->placed_ns;
		placements_publish(s->placements, (uint32_t)rec, pr->owner);
		answer_placed(slot, node, placed_ns, &r->placement.devices, id);
		stat_inc(&st->attempts[attempts_bucket(attempt)]);
		note_priority(s, pod->spec->priority);
		/* A waiting pod refused by pod affinity or spread may fit now
		 * (E7 in workers/queue.c). */
		if (pod->spec->group != 0 && s->events != NULL &&
		    queue_events_want_placed(s->events)) {
			struct queue_event ev = queue_event_placed();
			queue_events_publish(s->events, &ev);
		}
		return SERVE_ANSWERED;
	}
	placements_untake(s->placements, (uint32_t)rec);
	return r->gave_up ? SERVE_GAVE_UP : SERVE_UNSCHEDULABLE;
}

int serve_place_held(struct serve *s, unsigned w, struct producer *pr,
		     struct shmsched_slot *slot, const struct pod_spec *spec,
		     uint64_t cookie, uint32_t node, uint32_t attempt)
{
	struct serve_stats *st = &s->stats[w];
	int64_t rec = placements_take(s->placements);
	if (rec < 0)
		return -ENOSPC;
	uint64_t id;
	struct device_assignment none = {0};
	const struct placement_record *made = placements_prepare(
		s->placements, (uint32_t)rec, node,
		ledger_node_generation(s->ledger, node), spec, &none, cookie, &id);
	if (s->persist != NULL)
		s->store_seq[w] = persist_placement(s->persist, id, made, pr->owner);
	uint64_t placed_ns = made->placed_ns; /* before it is published */
	placements_publish(s->placements, (uint32_t)rec, pr->owner);
	answer_placed(slot, node, placed_ns, &none, id);
	stat_inc(&st->attempts[attempts_bucket(attempt)]);
	stat_inc(&st->resolver.placed);
	note_priority(s, spec->priority);
	if (spec->group != 0 && s->events != NULL &&
	    queue_events_want_placed(s->events)) {
		struct queue_event ev = queue_event_placed();
		queue_events_publish(s->events, &ev);
	}
	return 0;
}

int serve_gang(struct serve *s, unsigned w, struct producer *const *prs,
	       struct shmsched_slot *const *slots, const struct record_pod *const *pods,
	       const uint32_t *attempts, unsigned n, struct resolve_result *r,
	       unsigned *failed)
{
	struct serve_stats *st = &s->stats[w];
	int64_t rec[GANG_MIN_MAX];
	const struct pod_spec *specs[GANG_MIN_MAX] = {0};
	unsigned taken = 0;
	int rc = -ENOSPC;
	if (n > GANG_MIN_MAX)
		return -E2BIG;
	/* Every placement's record first: a gang is placed only if the
	 * daemon can remember all of it. */
	for (; taken < n; taken++) {
		rec[taken] = placements_take(s->placements);
		if (rec[taken] < 0)
			goto untake;
		specs[taken] = pods[taken]->spec;
	}
	uint64_t seq = ((uint64_t)w << 48) | st->seq;
	st->seq += n;
	rc = gang_place(s->engines[w], specs, n, seq, r, failed, &st->resolver);
	if (rc != 0) {
		/* The pods committed before the failure were given back, and
		 * other workers' attempts meanwhile may have failed for the room
		 * they held: told as releases, or those would wait for room that
		 * is free again. */
		for (unsigned i = 0; s->events != NULL && i < *failed; i++) {
			struct queue_event ev = queue_event_release(
				(uint32_t)r[i].placement.slot, specs[i],
				&r[i].placement.devices);
			queue_events_publish(s->events, &ev);
		}
		goto untake;
	}
	uint64_t now = now_ns();
	for (unsigned i = 0; i < n; i++) {
		uint32_t node = (uint32_t)r[i].placement.slot;
		uint64_t id;
		const struct placement_record *made = placements_prepare(
			s->placements, (uint32_t)rec[i], node,
			ledger_node_generation(s->ledger, node), specs[i],
			&r[i].placement.devices, pods[i]->cookie, &id);
		if (s->persist != NULL)
			s->store_seq[w] = persist_placement(s->persist, id, made,
							    prs[i]->owner);
		placements_publish(s->placements, (uint32_t)rec[i], prs[i]->owner);
		answer_placed(slots[i], node, now, &r[i].placement.devices, id);
		stat_inc(&st->attempts[attempts_bucket(attempts[i])]);
		note_priority(s, specs[i]->priority);
	}
	return 0;

untake:
	while (taken-- > 0)
		placements_untake(s->placements, (uint32_t)rec[taken]);
	return rc;
}

struct ledger *serve_ledger(const struct serve *s)
{
	return s->ledger;
}

struct queue_events *serve_events(const struct serve *s)
{
	return s->events;
}

void serve_unschedulable(struct serve *s, unsigned w, struct shmsched_slot *slot,
			 const struct resolve_result *r, const char *prefix)
{
	char why[SHMSCHED_MESSAGE_MAX];
	int n = prefix != NULL ? snprintf(why, sizeof(why), "%s", prefix) : 0;
	if (n < 0 || (size_t)n >= sizeof(why))
		n = 0;
	if (r->gave_up)
		snprintf(why + n, sizeof(why) - (size_t)n, "0/%u nodes were left to "
			 "this pod: %u placements found a node and lost it to "
			 "concurrent ones", r->placement.all_nodes, r->attempts);
	else
		engine_message(s->engines[w], why + n, sizeof(why) - (size_t)n);
	answer_slot(slot, SHMSCHED_UNSCHEDULABLE, 0, now_ns(), why);
}

/* Answers one slot the daemon owns, or parks its pod in the queue to wait
 * (returns false: nothing to hand back now). */
static bool answer(struct serve *s, unsigned w, struct producer *pr,
		   uint32_t index)
{
	struct shmsched_slot *slot = &pr->region.slots[index];
	struct serve_stats *st = &s->stats[w];
	struct record_templates t = {pr->templates, producers_templates(pr)};
	struct record_pod pod;
	char why[SHMSCHED_MESSAGE_MAX];
	if (wait_holds(s->wait, w, pr, index)) {
		/* Submitted again while it waits: the producer broke the
		 * hand-over; the pod keeps its one answer to come. */
		stat_inc(&st->bad_handles);
		return false;
	}
	stat_inc(&st->pods);
	if (__atomic_load_n(&s->cancel, __ATOMIC_RELAXED)) {
		stat_inc(&st->cancelled);
		answer_slot(slot, SHMSCHED_CANCELLED, 0, now_ns(),
			      "the daemon shut down before placing this pod");
		return true;
	}
	if (record_decode(slot, &t, s->res, &pod, why, sizeof(why)) < 0) {
		stat_inc(&st->rejected);
		answer_slot(slot, SHMSCHED_REJECTED, 0, now_ns(), why);
		return true;
	}
	if (pod.spec->gang != 0) {
		/* All of its gang or none: never placed alone. */
		if (wait_gang(s->wait, w, pr, index, &pod) == WAIT_PARKED)
			return false;
		stat_inc(&st->rejected);
		answer_slot(slot, SHMSCHED_REJECTED, 0, now_ns(), "its pod group "
			    "cannot take it: the worker's gangs, or the gang's pods, are "
			    "at their most");
		return true;
	}
	struct resolve_result r;
	uint64_t change_head = ledger_changes_head(s->ledger);
	enum serve_attempt a = serve_attempt(s, w, pr, slot, &pod, 1, &r);
	if (a == SERVE_ANSWERED)
		return true;
	enum wait_park wp = wait_park(s->wait, w, pr, index, &pod,
				      a == SERVE_GAVE_UP, change_head);
	if (wp == WAIT_PARKED)
		return false;
	if (wp == WAIT_EXPIRED)
		snprintf(why, sizeof(why), WAIT_DEADLINE_PREFIX, 1u, "");
	serve_unschedulable(s, w, slot, &r, wp == WAIT_EXPIRED ? why : NULL);
	return true;
}

/* One burst of one producer's turn (pool_fair_burst_fn): up to `want`
 * handles dequeued and answered, the time they took in *spent_ns.
 *
 * The rings are read and written only through the daemon's guards
 * (shm/ring.h): an impossible index from the producer disconnects it
 * (producers_fault). */
struct serve_turn {
	struct serve *s;
	unsigned w;
	struct producer *pr;
};

static int serve_burst(void *arg, unsigned want, uint64_t *spent_ns)
{
	struct serve_turn *turn = arg;
	struct serve *s = turn->s;
	unsigned w = turn->w;
	struct producer *pr = turn->pr;
	struct serve_stats *st = &s->stats[w];
	uint64_t h[SERVE_BURST];
	char why[160];
	*spent_ns = 0;
	int n = ring_guard_dequeue(&pr->submit, h, want);
	if (n < 0) {
		snprintf(why, sizeof(why), "its submit ring's index claims more "
			 "than the ring's %u handles", pr->submit.capacity);
		producers_fault(s->producers, pr, why);
		return -EPROTO;
	}
	if (n == 0)
		return 0;
	/* The burst's slots were written on the producer's core: their lines
	 * are fetched together here rather than one miss per pod (half of
	 * record_decode()'s time was its first read of the slot). The part
	 * the answer writes, for writing. */
	unsigned pods = 0;
	for (int i = 0; i < n; i++)
		if (h[i] < pr->region.n_slots) {
			const char *at = (const char *)&pr->region.slots[h[i]];
			__builtin_prefetch(at);
			__builtin_prefetch(at + 64, 1);
			__builtin_prefetch(at + 128, 1);
			pods++;
		}
	/* Release, partner of producers_is_busy()'s acquire: taken moves
	 * before any answer of these pods does. */
	__atomic_store_n(&pr->taken, pr->taken + pods, __ATOMIC_RELEASE);
	uint64_t t0 = now_ns(), t = t0;
	/* Pods pay for compiles only once the worker has not idled for
	 * SERVE_BUSY_NS; until then its idle polls do them. */
	engine_set_busy(s->engines[w], t0 - s->idle_ns[w] > SERVE_BUSY_NS);
	unsigned k = 0;
	for (unsigned i = 0; i < (unsigned)n; i++) {
		if (h[i] & SHMSCHED_HANDLE_CANCEL) {
			/* A cancel hands no slot over; the slot it names, if
			 * waiting, is answered now. */
			uint64_t idx = h[i] & ~SHMSCHED_HANDLE_CANCEL;
			if (idx >= pr->region.n_slots)
				stat_inc(&st->bad_handles);
			else if (wait_cancel(s->wait, w, pr, (uint32_t)idx))
				h[k++] = idx;
			t = now_ns(); /* not a pod: no service time of its own */
			continue;
		}
		if (h[i] >= pr->region.n_slots) {
			stat_inc(&st->bad_handles); /* no slot to answer in */
			continue;
		}
		bool now = answer(s, w, pr, (uint32_t)h[i]);
		/* One clock read per pod: its service time ends where the
		 * next one's begins. */
		uint64_t t1 = now_ns();
		stat_inc(&s->service[w][hist_bucket(t1 - t)]);
		t = t1;
		if (now)
			h[k++] = h[i];
	}
	*spent_ns = t - t0;
	/* Sync durability: no answer of this burst is handed back before the
	 * burst's placements are on disk (one wait, one group commit). The
	 * wait is not the producer's cost: counted, it would shrink bursts to
	 * one pod and make every pod wait for its own fsync. */
	if (s->persist != NULL && s->store_seq[w] != 0 && persist_sync(s->persist)) {
		persist_wait(s->persist, s->store_seq[w]);
		s->store_seq[w] = 0;
	}
	serve_complete(s, w, pr, h, k);
	return n;
}

/* One turn of one producer; returns the slots answered, or 1 when it has
 * pods waiting but no time left this turn (so the pool does not sleep).
 *
 * Fair share, by deficit round robin on measured time (pool_fair_turn,
 * workers/pool.h): each turn adds SERVE_QUANTUM_NS to the producer's
 * allowance; while the allowance covers a pod at the producer's recent
 * cost per pod and it has pods, it is served bursts of as many as fit
 * (1 .. SERVE_BURST), and the time they took is taken off. A producer of
 * expensive pods therefore waits more turns for its next pod, a producer
 * of cheap ones is served more bursts per turn, and every busy producer
 * of a worker gets about the same share of its time, however costly its
 * pods. A producer idle all turn keeps no credit (at most 0), but keeps
 * its debt; one that ran dry after some pods keeps the rest, capped (what
 * it could have used). Two clock reads per burst and one per pod (vDSO,
 * no system call). */
static unsigned serve_producer(struct serve *s, unsigned w, struct producer *pr)
{
	if (producers_faulted(pr))
		return 0;
	struct serve_turn turn = {s, w, pr};
	struct pool_fair f = {pr->deficit_ns, pr->cost_ns};
	bool out_of_time;
	int n = pool_fair_turn(&f, serve_burst, &turn, &out_of_time);
	pr->deficit_ns = f.deficit_ns;
	pr->cost_ns = f.cost_ns;
	if (n < 0)
		return 0; /* faulted */
	if (n == 0 && out_of_time)
		return ring_guard_pending(&pr->submit) > 0 ? 1 : 0;
	return (unsigned)n;
}

void serve_complete(struct serve *s, unsigned w, struct producer *pr,
		    const uint64_t *h, unsigned k)
{
	char why[160];
	if (k == 0)
		return;
	/* Answers, not notices (a notice answers no pod). Release, partner
	 * of producers_is_busy()'s acquire. Counted whether or not the ring
	 * took them: a dropped answer is the producer's breakage. */
	unsigned answers = 0;
	for (unsigned i = 0; i < k; i++)
		answers += !(h[i] & SHMSCHED_HANDLE_NOTICE);
	__atomic_store_n(&pr->answered, pr->answered + answers, __ATOMIC_RELEASE);
	int sent = answer_complete(&pr->completion, h, k);
	if (sent < 0) {
		snprintf(why, sizeof(why), "its completion ring's index is ahead "
			 "of the daemon's or more than %u behind",
			 pr->completion.capacity);
		producers_fault(s->producers, pr, why);
		return;
	}
	if (k > (unsigned)sent)
		stat_add(&s->stats[w].completion_overflows, k - (unsigned)sent);
}

/* Gives the worker's engine the producer's templates registered since the
 * last look, so their classes are compiled before (or while) their pods
 * come: by the pods' bounded budgets and by idle polls (engine.h). */
static void serve_prepare(struct serve *s, unsigned w, struct producer *pr)
{
	uint32_t n = producers_templates(pr);
	for (; pr->prepared < n; pr->prepared++)
		(void)engine_prepare(s->engines[w], &pr->templates[pr->prepared],
				     pr->templates_static[pr->prepared]);
}

unsigned serve_poll(void *arg, unsigned worker, void *scratch)
{
	struct serve *s = arg;
	(void)scratch;
	/* Waiting pods first: a pod an event woke goes before new arrivals,
	 * as kube's activeQ holds both and pops by priority. */
	unsigned done = wait_poll(s->wait, worker);
	/* Only the indices that may hold a producer: no idle look at every
	 * slot of the table per poll. */
	uint32_t end = producers_bound(s->producers);
	for (uint32_t i = worker; i < end; i += s->workers) {
		struct producer *pr = producers_get(s->producers, i);
		if (pr != NULL) {
			serve_prepare(s, worker, pr);
			done += serve_producer(s, worker, pr);
		}
	}
	/* No pod this round: compile ahead, and poll again rather than sleep
	 * while compiles are left. */
	if (done == 0) {
		s->idle_ns[worker] = now_ns();
		if (engine_idle(s->engines[worker]))
			done = 1;
	}
	return done;
}

/* D1 of workers/pool.c for worker w: the mark in each of its producers'
 * regions (relaxed: the fence orders it before the doorbells' reads and
 * the poll), then each doorbell, acquire: a producer's add that this reads
 * comes after the handles it rang for, which the poll then finds. The
 * regions are the producers' to scribble on: the daemon only writes the
 * mark and hands the kernel the doorbell's address. */
static unsigned serve_announce(void *arg, unsigned worker,
			       struct pool_doorbell *out, unsigned max)
{
	struct serve *s = arg;
	unsigned n = 0;
	uint32_t end = producers_bound(s->producers);
	for (uint32_t i = worker; i < end && n < max; i += s->workers) {
		struct producer *pr = producers_get(s->producers, i);
		if (pr == NULL || producers_faulted(pr))
			continue;
		struct shmsched_notices *ns = pr->region.notices;
		__atomic_store_n(&ns->asleep, 1, __ATOMIC_RELAXED);
		out[n++].word = &ns->doorbell;
	}
	state_fence_full();
	for (unsigned k = 0; k < n; k++)
		out[k].seen = __atomic_load_n(out[k].word, __ATOMIC_ACQUIRE);
	return n;
}

/* The marks taken back: the producers stop ringing. Relaxed: a producer
 * that still sees a mark only wakes a worker already awake. */
static void serve_awake(void *arg, unsigned worker)
{
	struct serve *s = arg;
	uint32_t end = producers_bound(s->producers);
	for (uint32_t i = worker; i < end; i += s->workers) {
		struct producer *pr = producers_get(s->producers, i);
		if (pr != NULL)
			__atomic_store_n(&pr->region.notices->asleep, 0, __ATOMIC_RELAXED);
	}
}

struct pool_doorbells_ops serve_doorbells = {
	.announce = serve_announce,
	.awake = serve_awake,
};

unsigned serve_drain(struct serve *s)
{
	unsigned total = 0, n;
	/* Worker 0's engine and stats: the workers have stopped. */
	do {
		n = 0;
		for (uint32_t i = 0; i < PRODUCERS_MAX; i++) {
			struct producer *pr = producers_get(s->producers, i);
			if (pr != NULL)
				n += serve_producer(s, 0, pr);
		}
		total += n;
	} while (n > 0);
	/* Then the waiting pods: cancelled, as shutdown goes. */
	return total + wait_shutdown(s->wait);
}

void serve_wait_stats(const struct serve *s, struct wait_stats *out)
{
	wait_get_stats(s->wait, out);
}

struct producers *serve_producers(const struct serve *s)
{
	return s->producers;
}

struct serve_stats *serve_stats_of(struct serve *s, unsigned w)
{
	return &s->stats[w];
}

const struct res_names *serve_res(const struct serve *s)
{
	return s->res;
}

struct engine *serve_engine(const struct serve *s, unsigned w)
{
	return s->engines[w];
}
