/* unit.quota_admission_usage: Kueue's admission fair sharing
 * (quota/admission_usage.h) in exact numbers, against kueue
 * pkg/util/admissionfairsharing/admission_fair_sharing.go:
 *   calculateAlphaRate:       "return 1.0 - math.Pow(0.5, sampling/halfLifeTime)"
 *   CalculateDecayedConsumed: "scaledOldUsage := resource.MulByFloat(oldUsage, 1-alpha)"
 *                             "scaledNewUsage := resource.MulByFloat(newUsage, alpha)"
 *   CalculateEntryPenalty:    alpha of (UsageSamplingInterval, UsageHalfLifeTime)
 *                             x the workload's total requests
 *   CalculateUsage:           "usage += weight * resVal.AsApproximateFloat64()",
 *                             "if lqWeight <= 0 { return math.Inf(1) }",
 *                             "return usage / lqWeight"
 * and pkg/config/validation.go validateAdmissionFairSharing
 * ("usageSamplingInterval" "must be greater than 0"; a negative
 * resourceWeights value refused).
 */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "quota/quota.h"

#define HOUR_NS (UINT64_C(3600) * 1000000000u)
#define MIN_NS (UINT64_C(60) * 1000000000u)
#define T0 (UINT64_C(1000) * 1000000000u)

struct fx {
	struct quota_tree *t;
	int cpu, mem;
	struct afs_settings s;
	struct afs_config c;
};

/* A tree naming cpu (millicores) and memory (bytes); half-life 1h,
 * sampling 5m, no resourceWeights. */
static void setup_tree(struct fx *x)
{
	char err[256];
	memset(x, 0, sizeof(*x));
	assert_int_equal(quota_tree_new(&x->t), 0);
	int f = quota_flavor_add(x->t, "fa", err, sizeof(err));
	x->cpu = quota_resource_add(x->t, "cpu", err, sizeof(err));
	x->mem = quota_resource_add(x->t, "memory", err, sizeof(err));
	int cq = quota_cluster_queue_add(x->t, "cq", NULL,
					 QUOTA_WEIGHT_DEFAULT_MILLI, NULL, err,
					 sizeof(err));
	assert_true(f >= 0 && x->cpu >= 0 && x->mem >= 0 && cq >= 0);
	assert_int_equal(quota_set(x->t, cq, f, x->cpu, 8000, QUOTA_NO_LIMIT,
				   QUOTA_NO_LIMIT, err, sizeof(err)), 0);
	assert_int_equal(quota_seal(x->t, err, sizeof(err)), 0);
	x->s.half_life_ns = HOUR_NS;
	x->s.sampling_ns = 5 * MIN_NS;
	afs_config_resolve(&x->c, &x->s, x->t);
}

static void test_alpha(void **state)
{
	(void)state;
	assert_true(afs_alpha(HOUR_NS, HOUR_NS) == 0.5);
	assert_true(afs_alpha(2 * HOUR_NS, HOUR_NS) == 0.75);
	assert_true(afs_alpha(0, HOUR_NS) == 0.0);
	assert_true(afs_alpha(HOUR_NS, 0) == 0.0); /* "if halfLifeTime == 0" */
	assert_true(fabs(afs_alpha(HOUR_NS / 2, HOUR_NS) -
			 (1.0 - sqrt(0.5))) < 1e-15);
}

/* A LocalQueue that used twice as much as another for one half-life has
 * twice its usage, and goes after it; with nothing running the usage
 * halves each half-life; the lighter queue using more later overtakes. */
static void test_decay(void **state)
{
	(void)state;
	struct fx x;
	setup_tree(&x);
	struct afs_lq a = {0}, b = {0};
	a.live[x.cpu] = 2000;
	b.live[x.cpu] = 1000;
	afs_sample(&x.c, &a, T0); /* the first sample stamps only */
	afs_sample(&x.c, &b, T0);
	assert_true(a.consumed[x.cpu] == 0.0 && a.last_ns == T0);
	assert_false(afs_due(&x.c, &a, T0 + 5 * MIN_NS - 1));
	assert_true(afs_due(&x.c, &a, T0 + 5 * MIN_NS));

	afs_sample(&x.c, &a, T0 + HOUR_NS);
	afs_sample(&x.c, &b, T0 + HOUR_NS);
	assert_true(a.consumed[x.cpu] == 1000.0); /* 0 x 0.5 + 2000m x 0.5 */
	assert_true(b.consumed[x.cpu] == 500.0);
	double ua = afs_usage(&x.c, &a, QUOTA_WEIGHT_DEFAULT_MILLI);
	double ub = afs_usage(&x.c, &b, QUOTA_WEIGHT_DEFAULT_MILLI);
	assert_true(ua == 1.0 && ub == 0.5); /* cores, as Kueue's float */
	assert_true(afs_compare(ub, ua) < 0);
	assert_true(afs_compare(ua, ub) > 0);
	assert_int_equal(afs_compare(ua, ua), 0);

	/* Nothing running: halved by the next half-life. */
	a.live[x.cpu] = b.live[x.cpu] = 0;
	afs_sample(&x.c, &a, T0 + 2 * HOUR_NS);
	afs_sample(&x.c, &b, T0 + 2 * HOUR_NS);
	assert_true(a.consumed[x.cpu] == 500.0);
	assert_true(b.consumed[x.cpu] == 250.0);

	/* b runs 1000m for two half-lives (alpha 0.75): 250 x 0.25 + 750. */
	b.live[x.cpu] = 1000;
	afs_sample(&x.c, &a, T0 + 4 * HOUR_NS);
	afs_sample(&x.c, &b, T0 + 4 * HOUR_NS);
	assert_true(a.consumed[x.cpu] == 125.0);
	assert_true(b.consumed[x.cpu] == 812.5);
	assert_true(afs_compare(afs_usage(&x.c, &a, 1000),
				afs_usage(&x.c, &b, 1000)) < 0);

	/* A clock that steps back: no decay, the stamp kept. */
	afs_sample(&x.c, &b, T0 + 3 * HOUR_NS);
	assert_true(b.consumed[x.cpu] == 812.5);
	assert_true(b.last_ns == T0 + 4 * HOUR_NS);
	quota_tree_free(x.t);
}

/* The entry penalty: request x alpha(sampling, half-life), at once; the
 * release gives back live usage only. */
static void test_entry_penalty(void **state)
{
	(void)state;
	struct fx x;
	setup_tree(&x);
	x.s.sampling_ns = HOUR_NS / 2;
	afs_config_resolve(&x.c, &x.s, x.t);
	struct afs_lq a = {0};
	afs_sample(&x.c, &a, T0);
	int64_t req[QUOTA_MAX_RESOURCES] = {0};
	req[x.cpu] = 1000;
	req[x.mem] = 1 << 20;
	afs_admit(&x.c, &a, req);
	assert_int_equal(a.live[x.cpu], 1000);
	assert_int_equal(a.live[x.mem], 1 << 20);
	double alpha = 1.0 - sqrt(0.5); /* 0.29289... */
	assert_true(fabs(a.consumed[x.cpu] - 1000.0 * alpha) < 1e-9);
	assert_true(fabs(a.consumed[x.mem] - 1048576.0 * alpha) < 1e-6);
	/* Usage: 1 core x alpha + 1 MiB x alpha (weights 1). */
	assert_true(fabs(afs_usage(&x.c, &a, 1000) - 1048577.0 * alpha) < 1e-6);
	afs_release(&x.c, &a, req);
	afs_release(&x.c, &a, req); /* never below 0 */
	assert_int_equal(a.live[x.cpu], 0);
	assert_true(fabs(a.consumed[x.cpu] - 1000.0 * alpha) < 1e-9);
	quota_tree_free(x.t);
}

/* resourceWeights and the LocalQueue's weight. */
static void test_weights(void **state)
{
	(void)state;
	struct fx x;
	setup_tree(&x);
	x.s.n_weights = 3;
	strcpy(x.s.weight_name[0], "cpu");
	x.s.weight[0] = 2.0;
	strcpy(x.s.weight_name[1], "memory");
	x.s.weight[1] = 1.0;
	strcpy(x.s.weight_name[2], "nvidia.com/gpu"); /* not in the tree */
	x.s.weight[2] = 100.0;
	char err[256];
	assert_int_equal(afs_settings_check(&x.s, err, sizeof(err)), 0);
	afs_config_resolve(&x.c, &x.s, x.t);
	struct afs_lq a = {0};
	a.consumed[x.cpu] = 1000.0; /* 1 core */
	a.consumed[x.mem] = 1000.0; /* 1000 bytes */
	assert_true(afs_usage(&x.c, &a, 1000) == 1002.0);
	assert_true(afs_usage(&x.c, &a, 2000) == 501.0);  /* weight 2 */
	assert_true(afs_usage(&x.c, &a, 500) == 2004.0);  /* weight 0.5 */
	assert_true(isinf(afs_usage(&x.c, &a, 0)));
	assert_true(afs_compare(afs_usage(&x.c, &a, 0), 1e300) > 0);
	quota_tree_free(x.t);
}

/* usageHalfLifeTime 0: consumed reset at each sample, no penalty. */
static void test_zero_half_life(void **state)
{
	(void)state;
	struct fx x;
	setup_tree(&x);
	x.s.half_life_ns = 0;
	afs_config_resolve(&x.c, &x.s, x.t);
	struct afs_lq a = {0};
	a.consumed[x.cpu] = 700.0;
	a.live[x.cpu] = 3000;
	afs_sample(&x.c, &a, T0);
	assert_true(a.consumed[x.cpu] == 0.0);
	int64_t req[QUOTA_MAX_RESOURCES] = {0};
	req[x.cpu] = 1000;
	afs_admit(&x.c, &a, req);
	assert_true(a.consumed[x.cpu] == 0.0);
	assert_int_equal(a.live[x.cpu], 4000);
	quota_tree_free(x.t);
}

static void test_settings_refused(void **state)
{
	(void)state;
	struct afs_settings s = {.half_life_ns = HOUR_NS, .sampling_ns = 0};
	char err[256];
	assert_int_equal(afs_settings_check(&s, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "usageSamplingInterval"));
	s.sampling_ns = MIN_NS;
	s.n_weights = 1;
	strcpy(s.weight_name[0], "cpu");
	s.weight[0] = -1.0;
	assert_int_equal(afs_settings_check(&s, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "resourceWeights[\"cpu\"]: -1"));
	s.weight[0] = (double)NAN;
	assert_int_equal(afs_settings_check(&s, err, sizeof(err)), -EINVAL);
	s.weight[0] = (double)INFINITY;
	assert_int_equal(afs_settings_check(&s, err, sizeof(err)), -EINVAL);
	s.weight[0] = 0.0;
	assert_int_equal(afs_settings_check(&s, err, sizeof(err)), 0);
	s.n_weights = 2;
	strcpy(s.weight_name[1], "cpu");
	s.weight[1] = 1.0;
	assert_int_equal(afs_settings_check(&s, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "given twice"));
	s.n_weights = AFS_MAX_WEIGHTS + 1;
	assert_int_equal(afs_settings_check(&s, err, sizeof(err)), -EINVAL);
}

/* The tree keeps each LocalQueue's weight and each ClusterQueue's
 * admission mode; the weight orders two LocalQueues of one ClusterQueue
 * (kueue LQWeightAsFloat64: spec.fairSharing.weight, 1 when absent). */
static void test_tree_local_queues(void **state)
{
	(void)state;
	char err[256];
	struct quota_tree *t;
	assert_int_equal(quota_tree_new(&t), 0);
	int f = quota_flavor_add(t, "fa", err, sizeof(err));
	int cpu = quota_resource_add(t, "cpu", err, sizeof(err));
	int cq = quota_cluster_queue_add(t, "cq", NULL, QUOTA_WEIGHT_DEFAULT_MILLI,
					 NULL, err, sizeof(err));
	int other = quota_cluster_queue_add(t, "other", NULL,
					    QUOTA_WEIGHT_DEFAULT_MILLI, NULL, err,
					    sizeof(err));
	int co = quota_cohort_add(t, "co", NULL, QUOTA_WEIGHT_DEFAULT_MILLI, err,
				  sizeof(err));
	assert_true(f >= 0 && cpu >= 0 && cq >= 0 && other >= 0 && co >= 0);
	assert_int_equal(quota_set(t, cq, f, cpu, 4000, QUOTA_NO_LIMIT,
				   QUOTA_NO_LIMIT, err, sizeof(err)), 0);
	int la = quota_local_queue_add(t, "ns", "team-a", "cq", err, sizeof(err));
	int lb = quota_local_queue_add(t, "ns", "team-b", "cq", err, sizeof(err));
	assert_true(la >= 0 && lb >= 0);
	assert_int_equal(quota_local_queue_set_weight(t, lb, 2000, err,
						      sizeof(err)), 0);
	assert_int_equal(quota_local_queue_set_weight(t, la, -1, err, sizeof(err)),
			 -EINVAL);
	assert_non_null(strstr(err, "LocalQueue \"ns/team-a\": "
				    ".spec.fairSharing.weight -1/1000"));
	assert_int_equal(quota_local_queue_set_weight(t, la,
						      QUOTA_WEIGHT_MAX_MILLI + 1,
						      err, sizeof(err)), -EINVAL);
	assert_int_equal(quota_local_queue_set_weight(t, 7, 1000, err,
						      sizeof(err)), -EINVAL);
	assert_int_equal(quota_cluster_queue_set_admission_fair_sharing(t, cq, true), 0);
	assert_int_equal(quota_cluster_queue_set_admission_fair_sharing(t, co, true),
			 -EINVAL);
	assert_int_equal(quota_seal(t, err, sizeof(err)), 0);
	assert_int_equal(quota_local_queue_set_weight(t, la, 1000, err,
						      sizeof(err)), -EBUSY);
	assert_int_equal(quota_cluster_queue_set_admission_fair_sharing(t, cq, false),
			 -EBUSY);

	assert_int_equal(quota_n_local_queues(t), 2);
	assert_int_equal(quota_local_queue_index(t, "ns", "team-b"), lb);
	assert_int_equal(quota_local_queue_index(t, "ns", "nope"), -ENOENT);
	assert_int_equal(quota_local_queue_cq(t, la), cq);
	assert_int_equal(quota_local_queue_cq(t, 2), -ENOENT);
	const char *ns, *name;
	quota_local_queue_name(t, lb, &ns, &name);
	assert_string_equal(ns, "ns");
	assert_string_equal(name, "team-b");
	assert_int_equal(quota_local_queue_weight_milli(t, la),
			 QUOTA_WEIGHT_DEFAULT_MILLI);
	assert_int_equal(quota_local_queue_weight_milli(t, lb), 2000);
	assert_true(quota_node_admission_fair_sharing(t, cq));
	assert_false(quota_node_admission_fair_sharing(t, other));

	/* team-a ran 1 cpu, team-b (weight 2) 1.5 cpu, for a half-life: b's
	 * 0.75 / 2 = 0.375 before a's 0.5. */
	struct afs_settings s = {.half_life_ns = HOUR_NS, .sampling_ns = MIN_NS};
	struct afs_config c;
	afs_config_resolve(&c, &s, t);
	struct afs_lq a = {0}, b = {0};
	a.live[cpu] = 1000;
	b.live[cpu] = 1500;
	afs_sample(&c, &a, T0);
	afs_sample(&c, &b, T0);
	afs_sample(&c, &a, T0 + HOUR_NS);
	afs_sample(&c, &b, T0 + HOUR_NS);
	double ua = afs_usage(&c, &a, quota_local_queue_weight_milli(t, la));
	double ub = afs_usage(&c, &b, quota_local_queue_weight_milli(t, lb));
	assert_true(ua == 0.5 && ub == 0.375);
	assert_true(afs_compare(ub, ua) < 0);
	quota_tree_free(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_alpha),
		cmocka_unit_test(test_decay),
		cmocka_unit_test(test_entry_penalty),
		cmocka_unit_test(test_weights),
		cmocka_unit_test(test_zero_half_life),
		cmocka_unit_test(test_settings_refused),
		cmocka_unit_test(test_tree_local_queues),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
