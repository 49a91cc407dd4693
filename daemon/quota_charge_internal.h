/* Kueue's quota in the daemon's placements: which pods are under quota,
 * what each charges, and the one hook that gives a charge back.
 *
 * A pod is under quota iff its metadata.labels has
 * kueue.x-k8s.io/queue-name (Kueue's constants.QueueLabel); its LocalQueue
 * is (the pod's namespace, that value), which names a ClusterQueue of the
 * sealed tree (quota/quota.h). Without the label a pod is not under quota
 * (Kueue's default, manageJobsWithoutQueueName false). daemon/attempt.c
 * charges a placement's requests to one of its ClusterQueue's flavors
 * before the node's commit, in the flavors' order, and records (queue,
 * flavor) in the placement record (shm/placements.h, `quota`); every way a
 * placement ends frees its record once, and placements_free() hands
 * it to qc_on_free(), which gives the charge back.
 *
 * A charge: the pod's requests for each resource the tree names (cpu in
 * millicores, memory in bytes, as the ledger counts them), and 1 for
 * "pods" when the tree names it (Kueue counts a pod as 1 "pods" where a
 * queue covers it). The same function computes it from the pod's spec at
 * the charge and from its placement record at the release, so the two
 * are equal.
 *
 * Threads: qc_create and qc_recount on the starting thread, before the
 * workers run (they add strings to the intern table, the writer's); the
 * qc_worker_* calls on worker w's thread only (each worker has its own
 * cache), between qc_enter(w) and qc_leave(w), as everything a worker does
 * with the tree (qc_tree, qc_request, the charge, the record's `quota`);
 * qc_on_free on whichever thread frees a placement; qc_replace on the
 * intern table's writer (the producers' lock), which may change the tree
 * at any time between two gates (QA4 in daemon/quota_charge.c); the rest
 * from any thread.
 */
#ifndef SHMSCHED_DAEMON_QUOTA_CHARGE_INTERNAL_H
#define SHMSCHED_DAEMON_QUOTA_CHARGE_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "quota/quota.h"
#include "shm/shm.h"

/* qc_worker_queue's answers besides a ClusterQueue node (>= 0):
 * quota_pod_queue's (quota/quota.h). */
#define QC_NONE QUOTA_POD_NONE       /* no queue label: not under quota */
#define QC_REFUSED QUOTA_POD_REFUSED /* a label naming no LocalQueue: `why` says so */

struct quota_charge;

/* For the sealed tree `t` (not owned), the daemon's `strings` (flavor
 * labels and the queue label's key are added to it) and `res`, with
 * `workers` workers. NULL with errno (ENOMEM, or ENOSPC: the intern table
 * is full). */
struct quota_charge *qc_create(struct quota_tree *t, struct intern *strings,
			       const struct res_names *res, unsigned workers);
void qc_destroy(struct quota_charge *q);
struct quota_tree *qc_tree(const struct quota_charge *q);

/* How many trees qc_replace has swapped in: a worker reads it inside its
 * gate, and a change since its last read means every tree root and
 * generation it kept is of an older tree (daemon/wait.c, QW5). */
uint64_t qc_serial(const struct quota_charge *q);

/* Worker w's gate (QA4): held around all worker w does with the tree for
 * one pod; qc_tree() stays the same until qc_leave(). w >= the `workers`
 * given: the gate of every other thread (qc_on_free's), which a worker
 * may take inside its own but never the other way round. */
void qc_enter(struct quota_charge *q, unsigned w);
void qc_leave(struct quota_charge *q, unsigned w);

/* What qc_replace carried: live placements charged again in the new tree
 * (by their ClusterQueue's and flavor's names), and those left charged to
 * nothing (their queue or flavor is gone, or covers no longer a resource
 * they hold: they stay placed), the first of them by queue name. */
struct qc_carried {
	uint64_t carried;
	uint64_t dropped;
	char first_dropped[QUOTA_NAME_MAX + 1];
};

/* Puts the sealed tree `t` (not owned; it must outlive its use, as the
 * first) in force in place of the current one, given back in *old (no
 * thread reaches it any more on return: the caller may free it): every
 * live placement's charge carried over (QA4), usage over a cut quota
 * kept. The intern table's writer only. 0, or -ENOMEM/-ENOSPC (the
 * flavors' labels could not be interned; nothing changed). */
int qc_replace(struct quota_charge *q, struct quota_tree *t, struct placements *pl,
	       struct quota_tree **old, struct qc_carried *out);

/* Kueue's workload counts per ClusterQueue (QA5 in daemon/quota_charge.c):
 * kueue_admitted_workloads_total and kueue_pending_workloads{status}.
 * `cq` is a node of the tree in force when the count was taken; anything
 * out of range is not counted. qc_count_admitted: inside worker w's gate,
 * once a pod is placed under quota. qc_pending_add: by daemon/wait.c as a
 * pod parks for quota (inadmissible), is woken (active) and leaves. */
enum qc_pending { QC_PENDING_ACTIVE, QC_PENDING_INADMISSIBLE, QC_PENDING_KINDS };
void qc_count_admitted(struct quota_charge *q, int cq);
void qc_pending_add(struct quota_charge *q, int cq, enum qc_pending kind,
		    int64_t delta);

/* Quota by escrow's ask (QE8 in daemon/quota_charge.c;
 * daemon/quota_escrow_host.c): qc_note_parked, by daemon/wait.c as a pod
 * parks for quota by ClusterQueue cq with its charge[0..nr), keeps that
 * charge as cq's latest; qc_waiting is how many of cq's pods wait (QA5's
 * counts, parked and awake) and qc_parked_ask the latest charge noted in
 * `resource`: their product stands for what cq's waiting pods ask
 * (exact when they ask alike). Figures of the moment; any thread. */
void qc_note_parked(struct quota_charge *q, int cq, const int64_t *charge, int nr);
int64_t qc_waiting(const struct quota_charge *q, int cq);
int64_t qc_parked_ask(const struct quota_charge *q, int cq, int resource);

/* The Prometheus text (version 0.0.4) of the counts above, then the
 * tree in force's gauges (quota_metrics_text), at most `max_queues` ClusterQueues a family (quota_metrics_text),
 * into buf[0..len); returns the bytes the whole text needs (as snprintf).
 * On the intern table's writer (the producers' lock), so that qc_replace
 * cannot swap the tree meanwhile. */
size_t qc_metrics_text(const struct quota_charge *q, unsigned max_queues,
		       char *buf, size_t len);

/* The record's `quota` for (cq, flavor), and back. Bit 31,
 * QC_TAG_BORROWED: the admission took its ClusterQueue past its nominal
 * quota in a resource it asks (quota_try_charge_borrowed, judged at the
 * charge; another host's placement counted on a shard's take alike:
 * qc_charge_counted): reclaim's NCY1 (quota/reclaim.c) evicts a pod of
 * another queue only then. cq + 1 < 2^13 (QUOTA_MAX_CLUSTER_QUEUES +
 * QUOTA_MAX_COHORTS) never reaches it. */
#define QC_TAG_BORROWED (1u << 31)
static inline uint32_t qc_tag(int cq, int flavor)
{
	return ((uint32_t)(cq + 1) << 8) | (uint32_t)flavor;
}
static inline void qc_untag(uint32_t tag, int *cq, int *flavor)
{
	tag &= ~QC_TAG_BORROWED;
	*cq = (int)(tag >> 8) - 1;
	*flavor = (int)(tag & 0xffu);
}
/* qc_tag for a charge to (cq, flavor) just made, with QC_TAG_BORROWED
 * when it took the queue past nominal quota (`borrowed`, from
 * quota_try_charge_borrowed). Inside the worker's gate, between the
 * charge and the record's publish (QA2). */
static inline uint32_t qc_charged_tag(int cq, int flavor, bool borrowed)
{
	return qc_tag(cq, flavor) | (borrowed ? QC_TAG_BORROWED : 0);
}

/* A placement admitted by another host, read from etcd on a shard's take
 * (QV1, QV3 in daemon/etcd_sync.c), charged with `request` to the
 * ClusterQueue and flavor of the tree in force named `queue` and
 * `flavor`, past any quota (quota_force_charge_borrowed: it was admitted
 * already). Its tag, with QC_TAG_BORROWED when the charge left the queue
 * past its nominal quota in a resource it asks (QA6's rule for a local
 * admission, judged by the counter the charge left); 0, nothing charged,
 * when the tree lacks the queue or the flavor (`flavor` "" names none)
 * or the queue does not cover a resource the placement holds. Inside the
 * free hook's gate (qc_enter(q, w) with w >= workers), before the
 * record's publish or as qc_replace rewrites a published record's tag;
 * then placements_set_quota and qc_placed, as a worker does (RX1). */
uint32_t qc_charge_counted(struct quota_charge *q, const char *queue,
			   const char *flavor, const struct res_vec *request);

/* Worker w, inside its gate, right after placements_set_quota(rec, tag)
 * and before the record's publish: the record joins the reclaim index
 * (RX1 in daemon/quota_charge.c) when reclaim is set and tag is not 0,
 * with its key for the choice's order (RO2): `r` is the record prepared
 * (its priority and placed_ns), `id` its placement id. */
void qc_placed(struct quota_charge *q, uint32_t rec, uint32_t tag,
	       const struct placement_record *r, uint64_t id);

/* Reclaim by quota (issue 37 item 4; daemon/evict.c carries the
 * request, ingest/producers_reclaim.c evicts): the budgets, and whether
 * reclaim runs at all (a daemon with an evictor). Before the workers run. */
struct evictor;
struct evict_reclaim;
void qc_set_reclaim(struct quota_charge *q, struct evictor *ev,
		    struct placements *pl, const struct reclaim_budget *budget);
/* Worker w, inside its gate: pod `spec` was refused by ClusterQueue cq's
 * quota in every flavor, first -ENOSPC in `flavor`, and parks for quota:
 * when reclaim is set and cq's .spec.preemption allows any preemption,
 * the evictor is asked to reclaim for it, unless a request of cq is in
 * flight (QA7: that one stands for it). Returns whether it was asked. */
bool qc_reclaim_ask(struct quota_charge *q, unsigned w, const struct pod_spec *spec,
		    int cq, int flavor);
/* evict_set_reclaim_done's hook (qc_set_reclaim sets it), on the evictor
 * thread outside the producers' lock: request `rc` was served, `evicted`
 * pods evicted; cq's next refused pod may ask again (QA7). */
void qc_reclaim_done(void *arg, const struct evict_reclaim *rc, uint32_t evicted);
/* The pods the reclaim requests asked for, and evicted (per worker
 * tallies summed; the evictor's counts are in evict_reclaim_counts). */
uint64_t qc_reclaim_asked(const struct quota_charge *q);
/* evict_set_reclaim's function (arg: the quota_charge), on the evictor
 * thread under the producers' lock (QA6): the victims reclaim_choose
 * names for request `rc` among the live placements charged in its
 * cohort tree, with the budgets of qc_set_reclaim. 0 (*n 0: none), or
 * -ENOMEM. */
/* evict_set_reclaim's nudge: every ClusterQueue's tree generation moved
 * (a release of nothing), under the free hook's gate (QA4), so that pods
 * waiting for quota try again and ask again. */
void qc_reclaim_nudge(void *arg);
struct evict_reclaim;
int qc_reclaim_choose(void *arg, const struct evict_reclaim *rc,
		      bool (*node_ok)(void *, const uint64_t *, size_t),
		      bool (*victim_ok)(void *, uint64_t),
		      void *node_arg, const uint64_t **ids, uint32_t *n,
		      char *why, size_t why_len);

/* Worker w: the ClusterQueue of `pod` (>= 0), QC_NONE, or QC_REFUSED with
 * a message for a person in why. Cached per pod group (a group id names
 * the same namespace and labels while the daemon runs). */
int qc_worker_queue(struct quota_charge *q, unsigned w,
		    const struct pod_spec *pod, char *why, size_t why_len);

/* Admission fair sharing (daemon/admission_fair_internal.h): the ledger
 * the charges and releases feed (NULL: off; set before the workers run
 * and before qc_recount, not owned), and the ledger. qc_admitted: worker
 * w, inside its gate, once `pod` is placed under quota with `charge`.
 * qc_worker_local_queue: worker w, inside its gate: the index of `pod`'s
 * LocalQueue in the tree in force, -1 for none. */
struct afs_ledger;
void qc_set_admission_fair(struct quota_charge *q, struct afs_ledger *l);
struct afs_ledger *qc_admission_fair(const struct quota_charge *q);
void qc_admitted(struct quota_charge *q, unsigned w, const struct pod_spec *pod,
		 const int64_t *charge);
int qc_worker_local_queue(struct quota_charge *q, unsigned w,
			  const struct pod_spec *pod);

/* The charge of a pod requesting `request` (v[RES_PODS] ignored) into
 * out[0 .. quota_n_resources()). Returns 0, or -ENOENT with *missing the
 * index (in `res`) of a requested resource the tree names nowhere.
 * Worker w's (its cached name map); w == the `workers` given: anyone's,
 * uncached. */
int qc_request(struct quota_charge *q, unsigned w, const struct res_vec *request,
	       int64_t *out, unsigned *missing);

/* Flavor f's nodeLabels: how many, and whether node labels `labels[0..n)`
 * (sorted by key) carry all of them. */
unsigned qc_flavor_n_labels(const struct quota_charge *q, int flavor);
bool qc_node_has_flavor(const struct quota_charge *q, int flavor,
			const struct label *labels, unsigned n);

/* `pod` with flavor f's nodeLabels added to its nodeSelector, into *out:
 * false when the pod's own nodeSelector asks another value for one of
 * the keys, or the selector would pass POD_MAX_SELECTOR (no node can
 * take the pod in that flavor then). */
bool qc_flavor_spec(const struct quota_charge *q, int flavor,
		    const struct pod_spec *pod, struct pod_spec *out);

/* quota_refusal_message (quota/quota.h) of the tree in force. */
void qc_full_message(const struct quota_charge *q, int cq, const int *flavors,
		     const int *rcs, int n, const int64_t *charge, char *buf,
		     size_t len);

/* producers_set_quota_explainer()'s function (arg: the quota_charge),
 * on the control thread: for a pod under quota, its ClusterQueue and,
 * for each of its flavors, what it has used of its nominal quota and
 * what its cohort has left (qc_full_message's words), or why it is under
 * none that exists; false when it is under no quota. */
bool qc_explain(void *arg, const struct pod_spec *spec, char *buf, size_t len);

/* placements_free()'s hook (shm/placements.h): gives back the charge of
 * record `r` (its `quota` non-zero). */
void qc_on_free(void *arg, const struct placement_record *r);

/* A resumed table: charges every live record's `quota` again, as the
 * ledger recounts nodes from them (shm/recount.h). A record whose charge
 * no longer fits, or names a queue or flavor the tree has not, has its
 * `quota` cleared and is counted in *dropped. Before the workers run. */
void qc_recount(struct quota_charge *q, struct placements *t, uint64_t *charged,
		uint64_t *dropped);

#endif
