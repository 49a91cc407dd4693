/* Reclaim by quota (issue 37 item 4): Kueue's classical preemption acted
 * on. The daemon's evictor thread calls producers_reclaim for a pod that
 * its ClusterQueue's quota refused and whose .spec.preemption allows
 * reclaim: under the producers' lock (no release, node event, tree swap
 * or other eviction meanwhile: OP_QUEUE's swap runs under it too), the
 * caller's `choose` reads the quota tree and the live placements and names
 * the victims (daemon/quota_charge.c, quota/reclaim.c's reclaim_choose);
 * each is then evicted as a preemption's or a drain's victim is
 * (producers_preempt.c, producers_drain.c evict_one): its owner told by an
 * EVICTED notice, its room given back to its node's counters and
 * published to waiting pods, its record freed (the store told), which
 * gives its quota back (placements_free's hook, qc_on_free). Nothing is
 * held for the preemptor: it waits for quota (daemon/wait.c), and the
 * give-back wakes it for a normal attempt, as Kueue admits a preemptor
 * only once its victims are gone.
 *
 * Nodes. Kueue decides preemption by quota alone; a pod here must also
 * fit a node, so the choice's node_ok test (RCL5 in quota/reclaim.c)
 * asks that the victims leave room, in the pod's requests, on a node the
 * pod's static filters admit (the same filters as priority preemption's
 * preempt_static_pass: unschedulable, nodeName, taints, node affinity and
 * selector, device model): either such a node has room now, or the
 * victims on one such node free enough of it. No node that could hold
 * the pod even empty: nothing is asked of `choose`, nothing evicted. An
 * approximation (requests and the pods count only; host ports, devices
 * and inter-pod rules are not looked at, as priority preemption refuses
 * pods with them): a pod still refused by its node after its victims went
 * waits on, and the victims are not brought back (Kueue's own victims are
 * not either).
 *
 * Approving managers (issue 38 item 3; ingest/producers_approval.c, AQ1):
 * when a registration opted in (OP_APPROVAL_RECLAIM_TOO), a candidate it
 * bars now (denied, not before a time still ahead, fail-closed past its
 * deadline) is no candidate (victim_ok), so the choice takes other
 * victims, or none and the preemptor waits; the victims chosen are then
 * asked, and when a manager keeps any of them (no answer yet, within its
 * deadline) none is evicted and the preemptor waits: evicting the others
 * would disrupt pods for room the preemptor still could not take. Why
 * wait rather than choose again without the kept pod: the ask is the
 * manager's chance to move its pod's role away first (KEP-4563's
 * interceptor), and a choice that went around every pod not yet answered
 * would evict the pods of managers that answer fast for those that do
 * not. The answer (or the deadline, fail-open) wakes the preemptor
 * (AQ1), whose next request finds the pod granted and evicts. Without a
 * registration that asks, nothing here is looked at.
 *
 * Cost: the static filters node by node until the first node that
 * passes them and has room now (then node_ok says yes to any victims,
 * and the rest of the nodes are not looked at: where quota, not room,
 * keeps the pod waiting, a few nodes); O(nodes) when none has room.
 * This scan was the reclaim's cost through the daemon: with 5,000 nodes
 * every node filtered per request, ~2.4M instructions of the evictor's
 * ~2.6M a request (callgrind, shmsched-pending-bench --kind quota
 * --reclaim). node_ok O(k^2) for k victims (k is small: the 1.5x cap).
 */
#include "ingest/producers_internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/base.h"
#include "ingest/control_ops.h"
#include "shm/shm.h"
#include "workers/workers.h"

struct reclaim_nodes {
	struct producers *p;
	bool asks;       /* a registration is asked by reclaim (AQ1) */
	struct prod_barred *barred; /* then: the pods managers bar now */
	const struct snapshot *snap;
	struct ledger *l;
	const struct pod_spec *pod;
	uint8_t *ok;     /* [n_slots]: the pod's static filters pass */
	bool fits_now;   /* some such node has room for it now */
};

/* The pod's requests against allocatable - used + `freed` (pods: 1). */
static bool room_for(const struct pod_spec *pod, const struct res_vec *alloc,
		     const struct res_vec *used, const struct res_vec *freed)
{
	for (unsigned i = 0; i < RES_MAX; i++) {
		int64_t want = i == RES_PODS ? 1 : pod->request.v[i];
		if (want <= 0)
			continue;
		int64_t f = freed != NULL ? freed->v[i] : 0;
		if (used->v[i] - f + want > alloc->v[i])
			return false;
	}
	return true;
}

static bool node_ok(void *arg, const uint64_t *ids, size_t k)
{
	struct reclaim_nodes *rn = arg;
	if (rn->fits_now)
		return true;
	for (size_t i = 0; i < k; i++) {
		const struct placement_record *r = placements_get(rn->p->placements, ids[i]);
		if (r == NULL || r->slot >= rn->snap->n_slots || !rn->ok[r->slot])
			continue;
		uint32_t slot = r->slot;
		bool seen = false;
		for (size_t j = 0; j < i && !seen; j++) {
			const struct placement_record *o =
				placements_get(rn->p->placements, ids[j]);
			seen = o != NULL && o->slot == slot;
		}
		if (seen)
			continue; /* that node was looked at */
		struct res_vec freed = {0};
		for (size_t j = i; j < k; j++) {
			const struct placement_record *o =
				placements_get(rn->p->placements, ids[j]);
			if (o == NULL || o->slot != slot)
				continue;
			for (unsigned x = 0; x < RES_MAX; x++)
				freed.v[x] += o->request.v[x];
		}
		struct res_vec used;
		int64_t nz_cpu, nz_mem;
		ledger_load_used(ledger_node(rn->l, slot), &used, &nz_cpu, &nz_mem);
		if (room_for(rn->pod, &rn->snap->nodes[slot].allocatable, &used, &freed))
			return true;
	}
	return false;
}

/* The choice's last test of a candidate: no approving manager bars it. */
static bool victim_ok(void *arg, uint64_t id)
{
	const struct reclaim_nodes *rn = arg;
	return !prod_barred_has(rn->barred, id);
}

/* Whether a manager keeps any of ids[0..n) (each asked, its asks
 * posted): then *out->kept counts them and the first's line is logged. */
static bool managers_keep(struct producers *p, const struct snapshot *snap,
			  const uint64_t *ids, uint32_t n,
			  struct producers_reclaimed *out)
{
	char why[640], first[640] = "";
	for (uint32_t i = 0; i < n; i++) {
		const struct placement_record *r = placements_get(p->placements, ids[i]);
		if (r == NULL)
			continue;
		uint32_t name = r->slot < snap->n_slots ? snap->nodes[r->slot].name : 0;
		const char *node = name != 0 ? intern_str(p->strings, name) : "?";
		if (!prod_approval_holds(p, ids[i], r, node, OP_APPROVAL_RECLAIM, why,
					 sizeof(why)))
			continue;
		if (out->kept++ == 0)
			snprintf(first, sizeof(first), "%s", why);
	}
	if (out->kept > 0)
		log_msg(LOG_LEVEL_INFO, "quota reclaim: %u victims chosen, none "
			"evicted: managers keep %u (%s%s); the preemptor waits", n,
			out->kept, first, out->kept > 1 ? "; ..." : "");
	return out->kept > 0;
}

int producers_reclaim(struct producers *p, const struct pod_spec *pod,
		      producers_reclaim_choose_fn choose, void *choose_arg,
		      producers_notice_fn notice, void *notice_arg,
		      struct producers_reclaimed *out)
{
	*out = (struct producers_reclaimed){0};
	pthread_mutex_lock(&p->lock);
	const struct snapshot *snap = cluster_snapshot(p->cluster);
	struct reclaim_nodes rn = {.p = p, .snap = snap,
				   .l = cluster_ledger(p->cluster), .pod = pod,
				   .asks = prod_approval_asks(p, OP_APPROVAL_RECLAIM)};
	int rc = 0;
	if (rn.asks && (rn.barred = malloc(sizeof(*rn.barred))) != NULL)
		prod_approval_barred(p, OP_APPROVAL_RECLAIM, rn.barred);
	rn.ok = calloc(snap->n_slots ? snap->n_slots : 1, 1);
	if (rn.ok == NULL || (rn.asks && rn.barred == NULL)) {
		rc = -ENOMEM;
		goto done;
	}
	bool any = false;
	struct res_vec none = {0};
	for (uint32_t s = 0; s < snap->n_slots; s++) {
		const struct node_spec *n = &snap->nodes[s];
		if (!snap->present[s] || !filter_unschedulable(p->ctx, pod, n) ||
		    !filter_node_name(pod, n) || filter_taints(pod, n) >= 0 ||
		    !filter_affinity(p->ctx, pod, n) || !filter_device_model(pod, n) ||
		    !room_for(pod, &n->allocatable, &none, NULL))
			continue;
		rn.ok[s] = 1;
		any = true;
		struct res_vec used;
		int64_t nz_cpu, nz_mem;
		ledger_load_used(ledger_node(rn.l, s), &used, &nz_cpu, &nz_mem);
		if (room_for(pod, &n->allocatable, &used, NULL)) {
			/* node_ok says yes to anything now: ok[] unread. */
			rn.fits_now = true;
			break;
		}
	}
	if (!any) {
		out->no_node = true;
		goto done;
	}
	const uint64_t *ids = NULL;
	uint32_t n = 0;
	char why[SHMSCHED_MESSAGE_MAX] = "";
	rc = choose(choose_arg, node_ok, rn.asks ? victim_ok : NULL, &rn, &ids, &n,
		    why, sizeof(why));
	if (rc < 0 || (rn.asks && managers_keep(p, snap, ids, n, out)))
		goto done;
	struct pod_spec vpod;
	for (uint32_t i = 0; i < n; i++) {
		const struct placement_record *r = placements_get(p->placements, ids[i]);
		if (r == NULL)
			continue; /* cannot be: no release runs under the lock */
		uint32_t slot = r->slot;
		bool on_node = ledger_node_generation(rn.l, slot) == r->node_gen;
		placement_use(r, &vpod);
		struct device_assignment dev = r->dev;
		prod_tell_evicted(p, r, ids[i], notice, notice_arg, why);
		if (rn.asks)
			prod_approval_evicted(p, ids[i]);
		if (on_node)
			ledger_account(rn.l, slot, &vpod, &dev, -1);
		prod_forget(p, ids[i]); /* the quota given back (qc_on_free) */
		if (on_node)
			prod_publish(p, queue_event_release(slot, &vpod, &dev));
		out->evicted++;
	}
done:
	pthread_mutex_unlock(&p->lock);
	free(rn.barred);
	free(rn.ok);
	return rc;
}
