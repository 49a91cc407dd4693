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
 * Cost (budgets: see below): the node chains (shm/placements.h,
 * PN1, PN2): every node slot is handed to the choice, from a random one
 * on (kube's offset among every node where preemption might help), and
 * its visit reads its chain: a node without a possible victim is no
 * candidate, one with them has their records summed up (how many, the
 * lowest priority, the latest start, their requests; the sums are kept
 * per node between requests while the chain and the node are unchanged,
 * with the node's counters, in the rows of ingest/preempt_rows.h, PK1-PK5,
 * so most visits read no record). For a preemptor whose rights reach
 * every namespace and whose static filters a bare node passes at once,
 * preempt_select reads those rows itself, a few loads from dense arrays
 * a node, and calls back (chain_probe) only for a node not bare or with
 * pods of its priority or above; and only a node that might beat the
 * best so far is read record by record
 * (chain_visit, in index order, the walk's) and worked out pod by pod
 * (preempt_select's shortcut, workers/preempt.h). So a request reads the
 * nodes the choice visits (kube's numCandidates, a tenth of them: fewer
 * when most are candidates) and the records of those whose chain changed
 * since (or whose pods are not all below the preemptor), not the table,
 * and copies out the pods of a few of them. With budgets that carry a
 * status (disruptionsAllowed, as the disruption controller writes it) or
 * maxUnavailable, the same (PB2): each budget's disruptions allowed is
 * its own figure less this daemon's evictions, O(1), and a possible
 * victim's budgets are a mask per pod group (pdb_matcher_mask, cached),
 * taken only for the pods of the nodes worked out pod by pod (the
 * summaries bound a node's scores whatever its violations: PB1,
 * workers/preempt.c). With a minAvailable budget without a status (it
 * counts every placed pod it selects), or while a manager is asked: one
 * walk of the placement table (each budget counts and masks every
 * placement; each possible victim kept as its record's address), a
 * counting sort by node, the walk's list started at its first node at or
 * after the random slot: the choice the chains make, which
 * producers_preempt_check() compares (stress.preempt_chains, with budgets
 * too). The buffers are kept between requests (struct producers' pre_*).
 *
 * Approving managers (issue 38 item 3; ingest/producers_approval.c, AQ1):
 * while a registration opted in (OP_APPROVAL_PREEMPT_TOO), the choice
 * is made from the walk, not the chains (their per-node sums would count
 * pods a manager bars), and a pod a manager bars now (denied within the
 * hold, not before a time still ahead, fail-closed past the deadline) is
 * no possible victim; the victims chosen are then asked, and when a
 * manager keeps any of them (not answered yet) nothing is evicted: the
 * preemptor gets no node this time and waits, as with no victims, until
 * the answer (or the time) publishes room anywhere (AQ1) and
 * it tries again. Why not choose around a pod not yet answered: quota
 * reclaim's reason (producers_reclaim.c): the ask is the manager's chance
 * to act first, and going around unanswered pods would evict the pods of
 * the managers that answer fastest.
 */
#include "ingest/producers_internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ingest/control_ops.h"
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

/* Placement records read to find victims (producers_preempt_records):
 * the walk's, every one below the high-water mark; the chains', those on
 * the chains visited and probed. Relaxed (stat_add): a figure. */
static uint64_t records_read;

/* The preemptor's static filters on a node: only there can evicting pods
 * help (nodesWherePreemptionMightHelp). */
static bool preempt_static_pass(const struct plugin_ctx *ctx, const struct pod_spec *pod,
				const struct node_spec *node)
{
	return filter_unschedulable(ctx, pod, node) && filter_node_name(pod, node) &&
	       filter_taints(pod, node) < 0 && filter_affinity(ctx, pod, node) &&
	       filter_device_model(pod, node);
}

/* Whether the pod's static filters can refuse a node only for its
 * taints or its unschedulable mark: no node name, node selector, required
 * node affinity or GPU model (filter_node_name, filter_affinity,
 * filter_device_model pass every node then). */
static bool preempt_plain(const struct pod_spec *pod)
{
	return pod->node_name == 0 && pod->n_selector == 0 && !pod->has_required &&
	       pod->n_gpu_models == 0;
}

/* preempt_static_pass for a pod preempt_plain() says so of: a node
 * without taints or the unschedulable mark passes at once (filter_taints
 * and filter_unschedulable pass it whatever the pod tolerates). */
static bool preempt_plain_pass(const struct plugin_ctx *ctx, const struct pod_spec *pod,
			       bool plain, const struct node_spec *node)
{
	if (plain && node->n_taints == 0 && !node->unschedulable)
		return true;
	return preempt_static_pass(ctx, pod, node);
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

/* Whose pods a preemptor may evict: lower priority, on a node as it is
 * now, and of a namespace its rights reach. */
struct victim_filter {
	struct producers *p;
	const struct snapshot *snap;
	struct ledger *l;
	int32_t priority;
	const struct policy_rule *rule;
	bool any_ns, any_victim;
	const struct policy_scope *scope;
	struct disrupt_cache dcache;
	bool asks; /* a registration is asked by preemption (AQ1) */
	const struct prod_barred *barred; /* then: the pods managers bar now */
};

static bool victim_ok(struct victim_filter *vf, const struct placement_record *r)
{
	return r->priority < vf->priority &&
	       ledger_slot_current(vf->l, vf->snap, r->slot, r->node_gen) &&
	       (vf->any_victim || may_disrupt(vf->p, vf->rule, vf->any_ns, vf->scope,
					      &vf->dcache, r->group));
}

/* What the choice is given: nodes in slot order, and where their pods
 * go (filled at the visits), and where the visits begin. */
struct collected {
	struct preempt_node *nodes;
	struct preempt_pod *pods;
	uint32_t n_nodes;
	uint32_t start;     /* nodes[start]: the first at or after the
			     * random slot (cyclically) */
	uint32_t most;      /* the scratch's first size */
	bool (*visit)(void *arg, struct preempt_node *node);
	void *visit_arg;
	/* The chains' shortcut (preempt_input.probe, with visit_arg); NULL:
	 * none (the walk's list holds only nodes with possible victims). */
	bool (*probe)(void *arg, struct preempt_node *node,
		      struct preempt_summary *out);
	const struct preempt_rows *rows; /* preempt_input.rows; NULL: none */
};

/* The walk: every placement read once (PDBs need it: their counts and
 * masks), possible victims grouped by node by a counting sort. Returns 0
 * or -ENOMEM; c->n_nodes 0 when there is none. */
static int collect_walk(struct victim_filter *vf, struct pdb_matcher *pm,
			bool counting, bool masking, uint32_t start_slot,
			struct preempt_visit_ctx *vc, struct collected *c)
{
	struct producers *p = vf->p;
	const struct snapshot *snap = vf->snap;
	size_t slots = (snap->n_slots ? snap->n_slots : 1) * sizeof(uint32_t);
	if (slots > p->pre_ok_cap) {
		uint8_t *g = realloc(p->pre_ok, slots);
		if (g == NULL)
			return -ENOMEM;
		p->pre_ok = g;
		p->pre_ok_cap = slots;
	}
	/* pre_ok counts per slot, then is the next place of each. */
	uint32_t *count = (uint32_t *)(void *)p->pre_ok; /* [n_slots] */
	memset(count, 0, slots);
	size_t n = 0;
	uint32_t high = placements_high_water(p->placements);
	for (uint32_t at_rec = 0; at_rec < high; at_rec++) {
		uint64_t id;
		const struct placement_record *r = placements_at(p->placements, at_rec, &id);
		if (r == NULL || !ledger_slot_current(vf->l, snap, r->slot, r->node_gen))
			continue;
		if (counting)
			pdb_matcher_count(pm, r->group);
		if (!victim_ok(vf, r) ||
		    (vf->asks && prod_barred_has(vf->barred, id)))
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
				return -ENOMEM;
			p->pre_cap = nc;
		}
		p->pre_found[n] = (struct found){
			.slot = r->slot, .id = id, .rec = r,
			.pdbs = masking ? pdb_matcher_mask(pm, r->group) : 0};
		count[r->slot]++;
		n++;
	}
	c->nodes = p->pre_nodes;
	c->pods = p->pre_pods;
	c->n_nodes = 0;
	c->start = 0;
	c->most = 1;
	c->visit = preempt_visit;
	c->visit_arg = vc;
	c->probe = NULL;
	c->rows = NULL;
	if (n == 0)
		return 0;
	struct found *f = p->pre_found, *sorted = p->pre_found + p->pre_cap;
	uint32_t at = 0;
	for (uint32_t slot = 0; slot < snap->n_slots; slot++) {
		if (count[slot] == 0)
			continue;
		if (slot < start_slot)
			c->start = c->n_nodes + 1; /* past it; n_nodes: wraps to 0 */
		struct preempt_node *nd = &c->nodes[c->n_nodes++];
		nd->slot = slot; /* its allocatable: at the visit */
		nd->first = at;
		nd->n = 0;
		c->most = count[slot] > c->most ? count[slot] : c->most;
		at += count[slot];
		count[slot] = nd->first; /* now: where its next pod goes */
	}
	if (c->start == c->n_nodes)
		c->start = 0;
	for (size_t i = 0; i < n; i++)
		sorted[count[f[i].slot]++] = f[i];
	for (uint32_t j = 0; j < c->n_nodes; j++)
		c->nodes[j].n = count[c->nodes[j].slot] - c->nodes[j].first;
	vc->sorted = sorted;
	vc->pods = c->pods;
	return 0;
}

/* The node chains' visit: the static filters, then the node's possible
 * victims from its chain (shm/placements.h, PN2), appended to pods[] and
 * put in index order, the walk's order (ties between pods as important
 * as each other go by it). */
struct chain_visit_ctx {
	const struct plugin_ctx *ctx;
	const struct pod_spec *pod;
	struct victim_filter *vf;
	const struct preempt_node *nodes; /* [n_slots]: nodes[slot] */
	struct preempt_pod *pods;
	size_t used, cap;  /* pods[] */
	struct preempt_scratch *scratch;
	uint32_t *idx;     /* [idx_cap]: a node's victims' record indices */
	size_t idx_cap;
	int error;         /* -ENOMEM: the scratch could not grow */
	unsigned n_want;   /* chain_probe sums these resources: those the */
	uint8_t want[RES_MAX]; /* preemptor requests, pods aside */
	bool plain;        /* the pod has no node name, selector, required
			    * node affinity or GPU model (preempt_plain_pass) */
	struct prows *rows;        /* the kept summaries (PK1); NULL: none */
	struct preempt_rows view;  /* theirs for preempt_select (c->rows) */
	struct pdb_matcher *pm;    /* the budgets' masks (PB2); NULL: none */
};

static bool chain_visit(void *arg, struct preempt_node *nd)
{
	struct chain_visit_ctx *v = arg;
	const struct snapshot *snap = v->vf->snap;
	const struct placements *t = v->vf->p->placements;
	nd->slot = (uint32_t)(nd - v->nodes);
	nd->first = (uint32_t)v->used;
	/* The possible victims' indices, put in order (insertion: a node
	 * holds tens of pods), then their pods. */
	uint32_t k = 0, read = 0;
	for (uint32_t i = placements_node_first(t, nd->slot); i != PLACEMENTS_NIL;
	     i = placements_node_next(t, i)) {
		uint64_t id;
		const struct placement_record *r = placements_at(t, i, &id);
		read++;
		if (r == NULL || !victim_ok(v->vf, r))
			continue;
		if (v->used + k == v->cap)
			return false; /* more than were placed when the request
				       * began: published meanwhile, not seen */
		if (k == v->idx_cap) {
			size_t nc = v->idx_cap ? 2 * v->idx_cap : 256;
			uint32_t *g = realloc(v->idx, nc * sizeof(*g));
			if (g == NULL) {
				v->error = -ENOMEM;
				return false;
			}
			v->idx = g;
			v->idx_cap = nc;
		}
		uint32_t j = k++;
		while (j > 0 && v->idx[j - 1] > i) {
			v->idx[j] = v->idx[j - 1];
			j--;
		}
		v->idx[j] = i;
	}
	stat_add(&records_read, read);
	for (uint32_t j = 0; j < k; j++) {
		uint64_t id;
		const struct placement_record *r = placements_at(t, v->idx[j], &id);
		v->pods[v->used++] = (struct preempt_pod){
			.id = id, .priority = r->priority, .start_ns = r->placed_ns,
			.request = r->request,
			.pdbs = v->pm != NULL ? pdb_matcher_mask(v->pm, r->group) : 0};
	}
	nd->n = k;
	/* No possible victim (the walk leaves such a node out), or the
	 * static filters refuse it. */
	if (nd->n == 0 || !preempt_static_pass(v->ctx, v->pod, &snap->nodes[nd->slot])) {
		v->used = nd->first;
		return false;
	}
	if (preempt_scratch_reserve(v->scratch, nd->n) < 0) {
		v->error = -ENOMEM;
		return false;
	}
	nd->allocatable = snap->nodes[nd->slot].allocatable;
	int64_t nz_cpu, nz_mem;
	ledger_load_used(ledger_node(v->vf->l, nd->slot), &nd->used, &nz_cpu, &nz_mem);
	return true;
}

static int check_on; /* producers_preempt_check's flag, below */
static uint64_t checks, check_mismatches;

/* Whether the tests' check is on. Relaxed: a flag. */
static bool checking(void)
{
	return __atomic_load_n(&check_on, __ATOMIC_RELAXED) != 0;
}

/* The rows' refresh (preempt_rows.refresh): PK1 over a chunk of slots,
 * with the tests' check when it is on (each difference a mismatch). */
static void rows_refresh(void *arg, uint32_t first, uint32_t n)
{
	struct chain_visit_ctx *v = arg;
	uint64_t mismatches = 0;
	prows_refresh(v->rows, v->vf->p->placements, v->vf->l, first, n, checking(),
		      &mismatches);
	if (mismatches > 0)
		stat_add(&check_mismatches, mismatches);
}

/* The shortcut's probe (preempt_input.probe): the node's chain summed
 * up (how many possible victims, the lowest priority and latest start
 * among them, their requests of the resources the preemptor asks for),
 * nothing copied, then the static filters;
 * chain_visit reads the chain again for the few nodes the choice works
 * out pod by pod. */
static bool chain_probe(void *arg, struct preempt_node *nd, struct preempt_summary *out)
{
	struct chain_visit_ctx *v = arg;
	const struct snapshot *snap = v->vf->snap;
	const struct placements *t = v->vf->p->placements;
	nd->slot = (uint32_t)(nd - v->nodes);
	uint32_t slot = nd->slot;
	if (v->rows != NULL) {
		/* Every victim_ok record of a present node is one of the
		 * summary's: all of them below the preemptor's priority, the
		 * summary is the probe's; none, no possible victim. */
		if (slot >= snap->n_slots || !snap->present[slot])
			return false;
		const struct prows *rw = v->rows;
		rows_refresh(v, slot, 1);
		if (rw->n[slot] == 0 || rw->low[slot] >= v->vf->priority)
			return false;
		if (rw->high[slot] < v->vf->priority) {
			out->n = rw->n[slot];
			out->low_priority = rw->low[slot];
			out->late_start = rw->late[slot];
			for (unsigned k = 0; k < v->n_want; k++)
				out->freed.v[v->want[k]] = rw->freed[v->want[k]][slot];
			goto filters;
		}
	}
	uint32_t i = placements_node_first(t, slot);
	if (i == PLACEMENTS_NIL)
		return false; /* nothing on it: no possible victim */
	out->n = 0;
	out->low_priority = INT32_MAX;
	out->late_start = 0;
	for (unsigned k = 0; k < v->n_want; k++)
		out->freed.v[v->want[k]] = 0;
	uint32_t read = 0;
	for (; i != PLACEMENTS_NIL; i = placements_node_next(t, i)) {
		uint64_t id;
		const struct placement_record *r = placements_at(t, i, &id);
		read++;
		if (r == NULL || !victim_ok(v->vf, r))
			continue;
		out->n++;
		if (r->priority < out->low_priority)
			out->low_priority = r->priority;
		if (r->placed_ns > out->late_start)
			out->late_start = r->placed_ns;
		for (unsigned k = 0; k < v->n_want; k++)
			out->freed.v[v->want[k]] += r->request.v[v->want[k]];
	}
	stat_add(&records_read, read);
filters:
	if (out->n == 0 || !preempt_plain_pass(v->ctx, v->pod, v->plain, &snap->nodes[slot]))
		return false;
	/* Only what the probe's reader reads (preempt_input.probe): pods and
	 * the resources asked for; chain_visit fills a node worked out whole
	 * (ledger_swap takes the chosen one's allocatable). */
	const struct res_vec *alloc = &snap->nodes[slot].allocatable;
	const struct node_alloc *a = ledger_node(v->vf->l, slot);
	nd->allocatable.v[RES_PODS] = alloc->v[RES_PODS];
	/* V1: relaxed, as ledger_load_used's. */
	nd->used.v[RES_PODS] = __atomic_load_n(&a->used[RES_PODS], __ATOMIC_RELAXED);
	for (unsigned k = 0; k < v->n_want; k++) {
		unsigned r = v->want[k];
		nd->allocatable.v[r] = alloc->v[r];
		/* V1: relaxed. */
		nd->used.v[r] = __atomic_load_n(&a->used[r], __ATOMIC_RELAXED);
	}
	return true;
}

/* The node chains: every node slot is given to the choice, from the
 * random one on, and its visit reads its chain: a node without a possible
 * victim is no candidate, as in the walk's list it is not there; so only
 * the nodes visited are read, and the walk's choice is made (the same
 * start: its list's first node at or after the random slot). Without a
 * PodDisruptionBudget that counts placed pods (the walk counts those). */
static int collect_chains(struct victim_filter *vf, uint32_t start_slot,
			  struct chain_visit_ctx *cv, struct collected *c)
{
	struct producers *p = vf->p;
	const struct snapshot *snap = vf->snap;
	const struct placements *t = p->placements;
	if (snap->n_slots > p->pre_inodes_cap) {
		struct preempt_node *g = realloc(p->pre_inodes, snap->n_slots * sizeof(*g));
		if (g == NULL)
			return -ENOMEM;
		p->pre_inodes = g;
		p->pre_inodes_cap = snap->n_slots;
	}
	/* Every record on a chain is below the high-water mark; those
	 * published meanwhile beyond it are not seen (chain_visit). */
	size_t want = (size_t)placements_high_water(t) + 1;
	if (want > p->pre_ipods_cap) {
		struct preempt_pod *g = realloc(p->pre_ipods, want * sizeof(*g));
		if (g == NULL)
			return -ENOMEM;
		p->pre_ipods = g;
		p->pre_ipods_cap = want;
	}
	/* The summaries: for a preemptor whose rights reach every
	 * namespace (victim_ok's may_disrupt is then true of every pod). */
	cv->rows = NULL;
	c->rows = NULL;
	if (vf->any_victim) {
		if (prows_prepare(&p->pre_rows, t, vf->l, snap) < 0)
			return -ENOMEM;
		cv->rows = &p->pre_rows;
		/* The rows in the loop itself: for a preemptor whose static
		 * filters a bare node passes at once (PK3). */
		if (cv->plain) {
			prows_view(&p->pre_rows, &cv->view);
			cv->view.refresh = rows_refresh;
			cv->view.refresh_arg = cv;
			c->rows = &cv->view;
		}
	}
	c->nodes = p->pre_inodes;
	c->pods = p->pre_ipods;
	c->n_nodes = snap->n_slots;
	c->start = start_slot;
	c->most = 16;
	c->visit = chain_visit;
	c->visit_arg = cv;
	c->probe = chain_probe;
	cv->nodes = c->nodes;
	cv->pods = c->pods;
	cv->used = 0;
	cv->cap = p->pre_ipods_cap;
	/* pre_ok: the walk's counts, a node's indices here. */
	cv->idx = (uint32_t *)(void *)p->pre_ok;
	cv->idx_cap = p->pre_ok_cap / sizeof(uint32_t);
	return 0;
}

/* Tests' check (producers_preempt_check): the choice both ways, and
 * (rows_refresh) each summary and counter kept against its chain and its
 * ledger record. check_on: __atomic,
 * relaxed, a flag; checks, check_mismatches: relaxed (stat_inc), figures. */

void producers_preempt_check(bool on)
{
	/* Relaxed: a flag, set before the requests it is for. */
	__atomic_store_n(&check_on, on, __ATOMIC_RELAXED);
}

void producers_preempt_checked(uint64_t *n, uint64_t *mismatches)
{
	*n = stat_read(&checks);
	*mismatches = stat_read(&check_mismatches);
}

uint64_t producers_preempt_records(void)
{
	return stat_read(&records_read);
}

/* The choice from `c`: 0 or -errno; res->node -1: none. */
static int choose(const struct preempt_request *rq, const struct collected *c,
		  uint32_t want, const int32_t *pdb_allowed,
		  uint32_t n_pdbs, struct preempt_scratch *scratch,
		  struct preempt_result *res)
{
	struct preempt_input in = {.request = &rq->spec.request,
				   .pdb_allowed = pdb_allowed, .n_pdbs = n_pdbs,
				   .priority = rq->spec.priority, .nodes = c->nodes,
				   .n_nodes = c->n_nodes, .pods = c->pods,
				   .start = c->start, .want = want,
				   .visit = c->visit, .visit_arg = c->visit_arg,
				   .probe = c->probe, .probe_arg = c->visit_arg,
				   .rows = c->rows};
	return preempt_select(&in, scratch, res);
}

/* Both ways for the check: the walk's choice against the chains' (`got`,
 * from `c`): the same node and the same victims, or a mismatch counted. */
static void check_against_walk(struct victim_filter *vf, struct pdb_matcher *pm,
			       const struct preempt_request *rq,
			       const struct pod_spec *tmpl, uint32_t start_slot,
			       uint32_t want, const struct collected *c, int got_rc,
			       const struct preempt_result *got)
{
	struct producers *p = vf->p;
	struct preempt_visit_ctx vc = {.ctx = p->ctx, .pod = tmpl, .snap = vf->snap,
				       .l = vf->l};
	struct collected w;
	struct preempt_scratch scratch = {0};
	struct preempt_result *res = malloc(sizeof(*res));
	/* The budgets' masks afresh, by the walk's matcher, bits handed out
	 * in its order: the same bits' budgets while they fit
	 * (PDB_CHOICE_MAX - 1 budgets among the possible victims). */
	bool masking = pm != NULL;
	struct pdb_matcher *wm = masking ? malloc(sizeof(*wm)) : NULL;
	if (wm != NULL)
		pdb_matcher_init(wm, vf->p->pdbs, vf->p->strings);
	bool same = false;
	if (res != NULL && (!masking || wm != NULL) &&
	    collect_walk(vf, wm, false, masking, start_slot, &vc, &w) == 0) {
		int rc = 0;
		res->node = -1;
		res->candidates = 0;
		if (w.n_nodes > 0) {
			uint32_t n_pdbs = 0;
			const int32_t *allowed = masking ? pdb_matcher_finish(wm, &n_pdbs) : NULL;
			rc = -ENOMEM;
			if (preempt_scratch_init(&scratch, w.most) == 0)
				rc = choose(rq, &w, want, allowed, n_pdbs, &scratch, res);
		}
		same = rc == got_rc && res->candidates == got->candidates &&
		       (res->node < 0) == (got->node < 0) &&
		       (res->node < 0 || w.nodes[res->node].slot ==
					 c->nodes[got->node].slot);
		if (same && res->node >= 0) {
			same = res->n_victims == got->n_victims;
			for (uint32_t k = 0; same && k < res->n_victims; k++)
				same = w.pods[res->victims[k]].id ==
				       c->pods[got->victims[k]].id;
		}
	}
	stat_inc(&checks);
	if (!same)
		stat_inc(&check_mismatches);
	preempt_scratch_free(&scratch);
	free(wm);
	free(res);
}

/* Whether a manager keeps any of the victims chosen on node `slot` (each
 * asked, its asks posted); logged. */
static bool managers_keep(struct producers *p, const struct snapshot *snap,
			  uint32_t slot, const struct preempt_pod *pods,
			  const struct preempt_result *res)
{
	uint32_t name = slot < snap->n_slots ? snap->nodes[slot].name : 0;
	const char *node = name != 0 ? intern_str(p->strings, name) : "?";
	char why[640], first[640] = "";
	uint32_t kept = 0;
	for (uint32_t k = 0; k < res->n_victims; k++) {
		uint64_t id = pods[res->victims[k]].id;
		const struct placement_record *r = placements_get(p->placements, id);
		if (r == NULL || !prod_approval_holds(p, id, r, node, OP_APPROVAL_PREEMPT,
						      why, sizeof(why)))
			continue;
		if (kept++ == 0)
			snprintf(first, sizeof(first), "%s", why);
	}
	if (kept > 0)
		log_msg(LOG_LEVEL_INFO, "preemption on node %s: %u victims chosen, "
			"none evicted: managers keep %u (%s%s); the preemptor waits",
			node, res->n_victims, kept, first, kept > 1 ? "; ..." : "");
	return kept > 0;
}

/* EW3: a victim's message, "preempted by a pod of priority P (its own:
 * Q): what it held is given back", made from its pieces: snprintf's two
 * %d were ~1.2 K instructions a victim (docs/perf/2026-11-29-preemption-5.md).
 * The pieces and two numbers fit SHMSCHED_MESSAGE_MAX many times over. */
#define WHY_BY "preempted by a pod of priority "
#define WHY_OWN " (its own: "
#define WHY_END "): what it held is given back"
_Static_assert(sizeof(WHY_BY) + sizeof(WHY_OWN) + sizeof(WHY_END) +
	       2 * STRCONV_INT64_MAX_LEN <= SHMSCHED_MESSAGE_MAX,
	       "a victim's message fits");

static void preempted_why(char out[SHMSCHED_MESSAGE_MAX], int32_t by, int32_t own)
{
	char *at = out;
	memcpy(at, WHY_BY, sizeof(WHY_BY) - 1);
	at += sizeof(WHY_BY) - 1;
	at += strconv_format_int64(at, by);
	memcpy(at, WHY_OWN, sizeof(WHY_OWN) - 1);
	at += sizeof(WHY_OWN) - 1;
	at += strconv_format_int64(at, own);
	memcpy(at, WHY_END, sizeof(WHY_END)); /* with its NUL */
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
	struct prod_barred *barred = NULL; /* AQ1: while a manager asks */
	/* EW2: the result, the scratch and the victims' uses are the
	 * producers' (pre_*), kept between requests: six allocations and
	 * frees a request were ~1.6 K instructions of the evictor's ~28.5 K. */
	struct preempt_scratch *scratch = &p->pre_scratch;
	if (p->pre_res == NULL)
		p->pre_res = malloc(sizeof(*p->pre_res));
	struct preempt_result *res = p->pre_res;
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
	struct victim_filter vf = {.p = p, .snap = snap, .l = l,
				   .priority = rq->spec.priority, .rule = rule,
				   .any_ns = any_ns, .any_victim = any_ns && scope == NULL,
				   .scope = scope,
				   .asks = prod_approval_asks(p, OP_APPROVAL_PREEMPT)};
	if (vf.asks) {
		barred = malloc(sizeof(*barred));
		if (barred == NULL)
			goto done;
		prod_approval_barred(p, OP_APPROVAL_PREEMPT, barred);
		vf.barred = barred;
	}
	/* Only pods of lower priority can be victims (the others are in the
	 * node's counters, which the choice reads from the ledger). Nodes are
	 * looked at only as the choice visits them: their counters and
	 * static filters. From the node chains; with a budget that counts
	 * placed pods, by the walk, which counts and masks every placement. */
	bool masking = p->pdbs != NULL && p->pdbs->n > 0; /* else every mask 0 */
	/* PB2: with budgets none of which counts placed pods (each one's
	 * disruptions from its status or maxUnavailable less this daemon's
	 * evictions: O(1) a budget), the chains too, each possible victim's
	 * mask taken at its node's visit (pdb_matcher_mask: per group, a
	 * cache hit but for a group's first pod) and each bit's disruptions
	 * set as it is handed out (pdb_matcher_allowed). A minAvailable
	 * budget without a status counts every placement: the walk. */
	bool chains = !counting && !vf.asks &&
		      placements_node_indexed(p->placements, snap->n_slots);
	struct preempt_visit_ctx vc = {.ctx = p->ctx, .pod = tmpl, .snap = snap, .l = l};
	struct chain_visit_ctx cv = {.ctx = p->ctx, .pod = tmpl, .vf = &vf,
				     .scratch = scratch, .plain = preempt_plain(tmpl),
				     .pm = masking ? pm : NULL};
	for (unsigned r = 0; r < RES_MAX; r++)
		if (r != RES_PODS && rq->spec.request.v[r] > 0)
			cv.want[cv.n_want++] = (uint8_t)r;
	/* DryRunPreemption's random offset (one stream, the evictor's): a
	 * node slot, as kube's is an index among every node where preemption
	 * might help, with victims or not. */
	p->pre_rng = p->pre_rng * UINT64_C(6364136223846793005) + 1442695040888963407u;
	uint32_t start_slot = snap->n_slots > 0
		? (uint32_t)((p->pre_rng >> 33) % snap->n_slots) : 0;
	struct collected c;
	rc = chains ? collect_chains(&vf, start_slot, &cv, &c)
		    : collect_walk(&vf, pm, counting, masking, start_slot, &vc, &c);
	if (!chains)
		stat_add(&records_read, placements_high_water(p->placements));
	if (rc < 0 || c.n_nodes == 0)
		goto done;
	rc = -ENOMEM;
	if (preempt_scratch_reserve(scratch, c.most) < 0)
		goto done;
	uint32_t want = preempt_candidates_wanted(snap->n_nodes);
	uint32_t n_pdbs = masking ? PDB_CHOICE_MAX : 0;
	const int32_t *pdb_allowed = chains ? pdb_matcher_allowed(pm)
					    : pdb_matcher_finish(pm, &n_pdbs);
	rc = choose(rq, &c, want, pdb_allowed, n_pdbs, scratch, res);
	if (chains && (uint8_t *)(void *)cv.idx != p->pre_ok) {
		p->pre_ok = (uint8_t *)(void *)cv.idx; /* grown */
		p->pre_ok_cap = cv.idx_cap * sizeof(uint32_t);
	}
	if (rc == 0 && cv.error < 0)
		rc = cv.error;
	if (chains && checking())
		check_against_walk(&vf, masking ? pm : NULL, rq, tmpl, start_slot, want,
				   &c, rc, res);
	if (rc < 0 || res->node < 0) {
		out->candidates = res->candidates;
		rc = rc == -E2BIG ? 0 : rc;
		goto done;
	}
	out->candidates = res->candidates;
	const struct preempt_node *chosen = &c.nodes[res->node];
	const struct preempt_pod *pods = c.pods;
	if (res->n_victims > p->pre_vcap) {
		uint32_t nc = res->n_victims > 2 * p->pre_vcap ? res->n_victims
							       : 2 * p->pre_vcap;
		struct pod_spec *gs = realloc(p->pre_vspec, nc * sizeof(*gs));
		if (gs != NULL)
			p->pre_vspec = gs;
		struct device_assignment *gd = realloc(p->pre_vdev, nc * sizeof(*gd));
		if (gd != NULL)
			p->pre_vdev = gd;
		if (gs == NULL || gd == NULL) {
			rc = -ENOMEM;
			goto done;
		}
		p->pre_vcap = nc;
	}
	struct pod_spec *vspec = p->pre_vspec;
	struct device_assignment *vdev = p->pre_vdev;
	for (uint32_t k = 0; k < res->n_victims; k++) {
		const struct placement_record *r = placements_get(p->placements,
								  pods[res->victims[k]].id);
		placement_use(r, &vspec[k]);
		vdev[k] = r->dev;
	}
	if (vf.asks && managers_keep(p, snap, chosen->slot, pods, res))
		goto done; /* the preemptor waits: no node this time */
	if (ledger_swap(l, chosen->slot, &chosen->allocatable, &rq->spec, vspec, vdev,
			res->n_victims) < 0)
		goto done; /* the room went to another placement: none this time */
	for (uint32_t k = 0; k < res->n_victims; k++) {
		uint64_t vid = pods[res->victims[k]].id;
		/* Read above for vspec under the same lock: still there. */
		const struct placement_record *vr = placements_get(p->placements, vid);
		pdb_table_evicted(p->pdbs, p->strings, &pm->scratch, vr->group);
		char why[SHMSCHED_MESSAGE_MAX];
		preempted_why(why, rq->spec.priority, vr->priority);
		prod_tell_evicted(p, vr, vid, notice, arg, why);
		if (vf.asks)
			prod_approval_evicted(p, vid);
		prod_forget(p, vid);
	}
	out->slot = chosen->slot;
	out->node_gen = ledger_node_generation(l, chosen->slot);
	out->victims = res->n_victims;
	/* What the victims held beyond the preemptor's is free now. */
	for (uint32_t k = 0; k < res->n_victims; k++)
		prod_publish(p, queue_event_release(chosen->slot, &vspec[k], &vdev[k]));

done:
	free(barred);
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
