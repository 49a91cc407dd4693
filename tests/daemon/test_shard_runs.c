/* unit.shard_runs: the key ranges the shard watch follows
 * (daemon/shard_runs.c). Key order is the order of shards/<name>/ ("h1-x"
 * before "h1" before "h10", where strcmp puts "h1" first: a strcmp order
 * would make the run h1..h10 hold h1-x's keys, or leave some out); runs
 * close at an owned shard; every shard owned: no run; nothing owned: one
 * run over all; duplicates and a name both known and owned (owned wins).
 * A model check on seeded random sets: every known shard not owned is in
 * exactly one run's key range, no owned shard is in any, and no two runs
 * could be one (an owned shard lies between them). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "daemon/shard_runs_internal.h"

static size_t names(shard_name_t *out, const char *const *in)
{
	size_t n = 0;
	for (; in[n] != NULL; n++)
		snprintf(out[n], SHARD_NAME_MAX, "%s", in[n]);
	return n;
}

/* The key range of run [first, last] holds shard s's keys. */
static bool in_run(const char *first, const char *last, const char *s)
{
	return shard_key_order(first, s) <= 0 && shard_key_order(s, last) <= 0;
}

static void key_order(void **state)
{
	(void)state;
	assert_true(shard_key_order("h1-x", "h1") < 0);
	assert_true(shard_key_order("h1.x", "h1") < 0);
	assert_true(shard_key_order("h1", "h10") < 0);
	assert_true(shard_key_order("h10", "h2") < 0);
	assert_true(shard_key_order("h1", "h1") == 0);
	assert_true(shard_key_order("h10", "h1-x") > 0);
	/* As etcd orders the keys. */
	const char *keys[] = {"shards/h1-x/", "shards/h1/", "shards/h10/"};
	for (int i = 0; i < 2; i++)
		assert_true(strcmp(keys[i], keys[i + 1]) < 0);
}

static void runs(void **state)
{
	(void)state;
	static struct shard_runs r;
	shard_name_t known[16], owned[16];
	size_t nk = names(known, (const char *const[]){"z3", "z0", "z1", "z2", NULL});
	size_t n = names(owned, (const char *const[]){"z0", "z1", "z2", "z3", NULL});
	shard_runs_of(known, nk, owned, n, &r);
	assert_int_equal(r.n, 0); /* every shard owned: nothing followed */
	shard_runs_of(known, nk, owned, 0, &r);
	assert_int_equal(r.n, 1);
	assert_string_equal(r.first[0], "z0");
	assert_string_equal(r.last[0], "z3");
	n = names(owned, (const char *const[]){"z1", NULL});
	shard_runs_of(known, nk, owned, n, &r);
	assert_int_equal(r.n, 2);
	assert_string_equal(r.first[0], "z0");
	assert_string_equal(r.last[0], "z0");
	assert_string_equal(r.first[1], "z2");
	assert_string_equal(r.last[1], "z3");
	/* Key order, duplicates, an owned name the host does not know. */
	nk = names(known, (const char *const[]){"h10", "h1", "h1-x", "h1", "h2", NULL});
	n = names(owned, (const char *const[]){"h1", "h9", NULL});
	shard_runs_of(known, nk, owned, n, &r);
	assert_int_equal(r.n, 2);
	assert_string_equal(r.first[0], "h1-x");
	assert_string_equal(r.last[0], "h1-x");
	assert_string_equal(r.first[1], "h10");
	assert_string_equal(r.last[1], "h2");
	static struct shard_runs same;
	shard_runs_of(known, nk, owned, n, &same);
	assert_true(shard_runs_equal(&r, &same));
	n = names(owned, (const char *const[]){"h1", NULL});
	shard_runs_of(known, nk, owned, n, &same);
	assert_true(shard_runs_equal(&r, &same)); /* h9 owned or not: not known */
	n = names(owned, (const char *const[]){"h10", NULL});
	shard_runs_of(known, nk, owned, n, &same);
	assert_false(shard_runs_equal(&r, &same));
}

static void model(void **state)
{
	(void)state;
	static shard_name_t known[SHARD_MAX], owned[SHARD_MAX];
	static struct shard_runs r;
	static const char alphabet[] = "ab1-.";
	srand(40);
	for (int round = 0; round < 2000; round++) {
		size_t nk = 1 + (size_t)rand() % 40, n = 0;
		for (size_t i = 0; i < nk; i++) {
			size_t len = 1 + (size_t)rand() % 3;
			for (size_t j = 0; j < len; j++)
				known[i][j] = alphabet[rand() % 5];
			known[i][len] = '\0';
			if (rand() % 3 == 0)
				memcpy(owned[n++], known[i], SHARD_NAME_MAX);
		}
		shard_runs_of(known, nk, owned, n, &r);
		for (size_t i = 0; i < nk; i++) {
			bool own = false;
			for (size_t j = 0; j < n; j++)
				own |= strcmp(owned[j], known[i]) == 0;
			size_t in = 0;
			for (size_t k = 0; k < r.n; k++)
				in += in_run(r.first[k], r.last[k], known[i]);
			if (in != (own ? 0u : 1u))
				fail_msg("round %d: shard %s (%s) in %zu runs", round, known[i],
					 own ? "owned" : "not owned", in);
		}
		for (size_t k = 0; k + 1 < r.n; k++) {
			assert_true(shard_key_order(r.last[k], r.first[k + 1]) < 0);
			bool between = false;
			for (size_t j = 0; j < n; j++)
				between |= shard_key_order(r.last[k], owned[j]) < 0 &&
					   shard_key_order(owned[j], r.first[k + 1]) < 0;
			if (!between)
				fail_msg("round %d: runs %zu and %zu with no owned shard between",
					 round, k, k + 1);
		}
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(key_order),
		cmocka_unit_test(runs),
		cmocka_unit_test(model),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
