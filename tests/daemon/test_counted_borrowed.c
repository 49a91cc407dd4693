/* unit.daemon_counted_borrowed: another host's placements, counted on a
 * shard's take (QV1, QV3 in daemon/etcd_sync.c; qc_charge_counted in
 * daemon/quota_charge.c), carry QC_TAG_BORROWED by the rule a local
 * admission's charge does (QA6): when the charge leaves its ClusterQueue
 * past its nominal quota in a resource it asks. Reclaim evicts a pod of
 * another ClusterQueue only when its tag is so marked (NCY1 in
 * quota/reclaim.c, through the reclaim index's borrowed bucket, RX1), so
 * without the bit a lender could not reclaim the room a dead host's pods
 * borrowed.
 *
 * Kueue's rule: a ClusterQueue is borrowing in a flavor's resource while
 * its usage there exceeds its nominal quota (kueue
 * pkg/cache/scheduler/clusterqueue_snapshot.go, BorrowingWith), and only
 * such a queue's workloads stay candidates for another queue's reclaim
 * (pkg/scheduler/preemption/classical/candidate_generator.go,
 * candidateIsValid: IsWithinNominalInResources).
 *
 * Cohort ml, team-a (reclaimWithinCohort Any) and team-b, 2 cpu nominal
 * each. Four counted 1-cpu placements of team-b: the first two within
 * its 2 cpu, not borrowed; the last two past it, borrowed (the fourth
 * past the cohort's 4 cpu too: forced, as admitted already). A queue,
 * flavor or resource the tree lacks charges nothing (tag 0). The bit
 * stays when qc_replace carries the records into a new tree (the queues
 * renumbered), and the records' frees give every charge back. Old code
 * (charge_read's quota_force_charge and qc_tag): the last two were
 * untagged; with qc_charge_counted returning qc_tag without the bit this
 * test fails at its first assert_true on the bit.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "daemon/quota_charge_internal.h"
#include "quota/quota.h"
#include "quota_fixture.h"
#include "shm/shm.h"

static const struct quota_preemption any = {
	.reclaim_within_cohort = QUOTA_PREEMPT_ANY};

/* team-a then team-b, or the other way round (indices change). */
static struct quota_tree *tree(bool b_first)
{
	struct quota_fixture_queue a = {.name = "team-a", .local_queue = "qa",
					.cpu_milli = 2000, .preemption = &any};
	struct quota_fixture_queue b = {.name = "team-b", .local_queue = "qb",
					.cpu_milli = 2000};
	struct quota_fixture_queue q[2] = {b_first ? b : a, b_first ? a : b};
	return quota_fixture_cohort(0, q, 2);
}

static int64_t usage(const struct quota_tree *t, const char *cq)
{
	int n = quota_cluster_queue_find(t, cq);
	assert_true(n >= 0);
	return quota_usage(t, n, 0, 0);
}

static void test_counted_past_nominal_is_borrowed(void **state)
{
	(void)state;
	struct intern *strings = intern_create();
	assert_non_null(strings);
	struct res_names res;
	res_names_init(&res);
	struct quota_tree *t = tree(false);
	struct quota_charge *q = qc_create(t, strings, &res, 1);
	assert_non_null(q);
	struct placements *pl = placements_create(16);
	assert_non_null(pl);
	placements_set_free_hook(pl, qc_on_free, q);
	int b = quota_cluster_queue_find(t, "team-b");
	struct pod_spec pod = {0};
	pod.request.v[RES_CPU] = 1000;
	uint64_t ids[4];
	bool marked[4];
	qc_enter(q, 1); /* the free hook's gate, as count_shard takes it */
	for (int i = 0; i < 4; i++) {
		uint32_t tag = qc_charge_counted(q, "team-b", "fa", &pod.request);
		int cq, f;
		qc_untag(tag, &cq, &f);
		assert_int_equal(cq, b);
		assert_int_equal(f, 0);
		marked[i] = (tag & QC_TAG_BORROWED) != 0;
		/* As count_locked makes a bound record: tagged, then published. */
		int64_t ix = placements_take(pl);
		assert_true(ix >= 0);
		(void)placements_prepare(pl, (uint32_t)ix, 0, 0, &pod, NULL,
					 (uint64_t)i + 1, &ids[i]);
		placements_set_quota(pl, (uint32_t)ix, tag);
		placements_publish(pl, (uint32_t)ix, PLACEMENT_OWNER_BOUND);
	}
	assert_false(marked[0]);
	assert_false(marked[1]); /* 2 cpu: at nominal, not past it */
	assert_true(marked[2]);  /* 3 cpu: past team-b's 2 */
	assert_true(marked[3]);  /* 4 cpu: past team-b's 2 (forced) */
	assert_int_equal(usage(t, "team-b"), 4000);
	/* Nothing the tree holds: tag 0, nothing charged. */
	assert_int_equal(qc_charge_counted(q, "team-z", "fa", &pod.request), 0u);
	assert_int_equal(qc_charge_counted(q, "team-b", "gpu-flavor", &pod.request), 0u);
	assert_int_equal(qc_charge_counted(q, "team-b", "", &pod.request), 0u);
	assert_int_equal(usage(t, "team-b"), 4000);
	/* team-a's own counted pod, within its nominal though the cohort
	 * is full: not borrowed. */
	uint32_t ta = qc_charge_counted(q, "team-a", "fa", &pod.request);
	assert_int_not_equal(ta, 0u);
	assert_int_equal(ta & QC_TAG_BORROWED, 0u);
	int a, fa;
	qc_untag(ta, &a, &fa);
	int64_t one[QUOTA_MAX_RESOURCES] = {1000};
	quota_release(t, a, fa, one);
	qc_leave(q, 1);

	/* qc_replace keeps the bit, the queues renumbered (QA6). */
	struct quota_tree *t2 = tree(true), *old = NULL;
	struct qc_carried carried;
	assert_int_equal(qc_replace(q, t2, pl, &old, &carried), 0);
	assert_ptr_equal(old, t);
	assert_int_equal(carried.carried, 4);
	assert_int_equal(carried.dropped, 0);
	int b2 = quota_cluster_queue_find(t2, "team-b");
	assert_int_not_equal(b2, b);
	for (int i = 0; i < 4; i++) {
		const struct placement_record *r = placements_get(pl, ids[i]);
		assert_non_null(r);
		int cq, f;
		qc_untag(r->quota, &cq, &f);
		assert_int_equal(cq, b2);
		assert_int_equal((r->quota & QC_TAG_BORROWED) != 0, marked[i]);
	}
	assert_int_equal(usage(t2, "team-b"), 4000);
	quota_tree_free(t);
	for (int i = 0; i < 4; i++)
		placements_free(pl, ids[i]);
	assert_int_equal(usage(t2, "team-b"), 0);
	assert_int_equal(usage(t2, "team-a"), 0);
	placements_destroy(pl);
	qc_destroy(q);
	quota_tree_free(t2);
	intern_destroy(strings);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_counted_past_nominal_is_borrowed),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
