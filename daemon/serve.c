/* The workers' per-pod loop: see serve.h.
 *
 * Per poll and producer: one burst dequeue of up to SERVE_BURST handles,
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
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/base.h"
#include "bind/bind.h"
#include "ingest/ingest.h"
#include "daemon/persist_internal.h"

#define SERVE_BURST 32u
/* A producer's allowance of worker time per turn (see serve_producer). */
#define SERVE_QUANTUM_NS INT64_C(1000000)

struct serve {
	struct producers *producers;
	struct placements *placements;
	struct ledger *ledger;
	const struct res_names *res;
	struct engine **engines;
	struct serve_stats *stats;
	unsigned workers;
	int cancel; /* __atomic, relaxed: a mode switch read once per pod */
	struct persist *persist; /* NULL: no durable store */
	uint64_t *store_seq;     /* [workers]: the burst's last store op */
	/* [workers]: each pod's service time on its worker (decode, place,
	 * commit, answer), each worker's own (stat_inc); process-private, so
	 * not in the state region's worker stats. */
	uint64_t (*service)[HIST_BUCKETS];
};

struct serve *serve_create(struct producers *p, struct placements *placements,
			   const struct res_names *res, struct engine **engines,
			   struct serve_stats *stats, unsigned workers)
{
	struct serve *s = calloc(1, sizeof(*s));
	if (s == NULL)
		return NULL;
	s->producers = p;
	s->placements = placements;
	s->ledger = cluster_ledger(engine_cluster(engines[0]));
	s->res = res;
	s->engines = engines;
	s->stats = stats;
	s->workers = workers;
	s->service = calloc(workers ? workers : 1, sizeof(*s->service));
	if (s->service == NULL) {
		free(s);
		return NULL;
	}
	return s;
}

void serve_destroy(struct serve *s)
{
	if (s != NULL) {
		free(s->store_seq);
		free(s->service);
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

/* Answers one slot the daemon owns. */
static void answer(struct serve *s, unsigned w, struct producer *pr,
		   struct shmsched_slot *slot)
{
	struct serve_stats *st = &s->stats[w];
	struct record_templates t = {pr->templates, producers_templates(pr)};
	struct record_pod pod;
	char why[SHMSCHED_MESSAGE_MAX];
	stat_inc(&st->pods);
	if (__atomic_load_n(&s->cancel, __ATOMIC_RELAXED)) {
		stat_inc(&st->cancelled);
		answer_slot(slot, SHMSCHED_CANCELLED, 0, now_ns(),
			      "the daemon shut down before placing this pod");
		return;
	}
	if (record_decode(slot, &t, s->res, &pod, why, sizeof(why)) < 0) {
		stat_inc(&st->rejected);
		answer_slot(slot, SHMSCHED_REJECTED, 0, now_ns(), why);
		return;
	}
	/* The placement's record first: a pod is placed only if the daemon
	 * can remember whose it is (invariant 7). */
	int64_t rec = placements_take(s->placements);
	if (rec < 0) {
		stat_inc(&st->rejected);
		snprintf(why, sizeof(why), "the daemon holds %u placements, the most "
			 "it keeps (--max-placements): release some first",
			 placements_capacity(s->placements));
		answer_slot(slot, SHMSCHED_REJECTED, 0, now_ns(), why);
		return;
	}
	struct resolve_result r;
	struct engine *e = s->engines[w];
	uint64_t seq = ((uint64_t)w << 48) | st->seq++; /* the worker's own */
	if (resolver_place(e, &pod.spec, seq, &r, &st->resolver) < 0) {
		placements_untake(s->placements, (uint32_t)rec);
		answer_slot(slot, SHMSCHED_UNSCHEDULABLE, 0, now_ns(),
			      "the daemon ran out of memory placing this pod");
		return;
	}
	if (r.placement.slot >= 0) {
		uint32_t node = (uint32_t)r.placement.slot;
		/* Inside the placement's read-side section: its node's own
		 * generation (shm/ledger.h). */
		uint64_t id;
		const struct placement_record *made = placements_prepare(
			s->placements, (uint32_t)rec, node,
			ledger_node_generation(s->ledger, node), &pod.spec,
			&r.placement.devices, pod.cookie, &id);
		/* Queued before it is published: no release of it (an
		 * admin's, a resync's, a guessed id's) can queue its delete
		 * ahead of this put. */
		if (s->persist != NULL)
			s->store_seq[w] = persist_placement(s->persist, id, made,
							    pr->owner);
		placements_publish(s->placements, (uint32_t)rec, pr->owner);
		answer_placed(slot, node, now_ns(), &r.placement.devices, id);
		return;
	}
	placements_untake(s->placements, (uint32_t)rec);
	if (r.gave_up) {
		snprintf(why, sizeof(why), "0/%u nodes were left to this pod: %u "
			 "placements found a node and lost it to concurrent ones",
			 r.placement.all_nodes, r.attempts);
		answer_slot(slot, SHMSCHED_UNSCHEDULABLE, 0, now_ns(), why);
	} else {
		engine_message(e, why, sizeof(why));
		answer_slot(slot, SHMSCHED_UNSCHEDULABLE, 0, now_ns(), why);
	}
}

/* One turn of one producer; returns the slots answered, or 1 when it has
 * pods waiting but no time left this turn (so the pool does not sleep).
 *
 * Fair share, by deficit round robin on measured time: each turn adds
 * SERVE_QUANTUM_NS to the producer's allowance; when the allowance covers
 * a pod at the producer's recent cost per pod, it is served as many pods
 * as fit (1 .. SERVE_BURST), and the time they took is taken off. A
 * producer of expensive pods therefore waits more turns for its next pod,
 * and every busy producer of a worker gets about the same share of its
 * time, however costly its pods. An idle producer keeps no credit (at most
 * 0), but keeps its debt. Two clock reads per burst (vDSO, no system
 * call).
 *
 * The rings are read and written only through the daemon's guards
 * (shm/ring.h): an impossible index from the producer disconnects it
 * (producers_fault). */
static unsigned serve_producer(struct serve *s, unsigned w, struct producer *pr)
{
	struct serve_stats *st = &s->stats[w];
	if (producers_faulted(pr))
		return 0;
	/* Credit is capped at a quantum beyond one pod's cost: enough to save
	 * up for a pod dearer than a quantum, never enough to hoard time (a
	 * burst is at most SERVE_BURST pods, so cheap pods leave some over). */
	pr->deficit_ns += SERVE_QUANTUM_NS;
	if (pr->deficit_ns > SERVE_QUANTUM_NS + (int64_t)pr->cost_ns)
		pr->deficit_ns = SERVE_QUANTUM_NS + (int64_t)pr->cost_ns;
	/* Served only when the allowance covers a pod at its recent cost:
	 * a producer of pods dearer than a quantum saves up over turns. */
	if (pr->deficit_ns <= 0 || (uint64_t)pr->deficit_ns < pr->cost_ns)
		return ring_guard_pending(&pr->submit) > 0 ? 1 : 0;
	uint64_t fit = pr->cost_ns ? (uint64_t)pr->deficit_ns / pr->cost_ns : SERVE_BURST;
	unsigned want = fit < 1 ? 1 : fit > SERVE_BURST ? SERVE_BURST : (unsigned)fit;
	uint64_t h[SERVE_BURST];
	char why[160];
	int n = ring_guard_dequeue(&pr->submit, h, want);
	if (n < 0) {
		snprintf(why, sizeof(why), "its submit ring's index claims more "
			 "than the ring's %u handles", pr->submit.capacity);
		producers_fault(s->producers, pr, why);
		return 0;
	}
	if (n == 0) {
		if (pr->deficit_ns > 0)
			pr->deficit_ns = 0; /* idle: no credit kept */
		return 0;
	}
	uint64_t t0 = now_ns(), t = t0;
	unsigned k = 0;
	for (unsigned i = 0; i < (unsigned)n; i++) {
		if (h[i] >= pr->region.n_slots) {
			stat_inc(&st->bad_handles); /* no slot to answer in */
			continue;
		}
		answer(s, w, pr, &pr->region.slots[h[i]]);
		/* One clock read per pod: its service time ends where the
		 * next one's begins. */
		uint64_t t1 = now_ns();
		stat_inc(&s->service[w][hist_bucket(t1 - t)]);
		t = t1;
		h[k++] = h[i];
	}
	uint64_t spent = t - t0;
	pr->deficit_ns -= (int64_t)spent;
	/* The cost per pod, smoothed over the last few bursts. */
	uint64_t per_pod = spent / (unsigned)n;
	pr->cost_ns = pr->cost_ns ? (pr->cost_ns * 3 + per_pod) / 4 : per_pod;
	/* Sync durability: no answer of this burst is handed back before the
	 * burst's placements are on disk (one wait, one group commit). The
	 * wait is not the producer's cost: counted, it would shrink bursts to
	 * one pod and make every pod wait for its own fsync. */
	if (s->persist != NULL && s->store_seq[w] != 0 && persist_sync(s->persist)) {
		persist_wait(s->persist, s->store_seq[w]);
		s->store_seq[w] = 0;
	}
	int sent = answer_complete(&pr->completion, h, k);
	if (sent < 0) {
		snprintf(why, sizeof(why), "its completion ring's index is ahead "
			 "of the daemon's or more than %u behind",
			 pr->completion.capacity);
		producers_fault(s->producers, pr, why);
		return k;
	}
	if (k > (unsigned)sent)
		stat_add(&st->completion_overflows, k - (unsigned)sent);
	return k;
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
	unsigned done = 0;
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
	if (done == 0 && engine_idle(s->engines[worker]))
		done = 1;
	return done;
}

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
	return total;
}
