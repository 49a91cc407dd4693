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
 * A class's view (struct interpod_view) keeps the same sums for its pod
 * without the walk: per node it remembers the groups it counted, and for
 * each node the change log names it adds the difference, through the
 * same functions the walk adds with (prefilter_add, prescore_add: a
 * signed count). Both therefore hold equal sums whenever the view has
 * read the log up to the walk's moment; the engine's property test
 * checks that every answer is the literal one. A view costs, per pod,
 * the nodes changed since its last pod (each O(groups on it)) plus
 * O(domains) per hard spread constraint for the minimum.
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
	int64_t total;   /* the sum of every pmap_add (counts never go below 0) */
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
	m->total = 0;
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
	bigger.total = m->total;
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

/* Adds `d` to the value of `k` (added if absent). -ENOMEM or 0. */
static int pmap_add(struct pmap *m, uint64_t k, int64_t d)
{
	int64_t *v = pmap_at(m, k);
	if (v == NULL)
		return -ENOMEM;
	*v += d;
	m->total += d;
	return 0;
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
	/* Whether a term group (T6 in shm/ledger.c) among the first
	 * term_seen of the ledger's list has a term that matches this group. */
	uint32_t term_seen;
	bool touched;
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
	uint32_t n_valued;    /* slots with the label (n_domains: all apart) */
	uint32_t cap;         /* slots the arrays hold */
};

/* What PreFilter and PreScore add up from every node's groups: filled
 * from scratch per pod by the literal walks (interpod.own), or kept from
 * the change log by a class's view (struct interpod_view). Filter and
 * Score read it through interpod.cnt. The adding up is one function for
 * both (prefilter_add, prescore_add), so both hold the same sums. */
struct ip_counts {
	struct pmap aff_counts;     /* pair -> pods matching every affinity term */
	struct pmap anti_counts;    /* pair -> pods matching an anti term */
	struct pmap existing_anti;  /* pair -> pods whose anti terms match */
	int64_t *hard_count[MAX_CONSTRAINTS]; /* [domain] pods */
	uint8_t *hard_seen[MAX_CONSTRAINTS];  /* [domain] an eligible node has it */
	uint32_t hard_cap[MAX_CONSTRAINTS];
	int64_t existing_score_pods; /* pods whose terms score this pod */
	int64_t existing_anti_off_host; /* existing_anti's adds on other keys
					 * than the hostname */
	struct pmap score;          /* pair -> weight (InterPodAffinity) */
};

/* A class's inter-pod counts (see interpod.h): the counts for its pod
 * over every node, kept exact by re-reading the nodes the change log
 * names, and per node the groups that matter to the pod as last counted,
 * so a change costs the difference. */
struct slot_groups {
	uint32_t n, cap;
	struct group_count *e;
};

struct interpod_view {
	uint64_t generation;        /* of the snapshot; 0: build from scratch */
	uint64_t log_pos;           /* the change log, read up to here */
	uint32_t group;             /* the pod's group it counts for */
	struct ip_counts cnt;
	struct pmap soft_full;      /* (constraint, value) -> pods over every
				     * counted node */
	struct slot_groups *last;   /* [n_slots] */
	uint32_t n_slots;
	size_t entry_bytes;         /* what last[*].e hold */
	uint64_t builds;            /* times built from scratch */
	size_t bytes;
};

struct interpod {
	const struct intern *strings;
	uint32_t hostname_key;      /* kubernetes.io/hostname's id; 0: none */
	uint64_t host_unique_gen;   /* the snapshot generation host_unique is for */
	bool host_unique;           /* no two nodes share a hostname label value */
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

	/* The counts Filter and Score read: own (the literal walks') or a
	 * class view's (NULL view). */
	struct ip_counts own;
	struct ip_counts *cnt;
	struct interpod_view *view;

	/* PreFilter. */
	bool aff_empty;             /* len(affinityCounts) == 0 */
	bool walked;                /* PreFilter counted every node's groups */
	bool existing_scores;       /* ... and met a group whose terms score
				     * this pod (InterPodAffinity's PreScore
				     * has nothing else to add up) */
	bool self_all;              /* the pod matches all its affinity terms */
	unsigned n_hard;
	struct group_spread hard[MAX_CONSTRAINTS];
	const struct topo_col *hard_col[MAX_CONSTRAINTS];
	int64_t hard_min[MAX_CONSTRAINTS];
	int64_t hard_max[MAX_CONSTRAINTS]; /* over the same domains */
	uint32_t hard_domains[MAX_CONSTRAINTS];
	bool hard_self[MAX_CONSTRAINTS];

	/* PreScore. */
	bool score_affinity;        /* InterPodAffinity runs (not skipped) */
	bool score_spread;          /* PodTopologySpread runs */
	unsigned n_soft;
	struct group_spread soft[MAX_CONSTRAINTS];
	double soft_weight[MAX_CONSTRAINTS];
	struct pmap soft_counts;    /* (constraint, value) -> pods: per constraint,
				     * as TopologyValueToPodCounts[i], so two
				     * constraints on one key count apart */
	bool require_all;
	uint8_t *ignored;           /* [n_slots]: IgnoredNodes */
	uint32_t ignored_len;
};

static int counts_init(struct ip_counts *k)
{
	memset(k, 0, sizeof(*k));
	int rc = pmap_init(&k->aff_counts, 64);
	if (rc == 0)
		rc = pmap_init(&k->anti_counts, 64);
	if (rc == 0)
		rc = pmap_init(&k->existing_anti, 64);
	if (rc == 0)
		rc = pmap_init(&k->score, 64);
	return rc;
}

static void counts_free(struct ip_counts *k)
{
	pmap_free(&k->aff_counts);
	pmap_free(&k->anti_counts);
	pmap_free(&k->existing_anti);
	pmap_free(&k->score);
	for (unsigned i = 0; i < MAX_CONSTRAINTS; i++) {
		free(k->hard_count[i]);
		free(k->hard_seen[i]);
	}
}

static void counts_clear(struct ip_counts *k)
{
	pmap_clear(&k->aff_counts);
	pmap_clear(&k->anti_counts);
	pmap_clear(&k->existing_anti);
	pmap_clear(&k->score);
	k->existing_score_pods = 0;
	k->existing_anti_off_host = 0;
}

/* Per hard constraint c, domain counts sized for its column, zero; and
 * which domains an eligible node has, none yet. */
static int counts_hard_reset(struct ip_counts *k, const struct topo_col *const *cols,
			     unsigned n_hard)
{
	for (unsigned c = 0; c < n_hard; c++) {
		uint32_t nd = cols[c]->n_domains;
		if (k->hard_cap[c] < nd) {
			int64_t *cnt = realloc(k->hard_count[c], nd * sizeof(*cnt));
			if (cnt != NULL)
				k->hard_count[c] = cnt;
			uint8_t *seen = realloc(k->hard_seen[c], nd);
			if (seen != NULL)
				k->hard_seen[c] = seen;
			if (cnt == NULL || seen == NULL)
				return -ENOMEM;
			k->hard_cap[c] = nd;
		}
		if (nd > 0) {
			memset(k->hard_count[c], 0, nd * sizeof(int64_t));
			memset(k->hard_seen[c], 0, nd);
		}
	}
	return 0;
}

struct interpod *interpod_create(const struct plugin_ctx *ctx)
{
	struct interpod *ip = calloc(1, sizeof(*ip));
	if (ip == NULL)
		return NULL;
	ip->strings = ctx->strings;
	ip->hostname_key = ctx->id_hostname_key;
	ip->groups_mask = 255;
	ip->groups = calloc(ip->groups_mask + 1, sizeof(*ip->groups));
	int rc = ip->groups ? 0 : -ENOMEM;
	if (rc == 0)
		rc = counts_init(&ip->own);
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
	counts_free(&ip->own);
	pmap_free(&ip->soft_counts);
	pmap_free(&ip->scratch);
	for (unsigned i = 0; i < TOPO_COLS; i++) {
		free(ip->cols[i].value);
		free(ip->cols[i].domain);
	}
	free(ip->ignored);
	free(ip);
}

void interpod_forget_groups(struct interpod *ip)
{
	for (uint32_t i = 0; i <= ip->groups_mask; i++) {
		free(ip->groups[i].g);
		ip->groups[i] = (struct gslot){0};
	}
	ip->n_groups = 0;
	for (unsigned i = 0; i < TOPO_COLS; i++)
		ip->cols[i].generation = 0; /* built again when next read */
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

/* Whether any term of `e` (any kind) matches group `g`. */
static bool terms_touch(const struct pod_group *e, const struct pod_group *g)
{
	for (unsigned kind = TERM_REQUIRED_AFFINITY;
	     kind <= TERM_PREFERRED_ANTI_AFFINITY; kind++) {
		const struct group_term *t;
		unsigned n = pod_group_terms(e, (enum group_term_kind)kind, &t);
		for (unsigned i = 0; i < n; i++)
			if (group_term_matches(e, &t[i], g))
				return true;
	}
	return false;
}

/* Whether a group with terms that was ever placed (the ledger's list, T6)
 * has a term matching the group of `gs`: only those can filter or score
 * a pod with no rules of its own. Each term group is looked at once per
 * group (per thread); a list entry not stored yet, a group that does not
 * decode or a list that overflowed count as touching. */
static bool touched_by_terms(struct interpod *ip, const struct ledger *l,
			     uint32_t id)
{
	uint32_t n = ledger_term_groups(l);
	if (n == UINT32_MAX)
		return true;
	for (;;) {
		struct gslot *gs = slot_of(ip, id);
		if (gs == NULL)
			return true;
		if (gs->touched || gs->term_seen >= n)
			return gs->touched;
		uint32_t e = ledger_term_group_at(l, gs->term_seen);
		if (e == 0)
			return true; /* its writer is storing it: look again later */
		const struct pod_group *g = gs->g; /* decoded groups stay put */
		const struct pod_group *eg = interpod_group(ip, e);
		gs = slot_of(ip, id); /* interpod_group may have moved the table */
		if (gs == NULL)
			return true;
		if (eg == NULL || terms_touch(eg, g))
			gs->touched = true;
		gs->term_seen++;
	}
}

bool interpod_applies(struct interpod *ip, const struct ledger *l,
		      const struct pod_spec *pod, const struct interpod_args *args)
{
	if (pod->group == 0)
		return false; /* no labels, no terms: nothing matches it */
	struct gslot *gs = slot_of(ip, pod->group);
	if (gs == NULL)
		return true; /* out of memory: the literal walk decides */
	const struct pod_group *g = gs->g;
	if (g == NULL)
		return false; /* did not decode: seen as in no group */
	if (g->n_terms > 0 || g->n_spread > 0 ||
	    (g->default_selector.present && args->n_default_spread > 0))
		return true;
	return ledger_term_pods(l) > 0 && touched_by_terms(ip, l, pod->group);
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
	c->n_valued = 0;
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
		c->n_valued++;
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
	return node_label(n, key, &v) ? pmap_add(m, pair(key, v), d) : 0;
}

/* --- PreFilter ---------------------------------------------------------------- */

/* The hard constraints that count node `slot` (all its topology keys, and
 * the inclusion policies), as bits; marks their domains seen in `k` when
 * `seen` is set. */
static uint32_t hard_included(const struct interpod *ip, struct ip_counts *k,
			      const struct plugin_ctx *ctx, const struct pod_spec *pod,
			      const struct node_spec *n, uint32_t slot, bool seen)
{
	for (unsigned c = 0; c < ip->n_hard; c++)
		if (ip->hard_col[c]->domain[slot] == UINT32_MAX)
			return 0;
	uint32_t included = 0;
	for (unsigned c = 0; c < ip->n_hard; c++) {
		if (!node_included(ctx, pod, &ip->hard[c], n))
			continue;
		included |= 1u << c;
		if (seen) /* the domain exists, with or without pods */
			k->hard_seen[c][ip->hard_col[c]->domain[slot]] = 1;
	}
	return included;
}

/* PreFilter's share of `cnt` pods (a negative count takes them away) of
 * group `e`, which is `m` to the pod, on node `n` in `slot`, counted by
 * the hard constraints `included`. */
static int prefilter_add(const struct interpod *ip, struct ip_counts *k,
			 const struct node_spec *n, uint32_t slot, uint32_t included,
			 const struct memo *m, const struct pod_group *e, int64_t cnt)
{
	uint32_t v;
	int rc = 0;
	if (m->its_affinity | m->its_pref_affinity | m->its_pref_anti)
		k->existing_score_pods += cnt;
	if (m->all_affinity)
		for (unsigned t = 0; rc == 0 && t < ip->n_aff; t++)
			rc = add_pair(&k->aff_counts, n, ip->aff[t].topology_key, cnt);
	for (unsigned t = 0; rc == 0 && t < ip->n_anti; t++)
		if (m->anti >> t & 1)
			rc = add_pair(&k->anti_counts, n, ip->anti[t].topology_key, cnt);
	if (m->its_anti) {
		const struct group_term *et;
		unsigned ne = pod_group_terms(e, TERM_REQUIRED_ANTI_AFFINITY, &et);
		for (unsigned t = 0; rc == 0 && t < ne; t++) {
			if (!(m->its_anti >> t & 1))
				continue;
			rc = add_pair(&k->existing_anti, n, et[t].topology_key, cnt);
			if (et[t].topology_key != ip->hostname_key &&
			    node_label(n, et[t].topology_key, &v))
				k->existing_anti_off_host += cnt;
		}
	}
	for (unsigned c = 0; c < ip->n_hard; c++)
		if ((included & m->hard) >> c & 1)
			k->hard_count[c][ip->hard_col[c]->domain[slot]] += cnt;
	return rc;
}

/* What both PreFilters fix before counting: the pod in hand, its
 * constraints of both phases (so the memos serve PreScore too), their
 * columns, and what the pod is to its own terms. */
static int prefilter_begin(struct interpod *ip, const struct snapshot *s,
			   const struct pod_spec *pod, const struct interpod_args *args)
{
	ip->score_affinity = ip->score_spread = false;
	const struct pod_group *g0 = interpod_group(ip, pod->group);
	ip->n_hard = g0 != NULL ? phase_constraints(g0, args, true, ip->hard) : 0;
	ip->n_soft = g0 != NULL ? phase_constraints(g0, args, false, ip->soft) : 0;
	take_pod(ip, pod);
	for (unsigned c = 0; c < ip->n_hard; c++) {
		const struct topo_col *col = col_of(ip, s, ip->hard[c].topology_key);
		if (col == NULL)
			return -ENOMEM;
		ip->hard_col[c] = col;
		ip->hard_self[c] = group_selector_matches(g0, &ip->hard[c].selector,
							  g0->labels, g0->n_labels);
	}
	ip->self_all = ip->g != NULL &&
		       term_matches_all(ip->g, ip->aff, ip->n_aff, ip->g);
	return 0;
}

/* What Filter reads besides the counts: criticalPaths' minimum over the
 * domains an eligible node has, and how many there are. */
static void prefilter_end(struct interpod *ip)
{
	struct ip_counts *k = ip->cnt;
	ip->aff_empty = k->aff_counts.total == 0;
	ip->existing_scores = k->existing_score_pods > 0;
	for (unsigned c = 0; c < ip->n_hard; c++) {
		int64_t min = INT32_MAX; /* criticalPaths start at MaxInt32 */
		int64_t max = INT64_MIN;
		uint32_t domains = 0;
		for (uint32_t d = 0; d < ip->hard_col[c]->n_domains; d++) {
			if (!k->hard_seen[c][d])
				continue;
			domains++;
			if (k->hard_count[c][d] < min)
				min = k->hard_count[c][d];
			if (k->hard_count[c][d] > max)
				max = k->hard_count[c][d];
		}
		ip->hard_min[c] = min;
		ip->hard_max[c] = max;
		ip->hard_domains[c] = domains;
	}
}

int interpod_prefilter(struct interpod *ip, const struct snapshot *s,
		       struct ledger *l, const struct plugin_ctx *ctx,
		       const struct pod_spec *pod, const struct interpod_args *args)
{
	struct ip_counts *k = &ip->own;
	ip->cnt = k;
	ip->view = NULL;
	counts_clear(k);
	int rc = prefilter_begin(ip, s, pod, args);
	if (rc == 0)
		rc = counts_hard_reset(k, ip->hard_col, ip->n_hard);
	if (rc < 0)
		return rc;
	bool walk_pods = ledger_term_pods(l) > 0 || ip->n_aff > 0 || ip->n_anti > 0 ||
			 ip->n_hard > 0;
	ip->walked = false;
	if (!walk_pods || ip->g == NULL) {
		prefilter_end(ip);
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
		uint32_t included = ip->n_hard > 0
			? hard_included(ip, k, ctx, pod, n, slot, true) : 0;
		for (unsigned j = 0; j < ng; j++) {
			const struct pod_group *e;
			const struct memo *m = memo_of(ip, gc[j].group, &e);
			if (m != NULL &&
			    (rc = prefilter_add(ip, k, n, slot, included, m, e,
						gc[j].pods)) < 0)
				return rc;
		}
	}
	prefilter_end(ip);
	return 0;
}

/* --- Filter --------------------------------------------------------------------- */

bool interpod_hard_keys(const struct interpod *ip, uint32_t slot)
{
	for (unsigned c = 0; c < ip->n_hard; c++)
		if (ip->hard_col[c]->domain[slot] == UINT32_MAX)
			return false;
	return true;
}

/* No eligible domain's skew past maxSkew, for any hard constraint (a
 * node's domain is eligible whenever the node passed the static filters:
 * see interpod.h). */
static bool skew_within(const struct interpod *ip)
{
	for (unsigned c = 0; c < ip->n_hard; c++) {
		int64_t min = ip->hard_min[c];
		if ((int64_t)ip->hard_domains[c] < ip->hard[c].min_domains)
			min = 0;
		if (ip->hard_domains[c] > 0 &&
		    ip->hard_max[c] + (ip->hard_self[c] ? 1 : 0) - min > ip->hard[c].max_skew)
			return false;
	}
	return true;
}

/* Whether either score plugin runs (interpod_prescore's decisions). */
static bool scores_run(const struct interpod *ip, const struct interpod_args *args)
{
	bool has_pref = ip->n_pref_aff > 0 || ip->n_pref_anti > 0;
	bool existing = ip->walked ? ip->existing_scores : ip->cnt->existing_score_pods > 0;
	return (args->score_interpod &&
		!(args->ignore_preferred_terms_of_existing && !has_pref) &&
		(has_pref || existing)) ||
	       (args->score_spread && ip->n_soft > 0);
}

bool interpod_uniform(const struct interpod *ip, const struct interpod_args *args)
{
	const struct ip_counts *k = ip->cnt;
	/* Filter: no affinity term to satisfy, no pod to keep away from. */
	return ip->n_aff == 0 && k->anti_counts.total == 0 &&
	       k->existing_anti.total == 0 && skew_within(ip) && !scores_run(ip, args);
}

/* Whether no two nodes of `s` share a value of the hostname label (once
 * per snapshot generation); false when memory runs out. */
static bool hostnames_unique(struct interpod *ip, const struct snapshot *s)
{
	if (ip->host_unique_gen == s->generation)
		return ip->host_unique;
	pmap_clear(&ip->scratch);
	bool unique = true;
	for (uint32_t slot = 0; unique && slot < s->n_slots; slot++) {
		uint32_t v;
		if (!s->present[slot] || !node_label(&s->nodes[slot], ip->hostname_key, &v))
			continue;
		int64_t *seen = pmap_at(&ip->scratch, v);
		if (seen == NULL)
			return false;
		unique = (*seen)++ == 0;
	}
	ip->host_unique = unique;
	ip->host_unique_gen = s->generation;
	return unique;
}

bool interpod_node_local(struct interpod *ip, const struct snapshot *s,
			 const struct interpod_args *args)
{
	const struct ip_counts *k = ip->cnt;
	if (ip->n_aff > 0 || k->existing_anti_off_host > 0 || !skew_within(ip) ||
	    scores_run(ip, args))
		return false;
	for (unsigned t = 0; t < ip->n_anti; t++)
		if (ip->anti[t].topology_key != ip->hostname_key)
			return false;
	return hostnames_unique(ip, s);
}

uint8_t interpod_filter(const struct interpod *ip, const struct snapshot *s,
			uint32_t slot)
{
	const struct node_spec *n = &s->nodes[slot];
	const struct ip_counts *k = ip->cnt;
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
		int64_t have = k->hard_seen[c][dom] ? k->hard_count[c][dom] : 0;
		int64_t skew = have + (ip->hard_self[c] ? 1 : 0) - min;
		if (skew > sc->max_skew)
			return REASON_SPREAD;
	}
	/* InterPodAffinity: satisfyPodAffinity. */
	bool exist = true;
	for (unsigned t = 0; t < ip->n_aff; t++) {
		if (!node_label(n, ip->aff[t].topology_key, &v))
			return REASON_POD_AFFINITY;
		const int64_t *have = pmap_get(&k->aff_counts,
					       pair(ip->aff[t].topology_key, v));
		if (have == NULL || *have <= 0)
			exist = false;
	}
	if (!exist && !(ip->aff_empty && ip->self_all))
		return REASON_POD_AFFINITY;
	/* satisfyPodAntiAffinity. */
	if (k->anti_counts.total > 0)
		for (unsigned t = 0; t < ip->n_anti; t++) {
			const int64_t *have;
			if (node_label(n, ip->anti[t].topology_key, &v) &&
			    (have = pmap_get(&k->anti_counts,
					     pair(ip->anti[t].topology_key, v))) != NULL &&
			    *have > 0)
				return REASON_POD_ANTI_AFFINITY;
		}
	/* satisfyExistingPodsAntiAffinity. */
	if (k->existing_anti.total > 0)
		for (unsigned i = 0; i < n->n_labels; i++) {
			const int64_t *have = pmap_get(&k->existing_anti,
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

/* The soft constraints that count node `n` for the spread score (all
 * their keys when `require_all`, the inclusion policies; never hostname,
 * whose score counts the node's own pods), as bits. */
static uint32_t soft_included(const struct interpod *ip, const struct plugin_ctx *ctx,
			      const struct pod_spec *pod, const struct node_spec *n,
			      bool require_all)
{
	if (require_all && !has_all_keys(n, ip->soft, ip->n_soft))
		return 0;
	uint32_t included = 0;
	for (unsigned c = 0; c < ip->n_soft; c++)
		if (ip->soft[c].topology_key != ctx->id_hostname_key &&
		    node_included(ctx, pod, &ip->soft[c], n))
			included |= 1u << c;
	return included;
}

/* PreScore's share of `cnt` pods (negative: taken away) of group `e`,
 * which is `m` to the pod, on node `n`: InterPodAffinity's pairs when
 * `affinity`; and for the soft constraints `included`, the pods in
 * `soft` by pair (a missing label is the value ""), where `add_absent`
 * says whether a pair not there yet is added (a view counts every pair;
 * the literal walk only the pairs of the nodes that passed). */
static int prescore_add(const struct interpod *ip, struct ip_counts *k,
			const struct interpod_args *args, const struct node_spec *n,
			bool affinity, uint32_t included, struct pmap *soft,
			bool add_absent, const struct memo *m, const struct pod_group *e,
			int64_t cnt)
{
	struct pmap *sc = &k->score;
	int rc = 0;
	if (affinity) {
		const struct group_term *t;
		unsigned nt;
		rc = score_terms(sc, n, ip->pref_aff, ip->n_pref_aff, m->pref_affinity,
				 0, +1, cnt);
		if (rc == 0)
			rc = score_terms(sc, n, ip->pref_anti, ip->n_pref_anti,
					 m->pref_anti, 0, -1, cnt);
		if (rc == 0 && args->hard_pod_affinity_weight > 0) {
			nt = pod_group_terms(e, TERM_REQUIRED_AFFINITY, &t);
			rc = score_terms(sc, n, t, nt, m->its_affinity,
					 args->hard_pod_affinity_weight, +1, cnt);
		}
		if (rc == 0) {
			nt = pod_group_terms(e, TERM_PREFERRED_AFFINITY, &t);
			rc = score_terms(sc, n, t, nt, m->its_pref_affinity, 0, +1, cnt);
		}
		if (rc == 0) {
			nt = pod_group_terms(e, TERM_PREFERRED_ANTI_AFFINITY, &t);
			rc = score_terms(sc, n, t, nt, m->its_pref_anti, 0, -1, cnt);
		}
	}
	for (unsigned c = 0; rc == 0 && c < ip->n_soft; c++) {
		if (!((included & m->soft) >> c & 1))
			continue;
		uint32_t v = 0;
		node_label(n, ip->soft[c].topology_key, &v);
		uint64_t key = pair(c, v);
		if (add_absent) {
			rc = pmap_add(soft, key, cnt);
		} else {
			int64_t *have = (int64_t *)pmap_get(soft, key);
			if (have != NULL) /* only domains of passing nodes */
				*have += cnt;
		}
	}
	return rc;
}

int interpod_prescore(struct interpod *ip, const struct snapshot *s,
		      struct ledger *l, const struct plugin_ctx *ctx,
		      const struct pod_spec *pod, const struct interpod_args *args,
		      const uint32_t *slots, size_t n)
{
	const struct interpod_view *view = ip->view;
	if (view == NULL)
		pmap_clear(&ip->cnt->score);
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

	/* initPreScoreState: the domains of the nodes that passed, with a
	 * view's counts for them. */
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
				if (pmap_get(&ip->soft_counts, pair(c, v)) != NULL)
					continue;
				int64_t *cnt = pmap_at(&ip->soft_counts, pair(c, v));
				if (cnt == NULL)
					return -ENOMEM;
				const int64_t *all = view != NULL
					? pmap_get(&view->soft_full, pair(c, v)) : NULL;
				*cnt = all != NULL ? *all : 0;
				topo_size[c]++;
			}
		}
		for (unsigned c = 0; c < ip->n_soft; c++) {
			size_t size = ip->soft[c].topology_key == ctx->id_hostname_key
				? n - n_ignored : topo_size[c];
			ip->soft_weight[c] = log((double)size + 2);
		}
	}
	if (view != NULL)
		return 0; /* its counts are kept */

	/* One walk over every node's groups for both plugins. */
	struct group_count gc[NODE_MAX_GROUPS];
	for (uint32_t slot = 0; slot < s->n_slots; slot++) {
		if (!s->present[slot])
			continue;
		const struct node_spec *nd = &s->nodes[slot];
		uint32_t included = ip->score_spread
			? soft_included(ip, ctx, pod, nd, ip->require_all) : 0;
		unsigned ng = ledger_load_groups(ledger_node(l, slot), gc);
		for (unsigned k = 0; k < ng; k++) {
			const struct pod_group *e;
			const struct memo *m = memo_of(ip, gc[k].group, &e);
			int rc;
			if (m != NULL &&
			    (rc = prescore_add(ip, ip->cnt, args, nd, ip->score_affinity,
					       included, &ip->soft_counts, false, m, e,
					       gc[k].pods)) < 0)
				return rc;
		}
	}
	return 0;
}

/* --- a class's view: the counts kept from the change log -------------------- */

struct interpod_view *interpod_view_create(void)
{
	struct interpod_view *v = calloc(1, sizeof(*v));
	if (v == NULL)
		return NULL;
	if (counts_init(&v->cnt) < 0 || pmap_init(&v->soft_full, 64) < 0) {
		interpod_view_free(v);
		errno = ENOMEM;
		return NULL;
	}
	v->bytes = sizeof(*v);
	return v;
}

void interpod_view_free(struct interpod_view *v)
{
	if (v == NULL)
		return;
	counts_free(&v->cnt);
	pmap_free(&v->soft_full);
	for (uint32_t i = 0; v->last != NULL && i < v->n_slots; i++)
		free(v->last[i].e);
	free(v->last);
	free(v);
}

size_t interpod_view_bytes(const struct interpod_view *v)
{
	return v->bytes;
}

uint64_t interpod_view_log_pos(const struct interpod_view *v)
{
	return v->log_pos;
}

uint64_t interpod_view_builds(const struct interpod_view *v)
{
	return v->builds;
}

static size_t pmap_bytes(const struct pmap *m)
{
	return (size_t)(m->mask + 1) * (sizeof(*m->keys) + sizeof(*m->vals) +
					sizeof(*m->stamp));
}

static size_t view_measure(const struct interpod_view *v, unsigned n_hard)
{
	size_t b = sizeof(*v) + pmap_bytes(&v->cnt.aff_counts) +
		   pmap_bytes(&v->cnt.anti_counts) + pmap_bytes(&v->cnt.existing_anti) +
		   pmap_bytes(&v->cnt.score) + pmap_bytes(&v->soft_full) +
		   (size_t)v->n_slots * sizeof(*v->last);
	for (unsigned c = 0; c < n_hard; c++)
		b += v->cnt.hard_cap[c] * (sizeof(int64_t) + 1);
	return b + v->entry_bytes;
}

/* The groups on `slot` that matter to the pod in hand, summed per group
 * (the ledger may hold a group in two entries, T2). */
static unsigned relevant_groups(struct interpod *ip, struct ledger *l, uint32_t slot,
				struct group_count now[NODE_MAX_GROUPS])
{
	struct group_count gc[NODE_MAX_GROUPS];
	unsigned ng = ledger_load_groups(ledger_node(l, slot), gc), n = 0;
	for (unsigned k = 0; k < ng; k++) {
		const struct pod_group *e;
		if (memo_of(ip, gc[k].group, &e) == NULL)
			continue;
		unsigned j = 0;
		while (j < n && now[j].group != gc[k].group)
			j++;
		if (j == n)
			now[n++] = gc[k];
		else
			now[j].pods += gc[k].pods;
	}
	return n;
}

/* Everything a view counts, for `delta` pods of `group` on node `n`. */
static int view_add(struct interpod *ip, struct interpod_view *v,
		    const struct interpod_args *args, const struct node_spec *n,
		    uint32_t slot, uint32_t hard, uint32_t soft, uint32_t group,
		    int64_t delta)
{
	const struct pod_group *e;
	const struct memo *m = memo_of(ip, group, &e);
	if (m == NULL)
		return 0;
	int rc = prefilter_add(ip, &v->cnt, n, slot, hard, m, e, delta);
	if (rc == 0)
		rc = prescore_add(ip, &v->cnt, args, n, args->score_interpod, soft,
				  &v->soft_full, true, m, e, delta);
	return rc;
}

/* Counts node `slot` again: the difference between the groups on it now
 * and those last counted. `build`: the first count of a build, which
 * also marks the hard constraints' domains seen. */
static int view_slot(struct interpod *ip, struct interpod_view *v,
		     const struct snapshot *s, struct ledger *l,
		     const struct plugin_ctx *ctx, const struct pod_spec *pod,
		     const struct interpod_args *args, bool require_all,
		     uint32_t slot, bool build)
{
	if (slot >= v->n_slots || !s->present[slot])
		return 0;
	const struct node_spec *n = &s->nodes[slot];
	uint32_t hard = ip->n_hard > 0
		? hard_included(ip, &v->cnt, ctx, pod, n, slot, build) : 0;
	struct group_count now[NODE_MAX_GROUPS];
	unsigned n_now = relevant_groups(ip, l, slot, now);
	struct slot_groups *last = &v->last[slot];
	if (n_now == 0 && last->n == 0)
		return 0;
	uint32_t soft = ip->n_soft > 0 ? soft_included(ip, ctx, pod, n, require_all) : 0;
	int rc = 0;
	for (unsigned i = 0; rc == 0 && i < n_now; i++) {
		int64_t before = 0;
		for (unsigned j = 0; j < last->n; j++)
			if (last->e[j].group == now[i].group)
				before = last->e[j].pods;
		if (now[i].pods != before)
			rc = view_add(ip, v, args, n, slot, hard, soft, now[i].group,
				      (int64_t)now[i].pods - before);
	}
	for (unsigned j = 0; rc == 0 && j < last->n; j++) {
		unsigned i = 0;
		while (i < n_now && now[i].group != last->e[j].group)
			i++;
		if (i == n_now)
			rc = view_add(ip, v, args, n, slot, hard, soft, last->e[j].group,
				      -(int64_t)last->e[j].pods);
	}
	if (rc == 0 && n_now > last->cap) {
		struct group_count *e = realloc(last->e, n_now * sizeof(*e));
		if (e == NULL)
			rc = -ENOMEM;
		else {
			v->entry_bytes += (n_now - last->cap) * sizeof(*e);
			last->e = e;
			last->cap = n_now;
		}
	}
	if (rc < 0)
		return rc; /* the caller builds again from scratch */
	if (n_now > 0)
		memcpy(last->e, now, n_now * sizeof(*now));
	last->n = n_now;
	return 0;
}

/* Every node counted from scratch for the pod in hand. */
static int view_build(struct interpod *ip, struct interpod_view *v,
		      const struct snapshot *s, struct ledger *l,
		      const struct plugin_ctx *ctx, const struct pod_spec *pod,
		      const struct interpod_args *args, bool require_all)
{
	/* The head first: a change logged after it is read again later. */
	v->log_pos = ledger_changes_head(l);
	counts_clear(&v->cnt);
	pmap_clear(&v->soft_full);
	int rc = counts_hard_reset(&v->cnt, ip->hard_col, ip->n_hard);
	if (rc < 0)
		return rc;
	if (v->n_slots != s->n_slots) {
		for (uint32_t i = 0; v->last != NULL && i < v->n_slots; i++)
			free(v->last[i].e);
		free(v->last);
		v->n_slots = 0;
		v->entry_bytes = 0;
		v->last = calloc(s->n_slots ? s->n_slots : 1, sizeof(*v->last));
		if (v->last == NULL)
			return -ENOMEM;
		v->n_slots = s->n_slots;
	} else {
		for (uint32_t i = 0; i < v->n_slots; i++)
			v->last[i].n = 0;
	}
	for (uint32_t slot = 0; rc == 0 && slot < s->n_slots; slot++)
		rc = view_slot(ip, v, s, l, ctx, pod, args, require_all, slot, true);
	if (rc == 0) {
		v->generation = s->generation;
		v->group = pod->group;
	}
	v->builds++;
	return rc;
}

/* The view brought up to the change log (or built again when it is for
 * another snapshot or too far behind). */
static int view_sync(struct interpod *ip, struct interpod_view *v,
		     const struct snapshot *s, struct ledger *l,
		     const struct plugin_ctx *ctx, const struct pod_spec *pod,
		     const struct interpod_args *args, bool require_all)
{
	uint64_t head = ledger_changes_head(l);
	if (v->generation != s->generation || v->group != pod->group ||
	    v->n_slots != s->n_slots || ledger_changes_rebuild(head, v->log_pos, s->n_slots))
		return view_build(ip, v, s, l, ctx, pod, args, require_all);
	uint64_t i = v->log_pos;
	int rc = 0;
	for (; rc == 0 && i < head; i++) {
		uint32_t slot;
		int got = ledger_change_at(l, i, &slot);
		if (got == 0)
			break; /* its writer is between taking and storing it */
		if (got < 0)
			return view_build(ip, v, s, l, ctx, pod, args, require_all);
		rc = view_slot(ip, v, s, l, ctx, pod, args, require_all, slot, false);
	}
	v->log_pos = i;
	return rc;
}

int interpod_prefilter_view(struct interpod *ip, struct interpod_view *v,
			    const struct snapshot *s, struct ledger *l,
			    const struct plugin_ctx *ctx, const struct pod_spec *pod,
			    const struct interpod_args *args)
{
	int rc = prefilter_begin(ip, s, pod, args);
	if (rc < 0)
		return rc;
	if (ip->g == NULL)
		return interpod_prefilter(ip, s, l, ctx, pod, args);
	bool require_all = ip->g->n_spread > 0 || !args->system_defaulted;
	rc = view_sync(ip, v, s, l, ctx, pod, args, require_all);
	if (rc < 0) {
		v->generation = 0; /* half counted: from scratch next time */
		return rc;
	}
	v->bytes = view_measure(v, ip->n_hard);
	ip->cnt = &v->cnt;
	ip->view = v;
	ip->walked = true;
	prefilter_end(ip);
	return 0;
}

int64_t interpod_score_affinity(struct interpod *ip, const struct snapshot *s,
				uint32_t slot)
{
	if (!ip->score_affinity || ip->cnt->score.n == 0)
		return 0;
	const struct node_spec *n = &s->nodes[slot];
	int64_t sum = 0;
	/* Score: for each topology key scored, the node's value's score. The
	 * node's labels are fewer than the pairs only sometimes; both are
	 * exact. */
	for (unsigned i = 0; i < n->n_labels; i++) {
		const int64_t *v = pmap_get(&ip->cnt->score,
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
		const int64_t *have = pmap_get(&ip->soft_counts, pair(c, v));
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
