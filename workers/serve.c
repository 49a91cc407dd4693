/* The workers' per-pod loop: see serve.h.
 *
 * Per poll and producer: one burst dequeue of up to SERVE_BURST handles,
 * then per handle a bounds check, record_decode() (a copy and checks),
 * resolver_place() (placement and a compare-and-swap commit, bounded
 * retries) and record_answer(); then one burst enqueue of the answered
 * handles. A completion ring holds every slot of its region, so it can be
 * full only if a producer submitted the same slot twice; such answers are
 * retried a bounded number of times and then counted and dropped (the
 * producer broke its side of the hand-over; no one else is affected).
 */
#include "workers/serve.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ingest/record.h"

#define SERVE_BURST 32u
#define COMPLETION_RETRIES 1000u

struct serve {
	struct producers *producers;
	const struct res_names *res;
	struct engine **engines;
	struct serve_stats *stats;
	unsigned workers;
	int cancel; /* __atomic, relaxed: a mode switch read once per pod */
};

struct serve *serve_create(struct producers *p, const struct res_names *res,
			   struct engine **engines, struct serve_stats *stats,
			   unsigned workers)
{
	struct serve *s = calloc(1, sizeof(*s));
	if (s == NULL)
		return NULL;
	s->producers = p;
	s->res = res;
	s->engines = engines;
	s->stats = stats;
	s->workers = workers;
	return s;
}

void serve_destroy(struct serve *s)
{
	free(s);
}

void serve_cancel_all(struct serve *s)
{
	__atomic_store_n(&s->cancel, 1, __ATOMIC_RELAXED);
}

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* The wire's devices are the model's, field for field. */
_Static_assert(NODE_MAX_GPUS <= SHMSCHED_MAX_GPUS, "gpu_mask holds every GPU");
_Static_assert(CORE_WORDS == SHMSCHED_CPUSET_WORDS, "cpuset holds every core");
_Static_assert(sizeof(struct device_assignment) == sizeof(struct shmsched_devices),
	       "an assignment is the wire's devices");

static void answer_devices(struct shmsched_devices *out,
			   const struct device_assignment *a)
{
	out->gpu_mask = a->gpu_mask;
	out->gpu_milli = a->gpu_milli;
	out->n_cores = a->n_cores;
	out->reserved = 0;
	for (unsigned w = 0; w < CORE_WORDS; w++)
		out->cpuset[w] = a->cpuset[w];
}

/* Answers one slot the daemon owns. */
static void answer(struct serve *s, unsigned w, struct producer *pr,
		   struct shmsched_slot *slot)
{
	struct serve_stats *st = &s->stats[w];
	struct record_templates t = {pr->templates, producers_templates(pr)};
	struct record_pod pod;
	char why[SHMSCHED_MESSAGE_MAX];
	resolver_stat_add(&st->pods);
	if (__atomic_load_n(&s->cancel, __ATOMIC_RELAXED)) {
		resolver_stat_add(&st->cancelled);
		record_answer(slot, SHMSCHED_CANCELLED, 0, now_ns(),
			      "the daemon shut down before placing this pod");
		return;
	}
	if (record_decode(slot, &t, s->res, &pod, why, sizeof(why)) < 0) {
		resolver_stat_add(&st->rejected);
		record_answer(slot, SHMSCHED_REJECTED, 0, now_ns(), why);
		return;
	}
	struct resolve_result r;
	struct engine *e = s->engines[w];
	uint64_t seq = ((uint64_t)w << 48) | st->seq++; /* the worker's own */
	if (resolver_place(e, &pod.spec, seq, &r, &st->resolver) < 0) {
		record_answer(slot, SHMSCHED_UNSCHEDULABLE, 0, now_ns(),
			      "the daemon ran out of memory placing this pod");
		return;
	}
	if (r.placement.slot >= 0) {
		record_answer(slot, SHMSCHED_PLACED, (uint32_t)r.placement.slot,
			      now_ns(), NULL);
		/* After record_answer(): the devices share the message's bytes,
		 * where it wrote an empty message. Plain stores, published by the
		 * completion enqueue as the rest of the answer. */
		answer_devices(&slot->devices, &r.placement.devices);
	} else if (r.gave_up) {
		snprintf(why, sizeof(why), "0/%u nodes were left to this pod: %u "
			 "placements found a node and lost it to concurrent ones",
			 r.placement.all_nodes, r.attempts);
		record_answer(slot, SHMSCHED_UNSCHEDULABLE, 0, now_ns(), why);
	} else {
		engine_message(e, why, sizeof(why));
		record_answer(slot, SHMSCHED_UNSCHEDULABLE, 0, now_ns(), why);
	}
}

/* One burst from one producer; returns the slots answered. */
static unsigned serve_producer(struct serve *s, unsigned w, struct producer *pr)
{
	struct serve_stats *st = &s->stats[w];
	uint64_t h[SERVE_BURST];
	unsigned n = ring_dequeue_burst(pr->region.submit, h, SERVE_BURST);
	unsigned k = 0;
	for (unsigned i = 0; i < n; i++) {
		if (h[i] >= pr->region.n_slots) {
			resolver_stat_add(&st->bad_handles); /* no slot to answer in */
			continue;
		}
		answer(s, w, pr, &pr->region.slots[h[i]]);
		h[k++] = h[i];
	}
	unsigned sent = 0;
	for (unsigned tries = 0; sent < k && tries < COMPLETION_RETRIES; tries++)
		sent += ring_enqueue_burst(pr->region.completion, h + sent, k - sent);
	if (k > sent) /* relaxed store, as resolver_stat_add */
		__atomic_store_n(&st->completion_overflows,
				 st->completion_overflows + (k - sent),
				 __ATOMIC_RELAXED);
	return k;
}

unsigned serve_poll(void *arg, unsigned worker, void *scratch)
{
	struct serve *s = arg;
	(void)scratch;
	unsigned done = 0;
	for (uint32_t i = worker; i < PRODUCERS_MAX; i += s->workers) {
		struct producer *pr = producers_get(s->producers, i);
		if (pr != NULL)
			done += serve_producer(s, worker, pr);
	}
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
