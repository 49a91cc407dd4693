/* unit.quota_metrics: Kueue's quota metrics of a tree (quota_metrics_text,
 * quota/quota_metrics.c) after charges, on the teams of
 * docs/guides/quotas.md (examples/quotas/teams.json), each figure worked
 * out by hand: the names, label order and +Inf for an absent limit as
 * kubernetes-sigs/kueue pkg/metrics/metrics.go has them, cpu in cores as
 * pkg/cache/scheduler/clusterqueue.go reports it (AsApproximateFloat64);
 * usage back to 0 after the release; the output bounded to max_queues
 * ClusterQueues with a line saying how many were left out; a buffer too
 * small cut, NUL-terminated, with the whole length returned.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "quota/quota.h"

#define NO QUOTA_NO_LIMIT
#define W1 QUOTA_WEIGHT_DEFAULT_MILLI
#define GI (INT64_C(1) << 30)

static char err[512];
static char text[65536];

struct teams {
	struct quota_tree *t;
	int a, b, ondemand, spot, cpu, mem;
};

/* examples/quotas/teams.json's Kueue objects. */
static struct teams teams(void)
{
	struct teams x;
	assert_int_equal(quota_tree_new(&x.t), 0);
	struct quota_tree *t = x.t;
	x.ondemand = quota_flavor_add(t, "on-demand", err, sizeof(err));
	x.spot = quota_flavor_add(t, "spot", err, sizeof(err));
	x.cpu = quota_resource_add(t, "cpu", err, sizeof(err));
	x.mem = quota_resource_add(t, "memory", err, sizeof(err));
	assert_true(quota_cohort_add(t, "org", NULL, W1, err, sizeof(err)) >= 0);
	x.a = quota_cluster_queue_add(t, "team-a", "org", W1, NULL, err, sizeof(err));
	x.b = quota_cluster_queue_add(t, "team-b", "org", W1, NULL, err, sizeof(err));
	assert_true(x.a >= 0 && x.b >= 0);
	assert_int_equal(quota_set(t, x.a, x.ondemand, x.cpu, 4000, 2000, NO, err,
				   sizeof(err)), 0);
	assert_int_equal(quota_set(t, x.a, x.ondemand, x.mem, 16 * GI, 8 * GI, NO,
				   err, sizeof(err)), 0);
	assert_int_equal(quota_set(t, x.a, x.spot, x.cpu, 2000, NO, NO, err,
				   sizeof(err)), 0);
	assert_int_equal(quota_set(t, x.a, x.spot, x.mem, 8 * GI, NO, NO, err,
				   sizeof(err)), 0);
	assert_int_equal(quota_set(t, x.b, x.ondemand, x.cpu, 6000, NO, 3000, err,
				   sizeof(err)), 0);
	assert_int_equal(quota_set(t, x.b, x.ondemand, x.mem, 24 * GI, NO, 12 * GI,
				   err, sizeof(err)), 0);
	assert_int_equal(quota_set(t, x.b, x.spot, x.cpu, 0, NO, NO, err,
				   sizeof(err)), 0);
	assert_int_equal(quota_set(t, x.b, x.spot, x.mem, 0, NO, NO, err,
				   sizeof(err)), 0);
	assert_int_equal(quota_seal(t, err, sizeof(err)), 0);
	return x;
}

static void assert_line(const char *line)
{
	char want[512];
	snprintf(want, sizeof(want), "\n%s\n", line);
	if (strstr(text, want) == NULL)
		fail_msg("no line \"%s\" in:\n%s", line, text);
}

static void assert_no(const char *needle)
{
	if (strstr(text, needle) != NULL)
		fail_msg("\"%s\" found in:\n%s", needle, text);
}

#define SERIES(name, cq, flavor, res) \
	name "{cohort=\"org\",cluster_queue=\"" cq "\",flavor=\"" flavor \
	"\",resource=\"" res "\"}"

static void test_after_charges(void **state)
{
	(void)state;
	struct teams x = teams();
	/* The guide's a-1 (3 cores, 8Gi) and a-2 (2 cores, 1Gi) on demand for
	 * team-a, b-1 (4 cores, 4Gi) for team-b. */
	int64_t a1[2] = {3000, 8 * GI}, a2[2] = {2000, GI}, b1[2] = {4000, 4 * GI};
	assert_int_equal(quota_try_charge(x.t, x.a, x.ondemand, a1), 0);
	assert_int_equal(quota_try_charge(x.t, x.a, x.ondemand, a2), 0);
	assert_int_equal(quota_try_charge(x.t, x.b, x.ondemand, b1), 0);
	size_t n = quota_metrics_text(x.t, QUOTA_MAX_CLUSTER_QUEUES, text, sizeof(text));
	assert_int_equal(n, strlen(text));

	assert_line("# TYPE kueue_cluster_queue_resource_usage gauge");
	assert_line(SERIES("kueue_cluster_queue_resource_usage", "team-a",
			   "on-demand", "cpu") " 5");
	assert_line(SERIES("kueue_cluster_queue_resource_usage", "team-a",
			   "on-demand", "memory") " 9663676416"); /* 9Gi */
	assert_line(SERIES("kueue_cluster_queue_resource_usage", "team-a", "spot",
			   "cpu") " 0");
	assert_line(SERIES("kueue_cluster_queue_resource_usage", "team-b",
			   "on-demand", "cpu") " 4");
	assert_line(SERIES("kueue_cluster_queue_resource_reservation", "team-b",
			   "on-demand", "cpu") " 4");
	assert_line(SERIES("kueue_cluster_queue_nominal_quota", "team-a",
			   "on-demand", "cpu") " 4");
	assert_line(SERIES("kueue_cluster_queue_nominal_quota", "team-b", "spot",
			   "cpu") " 0");
	assert_line(SERIES("kueue_cluster_queue_borrowing_limit", "team-a",
			   "on-demand", "cpu") " 2");
	assert_line(SERIES("kueue_cluster_queue_borrowing_limit", "team-b",
			   "on-demand", "cpu") " +Inf");
	assert_line(SERIES("kueue_cluster_queue_lending_limit", "team-b",
			   "on-demand", "memory") " 12884901888"); /* 12Gi */
	assert_line(SERIES("kueue_cluster_queue_lending_limit", "team-a",
			   "on-demand", "cpu") " +Inf");
	/* team-b is within its nominal quota: share 0. team-a borrows 1 core
	 * (5 of 4 on demand) of the 9 the cohort could lend it (on-demand 4 +
	 * team-b's lendable 3, spot 2 + 0): 1000 x 1000 / 9000, over weight 1. */
	assert_line("kueue_cluster_queue_weighted_share{cluster_queue=\"team-b\","
		    "cohort=\"org\"} 0");
	const char *share = strstr(text, "kueue_cluster_queue_weighted_share{"
				   "cluster_queue=\"team-a\",cohort=\"org\"} ");
	assert_non_null(share);
	double v = strtod(strchr(share, '}') + 2, NULL);
	assert_true(v > 110.9 && v < 111.2);
	assert_line("kueue_cohort_weighted_share{cohort=\"org\"} 0");
	assert_no("more ClusterQueue");

	/* The release gives it back: usage 0 again. */
	quota_release(x.t, x.a, x.ondemand, a1);
	quota_release(x.t, x.a, x.ondemand, a2);
	quota_metrics_text(x.t, QUOTA_MAX_CLUSTER_QUEUES, text, sizeof(text));
	assert_line(SERIES("kueue_cluster_queue_resource_usage", "team-a",
			   "on-demand", "cpu") " 0");
	assert_line("kueue_cluster_queue_weighted_share{cluster_queue=\"team-a\","
		    "cohort=\"org\"} 0");
	quota_tree_free(x.t);
}

static void test_bounded(void **state)
{
	(void)state;
	struct teams x = teams();
	quota_metrics_text(x.t, 1, text, sizeof(text));
	assert_line(SERIES("kueue_cluster_queue_nominal_quota", "team-a",
			   "on-demand", "cpu") " 4");
	assert_no("cluster_queue=\"team-b\"");
	assert_line("# kueue_cluster_queue_nominal_quota: 1 more ClusterQueue not "
		    "shown (at most 1)");
	assert_line("# kueue_cluster_queue_weighted_share: 1 more ClusterQueue not "
		    "shown (at most 1)");

	/* A buffer too small: cut and NUL-terminated, the whole length
	 * returned; with that much room, the same text whole. */
	char small[64];
	memset(small, 'x', sizeof(small));
	size_t need = quota_metrics_text(x.t, QUOTA_MAX_CLUSTER_QUEUES, small,
					 sizeof(small));
	assert_true(need > sizeof(small));
	assert_int_equal(strlen(small), sizeof(small) - 1);
	char *whole = malloc(need + 1);
	assert_non_null(whole);
	assert_int_equal(quota_metrics_text(x.t, QUOTA_MAX_CLUSTER_QUEUES, whole,
					    need + 1), need);
	assert_int_equal(strlen(whole), need);
	assert_memory_equal(whole, small, sizeof(small) - 1);
	free(whole);
	assert_int_equal(quota_metrics_text(x.t, QUOTA_MAX_CLUSTER_QUEUES, NULL, 0),
			 need);
	quota_tree_free(x.t);
}

/* A name with a quote and a backslash is escaped as the text format asks
 * (the decoder refuses such names in files; the tree itself does not). */
static void test_escaped(void **state)
{
	(void)state;
	struct quota_tree *t;
	assert_int_equal(quota_tree_new(&t), 0);
	int f = quota_flavor_add(t, "f", err, sizeof(err));
	int r = quota_resource_add(t, "nvidia.com/gpu", err, sizeof(err));
	int q = quota_cluster_queue_add(t, "a\"b\\c", NULL, W1, NULL, err, sizeof(err));
	assert_true(f >= 0 && r >= 0 && q >= 0);
	assert_int_equal(quota_set(t, q, f, r, 8, NO, NO, err, sizeof(err)), 0);
	assert_int_equal(quota_seal(t, err, sizeof(err)), 0);
	quota_metrics_text(t, QUOTA_MAX_CLUSTER_QUEUES, text, sizeof(text));
	assert_line("kueue_cluster_queue_nominal_quota{cohort=\"\",cluster_queue="
		    "\"a\\\"b\\\\c\",flavor=\"f\",resource=\"nvidia.com/gpu\"} 8");
	quota_tree_free(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_after_charges),
		cmocka_unit_test(test_bounded),
		cmocka_unit_test(test_escaped),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
