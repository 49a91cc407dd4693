/* unit.daemon_fair_share: pods waiting for quota are attempted in Kueue's
 * fair-sharing order across the ClusterQueues of one cohort tree (issue
 * 37; daemon/wait.c QW6, quota/fair_share.h), the real daemon in process
 * with a quota tree built by the quota.h calls.
 *
 * The oracle is Kueue's scheduler with fair sharing on
 * (kueue pkg/scheduler/fair_sharing_iterator.go, entryComparer.less:
 * "1: DRF" before "3: FIFO"; computeDRS adds the head's usage with
 * SimulateUsageAddition before DominantResourceShare, which divides by
 * fairSharing.weight, pkg/cache/scheduler/fair_sharing.go): when quota
 * frees for exactly one of two waiting pods, the pod whose ClusterQueue
 * would have the lower weighted share after admitting it is admitted,
 * although the other's pod waited first. Old (activeQ order, the time
 * each parked): the pod that parked first was placed.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "base/base.h"
#include "daemon/daemon.h"
#include "fixture.h"
#include "quota_fixture.h"
#include "quota/quota.h"
#include "shm/shm.h"
#include "shmsched/client.h"

static struct fixture_dir fx;

static int setup(void **state)
{
	(void)state;
	fixture_dir_make(&fx, "fair", 0);
	fixture_write_cluster(&fx, &(struct fixture_nodes){.count = 1, .cpu = "32",
							    .memory = "64Gi"}, NULL);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	fixture_dir_remove(&fx);
	return 0;
}

/* Cohort "ml" with `cohort_cpu` millicores of its own (0: none), and
 * ClusterQueues team-a (fairSharing.weight `weight_a` thousandths) and
 * team-b (weight 1) of 2 cpu nominal each, one flavor; LocalQueues
 * default/qa -> team-a, default/qb -> team-b. */
static struct quota_tree *make_tree(int64_t weight_a, int64_t cohort_cpu)
{
	struct quota_fixture_queue q[] = {
		{.name = "team-a", .local_queue = "qa", .cpu_milli = 2000,
		 .weight_milli = weight_a},
		{.name = "team-b", .local_queue = "qb", .cpu_milli = 2000},
	};
	return quota_fixture_cohort(cohort_cpu, q, 2);
}

/* team-a uses `a_used` 1-cpu pods and team-b `b_used`; then team-b's
 * waiting pod (1 cpu) parks first and team-a's (`a_wait_cpu`) second;
 * then one of team-b's placements is given back (1 cpu free: room for
 * one of the two). Returns the cookie placed: 1 (team-a's) or 2
 * (team-b's); the other still waits. */
static uint64_t contest(struct quota_tree *t, int a_used, int b_used,
			const char *a_wait_cpu)
{
	struct daemon_config cfg = fixture_config(&fx);
	cfg.quota = t;
	struct daemon *d = fixture_start(&cfg);
	struct shmsched_client *c = fixture_connect(fx.sock);
	char err[512];
	uint32_t qa = fixture_cpu_template(c, "qa", "1");
	uint32_t qb = fixture_cpu_template(c, "qb", "1");
	uint32_t qa_wait = fixture_cpu_template(c, "qa", a_wait_cpu);
	struct shmsched_result r;
	uint64_t b_ids[8];
	for (int i = 0; i < a_used; i++)
		fixture_place(c, qa, 100 + (uint64_t)i, SHMSCHED_PLACED);
	for (int i = 0; i < b_used; i++)
		b_ids[i] = fixture_place(c, qb, 200 + (uint64_t)i, SHMSCHED_PLACED);
	fixture_park_one(d, c, qb, 2, 1);      /* team-b's, first */
	fixture_park_one(d, c, qa_wait, 1, 2); /* team-a's, second */
	struct daemon_stats ds;
	assert_int_equal(shmsched_release(c, b_ids[0], err, sizeof(err)), 0);
	assert_int_equal(fixture_await(c, &r, 1, 5000), 1);
	assert_int_equal(r.status, SHMSCHED_PLACED);
	uint64_t placed = r.cookie;
	/* The other was attempted and waits again: room for one only. */
	assert_int_equal(fixture_await(c, &r, 1, 500), 0);
	daemon_get_stats(d, &ds);
	assert_int_equal(ds.pending_unschedulable, 1);
	assert_int_equal(ds.waited_placed, 1);
	shmsched_disconnect(c);
	daemon_stop(d, 1000, &ds);
	return placed;
}

/* Equal weights, no quota of the cohort's own (4 cpu in all): team-b
 * borrows 1 cpu (3 used), team-a uses 1; team-b's pod waited first. One
 * cpu of team-b's given back: team-a's pod would leave team-a borrowing
 * nothing (share 0), team-b's would have team-b borrowing 1 cpu again:
 * team-a's is placed. Old: team-b's (parked first). */
static void test_lower_share_first(void **state)
{
	(void)state;
	struct quota_tree *t = make_tree(QUOTA_WEIGHT_DEFAULT_MILLI, 0);
	assert_int_equal(contest(t, 1, 3, "1"), 1);
	/* team-a at its nominal 2 cpu, team-b at 3: borrowing the rest. */
	assert_int_equal(quota_fixture_usage(t, "team-a"), 2000);
	assert_int_equal(quota_fixture_usage(t, "team-b"), 2000);
	quota_tree_free(t);
}

/* Weights divide (Kueue's PreciseWeightedShare): the cohort has 2 cpu of
 * its own (6 in all); both queues borrow 1 cpu (3 used each); team-b's
 * 1-cpu pod waited first, team-a's asks 500m. One cpu of team-b's given
 * back: after admission team-a would borrow 1.5 cpu, team-b 1 cpu. With
 * team-a's weight 2 its share is 1.5/2 < 1/1: team-a's is placed (old:
 * team-b's, parked first); with weight 1, 1.5 > 1: team-b's. */
static void test_weight(void **state)
{
	(void)state;
	struct quota_tree *t = make_tree(2 * QUOTA_WEIGHT_DEFAULT_MILLI, 2000);
	assert_int_equal(contest(t, 3, 3, "500m"), 1);
	quota_tree_free(t);
	t = make_tree(QUOTA_WEIGHT_DEFAULT_MILLI, 2000);
	assert_int_equal(contest(t, 3, 3, "500m"), 2);
	quota_tree_free(t);
}

/* More pods awake than a poll attempts (half of WAIT_BURST, 32): 20 of
 * team-a's 100m pods wait while the cohort's 4 cpu are in use; two of
 * team-b's given back make room for all 20: all are placed (the awake
 * ones left by one poll are attempted by the next), none twice. */
static void test_many_awake(void **state)
{
	(void)state;
	struct quota_tree *t = make_tree(QUOTA_WEIGHT_DEFAULT_MILLI, 0);
	struct daemon_config cfg = fixture_config(&fx);
	cfg.quota = t;
	struct daemon *d = fixture_start(&cfg);
	struct shmsched_client *c = fixture_connect(fx.sock);
	char err[512];
	uint32_t qa = fixture_cpu_template(c, "qa", "1");
	uint32_t qb = fixture_cpu_template(c, "qb", "1");
	uint32_t small = fixture_cpu_template(c, "qa", "100m");
	struct shmsched_result r[20];
	uint64_t b_ids[2];
	for (int i = 0; i < 2; i++) {
		fixture_place(c, qa, 100 + (uint64_t)i, SHMSCHED_PLACED);
		b_ids[i] = fixture_place(c, qb, 200 + (uint64_t)i, SHMSCHED_PLACED);
	}
	for (uint64_t i = 0; i < 20; i++)
		fixture_park_one(d, c, small, 1 + i, i + 1);
	for (int i = 0; i < 2; i++)
		assert_int_equal(shmsched_release(c, b_ids[i], err, sizeof(err)), 0);
	assert_int_equal(fixture_await(c, r, 20, 10000), 20);
	for (int i = 0; i < 20; i++)
		assert_int_equal(r[i].status, SHMSCHED_PLACED);
	assert_int_equal(quota_fixture_usage(t, "team-a"), 4000);
	struct daemon_stats ds;
	daemon_get_stats(d, &ds);
	assert_int_equal(ds.waited_placed, 20);
	assert_int_equal(ds.pending_unschedulable, 0);
	shmsched_disconnect(c);
	daemon_stop(d, 1000, &ds);
	quota_tree_free(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_lower_share_first),
		cmocka_unit_test(test_weight),
		cmocka_unit_test(test_many_awake),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
