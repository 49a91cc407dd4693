/* unit.quota_fair_share: the fair-sharing order of waiting heads
 * (quota/fair_share.h), against Kueue's entryComparer.less
 * (kueue pkg/scheduler/fair_sharing_iterator.go): "1: DRF" (the share
 * after admitting the head, weights dividing), "2: Priority" (higher
 * first), "3: FIFO" (earlier first); then the ClusterQueue's name (ours).
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "quota/quota.h"

struct two {
	struct quota_tree *t;
	int a, b, cohort, cpu, f;
};

/* Cohort "ml" with 2 cpu of its own; team-a (weight `wa` thousandths) and
 * team-b (weight 1), 2 cpu nominal each. */
static struct two make(int64_t wa)
{
	struct two x;
	char err[256];
	assert_int_equal(quota_tree_new(&x.t), 0);
	x.f = quota_flavor_add(x.t, "fa", err, sizeof(err));
	x.cpu = quota_resource_add(x.t, "cpu", err, sizeof(err));
	x.cohort = quota_cohort_add(x.t, "ml", NULL, QUOTA_WEIGHT_DEFAULT_MILLI,
				    err, sizeof(err));
	/* b added first: the name, not the node id, breaks the last tie. */
	x.b = quota_cluster_queue_add(x.t, "team-b", "ml",
				      QUOTA_WEIGHT_DEFAULT_MILLI, NULL, err,
				      sizeof(err));
	x.a = quota_cluster_queue_add(x.t, "team-a", "ml", wa, NULL, err,
				      sizeof(err));
	assert_true(x.f >= 0 && x.cpu >= 0 && x.cohort >= 0 && x.a >= 0 &&
		    x.b >= 0);
	assert_int_equal(quota_set(x.t, x.a, x.f, x.cpu, 2000, QUOTA_NO_LIMIT,
				   QUOTA_NO_LIMIT, err, sizeof(err)), 0);
	assert_int_equal(quota_set(x.t, x.b, x.f, x.cpu, 2000, QUOTA_NO_LIMIT,
				   QUOTA_NO_LIMIT, err, sizeof(err)), 0);
	assert_int_equal(quota_set(x.t, x.cohort, x.f, x.cpu, 2000,
				   QUOTA_NO_LIMIT, QUOTA_NO_LIMIT, err,
				   sizeof(err)), 0);
	assert_int_equal(quota_seal(x.t, err, sizeof(err)), 0);
	return x;
}

static void charge(struct two *x, int cq, int64_t cpu)
{
	int64_t req[1] = {cpu};
	assert_int_equal(quota_try_charge(x->t, cq, x->f, req), 0);
}

static int cmp(struct two *x, int64_t a_req, int32_t a_prio, uint32_t a_at,
	       int64_t b_req, int32_t b_prio, uint32_t b_at)
{
	struct fair_key ka, kb;
	int64_t ra[1] = {a_req}, rb[1] = {b_req};
	assert_int_equal(fair_share_key(x->t, x->a, ra, a_prio, a_at, &ka), 0);
	assert_int_equal(fair_share_key(x->t, x->b, rb, b_prio, b_at, &kb), 0);
	int c = fair_share_compare(x->t, &ka, &kb);
	assert_int_equal(fair_share_compare(x->t, &kb, &ka), -c);
	return c;
}

/* The share after admission decides, before priority and arrival; the
 * weight divides it. */
static void test_share_first(void **state)
{
	(void)state;
	struct two x = make(QUOTA_WEIGHT_DEFAULT_MILLI);
	charge(&x, x.a, 3000);
	charge(&x, x.b, 2000);
	/* a would borrow 1.5 cpu, b 1 cpu: b first, whatever a's priority
	 * and arrival. */
	assert_true(cmp(&x, 500, 100, 1, 1000, 0, 2) > 0);
	quota_tree_free(x.t);
	x = make(2 * QUOTA_WEIGHT_DEFAULT_MILLI);
	charge(&x, x.a, 3000);
	charge(&x, x.b, 2000);
	/* weight 2: 1.5 / 2 < 1. */
	assert_true(cmp(&x, 500, 0, 2, 1000, 0, 1) < 0);
	/* Weight 0 that borrows: after every other. */
	quota_tree_free(x.t);
	x = make(0);
	charge(&x, x.a, 2000);
	charge(&x, x.b, 3500);
	assert_true(cmp(&x, 100, 0, 1, 1000, 0, 2) > 0);
	quota_tree_free(x.t);
}

/* Equal shares: priority, then arrival (wrapping), then the name. */
static void test_ties(void **state)
{
	(void)state;
	struct two x = make(QUOTA_WEIGHT_DEFAULT_MILLI);
	/* Neither borrows after admission: both share 0. */
	assert_true(cmp(&x, 1000, 0, 5, 1000, 1, 1) > 0);  /* b's priority */
	assert_true(cmp(&x, 1000, 1, 5, 1000, 1, 6) < 0);  /* a earlier */
	assert_true(cmp(&x, 1000, 1, 2, 1000, 1, UINT32_MAX - 1) > 0); /* wrapped */
	assert_true(cmp(&x, 1000, 1, 7, 1000, 1, 7) < 0);  /* "team-a" < "team-b" */
	/* Not a ClusterQueue: refused. */
	struct fair_key k;
	assert_int_equal(fair_share_key(x.t, x.cohort, NULL, 0, 1, &k), -EINVAL);
	assert_int_equal(fair_share_key(x.t, -1, NULL, 0, 1, &k), -EINVAL);
	assert_int_equal(fair_share_key(x.t, 99, NULL, 0, 1, &k), -EINVAL);
	quota_tree_free(x.t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_share_first),
		cmocka_unit_test(test_ties),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
