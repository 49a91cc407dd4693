/* unit.evict_bell: the evictor's doorbell (daemon/evict_bell.c, ER1-ER6).
 * Stepped by hand: a ring to an awake consumer makes no system call
 * (counted avoided); a ring between the consumer's look and its prepare
 * stops the sleep; a ring after the prepare wakes it (counted), and the
 * wait returns at once; a mark taken by a ring whose wake came before the
 * wait was queued fails the wait's compare. Then threads: ringers push to a ring of their own
 * and ring while the consumer sleeps with a 3 s timeout; every item is
 * served, no wait ran into its timeout (a lost wake-up would), the counts
 * add up to the rings, and no more wakes than the consumer's marks. */
#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <time.h>
#include <cmocka.h>

#include "daemon/evict_bell_internal.h"

static uint64_t mono_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void counts(const struct evict_bell *b, uint64_t wakes, uint64_t avoided)
{
	uint64_t w, a;
	evict_bell_counts(b, &w, &a);
	assert_int_equal(w, wakes);
	assert_int_equal(a, avoided);
}

/* The consumer busy: rings make no FUTEX_WAKE; its next look sees them. */
static void test_awake_no_wake(void **state)
{
	(void)state;
	static struct evict_bell b;
	uint32_t seen = evict_bell_seen(&b);
	for (int i = 0; i < 5; i++)
		evict_bell_ring(&b);
	counts(&b, 0, 5);
	/* Work came since `seen`: prepare says look again. */
	assert_false(evict_bell_prepare(&b, seen));
	evict_bell_awake(&b);
	assert_int_equal(evict_bell_seen(&b), seen + 5);
}

/* A ring between the look (seen) and the prepare: found awake (no wake),
 * and the prepare refuses the sleep: the request is served next turn. */
static void test_ring_before_prepare(void **state)
{
	(void)state;
	static struct evict_bell b;
	uint32_t seen = evict_bell_seen(&b);
	/* ... the consumer's look finds nothing; now a ringer: */
	evict_bell_ring(&b);
	counts(&b, 0, 1);
	assert_false(evict_bell_prepare(&b, seen));
	evict_bell_awake(&b);
}

/* Rings after the prepare: the first sees the consumer asleep and wakes
 * it, the second finds it woken already (no second system call); the
 * wait compares against `seen` and returns at once (no 10 s). */
static void test_ring_after_prepare(void **state)
{
	(void)state;
	static struct evict_bell b;
	uint32_t seen = evict_bell_seen(&b);
	assert_true(evict_bell_prepare(&b, seen));
	evict_bell_ring(&b);
	counts(&b, 1, 0);
	evict_bell_ring(&b);
	counts(&b, 1, 1);
	uint64_t t0 = mono_ns();
	evict_bell_wait(&b, 10L * 1000000000L);
	assert_true(mono_ns() - t0 < UINT64_C(5) * 1000000000u);
	evict_bell_awake(&b);
	/* Awake again: the next ring makes no system call. */
	evict_bell_ring(&b);
	counts(&b, 1, 2);
}

/* The lost wake-up TSan's slow threads found: ring 1's add comes before
 * the consumer's look (its work found), its exchange after the prepare:
 * it takes the mark, and its FUTEX_WAKE comes before the consumer's wait
 * is queued (here: made to no one). Ring 2 comes 50 ms into the wait and
 * finds the mark taken: no wake. A wait on kick against `seen` (ring 1's
 * add in it) sleeps to its 2 s timeout with ring 2's work pending; on the
 * mark it returns at once (the mark is 0). */
static struct evict_bell late_bell;

static void *late_ring(void *arg)
{
	(void)arg;
	struct timespec ts = {0, 50 * 1000000L};
	nanosleep(&ts, NULL);
	evict_bell_ring(&late_bell);
	return NULL;
}

static void test_mark_taken_before_wait(void **state)
{
	(void)state;
	struct evict_bell *b = &late_bell;
	__atomic_fetch_add(&b->kick, 1, __ATOMIC_SEQ_CST); /* ring 1's ER1 */
	uint32_t seen = evict_bell_seen(b);
	assert_true(evict_bell_prepare(b, seen));
	/* Ring 1's ER2, its wake made before the wait. */
	assert_int_equal(__atomic_exchange_n(&b->sleeping, 0, __ATOMIC_SEQ_CST), 1);
	pthread_t t;
	assert_int_equal(pthread_create(&t, NULL, late_ring, NULL), 0);
	uint64_t t0 = mono_ns();
	evict_bell_wait(b, 2L * 1000000000L);
	uint64_t waited = mono_ns() - t0;
	assert_int_equal(pthread_join(t, NULL), 0);
	evict_bell_awake(b);
	if (waited >= UINT64_C(1500) * 1000000u)
		fail_msg("the wait ran %llu ms into its timeout: ring 2 was lost",
			 (unsigned long long)(waited / 1000000u));
	counts(b, 0, 1); /* ring 2 found the mark taken */
}

/* Threads: RINGERS push ITEMS each (a counter of their own, released)
 * and ring, pausing now and then so that the consumer goes to sleep. */
#define RINGERS 3
#define ITEMS 20000

static struct {
	struct evict_bell bell;
	uint64_t pushed[RINGERS]; /* each ringer's, release; consumer acquires */
	uint64_t served;
	uint64_t prepared, slept;
} T;

static void *ringer(void *arg)
{
	unsigned k = (unsigned)(uintptr_t)arg;
	uint64_t rng = k + 1;
	for (uint64_t i = 1; i <= ITEMS; i++) {
		__atomic_store_n(&T.pushed[k], i, __ATOMIC_RELEASE);
		evict_bell_ring(&T.bell);
		rng = rng * 6364136223846793005u + 1442695040888963407u;
		if ((rng >> 33) % 64 == 0) {
			struct timespec ts = {0, (long)((rng >> 40) % 200000)};
			nanosleep(&ts, NULL);
		}
	}
	return NULL;
}

static void test_threads_no_lost_wakeup(void **state)
{
	(void)state;
	pthread_t t[RINGERS];
	for (unsigned k = 0; k < RINGERS; k++)
		assert_int_equal(pthread_create(&t[k], NULL, ringer, (void *)(uintptr_t)k), 0);
	uint64_t taken[RINGERS] = {0};
	while (T.served < (uint64_t)RINGERS * ITEMS) {
		uint32_t seen = evict_bell_seen(&T.bell);
		bool any = false;
		for (unsigned k = 0; k < RINGERS; k++) {
			uint64_t p = __atomic_load_n(&T.pushed[k], __ATOMIC_ACQUIRE);
			if (p != taken[k]) {
				T.served += p - taken[k];
				taken[k] = p;
				any = true;
			}
		}
		if (any)
			continue;
		T.prepared++;
		if (evict_bell_prepare(&T.bell, seen)) {
			uint64_t t0 = mono_ns();
			evict_bell_wait(&T.bell, 3L * 1000000000L);
			T.slept++;
			/* A lost wake-up sleeps to the timeout (ringers pause
			 * for 200 us at most): fail at the first. */
			if (mono_ns() - t0 >= UINT64_C(2900) * 1000000u)
				fail_msg("a wait ran into its timeout after %llu "
					 "served: a lost wake-up",
					 (unsigned long long)T.served);
		}
		evict_bell_awake(&T.bell);
	}
	for (unsigned k = 0; k < RINGERS; k++)
		assert_int_equal(pthread_join(t[k], NULL), 0);
	uint64_t wakes, avoided;
	evict_bell_counts(&T.bell, &wakes, &avoided);
	print_message("slept %llu, rings: %llu woke it, %llu found it awake\n",
		      (unsigned long long)T.slept, (unsigned long long)wakes,
		      (unsigned long long)avoided);
	assert_int_equal(T.served, (uint64_t)RINGERS * ITEMS);
	assert_int_equal(wakes + avoided, (uint64_t)RINGERS * ITEMS);
	assert_true(avoided > 0); /* the consumer was found busy */
	assert_true(T.slept > 0); /* and it slept: the sleep path ran */
	assert_true(wakes <= T.prepared); /* one wake at most a mark */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_awake_no_wake),
		cmocka_unit_test(test_ring_before_prepare),
		cmocka_unit_test(test_ring_after_prepare),
		cmocka_unit_test(test_mark_taken_before_wait),
		cmocka_unit_test(test_threads_no_lost_wakeup),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
