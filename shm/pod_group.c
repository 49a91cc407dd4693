/* Pod groups: see pod_group.h.
 *
 * The encoding: "G1", then "T" for a terminating pod's group (nothing
 * otherwise, so groups encoded before the flag existed read back the
 * same), then, each as " <decimal>", the counts (ns, n_labels,
 * n_terms, n_spread, n_reqs, n_values, n_namespaces), the default
 * selector (present, first_req, n_reqs), each label (key, value), each
 * term (kind, all_namespaces, weight, topology_key, selector present,
 * first_req, n_reqs, first_ns, n_ns), each spread constraint
 * (topology_key, max_skew, min_domains, hard, node_affinity_policy,
 * node_taints_policy, selector present, first_req, n_reqs), each
 * requirement (key, op, first_value, n_values), the values, the
 * namespaces. Nothing else: a decoder that reads it back whole and checks
 * every index against its array is the only reader. */
#include "shm/pod_group.h"

#include <errno.h>
#include <string.h>

struct writer {
	char *buf;
	size_t len, used;
	bool full;
};

static void put(struct writer *w, int64_t v)
{
	char tmp[24];
	size_t n = 0;
	uint64_t u = v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;
	do {
		tmp[n++] = (char)('0' + u % 10);
		u /= 10;
	} while (u != 0);
	if (v < 0)
		tmp[n++] = '-';
	if (w->used + n + 1 > w->len) {
		w->full = true;
		return;
	}
	w->buf[w->used++] = ' ';
	while (n > 0)
		w->buf[w->used++] = tmp[--n];
}

static bool range_ok(unsigned first, unsigned n, unsigned count)
{
	return first <= count && n <= count - first;
}

static bool selector_ok(const struct pod_group *g, const struct group_selector *s)
{
	if (!s->present)
		return s->first_req == 0 && s->n_reqs == 0;
	return range_ok(s->first_req, s->n_reqs, g->n_reqs);
}

/* The rules of pod_group.h, checked on both sides of the encoding. */
static bool group_ok(const struct pod_group *g)
{
	if (g->n_labels > GROUP_MAX_LABELS || g->n_terms > GROUP_MAX_TERMS ||
	    g->n_spread > GROUP_MAX_SPREAD || g->n_reqs > GROUP_MAX_REQS ||
	    g->n_values > GROUP_MAX_VALUES || g->n_namespaces > GROUP_MAX_NAMESPACES)
		return false;
	if (!selector_ok(g, &g->default_selector))
		return false;
	for (unsigned i = 1; i < g->n_labels; i++)
		if (g->labels[i - 1].key >= g->labels[i].key)
			return false;
	for (unsigned i = 0; i < g->n_terms; i++) {
		const struct group_term *t = &g->terms[i];
		bool preferred = t->kind == TERM_PREFERRED_AFFINITY ||
				 t->kind == TERM_PREFERRED_ANTI_AFFINITY;
		if (t->kind > TERM_PREFERRED_ANTI_AFFINITY ||
		    (i > 0 && g->terms[i - 1].kind > t->kind) || t->topology_key == 0 ||
		    (preferred ? t->weight < 1 || t->weight > 100 : t->weight != 0) ||
		    !selector_ok(g, &t->selector) ||
		    !range_ok(t->first_ns, t->n_ns, g->n_namespaces))
			return false;
	}
	for (unsigned i = 0; i < g->n_spread; i++) {
		const struct group_spread *c = &g->spread[i];
		if (c->topology_key == 0 || c->max_skew < 1 || c->min_domains < 1 ||
		    c->node_affinity_policy > SPREAD_POLICY_IGNORE ||
		    c->node_taints_policy > SPREAD_POLICY_IGNORE ||
		    !selector_ok(g, &c->selector))
			return false;
	}
	for (unsigned i = 0; i < g->n_reqs; i++) {
		const struct group_req *r = &g->reqs[i];
		bool with_values = r->op == SEL_IN || r->op == SEL_NOT_IN;
		if ((r->op != SEL_IN && r->op != SEL_NOT_IN && r->op != SEL_EXISTS &&
		     r->op != SEL_DOES_NOT_EXIST) ||
		    !range_ok(r->first_value, r->n_values, g->n_values) ||
		    (with_values ? r->n_values == 0 : r->n_values != 0))
			return false;
	}
	return true;
}

int pod_group_encode(const struct pod_group *g, char *buf, size_t len)
{
	if (!group_ok(g))
		return -EINVAL;
	if (len > GROUP_ENCODED_MAX)
		len = GROUP_ENCODED_MAX;
	struct writer w = {.buf = buf, .len = len};
	if (len < 4)
		return -E2BIG;
	memcpy(buf, "G1", 2);
	w.used = 2;
	if (g->terminating)
		buf[w.used++] = 'T';
	put(&w, g->ns);
	put(&w, g->n_labels);
	put(&w, g->n_terms);
	put(&w, g->n_spread);
	put(&w, g->n_reqs);
	put(&w, g->n_values);
	put(&w, g->n_namespaces);
	put(&w, g->default_selector.present);
	put(&w, g->default_selector.first_req);
	put(&w, g->default_selector.n_reqs);
	for (unsigned i = 0; i < g->n_labels; i++) {
		put(&w, g->labels[i].key);
		put(&w, g->labels[i].value);
	}
	for (unsigned i = 0; i < g->n_terms; i++) {
		const struct group_term *t = &g->terms[i];
		put(&w, t->kind);
		put(&w, t->all_namespaces);
		put(&w, t->weight);
		put(&w, t->topology_key);
		put(&w, t->selector.present);
		put(&w, t->selector.first_req);
		put(&w, t->selector.n_reqs);
		put(&w, t->first_ns);
		put(&w, t->n_ns);
	}
	for (unsigned i = 0; i < g->n_spread; i++) {
		const struct group_spread *c = &g->spread[i];
		put(&w, c->topology_key);
		put(&w, c->max_skew);
		put(&w, c->min_domains);
		put(&w, c->hard);
		put(&w, c->node_affinity_policy);
		put(&w, c->node_taints_policy);
		put(&w, c->selector.present);
		put(&w, c->selector.first_req);
		put(&w, c->selector.n_reqs);
	}
	for (unsigned i = 0; i < g->n_reqs; i++) {
		put(&w, g->reqs[i].key);
		put(&w, g->reqs[i].op);
		put(&w, g->reqs[i].first_value);
		put(&w, g->reqs[i].n_values);
	}
	for (unsigned i = 0; i < g->n_values; i++)
		put(&w, g->values[i]);
	for (unsigned i = 0; i < g->n_namespaces; i++)
		put(&w, g->namespaces[i]);
	if (w.full)
		return -E2BIG;
	buf[w.used] = '\0';
	return (int)w.used;
}

struct reader {
	const char *s;
	size_t len, pos;
	bool bad;
};

/* The next " <decimal>" within [lo, hi]; marks the reader bad otherwise. */
static int64_t get(struct reader *r, int64_t lo, int64_t hi)
{
	if (r->bad || r->pos + 2 > r->len || r->s[r->pos] != ' ') {
		r->bad = true;
		return 0;
	}
	r->pos++;
	bool neg = r->s[r->pos] == '-';
	if (neg)
		r->pos++;
	size_t start = r->pos;
	uint64_t u = 0;
	while (r->pos < r->len && r->s[r->pos] >= '0' && r->s[r->pos] <= '9') {
		if (u > (UINT64_C(1) << 40)) { /* far past every field's range */
			r->bad = true;
			return 0;
		}
		u = u * 10 + (uint64_t)(r->s[r->pos++] - '0');
	}
	/* Canonical digits only: no empty number, no leading zero, no "-0". */
	size_t digits = r->pos - start;
	if (digits == 0 || (digits > 1 && r->s[start] == '0') || (neg && u == 0)) {
		r->bad = true;
		return 0;
	}
	int64_t v = neg ? -(int64_t)u : (int64_t)u;
	if (v < lo || v > hi)
		r->bad = true;
	return v;
}

static void get_selector(struct reader *r, struct group_selector *s)
{
	s->present = get(r, 0, 1) == 1;
	s->first_req = (uint16_t)get(r, 0, GROUP_MAX_REQS);
	s->n_reqs = (uint16_t)get(r, 0, GROUP_MAX_REQS);
}

int pod_group_decode(const char *s, size_t len, struct pod_group *out)
{
	memset(out, 0, sizeof(*out));
	if (len < 2 || len > GROUP_ENCODED_MAX || memcmp(s, "G1", 2) != 0)
		return -EBADMSG;
	struct reader r = {.s = s, .len = len, .pos = 2};
	if (len > 2 && s[2] == 'T') {
		out->terminating = true;
		r.pos = 3;
	}
	const int64_t id_max = UINT32_MAX;
	out->ns = (uint32_t)get(&r, 0, id_max);
	out->n_labels = (uint16_t)get(&r, 0, GROUP_MAX_LABELS);
	out->n_terms = (uint16_t)get(&r, 0, GROUP_MAX_TERMS);
	out->n_spread = (uint16_t)get(&r, 0, GROUP_MAX_SPREAD);
	out->n_reqs = (uint16_t)get(&r, 0, GROUP_MAX_REQS);
	out->n_values = (uint16_t)get(&r, 0, GROUP_MAX_VALUES);
	out->n_namespaces = (uint16_t)get(&r, 0, GROUP_MAX_NAMESPACES);
	get_selector(&r, &out->default_selector);
	if (r.bad)
		return -EBADMSG;
	for (unsigned i = 0; i < out->n_labels; i++) {
		out->labels[i].key = (uint32_t)get(&r, 0, id_max);
		out->labels[i].value = (uint32_t)get(&r, 0, id_max);
	}
	for (unsigned i = 0; i < out->n_terms; i++) {
		struct group_term *t = &out->terms[i];
		t->kind = (uint8_t)get(&r, 0, TERM_PREFERRED_ANTI_AFFINITY);
		t->all_namespaces = get(&r, 0, 1) == 1;
		t->weight = (int32_t)get(&r, 0, 100);
		t->topology_key = (uint32_t)get(&r, 1, id_max);
		get_selector(&r, &t->selector);
		t->first_ns = (uint16_t)get(&r, 0, GROUP_MAX_NAMESPACES);
		t->n_ns = (uint16_t)get(&r, 0, GROUP_MAX_NAMESPACES);
	}
	for (unsigned i = 0; i < out->n_spread; i++) {
		struct group_spread *c = &out->spread[i];
		c->topology_key = (uint32_t)get(&r, 1, id_max);
		c->max_skew = (int32_t)get(&r, 1, INT32_MAX);
		c->min_domains = (int32_t)get(&r, 1, INT32_MAX);
		c->hard = get(&r, 0, 1) == 1;
		c->node_affinity_policy = (uint8_t)get(&r, 0, SPREAD_POLICY_IGNORE);
		c->node_taints_policy = (uint8_t)get(&r, 0, SPREAD_POLICY_IGNORE);
		get_selector(&r, &c->selector);
	}
	for (unsigned i = 0; i < out->n_reqs; i++) {
		out->reqs[i].key = (uint32_t)get(&r, 0, id_max);
		out->reqs[i].op = (uint8_t)get(&r, SEL_IN, SEL_DOES_NOT_EXIST);
		out->reqs[i].first_value = (uint16_t)get(&r, 0, GROUP_MAX_VALUES);
		out->reqs[i].n_values = (uint16_t)get(&r, 0, GROUP_MAX_VALUES);
	}
	for (unsigned i = 0; i < out->n_values; i++)
		out->values[i] = (uint32_t)get(&r, 0, id_max);
	for (unsigned i = 0; i < out->n_namespaces; i++)
		out->namespaces[i] = (uint32_t)get(&r, 0, id_max);
	if (r.bad || r.pos != len || !group_ok(out)) {
		memset(out, 0, sizeof(*out));
		return -EBADMSG;
	}
	return 0;
}

int pod_group_map_ids(struct pod_group *g, int (*fn)(void *arg, uint32_t *id),
		      void *arg)
{
	int rc = fn(arg, &g->ns);
	for (unsigned i = 0; rc == 0 && i < g->n_labels; i++)
		if ((rc = fn(arg, &g->labels[i].key)) == 0)
			rc = fn(arg, &g->labels[i].value);
	for (unsigned i = 0; rc == 0 && i < g->n_terms; i++)
		rc = fn(arg, &g->terms[i].topology_key);
	for (unsigned i = 0; rc == 0 && i < g->n_spread; i++)
		rc = fn(arg, &g->spread[i].topology_key);
	for (unsigned i = 0; rc == 0 && i < g->n_reqs; i++)
		rc = fn(arg, &g->reqs[i].key);
	for (unsigned i = 0; rc == 0 && i < g->n_values; i++)
		rc = fn(arg, &g->values[i]);
	for (unsigned i = 0; rc == 0 && i < g->n_namespaces; i++)
		rc = fn(arg, &g->namespaces[i]);
	return rc;
}

unsigned pod_group_terms(const struct pod_group *g, enum group_term_kind kind,
			 const struct group_term **first)
{
	unsigned i = 0, n = 0;
	while (i < g->n_terms && g->terms[i].kind < kind)
		i++;
	*first = &g->terms[i];
	while (i + n < g->n_terms && g->terms[i + n].kind == kind)
		n++;
	return n;
}

bool labels_get(const struct label *labels, unsigned n, uint32_t key,
		uint32_t *value)
{
	unsigned lo = 0, hi = n;
	while (lo < hi) {
		unsigned mid = lo + (hi - lo) / 2;
		if (labels[mid].key < key)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo < n && labels[lo].key == key) {
		*value = labels[lo].value;
		return true;
	}
	return false;
}

static bool value_in(const struct pod_group *g, const struct group_req *r,
		     uint32_t v)
{
	for (unsigned i = 0; i < r->n_values; i++)
		if (g->values[r->first_value + i] == v)
			return true;
	return false;
}

bool group_selector_matches(const struct pod_group *g,
			    const struct group_selector *sel,
			    const struct label *labels, unsigned n_labels)
{
	if (!sel->present)
		return false;
	for (unsigned i = 0; i < sel->n_reqs; i++) {
		const struct group_req *r = &g->reqs[sel->first_req + i];
		uint32_t v;
		bool has = labels_get(labels, n_labels, r->key, &v);
		bool ok;
		switch (r->op) {
		case SEL_IN:
			ok = has && value_in(g, r, v);
			break;
		case SEL_NOT_IN:
			ok = !has || !value_in(g, r, v);
			break;
		case SEL_EXISTS:
			ok = has;
			break;
		default: /* SEL_DOES_NOT_EXIST */
			ok = !has;
			break;
		}
		if (!ok)
			return false;
	}
	return true;
}

bool group_term_matches(const struct pod_group *g, const struct group_term *t,
			const struct pod_group *pod)
{
	bool ns_ok = t->all_namespaces;
	for (unsigned i = 0; !ns_ok && i < t->n_ns; i++)
		ns_ok = g->namespaces[t->first_ns + i] == pod->ns;
	return ns_ok && group_selector_matches(g, &t->selector, pod->labels,
					       pod->n_labels);
}

bool group_spread_matches(const struct pod_group *g,
			  const struct group_selector *sel,
			  const struct pod_group *pod)
{
	return !pod->terminating && pod->ns == g->ns &&
	       group_selector_matches(g, sel, pod->labels, pod->n_labels);
}
