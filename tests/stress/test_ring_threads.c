/* stress.ring_threads_dpdk and stress.ring_threads_fake: several ring pairs
 * in one region-backed process, each with a driver thread and an echo
 * thread, with ring sizes and bursts that keep rings hitting full and empty.
 * Every handle is checked; ThreadSanitizer builds run it to check the
 * orderings of the ring implementation itself. */
#include <inttypes.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <cmocka.h>

#include "bench/ring_echo.h"

struct lane {
	unsigned slots;
	unsigned burst;
	struct ring_echo_pair pair;
	struct ring_echo_result res;
	uint64_t count;
};

static void *drive(void *arg)
{
	struct lane *l = arg;
	ring_echo_drive(l->pair.to_server, l->pair.to_driver, l->count, l->burst,
			&l->res);
	return NULL;
}

static void *serve(void *arg)
{
	struct lane *l = arg;
	ring_echo_serve(l->pair.to_server, l->pair.to_driver, l->count, l->burst);
	return NULL;
}

static void test_lanes(void **state)
{
	(void)state;
	uint64_t count = 500000;
	const char *n = getenv("SHMSCHED_STRESS_THREAD_HANDLES");
	if (n != NULL && *n != '\0')
		count = strtoull(n, NULL, 10);
	struct lane lanes[] = {
		{.slots = 2, .burst = 1},   /* capacity 1: full/empty on every handle */
		{.slots = 16, .burst = 7},  /* bursts larger than half the ring */
		{.slots = 64, .burst = 256},/* bursts larger than the ring */
		{.slots = 1024, .burst = 32},
	};
	enum { LANES = sizeof(lanes) / sizeof(lanes[0]) };
	pthread_t d[LANES], s[LANES];
	for (unsigned i = 0; i < LANES; i++) {
		lanes[i].count = count;
		assert_int_equal(ring_echo_pair_create(lanes[i].slots, 0,
						       &lanes[i].pair), 0);
	}
	for (unsigned i = 0; i < LANES; i++) {
		assert_int_equal(pthread_create(&s[i], NULL, serve, &lanes[i]), 0);
		assert_int_equal(pthread_create(&d[i], NULL, drive, &lanes[i]), 0);
	}
	for (unsigned i = 0; i < LANES; i++) {
		pthread_join(d[i], NULL);
		pthread_join(s[i], NULL);
	}
	for (unsigned i = 0; i < LANES; i++) {
		struct ring_echo_result *r = &lanes[i].res;
		print_message("%s lane %u (%u slots, burst %u): %" PRIu64
			      " handles, %" PRIu64 " mismatches\n",
			      ring_impl_name(), i, lanes[i].slots, lanes[i].burst,
			      r->received, r->mismatches);
		assert_int_equal(r->received, count);
		assert_int_equal(r->mismatches, 0);
		assert_int_equal(r->checksum, r->peer_checksum);
		assert_true(r->ok);
		ring_echo_pair_close(&lanes[i].pair);
	}
}

int main(void)
{
	setenv("SHMSCHED_LOG", "warn", 0);
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_lanes),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
