/* stress.placements: worker threads take and fill placement records while
 * one releasing thread frees them, as the daemon's workers and control
 * thread do, on a table small enough that the free stack runs dry.
 *
 * Invariants, each a count that must read zero:
 * - owned twice: a record handed to a taker while another taker held it
 *   (each index carries a holder flag, set by compare-and-swap);
 * - lost: at the end, records neither free nor held (the table must give
 *   back all of its capacity);
 * - wrong record: a live id whose record does not hold what its filler
 *   wrote.
 * And the race happened: takers found the table full (ENOSPC) at times.
 * Run twice: the plain take and fill, then through the takers' caches
 * (placements_set_workers: PC1, PC2, PL1), which hoard and steal records of
 * a table this small, and whose live figures must sum to 0 at the end.
 * ThreadSanitizer builds run it too. */
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "base/base.h"
#include "shm/shm.h"

#define CAPACITY 64u
#define TAKERS 3
#define PER_TAKER 200000u

static struct placements *table;
static uint32_t holder[CAPACITY]; /* __atomic: 0 free, else taker id + 1 */
static uint64_t owned_twice, wrong_record, full; /* __atomic, relaxed */
/* Ids for the releaser: a ring per taker (SPSC), __atomic head/tail. */
#define RING 1024u
static uint64_t ring[TAKERS][RING];
static uint32_t ring_head[TAKERS], ring_tail[TAKERS];
static int takers_done; /* __atomic */
/* The second run's: the takers through their caches (PC1, PC2, PL1), each
 * giving back every 7th record it takes untouched. */
static bool cached;

static void *taker(void *arg)
{
	unsigned me = (unsigned)(uintptr_t)arg;
	struct pod_spec pod;
	memset(&pod, 0, sizeof(pod));
	for (uint32_t n = 0; n < PER_TAKER;) {
		int64_t ix = cached ? placements_take_w(table, me) : placements_take(table);
		if (ix >= 0 && cached && n % 7 == 3) {
			placements_untake_w(table, me, (uint32_t)ix);
			ix = placements_take_w(table, me);
		}
		if (ix < 0) {
			__atomic_fetch_add(&full, 1, __ATOMIC_RELAXED);
			continue;
		}
		uint32_t expected = 0;
		if (!__atomic_compare_exchange_n(&holder[ix], &expected, me + 1, false,
						 __ATOMIC_ACQ_REL, __ATOMIC_RELAXED))
			__atomic_fetch_add(&owned_twice, 1, __ATOMIC_RELAXED);
		pod.request.v[RES_CPU] = (int64_t)(me * PER_TAKER + n);
		uint64_t id;
		if (cached) {
			placements_prepare(table, (uint32_t)ix, (uint32_t)ix, me, &pod,
					   NULL, 0, &id);
			placements_publish_w(table, me, (uint32_t)ix, me + 1);
		} else {
			id = placements_fill(table, (uint32_t)ix, me + 1, (uint32_t)ix,
					     me, &pod, NULL, 0);
		}
		/* Hand the id to the releaser; wait while its ring is full. */
		uint32_t t = __atomic_load_n(&ring_tail[me], __ATOMIC_RELAXED);
		while (t - __atomic_load_n(&ring_head[me], __ATOMIC_ACQUIRE) >= RING)
			;
		ring[me][t % RING] = id;
		__atomic_store_n(&ring_tail[me], t + 1, __ATOMIC_RELEASE);
		n++;
	}
	__atomic_fetch_add(&takers_done, 1, __ATOMIC_RELEASE);
	return NULL;
}

static void *releaser(void *arg)
{
	(void)arg;
	for (;;) {
		bool all_done = __atomic_load_n(&takers_done, __ATOMIC_ACQUIRE) == TAKERS;
		unsigned moved = 0;
		for (unsigned k = 0; k < TAKERS; k++) {
			uint32_t h = __atomic_load_n(&ring_head[k], __ATOMIC_RELAXED);
			uint32_t t = __atomic_load_n(&ring_tail[k], __ATOMIC_ACQUIRE);
			for (; h != t; h++, moved++) {
				uint64_t id = ring[k][h % RING];
				const struct placement_record *r = placements_get(table, id);
				uint32_t ix = (uint32_t)id;
				if (r == NULL || r->owner != k + 1 || r->slot != ix ||
				    r->node_gen != k ||
				    r->request.v[RES_CPU] / PER_TAKER != (int64_t)k)
					__atomic_fetch_add(&wrong_record, 1, __ATOMIC_RELAXED);
				/* Before the free: the next taker may get it at once. */
				__atomic_store_n(&holder[ix], 0, __ATOMIC_RELEASE);
				placements_free(table, id);
			}
			__atomic_store_n(&ring_head[k], h, __ATOMIC_RELEASE);
		}
		if (all_done && moved == 0)
			return NULL;
	}
}

static void take_fill_free_race(void)
{
	table = placements_create(CAPACITY);
	assert_non_null(table);
	if (cached)
		assert_int_equal(placements_set_workers(table, TAKERS), 0);
	full = owned_twice = wrong_record = 0;
	takers_done = 0;
	memset(holder, 0, sizeof(holder));
	memset(ring_head, 0, sizeof(ring_head));
	memset(ring_tail, 0, sizeof(ring_tail));
	pthread_t th[TAKERS], rel;
	assert_int_equal(pthread_create(&rel, NULL, releaser, NULL), 0);
	for (unsigned i = 0; i < TAKERS; i++)
		assert_int_equal(pthread_create(&th[i], NULL, taker,
						(void *)(uintptr_t)i), 0);
	for (unsigned i = 0; i < TAKERS; i++)
		pthread_join(th[i], NULL);
	pthread_join(rel, NULL);
	/* Everything came back: the whole capacity can be taken again. */
	assert_int_equal(placements_live(table), 0); /* PL1: the figures sum */
	uint64_t lost = 0;
	for (uint32_t i = 0; i < CAPACITY; i++) /* PC2: worker 0 steals */
		lost += (cached ? placements_take_w(table, 0) : placements_take(table)) < 0;
	print_message("placements%s: %u taken and freed by %d takers, %llu times "
		      "full; owned twice %llu, wrong %llu, lost %llu\n",
		      cached ? " (worker caches)" : "", TAKERS * PER_TAKER, TAKERS,
		      (unsigned long long)full, (unsigned long long)owned_twice,
		      (unsigned long long)wrong_record, (unsigned long long)lost);
	assert_int_equal(owned_twice, 0);
	assert_int_equal(wrong_record, 0);
	assert_int_equal(lost, 0);
	assert_int_equal(cached ? placements_take_w(table, 1) : placements_take(table),
			 -ENOSPC);
	assert_true(full > 0); /* the table really ran dry */
	placements_destroy(table);
}

static void test_take_fill_free_race(void **state)
{
	(void)state;
	cached = false;
	take_fill_free_race();
}

static void test_take_fill_free_race_cached(void **state)
{
	(void)state;
	cached = true;
	take_fill_free_race();
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_take_fill_free_race),
		cmocka_unit_test(test_take_fill_free_race_cached),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
