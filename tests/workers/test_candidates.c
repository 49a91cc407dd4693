/* unit.candidates: choosing among a scan's plain candidates
 * (workers/candidates.c), with AVX2 and without, against literal loops:
 * the best and its ties over all candidates and by raw taint count, the
 * k-th tie for every k, the refusal of a count out of range, and the
 * totals of select_plain()'s general way (raw scores large, negative or
 * absent; weights past what the AVX2 form takes). Scores
 * are drawn from few values (many ties) with INT64_MIN and INT64_MAX
 * among them; counts are mostly 0, some 1, a few up to NODE_MAX_TAINTS
 * and rarely out of range; lengths cover every tail of a step of four. */
#include <inttypes.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "base/base.h"
#include "workers/candidates_internal.h"

#define MAX_N 200
#define SLOTS 1024
#define CASES 4000

static uint64_t rs = 7;

static int64_t below(int64_t n)
{
	return (int64_t)(rng_next(&rs) % (uint64_t)n);
}

struct cands {
	uint32_t n;
	int64_t d[MAX_N];
	uint32_t slots[MAX_N];
	int32_t tr[SLOTS];
};

static int64_t pick_score(void)
{
	switch (below(20)) {
	case 0:
		return INT64_MIN;
	case 1:
		return INT64_MAX;
	default:
		return below(6) * 1000; /* few values: many ties */
	}
}

static void draw(struct cands *c, bool out_of_range)
{
	c->n = (uint32_t)below(MAX_N + 1);
	for (uint32_t s = 0; s < SLOTS; s++) {
		int64_t r = below(100);
		c->tr[s] = r < 85 ? 0 : r < 95 ? 1 : (int32_t)below(NODE_MAX_TAINTS + 1);
	}
	if (out_of_range)
		c->tr[below(SLOTS)] = below(2) ? -1 : NODE_MAX_TAINTS + 1;
	for (uint32_t i = 0; i < c->n; i++) {
		c->d[i] = pick_score();
		c->slots[i] = (uint32_t)below(SLOTS);
	}
}

/* The literal loops. */
static void best_literal(const int64_t *d, uint32_t n, int64_t *best, uint64_t *ties)
{
	*best = INT64_MIN;
	for (uint32_t i = 0; i < n; i++)
		*best = d[i] > *best ? d[i] : *best;
	*ties = 0;
	for (uint32_t i = 0; i < n; i++)
		*ties += d[i] == *best;
}

static bool by_taint_literal(const struct cands *c, struct by_taint *b)
{
	b->max_t = 0;
	for (uint32_t i = 0; i < c->n; i++) {
		int32_t t = c->tr[c->slots[i]];
		if (t < 0 || t > NODE_MAX_TAINTS)
			return false;
		b->max_t = t > b->max_t ? t : b->max_t;
	}
	for (int32_t t = 0; t <= NODE_MAX_TAINTS; t++) {
		int64_t sub[MAX_N];
		uint32_t m = 0;
		for (uint32_t i = 0; i < c->n; i++)
			if (c->tr[c->slots[i]] == t)
				sub[m++] = c->d[i];
		best_literal(sub, m, &b->best_at[t], &b->ties_at[t]);
	}
	return true;
}

static uint32_t kth_literal(const int64_t *d, uint32_t n, int64_t best, uint64_t k)
{
	for (uint32_t i = 0; i < n; i++)
		if (d[i] == best && k-- == 0)
			return i;
	return n;
}

/* select_plain()'s general way as it was written before
 * candidates_totals(). */
static void totals_literal(int64_t *total, const uint32_t *slots, uint32_t n,
			   const struct raw_scores *r, int64_t *best, uint64_t *ties)
{
	int64_t max_a = 0, max_t = 0;
	for (uint32_t i = 0; (r->ar != NULL || r->tr != NULL) && i < n; i++) {
		if (r->ar != NULL && r->ar[slots[i]] > max_a)
			max_a = r->ar[slots[i]];
		if (r->tr != NULL && r->tr[slots[i]] > max_t)
			max_t = r->tr[slots[i]];
	}
	for (uint32_t i = 0; i < n; i++) {
		int64_t a = r->ar != NULL ? r->ar[slots[i]] : 0;
		int64_t t = r->tr != NULL ? r->tr[slots[i]] : 0;
		if (r->aff && a != 0 && max_a != 0)
			a = MAX_NODE_SCORE * a / max_a;
		if (r->taint)
			t = t == 0 || max_t == 0 ? MAX_NODE_SCORE
						 : MAX_NODE_SCORE - MAX_NODE_SCORE * t / max_t;
		total[i] += SCORE_FINE * (r->w_taint * t + r->w_aff * a);
	}
	best_literal(total, n, best, ties);
}

/* A raw score: mostly 0 or small, sometimes large or negative. */
static int32_t pick_raw(void)
{
	switch (below(12)) {
	case 0:
		return (int32_t)(INT32_MAX - below(3));
	case 1:
		return (int32_t)below(1000) * 997;
	case 2:
		return below(30) == 0 ? -(int32_t)below(100) - 1 : 0;
	default:
		return below(3) == 0 ? (int32_t)below(300) : 0;
	}
}

/* A profile weight: mostly kube's range, sometimes past 32 bits' reach
 * once times SCORE_FINE, or 0. */
static int64_t pick_weight(void)
{
	switch (below(10)) {
	case 0:
		return 0;
	case 1:
		return (INT64_C(1) << 31) / SCORE_FINE + below(3) - 1;
	default:
		return 1 + below(100);
	}
}

/* candidates_totals() against the literal way: totals, best and ties. */
static void check_totals(const struct cands *c)
{
	static int32_t ar[SLOTS], tr[SLOTS];
	/* A quarter of the cases: small maxima with the most negative
	 * among them, whose normalised scores leave 32 bits (weights of at
	 * most 100 then, so that no total leaves 64). */
	bool small = below(4) == 0;
	for (uint32_t s = 0; s < SLOTS; s++) {
		if (small) {
			ar[s] = below(40) == 0 ? INT32_MIN : (int32_t)below(3);
			tr[s] = below(40) == 0 ? INT32_MIN : (int32_t)below(2);
			continue;
		}
		ar[s] = pick_raw();
		tr[s] = below(8) == 0 ? pick_raw() : (int32_t)below(2);
	}
	struct raw_scores r = {
		.ar = below(4) ? ar : NULL,
		.tr = below(4) ? tr : NULL,
		.aff = below(4) != 0,
		.w_aff = small ? below(101) : pick_weight(),
		.w_taint = small ? below(101) : pick_weight(),
	};
	r.taint = r.w_taint != 0;
	int64_t got[MAX_N], want[MAX_N];
	for (uint32_t i = 0; i < c->n; i++)
		got[i] = want[i] = c->d[i] == INT64_MIN || c->d[i] == INT64_MAX ? 0 : c->d[i];
	int64_t best, want_best;
	uint64_t ties, want_ties;
	candidates_totals(got, c->slots, c->n, &r, &best, &ties);
	totals_literal(want, c->slots, c->n, &r, &want_best, &want_ties);
	assert_memory_equal(got, want, c->n * sizeof(got[0]));
	assert_int_equal(ties, want_ties);
	if (want_ties > 0)
		assert_true(best == want_best);
}

/* One case through whichever form is switched on. */
static void check_case(const struct cands *c, uint64_t *kths)
{
	int64_t best, want_best;
	uint64_t ties, want_ties;
	candidates_best(c->d, c->n, &best, &ties);
	best_literal(c->d, c->n, &want_best, &want_ties);
	assert_int_equal(ties, want_ties);
	if (want_ties > 0)
		assert_true(best == want_best);
	for (uint64_t k = 0; k <= want_ties; k++) {
		assert_int_equal(candidates_kth(c->d, c->n, want_best, k),
				 kth_literal(c->d, c->n, want_best, k));
		(*kths)++;
	}

	struct by_taint b, want;
	bool ok = candidates_by_taint(c->d, c->slots, c->tr, c->n, &b);
	bool want_ok = by_taint_literal(c, &want);
	assert_int_equal(ok, want_ok);
	if (!ok)
		return;
	assert_int_equal(b.max_t, want.max_t);
	for (int32_t t = 0; t <= NODE_MAX_TAINTS; t++) {
		assert_int_equal(b.ties_at[t], want.ties_at[t]);
		if (want.ties_at[t] > 0)
			assert_true(b.best_at[t] == want.best_at[t]);
	}
	/* The draw with an add per count: every candidate's total, and
	 * each tie of a best drawn from the totals. Scores are bounded there
	 * (a sum past INT64_MAX is undefined): the extremes become others. */
	int64_t add[NODE_MAX_TAINTS + 1], total[MAX_N], d[MAX_N];
	for (int32_t t = 0; t <= NODE_MAX_TAINTS; t++)
		add[t] = below(3) * 1000;
	for (uint32_t i = 0; i < c->n; i++) {
		d[i] = c->d[i] == INT64_MIN ? -1000 : c->d[i] == INT64_MAX ? 9000 : c->d[i];
		total[i] = d[i] + add[c->tr[c->slots[i]]];
	}
	int64_t tb;
	uint64_t tt;
	best_literal(total, c->n, &tb, &tt);
	for (uint64_t k = 0; k <= tt; k++) {
		assert_int_equal(candidates_kth_by_taint(d, c->slots, c->tr, c->n, add, tb, k),
				 kth_literal(total, c->n, tb, k));
		(*kths)++;
	}
}

static void run_cases(bool simd, uint64_t seed)
{
	bool had = candidates_set_simd(simd);
	assert_int_equal(candidates_simd(), simd && had);
	rs = seed;
	static struct cands c;
	uint64_t kths = 0, refused = 0;
	for (int i = 0; i < CASES; i++) {
		draw(&c, below(10) == 0);
		struct by_taint b;
		refused += !candidates_by_taint(c.d, c.slots, c.tr, c.n, &b);
		check_case(&c, &kths);
		check_totals(&c);
	}
	print_message("candidates (%s): %d cases, %" PRIu64 " draws checked, %" PRIu64
		      " refused a count\n", candidates_simd() ? "AVX2" : "scalar", CASES, kths,
		      refused);
	assert_true(refused > 0 && refused < CASES / 5);
	candidates_set_simd(had);
}

static void test_simd_form(void **state)
{
	(void)state;
	run_cases(true, 7);
}

static void test_scalar_form(void **state)
{
	(void)state;
	run_cases(false, 7);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_simd_form),
		cmocka_unit_test(test_scalar_form),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
