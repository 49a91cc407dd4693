/* Pools that fail together (daemon/quarantine.c), on an injected clock:
 * a quarantine trips on enough failures on enough nodes, holds while
 * failures go on, lifts after a quiet window or by a release, with
 * hysteresis; the 20 % cap; a full table; crash-pair avoidance's nodes
 * and term (quarantine_failed_nodes, quarantine_avoid). */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "daemon/quarantine_internal.h"
#include "shm/shm.h"

#define S (UINT64_C(1000000000))

static const struct quarantine_config cfg = {
	.threshold = 0.5, .min_nodes = 3, .window_ns = 60 * S, .entries = 8,
};

static struct quarantine *make(uint32_t entries)
{
	struct quarantine_config c = cfg;
	c.entries = entries;
	struct quarantine *q = quarantine_create(&c);
	assert_non_null(q);
	return q;
}

/* Failures of key k on nodes first..first+n-1 at `now`; the last verdict. */
static enum quarantine_verdict fail_on(struct quarantine *q, uint64_t now,
				       const struct quarantine_key *k, uint32_t first,
				       uint32_t n, uint32_t pool_nodes, uint32_t total)
{
	enum quarantine_verdict v = QUARANTINE_COUNTED;
	for (uint32_t i = 0; i < n; i++)
		v = quarantine_failure(q, now, k, first + i, pool_nodes, total);
	return v;
}

static void test_config_refused(void **state)
{
	(void)state;
	struct quarantine_config c = cfg;
	c.threshold = 0;
	assert_null(quarantine_create(&c));
	assert_int_equal(errno, EINVAL);
	c = cfg;
	c.min_nodes = QUARANTINE_NODES + 1;
	assert_null(quarantine_create(&c));
	c = cfg;
	c.entries = 0;
	assert_null(quarantine_create(&c));
}

static void test_trips_holds_lifts(void **state)
{
	(void)state;
	struct quarantine *q = make(8);
	const struct quarantine_key k = {.pool = 7, .owner = 1, .template = 40};
	const struct quarantine_key other = {.pool = 7, .owner = 1, .template = 41};
	uint64_t t0 = 1000 * S;
	/* Nothing tracked: the workers' calls do nothing. */
	quarantine_placed(q, t0, &k);
	assert_false(quarantine_blocks(q, t0, &k, NULL));
	/* Two nodes fail: under min_nodes (3), however high the rate. */
	assert_int_equal(fail_on(q, t0, &k, 1, 2, 10, 100), QUARANTINE_COUNTED);
	assert_int_equal(fail_on(q, t0 + S, &k, 1, 1, 10, 100), QUARANTINE_COUNTED);
	assert_false(quarantine_blocks(q, t0 + S, &k, NULL));
	/* The third node: 4 failures of 4 placements on 3 nodes. */
	assert_int_equal(fail_on(q, t0 + 2 * S, &k, 3, 1, 10, 100), QUARANTINE_TRIPPED);
	struct quarantine_info info;
	assert_true(quarantine_blocks(q, t0 + 2 * S, &k, &info));
	assert_int_equal(info.failures, 4);
	assert_int_equal(info.nodes, 3);
	assert_false(quarantine_blocks(q, t0 + 2 * S, &other, NULL));
	char msg[200];
	quarantine_message(q, &info, "p3", "default/web", msg, sizeof(msg));
	assert_string_equal(msg, "pool p3 quarantined for template default/web: 4 "
			    "failures on 3 nodes in 60 s (shmsched pool release p3 "
			    "lifts it)");
	/* Holds: a failure 30 s on keeps it past the trip's own window. */
	assert_int_equal(fail_on(q, t0 + 32 * S, &k, 4, 1, 10, 100), QUARANTINE_HELD);
	assert_int_equal(quarantine_tick(q, t0 + 62 * S), 0);
	assert_true(quarantine_blocks(q, t0 + 62 * S, &k, NULL));
	assert_true(quarantine_blocks(q, t0 + 85 * S, &k, NULL));
	/* Lifts: a window with no failure after the last one. */
	assert_int_equal(quarantine_tick(q, t0 + 93 * S), 1);
	assert_false(quarantine_blocks(q, t0 + 93 * S, &k, NULL));
	struct quarantine_counts c;
	quarantine_counts(q, &c);
	assert_int_equal(c.trips, 1);
	assert_int_equal(c.lifts, 1);
	assert_int_equal(c.quarantined, 0);
	assert_int_equal(c.failures, 5);
	quarantine_destroy(q);
}

static void test_hysteresis(void **state)
{
	(void)state;
	struct quarantine *q = make(8);
	const struct quarantine_key k = {.pool = 7, .owner = 1, .template = 40};
	uint64_t t = 1000 * S;
	/* 20 placements, then failures on 3 nodes: 3 of 20 (0.15), then 9 of
	 * 20 (0.45): under the trip threshold (0.5), though above the lift
	 * one (0.25): no trip. */
	assert_int_equal(fail_on(q, t, &k, 1, 1, 10, 100), QUARANTINE_COUNTED);
	for (int i = 0; i < 20; i++)
		quarantine_placed(q, t, &k);
	assert_int_equal(fail_on(q, t, &k, 2, 2, 10, 100), QUARANTINE_COUNTED);
	assert_int_equal(fail_on(q, t, &k, 1, 3, 10, 100), QUARANTINE_COUNTED);
	assert_int_equal(fail_on(q, t, &k, 1, 3, 10, 100), QUARANTINE_COUNTED);
	/* The tenth of 20: 0.5, trips. */
	assert_int_equal(fail_on(q, t, &k, 5, 1, 10, 100), QUARANTINE_TRIPPED);
	/* 40 s on: 3 failures of 10 placements (0.3: under the trip
	 * threshold, at or above the lift one, 0.25). A window after the trip
	 * they are the window's figures: it holds. (The pool takes no new pod
	 * of this template while quarantined; the placements are counted as
	 * given, to show the rate that holds it.) */
	for (int i = 0; i < 10; i++)
		quarantine_placed(q, t + 40 * S, &k);
	assert_int_equal(fail_on(q, t + 40 * S, &k, 1, 3, 10, 100), QUARANTINE_HELD);
	assert_int_equal(quarantine_tick(q, t + 61 * S), 0);
	assert_true(quarantine_blocks(q, t + 61 * S, &k, NULL));
	/* A window later, 2 of 10 (0.2 < 0.25): lifts, and 0.2 trips nothing. */
	t += 101 * S;
	for (int i = 0; i < 10; i++)
		quarantine_placed(q, t, &k);
	assert_int_equal(fail_on(q, t, &k, 1, 2, 10, 100), QUARANTINE_COUNTED);
	assert_false(quarantine_blocks(q, t, &k, NULL));
	quarantine_destroy(q);
}

static void test_release(void **state)
{
	(void)state;
	struct quarantine *q = make(8);
	const struct quarantine_key a = {.pool = 7, .owner = 1, .template = 40};
	const struct quarantine_key b = {.pool = 7, .owner = 2, .template = 41};
	uint64_t t = 1000 * S;
	assert_int_equal(fail_on(q, t, &a, 1, 3, 10, 100), QUARANTINE_TRIPPED);
	assert_int_equal(fail_on(q, t, &b, 1, 3, 10, 100), QUARANTINE_TRIPPED);
	/* Another pool, another template: nothing lifted. */
	assert_int_equal(quarantine_release(q, 8, 0), 0);
	assert_int_equal(quarantine_release(q, 7, 99), 0);
	/* One template's. */
	assert_int_equal(quarantine_release(q, 7, 40), 1);
	assert_false(quarantine_blocks(q, t, &a, NULL));
	assert_true(quarantine_blocks(q, t, &b, NULL));
	/* Its history went with it: one more failure trips nothing. */
	assert_int_equal(fail_on(q, t, &a, 4, 1, 10, 100), QUARANTINE_COUNTED);
	/* The whole pool's. */
	assert_int_equal(quarantine_release(q, 7, 0), 1);
	assert_false(quarantine_blocks(q, t, &b, NULL));
	assert_int_equal(quarantine_release(q, 7, 0), 0);
	struct quarantine_counts c;
	quarantine_counts(q, &c);
	assert_int_equal(c.released, 2);
	assert_int_equal(c.quarantined, 0);
	quarantine_destroy(q);
}

static void test_cap(void **state)
{
	(void)state;
	struct quarantine *q = make(8);
	/* 40 nodes: 20 % is 8. Pools of 5 nodes each. */
	const struct quarantine_key a = {.pool = 1, .owner = 1, .template = 40};
	const struct quarantine_key a2 = {.pool = 1, .owner = 1, .template = 41};
	const struct quarantine_key b = {.pool = 2, .owner = 1, .template = 40};
	uint64_t t = 1000 * S;
	assert_int_equal(fail_on(q, t, &a, 1, 3, 5, 40), QUARANTINE_TRIPPED);
	/* Pool 2 would make 10 of 40 nodes: capped, left open. */
	assert_int_equal(fail_on(q, t, &b, 11, 3, 5, 40), QUARANTINE_CAPPED);
	assert_false(quarantine_blocks(q, t, &b, NULL));
	assert_int_equal(fail_on(q, t, &b, 11, 1, 5, 40), QUARANTINE_CAPPED);
	/* Pool 1 for another template: its nodes are counted already. */
	assert_int_equal(fail_on(q, t, &a2, 1, 3, 5, 40), QUARANTINE_TRIPPED);
	struct quarantine_counts c;
	quarantine_counts(q, &c);
	assert_int_equal(c.capped, 2);
	assert_int_equal(c.quarantined, 2);
	assert_int_equal(c.nodes_quarantined, 5);
	/* Pool 1 released: pool 2's next failure trips. */
	assert_int_equal(quarantine_release(q, 1, 0), 2);
	assert_int_equal(fail_on(q, t, &b, 11, 1, 5, 40), QUARANTINE_TRIPPED);
	quarantine_destroy(q);
}

/* An open entry listed as of now: a placement counted after its last
 * failure, in the next bucket (10 s wide here), is in the sums. As of
 * the last failure it was not (unit.drain_surge failed when the bucket
 * turned between a failure and a surge's replacement). */
static void test_list_as_of_now(void **state)
{
	(void)state;
	struct quarantine *q = make(8);
	const struct quarantine_key a = {.pool = 7, .owner = 1, .template = 40};
	uint64_t t = 1009 * S; /* a bucket ends at 1010 s */
	quarantine_placed(q, t, &a); /* no entry yet: not counted */
	assert_int_equal(fail_on(q, t, &a, 1, 1, 10, 100), QUARANTINE_COUNTED);
	quarantine_placed(q, t, &a);
	quarantine_placed(q, t + 2 * S, &a);
	quarantine_placed(q, t + 2 * S, &a);
	struct quarantine_info list[2];
	assert_int_equal(quarantine_list(q, t + 3 * S, list, 2), 1);
	assert_false(list[0].quarantined);
	assert_int_equal(list[0].failures, 1);
	assert_int_equal(list[0].placements, 3);
	/* A window later, nothing of it is left. */
	assert_int_equal(quarantine_list(q, t + 80 * S, list, 2), 1);
	assert_int_equal(list[0].failures, 0);
	assert_int_equal(list[0].placements, 0);
	quarantine_destroy(q);
}

static void test_table_full(void **state)
{
	(void)state;
	struct quarantine *q = make(2);
	const struct quarantine_key a = {.pool = 1, .owner = 1, .template = 40};
	const struct quarantine_key b = {.pool = 2, .owner = 1, .template = 40};
	const struct quarantine_key c3 = {.pool = 3, .owner = 1, .template = 40};
	uint64_t t = 1000 * S;
	assert_int_equal(fail_on(q, t, &a, 1, 3, 5, 1000), QUARANTINE_TRIPPED);
	assert_int_equal(fail_on(q, t, &b, 11, 3, 5, 1000), QUARANTINE_TRIPPED);
	/* Both entries quarantined: a third pair is not tracked, and takes
	 * neither hold away. */
	assert_int_equal(fail_on(q, t, &c3, 21, 3, 5, 1000), QUARANTINE_UNTRACKED);
	assert_true(quarantine_blocks(q, t, &a, NULL));
	assert_true(quarantine_blocks(q, t, &b, NULL));
	struct quarantine_counts c;
	quarantine_counts(q, &c);
	assert_int_equal(c.untracked, 3);
	assert_int_equal(c.tracked, 2);
	/* Pool 1 released: its open entry (failures in the window) is the
	 * one taken, counted evicted; pool 2 holds. */
	assert_int_equal(quarantine_release(q, 1, 0), 1);
	assert_int_equal(fail_on(q, t + S, &c3, 21, 1, 5, 1000), QUARANTINE_COUNTED);
	quarantine_counts(q, &c);
	assert_int_equal(c.evicted, 1);
	assert_int_equal(c.tracked, 2);
	assert_true(quarantine_blocks(q, t + S, &b, NULL));
	struct quarantine_info list[4];
	assert_int_equal(quarantine_list(q, t + S, list, 4), 2);
	assert_true(list[0].quarantined);
	assert_int_equal(list[0].key.pool, 2);
	assert_false(list[1].quarantined);
	assert_int_equal(list[1].key.pool, 3);
	quarantine_destroy(q);
}

/* The spec a quarantine places with: each required term gains the NotIn
 * requirement after a copy of its own; the originals (which preferred
 * terms name) stay where they were; a pod without required terms gets
 * one; arrays that cannot take it leave the pod as it is. */
static void test_exclude(void **state)
{
	(void)state;
	static struct pod_spec pod, out;
	memset(&pod, 0, sizeof(pod));
	const uint32_t pools[2] = {5, 9};
	/* No required terms: one made. */
	assert_true(quarantine_exclude(&pod, 77, pools, 2, &out));
	assert_true(out.has_required);
	assert_int_equal(out.n_terms, 1);
	assert_int_equal(out.terms[0].n_exprs, 1);
	const struct sel_expr *x = &out.exprs[out.terms[0].first_expr];
	assert_int_equal(x->key, 77);
	assert_int_equal(x->op, SEL_NOT_IN);
	assert_int_equal(x->n_values, 2);
	assert_int_equal(out.values[x->first_value], 5);
	assert_int_equal(out.values[x->first_value + 1], 9);
	/* Two terms (exprs 0-1 and 2), a preferred term on expr 2. */
	pod.has_required = true;
	pod.n_terms = 2;
	pod.terms[0] = (struct sel_term){.first_expr = 0, .n_exprs = 2};
	pod.terms[1] = (struct sel_term){.first_expr = 2, .n_exprs = 1};
	pod.n_exprs = 3;
	for (int i = 0; i < 3; i++)
		pod.exprs[i] = (struct sel_expr){.key = (uint32_t)(10 + i), .op = SEL_EXISTS};
	pod.n_preferred = 1;
	pod.preferred[0] = (struct pref_term){.weight = 1,
					      .term = {.first_expr = 2, .n_exprs = 1}};
	pod.n_values = 1;
	pod.values[0] = 1234;
	assert_true(quarantine_exclude(&pod, 77, pools, 2, &out));
	assert_int_equal(out.n_terms, 2);
	assert_int_equal(out.n_exprs, 3 + 3 + 2);
	assert_int_equal(out.values[0], 1234);
	assert_int_equal(memcmp(out.exprs, pod.exprs, 3 * sizeof(pod.exprs[0])), 0);
	assert_int_equal(out.preferred[0].term.first_expr, 2);
	for (int t = 0; t < 2; t++) {
		const struct sel_term *in = &pod.terms[t], *o = &out.terms[t];
		assert_int_equal(o->n_exprs, in->n_exprs + 1);
		assert_int_equal(memcmp(&out.exprs[o->first_expr], &pod.exprs[in->first_expr],
					in->n_exprs * sizeof(pod.exprs[0])), 0);
		x = &out.exprs[o->first_expr + in->n_exprs];
		assert_int_equal(x->op, SEL_NOT_IN);
		assert_int_equal(x->key, 77);
		assert_int_equal(out.values[x->first_value], 5);
	}
	/* Values full: left as it is. */
	pod.n_values = POD_MAX_VALUES - 1;
	assert_false(quarantine_exclude(&pod, 77, pools, 2, &out));
	/* Required terms present but empty: they match nothing anyway. */
	pod.n_values = 0;
	pod.n_terms = 0;
	assert_false(quarantine_exclude(&pod, 77, pools, 2, &out));
}

/* Crash-pair avoidance's memory: the nodes where a template failed within
 * the window, in any of its pools, each once; another template's are not
 * its; past the window (the injected clock), none. */
static void test_failed_nodes(void **state)
{
	(void)state;
	struct quarantine *q = make(8);
	uint32_t nodes[QUARANTINE_AVOID_MAX];
	const struct quarantine_key web_a = {.pool = 1, .owner = 1, .template = 7};
	const struct quarantine_key web_b = {.pool = 2, .owner = 1, .template = 7};
	const struct quarantine_key db_a = {.pool = 1, .owner = 1, .template = 8};
	const struct quarantine_key web_other = {.pool = 1, .owner = 2, .template = 7};
	/* Nothing tracked: nothing, at once. */
	assert_int_equal(quarantine_failed_nodes(q, 10 * S, 1, 7, nodes, 16), 0);
	quarantine_failure(q, 10 * S, &web_a, 3, 5, 100);
	quarantine_failure(q, 20 * S, &web_b, 5, 5, 100);
	quarantine_failure(q, 20 * S, &web_a, 3, 5, 100); /* node 3 again */
	quarantine_failure(q, 20 * S, &db_a, 4, 5, 100);
	quarantine_failure(q, 20 * S, &web_other, 6, 5, 100);
	uint32_t n = quarantine_failed_nodes(q, 30 * S, 1, 7, nodes, 16);
	assert_int_equal(n, 2);
	assert_true((nodes[0] == 3 && nodes[1] == 5) || (nodes[0] == 5 && nodes[1] == 3));
	assert_int_equal(quarantine_failed_nodes(q, 30 * S, 1, 8, nodes, 16), 1);
	assert_int_equal(nodes[0], 4);
	/* Another identity's template of the same name is another template. */
	assert_int_equal(quarantine_failed_nodes(q, 30 * S, 2, 7, nodes, 16), 1);
	assert_int_equal(nodes[0], 6);
	assert_int_equal(quarantine_failed_nodes(q, 30 * S, 1, 9, nodes, 16), 0);
	/* cap bounds what is stored. */
	assert_int_equal(quarantine_failed_nodes(q, 30 * S, 1, 7, nodes, 1), 1);
	/* Node 3's last failure was at 20 s, as node 5's: both remembered
	 * until 80 s, neither after. */
	assert_int_equal(quarantine_failed_nodes(q, 80 * S - 1, 1, 7, nodes, 16), 2);
	assert_int_equal(quarantine_failed_nodes(q, 80 * S, 1, 7, nodes, 16), 0);
	/* A node whose failure is older than the window, in an entry with a
	 * newer one, is not named. */
	quarantine_failure(q, 100 * S, &web_a, 9, 5, 100);
	n = quarantine_failed_nodes(q, 100 * S, 1, 7, nodes, 16);
	assert_int_equal(n, 1);
	assert_int_equal(nodes[0], 9);
	quarantine_destroy(q);
}

/* The term crash-pair avoidance adds: preferred, weight 100, one
 * metadata.name NotIn per node, after what the pod had; as many as fit. */
static void test_avoid(void **state)
{
	(void)state;
	static struct pod_spec pod, before;
	memset(&pod, 0, sizeof(pod));
	const uint32_t names[3] = {41, 42, 43};
	assert_false(quarantine_avoid(&pod, 99, names, 0));
	/* A pod with a preferred term of its own on expr 0. */
	pod.n_preferred = 1;
	pod.preferred[0] = (struct pref_term){.weight = 3,
					      .term = {.first_expr = 0, .n_exprs = 1}};
	pod.n_exprs = 1;
	pod.exprs[0] = (struct sel_expr){.key = 10, .op = SEL_EXISTS};
	pod.n_values = 1;
	pod.values[0] = 1234;
	before = pod;
	assert_true(quarantine_avoid(&pod, 99, names, 3));
	assert_int_equal(pod.n_preferred, 2);
	assert_int_equal(memcmp(&pod.preferred[0], &before.preferred[0],
				sizeof(pod.preferred[0])), 0);
	assert_int_equal(pod.preferred[1].weight, QUARANTINE_AVOID_WEIGHT);
	assert_int_equal(pod.preferred[1].term.first_expr, 1);
	assert_int_equal(pod.preferred[1].term.n_exprs, 3);
	assert_int_equal(pod.n_exprs, 4);
	assert_int_equal(pod.n_values, 4);
	assert_false(pod.has_required); /* no filter changed */
	for (int i = 0; i < 3; i++) {
		const struct sel_expr *x = &pod.exprs[1 + i];
		assert_int_equal(x->key, 99);
		assert_int_equal(x->field, 1);
		assert_int_equal(x->op, SEL_NOT_IN);
		assert_int_equal(x->n_values, 1);
		assert_int_equal(pod.values[x->first_value], names[i]);
	}
	/* Room for one value only: one name. */
	pod = before;
	pod.n_values = POD_MAX_VALUES - 1;
	assert_true(quarantine_avoid(&pod, 99, names, 3));
	assert_int_equal(pod.preferred[1].term.n_exprs, 1);
	/* No room for a preferred term: unchanged. */
	pod = before;
	pod.n_preferred = POD_MAX_PREFERRED;
	before = pod;
	assert_false(quarantine_avoid(&pod, 99, names, 3));
	assert_int_equal(memcmp(&pod, &before, sizeof(pod)), 0);
	pod.n_preferred = 1;
	pod.n_exprs = POD_MAX_EXPRS;
	before = pod;
	assert_false(quarantine_avoid(&pod, 99, names, 3));
	assert_int_equal(memcmp(&pod, &before, sizeof(pod)), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_config_refused),
		cmocka_unit_test(test_trips_holds_lifts),
		cmocka_unit_test(test_hysteresis),
		cmocka_unit_test(test_release),
		cmocka_unit_test(test_cap),
		cmocka_unit_test(test_list_as_of_now),
		cmocka_unit_test(test_table_full),
		cmocka_unit_test(test_exclude),
		cmocka_unit_test(test_failed_nodes),
		cmocka_unit_test(test_avoid),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
