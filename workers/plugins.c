/* Filter and score plugins, one pod against one node (see plugins.h).
 *
 * What: kube-scheduler's default-profile filters (NodeUnschedulable,
 * NodeName, TaintToleration, NodeAffinity, NodePorts, NodeResourcesFit) and
 * the scores the engine combines (NodeResourcesFit's Least/MostAllocated,
 * NodeResourcesBalancedAllocation, NodeAffinity and TaintToleration before
 * normalising, DefaultNormalizeScore). Each function follows the Go file
 * it names; where the Go code has a quirk we keep it (NotIn and
 * DoesNotExist match an absent label, an empty term matches nothing,
 * MostAllocated caps the request at allocatable, LeastAllocated scores an
 * overcommitted resource 0).
 *
 * Invariants relied on: node labels are sorted by key with unique keys, and
 * so is the pod's nodeSelector (shm/model.h); every string is an interned
 * id, so equality is integer equality; id 0 is "".
 *
 * Cost: no allocation, no system call, no lock. A filter call is
 * O(selector + labels) for nodeSelector (one merge walk),
 * O(exprs * (log labels + values)) for affinity terms, O(taints +
 * tolerations) for taints in the common case (a per-call key summary
 * answers most taints without scanning the tolerations; the worst case is
 * NODE_MAX_TAINTS * POD_MAX_TOLERATIONS = 256 comparisons), O(pod ports *
 * node ports) for ports (pod ports <= 8) and O(RES_MAX) for resources.
 * Scores are O(configured resources), plus O(preferred terms) for affinity.
 */
#include "workers/plugins.h"

#include "workers/device_choice.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

/* Balanced allocation must round exactly as Go does on amd64: one IEEE
 * operation at a time, never a fused multiply-add (kube-scheduler's release
 * builds target GOAMD64=v1, which has no FMA). */
#if defined(__clang__)
#pragma STDC FP_CONTRACT OFF
#endif

int plugin_ctx_init(struct plugin_ctx *ctx, struct intern *strings,
		    const struct res_names *res)
{
	int rc;

	memset(ctx, 0, sizeof(*ctx));
	ctx->strings = strings;
	ctx->res = res;
	rc = intern_add_str(strings, "node.kubernetes.io/unschedulable",
			    &ctx->id_unschedulable_key);
	if (rc)
		return rc;
	rc = intern_add_str(strings, "metadata.name", &ctx->id_metadata_name);
	if (rc)
		return rc;
	rc = intern_add_str(strings, "0.0.0.0", &ctx->id_any_ip);
	if (rc)
		return rc;
	rc = intern_add_str(strings, "kubernetes.io/hostname", &ctx->id_hostname_key);
	if (rc)
		return rc;
	return intern_add_str(strings, "topology.kubernetes.io/zone", &ctx->id_zone_key);
}

/* --- tolerations (staging/src/k8s.io/api/core/v1/toleration.go) --- */

bool toleration_tolerates(const struct toleration *t, const struct taint *taint)
{
	/* An empty effect or key matches any; Exists ignores the value. The
	 * comparison operators (Gt/Lt, alpha) are not in the model, so any
	 * other operator tolerates nothing, as Go's default case. */
	bool effect_ok = t->effect == TAINT_EFFECT_ALL || t->effect == taint->effect;
	bool key_ok = t->key == 0 || t->key == taint->key;
	bool value_ok = t->op == TOL_EXISTS ||
			(t->op == TOL_EQUAL && t->value == taint->value);
	return effect_ok & key_ok & value_ok;
}

/* A summary of a pod's tolerations that settles most taints without a
 * scan: the effects tolerated for every key (empty key with Exists), and a
 * 64-bit Bloom filter of the keys the others name. A taint whose effect is
 * in `wild_effects` is tolerated; one whose key misses the filter is not
 * (no toleration could name it); only the rest scan the list. */
struct tol_summary {
	uint64_t keys;        /* bit (key % 64) for each keyed toleration */
	uint8_t wild_effects; /* bit per enum taint_effect */
};

static inline uint64_t key_bit(uint32_t key)
{
	/* Ids are dense, so the low bits spread well enough. */
	return UINT64_C(1) << (key & 63);
}

static struct tol_summary tol_summarize(const struct pod_spec *pod)
{
	struct tol_summary s = {0, 0};

	for (unsigned i = 0; i < pod->n_tolerations; i++) {
		const struct toleration *t = &pod->tolerations[i];
		if (t->key == 0 && t->op == TOL_EXISTS) {
			s.wild_effects |= t->effect == TAINT_EFFECT_ALL ?
					  (uint8_t)0xff : (uint8_t)(1u << t->effect);
		} else if (t->key == 0) {
			/* Empty key with Equal (API validation refuses it, but
			 * ToleratesTaint accepts it): may match any key. */
			s.keys = ~UINT64_C(0);
		} else {
			s.keys |= key_bit(t->key);
		}
	}
	return s;
}

static bool tolerated(const struct pod_spec *pod, const struct tol_summary *s,
		      const struct taint *taint)
{
	if (s->wild_effects & (1u << taint->effect))
		return true;
	if (!(s->keys & key_bit(taint->key)))
		return false;
	for (unsigned i = 0; i < pod->n_tolerations; i++)
		if (toleration_tolerates(&pod->tolerations[i], taint))
			return true;
	return false;
}

/* --- filters --- */

bool filter_unschedulable(const struct plugin_ctx *ctx, const struct pod_spec *pod,
			  const struct node_spec *node)
{
	if (!node->unschedulable)
		return true;
	/* The plugin asks whether the pod tolerates this taint, value "". */
	const struct taint t = {
		.key = ctx->id_unschedulable_key,
		.value = 0,
		.effect = TAINT_NO_SCHEDULE,
	};
	for (unsigned i = 0; i < pod->n_tolerations; i++)
		if (toleration_tolerates(&pod->tolerations[i], &t))
			return true;
	return false;
}

bool filter_node_name(const struct pod_spec *pod, const struct node_spec *node)
{
	return pod->node_name == 0 || pod->node_name == node->name;
}

int filter_taints(const struct pod_spec *pod, const struct node_spec *node)
{
	if (node->n_taints == 0)
		return -1;
	struct tol_summary s = tol_summarize(pod);
	for (unsigned i = 0; i < node->n_taints; i++) {
		const struct taint *t = &node->taints[i];
		/* DoNotScheduleTaintsFilterFunc: NoSchedule and NoExecute. */
		if (t->effect != TAINT_NO_SCHEDULE && t->effect != TAINT_NO_EXECUTE)
			continue;
		if (!tolerated(pod, &s, t))
			return (int)i;
	}
	return -1;
}

/* The value of label `key` on the node, by binary search over the sorted
 * labels. Returns false when the node has no such label. */
static bool node_label(const struct node_spec *node, uint32_t key, uint32_t *value)
{
	unsigned lo = 0, hi = node->n_labels;

	while (lo < hi) {
		unsigned mid = lo + (hi - lo) / 2;
		uint32_t k = node->labels[mid].key;
		if (k < key) {
			lo = mid + 1;
		} else if (k > key) {
			hi = mid;
		} else {
			*value = node->labels[mid].value;
			return true;
		}
	}
	return false;
}

static bool value_in(const struct pod_spec *pod, const struct sel_expr *e, uint32_t v)
{
	const uint32_t *vals = &pod->values[e->first_value];
	bool found = false;

	for (unsigned i = 0; i < e->n_values; i++)
		found |= vals[i] == v;
	return found;
}

/* One requirement against the node (apimachinery labels.Requirement.Matches,
 * and for matchFields the one-term field selector on metadata.name). */
static bool expr_matches(const struct plugin_ctx *ctx, const struct pod_spec *pod,
			 const struct sel_expr *e, const struct node_spec *node)
{
	/* A requirement labels.NewRequirement refuses makes its term a parse
	 * error, and LazyErrorNodeSelector.Match skips such a term: it
	 * matches no node (component-helpers nodeaffinity.go). */
	if (e->invalid)
		return false;
	if (e->field) {
		/* nodeSelectorRequirementsAsFieldSelector: metadata.name only,
		 * In or NotIn with exactly one value; anything else is a parse
		 * error, and a term with an error matches nothing. */
		if (e->key != ctx->id_metadata_name || e->n_values != 1)
			return false;
		uint32_t want = pod->values[e->first_value];
		switch (e->op) {
		case SEL_IN:
			return node->name == want;
		case SEL_NOT_IN:
			return node->name != want;
		default:
			return false;
		}
	}

	uint32_t value = 0;
	bool has = node_label(node, e->key, &value);
	int64_t n;

	switch (e->op) {
	case SEL_IN:
		return has && value_in(pod, e, value);
	case SEL_NOT_IN:
		/* An absent label is "not in"; an empty list is a parse error. */
		return e->n_values != 0 && (!has || !value_in(pod, e, value));
	case SEL_EXISTS:
		return has;
	case SEL_DOES_NOT_EXIST:
		return !has;
	case SEL_GT:
		/* The label must exist and parse as strconv.ParseInt does. */
		return has && intern_int(ctx->strings, value, &n) && n > e->number;
	case SEL_LT:
		return has && intern_int(ctx->strings, value, &n) && n < e->number;
	default:
		return false;
	}
}

/* A node selector term: its expressions ANDed; an empty term matches
 * nothing (component-helpers nodeaffinity.go). */
static bool term_matches(const struct plugin_ctx *ctx, const struct pod_spec *pod,
			 const struct sel_term *term, const struct node_spec *node)
{
	if (term->n_exprs == 0)
		return false;
	for (unsigned i = 0; i < term->n_exprs; i++)
		if (!expr_matches(ctx, pod, &pod->exprs[term->first_expr + i], node))
			return false;
	return true;
}

/* spec.nodeSelector: every key=value must be a node label. Both lists are
 * sorted by key, so one merge walk does it. */
static bool selector_matches(const struct pod_spec *pod, const struct node_spec *node)
{
	unsigned j = 0;

	for (unsigned i = 0; i < pod->n_selector; i++) {
		const struct label *want = &pod->selector[i];
		while (j < node->n_labels && node->labels[j].key < want->key)
			j++;
		if (j == node->n_labels || node->labels[j].key != want->key ||
		    node->labels[j].value != want->value)
			return false;
		j++;
	}
	return true;
}

bool filter_affinity(const struct plugin_ctx *ctx, const struct pod_spec *pod,
		     const struct node_spec *node)
{
	if (!selector_matches(pod, node))
		return false;
	if (!pod->has_required)
		return true;
	/* Terms are ORed; with no term at all nothing matches. */
	for (unsigned i = 0; i < pod->n_terms; i++)
		if (term_matches(ctx, pod, &pod->terms[i], node))
			return true;
	return false;
}

bool affinity_terms_conflict(const struct pod_spec *pod)
{
	/* NodeAffinity PreFilter (nodeaffinity/node_affinity.go): each term's
	 * `metadata.name In` requirements are intersected, the terms' sets
	 * united; a term without one lets every node through. The decoder
	 * gives a field requirement exactly one value, so a term's
	 * intersection is empty exactly when two of its In values differ. */
	if (!pod->has_required || pod->n_terms == 0)
		return false;
	for (unsigned i = 0; i < pod->n_terms; i++) {
		const struct sel_term *t = &pod->terms[i];
		bool any = false, empty = false;
		uint32_t name = 0;
		for (unsigned k = 0; k < t->n_exprs; k++) {
			const struct sel_expr *e = &pod->exprs[t->first_expr + k];
			if (!e->field || e->op != SEL_IN || e->n_values != 1)
				continue;
			uint32_t v = pod->values[e->first_value];
			empty |= any && v != name;
			name = v;
			any = true;
		}
		if (!any || !empty)
			return false;
	}
	return true;
}

bool filter_ports(const struct plugin_ctx *ctx, const struct pod_spec *pod,
		  const struct node_view *node)
{
	/* HostPortInfo.CheckConflict: "" is sanitised to 0.0.0.0, which
	 * conflicts with every IP; other IPs conflict with themselves. */
	for (unsigned i = 0; i < pod->n_ports; i++) {
		const struct host_port *want = &pod->ports[i];
		if (want->port == 0)
			continue; /* CheckConflict ignores port <= 0 */
		bool want_any = want->ip == 0 || want->ip == ctx->id_any_ip;
		for (unsigned j = 0; j < node->n_ports; j++) {
			const struct host_port *used = &node->ports[j];
			bool used_any = used->ip == 0 || used->ip == ctx->id_any_ip;
			if (used->port == want->port && used->protocol == want->protocol &&
			    (want_any | used_any | (used->ip == want->ip)))
				return false;
		}
	}
	return true;
}

unsigned filter_resources(const struct pod_spec *pod, const struct node_view *node,
			  struct reason out[FILTER_MAX_REASONS])
{
	const int64_t *alloc = node->spec->allocatable.v;
	const int64_t *used = node->used->v;
	const int64_t *req = pod->request.v;
	unsigned n = 0;

	if (used[RES_PODS] + 1 > alloc[RES_PODS])
		out[n++] = (struct reason){.code = REASON_TOO_MANY_PODS};

	/* fitsRequest checks nothing else for a pod that requests nothing;
	 * the per-resource test below skips zero requests anyway, so the
	 * early return is only a shortcut. */
	int64_t any = 0;
	for (unsigned i = 0; i < RES_MAX; i++)
		any |= i == RES_PODS ? 0 : req[i];
	if (any == 0)
		return n;

	for (unsigned i = 0; i < RES_MAX; i++) {
		if (i == RES_PODS)
			continue;
		if (req[i] > 0 && req[i] > alloc[i] - used[i])
			out[n++] = (struct reason){
				.code = REASON_INSUFFICIENT,
				.resource = (uint8_t)i,
			};
	}
	return n;
}

unsigned filter_node(const struct plugin_ctx *ctx, const struct pod_spec *pod,
		     const struct node_view *node,
		     struct reason out[FILTER_MAX_REASONS])
{
	return filter_node_profile(ctx, NULL, pod, node, out);
}

unsigned filter_node_profile(const struct plugin_ctx *ctx,
			     const struct score_config *profile,
			     const struct pod_spec *pod, const struct node_view *node,
			     struct reason out[FILTER_MAX_REASONS])
{
	const struct node_spec *spec = node->spec;

	if (!filter_unschedulable(ctx, pod, spec)) {
		out[0] = (struct reason){.code = REASON_UNSCHEDULABLE};
		return 1;
	}
	if (!filter_node_name(pod, spec)) {
		out[0] = (struct reason){.code = REASON_NODE_NAME};
		return 1;
	}
	int taint = filter_taints(pod, spec);
	if (taint >= 0) {
		out[0] = (struct reason){
			.code = REASON_TAINT,
			.key = spec->taints[taint].key,
			.value = spec->taints[taint].value,
		};
		return 1;
	}
	if (!filter_added_affinity(ctx, profile, spec)) {
		out[0] = (struct reason){.code = REASON_ENFORCED_AFFINITY};
		return 1;
	}
	if (!filter_affinity(ctx, pod, spec)) {
		out[0] = (struct reason){.code = REASON_AFFINITY};
		return 1;
	}
	if (pod->num_gpu > 0 && !filter_device_model(pod, spec)) {
		out[0] = (struct reason){.code = REASON_GPU_MODEL};
		return 1;
	}
	if (pod->n_ports && !filter_ports(ctx, pod, node)) {
		out[0] = (struct reason){.code = REASON_PORTS};
		return 1;
	}
	unsigned n = filter_resources(pod, node, out);
	if (n > 0 || !devices_wanted(pod))
		return n;
	return filter_devices(pod, node, out);
}

bool filter_device_model(const struct pod_spec *pod, const struct node_spec *node)
{
	return devices_model_ok(&node->devices, pod);
}

unsigned filter_devices(const struct pod_spec *pod, const struct node_view *node,
			struct reason *out)
{
	switch (devices_fit(&node->spec->devices, node->dev, pod)) {
	case DEVICE_FITS:
		return 0;
	case DEVICE_MISFIT_MODEL:
		out[0] = (struct reason){.code = REASON_GPU_MODEL};
		return 1;
	case DEVICE_MISFIT_GPU:
		out[0] = (struct reason){.code = REASON_GPU};
		return 1;
	default:
		out[0] = (struct reason){.code = REASON_CORES};
		return 1;
	}
}

const char *const reason_fixed_text[REASON_INSUFFICIENT + 1] = {
	[REASON_UNSCHEDULABLE] = "node(s) were unschedulable",
	[REASON_NODE_NAME] = "node(s) didn't match the requested node name",
	[REASON_AFFINITY] = "node(s) didn't match Pod's node affinity/selector",
	[REASON_PORTS] = "node(s) didn't have free ports for the requested pod ports",
	[REASON_TOO_MANY_PODS] = "Too many pods",
	[REASON_GPU_MODEL] = "node(s) didn't have the requested GPU model",
	[REASON_GPU] = "node(s) didn't have a GPU device with enough free",
	[REASON_CORES] = "node(s) didn't have enough free exclusive cores",
	/* podtopologyspread/filtering.go, interpodaffinity/filtering.go */
	[REASON_SPREAD_LABEL] = "node(s) didn't match pod topology spread "
				"constraints (missing required label)",
	[REASON_SPREAD] = "node(s) didn't match pod topology spread constraints",
	[REASON_POD_AFFINITY] = "node(s) didn't match pod affinity rules",
	[REASON_POD_ANTI_AFFINITY] = "node(s) didn't match pod anti-affinity rules",
	[REASON_EXISTING_ANTI_AFFINITY] = "node(s) didn't satisfy existing pods "
					  "anti-affinity rules",
	/* nodeaffinity/node_affinity.go errReasonEnforced */
	[REASON_ENFORCED_AFFINITY] = "node(s) didn't match scheduler-enforced "
				     "node affinity",
};

bool reason_unresolvable(uint8_t code)
{
	switch ((enum reason_code)code) {
	case REASON_UNSCHEDULABLE:   /* nodeunschedulable: UnschedulableAndUnresolvable */
	case REASON_NODE_NAME:       /* nodename */
	case REASON_TAINT:           /* tainttoleration */
	case REASON_AFFINITY:        /* nodeaffinity */
	case REASON_ENFORCED_AFFINITY: /* nodeaffinity: errReasonEnforced */
	case REASON_SPREAD_LABEL:    /* podtopologyspread: ErrReasonNodeLabelNotMatch */
	case REASON_POD_AFFINITY:    /* interpodaffinity: ErrReasonAffinityRulesNotMatch */
	case REASON_GPU_MODEL:       /* no preemption brings another model */
		return true;
	case REASON_PORTS:
	case REASON_TOO_MANY_PODS:
	case REASON_GPU:
	case REASON_CORES:
	case REASON_SPREAD:
	case REASON_POD_ANTI_AFFINITY:
	case REASON_EXISTING_ANTI_AFFINITY:
	case REASON_INSUFFICIENT:
		return false;
	}
	return false;
}

int reason_format(const struct plugin_ctx *ctx, const struct reason *r, char *buf,
		  size_t len)
{
	switch ((enum reason_code)r->code) {
	case REASON_TAINT:
		return snprintf(buf, len, REASON_TAINT_PREFIX "%s: %s}",
				intern_str(ctx->strings, r->key),
				intern_str(ctx->strings, r->value));
	case REASON_INSUFFICIENT:
		return snprintf(buf, len, REASON_INSUFFICIENT_PREFIX "%s",
				r->resource < RES_MAX ? ctx->res->name[r->resource] : "?");
	case REASON_UNSCHEDULABLE:
	case REASON_NODE_NAME:
	case REASON_AFFINITY:
	case REASON_PORTS:
	case REASON_TOO_MANY_PODS:
	case REASON_GPU_MODEL:
	case REASON_GPU:
	case REASON_CORES:
	case REASON_SPREAD_LABEL:
	case REASON_SPREAD:
	case REASON_POD_AFFINITY:
	case REASON_POD_ANTI_AFFINITY:
	case REASON_EXISTING_ANTI_AFFINITY:
	case REASON_ENFORCED_AFFINITY:
		return snprintf(buf, len, "%s", reason_fixed_text[r->code]);
	}
	return snprintf(buf, len, "unknown reason %u", (unsigned)r->code);
}

/* --- scores --- */

int64_t score_gpu_best_fit(const struct pod_spec *pod, const struct node_view *node,
			   int64_t cpu_max, int64_t gpu_max)
{
	const struct node_spec *spec = node->spec;
	int64_t cpu_left = spec->allocatable.v[RES_CPU] - node->used->v[RES_CPU] -
			   pod->request.v[RES_CPU];
	int64_t s = 100 * SCORE_FINE;
	if (cpu_max > 0)
		s -= 50 * SCORE_FINE * cpu_left / cpu_max;
	if (gpu_max > 0) {
		int64_t gpu_left = -(int64_t)pod->num_gpu * pod->gpu_milli;
		for (unsigned g = 0; g < spec->devices.n_gpus; g++)
			gpu_left += node->dev->gpu_free[g];
		s -= 50 * SCORE_FINE * gpu_left / gpu_max;
	}
	return s;
}

int64_t score_gpu_frag_of_growth(int64_t growth, uint64_t mix_total)
{
	if (mix_total == 0)
		return 50 * SCORE_FINE;
	double x = -(double)growth / (double)mix_total / 1000.0;
	return (int64_t)(100.0 * SCORE_FINE / (1.0 + exp(-x)) + 0.5);
}

/* resource_allocation.go calculateResourceAllocatableRequest, split in
 * two: what depends on the pod alone (score_plan_init) and what on the
 * node (score_plan_fit, score_plan_balanced). A resource is left out
 * ((0, 0)) when it is not one the scorers know ("pods", past RES_MAX),
 * when it is a named resource the pod does not request, or when the
 * node's allocatable is 0. `nonzero` picks the 100m / 200Mi stand-ins for
 * cpu and memory, as NodeResourcesFit does and BalancedAllocation does
 * not. */
static bool plan_entry(const struct pod_spec *pod, unsigned res, bool nonzero,
		       struct score_plan_res *out)
{
	if (res >= RES_MAX || res == RES_PODS)
		return false;
	out->res = (uint8_t)res;
	out->used = SCORE_USED_ACTUAL;
	out->pod = pod->request.v[res];
	if (nonzero && res == RES_CPU) {
		out->pod = pod->nonzero_cpu_milli;
		out->used = SCORE_USED_NONZERO_CPU;
	} else if (nonzero && res == RES_MEMORY) {
		out->pod = pod->nonzero_mem_bytes;
		out->used = SCORE_USED_NONZERO_MEM;
	} else if (res >= RES_FIRST_NAMED && out->pod == 0) {
		return false; /* a scalar the pod does not ask for is bypassed */
	}
	return true;
}

void score_plan_init(struct score_plan *p, const struct score_config *cfg,
		     const struct pod_spec *pod)
{
	memset(p, 0, sizeof(*p));
	p->cfg = cfg;
	for (unsigned i = 0; i < cfg->n_fit_resources && i < RES_MAX; i++)
		if (plan_entry(pod, cfg->fit_resources[i].resource, true,
			       &p->fit[p->n_fit])) {
			p->fit[p->n_fit].weight = cfg->fit_resources[i].weight;
			p->n_fit++;
		}
	for (unsigned i = 0; i < cfg->n_balanced_resources && i < RES_MAX; i++)
		if (plan_entry(pod, cfg->balanced_resources[i].resource, false,
			       &p->balanced[p->n_balanced]))
			p->n_balanced++;
}

int64_t score_shape(const struct shape_point *shape, unsigned n, int64_t p)
{
	/* Scores scale by MaxNodeScore / MaxCustomPriorityScore (10) first,
	 * then interpolate in integers, truncating as Go does. */
	const int64_t scale = MAX_NODE_SCORE / SHAPE_MAX_SCORE;
	for (unsigned i = 0; i < n; i++) {
		if (p > shape[i].utilization)
			continue;
		if (i == 0)
			return shape[0].score * scale;
		int64_t s0 = shape[i - 1].score * scale, s1 = shape[i].score * scale;
		int64_t u0 = shape[i - 1].utilization, u1 = shape[i].utilization;
		return s0 + (s1 - s0) * (p - u0) / (u1 - u0);
	}
	return n > 0 ? shape[n - 1].score * scale : 0;
}

/* requested_to_capacity_ratio.go scaledUtilization: requested * 100 /
 * capacity, clamped to 0..100, exact for any int64 (128-bit product). */
static int64_t scaled_utilization(int64_t req, int64_t alloc)
{
	if (alloc <= 0 || req <= 0)
		return 0;
	if (req >= alloc)
		return 100;
	return (int64_t)((__int128)req * 100 / alloc);
}

/* Go's math.Round(float64(a) / float64(b)) for a >= 0, b > 0 (halves away
 * from zero), in integers: the scores here are small enough that the
 * float quotient is never within rounding of a half it is not exactly. */
static int64_t round_div(int64_t a, int64_t b)
{
	return (2 * a + b) / (2 * b);
}

/* RequestedToCapacityRatio: each resource's utilization through the shape;
 * an overcommitted resource scores as full; one scoring 0 counts in
 * neither sum; the mean rounds half away from zero (math.Round). */
int64_t score_plan_rtcr(const struct score_plan *p, const struct node_view *node)
{
	const struct score_config *cfg = p->cfg;
	int64_t node_score = 0, weight_sum = 0;
	for (unsigned i = 0; i < p->n_fit; i++) {
		int64_t alloc, req;
		if (!score_plan_node(&p->fit[i], node, &alloc, &req))
			continue;
		int64_t s = score_shape(cfg->shape, cfg->n_shape,
					req > alloc ? 100 : scaled_utilization(req, alloc));
		if (s <= 0)
			continue;
		int64_t w = p->fit[i].weight;
		node_score += s * w;
		weight_sum += w;
	}
	return weight_sum == 0 ? 0 : round_div(node_score, weight_sum);
}

int64_t score_fit(const struct score_config *cfg, const struct pod_spec *pod,
		  const struct node_view *node)
{
	struct score_plan p;
	score_plan_init(&p, cfg, pod);
	return score_plan_fit(&p, node);
}

/* Correctly rounded square root, as Go's math.Sqrt, without pulling libm
 * into a library that otherwise needs only libc. */
static double sqrt_exact(double x)
{
#if defined(__SSE2__)
	return _mm_cvtsd_f64(_mm_sqrt_sd(_mm_setzero_pd(), _mm_set_sd(x)));
#else
	return sqrt(x);
#endif
}

double score_balanced_std(const double *frac, unsigned n, double total)
{
	/* The population standard deviation: same operations, same order as
	 * Go's. */
	double mean = total / (double)n;
	double sum = 0;
	for (unsigned i = 0; i < n; i++) {
		double d = frac[i] - mean;
		double sq = d * d;
		sum = sum + sq;
	}
	return sqrt_exact(sum / (double)n);
}

int64_t score_balanced(const struct score_config *cfg, const struct pod_spec *pod,
		       const struct node_view *node)
{
	struct score_plan p;
	score_plan_init(&p, cfg, pod);
	return score_plan_balanced(&p, node);
}

bool score_balanced_skips(const struct score_config *cfg, const struct pod_spec *pod)
{
	/* isBestEffortPod over calculatePodResourceRequestList with actual
	 * requests; "pods" and unknown entries read as 0. */
	for (unsigned i = 0; i < cfg->n_balanced_resources && i < RES_MAX; i++) {
		unsigned r = cfg->balanced_resources[i].resource;
		if (r < RES_MAX && r != RES_PODS && pod->request.v[r] != 0)
			return false;
	}
	return true;
}

int64_t score_affinity_raw(const struct plugin_ctx *ctx, const struct pod_spec *pod,
			   const struct node_spec *node)
{
	int64_t score = 0;

	/* PreferredSchedulingTerms: weight-0 and empty terms are dropped,
	 * and term_matches already fails an empty term. */
	for (unsigned i = 0; i < pod->n_preferred; i++) {
		const struct pref_term *p = &pod->preferred[i];
		if (p->weight != 0 && term_matches(ctx, pod, &p->term, node))
			score += p->weight;
	}
	return score;
}

int64_t score_taint_raw(const struct pod_spec *pod, const struct node_spec *node)
{
	/* Only PreferNoSchedule taints count. Go first keeps the tolerations
	 * with an empty or PreferNoSchedule effect; any other effect fails
	 * ToleratesTaint's effect test against such a taint anyway. */
	if (node->n_taints == 0)
		return 0;
	struct tol_summary s = tol_summarize(pod);
	int64_t count = 0;
	for (unsigned i = 0; i < node->n_taints; i++) {
		const struct taint *t = &node->taints[i];
		if (t->effect == TAINT_PREFER_NO_SCHEDULE && !tolerated(pod, &s, t))
			count++;
	}
	return count;
}

void score_normalize(int64_t *scores, size_t n, bool reverse)
{
	int64_t max = 0; /* Go starts from 0, so negatives never raise it */

	for (size_t i = 0; i < n; i++)
		if (scores[i] > max)
			max = scores[i];
	if (max == 0) {
		if (reverse)
			for (size_t i = 0; i < n; i++)
				scores[i] = MAX_NODE_SCORE;
		return;
	}
	for (size_t i = 0; i < n; i++) {
		int64_t s = MAX_NODE_SCORE * scores[i] / max;
		scores[i] = reverse ? MAX_NODE_SCORE - s : s;
	}
}
