/* Preemption's execution, for the evictor thread (daemon/evict.c, which
 * carries the request of a waiting pod's worker, daemon/wait.c, here and
 * the outcome back). Under the producers' lock, so that no release or
 * node event runs meanwhile: the placements of lower priority that the
 * preemptor's policy lets it evict, grouped by node; the choice of node
 * and victims (workers/preempt.c, DefaultPreemption); one ledger_swap
 * (shm/ledger.c: the preemptor's use in, the victims' out); then the
 * victims' records freed, their owners told and their room published.
 * It lives in ingest/, not beside its request and reply in daemon/, because
 * it reads the producer table, the identities' rules and the placement
 * records under the producers' lock, which daemon/ reaches only through
 * ingest/producers.h. Calls producers_policy.c (prod_rule_of,
 * prod_group_namespace) and producers.c (prod_forget, prod_publish).
 * Cost: one walk of the placement table per request (each possible victim
 * kept as its record's address), a counting sort by node, and the
 * choice's visits, which read the records of the visited nodes' pods
 * only (a tenth of the nodes, kube's numCandidates); the buffers are kept
 * between requests (struct producers' pre_*).
 */
#include "ingest/producers_internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ingest/pdb.h"
#include "base/base.h"
#include "policy/policy.h"
#include "shm/shm.h"
#include "workers/workers.h"

_Static_assert(PDB_CHOICE_MAX <= PREEMPT_MAX_PDBS, "a choice's budgets fit its masks");

/* A pod that may be a victim, as the walk finds it: its record, read
 * into a struct preempt_pod only when the choice visits its node
 * (preempt_visit). */
struct found {
	uint32_t slot;
	uint32_t pdbs; /* pdb_matcher_mask's, taken during the walk: the
			* matcher hands out its bits before pdb_matcher_finish */
	uint64_t id;
	const struct placement_record *rec;
};

/* The preemptor's static filters on a node: only there can evicting pods
 * help (nodesWherePreemptionMightHelp). */
static bool preempt_static_pass(const struct plugin_ctx *ctx, const struct pod_spec *pod,
				const struct node_spec *node)
{
	return filter_unschedulable(ctx, pod, node) && filter_node_name(pod, node) &&
	       filter_taints(pod, node) < 0 && filter_affinity(ctx, pod, node) &&
	       filter_device_model(pod, node);
}

/* The choice's visit of a node: its counters now, and whether the
 * preemptor's static filters let it in; if so, its pods, from their
 * records (unchanged under the lock). */
struct preempt_visit_ctx {
	const struct plugin_ctx *ctx;
	const struct pod_spec *pod;
	const struct snapshot *snap;
	struct ledger *l;
	const struct found *sorted; /* [n]: by node, as pods[] is */
	struct preempt_pod *pods;
};

static bool preempt_visit(void *arg, struct preempt_node *nd)
{
	struct preempt_visit_ctx *v = arg;
	if (!preempt_static_pass(v->ctx, v->pod, &v->snap->nodes[nd->slot]))
		return false;
	nd->allocatable = v->snap->nodes[nd->slot].allocatable;
	int64_t nz_cpu, nz_mem;
	ledger_load_used(ledger_node(v->l, nd->slot), &nd->used, &nz_cpu, &nz_mem);
	for (uint32_t i = nd->first; i < nd->first + nd->n; i++) {
		const struct found *f = &v->sorted[i];
		v->pods[i] = (struct preempt_pod){
			.id = f->id, .priority = f->rec->priority,
			.start_ns = f->rec->placed_ns, .request = f->rec->request,
			.pdbs = f->pdbs};
	}
	return true;
}

/* Whether a preemptor under rule `r` (any_ns: it may evict any namespace)
 * whose template narrowed its rights to `scope` (NULL: not narrowed) may
 * evict pods of group `group`: their namespace among the rule's
 * disruptNamespaces and in the scope; a pod of no known namespace, never.
 * Decided once per group in a preemption (`cache`, direct-mapped: a
 * group's decoding costs more than a lookup). */
struct disrupt_cache {
	uint32_t group[64];
	bool ok[64];
};

static bool may_disrupt(const struct producers *p, const struct policy_rule *r,
			bool any_ns, const struct policy_scope *scope,
			struct disrupt_cache *cache, uint32_t group)
{
	unsigned at = group & 63u;
	if (group != 0 && cache->group[at] == group)
		return cache->ok[at];
	uint32_t ns = prod_group_namespace(p, group);
	const char *s = ns != 0 ? intern_str(p->strings, ns) : NULL;
	bool ok = s != NULL && (any_ns || policy_allows_disrupt(r, s, strlen(s))) &&
		  (scope == NULL || policy_scope_allows(scope, s, strlen(s)));
	cache->group[at] = group;
	cache->ok[at] = ok;
	return ok;
}

static int preempt_locked(struct producers *p, const struct preempt_request *rq,
			  producers_notice_fn notice, void *arg,
			  struct preempt_outcome *out)
{
	struct producer *me = rq->producer < PRODUCERS_MAX ? p->table[rq->producer] : NULL;
	if (me == NULL || producers_key(me) != rq->key || rq->template_id == 0 ||
	    rq->template_id > me->n_templates)
		return 0; /* gone meanwhile: nothing to do for it */
	const struct pod_spec *tmpl = &me->templates[rq->template_id - 1];
	/* Under the lock no node event runs: this snapshot stays current. */
	const struct snapshot *snap = cluster_snapshot(p->cluster);
	struct ledger *l = cluster_ledger(p->cluster);
	int rc = -ENOMEM;
	struct pod_spec *vspec = NULL;
	struct device_assignment *vdev = NULL;
	struct preempt_scratch scratch = {0};
	struct preempt_result *res = malloc(sizeof(*res));
	size_t slots = (snap->n_slots ? snap->n_slots : 1) * sizeof(uint32_t);
	if (slots > p->pre_ok_cap) {
		uint8_t *g = realloc(p->pre_ok, slots);
		if (g == NULL)
			goto done;
		p->pre_ok = g;
		p->pre_ok_cap = slots;
	}
	uint8_t *ok = p->pre_ok;
	memset(ok, 0, slots);
	if (p->pdb_m == NULL)
		p->pdb_m = malloc(sizeof(*p->pdb_m));
	if (res == NULL || p->pdb_m == NULL)
		goto done;
	/* The budgets each victim's removal would break (ingest/pdb.h). */
	struct pdb_matcher *pm = p->pdb_m;
	pdb_matcher_init(pm, p->pdbs, p->strings);
	bool counting = pdb_matcher_counts(pm);
	/* Whose pods the preemptor may evict (policy/policy.h): the others
	 * stay, as pods of higher priority do, before the choice. */
	const struct policy_rule *rule = prod_rule_of(p, me);
	bool any_ns = p->policy == NULL || me->role == ROLE_ADMIN ||
		      policy_disrupts_any(rule);
	/* A scoped template narrows that (OP_TEMPLATE_SCOPED), never widens. */
	const struct policy_scope *scope = me->templates_scope != NULL
		? me->templates_scope[rq->template_id - 1] : NULL;
	bool any_victim = any_ns && scope == NULL;
	struct disrupt_cache dcache = {{0}};
	/* Only pods of lower priority can be victims (the others are in the
	 * node's counters, which the choice reads from the ledger); grouped
	 * by node by a counting sort (pre_ok counts per slot, then is the
	 * next place of each). Nodes are looked at only as the choice visits
	 * them (preempt_visit): their counters and static filters. */
	size_t n = 0;
	uint32_t *count = (uint32_t *)(void *)ok; /* [n_slots] */
	bool masking = p->pdbs != NULL && p->pdbs->n > 0; /* else every mask 0 */
	uint32_t high = placements_high_water(p->placements);
	for (uint32_t at_rec = 0; at_rec < high; at_rec++) {
		uint64_t id;
		const struct placement_record *r = placements_at(p->placements, at_rec, &id);
		if (r == NULL || !ledger_slot_current(l, snap, r->slot, r->node_gen))
			continue;
		if (counting)
			pdb_matcher_count(pm, r->group);
		if (r->priority >= rq->spec.priority)
			continue;
		if (!any_victim && !may_disrupt(p, rule, any_ns, scope, &dcache,
						r->group))
			continue;
		if (n == p->pre_cap) {
			/* pre_found: [0, pre_cap) as found, then sorted. */
			size_t nc = p->pre_cap ? p->pre_cap * 2 : 1024;
			struct found *g = realloc(p->pre_found, 2 * nc * sizeof(*g));
			if (g != NULL)
				p->pre_found = g;
			struct preempt_node *gn = realloc(p->pre_nodes, nc * sizeof(*gn));
			if (gn != NULL)
				p->pre_nodes = gn;
			struct preempt_pod *gp = realloc(p->pre_pods, nc * sizeof(*gp));
			if (gp != NULL)
				p->pre_pods = gp;
			if (g == NULL || gn == NULL || gp == NULL)
				goto done;
			p->pre_cap = nc;
		}
		p->pre_found[n] = (struct found){
			.slot = r->slot, .id = id, .rec = r,
			.pdbs = masking ? pdb_matcher_mask(pm, r->group) : 0};
		count[r->slot]++;
		n++;
	}
	struct found *f = p->pre_found, *sorted = p->pre_found + p->pre_cap;
	struct preempt_node *nodes = p->pre_nodes;
	struct preempt_pod *pods = p->pre_pods;
	if (n == 0) {
		rc = 0;
		goto done;
	}
	uint32_t n_nodes = 0, most = 1, at = 0;
	for (uint32_t slot = 0; slot < snap->n_slots; slot++) {
		if (count[slot] == 0)
			continue;
		struct preempt_node *nd = &nodes[n_nodes++];
		nd->slot = slot; /* its allocatable: at the visit */
		nd->first = at;
		nd->n = 0;
		most = count[slot] > most ? count[slot] : most;
		at += count[slot];
		count[slot] = nd->first; /* now: where its next pod goes */
	}
	for (size_t i = 0; i < n; i++)
		sorted[count[f[i].slot]++] = f[i];
	for (uint32_t j = 0; j < n_nodes; j++)
		nodes[j].n = count[nodes[j].slot] - nodes[j].first;
	if (preempt_scratch_init(&scratch, most) < 0)
		goto done;
	struct preempt_visit_ctx vc = {.ctx = p->ctx, .pod = tmpl, .snap = snap, .l = l,
				       .sorted = sorted, .pods = pods};
	/* DryRunPreemption's random offset (one stream, the evictor's). */
	p->pre_rng = p->pre_rng * UINT64_C(6364136223846793005) + 1442695040888963407u;
	uint32_t n_pdbs;
	const int32_t *pdb_allowed = pdb_matcher_finish(pm, &n_pdbs);
	struct preempt_input in = {.request = &rq->spec.request,
				   .pdb_allowed = pdb_allowed, .n_pdbs = n_pdbs,
				   .priority = rq->spec.priority, .nodes = nodes,
				   .n_nodes = n_nodes, .pods = pods,
				   .start = (uint32_t)((p->pre_rng >> 33) % n_nodes),
				   .want = preempt_candidates_wanted(snap->n_nodes),
				   .visit = preempt_visit, .visit_arg = &vc};
	rc = preempt_select(&in, &scratch, res);
	if (rc < 0 || res->node < 0) {
		out->candidates = res->candidates;
		rc = rc == -E2BIG ? 0 : rc;
		goto done;
	}
	out->candidates = res->candidates;
	const struct preempt_node *chosen = &nodes[res->node];
	vspec = malloc((res->n_victims ? res->n_victims : 1) * sizeof(*vspec));
	vdev = malloc((res->n_victims ? res->n_victims : 1) * sizeof(*vdev));
	if (vspec == NULL || vdev == NULL) {
		rc = -ENOMEM;
		goto done;
	}
	for (uint32_t k = 0; k < res->n_victims; k++) {
		const struct placement_record *r = placements_get(p->placements,
								  pods[res->victims[k]].id);
		placement_use(r, &vspec[k]);
		vdev[k] = r->dev;
	}
	if (ledger_swap(l, chosen->slot, &chosen->allocatable, &rq->spec, vspec, vdev,
			res->n_victims) < 0)
		goto done; /* the room went to another placement: none this time */
	for (uint32_t k = 0; k < res->n_victims; k++) {
		uint64_t vid = pods[res->victims[k]].id;
		/* Read above for vspec under the same lock: still there. */
		const struct placement_record *vr = placements_get(p->placements, vid);
		pdb_table_evicted(p->pdbs, p->strings, &pm->scratch, vr->group);
		char why[SHMSCHED_MESSAGE_MAX];
		snprintf(why, sizeof(why), "preempted by a pod of priority %d "
			 "(its own: %d): what it held is given back",
			 rq->spec.priority, vr->priority);
		prod_tell_evicted(p, vr, vid, notice, arg, why);
		prod_forget(p, vid);
	}
	out->slot = chosen->slot;
	out->node_gen = ledger_node_generation(l, chosen->slot);
	out->victims = res->n_victims;
	/* What the victims held beyond the preemptor's is free now. */
	for (uint32_t k = 0; k < res->n_victims; k++)
		prod_publish(p, queue_event_release(chosen->slot, &vspec[k], &vdev[k]));

done:
	preempt_scratch_free(&scratch);
	free(vdev);
	free(vspec);
	free(res);
	return rc;
}

int producers_preempt(struct producers *p, const struct preempt_request *rq,
		      producers_notice_fn notice, void *arg,
		      struct preempt_outcome *out)
{
	*out = (struct preempt_outcome){.slot = -1};
	pthread_mutex_lock(&p->lock);
	int rc = preempt_locked(p, rq, notice, arg, out);
	pthread_mutex_unlock(&p->lock);
	return rc;
}
