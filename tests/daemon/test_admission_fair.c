/* unit.daemon_admission_fair: Kueue's admission fair sharing (KEP-4136)
 * in the real daemon, in process: within a ClusterQueue whose
 * admissionScope.admissionMode is UsageBasedAdmissionFairSharing, the
 * waiting pod of the LocalQueue with the lower decayed usage / weight is
 * admitted first (daemon/wait.c QW8; quota/admission_usage.h), the
 * daemon's clock for the usage stepped by hand.
 *
 * The oracle is Kueue: pkg/cache/queue/cluster_queue.go orders a
 * ClusterQueue's pending workloads by "cmp.Compare(usageA, usageB)" of
 * their LocalQueues before "baseCmp(a, b)"; the usage is
 * pkg/util/admissionfairsharing CalculateUsage of the consumed resources,
 * decayed by CalculateDecayedConsumed with alpha
 * "1.0 - math.Pow(0.5, sampling/halfLifeTime)". LocalQueue qa ran 2 cpu
 * for one half-life (consumed about 1 cpu), qb nothing: qb's pod goes
 * first although qa's waited first. Old (and with the ClusterQueue's mode
 * off): the head of the ClusterQueue, qa's.
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
#include "bind/bind.h"
#include "daemon/admission_fair_internal.h"
#include "daemon/daemon.h"
#include "fixture.h"
#include "quota/quota.h"
#include "shm/shm.h"
#include "shmsched/client.h"

#define HOUR_NS (UINT64_C(3600) * 1000000000u)

static struct fixture_dir fx;
/* The usage's clock (fixture_clock_ns): __atomic, the workers read it. */
static uint64_t clk;

static int setup(void **state)
{
	(void)state;
	fixture_dir_make(&fx, "admfair", 0);
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

/* ClusterQueue "team" (2 cpu nominal, admission fair sharing `afs`),
 * LocalQueues default/qa (weight 1), default/qb (weight `wb`
 * thousandths) and default/qc (weight 1). */
static struct quota_tree *make_tree(bool afs, int64_t wb)
{
	struct quota_tree *t;
	char err[256];
	assert_int_equal(quota_tree_new(&t), 0);
	int f = quota_flavor_add(t, "fa", err, sizeof(err));
	int cpu = quota_resource_add(t, "cpu", err, sizeof(err));
	int cq = quota_cluster_queue_add(t, "team", NULL,
					 QUOTA_WEIGHT_DEFAULT_MILLI, NULL, err,
					 sizeof(err));
	assert_true(f >= 0 && cpu >= 0 && cq >= 0);
	assert_int_equal(quota_set(t, cq, f, cpu, 2000, QUOTA_NO_LIMIT,
				   QUOTA_NO_LIMIT, err, sizeof(err)), 0);
	assert_int_equal(quota_cluster_queue_set_admission_fair_sharing(t, cq, afs), 0);
	assert_true(quota_local_queue_add(t, "default", "qa", "team", err,
					  sizeof(err)) >= 0);
	int lb = quota_local_queue_add(t, "default", "qb", "team", err, sizeof(err));
	assert_true(lb >= 0);
	assert_true(quota_local_queue_add(t, "default", "qc", "team", err,
					  sizeof(err)) >= 0);
	assert_int_equal(quota_local_queue_set_weight(t, lb, wb, err, sizeof(err)), 0);
	if (quota_seal(t, err, sizeof(err)) < 0)
		fail_msg("quota_seal: %s", err);
	return t;
}

/* qa runs `a_used` 1-cpu pods and qb `b_used` (together the queue's 2
 * cpu); one half-life passes on the usage's clock; qa's waiting pod
 * parks first, qb's second; one of qa's placements is given back (room
 * for one). Returns the cookie placed: 1 (qa's) or 2 (qb's). */
static uint64_t contest(struct quota_tree *t, const struct afs_settings *s,
			int a_used, int b_used)
{
	__atomic_store_n(&clk, UINT64_C(1000000000), __ATOMIC_RELAXED);
	struct daemon_config cfg = fixture_config(&fx);
	cfg.quota = t;
	cfg.admission_fair_sharing = s;
	cfg.afs_clock_ns = fixture_clock_ns;
	cfg.afs_clock_arg = &clk;
	struct daemon *d = fixture_start(&cfg);
	struct shmsched_client *c = fixture_connect(fx.sock);
	char err[512];
	uint32_t qa = fixture_cpu_template(c, "qa", "1");
	uint32_t qb = fixture_cpu_template(c, "qb", "1");
	struct shmsched_result r;
	uint64_t a_ids[4];
	for (int i = 0; i < a_used; i++)
		a_ids[i] = fixture_place(c, qa, 100 + (uint64_t)i, SHMSCHED_PLACED);
	for (int i = 0; i < b_used; i++)
		fixture_place(c, qb, 200 + (uint64_t)i, SHMSCHED_PLACED);
	/* One half-life on: the next poll samples (consumed = live x 0.5). */
	__atomic_fetch_add(&clk, HOUR_NS, __ATOMIC_RELAXED);
	fixture_park_one(d, c, qa, 1, 1); /* qa's, first */
	fixture_park_one(d, c, qb, 2, 2); /* qb's, second */
	assert_int_equal(shmsched_release(c, a_ids[0], err, sizeof(err)), 0);
	assert_int_equal(fixture_await(c, &r, 1, 5000), 1);
	assert_int_equal(r.status, SHMSCHED_PLACED);
	uint64_t placed = r.cookie;
	/* The other was attempted and waits again: room for one only. */
	assert_int_equal(fixture_await(c, &r, 1, 500), 0);
	struct daemon_stats ds;
	daemon_get_stats(d, &ds);
	assert_int_equal(ds.pending_unschedulable, 1);
	shmsched_disconnect(c);
	daemon_stop(d, 1000, &ds);
	return placed;
}

/* qa ran 2 cpu for the half-life, qb nothing: qb's pod first. */
static void test_lower_usage_first(void **state)
{
	(void)state;
	struct afs_settings s = {.half_life_ns = HOUR_NS,
				 .sampling_ns = UINT64_C(60000000000)};
	struct quota_tree *t = make_tree(true, QUOTA_WEIGHT_DEFAULT_MILLI);
	assert_int_equal(contest(t, &s, 2, 0), 2);
	quota_tree_free(t);
	/* The ClusterQueue's mode off (NoAdmissionFairSharing): the head,
	 * qa's, as without admission fair sharing. */
	t = make_tree(false, QUOTA_WEIGHT_DEFAULT_MILLI);
	assert_int_equal(contest(t, &s, 2, 0), 1);
	quota_tree_free(t);
	/* No settings (Kueue's Configuration without admissionFairSharing):
	 * the same. */
	t = make_tree(true, QUOTA_WEIGHT_DEFAULT_MILLI);
	assert_int_equal(contest(t, NULL, 2, 0), 1);
	quota_tree_free(t);
}

/* The LocalQueue's weight divides (Kueue's LQWeightAsFloat64): each ran 1
 * cpu, so both consumed the same; qb's weight 2 halves its usage: qb's
 * pod first. With weight 1, equal usage: the base order, qa's (parked
 * first). */
static void test_weight(void **state)
{
	(void)state;
	struct afs_settings s = {.half_life_ns = HOUR_NS,
				 .sampling_ns = UINT64_C(60000000000)};
	struct quota_tree *t = make_tree(true, 2 * QUOTA_WEIGHT_DEFAULT_MILLI);
	assert_int_equal(contest(t, &s, 1, 1), 2);
	quota_tree_free(t);
	t = make_tree(true, QUOTA_WEIGHT_DEFAULT_MILLI);
	assert_int_equal(contest(t, &s, 1, 1), 1);
	quota_tree_free(t);
}

/* Settings Kueue's validation refuses stop the start, naming the field. */
static void test_settings_refused(void **state)
{
	(void)state;
	struct afs_settings s = {.half_life_ns = HOUR_NS, .sampling_ns = 0};
	struct quota_tree *t = make_tree(true, QUOTA_WEIGHT_DEFAULT_MILLI);
	struct daemon_config cfg = fixture_config(&fx);
	cfg.quota = t;
	cfg.admission_fair_sharing = &s;
	char err[512];
	struct daemon *d = daemon_start(&cfg, err, sizeof(err));
	assert_null(d);
	assert_non_null(strstr(err, "usageSamplingInterval"));
	quota_tree_free(t);
}

/* A tree of resources `res` (in that order) and LocalQueues ns/`lqs`
 * (in that order) of one ClusterQueue; LocalQueue "b" weighs `wb`. */
static struct quota_tree *ledger_tree(const char *const *res, int n_res,
				      const char *const *lqs, int n_lqs,
				      int64_t wb)
{
	struct quota_tree *t;
	char err[256];
	assert_int_equal(quota_tree_new(&t), 0);
	int f = quota_flavor_add(t, "fa", err, sizeof(err));
	int cq = quota_cluster_queue_add(t, "team", NULL,
					 QUOTA_WEIGHT_DEFAULT_MILLI, NULL, err,
					 sizeof(err));
	for (int r = 0; r < n_res; r++) {
		int ri = quota_resource_add(t, res[r], err, sizeof(err));
		assert_int_equal(quota_set(t, cq, f, ri, 1000000, QUOTA_NO_LIMIT,
					   QUOTA_NO_LIMIT, err, sizeof(err)), 0);
	}
	for (int i = 0; i < n_lqs; i++) {
		int lq = quota_local_queue_add(t, "ns", lqs[i], "team", err,
					       sizeof(err));
		assert_true(lq >= 0);
		if (strcmp(lqs[i], "b") == 0)
			assert_int_equal(quota_local_queue_set_weight(t, lq, wb, err,
								      sizeof(err)), 0);
	}
	if (quota_seal(t, err, sizeof(err)) < 0)
		fail_msg("quota_seal: %s", err);
	return t;
}

/* The ledger alone, on a clock stepped by hand: admissions (with the
 * entry penalty), releases, one sample a sampling interval, and a swap
 * of the tree (`shmsched queue apply`) that renumbers LocalQueues and
 * resources: each LocalQueue keeps its usage by its name, a new one
 * starts from nothing, a deleted one's is gone. */
static void test_ledger_rebind(void **state)
{
	(void)state;
	static const char *const res1[] = {"cpu", "memory"};
	static const char *const res2[] = {"memory", "nvidia.com/gpu", "cpu"};
	static const char *const lqs1[] = {"a", "b", "gone"};
	static const char *const lqs2[] = {"new", "b", "a"};
	struct quota_tree *t1 = ledger_tree(res1, 2, lqs1, 3, 2000);
	struct quota_tree *t2 = ledger_tree(res2, 3, lqs2, 3, 1000);
	/* Half-life 1h, sampling 1h: the penalty's alpha is 0.5. */
	struct afs_settings s = {.half_life_ns = HOUR_NS, .sampling_ns = HOUR_NS};
	__atomic_store_n(&clk, UINT64_C(1000000000), __ATOMIC_RELAXED);
	struct afs_ledger *l = afsl_create(&s, t1, fixture_clock_ns, &clk);
	assert_non_null(l);
	afsl_tick(l); /* stamps */
	int a1 = quota_local_queue_index(t1, "ns", "a");
	int b1 = quota_local_queue_index(t1, "ns", "b");
	int64_t two_cpu[QUOTA_MAX_RESOURCES] = {2000, 0};
	afsl_admit(l, a1, two_cpu); /* live 2 cpu; penalty 2000m x 0.5 */
	assert_true(afsl_usage(l, a1) == 1.0);
	afsl_live(l, b1, two_cpu); /* a resumed placement: no penalty */
	assert_true(afsl_usage(l, b1) == 0.0);
	afsl_tick(l); /* not due */
	assert_true(afsl_usage(l, a1) == 1.0);
	__atomic_fetch_add(&clk, HOUR_NS, __ATOMIC_RELAXED);
	afsl_tick(l);
	/* a: 1000 x 0.5 + 2000 x 0.5 = 1500m; b: 1000m over weight 2. */
	assert_true(afsl_usage(l, a1) == 1.5);
	assert_true(afsl_usage(l, b1) == 0.5);
	assert_true(afsl_usage(l, 7) == 0.0); /* out of range: nothing */

	assert_int_equal(afsl_rebind(l, t2), 0);
	int a2 = quota_local_queue_index(t2, "ns", "a");
	int b2 = quota_local_queue_index(t2, "ns", "b");
	int n2 = quota_local_queue_index(t2, "ns", "new");
	assert_true(a2 != a1 && b2 == b1); /* renumbered */
	assert_true(afsl_usage(l, a2) == 1.5);
	assert_true(afsl_usage(l, b2) == 1.0); /* b's weight is 1 now */
	assert_true(afsl_usage(l, n2) == 0.0);
	/* a's live 2 cpu carried to cpu's new index: released there, it
	 * decays toward nothing. */
	int64_t two_cpu2[QUOTA_MAX_RESOURCES] = {0, 0, 2000};
	afsl_release(l, a2, two_cpu2);
	__atomic_fetch_add(&clk, HOUR_NS, __ATOMIC_RELAXED);
	afsl_tick(l);
	assert_true(afsl_usage(l, a2) == 0.75);
	afsl_destroy(l);
	quota_tree_free(t1);
	quota_tree_free(t2);
}

/* Durable (issue 37 item 3: "kept in the durable store so a restart
 * does not reset fairness"): qa's usage is saved at the stop and read
 * back at the next start from the store (--state-dir), so after the
 * restart qb's pod still goes first. Without the store's record both
 * LocalQueues start from nothing, and qa's pod, parked first, would go
 * first. */
static void test_restart_keeps_usage(void **state)
{
	(void)state;
	char store[160];
	snprintf(store, sizeof(store), "%s/store", fx.dir);
	struct afs_settings s = {.half_life_ns = HOUR_NS,
				 .sampling_ns = UINT64_C(60000000000)};
	__atomic_store_n(&clk, UINT64_C(1000000000), __ATOMIC_RELAXED);
	struct quota_tree *t = make_tree(true, QUOTA_WEIGHT_DEFAULT_MILLI);
	struct daemon_config cfg = fixture_config(&fx);
	cfg.quota = t;
	cfg.admission_fair_sharing = &s;
	cfg.afs_clock_ns = fixture_clock_ns;
	cfg.afs_clock_arg = &clk;
	cfg.state_dir = store;
	cfg.durability = STORE_DURABILITY_SYNC;
	struct daemon *d = fixture_start(&cfg);
	struct shmsched_client *c = fixture_connect(fx.sock);
	char err[512];
	uint32_t qa = fixture_cpu_template(c, "qa", "1");
	struct shmsched_result r;
	for (int i = 0; i < 2; i++)
		fixture_place(c, qa, 100 + (uint64_t)i, SHMSCHED_PLACED);
	__atomic_fetch_add(&clk, HOUR_NS, __ATOMIC_RELAXED);
	shmsched_disconnect(c);
	struct daemon_stats ds;
	daemon_stop(d, 1000, &ds);
	quota_tree_free(t);

	/* The restart: a new tree (the file read again), the same store. */
	t = make_tree(true, QUOTA_WEIGHT_DEFAULT_MILLI);
	cfg.quota = t;
	d = fixture_start(&cfg);
	c = fixture_connect(fx.sock);
	/* A store's placements come back charged to no quota (its record
	 * keeps none): qc fills the queue now, the same for both. */
	qa = fixture_cpu_template(c, "qa", "1");
	uint32_t qb = fixture_cpu_template(c, "qb", "1");
	uint32_t qc = fixture_cpu_template(c, "qc", "1");
	uint64_t c_ids[2];
	for (int i = 0; i < 2; i++)
		c_ids[i] = fixture_place(c, qc, 300 + (uint64_t)i, SHMSCHED_PLACED);
	fixture_park_one(d, c, qa, 1, 1); /* qa's, first */
	fixture_park_one(d, c, qb, 2, 2); /* qb's, second */
	assert_int_equal(shmsched_release(c, c_ids[0], err, sizeof(err)), 0);
	assert_int_equal(fixture_await(c, &r, 1, 5000), 1);
	assert_int_equal(r.status, SHMSCHED_PLACED);
	assert_int_equal(r.cookie, 2);
	shmsched_disconnect(c);
	daemon_stop(d, 1000, &ds);
	quota_tree_free(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_lower_usage_first),
		cmocka_unit_test(test_weight),
		cmocka_unit_test(test_settings_refused),
		cmocka_unit_test(test_ledger_rebind),
		cmocka_unit_test(test_restart_keeps_usage),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
