/* Kueue's quota in the daemon's placements: see quota_charge_internal.h.
 *
 * What each part costs a pod under quota: the queue lookup is one probe of
 * the worker's cache by group id (a miss decodes the group once:
 * pod_group_decode, then a LocalQueue lookup); the charge map is built
 * once per worker and again only when resource names are added; the
 * charge itself is quota_try_charge's. A pod without the label pays the
 * cache probe only, and a daemon without a tree pays nothing (attempt.c
 * tests for the tree first).
 *
 * Invariants:
 *   QA1 A charge is computed by qc_request from requests alone, and a
 *       placement record keeps the requests the commit took
 *       (placements_prepare), so a release gives back what was charged.
 *   QA2 A record's `quota` is set before the record is published (its
 *       owner stored) and read by qc_on_free while the record is still
 *       live, before placements_free() frees it: the hook runs once per
 *       placement, as a record is freed once.
 *   QA3 The per-worker caches are each worker's own: no atomics. A group
 *       id names one namespace and one label set until a reclaim of the
 *       intern table frees it (shm/intern.h: it moves the epoch, then
 *       frees after a grace period); a worker empties its cache when it
 *       finds the epoch moved, before its lookup, and qc_replace empties
 *       every cache when it replaces the tree, holding every gate (QA4).
 *   QA4 Replacing the tree (qc_replace, `shmsched queue apply|delete`)
 *       happens with every gate held: one mutex per worker, taken by the
 *       worker around all it does with the tree for one pod (qc_enter:
 *       the queue lookup, the charge, the commit and the publish of the
 *       record or the charge given back), and one more taken by
 *       qc_on_free around reading a record's `quota` and giving it back
 *       (placements_free calls the hook while the record is still live).
 *       So while qc_replace holds them no charge or release is in
 *       flight, and every charge held is exactly one live record's
 *       `quota`: qc_replace charges each live record again in the new
 *       tree, by its ClusterQueue's and flavor's NAMES (indices change),
 *       with quota_force_charge (a cut quota leaves usage above it: Kueue
 *       keeps admitted workloads), rewrites the record's `quota` to the
 *       new indices, or to 0 when its queue or flavor is gone or no
 *       longer covers a resource it holds (it stays placed, charged to
 *       nothing), then swaps the tree in. A release waiting on the gate
 *       then reads the new `quota` and gives back to the new tree; the
 *       old tree is no longer reachable once the gates are let go.
 *       Lock order: a worker's gate, then the free hook's (a worker may
 *       free a victim inside its attempt); qc_replace takes them in that
 *       order; nothing holding the hook's gate takes a worker's. The
 *       caller must not hold anything a worker waits for inside its gate
 *       (the producers' lock is not: workers never take it).
 *   QA5 Kueue's workload counts (qc_count_admitted, qc_pending_add) are
 *       per tree node index, relaxed atomics: each a tally read by
 *       qc_metrics_text as a figure of the moment, ordering nothing. A
 *       pod's pending count is taken and given back under the same index
 *       by its worker (daemon/wait.c keeps it per pod), so it balances
 *       across a qc_replace; until such pods are woken (a swap wakes them
 *       all: daemon/wait.c) an index renumbered by the swap names another queue.
 *       The admitted totals are carried to the new tree by the queue's
 *       name in qc_replace (under every gate: no increment runs); a queue
 *       deleted loses its total, as Kueue's series goes with its queue.
 *   QE8 Quota by escrow's ask (qc_note_parked, qc_waiting,
 *       qc_parked_ask): parked_ask[cq][r] is the charge of the latest pod
 *       parked for quota by cq, relaxed stores by the parking worker and
 *       relaxed loads by the membership thread (daemon/quota_escrow_host.c,
 *       partner: qc_note_parked's store): a figure of the moment, as QA5's
 *       counts, ordering nothing; a torn view across resources only
 *       misstates an ask for one report (the next tick's is put again).
 *   QA6 Reclaim (issue 37 item 4). A charge's tag carries QC_TAG_BORROWED
 *       when the admission took its queue past nominal (qc_charged_tag
 *       of quota_try_charge_borrowed's verdict, judged by the counter the
 *       charge's own compare-and-swap left, set with the tag before the
 *       record is published: QA2); a placement another host admitted,
 *       counted on a shard's take (QV3 in daemon/etcd_sync.c,
 *       qc_charge_counted), by the same rule, judged by the counter its
 *       forced charge left; qc_replace keeps the bit. A pod refused by
 *       quota that parks asks the evictor (qc_reclaim_ask, inside its
 *       worker's gate: the policy read from the tree in force); the
 *       evictor's qc_reclaim_choose runs under the producers' lock
 *       (ingest/producers_reclaim.c), where qc_replace cannot run (it runs
 *       under that lock) and no record is freed (frees run under it too):
 *       the tree and the live records stay, only usage counters move
 *       (relaxed reads: reclaim_choose's view is a moment's figure). A
 *       request made for an older tree (qc_serial) is dropped. Its
 *       scratch (the reclaim_work, the candidates) is the lock holder's.
 *       Candidates: every live record charged in the preemptor's cohort
 *       tree and flavor that reclaim_choose's first tests (NCY1, the
 *       policies) keep, at most QC_RECLAIM_CANDIDATES, read from the
 *       buckets of the reclaim index (RX1) that can hold them.
 *   QA7 At most one reclaim request in flight per ClusterQueue (index
 *       of the tree it was asked of). Each eviction's give-back wakes
 *       every parked pod of the tree (daemon/wait.c); when each pod
 *       refused again asked again, 100 waiting pods asked 354-465 times
 *       (tests/daemon/test_reclaim.c), each ask a walk of the table
 *       under the producers' lock. rcl_inflight[cq] is claimed by the
 *       asker (seq_cst exchange 0 -> 1) and let go by qc_reclaim_done on
 *       the evictor thread once the request was served, its victims'
 *       quota given back (the evictor calls it before it wakes the
 *       workers: daemon/evict.c). An asker that finds it claimed stores
 *       rcl_wanted[cq] 1, then loads rcl_inflight again and claims it
 *       itself if it was let go meanwhile; qc_reclaim_done stores
 *       rcl_inflight 0, then exchanges rcl_wanted to 0. All four
 *       seq_cst, each side the other's partner: one of the two sees the
 *       other's store, so a want is never lost. A want means a pod
 *       parked without asking, maybe after the give-back (its
 *       generation then current: nothing would wake it). So when the
 *       request evicted pods, or was dropped unread (a tree swapped
 *       since, or no pod of the queue waiting when it was read), or its
 *       pod fit already (RECLAIM_WHY_FITS: a give-back not yet taken;
 *       the bench stalled without this, 1 run in ~20), the queue's
 *       cohort tree is nudged (a release of nothing: its generation
 *       moves), its parked pods try again and one asks. A request that
 *       found nothing to evict (the choice's other verdicts, or no
 *       node) nudges nothing, as the evictor's own nudge: a reclaim
 *       that cannot help does not loop; the other waiting pods of that
 *       queue ask again when its quota moves next. An approximation of
 *       Kueue, which tries preemption for each pending workload's head
 *       in turn: here one request stands for its queue's waiting pods
 *       at a time.
 *   RX1 The reclaim index (daemon/reclaim_index_internal.h), made when
 *       reclaim is set and kept only while some ClusterQueue's
 *       spec.preemption may ask reclaim (rix_on, set with every gate
 *       held; otherwise it stays empty and no placement takes its
 *       mutex: Kueue's default, Never, costs nothing): every live record whose tag is not 0 is in the
 *       bucket of its tag's ClusterQueue, flavor and QC_TAG_BORROWED
 *       (rix_bucket), and no other record is in any. A worker adds its
 *       record inside its gate after placements_set_quota, before the
 *       publish (qc_placed: QA2's window, so the evictor may find it
 *       before placements_at shows it live, and skips it as the walk
 *       did); a shard's take adds the records it counts (another host's
 *       placements, borrowed or not: QV3 in daemon/etcd_sync.c) the same
 *       way, inside the free hook's gate under the producers' lock (a
 *       bound record the shard watch published already is tagged there
 *       as qc_replace rewrites a tag: the evictor, which runs under that
 *       lock too, reads no tag meanwhile); qc_on_free takes it out under
 *       the hook's gate before placements_free frees it; qc_replace
 *       (every gate held: no charge or release in flight, every charged
 *       record published) and qc_recount (before the workers) make it
 *       again from the tags they wrote. The index's mutex is taken last (after a gate, or under
 *       the producers' lock by the evictor) and nothing is taken while
 *       it is held. The evictor holds it while it collects candidates
 *       (and through the choice, RO2):
 *       under the producers' lock no record is freed, so the records it
 *       reads stay live; records added meanwhile wait, as a record
 *       published during the old walk might or might not be seen. The
 *       evictor re-applies every test of the walk to each record it
 *       reads, so its candidates are the walk's. Cost: a charged
 *       placement takes the mutex twice (add, free); a request reads
 *       its candidates instead of every record: at 2,000 pods of the
 *       reclaim bench, 323,000 -> 129,000 instructions a request
 *       (docs/perf/2026-11-29-reclaim.md), most now the candidates'
 *       own (cand_consider, reclaim_choose).
 *   RO2 A request stops at its first victims: each record is in its
 *       bucket with its key in the choice's order (reclaim_choose's RCL2
 *       within one ClusterQueue: priority, then the most recently
 *       admitted, then uid; daemon/reclaim_index_internal.h), the lists
 *       kept in that order as far as an add's short walk keeps them (a
 *       new placement, the most recently admitted, goes first among its
 *       priority), and each bucket knows whether it is (rix_ordered).
 *       When every bucket of a request is in order (and holds at most
 *       QC_RECLAIM_CANDIDATES in all), choose_ordered reads the records
 *       in RCL2's order, the other queues' buckets merged by key, then
 *       the preemptor's own queue's, through cand_consider's tests:
 *       1, then twice as many as read, ..., each time calling
 *       reclaim_choose on all read so far, until it did not run out
 *       (reclaim_ran_out, RO1 in quota/quota.h: later candidates change
 *       nothing) or every record was read. The choice is the one from
 *       all the records, as unit.quota_reclaim checks RO1 on 100,000
 *       random events; otherwise the buckets are read whole as before.
 *       The index's mutex is held through the choice there (no record
 *       added meanwhile moves the order read; node_ok takes nothing).
 *       Cost: a request that evicts k pods reads about 2k records
 *       (reclaim_choose called log2 of that many times), not every
 *       borrowed one of its tree; one that finds no victims reads all,
 *       and chooses about twice.
 *
 * Admission fair sharing (daemon/admission_fair_internal.h), when a ledger
 * is set: the worker cache keeps each group's LocalQueue index beside its
 * ClusterQueue (both from one lookup, both emptied with the cache); an
 * admission (qc_admitted), a release (qc_on_free, which decodes the
 * record's group again under the hook's gate) and a recount feed the
 * ledger under the same gates as the charge, so its LocalQueue indices
 * are always the tree in force's; qc_replace rebinds it by names while it
 * holds every gate.
 */
#include "daemon/quota_charge_internal.h"
#include "daemon/evict_internal.h"
#include "base/base.h"

#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "daemon/admission_fair_internal.h"
#include "daemon/reclaim_index_internal.h"

#define QC_CACHE 256 /* groups remembered per worker, direct-mapped */
#define QC_NODES (QUOTA_MAX_CLUSTER_QUEUES + QUOTA_MAX_COHORTS)
/* Live placements one reclaim looks at, at most (QA6). */
#define QC_RECLAIM_CANDIDATES (1u << 18)
/* The reclaim index's buckets (RX1): by ClusterQueue, flavor, borrowed. */
#define QC_RIX_BUCKETS ((uint32_t)QC_NODES * QUOTA_MAX_FLAVORS * 2)

struct qc_worker {
	_Alignas(64) uint32_t group[QC_CACHE]; /* 0: empty */
	int32_t cq[QC_CACHE];                  /* >= 0, or QC_NONE */
	int32_t lq[QC_CACHE];                  /* its LocalQueue's index, -1 none */
	uint32_t strings_epoch;                /* intern_epoch the groups are of */
	struct quota_pod_map map;              /* qc_request's, by resource name */
	struct pod_group scratch;              /* a decoded group */
};

/* QA4: one per worker, then the free hook's. */
struct qc_gate {
	_Alignas(64) pthread_mutex_t m;
};

struct quota_charge {
	struct quota_tree *t; /* under the gates (QA4) */
	struct intern *strings; /* adds: the writer's thread only */
	const struct res_names *res;
	unsigned workers;
	struct quota_pod_names names; /* the queue label's and flavors' ids */
	struct qc_worker *w; /* [workers] */
	struct qc_gate *gate; /* [workers + 1]: QA4 */
	unsigned gates_made;
	uint64_t serial; /* trees swapped in by qc_replace; under every gate */
	/* QA5: by node index, QC_NODES each. */
	uint64_t *admitted;
	int64_t *pending[QC_PENDING_KINDS];
	int64_t *parked_ask; /* QE8: [QC_NODES][QUOTA_MAX_RESOURCES] */
	struct pod_group explain_scratch; /* qc_explain's: the control thread's */
	/* Admission fair sharing (daemon/admission_fair_internal.h); NULL:
	 * off. Set before the workers run. */
	struct afs_ledger *afs;
	struct pod_group hook_scratch; /* qc_on_free's: under the hook's gate */
	/* QA6: set before the workers run; the rest the lock holder's. */
	struct evictor *ev;
	struct placements *pl;
	struct reclaim_budget budget;
	uint64_t asked; /* relaxed: a tally */
	struct reclaim_work *rwork;
	uint64_t rwork_serial;
	struct reclaim_pod *cand;
	uint64_t *cand_id; /* [cap]: each candidate's placement id */
	uint64_t *out_id;  /* [cap]: the chosen victims' ids, or node_ok's */
	uint32_t *victims; /* [cap] */
	size_t cand_cap;
	/* RO2: a request's buckets and each one's next record, made on
	 * first use ([QC_NODES + 1] each); the evictor's. */
	uint32_t *ro_bucket, *ro_next;
	uint32_t ro_n, ro_cross;
	/* QA7: by tree node index. */
	uint8_t rcl_inflight[QC_NODES];
	uint8_t rcl_wanted[QC_NODES];
	bool rcl_skipped; /* the evictor's: the last request dropped unread */
	/* RX1: NULL when reclaim is off (or it could not be made: the walk
	 * of every record then). */
	struct reclaim_index *rix;
	/* RX1: tree_reclaims(t): the index is kept (and its mutex taken by
	 * each charged placement and release) only when some ClusterQueue
	 * may ask reclaim. Written with every gate held (qc_set_reclaim
	 * before the workers, qc_replace), read inside a gate. */
	bool rix_on;
};

struct quota_charge *qc_create(struct quota_tree *t, struct intern *strings,
			       const struct res_names *res, unsigned workers)
{
	struct quota_charge *q = calloc(1, sizeof(*q));
	if (q == NULL)
		return NULL;
	q->t = t;
	q->strings = strings;
	q->res = res;
	q->workers = workers;
	q->w = aligned_alloc(64, (size_t)workers * sizeof(*q->w));
	if (q->w == NULL)
		goto fail;
	for (unsigned i = 0; i < workers; i++) {
		memset(q->w[i].group, 0, sizeof(q->w[i].group));
		q->w[i].map.count = 0;
	}
	q->gate = aligned_alloc(64, (size_t)(workers + 1) * sizeof(*q->gate));
	q->admitted = calloc(QC_NODES, sizeof(*q->admitted));
	for (int k = 0; k < QC_PENDING_KINDS; k++)
		q->pending[k] = calloc(QC_NODES, sizeof(*q->pending[k]));
	q->parked_ask = calloc((size_t)QC_NODES * QUOTA_MAX_RESOURCES, sizeof(*q->parked_ask));
	if (q->gate == NULL || q->admitted == NULL || q->pending[0] == NULL ||
	    q->pending[1] == NULL || q->parked_ask == NULL) {
		errno = ENOMEM;
		goto fail;
	}
	for (; q->gates_made <= workers; q->gates_made++)
		if (pthread_mutex_init(&q->gate[q->gates_made].m, NULL) != 0) {
			errno = ENOMEM;
			goto fail;
		}
	int rc = quota_pod_names_intern(&q->names, t, strings);
	if (rc < 0) {
		errno = -rc;
		goto fail;
	}
	return q;
fail:
	qc_destroy(q);
	return NULL;
}

void qc_destroy(struct quota_charge *q)
{
	if (q == NULL)
		return;
	for (unsigned i = 0; i < q->gates_made; i++)
		pthread_mutex_destroy(&q->gate[i].m);
	reclaim_work_free(q->rwork);
	rix_destroy(q->rix);
	free(q->ro_bucket); /* ro_next is in it */
	free(q->cand);
	free(q->cand_id);
	free(q->out_id);
	free(q->victims);
	free(q->gate);
	free(q->w);
	free(q->admitted);
	for (int k = 0; k < QC_PENDING_KINDS; k++)
		free(q->pending[k]);
	free(q->parked_ask);
	free(q);
}

void qc_count_admitted(struct quota_charge *q, int cq)
{
	/* QA5: relaxed, a tally; partner: qc_metrics_text's load. */
	if (cq >= 0 && cq < QC_NODES)
		__atomic_fetch_add(&q->admitted[cq], 1, __ATOMIC_RELAXED);
}

void qc_pending_add(struct quota_charge *q, int cq, enum qc_pending kind,
		    int64_t delta)
{
	/* QA5: relaxed, a tally; partner: qc_metrics_text's load. */
	if (q != NULL && cq >= 0 && cq < QC_NODES && kind < QC_PENDING_KINDS)
		__atomic_fetch_add(&q->pending[kind][cq], delta, __ATOMIC_RELAXED);
}

void qc_note_parked(struct quota_charge *q, int cq, const int64_t *charge, int nr)
{
	if (q == NULL || cq < 0 || cq >= QC_NODES || nr < 0 || nr > QUOTA_MAX_RESOURCES)
		return;
	bool any = false; /* a gang's member re-parked with no charge known */
	for (int r = 0; r < nr; r++)
		any |= charge[r] > 0;
	if (!any)
		return;
	/* QE8: relaxed, a figure of the moment; partner: qc_parked_ask. */
	for (int r = 0; r < nr; r++)
		__atomic_store_n(&q->parked_ask[(size_t)cq * QUOTA_MAX_RESOURCES + (size_t)r],
				 charge[r], __ATOMIC_RELAXED);
}

int64_t qc_waiting(const struct quota_charge *q, int cq)
{
	if (cq < 0 || cq >= QC_NODES)
		return 0;
	/* QA5: relaxed tallies; partner: qc_pending_add. */
	int64_t n = __atomic_load_n(&q->pending[QC_PENDING_ACTIVE][cq], __ATOMIC_RELAXED) +
		    __atomic_load_n(&q->pending[QC_PENDING_INADMISSIBLE][cq], __ATOMIC_RELAXED);
	return n > 0 ? n : 0;
}

int64_t qc_parked_ask(const struct quota_charge *q, int cq, int resource)
{
	if (cq < 0 || cq >= QC_NODES || resource < 0 || resource >= QUOTA_MAX_RESOURCES)
		return 0;
	/* QE8: relaxed; partner: qc_note_parked's store. */
	return __atomic_load_n(&q->parked_ask[(size_t)cq * QUOTA_MAX_RESOURCES + (size_t)resource],
			       __ATOMIC_RELAXED);
}

size_t qc_metrics_text(const struct quota_charge *q, unsigned max_queues,
		       char *buf, size_t len)
{
	const struct quota_tree *t = q->t;
	struct quota_text o = {.buf = buf, .len = len};
	static const char *const status[QC_PENDING_KINDS] = {"active",
							     "inadmissible"};
	/* Kueue's pkg/metrics/metrics.go: PendingWorkloads (a gauge by
	 * cluster_queue and status) and AdmittedWorkloadsTotal (a counter by
	 * cluster_queue). */
	for (int fam = 0; fam < 2; fam++) {
		const char *name = fam == 0 ? "kueue_pending_workloads"
					    : "kueue_admitted_workloads_total";
		quota_text_put(&o, "# HELP %s %s\n# TYPE %s %s\n", name, fam == 0
			? "The number of pending workloads, per 'cluster_queue' and "
			  "'status' ('active': woken by freed quota, to be tried "
			  "again; 'inadmissible': refused by quota, waiting)"
			: "The total number of admitted workloads per "
			  "'cluster_queue' (pods placed under its quota)",
			name, fam == 0 ? "gauge" : "counter");
		unsigned shown = 0, left = 0;
		for (int n = 0; n < quota_n_nodes(t) && n < QC_NODES; n++) {
			if (quota_node_is_cohort(t, n))
				continue;
			if (shown == max_queues) {
				left++;
				continue;
			}
			shown++;
			for (int k = 0; k < (fam == 0 ? QC_PENDING_KINDS : 1); k++) {
				quota_text_put(&o, "%s{", name);
				quota_text_label(&o, "cluster_queue",
						 quota_node_name(t, n), false);
				if (fam == 0) {
					int64_t v = __atomic_load_n(&q->pending[k][n],
								    __ATOMIC_RELAXED);
					quota_text_put(&o, ",status=\"%s\"} %" PRId64 "\n",
						status[k], v > 0 ? v : 0);
				} else {
					quota_text_put(&o, "} %" PRIu64 "\n",
						__atomic_load_n(&q->admitted[n],
								__ATOMIC_RELAXED));
				}
			}
		}
		if (left > 0)
			quota_text_put(&o, "# %s: %u more ClusterQueue%s not shown (at most "
				"%u)\n", name, left, left == 1 ? "" : "s", max_queues);
	}
	/* The gauges last: the longest part, and the one a cut answer loses
	 * first (ingest/producers_queue.c cuts at a line). */
	size_t room = o.used < len ? len - o.used : 0;
	return o.used + quota_metrics_text(t, max_queues, room ? buf + o.used : NULL,
					   room);
}

uint64_t qc_serial(const struct quota_charge *q)
{
	return q->serial;
}

struct quota_tree *qc_tree(const struct quota_charge *q)
{
	return q->t;
}

void qc_enter(struct quota_charge *q, unsigned w)
{
	pthread_mutex_lock(&q->gate[w < q->workers ? w : q->workers].m);
}

void qc_leave(struct quota_charge *q, unsigned w)
{
	pthread_mutex_unlock(&q->gate[w < q->workers ? w : q->workers].m);
}

/* The pod's queue, uncached: group `g` decoded into `scratch`. */
static int lookup(struct quota_charge *q, uint32_t g, struct pod_group *scratch,
		  char *why, size_t why_len, int *lq)
{
	return quota_pod_queue(q->t, &q->names, q->strings, g, scratch, lq, why,
			       why_len);
}

int qc_worker_queue(struct quota_charge *q, unsigned w,
		    const struct pod_spec *pod, char *why, size_t why_len)
{
	uint32_t g = pod->group;
	if (g == 0)
		return QC_NONE; /* no labels, no namespace: nothing to name a queue */
	struct qc_worker *qw = &q->w[w];
	/* QA3: a run-time reclaim of the intern table may free a group id
	 * and give it to another label set; it moves the epoch first and
	 * frees only after this worker's next quiescent point, so a cache
	 * emptied when the epoch moved never maps a reused id. */
	uint32_t epoch = intern_epoch(q->strings);
	if (epoch != qw->strings_epoch) {
		memset(qw->group, 0, sizeof(qw->group));
		qw->strings_epoch = epoch;
	}
	unsigned i = (g * 2654435761u) >> 24; /* 0..255: QC_CACHE */
	if (qw->group[i] == g)
		return qw->cq[i];
	int lq;
	int cq = lookup(q, g, &qw->scratch, why, why_len, &lq);
	if (cq != QC_REFUSED) {
		qw->group[i] = g;
		qw->cq[i] = cq;
		qw->lq[i] = lq;
	}
	return cq;
}

int qc_worker_local_queue(struct quota_charge *q, unsigned w,
			  const struct pod_spec *pod)
{
	char why[SHMSCHED_MESSAGE_MAX];
	if (qc_worker_queue(q, w, pod, why, sizeof(why)) < 0)
		return -1;
	/* qc_worker_queue left it in the cache. */
	struct qc_worker *qw = &q->w[w];
	return qw->lq[(pod->group * 2654435761u) >> 24];
}

void qc_set_admission_fair(struct quota_charge *q, struct afs_ledger *l)
{
	q->afs = l;
}

struct afs_ledger *qc_admission_fair(const struct quota_charge *q)
{
	return q != NULL ? q->afs : NULL;
}

void qc_admitted(struct quota_charge *q, unsigned w, const struct pod_spec *pod,
		 const int64_t *charge)
{
	if (q->afs != NULL)
		afsl_admit(q->afs, qc_worker_local_queue(q, w, pod), charge);
}

int qc_request(struct quota_charge *q, unsigned w, const struct res_vec *request,
	       int64_t *out, unsigned *missing)
{
	if (w < q->workers)
		return quota_pod_charge(q->t, q->res, &q->w[w].map, request, out,
					missing);
	struct quota_pod_map local = {0}; /* not a worker: made for this call */
	return quota_pod_charge(q->t, q->res, &local, request, out, missing);
}

unsigned qc_flavor_n_labels(const struct quota_charge *q, int flavor)
{
	return q->names.flavors[flavor].n;
}

bool qc_node_has_flavor(const struct quota_charge *q, int flavor,
			const struct label *labels, unsigned n)
{
	return quota_pod_node_has_flavor(&q->names, flavor, labels, n);
}

bool qc_flavor_spec(const struct quota_charge *q, int flavor,
		    const struct pod_spec *pod, struct pod_spec *out)
{
	return quota_pod_flavor_spec(&q->names, flavor, pod, out);
}

void qc_full_message(const struct quota_charge *q, int cq, const int *flavors,
		     const int *rcs, int n, const int64_t *charge, char *buf,
		     size_t len)
{
	quota_refusal_message(q->t, cq, flavors, rcs, n, charge, buf, len);
}

bool qc_explain(void *arg, const struct pod_spec *spec, char *buf, size_t len)
{
	struct quota_charge *q = arg;
	if (spec->group == 0)
		return false;
	int lq;
	int cq = lookup(q, spec->group, &q->explain_scratch, buf, len, &lq);
	if (cq == QC_NONE)
		return false;
	if (cq == QC_REFUSED)
		return true; /* lookup() said why */
	int64_t charge[QUOTA_MAX_RESOURCES];
	unsigned missing;
	if (qc_request(q, q->workers, &spec->request, charge, &missing) < 0) {
		quota_uncovered_message(q->t, cq, q->res->name[missing], "the pod",
					buf, len);
		return true;
	}
	const int *order;
	int n = quota_node_flavors(q->t, cq, &order);
	int rcs[QUOTA_MAX_FLAVORS];
	for (int i = 0; i < n; i++)
		rcs[i] = -ENOSPC; /* each flavor told as a refusal would be */
	qc_full_message(q, cq, order, rcs, n, charge, buf, len);
	return true;
}

static bool tag_valid(const struct quota_tree *t, int cq, int flavor)
{
	return cq >= 0 && cq < quota_n_nodes(t) && !quota_node_is_cohort(t, cq) &&
	       flavor < quota_n_flavors(t);
}

/* RX1: the bucket of a record charged `tag`, RIX_NIL for none (tag 0,
 * out of range: no walk would take it). */
static uint32_t rix_bucket(uint32_t tag)
{
	int cq, flavor;
	qc_untag(tag, &cq, &flavor);
	if (cq < 0 || cq >= QC_NODES || flavor >= QUOTA_MAX_FLAVORS)
		return RIX_NIL;
	return ((uint32_t)cq * QUOTA_MAX_FLAVORS + (uint32_t)flavor) * 2 +
	       ((tag & QC_TAG_BORROWED) != 0);
}

/* RX1: a record's entry for rix_fill. */
struct rix_entry {
	uint32_t rec, bucket;
	struct rix_key key;
};

/* RO2: the last in key order first. */
static int rix_entry_desc(const void *a, const void *b)
{
	const struct rix_entry *x = a, *y = b;
	return rix_key_before(&y->key, &x->key) ? -1
	       : rix_key_before(&x->key, &y->key) ? 1 : 0;
}

/* RO2: record `i`'s key in the choice's order (as cand_consider reads
 * it into its reclaim_pod). */
static struct rix_key rix_key_for(const struct placement_record *r, uint64_t id)
{
	return (struct rix_key){.priority = r->priority,
				.admitted_ns = r->placed_ns, .uid = id};
}

/* RX1: the index made again from the live records' tags, with every
 * charge and release held off (the gates, or before the workers run).
 * RO2: added the last in key order first, so that each goes to its
 * bucket's head and every bucket is in order (without the memory for
 * that, in the table's order: buckets then out of order read as before
 * RO2). */
static void rix_fill(struct quota_charge *q)
{
	rix_lock(q->rix);
	rix_clear(q->rix);
	uint32_t end = q->rix_on ? placements_high_water(q->pl) : 0;
	struct rix_entry *e = end > 0 ? malloc((size_t)end * sizeof(*e)) : NULL;
	uint32_t n = 0;
	for (uint32_t i = 0; i < end; i++) {
		uint64_t id;
		const struct placement_record *r = placements_at(q->pl, i, &id);
		/* QA4: relaxed; no other writer runs. */
		uint32_t tag = r != NULL ? __atomic_load_n(&r->quota, __ATOMIC_RELAXED) : 0;
		uint32_t b = rix_bucket(tag);
		if (b == RIX_NIL)
			continue;
		struct rix_key key = rix_key_for(r, id);
		if (e != NULL)
			e[n++] = (struct rix_entry){.rec = i, .bucket = b, .key = key};
		else
			rix_add(q->rix, i, b, &key);
	}
	if (e != NULL) {
		qsort(e, n, sizeof(*e), rix_entry_desc);
		for (uint32_t k = 0; k < n; k++)
			rix_add(q->rix, e[k].rec, e[k].bucket, &e[k].key);
	}
	free(e);
	rix_unlock(q->rix);
}

/* QA6: whether ClusterQueue cq of `t` may ask the evictor: its
 * spec.preemption takes from itself, or from others of its cohort. */
static bool cq_reclaims(const struct quota_tree *t, int cq)
{
	const struct quota_preemption *pol = quota_node_preemption(t, cq);
	return pol->within_cluster_queue != QUOTA_PREEMPT_NEVER ||
	       (pol->reclaim_within_cohort != QUOTA_PREEMPT_NEVER &&
		quota_node_parent(t, cq) >= 0);
}

/* RX1: whether any ClusterQueue of `t` may ask (rix_on). */
static bool tree_reclaims(const struct quota_tree *t)
{
	for (int n = 0; n < quota_n_nodes(t); n++)
		if (!quota_node_is_cohort(t, n) && cq_reclaims(t, n))
			return true;
	return false;
}

void qc_placed(struct quota_charge *q, uint32_t rec, uint32_t tag,
	       const struct placement_record *r, uint64_t id)
{
	uint32_t b = rix_bucket(tag);
	if (q->rix == NULL || !q->rix_on || b == RIX_NIL)
		return;
	struct rix_key key = rix_key_for(r, id);
	rix_lock(q->rix);
	rix_add(q->rix, rec, b, &key);
	rix_unlock(q->rix);
}

void qc_on_free(void *arg, const struct placement_record *r)
{
	struct quota_charge *q = arg;
	int cq, flavor;
	int64_t charge[QUOTA_MAX_RESOURCES];
	unsigned missing;
	qc_enter(q, q->workers); /* QA4: the hook's gate */
	/* QA4: relaxed; the gate orders it after qc_replace's rewrite. */
	uint32_t tag = __atomic_load_n(&r->quota, __ATOMIC_RELAXED);
	if (q->rix != NULL && q->rix_on) { /* RX1: out before it is freed */
		rix_lock(q->rix);
		rix_remove(q->rix, placements_index_of(q->pl, r));
		rix_unlock(q->rix);
	}
	qc_untag(tag, &cq, &flavor);
	/* A tag 0 (qc_replace: charged to nothing) untags to cq -1. */
	if (tag_valid(q->t, cq, flavor) &&
	    qc_request(q, q->workers, &r->request, charge, &missing) == 0) {
		quota_release(q->t, cq, flavor, charge);
		if (q->afs != NULL && r->group != 0) {
			char why[SHMSCHED_MESSAGE_MAX];
			int lq;
			(void)lookup(q, r->group, &q->hook_scratch, why, sizeof(why), &lq);
			afsl_release(q->afs, lq, charge);
		}
	}
	qc_leave(q, q->workers);
}

void qc_recount(struct quota_charge *q, struct placements *t, uint64_t *charged,
		uint64_t *dropped)
{
	uint32_t end = placements_high_water(t);
	*charged = *dropped = 0;
	for (uint32_t i = 0; i < end; i++) {
		uint64_t id;
		const struct placement_record *r = placements_at(t, i, &id);
		if (r == NULL || r->quota == 0)
			continue;
		int cq, flavor;
		int64_t charge[QUOTA_MAX_RESOURCES];
		unsigned missing;
		qc_untag(r->quota, &cq, &flavor);
		if (tag_valid(q->t, cq, flavor) &&
		    qc_request(q, q->workers, &r->request, charge, &missing) == 0 &&
		    quota_try_charge(q->t, cq, flavor, charge) == 0) {
			(*charged)++;
			if (q->afs != NULL && r->group != 0) {
				char why[SHMSCHED_MESSAGE_MAX];
				int lq;
				(void)lookup(q, r->group, &q->hook_scratch, why,
					     sizeof(why), &lq);
				afsl_live(q->afs, lq, charge);
			}
			continue;
		}
		placements_set_quota(t, i, 0);
		(*dropped)++;
	}
	if (q->rix != NULL && q->pl == t)
		rix_fill(q); /* RX1 */
}

/* Tag `tag` of the old tree `old` as the new tree's (q->t) tag, charging
 * `r`'s requests there: 0 when the queue, the flavor or a resource the
 * record holds is not in the new tree. */
static uint32_t carry(struct quota_charge *q, const struct quota_tree *old,
		      uint32_t tag, const struct placement_record *r)
{
	int cq, flavor;
	int64_t charge[QUOTA_MAX_RESOURCES];
	unsigned missing;
	qc_untag(tag, &cq, &flavor);
	if (!tag_valid(old, cq, flavor))
		return 0;
	int ncq = quota_cluster_queue_find(q->t, quota_node_name(old, cq));
	int nf = quota_flavor_find(q->t, quota_flavor_name(old, flavor));
	if (ncq < 0 || nf < 0 ||
	    qc_request(q, q->workers, &r->request, charge, &missing) < 0 ||
	    quota_force_charge(q->t, ncq, nf, charge) < 0)
		return 0;
	return qc_tag(ncq, nf) | (tag & QC_TAG_BORROWED); /* QA6 */
}

/* QV3: a counted placement's charge, forced, its tag marked by QA6's
 * rule (quota_force_charge_borrowed's verdict, as a worker's from
 * quota_try_charge_borrowed); the caller holds the free hook's gate. */
uint32_t qc_charge_counted(struct quota_charge *q, const char *queue,
			   const char *flavor, const struct res_vec *request)
{
	int cq = quota_cluster_queue_find(q->t, queue);
	int f = flavor[0] != '\0' ? quota_flavor_find(q->t, flavor) : -ENOENT;
	int64_t charge[QUOTA_MAX_RESOURCES];
	unsigned missing;
	bool borrowed = false;
	if (cq < 0 || f < 0 || qc_request(q, q->workers, request, charge, &missing) < 0 ||
	    quota_force_charge_borrowed(q->t, cq, f, charge, &borrowed) < 0)
		return 0;
	return qc_charged_tag(cq, f, borrowed); /* QV3, QA6 */
}

int qc_replace(struct quota_charge *q, struct quota_tree *t, struct placements *pl,
	       struct quota_tree **old, struct qc_carried *out)
{
	static struct quota_pod_names names; /* the writer's */
	int rc = quota_pod_names_intern(&names, t, q->strings);
	if (rc < 0)
		return rc;
	*out = (struct qc_carried){0};
	/* QA4: every worker's gate, then the hook's. */
	for (unsigned i = 0; i <= q->workers; i++)
		pthread_mutex_lock(&q->gate[i].m);
	*old = q->t;
	q->t = t;
	q->serial++;
	if (q->afs != NULL)
		(void)afsl_rebind(q->afs, t); /* -ENOMEM: usage from nothing */
	q->names = names;
	for (unsigned i = 0; i < q->workers; i++) {
		memset(q->w[i].group, 0, sizeof(q->w[i].group));
		q->w[i].map.count = 0;
	}
	uint32_t end = placements_high_water(pl);
	for (uint32_t i = 0; i < end; i++) {
		uint64_t id;
		const struct placement_record *r = placements_at(pl, i, &id);
		if (r == NULL)
			continue;
		/* QA4: relaxed; the gates hold off every other writer. */
		uint32_t tag = __atomic_load_n(&r->quota, __ATOMIC_RELAXED);
		if (tag == 0)
			continue;
		uint32_t now = carry(q, *old, tag, r);
		if (now != tag)
			placements_set_quota(pl, i, now);
		if (now != 0) {
			out->carried++;
		} else {
			out->dropped++;
			int cq, flavor;
			qc_untag(tag, &cq, &flavor);
			if (out->dropped == 1)
				snprintf(out->first_dropped, sizeof(out->first_dropped),
					 "%s", quota_node_name(*old, cq));
		}
	}
	q->rix_on = tree_reclaims(t);
	if (q->rix != NULL && q->pl == pl)
		rix_fill(q); /* RX1: the tags renumbered, under every gate */
	/* QA5: the admitted totals by name; the pending counts stay by
	 * index (their pods give them back there). */
	static uint64_t totals[QC_NODES]; /* the writer's */
	memset(totals, 0, sizeof(totals));
	for (int n = 0; n < quota_n_nodes(t) && n < QC_NODES; n++) {
		int was = quota_node_is_cohort(t, n) ? -1
			: quota_cluster_queue_find(*old, quota_node_name(t, n));
		if (was >= 0 && was < QC_NODES)
			totals[n] = q->admitted[was];
	}
	for (int n = 0; n < QC_NODES; n++)
		__atomic_store_n(&q->admitted[n], totals[n], __ATOMIC_RELAXED);
	for (unsigned i = q->workers + 1; i-- > 0;)
		pthread_mutex_unlock(&q->gate[i].m);
	return 0;
}

void qc_set_reclaim(struct quota_charge *q, struct evictor *ev,
		    struct placements *pl, const struct reclaim_budget *budget)
{
	q->ev = ev;
	q->pl = pl;
	q->budget = *budget;
	/* RX1: no index (ENOMEM) leaves the walk of every record. */
	q->rix = rix_create(placements_capacity(pl), QC_RIX_BUCKETS);
	q->rix_on = tree_reclaims(q->t);
	if (q->rix != NULL)
		rix_fill(q);
	evict_set_reclaim_done(ev, qc_reclaim_done, q); /* QA7 */
}

uint64_t qc_reclaim_asked(const struct quota_charge *q)
{
	/* QA6: relaxed, a tally. */
	return __atomic_load_n(&q->asked, __ATOMIC_RELAXED);
}

/* QA7: claims cq's request in flight, or leaves a want for its holder. */
static bool reclaim_claim(struct quota_charge *q, int cq)
{
	for (;;) {
		/* QA7: seq_cst, partner of qc_reclaim_done's store. */
		if (__atomic_exchange_n(&q->rcl_inflight[cq], 1, __ATOMIC_SEQ_CST) == 0)
			return true;
		/* QA7: seq_cst, partner of qc_reclaim_done's exchange. */
		__atomic_store_n(&q->rcl_wanted[cq], 1, __ATOMIC_SEQ_CST);
		/* QA7: seq_cst: still held, its holder's done sees the want. */
		if (__atomic_load_n(&q->rcl_inflight[cq], __ATOMIC_SEQ_CST) != 0)
			return false;
	}
}

void qc_reclaim_done(void *arg, const struct evict_reclaim *rc, uint32_t evicted)
{
	struct quota_charge *q = arg;
	bool skipped = q->rcl_skipped; /* the evictor's own (QA7) */
	q->rcl_skipped = false;
	if (rc->cq < 0 || rc->cq >= QC_NODES)
		return;
	/* QA7: seq_cst, partner of reclaim_claim's exchange and load. */
	__atomic_store_n(&q->rcl_inflight[rc->cq], 0, __ATOMIC_SEQ_CST);
	/* QA7: seq_cst, partner of reclaim_claim's store. */
	if (!__atomic_exchange_n(&q->rcl_wanted[rc->cq], 0, __ATOMIC_SEQ_CST))
		return;
	if (evicted == 0 && !skipped)
		return; /* the choice's verdict: nothing to evict (no loop) */
	static const int64_t none[QUOTA_MAX_RESOURCES]; /* a release of nothing */
	qc_enter(q, q->workers); /* QA4: the tree and serial stay */
	if (rc->serial != q->serial) {
		for (int n = 0; n < quota_n_nodes(q->t); n++)
			if (!quota_node_is_cohort(q->t, n) && quota_n_flavors(q->t) > 0)
				quota_release(q->t, n, 0, none);
	} else if (quota_n_flavors(q->t) > 0) {
		quota_release(q->t, rc->cq, 0, none);
	}
	qc_leave(q, q->workers);
}

bool qc_reclaim_ask(struct quota_charge *q, unsigned w, const struct pod_spec *spec,
		    int cq, int flavor)
{
	if (q->ev == NULL || cq < 0 || flavor < 0)
		return false;
	if (!cq_reclaims(q->t, cq))
		return false;
	struct evict_reclaim rc = {.cq = cq, .flavor = flavor, .serial = q->serial,
				   .created_ns = now_ns()};
	if (!qc_flavor_spec(q, flavor, spec, &rc.spec) || cq >= QC_NODES)
		return false;
	if (!reclaim_claim(q, cq))
		return false; /* QA7: the queue's request stands for this pod */
	if (!evict_reclaim(q->ev, w, &rc)) {
		/* A full ring (RN1): no request in flight after all. */
		__atomic_store_n(&q->rcl_inflight[cq], 0, __ATOMIC_SEQ_CST);
		return false;
	}
	/* QA6: relaxed, a tally; partner: qc_reclaim_asked's load. */
	__atomic_fetch_add(&q->asked, 1, __ATOMIC_RELAXED);
	return true;
}

static bool cand_grow(struct quota_charge *q, size_t n)
{
	if (n <= q->cand_cap)
		return true;
	size_t cap = q->cand_cap ? q->cand_cap * 2 : 1024;
	while (cap < n)
		cap *= 2;
	struct reclaim_pod *c = realloc(q->cand, cap * sizeof(*c));
	if (c == NULL)
		return false;
	q->cand = c;
	uint64_t *id = realloc(q->cand_id, cap * sizeof(*id));
	if (id == NULL)
		return false;
	q->cand_id = id;
	id = realloc(q->out_id, cap * sizeof(*id));
	if (id == NULL)
		return false;
	q->out_id = id;
	uint32_t *v = realloc(q->victims, cap * sizeof(*v));
	if (v == NULL)
		return false;
	q->victims = v;
	q->cand_cap = cap;
	return true;
}

struct node_ok_call {
	struct quota_charge *q;
	bool (*node_ok)(void *, const uint64_t *, size_t);
	void *node_arg;
};

/* reclaim_choose's node_ok: candidate indices as placement ids. */
static bool node_ok_ids(void *arg, const uint32_t *victims, size_t k)
{
	struct node_ok_call *c = arg;
	for (size_t i = 0; i < k; i++)
		c->q->out_id[i] = c->q->cand_id[victims[i]];
	return c->node_ok(c->node_arg, c->q->out_id, k);
}

/* One reclaim request's look at the records (QA6). */
struct cand_walk {
	struct quota_charge *q;
	const struct evict_reclaim *rc;
	const struct quota_preemption *pol;
	struct quota_pod_map *map;
	const uint8_t *in_tree;
	int n_nodes, n_flavors;
	size_t k; /* candidates kept */
	/* The caller's last test (approving managers: AQ1 in
	 * ingest/producers_approval.c); NULL: none. */
	bool (*victim_ok)(void *node_arg, uint64_t id);
	void *node_arg;
};

/* Record `i` a candidate of the request when it is live, charged in the
 * preemptor's tree and reclaim_choose's first tests keep it. 0, or
 * -ENOMEM. */
static int cand_consider(struct cand_walk *w, uint32_t i)
{
	struct quota_charge *q = w->q;
	uint64_t id;
	const struct placement_record *r = placements_at(q->pl, i, &id);
	/* QA4: relaxed; the producers' lock holds off qc_replace. */
	uint32_t tag = r != NULL ? __atomic_load_n(&r->quota, __ATOMIC_RELAXED) : 0;
	if (tag == 0)
		return 0;
	int cq, flavor;
	qc_untag(tag, &cq, &flavor);
	/* tag_valid, and in the preemptor's tree. */
	if (cq < 0 || cq >= w->n_nodes || cq >= QC_NODES || !w->in_tree[cq] ||
	    flavor >= w->n_flavors)
		return 0;
	/* reclaim_choose's first tests (quota/reclaim.c: the flavor, NCY1,
	 * the policies), made here so that a record they turn away costs no
	 * candidate: another queue's pod only when borrowed, each side only
	 * when its policy is not Never. */
	if (flavor != w->rc->flavor ||
	    (cq == w->rc->cq ? w->pol->within_cluster_queue == QUOTA_PREEMPT_NEVER
			     : (tag & QC_TAG_BORROWED) == 0 ||
				       w->pol->reclaim_within_cohort == QUOTA_PREEMPT_NEVER))
		return 0;
	if (w->victim_ok != NULL && !w->victim_ok(w->node_arg, id))
		return 0; /* a manager bars it now: no candidate */
	if (!cand_grow(q, w->k + 1))
		return -ENOMEM;
	struct reclaim_pod *c = &q->cand[w->k];
	*c = (struct reclaim_pod){.uid = id, .cq = cq, .flavor = flavor,
				  .priority = r->priority,
				  .created_ns = r->placed_ns,
				  .admitted_ns = r->placed_ns,
				  .borrowed = (tag & QC_TAG_BORROWED) != 0};
	unsigned missing;
	if (quota_pod_charge(q->t, q->res, w->map, &r->request, c->request,
			     &missing) < 0)
		return 0;
	q->cand_id[w->k++] = id;
	return 0;
}

/* RO2: the buckets of request `cw` (RX1: the ones cand_consider can keep
 * a record of), into q->ro_bucket: the other queues' of its tree
 * (borrowed) first, q->ro_cross of them, then its own queue's; q->ro_n in
 * all. Returns whether all are in key order (rix_ordered) and hold at
 * most QC_RECLAIM_CANDIDATES records. Holding the index's lock. */
static bool ro_buckets(struct quota_charge *q, const struct cand_walk *cw)
{
	const struct evict_reclaim *rc = cw->rc;
	const struct quota_preemption *pol = cw->pol;
	q->ro_n = q->ro_cross = 0;
	if (rc->flavor < 0 || rc->flavor >= QUOTA_MAX_FLAVORS || rc->cq < 0 ||
	    rc->cq >= QC_NODES)
		return false;
	bool ordered = true;
	uint64_t total = 0;
	for (int pass = 0; pass < 2; pass++) {
		for (int cq = 0; cq < cw->n_nodes && cq < QC_NODES; cq++) {
			if (!cw->in_tree[cq] || (cq == rc->cq) != (pass == 1))
				continue;
			bool own = cq == rc->cq;
			if (own ? pol->within_cluster_queue == QUOTA_PREEMPT_NEVER
				: pol->reclaim_within_cohort == QUOTA_PREEMPT_NEVER)
				continue;
			uint32_t b0 = ((uint32_t)cq * QUOTA_MAX_FLAVORS +
				       (uint32_t)rc->flavor) * 2;
			for (uint32_t b = own ? b0 : b0 + 1; b <= b0 + 1; b++) {
				q->ro_bucket[q->ro_n++] = b;
				ordered = ordered && rix_ordered(q->rix, b);
				total += rix_count(q->rix, b);
			}
		}
		if (pass == 0)
			q->ro_cross = q->ro_n;
	}
	return ordered && total <= QC_RECLAIM_CANDIDATES;
}

/* RO2: the next record of buckets ro_bucket[from .. to) in key order (a
 * merge of their heads, ro_next), or RIX_NIL when all are read. */
static uint32_t ro_pull(struct quota_charge *q, uint32_t from, uint32_t to)
{
	uint32_t best = RIX_NIL, at = 0;
	for (uint32_t k = from; k < to; k++) {
		uint32_t i = q->ro_next[k];
		if (i != RIX_NIL && (best == RIX_NIL ||
				     rix_key_before(rix_key_of(q->rix, i),
						    rix_key_of(q->rix, best)))) {
			best = i;
			at = k;
		}
	}
	if (best != RIX_NIL)
		q->ro_next[at] = rix_next(q->rix, best);
	return best;
}

/* RO2: request `cw`'s choice from its candidates read in RCL2's order
 * (quota/reclaim.c: the other queues' first, each part merged by key
 * from buckets in key order): 1, then twice as many, ..., each time
 * reclaim_choose on all read so far, until it did not run out (RO1) or
 * every record was read: the choice it would make from all of them.
 * Holding the index's lock. Returns reclaim_choose's result (*nv, *why
 * set), or 1 when the buckets are not all in order (or too full): then
 * q->ro_bucket[0 .. ro_n) are the buckets to read as before RO2. */
static int choose_ordered(struct quota_charge *q, struct cand_walk *cw,
			  const struct quota_tree *t, const struct reclaim_pod *pre,
			  const struct reclaim_budget *b, struct node_ok_call *call,
			  size_t *nv, enum reclaim_why *why)
{
	if (q->ro_bucket == NULL) {
		q->ro_bucket = malloc(2 * (QC_NODES + 1) * sizeof(uint32_t));
		if (q->ro_bucket == NULL)
			return -ENOMEM;
		q->ro_next = q->ro_bucket + QC_NODES + 1;
	}
	if (!ro_buckets(q, cw))
		return 1;
	for (uint32_t k = 0; k < q->ro_n; k++)
		q->ro_next[k] = rix_first(q->rix, q->ro_bucket[k]);
	size_t want = 1;
	bool cross = q->ro_cross > 0, more = true;
	for (;;) {
		while (more && cw->k < want) {
			uint32_t i = cross ? ro_pull(q, 0, q->ro_cross)
					   : ro_pull(q, q->ro_cross, q->ro_n);
			if (i == RIX_NIL && cross) {
				cross = false; /* then the preemptor's own queue's */
				continue;
			}
			if (i == RIX_NIL)
				more = false;
			else if (cand_consider(cw, i) < 0)
				return -ENOMEM;
		}
		if (!cand_grow(q, cw->k + 1))
			return -ENOMEM;
		int rc = reclaim_choose(q->rwork, t, pre, q->cand, cw->k, b,
					node_ok_ids, call, q->victims, nv, why);
		if (rc == -ENOMEM || !more || !reclaim_ran_out(q->rwork))
			return rc;
		want = 2 * (cw->k > 0 ? cw->k : 1);
	}
}

int qc_reclaim_choose(void *arg, const struct evict_reclaim *rc,
		      bool (*node_ok)(void *, const uint64_t *, size_t),
		      bool (*victim_ok)(void *, uint64_t),
		      void *node_arg, const uint64_t **ids, uint32_t *n,
		      char *why, size_t why_len)
{
	struct quota_charge *q = arg;
	*n = 0;
	*ids = NULL;
	q->rcl_skipped = true; /* QA7: until the choice runs */
	if (rc->serial != q->serial)
		return 0; /* QA6: asked of an older tree */
	/* QA5's counts (relaxed): no pod of the queue waits any more (the
	 * asker was placed meanwhile): nothing is evicted for nobody. */
	if (rc->cq >= QC_NODES ||
	    __atomic_load_n(&q->pending[QC_PENDING_ACTIVE][rc->cq], __ATOMIC_RELAXED) +
			    __atomic_load_n(&q->pending[QC_PENDING_INADMISSIBLE][rc->cq],
					    __ATOMIC_RELAXED) <= 0)
		return 0;
	q->rcl_skipped = false;
	const struct quota_tree *t = q->t;
	if (q->rwork == NULL || q->rwork_serial != q->serial) {
		reclaim_work_free(q->rwork);
		q->rwork = reclaim_work_new(t);
		q->rwork_serial = q->serial;
		if (q->rwork == NULL)
			return -ENOMEM;
	}
	struct reclaim_pod pre = {.uid = 0, .cq = rc->cq, .flavor = rc->flavor,
				  .priority = rc->spec.priority,
				  .created_ns = rc->created_ns};
	unsigned missing;
	/* One name map for the whole walk (qc_request's uncached path makes
	 * it per call). */
	struct quota_pod_map map = {0};
	if (quota_pod_charge(t, q->res, &map, &rc->spec.request, pre.request,
			     &missing) < 0)
		return 0;
	int root = quota_node_root(t, rc->cq);
	const struct quota_preemption *pol = quota_node_preemption(t, rc->cq);
	/* The ClusterQueues of the preemptor's cohort tree, looked up once
	 * per node here rather than per record in the walk below (tag_valid
	 * and quota_node_root were ~35 of its ~100 instructions a record). */
	int n_nodes = quota_n_nodes(t), n_flavors = quota_n_flavors(t);
	uint8_t in_tree[QC_NODES];
	for (int i = 0; i < n_nodes && i < QC_NODES; i++)
		in_tree[i] = !quota_node_is_cohort(t, i) && quota_node_root(t, i) == root;
	struct cand_walk cw = {.q = q, .rc = rc, .pol = pol, .map = &map,
			       .in_tree = in_tree, .n_nodes = n_nodes,
			       .n_flavors = n_flavors, .victim_ok = victim_ok,
			       .node_arg = node_arg};
	struct reclaim_budget b = q->budget;
	b.now_ns = now_ns();
	struct node_ok_call call = {.q = q, .node_ok = node_ok, .node_arg = node_arg};
	size_t nv = 0;
	enum reclaim_why rwhy = RECLAIM_WHY_NONE;
	int rc2;
	if (q->rix == NULL) {
		uint32_t end = placements_high_water(q->pl);
		for (uint32_t i = 0; i < end && cw.k < QC_RECLAIM_CANDIDATES; i++)
			if (cand_consider(&cw, i) < 0)
				return -ENOMEM;
	} else {
		rix_lock(q->rix);
		rc2 = choose_ordered(q, &cw, t, &pre, &b, &call, &nv, &rwhy);
		if (rc2 != 1) {
			rix_unlock(q->rix);
			goto chosen;
		}
		/* RX1: the buckets cand_consider can keep a record of: the
		 * preemptor's own queue's (borrowed or not) when its
		 * withinClusterQueue is not Never, each other queue's of its
		 * tree borrowed when reclaimWithinCohort is not Never; the
		 * preemptor's flavor only. cand_consider's tests stay, so the
		 * candidates are the walk's (in another order: reclaim_choose
		 * orders them itself, ties by uid); they differ only past
		 * QC_RECLAIM_CANDIDATES. */
		int rc3 = 0;
		for (uint32_t k = 0; rc3 == 0 && k < q->ro_n; k++)
			for (uint32_t i = rix_first(q->rix, q->ro_bucket[k]);
			     i != RIX_NIL && cw.k < QC_RECLAIM_CANDIDATES;
			     i = rix_next(q->rix, i))
				if (cand_consider(&cw, i) < 0) {
					rc3 = -ENOMEM;
					break;
				}
		rix_unlock(q->rix);
		if (rc3 < 0)
			return rc3;
	}
	if (!cand_grow(q, cw.k + 1))
		return -ENOMEM;
	rc2 = reclaim_choose(q->rwork, t, &pre, q->cand, cw.k, &b, node_ok_ids, &call,
			     q->victims, &nv, &rwhy);
chosen:
	if (rc2 == -ENOMEM)
		return rc2;
	/* QA7: it fits now: quota given back and not yet taken, which a pod
	 * refused since (parked after that give-back) waits for in vain. */
	if (rc2 < 0 && rwhy == RECLAIM_WHY_FITS)
		q->rcl_skipped = true;
	if (rc2 < 0)
		return 0;
	for (size_t i = 0; i < nv; i++)
		q->out_id[i] = q->cand_id[q->victims[i]];
	*ids = q->out_id;
	*n = (uint32_t)nv;
	snprintf(why, why_len, "preempted to reclaim quota for a pod of "
		 "ClusterQueue \"%s\" (its .spec.preemption): what it held is "
		 "given back", quota_node_name(t, rc->cq));
	return 0;
}

void qc_reclaim_nudge(void *arg)
{
	struct quota_charge *q = arg;
	static const int64_t none[QUOTA_MAX_RESOURCES]; /* a release of nothing */
	qc_enter(q, q->workers); /* QA4: the tree stays */
	for (int n = 0; n < quota_n_nodes(q->t); n++)
		if (!quota_node_is_cohort(q->t, n) && quota_n_flavors(q->t) > 0)
			quota_release(q->t, n, 0, none);
	qc_leave(q, q->workers);
}
