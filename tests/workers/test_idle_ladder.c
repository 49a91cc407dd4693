/* unit.idle_ladder: the pool worker's idle ladder (workers/idle_ladder.h),
 * stepped by hand with a made-up clock: a simulated worker polls (each
 * poll costs POLL_NS), finds work when an arrival's time has passed,
 * yields (YIELD_NS) or sleeps until the next arrival plus WAKE_NS (the
 * producer's doorbell).
 *
 * The issue it guards (39, item 1): the daemon's worker spun 2 ms after
 * each pod; at the gateway's 5,000-10,000 requests/s a pod came every
 * 100-200 us, so the worker never slept and spent a core polling on a
 * 2-core machine whose other core nginx, the gateway and the load
 * generator shared. The ladder now spins only while the recent gaps
 * between work are shorter than the spin; sparser work sleeps at once and
 * is woken by the doorbell. test_sparse_sleeps_at_once fails with the
 * ladder that does not adapt (it spins the whole spin before each sleep);
 * test_dense_never_sleeps, test_back_to_spinning and
 * test_gap_average guard the rest (test_set_spin: the longer spin of a
 * pool whose doorbells cannot wake it); every simulation checks that a sleep
 * is announced before the poll that precedes it (D1 in workers/pool.c). */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "workers/idle_ladder.h"

#define POLL_NS 100u
#define YIELD_NS 1000u
#define WAKE_NS 10000u
#define SPIN_NS 50000u
#define SPIN_POLLS IDLE_LADDER_CLOCK_POLLS
#define YIELD_POLLS 50u

static uint64_t sim_time;
static unsigned clock_reads;
/* A sleep's wake-up: WAKE_NS unless a test makes it slower. */
static uint64_t sim_wake_ns = WAKE_NS;

static uint64_t sim_clock(void)
{
	clock_reads++;
	return sim_time;
}

static uint64_t no_clock(void)
{
	fail_msg("a ladder that counts polls read the clock");
	return 0;
}

struct sim_counts {
	unsigned busy;       /* polls that found work */
	unsigned idle;       /* polls that found none */
	unsigned yields;
	unsigned sleeps;
	uint64_t spin_ns;    /* time in idle polls that spun */
};

/* Runs the ladder until every arrival (times in a[0..n), ascending, all
 * after sim_time) has been found; adds to *c. */
static void sim_run(struct idle_ladder *l, const uint64_t *a, size_t n,
		    struct sim_counts *c)
{
	size_t next = 0;
	while (next < n) {
		bool announced = idle_ladder_sleep_next(l);
		sim_time += POLL_NS;
		if (a[next] <= sim_time) {
			unsigned did = 0;
			for (; next < n && a[next] <= sim_time; next++)
				did++;
			c->busy++;
			idle_ladder_work(l, did, sim_clock);
			continue;
		}
		c->idle++;
		switch (idle_ladder_idle(l, sim_clock)) {
		case IDLE_SPIN:
			c->spin_ns += POLL_NS;
			break;
		case IDLE_YIELD:
			c->yields++;
			sim_time += YIELD_NS;
			break;
		case IDLE_SLEEP:
			/* D1: the poll before a sleep was announced. */
			assert_true(announced);
			c->sleeps++;
			sim_time = (a[next] > sim_time ? a[next] : sim_time) + sim_wake_ns;
			break;
		}
	}
}

/* sim_run over n arrivals every gap_ns, the first gap_ns from now. */
static void sim_every(struct idle_ladder *l, size_t n, uint64_t gap_ns,
		      struct sim_counts *c)
{
	uint64_t *a = test_malloc(n * sizeof(*a));
	for (size_t i = 0; i < n; i++)
		a[i] = sim_time + (i + 1) * gap_ns;
	sim_run(l, a, n, c);
	test_free(a);
}

static void timed_ladder(struct idle_ladder *l)
{
	sim_time = 1000000; /* not 0: 0 is "unread" */
	clock_reads = 0;
	sim_wake_ns = WAKE_NS;
	idle_ladder_init(l, SPIN_POLLS, SPIN_NS, YIELD_POLLS);
}

/* A pod every 500 us against a 50 us spin: after the first gap, each
 * sleeps after two idle polls (the one that found nothing, the announced
 * one), with no yield; the old ladder spun 50 us and yielded 50 times
 * before every sleep. */
static void test_sparse_sleeps_at_once(void **state)
{
	(void)state;
	struct idle_ladder l;
	timed_ladder(&l);
	struct sim_counts first = {0}, rest = {0};
	sim_every(&l, 1, 500000, &first);
	assert_int_equal(first.sleeps, 1);
	assert_true(first.spin_ns >= SPIN_NS);
	assert_true(idle_ladder_sparse(&l));

	sim_every(&l, 100, 500000, &rest);
	assert_int_equal(rest.busy, 100);
	assert_int_equal(rest.sleeps, 100);
	assert_int_equal(rest.yields, 0);
	assert_int_equal(rest.idle, 200);
	assert_true(rest.spin_ns <= 100u * POLL_NS);
	assert_true(idle_ladder_sparse(&l));
}

/* A pod every 20 us: found by spinning each time, never a yield or a
 * sleep; the clock read twice a gap (poll 16, the work). */
static void test_dense_never_sleeps(void **state)
{
	(void)state;
	struct idle_ladder l;
	timed_ladder(&l);
	struct sim_counts c = {0};
	sim_every(&l, 1000, 20000, &c);
	assert_int_equal(c.busy, 1000);
	assert_int_equal(c.sleeps, 0);
	assert_int_equal(c.yields, 0);
	assert_false(idle_ladder_sparse(&l));
	assert_true(clock_reads <= 2u * 1000u + 1000u * (20000u / POLL_NS / 16u));
}

/* Gaps shorter than the 16 untimed polls read no clock at all. */
static void test_back_to_back_reads_no_clock(void **state)
{
	(void)state;
	struct idle_ladder l;
	timed_ladder(&l);
	struct sim_counts c = {0};
	sim_every(&l, 1000, 5u * POLL_NS, &c);
	assert_int_equal(c.busy, 1000);
	assert_int_equal(clock_reads, 0);
	assert_int_equal(l.gap_avg_ns, 0);
}

/* After a steady 500 us, a pod every 20 us: the first gaps sleep (each
 * measured with its wake-up, 30 us, taking the average a quarter of the
 * way there), then the spin is back for good. */
static void test_back_to_spinning(void **state)
{
	(void)state;
	struct idle_ladder l;
	timed_ladder(&l);
	struct sim_counts sparse = {0}, dense = {0}, late = {0};
	sim_every(&l, 20, 500000, &sparse);
	assert_true(idle_ladder_sparse(&l));
	assert_true(l.gap_avg_ns > 400000);

	sim_every(&l, 20, 20000, &dense);
	/* Each such gap measures 30 us (20 and the wake-up), so the average
	 * falls towards 30: ln((500 - 30) / (50 - 30)) / ln(4 / 3) = 11. */
	assert_true(dense.sleeps >= 9);
	assert_true(dense.sleeps <= 13);
	assert_false(idle_ladder_sparse(&l));

	sim_every(&l, 200, 20000, &late);
	assert_int_equal(late.sleeps, 0);
	assert_int_equal(late.yields, 0);
}

/* A loaded machine's wake-ups (40 us) against a stream 20 us apart: each
 * gap measured across a sleep is 60 us, over the 50 us spin, but each
 * wake-up finds two or three pods, and the stretch's time divided among
 * them brings the spin back (after the 11 or so gaps that a steady
 * 500 us takes to wear off); the ladder that did not divide slept between
 * every two pods for good. */
static void test_slow_wakeups_dense_stream(void **state)
{
	(void)state;
	struct idle_ladder l;
	timed_ladder(&l);
	sim_wake_ns = 40000;
	struct sim_counts sparse = {0}, dense = {0}, late = {0};
	sim_every(&l, 20, 500000, &sparse);
	assert_true(idle_ladder_sparse(&l));
	sim_every(&l, 100, 20000, &dense);
	assert_true(dense.sleeps > 0);
	assert_false(idle_ladder_sparse(&l));
	sim_every(&l, 200, 20000, &late);
	assert_int_equal(late.sleeps, 0);
	assert_int_equal(late.busy, 200);
}

/* The average, exactly: each gap from the clock's first read of its
 * stretch to the work, weighing a quarter. */
static void test_gap_average(void **state)
{
	(void)state;
	struct idle_ladder l;
	timed_ladder(&l);
	/* A stretch of 16 untimed polls, then a read at the 17th. */
	for (unsigned i = 0; i < SPIN_POLLS; i++)
		assert_int_equal(idle_ladder_idle(&l, sim_clock), IDLE_SPIN);
	assert_int_equal(clock_reads, 0);
	assert_int_equal(idle_ladder_idle(&l, sim_clock), IDLE_SPIN);
	assert_int_equal(clock_reads, 1);
	sim_time += 40000;
	idle_ladder_work(&l, 1, sim_clock);
	assert_int_equal(l.gap_avg_ns, 10000);
	/* Four items found together after 40 us: a quarter each. */
	for (unsigned i = 0; i <= SPIN_POLLS; i++)
		idle_ladder_idle(&l, sim_clock);
	sim_time += 40000;
	idle_ladder_work(&l, 4, sim_clock);
	assert_int_equal(l.gap_avg_ns, 10000 - 2500 + 2500);
	assert_int_equal(clock_reads, 4);
	/* A gap of 3 polls: no clock, counted as 0. */
	for (unsigned i = 0; i < 3; i++)
		assert_int_equal(idle_ladder_idle(&l, sim_clock), IDLE_SPIN);
	idle_ladder_work(&l, 1, sim_clock);
	assert_int_equal(l.gap_avg_ns, 7500);
	assert_int_equal(clock_reads, 4);
	/* Work right after work changes nothing. */
	idle_ladder_work(&l, 1, sim_clock);
	assert_int_equal(l.gap_avg_ns, 7500);
	/* A long one: 7500 - 1875 + 250000 > SPIN_NS: sparse. */
	for (unsigned i = 0; i <= SPIN_POLLS; i++)
		idle_ladder_idle(&l, sim_clock);
	sim_time += 1000000;
	idle_ladder_work(&l, 1, sim_clock);
	assert_int_equal(l.gap_avg_ns, 7500 - 1875 + 250000);
	assert_true(idle_ladder_sparse(&l));
	/* Sparse: the first idle poll jumps to the announced one, whose
	 * empty poll sleeps; sleeping again after a timeout. */
	assert_false(idle_ladder_sleep_next(&l));
	assert_int_equal(idle_ladder_idle(&l, sim_clock), IDLE_SPIN);
	assert_true(idle_ladder_sleep_next(&l));
	assert_int_equal(idle_ladder_idle(&l, sim_clock), IDLE_SLEEP);
	assert_int_equal(idle_ladder_idle(&l, sim_clock), IDLE_SLEEP);
	assert_true(idle_ladder_sleep_next(&l));
}

/* A ladder that counts polls (spin_ns 0: the tests' pools) never reads
 * the clock or adapts: spin_polls spins, yield_polls yields, then sleeps,
 * the same after any gaps. */
static void test_counting_ladder(void **state)
{
	(void)state;
	struct idle_ladder l;
	idle_ladder_init(&l, 3, 0, 2);
	for (int round = 0; round < 3; round++) {
		for (int i = 0; i < 3; i++) {
			assert_false(idle_ladder_sleep_next(&l));
			assert_int_equal(idle_ladder_idle(&l, no_clock), IDLE_SPIN);
		}
		for (int i = 0; i < 2; i++)
			assert_int_equal(idle_ladder_idle(&l, no_clock), IDLE_YIELD);
		assert_true(idle_ladder_sleep_next(&l));
		assert_int_equal(idle_ladder_idle(&l, no_clock), IDLE_SLEEP);
		assert_int_equal(idle_ladder_idle(&l, no_clock), IDLE_SLEEP);
		idle_ladder_work(&l, 1, no_clock);
		assert_false(idle_ladder_sparse(&l));
	}
	/* spin_polls 0 is taken as 1. */
	idle_ladder_init(&l, 0, 0, 0);
	assert_int_equal(idle_ladder_idle(&l, no_clock), IDLE_SPIN);
	assert_int_equal(idle_ladder_idle(&l, no_clock), IDLE_SLEEP);
}

/* A new spin (the pool's, where futex_waitv turns out missing): kept
 * average, the new length decides; a counting ladder stays one. */
static void test_set_spin(void **state)
{
	(void)state;
	struct idle_ladder l;
	timed_ladder(&l);
	struct sim_counts c = {0};
	sim_every(&l, 20, 500000, &c);
	assert_true(idle_ladder_sparse(&l));
	uint64_t avg = l.gap_avg_ns;
	idle_ladder_set_spin(&l, 2000000);
	assert_int_equal(l.gap_avg_ns, avg);
	assert_false(idle_ladder_sparse(&l));
	struct sim_counts d = {0};
	sim_every(&l, 20, 500000, &d);
	assert_int_equal(d.sleeps, 0);
	assert_int_equal(d.yields, 0);
	idle_ladder_set_spin(&l, 0);
	assert_int_equal(l.spin_ns, 2000000);
	idle_ladder_init(&l, 3, 0, 2);
	idle_ladder_set_spin(&l, 50000);
	assert_int_equal(l.spin_ns, 0);
}

/* Mixed gaps from a fixed generator: whatever the pattern, every sleep is
 * announced (asserted in sim_run) and every arrival found. */
static void test_mixed_gaps(void **state)
{
	(void)state;
	struct idle_ladder l;
	timed_ladder(&l);
	enum { N = 5000 };
	uint64_t *a = test_malloc(N * sizeof(*a));
	uint64_t x = 0x9e3779b97f4a7c15u, t = sim_time;
	for (size_t i = 0; i < N; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		/* 0.1 us to 1 ms, log-spread. */
		t += (uint64_t)100u << (x % 14u);
		a[i] = t;
	}
	struct sim_counts c = {0};
	sim_run(&l, a, N, &c);
	test_free(a);
	assert_true(c.busy >= 1);
	assert_true(c.sleeps > 0);
	assert_true(c.yields > 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sparse_sleeps_at_once),
		cmocka_unit_test(test_dense_never_sleeps),
		cmocka_unit_test(test_back_to_back_reads_no_clock),
		cmocka_unit_test(test_back_to_spinning),
		cmocka_unit_test(test_slow_wakeups_dense_stream),
		cmocka_unit_test(test_gap_average),
		cmocka_unit_test(test_counting_ladder),
		cmocka_unit_test(test_set_spin),
		cmocka_unit_test(test_mixed_gaps),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
