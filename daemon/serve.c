/* The workers' per-pod loop: see serve_internal.h.
 *
 * Per poll and producer: a turn of bursts (the fair share, see
 * serve_producer), each one burst dequeue of up to SERVE_BURST handles,
 * then per handle a bounds check, record_decode() (a copy and checks),
 * and attempt_place() (daemon/attempt.c: placement and a compare-and-swap
 * commit, bounded retries, the record and the answer) or the queue
 * (daemon/wait.c); then one burst enqueue of the answered handles. A
 * completion ring holds every slot of its region, so it can be full only
 * if a producer submitted the same slot twice; such answers are retried a
 * bounded number of times and then counted and dropped (the producer
 * broke its side of the hand-over; no one else is affected).
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
#include "daemon/attempt_internal.h"
#include "daemon/etcd_sync_internal.h"
#include "daemon/wait_internal.h"

/* The fair share's (workers/pool.h, pool_fair_turn). */
#define SERVE_BURST POOL_FAIR_BURST
#define SERVE_QUANTUM_NS POOL_FAIR_QUANTUM_NS
/* A worker that has found no pod in any poll for this long makes its
 * pods pay for compiles (engine_set_busy): it may never idle again.
 * Not 2 ms: a pause of the VM that long made pods pay, and the queue
 * behind them grew while they did. */
#define SERVE_BUSY_NS UINT64_C(50000000)
/* With placements waiting for etcd's commit and nothing else to do, a
 * poll waits this long for a commit's completion (which rings no
 * doorbell), then polls again. */
#define SERVE_ETCD_WAIT_NS INT64_C(1000000)
/* At shutdown, how long the drain waits for the deferred placements'
 * commits (the committers answer every record; this bounds an etcd that
 * does not answer at all). */
#define SERVE_ETCD_DRAIN_NS (INT64_C(1000000) * ETCD_SYNC_WAIT_MS)

struct serve {
	struct producers *producers;
	struct attempt_ctx *attempt; /* placing and answering (daemon/attempt.c) */
	struct serve_wait *wait;     /* waiting pods (daemon/wait.c) */
	const struct res_names *res;
	struct engine **engines;
	struct serve_stats *stats;
	unsigned workers;
	int cancel; /* __atomic, relaxed: a mode switch read once per pod */
	/* [workers]: each pod's service time on its worker (decode, place,
	 * commit, answer), each worker's own (stat_inc); process-private, so
	 * not in the state region's worker stats. */
	uint64_t (*service)[HIST_BUCKETS];
	/* [workers]: when each worker's poll last found no pod, each
	 * worker's own. */
	uint64_t *idle_ns;
	/* [workers]: each worker's round of the fair share (pool_fair_turn),
	 * its own; from 1, one more after each poll in which no turn was cut
	 * for a light producer. */
	uint64_t *round;
};

struct serve *serve_create(struct producers *p, struct placements *placements,
			   const struct res_names *res, struct engine **engines,
			   struct serve_stats *stats, unsigned workers,
			   const struct serve_wait_config *wc)
{
	struct serve *s = calloc(1, sizeof(*s));
	if (s == NULL)
		return NULL;
	s->attempt = attempt_create(p, placements, res, engines, stats, workers,
				      wc->events);
	if (s->attempt == NULL) {
		free(s);
		return NULL;
	}
	s->wait = wait_create(s->attempt, wc, workers);
	if (s->wait == NULL) {
		attempt_destroy(s->attempt);
		free(s);
		return NULL;
	}
	s->producers = p;
	s->res = res;
	s->engines = engines;
	s->stats = stats;
	s->workers = workers;
	s->service = calloc(workers ? workers : 1, sizeof(*s->service));
	s->idle_ns = calloc(workers ? workers : 1, sizeof(*s->idle_ns));
	s->round = calloc(workers ? workers : 1, sizeof(*s->round));
	if (s->service == NULL || s->idle_ns == NULL || s->round == NULL) {
		serve_destroy(s);
		return NULL;
	}
	for (unsigned w = 0; w < (workers ? workers : 1); w++)
		s->round[w] = 1;
	return s;
}

void serve_destroy(struct serve *s)
{
	if (s != NULL) {
		wait_destroy(s->wait);
		attempt_destroy(s->attempt);
		free(s->service);
		free(s->idle_ns);
		free(s->round);
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
	return attempt_set_persist(s->attempt, p);
}

void serve_set_quota(struct serve *s, struct quota_charge *q)
{
	attempt_set_quota(s->attempt, q);
}

void serve_set_lifecycle(struct serve *s, struct taint_evict *te)
{
	attempt_set_lifecycle(s->attempt, te);
}

int serve_set_quarantine(struct serve *s, struct quarantine *q, uint32_t pool_key,
			 const struct intern *strings)
{
	return attempt_set_quarantine(s->attempt, q, pool_key, strings);
}

void serve_set_etcd_sync(struct serve *s, struct etcd_sync *es)
{
	attempt_set_etcd_sync(s->attempt, es);
}

int serve_set_shard_gate(struct serve *s, struct shard_gate *g)
{
	return attempt_set_shard_gate(s->attempt, g);
}

void serve_cancel_all(struct serve *s)
{
	__atomic_store_n(&s->cancel, 1, __ATOMIC_RELAXED);
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
		attempt_answer(slot, SHMSCHED_CANCELLED,
			       "the daemon shut down before placing this pod");
		return true;
	}
	if (record_decode(slot, &t, s->res, &pod, why, sizeof(why)) < 0) {
		stat_inc(&st->rejected);
		attempt_answer(slot, SHMSCHED_REJECTED, why);
		return true;
	}
	if (pod.spec->gang != 0) {
		/* All of its gang or none: never placed alone. */
		if (wait_gang(s->wait, w, pr, index, &pod) == WAIT_PARKED)
			return false;
		stat_inc(&st->rejected);
		attempt_answer(slot, SHMSCHED_REJECTED, "its pod group cannot take "
			       "it: the worker's gangs, or the gang's pods, are at "
			       "their most");
		return true;
	}
	struct resolve_result r;
	uint64_t change_head = ledger_changes_head(s->attempt->ledger);
	/* With --etcd-durability sync a placement here is answered from its
	 * commit's completion (attempt_etcd_collect hands it back), so the
	 * worker goes on placing while etcd commits: not handed back now. */
	attempt_defer_allow(s->attempt, w);
	enum attempt_result a = attempt_place(s->attempt, w, pr, slot, &pod, 1, &r);
	bool deferred = attempt_defer_end(s->attempt, w);
	if (a == ATTEMPT_ANSWERED)
		return !deferred;
	enum wait_park wp = wait_park(s->wait, w, pr, index, &pod,
				      a == ATTEMPT_GAVE_UP, change_head);
	if (wp == WAIT_PARKED)
		return false;
	if (wp == WAIT_EXPIRED)
		snprintf(why, sizeof(why), WAIT_DEADLINE_PREFIX, 1u, "");
	attempt_unschedulable(s->attempt, w, slot, &r,
			      wp == WAIT_EXPIRED ? why : NULL);
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
	uint64_t round;
};

static bool serve_cut(void *arg);

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
	wait_burst_end(s->wait, w);
	/* Sync durability: no answer of this burst is handed back before the
	 * burst's placements are on disk (one wait, one group commit). The
	 * wait is not the producer's cost: counted, it would shrink bursts to
	 * one pod and make every pod wait for its own fsync. */
	attempt_persist_wait(s->attempt, w);
	attempt_complete(s->attempt, w, pr, h, k);
	return n;
}

/* The fair share's state of a producer, as pool_fair_turn keeps it. */
static struct pool_fair serve_fair(const struct producer *pr)
{
	return (struct pool_fair){.deficit_ns = pr->deficit_ns,
				  .cost_ns = pr->cost_ns,
				  .round = pr->fair_round,
				  .heavy = pr->fair_heavy};
}

/* pool_fair_cut_fn, asked between the bursts of a heavy producer's turn:
 * whether another producer of this worker is light (pool_fair_light: its
 * last turn ran dry or was idle, and its allowance this round covers a
 * pod) and has pods waiting. One pass over the worker's producers per
 * burst; the submit ring is read (relaxed, as ring_guard_pending does)
 * only for the light ones. A faulted producer is skipped. */
static bool serve_cut(void *arg)
{
	struct serve_turn *turn = arg;
	struct serve *s = turn->s;
	uint32_t end = producers_bound(s->producers);
	for (uint32_t i = turn->w; i < end; i += s->workers) {
		struct producer *o = producers_get(s->producers, i);
		if (o == NULL || o == turn->pr || producers_faulted(o))
			continue;
		struct pool_fair f = serve_fair(o);
		if (pool_fair_light(&f, turn->round) &&
		    ring_guard_pending(&o->submit) > 0)
			return true;
	}
	return false;
}

/* One turn of one producer; returns the slots answered, or 1 when it has
 * pods waiting but no time left this turn (so the pool does not sleep).
 * *cut is set when the turn was cut short for a light producer.
 *
 * Fair share, by deficit round robin on measured time (pool_fair_turn,
 * workers/pool.h): each round of the worker adds SERVE_QUANTUM_NS to the
 * producer's allowance; while the allowance covers a pod at the
 * producer's recent cost per pod and it has pods, it is served bursts of
 * as many as fit (1 .. SERVE_BURST), and the time they took is taken off.
 * A producer of expensive pods therefore waits more turns for its next
 * pod, a producer of cheap ones is served more bursts per turn, and every
 * busy producer of a worker gets about the same share of its time,
 * however costly its pods. A producer idle all turn keeps no credit (at
 * most 0), but keeps its debt; one that ran dry after some pods keeps the
 * rest, capped (what it could have used). Light producers go first: a
 * heavy producer's turn ends between bursts when serve_cut finds a light
 * one with pods waiting (see serve_poll). Two clock reads per burst and
 * one per pod (vDSO, no system call), one look at the worker's producers
 * per burst of a heavy turn, and one relaxed add per turn for the figure
 * of the time its identity's pods took (producers_charge_time). */
static unsigned serve_producer(struct serve *s, unsigned w, struct producer *pr,
			       bool *cut)
{
	if (producers_faulted(pr))
		return 0;
	struct serve_turn turn = {s, w, pr, s->round[w]};
	struct pool_fair f = serve_fair(pr);
	bool out_of_time, cut_short;
	int n = pool_fair_turn(&f, turn.round, serve_burst, serve_cut, &turn,
			       &out_of_time, &cut_short);
	pr->deficit_ns = f.deficit_ns;
	pr->cost_ns = f.cost_ns;
	pr->fair_round = f.round;
	pr->fair_heavy = f.heavy;
	if (cut_short)
		*cut = true;
	/* The turn's time, to its identity's figure (issue 41). */
	producers_charge_time(s->producers, pr, f.used_ns);
	if (n < 0)
		return 0; /* faulted */
	if (n == 0 && out_of_time)
		return ring_guard_pending(&pr->submit) > 0 ? 1 : 0;
	return (unsigned)n;
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

/* One pass over the worker's producers, each a turn (serve_producer).
 *
 * Light producers first (workers/pool.h, above POOL_FAIR_QUANTUM_NS;
 * DRR++, and the sparse flows of FQ-CoDel, RFC 8290 section 4.2): a
 * producer whose last turn ran dry or was idle, with pods waiting and
 * allowance left this round, ends a heavy producer's turn after its
 * current burst, and is served in this pass (or first in the next, if it
 * comes before). The worker's round ends with a pass in which no turn was
 * cut, and each producer has one quantum a round, so the bound is: a
 * light producer's pod waits at most one burst of a heavy turn (and the
 * light turns before it), and no producer, light or heavy by turns, gets
 * more than its share of the worker's time; a light one is only served
 * sooner. */
unsigned serve_poll(void *arg, unsigned worker, void *scratch)
{
	struct serve *s = arg;
	(void)scratch;
	/* Waiting pods first: a pod an event woke goes before new arrivals,
	 * as kube's activeQ holds both and pops by priority. */
	unsigned done = wait_poll(s->wait, worker);
	/* Placements etcd has answered (--etcd-durability sync). */
	done += attempt_etcd_collect(s->attempt, worker, 0);
	/* Only the indices that may hold a producer: no idle look at every
	 * slot of the table per poll. */
	uint32_t end = producers_bound(s->producers);
	bool cut = false;
	for (uint32_t i = worker; i < end; i += s->workers) {
		struct producer *pr = producers_get(s->producers, i);
		if (pr != NULL) {
			serve_prepare(s, worker, pr);
			done += serve_producer(s, worker, pr, &cut);
		}
	}
	if (!cut)
		s->round[worker]++;
	/* No pod this round: compile ahead, and poll again rather than sleep
	 * while compiles are left. */
	if (done == 0) {
		s->idle_ns[worker] = now_ns();
		if (engine_idle(s->engines[worker]))
			done = 1;
		else if (attempt_etcd_pending(s->attempt, worker))
			/* Not asleep while commits are out: their completions
			 * ring no doorbell. */
			done = attempt_etcd_collect(s->attempt, worker, SERVE_ETCD_WAIT_NS) + 1;
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
	bool cut = false;
	/* Worker 0's engine and stats: the workers have stopped. */
	do {
		n = 0;
		for (uint32_t i = 0; i < PRODUCERS_MAX; i++) {
			struct producer *pr = producers_get(s->producers, i);
			if (pr != NULL)
				n += serve_producer(s, 0, pr, &cut);
		}
		/* A new round each pass, cut or not: each pass gives every
		 * producer with pods its quantum. */
		s->round[0]++;
		total += n;
	} while (n > 0);
	/* Then every worker's placements waiting for etcd (the workers'
	 * and the drain's own): finished and handed back before the
	 * committers close. */
	for (unsigned w = 0; w < s->workers; w++) {
		uint64_t until = now_ns() + (uint64_t)SERVE_ETCD_DRAIN_NS;
		while (attempt_etcd_pending(s->attempt, w) && now_ns() < until)
			total += attempt_etcd_collect(s->attempt, w, SERVE_ETCD_WAIT_NS);
	}
	/* Then the waiting pods: cancelled, as shutdown goes. */
	return total + wait_shutdown(s->wait);
}

void serve_wait_stats(const struct serve *s, struct wait_stats *out)
{
	wait_get_stats(s->wait, out);
}
