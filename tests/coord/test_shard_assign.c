/* tests/coord: the pure parts of issue 40's membership: the shard of a
 * node (coord/shard_map.h) and the coordinator's assignment of shards to
 * hosts (coord/shard_assign.h).
 *
 * exhaustive_small_cases: every cluster of up to 6 shards and 4 hosts and
 * every assignment before (each shard on a host or on none), the answer
 * checked against a brute force over all H^S assignments: balanced (each
 * host floor(S/H) or ceil(S/H)), moving exactly the least number of shards
 * any balanced assignment moves, and the count it returns is the count of
 * shards whose host changed. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "coord/coord.h"

#define MAX_S 6
#define MAX_H 4

static size_t pow_sz(size_t b, size_t e)
{
	size_t r = 1;
	while (e--)
		r *= b;
	return r;
}

static bool balanced(const int32_t *a, size_t s, size_t h)
{
	size_t n[MAX_H] = {0};
	for (size_t i = 0; i < s; i++) {
		if (a[i] < 0 || (size_t)a[i] >= h)
			return false;
		n[a[i]]++;
	}
	for (size_t i = 0; i < h; i++)
		if (n[i] < s / h || n[i] > (s + h - 1) / h)
			return false;
	return true;
}

static size_t moves(const int32_t *from, const int32_t *to, size_t s)
{
	size_t m = 0;
	for (size_t i = 0; i < s; i++)
		m += from[i] != to[i];
	return m;
}

/* The least moves of any balanced assignment from `prior`. */
static size_t least_moves(const int32_t *prior, size_t s, size_t h)
{
	size_t best = SIZE_MAX;
	int32_t a[MAX_S];
	for (size_t code = 0; code < pow_sz(h, s); code++) {
		size_t c = code;
		for (size_t i = 0; i < s; i++, c /= h)
			a[i] = (int32_t)(c % h);
		if (balanced(a, s, h)) {
			size_t m = moves(prior, a, s);
			if (m < best)
				best = m;
		}
	}
	return best;
}

static void exhaustive_small_cases(void **state)
{
	(void)state;
	size_t cases = 0;
	for (size_t h = 1; h <= MAX_H; h++) {
		for (size_t s = 0; s <= MAX_S; s++) {
			/* prior: each shard on host 0..h-1, or -1; also hosts
			 * that left (index h: written as -1 by the caller). */
			for (size_t code = 0; code < pow_sz(h + 1, s); code++) {
				int32_t prior[MAX_S], out[MAX_S];
				size_t c = code;
				for (size_t i = 0; i < s; i++, c /= h + 1)
					prior[i] = (int32_t)(c % (h + 1)) - 1;
				int moved = shard_assign(prior, s, h, out);
				assert_true(balanced(out, s, h));
				assert_int_equal((size_t)moved, moves(prior, out, s));
				assert_int_equal((size_t)moved, least_moves(prior, s, h));
				cases++;
			}
		}
	}
	assert_true(cases > 20000);
}

/* A join moves only what the new host's share needs; a leave moves only
 * the leaver's shards; the answer is the same computed twice. */
static void join_and_leave(void **state)
{
	(void)state;
	int32_t none[12], two[12], three[12], again[12], left[12];
	for (int i = 0; i < 12; i++)
		none[i] = -1;
	assert_int_equal(shard_assign(none, 12, 2, two), 12);
	assert_true(balanced(two, 12, 2));
	assert_int_equal(shard_assign(two, 12, 3, three), 4); /* a third joins */
	assert_int_equal(shard_assign(two, 12, 3, again), 4);
	assert_memory_equal(three, again, sizeof(three));
	/* Host 1 leaves: its shards are prior -1; hosts 0 and 2 become 0, 1. */
	int32_t prior[12];
	size_t gone = 0;
	for (int i = 0; i < 12; i++) {
		prior[i] = three[i] == 1 ? -1 : three[i] == 2 ? 1 : 0;
		gone += three[i] == 1;
	}
	assert_int_equal(shard_assign(prior, 12, 2, left), (int)gone);
	for (int i = 0; i < 12; i++)
		if (prior[i] >= 0)
			assert_int_equal(left[i], prior[i]);
	/* No host: nothing assigned. */
	assert_int_equal(shard_assign(two, 12, 0, left), 12);
	for (int i = 0; i < 12; i++)
		assert_int_equal(left[i], -1);
	assert_int_equal(shard_assign(two, 12, SHARD_ASSIGN_MAX + 1, left), -EINVAL);
}

/* The hash shard is fixed (every host and version must agree: these
 * values are what base/hash.h's hash64 gives) and spreads names. */
static void hash_shards(void **state)
{
	(void)state;
	assert_int_equal(shard_of_node_name("node-1", 6, 1), 0);
	uint32_t a = shard_of_node_name("node-1", 6, 4);
	assert_int_equal(a, shard_of_node_name("node-1", 6, 4));
	assert_true(a < 4);
	unsigned n[8] = {0};
	char name[32];
	for (int i = 0; i < 8000; i++) {
		int len = snprintf(name, sizeof(name), "node-%d", i);
		n[shard_of_node_name(name, (size_t)len, 8)]++;
	}
	for (int i = 0; i < 8; i++)
		assert_true(n[i] > 800 && n[i] < 1200);
	char buf[16];
	shard_hash_name(17, buf, sizeof(buf));
	assert_string_equal(buf, "h17");
}

static void shard_names(void **state)
{
	(void)state;
	assert_true(shard_name_valid("us-east-1a", 10));
	assert_true(shard_name_valid("a.b_c-D9", 8));
	assert_false(shard_name_valid("", 0));
	assert_false(shard_name_valid("a/b", 3));
	assert_false(shard_name_valid("a b", 3));
	char long_name[SHARD_NAME_MAX];
	memset(long_name, 'a', sizeof(long_name));
	assert_true(shard_name_valid(long_name, SHARD_NAME_MAX - 1));
	assert_false(shard_name_valid(long_name, SHARD_NAME_MAX));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(exhaustive_small_cases),
		cmocka_unit_test(join_and_leave),
		cmocka_unit_test(hash_shards),
		cmocka_unit_test(shard_names),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
