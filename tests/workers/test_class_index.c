/* unit.class_index: the flat class index (workers/class_index.c) against a
 * literal model, a plain array of (group, passing, d) per position, over
 * random updates and every query the engine asks: passing counts over
 * ranges, the position of a given rank, a block's passing positions,
 * the best per group over a range, and the k-th tied position in range
 * order. Sizes go past one super-block (4,096 positions), with few
 * distinct scores (many ties) and with many; each case runs with the
 * AVX2 code and again with the scalar code, which must agree with the
 * model and so with each other. */
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
#include "workers/class_index_internal.h"

struct model {
	uint32_t n;
	unsigned groups;
	uint8_t *group;
	bool *pass;
	int32_t *d;
};

static uint64_t rs;

static uint32_t below(uint32_t n)
{
	return (uint32_t)(rng_next(&rs) % n);
}

static uint32_t m_count(const struct model *m, uint32_t lo, uint32_t hi)
{
	uint32_t c = 0;
	for (uint32_t p = lo; p < hi && p < m->n; p++)
		c += m->pass[p];
	return c;
}

static void m_range(const struct model *m, uint32_t lo, uint32_t hi,
		    struct ci_best *out)
{
	for (uint32_t p = lo; p < hi && p < m->n; p++) {
		if (!m->pass[p])
			continue;
		struct ci_best *b = &out[m->group[p]];
		if (m->d[p] > b->d)
			*b = (struct ci_best){m->d[p], 1};
		else if (m->d[p] == b->d)
			b->ties++;
	}
}

static uint32_t m_find(const struct model *m, uint32_t lo, uint32_t hi,
		       const int32_t *want, uint64_t *k)
{
	for (uint32_t p = lo; p < hi && p < m->n; p++) {
		if (!m->pass[p] || want[m->group[p]] == CLASS_INDEX_NONE ||
		    m->d[p] != want[m->group[p]])
			continue;
		if (*k == 0)
			return p;
		(*k)--;
	}
	return UINT32_MAX;
}

static int32_t gen_d(uint32_t spread)
{
	return (int32_t)below(spread);
}

/* One case: build, then rounds of updates and queries. */
static void run_case(uint64_t seed, bool simd, uint64_t *queries)
{
	rs = seed;
	struct model m;
	static const uint32_t sizes[] = {1, 2, 63, 64, 65, 300, 4095, 4096, 4097,
					 9000, 20000};
	m.n = below(4) == 0 ? sizes[below(11)] : 1 + below(5000);
	m.groups = 1 + below(below(2) ? 1 : CLASS_INDEX_MAX_GROUPS);
	uint32_t spread = below(2) ? 1 + below(4) : 1 + below(100000);
	m.group = calloc(m.n, 1);
	m.pass = calloc(m.n, sizeof(bool));
	m.d = calloc(m.n, sizeof(int32_t));
	assert_non_null(m.group);
	assert_non_null(m.pass);
	assert_non_null(m.d);
	bool was = class_index_set_simd(simd);
	struct class_index x;
	assert_int_equal(class_index_init(&x, m.n, m.groups), 0);
	uint32_t density = 1 + below(100);
	for (uint32_t p = 0; p < m.n; p++) {
		m.group[p] = (uint8_t)below(m.groups);
		m.pass[p] = below(100) < density;
		m.d[p] = m.pass[p] ? gen_d(spread) : 0;
		class_index_set_leaf(&x, p, m.group[p], m.pass[p], m.d[p]);
	}
	class_index_build(&x);
	for (unsigned round = 0; round < 40; round++) {
		unsigned updates = below(3) == 0 ? below(2 * m.n + 1) : below(20);
		for (unsigned u = 0; u < updates; u++) {
			uint32_t p = below(m.n);
			if (below(20) == 0 && m.groups > 1) {
				/* the position moves to another group */
				class_index_update(&x, p, m.group[p], false, 0);
				m.group[p] = (uint8_t)below(m.groups);
			}
			m.pass[p] = below(100) < density;
			/* near the current best now and then, so maxima fall */
			m.d[p] = m.pass[p] ? gen_d(spread) : 0;
			class_index_update(&x, p, m.group[p], m.pass[p], m.d[p]);
		}
		uint32_t total = m_count(&m, 0, m.n);
		assert_int_equal(class_index_total(&x), total);
		for (unsigned q = 0; q < 8; q++) {
			uint32_t lo = below(m.n + 1), hi = below(m.n + 1);
			if (lo > hi) {
				uint32_t t = lo;
				lo = hi;
				hi = t;
			}
			assert_int_equal(class_index_count(&x, lo, hi), m_count(&m, lo, hi));
			if (total > 0) {
				uint32_t rank = below(total);
				uint32_t p = class_index_select(&x, rank);
				assert_true(p < m.n && m.pass[p]);
				assert_int_equal(m_count(&m, 0, p), rank);
			}
			/* The rank-r position from lo, or how many lie after it. */
			uint32_t r = below(total + 2), counted = 0;
			uint32_t from = class_index_select_from(&x, lo, r, &counted);
			uint32_t after = m_count(&m, lo, m.n);
			if (r < after) {
				assert_true(from >= lo && from < m.n && m.pass[from]);
				assert_int_equal(m_count(&m, lo, from), r);
			} else {
				assert_int_equal(from, UINT32_MAX);
				assert_int_equal(counted, after);
			}
			struct ci_best got[CLASS_INDEX_MAX_GROUPS], exp[CLASS_INDEX_MAX_GROUPS];
			for (unsigned g = 0; g < m.groups; g++)
				got[g] = exp[g] = (struct ci_best){CLASS_INDEX_NONE, 0};
			class_index_range(&x, lo, hi, got);
			m_range(&m, lo, hi, exp);
			for (unsigned g = 0; g < m.groups; g++) {
				assert_int_equal(got[g].d, exp[g].d);
				assert_int_equal(got[g].ties, exp[g].ties);
			}
			/* A tie search within the range, for its best in some
			 * groups (the others excluded), from a random rank. */
			int32_t want[CLASS_INDEX_MAX_GROUPS];
			uint64_t ties = 0;
			for (unsigned g = 0; g < m.groups; g++) {
				want[g] = below(4) == 0 ? CLASS_INDEX_NONE : exp[g].d;
				if (want[g] != CLASS_INDEX_NONE)
					ties += exp[g].ties;
			}
			uint64_t k = below((uint32_t)ties + 3), k2 = k;
			uint32_t at = class_index_find_tie(&x, lo, hi, want, &k);
			uint32_t exp_at = m_find(&m, lo, hi, want, &k2);
			assert_int_equal(at, exp_at);
			if (at == UINT32_MAX) /* lowered by the qualifying positions */
				assert_int_equal(k, k2);
			/* The passing positions of lo's block within [lo, hi). */
			if (lo < hi) {
				uint32_t got_p[CLASS_INDEX_BLOCK], end = (lo / CLASS_INDEX_BLOCK + 1) *
									CLASS_INDEX_BLOCK;
				uint32_t n_p = class_index_block_passing(&x, lo, hi, got_p), j = 0;
				for (uint32_t p = lo; p < hi && p < end; p++)
					if (m.pass[p]) {
						assert_true(j < n_p);
						assert_int_equal(got_p[j++], p);
					}
				assert_int_equal(j, n_p);
			}
			for (uint32_t p = lo; p < hi && p < lo + 4; p++)
				assert_int_equal(class_index_leaf(&x, p, m.group[p]),
						 m.pass[p] ? m.d[p] : CLASS_INDEX_NONE);
			(*queries)++;
		}
	}
	class_index_free(&x);
	class_index_set_simd(was);
	free(m.group);
	free(m.pass);
	free(m.d);
}

static void test_against_model(void **state)
{
	(void)state;
	uint64_t queries = 0;
	/* SHMSCHED_CLASS_INDEX_CASES: fewer cases (default 400), for
	 * ThreadSanitizer (tests/workers/meson.build): one thread, no race to
	 * find; the plain and ASan builds run all 400. */
	unsigned cases = 400;
	const char *env = getenv("SHMSCHED_CLASS_INDEX_CASES");
	if (env != NULL && *env != '\0')
		cases = (unsigned)strtoul(env, NULL, 10);
	for (unsigned c = 0; c < cases; c++) {
		run_case(c * UINT64_C(0x9e3779b97f4a7c15) + 1, true, &queries);
		run_case(c * UINT64_C(0x9e3779b97f4a7c15) + 1, false, &queries);
	}
	print_message("%u cases, %llu queries, each with and without AVX2 "
		      "(this CPU: %s)\n", cases, (unsigned long long)queries,
		      class_index_simd() ? "AVX2" : "no AVX2");
}

static void test_limits(void **state)
{
	(void)state;
	struct class_index x;
	assert_int_equal(class_index_init(&x, 10, 0), -EINVAL);
	assert_int_equal(class_index_init(&x, 10, CLASS_INDEX_MAX_GROUPS + 1), -EINVAL);
	assert_int_equal(class_index_init(&x, 0, 1), 0);
	assert_int_equal(class_index_total(&x), 0);
	assert_int_equal(class_index_count(&x, 0, 0), 0);
	class_index_free(&x);
	/* The largest score a word holds, in the first group and the last
	 * (whose number fills the word's top bits). */
	unsigned last = CLASS_INDEX_MAX_GROUPS - 1;
	assert_int_equal(class_index_init(&x, 70, CLASS_INDEX_MAX_GROUPS), 0);
	class_index_update(&x, 69, 0, true, CLASS_INDEX_D_MAX);
	class_index_update(&x, 3, 0, true, 7);
	class_index_update(&x, 68, last, true, CLASS_INDEX_D_MAX);
	class_index_update(&x, 4, last, true, 0);
	struct ci_best b[CLASS_INDEX_MAX_GROUPS];
	for (unsigned g = 0; g < CLASS_INDEX_MAX_GROUPS; g++)
		b[g] = (struct ci_best){CLASS_INDEX_NONE, 0};
	class_index_range(&x, 0, 70, b);
	assert_int_equal(b[0].d, CLASS_INDEX_D_MAX);
	assert_int_equal(b[0].ties, 1);
	assert_int_equal(b[last].d, CLASS_INDEX_D_MAX);
	assert_int_equal(b[last].ties, 1);
	assert_int_equal(b[1].d, CLASS_INDEX_NONE);
	assert_int_equal(class_index_leaf(&x, 68, last), CLASS_INDEX_D_MAX);
	assert_int_equal(class_index_leaf(&x, 68, 0), CLASS_INDEX_NONE);
	assert_int_equal(class_index_leaf(&x, 4, last), 0);
	int32_t want[CLASS_INDEX_MAX_GROUPS];
	for (unsigned g = 0; g < CLASS_INDEX_MAX_GROUPS; g++)
		want[g] = CLASS_INDEX_NONE;
	want[last] = CLASS_INDEX_D_MAX;
	uint64_t k = 0;
	assert_int_equal(class_index_find_tie(&x, 0, 70, want, &k), 68);
	class_index_free(&x);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_limits),
		cmocka_unit_test(test_against_model),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
