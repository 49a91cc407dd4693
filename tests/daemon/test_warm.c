/* The warmer (daemon/warm.c): the table's first WARM_AHEAD records are
 * backed when warm_start() returns, before any worker runs; as the table
 * grows, the next ones follow; nothing far past them is backed; records
 * written meanwhile keep their bytes; warm_stop() joins. Residency is read
 * with mincore. */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "daemon/warm_internal.h"
#include "shm/shm.h"

static bool resident(const void *p)
{
	uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
	unsigned char v = 0;
	assert_int_equal(mincore((void *)((uintptr_t)p & ~(page - 1)), 1, &v), 0);
	return v & 1;
}

static void sleep_ms(unsigned ms)
{
	struct timespec ts = {.tv_sec = ms / 1000, .tv_nsec = (long)(ms % 1000) * 1000000};
	nanosleep(&ts, NULL);
}

static void test_warmer(void **state)
{
	(void)state;
	/* FAR records (over 4 MB) past what the warmer keeps backed: two huge
	 * pages away, should the kernel back this memory with them. */
	enum { CAP = 200000, GROWN = 30000, FAR = 14000 };
	struct placements *t = placements_create(CAP);
	assert_non_null(t);
	struct pod_spec pod;
	memset(&pod, 0, sizeof(pod)); /* what the records hold is not read here */
	assert_int_equal(placements_take(t), 0);
	uint64_t id = placements_fill(t, 0, 1, 5, 1, &pod, NULL, 42);
	const struct placement_record *recs = placements_get(t, id);
	assert_non_null(recs);
	if (placements_populate_ahead(t, 1) == 0) {
		print_message("warmer: MADV_POPULATE_WRITE refused by this kernel "
			      "(before Linux 5.14): nothing to check\n");
		placements_destroy(t);
		return;
	}
	assert_false(resident(&recs[WARM_AHEAD + FAR]));
	struct warmer *w = warm_start(t);
	assert_non_null(w);
	/* Backed before warm_start() returned, not by the thread later. */
	assert_true(resident(&recs[WARM_AHEAD - 1]));
	assert_false(resident(&recs[WARM_AHEAD + FAR]));
	/* The table grows: the warmer follows within its sleeps. */
	for (int i = 1; i < GROWN; i++)
		placements_fill(t, (uint32_t)placements_take(t), 1, 5, 1, &pod, NULL, 7);
	bool followed = false;
	for (int i = 0; i < 2000 && !followed; i++) {
		followed = resident(&recs[GROWN + WARM_AHEAD - 1]);
		if (!followed)
			sleep_ms(1);
	}
	assert_true(followed);
	assert_false(resident(&recs[GROWN + WARM_AHEAD + FAR]));
	warm_stop(w);
	assert_int_equal(placements_get(t, id)->cookie, 42);
	assert_int_equal(recs[GROWN - 1].cookie, 7);
	warm_stop(NULL); /* a no-op */
	placements_destroy(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_warmer),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
