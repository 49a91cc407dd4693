/* Waiting pods in the daemon: see wait_internal.h.
 *
 * Who may touch a parked pod's slot: only its worker, and only while the
 * producer that submitted it is still the one at its table index. A
 * producer leaves the table (NULL), then its region is unmapped after a
 * grace period (ingest/producers.c); the worker keeps, per owner, the key
 * of the producer whose pods it parked, and checks it at the start of each
 * poll, inside the poll's read-side section: a different key (or none)
 * means the producer went away, and its pods are forgotten without a look
 * at their slots. Every later use in that poll (a retry, a cancel, an
 * answer) is of a producer checked in the same section, whose region the
 * grace period keeps mapped.
 *
 * Cost per poll: with no pod waiting, one load of the events head and a
 * few compares. Otherwise the producers with waiting pods checked, the
 * events since the last poll (queue_absorb), one generation load per
 * cohort tree that pods wait on for quota (and when one moved, a
 * read-only quota check per ClusterQueue of it with parked pods, PW2),
 * and at most WAIT_BURST
 * attempts; before each attempt of a pod woken for quota, one
 * fair-sharing key per ClusterQueue of its tree with awake pods (QW6),
 * and one read-only quota check (QW9): a woken pod that quota would
 * refuse costs that, not an attempt.
 *
 * Waiting for quota (issue 37; Kueue's BestEffortFIFO: a workload its
 * ClusterQueue cannot admit stays pending, and is tried again when quota
 * under its cohort frees, without blocking the workloads behind it):
 *   QW1 A pod that asked to wait and that quota refused
 *       (ATTEMPT_QUOTA: no flavor of its ClusterQueue had room) is parked
 *       unschedulable with no reason a cluster event can resolve
 *       (events_from past every event): a node's change or a release of
 *       room cannot help it. It joins its worker's parked list for its
 *       ClusterQueue (PW1), in parking order, with the generation of its
 *       cohort tree read before its attempt's first charge
 *       (attempt_quota_refused; quota_generation in quota/quota.h).
 *   QW2 Each poll loads the generation of each tree with parked pods:
 *       one that moved (a quota_release into any ClusterQueue of the
 *       tree: a placement released, evicted or preempted, a charge given
 *       back) wakes the parked pods of that tree that quota might now
 *       take (PW2): each goes, in the order they parked, to its
 *       ClusterQueue's awake list (QW6). A tree and each ClusterQueue
 *       keep the oldest generation of their parked pods, so a release
 *       during any one's attempt wakes it at once.
 *       Nothing else wakes them but the queue's own flush
 *       (podMaxInUnschedulablePodsDuration) and a lost-events wake-up.
 *   QW3 A woken pod is attempted in fair-sharing order (QW6), within
 *       half the poll's WAIT_BURST at most; refused again, it parks in the
 *       tree's list again. A pod that does not fit does not hold back the
 *       others (BestEffortFIFO; StrictFIFO is refused when the
 *       ClusterQueue is read).
 *   QW4 A pod leaves its list (parked or awake) when it is answered,
 *       forgotten or attempted (done(), retry()); the lists are the
 *       worker's own.
 *   QW5 `shmsched queue apply` swaps the tree (qc_replace, QA4 in
 *       daemon/quota_charge.c): roots, ClusterQueues and generations are
 *       read only inside the worker's gate, and a swap since the worker's
 *       last look (qc_serial) wakes every pod of its lists, parked or
 *       awake, into activeQ (priority, then the time it parked), since
 *       what they kept is of the old tree.
 *   QW6 Fair sharing (Kueue's scheduling cycle with its fair-sharing
 *       iterator, pkg/scheduler/fair_sharing_iterator.go): the awake pods
 *       of a tree are in per-ClusterQueue lists in parking order, whose
 *       first is the queue's head. In a cycle each ClusterQueue with
 *       awake pods nominates its head once; the next attempted is the
 *       head whose ClusterQueue would have the lowest dominant resource
 *       share after admitting it (quota/fair_share.h: the share, weights
 *       dividing, then priority, then arrival, then the name), computed
 *       again before each attempt from the live usage, so an admission
 *       counts for the next. When every ClusterQueue nominated, the next
 *       cycle begins. A pick costs one key per ClusterQueue with awake
 *       pods and no memory.
 *   QW7 Kueue's kueue_pending_workloads (QA5 in daemon/quota_charge.c):
 *       a pod counts "inadmissible" under its ClusterQueue from
 *       quota_join, "active" from quota_awaken, and nothing once it leaves
 *       its list (quota_leave, which every way out of the queue passes);
 *       quota_cq keeps, per pod, the ClusterQueue and whether it is awake,
 *       so each count is given back as it was taken. A pod that a tree's
 *       swap wakes into activeQ (QW5) counts nothing until it parks again.
 *   QW8 Admission fair sharing (Kueue's KEP-4136;
 *       daemon/admission_fair_internal.h): in a ClusterQueue whose
 *       admissionScope is UsageBasedAdmissionFairSharing, the pod it
 *       nominates (QW6) is not its head but its awake pod whose
 *       LocalQueue has the lowest decayed usage / weight, the earliest
 *       parked of equals (kueue pkg/cache/queue/cluster_queue.go: the
 *       LocalQueues' usage compared first, then the base order). Each
 *       poll first samples the usage when the sampling interval passed.
 *       A nomination costs a walk of that ClusterQueue's awake pods.
 *   QW9 A give-back woke every parked pod of its tree (QW2 before PW2),
 *       though it may free room for one: under reclaim each eviction of a 1-cpu
 *       borrower woke all the cohort's waiting pods, and all but one were
 *       attempted and refused again (~71 refused attempts per pod placed,
 *       shmsched-pending-bench --kind quota --reclaim). So the pod QW6
 *       nominates is first checked against its ClusterQueue's quota as it
 *       is now (quota_would_charge in every flavor, read after its tree's
 *       generation, as an attempt reads them): when every flavor would
 *       refuse it, it parks again at once, unattempted, its reclaim asked
 *       as park() asks it (QA6, QA7), and the next nomination follows; it
 *       counts no attempt and uses none of the burst (each such pod
 *       leaves the awake lists, so a poll ends). With it go the awake
 *       pods of its ClusterQueue whose charge is at least its own in
 *       every resource (refused at the same reading; its ask stands
 *       for them, QA7): a give-back costs a list move per pod woken,
 *       not a nomination each. Only a sure refusal is
 *       skipped: a flavor with nodeLabels, a resource the queue does not
 *       cover, a request that does not convert go to the attempt. No
 *       wake-up is lost: a release after the generation read moves it,
 *       and the pod is woken again (QW2). Fair sharing's order is kept:
 *       the skipped pod is the one QW6 would have attempted, and the
 *       attempt would have refused it the same way (a moment's view,
 *       as the attempt's own).
 *   PW1 Parked per ClusterQueue (issue 37: a give-back woke every parked
 *       pod of its tree, and QW9 parked all but one again: a list move
 *       each, quadratic over a reclaim run): each ClusterQueue's parked
 *       pods are in its own list with the oldest generation they read and
 *       a lower bound of their charges (the least per resource since the
 *       list was last empty: a pod leaving does not raise it), which is
 *       each one's charge while every pod that joined since had the same
 *       (uniform); its tree lists its ClusterQueues with parked pods. A
 *       swap of the tree (QW5) not yet looked at is looked at before a
 *       pod joins (park), since the new tree may number the queues
 *       otherwise; a pod refused by the old tree is woken.
 *   PW2 When a tree's generation moved (read before any usage, as an
 *       attempt reads it), each of its ClusterQueues whose parked pods
 *       read an older one is checked against quota as it is now
 *       (quota_would_charge of the bound in each of its flavors: charges
 *       only add up, so a bound refused in every flavor is each pod
 *       refused; a flavor's nodeLabels do not matter: a pod no flavor
 *       can charge parks again whatever its labels), and keeps the
 *       generation read: a release after that read moves it again, so no
 *       wake is lost. Refused: its pods stay parked. Otherwise, when its
 *       pods are uniform and it has no admission fair sharing (QW8
 *       nominates among all its awake pods), they are woken in parking
 *       order while one more charge per awake pod of the queue might fit
 *       (at most WAIT_BURST), and when some are left the queue is checked
 *       again next poll (recheck), after the woken ones were attempted
 *       (their room taken, or not); else all are woken, as before PW2.
 *       A pod that could now fit is woken, maybe a poll after the woken
 *       ones ahead of it in its queue; fair sharing (QW6) orders the
 *       woken ones as before. So a give-back in cohort A of a tree does
 *       not wake the pods of a ClusterQueue under cohort B that cannot
 *       use it (a borrowingLimit or lendingLimit on the way, requests
 *       larger than it), and under reclaim an eviction that frees 1 cpu
 *       wakes one 1-cpu pod, not the queue: a give-back costs a check
 *       per ClusterQueue with parked pods in the tree, and a list move
 *       per pod woken.
 *   PW3 A ClusterQueue found refused by PW2 asks its reclaim (QA6, QA7)
 *       through its first parked pod, as QW9's re-parked pod asks it
 *       (quota_repark_ask, after the gate): the ask QW2's woken pods made
 *       when QW9 refused them again, which reclaim's chain of requests
 *       needs (QA7's want and nudge wake a tree for one ask). At most
 *       WAIT_WAKE_ASKS a poll: a queue past them is checked again next
 *       poll (recheck).
 *   QG1 Gangs under quota (Kueue admits a pod group as one workload: the
 *       sum of its pods' requests, all or nothing; daemon/attempt.c
 *       attempt_gang). A gang that quota refused (ATTEMPT_GANG_QUOTA:
 *       nothing charged) waits as one, its pods parked with no reason a
 *       cluster event resolves, keeping the refusal for its deadline's
 *       answer, as GF1-GF3 say.
 *   GF1 A gang waiting for quota is one workload of its ClusterQueue
 *       (Kueue: a pod group is one Workload, a head of its ClusterQueue
 *       like any other). Its first pod stands for it in the lists of
 *       QW1-PW3: it joins its ClusterQueue's parked list charged the
 *       gang's sum (the refusal's, attempt_gang's total), with the
 *       generation read before the charge (gang_quota_park, which looks
 *       at a swap first as park() does). So a give-back wakes it by PW2's
 *       check of that sum; QW6 nominates it with the share after
 *       admitting the whole gang (member_charge: the sum of its pods'
 *       requests, computed again at each nomination); QW9 parks it again
 *       unattempted while the sum fits no flavor, and QW9's like pods
 *       compare with the sum; QW7 counts it once in
 *       kueue_pending_workloads (Kueue pkg/metrics/metrics.go
 *       PendingWorkloads counts Workloads). Woken and nominated, its
 *       attempt is the gang's (retry, gang_try), which takes every pod of
 *       it out of the lists first (QW4); refused again, it joins again.
 *       A swap (QW5) wakes it into activeQ like a pod, and its pop tries
 *       the gang. The gang keeps its arrival (fair sharing's tie) across
 *       its joins.
 *   GF2 When the pod that stands for it leaves (answered, cancelled,
 *       forgotten: gang_leave) and the gang keeps minMember pods, another
 *       of them takes its place with the gang's arrival, a charge of 0 (a
 *       lower bound of any charge, so PW1's bound stays a bound; the
 *       queue is then not uniform) and generation 0, older than any: the
 *       next poll looks at its ClusterQueue (PW2) and QW9 or the attempt
 *       judge the smaller gang. Below minMember it leaves the lists (no
 *       attempt can take it) until a pod comes (wait_gang); when another
 *       of its pods left, at its next wake (retry parks it unlisted). Its
 *       place in its ClusterQueue's parking order is then the last.
 *   GF3 A gang asks no reclaim: the evictor's request carries one pod's
 *       charge (evict_reclaim), and freeing room on nodes for several
 *       members is not checked. quota_repark_ask skips it, and PW3 asks
 *       through the first parked pod of the queue that is not a gang's.
 *       A gang waits for give-backs (releases, and reclaim asked by the
 *       single pods of its tree).
 *       Cost: nothing per poll beyond QW1-PW3's; a nomination or a QW9
 *       check of a gang costs a charge conversion per pod of it.
 */
#include "daemon/wait_internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "base/base.h"
#include "bind/bind.h"
#include "daemon/admission_fair_internal.h"
#include "daemon/attempt_internal.h"
#include "daemon/quota_charge_internal.h"

/* Attempts from the queue per poll: as many as a burst of new pods, so
 * neither starves the other. */
#define WAIT_BURST 32u
/* Preemption requests a worker keeps with the evictor: while the evictor
 * works one out, the worker's next preemptors ask, so the evictor goes on
 * to the next without waiting for a round trip through both threads'
 * wake-ups. The evictor serves them in order, each under the producers'
 * lock, so each sees the ones before it done (their victims gone, their
 * room held), as kube-scheduler's next cycle sees the last one's
 * nomination. At most its mailbox's ring. */
#define WAIT_PREEMPTS EVICT_REQUESTS
/* podMaxInUnschedulablePodsDuration. */
#define WAIT_MAX_UNSCHEDULABLE_NS (UINT64_C(300) * 1000000000u)

/* A gang being gathered or waiting as one (GANGS_PER_WORKER per worker,
 * a linear table: gangs are few and lookups come per gang pod). */
#define GANGS_PER_WORKER 1024u

struct wgang {
	uint32_t gang;      /* its PodGroup's interned name; 0: a free entry */
	uint32_t min;       /* minMember */
	uint32_t timeout_s; /* for gathering minMember pods */
	bool gathered;      /* had minMember pods once: waits as one now */
	uint64_t first_ns;  /* when its first pod came */
	uint32_t n;
	uint32_t ids[GANG_MIN_MAX]; /* its pods in the queue */
	/* QG1: refused by quota at its last attempt, and the refusal
	 * (malloc'd, kept for its deadline's answer). While it waits, one
	 * of its pods stands for it in the quota lists (GF1). */
	bool quota_wait;
	uint32_t arrival; /* its arrival for fair sharing's tie (QW6); 0: none */
	char *quota_why;
};

/* Cohort trees by their root's node id: at most every node of a tree. */
#define WAIT_QUOTA_TREES (QUOTA_MAX_CLUSTER_QUEUES + QUOTA_MAX_COHORTS)

/* One cohort tree's pods waiting for quota on one worker (QW1). */
struct qtree {
	uint32_t parked_cqs; /* ClusterQueues with parked pods (PW1), a list
			      * by qcq.pnext; QUEUE_NONE when none */
	uint32_t n;          /* parked */
	uint32_t at;         /* its place in tree_list while n + n_awake > 0 */
	uint64_t gen;        /* the oldest generation its parked pods read */
	bool recheck;        /* some ClusterQueue of it has recheck (PW2) */
	uint32_t awake_cqs;  /* ClusterQueues with awake pods (QW6), a list
			      * by qcq.next; QUEUE_NONE when none */
	uint32_t n_awake;    /* awake pods */
	uint32_t cycle;      /* the fair-sharing cycle (QW6) */
};

/* One ClusterQueue's pods waiting for quota on one worker, by its node
 * id: awake (QW6) and parked (PW1). */
struct qcq {
	uint32_t head, tail; /* awake, in parking order */
	uint32_t n;          /* awake */
	uint32_t next, prev; /* in its tree's awake_cqs */
	uint32_t cycle;      /* the tree's cycle in which it last nominated */
	uint32_t phead, ptail; /* parked, in parking order (PW1) */
	uint32_t pn;           /* parked */
	uint32_t pnext, pprev; /* in its tree's parked_cqs while pn > 0 */
	uint64_t pgen;         /* the oldest generation its parked pods read */
	/* A lower bound of its parked pods' charges, per resource (PW1):
	 * the least since pn was last 0; uniform: every pod that joined
	 * since had that charge (then it is each one's). */
	int64_t pmin[QUOTA_MAX_RESOURCES];
	bool uniform;
	bool recheck; /* PW2: parked pods left that may fit: look again */
};

/* quota_cq[id]: the pod is in its ClusterQueue's awake list (QW6). */
#define QCQ_AWAKE UINT32_C(0x80000000)

struct wait_worker {
	struct sched_queue *q;
	uint64_t *key; /* [owners]: whose pods owner k's are; 0: none parked */
	struct wgang *gangs;    /* [GANGS_PER_WORKER] */
	uint32_t gangs_used;    /* entries below this may be taken */
	uint32_t *gang_of;      /* [queue capacity]: its gang's entry + 1, 0 none
				 * (mapped lazily: rarely touched) */
	size_t gang_of_bytes;
	/* Pods that would have preempted while WAIT_PREEMPTS requests (or
	 * their own) were in flight, in the order they failed: attempted
	 * again, one by one, as replies come (a preemption's own release
	 * leaves no room to wake them). */
	uint32_t *pre_fifo;     /* [queue capacity], a ring */
	uint8_t *pre_marked;    /* [queue capacity]: 1 while in pre_fifo */
	uint32_t pre_head, pre_tail;
	/* Pods waiting for quota (QW1-QW6): per pod its tree's root + 1 (0:
	 * none), its ClusterQueue + 1 (with QCQ_AWAKE), its arrival (0: not
	 * yet) and its links in its tree's parked list or its ClusterQueue's
	 * awake list; per root the parked list; per ClusterQueue the awake
	 * list; the roots with pods. In the lazy mapping with gang_of. */
	uint32_t *quota_root, *quota_next, *quota_prev; /* [queue capacity] */
	uint32_t *quota_cq, *quota_arrival;             /* [queue capacity] */
	uint32_t arrivals;      /* the last arrival given */
	struct quota_charge *qc; /* QW7's counts; NULL: no quota */
	struct qtree *trees;    /* [WAIT_QUOTA_TREES], mapped lazily */
	struct qcq *cqs;        /* [WAIT_QUOTA_TREES] */
	uint32_t *tree_list;    /* [WAIT_QUOTA_TREES] */
	uint32_t n_trees;
	uint64_t quota_serial;  /* qc_serial at its last quota_wake (QW5) */
	struct record_pod *gang_pods;     /* [GANG_MIN_MAX] scratch */
	struct resolve_result *gang_res;  /* [GANG_MIN_MAX] scratch */
	/* Requests with the evictor (at most WAIT_PREEMPTS, one per pod),
	 * pre_n of them: for pod pre_id[k], which has not been answered
	 * since while pre_live[k]. */
	uint32_t pre_n;
	uint32_t pre_id[WAIT_PREEMPTS];
	bool pre_live[WAIT_PREEMPTS];
	struct evict_reply reply;    /* scratch: too big for the stack */
	struct preempt_request request;
	/* A pod parked by the burst in hand (wait_park, wait_gang): its
	 * figures are published once, at the burst's end (wait_burst_end). */
	bool stats_due;
	/* Written by the worker alone (stat_inc), read anywhere. */
	struct wait_stats st;
};

struct serve_wait {
	struct attempt_ctx *a;    /* placing and answering (daemon/attempt.c) */
	struct serve_wait_config cfg;
	unsigned workers;
	uint32_t owners;
	struct wait_worker *w; /* [workers] */
};

static uint64_t key_of(const struct producer *pr)
{
	return producers_key(pr);
}

static void quota_leave(struct wait_worker *ww, uint32_t id);
static void quota_join(struct wait_worker *ww, uint32_t id, uint32_t root,
		       uint32_t cq, uint64_t gen, const int64_t *charge, int nr);

/* Takes pod `id` out of its gang, if it has one. GF2: when it stood for
 * its gang in the quota lists (GF1) and the gang keeps minMember pods,
 * another of them takes its place, with its arrival (fair sharing's
 * tie), a charge of 0 (a lower bound of any: PW1's bound stays one) and
 * generation 0, older than any: the next poll looks at its ClusterQueue
 * (PW2), and QW9 or the attempt judges the smaller gang. Below
 * minMember it leaves the lists: no attempt can take it until a pod
 * comes (wait_gang). */
static void gang_leave(struct wait_worker *ww, uint32_t id)
{
	uint32_t gi = ww->gang_of[id];
	if (gi == 0)
		return;
	ww->gang_of[id] = 0;
	struct wgang *g = &ww->gangs[gi - 1];
	for (uint32_t i = 0; i < g->n; i++)
		if (g->ids[i] == id) {
			g->ids[i] = g->ids[--g->n];
			break;
		}
	if (ww->quota_root[id] != 0 && g->n >= g->min && g->n > 0) {
		uint32_t root = ww->quota_root[id] - 1;
		uint32_t cq = (ww->quota_cq[id] & ~QCQ_AWAKE) - 1;
		static const int64_t zero[QUOTA_MAX_RESOURCES];
		quota_leave(ww, id);
		ww->quota_arrival[g->ids[0]] = g->arrival;
		quota_join(ww, g->ids[0], root, cq, 0, zero, QUOTA_MAX_RESOURCES);
	}
	if (g->n == 0) {
		free(g->quota_why);
		memset(g, 0, sizeof(*g));
	}
}

/* Unlinks `id` from the list whose ends are *head and *tail. */
static void quota_unlink(struct wait_worker *ww, uint32_t id, uint32_t *head,
			 uint32_t *tail)
{
	uint32_t prev = ww->quota_prev[id], next = ww->quota_next[id];
	if (prev != QUEUE_NONE)
		ww->quota_next[prev] = next;
	else
		*head = next;
	if (next != QUEUE_NONE)
		ww->quota_prev[next] = prev;
	else
		*tail = prev;
}

/* Appends `id` to the list whose ends are *head and *tail. */
static void quota_append(struct wait_worker *ww, uint32_t id, uint32_t *head,
			 uint32_t *tail)
{
	ww->quota_prev[id] = *tail;
	ww->quota_next[id] = QUEUE_NONE;
	if (*tail != QUEUE_NONE)
		ww->quota_next[*tail] = id;
	else
		*head = id;
	*tail = id;
}

/* ClusterQueue `qc`, whose last parked pod left, out of tree `tr`'s
 * parked_cqs (PW1). */
static void parked_cq_unlink(struct wait_worker *ww, struct qtree *tr,
			     struct qcq *qc)
{
	if (qc->pprev != QUEUE_NONE)
		ww->cqs[qc->pprev].pnext = qc->pnext;
	else
		tr->parked_cqs = qc->pnext;
	if (qc->pnext != QUEUE_NONE)
		ww->cqs[qc->pnext].pprev = qc->pprev;
}

/* Takes pod `id` out of its ClusterQueue's parked or awake list (QW4),
 * if it is in one. */
static void quota_leave(struct wait_worker *ww, uint32_t id)
{
	uint32_t r1 = ww->quota_root[id];
	if (r1 == 0)
		return;
	struct qtree *tr = &ww->trees[r1 - 1];
	uint32_t c = ww->quota_cq[id];
	qc_pending_add(ww->qc, (int)(c & ~QCQ_AWAKE) - 1, (c & QCQ_AWAKE) ?
		       QC_PENDING_ACTIVE : QC_PENDING_INADMISSIBLE, -1); /* QW7 */
	if (c & QCQ_AWAKE) {
		uint32_t cq = (c & ~QCQ_AWAKE) - 1;
		struct qcq *qc = &ww->cqs[cq];
		quota_unlink(ww, id, &qc->head, &qc->tail);
		tr->n_awake--;
		if (--qc->n == 0) {
			if (qc->prev != QUEUE_NONE)
				ww->cqs[qc->prev].next = qc->next;
			else
				tr->awake_cqs = qc->next;
			if (qc->next != QUEUE_NONE)
				ww->cqs[qc->next].prev = qc->prev;
		}
	} else {
		uint32_t cq = c - 1;
		struct qcq *qc = &ww->cqs[cq];
		quota_unlink(ww, id, &qc->phead, &qc->ptail);
		tr->n--;
		if (--qc->pn == 0)
			parked_cq_unlink(ww, tr, qc);
	}
	ww->quota_root[id] = 0;
	ww->quota_cq[id] = 0;
	if (tr->n + tr->n_awake == 0) {
		uint32_t last = ww->tree_list[--ww->n_trees];
		ww->tree_list[tr->at] = last;
		ww->trees[last].at = tr->at;
	}
}

/* Pod `id`, parked for quota by ClusterQueue `cq` of tree `root` with
 * the generation `gen` it read and its charge `charge[0 .. nr)`, joins
 * its ClusterQueue's parked list (QW1, PW1). */
static void quota_join(struct wait_worker *ww, uint32_t id, uint32_t root,
		       uint32_t cq, uint64_t gen, const int64_t *charge, int nr)
{
	struct qtree *tr = &ww->trees[root];
	if (tr->n + tr->n_awake == 0) {
		tr->awake_cqs = QUEUE_NONE;
		tr->at = ww->n_trees;
		ww->tree_list[ww->n_trees++] = root;
	}
	if (tr->n == 0) {
		tr->parked_cqs = QUEUE_NONE;
		tr->gen = gen;
		tr->recheck = false;
	} else if (gen < tr->gen) {
		tr->gen = gen; /* generations only grow: the oldest is kept */
	}
	struct qcq *qc = &ww->cqs[cq];
	if (qc->pn == 0) {
		qc->phead = qc->ptail = QUEUE_NONE;
		qc->pgen = gen;
		for (int r = 0; r < nr; r++)
			qc->pmin[r] = charge[r];
		qc->uniform = true;
		qc->recheck = false;
		qc->pprev = QUEUE_NONE;
		qc->pnext = tr->parked_cqs;
		if (tr->parked_cqs != QUEUE_NONE)
			ww->cqs[tr->parked_cqs].pprev = cq;
		tr->parked_cqs = cq;
	} else {
		if (gen < qc->pgen)
			qc->pgen = gen;
		for (int r = 0; r < nr; r++) {
			qc->uniform = qc->uniform && charge[r] == qc->pmin[r];
			if (charge[r] < qc->pmin[r])
				qc->pmin[r] = charge[r];
		}
	}
	quota_append(ww, id, &qc->phead, &qc->ptail);
	qc->pn++;
	tr->n++;
	ww->quota_root[id] = root + 1;
	ww->quota_cq[id] = cq + 1;
	qc_pending_add(ww->qc, (int)cq, QC_PENDING_INADMISSIBLE, 1); /* QW7 */
	qc_note_parked(ww->qc, (int)cq, charge, nr); /* QE8: quota by escrow's ask */
	if (ww->quota_arrival[id] == 0) {
		/* Its arrival for fair sharing's FIFO tie (QW6): kept while
		 * it waits, until done(). */
		if (++ww->arrivals == 0)
			ww->arrivals = 1;
		ww->quota_arrival[id] = ww->arrivals;
	}
}

/* The first parked pod of ClusterQueue `cq` of tree `tr` goes to its
 * awake list (QW2, PW2). */
static void quota_awaken(struct wait_worker *ww, struct qtree *tr, uint32_t cq)
{
	struct qcq *qc = &ww->cqs[cq];
	uint32_t id = qc->phead;
	quota_unlink(ww, id, &qc->phead, &qc->ptail);
	tr->n--;
	if (--qc->pn == 0)
		parked_cq_unlink(ww, tr, qc);
	if (qc->n++ == 0) {
		qc->head = qc->tail = QUEUE_NONE;
		qc->cycle = tr->cycle - 1; /* may nominate in this cycle */
		qc->prev = QUEUE_NONE;
		qc->next = tr->awake_cqs;
		if (tr->awake_cqs != QUEUE_NONE)
			ww->cqs[tr->awake_cqs].prev = cq;
		tr->awake_cqs = cq;
	}
	quota_append(ww, id, &qc->head, &qc->tail);
	ww->quota_cq[id] = (cq + 1) | QCQ_AWAKE;
	tr->n_awake++;
	qc_pending_add(ww->qc, (int)cq, QC_PENDING_INADMISSIBLE, -1); /* QW7 */
	qc_pending_add(ww->qc, (int)cq, QC_PENDING_ACTIVE, 1);
}

/* queue_done(), noting that a pod whose preemption is in flight has its
 * answer already (the reply then gives its node's room back), and taking
 * it out of its gang and its quota list. */
static void done(struct wait_worker *ww, uint32_t id)
{
	for (uint32_t k = 0; k < ww->pre_n; k++)
		if (ww->pre_id[k] == id)
			ww->pre_live[k] = false;
	gang_leave(ww, id);
	quota_leave(ww, id);
	ww->quota_arrival[id] = 0;
	queue_done(ww->q, id);
}

struct serve_wait *wait_create(struct attempt_ctx *a, const struct serve_wait_config *c,
			       unsigned workers)
{
	struct serve_wait *wt = calloc(1, sizeof(*wt));
	if (wt == NULL)
		return NULL;
	wt->a = a;
	wt->cfg = *c;
	wt->workers = workers;
	wt->owners = (PRODUCERS_MAX + workers - 1) / workers;
	wt->w = calloc(workers, sizeof(*wt->w));
	if (wt->w == NULL)
		goto fail;
	struct queue_config qc = {
		.owners = wt->owners,
		.per_owner = c->slots,
		.initial_backoff_ns = c->initial_backoff_ns,
		.max_backoff_ns = c->max_backoff_ns,
		.max_unschedulable_ns = WAIT_MAX_UNSCHEDULABLE_NS,
		.pop_from_backoff = true,
		.ctx = c->ctx,
		.ledger = c->ledger,
	};
	for (unsigned i = 0; i < workers; i++) {
		struct wait_worker *ww = &wt->w[i];
		ww->q = queue_create(&qc, c->events);
		ww->key = calloc(wt->owners, sizeof(uint64_t));
		ww->gangs = calloc(GANGS_PER_WORKER, sizeof(*ww->gangs));
		ww->gang_pods = malloc(GANG_MIN_MAX * sizeof(*ww->gang_pods));
		ww->gang_res = malloc(GANG_MIN_MAX * sizeof(*ww->gang_res));
		ww->gang_of_bytes = (size_t)wt->owners * c->slots * sizeof(uint32_t);
		void *m = mmap(NULL, 8 * ww->gang_of_bytes, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
		ww->gang_of = m == MAP_FAILED ? NULL : m;
		if (ww->gang_of != NULL) {
			/* gang_of_bytes is a multiple of 4: the arrays are aligned. */
			size_t per = (size_t)wt->owners * c->slots;
			ww->pre_fifo = ww->gang_of + per;
			ww->pre_marked = (uint8_t *)((char *)m + 2 * ww->gang_of_bytes);
			ww->quota_root = ww->gang_of + 3 * per;
			ww->quota_next = ww->gang_of + 4 * per;
			ww->quota_prev = ww->gang_of + 5 * per;
			ww->quota_cq = ww->gang_of + 6 * per;
			ww->quota_arrival = ww->gang_of + 7 * per;
		}
		void *tm = mmap(NULL, WAIT_QUOTA_TREES * (sizeof(struct qtree) +
							  sizeof(struct qcq) +
							  sizeof(uint32_t)),
				PROT_READ | PROT_WRITE,
				MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
		if (tm != MAP_FAILED) {
			ww->trees = tm;
			ww->cqs = (struct qcq *)(void *)(ww->trees + WAIT_QUOTA_TREES);
			ww->tree_list = (uint32_t *)(void *)(ww->cqs + WAIT_QUOTA_TREES);
		}
		if (ww->q == NULL || ww->key == NULL || ww->gangs == NULL ||
		    ww->gang_of == NULL || ww->trees == NULL ||
		    ww->gang_pods == NULL || ww->gang_res == NULL)
			goto fail;
	}
	return wt;

fail:
	wait_destroy(wt);
	errno = ENOMEM;
	return NULL;
}

void wait_destroy(struct serve_wait *wt)
{
	if (wt == NULL)
		return;
	for (unsigned i = 0; wt->w != NULL && i < wt->workers; i++) {
		queue_destroy(wt->w[i].q);
		free(wt->w[i].key);
		for (uint32_t k = 0; wt->w[i].gangs != NULL && k < wt->w[i].gangs_used; k++)
			free(wt->w[i].gangs[k].quota_why);
		free(wt->w[i].gangs);
		free(wt->w[i].gang_pods);
		free(wt->w[i].gang_res);
		if (wt->w[i].gang_of != NULL)
			munmap(wt->w[i].gang_of, 8 * wt->w[i].gang_of_bytes);
		if (wt->w[i].trees != NULL)
			munmap(wt->w[i].trees, WAIT_QUOTA_TREES * (sizeof(struct qtree) +
								   sizeof(struct qcq) +
								   sizeof(uint32_t)));
	}
	free(wt->w);
	free(wt);
}

static void store(uint64_t *to, uint64_t v)
{
	/* Relaxed: a figure, written by this worker alone. */
	if (*to != v)
		__atomic_store_n(to, v, __ATOMIC_RELAXED);
}

/* The queue's gauges and counters, copied where other threads read them:
 * the daemon's figures, and the state region's worker stats, which
 * observers read (kube-scheduler's names, shm/layout.h). */
static void publish_stats(struct serve_wait *wt, unsigned w)
{
	struct wait_worker *ww = &wt->w[w];
	struct queue_stats qs;
	queue_get_stats(ww->q, &qs);
	const uint64_t *from = (const uint64_t *)(const void *)&qs;
	uint64_t *to = (uint64_t *)(void *)&ww->st.queue;
	for (size_t i = 0; i < sizeof(qs) / sizeof(uint64_t); i++)
		store(&to[i], from[i]);
	struct serve_stats *ss = &wt->a->stats[w];
	store(&ss->pending_active, qs.active);
	store(&ss->pending_backoff, qs.backoff);
	store(&ss->pending_unschedulable, qs.unschedulable);
	store(&ss->waited, ww->st.waited);
	store(&ss->waited_placed, ww->st.placed);
	store(&ss->timed_out, ww->st.timed_out);
	store(&ss->waiting_cancelled, ww->st.cancelled);
	store(&ss->forgotten, ww->st.forgotten);
	store(&ss->queue_woken, qs.woken);
}

static bool wants_to_wait(const struct serve_wait *wt, const struct record_pod *pod)
{
	/* The slot's flags, then the template's annotation, then --wait. */
	if (pod->flags & (SHMSCHED_SLOT_WAIT | SHMSCHED_SLOT_NO_WAIT))
		return pod->flags & SHMSCHED_SLOT_WAIT;
	if (pod->spec->priority_flags & (POD_WAIT | POD_NO_WAIT))
		return pod->spec->priority_flags & POD_WAIT;
	return wt->cfg.wait_default;
}

static unsigned quota_swap_wake(struct wait_worker *ww, uint64_t now);

/* Parks (or parks again) `id` after a failed attempt of worker w: for
 * quota when `qr` (attempt_quota_refused) says quota refused it (QW1). */
static void park(struct serve_wait *wt, unsigned w, uint32_t id,
		 const struct producer *pr, const struct record_pod *pod,
		 bool gave_up, uint64_t change_head, uint64_t now,
		 const struct attempt_quota_refusal *qr)
{
	struct wait_worker *ww = &wt->w[w];
	int root = -1, nr = 0;
	bool stale = false;
	if (qr != NULL) {
		/* QW5: inside the gate. A swap this worker has not looked at
		 * yet: its lists, kept per ClusterQueue index (PW1), are of the
		 * old tree, which may number the queues otherwise: woken
		 * first. A refusal by the old tree: the pod is woken too. */
		qc_enter(wt->a->quota, w);
		uint64_t serial = qc_serial(wt->a->quota);
		if (serial != ww->quota_serial) {
			stat_add(&ww->st.quota_woken, quota_swap_wake(ww, now));
			ww->quota_serial = serial;
		}
		stale = qr->serial != serial;
		if (!stale) {
			root = quota_node_root(qc_tree(wt->a->quota), qr->cq);
			nr = quota_n_resources(qc_tree(wt->a->quota));
		}
		qc_leave(wt->a->quota, w);
	}
	const struct pod_spec *tmpl = &pr->templates[pod->template_id - 1];
	struct queue_pod qp = {
		.spec = tmpl,
		.request = pod->spec->request,
		.priority = tmpl->priority,
		.deadline_ns = pod->deadline_ns,
		.error = gave_up,
		.change_head = change_head,
	};
	if (qr != NULL)
		qp.events_from = UINT64_MAX; /* no cluster event helps it (QW1) */
	else if (!gave_up)
		engine_failure(wt->a->engines[w], &qp.codes, &qp.res);
	quota_leave(ww, id);
	int rc = queue_park(ww->q, id, &qp, now);
	(void)rc; /* the caller checked the pod was out or in its attempt */
	if (root >= 0 && root < (int)WAIT_QUOTA_TREES) {
		ww->qc = wt->a->quota;
		quota_join(ww, id, (uint32_t)root, (uint32_t)qr->cq, qr->gen,
			   qr->charge, nr);
		stat_inc(&ww->st.quota_parked);
		/* Reclaim (issue 37 item 4): the victims' quota given back
		 * moves the generation read before the refusal: it wakes. */
		attempt_quota_reclaim(wt->a, w, pod->spec, qr);
	} else if (stale) {
		stat_add(&ww->st.quota_woken, queue_wake(ww->q, id, now));
	}
}

static void retry(struct serve_wait *wt, unsigned w, uint32_t id, bool last,
		  uint64_t now);

/* PW2: whether `times` pods each charged `pmin[0 .. nr)` might be
 * charged to ClusterQueue `cq` now in some flavor of its `order[0 ..
 * nf)`: false only when quota_would_charge refuses the sum (-ENOSPC) in
 * every flavor. Charges only add up (quota/quota.h), so a refused lower
 * bound is a refusal of each pod it bounds. Inside worker w's gate. */
static bool cq_may_fit(const struct quota_tree *t, int cq, const int *order,
		       int nf, const int64_t *pmin, int nr, uint32_t times)
{
	int64_t want[QUOTA_MAX_RESOURCES];
	for (int r = 0; r < nr; r++)
		want[r] = pmin[r] > QUOTA_QUANTITY_MAX / (int64_t)times
				  ? QUOTA_QUANTITY_MAX
				  : pmin[r] * (int64_t)times;
	for (int k = 0; k < nf; k++)
		if (quota_would_charge(t, cq, order[k], want) != -ENOSPC)
			return true;
	return nf == 0;
}

/* PW3: a ClusterQueue whose parked pods quota refuses at a wake: the
 * reclaim its first parked pod asks after the gate (quota_repark_ask). */
struct wake_ask {
	uint32_t id;
	int cq, flavor;
};

/* PW2: the parked pods of ClusterQueue `cq` of tree `tr`, whose tree's
 * generation is `gen` now (read before this), that quota might take,
 * moved to its awake list in parking order; the queue keeps `gen`. None
 * when their lower bound (pmin) fits in no flavor: each is refused at
 * `gen`, and the first asks the queue's reclaim (PW3: into `asks`, at
 * most WAIT_WAKE_ASKS; past them the queue is looked at again next poll,
 * recheck). Else, with pods of one charge (uniform) and no admission fair
 * sharing, while one more charge per awake pod of the queue might fit, at
 * most WAIT_BURST, and the queue is looked at again next poll when some
 * are left (recheck: the woken ones were attempted by then, their room
 * taken or not); otherwise every one. Inside worker w's gate. Returns
 * how many woken. */
#define WAIT_WAKE_ASKS 16u
static unsigned quota_wake_cq(struct serve_wait *wt, unsigned w,
			      const struct quota_tree *t, struct qtree *tr,
			      uint32_t cq, uint64_t gen, struct wake_ask *asks,
			      unsigned *n_asks)
{
	struct wait_worker *ww = &wt->w[w];
	struct qcq *qc = &ww->cqs[cq];
	int nr = quota_n_resources(t);
	const int *order;
	int nf = quota_node_flavors(t, (int)cq, &order);
	qc->pgen = gen;
	qc->recheck = false;
	if (!cq_may_fit(t, (int)cq, order, nf, qc->pmin, nr, 1)) {
		/* GF3: through its first parked pod that is not a gang's
		 * (gangs ask none); none such: no ask. */
		uint32_t id = qc->phead;
		while (id != QUEUE_NONE && ww->gang_of[id] != 0)
			id = ww->quota_next[id];
		if (id != QUEUE_NONE && *n_asks < WAIT_WAKE_ASKS)
			asks[(*n_asks)++] = (struct wake_ask){
				.id = id, .cq = (int)cq, .flavor = order[0]};
		else if (id != QUEUE_NONE)
			qc->recheck = true;
		return 0;
	}
	/* QW8 nominates among all its awake pods; with pods of several
	 * charges the bound may be below each: all woken, as before PW2. */
	bool all = !qc->uniform || (qc_admission_fair(wt->a->quota) != NULL &&
				    quota_node_admission_fair_sharing(t, (int)cq));
	unsigned n = 0;
	while (qc->pn > 0 &&
	       (all || (n < WAIT_BURST &&
			(qc->n == 0 || cq_may_fit(t, (int)cq, order, nf, qc->pmin,
						  nr, qc->n + 1))))) {
		quota_awaken(ww, tr, cq);
		n++;
	}
	qc->recheck = qc->pn > 0;
	return n;
}

/* PW2: tree `tr`, whose generation is `gen` now (read before this):
 * each ClusterQueue with parked pods of an older generation, or to be
 * looked at again (recheck), looked at (quota_wake_cq). Inside worker
 * w's gate. Returns how many woken. */
static unsigned quota_wake_tree(struct serve_wait *wt, unsigned w,
				const struct quota_tree *t, struct qtree *tr,
				uint64_t gen, struct wake_ask *asks,
				unsigned *n_asks)
{
	struct wait_worker *ww = &wt->w[w];
	unsigned n = 0;
	uint32_t next;
	tr->recheck = false;
	for (uint32_t cq = tr->parked_cqs; cq != QUEUE_NONE; cq = next) {
		struct qcq *qc = &ww->cqs[cq];
		next = qc->pnext;
		if (qc->pgen != gen || qc->recheck)
			n += quota_wake_cq(wt, w, t, tr, cq, gen, asks, n_asks);
		tr->recheck = tr->recheck || (qc->pn > 0 && qc->recheck);
	}
	tr->gen = gen;
	return n;
}

static void quota_repark_ask(struct serve_wait *wt, unsigned w, uint32_t id,
			     const struct attempt_quota_refusal *qr);

/* QW5: after a swap of the tree, every pod of worker `ww`'s lists,
 * parked or awake, woken into activeQ: their roots, ClusterQueues and
 * generations were of the old tree. Returns how many. */
static unsigned quota_swap_wake(struct wait_worker *ww, uint64_t now)
{
	unsigned n = 0;
	while (ww->n_trees > 0) {
		struct qtree *tr = &ww->trees[ww->tree_list[0]];
		stat_inc(&ww->st.quota_wakeups);
		/* Its last quota_leave takes it out of tree_list. */
		while (tr->n + tr->n_awake > 0) {
			uint32_t id = tr->n > 0 ? ww->cqs[tr->parked_cqs].phead
						: ww->cqs[tr->awake_cqs].head;
			quota_leave(ww, id);
			n += queue_wake(ww->q, id, now);
		}
	}
	return n;
}

/* QW2, PW1-PW3: the pods of each tree whose generation moved since they
 * parked, those quota might take moved to their ClusterQueues' awake
 * lists (QW6) in the order they parked; after a swap (QW5) every pod,
 * parked or awake, woken into activeQ. Returns how many. */
static unsigned quota_wake(struct serve_wait *wt, unsigned w, uint64_t now)
{
	struct wait_worker *ww = &wt->w[w];
	if (ww->n_trees == 0)
		return 0;
	struct wake_ask asks[WAIT_WAKE_ASKS];
	unsigned n_asks = 0;
	/* QW5: the tree read inside the gate (qc_replace may swap it); a
	 * swap since the last look wakes every tree's pods, whose roots and
	 * generations were of the old tree. */
	qc_enter(wt->a->quota, w);
	const struct quota_tree *t = qc_tree(wt->a->quota);
	uint64_t serial = qc_serial(wt->a->quota);
	bool swapped = serial != ww->quota_serial;
	ww->quota_serial = serial;
	unsigned n = swapped ? quota_swap_wake(ww, now) : 0;
	for (uint32_t k = 0; k < ww->n_trees; k++) {
		uint32_t root = ww->tree_list[k];
		struct qtree *tr = &ww->trees[root];
		if (tr->n > 0) {
			/* PW2: read before quota_would_charge's reads of usage:
			 * a release after it moves it again. */
			uint64_t gen = quota_generation(t, (int)root);
			if (gen != tr->gen)
				stat_inc(&ww->st.quota_wakeups);
			if (gen != tr->gen || tr->recheck)
				n += quota_wake_tree(wt, w, t, tr, gen, asks, &n_asks);
		}
	}
	qc_leave(wt->a->quota, w);
	stat_add(&ww->st.quota_woken, n);
	/* PW3: as QW9's pod parked again asks (quota_repark_ask). */
	for (unsigned i = 0; i < n_asks; i++) {
		struct attempt_quota_refusal qr = {.refused = true, .cq = asks[i].cq,
						   .flavor = asks[i].flavor,
						   .serial = serial};
		quota_repark_ask(wt, w, asks[i].id, &qr);
	}
	return n;
}

/* GF1: the charge of queue pod `id` into charge[]: its request's, or,
 * when it stands for its gang, the sum of its gang's pods' requests (as
 * attempt_gang charges it). qc_request's answer. Inside worker w's gate. */
static int member_charge(struct serve_wait *wt, unsigned w, uint32_t id,
			 int64_t *charge, unsigned *missing)
{
	struct wait_worker *ww = &wt->w[w];
	struct quota_charge *q = wt->a->quota;
	uint32_t gi = ww->gang_of[id];
	if (gi == 0)
		return qc_request(q, w, queue_request(ww->q, id), charge, missing);
	const struct wgang *g = &ww->gangs[gi - 1];
	int nr = quota_n_resources(qc_tree(q));
	int64_t one[QUOTA_MAX_RESOURCES];
	for (int r = 0; r < nr; r++)
		charge[r] = 0;
	for (uint32_t i = 0; i < g->n; i++) {
		int rc = qc_request(q, w, queue_request(ww->q, g->ids[i]), one, missing);
		if (rc < 0)
			return rc;
		for (int r = 0; r < nr; r++)
			charge[r] = one[r] > QUOTA_QUANTITY_MAX - charge[r]
					    ? QUOTA_QUANTITY_MAX
					    : charge[r] + one[r];
	}
	return 0;
}

/* QW8: ClusterQueue `cq`'s awake pod that admission fair sharing puts
 * first: the one whose LocalQueue has the lowest usage (afsl_usage), the
 * earliest parked of those. Inside worker w's gate. */
static uint32_t afs_first(struct serve_wait *wt, unsigned w, struct qcq *qc,
			  struct afs_ledger *afs)
{
	struct wait_worker *ww = &wt->w[w];
	uint32_t best = qc->head;
	double bu = 0.0;
	int last_lq = -2;
	double last_u = 0.0;
	for (uint32_t id = qc->head; id != QUEUE_NONE; id = ww->quota_next[id]) {
		const struct pod_spec *sp = queue_spec(ww->q, id);
		int lq = sp != NULL ? qc_worker_local_queue(wt->a->quota, w, sp) : -1;
		/* Pods of one LocalQueue come in runs: one lookup a run. */
		double u = lq == last_lq ? last_u : afsl_usage(afs, lq);
		last_lq = lq;
		last_u = u;
		if (id == qc->head || afs_compare(u, bu) < 0) {
			best = id;
			bu = u;
		}
	}
	return best;
}

/* QW6: the next head of tree `tr` in fair-sharing order, taken out of its
 * list (*cq_of its ClusterQueue); QUEUE_NONE when it has no awake pod.
 * Inside worker w's gate. */
static uint32_t quota_fair_pick(struct serve_wait *wt, unsigned w,
				const struct quota_tree *t, struct qtree *tr,
				int *cq_of)
{
	struct wait_worker *ww = &wt->w[w];
	if (tr->n_awake == 0)
		return QUEUE_NONE;
	struct afs_ledger *afs = qc_admission_fair(wt->a->quota);
	for (int pass = 0; pass < 2; pass++) {
		uint32_t best = QUEUE_NONE, best_id = QUEUE_NONE;
		struct fair_key bk = {0}, k;
		for (uint32_t cq = tr->awake_cqs; cq != QUEUE_NONE;
		     cq = ww->cqs[cq].next) {
			struct qcq *qc = &ww->cqs[cq];
			if (qc->cycle == tr->cycle)
				continue; /* nominated in this cycle */
			uint32_t id = qc->head;
			if (afs != NULL && quota_node_admission_fair_sharing(t, (int)cq))
				id = afs_first(wt, w, qc, afs); /* QW8 */
			int64_t charge[QUOTA_MAX_RESOURCES];
			unsigned missing;
			const struct pod_spec *sp = queue_spec(ww->q, id);
			int32_t prio = sp != NULL ? sp->priority : 0;
			if (member_charge(wt, w, id, charge, &missing) < 0 ||
			    fair_share_key(t, (int)cq, charge, prio,
					   ww->quota_arrival[id], &k) < 0) {
				/* Its attempt answers it: at once. */
				k = (struct fair_key){ .drs = INT64_MIN,
						       .priority = prio,
						       .arrival = ww->quota_arrival[id],
						       .cq = (int)cq };
			}
			if (best == QUEUE_NONE || fair_share_compare(t, &k, &bk) < 0) {
				best = cq;
				best_id = id;
				bk = k;
			}
		}
		if (best != QUEUE_NONE) {
			ww->cqs[best].cycle = tr->cycle;
			quota_leave(ww, best_id);
			*cq_of = (int)best;
			return best_id;
		}
		tr->cycle++; /* every ClusterQueue nominated: the next cycle */
	}
	return QUEUE_NONE;
}

/* QW9: whether picked pod `id` (out of its lists) would be refused by
 * quota now in every flavor of its ClusterQueue `cq`: then *qr is its
 * refusal as attempt_place's would be (the generation read before the
 * checks) and *root its tree. False whenever the attempt could end
 * otherwise (a flavor with nodeLabels, a resource not covered, a request
 * that does not convert): the attempt decides those. Inside worker w's
 * gate, with the serial of ww->quota_serial. */
static bool quota_still_full(struct serve_wait *wt, unsigned w,
			     const struct quota_tree *t, uint32_t id, int cq,
			     struct attempt_quota_refusal *qr, int *root)
{
	struct wait_worker *ww = &wt->w[w];
	struct quota_charge *q = wt->a->quota;
	unsigned missing;
	if (member_charge(wt, w, id, qr->charge, &missing) < 0)
		return false;
	/* Before the reads of usage (quota_would_charge): a release after
	 * it moves the generation, and wakes the pod again. */
	qr->gen = quota_generation(t, cq);
	const int *order;
	int n = quota_node_flavors(t, cq, &order);
	for (int k = 0; k < n; k++)
		if (qc_flavor_n_labels(q, order[k]) > 0 ||
		    quota_would_charge(t, cq, order[k], qr->charge) != -ENOSPC)
			return false;
	*root = quota_node_root(t, cq);
	if (n == 0 || *root < 0 || *root >= (int)WAIT_QUOTA_TREES)
		return false;
	qr->refused = true;
	qr->cq = cq;
	qr->flavor = order[0];
	qr->serial = ww->quota_serial;
	return true;
}

/* QW9: the awake pods of ClusterQueue `qr->cq` whose charge is at least
 * `qr->charge` (that of request `req`) in every resource, parked again
 * with `qr`'s generation: quota refuses them as it refused the one that
 * charge is of, at the same reading. They ask nothing: the ask of the pod whose charge that is
 * (quota_repark_ask) stands for them (QA7: one request in flight per
 * ClusterQueue; its victims' give-back moves the generation they read,
 * and wakes them), or left the queue's want. Inside worker w's gate.
 * Returns how many. */
static unsigned quota_repark_like(struct serve_wait *wt, unsigned w,
				  const struct attempt_quota_refusal *qr, int root,
				  const struct res_vec *req)
{
	struct wait_worker *ww = &wt->w[w];
	struct quota_charge *q = wt->a->quota;
	int nr = quota_n_resources(qc_tree(q)); /* inside the gate */
	unsigned n = 0;
	uint32_t next;
	for (uint32_t id = ww->cqs[qr->cq].head; ww->cqs[qr->cq].n > 0 &&
	     id != QUEUE_NONE; id = next) {
		next = ww->quota_next[id];
		const struct res_vec *rv = queue_request(ww->q, id);
		/* The same request (pods of one template): the same charge;
		 * not so for a gang's (GF1: its gang's sum), or when qr's is a
		 * gang's (req NULL). */
		const int64_t *cp = qr->charge;
		int64_t charge[QUOTA_MAX_RESOURCES];
		if (req == NULL || ww->gang_of[id] != 0 ||
		    memcmp(rv, req, sizeof(*req)) != 0) {
			unsigned missing;
			if (member_charge(wt, w, id, charge, &missing) < 0)
				continue;
			bool more = true;
			for (int r = 0; r < nr && more; r++)
				more = charge[r] >= qr->charge[r];
			if (!more)
				continue;
			cp = charge;
		}
		quota_leave(ww, id);
		quota_join(ww, id, (uint32_t)root, (uint32_t)qr->cq, qr->gen, cp, nr);
		stat_inc(&ww->st.quota_parked);
		stat_inc(&ww->st.quota_skipped);
		n++;
	}
	return n;
}

/* QW9: pod `id`, which quota_still_full found still refused (`qr`,
 * tree `root`), parked for quota again without an attempt: back in its
 * tree's parked list, and with it the awake pods of its queue that ask
 * at least as much (quota_repark_like). The queue holds each as it did
 * (unschedulable, no cluster event helps it). Inside worker w's gate,
 * right after quota_still_full; its ask follows (quota_repark_ask). */
static void quota_repark(struct serve_wait *wt, unsigned w, uint32_t id,
			 const struct attempt_quota_refusal *qr, int root)
{
	struct wait_worker *ww = &wt->w[w];
	quota_join(ww, id, (uint32_t)root, (uint32_t)qr->cq, qr->gen, qr->charge,
		   quota_n_resources(qc_tree(wt->a->quota))); /* inside the gate */
	stat_inc(&ww->st.quota_parked);
	stat_inc(&ww->st.quota_skipped);
	quota_repark_like(wt, w, qr, root,
			  ww->gang_of[id] != 0 ? NULL : queue_request(ww->q, id));
}

/* QW9: the reclaim of pod `id`, parked again by quota_repark for `qr`,
 * asked as park() asks it. Outside worker w's gate (the ask takes it). */
static void quota_repark_ask(struct serve_wait *wt, unsigned w, uint32_t id,
			     const struct attempt_quota_refusal *qr)
{
	struct wait_worker *ww = &wt->w[w];
	const struct pod_spec *tmpl = queue_spec(ww->q, id);
	const struct res_vec *req = queue_request(ww->q, id);
	/* GF3: a gang asks no reclaim (one pod's charge is not its). */
	if (tmpl == NULL || ww->gang_of[id] != 0)
		return;
	const struct pod_spec *spec = tmpl;
	struct pod_spec with;
	if (memcmp(&tmpl->request, req, sizeof(*req)) != 0) {
		/* The slot's extras: the request it was attempted with
		 * (ingest/record.c). */
		with = *tmpl;
		with.request = *req;
		spec = &with;
	}
	attempt_quota_reclaim(wt->a, w, spec, qr);
}

/* QW6: up to `budget` awake pods attempted in fair-sharing order; those
 * that quota would refuse now parked again unattempted (QW9), not
 * counted. Returns how many attempted. */
static unsigned quota_fair(struct serve_wait *wt, unsigned w, uint64_t now,
			   unsigned budget)
{
	struct wait_worker *ww = &wt->w[w];
	unsigned n = 0;
	struct attempt_quota_refusal qr;
	while (n < budget && ww->n_trees > 0) {
		uint32_t id = QUEUE_NONE;
		bool full = false;
		int root = -1;
		qc_enter(wt->a->quota, w);
		/* QW5: after a swap, quota_wake wakes them all first. */
		if (qc_serial(wt->a->quota) == ww->quota_serial) {
			const struct quota_tree *t = qc_tree(wt->a->quota);
			for (uint32_t k = 0; k < ww->n_trees && id == QUEUE_NONE; k++)
				id = quota_fair_pick(wt, w, t,
						     &ww->trees[ww->tree_list[k]],
						     &qr.cq);
			if (id != QUEUE_NONE)
				full = quota_still_full(wt, w, t, id, qr.cq, &qr, &root);
			if (full)
				quota_repark(wt, w, id, &qr, root);
		}
		qc_leave(wt->a->quota, w);
		if (id == QUEUE_NONE)
			break;
		if (full) {
			quota_repark_ask(wt, w, id, &qr);
			continue;
		}
		if (queue_take(ww->q, id) == 0)
			retry(wt, w, id, false, now);
		n++;
	}
	return n;
}

/* Whether a request for queue id `id` (its pod's, or its id's last pod's)
 * is with the evictor: its reply comes first. */
static bool preempt_in_flight(const struct wait_worker *ww, uint32_t id)
{
	for (uint32_t k = 0; k < ww->pre_n; k++)
		if (ww->pre_id[k] == id)
			return true;
	return false;
}

/* Whether pod `pod`, parked as `id` after an attempt that failed for
 * `codes`, may preempt (DefaultPreemption's PodEligibleToPreemptOthers and
 * nodesWherePreemptionMightHelp, and this daemon's limits: no devices, no
 * host ports, no inter-pod rule in play), and if so asks the evictor. At
 * most WAIT_PREEMPTS requests in flight per worker, one per pod. */
static void maybe_preempt(struct serve_wait *wt, unsigned w, uint32_t id,
			  const struct producer *pr, const struct record_pod *pod,
			  uint32_t codes)
{
	struct wait_worker *ww = &wt->w[w];
	const struct pod_spec *sp = pod->spec;
	if (wt->cfg.evictor == NULL || sp->gang != 0 || attempt_sharded(wt->a) ||
	    sp->priority <= attempt_lowest_priority(wt->a) ||
	    (sp->priority_flags & POD_PREEMPT_NEVER) || sp->n_ports > 0 ||
	    devices_wanted(sp) ||
	    !(codes & (QUEUE_CODE(REASON_INSUFFICIENT) | QUEUE_CODE(REASON_TOO_MANY_PODS))) ||
	    engine_interpod_applies(wt->a->engines[w], sp))
		return;
	if (preempt_in_flight(ww, id) || ww->pre_n == WAIT_PREEMPTS) {
		/* Its turn comes when a reply comes (take_replies). */
		if (!ww->pre_marked[id]) {
			ww->pre_marked[id] = 1;
			ww->pre_fifo[ww->pre_tail++ % queue_capacity(ww->q)] = id;
		}
		return;
	}
	ww->request = (struct preempt_request){
		.producer = pr->id, .key = key_of(pr), .template_id = pod->template_id,
		.cookie = pod->cookie, .spec = *pod->spec,
	};
	if (!evict_request(wt->cfg.evictor, w, id, &ww->request))
		return;
	ww->pre_id[ww->pre_n] = id;
	ww->pre_live[ww->pre_n] = true;
	ww->pre_n++;
	stat_inc(&ww->st.preemptions);
	stat_inc(&wt->a->stats[w].preemption_attempts);
}

/* The held use of a reply nobody can take: given back, and told. */
static void give_back(struct serve_wait *wt, const struct evict_reply *r)
{
	struct ledger *l = wt->a->ledger;
	uint32_t slot = (uint32_t)r->outcome.slot;
	if (ledger_node_generation(l, slot) != r->outcome.node_gen)
		return; /* the node went, and its use with it */
	ledger_account(l, slot, &r->spec, NULL, -1);
	struct queue_event ev = queue_event_release(slot, &r->spec, NULL);
	queue_events_publish(wt->cfg.events, &ev);
}

/* A pod woken for node `woken_for`'s room (queue_woken_for) and placed on
 * `node`: when that is another node, the room is still there for another
 * pod, and is published again. */
static void room_left(struct serve_wait *wt, uint32_t woken_for, uint32_t node)
{
	if (woken_for == QUEUE_NONE || node == woken_for)
		return;
	struct queue_event ev = queue_event_room(woken_for);
	queue_events_publish(wt->cfg.events, &ev);
}

/* The next pods that would have preempted, attempted again (and asking
 * the evictor if they still fail), while fewer than WAIT_PREEMPTS are in
 * flight; each looked at once a call (one that fails again goes back to
 * the end). A pod whose id has a request in flight stays for after its
 * reply: attempted now, it would only fail and come back. */
static void preempt_next(struct serve_wait *wt, unsigned w, uint64_t now)
{
	struct wait_worker *ww = &wt->w[w];
	uint32_t cap = queue_capacity(ww->q);
	for (uint32_t left = ww->pre_tail - ww->pre_head;
	     left > 0 && ww->pre_n < WAIT_PREEMPTS; left--) {
		uint32_t id = ww->pre_fifo[ww->pre_head++ % cap];
		if (preempt_in_flight(ww, id)) {
			ww->pre_fifo[ww->pre_tail++ % cap] = id; /* still marked */
			continue;
		}
		ww->pre_marked[id] = 0;
		if (queue_take(ww->q, id) == 0)
			retry(wt, w, id, false, now);
	}
}

/* The evictor's replies: a held node becomes the pod's placement. */
static unsigned take_replies(struct serve_wait *wt, unsigned w)
{
	struct wait_worker *ww = &wt->w[w];
	struct evict_reply *r = &ww->reply;
	unsigned n = 0;
	while (wt->cfg.evictor != NULL && evict_reply(wt->cfg.evictor, w, r)) {
		bool live = false;
		for (uint32_t k = 0; k < ww->pre_n; k++) {
			if (ww->pre_id[k] != r->queue_id)
				continue;
			live = ww->pre_live[k];
			ww->pre_n--;
			ww->pre_id[k] = ww->pre_id[ww->pre_n];
			ww->pre_live[k] = ww->pre_live[ww->pre_n];
			break;
		}
		n++;
		if (r->outcome.slot < 0)
			continue; /* no node: the pod waits on */
		stat_add(&ww->st.victims, r->outcome.victims);
		stat_add(&wt->a->stats[w].preemption_victims,
			 r->outcome.victims);
		struct producer *pr = producers_get(wt->a->producers,
						    r->producer);
		uint32_t id = r->queue_id;
		bool here = live && pr != NULL && key_of(pr) == r->key &&
			    !producers_faulted(pr) &&
			    queue_where(ww->q, id) != QUEUE_OUT &&
			    queue_where(ww->q, id) != QUEUE_ATTEMPT &&
			    ledger_node_generation(wt->a->ledger,
						   (uint32_t)r->outcome.slot) ==
				    r->outcome.node_gen;
		uint64_t h = queue_index(ww->q, id);
		if (!here || attempt_place_held(wt->a, w, pr, &pr->region.slots[h],
						&r->spec, r->cookie,
						(uint32_t)r->outcome.slot,
						queue_attempts(ww->q, id)) < 0) {
			give_back(wt, r);
			continue;
		}
		quota_leave(ww, id);
		ww->quota_arrival[id] = 0;
		queue_done(ww->q, id);
		stat_inc(&ww->st.placed);
		stat_inc(&ww->st.preempted);
		attempt_complete(wt->a, w, pr, &h, 1);
	}
	return n;
}

/* EVICTED notices for this worker's producers: into the producer's
 * notices section, its handle on the completion ring (include/shmsched/
 * wire.h). A producer whose section is full (it has not read 64) loses
 * the notice, counted in its header's `lost` so that it can list its
 * placements; its placement is gone either way. */
static unsigned take_notices(struct serve_wait *wt, unsigned w)
{
	struct wait_worker *ww = &wt->w[w];
	struct evict_notice n;
	unsigned k = 0;
	while (wt->cfg.evictor != NULL && evict_notice_next(wt->cfg.evictor, w, &n)) {
		k++;
		struct producer *pr = producers_get(wt->a->producers, n.producer);
		if (pr == NULL || key_of(pr) != n.key || producers_faulted(pr)) {
			stat_inc(&ww->st.notices_dropped);
			continue;
		}
		struct shmsched_notices *ns = pr->region.notices;
		/* Acquire, partner of the producer's release after it copied
		 * a notice out (client/client.c): untrusted, so only bounds. */
		uint32_t consumed = __atomic_load_n(&ns->consumed, __ATOMIC_ACQUIRE);
		if (pr->notices_sent - consumed >= SHMSCHED_NOTICES) {
			stat_inc(&ww->st.notices_dropped);
			producers_notice_lost(pr);
			continue;
		}
		uint64_t h = pr->notices_sent % SHMSCHED_NOTICES;
		ns->notice[h] = n.notice;
		pr->notices_sent++;
		h |= SHMSCHED_HANDLE_NOTICE;
		attempt_complete(wt->a, w, pr, &h, 1);
		stat_inc(&ww->st.notices);
	}
	return k;
}

/* --- gangs ------------------------------------------------------------- */

/* The entry of gang `gang` (+1), made when `make`; 0 when none (or the
 * table is full). */
static uint32_t gang_entry(struct wait_worker *ww, uint32_t gang, bool make)
{
	uint32_t free_at = 0;
	for (uint32_t i = 0; i < ww->gangs_used; i++) {
		if (ww->gangs[i].gang == gang)
			return i + 1;
		if (ww->gangs[i].gang == 0 && free_at == 0)
			free_at = i + 1;
	}
	if (!make)
		return 0;
	if (free_at == 0 && ww->gangs_used < GANGS_PER_WORKER)
		free_at = ++ww->gangs_used;
	if (free_at != 0)
		ww->gangs[free_at - 1].gang = gang;
	return free_at;
}

/* Answers gang pod `id` (out of its gang and the queue) with `status` and
 * `why`, and hands it back. */
static void gang_answer(struct serve_wait *wt, unsigned w, uint32_t id,
			uint32_t status, const char *why)
{
	struct wait_worker *ww = &wt->w[w];
	uint32_t owner = queue_owner(ww->q, id);
	uint64_t h = queue_index(ww->q, id);
	struct producer *pr = producers_get(wt->a->producers,
					    owner * wt->workers + w);
	done(ww, id);
	attempt_answer_one(wt->a, w, pr, (uint32_t)h, status, why);
}

/* GF1: gang `gi`, which quota refused (`qr`: its ClusterQueue, the
 * generation read before the charge, the sum charged), its pods parked:
 * its first pod joins the ClusterQueue's parked list for it, charged the
 * gang's sum, as park() joins a pod (QW1, PW1), so a give-back wakes it
 * (PW2) and fair sharing orders it among the pods (QW6), one workload in
 * kueue_pending_workloads (QW7). A swap not looked at yet, or a refusal
 * by the old tree, as in park(): that pod is woken, and its attempt
 * (retry, gang_try) tries the gang. */
static void gang_quota_park(struct serve_wait *wt, unsigned w, uint32_t gi,
			    const struct attempt_quota_refusal *qr, uint64_t now)
{
	struct wait_worker *ww = &wt->w[w];
	struct wgang *g = &ww->gangs[gi - 1];
	if (g->n == 0)
		return;
	uint32_t id = g->ids[0];
	qc_enter(wt->a->quota, w);
	uint64_t serial = qc_serial(wt->a->quota);
	if (serial != ww->quota_serial) {
		stat_add(&ww->st.quota_woken, quota_swap_wake(ww, now));
		ww->quota_serial = serial;
	}
	bool stale = qr->serial != serial;
	int root = -1, nr = 0;
	if (!stale) {
		root = quota_node_root(qc_tree(wt->a->quota), qr->cq);
		nr = quota_n_resources(qc_tree(wt->a->quota));
	}
	qc_leave(wt->a->quota, w);
	if (root >= 0 && root < (int)WAIT_QUOTA_TREES) {
		ww->qc = wt->a->quota;
		ww->quota_arrival[id] = g->arrival;
		quota_join(ww, id, (uint32_t)root, (uint32_t)qr->cq, qr->gen,
			   qr->charge, nr);
		g->arrival = ww->quota_arrival[id];
		stat_inc(&ww->st.quota_parked);
	} else if (stale) {
		stat_add(&ww->st.quota_woken, queue_wake(ww->q, id, now));
	}
}

/* GC1: the pod whose arrival completes its gang (wait_gang): in its
 * gang's ids but never parked (QUEUE_OUT), its record decoded by the
 * caller (serve.c's answer, whose frame outlives the attempt). gang_try
 * neither takes it nor decodes it again; the queue counts it as the
 * others (attempts: its arrival and this one) and, when the gang waits
 * again, it is parked and taken as if it had been parked on arrival, so
 * the queue ends as it would have. `park` is how wait_gang parks it. */
struct gang_fresh {
	uint32_t id;
	const struct record_pod *pod;
	const struct queue_pod *park;
};

/* A gang's attempt: with at least minMember pods waiting, all of them
 * are placed together or none is; then every one is answered PLACED, or
 * every one waits again with the reasons of the pod that found no node
 * (so the events that can help it wake them). `fresh`: the pod that
 * completed the gang just now (GC1), or NULL. */
static void gang_try(struct serve_wait *wt, unsigned w, uint32_t gi, uint64_t now,
		     const struct gang_fresh *fresh)
{
	struct wait_worker *ww = &wt->w[w];
	struct wgang *g = &ww->gangs[gi - 1];
	struct producers *p = wt->a->producers;
	struct record_pod *pods = ww->gang_pods;
	struct resolve_result *r = ww->gang_res;
	struct producer *prs[GANG_MIN_MAX];
	struct shmsched_slot *slots[GANG_MIN_MAX];
	const struct record_pod *pp[GANG_MIN_MAX];
	uint32_t ids[GANG_MIN_MAX], attempts[GANG_MIN_MAX];
	char why[SHMSCHED_MESSAGE_MAX];
	if (g->n < g->min)
		return;
	g->quota_wait = false; /* QG1: tried; parks for quota again if refused */
	/* GF1: its pod that stood for it leaves the quota lists (QW4), as
	 * an attempted pod does (retry). */
	for (uint32_t i = 0; i < g->n; i++)
		quota_leave(ww, g->ids[i]);
	/* Every pod of it into its attempt, decoded (a slot rewritten into
	 * something refused is answered so, and leaves the gang). */
	uint32_t n = 0;
	for (uint32_t i = 0; i < g->n;) {
		uint32_t id = g->ids[i];
		uint32_t owner = queue_owner(ww->q, id);
		struct producer *pr = producers_get(p, owner * wt->workers + w);
		struct shmsched_slot *slot = &pr->region.slots[queue_index(ww->q, id)];
		if (fresh != NULL && id == fresh->id) {
			prs[n] = pr;
			slots[n] = slot;
			pp[n] = fresh->pod;
			ids[n] = id;
			attempts[n] = 2; /* GC1: as queue_park then queue_take count */
			n++;
			i++;
			continue;
		}
		if (queue_where(ww->q, id) != QUEUE_ATTEMPT)
			queue_take(ww->q, id);
		struct record_templates t = {pr->templates, producers_templates(pr)};
		if (record_decode(slot, &t, wt->a->res, &pods[n], why,
				  sizeof(why)) < 0) {
			stat_inc(&wt->a->stats[w].rejected);
			gang_answer(wt, w, id, SHMSCHED_REJECTED, why); /* swaps ids */
			g = &ww->gangs[gi - 1];
			continue;
		}
		prs[n] = pr;
		slots[n] = slot;
		pp[n] = &pods[n];
		ids[n] = id;
		attempts[n] = queue_attempts(ww->q, id);
		n++;
		i++;
	}
	stat_add(&ww->st.retries, n);
	unsigned failed = 0, told = 0;
	uint64_t change_head = ledger_changes_head(wt->cfg.ledger);
	uint64_t events_before = queue_events_head(wt->cfg.events);
	int rc = n >= g->min ? attempt_gang(wt->a, w, prs, slots, pp, attempts, n, r,
					    &failed, &told)
			     : 1;
	if (rc == 0) {
		/* The answers handed back together: one completion (ring
		 * enqueue, answered count, doorbell) for each run of pods of
		 * one producer, not one a pod. */
		uint64_t h[GANG_MIN_MAX];
		unsigned k = 0;
		for (uint32_t i = 0; i < n; i++) {
			h[k++] = queue_index(ww->q, ids[i]);
			room_left(wt, queue_woken_for(ww->q, ids[i]),
				  (uint32_t)r[i].placement.slot);
			done(ww, ids[i]);
			if (i + 1 == n || prs[i + 1] != prs[i]) {
				attempt_complete(wt->a, w, prs[i], h, k);
				k = 0;
			}
		}
		stat_add(&ww->st.placed, n);
		stat_inc(&ww->st.gangs_placed);
		return;
	}
	if (rc == ATTEMPT_GANG_REFUSED) {
		/* Under quota and never admissible as it is: every pod answered
		 * as a single pod would be (attempt_place's refusals). */
		const char *refusal = attempt_gang_refusal(wt->a, w);
		for (uint32_t i = 0; i < n; i++) {
			stat_inc(&wt->a->stats[w].resolver.unschedulable);
			gang_answer(wt, w, ids[i], SHMSCHED_UNSCHEDULABLE, refusal);
		}
		stat_inc(&ww->st.gang_failures);
		return;
	}
	/* None placed: all wait again, as one, for what can help the one
	 * that found no node, or for quota (QG1). */
	g->gathered = g->gathered || n >= g->min;
	struct queue_pod qp = {.change_head = change_head};
	const struct attempt_quota_refusal *qr =
		rc == ATTEMPT_GANG_QUOTA ? attempt_quota_refused(wt->a, w) : NULL;
	if (qr != NULL) {
		if (g->quota_why == NULL)
			g->quota_why = malloc(SHMSCHED_MESSAGE_MAX);
		if (g->quota_why != NULL)
			snprintf(g->quota_why, SHMSCHED_MESSAGE_MAX, "%s", qr->gang_why);
		g->quota_wait = true;
		qp.events_from = UINT64_MAX; /* no cluster event helps it (QG1) */
	}
	/* Its rollbacks' releases (attempt_gang: one per flavor tried under
	 * quota) give back what it took: they must not wake it, unless
	 * another's event came between them. */
	uint64_t events_after = queue_events_head(wt->cfg.events);
	if (rc != 0 && told > 0 && events_after - events_before == told)
		qp.events_from = events_after;
	if (qr != NULL)
		; /* only its tree's quota given back wakes it (QG1) */
	else if (n >= g->min && rc == 1 && !r[failed].gave_up)
		engine_failure(wt->a->engines[w], &qp.codes, &qp.res);
	else
		qp.error = n >= g->min; /* lost races, or records: back off */
	for (uint32_t i = 0; i < n; i++) {
		if (fresh != NULL && ids[i] == fresh->id) {
			/* GC1: parked on arrival and taken, as the others were. */
			queue_park(ww->q, ids[i], fresh->park, now);
			queue_take(ww->q, ids[i]);
		}
		qp.spec = &prs[i]->templates[pp[i]->template_id - 1];
		qp.request = pp[i]->spec->request;
		qp.priority = qp.spec->priority;
		qp.deadline_ns = pp[i]->deadline_ns;
		queue_park(ww->q, ids[i], &qp, now);
	}
	if (qr != NULL)
		gang_quota_park(wt, w, gi, qr, now);
	stat_inc(&ww->st.gang_failures);
	if (rc == 1 && n >= g->min && failed > 0)
		stat_inc(&ww->st.gang_rollbacks);
}

enum wait_park wait_gang(struct serve_wait *wt, unsigned w, struct producer *pr,
			 uint32_t index, const struct record_pod *pod)
{
	struct wait_worker *ww = &wt->w[w];
	uint64_t now = now_ns();
	uint32_t owner = pr->id / wt->workers;
	uint32_t id = queue_id(ww->q, owner, index);
	if (queue_where(ww->q, id) != QUEUE_OUT)
		return WAIT_NOT;
	uint32_t gi = gang_entry(ww, pod->spec->gang, true);
	if (gi == 0 || ww->gangs[gi - 1].n == GANG_MIN_MAX)
		return WAIT_NOT;
	struct wgang *g = &ww->gangs[gi - 1];
	if (g->n == 0) {
		g->min = pod->spec->gang_min ? pod->spec->gang_min : 1;
		g->timeout_s = pod->spec->gang_timeout_s;
		g->first_ns = now;
		g->gathered = false;
	}
	/* Parked without reasons: only its gang's attempt moves it, and a
	 * node event its static filters pass. */
	const struct pod_spec *tmpl = &pr->templates[pod->template_id - 1];
	struct queue_pod qp = {.spec = tmpl, .request = pod->spec->request,
			       .priority = tmpl->priority,
			       .deadline_ns = pod->deadline_ns};
	ww->key[owner] = key_of(pr);
	ww->gang_of[id] = gi;
	g->ids[g->n++] = id;
	stat_inc(&ww->st.waited);
	if (g->n >= g->min) {
		/* GC1: tried now, with the record in hand: not parked, taken
		 * and decoded again first. */
		struct gang_fresh fresh = {.id = id, .pod = pod, .park = &qp};
		gang_try(wt, w, gi, now, &fresh);
	} else {
		queue_park(ww->q, id, &qp, now);
	}
	ww->stats_due = true;
	return WAIT_PARKED;
}

/* Gangs that did not gather minMember pods within their timeout: each of
 * their pods answered UNSCHEDULABLE (coscheduling's Permit timeout). */
static unsigned gang_timeouts(struct serve_wait *wt, unsigned w, uint64_t now)
{
	struct wait_worker *ww = &wt->w[w];
	unsigned n = 0;
	char why[SHMSCHED_MESSAGE_MAX];
	for (uint32_t i = 0; i < ww->gangs_used; i++) {
		struct wgang *g = &ww->gangs[i];
		if (g->gang == 0 || g->gathered ||
		    now - g->first_ns < (uint64_t)g->timeout_s * 1000000000u)
			continue;
		snprintf(why, sizeof(why), "pod group %s: %u of its minMember %u pods "
			 "came within %u s", intern_str(wt->cfg.ctx->strings, g->gang),
			 g->n, g->min, g->timeout_s);
		stat_inc(&ww->st.gang_timeouts);
		while (g->gang != 0 && g->n > 0) {
			gang_answer(wt, w, g->ids[0], SHMSCHED_UNSCHEDULABLE, why);
			n++;
		}
	}
	return n;
}

enum wait_park wait_park(struct serve_wait *wt, unsigned w, struct producer *pr,
			 uint32_t index, const struct record_pod *pod, bool gave_up,
			 uint64_t change_head)
{
	if (!wants_to_wait(wt, pod))
		return WAIT_NOT;
	uint64_t now = now_ns();
	if (pod->deadline_ns != 0 && pod->deadline_ns <= now) {
		stat_inc(&wt->w[w].st.timed_out);
		return WAIT_EXPIRED;
	}
	struct wait_worker *ww = &wt->w[w];
	uint32_t owner = pr->id / wt->workers;
	uint32_t id = queue_id(ww->q, owner, index);
	if (queue_where(ww->q, id) != QUEUE_OUT)
		return WAIT_NOT; /* cannot be: wait_holds() refused it before */
	const struct attempt_quota_refusal *qr = attempt_quota_refused(wt->a, w);
	park(wt, w, id, pr, pod, gave_up, change_head, now, qr);
	ww->key[owner] = key_of(pr);
	stat_inc(&ww->st.waited);
	if (!gave_up && qr == NULL) {
		uint32_t codes, res;
		engine_failure(wt->a->engines[w], &codes, &res);
		maybe_preempt(wt, w, id, pr, pod, codes);
	}
	ww->stats_due = true;
	return WAIT_PARKED;
}

void wait_burst_end(struct serve_wait *wt, unsigned w)
{
	struct wait_worker *ww = &wt->w[w];
	if (!ww->stats_due)
		return;
	ww->stats_due = false;
	publish_stats(wt, w);
}

bool wait_holds(struct serve_wait *wt, unsigned w, struct producer *pr,
		uint32_t index)
{
	struct wait_worker *ww = &wt->w[w];
	if (queue_len(ww->q) == 0)
		return false;
	uint32_t owner = pr->id / wt->workers;
	return ww->key[owner] == key_of(pr) &&
	       queue_where(ww->q, queue_id(ww->q, owner, index)) != QUEUE_OUT;
}

bool wait_cancel(struct serve_wait *wt, unsigned w, struct producer *pr,
		 uint32_t index)
{
	struct wait_worker *ww = &wt->w[w];
	if (!wait_holds(wt, w, pr, index)) {
		stat_inc(&ww->st.cancel_misses);
		return false;
	}
	done(ww, queue_id(ww->q, pr->id / wt->workers, index));
	attempt_answer(&pr->region.slots[index], SHMSCHED_CANCELLED,
		       "cancelled by its producer while it waited for a node");
	stat_inc(&ww->st.cancelled);
	stat_inc(&wt->a->stats[w].cancelled);
	publish_stats(wt, w);
	return true;
}

/* Forgets the pods of owners whose producer went away. */
static unsigned forget_gone(struct serve_wait *wt, unsigned w)
{
	struct wait_worker *ww = &wt->w[w];
	struct producers *p = wt->a->producers;
	unsigned n = 0;
	for (uint32_t k = 0; k < wt->owners; k++) {
		if (queue_owner_count(ww->q, k) == 0)
			continue;
		uint32_t i = k * wt->workers + w;
		struct producer *pr = i < PRODUCERS_MAX ? producers_get(p, i) : NULL;
		if (pr != NULL && key_of(pr) == ww->key[k] && !producers_faulted(pr))
			continue;
		uint32_t id;
		while ((id = queue_first_of(ww->q, k)) != QUEUE_NONE) {
			done(ww, id);
			stat_inc(&ww->st.forgotten);
			n++;
		}
		ww->key[k] = 0;
	}
	return n;
}

/* Attempts pod `id` again (popped, or past its deadline: `last`), and
 * answers it or parks it again. */
static void retry(struct serve_wait *wt, unsigned w, uint32_t id, bool last,
		  uint64_t now)
{
	struct wait_worker *ww = &wt->w[w];
	struct producers *p = wt->a->producers;
	uint32_t owner = queue_owner(ww->q, id), index = queue_index(ww->q, id);
	/* Checked by forget_gone() in this read-side section; a producer
	 * that left since (its slot unpublished, its memory still held by
	 * this section) has nobody to answer: forgotten. */
	struct producer *pr = producers_get(p, owner * wt->workers + w);
	if (pr == NULL) {
		done(ww, id);
		stat_inc(&ww->st.forgotten);
		return;
	}
	struct shmsched_slot *slot = &pr->region.slots[index];
	struct serve_stats *st = &wt->a->stats[w];
	/* A popped pod's count includes this attempt; one past its deadline
	 * makes one more. */
	uint32_t attempt = queue_attempts(ww->q, id) + (last ? 1 : 0);
	uint64_t h = index;
	struct record_templates t = {pr->templates, producers_templates(pr)};
	struct record_pod pod;
	char why[SHMSCHED_MESSAGE_MAX];
	uint32_t gi = ww->gang_of[id];
	if (gi != 0) {
		/* A gang's pod: never attempted alone. */
		struct wgang *g = &ww->gangs[gi - 1];
		if (last) {
			snprintf(why, sizeof(why), "its deadline passed while its pod "
				 "group %s waited (%u of minMember %u here)%s%s",
				 intern_str(wt->cfg.ctx->strings, g->gang), g->n, g->min,
				 g->quota_wait && g->quota_why != NULL
					 ? ": waiting for quota: " : "",
				 g->quota_wait && g->quota_why != NULL ? g->quota_why : "");
			stat_inc(&ww->st.timed_out);
			gang_answer(wt, w, id, SHMSCHED_UNSCHEDULABLE, why);
		} else if (g->n >= g->min) {
			gang_try(wt, w, gi, now, NULL);
		} else {
			const struct pod_spec *tmpl = queue_spec(ww->q, id);
			struct queue_pod qp = {.spec = tmpl, .request = tmpl->request,
					       .priority = tmpl->priority};
			queue_park(ww->q, id, &qp, now);
		}
		return;
	}
	stat_inc(&ww->st.retries);
	quota_leave(ww, id); /* QW4: woken, or moved by the queue itself */
	/* The producer's half again: it is the producer's own memory, which it
	 * may have rewritten (breaking its side); checked as any slot. */
	if (record_decode(slot, &t, wt->a->res, &pod, why, sizeof(why)) < 0) {
		done(ww, id);
		stat_inc(&st->rejected);
		attempt_answer_one(wt->a, w, pr, index, SHMSCHED_REJECTED, why);
		return;
	}
	struct resolve_result r;
	uint64_t change_head = ledger_changes_head(wt->cfg.ledger);
	uint32_t woken_for = queue_woken_for(ww->q, id);
	uint64_t t0 = now_ns();
	enum attempt_result a = attempt_place(wt->a, w, pr, slot, &pod, attempt, &r);
	if (a == ATTEMPT_ANSWERED && slot->status == SHMSCHED_PLACED)
		room_left(wt, woken_for, slot->node_id);
	/* Its producer's time, as its new pods' (daemon/serve.c), and in
	 * its identity's figure. */
	uint64_t spent = now_ns() - t0;
	pr->deficit_ns -= (int64_t)spent;
	producers_charge_time(wt->a->producers, pr, spent);
	if (a == ATTEMPT_ANSWERED) {
		done(ww, id);
		if (slot->status == SHMSCHED_PLACED)
			stat_inc(&ww->st.placed);
		attempt_complete(wt->a, w, pr, &h, 1);
		return;
	}
	const struct attempt_quota_refusal *qr =
		a == ATTEMPT_QUOTA ? attempt_quota_refused(wt->a, w) : NULL;
	if (last || (pod.deadline_ns != 0 && pod.deadline_ns <= now)) {
		done(ww, id);
		snprintf(why, sizeof(why), WAIT_DEADLINE_PREFIX "%s", attempt,
			 attempt == 1 ? "" : "s",
			 qr != NULL ? "waiting for quota: " : "");
		attempt_unschedulable(wt->a, w, slot, &r, why);
		stat_inc(&ww->st.timed_out);
		attempt_complete(wt->a, w, pr, &h, 1);
		return;
	}
	park(wt, w, id, pr, &pod, a == ATTEMPT_GAVE_UP, change_head, now, qr);
	if (a != ATTEMPT_GAVE_UP && qr == NULL) {
		uint32_t codes, res;
		engine_failure(wt->a->engines[w], &codes, &res);
		maybe_preempt(wt, w, id, pr, &pod, codes);
	}
}

unsigned wait_poll(struct serve_wait *wt, unsigned w)
{
	struct wait_worker *ww = &wt->w[w];
	struct sched_queue *q = ww->q;
	unsigned done = take_notices(wt, w);
	/* QW8: admission fair sharing's sampling, when due. */
	struct afs_ledger *afs = qc_admission_fair(wt->a->quota);
	if (afs != NULL)
		afsl_tick(afs);
	if (queue_len(q) == 0 && ww->pre_n == 0) {
		/* Nothing waits: only keep up with the events. */
		queue_absorb(q, NULL, 0);
		return done;
	}
	uint64_t now = now_ns();
	done += forget_gone(wt, w);
	done += take_replies(wt, w);
	preempt_next(wt, w, now);
	if (ww->gangs_used > 0)
		done += gang_timeouts(wt, w, now);
	const struct snapshot *snap = cluster_snapshot(engine_cluster(
		wt->a->engines[w]));
	done += queue_absorb(q, snap, now);
	done += quota_wake(wt, w, now);
	done += queue_tick(q, now);
	uint32_t id;
	unsigned n = 0;
	while (n < WAIT_BURST && (id = queue_expired(q, now)) != QUEUE_NONE) {
		retry(wt, w, id, true, now); /* answered, whatever it finds */
		n++;
	}
	/* Awake pods (QW6) take at most half the burst: neither they nor
	 * the queue's starve the other. */
	n += quota_fair(wt, w, now, (WAIT_BURST - n) / 2);
	while (n < WAIT_BURST && (id = queue_pop(q, now)) != QUEUE_NONE) {
		retry(wt, w, id, false, now);
		n++;
	}
	publish_stats(wt, w);
	return done + n;
}

unsigned wait_shutdown(struct serve_wait *wt)
{
	struct producers *p = wt->a->producers;
	unsigned n = 0;
	for (unsigned w = 0; w < wt->workers; w++) {
		struct wait_worker *ww = &wt->w[w];
		forget_gone(wt, w);
		/* The evictor has stopped: what its replies hold goes to the
		 * pods still waiting (placed) or back to the node. */
		take_replies(wt, w);
		take_notices(wt, w);
		/* Again: the replies may have put back a pod of a producer that
		 * left meanwhile. */
		forget_gone(wt, w);
		for (uint32_t k = 0; k < wt->owners; k++) {
			uint32_t id;
			while ((id = queue_first_of(ww->q, k)) != QUEUE_NONE) {
				struct producer *pr = producers_get(p, k * wt->workers + w);
				uint64_t h = queue_index(ww->q, id);
				done(ww, id);
				if (pr == NULL) { /* nobody to answer */
					stat_inc(&ww->st.forgotten);
					continue;
				}
				attempt_answer(&pr->region.slots[h], SHMSCHED_CANCELLED,
					       "the daemon shut down before placing "
					       "this pod");
				stat_inc(&ww->st.shutdown);
				stat_inc(&wt->a->stats[w].cancelled);
				attempt_complete(wt->a, w, pr, &h, 1);
				n++;
			}
		}
		publish_stats(wt, w);
	}
	return n;
}

void wait_get_stats(const struct serve_wait *wt, struct wait_stats *out)
{
	memset(out, 0, sizeof(*out));
	uint64_t *sum = (uint64_t *)(void *)out;
	for (unsigned w = 0; w < wt->workers; w++) {
		const uint64_t *one = (const uint64_t *)(const void *)&wt->w[w].st;
		for (size_t i = 0; i < sizeof(*out) / sizeof(uint64_t); i++)
			sum[i] += __atomic_load_n(&one[i], __ATOMIC_RELAXED);
	}
}
