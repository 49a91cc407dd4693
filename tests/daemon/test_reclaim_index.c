/* unit.daemon_reclaim_index: the reclaim index (daemon/reclaim_index.c,
 * RX1 in daemon/quota_charge.c) against a plain model, an array of each
 * record's bucket, on seeded random adds, moves, removes and clears:
 * after every step each bucket's chain holds exactly the records the
 * model puts there, each once, its links consistent both ways. The
 * evictor's candidates are read from these chains (the buckets its
 * request may take), so a record lost or left behind here is a
 * candidate lost or a freed record read.
 *
 * RO2: each record's key (priority, admission time, uid) kept with it;
 * each bucket's count, and its disorder (rix_ordered) equal to the
 * adjacent pairs of its chain out of RCL2's order (quota/reclaim.c:
 * lower priority, then more recently admitted, then the smaller uid;
 * kueue pkg/scheduler/preemption/common/ordering.go CandidatesOrdering
 * within one ClusterQueue), checked against the model after every
 * step; adds of the most recently admitted, as placements come, keep
 * every bucket in order; adds of any key, a chain in order after a
 * sort of its keys whenever rix_ordered says so.
 *
 * Controls: out-of-range records and buckets change nothing; a record
 * added twice is in its bucket once; rix_clear empties every bucket.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "daemon/reclaim_index_internal.h"

#define CAP 512
#define BUCKETS 24

static uint64_t rng = 0x9e3779b97f4a7c15u;
static uint32_t rnd(uint32_t n)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (uint32_t)(rng % n);
}

static struct rix_key keys[CAP]; /* the model's key of each record */
static unsigned ordered_seen;    /* buckets of 2+ records in order */

/* Each bucket's chain against `model` (RIX_NIL: in none) and `keys`. */
static void check(const struct reclaim_index *ix, const uint32_t *model)
{
	static uint8_t seen[CAP];
	memset(seen, 0, sizeof(seen));
	for (uint32_t b = 0; b < BUCKETS; b++) {
		uint32_t n = 0, last = RIX_NIL, out_of_order = 0;
		for (uint32_t r = rix_first(ix, b); r != RIX_NIL; r = rix_next(ix, r)) {
			assert_true(r < CAP);
			assert_int_equal(model[r], b);
			assert_int_equal(seen[r], 0); /* each once */
			assert_int_equal(rix_bucket_of(ix, r), b);
			const struct rix_key *k = rix_key_of(ix, r);
			assert_int_equal(k->priority, keys[r].priority);
			assert_int_equal(k->admitted_ns, keys[r].admitted_ns);
			assert_int_equal(k->uid, keys[r].uid);
			if (last != RIX_NIL)
				out_of_order += rix_key_before(&keys[r], &keys[last]);
			seen[r] = 1;
			last = r;
			assert_true(++n <= CAP); /* no cycle */
		}
		assert_int_equal(rix_count(ix, b), n);
		/* RO2: in order exactly when it says so. */
		assert_int_equal(rix_ordered(ix, b), out_of_order == 0);
		ordered_seen += n >= 2 && out_of_order == 0;
	}
	for (uint32_t r = 0; r < CAP; r++) {
		assert_int_equal(seen[r], model[r] != RIX_NIL);
		if (model[r] == RIX_NIL)
			assert_int_equal(rix_bucket_of(ix, r), RIX_NIL);
	}
}

static void test_random_against_model(void **state)
{
	(void)state;
	struct reclaim_index *ix = rix_create(CAP, BUCKETS);
	assert_non_null(ix);
	static uint32_t model[CAP];
	for (uint32_t r = 0; r < CAP; r++)
		model[r] = RIX_NIL;
	check(ix, model);
	unsigned adds = 0, removes = 0, moves = 0;
	uint64_t uid = 0;
	ordered_seen = 0;
	for (int step = 0; step < 100000; step++) {
		uint32_t r = rnd(CAP), op = rnd(100);
		rix_lock(ix);
		if (op < 55) {
			uint32_t b = rnd(BUCKETS);
			moves += model[r] != RIX_NIL && model[r] != b;
			/* Keys of 3 priorities, times that repeat: every
			 * tie-break is taken. */
			keys[r] = (struct rix_key){.priority = (int32_t)rnd(3),
						   .admitted_ns = rnd(64),
						   .uid = ++uid};
			rix_add(ix, r, b, &keys[r]);
			model[r] = b;
			adds++;
		} else if (op < 99) {
			removes += model[r] != RIX_NIL;
			rix_remove(ix, r);
			model[r] = RIX_NIL;
		} else if (rnd(20) == 0) {
			rix_clear(ix);
			for (uint32_t i = 0; i < CAP; i++)
				model[i] = RIX_NIL;
		}
		rix_unlock(ix);
		if (step % 97 == 0 || step > 99000)
			check(ix, model);
	}
	check(ix, model);
	assert_true(adds > 10000 && removes > 10000 && moves > 1000);
	assert_true(ordered_seen > 100); /* not vacuous */
	rix_destroy(ix);
}

/* RO2: placements come most recently admitted last, of one priority or
 * of a few: every bucket stays in order, whatever leaves it; each chain
 * is its records sorted by key. */
static void test_placements_stay_ordered(void **state)
{
	(void)state;
	struct reclaim_index *ix = rix_create(CAP, BUCKETS);
	assert_non_null(ix);
	static uint32_t model[CAP];
	for (uint32_t r = 0; r < CAP; r++)
		model[r] = RIX_NIL;
	uint64_t clock = 0, uid = 0;
	for (int step = 0; step < 50000; step++) {
		uint32_t r = rnd(CAP);
		rix_lock(ix);
		if (rnd(100) < 55) {
			uint32_t b = rnd(BUCKETS);
			/* Buckets 0-11: one priority; the others: two, the
			 * higher ones rarer (an add of one walks past the
			 * lower ones: past 16 of them its bucket is out of
			 * order until they leave, as check() finds). */
			int32_t prio = b < 12 ? 0 : (rnd(40) == 0 ? 5 : 1);
			keys[r] = (struct rix_key){.priority = prio,
						   .admitted_ns = ++clock,
						   .uid = ++uid};
			rix_add(ix, r, b, &keys[r]);
			model[r] = b;
		} else {
			rix_remove(ix, r);
			model[r] = RIX_NIL;
		}
		rix_unlock(ix);
		for (uint32_t b = 0; b < 12; b++)
			assert_true(rix_ordered(ix, b));
		if (step % 101 == 0)
			check(ix, model);
	}
	check(ix, model);
	rix_destroy(ix);
}

static void test_controls(void **state)
{
	(void)state;
	assert_null(rix_create(0, 1));
	assert_int_equal(errno, EINVAL);
	assert_null(rix_create(1, 0));
	struct reclaim_index *ix = rix_create(4, 2);
	assert_non_null(ix);
	struct rix_key k1 = {.priority = 0, .admitted_ns = 1, .uid = 1};
	struct rix_key k3 = {.priority = 0, .admitted_ns = 3, .uid = 3};
	rix_add(ix, 4, 0, &k1);  /* out of range: nothing */
	rix_add(ix, 0, 2, &k1);  /* out of range: nothing */
	rix_remove(ix, 9);
	assert_int_equal(rix_first(ix, 0), RIX_NIL);
	assert_int_equal(rix_first(ix, 1), RIX_NIL);
	assert_int_equal(rix_first(ix, 7), RIX_NIL);
	assert_int_equal(rix_bucket_of(ix, 0), RIX_NIL);
	rix_add(ix, 1, 1, &k1);
	rix_add(ix, 1, 1, &k1); /* twice: once */
	assert_int_equal(rix_count(ix, 1), 1);
	rix_add(ix, 3, 1, &k3);
	assert_int_equal(rix_first(ix, 1), 3); /* the most recently admitted first */
	assert_int_equal(rix_next(ix, 3), 1);
	assert_int_equal(rix_next(ix, 1), RIX_NIL);
	assert_true(rix_ordered(ix, 1));
	rix_clear(ix);
	assert_int_equal(rix_count(ix, 1), 0);
	assert_int_equal(rix_first(ix, 1), RIX_NIL);
	assert_int_equal(rix_bucket_of(ix, 3), RIX_NIL);
	rix_add(ix, 3, 0, &k3); /* usable after a clear */
	assert_int_equal(rix_first(ix, 0), 3);
	assert_int_equal(rix_next(ix, 3), RIX_NIL);
	rix_destroy(ix);
	rix_destroy(NULL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_random_against_model),
		cmocka_unit_test(test_placements_stay_ordered),
		cmocka_unit_test(test_controls),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
