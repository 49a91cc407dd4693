/* unit.batch_held: the shard watch's memory of batch keys
 * (daemon/batch_held.c): a key's sorted cookies set, replaced, forgotten;
 * the bound on keys; a swap; the merge helpers a rewrite's diff uses. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "daemon/batch_held_internal.h"

static void set_get_forget(void **state)
{
	(void)state;
	struct batch_held h;
	assert_int_equal(batch_held_init(&h, 2), 0);
	size_t n = 99;
	assert_null(batch_held_get(&h, 7, &n));
	assert_int_equal(n, 0);
	uint64_t a[] = {3, 5, 9};
	assert_int_equal(batch_held_set(&h, 7, a, 3), 0);
	a[0] = 100; /* copied: the caller's array is its own */
	const uint64_t *got = batch_held_get(&h, 7, &n);
	assert_int_equal(n, 3);
	assert_int_equal(got[0], 3);
	assert_int_equal(got[2], 9);
	uint64_t b[] = {5};
	assert_int_equal(batch_held_set(&h, 7, b, 1), 0);
	got = batch_held_get(&h, 7, &n);
	assert_int_equal(n, 1);
	assert_int_equal(got[0], 5);
	/* Two keys at most: a third is refused and stays unknown. */
	assert_int_equal(batch_held_set(&h, 8, b, 1), 0);
	assert_int_equal(batch_held_set(&h, 9, b, 1), -ENOSPC);
	assert_null(batch_held_get(&h, 9, &n));
	assert_int_equal(batch_held_set(&h, 0, b, 1), -EINVAL);
	/* Forgotten with n 0: room for another. */
	assert_int_equal(batch_held_set(&h, 7, NULL, 0), 0);
	assert_null(batch_held_get(&h, 7, &n));
	assert_int_equal(batch_held_set(&h, 9, b, 1), 0);
	struct batch_held other;
	assert_int_equal(batch_held_init(&other, 2), 0);
	batch_held_swap(&h, &other);
	assert_null(batch_held_get(&h, 9, &n));
	assert_non_null(batch_held_get(&other, 9, &n));
	batch_held_clear(&other);
	assert_null(batch_held_get(&other, 9, &n));
	batch_held_free(&h);
	batch_held_free(&other);
}

static void sort_and_has(void **state)
{
	(void)state;
	uint64_t c[] = {9, 1, UINT64_MAX, 5, 3, 7};
	batch_held_sort(c, 6);
	for (size_t i = 1; i < 6; i++)
		assert_true(c[i - 1] < c[i]);
	for (size_t i = 0; i < 6; i++)
		assert_true(batch_held_has(c, 6, c[i]));
	assert_false(batch_held_has(c, 6, 2));
	assert_false(batch_held_has(c, 6, 0));
	assert_false(batch_held_has(c, 0, 1));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(set_get_forget),
		cmocka_unit_test(sort_and_has),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
