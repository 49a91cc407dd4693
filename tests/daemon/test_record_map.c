/* unit.record_map: the shard watch's map of records by cookie
 * (daemon/record_map.c) against a plain model (an array of the live
 * entries) on seeded random puts, replaces and deletes, with cookies
 * chosen to share a few home slots of a small table (long runs, runs that
 * wrap past its end): after every step each model entry is found with its
 * id and shard, a cookie not in the model is not found, and the count
 * agrees. A deletion that broke a run (no backward shift) loses an entry
 * behind the hole: the find fails. Controls: cookie 0 refused, a put past
 * max refused (-ENOSPC) while a replace still succeeds, a walk by index
 * deleting every entry (as the watch's list frees records) leaves none. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <cmocka.h>

#include "daemon/record_map_internal.h"

#define MAX 24

struct model_entry {
	uint64_t cookie, id, shard;
};

static uint64_t rng = 0x9e3779b97f4a7c15ull;

static uint64_t next(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

static void check(const struct record_map *m, const struct model_entry *model, size_t n)
{
	assert_int_equal(m->n, n);
	for (size_t i = 0; i < n; i++) {
		const struct record_entry *e = record_map_find(m, model[i].cookie);
		if (e == NULL)
			fail_msg("cookie %#llx lost", (unsigned long long)model[i].cookie);
		assert_int_equal(e->id, model[i].id);
		assert_int_equal(e->shard, model[i].shard);
	}
}

static void random_against_model(void **state)
{
	(void)state;
	struct record_map m;
	assert_int_equal(record_map_init(&m, MAX), 0);
	assert_int_equal(m.cap, 64);
	struct model_entry model[MAX];
	size_t n = 0;
	for (int step = 0; step < 200000; step++) {
		/* Homes 60..63 and 0..3 only: runs that wrap. */
		uint64_t home = (next() % 8 + 60) % 64;
		uint64_t cookie = ((next() % 6 + 1) << 6) | home;
		size_t at = n;
		for (size_t i = 0; i < n; i++)
			if (model[i].cookie == cookie)
				at = i;
		if (next() % 3 == 0) {
			struct record_entry *e = record_map_find(&m, cookie);
			assert_true((e != NULL) == (at < n));
			if (e != NULL) {
				record_map_del(&m, e);
				model[at] = model[--n];
			}
		} else {
			uint64_t id = next(), shard = next();
			int rc = record_map_put(&m, cookie, id, shard);
			if (at == n && n == MAX) {
				assert_int_equal(rc, -ENOSPC);
			} else {
				assert_int_equal(rc, 0);
				model[at] = (struct model_entry){cookie, id, shard};
				n += at == n;
			}
		}
		check(&m, model, n);
		uint64_t absent = ((next() % 6 + 7) << 6) | home;
		assert_null(record_map_find(&m, absent));
	}
	record_map_free(&m);
}

static void controls(void **state)
{
	(void)state;
	struct record_map m;
	assert_int_equal(record_map_init(&m, 3), 0);
	assert_int_equal(record_map_put(&m, 0, 1, 1), -EINVAL);
	assert_null(record_map_find(&m, 0));
	for (uint64_t c = 1; c <= 3; c++)
		assert_int_equal(record_map_put(&m, c * 16, c, c), 0); /* one home: a run */
	assert_int_equal(record_map_put(&m, 64, 4, 4), -ENOSPC);
	assert_int_equal(record_map_put(&m, 32, 9, 9), 0); /* a replace */
	assert_int_equal(record_map_find(&m, 32)->id, 9);
	/* A walk by index deleting every entry, looking again where one
	 * was deleted. */
	for (size_t i = 0; i < m.cap;) {
		if (m.e[i].cookie == 0) {
			i++;
			continue;
		}
		record_map_del(&m, &m.e[i]);
	}
	assert_int_equal(m.n, 0);
	for (size_t i = 0; i < m.cap; i++)
		assert_int_equal(m.e[i].cookie, 0);
	record_map_clear(&m);
	assert_int_equal(record_map_put(&m, 5, 5, 5), 0);
	record_map_clear(&m);
	assert_null(record_map_find(&m, 5));
	record_map_free(&m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(random_against_model),
		cmocka_unit_test(controls),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
