/* What the daemon's node lifecycle (daemon/taint_evict_internal.h) reads
 * of the nodes and does to their pods, under the producers' lock: each
 * present node's zone, and the NoExecute taint manager's evictions (and,
 * through the same eviction, one placement by id: producers_evict_one).
 *
 * The zone, as Kubernetes' nodetopology.GetZoneKey
 * (pkg/controller/nodelifecycle/node_lifecycle_controller.go groups nodes
 * by it): failure-domain.beta.kubernetes.io/zone when the node has that
 * label, else topology.kubernetes.io/zone; the region likewise
 * (failure-domain.beta.kubernetes.io/region, else
 * topology.kubernetes.io/region); a node with neither is in the zone ""
 * with every other such node. Values are intern ids, an empty value 0.
 */
#include "ingest/producers_internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/base.h"
#include "ingest/pdb.h"
#include "shm/shm.h"

static const char *const zone_keys[2] = {"failure-domain.beta.kubernetes.io/zone",
					 "topology.kubernetes.io/zone"};
static const char *const region_keys[2] = {"failure-domain.beta.kubernetes.io/region",
					   "topology.kubernetes.io/region"};

/* Ids of the two keys (0: no string has that name, no node the label). */
static void key_ids(const struct producers *p, const char *const names[2],
		    uint32_t ids[2])
{
	for (int i = 0; i < 2; i++)
		if (!intern_find(p->strings, names[i], strlen(names[i]), &ids[i]))
			ids[i] = 0;
}

/* The first of the two labels the node has (beta before GA), 0 none. */
static uint32_t label_of(const struct producers *p, const struct node_spec *n,
			 const uint32_t ids[2])
{
	for (int i = 0; i < 2; i++) {
		uint32_t v;
		if (ids[i] != 0 && labels_get(n->labels, n->n_labels, ids[i], &v))
			return v != 0 && intern_len(p->strings, v) > 0 ? v : 0;
	}
	return 0;
}

int producers_node_zones(struct producers *p,
			 void (*fn)(void *arg, uint32_t name, uint32_t region,
				    uint32_t zone),
			 void *arg)
{
	pthread_mutex_lock(&p->lock);
	uint32_t zk[2], rk[2];
	key_ids(p, zone_keys, zk);
	key_ids(p, region_keys, rk);
	/* The writer's lock is held: this snapshot is not freed under it. */
	const struct snapshot *snap = cluster_snapshot(p->cluster);
	int k = 0;
	for (uint32_t i = 0; i < snap->n_slots; i++) {
		if (!snap->present[i])
			continue;
		const struct node_spec *n = &snap->nodes[i];
		fn(arg, n->name, label_of(p, n, rk), label_of(p, n, zk));
		k++;
	}
	pthread_mutex_unlock(&p->lock);
	return k;
}

/* --- the NoExecute taint manager ------------------------------------------
 *
 * Kubernetes' pkg/controller/tainteviction/taint_eviction.go, for each pod
 * on a node with NoExecute taints (processPodOnNode):
 *   - GetMatchingTolerations: for each NoExecute taint the first of the
 *     pod's tolerations that tolerates it (v1.Toleration.ToleratesTaint);
 *     a taint none tolerates: the pod is deleted at once;
 *   - getMinTolerationTime over those tolerations: the least
 *     tolerationSeconds (one <= 0: at once); none has tolerationSeconds:
 *     never (a scheduled deletion is cancelled).
 * The pod's tolerations come from the caller (the daemon keeps those a
 * NoExecute taint can match, per placement, as it places pods); a
 * placement it does not know (a bound pod, one placed before a restart)
 * has none.
 *
 * DefaultTolerationSeconds (plugin/pkg/admission/defaulttolerationseconds,
 * kube-apiserver's admission, on by default, for every pod created):
 * a pod with no toleration whose key is node.kubernetes.io/not-ready (or
 * unreachable), or empty, with effect NoExecute or empty, is given
 * {key: that, operator: Exists, effect: NoExecute, tolerationSeconds: 300},
 * after its own. It is applied here, when the taint manager reads the
 * tolerations, and not when a template is decoded: every pod the API
 * creates has been through it, but the scheduler's taint filter must not
 * see it (it would let new pods onto an unreachable node, which Kubernetes
 * keeps them off with a NoSchedule taint this daemon does not set). */

#define DEFAULT_TOLERATION_SECONDS 300

static const char not_ready_key[] = "node.kubernetes.io/not-ready";

/* v1.Toleration.ToleratesTaint. */
static bool tolerates(const struct toleration *t, const struct taint *taint)
{
	if (t->effect != TAINT_EFFECT_ALL && t->effect != taint->effect)
		return false;
	if (t->key != 0 && t->key != taint->key)
		return false;
	if (t->op == TOL_EXISTS)
		return true;
	return t->value == taint->value;
}

static bool has_no_execute(const struct node_spec *n)
{
	for (int i = 0; i < n->n_taints; i++)
		if (n->taints[i].effect == TAINT_NO_EXECUTE)
			return true;
	return false;
}

struct tol_list {
	unsigned n;
	struct toleration t[POD_MAX_TOLERATIONS + 2];
};

/* The admission plugin's check for `key` (0: no string has that name, so
 * no taint: nothing to add). */
static void add_default(struct tol_list *l, uint32_t key)
{
	if (key == 0)
		return;
	for (unsigned i = 0; i < l->n; i++)
		if ((l->t[i].key == key || l->t[i].key == 0) &&
		    (l->t[i].effect == TAINT_NO_EXECUTE ||
		     l->t[i].effect == TAINT_EFFECT_ALL))
			return;
	l->t[l->n++] = (struct toleration){.key = key, .op = TOL_EXISTS,
					   .effect = TAINT_NO_EXECUTE,
					   .has_seconds = 1,
					   .seconds = DEFAULT_TOLERATION_SECONDS};
}

/* processPodOnNode's verdict: -1 never; else the ns the pod tolerates the
 * node's NoExecute taints (0: none tolerated, at once), and in *why the
 * taint that decided. */
static int64_t verdict(const struct tol_list *l, const struct node_spec *n,
		       const struct taint **why)
{
	int64_t min = -1;
	for (int i = 0; i < n->n_taints; i++) {
		const struct taint *taint = &n->taints[i];
		if (taint->effect != TAINT_NO_EXECUTE)
			continue;
		unsigned j = 0;
		while (j < l->n && !tolerates(&l->t[j], taint))
			j++;
		if (j == l->n) {
			*why = taint;
			return 0;
		}
		if (!l->t[j].has_seconds)
			continue;
		int64_t ns = l->t[j].seconds <= 0 ? 0
			   : (int64_t)l->t[j].seconds * 1000000000;
		if (min < 0 || ns < min) {
			min = ns;
			*why = taint;
		}
	}
	return min;
}

static void evict(struct producers *p, uint64_t id, const struct placement_record *r,
		  const char *why)
{
	struct pod_spec *pod = malloc(sizeof(*pod));
	if (pod == NULL)
		return; /* counted by the caller's next pass: it is still there */
	struct ledger *l = cluster_ledger(p->cluster);
	placement_use(r, pod);
	uint32_t slot = r->slot;
	struct device_assignment dev = r->dev;
	if (p->pdbs != NULL) {
		if (p->pdb_m == NULL)
			p->pdb_m = malloc(sizeof(*p->pdb_m));
		if (p->pdb_m != NULL)
			pdb_table_evicted(p->pdbs, p->strings, &p->pdb_m->scratch,
					  r->group);
	}
	prod_tell_evicted(p, r, id, p->notice, p->notice_arg, why);
	ledger_account(l, slot, pod, &dev, -1);
	prod_forget(p, id);
	prod_publish(p, queue_event_release(slot, pod, &dev));
	free(pod);
}

int producers_evict_one(struct producers *p, uint64_t id, const char *why, char *pod,
			size_t pod_len, char *node, size_t node_len)
{
	pthread_mutex_lock(&p->lock);
	const struct placement_record *r = placements_get(p->placements, id);
	int rc = -ENOENT;
	if (r != NULL && r->owner != PLACEMENT_OWNER_BOUND) {
		const struct snapshot *snap = cluster_snapshot(p->cluster);
		snprintf(pod, pod_len, "%s",
			 r->pod_name != 0 ? intern_str(p->strings, r->pod_name) : "");
		snprintf(node, node_len, "%s",
			 r->slot < snap->n_slots && snap->present[r->slot]
				 ? intern_str(p->strings, snap->nodes[r->slot].name)
				 : "");
		evict(p, id, r, why);
		rc = 0;
	}
	pthread_mutex_unlock(&p->lock);
	return rc;
}

int producers_taint_evict(struct producers *p,
			  unsigned (*tols)(void *arg, uint64_t id, struct toleration *out),
			  bool (*due)(void *arg, uint64_t id, int64_t tolerate_ns),
			  void *arg, uint32_t *evicted)
{
	*evicted = 0;
	pthread_mutex_lock(&p->lock);
	const struct snapshot *snap = cluster_snapshot(p->cluster);
	bool any = false;
	for (uint32_t i = 0; i < snap->n_slots && !any; i++)
		any = snap->present[i] && has_no_execute(&snap->nodes[i]);
	if (!any) {
		pthread_mutex_unlock(&p->lock);
		return 0;
	}
	uint32_t unreachable = 0, not_ready = 0;
	if (!intern_find(p->strings, PRODUCERS_UNREACHABLE_TAINT,
			 sizeof(PRODUCERS_UNREACHABLE_TAINT) - 1, &unreachable))
		unreachable = 0;
	if (!intern_find(p->strings, not_ready_key, sizeof(not_ready_key) - 1,
			 &not_ready))
		not_ready = 0;
	struct ledger *l = cluster_ledger(p->cluster);
	static struct tol_list tl; /* under the lock alone */
	uint32_t cursor = 0;
	uint64_t id;
	int seen = 0;
	while ((id = placements_next(p->placements, &cursor)) != 0) {
		const struct placement_record *r = placements_get(p->placements, id);
		if (r == NULL || !ledger_slot_current(l, snap, r->slot, r->node_gen))
			continue;
		const struct node_spec *n = &snap->nodes[r->slot];
		if (!has_no_execute(n))
			continue;
		tl.n = tols(arg, id, tl.t);
		add_default(&tl, not_ready);
		add_default(&tl, unreachable);
		const struct taint *why = NULL;
		int64_t ns = verdict(&tl, n, &why);
		if (ns < 0)
			continue; /* tolerated forever */
		seen++;
		if (!due(arg, id, ns))
			continue;
		char msg[SHMSCHED_MESSAGE_MAX];
		const char *node = intern_str(p->strings, n->name);
		const char *key = why && why->key ? intern_str(p->strings, why->key) : "";
		if (ns == 0)
			snprintf(msg, sizeof(msg), "evicted by the taint manager: node "
				 "%.120s has taint %.120s:NoExecute, which the pod does "
				 "not tolerate", node ? node : "?", key ? key : "?");
		else
			snprintf(msg, sizeof(msg), "evicted by the taint manager: node "
				 "%.120s has taint %.120s:NoExecute, which the pod "
				 "tolerates for %lld s only", node ? node : "?",
				 key ? key : "?", (long long)(ns / 1000000000));
		log_msg(LOG_LEVEL_INFO, "placement %llu: %s", (unsigned long long)id, msg);
		evict(p, id, r, msg);
		(*evicted)++;
	}
	pthread_mutex_unlock(&p->lock);
	return seen;
}

void producers_locked(struct producers *p, void (*fn)(void *arg, struct intern *strings),
		      void *arg)
{
	pthread_mutex_lock(&p->lock);
	fn(arg, p->strings);
	pthread_mutex_unlock(&p->lock);
}

void producers_placements_gone(struct producers *p, uint64_t *ids, uint32_t n)
{
	pthread_mutex_lock(&p->lock);
	for (uint32_t i = 0; i < n; i++)
		if (ids[i] != 0 && placements_get(p->placements, ids[i]) == NULL)
			ids[i] = 0;
	pthread_mutex_unlock(&p->lock);
}
