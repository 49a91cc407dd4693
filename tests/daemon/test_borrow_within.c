/* unit.daemon_borrow_within: Kueue's borrowWithinCohort in the real
 * daemon (issue 37): a pod whose ClusterQueue must borrow to admit it,
 * with .spec.preemption.borrowWithinCohort.policy LowerPriority, has pods
 * of lower priority of another ClusterQueue of its cohort evicted
 * (EVICTED notices, quota given back) and is then placed, borrowing.
 *
 * The oracle is Kueue: pkg/scheduler/preemption/classical/
 * hierarchical_preemption.go, classifyPreemptionVariant (a candidate of
 * another ClusterQueue without the hierarchical advantage is
 * ReclaimWhileBorrowing when borrowWithinCohort is not Never and
 * isAboveBorrowingThreshold is false: its priority below the preemptor's
 * and at most maxPriorityThreshold), and classical/candidate_generator.go
 * candidateIsValid (only ReclaimWithoutBorrowing candidates are dropped
 * from the borrowing attempt); apis/kueue/v1beta1/clusterqueue_types.go,
 * BorrowWithinCohort. Cohort "ml": team-a (2 cpu, the preemptor's),
 * team-b (2 cpu, unused: it lends) and team-c (no quota: each of its pods
 * borrows). team-c runs 4 pods of 1 cpu at priority 10 (the cohort is
 * full); team-a's pod of 3 cpu at priority 100 waits: it would end past
 * its nominal 2, so only borrowWithinCohort lets it preempt: team-c's
 * three most recently admitted pods are evicted and team-a's placed.
 * Old code: nothing is evicted (the chooser refused "borrowWithinCohort
 * is not acted on yet"); test_lower_priority_evicted fails on its first
 * notice.
 *
 * Controls: borrowWithinCohort Never (Kueue's default), a
 * maxPriorityThreshold below team-c's priority, and a preemptor of the
 * same priority as team-c's pods: nothing is evicted.
 */
#include <errno.h>
#include <inttypes.h>
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
#include "shmsched/client.h"

static struct fixture_dir fx;

static int setup(void **state)
{
	(void)state;
	fixture_dir_make(&fx, "bwc", 0);
	fixture_write_cluster(&fx, &(struct fixture_nodes){.count = 1, .cpu = "32",
							    .memory = "64Gi",
							    .pods = "500"},
			      "{\"kind\":\"PriorityClass\",\"metadata\":{\"name\":"
			      "\"low\"},\"value\":10},"
			      "{\"kind\":\"PriorityClass\",\"metadata\":{\"name\":"
			      "\"high\"},\"value\":100}");
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	fixture_dir_remove(&fx);
	return 0;
}

/* The cohort above; team-a's .spec.preemption: reclaimWithinCohort Any,
 * borrowWithinCohort `bwc` (with maxPriorityThreshold `threshold` when
 * `has_threshold`). LocalQueues default/qa, default/qc. */
static struct quota_tree *make_tree(enum quota_preempt_policy bwc,
				    bool has_threshold, int32_t threshold)
{
	struct quota_preemption pa = {.reclaim_within_cohort = QUOTA_PREEMPT_ANY,
				      .borrow_within_cohort = bwc,
				      .has_max_priority_threshold = has_threshold,
				      .max_priority_threshold = threshold};
	struct quota_fixture_queue q[] = {
		{.name = "team-a", .local_queue = "qa", .cpu_milli = 2000,
		 .preemption = &pa},
		{.name = "team-b", .cpu_milli = 2000},
		{.name = "team-c", .local_queue = "qc", .cpu_milli = 0},
	};
	return quota_fixture_cohort(0, q, 3);
}

/* A template of LocalQueue `queue`, PriorityClass `cls`, asking `cpu`. */
static uint32_t tmpl(struct shmsched_client *c, const char *queue,
		     const char *cls, const char *cpu)
{
	return quota_fixture_template(c, &(struct quota_fixture_pod){
		.queue = queue, .cpu = cpu, .priority_class = cls});
}

struct run {
	struct quota_tree *t;
	struct daemon *d;
	struct shmsched_client *a, *c;
};

/* The daemon over `t`; team-c's producer has placed its 4 pods (cookies
 * 300...); team-a's pod of 3 cpu and class `a_cls` waits (cookie 1). */
static void start(struct run *r, struct quota_tree *t, const char *a_cls)
{
	struct daemon_config cfg = fixture_config(&fx);
	cfg.slots = 256;
	cfg.quota = t;
	r->t = t;
	r->d = fixture_start(&cfg);
	r->a = fixture_connect_as(fx.sock, "team-a");
	r->c = fixture_connect_as(fx.sock, "team-c");
	uint32_t qc = tmpl(r->c, "qc", "low", "1");
	for (int i = 0; i < 4; i++)
		fixture_place(r->c, qc, 300 + (uint64_t)i, SHMSCHED_PLACED);
	uint32_t qa = tmpl(r->a, "qa", a_cls, "3");
	struct shmsched_pod p = {.cookie = 1, .template_id = qa,
				 .flags = SHMSCHED_WAIT,
				 .deadline_ns = now_ns() + UINT64_C(20000000000)};
	assert_int_equal(shmsched_submit(r->a, &p, 1), 1);
}

static void stop(struct run *r)
{
	struct daemon_stats ds;
	shmsched_disconnect(r->a);
	shmsched_disconnect(r->c);
	daemon_stop(r->d, 1000, &ds);
	quota_tree_free(r->t);
}

static void test_lower_priority_evicted(void **state)
{
	(void)state;
	struct run r;
	start(&r, make_tree(QUOTA_PREEMPT_LOWER_PRIORITY, false, 0), "high");
	/* team-c hears of its three most recently admitted pods. */
	struct shmsched_result res[4];
	assert_int_equal(fixture_await(r.c, res, 3, 5000), 3);
	uint64_t seen = 0;
	for (int i = 0; i < 3; i++) {
		assert_int_equal(res[i].status, SHMSCHED_EVICTED);
		assert_true(res[i].cookie >= 301 && res[i].cookie <= 303);
		seen |= UINT64_C(1) << (res[i].cookie - 300);
	}
	assert_int_equal(seen, 0xe);
	/* team-a's pod is placed, borrowing: 3 of its 2. */
	assert_int_equal(fixture_await(r.a, res, 1, 5000), 1);
	assert_int_equal(res[0].status, SHMSCHED_PLACED);
	assert_int_equal(res[0].cookie, 1);
	assert_int_equal(quota_fixture_usage(r.t, "team-a"), 3000);
	assert_int_equal(quota_fixture_usage(r.t, "team-c"), 1000);
	assert_int_equal(fixture_await(r.c, res, 1, 200), 0);
	struct daemon_stats ds;
	daemon_get_stats(r.d, &ds);
	assert_int_equal(ds.reclaim_victims, 3);
	assert_int_equal(ds.pending_unschedulable, 0);
	stop(&r);
}

/* Nothing evicted, team-a's pod still waiting, after the evictor served
 * at least one reclaim request. */
static void assert_nothing_evicted(struct run *r)
{
	struct daemon_stats ds;
	for (int i = 0; i < 500; i++) {
		daemon_get_stats(r->d, &ds);
		if (ds.reclaim_requests >= 1)
			break;
		usleep(10000);
	}
	struct shmsched_result res;
	assert_int_equal(fixture_await(r->c, &res, 1, 300), 0);
	assert_int_equal(fixture_await(r->a, &res, 1, 10), 0);
	daemon_get_stats(r->d, &ds);
	assert_true(ds.reclaim_requests >= 1);
	assert_int_equal(ds.reclaim_victims, 0);
	assert_int_equal(ds.pending_unschedulable, 1);
	assert_int_equal(quota_fixture_usage(r->t, "team-c"), 4000);
}

/* Kueue's default: borrowWithinCohort Never. */
static void test_never_evicts_nothing(void **state)
{
	(void)state;
	struct run r;
	start(&r, make_tree(QUOTA_PREEMPT_NEVER, false, 0), "high");
	assert_nothing_evicted(&r);
	stop(&r);
}

/* maxPriorityThreshold 5, below team-c's 10: isAboveBorrowingThreshold. */
static void test_threshold_respected(void **state)
{
	(void)state;
	struct run r;
	start(&r, make_tree(QUOTA_PREEMPT_LOWER_PRIORITY, true, 5), "high");
	assert_nothing_evicted(&r);
	stop(&r);
}

/* The preemptor of team-c's own priority: "candidatePriority >=
 * incomingPriority" is above the threshold. */
static void test_equal_priority_not_evicted(void **state)
{
	(void)state;
	struct run r;
	start(&r, make_tree(QUOTA_PREEMPT_LOWER_PRIORITY, false, 0), "low");
	assert_nothing_evicted(&r);
	stop(&r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_lower_priority_evicted),
		cmocka_unit_test(test_never_evicts_nothing),
		cmocka_unit_test(test_threshold_respected),
		cmocka_unit_test(test_equal_priority_not_evicted),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
