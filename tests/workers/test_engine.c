/* unit.engine: the engine's two paths agree, and sampling is
 * kube-scheduler's.
 *
 * The property test builds SHMSCHED_ENGINE_CASES (default 10,000) random
 * clusters (1..260 nodes, labels, taints, cordons, extended resources,
 * running use) and scoring profiles, then places a random sequence of pods
 * (requests, selectors, required and preferred affinity with every
 * operator, tolerations, host ports, nodeName, GPUs shared or whole with
 * or without a set of accepted GPU models, and now and then a pod
 * group with anti-affinity or a spread constraint, which the fast path
 * hands to the literal one), committing each placement,
 * with node events (cordon, remove, update) in between. For every pod the
 * fast path (classes, shard skipping, cached static scores) must choose
 * exactly what the literal reference scan chooses, with the same total
 * score and feasible count, and give the same message when nothing fits,
 * at percentageOfNodesToScore 100, at the adaptive default and at random
 * percentages. */
#define _LGPL_SOURCE 1

#include <errno.h>
#include <inttypes.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <urcu/urcu-qsbr.h>

#include <cmocka.h>

#include "ingest/ingest.h"
#include "bind/bind.h"
#include "base/base.h"
#include "shm/shm.h"
#include "workers/workers.h"

/* --- a small deterministic generator ------------------------------------ */

static uint64_t rng_state;

static uint32_t below(uint32_t n)
{
	return (uint32_t)(rng_next(&rng_state) % n);
}

static bool chance(unsigned percent)
{
	return below(100) < percent;
}

struct world {
	struct intern *strings;
	struct res_names res;
	struct plugin_ctx ctx;
	int gpu; /* index of example.com/gpu */
	uint32_t node_names[300];
	uint32_t n_names;
};

static uint32_t sid(struct world *w, const char *s)
{
	uint32_t v;
	assert_int_equal(intern_add_str(w->strings, s, &v), 0);
	return v;
}

static const char *pick(const char *const *list, size_t n)
{
	return list[below((uint32_t)n)];
}

#define PICK(list) pick(list, sizeof(list) / sizeof(list[0]))

static const char *const zones[] = {"a", "b", "c"};
static const char *const types[] = {"small", "big", "gpu"};
static const char *const cores[] = {"4", "8", "16", "32", "x"};
static const char *const taint_keys[] = {"dedicated", "spot", "maint"};
static const char *const taint_values[] = {"gpu", "true", ""};
static const char *const gpu_models[] = {"T4", "P100", "V100"};

static int label_cmp(const void *a, const void *b)
{
	const struct label *x = a, *y = b;
	return (x->key > y->key) - (x->key < y->key);
}

static void add_label(struct world *w, struct node_spec *n, const char *k,
		      const char *v)
{
	n->labels[n->n_labels++] = (struct label){sid(w, k), sid(w, v)};
}

static void gen_node(struct world *w, struct node_spec *n, uint32_t name)
{
	memset(n, 0, sizeof(*n));
	n->name = name;
	static const int64_t cpus[] = {2000, 4000, 8000, 16000};
	n->allocatable.v[RES_CPU] = cpus[below(4)];
	n->allocatable.v[RES_MEMORY] = (int64_t)(1 + below(16)) << 30;
	n->allocatable.v[RES_EPHEMERAL] = chance(80) ? (int64_t)(10 + below(90)) << 30 : 0;
	n->allocatable.v[RES_PODS] = chance(10) ? 3 : 110;
	if (chance(20))
		n->allocatable.v[w->gpu] = 1 + below(4);
	add_label(w, n, "kubernetes.io/hostname", intern_str(w->strings, name));
	if (chance(90))
		add_label(w, n, "zone", PICK(zones));
	if (chance(70))
		add_label(w, n, "type", PICK(types));
	if (chance(60))
		add_label(w, n, "cores", PICK(cores));
	qsort(n->labels, n->n_labels, sizeof(n->labels[0]), label_cmp);
	unsigned taints = chance(30) ? 1 + below(2) : 0;
	for (unsigned t = 0; t < taints; t++)
		n->taints[n->n_taints++] = (struct taint){
			sid(w, PICK(taint_keys)), sid(w, PICK(taint_values)),
			(uint8_t)(1 + below(3))};
	n->unschedulable = chance(5);
	n->ready = NODE_READY_TRUE;
	/* GPUs on about a third of the nodes, of one of three models. They
	 * follow from the name, not the stream, so an update of a node whose
	 * devices are in use keeps them. */
	uint32_t h = name * UINT32_C(2654435761);
	if ((h >> 8) % 3 == 0) {
		n->devices.n_gpus = (uint8_t)(1 + (h >> 12) % 4);
		n->devices.gpu_model = sid(w, gpu_models[(h >> 16) % 3]);
	}
}

/* A GPU pod's accepted models: none (any) or one or two of the three,
 * sorted and unique as ingest/ writes them. */
static void gen_models(struct world *w, struct pod_spec *p)
{
	p->n_gpu_models = 0;
	memset(p->gpu_models, 0, sizeof(p->gpu_models));
	if (chance(30))
		return;
	unsigned n = 1 + below(2);
	for (unsigned i = 0; i < n; i++) {
		uint32_t id = sid(w, PICK(gpu_models));
		unsigned j = 0;
		while (j < p->n_gpu_models && p->gpu_models[j] < id)
			j++;
		if (j < p->n_gpu_models && p->gpu_models[j] == id)
			continue;
		memmove(&p->gpu_models[j + 1], &p->gpu_models[j],
			(p->n_gpu_models - j) * sizeof(p->gpu_models[0]));
		p->gpu_models[j] = id;
		p->n_gpu_models++;
	}
}

static void gen_expr(struct world *w, struct pod_spec *p, bool field)
{
	if (p->n_exprs >= POD_MAX_EXPRS)
		return;
	struct sel_expr *e = &p->exprs[p->n_exprs++];
	memset(e, 0, sizeof(*e));
	e->first_value = p->n_values;
	if (field) {
		e->field = 1;
		e->key = w->ctx.id_metadata_name;
		e->op = chance(50) ? SEL_IN : SEL_NOT_IN;
		unsigned nv = 1 + below(3);
		for (unsigned i = 0; i < nv && p->n_values < POD_MAX_VALUES; i++, e->n_values++)
			p->values[p->n_values++] = w->node_names[below(w->n_names)];
		return;
	}
	static const char *const keys[] = {"zone", "type", "cores", "absent"};
	const char *key = PICK(keys);
	e->key = sid(w, key);
	e->op = (uint8_t)(1 + below(6));
	if (e->op == SEL_GT || e->op == SEL_LT) {
		e->key = sid(w, "cores");
		e->number = (int64_t)(4 << below(4)) + (int64_t)below(3) - 1;
		return;
	}
	if (e->op == SEL_EXISTS || e->op == SEL_DOES_NOT_EXIST)
		return;
	unsigned nv = 1 + below(2);
	for (unsigned i = 0; i < nv && p->n_values < POD_MAX_VALUES; i++, e->n_values++) {
		const char *v = strcmp(key, "zone") == 0 ? PICK(zones)
			      : strcmp(key, "type") == 0 ? PICK(types) : PICK(cores);
		p->values[p->n_values++] = sid(w, v);
	}
}

static struct sel_term gen_term(struct world *w, struct pod_spec *p)
{
	struct sel_term t = {.first_expr = p->n_exprs};
	unsigned n = below(4); /* 0: an empty term, which matches nothing */
	for (unsigned i = 0; i < n; i++)
		gen_expr(w, p, chance(10));
	t.n_exprs = (uint16_t)(p->n_exprs - t.first_expr);
	return t;
}

/* Sometimes a group: labels app=a|b, and now and then a required
 * anti-affinity term or a spread constraint on zone selecting app=a, so
 * both paths meet pods under inter-pod rules and, once one is placed,
 * plain pods that rules of placed pods may touch. */
static void gen_group(struct world *w, struct pod_spec *p)
{
	if (!chance(15))
		return;
	struct pod_group g = {.ns = sid(w, "default"), .n_labels = 1};
	g.labels[0] = (struct label){sid(w, "app"), sid(w, chance(50) ? "a" : "b")};
	struct group_selector sel = {.present = true, .n_reqs = 1};
	g.reqs[0] = (struct group_req){.key = sid(w, "app"), .op = SEL_IN,
				       .n_values = 1};
	g.values[0] = sid(w, "a");
	if (chance(30)) {
		g.n_reqs = g.n_values = g.n_namespaces = g.n_terms = 1;
		g.namespaces[0] = g.ns;
		g.terms[0] = (struct group_term){
			.kind = TERM_REQUIRED_ANTI_AFFINITY,
			.topology_key = sid(w, "kubernetes.io/hostname"),
			.selector = sel, .n_ns = 1};
		p->group_terms = true;
	} else if (chance(30)) {
		g.n_reqs = g.n_values = g.n_spread = 1;
		g.spread[0] = (struct group_spread){
			.topology_key = sid(w, "zone"), .max_skew = 1,
			.min_domains = 1, .hard = chance(50),
			.node_taints_policy = SPREAD_POLICY_IGNORE, .selector = sel};
	}
	char enc[GROUP_ENCODED_MAX + 1];
	int len = pod_group_encode(&g, enc, sizeof(enc));
	assert_true(len > 0);
	assert_int_equal(intern_add(w->strings, enc, (size_t)len, &p->group), 0);
}

static void gen_pod(struct world *w, struct pod_spec *p)
{
	memset(p, 0, sizeof(*p));
	static const int64_t cpus[] = {0, 100, 250, 500, 1000, 2000, 4000};
	p->request.v[RES_CPU] = cpus[below(7)];
	p->request.v[RES_MEMORY] = chance(80) ? (int64_t)(1 + below(2048)) << 20 : 0;
	if (chance(10))
		p->request.v[RES_EPHEMERAL] = (int64_t)(1 + below(20)) << 30;
	if (chance(10))
		p->request.v[w->gpu] = 1 + below(2);
	p->nonzero_cpu_milli = p->request.v[RES_CPU] ? p->request.v[RES_CPU]
			       : chance(70) ? 100 : 0;
	p->nonzero_mem_bytes = p->request.v[RES_MEMORY] ? p->request.v[RES_MEMORY]
			       : chance(70) ? 200 << 20 : 0;
	if (chance(20)) {
		static const uint16_t shares[] = {250, 500, 800};
		bool whole = chance(40);
		p->num_gpu = whole ? (uint8_t)(1 + below(2)) : 1;
		p->gpu_milli = whole ? GPU_MILLI_PER_DEVICE : shares[below(3)];
		gen_models(w, p);
	}
	if (chance(3))
		p->node_name = w->node_names[below(w->n_names)];
	if (chance(20)) {
		p->selector[p->n_selector++] = (struct label){sid(w, "zone"),
							      sid(w, PICK(zones))};
	}
	if (chance(25)) {
		p->has_required = true;
		unsigned n = below(3);
		for (unsigned i = 0; i < n; i++)
			p->terms[p->n_terms++] = gen_term(w, p);
	}
	if (chance(30)) {
		unsigned n = 1 + below(3);
		for (unsigned i = 0; i < n; i++)
			p->preferred[p->n_preferred++] = (struct pref_term){
				.weight = (int32_t)(1 + below(100)), .term = gen_term(w, p)};
	}
	unsigned tols = chance(35) ? 1 + below(3) : 0;
	for (unsigned i = 0; i < tols; i++) {
		struct toleration *t = &p->tolerations[p->n_tolerations++];
		t->op = chance(40) ? TOL_EXISTS : TOL_EQUAL;
		t->key = chance(10) && t->op == TOL_EXISTS ? 0 : sid(w, PICK(taint_keys));
		t->value = t->op == TOL_EQUAL ? sid(w, PICK(taint_values)) : 0;
		t->effect = (uint8_t)below(4);
	}
	if (chance(10)) {
		static const char *const ips[] = {"", "0.0.0.0", "10.0.0.1"};
		p->ports[p->n_ports++] = (struct host_port){
			sid(w, PICK(ips)), (uint16_t)(chance(50) ? 80 : 443),
			(uint8_t)below(2)};
	}
	gen_group(w, p);
}

static void gen_config(struct world *w, struct sched_config *cfg)
{
	sched_config_default(cfg);
	struct score_config *sc = &cfg->score;
	if (chance(50)) {
		sc->weight_taint = below(4);
		sc->weight_affinity = below(4);
		sc->weight_fit = below(4);
		sc->weight_balanced = below(3);
	}
	if (chance(20))
		sc->weight_gpu_best_fit = 1 + below(3);
	sc->fit_strategy = chance(50) ? FIT_LEAST_ALLOCATED : FIT_MOST_ALLOCATED;
	if (chance(30)) {
		sc->n_fit_resources = 3;
		sc->fit_resources[0] = (struct res_weight){RES_CPU, 1 + below(5)};
		sc->fit_resources[1] = (struct res_weight){RES_MEMORY, 1 + below(5)};
		sc->fit_resources[2] = (struct res_weight){(uint8_t)w->gpu, 1 + below(5)};
		sc->n_balanced_resources = 3;
		sc->balanced_resources[2] = (struct res_weight){(uint8_t)w->gpu, 1};
	}
	uint32_t r = below(3);
	cfg->percentage_of_nodes_to_score = r == 0 ? 100 : r == 1 ? 0
					    : (int32_t)(1 + below(99));
}

/* --- the property test --------------------------------------------------- */

static void check_same(struct engine *e, const struct pod_spec *pod, uint64_t seq,
		       uint64_t case_no, struct placement *out)
{
	struct placement fast, ref;
	char fast_msg[4096] = "", ref_msg[4096] = "";
	assert_int_equal(engine_place_reference(e, pod, seq, NULL, &ref), 0);
	if (ref.slot < 0)
		engine_message(e, ref_msg, sizeof(ref_msg));
	assert_int_equal(engine_place(e, pod, seq, &fast), 0);
	if (fast.slot < 0)
		engine_message(e, fast_msg, sizeof(fast_msg));
	if (fast.slot != ref.slot || fast.score != ref.score ||
	    fast.feasible != ref.feasible || strcmp(fast_msg, ref_msg) != 0)
		fail_msg("case %" PRIu64 " pod %" PRIu64 ": fast chose slot %" PRId64
			 " (score %" PRId64 ", %u feasible) \"%s\", reference slot %"
			 PRId64 " (score %" PRId64 ", %u feasible) \"%s\"", case_no, seq,
			 fast.slot, fast.score, fast.feasible, fast_msg, ref.slot,
			 ref.score, ref.feasible, ref_msg);
	*out = fast;
}

static void run_case(uint64_t case_no, uint64_t *placed, uint64_t *unschedulable,
		     uint64_t *gpu_placed, uint64_t *model_placed,
		     uint64_t *indexed, uint64_t *index_updates,
		     uint64_t *static_reuses, uint64_t *evictions)
{
	rng_state = case_no * UINT64_C(0x2545f4914f6cdd1d) + 7;
	struct world w;
	memset(&w, 0, sizeof(w));
	w.strings = intern_create();
	res_names_init(&w.res);
	w.gpu = res_register(&w.res, "example.com/gpu", 15);
	assert_int_equal(plugin_ctx_init(&w.ctx, w.strings, &w.res), 0);

	uint32_t n_nodes = chance(30) ? 100 + below(160) : 1 + below(40);
	struct cluster *c = cluster_create(w.strings, n_nodes + 4);
	static struct node_event ev[300];
	char name[32], err[256];
	for (uint32_t i = 0; i < n_nodes; i++) {
		snprintf(name, sizeof(name), "n%u", i);
		w.node_names[w.n_names++] = sid(&w, name);
		memset(&ev[i], 0, sizeof(ev[i]));
		ev[i].kind = NODE_EVENT_ADD;
		ev[i].name = w.node_names[i];
		gen_node(&w, &ev[i].spec, ev[i].name);
	}
	assert_int_equal(cluster_apply(c, ev, n_nodes, err, sizeof(err)), 0);
	struct sched_config cfg;
	gen_config(&w, &cfg);
	/* Sometimes a class cache so small that classes are evicted and
	 * flushed between pods. */
	struct engine *e = engine_create(c, &w.ctx, &cfg, rng_next(&rng_state),
					 chance(30) ? 8192 + below(24576) : 0);
	assert_non_null(e);

	/* Running use, so scores and fits differ between nodes. */
	struct pod_spec pod;
	for (uint32_t i = 0; i < n_nodes / 2; i++) {
		gen_pod(&w, &pod);
		pod.n_ports = 0;
		pod.num_gpu = 0; /* bound without devices: none held */
		/* Bound pods count whether they fit or not, as in a cluster file. */
		assert_int_equal(ledger_account(cluster_ledger(c), below(n_nodes), &pod, NULL, +1), 0);
	}
	/* Replicas of two specs among unique pods: classes get reused (and
	 * indexed). A second engine on the same cluster places some pods too,
	 * and some placed pods are released: the first engine's class indexes
	 * must follow both through the cluster's change log. */
	struct engine *other = engine_create(c, &w.ctx, &cfg, rng_next(&rng_state), 0);
	assert_non_null(other);
	struct pod_spec replica[2];
	gen_pod(&w, &replica[0]);
	gen_pod(&w, &replica[1]);
	struct {
		struct pod_spec pod;
		struct device_assignment devices;
		uint32_t slot;
	} *held = malloc(32 * sizeof(*held));
	assert_non_null(held);
	unsigned n_held = 0;
	unsigned pods = 4 + below(28);
	for (unsigned i = 0; i < pods; i++) {
		if (i % 3 != 2) {
			pod = replica[i % 3];
		} else if (chance(40)) {
			/* A replica with its own requests: a new class that
			 * shares the replica's static results. */
			pod = replica[0];
			int64_t more = (int64_t)below(3000);
			pod.request.v[RES_CPU] += more;
			pod.nonzero_cpu_milli += more;
		} else if (chance(30)) {
			/* A replica that accepts other GPU models (or, if it
			 * asks for no GPU, now asks for one): its static
			 * results are not the replica's. */
			pod = replica[0];
			if (pod.num_gpu == 0) {
				pod.num_gpu = 1;
				pod.gpu_milli = GPU_MILLI_PER_DEVICE;
			}
			gen_models(&w, &pod);
		} else {
			gen_pod(&w, &pod);
		}
		struct placement pl;
		if (chance(20)) { /* the other engine's turn */
			assert_int_equal(engine_place(other, &pod, i, &pl), 0);
			if (pl.slot >= 0)
				assert_int_equal(commit_pod(other, &pod, (uint32_t)pl.slot,
							    &pl.devices), 0);
		} else {
			check_same(e, &pod, i, case_no, &pl);
			if (pl.slot >= 0) {
				(*placed)++;
				*gpu_placed += pod.num_gpu > 0;
				*model_placed += pod.num_gpu > 0 && pod.n_gpu_models > 0;
				assert_int_equal(commit_pod(e, &pod, (uint32_t)pl.slot,
							    &pl.devices), 0);
			} else {
				(*unschedulable)++;
			}
		}
		if (pl.slot >= 0 && n_held < 32) {
			held[n_held].pod = pod;
			held[n_held].devices = pl.devices;
			held[n_held++].slot = (uint32_t)pl.slot;
		}
		if (n_held > 0 && chance(15)) { /* a release */
			unsigned j = below(n_held);
			assert_int_equal(ledger_account(cluster_ledger(c), held[j].slot,
							&held[j].pod, &held[j].devices, -1), 0);
			held[j] = held[--n_held];
		}
		if (chance(15)) { /* a node event: a new snapshot generation */
			struct node_event x;
			memset(&x, 0, sizeof(x));
			uint32_t victim = w.node_names[below(w.n_names)];
			if (cluster_slot_of(c, victim) < 0)
				continue;
			x.name = victim;
			x.kind = (uint8_t)(chance(50) ? NODE_EVENT_CORDON
					   : chance(50) ? NODE_EVENT_UNCORDON
							: NODE_EVENT_REMOVE);
			if (chance(30)) {
				x.kind = NODE_EVENT_UPDATE;
				gen_node(&w, &x.spec, victim);
			}
			assert_int_equal(cluster_apply(c, &x, 1, err, sizeof(err)), 0);
			n_held = 0; /* a removed node's use is gone with it */
		}
		urcu_qsbr_quiescent_state();
	}
	struct engine_stats st;
	engine_get_stats(e, &st);
	*indexed += st.indexed_pods;
	*static_reuses += st.static_reuses;
	*evictions += st.class_evictions;
	*index_updates += st.index_updates;
	free(held);
	engine_destroy(other);
	engine_destroy(e);
	cluster_destroy(c);
	intern_destroy(w.strings);
}

static void test_fast_path_equals_reference(void **state)
{
	(void)state;
	uint64_t cases = 10000;
	const char *env = getenv("SHMSCHED_ENGINE_CASES");
	if (env != NULL && *env != '\0')
		cases = strtoull(env, NULL, 10);
	uint64_t placed = 0, unschedulable = 0, indexed = 0, updates = 0, reuses = 0;
	uint64_t evictions = 0, gpu_placed = 0, model_placed = 0;
	for (uint64_t i = 0; i < cases; i++)
		run_case(i, &placed, &unschedulable, &gpu_placed, &model_placed,
			 &indexed, &updates, &reuses, &evictions);
	print_message("%" PRIu64 " random cases: %" PRIu64 " pods placed (%" PRIu64
		      " with GPUs, %" PRIu64 " of them bound to a set of models) and %"
		      PRIu64 " unschedulable, identically by both paths (%" PRIu64
		      " through class indexes, %" PRIu64 " index leaf updates, %" PRIu64
		      " scans over another class's static results, %" PRIu64
		      " evictions of cold classes)\n",
		      cases, placed, gpu_placed, model_placed, unschedulable, indexed,
		      updates, reuses, evictions);
	/* The generator must exercise both outcomes and the indexed path, or
	 * the test proves little. */
	assert_true(placed > cases);
	assert_true(model_placed > cases / 20);
	assert_true(unschedulable > cases / 20);
	assert_true(indexed > cases);
	assert_true(updates > cases);
	assert_true(reuses > cases / 10);
	assert_true(evictions > cases / 100);
}

/* pkg/scheduler/schedule_one_test.go TestNumFeasibleNodesToFind. */
static void test_nodes_to_find(void **state)
{
	(void)state;
	assert_int_equal(engine_nodes_to_find(0, 10), 10);
	assert_int_equal(engine_nodes_to_find(40, 10), 10);
	assert_int_equal(engine_nodes_to_find(0, 1000), 420);
	assert_int_equal(engine_nodes_to_find(40, 1000), 400);
	assert_int_equal(engine_nodes_to_find(70, 1000), 700);
	assert_int_equal(engine_nodes_to_find(0, 6000), 300);
	assert_int_equal(engine_nodes_to_find(40, 6000), 2400);
	/* and the floors: at least 100 nodes; 5 % at most down */
	assert_int_equal(engine_nodes_to_find(1, 1000), 100);
	assert_int_equal(engine_nodes_to_find(0, 100000), 5000);
	assert_int_equal(engine_nodes_to_find(100, 100000), 100000);
}

/* A case small enough to check by hand: LeastAllocated spreads, and a pod
 * that fits nowhere gets kube-scheduler's message. */
static void test_hand_checked(void **state)
{
	(void)state;
	struct world w;
	memset(&w, 0, sizeof(w));
	w.strings = intern_create();
	res_names_init(&w.res);
	assert_int_equal(plugin_ctx_init(&w.ctx, w.strings, &w.res), 0);
	struct cluster *c = cluster_create(w.strings, 3);
	struct node_event ev[3];
	const char *names[] = {"n0", "n1", "n2"};
	for (int i = 0; i < 3; i++) {
		memset(&ev[i], 0, sizeof(ev[i]));
		ev[i].kind = NODE_EVENT_ADD;
		ev[i].name = ev[i].spec.name = sid(&w, names[i]);
		ev[i].spec.allocatable.v[RES_CPU] = 4000;
		ev[i].spec.allocatable.v[RES_MEMORY] = 8LL << 30;
		ev[i].spec.allocatable.v[RES_PODS] = 110;
	}
	ev[2].spec.unschedulable = true;
	char err[256];
	assert_int_equal(cluster_apply(c, ev, 3, err, sizeof(err)), 0);
	struct sched_config cfg;
	sched_config_default(&cfg);
	struct engine *e = engine_create(c, &w.ctx, &cfg, 1, 0);
	struct pod_spec pod;
	memset(&pod, 0, sizeof(pod));
	pod.request.v[RES_CPU] = pod.nonzero_cpu_milli = 3000;
	pod.request.v[RES_MEMORY] = pod.nonzero_mem_bytes = 1LL << 30;
	struct placement pl;
	assert_int_equal(engine_place(e, &pod, 0, &pl), 0);
	assert_true(pl.slot == 0 || pl.slot == 1); /* n2 is cordoned */
	assert_int_equal(commit_pod(e, &pod, (uint32_t)pl.slot, NULL), 0);
	int64_t first = pl.slot;
	assert_int_equal(engine_place(e, &pod, 1, &pl), 0);
	assert_int_equal(pl.slot, 1 - first); /* the emptier node */
	assert_int_equal(commit_pod(e, &pod, (uint32_t)pl.slot, NULL), 0);
	assert_int_equal(engine_place(e, &pod, 2, &pl), 0);
	assert_int_equal(pl.slot, -1);
	char msg[512];
	engine_message(e, msg, sizeof(msg));
	assert_string_equal(msg, "0/3 nodes are available: 1 node(s) were "
				 "unschedulable, 2 Insufficient cpu.");
	engine_destroy(e);
	cluster_destroy(c);
	intern_destroy(w.strings);
}

int main(void)
{
	urcu_qsbr_register_thread();
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_nodes_to_find),
		cmocka_unit_test(test_hand_checked),
		cmocka_unit_test(test_fast_path_equals_reference),
	};
	int rc = cmocka_run_group_tests(tests, NULL, NULL);
	urcu_qsbr_unregister_thread();
	return rc;
}
