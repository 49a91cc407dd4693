/* Attempts and answers: see attempt_internal.h.
 *
 * Exactly one answer per slot handed over (invariant 2, bind/answer.h).
 * A slot is the daemon's from the dequeue of its handle off the submit
 * ring until its handle goes back on the completion ring; only the worker
 * that serves its producer (table index i % workers) touches it. Every
 * answer is written by one of two functions of this file:
 * attempt_record_and_answer (PLACED: the placement recorded first, then
 * the slot answered) and attempt_answer (any other status); the intakes
 * hand slots back with attempt_complete. Who answers, and when:
 *
 *   where the pod is          what happens             answer        by
 *   -----------------------   ----------------------   -----------   ------------------------
 *   new slot (serve.c)        daemon cancelling        CANCELLED     answer
 *                             slot refused by decode   REJECTED      answer
 *                             gang, no room to wait    REJECTED      answer
 *                             no quota, no wait        UNSCHEDULABLE answer (attempt_unschedulable)
 *                             no quota, waits          (none now)    wait_park (for quota)
 *                             LocalQueue, resource     UNSCHEDULABLE attempt_place
 *                             no placement record      REJECTED      attempt_place
 *                             out of memory            UNSCHEDULABLE attempt_place
 *                             placed                   PLACED        attempt_place
 *                             fits nowhere, no wait    UNSCHEDULABLE answer (attempt_unschedulable)
 *                             fits nowhere, waits      (none now)    wait_park / wait_gang
 *   waiting (wait.c)          producer's cancel        CANCELLED     wait_cancel
 *                             slot rewritten, refused  REJECTED      retry, gang_try
 *                             placed on a retry        PLACED        retry (attempt_place)
 *                             deadline passed          UNSCHEDULABLE retry, gang_answer
 *                             gang placed whole        PLACED        gang_try (attempt_gang)
 *                             gang refused by quota    UNSCHEDULABLE gang_try (ATTEMPT_GANG_REFUSED)
 *                             gang not gathered        UNSCHEDULABLE gang_timeouts
 *                             evictor held a node      PLACED        take_replies (attempt_place_held)
 *                             daemon shut down         CANCELLED     wait_shutdown
 *                             producer went away       (none: its slots are gone with its region)
 *
 * Why only once:
 *   A1  A new slot is answered by serve.c's answer() or parked, never both:
 *       attempt_place answers it or leaves it wholly to its caller, and the
 *       caller parks it only when it was not answered.
 *   A2  A parked slot is the queue's: its pod is in one of the queue's
 *       places (queue_where != QUEUE_OUT) until done() takes it out, and
 *       every answer site of wait.c takes it out in the same step (on the
 *       same thread, so no other site can see it in between). A producer
 *       that submits a parked slot again gets no second attempt
 *       (wait_holds: the handle is counted bad and ignored).
 *   A3  The evictor's reply places a pod only if it is still the one the
 *       request was for and still waiting (pre_live, cleared by done();
 *       its producer's key; queue_where): a pod answered meanwhile has its
 *       held room given back instead.
 *   A4  Once answered, a handle goes back on the completion ring once:
 *       serve.c's burst gathers the answered ones, wait.c hands back each
 *       one where it answers it; the producer owns the slot again only
 *       when it reads the handle.
 *   A5  At shutdown serve_drain answers what is left in the submit rings
 *       as the workers would, then wait_shutdown cancels every pod still
 *       waiting: the workers have stopped, so nobody else answers.
 */
#include "daemon/attempt_internal.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "daemon/admission_fair_internal.h"
#include "daemon/etcd_sync_internal.h"
#include "daemon/persist_internal.h"
#include "daemon/quarantine_internal.h"
#include "daemon/quota_charge_internal.h"
#include "daemon/shard_gate_internal.h"
#include "daemon/taint_evict_internal.h"
#include "shm/shm.h"

struct attempt_ctx *attempt_create(struct producers *p,
				   struct placements *placements,
				   const struct res_names *res, struct engine **engines,
				   struct serve_stats *stats, unsigned workers,
				   struct queue_events *events)
{
	struct attempt_ctx *a = calloc(1, sizeof(*a));
	if (a == NULL)
		return NULL;
	a->producers = p;
	a->placements = placements;
	a->ledger = cluster_ledger(engine_cluster(engines[0]));
	a->res = res;
	a->engines = engines;
	a->stats = stats;
	a->workers = workers;
	a->events = events;
	a->lowest = INT32_MAX;
	a->refusal = calloc(workers, sizeof(*a->refusal));
	a->gang_flavored = calloc(workers, sizeof(*a->gang_flavored));
	a->defer = calloc(workers, sizeof(*a->defer));
	if (a->refusal == NULL || a->gang_flavored == NULL || a->defer == NULL) {
		free(a->refusal);
		free(a->gang_flavored);
		free(a->defer);
		free(a);
		return NULL;
	}
	/* What a cluster file or a previous daemon placed (no worker runs
	 * yet: the table is this thread's to read). */
	uint32_t cursor = 0;
	uint64_t id;
	while ((id = placements_next(placements, &cursor)) != 0) {
		const struct placement_record *r = placements_get(placements, id);
		if (r != NULL && r->priority < a->lowest)
			a->lowest = r->priority;
	}
	return a;
}

void attempt_destroy(struct attempt_ctx *a)
{
	if (a != NULL) {
		free(a->quarantine_why);
		free(a->shard_spec);
		free(a->shard_orig);
		free(a->store_seq);
		free(a->refusal);
		free(a->defer);
		for (unsigned w = 0; a->gang_flavored != NULL && w < a->workers; w++)
			free(a->gang_flavored[w]);
		free(a->gang_flavored);
	}
	free(a);
}

int attempt_set_persist(struct attempt_ctx *a, struct persist *p)
{
	a->store_seq = calloc(a->workers, sizeof(*a->store_seq));
	if (a->store_seq == NULL)
		return -ENOMEM;
	a->persist = p;
	return 0;
}

void attempt_set_lifecycle(struct attempt_ctx *a, struct taint_evict *te)
{
	/* Release, partner of the acquire per placement. */
	__atomic_store_n(&a->lifecycle, te, __ATOMIC_RELEASE);
}

int attempt_set_quarantine(struct attempt_ctx *a, struct quarantine *q,
			   uint32_t pool_key, const struct intern *strings)
{
	a->quarantine_why = calloc(a->workers, sizeof(*a->quarantine_why));
	if (a->quarantine_why == NULL)
		return -ENOMEM;
	a->pool_key = pool_key;
	a->strings = strings;
	/* Interned by plugin_ctx_init (workers/plugins.c) before this. */
	if (!intern_find(strings, "metadata.name", sizeof("metadata.name") - 1,
			 &a->name_key))
		a->name_key = 0;
	/* Release, partner of the acquire per attempt (place_quarantined). */
	__atomic_store_n(&a->quarantine, q, __ATOMIC_RELEASE);
	return 0;
}

int attempt_set_shard_gate(struct attempt_ctx *a, struct shard_gate *g)
{
	a->shard_spec = calloc(a->workers, sizeof(*a->shard_spec));
	a->shard_orig = calloc(a->workers, sizeof(*a->shard_orig));
	if (a->shard_spec == NULL || a->shard_orig == NULL)
		return -ENOMEM;
	/* Release, partner of the acquire per attempt (attempt_place). */
	__atomic_store_n(&a->shard_gate, g, __ATOMIC_RELEASE);
	return 0;
}

void attempt_set_etcd_sync(struct attempt_ctx *a, struct etcd_sync *s)
{
	/* ES2: release, partner of the acquire per placement. */
	__atomic_store_n(&a->etcd_sync, s, __ATOMIC_RELEASE);
}

void attempt_set_quota(struct attempt_ctx *a, struct quota_charge *q)
{
	a->quota = q;
}

const struct attempt_quota_refusal *attempt_quota_refused(const struct attempt_ctx *a,
							  unsigned w)
{
	return a->refusal[w].refused ? &a->refusal[w] : NULL;
}

void attempt_quota_reclaim(struct attempt_ctx *a, unsigned w,
			   const struct pod_spec *spec,
			   const struct attempt_quota_refusal *qr)
{
	if (a->quota == NULL || qr == NULL)
		return;
	/* QA4, QA6 (daemon/quota_charge.c): the policy of the tree in force,
	 * the one the refusal was of. */
	qc_enter(a->quota, w);
	if (qc_serial(a->quota) == qr->serial)
		qc_reclaim_ask(a->quota, w, spec, qr->cq, qr->flavor);
	qc_leave(a->quota, w);
}

void attempt_persist_wait(struct attempt_ctx *a, unsigned w)
{
	if (a->persist != NULL && a->store_seq[w] != 0 && persist_sync(a->persist)) {
		persist_wait(a->persist, a->store_seq[w]);
		a->store_seq[w] = 0;
	}
}

static void note_priority(struct attempt_ctx *a, int32_t priority)
{
	int32_t cur = __atomic_load_n(&a->lowest, __ATOMIC_RELAXED);
	while (priority < cur &&
	       !__atomic_compare_exchange_n(&a->lowest, &cur, priority, true,
					    __ATOMIC_RELAXED, __ATOMIC_RELAXED))
		;
}

bool attempt_sharded(struct attempt_ctx *a)
{
	/* Acquire, partner of attempt_set_shard_gate's release. */
	return __atomic_load_n(&a->shard_gate, __ATOMIC_ACQUIRE) != NULL;
}

int32_t attempt_lowest_priority(const struct attempt_ctx *a)
{
	return __atomic_load_n(&a->lowest, __ATOMIC_RELAXED);
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

static void uncharge(struct attempt_ctx *a, unsigned w, const struct pod_spec *spec,
		     uint32_t quota);

/* A placement not kept (its commit to etcd refused): rolled back as if
 * never made (the node's use given back and told to waiting pods, the
 * record untaken, its quota charge given back). */
static void etcd_rollback(struct attempt_ctx *a, unsigned w, uint32_t rec, uint32_t node,
			  const struct pod_spec *spec, const struct device_assignment *dev,
			  uint32_t quota)
{
	ledger_account(a->ledger, node, spec, dev, -1);
	if (a->events != NULL) {
		struct queue_event ev = queue_event_release(node, spec, dev);
		queue_events_publish(a->events, &ev);
	}
	placements_untake_w(a->placements, w, rec);
	if (quota != 0)
		uncharge(a, w, spec, quota);
}

/* With --etcd-durability sync: placement `id` (prepared, not published)
 * committed to etcd (etcd_sync_put); when it is not, rolled back
 * (etcd_rollback) and the pod answered unschedulable with etcd_sync's
 * reason: true then. */
__attribute__((noinline)) /* off the path of one-host daemons */
static bool etcd_refused(struct attempt_ctx *a, unsigned w, struct etcd_sync *es,
			 struct shmsched_slot *slot, uint32_t rec, uint32_t node,
			 const struct pod_spec *spec, const struct device_assignment *dev,
			 uint64_t id, uint32_t quota)
{
	char why[SHMSCHED_MESSAGE_MAX];
	if (etcd_sync_put(es, w, node, ledger_node_generation(a->ledger, node), spec, id, quota,
			  why, sizeof(why)) == 0)
		return false;
	etcd_rollback(a, w, rec, node, spec, dev, quota);
	attempt_answer(slot, SHMSCHED_UNSCHEDULABLE, why);
	return true;
}

/* attempt_record_and_answer's placement `id` (record `rec`, prepared as
 * `made`) deferred (attempt_defer_allow): its record pushed to etcd
 * without waiting, everything attempt_etcd_collect needs kept with it.
 * 0 deferred; 1 refused at once (rolled back, the slot answered
 * unschedulable); -EAGAIN no room: the caller waits (etcd_refused). */
__attribute__((noinline))
static int etcd_defer(struct attempt_ctx *a, unsigned w, struct etcd_sync *es,
		      struct producer *pr, struct shmsched_slot *slot, uint32_t rec,
		      uint32_t node, const struct pod_spec *spec,
		      const struct device_assignment *dev, uint64_t id,
		      const struct placement_record *made, uint32_t attempt)
{
	struct etcd_pending p = {
		.producer = pr->id,
		.key = producers_key(pr),
		.index = (uint32_t)(slot - pr->region.slots),
		.rec = rec,
		.node = node,
		.owner = pr->owner,
		.attempt = attempt,
		.id = id,
		.made = made,
	};
	char why[SHMSCHED_MESSAGE_MAX];
	int rc = etcd_sync_defer(es, w, node, ledger_node_generation(a->ledger, node), spec, id,
				 &p, why, sizeof(why));
	if (rc == 0 || rc == -EAGAIN)
		return rc;
	etcd_rollback(a, w, rec, node, spec, dev, 0);
	attempt_answer(slot, SHMSCHED_UNSCHEDULABLE, why);
	return 1;
}

/* The one PLACED answer: placement record `rec` (taken) made for `spec`
 * on `node` with `dev` and `cookie` and the quota charge `quota` (0:
 * none), queued for the durable store, published as `pr`'s, then the slot
 * answered with the record's time and id; counted placed at its
 * `attempt`-th attempt. */
static void attempt_record_and_answer(struct attempt_ctx *a, unsigned w,
				      struct producer *pr, struct shmsched_slot *slot,
				      uint32_t rec, uint32_t node,
				      const struct pod_spec *spec,
				      const struct device_assignment *dev,
				      uint64_t cookie, uint32_t attempt, uint32_t quota)
{
	/* Inside the placement's read-side section: its node's own generation
	 * (shm/ledger.h). */
	uint64_t id;
	const struct placement_record *made = placements_prepare(
		a->placements, rec, node, ledger_node_generation(a->ledger, node),
		spec, dev, cookie, &id);
	/* ES2: acquire, partner of attempt_set_etcd_sync's release. */
	struct etcd_sync *es = __atomic_load_n(&a->etcd_sync, __ATOMIC_ACQUIRE);
	if (es != NULL) {
		/* Deferred only outside quota: QA4 holds the tree from the
		 * charge to the publish, which a deferred placement makes
		 * after the worker has left the tree's gate. */
		if (quota == 0 && a->defer[w] == ATTEMPT_DEFER_MAY && !etcd_sync_async(es)) {
			int rc = etcd_defer(a, w, es, pr, slot, rec, node, spec, dev, id, made,
					    attempt);
			if (rc == 0) {
				a->defer[w] = ATTEMPT_DEFER_DID;
				/* Told now, while the spec is at hand (its
				 * tolerations are not in the record): a
				 * placement rolled back later leaves an entry
				 * for an id never published, which the taint
				 * manager's sweep drops (taint_evict.c). */
				struct taint_evict *te =
					__atomic_load_n(&a->lifecycle, __ATOMIC_ACQUIRE);
				if (te != NULL)
					taint_evict_placed(te, id, spec);
				return;
			}
			if (rc > 0)
				return;
		}
		if (etcd_refused(a, w, es, slot, rec, node, spec, dev, id, quota))
			return;
	}
	/* QA2 (daemon/quota_charge.c): before the record is published. */
	if (quota != 0) {
		placements_set_quota(a->placements, rec, quota);
		qc_placed(a->quota, rec, quota, made, id); /* RX1, RO2 */
	}
	/* Acquire, partner of attempt_set_lifecycle's release. */
	struct taint_evict *te = __atomic_load_n(&a->lifecycle, __ATOMIC_ACQUIRE);
	if (te != NULL)
		taint_evict_placed(te, id, spec);
	/* Queued before it is published: no release of it (an admin's, a
	 * resync's, a guessed id's) can queue its delete ahead of this put. */
	if (a->persist != NULL)
		a->store_seq[w] = persist_placement(a->persist, id, made, pr->owner);
	/* The record's own time (read before it is published: then it may be
	 * freed): one clock read fewer per pod. */
	uint64_t placed_ns = made->placed_ns;
	placements_publish_w(a->placements, w, rec, pr->owner);
	answer_placed(slot, node, placed_ns, dev, id);
	stat_inc(&a->stats[w].attempts[attempts_bucket(attempt)]);
	note_priority(a, spec->priority);
}

/* A waiting pod refused by pod affinity or spread may fit now that a pod
 * of an inter-pod group is placed (E7 in workers/queue.c). */
static void tell_placed(struct attempt_ctx *a, const struct pod_spec *spec)
{
	if (spec->group != 0 && a->events != NULL &&
	    queue_events_want_placed(a->events)) {
		struct queue_event ev = queue_event_placed();
		queue_events_publish(a->events, &ev);
	}
}

/* attempt_place for a pod under ClusterQueue `cq`, its record `rec`
 * taken: each of the queue's flavors in order, charged
 * (quota_try_charge), then placed with the flavor's nodeLabels added to
 * its nodeSelector and committed (bind/resolver.h); a flavor where no node
 * fits, or whose commits all lost their races, gives its charge back
 * before the next is tried. The charge is thus held from before the
 * node's commit until the placement's record is freed (qc_on_free), or
 * given back here: the queue's usage is at every instant at least the sum
 * of its live placements' requests, and equal once nothing is in flight. */
__attribute__((noinline)) /* off the path of pods without quota */
static enum attempt_result place_under_quota(struct attempt_ctx *a, unsigned w,
					     struct producer *pr,
					     struct shmsched_slot *slot,
					     const struct record_pod *pod,
					     const struct pod_spec *esp,
					     uint32_t attempt, int cq, uint32_t rec,
					     struct resolve_result *r)
{
	struct serve_stats *st = &a->stats[w];
	struct quota_charge *q = a->quota;
	struct quota_tree *t = qc_tree(q);
	struct engine *e = a->engines[w];
	char why[SHMSCHED_MESSAGE_MAX];
	int64_t charge[QUOTA_MAX_RESOURCES];
	unsigned missing;
	if (qc_request(q, w, &pod->spec->request, charge, &missing) < 0) {
		quota_uncovered_message(t, cq, a->res->name[missing], "the pod", why,
					sizeof(why));
		goto refuse;
	}
	/* Before the first charge (quota_generation, quota/quota.h): a
	 * release after this read moves it, so a pod refused below and
	 * waiting for quota is woken by every give-back its charges may have
	 * missed. */
	uint64_t gen = quota_generation(t, cq);
	const int *order;
	int n = quota_node_flavors(t, cq, &order);
	int full = -1;           /* the first flavor without room */
	bool placed_any = false; /* a flavor reached the engine */
	int tried_rc[QUOTA_MAX_FLAVORS]; /* why order[k] refused the pod */
	struct pod_spec with_labels;
	for (int k = 0; k < n; k++) {
		int f = order[k];
		/* The nodeLabels first: a charge given back would move the
		 * tree's generation, and wake this pod by its own attempt. */
		const struct pod_spec *sp = esp;
		if (qc_flavor_n_labels(q, f) > 0) {
			if (!qc_flavor_spec(q, f, esp, &with_labels)) {
				tried_rc[k] = -EXDEV;
				continue;
			}
			sp = &with_labels;
		}
		bool borrowed;
		int rc = quota_try_charge_borrowed(t, cq, f, charge, &borrowed);
		tried_rc[k] = rc;
		if (rc == -ENOSPC && full < 0)
			full = f;
		if (rc < 0)
			continue;
		uint64_t seq = ((uint64_t)w << 48) | st->seq++;
		if (resolver_place(e, sp, seq, r, &st->resolver) < 0) {
			quota_release(t, cq, f, charge);
			placements_untake_w(a->placements, w, rec);
			attempt_answer(slot, SHMSCHED_UNSCHEDULABLE,
				       "the daemon ran out of memory placing this pod");
			return ATTEMPT_ANSWERED;
		}
		placed_any = true;
		if (r->placement.slot >= 0) {
			attempt_record_and_answer(a, w, pr, slot, rec,
						  (uint32_t)r->placement.slot, pod->spec,
						  &r->placement.devices, pod->cookie,
						  attempt, qc_charged_tag(cq, f, borrowed));
			qc_count_admitted(q, cq);
			qc_admitted(q, w, pod->spec, charge); /* admission fair sharing */
			tell_placed(a, pod->spec);
			return ATTEMPT_ANSWERED;
		}
		quota_release(t, cq, f, charge);
	}
	if (placed_any) {
		/* Some flavor had room but no node: the engine's reason (of the
		 * last flavor tried); the pod may wait for a node. */
		placements_untake_w(a->placements, w, rec);
		return r->gave_up ? ATTEMPT_GAVE_UP : ATTEMPT_UNSCHEDULABLE;
	}
	if (full >= 0) {
		/* Quota may come back: the caller answers it, or it waits for
		 * its tree's quota (daemon/wait.c). */
		/* Its message only when it is answered (refusal_message): a
		 * pod that parks is not told it. */
		struct attempt_quota_refusal *qr = &a->refusal[w];
		qr->n = n;
		memcpy(qr->flavors, order, (size_t)n * sizeof(*order));
		memcpy(qr->rcs, tried_rc, (size_t)n * sizeof(*tried_rc));
		memcpy(qr->charge, charge, sizeof(charge));
		qr->refused = true;
		qr->cq = cq;
		qr->gen = gen;
		qr->flavor = full;
		qr->serial = qc_serial(q);
		placements_untake_w(a->placements, w, rec);
		stat_inc(&st->resolver.unschedulable);
		return ATTEMPT_QUOTA;
	}
	quota_unfit_message(t, cq, order, n, charge, "the pod", why, sizeof(why));
refuse:
	placements_untake_w(a->placements, w, rec);
	stat_inc(&st->resolver.unschedulable);
	attempt_answer(slot, SHMSCHED_UNSCHEDULABLE, why);
	return ATTEMPT_ANSWERED;
}

/* attempt_place while the quarantine tracks some (pool, template) pair:
 * the pod placed with its template's quarantined pools excluded
 * (quarantine_exclude) and the nodes where it failed within the window
 * scored lower (quarantine_avoid: crash-pair avoidance), the placement
 * counted for its pool; an unschedulable pod's message names the
 * quarantine (attempt_unschedulable). Its cost, only while some pair is
 * tracked: two scans of the quarantine's table under its mutex, and a
 * copy of the pod's spec when either applies (the engine then places a
 * spec of its own equivalence class). The quota path (place_under_quota)
 * and gangs are not checked. */
__attribute__((noinline)) /* off the path while nothing is tracked */
static int place_quarantined(struct attempt_ctx *a, unsigned w, struct quarantine *q,
			     struct producer *pr, struct shmsched_slot *slot,
			     const struct record_pod *pod, const struct pod_spec *esp,
			     uint32_t attempt, uint32_t rec, struct resolve_result *r)
{
	uint64_t now = quarantine_now(q);
	uint32_t pools[QUARANTINE_EXCLUDED_MAX];
	struct quarantine_info first;
	uint32_t n = quarantine_pools(q, now, pr->owner, pod->spec->ns_name, pools,
				      QUARANTINE_EXCLUDED_MAX, &first);
	struct pod_spec ex;
	const struct pod_spec *sp = esp;
	if (n > QUARANTINE_EXCLUDED_MAX)
		n = QUARANTINE_EXCLUDED_MAX;
	bool excluded = n > 0 && quarantine_exclude(esp, a->pool_key, pools, n, &ex);
	if (excluded) {
		sp = &ex;
		quarantine_message(q, &first, intern_str(a->strings, first.key.pool),
				   intern_str(a->strings, pod->spec->ns_name),
				   a->quarantine_why[w], sizeof(a->quarantine_why[w]));
	}
	struct engine *e = a->engines[w];
	uint32_t failed[QUARANTINE_AVOID_MAX];
	uint32_t nf = a->name_key == 0 ? 0
		: quarantine_failed_nodes(q, now, pr->owner, pod->spec->ns_name,
					  failed, QUARANTINE_AVOID_MAX);
	if (nf > 0) {
		/* Inside the worker's read-side section: the snapshot's names. */
		const struct snapshot *snap = cluster_snapshot(engine_cluster(e));
		uint32_t k = 0;
		for (uint32_t i = 0; i < nf; i++)
			if (failed[i] < snap->n_slots && snap->present[failed[i]])
				failed[k++] = snap->nodes[failed[i]].name;
		if (!excluded)
			ex = *esp;
		if (quarantine_avoid(&ex, a->name_key, failed, k))
			sp = &ex;
	}
	struct serve_stats *st = &a->stats[w];
	uint64_t seq = ((uint64_t)w << 48) | st->seq++;
	if (resolver_place(e, sp, seq, r, &st->resolver) < 0) {
		placements_untake_w(a->placements, w, rec);
		attempt_answer(slot, SHMSCHED_UNSCHEDULABLE,
			       "the daemon ran out of memory placing this pod");
		return ATTEMPT_ANSWERED;
	}
	if (r->placement.slot < 0) {
		placements_untake_w(a->placements, w, rec);
		if (excluded && !r->gave_up)
			quarantine_refused(q); /* shmsched_pool_refused_total */
		return r->gave_up ? ATTEMPT_GAVE_UP : ATTEMPT_UNSCHEDULABLE;
	}
	uint32_t node = (uint32_t)r->placement.slot;
	/* Inside the worker's read-side section: the node is the snapshot's. */
	const struct node_spec *ns = &cluster_snapshot(engine_cluster(e))->nodes[node];
	struct quarantine_key k = {.owner = pr->owner, .template = pod->spec->ns_name};
	if (a->pool_key != 0 && labels_get(ns->labels, ns->n_labels, a->pool_key, &k.pool))
		quarantine_placed(q, now, &k);
	a->quarantine_why[w][0] = '\0';
	attempt_record_and_answer(a, w, pr, slot, rec, node, pod->spec,
				  &r->placement.devices, pod->cookie, attempt, 0);
	tell_placed(a, pod->spec);
	return ATTEMPT_ANSWERED;
}

enum attempt_result attempt_place(struct attempt_ctx *a, unsigned w, struct producer *pr,
				  struct shmsched_slot *slot,
				  const struct record_pod *pod, uint32_t attempt,
				  struct resolve_result *r)
{
	struct serve_stats *st = &a->stats[w];
	char why[SHMSCHED_MESSAGE_MAX];
	a->refusal[w].refused = false;
	/* What the engine places: the pod, or with --etcd its copy kept to
	 * this host's shards. Acquire, partner of attempt_set_shard_gate's
	 * release. */
	const struct pod_spec *esp = pod->spec;
	struct shard_gate *sg = __atomic_load_n(&a->shard_gate, __ATOMIC_ACQUIRE);
	if (sg != NULL) {
		a->shard_orig[w] = NULL;
		if (shard_gate_spec(sg, pod->spec, now_ns(), &a->shard_spec[w], why,
				    sizeof(why)) != SHARD_GATE_PLACE) {
			stat_inc(&st->resolver.unschedulable);
			attempt_answer(slot, SHMSCHED_UNSCHEDULABLE, why);
			return ATTEMPT_ANSWERED;
		}
		esp = &a->shard_spec[w];
		a->shard_orig[w] = pod->spec;
	}
	/* The placement's record first: a pod is placed only if the daemon
	 * can remember whose it is (invariant 7). */
	int64_t rec = placements_take_w(a->placements, w);
	if (rec < 0) {
		stat_inc(&st->rejected);
		snprintf(why, sizeof(why), "the daemon holds %u placements, the most "
			 "it keeps (--max-placements): release some first",
			 placements_capacity(a->placements));
		attempt_answer(slot, SHMSCHED_REJECTED, why);
		return ATTEMPT_ANSWERED;
	}
	if (a->quota != NULL) {
		/* QA4 (daemon/quota_charge.c): the tree stays the same from the
		 * lookup to the record's publish or the charge given back. */
		qc_enter(a->quota, w);
		int cq = qc_worker_queue(a->quota, w, pod->spec, why, sizeof(why));
		if (cq == QC_REFUSED) {
			qc_leave(a->quota, w);
			placements_untake_w(a->placements, w, (uint32_t)rec);
			stat_inc(&st->resolver.unschedulable);
			attempt_answer(slot, SHMSCHED_UNSCHEDULABLE, why);
			return ATTEMPT_ANSWERED;
		}
		if (cq >= 0) {
			enum attempt_result res = place_under_quota(
				a, w, pr, slot, pod, esp, attempt, cq, (uint32_t)rec, r);
			qc_leave(a->quota, w);
			return res;
		}
		qc_leave(a->quota, w);
	}
	/* Acquire, partner of attempt_set_quarantine's release. */
	struct quarantine *qr = __atomic_load_n(&a->quarantine, __ATOMIC_ACQUIRE);
	if (qr != NULL) {
		a->quarantine_why[w][0] = '\0';
		if (quarantine_active(qr))
			return (enum attempt_result)place_quarantined(
				a, w, qr, pr, slot, pod, esp, attempt, (uint32_t)rec, r);
	}
	struct engine *e = a->engines[w];
	uint64_t seq = ((uint64_t)w << 48) | st->seq++; /* the worker's own */
	if (resolver_place(e, esp, seq, r, &st->resolver) < 0) {
		placements_untake_w(a->placements, w, (uint32_t)rec);
		attempt_answer(slot, SHMSCHED_UNSCHEDULABLE,
			       "the daemon ran out of memory placing this pod");
		return ATTEMPT_ANSWERED;
	}
	if (r->placement.slot >= 0) {
		attempt_record_and_answer(a, w, pr, slot, (uint32_t)rec,
					  (uint32_t)r->placement.slot, pod->spec,
					  &r->placement.devices, pod->cookie, attempt, 0);
		tell_placed(a, pod->spec);
		return ATTEMPT_ANSWERED;
	}
	placements_untake_w(a->placements, w, (uint32_t)rec);
	return r->gave_up ? ATTEMPT_GAVE_UP : ATTEMPT_UNSCHEDULABLE;
}

/* Gives back charge `quota` of a pod requesting spec's requests. */
static void uncharge(struct attempt_ctx *a, unsigned w, const struct pod_spec *spec,
		     uint32_t quota)
{
	int cq, f;
	int64_t charge[QUOTA_MAX_RESOURCES];
	unsigned missing;
	qc_untag(quota, &cq, &f);
	if (qc_request(a->quota, w, &spec->request, charge, &missing) == 0) {
		quota_release(qc_tree(a->quota), cq, f, charge);
		/* charge_held told admission fair sharing (its penalty stays,
		 * as Kueue's pushed penalty stays until settled). */
		struct afs_ledger *afs = qc_admission_fair(a->quota);
		if (afs != NULL)
			afsl_release(afs, qc_worker_local_queue(a->quota, w, spec),
				     charge);
	}
}

/* The evictor held room on `node` for a waiting pod: under quota, it is
 * charged to the first of its queue's flavors that has room and whose
 * nodeLabels the node carries (*quota its tag; 0: not under quota).
 * -ENOSPC when none can take it (nothing charged): the room is given
 * back, the pod waits on. */
static int charge_held(struct attempt_ctx *a, unsigned w, const struct pod_spec *spec,
		       uint32_t node, uint32_t *quota)
{
	char why[SHMSCHED_MESSAGE_MAX];
	int cq = qc_worker_queue(a->quota, w, spec, why, sizeof(why));
	if (cq == QC_NONE)
		return 0;
	int64_t charge[QUOTA_MAX_RESOURCES];
	unsigned missing;
	if (cq < 0 || qc_request(a->quota, w, &spec->request, charge, &missing) < 0)
		return -ENOSPC;
	struct quota_tree *t = qc_tree(a->quota);
	/* Inside the worker's read-side section: the node is the snapshot's. */
	const struct node_spec *ns =
		&cluster_snapshot(engine_cluster(a->engines[w]))->nodes[node];
	const int *order;
	int n = quota_node_flavors(t, cq, &order);
	for (int k = 0; k < n; k++) {
		int f = order[k];
		bool borrowed;
		if (!qc_node_has_flavor(a->quota, f, ns->labels, ns->n_labels) ||
		    quota_try_charge_borrowed(t, cq, f, charge, &borrowed) < 0)
			continue;
		*quota = qc_charged_tag(cq, f, borrowed);
		qc_admitted(a->quota, w, spec, charge); /* admission fair sharing */
		return 0;
	}
	return -ENOSPC;
}

int attempt_place_held(struct attempt_ctx *a, unsigned w, struct producer *pr,
		       struct shmsched_slot *slot, const struct pod_spec *spec,
		       uint64_t cookie, uint32_t node, uint32_t attempt)
{
	uint32_t quota = 0;
	if (a->quota != NULL) {
		int rc = charge_held(a, w, spec, node, &quota);
		if (rc < 0)
			return rc;
	}
	int64_t rec = placements_take_w(a->placements, w);
	if (rec < 0) {
		if (quota != 0)
			uncharge(a, w, spec, quota);
		return -ENOSPC;
	}
	struct device_assignment none = {0};
	attempt_record_and_answer(a, w, pr, slot, (uint32_t)rec, node, spec, &none,
				  cookie, attempt, quota);
	stat_inc(&a->stats[w].resolver.placed);
	tell_placed(a, spec);
	return 0;
}

/* The pods committed before a gang's failure were given back, and other
 * workers' attempts meanwhile may have failed for the room they held:
 * told as releases, or those would wait for room that is free again. */
static void tell_rollback(struct attempt_ctx *a, const struct pod_spec *const *specs,
			  const struct resolve_result *r, unsigned failed, unsigned *told)
{
	for (unsigned i = 0; a->events != NULL && i < failed; i++) {
		struct queue_event ev = queue_event_release(
			(uint32_t)r[i].placement.slot, specs[i], &r[i].placement.devices);
		queue_events_publish(a->events, &ev);
		(*told)++;
	}
}

/* attempt_gang's ClusterQueue for pods[0..n): QC_NONE when none is under
 * quota, the one all name, or QC_REFUSED with why. Inside w's gate. */
static int gang_queue(struct attempt_ctx *a, unsigned w,
		      const struct pod_spec *const *specs, unsigned n, char *why,
		      size_t len)
{
	int cq = QC_NONE;
	for (unsigned i = 0; i < n; i++) {
		int c = qc_worker_queue(a->quota, w, specs[i], why, len);
		if (c == QC_REFUSED)
			return QC_REFUSED;
		if (i > 0 && c != cq) {
			/* Kueue admits a pod group as one Workload of one
			 * LocalQueue. */
			snprintf(why, len, "metadata.labels[\"" QUOTA_QUEUE_LABEL "\"]: "
				 "the pods of its pod group name different "
				 "LocalQueues, or some none (expected one LocalQueue "
				 "for the whole group, admitted as one workload)");
			return QC_REFUSED;
		}
		cq = c;
	}
	return cq;
}

/* attempt_gang under ClusterQueue `cq` (inside w's gate, the records
 * taken): the sum of the pods' requests charged to the first flavor with
 * room for all of it, then the gang placed with the flavor's nodeLabels;
 * a flavor where it finds no nodes gives the charge back and the next is
 * tried. 0 with *tag the charge's (every pod's record carries it), or
 * attempt_gang's other answers. Nothing stays charged unless 0. */
__attribute__((noinline)) /* off the path of gangs without quota */
static int gang_under_quota(struct attempt_ctx *a, unsigned w,
			    const struct pod_spec *const *specs, unsigned n,
			    uint64_t seq, int cq, struct resolve_result *r,
			    unsigned *failed, unsigned *told, uint32_t *tag)
{
	struct quota_charge *q = a->quota;
	struct quota_tree *t = qc_tree(q);
	struct attempt_quota_refusal *qr = &a->refusal[w];
	int64_t total[QUOTA_MAX_RESOURCES] = {0}, one[QUOTA_MAX_RESOURCES];
	unsigned missing;
	for (unsigned i = 0; i < n; i++) {
		if (qc_request(q, w, &specs[i]->request, one, &missing) < 0) {
			quota_uncovered_message(t, cq, a->res->name[missing],
						"a pod of its pod group", qr->gang_why,
						sizeof(qr->gang_why));
			return ATTEMPT_GANG_REFUSED;
		}
		for (int k = 0; k < quota_n_resources(t); k++)
			total[k] += one[k];
	}
	/* Before the first charge, as place_under_quota's. */
	uint64_t gen = quota_generation(t, cq);
	const int *order;
	int nf = quota_node_flavors(t, cq, &order);
	int full = -1, rc = 1;
	bool placed_any = false;
	int tried_rc[QUOTA_MAX_FLAVORS];
	const struct pod_spec *sp[GANG_MIN_MAX];
	for (int k = 0; k < nf; k++) {
		int f = order[k];
		tried_rc[k] = 0;
		/* The nodeLabels first, as place_under_quota's. */
		for (unsigned i = 0; i < n; i++)
			sp[i] = specs[i];
		if (qc_flavor_n_labels(q, f) > 0) {
			if (a->gang_flavored[w] == NULL)
				a->gang_flavored[w] = malloc(GANG_MIN_MAX *
							     sizeof(struct pod_spec));
			if (a->gang_flavored[w] == NULL)
				return -ENOMEM;
			for (unsigned i = 0; i < n && tried_rc[k] == 0; i++) {
				if (!qc_flavor_spec(q, f, specs[i], &a->gang_flavored[w][i]))
					tried_rc[k] = -EXDEV;
				sp[i] = &a->gang_flavored[w][i];
			}
			if (tried_rc[k] < 0)
				continue;
		}
		bool borrowed;
		tried_rc[k] = quota_try_charge_borrowed(t, cq, f, total, &borrowed);
		if (tried_rc[k] == -ENOSPC && full < 0)
			full = f;
		if (tried_rc[k] < 0)
			continue;
		placed_any = true;
		rc = gang_place(a->engines[w], sp, n, seq, r, failed,
				&a->stats[w].resolver);
		if (rc == 0) {
			*tag = qc_charged_tag(cq, f, borrowed);
			return 0;
		}
		quota_release(t, cq, f, total);
		tell_rollback(a, sp, r, *failed, told);
		if (rc < 0)
			return rc;
	}
	if (placed_any)
		return rc; /* some flavor had quota, no nodes: the engine's */
	if (full >= 0) {
		qc_full_message(q, cq, order, tried_rc, nf, total, qr->gang_why,
				sizeof(qr->gang_why));
		qr->refused = true;
		qr->cq = cq;
		qr->gen = gen;
		qr->flavor = full;
		qr->serial = qc_serial(q);
		/* GF1: the whole gang's, its charge in its quota lists. */
		memcpy(qr->charge, total, sizeof(total));
		return ATTEMPT_GANG_QUOTA;
	}
	quota_unfit_message(t, cq, order, nf, total, "its pod group", qr->gang_why,
			    sizeof(qr->gang_why));
	return ATTEMPT_GANG_REFUSED;
}

int attempt_gang(struct attempt_ctx *a, unsigned w, struct producer *const *prs,
		 struct shmsched_slot *const *slots, const struct record_pod *const *pods,
		 const uint32_t *attempts, unsigned n, struct resolve_result *r,
		 unsigned *failed, unsigned *told)
{
	struct serve_stats *st = &a->stats[w];
	int64_t rec[GANG_MIN_MAX];
	const struct pod_spec *specs[GANG_MIN_MAX] = {0};
	unsigned taken = 0;
	int rc = -ENOSPC;
	uint32_t tag = 0;
	int cq = QC_NONE;
	a->refusal[w].refused = false;
	*told = 0;
	if (n > GANG_MIN_MAX)
		return -E2BIG;
	/* With --etcd a gang's pods would each need the gate, and their
	 * nodes one owner: not built yet, so refused, never placed across
	 * hosts' shards. */
	if (__atomic_load_n(&a->shard_gate, __ATOMIC_ACQUIRE) != NULL) {
		snprintf(a->refusal[w].gang_why, sizeof(a->refusal[w].gang_why),
			 "a host of a multi-host cluster (--etcd) does not place pod "
			 "groups (gangs) yet: place them on a single host");
		return ATTEMPT_GANG_REFUSED;
	}
	/* Every placement's record first: a gang is placed only if the
	 * daemon can remember all of it. */
	for (; taken < n; taken++) {
		rec[taken] = placements_take_w(a->placements, w);
		if (rec[taken] < 0)
			goto untake;
		specs[taken] = pods[taken]->spec;
	}
	uint64_t seq = ((uint64_t)w << 48) | st->seq;
	st->seq += n;
	if (a->quota != NULL) {
		/* QA4 (daemon/quota_charge.c): the tree stays the same from the
		 * lookup to the records' publish or the charge given back. */
		qc_enter(a->quota, w);
		cq = gang_queue(a, w, specs, n, a->refusal[w].gang_why,
				sizeof(a->refusal[w].gang_why));
		if (cq == QC_REFUSED)
			rc = ATTEMPT_GANG_REFUSED;
		else if (cq >= 0)
			rc = gang_under_quota(a, w, specs, n, seq, cq, r, failed, told,
					      &tag);
		if (cq < 0 || rc != 0) /* placed under quota: left after the publish */
			qc_leave(a->quota, w);
		if (cq != QC_NONE && rc != 0)
			goto untake;
	}
	if (cq == QC_NONE) {
		rc = gang_place(a->engines[w], specs, n, seq, r, failed, &st->resolver);
		if (rc != 0) {
			tell_rollback(a, specs, r, *failed, told);
			goto untake;
		}
	}
	for (unsigned i = 0; i < n; i++)
		attempt_record_and_answer(a, w, prs[i], slots[i], (uint32_t)rec[i],
					  (uint32_t)r[i].placement.slot, specs[i],
					  &r[i].placement.devices, pods[i]->cookie,
					  attempts[i], tag);
	if (cq >= 0) {
		/* One workload admitted (Kueue counts the pod group once);
		 * admission fair sharing told of each pod's own charge. */
		int64_t one[QUOTA_MAX_RESOURCES];
		unsigned missing;
		qc_count_admitted(a->quota, cq);
		for (unsigned i = 0; i < n; i++)
			if (qc_request(a->quota, w, &specs[i]->request, one, &missing) == 0)
				qc_admitted(a->quota, w, specs[i], one);
		qc_leave(a->quota, w);
	}
	return 0;

untake:
	while (taken-- > 0)
		placements_untake_w(a->placements, w, (uint32_t)rec[taken]);
	return rc;
}

const char *attempt_gang_refusal(const struct attempt_ctx *a, unsigned w)
{
	return a->refusal[w].gang_why;
}

void attempt_answer(struct shmsched_slot *slot, uint32_t status, const char *why)
{
	answer_slot(slot, status, 0, now_ns(), why);
}

/* Worker w's quota refusal `qr` in words (qc_full_message), into `buf`:
 * the usage as it is now (the refusal came on this thread just before,
 * nothing of this worker's charged since). Inside the gate (QA4): the
 * tree the refusal was of, or, swapped since (qc_serial), a message that
 * names no node of it. */
static void refusal_message(struct attempt_ctx *a, unsigned w,
			    const struct attempt_quota_refusal *qr, char *buf,
			    size_t len)
{
	qc_enter(a->quota, w);
	if (qc_serial(a->quota) == qr->serial)
		qc_full_message(a->quota, qr->cq, qr->flavors, qr->rcs, qr->n,
				qr->charge, buf, len);
	else
		snprintf(buf, len, "no flavor of its ClusterQueue had quota "
			 "left, and the queues were replaced since (shmsched "
			 "queue apply)");
	qc_leave(a->quota, w);
}

/* With --etcd, a pod kept to this host's shards fitting none of their
 * nodes: the node the engine would give it without the gate, if any,
 * named with its shard after the message in why[0..len). Placed, not
 * committed (engine_place); the engine's last failure is the gated
 * pod's no more, which its message was read from before. */
static void shard_note(struct attempt_ctx *a, unsigned w, char *why, size_t len)
{
	struct shard_gate *sg = __atomic_load_n(&a->shard_gate, __ATOMIC_ACQUIRE);
	if (sg == NULL || a->shard_orig[w] == NULL)
		return;
	const struct pod_spec *orig = a->shard_orig[w];
	a->shard_orig[w] = NULL; /* its attempt's answer: not kept past it */
	struct engine *e = a->engines[w];
	struct placement pl;
	uint64_t seq = ((uint64_t)w << 48) | a->stats[w].seq++;
	if (engine_place(e, orig, seq, &pl) < 0 || pl.slot < 0)
		return;
	size_t at = strlen(why);
	if (at + 3 >= len)
		return;
	memcpy(why + at, "; ", 3);
	/* Inside the worker's read-side section: the snapshot's node. */
	if (!shard_gate_note(sg, cluster_snapshot(engine_cluster(e)), (uint32_t)pl.slot,
			     why + at + 2, len - at - 2))
		why[at] = '\0';
}

void attempt_unschedulable(struct attempt_ctx *a, unsigned w, struct shmsched_slot *slot,
			   const struct resolve_result *r, const char *prefix)
{
	char why[SHMSCHED_MESSAGE_MAX];
	int n = prefix != NULL ? snprintf(why, sizeof(why), "%s", prefix) : 0;
	if (n < 0 || (size_t)n >= sizeof(why))
		n = 0;
	if (a->quarantine_why != NULL && a->quarantine_why[w][0] != '\0') {
		int k = snprintf(why + n, sizeof(why) - (size_t)n, "%s; ",
				 a->quarantine_why[w]);
		if (k > 0 && (size_t)(n + k) < sizeof(why))
			n += k;
	}
	if (a->refusal[w].refused)
		refusal_message(a, w, &a->refusal[w], why + n, sizeof(why) - (size_t)n);
	else if (r->gave_up)
		snprintf(why + n, sizeof(why) - (size_t)n, "0/%u nodes were left to "
			 "this pod: %u placements found a node and lost it to "
			 "concurrent ones", r->placement.all_nodes, r->attempts);
	else {
		engine_message(a->engines[w], why + n, sizeof(why) - (size_t)n);
		shard_note(a, w, why, sizeof(why));
	}
	attempt_answer(slot, SHMSCHED_UNSCHEDULABLE, why);
}

void attempt_defer_allow(struct attempt_ctx *a, unsigned w)
{
	a->defer[w] = ATTEMPT_DEFER_MAY;
}

bool attempt_defer_end(struct attempt_ctx *a, unsigned w)
{
	bool did = a->defer[w] == ATTEMPT_DEFER_DID;
	a->defer[w] = ATTEMPT_DEFER_NO;
	return did;
}

bool attempt_etcd_pending(const struct attempt_ctx *a, unsigned w)
{
	/* ES2: acquire, partner of attempt_set_etcd_sync's release. */
	struct etcd_sync *es = __atomic_load_n(&a->etcd_sync, __ATOMIC_ACQUIRE);
	return es != NULL && etcd_sync_pending(es, w) > 0;
}

/* Deferred placement `d` answered by etcd: committed, the tail of
 * attempt_record_and_answer (queued for the durable store, published,
 * answered placed); refused, rolled back as etcd_refused does and
 * answered unschedulable. Its producer `pr` (NULL: gone since: the
 * placement is kept or rolled back all the same, nobody answered).
 *
 * Why writing the slot now is safe (bind/answer.h, A4): the slot was
 * never handed back (the burst kept its handle), so the producer does
 * not own it yet and reads nothing of it until the handle is on its
 * completion ring, which attempt_complete puts there after this write;
 * a producer gone since is looked up again (producers_get, its key), never
 * reached through a pointer kept across quiescent states. */
static void etcd_finish(struct attempt_ctx *a, unsigned w, struct producer *pr,
			const struct etcd_done *d)
{
	const struct etcd_pending *p = &d->p;
	struct shmsched_slot *slot = pr != NULL ? &pr->region.slots[p->index] : NULL;
	if (d->rc != 0) {
		struct pod_spec use;
		placement_use(p->made, &use);
		struct device_assignment dev = p->made->dev;
		etcd_rollback(a, w, p->rec, p->node, &use, &dev, 0);
		if (slot != NULL)
			attempt_answer(slot, SHMSCHED_UNSCHEDULABLE, d->why);
		return;
	}
	if (a->persist != NULL)
		a->store_seq[w] = persist_placement(a->persist, p->id, p->made, p->owner);
	uint64_t placed_ns = p->made->placed_ns;
	int32_t priority = p->made->priority;
	struct device_assignment dev = p->made->dev;
	placements_publish_w(a->placements, w, p->rec, p->owner);
	if (slot != NULL)
		answer_placed(slot, p->node, placed_ns, &dev, p->id);
	stat_inc(&a->stats[w].attempts[attempts_bucket(p->attempt)]);
	note_priority(a, priority);
}

unsigned attempt_etcd_collect(struct attempt_ctx *a, unsigned w, int64_t wait_ns)
{
	/* ES2: acquire, partner of attempt_set_etcd_sync's release. */
	struct etcd_sync *es = __atomic_load_n(&a->etcd_sync, __ATOMIC_ACQUIRE);
	if (es == NULL || etcd_sync_pending(es, w) == 0)
		return 0;
	struct etcd_done d[32];
	size_t n = etcd_sync_collect(es, w, d, sizeof(d) / sizeof(d[0]), wait_ns);
	/* Handed back a producer's run at a time (one ring write each). */
	uint64_t h[sizeof(d) / sizeof(d[0])];
	struct producer *cur = NULL;
	unsigned k = 0;
	for (size_t i = 0; i < n; i++) {
		struct producer *pr = producers_get(a->producers, d[i].p.producer);
		if (pr != NULL && (producers_key(pr) != d[i].p.key || producers_faulted(pr)))
			pr = NULL;
		etcd_finish(a, w, pr, &d[i]);
		if (pr == NULL)
			continue;
		if (pr != cur && k > 0) {
			attempt_complete(a, w, cur, h, k);
			k = 0;
		}
		cur = pr;
		h[k++] = d[i].p.index;
	}
	if (k > 0)
		attempt_complete(a, w, cur, h, k);
	return (unsigned)n;
}

void attempt_complete(struct attempt_ctx *a, unsigned w, struct producer *pr,
		      const uint64_t *h, unsigned k)
{
	char why[160];
	if (k == 0)
		return;
	/* With --durability sync a producer reads PLACED only once it is
	 * durable (persist_internal.h): the queue's answers (a retry, a gang,
	 * the evictor's reply) reach here without serve.c's wait at the end
	 * of a burst, so wait here; after that wait it is one branch. */
	attempt_persist_wait(a, w);
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
		producers_fault(a->producers, pr, why);
		return;
	}
	if (k > (unsigned)sent)
		stat_add(&a->stats[w].completion_overflows, k - (unsigned)sent);
	/* The answer doorbell (shm/answer_bell.c, AB1-AB3): after the
	 * enqueue's release store, wake the producer if it sleeps for
	 * answers. The word is the producer's to write: only woken, never
	 * trusted (a producer that keeps it at 1 costs a FUTEX_WAKE per
	 * burst to it). */
	if (sent > 0)
		answer_bell_ring(&pr->region.notices->answer_wait);
}

void attempt_answer_one(struct attempt_ctx *a, unsigned w, struct producer *pr,
			uint32_t index, uint32_t status, const char *why)
{
	uint64_t h = index;
	attempt_answer(&pr->region.slots[index], status, why);
	attempt_complete(a, w, pr, &h, 1);
}
