/* unit.answer_bell: the answer doorbell (shm/answer_bell.c, AB1-AB6).
 * Stepped by hand: a ring to an awake producer takes nothing and makes no
 * system call; a ring between the mark and the look is seen by the look
 * (the caller does not sleep), and takes the mark; a ring after the mark
 * wakes (once: the next ring finds the mark taken), and a wait on the
 * taken mark returns at once (the kernel's compare reads 0), also when
 * the ring's FUTEX_WAKE came before the wait and a second ring comes
 * during it (the lost wake-up of daemon/evict_bell.c's ER note). Then
 * threads: two ringers publish answers (counters of their own, released)
 * and ring, pausing now and then, while the sleeper sleeps with a 3 s
 * timeout: every answer is seen, no wait runs into its timeout (a lost
 * wake-up would), and no more wakes than marks. Fails on a ring that
 * takes the mark and makes no FUTEX_WAKE (tried: the threads' first wait
 * runs into its timeout). */
#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <time.h>
#include <cmocka.h>

#include "shm/shm.h"

static uint64_t mono_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* The producer awake (mark 0): rings take nothing, make no wake. */
static void test_awake_no_wake(void **state)
{
	(void)state;
	static uint32_t mark;
	for (int i = 0; i < 5; i++)
		assert_false(answer_bell_ring(&mark));
	assert_int_equal(mark, 0);
}

/* A ring between the mark and the look: it takes the mark (one wake, to
 * no one yet), the look sees its answer, no sleep; a second ring finds the
 * mark taken. */
static void test_ring_before_look(void **state)
{
	(void)state;
	static uint32_t mark;
	static uint32_t answers;
	answer_bell_prepare(&mark);
	__atomic_store_n(&answers, 1, __ATOMIC_RELEASE); /* the daemon's enqueue */
	assert_true(answer_bell_ring(&mark));
	assert_false(answer_bell_ring(&mark));
	/* The look. */
	assert_int_equal(__atomic_load_n(&answers, __ATOMIC_ACQUIRE), 1);
	answer_bell_awake(&mark);
	assert_false(answer_bell_ring(&mark));
}

/* Rings after the look: the first wakes, the wait returns at once (no
 * 10 s), and once awake the next ring makes none. */
static void test_ring_after_look(void **state)
{
	(void)state;
	static uint32_t mark;
	answer_bell_prepare(&mark);
	/* The look found nothing; now the daemon: */
	assert_true(answer_bell_ring(&mark));
	assert_false(answer_bell_ring(&mark));
	uint64_t t0 = mono_ns();
	assert_int_equal(answer_bell_wait(&mark, INT64_C(10000000000)), 0);
	assert_true(mono_ns() - t0 < UINT64_C(5000000000));
	answer_bell_awake(&mark);
	assert_false(answer_bell_ring(&mark));
}

/* No ring: the wait runs to its timeout and says so. */
static void test_timeout(void **state)
{
	(void)state;
	static uint32_t mark;
	answer_bell_prepare(&mark);
	uint64_t t0 = mono_ns();
	assert_int_equal(answer_bell_wait(&mark, 20000000), -ETIMEDOUT);
	assert_true(mono_ns() - t0 >= UINT64_C(15000000));
	answer_bell_awake(&mark);
}

/* The mark taken before the wait: ring 1 takes it and makes its
 * FUTEX_WAKE before the sleeper's wait is queued (to no one); ring 2
 * comes 50 ms into the wait and finds the mark taken, so wakes no one.
 * The wait is on the mark, so its compare reads ring 1's 0 and it returns
 * at once; a wait on anything ring 1 did not change would sleep its 2 s
 * with ring 2's answer there. */
static uint32_t late_mark;

static void *late_ring(void *arg)
{
	(void)arg;
	struct timespec ts = {0, 50 * 1000000L};
	nanosleep(&ts, NULL);
	bool woke = answer_bell_ring(&late_mark);
	return (void *)(uintptr_t)woke;
}

static void test_mark_taken_before_wait(void **state)
{
	(void)state;
	answer_bell_prepare(&late_mark);
	/* The look found nothing; ring 1, all of it before the wait. */
	assert_true(answer_bell_ring(&late_mark));
	pthread_t t;
	assert_int_equal(pthread_create(&t, NULL, late_ring, NULL), 0);
	uint64_t t0 = mono_ns();
	assert_int_equal(answer_bell_wait(&late_mark, INT64_C(2000000000)), 0);
	uint64_t waited = mono_ns() - t0;
	void *woke;
	assert_int_equal(pthread_join(t, &woke), 0);
	answer_bell_awake(&late_mark);
	if (waited >= UINT64_C(1500000000))
		fail_msg("the wait ran %llu ms into its timeout: a lost wake-up",
			 (unsigned long long)(waited / 1000000u));
	/* Ring 2 found the mark taken (or cleared by AB6): no wake. */
	assert_int_equal((uintptr_t)woke, 0);
}

/* Threads: RINGERS publish ANSWERS each and ring, as workers answering
 * one producer do, pausing now and then so that it goes to sleep. */
#define RINGERS 2
#define ANSWERS 20000

static struct {
	uint32_t mark;
	uint64_t pushed[RINGERS]; /* each ringer's, release; sleeper acquires */
	uint64_t wakes[RINGERS];  /* each ringer's own */
	uint64_t prepared, slept;
} T;

static void *ringer(void *arg)
{
	unsigned k = (unsigned)(uintptr_t)arg;
	uint64_t rng = k + 1;
	for (uint64_t i = 1; i <= ANSWERS; i++) {
		__atomic_store_n(&T.pushed[k], i, __ATOMIC_RELEASE);
		T.wakes[k] += answer_bell_ring(&T.mark);
		rng = rng * 6364136223846793005u + 1442695040888963407u;
		if ((rng >> 33) % 64 == 0) {
			struct timespec ts = {0, (long)((rng >> 40) % 200000)};
			nanosleep(&ts, NULL);
		}
	}
	return NULL;
}

static bool look(uint64_t taken[RINGERS], uint64_t *served)
{
	bool any = false;
	for (unsigned k = 0; k < RINGERS; k++) {
		uint64_t p = __atomic_load_n(&T.pushed[k], __ATOMIC_ACQUIRE);
		if (p != taken[k]) {
			*served += p - taken[k];
			taken[k] = p;
			any = true;
		}
	}
	return any;
}

static void test_threads_no_lost_wakeup(void **state)
{
	(void)state;
	pthread_t t[RINGERS];
	for (unsigned k = 0; k < RINGERS; k++)
		assert_int_equal(pthread_create(&t[k], NULL, ringer,
						(void *)(uintptr_t)k), 0);
	uint64_t taken[RINGERS] = {0}, served = 0;
	while (served < (uint64_t)RINGERS * ANSWERS) {
		if (look(taken, &served))
			continue;
		T.prepared++;
		answer_bell_prepare(&T.mark);
		if (!look(taken, &served)) {
			uint64_t t0 = mono_ns();
			int rc = answer_bell_wait(&T.mark, INT64_C(3000000000));
			T.slept++;
			/* Ringers pause 200 us at most: a wait that runs into
			 * its timeout missed a wake. */
			if (rc == -ETIMEDOUT || mono_ns() - t0 >= UINT64_C(2900000000))
				fail_msg("a wait ran into its timeout after %llu "
					 "answers: a lost wake-up",
					 (unsigned long long)served);
		}
		answer_bell_awake(&T.mark);
	}
	for (unsigned k = 0; k < RINGERS; k++)
		assert_int_equal(pthread_join(t[k], NULL), 0);
	uint64_t wakes = 0;
	for (unsigned k = 0; k < RINGERS; k++)
		wakes += T.wakes[k];
	print_message("slept %llu of %llu marks; %llu wakes for %u answers\n",
		      (unsigned long long)T.slept, (unsigned long long)T.prepared,
		      (unsigned long long)wakes, RINGERS * ANSWERS);
	assert_int_equal(served, (uint64_t)RINGERS * ANSWERS);
	assert_true(T.slept > 0);          /* the sleep path ran */
	assert_true(wakes <= T.prepared);  /* one wake at most a mark */
	assert_true(wakes < (uint64_t)RINGERS * ANSWERS); /* rings found it awake */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_awake_no_wake),
		cmocka_unit_test(test_ring_before_look),
		cmocka_unit_test(test_ring_after_look),
		cmocka_unit_test(test_timeout),
		cmocka_unit_test(test_mark_taken_before_wait),
		cmocka_unit_test(test_threads_no_lost_wakeup),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
