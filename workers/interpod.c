/* InterPodAffinity and PodTopologySpread, literally: see interpod.h.
 *
 * Per pod, one walk over every node's groups (the ledger's pods per
 * group) fills the maps kube-scheduler's PreFilter and PreScore fill by
 * walking every pod: topology pairs (node label key, value) to counts or
 * scores. What a placed group is to the incoming pod (does it match the
 * pod's terms, do its terms match the pod, does it match a spread
 * selector) is worked out once per group and pod (struct memo), so the
 * walk costs O(nodes + groups on them) plus the pairs of the few groups
 * that match anything.
 *
 * Sources: kubernetes/kubernetes pkg/scheduler/framework/plugins/
 * interpodaffinity/filtering.go (PreFilter, satisfyPodAffinity,
 * satisfyPodAntiAffinity, satisfyExistingPodsAntiAffinity),
 * interpodaffinity/scoring.go (processExistingPod, NormalizeScore),
 * podtopologyspread/filtering.go (calPreFilterState, Filter, minMatchNum),
 * podtopologyspread/scoring.go (initPreScoreState, Score,
 * NormalizeScore), podtopologyspread/common.go
 * (matchNodeInclusionPolicies, topologyNormalizingWeight). */
#include "workers/interpod.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* A spread constraint as a phase uses it (the pod's own, or a default
 * with the group's default selector). */
#define MAX_CONSTRAINTS (GROUP_MAX_SPREAD + INTERPOD_MAX_DEFAULT_SPREAD)

/* --- a map of 64-bit keys to counts, emptied in O(1) ---------------------- */

struct pmap {
	uint64_t *keys;
	int64_t *vals;
	uint32_t *stamp; /* an entry is live when its stamp is the map's */
	uint32_t mask;
	uint32_t gen;
	uint32_t n;      /* live entries */
};

static int pmap_init(struct pmap *m, uint32_t slots)
{
	memset(m, 0, sizeof(*m));
	m->keys = malloc(slots * sizeof(*m->keys));
	m->vals = malloc(slots * sizeof(*m->vals));
	m->stamp = calloc(slots, sizeof(*m->stamp));
	m->mask = slots - 1;
	m->gen = 1;
	return m->keys && m->vals && m->stamp ? 0 : -ENOMEM;
}

static void pmap_free(struct pmap *m)
{
	free(m->keys);
	free(m->vals);
	free(m->stamp);
}

static void pmap_clear(struct pmap *m)
{
	m->n = 0;
	if (++m->gen == 0) { /* wrapped: every stamp is stale for real */
		memset(m->stamp, 0, (size_t)(m->mask + 1) * sizeof(*m->stamp));
		m->gen = 1;
	}
}

static inline uint32_t pmap_hash(uint64_t k, uint32_t mask)
{
	k *= UINT64_C(0x9e3779b97f4a7c15);
	return (uint32_t)(k >> 32) & mask;
}

static int pmap_grow(struct pmap *m)
{
	struct pmap bigger;
	if (pmap_init(&bigger, (m->mask + 1) * 2) < 0) {
		pmap_free(&bigger);
		return -ENOMEM;
	}
	for (uint32_t i = 0; i <= m->mask; i++) {
		if (m->stamp[i] != m->gen)
			continue;
		uint32_t j = pmap_hash(m->keys[i], bigger.mask);
		while (bigger.stamp[j] == bigger.gen)
			j = (j + 1) & bigger.mask;
		bigger.stamp[j] = bigger.gen;
		bigger.keys[j] = m->keys[i];
		bigger.vals[j] = m->vals[i];
		bigger.n++;
	}
	pmap_free(m);
	*m = bigger;
	return 0;
}

/* The count of `k`, added if absent (0). NULL when out of memory. */
static int64_t *pmap_at(struct pmap *m, uint64_t k)
{
	uint32_t i = pmap_hash(k, m->mask);
	while (m->stamp[i] == m->gen) {
		if (m->keys[i] == k)
			return &m->vals[i];
		i = (i + 1) & m->mask;
	}
	if ((m->n + 1) * 2 > m->mask + 1) {
		if (pmap_grow(m) < 0)
			return NULL;
		return pmap_at(m, k);
	}
	m->stamp[i] = m->gen;
	m->keys[i] = k;
	m->vals[i] = 0;
	m->n++;
	return &m->vals[i];
}

static const int64_t *pmap_get(const struct pmap *m, uint64_t k)
{
	uint32_t i = pmap_hash(k, m->mask);
	while (m->stamp[i] == m->gen) {
		if (m->keys[i] == k)
			return &m->vals[i];
		i = (i + 1) & m->mask;
	}
	return NULL;
}

static inline uint64_t pair(uint32_t key, uint32_t value)
{
	return (uint64_t)key << 32 | value;
}

/* --- decoded groups and what each is to the pod in hand -------------------- */

/* What a placed group is to the incoming pod; masks are bit per term or
 * constraint. */
struct memo {
	uint32_t stamp;             /* live for the pod whose stamp this is */
	bool all_affinity;          /* matches every required affinity term */
	uint32_t anti;              /* the pod's required anti terms it matches */
	uint32_t pref_affinity;     /* the pod's preferred affinity terms ... */
	uint32_t pref_anti;         /* ... and preferred anti terms it matches */
	uint32_t its_anti;          /* its required anti terms matching the pod */
	uint32_t its_affinity;      /* its required affinity terms ... */
	uint32_t its_pref_affinity; /* its preferred affinity terms ... */
	uint32_t its_pref_anti;     /* its preferred anti terms ... */
	uint32_t hard;              /* hard constraints whose selector it matches */
	uint32_t soft;              /* soft ones */
	bool any;                   /* any bit above */
};

/* A group seen: decoded once, and what it is to the pod in hand. */
struct gslot {
	uint32_t id;                /* 0: empty */
	struct pod_group *g;        /* NULL: did not decode */
	struct memo memo;
};

/* A topology key's column for one snapshot: each slot's value and its
 * domain (the value's index among the column's), built once per snapshot
 * generation, so the walks read a node's domain in O(1). */
#define TOPO_COLS (2 * MAX_CONSTRAINTS) /* round robin never evicts one
					  * a pod's PreFilter just built */

struct topo_col {
	uint32_t key;
	uint64_t generation;  /* of the snapshot it was built for; 0: none */
	uint32_t n_slots;
	uint32_t *value;      /* [n_slots] the node's value + 1; 0: no label */
	uint32_t *domain;     /* [n_slots] its domain; UINT32_MAX: no label */
	uint32_t n_domains;
	uint32_t cap;         /* slots the arrays hold */
};

struct interpod {
	const struct intern *strings;
	struct topo_col cols[TOPO_COLS];
	unsigned next_col;    /* the one rebuilt next (round robin) */
	struct pmap scratch;  /* value -> domain, while building a column */
	struct gslot *groups;       /* open addressing by id */
	uint32_t groups_mask, n_groups;
	uint32_t memo_stamp;        /* the pod in hand's: older memos are stale */

	/* The pod in hand. */
	const struct pod_spec *pod;
	const struct pod_group *g;  /* NULL: no group */
	struct pod_group none;      /* stands in for no group */
	const struct group_term *aff, *anti, *pref_aff, *pref_anti;
	unsigned n_aff, n_anti, n_pref_aff, n_pref_anti;

	/* PreFilter. */
	struct pmap aff_counts, anti_counts, existing_anti;
	bool aff_empty;             /* len(affinityCounts) == 0 */
	bool walked;                /* PreFilter walked every node's groups */
	bool existing_scores;       /* ... and met a group whose terms score
				     * this pod (InterPodAffinity's PreScore
				     * has nothing else to add up) */
	bool self_all;              /* the pod matches all its affinity terms */
	unsigned n_hard;
	struct group_spread hard[MAX_CONSTRAINTS];
	const struct topo_col *hard_col[MAX_CONSTRAINTS];
	int64_t *hard_count[MAX_CONSTRAINTS]; /* [domain] pods */
	uint8_t *hard_seen[MAX_CONSTRAINTS];  /* [domain] an eligible node has it */
	uint32_t hard_cap[MAX_CONSTRAINTS];
	int64_t hard_min[MAX_CONSTRAINTS];
	uint32_t hard_domains[MAX_CONSTRAINTS];
	bool hard_self[MAX_CONSTRAINTS];

	/* PreScore. */
	bool score_affinity;        /* InterPodAffinity runs (not skipped) */
	struct pmap score;          /* pair -> weight */
	bool score_spread;          /* PodTopologySpread runs */
	unsigned n_soft;
	struct group_spread soft[MAX_CONSTRAINTS];
	double soft_weight[MAX_CONSTRAINTS];
	struct pmap soft_counts;    /* pair -> pods */
	bool require_all;
	uint8_t *ignored;           /* [n_slots]: IgnoredNodes */
	uint32_t ignored_len;
};

struct interpod *interpod_create(const struct intern *strings)
{
	struct interpod *ip = calloc(1, sizeof(*ip));
	if (ip == NULL)
		return NULL;
	ip->strings = strings;
	ip->groups_mask = 255;
	ip->groups = calloc(ip->groups_mask + 1, sizeof(*ip->groups));
	int rc = ip->groups ? 0 : -ENOMEM;
	if (rc == 0)
		rc = pmap_init(&ip->aff_counts, 64);
	if (rc == 0)
		rc = pmap_init(&ip->anti_counts, 64);
	if (rc == 0)
		rc = pmap_init(&ip->existing_anti, 64);
	if (rc == 0)
		rc = pmap_init(&ip->score, 64);
	if (rc == 0)
		rc = pmap_init(&ip->soft_counts, 64);
	if (rc == 0)
		rc = pmap_init(&ip->scratch, 64);
	if (rc < 0) {
		interpod_destroy(ip);
		errno = ENOMEM;
		return NULL;
	}
	return ip;
}

void interpod_destroy(struct interpod *ip)
{
	if (ip == NULL)
		return;
	for (uint32_t i = 0; ip->groups != NULL && i <= ip->groups_mask; i++)
		free(ip->groups[i].g);
	free(ip->groups);
	pmap_free(&ip->aff_counts);
	pmap_free(&ip->anti_counts);
	pmap_free(&ip->existing_anti);
	pmap_free(&ip->score);
	pmap_free(&ip->soft_counts);
	pmap_free(&ip->scratch);
	for (unsigned i = 0; i < MAX_CONSTRAINTS; i++) {
		free(ip->hard_count[i]);
		free(ip->hard_seen[i]);
	}
	for (unsigned i = 0; i < TOPO_COLS; i++) {
		free(ip->cols[i].value);
		free(ip->cols[i].domain);
	}
	free(ip->ignored);
	free(ip);
}

static inline uint32_t id_hash(uint32_t id, uint32_t mask)
{
	return (uint32_t)(((uint64_t)id * UINT64_C(0x9e3779b97f4a7c15)) >> 32) & mask;
}

static bool groups_grow(struct interpod *ip)
{
	uint32_t mask = ip->groups_mask * 2 + 1;
	struct gslot *t = calloc(mask + 1, sizeof(*t));
	if (t == NULL)
		return false;
	for (uint32_t i = 0; i <= ip->groups_mask; i++) {
		if (ip->groups[i].id == 0)
			continue;
		uint32_t j = id_hash(ip->groups[i].id, mask);
		while (t[j].id != 0)
			j = (j + 1) & mask;
		t[j] = ip->groups[i];
	}
	free(ip->groups);
	ip->groups = t;
	ip->groups_mask = mask;
	return true;
}

/* The slot of group `id` (not 0), decoded when first seen; NULL when out
 * of memory. */
static struct gslot *slot_of(struct interpod *ip, uint32_t id)
{
	uint32_t i = id_hash(id, ip->groups_mask);
	while (ip->groups[i].id != 0) {
		if (ip->groups[i].id == id)
			return &ip->groups[i];
		i = (i + 1) & ip->groups_mask;
	}
	if ((ip->n_groups + 1) * 2 > ip->groups_mask + 1) {
		if (!groups_grow(ip))
			return NULL;
		return slot_of(ip, id);
	}
	struct pod_group *g = malloc(sizeof(*g));
	if (g != NULL && pod_group_decode(intern_str(ip->strings, id),
					  intern_len(ip->strings, id), g) < 0) {
		free(g);
		g = NULL; /* remembered as no group */
	}
	ip->groups[i] = (struct gslot){.id = id, .g = g};
	ip->n_groups++;
	return &ip->groups[i];
}

const struct pod_group *interpod_group(struct interpod *ip, uint32_t group)
{
	struct gslot *gs = group != 0 ? slot_of(ip, group) : NULL;
	return gs != NULL ? gs->g : NULL;
}

/* --- the pod in hand ---------------------------------------------------------- */

/* The constraints of one phase (podtopologyspread's
 * filterTopologySpreadConstraints / buildDefaultConstraints): the pod's own
 * of that kind, or with none of its own, the profile's defaults with the
 * group's default selector (none: no constraint). */
static unsigned phase_constraints(const struct pod_group *g,
				  const struct interpod_args *a, bool hard,
				  struct group_spread *out)
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
	/* buildDefaultConstraints: each keeps its own key, skew, minDomains
	 * and policies; its selector is the pod's default selector. */
	for (unsigned i = 0; i < a->n_default_spread; i++)
		if (a->default_spread[i].hard == hard)
			out[n++] = (struct group_spread){
				.topology_key = a->default_spread[i].topology_key,
				.max_skew = a->default_spread[i].max_skew,
				.min_domains = a->default_spread[i].min_domains,
				.hard = hard,
				.node_affinity_policy =
					a->default_spread[i].node_affinity_policy,
				.node_taints_policy =
					a->default_spread[i].node_taints_policy,
				.selector = g->default_selector};
	return n;
}

static void take_pod(struct interpod *ip, const struct pod_spec *pod)
{
	ip->pod = pod;
	ip->g = interpod_group(ip, pod->group);
	const struct pod_group *g = ip->g != NULL ? ip->g : &ip->none;
	ip->n_aff = pod_group_terms(g, TERM_REQUIRED_AFFINITY, &ip->aff);
	ip->n_anti = pod_group_terms(g, TERM_REQUIRED_ANTI_AFFINITY, &ip->anti);
	ip->n_pref_aff = pod_group_terms(g, TERM_PREFERRED_AFFINITY, &ip->pref_aff);
	ip->n_pref_anti = pod_group_terms(g, TERM_PREFERRED_ANTI_AFFINITY,
					  &ip->pref_anti);
	/* A new stamp: every memo is stale. */
	if (++ip->memo_stamp == 0) {
		for (uint32_t i = 0; i <= ip->groups_mask; i++)
			ip->groups[i].memo.stamp = 0;
		ip->memo_stamp = 1;
	}
}

bool interpod_applies(struct interpod *ip, const struct ledger *l,
		      const struct pod_spec *pod, const struct interpod_args *args)
{
	if (pod->group != 0) {
		const struct pod_group *g = interpod_group(ip, pod->group);
		if (g != NULL && (g->n_terms > 0 || g->n_spread > 0 ||
				  (g->default_selector.present &&
				   args->n_default_spread > 0)))
			return true;
	}
	return ledger_term_pods(l) > 0;
}

static bool term_matches_all(const struct pod_group *g, const struct group_term *t,
			     unsigned n, const struct pod_group *other)
{
	if (n == 0)
		return false;
	for (unsigned i = 0; i < n; i++)
		if (!group_term_matches(g, &t[i], other))
			return false;
	return true;
}

static uint32_t terms_mask(const struct pod_group *g, const struct group_term *t,
			   unsigned n, const struct pod_group *other)
{
	uint32_t m = 0;
	for (unsigned i = 0; i < n; i++)
		if (group_term_matches(g, &t[i], other))
			m |= 1u << i;
	return m;
}

/* What group `id` is to the pod in hand, worked out on its first sight
 * for this pod; NULL when it is nothing to it (or does not decode, or
 * memory ran out). */
static const struct memo *memo_of(struct interpod *ip, uint32_t id,
				  const struct pod_group **out)
{
	struct gslot *gs = id != 0 ? slot_of(ip, id) : NULL;
	*out = gs != NULL ? gs->g : NULL;
	if (gs == NULL)
		return NULL;
	struct memo *m = &gs->memo;
	if (m->stamp == ip->memo_stamp)
		return m->any ? m : NULL;
	const struct pod_group *e = gs->g, *g = ip->g;
	*m = (struct memo){.stamp = ip->memo_stamp};
	if (e != NULL && g != NULL) {
		m->all_affinity = term_matches_all(g, ip->aff, ip->n_aff, e);
		m->anti = terms_mask(g, ip->anti, ip->n_anti, e);
		m->pref_affinity = terms_mask(g, ip->pref_aff, ip->n_pref_aff, e);
		m->pref_anti = terms_mask(g, ip->pref_anti, ip->n_pref_anti, e);
		const struct group_term *t;
		unsigned n = pod_group_terms(e, TERM_REQUIRED_ANTI_AFFINITY, &t);
		m->its_anti = terms_mask(e, t, n, g);
		n = pod_group_terms(e, TERM_REQUIRED_AFFINITY, &t);
		m->its_affinity = terms_mask(e, t, n, g);
		n = pod_group_terms(e, TERM_PREFERRED_AFFINITY, &t);
		m->its_pref_affinity = terms_mask(e, t, n, g);
		n = pod_group_terms(e, TERM_PREFERRED_ANTI_AFFINITY, &t);
		m->its_pref_anti = terms_mask(e, t, n, g);
		for (unsigned c = 0; c < ip->n_hard; c++)
			if (group_spread_matches(g, &ip->hard[c].selector, e))
				m->hard |= 1u << c;
		for (unsigned c = 0; c < ip->n_soft; c++)
			if (group_spread_matches(g, &ip->soft[c].selector, e))
				m->soft |= 1u << c;
		m->any = m->all_affinity || m->anti || m->pref_affinity ||
			 m->pref_anti || m->its_anti || m->its_affinity ||
			 m->its_pref_affinity || m->its_pref_anti || m->hard || m->soft;
	}
	return m->any ? m : NULL;
}

static bool node_label(const struct node_spec *n, uint32_t key, uint32_t *value)
{
	return labels_get(n->labels, n->n_labels, key, value);
}

/* The column of `key` for snapshot `s`, built if it is not there; NULL
 * when out of memory. */
static const struct topo_col *col_of(struct interpod *ip, const struct snapshot *s,
				     uint32_t key)
{
	for (unsigned i = 0; i < TOPO_COLS; i++) {
		const struct topo_col *c = &ip->cols[i];
		if (c->key == key && c->generation == s->generation &&
		    c->n_slots == s->n_slots && c->generation != 0)
			return c;
	}
	struct topo_col *c = &ip->cols[ip->next_col];
	ip->next_col = (ip->next_col + 1) % TOPO_COLS;
	c->generation = 0;
	if (c->cap < s->n_slots) {
		uint32_t cap = s->n_slots;
		uint32_t *v = realloc(c->value, cap * sizeof(*v));
		if (v != NULL)
			c->value = v;
		uint32_t *d = realloc(c->domain, cap * sizeof(*d));
		if (d != NULL)
			c->domain = d;
		if (v == NULL || d == NULL)
			return NULL;
		c->cap = cap;
	}
	pmap_clear(&ip->scratch);
	c->key = key;
	c->n_slots = s->n_slots;
	c->n_domains = 0;
	for (uint32_t slot = 0; slot < s->n_slots; slot++) {
		uint32_t v;
		if (!s->present[slot] ||
		    !labels_get(s->nodes[slot].labels, s->nodes[slot].n_labels, key, &v)) {
			c->value[slot] = 0;
			c->domain[slot] = UINT32_MAX;
			continue;
		}
		int64_t *dom = pmap_at(&ip->scratch, v);
		if (dom == NULL)
			return NULL;
		if (*dom == 0)
			*dom = ++c->n_domains; /* index + 1 */
		c->value[slot] = v + 1;
		c->domain[slot] = (uint32_t)*dom - 1;
	}
	c->generation = s->generation;
	return c;
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

/* common.go matchNodeInclusionPolicies. */
static bool node_included(const struct plugin_ctx *ctx, const struct pod_spec *pod,
			  const struct group_spread *c, const struct node_spec *n)
{
	if (c->node_affinity_policy == SPREAD_POLICY_HONOR &&
	    !filter_affinity(ctx, pod, n))
		return false;
	if (c->node_taints_policy == SPREAD_POLICY_HONOR && filter_taints(pod, n) >= 0)
		return false;
	return true;
}

/* Adds `d` to the count of pair (key, node's value) when the node has it. */
static int add_pair(struct pmap *m, const struct node_spec *n, uint32_t key,
		    int64_t d)
{
	uint32_t v;
	if (!node_label(n, key, &v))
		return 0;
	int64_t *c = pmap_at(m, pair(key, v));
	if (c == NULL)
		return -ENOMEM;
	*c += d;
	return 0;
}

/* --- PreFilter ---------------------------------------------------------------- */

int interpod_prefilter(struct interpod *ip, const struct snapshot *s,
		       struct ledger *l, const struct plugin_ctx *ctx,
		       const struct pod_spec *pod, const struct interpod_args *args)
{
	pmap_clear(&ip->aff_counts);
	pmap_clear(&ip->anti_counts);
	pmap_clear(&ip->existing_anti);
	ip->score_affinity = ip->score_spread = false;
	/* Both phases' constraints now, so the memos the walk below fills
	 * serve PreScore's walk too. */
	const struct pod_group *g0 = interpod_group(ip, pod->group);
	ip->n_hard = g0 != NULL ? phase_constraints(g0, args, true, ip->hard) : 0;
	ip->n_soft = g0 != NULL ? phase_constraints(g0, args, false, ip->soft) : 0;
	take_pod(ip, pod);
	for (unsigned c = 0; c < ip->n_hard; c++) {
		const struct topo_col *col = col_of(ip, s, ip->hard[c].topology_key);
		if (col == NULL)
			return -ENOMEM;
		ip->hard_col[c] = col;
		if (ip->hard_cap[c] < col->n_domains) {
			int64_t *cnt = realloc(ip->hard_count[c],
					       col->n_domains * sizeof(*cnt));
			if (cnt != NULL)
				ip->hard_count[c] = cnt;
			uint8_t *seen = realloc(ip->hard_seen[c], col->n_domains);
			if (seen != NULL)
				ip->hard_seen[c] = seen;
			if (cnt == NULL || seen == NULL)
				return -ENOMEM;
			ip->hard_cap[c] = col->n_domains;
		}
		if (col->n_domains > 0) {
			memset(ip->hard_count[c], 0, col->n_domains * sizeof(int64_t));
			memset(ip->hard_seen[c], 0, col->n_domains);
		}
		ip->hard_self[c] = group_selector_matches(g0, &ip->hard[c].selector,
							  g0->labels, g0->n_labels);
	}
	ip->self_all = ip->g != NULL &&
		       term_matches_all(ip->g, ip->aff, ip->n_aff, ip->g);
	bool walk_pods = ledger_term_pods(l) > 0 || ip->n_aff > 0 || ip->n_anti > 0 ||
			 ip->n_hard > 0;
	ip->walked = ip->existing_scores = false;
	if (!walk_pods || ip->g == NULL) {
		ip->aff_empty = true;
		return 0;
	}
	ip->walked = true;
	struct group_count gc[NODE_MAX_GROUPS];
	for (uint32_t slot = 0; slot < s->n_slots; slot++) {
		if (!s->present[slot])
			continue;
		const struct node_spec *n = &s->nodes[slot];
		unsigned ng = ledger_load_groups(ledger_node(l, slot), gc);
		bool spread_node = ip->n_hard > 0;
		for (unsigned c = 0; spread_node && c < ip->n_hard; c++)
			spread_node = ip->hard_col[c]->domain[slot] != UINT32_MAX;
		uint32_t included = 0;
		if (spread_node) {
			for (unsigned c = 0; c < ip->n_hard; c++) {
				if (!node_included(ctx, pod, &ip->hard[c], n))
					continue;
				included |= 1u << c;
				/* The domain exists, with or without pods. */
				ip->hard_seen[c][ip->hard_col[c]->domain[slot]] = 1;
			}
		}
		for (unsigned k = 0; k < ng; k++) {
			const struct pod_group *e;
			const struct memo *m = memo_of(ip, gc[k].group, &e);
			if (m == NULL)
				continue;
			int64_t cnt = gc[k].pods;
			int rc = 0;
			ip->existing_scores |= (m->its_affinity | m->its_pref_affinity |
						m->its_pref_anti) != 0;
			if (m->all_affinity)
				for (unsigned t = 0; rc == 0 && t < ip->n_aff; t++)
					rc = add_pair(&ip->aff_counts, n,
						      ip->aff[t].topology_key, cnt);
			for (unsigned t = 0; rc == 0 && t < ip->n_anti; t++)
				if (m->anti >> t & 1)
					rc = add_pair(&ip->anti_counts, n,
						      ip->anti[t].topology_key, cnt);
			if (m->its_anti) {
				const struct group_term *et;
				unsigned ne = pod_group_terms(e, TERM_REQUIRED_ANTI_AFFINITY,
							      &et);
				for (unsigned t = 0; rc == 0 && t < ne; t++)
					if (m->its_anti >> t & 1)
						rc = add_pair(&ip->existing_anti, n,
							      et[t].topology_key, cnt);
			}
			for (unsigned c = 0; c < ip->n_hard; c++)
				if ((included & m->hard) >> c & 1)
					ip->hard_count[c][ip->hard_col[c]->domain[slot]] += cnt;
			if (rc < 0)
				return rc;
		}
	}
	ip->aff_empty = ip->aff_counts.n == 0;
	for (unsigned c = 0; c < ip->n_hard; c++) {
		int64_t min = INT32_MAX; /* criticalPaths start at MaxInt32 */
		uint32_t domains = 0;
		for (uint32_t d = 0; d < ip->hard_col[c]->n_domains; d++) {
			if (!ip->hard_seen[c][d])
				continue;
			domains++;
			if (ip->hard_count[c][d] < min)
				min = ip->hard_count[c][d];
		}
		ip->hard_min[c] = min;
		ip->hard_domains[c] = domains;
	}
	return 0;
}

/* --- Filter --------------------------------------------------------------------- */

uint8_t interpod_filter(const struct interpod *ip, const struct snapshot *s,
			uint32_t slot)
{
	const struct node_spec *n = &s->nodes[slot];
	uint32_t v;
	/* PodTopologySpread. */
	for (unsigned c = 0; c < ip->n_hard; c++) {
		const struct group_spread *sc = &ip->hard[c];
		uint32_t dom = ip->hard_col[c]->domain[slot];
		if (dom == UINT32_MAX)
			return REASON_SPREAD_LABEL;
		int64_t min = ip->hard_min[c];
		if ((int64_t)ip->hard_domains[c] < sc->min_domains)
			min = 0;
		int64_t have = ip->hard_seen[c][dom] ? ip->hard_count[c][dom] : 0;
		int64_t skew = have + (ip->hard_self[c] ? 1 : 0) - min;
		if (skew > sc->max_skew)
			return REASON_SPREAD;
	}
	/* InterPodAffinity: satisfyPodAffinity. */
	bool exist = true;
	for (unsigned t = 0; t < ip->n_aff; t++) {
		if (!node_label(n, ip->aff[t].topology_key, &v))
			return REASON_POD_AFFINITY;
		const int64_t *have = pmap_get(&ip->aff_counts,
					       pair(ip->aff[t].topology_key, v));
		if (have == NULL || *have <= 0)
			exist = false;
	}
	if (!exist && !(ip->aff_empty && ip->self_all))
		return REASON_POD_AFFINITY;
	/* satisfyPodAntiAffinity. */
	if (ip->anti_counts.n > 0)
		for (unsigned t = 0; t < ip->n_anti; t++) {
			const int64_t *have;
			if (node_label(n, ip->anti[t].topology_key, &v) &&
			    (have = pmap_get(&ip->anti_counts,
					     pair(ip->anti[t].topology_key, v))) != NULL &&
			    *have > 0)
				return REASON_POD_ANTI_AFFINITY;
		}
	/* satisfyExistingPodsAntiAffinity. */
	if (ip->existing_anti.n > 0)
		for (unsigned i = 0; i < n->n_labels; i++) {
			const int64_t *have = pmap_get(&ip->existing_anti,
						       pair(n->labels[i].key,
							    n->labels[i].value));
			if (have != NULL && *have > 0)
				return REASON_EXISTING_ANTI_AFFINITY;
		}
	return 0;
}

/* --- PreScore and Score ---------------------------------------------------------- */

static int ensure_ignored(struct interpod *ip, uint32_t n_slots)
{
	if (ip->ignored_len >= n_slots)
		return 0;
	uint8_t *p = realloc(ip->ignored, n_slots ? n_slots : 1);
	if (p == NULL)
		return -ENOMEM;
	ip->ignored = p;
	ip->ignored_len = n_slots;
	return 0;
}

/* scoring.go processTerm for `n` terms of `owner` selected by `mask`:
 * each adds weight (its own, or `weight` when not 0) x sign x pods. */
static int score_terms(struct pmap *m, const struct node_spec *n,
		       const struct group_term *t, unsigned nt, uint32_t mask,
		       int64_t weight, int64_t sign, int64_t pods)
{
	for (unsigned i = 0; i < nt; i++)
		if (mask >> i & 1) {
			int64_t w = weight != 0 ? weight : t[i].weight;
			if (add_pair(m, n, t[i].topology_key, sign * w * pods) < 0)
				return -ENOMEM;
		}
	return 0;
}

int interpod_prescore(struct interpod *ip, const struct snapshot *s,
		      struct ledger *l, const struct plugin_ctx *ctx,
		      const struct pod_spec *pod, const struct interpod_args *args,
		      const uint32_t *slots, size_t n)
{
	pmap_clear(&ip->score);
	pmap_clear(&ip->soft_counts);
	const struct pod_group *g0 = ip->g; /* interpod_prefilter's pod */
	if (ip->g == NULL || n == 0 || pod != ip->pod) {
		ip->score_affinity = ip->score_spread = false;
		return 0;
	}
	bool has_pref = ip->n_pref_aff > 0 || ip->n_pref_anti > 0;
	/* Without preferred terms of its own, only placed pods' terms can
	 * score the pod: none if PreFilter's walk met none that do. */
	bool existing = ip->walked ? ip->existing_scores : ledger_term_pods(l) > 0;
	ip->score_affinity = args->score_interpod &&
			     !(args->ignore_preferred_terms_of_existing && !has_pref) &&
			     (has_pref || existing);
	ip->score_spread = args->score_spread && ip->n_soft > 0;
	if (!ip->score_affinity && !ip->score_spread)
		return 0;

	/* initPreScoreState: the domains of the nodes that passed. */
	unsigned topo_size[MAX_CONSTRAINTS] = {0};
	uint32_t n_ignored = 0;
	if (ip->score_spread) {
		ip->require_all = g0->n_spread > 0 || !args->system_defaulted;
		if (ensure_ignored(ip, s->n_slots) < 0)
			return -ENOMEM;
		for (size_t i = 0; i < n; i++) {
			const struct node_spec *nd = &s->nodes[slots[i]];
			ip->ignored[slots[i]] = ip->require_all &&
						!has_all_keys(nd, ip->soft, ip->n_soft);
			if (ip->ignored[slots[i]]) {
				n_ignored++;
				continue;
			}
			for (unsigned c = 0; c < ip->n_soft; c++) {
				uint32_t key = ip->soft[c].topology_key;
				if (key == ctx->id_hostname_key)
					continue;
				uint32_t v = 0; /* a missing label reads "" */
				node_label(nd, key, &v);
				if (pmap_get(&ip->soft_counts, pair(key, v)) == NULL) {
					if (pmap_at(&ip->soft_counts, pair(key, v)) == NULL)
						return -ENOMEM;
					topo_size[c]++;
				}
			}
		}
		for (unsigned c = 0; c < ip->n_soft; c++) {
			size_t size = ip->soft[c].topology_key == ctx->id_hostname_key
				? n - n_ignored : topo_size[c];
			ip->soft_weight[c] = log((double)size + 2);
		}
	}

	/* One walk over every node's groups for both plugins. */
	struct group_count gc[NODE_MAX_GROUPS];
	for (uint32_t slot = 0; slot < s->n_slots; slot++) {
		if (!s->present[slot])
			continue;
		const struct node_spec *nd = &s->nodes[slot];
		uint32_t included = 0;
		if (ip->score_spread &&
		    !(ip->require_all && !has_all_keys(nd, ip->soft, ip->n_soft)))
			for (unsigned c = 0; c < ip->n_soft; c++)
				if (ip->soft[c].topology_key != ctx->id_hostname_key &&
				    node_included(ctx, pod, &ip->soft[c], nd))
					included |= 1u << c;
		unsigned ng = ledger_load_groups(ledger_node(l, slot), gc);
		for (unsigned k = 0; k < ng; k++) {
			const struct pod_group *e;
			const struct memo *m = memo_of(ip, gc[k].group, &e);
			if (m == NULL)
				continue;
			int64_t cnt = gc[k].pods;
			int rc = 0;
			if (ip->score_affinity) {
				const struct group_term *t;
				unsigned nt;
				rc = score_terms(&ip->score, nd, ip->pref_aff, ip->n_pref_aff,
						 m->pref_affinity, 0, +1, cnt);
				if (rc == 0)
					rc = score_terms(&ip->score, nd, ip->pref_anti,
							 ip->n_pref_anti, m->pref_anti, 0,
							 -1, cnt);
				if (rc == 0 && args->hard_pod_affinity_weight > 0) {
					nt = pod_group_terms(e, TERM_REQUIRED_AFFINITY, &t);
					rc = score_terms(&ip->score, nd, t, nt, m->its_affinity,
							 args->hard_pod_affinity_weight, +1,
							 cnt);
				}
				if (rc == 0) {
					nt = pod_group_terms(e, TERM_PREFERRED_AFFINITY, &t);
					rc = score_terms(&ip->score, nd, t, nt,
							 m->its_pref_affinity, 0, +1, cnt);
				}
				if (rc == 0) {
					nt = pod_group_terms(e, TERM_PREFERRED_ANTI_AFFINITY, &t);
					rc = score_terms(&ip->score, nd, t, nt,
							 m->its_pref_anti, 0, -1, cnt);
				}
			}
			for (unsigned c = 0; rc == 0 && c < ip->n_soft; c++) {
				if (!((included & m->soft) >> c & 1))
					continue;
				uint32_t v = 0;
				node_label(nd, ip->soft[c].topology_key, &v);
				int64_t *have = (int64_t *)pmap_get(
					&ip->soft_counts, pair(ip->soft[c].topology_key, v));
				if (have != NULL) /* only domains of passing nodes */
					*have += cnt;
			}
			if (rc < 0)
				return rc;
		}
	}
	return 0;
}

int64_t interpod_score_affinity(struct interpod *ip, const struct snapshot *s,
				uint32_t slot)
{
	if (!ip->score_affinity || ip->score.n == 0)
		return 0;
	const struct node_spec *n = &s->nodes[slot];
	int64_t sum = 0;
	/* Score: for each topology key scored, the node's value's score. The
	 * node's labels are fewer than the pairs only sometimes; both are
	 * exact. */
	for (unsigned i = 0; i < n->n_labels; i++) {
		const int64_t *v = pmap_get(&ip->score,
					    pair(n->labels[i].key, n->labels[i].value));
		if (v != NULL)
			sum += *v;
	}
	return sum;
}

int64_t interpod_score_spread(struct interpod *ip, const struct snapshot *s,
			      struct ledger *l, uint32_t slot)
{
	if (!ip->score_spread || ip->ignored[slot])
		return 0;
	const struct node_spec *n = &s->nodes[slot];
	double score = 0;
	for (unsigned c = 0; c < ip->n_soft; c++) {
		uint32_t key = ip->soft[c].topology_key, v;
		if (!node_label(n, key, &v))
			continue;
		int64_t cnt = 0;
		const int64_t *have = pmap_get(&ip->soft_counts, pair(key, v));
		if (have != NULL) {
			cnt = *have;
		} else {
			/* hostname: the pods on this node (Score counts them). */
			struct group_count gc[NODE_MAX_GROUPS];
			unsigned ng = ledger_load_groups(ledger_node(l, slot), gc);
			for (unsigned k = 0; k < ng; k++) {
				const struct pod_group *e;
				const struct memo *m = memo_of(ip, gc[k].group, &e);
				if (m != NULL && (m->soft >> c & 1))
					cnt += gc[k].pods;
			}
		}
		score += (double)cnt * ip->soft_weight[c] +
			 (double)(ip->soft[c].max_skew - 1);
	}
	return (int64_t)round(score);
}

void interpod_normalize_affinity(const struct interpod *ip, int64_t *scores,
				 size_t n)
{
	if (!ip->score_affinity) {
		for (size_t i = 0; i < n; i++)
			scores[i] = 0;
		return;
	}
	int64_t lo = INT64_MAX, hi = INT64_MIN;
	for (size_t i = 0; i < n; i++) {
		lo = scores[i] < lo ? scores[i] : lo;
		hi = scores[i] > hi ? scores[i] : hi;
	}
	for (size_t i = 0; i < n; i++)
		scores[i] = hi - lo > 0
			? (int64_t)((double)MAX_NODE_SCORE *
				    ((double)(scores[i] - lo) / (double)(hi - lo)))
			: 0;
}

void interpod_normalize_spread(const struct interpod *ip, const uint32_t *slots,
			       int64_t *scores, size_t n)
{
	if (!ip->score_spread) {
		for (size_t i = 0; i < n; i++)
			scores[i] = 0;
		return;
	}
	int64_t lo = INT64_MAX, hi = 0;
	for (size_t i = 0; i < n; i++) {
		if (ip->ignored[slots[i]])
			continue;
		lo = scores[i] < lo ? scores[i] : lo;
		hi = scores[i] > hi ? scores[i] : hi;
	}
	for (size_t i = 0; i < n; i++) {
		if (ip->ignored[slots[i]])
			scores[i] = 0;
		else if (hi == 0)
			scores[i] = MAX_NODE_SCORE;
		else
			scores[i] = MAX_NODE_SCORE * (hi + lo - scores[i]) / hi;
	}
}
