/* unit.preempt: preemption's choice of node and victims (workers/preempt.c)
 * against a literal reference written here from kube-scheduler's Go, in
 * its own shape: SelectVictimsOnNode (remove every lower-priority pod,
 * check the fit, sort by MoreImportantPod, filterPodsWithPDBViolation,
 * reprieve violating pods first), then pickOneNodeForPreemption's five
 * score functions, each filtering the candidates to its maximum, with
 * map iteration replaced by the candidates' order. Random cases (nodes,
 * pods of a few priorities with tied start times, budgets) must give the
 * same node, the same victims in the same order and the same violation
 * count. Plus cases worked by hand. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "base/base.h"
#include "workers/workers.h"

#define MAX_NODES 12
#define REF_MAX_NODES 1024 /* ref_choose's clusters (test_best_first) */
#define MAX_PODS 160
#define RES_EXT RES_FIRST_NAMED

/* ---- the reference, after kube's Go ---- */

struct ref_victims {
	int pods[MAX_PODS]; /* indices into in->pods */
	int n;
	int num_pdb_violations;
	int ok;
};

static const struct preempt_input *ref_in;

/* util.MoreImportantPod; equal ones by index, as a stable sort leaves them. */
static int ref_cmp(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;
	const struct preempt_pod *p = &ref_in->pods[x], *q = &ref_in->pods[y];
	if (p->priority != q->priority)
		return p->priority > q->priority ? -1 : 1;
	if (p->start_ns != q->start_ns)
		return p->start_ns < q->start_ns ? -1 : 1;
	return x < y ? -1 : x > y;
}

/* fit.go fitsRequest on a node "info" of requested resources and pods. */
static int ref_fits(const struct preempt_node *n, const int64_t requested[RES_MAX],
		    int64_t pods)
{
	const struct res_vec *req = ref_in->request;
	if (pods + 1 > n->allocatable.v[RES_PODS])
		return 0;
	for (int r = 0; r < RES_MAX; r++) {
		if (r == RES_PODS || req->v[r] == 0)
			continue;
		if (req->v[r] > n->allocatable.v[r] - requested[r])
			return 0;
	}
	return 1;
}

static void ref_select_victims_on_node(const struct preempt_node *n,
				       struct ref_victims *out)
{
	const struct preempt_input *in = ref_in;
	int64_t requested[RES_MAX];
	int64_t pods = n->used.v[RES_PODS];
	memcpy(requested, n->used.v, sizeof(requested));
	int potential[MAX_PODS], np = 0;
	out->ok = 0;
	out->n = 0;
	out->num_pdb_violations = 0;
	/* removePod for every lower-priority pod */
	for (uint32_t i = 0; i < n->n; i++) {
		int pi = (int)(n->first + i);
		if (in->pods[pi].priority < in->priority) {
			potential[np++] = pi;
			for (int r = 0; r < RES_MAX; r++)
				if (r != RES_PODS)
					requested[r] -= in->pods[pi].request.v[r];
			pods--;
		}
	}
	if (np == 0)
		return; /* UnschedulableAndUnresolvable */
	if (!ref_fits(n, requested, pods))
		return;
	qsort(potential, (size_t)np, sizeof(int), ref_cmp);
	/* filterPodsWithPDBViolation */
	int32_t pdbs_allowed[PREEMPT_MAX_PDBS];
	for (uint32_t i = 0; i < in->n_pdbs; i++)
		pdbs_allowed[i] = in->pdb_allowed[i];
	int violating[MAX_PODS], nv = 0, non_violating[MAX_PODS], nn = 0;
	for (int k = 0; k < np; k++) {
		int viol = 0;
		for (uint32_t i = 0; i < in->n_pdbs; i++) {
			if (!(in->pods[potential[k]].pdbs & (1u << i)))
				continue;
			pdbs_allowed[i]--;
			if (pdbs_allowed[i] < 0)
				viol = 1;
		}
		if (viol)
			violating[nv++] = potential[k];
		else
			non_violating[nn++] = potential[k];
	}
	/* reprievePod */
	for (int pass = 0; pass < 2; pass++) {
		int *list = pass == 0 ? violating : non_violating;
		int len = pass == 0 ? nv : nn;
		for (int k = 0; k < len; k++) {
			int pi = list[k];
			for (int r = 0; r < RES_MAX; r++)
				if (r != RES_PODS)
					requested[r] += in->pods[pi].request.v[r];
			pods++;
			if (ref_fits(n, requested, pods))
				continue;
			for (int r = 0; r < RES_MAX; r++)
				if (r != RES_PODS)
					requested[r] -= in->pods[pi].request.v[r];
			pods--;
			out->pods[out->n++] = pi;
			if (pass == 0)
				out->num_pdb_violations++;
		}
	}
	if (nv != 0 && nn != 0)
		qsort(out->pods, (size_t)out->n, sizeof(int), ref_cmp);
	out->ok = 1;
}

static int64_t ref_earliest_start(const struct ref_victims *v)
{
	const struct preempt_pod *p = ref_in->pods;
	int64_t earliest = (int64_t)p[v->pods[0]].start_ns;
	int32_t max_priority = p[v->pods[0]].priority;
	for (int i = 0; i < v->n; i++) {
		const struct preempt_pod *q = &p[v->pods[i]];
		if (q->priority == max_priority) {
			if ((int64_t)q->start_ns < earliest)
				earliest = (int64_t)q->start_ns;
		} else if (q->priority > max_priority) {
			max_priority = q->priority;
			earliest = (int64_t)q->start_ns;
		}
	}
	return earliest;
}

static int64_t ref_score(int f, const struct ref_victims *v)
{
	switch (f) {
	case 0:
		return -(int64_t)v->num_pdb_violations;
	case 1:
		return -(int64_t)ref_in->pods[v->pods[0]].priority;
	case 2: {
		int64_t sum = 0;
		for (int i = 0; i < v->n; i++)
			sum += (int64_t)ref_in->pods[v->pods[i]].priority +
			       ((int64_t)INT32_MAX + 1);
		return -sum;
	}
	case 3:
		return -(int64_t)v->n;
	default:
		return ref_earliest_start(v);
	}
}

/* pickOneNodeForPreemption over the nodes that are candidates, in order. */
static int ref_pick(const struct ref_victims *vs, const int *cands, int nc)
{
	if (nc == 0)
		return -1;
	for (int i = 0; i < nc; i++)
		if (vs[cands[i]].n == 0)
			return cands[i];
	static int all[REF_MAX_NODES], selected[REF_MAX_NODES];
	int na = nc;
	memcpy(all, cands, (size_t)nc * sizeof(int));
	for (int f = 0; f < 5; f++) {
		int ns = 0;
		int64_t max_score = INT64_MIN;
		for (int i = 0; i < na; i++) {
			int64_t sc = ref_score(f, &vs[all[i]]);
			if (sc > max_score) {
				max_score = sc;
				ns = 0;
			}
			if (sc == max_score)
				selected[ns++] = all[i];
		}
		if (ns == 1)
			return selected[0];
		memcpy(all, selected, (size_t)ns * sizeof(int));
		na = ns;
	}
	return all[0];
}

/* ---- the shortcut (preempt_input.probe) ---- */

/* A probe and a visit over complete nodes, as the daemon's node chains
 * give them: the probe sums up a node's pods of lower priority than the
 * preemptor, the visit counts the nodes worked out pod by pod. */
struct probe_ctx {
	const struct preempt_input *in;
	unsigned visits;
};

static bool probe_sum(void *arg, struct preempt_node *node, struct preempt_summary *out)
{
	struct probe_ctx *pc = arg;
	const struct preempt_input *in = pc->in;
	memset(out, 0, sizeof(*out));
	out->low_priority = INT32_MAX;
	for (uint32_t i = node->first; i < node->first + node->n; i++) {
		const struct preempt_pod *p = &in->pods[i];
		if (p->priority >= in->priority)
			continue;
		out->n++;
		if (p->priority < out->low_priority)
			out->low_priority = p->priority;
		if (p->start_ns > out->late_start)
			out->late_start = p->start_ns;
		for (int r = 0; r < RES_MAX; r++)
			out->freed.v[r] += p->request.v[r];
	}
	return out->n > 0;
}

static bool visit_count(void *arg, struct preempt_node *node)
{
	(void)node;
	((struct probe_ctx *)arg)->visits++;
	return true;
}

/* preempt_select on `in` (a shortcut set: `how`) makes the choice
 * `want` made without it: the same node, candidates and victims. */
static void expect_same_choice(const struct preempt_input *in,
			       const struct preempt_result *want, const char *how,
			       unsigned case_no)
{
	struct preempt_scratch s;
	assert_int_equal(preempt_scratch_init(&s, MAX_PODS), 0);
	struct preempt_result got;
	assert_int_equal(preempt_select(in, &s, &got), 0);
	preempt_scratch_free(&s);
	if (got.node != want->node || got.candidates != want->candidates ||
	    got.n_victims != want->n_victims)
		fail_msg("case %u with %s: node %lld, %u candidates, %u victims; "
			 "without: node %lld, %u, %u", case_no, how, (long long)got.node,
			 got.candidates, got.n_victims, (long long)want->node,
			 want->candidates, want->n_victims);
	for (uint32_t i = 0; i < got.n_victims; i++)
		if (got.victims[i] != want->victims[i])
			fail_msg("case %u with %s: victim %u is pod %u, without %u",
				 case_no, how, i, got.victims[i], want->victims[i]);
}

/* The choice with the probe: the same node, victims and candidate count
 * as without it (a node it passes over could not have won). Returns the
 * nodes worked out pod by pod. */
static unsigned compare_probe(const struct preempt_input *plain,
			      const struct preempt_result *want, unsigned case_no)
{
	struct preempt_input in = *plain;
	struct probe_ctx pc = {.in = &in};
	in.probe = probe_sum;
	in.probe_arg = &pc;
	in.visit = visit_count;
	in.visit_arg = &pc;
	expect_same_choice(&in, want, "the probe", case_no);
	return pc.visits;
}

/* ---- the rows (preempt_input.rows) ---- */

/* Rows over complete nodes, as the daemon's kept summaries give them:
 * every pod of a node summed up, whatever its priority. They start
 * wrong (no pod anywhere, nothing used) and the refresh makes a chunk
 * right, so a row read before its refresh changes the choice; one node
 * in four is not bare (the probe decides it). */
#define ROWS_MAX 1024

struct rows_ctx {
	const struct preempt_input *in;
	struct probe_ctx *pc;
	uint32_t n[ROWS_MAX];
	int32_t low[ROWS_MAX], fast_high[ROWS_MAX];
	uint64_t late[ROWS_MAX];
	int64_t room[RES_MAX][ROWS_MAX], then[RES_MAX][ROWS_MAX];
	uint32_t n2[ROWS_MAX];
	int32_t fast_high2[ROWS_MAX];
	uint64_t late2[ROWS_MAX];
	int64_t then2[RES_MAX][ROWS_MAX];
	unsigned case_no, refreshed, probes;
	bool all_bare; /* every node bare, else one in four is not */
	struct preempt_scan *scan; /* touched where a row is written (PI1) */
};

static void rows_refresh(void *arg, uint32_t first, uint32_t n)
{
	struct rows_ctx *rc = arg;
	assert_true(n >= 1 && n <= PREEMPT_ROWS_CHUNK);
	assert_true(first + n <= rc->in->n_nodes);
	for (uint32_t j = first; j < first + n; j++) {
		const struct preempt_node *nd = &rc->in->nodes[j];
		int32_t high = INT32_MIN;
		if (rc->scan != NULL)
			preempt_scan_touch(rc->scan, j);
		rc->n[j] = nd->n;
		rc->low[j] = INT32_MAX;
		rc->late[j] = 0;
		for (int r = 0; r < RES_MAX; r++)
			rc->room[r][j] = rc->then[r][j] =
				nd->allocatable.v[r] - nd->used.v[r];
		for (uint32_t i = nd->first; i < nd->first + nd->n; i++) {
			const struct preempt_pod *p = &rc->in->pods[i];
			rc->low[j] = p->priority < rc->low[j] ? p->priority : rc->low[j];
			high = p->priority > high ? p->priority : high;
			rc->late[j] = p->start_ns > rc->late[j] ? p->start_ns : rc->late[j];
			for (int r = 0; r < RES_MAX; r++)
				if (r != RES_PODS)
					rc->then[r][j] += p->request.v[r];
			rc->then[RES_PODS][j]++;
		}
		/* The pods below the top band, summed again. */
		int32_t high2 = INT32_MIN;
		rc->n2[j] = 0;
		rc->late2[j] = 0;
		for (int r = 0; r < RES_MAX; r++)
			rc->then2[r][j] = rc->room[r][j];
		for (uint32_t i = nd->first; i < nd->first + nd->n; i++) {
			const struct preempt_pod *p = &rc->in->pods[i];
			if (p->priority >= high)
				continue;
			rc->n2[j]++;
			high2 = p->priority > high2 ? p->priority : high2;
			rc->late2[j] = p->start_ns > rc->late2[j] ? p->start_ns : rc->late2[j];
			for (int r = 0; r < RES_MAX; r++)
				if (r != RES_PODS)
					rc->then2[r][j] += p->request.v[r];
			rc->then2[RES_PODS][j]++;
		}
		/* One node in four not bare: the probe decides it. */
		bool bare = rc->all_bare || (j + rc->case_no) % 4 != 0;
		rc->fast_high[j] = bare ? high : INT32_MAX;
		rc->fast_high2[j] = bare ? high2 : INT32_MAX;
		rc->refreshed++;
	}
}

static bool rows_probe(void *arg, struct preempt_node *node, struct preempt_summary *out)
{
	struct rows_ctx *rc = arg;
	rc->probes++;
	return probe_sum(rc->pc, node, out);
}

/* The view of rc's rows, with `scan` (NULL: none). */
static struct preempt_rows rows_of(struct rows_ctx *rc, struct preempt_scan *scan)
{
	struct preempt_rows rows = {.refresh = rows_refresh, .refresh_arg = rc,
				    .n = rc->n, .low = rc->low, .fast_high = rc->fast_high,
				    .late = rc->late, .n2 = rc->n2,
				    .fast_high2 = rc->fast_high2, .late2 = rc->late2,
				    .scan = scan};
	for (int r = 0; r < RES_MAX; r++) {
		rows.room[r] = rc->room[r];
		rows.then[r] = rc->then[r];
		rows.then2[r] = rc->then2[r];
	}
	rc->scan = scan;
	return rows;
}

/* The choice with the rows: the same node, victims and candidate count
 * as without them, and with the rows' scan index (PI1-PI3: every row
 * starts wrong, so every entry is made from rows the refresh wrote).
 * Returns the nodes the probe was asked about. */
static unsigned compare_rows(const struct preempt_input *plain,
			     const struct preempt_result *want, unsigned case_no)
{
	static struct rows_ctx rc;
	static struct preempt_scan scan;
	if (scan.cap == 0)
		assert_int_equal(preempt_scan_init(&scan, ROWS_MAX), 0);
	unsigned probes = 0;
	for (int with_scan = 0; with_scan < 2; with_scan++) {
		struct preempt_input in = *plain;
		struct probe_ctx pc = {.in = &in};
		assert_true(in.n_nodes <= ROWS_MAX);
		memset(&rc, 0, sizeof(rc));
		rc.in = &in;
		rc.pc = &pc;
		rc.case_no = case_no;
		preempt_scan_touch_all(&scan); /* PI1: every row set wrong */
		struct preempt_rows rows = rows_of(&rc, with_scan ? &scan : NULL);
		in.probe = rows_probe;
		in.probe_arg = &rc;
		in.visit = visit_count;
		in.visit_arg = &pc;
		in.rows = &rows;
		expect_same_choice(&in, want, with_scan ? "the rows' scan" : "the rows",
				   case_no);
		probes = with_scan ? probes : rc.probes;
	}
	return probes;
}

/* ---- the cases ---- */

/* DryRunPreemption: from the offset, until numCandidates are found with
 * one non-violating (a node with no victim is an error there); then
 * pickOneNodeForPreemption. vs[] and cands[] hold in->n_nodes (at most
 * REF_MAX_NODES); *nc the candidates. Returns the node, -1 none. */
static int ref_choose(const struct preempt_input *in, struct ref_victims *vs,
		      int *cands, int *nc_out)
{
	ref_in = in;
	int nc = 0, nvc = 0;
	assert_true(in->n_nodes <= REF_MAX_NODES);
	for (uint32_t i = 0; i < in->n_nodes; i++) {
		if (in->want != 0 && nvc > 0 && nc >= (int)in->want)
			break;
		uint32_t j = (in->start + i) % in->n_nodes;
		ref_select_victims_on_node(&in->nodes[j], &vs[j]);
		if (vs[j].ok && vs[j].n > 0) {
			cands[nc++] = (int)j;
			nvc += vs[j].num_pdb_violations == 0;
		}
	}
	*nc_out = nc;
	return ref_pick(vs, cands, nc);
}

static void compare(const struct preempt_input *in, unsigned case_no,
		    unsigned *picked)
{
	struct ref_victims vs[MAX_NODES];
	int cands[MAX_NODES], nc;
	int want = ref_choose(in, vs, cands, &nc);
	struct preempt_scratch s;
	assert_int_equal(preempt_scratch_init(&s, MAX_PODS), 0);
	struct preempt_result got;
	assert_int_equal(preempt_select(in, &s, &got), 0);
	preempt_scratch_free(&s);
	if (got.node != want)
		fail_msg("case %u: node %lld, the reference's %d", case_no,
			 (long long)got.node, want);
	assert_int_equal(got.candidates, nc);
	compare_probe(in, &got, case_no);
	compare_rows(in, &got, case_no);
	if (want < 0)
		return;
	(*picked)++;
	if ((int)got.n_victims != vs[want].n ||
	    (int)got.pdb_violations != vs[want].num_pdb_violations)
		fail_msg("case %u: %u victims (%u violations), the reference's %d (%d)",
			 case_no, got.n_victims, got.pdb_violations, vs[want].n,
			 vs[want].num_pdb_violations);
	for (int i = 0; i < vs[want].n; i++)
		if ((int)got.victims[i] != vs[want].pods[i])
			fail_msg("case %u: victim %d is pod %u, the reference's %d",
				 case_no, i, got.victims[i], vs[want].pods[i]);
}

static void test_random_against_reference(void **state)
{
	(void)state;
	static struct preempt_node nodes[MAX_NODES];
	static struct preempt_pod pods[MAX_PODS];
	int32_t pdb_allowed[4];
	const int32_t prios[] = {-5, 0, 0, 3, 7, 10, 1000};
	uint64_t rng = 2024;
	unsigned cases = 20000, picked = 0, with_pdb_violations = 0;
	const char *env = getenv("SHMSCHED_PREEMPT_CASES");
	if (env != NULL)
		cases = (unsigned)strtoul(env, NULL, 10);
	for (unsigned c = 0; c < cases; c++) {
		uint32_t n_nodes = 1 + (uint32_t)rng_below(&rng, MAX_NODES);
		uint32_t n_pods = 0;
		struct res_vec req = {{0}};
		req.v[RES_CPU] = 500 * (int64_t)(1 + rng_below(&rng, 8));
		req.v[RES_MEMORY] = rng_below(&rng, 3) ? 256 * (int64_t)(1 + rng_below(&rng, 8)) : 0;
		req.v[RES_EXT] = rng_below(&rng, 4) == 0 ? 1 : 0;
		uint32_t n_pdbs = (uint32_t)rng_below(&rng, 4);
		for (uint32_t b = 0; b < n_pdbs; b++)
			pdb_allowed[b] = (int32_t)rng_below(&rng, 3);
		for (uint32_t j = 0; j < n_nodes; j++) {
			struct preempt_node *n = &nodes[j];
			memset(n, 0, sizeof(*n));
			n->slot = j;
			n->allocatable.v[RES_CPU] = 1000 * (int64_t)(2 + rng_below(&rng, 6));
			n->allocatable.v[RES_MEMORY] = 1024 * (int64_t)(1 + rng_below(&rng, 4));
			n->allocatable.v[RES_EXT] = (int64_t)rng_below(&rng, 3);
			n->allocatable.v[RES_PODS] = 2 + (int64_t)rng_below(&rng, 10);
			n->first = n_pods;
			uint32_t k = (uint32_t)rng_below(&rng, 12);
			for (uint32_t i = 0; i < k && n_pods < MAX_PODS; i++) {
				struct preempt_pod *p = &pods[n_pods];
				memset(p, 0, sizeof(*p));
				p->id = n_pods;
				p->priority = prios[rng_below(&rng, 7)];
				p->start_ns = 100 * rng_below(&rng, 6); /* ties */
				p->request.v[RES_CPU] = 250 * (int64_t)rng_below(&rng, 8);
				p->request.v[RES_MEMORY] = 128 * (int64_t)rng_below(&rng, 8);
				p->request.v[RES_EXT] = rng_below(&rng, 5) == 0;
				p->pdbs = n_pdbs ? (uint32_t)rng_below(&rng, 1u << n_pdbs) : 0;
				for (int r = 0; r < RES_MAX; r++)
					n->used.v[r] += p->request.v[r];
				n->used.v[RES_PODS]++;
				n->n++;
				n_pods++;
			}
			/* Sometimes use beyond its pods (bound elsewhere). */
			if (rng_below(&rng, 4) == 0)
				n->used.v[RES_CPU] += 250;
		}
		struct preempt_input in = {
			.request = &req,
			.priority = prios[1 + rng_below(&rng, 6)],
			.nodes = nodes, .n_nodes = n_nodes,
			.pods = pods, .pdb_allowed = pdb_allowed, .n_pdbs = n_pdbs,
			.start = (uint32_t)rng_below(&rng, n_nodes),
			.want = rng_below(&rng, 2) ? 0 : 1 + (uint32_t)rng_below(&rng, 4),
		};
		unsigned before = picked;
		compare(&in, c, &picked);
		if (picked > before && n_pdbs > 0) {
			struct preempt_scratch s;
			struct preempt_result got;
			preempt_scratch_init(&s, MAX_PODS);
			preempt_select(&in, &s, &got);
			preempt_scratch_free(&s);
			with_pdb_violations += got.pdb_violations > 0;
		}
	}
	print_message("preempt: %u random cases, %u with a node chosen, %u of them "
		      "violating a budget: all as the reference\n", cases, picked,
		      with_pdb_violations);
	assert_true(picked > cases / 4);
	assert_true(with_pdb_violations > 0);
}

/* By hand: the lower victim's node wins; then the fewer victims. */
static void test_worked_cases(void **state)
{
	(void)state;
	struct preempt_pod pods[4] = {
		/* node 0: one pod of priority 5, 2 cpu */
		{.id = 10, .priority = 5, .start_ns = 1, .request = {{[RES_CPU] = 2000}}},
		/* node 1: two pods of priority 1, 1 cpu each */
		{.id = 11, .priority = 1, .start_ns = 1, .request = {{[RES_CPU] = 1000}}},
		{.id = 12, .priority = 1, .start_ns = 2, .request = {{[RES_CPU] = 1000}}},
		/* node 2: a pod of the preemptor's own priority */
		{.id = 13, .priority = 9, .start_ns = 1, .request = {{[RES_CPU] = 2000}}},
	};
	struct preempt_node nodes[3] = {
		{.slot = 0, .allocatable = {{[RES_CPU] = 2000, [RES_PODS] = 10}},
		 .used = {{[RES_CPU] = 2000, [RES_PODS] = 1}}, .first = 0, .n = 1},
		{.slot = 1, .allocatable = {{[RES_CPU] = 2000, [RES_PODS] = 10}},
		 .used = {{[RES_CPU] = 2000, [RES_PODS] = 2}}, .first = 1, .n = 2},
		{.slot = 2, .allocatable = {{[RES_CPU] = 2000, [RES_PODS] = 10}},
		 .used = {{[RES_CPU] = 2000, [RES_PODS] = 1}}, .first = 3, .n = 1},
	};
	struct res_vec req = {{[RES_CPU] = 1500}};
	struct preempt_input in = {.request = &req, .priority = 9, .nodes = nodes,
				   .n_nodes = 3, .pods = pods};
	struct preempt_scratch s;
	assert_int_equal(preempt_scratch_init(&s, 8), 0);
	struct preempt_result r;
	assert_int_equal(preempt_select(&in, &s, &r), 0);
	/* Node 1's highest victim (1) is below node 0's (5), though it loses
	 * two pods; node 2 has nothing lower to evict. */
	assert_int_equal(r.node, 1);
	assert_int_equal(r.candidates, 2);
	assert_int_equal(r.n_victims, 2);
	assert_int_equal(r.victims[0], 1); /* the earlier start first */
	assert_int_equal(r.victims[1], 2);
	/* Asking 1 cpu: on node 1 one pod is reprieved (the more important,
	 * the earlier one), so node 1 loses one pod of priority 1. */
	req.v[RES_CPU] = 1000;
	assert_int_equal(preempt_select(&in, &s, &r), 0);
	assert_int_equal(r.node, 1);
	assert_int_equal(r.n_victims, 1);
	assert_int_equal(r.victims[0], 2);
	/* Never: a preemptor below every pod finds no candidate. */
	in.priority = 0;
	assert_int_equal(preempt_select(&in, &s, &r), 0);
	assert_int_equal(r.node, -1);
	assert_int_equal(r.candidates, 0);
	/* A budget that allows no disruption moves the choice to node 0. */
	in.priority = 9;
	req.v[RES_CPU] = 1500;
	pods[1].pdbs = pods[2].pdbs = 1;
	int32_t allowed = 0;
	in.pdb_allowed = &allowed;
	in.n_pdbs = 1;
	assert_int_equal(preempt_select(&in, &s, &r), 0);
	assert_int_equal(r.node, 0);
	assert_int_equal(r.pdb_violations, 0);
	assert_int_equal(r.victims[0], 0);
	preempt_scratch_free(&s);
}

/* The bench's shape (bench/pending_bench.c, --kind preemption): full
 * nodes of two pods of priority 0, a pod of priority 1000 that needs one
 * gone, kube's numCandidates. Every node visited is a candidate with one
 * victim, the later pod; the winner is the node whose victim started
 * last. With the probe only the nodes whose latest pod beats the best so
 * far are worked out: far fewer than the candidates, the same choice. */
static void test_probe_passes_over(void **state)
{
	(void)state;
	enum { NODES = 1000 };
	static struct preempt_node nodes[NODES];
	static struct preempt_pod pods[2 * NODES];
	uint64_t rng = 39;
	for (uint32_t j = 0; j < NODES; j++) {
		nodes[j] = (struct preempt_node){
			.slot = j, .first = 2 * j, .n = 2,
			.allocatable = {{[RES_CPU] = 4000, [RES_PODS] = 110}},
			.used = {{[RES_CPU] = 4000, [RES_PODS] = 2}}};
		for (uint32_t i = 0; i < 2; i++)
			pods[2 * j + i] = (struct preempt_pod){
				.id = 2 * j + i, .priority = 0,
				.start_ns = 1 + rng_below(&rng, 1000000),
				.request = {{[RES_CPU] = 2000}}};
	}
	struct res_vec req = {{[RES_CPU] = 2000}};
	struct preempt_input in = {.request = &req, .priority = 1000, .nodes = nodes,
				   .n_nodes = NODES, .pods = pods,
				   .want = preempt_candidates_wanted(NODES)};
	unsigned worked = 0, probed = 0, tries = 20;
	for (unsigned t = 0; t < tries; t++) {
		in.start = (uint32_t)rng_below(&rng, NODES);
		struct preempt_scratch s;
		assert_int_equal(preempt_scratch_init(&s, 2), 0);
		struct preempt_result plain;
		assert_int_equal(preempt_select(&in, &s, &plain), 0);
		preempt_scratch_free(&s);
		assert_int_equal(plain.candidates, 100);
		assert_int_equal(plain.n_victims, 1);
		worked += compare_probe(&in, &plain, t);
		probed += compare_rows(&in, &plain, t);
	}
	print_message("preempt: the bench's shape, %u candidates a choice, %.1f of "
		      "them worked out pod by pod with the probe\n", 100,
		      (double)worked / tries);
	/* A new best among 100 in random order: about ln 100 + 0.58, 5.2. */
	assert_true(worked < tries * 20);
	/* With the rows, only the nodes that are not bare (one in four)
	 * go to the probe. */
	print_message("preempt: with the rows, %.1f nodes a choice asked of the "
		      "probe\n", (double)probed / tries);
	assert_true(probed < tries * 40);
}

/* The scan index kept across choices (PI1-PI3), as the evictor keeps it:
 * the rows and the index live on while a few nodes change between
 * choices (their rows written again and touched, as prows_refresh does),
 * preemptors of a few classes come in runs (PI2), and each choice with
 * the index must be the one without the rows at all. 700 nodes (eleven
 * blocks, the last one short), random starts and candidates wanted. */
/* Pod p (at pods[nd->first + nd->n]) on node nd: its id, its use. */
static void node_add(struct preempt_node *nd, struct preempt_pod *p)
{
	p->id = nd->first + nd->n;
	for (int r = 0; r < RES_MAX; r++)
		nd->used.v[r] += p->request.v[r];
	nd->used.v[RES_PODS]++;
	nd->n++;
}

static void node_fill(struct preempt_node *nd, struct preempt_pod *pods, uint32_t j,
		      uint32_t n_pdbs, uint64_t *rng)
{
	const int32_t prios[] = {0, 0, 3, 7, 1000};
	memset(nd, 0, sizeof(*nd));
	nd->slot = j;
	nd->first = 4 * j;
	nd->allocatable.v[RES_CPU] = 1000 * (int64_t)(2 + rng_below(rng, 4));
	nd->allocatable.v[RES_MEMORY] = 1024 * (int64_t)(1 + rng_below(rng, 2));
	nd->allocatable.v[RES_PODS] = 2 + (int64_t)rng_below(rng, 4);
	uint32_t k = (uint32_t)rng_below(rng, 5);
	for (uint32_t i = 0; i < k; i++) {
		struct preempt_pod *p = &pods[nd->first + i];
		memset(p, 0, sizeof(*p));
		p->priority = prios[rng_below(rng, 5)];
		p->start_ns = 100 * rng_below(rng, 50); /* ties */
		p->request.v[RES_CPU] = 500 * (int64_t)rng_below(rng, 4);
		p->request.v[RES_MEMORY] = 256 * (int64_t)rng_below(rng, 3);
		p->pdbs = n_pdbs ? (uint32_t)rng_below(rng, 1u << n_pdbs) : 0;
		node_add(nd, p);
	}
	if (rng_below(rng, 6) == 0)
		nd->used.v[RES_CPU] += 500; /* bound elsewhere */
}

static void test_scan_kept_across_choices(void **state)
{
	(void)state;
	enum { NODES = 700, ROUNDS = 3000 };
	static struct preempt_node nodes[NODES];
	static struct preempt_pod pods[4 * NODES];
	static struct rows_ctx rc;
	struct preempt_scan scan;
	assert_int_equal(preempt_scan_init(&scan, NODES), 0);
	struct res_vec reqs[3] = {{{[RES_CPU] = 1000}}, {{[RES_CPU] = 2000, [RES_MEMORY] = 256}},
				  {{[RES_CPU] = 500}}};
	const int32_t prio_of[3] = {5, 10, 1000};
	int32_t pdb_allowed[2] = {1, 0};
	uint64_t rng = 3939;
	uint32_t n_pdbs = 0;
	for (uint32_t j = 0; j < NODES; j++)
		node_fill(&nodes[j], pods, j, n_pdbs, &rng);
	struct preempt_input in = {.nodes = nodes, .n_nodes = NODES, .pods = pods,
				   .pdb_allowed = pdb_allowed};
	struct probe_ctx pc = {.in = &in};
	memset(&rc, 0, sizeof(rc));
	rc.in = &in;
	rc.pc = &pc;
	rc.case_no = 1; /* bare marks fixed: a row changes only when written */
	struct preempt_rows rows = rows_of(&rc, &scan);
	rows.refresh = NULL; /* kept current below */
	for (uint32_t j = 0; j < NODES; j += PREEMPT_ROWS_CHUNK)
		rows_refresh(&rc, j, NODES - j < PREEMPT_ROWS_CHUNK ? NODES - j
								 : PREEMPT_ROWS_CHUNK);
	unsigned cls = 0, picked = 0;
	uint64_t made_before = scan.made;
	for (unsigned round = 0; round < ROUNDS; round++) {
		/* A few nodes change (a preemption's victims gone and its
		 * preemptor placed, pods ending), each row written again. */
		uint32_t changes = (uint32_t)rng_below(&rng, 4);
		for (uint32_t c = 0; c < changes; c++) {
			uint32_t j = (uint32_t)rng_below(&rng, NODES);
			node_fill(&nodes[j], pods, j, n_pdbs, &rng);
			rows_refresh(&rc, j, 1);
		}
		if (round % 500 == 499) {
			/* Budgets come and go: every pod's mask anew, so every
			 * row is written again too. */
			n_pdbs = n_pdbs ? 0 : 2;
			for (uint32_t j = 0; j < NODES; j++)
				for (uint32_t i = 0; i < nodes[j].n; i++)
					pods[nodes[j].first + i].pdbs =
						n_pdbs ? (uint32_t)rng_below(&rng, 4) : 0;
		}
		if (rng_below(&rng, 8) == 0)
			cls = (unsigned)rng_below(&rng, 3); /* PI2: runs of a class */
		in.request = &reqs[cls];
		in.priority = prio_of[cls];
		in.n_pdbs = n_pdbs;
		in.start = (uint32_t)rng_below(&rng, NODES);
		const uint32_t wants[4] = {0, 7, 70, preempt_candidates_wanted(NODES)};
		in.want = wants[rng_below(&rng, 4)];
		struct preempt_input plain = in;
		plain.rows = NULL;
		plain.probe = NULL;
		plain.visit = NULL;
		struct preempt_scratch s;
		assert_int_equal(preempt_scratch_init(&s, MAX_PODS), 0);
		struct preempt_result want;
		assert_int_equal(preempt_select(&plain, &s, &want), 0);
		preempt_scratch_free(&s);
		picked += want.node >= 0;
		struct preempt_input with = in;
		with.probe = rows_probe;
		with.probe_arg = &rc;
		with.visit = visit_count;
		with.visit_arg = &pc;
		with.rows = &rows;
		expect_same_choice(&with, &want, "the kept scan index", round);
	}
	double made = (double)(scan.made - made_before) / ROUNDS;
	print_message("preempt: the kept scan index, %u rounds over %u nodes, %u with a "
		      "node chosen; %.1f entries made a choice, %llu blocks passed whole\n",
		      ROUNDS, NODES, picked, made, (unsigned long long)scan.whole);
	assert_true(picked > ROUNDS / 2);
	assert_true(scan.whole > ROUNDS);
	/* Made again where touched, and all at a class change (one choice
	 * in eight at most): far fewer than the nodes a choice. */
	assert_true(made < NODES / 3);
	preempt_scan_free(&scan);
}

/* BF1-BF3: the best-first choice over the scan index against the literal
 * reference (kube's pkg/scheduler/framework/preemption/preemption.go:
 * DryRunPreemption from the offset until numCandidates, then
 * pickOneNodeForPreemption, the first candidate of a tie) on many
 * clusters of up to 1,024 nodes, every node bare and no budgets (where
 * best-first applies), with priorities and (in most clusters) start
 * times from tiny sets: most candidates tie on their bounds and many on
 * their scores, across blocks, partial blocks and the window's wrap past
 * the last node. The same choice through the rows in offset order too
 * (rows_run), and fewer nodes worked out best-first than that. */
static void node_fill_tied(struct preempt_node *nd, struct preempt_pod *pods,
			   uint32_t j, uint32_t starts, uint64_t *rng)
{
	const int32_t prios[] = {0, 0, 0, 3, 1000};
	memset(nd, 0, sizeof(*nd));
	nd->slot = j;
	nd->first = 4 * j;
	nd->allocatable.v[RES_CPU] = 1000 * (int64_t)(2 + rng_below(rng, 3));
	nd->allocatable.v[RES_MEMORY] = 4096;
	nd->allocatable.v[RES_PODS] = 2 + (int64_t)rng_below(rng, 3);
	uint32_t k = (uint32_t)rng_below(rng, 5);
	for (uint32_t i = 0; i < k; i++) {
		struct preempt_pod *p = &pods[nd->first + i];
		memset(p, 0, sizeof(*p));
		p->priority = prios[rng_below(rng, 5)];
		p->start_ns = 100 * rng_below(rng, starts); /* ties when few */
		p->request.v[RES_CPU] = 500 * (int64_t)(1 + rng_below(rng, 3));
		node_add(nd, p);
	}
	if (rng_below(rng, 6) == 0)
		nd->used.v[RES_CPU] += 500; /* bound elsewhere */
}

static void test_best_first_against_reference(void **state)
{
	(void)state;
	static struct preempt_node nodes[REF_MAX_NODES];
	static struct preempt_pod pods[4 * REF_MAX_NODES];
	static struct ref_victims vs[REF_MAX_NODES];
	static int cands[REF_MAX_NODES];
	static struct rows_ctx rc;
	struct preempt_scan scan;
	assert_int_equal(preempt_scan_init(&scan, REF_MAX_NODES), 0);
	const struct res_vec reqs[2] = {{{[RES_CPU] = 1000}}, {{[RES_CPU] = 2000}}};
	const int32_t prio_of[2] = {5, 1000};
	uint64_t rng = 4242;
	unsigned cases = 400, picked = 0, ties = 0;
	uint64_t visits_best = 0, visits_run = 0, firsts = scan.best_first;
	for (unsigned c = 0; c < cases; c++) {
		uint32_t n_nodes = 1 + (uint32_t)rng_below(&rng, REF_MAX_NODES);
		/* Most clusters with three start times; one in four with
		 * a million (the bench's, where the offset order finds a new
		 * best ~ln(candidates) times). */
		uint32_t starts = rng_below(&rng, 4) ? 3 : 1000000;
		for (uint32_t j = 0; j < n_nodes; j++)
			node_fill_tied(&nodes[j], pods, j, starts, &rng);
		unsigned cls = (unsigned)rng_below(&rng, 2);
		const uint32_t wants[6] = {0, 1, 7, 100, preempt_candidates_wanted(n_nodes),
					   n_nodes};
		struct preempt_input in = {.request = &reqs[cls], .priority = prio_of[cls],
					   .nodes = nodes, .n_nodes = n_nodes, .pods = pods,
					   .start = (uint32_t)rng_below(&rng, n_nodes),
					   .want = wants[rng_below(&rng, 6)]};
		int nc;
		int want = ref_choose(&in, vs, cands, &nc);
		picked += want >= 0;
		/* Another candidate with the winner's scores: a tie the
		 * offset order breaks. */
		for (int i = 0; want >= 0 && i < nc; i++) {
			bool same = cands[i] != want && vs[cands[i]].n == vs[want].n;
			for (int f = 0; same && f < 5; f++)
				same = ref_score(f, &vs[cands[i]]) == ref_score(f, &vs[want]);
			if (same) {
				ties++;
				break;
			}
		}
		for (int with_scan = 0; with_scan < 2; with_scan++) {
			struct probe_ctx pc = {.in = &in};
			memset(&rc, 0, sizeof(rc));
			rc.in = &in;
			rc.pc = &pc;
			rc.case_no = c;
			rc.all_bare = true;
			preempt_scan_touch_all(&scan); /* PI1: every row set wrong */
			struct preempt_rows rows = rows_of(&rc, with_scan ? &scan : NULL);
			struct preempt_input with = in;
			with.probe = rows_probe;
			with.probe_arg = &rc;
			with.visit = visit_count;
			with.visit_arg = &pc;
			with.rows = &rows;
			struct preempt_scratch s;
			assert_int_equal(preempt_scratch_init(&s, MAX_PODS), 0);
			struct preempt_result got;
			assert_int_equal(preempt_select(&with, &s, &got), 0);
			preempt_scratch_free(&s);
			if (got.node != want || (int)got.candidates != nc)
				fail_msg("case %u (%u nodes, start %u, want %u) %s: node %lld, "
					 "%u candidates; the reference's %d, %d", c, n_nodes,
					 in.start, in.want, with_scan ? "best-first" : "the rows",
					 (long long)got.node, got.candidates, want, nc);
			if (want >= 0) {
				assert_int_equal(got.n_victims, vs[want].n);
				for (int i = 0; i < vs[want].n; i++)
					assert_int_equal(got.victims[i], vs[want].pods[i]);
			}
			*(with_scan ? &visits_best : &visits_run) += pc.visits;
		}
	}
	firsts = scan.best_first - firsts;
	print_message("preempt: best-first, %u clusters, %u with a node chosen, %u of "
		      "them with a tie on the scores: all as the reference; %llu chosen "
		      "best-first; %.1f nodes worked out a choice (%.1f in offset order)\n",
		      cases, picked, ties, (unsigned long long)firsts,
		      (double)visits_best / cases, (double)visits_run / cases);
	assert_true(picked > cases / 2);
	assert_true(ties > cases / 10);
	assert_int_equal(firsts, cases); /* every node bare: each one best-first */
	assert_true(visits_best < visits_run);
	preempt_scan_free(&scan);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_worked_cases),
		cmocka_unit_test(test_random_against_reference),
		cmocka_unit_test(test_probe_passes_over),
		cmocka_unit_test(test_scan_kept_across_choices),
		cmocka_unit_test(test_best_first_against_reference),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
