/* base/eta.h: a drain's ETA (issue 38) from evicted, elapsed, left and
 * whether the last wave was held, against what the header promises: the
 * edge cases (nothing done, no time, nothing left, blocked) and inputs at
 * the top of uint64_t, which must stay finite. */
#include <math.h> /* isfinite, a macro: no libm */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "base/base.h"

#define SEC UINT64_C(1000000000)

static void assert_near(double got, double want)
{
	double d = got > want ? got - want : want - got;
	assert_true(isfinite(got));
	assert_true(d <= 1e-9 * (want < 0 ? -want : want) + 1e-12);
}

/* 40 left at 10 evicted in 3 s: 3.33/s, 12 s to go (the brief's line). */
static void test_eta_from_rate_so_far(void **state)
{
	(void)state;
	struct eta e = eta_estimate(10, 3 * SEC, 40, false);
	assert_int_equal(e.kind, ETA_KNOWN);
	assert_near(e.per_second, 10.0 / 3.0);
	assert_near(e.seconds, 12.0);
	e = eta_estimate(1, SEC / 1000, 1, false);
	assert_int_equal(e.kind, ETA_KNOWN);
	assert_near(e.per_second, 1000.0);
	assert_near(e.seconds, 0.001);
}

static void test_eta_unknown_without_a_rate(void **state)
{
	(void)state;
	struct eta e = eta_estimate(0, 5 * SEC, 3, false);
	assert_int_equal(e.kind, ETA_UNKNOWN);
	assert_true(e.seconds == 0.0 && e.per_second == 0.0);
	e = eta_estimate(4, 0, 3, false); /* evicted, but no time measured */
	assert_int_equal(e.kind, ETA_UNKNOWN);
	e = eta_estimate(0, 0, 3, false);
	assert_int_equal(e.kind, ETA_UNKNOWN);
}

/* Held: no number, whatever the rate so far says. */
static void test_eta_blocked_is_not_a_number(void **state)
{
	(void)state;
	struct eta e = eta_estimate(10, 3 * SEC, 40, true);
	assert_int_equal(e.kind, ETA_BLOCKED);
	assert_true(e.seconds == 0.0);
	assert_near(e.per_second, 10.0 / 3.0);
	e = eta_estimate(0, 0, 1, true);
	assert_int_equal(e.kind, ETA_BLOCKED);
}

/* Nothing left: done, 0 s, also with no rate or a stale blocked flag. */
static void test_eta_nothing_left_is_zero(void **state)
{
	(void)state;
	static const struct { uint64_t done, ns; bool blocked; } in[] = {
		{0, 0, false}, {0, 5 * SEC, false}, {7, 0, false},
		{7, 2 * SEC, false}, {7, 2 * SEC, true}, {UINT64_MAX, 1, false},
	};
	for (size_t i = 0; i < sizeof(in) / sizeof(in[0]); i++) {
		struct eta e = eta_estimate(in[i].done, in[i].ns, 0, in[i].blocked);
		assert_int_equal(e.kind, ETA_KNOWN);
		assert_true(e.seconds == 0.0);
	}
}

static void test_eta_huge_values_stay_finite(void **state)
{
	(void)state;
	const double max = (double)UINT64_MAX;
	struct eta e = eta_estimate(1, UINT64_MAX, UINT64_MAX, false);
	assert_int_equal(e.kind, ETA_KNOWN);
	assert_near(e.seconds, max * (max / 1e9));
	assert_near(e.per_second, 1e9 / max);
	e = eta_estimate(UINT64_MAX, 1, UINT64_MAX, false);
	assert_int_equal(e.kind, ETA_KNOWN);
	assert_near(e.seconds, 1e-9);
	assert_near(e.per_second, max * 1e9);
	e = eta_estimate(UINT64_MAX, UINT64_MAX, 1, false);
	assert_int_equal(e.kind, ETA_KNOWN);
	assert_near(e.seconds, 1e-9);
	assert_near(e.per_second, 1e9);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_eta_from_rate_so_far),
		cmocka_unit_test(test_eta_unknown_without_a_rate),
		cmocka_unit_test(test_eta_blocked_is_not_a_number),
		cmocka_unit_test(test_eta_nothing_left_is_zero),
		cmocka_unit_test(test_eta_huge_values_stay_finite),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
