/* unit.interpod_oracle: InterPodAffinity and PodTopologySpread, as the
 * engine runs them (workers/interpod.c, through engine_place_reference),
 * against a second implementation written here straight from
 * kube-scheduler's code, pod by pod, with none of the engine's counting
 * by group.
 *
 * SHMSCHED_ORACLE_CASES random worlds (default 400): 1..40 nodes with
 * hostname, zone (sometimes missing) and rack labels and a tier label
 * some pods select; 0..60 placed pods of random groups (namespaces,
 * labels, required and preferred affinity and anti-affinity on hostname,
 * zone and rack, with every selector operator, own / listed / all
 * namespaces, spread constraints hard and soft with minDomains and both
 * inclusion policies); then 8 incoming pods, each placed with every
 * node searched, with now and then a node's labels changed between two
 * (a new snapshot). Half the worlds' profile spreads by default with its
 * own list (PodTopologySpreadArgs defaultingType List: random constraints,
 * hard or soft), the others with kube's System defaults; the pods a
 * Service would select get a default selector set by hand.
 * For every node the engine's inter-pod reason (or none)
 * must be the oracle's, and for every feasible node its normalised
 * PodTopologySpread and InterPodAffinity scores must be the oracle's.
 * Resources never run short, so no other filter decides. */
#define _LGPL_SOURCE 1

#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <urcu/urcu-qsbr.h>

#include <cmocka.h>

#include "base/base.h"
#include "ingest/ingest.h"
#include "shm/shm.h"
#include "workers/workers.h"

#define MAX_NODES 40
#define MAX_PODS 80

static uint64_t rng_state;

static uint32_t below(uint32_t n)
{
	return (uint32_t)(rng_next(&rng_state) % n);
}

static bool chance(unsigned percent)
{
	return below(100) < percent;
}

static struct intern *strings;
static struct res_names res;
static struct plugin_ctx ctx;

static uint32_t sid(const char *s)
{
	uint32_t v;
	assert_int_equal(intern_add_str(strings, s, &v), 0);
	return v;
}

static const char *const apps[] = {"a", "b", "c"};
static const char *const tiers[] = {"x", "y"};
static const char *const nss[] = {"default", "other"};

/* --- the world ------------------------------------------------------------ */

struct placed {
	uint32_t slot;
	struct pod_group g;
};

static struct node_spec nodes[MAX_NODES];
static unsigned n_nodes;
static struct placed placed[MAX_PODS];
static unsigned n_placed;

static int label_cmp(const void *a, const void *b)
{
	const struct label *x = a, *y = b;
	return (x->key > y->key) - (x->key < y->key);
}

static uint32_t topo_key(void)
{
	static const char *const keys[] = {"kubernetes.io/hostname",
					   "topology.kubernetes.io/zone", "rack"};
	return sid(keys[below(3)]);
}

static void gen_selector(struct pod_group *g, struct group_selector *sel)
{
	if (chance(5)) { /* nil: matches nothing */
		*sel = (struct group_selector){0};
		return;
	}
	*sel = (struct group_selector){.present = true, .first_req = g->n_reqs};
	unsigned n = below(3); /* 0: {} matches everything */
	for (unsigned i = 0; i < n && g->n_reqs < GROUP_MAX_REQS; i++) {
		struct group_req *r = &g->reqs[g->n_reqs++];
		bool tier = chance(30);
		r->key = sid(tier ? "tier" : "app");
		r->op = (uint8_t)(SEL_IN + below(4));
		r->first_value = g->n_values;
		r->n_values = 0;
		if (r->op == SEL_IN || r->op == SEL_NOT_IN) {
			unsigned nv = 1 + below(2);
			for (unsigned k = 0; k < nv; k++, r->n_values++)
				g->values[g->n_values++] =
					sid(tier ? tiers[below(2)] : apps[below(3)]);
		}
		sel->n_reqs++;
	}
}

static void gen_group(struct pod_group *g, unsigned terms_pct, unsigned spread_pct)
{
	memset(g, 0, sizeof(*g));
	g->ns = sid(nss[chance(80) ? 0 : 1]);
	if (chance(85))
		g->labels[g->n_labels++] = (struct label){sid("app"), sid(apps[below(3)])};
	if (chance(40))
		g->labels[g->n_labels++] = (struct label){sid("tier"), sid(tiers[below(2)])};
	qsort(g->labels, g->n_labels, sizeof(g->labels[0]), label_cmp);
	if (chance(terms_pct)) {
		unsigned n = 1 + below(3);
		for (unsigned k = 0; k < n; k++) {
			struct group_term t = {.kind = (uint8_t)below(4),
					       .topology_key = topo_key()};
			if (t.kind >= TERM_PREFERRED_AFFINITY)
				t.weight = (int32_t)(1 + below(100));
			gen_selector(g, &t.selector);
			unsigned how = below(10);
			t.first_ns = g->n_namespaces;
			if (how == 0) {
				t.all_namespaces = true;
			} else if (how == 1) {
				g->namespaces[g->n_namespaces++] = sid("other");
				g->namespaces[g->n_namespaces++] = sid("default");
				t.n_ns = 2;
			} else {
				g->namespaces[g->n_namespaces++] = g->ns;
				t.n_ns = 1;
			}
			g->terms[g->n_terms++] = t;
		}
		/* Sorted by kind, keeping order within a kind. */
		for (unsigned i = 1; i < g->n_terms; i++)
			for (unsigned j = i; j > 0 && g->terms[j - 1].kind > g->terms[j].kind; j--) {
				struct group_term x = g->terms[j];
				g->terms[j] = g->terms[j - 1];
				g->terms[j - 1] = x;
			}
	}
	if (chance(spread_pct)) {
		unsigned n = 1 + below(2);
		for (unsigned k = 0; k < n; k++) {
			struct group_spread c = {.topology_key = topo_key(),
						 .max_skew = (int32_t)(1 + below(3)),
						 .min_domains = 1, .hard = chance(60)};
			if (c.hard && chance(30))
				c.min_domains = (int32_t)(1 + below(5));
			c.node_affinity_policy = chance(80) ? SPREAD_POLICY_HONOR
							    : SPREAD_POLICY_IGNORE;
			c.node_taints_policy = chance(70) ? SPREAD_POLICY_IGNORE
							  : SPREAD_POLICY_HONOR;
			gen_selector(g, &c.selector);
			g->spread[g->n_spread++] = c;
		}
	}
}

static void intern_group(const struct pod_group *g, struct pod_spec *p)
{
	char enc[GROUP_ENCODED_MAX + 1];
	int len = pod_group_encode(g, enc, sizeof(enc));
	assert_true(len > 0);
	assert_int_equal(intern_add(strings, enc, (size_t)len, &p->group), 0);
	p->group_terms = g->n_terms > 0;
}

static void gen_nodes(struct cluster *c)
{
	static struct node_event ev[MAX_NODES];
	char name[16], err[256];
	n_nodes = 1 + below(MAX_NODES);
	for (unsigned i = 0; i < n_nodes; i++) {
		struct node_spec *n = &nodes[i];
		memset(n, 0, sizeof(*n));
		snprintf(name, sizeof(name), "n%u", i);
		n->name = sid(name);
		n->allocatable.v[RES_CPU] = 1000000;
		n->allocatable.v[RES_MEMORY] = INT64_C(1) << 40;
		n->allocatable.v[RES_PODS] = 1000;
		n->labels[n->n_labels++] = (struct label){sid("kubernetes.io/hostname"),
							  n->name};
		if (chance(85)) {
			char z[8];
			snprintf(z, sizeof(z), "z%u", below(4));
			n->labels[n->n_labels++] = (struct label){
				sid("topology.kubernetes.io/zone"), sid(z)};
		}
		if (chance(60)) {
			char r[8];
			snprintf(r, sizeof(r), "r%u", below(3));
			n->labels[n->n_labels++] = (struct label){sid("rack"), sid(r)};
		}
		if (chance(50))
			n->labels[n->n_labels++] = (struct label){sid("tier"),
								  sid(tiers[below(2)])};
		qsort(n->labels, n->n_labels, sizeof(n->labels[0]), label_cmp);
		if (chance(15))
			n->taints[n->n_taints++] = (struct taint){sid("spot"), sid("true"),
								  TAINT_NO_SCHEDULE};
		ev[i] = (struct node_event){.kind = NODE_EVENT_ADD, .name = n->name,
					    .spec = *n};
	}
	assert_int_equal(cluster_apply(c, ev, n_nodes, err, sizeof(err)), 0);
}

/* --- the oracle: kube-scheduler's code, pod by pod ------------------------ */

static bool node_label(const struct node_spec *n, uint32_t key, uint32_t *v)
{
	return labels_get(n->labels, n->n_labels, key, v);
}

/* A map of topology pairs to counts, small and linear. */
struct pairs {
	unsigned n;
	uint32_t key[4096], value[4096];
	int64_t count[4096];
};

static int64_t *pair_at(struct pairs *m, uint32_t key, uint32_t value, bool add)
{
	for (unsigned i = 0; i < m->n; i++)
		if (m->key[i] == key && m->value[i] == value)
			return &m->count[i];
	if (!add)
		return NULL;
	assert_true(m->n < 4096);
	m->key[m->n] = key;
	m->value[m->n] = value;
	m->count[m->n] = 0;
	return &m->count[m->n++];
}

static unsigned pairs_nonzero(const struct pairs *m)
{
	unsigned k = 0;
	for (unsigned i = 0; i < m->n; i++)
		k += m->count[i] != 0;
	return k;
}

static bool matches_all(const struct pod_group *g, const struct group_term *t,
			unsigned n, const struct pod_group *pod)
{
	if (n == 0)
		return false;
	for (unsigned i = 0; i < n; i++)
		if (!group_term_matches(g, &t[i], pod))
			return false;
	return true;
}

/* nodeaffinity's RequiredNodeAffinity for the spread inclusion policy. */
static bool affinity_ok(const struct pod_spec *pod, const struct node_spec *n)
{
	return filter_affinity(&ctx, pod, n);
}

static bool taints_ok(const struct pod_spec *pod, const struct node_spec *n)
{
	return filter_taints(pod, n) < 0;
}

static bool include_node(const struct group_spread *c, const struct pod_spec *pod,
			 const struct node_spec *n)
{
	if (c->node_affinity_policy == SPREAD_POLICY_HONOR && !affinity_ok(pod, n))
		return false;
	if (c->node_taints_policy == SPREAD_POLICY_HONOR && !taints_ok(pod, n))
		return false;
	return true;
}

static bool has_all_keys(const struct node_spec *n, const struct group_spread *c,
			 unsigned nc)
{
	uint32_t v;
	for (unsigned i = 0; i < nc; i++)
		if (!node_label(n, c[i].topology_key, &v))
			return false;
	return true;
}

static unsigned count_on(uint32_t slot, const struct pod_group *g,
			 const struct group_selector *sel)
{
	unsigned k = 0;
	for (unsigned i = 0; i < n_placed; i++)
		k += placed[i].slot == slot && group_spread_matches(g, sel, &placed[i].g);
	return k;
}

/* The case's profile, read here straight from its configuration (not
 * from the engine's interpod_args): its default constraints. */
static const struct score_config *profile;

/* The constraints of one phase: the pod's own of that kind (hard or not),
 * or, with none of its own, the profile's defaults with its default
 * selector (podtopologyspread/plugin.go: System is hostname maxSkew 3 and
 * zone maxSkew 5, ScheduleAnyway; List its defaultConstraints, each with
 * its own minDomains and policies, common.go buildDefaultConstraints). */
static unsigned constraints(const struct pod_group *g, bool hard,
			    struct group_spread out[GROUP_MAX_SPREAD + 8])
{
	unsigned n = 0;
	if (g->n_spread > 0) {
		for (unsigned i = 0; i < g->n_spread; i++)
			if (g->spread[i].hard == hard)
				out[n++] = g->spread[i];
		return n;
	}
	if (!g->default_selector.present)
		return 0;
	if (profile->spread_defaulting == SPREAD_DEFAULTING_SYSTEM) {
		if (hard)
			return 0;
		static const char *const keys[] = {"kubernetes.io/hostname",
						   "topology.kubernetes.io/zone"};
		for (int k = 0; k < 2; k++)
			out[n++] = (struct group_spread){
				.topology_key = sid(keys[k]), .max_skew = k ? 5 : 3,
				.min_domains = 1, .hard = false,
				.node_affinity_policy = SPREAD_POLICY_HONOR,
				.node_taints_policy = SPREAD_POLICY_IGNORE,
				.selector = g->default_selector};
		return n;
	}
	for (unsigned i = 0; i < profile->n_default_spread; i++) {
		const struct spread_default *d = &profile->default_spread[i];
		if (d->hard == hard)
			out[n++] = (struct group_spread){
				.topology_key = d->topology_key,
				.max_skew = d->max_skew,
				.min_domains = d->min_domains, .hard = hard,
				.node_affinity_policy = d->node_affinity_policy,
				.node_taints_policy = d->node_taints_policy,
				.selector = g->default_selector};
	}
	return n;
}

/* podtopologyspread Filter for node `slot`: 0 or the reason. */
static uint8_t oracle_spread_filter(const struct pod_spec *pod,
				    const struct pod_group *g, uint32_t slot)
{
	struct group_spread c[GROUP_MAX_SPREAD + 8];
	unsigned nc = constraints(g, true, c);
	if (nc == 0)
		return 0;
	static struct pairs tp[GROUP_MAX_SPREAD + 8];
	for (unsigned i = 0; i < nc; i++)
		tp[i].n = 0;
	for (unsigned s = 0; s < n_nodes; s++) {
		if (!has_all_keys(&nodes[s], c, nc))
			continue;
		for (unsigned i = 0; i < nc; i++) {
			if (!include_node(&c[i], pod, &nodes[s]))
				continue;
			uint32_t v;
			node_label(&nodes[s], c[i].topology_key, &v);
			*pair_at(&tp[i], 0, v, true) += count_on(s, g, &c[i].selector);
		}
	}
	for (unsigned i = 0; i < nc; i++) {
		uint32_t v;
		if (!node_label(&nodes[slot], c[i].topology_key, &v))
			return REASON_SPREAD_LABEL;
		int64_t min = INT32_MAX;
		for (unsigned k = 0; k < tp[i].n; k++)
			min = tp[i].count[k] < min ? tp[i].count[k] : min;
		if ((int64_t)tp[i].n < c[i].min_domains)
			min = 0;
		int64_t self = group_selector_matches(g, &c[i].selector, g->labels,
						      g->n_labels) ? 1 : 0;
		int64_t *m = pair_at(&tp[i], 0, v, false);
		int64_t skew = (m ? *m : 0) + self - min;
		if (skew > c[i].max_skew)
			return REASON_SPREAD;
	}
	return 0;
}

/* interpodaffinity Filter for node `slot`: 0 or the reason. */
static uint8_t oracle_affinity_filter(const struct pod_group *g, uint32_t slot)
{
	const struct group_term *aff, *anti;
	unsigned n_aff = pod_group_terms(g, TERM_REQUIRED_AFFINITY, &aff);
	unsigned n_anti = pod_group_terms(g, TERM_REQUIRED_ANTI_AFFINITY, &anti);
	static struct pairs ac, nc, ec;
	ac.n = nc.n = ec.n = 0;
	for (unsigned i = 0; i < n_placed; i++) {
		const struct node_spec *n = &nodes[placed[i].slot];
		const struct pod_group *e = &placed[i].g;
		uint32_t v;
		if (matches_all(g, aff, n_aff, e))
			for (unsigned t = 0; t < n_aff; t++)
				if (node_label(n, aff[t].topology_key, &v))
					++*pair_at(&ac, aff[t].topology_key, v, true);
		for (unsigned t = 0; t < n_anti; t++)
			if (group_term_matches(g, &anti[t], e) &&
			    node_label(n, anti[t].topology_key, &v))
				++*pair_at(&nc, anti[t].topology_key, v, true);
		const struct group_term *ea;
		unsigned n_ea = pod_group_terms(e, TERM_REQUIRED_ANTI_AFFINITY, &ea);
		for (unsigned t = 0; t < n_ea; t++)
			if (group_term_matches(e, &ea[t], g) &&
			    node_label(n, ea[t].topology_key, &v))
				++*pair_at(&ec, ea[t].topology_key, v, true);
	}
	const struct node_spec *n = &nodes[slot];
	uint32_t v;
	bool exist = true;
	for (unsigned t = 0; t < n_aff; t++) {
		if (!node_label(n, aff[t].topology_key, &v))
			return REASON_POD_AFFINITY;
		int64_t *m = pair_at(&ac, aff[t].topology_key, v, false);
		if (m == NULL || *m <= 0)
			exist = false;
	}
	if (!exist && !(pairs_nonzero(&ac) == 0 && matches_all(g, aff, n_aff, g)))
		return REASON_POD_AFFINITY;
	for (unsigned t = 0; t < n_anti; t++) {
		int64_t *m;
		if (node_label(n, anti[t].topology_key, &v) &&
		    (m = pair_at(&nc, anti[t].topology_key, v, false)) != NULL && *m > 0)
			return REASON_POD_ANTI_AFFINITY;
	}
	for (unsigned l = 0; l < n->n_labels; l++) {
		int64_t *m = pair_at(&ec, n->labels[l].key, n->labels[l].value, false);
		if (m != NULL && *m > 0)
			return REASON_EXISTING_ANTI_AFFINITY;
	}
	return 0;
}

/* interpodaffinity PreScore + Score + NormalizeScore over `feasible`. */
static void oracle_affinity_scores(const struct pod_group *g,
				   const struct interpod_args *a,
				   const uint32_t *feasible, unsigned nf, int64_t *out)
{
	static struct pairs sc;
	sc.n = 0;
	const struct group_term *pa, *pn;
	unsigned n_pa = pod_group_terms(g, TERM_PREFERRED_AFFINITY, &pa);
	unsigned n_pn = pod_group_terms(g, TERM_PREFERRED_ANTI_AFFINITY, &pn);
	for (unsigned i = 0; i < n_placed; i++) {
		const struct node_spec *n = &nodes[placed[i].slot];
		const struct pod_group *e = &placed[i].g;
		uint32_t v;
		for (unsigned t = 0; t < n_pa; t++)
			if (group_term_matches(g, &pa[t], e) &&
			    node_label(n, pa[t].topology_key, &v))
				*pair_at(&sc, pa[t].topology_key, v, true) += pa[t].weight;
		for (unsigned t = 0; t < n_pn; t++)
			if (group_term_matches(g, &pn[t], e) &&
			    node_label(n, pn[t].topology_key, &v))
				*pair_at(&sc, pn[t].topology_key, v, true) -= pn[t].weight;
		const struct group_term *et;
		unsigned k = pod_group_terms(e, TERM_REQUIRED_AFFINITY, &et);
		for (unsigned t = 0; a->hard_pod_affinity_weight > 0 && t < k; t++)
			if (group_term_matches(e, &et[t], g) &&
			    node_label(n, et[t].topology_key, &v))
				*pair_at(&sc, et[t].topology_key, v, true) +=
					a->hard_pod_affinity_weight;
		k = pod_group_terms(e, TERM_PREFERRED_AFFINITY, &et);
		for (unsigned t = 0; t < k; t++)
			if (group_term_matches(e, &et[t], g) &&
			    node_label(n, et[t].topology_key, &v))
				*pair_at(&sc, et[t].topology_key, v, true) += et[t].weight;
		k = pod_group_terms(e, TERM_PREFERRED_ANTI_AFFINITY, &et);
		for (unsigned t = 0; t < k; t++)
			if (group_term_matches(e, &et[t], g) &&
			    node_label(n, et[t].topology_key, &v))
				*pair_at(&sc, et[t].topology_key, v, true) -= et[t].weight;
	}
	int64_t lo = INT64_MAX, hi = INT64_MIN;
	for (unsigned i = 0; i < nf; i++) {
		const struct node_spec *n = &nodes[feasible[i]];
		int64_t s = 0;
		for (unsigned p = 0; p < sc.n; p++) {
			uint32_t v;
			if (node_label(n, sc.key[p], &v) && v == sc.value[p])
				s += sc.count[p];
		}
		out[i] = s;
		lo = s < lo ? s : lo;
		hi = s > hi ? s : hi;
	}
	for (unsigned i = 0; i < nf; i++)
		out[i] = hi - lo > 0 ? (int64_t)((double)MAX_NODE_SCORE *
						 ((double)(out[i] - lo) / (double)(hi - lo)))
				     : 0;
}

/* podtopologyspread PreScore + Score + NormalizeScore over `feasible`. */
static void oracle_spread_scores(const struct pod_spec *pod, const struct pod_group *g,
				 const uint32_t *feasible, unsigned nf, int64_t *out)
{
	struct group_spread c[GROUP_MAX_SPREAD + 8];
	unsigned nc = constraints(g, false, c);
	for (unsigned i = 0; i < nf; i++)
		out[i] = 0;
	if (nc == 0)
		return;
	bool require_all = g->n_spread > 0 ||
			   profile->spread_defaulting != SPREAD_DEFAULTING_SYSTEM;
	bool ignored[MAX_NODES] = {false};
	unsigned n_ignored = 0;
	/* Per constraint (scoring.go TopologyValueToPodCounts[i]): two
	 * constraints on one key count apart. Keyed (constraint, value). */
	static struct pairs counts;
	counts.n = 0;
	unsigned size[GROUP_MAX_SPREAD + 8] = {0};
	uint32_t hostname = sid("kubernetes.io/hostname");
	for (unsigned f = 0; f < nf; f++) {
		const struct node_spec *n = &nodes[feasible[f]];
		if (require_all && !has_all_keys(n, c, nc)) {
			ignored[feasible[f]] = true;
			n_ignored++;
			continue;
		}
		for (unsigned i = 0; i < nc; i++) {
			if (c[i].topology_key == hostname)
				continue;
			uint32_t v = 0; /* a missing label reads "" */
			node_label(n, c[i].topology_key, &v);
			if (pair_at(&counts, i, v, false) == NULL) {
				pair_at(&counts, i, v, true);
				size[i]++;
			}
		}
	}
	for (unsigned s = 0; s < n_nodes; s++) {
		if (require_all && !has_all_keys(&nodes[s], c, nc))
			continue;
		for (unsigned i = 0; i < nc; i++) {
			if (!include_node(&c[i], pod, &nodes[s]))
				continue;
			uint32_t v = 0;
			node_label(&nodes[s], c[i].topology_key, &v);
			int64_t *m = pair_at(&counts, i, v, false);
			if (m != NULL)
				*m += count_on(s, g, &c[i].selector);
		}
	}
	double weight[GROUP_MAX_SPREAD + 8];
	for (unsigned i = 0; i < nc; i++) {
		unsigned sz = c[i].topology_key == hostname ? nf - n_ignored : size[i];
		weight[i] = log((double)(sz + 2));
	}
	int64_t lo = INT64_MAX, hi = 0;
	for (unsigned f = 0; f < nf; f++) {
		if (ignored[feasible[f]])
			continue;
		const struct node_spec *n = &nodes[feasible[f]];
		double score = 0;
		for (unsigned i = 0; i < nc; i++) {
			uint32_t v;
			if (!node_label(n, c[i].topology_key, &v))
				continue;
			int64_t cnt = c[i].topology_key == hostname
				? count_on(feasible[f], g, &c[i].selector)
				: *pair_at(&counts, i, v, false);
			score += (double)cnt * weight[i] + (double)(c[i].max_skew - 1);
		}
		out[f] = (int64_t)round(score);
		lo = out[f] < lo ? out[f] : lo;
		hi = out[f] > hi ? out[f] : hi;
	}
	for (unsigned f = 0; f < nf; f++) {
		if (ignored[feasible[f]])
			out[f] = 0;
		else if (hi == 0)
			out[f] = MAX_NODE_SCORE;
		else
			out[f] = MAX_NODE_SCORE * (hi + lo - out[f]) / hi;
	}
}

/* --- what the engine says, through --explain's callbacks ------------------ */

struct seen {
	uint8_t reason[MAX_NODES];   /* its inter-pod reason, 0 none */
	bool other[MAX_NODES];       /* another filter refused it */
	bool scored[MAX_NODES];
	int64_t spread[MAX_NODES], affinity[MAX_NODES];
};

static void on_filtered(void *arg, uint32_t slot, const struct reason *r, unsigned n)
{
	struct seen *s = arg;
	for (unsigned i = 0; i < n; i++) {
		if (r[i].code >= REASON_SPREAD_LABEL &&
		    r[i].code <= REASON_EXISTING_ANTI_AFFINITY)
			s->reason[slot] = r[i].code;
		else
			s->other[slot] = true;
	}
}

static void on_scored(void *arg, uint32_t slot, const int64_t scores[SCORE_PLUGINS],
		      int64_t total)
{
	(void)total;
	struct seen *s = arg;
	s->scored[slot] = true;
	s->spread[slot] = scores[SCORE_SPREAD];
	s->affinity[slot] = scores[SCORE_INTER_POD];
}

/* PodTopologySpreadArgs with defaultingType List: 0..3 constraints on
 * hostname, zone or rack, hard or soft (one per key and action), with
 * random skews, minDomains and inclusion policies. */
static void gen_list_defaults(struct score_config *sc)
{
	static const char *const keys[] = {"kubernetes.io/hostname",
					   "topology.kubernetes.io/zone", "rack"};
	sc->spread_defaulting = SPREAD_DEFAULTING_LIST;
	sc->n_default_spread = 0;
	unsigned n = below(4);
	for (unsigned i = 0; i < n; i++) {
		struct spread_default d = {
			.topology_key = sid(keys[below(3)]),
			.max_skew = (int32_t)(1 + below(3)),
			.min_domains = (int32_t)(1 + below(3)),
			.hard = chance(50),
			.node_affinity_policy = chance(70) ? SPREAD_POLICY_HONOR
							   : SPREAD_POLICY_IGNORE,
			.node_taints_policy = chance(70) ? SPREAD_POLICY_IGNORE
							 : SPREAD_POLICY_HONOR,
		};
		bool repeat = false;
		for (unsigned j = 0; j < sc->n_default_spread; j++)
			repeat |= sc->default_spread[j].topology_key == d.topology_key &&
				  sc->default_spread[j].hard == d.hard;
		if (!repeat)
			sc->default_spread[sc->n_default_spread++] = d;
	}
}

static void test_engine_agrees_with_oracle(void **state)
{
	(void)state;
	unsigned cases = 400;
	const char *env = getenv("SHMSCHED_ORACLE_CASES");
	if (env != NULL && *env != '\0')
		cases = (unsigned)strtoul(env, NULL, 10);
	urcu_qsbr_register_thread();
	uint64_t checked_nodes = 0, refused = 0, scored = 0, mismatches = 0;
	uint64_t list_defaulted = 0; /* pods under a List default constraint */
	for (unsigned cs = 0; cs < cases; cs++) {
		rng_state = 0x5eed0000u + cs;
		strings = intern_create();
		res_names_init(&res);
		assert_int_equal(plugin_ctx_init(&ctx, strings, &res), 0);
		static struct sched_config cfg;
		sched_config_default(&cfg);
		cfg.percentage_of_nodes_to_score = 100;
		profile = &cfg.profiles[0].score;
		if (chance(50))
			gen_list_defaults(&cfg.profiles[0].score);
		struct cluster *c = cluster_create(strings, MAX_NODES);
		gen_nodes(c);
		struct engine *e = engine_create(c, &ctx, &cfg, cs, 0);
		assert_non_null(e);
		struct interpod_args args;
		interpod_args_from(&args, &ctx, &cfg.profiles[0].score);
		n_placed = below(MAX_PODS - 20);
		for (unsigned i = 0; i < n_placed; i++) {
			struct pod_spec p;
			memset(&p, 0, sizeof(p));
			placed[i].slot = below(n_nodes);
			gen_group(&placed[i].g, 40, 30);
			intern_group(&placed[i].g, &p);
			assert_int_equal(ledger_account(cluster_ledger(c), placed[i].slot,
							&p, NULL, +1), 0);
		}
		for (unsigned k = 0; k < 8; k++) {
			if (chance(30)) {
				/* A node's labels change: a new snapshot, whose
				 * domains the engine must see. */
				uint32_t slot = below(n_nodes);
				struct node_spec *n = &nodes[slot];
				char z[8], err[256];
				snprintf(z, sizeof(z), "z%u", below(5));
				n->n_labels = 0;
				n->labels[n->n_labels++] = (struct label){
					sid("kubernetes.io/hostname"), n->name};
				if (chance(80))
					n->labels[n->n_labels++] = (struct label){
						sid("topology.kubernetes.io/zone"), sid(z)};
				qsort(n->labels, n->n_labels, sizeof(n->labels[0]), label_cmp);
				struct node_event ev = {.kind = NODE_EVENT_UPDATE,
							.name = n->name, .spec = *n};
				assert_int_equal(cluster_apply(c, &ev, 1, err, sizeof(err)), 0);
			}
			struct pod_spec pod;
			memset(&pod, 0, sizeof(pod));
			pod.request.v[RES_CPU] = pod.nonzero_cpu_milli = 10;
			struct pod_group g;
			gen_group(&g, 60, 50);
			if (chance(profile->spread_defaulting == SPREAD_DEFAULTING_LIST
				   ? 40 : 20)) {
				/* Selected by a Service: default spreading. The
				 * selector is set here by hand, as ingest/ will
				 * derive it from the objects that select the pod. */
				g.default_selector = (struct group_selector){0};
				gen_selector(&g, &g.default_selector);
			}
			intern_group(&g, &pod);
			list_defaulted += g.n_spread == 0 && g.default_selector.present &&
					  profile->n_default_spread > 0 &&
					  profile->spread_defaulting ==
						  SPREAD_DEFAULTING_LIST;
			if (chance(20))
				pod.selector[pod.n_selector++] = (struct label){
					sid("tier"), sid(tiers[below(2)])};
			if (chance(30))
				pod.tolerations[pod.n_tolerations++] = (struct toleration){
					.key = sid("spot"), .op = TOL_EXISTS};
			struct seen seen;
			memset(&seen, 0, sizeof(seen));
			struct engine_explain x = {&seen, on_filtered, on_scored};
			struct placement out;
			assert_int_equal(engine_place_reference(e, &pod, k, &x, &out), 0);
			uint32_t feasible[MAX_NODES];
			unsigned nf = 0;
			for (uint32_t s = 0; s < n_nodes; s++) {
				if (seen.other[s])
					continue;
				uint8_t want = oracle_spread_filter(&pod, &g, s);
				if (want == 0)
					want = oracle_affinity_filter(&g, s);
				checked_nodes++;
				if (want != seen.reason[s]) {
					mismatches++;
					print_message("case %u pod %u node %u: engine reason %u, "
						      "oracle %u\n", cs, k, s, seen.reason[s], want);
				}
				if (want == 0)
					feasible[nf++] = s;
				else
					refused++;
			}
			int64_t sp[MAX_NODES], af[MAX_NODES];
			oracle_spread_scores(&pod, &g, feasible, nf, sp);
			oracle_affinity_scores(&g, &args, feasible, nf, af);
			for (unsigned f = 0; f < nf; f++) {
				uint32_t s = feasible[f];
				if (!seen.scored[s])
					continue; /* the reason mismatch is counted */
				scored++;
				if (seen.spread[s] != sp[f] || seen.affinity[s] != af[f]) {
					mismatches++;
					print_message("case %u pod %u node %u: engine spread %lld "
						      "affinity %lld, oracle %lld %lld\n", cs, k, s,
						      (long long)seen.spread[s],
						      (long long)seen.affinity[s], (long long)sp[f],
						      (long long)af[f]);
				}
			}
			/* The pod joins the world where it went, for the next one. */
			if (out.slot >= 0 && n_placed < MAX_PODS) {
				assert_int_equal(ledger_account(cluster_ledger(c),
								(uint32_t)out.slot, &pod,
								NULL, +1), 0);
				placed[n_placed++] = (struct placed){(uint32_t)out.slot, g};
			}
			if (mismatches > 20)
				fail_msg("too many mismatches");
		}
		engine_destroy(e);
		cluster_destroy(c);
		intern_destroy(strings);
	}
	print_message("%u worlds: %llu nodes checked, %llu refused by inter-pod rules, "
		      "%llu scored, %llu mismatches; %llu pods under a profile's "
		      "own default constraints\n", cases,
		      (unsigned long long)checked_nodes, (unsigned long long)refused,
		      (unsigned long long)scored, (unsigned long long)mismatches,
		      (unsigned long long)list_defaulted);
	assert_int_equal(mismatches, 0);
	assert_true(list_defaulted > cases / 4);
	assert_true(refused > 0);
	assert_true(scored > 0);
	urcu_qsbr_unregister_thread();
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_engine_agrees_with_oracle),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
