/* The class index: see class_index.h. A perfect binary tree in arrays,
 * node 1 the root, node i's children 2i and 2i+1, leaf p at size + p;
 * leaves past n never pass. */
#include "workers/class_index_internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static inline struct ci_node *node(const struct class_index *x, uint32_t i)
{
	return (struct ci_node *)(void *)(x->nodes + (size_t)i * x->stride);
}

int class_index_init(struct class_index *x, uint32_t n, unsigned groups)
{
	memset(x, 0, sizeof(*x));
	if (groups == 0 || groups > CLASS_INDEX_MAX_GROUPS || n > (1u << 30))
		return -EINVAL;
	uint32_t size = 1;
	while (size < n)
		size *= 2;
	x->n = n;
	x->size = size;
	x->groups = groups;
	x->stride = 1 + 2 * (size_t)groups;
	x->nodes = malloc(2 * (size_t)size * x->stride * sizeof(*x->nodes));
	if (x->nodes == NULL) {
		class_index_free(x);
		return -ENOMEM;
	}
	for (uint32_t i = 0; i < 2 * size; i++) {
		struct ci_node *nd = node(x, i);
		nd->count = 0;
		for (unsigned g = 0; g < groups; g++)
			nd->best[g] = (struct ci_best){CLASS_INDEX_NONE, 0};
	}
	return 0;
}

void class_index_free(struct class_index *x)
{
	free(x->nodes);
	memset(x, 0, sizeof(*x));
}

size_t class_index_bytes(const struct class_index *x)
{
	return 2 * (size_t)x->size * x->stride * sizeof(*x->nodes);
}

static void merge(struct ci_best *to, const struct ci_best *a)
{
	if (a->d > to->d)
		*to = *a;
	else if (a->d == to->d)
		to->ties += a->ties; /* both NONE: 0 + 0 */
}

/* Node i from its children. Returns whether it changed. */
static bool pull(struct class_index *x, uint32_t i)
{
	struct ci_node *b = node(x, i);
	const struct ci_node *l = node(x, 2 * i), *r = node(x, 2 * i + 1);
	bool changed = b->count != l->count + r->count;
	b->count = l->count + r->count;
	for (unsigned g = 0; g < x->groups; g++) {
		struct ci_best m = l->best[g];
		merge(&m, &r->best[g]);
		changed |= m.d != b->best[g].d || m.ties != b->best[g].ties;
		b->best[g] = m;
	}
	return changed;
}

int32_t class_index_leaf(const struct class_index *x, uint32_t p, unsigned g)
{
	return node(x, x->size + p)->best[g].d;
}

void class_index_set_leaf(struct class_index *x, uint32_t p, unsigned g,
			  bool pass, int32_t d)
{
	struct ci_node *b = node(x, x->size + p);
	for (unsigned k = 0; k < x->groups; k++)
		b->best[k] = (struct ci_best){CLASS_INDEX_NONE, 0};
	b->count = pass;
	if (pass)
		b->best[g] = (struct ci_best){d, 1};
}

void class_index_build(struct class_index *x)
{
	for (uint32_t i = x->size - 1; i >= 1; i--)
		pull(x, i);
}

void class_index_update(struct class_index *x, uint32_t p, unsigned g,
			bool pass, int32_t d)
{
	class_index_set_leaf(x, p, g, pass, d);
	/* An unchanged node leaves every ancestor as it was. */
	for (uint32_t i = (x->size + p) / 2; i >= 1 && pull(x, i); i /= 2)
		;
}

uint32_t class_index_total(const struct class_index *x)
{
	return node(x, 1)->count; /* the root; with one leaf, the leaf */
}

uint32_t class_index_count(const struct class_index *x, uint32_t lo, uint32_t hi)
{
	uint32_t c = 0;
	/* Bottom-up over the half-open range [lo, hi). */
	for (lo += x->size, hi += x->size; lo < hi; lo /= 2, hi /= 2) {
		if (lo & 1)
			c += node(x, lo++)->count;
		if (hi & 1)
			c += node(x, --hi)->count;
	}
	return c;
}

uint32_t class_index_select(const struct class_index *x, uint32_t r)
{
	uint32_t i = 1;
	while (i < x->size) {
		uint32_t left = node(x, 2 * i)->count;
		if (r < left) {
			i = 2 * i;
		} else {
			r -= left;
			i = 2 * i + 1;
		}
	}
	return i - x->size;
}

void class_index_range(const struct class_index *x, uint32_t lo, uint32_t hi,
		       struct ci_best *out)
{
	unsigned G = x->groups;
	for (lo += x->size, hi += x->size; lo < hi; lo /= 2, hi /= 2) {
		if (lo & 1) {
			const struct ci_node *nd = node(x, lo++);
			for (unsigned g = 0; g < G; g++)
				merge(&out[g], &nd->best[g]);
		}
		if (hi & 1) {
			const struct ci_node *nd = node(x, --hi);
			for (unsigned g = 0; g < G; g++)
				merge(&out[g], &nd->best[g]);
		}
	}
}

/* Qualifying leaves under tree node i. */
static uint64_t qualifying(const struct class_index *x, uint32_t i, const int32_t *want)
{
	uint64_t q = 0;
	const struct ci_best *b = node(x, i)->best;
	for (unsigned g = 0; g < x->groups; g++)
		if (want[g] != CLASS_INDEX_NONE && b[g].d == want[g])
			q += b[g].ties;
	return q;
}

/* The k-th qualifying leaf under node i, which has more than k. */
static uint32_t descend(const struct class_index *x, uint32_t i, const int32_t *want,
			uint64_t k)
{
	while (i < x->size) {
		uint64_t left = qualifying(x, 2 * i, want);
		if (k < left) {
			i = 2 * i;
		} else {
			k -= left;
			i = 2 * i + 1;
		}
	}
	return i - x->size;
}

/* Node i covers [nlo, nhi); visits its part of [lo, hi) in order. */
static uint32_t find_in(const struct class_index *x, uint32_t i, uint32_t nlo,
			uint32_t nhi, uint32_t lo, uint32_t hi, const int32_t *want,
			uint64_t *k)
{
	if (hi <= nlo || nhi <= lo)
		return UINT32_MAX;
	if (lo <= nlo && nhi <= hi) {
		uint64_t q = qualifying(x, i, want);
		if (*k >= q) {
			*k -= q;
			return UINT32_MAX;
		}
		return descend(x, i, want, *k);
	}
	uint32_t mid = nlo + (nhi - nlo) / 2;
	uint32_t p = find_in(x, 2 * i, nlo, mid, lo, hi, want, k);
	if (p != UINT32_MAX)
		return p;
	return find_in(x, 2 * i + 1, mid, nhi, lo, hi, want, k);
}

uint32_t class_index_find_tie(const struct class_index *x, uint32_t lo,
			      uint32_t hi, const int32_t *want, uint64_t *k)
{
	if (lo >= hi)
		return UINT32_MAX;
	return find_in(x, 1, 0, x->size, lo, hi, want, k);
}
