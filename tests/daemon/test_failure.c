/* unit.failure: OP_FAILURE through the real daemon (in process): a
 * producer reports its own placements' failures, never another's
 * (EPERM, as OP_RELEASE refuses); failures of one template on 3 nodes of
 * one pool (node.kubernetes.io/instance-type=bad) quarantine that pool
 * for it: its next pod, which only that pool can take, is unschedulable
 * with a message naming the quarantine (counted refused, the pool's 5
 * nodes counted held: on the old code neither count existed), while
 * another template still places there; an admin's release
 * (shmsched_pools) lifts it, and a producer may not release.
 * test_crash_pair: a template's failure on a node scores that node lower
 * for the template's next pods, within the window (its own note). */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "daemon/daemon.h"
#include "fixture.h"

static struct fixture_dir fx;

/* The cluster file: nodes n0..n(nodes-1) of `cpu` cpus, the first `bad`
 * of pool "bad", the rest of "good". */
static void write_nodes(int nodes, int bad, int cpu)
{
	const char *pool[32];
	char cpu_s[16];
	assert_true(nodes <= 32);
	for (int i = 0; i < nodes; i++)
		pool[i] = i < bad ? "bad" : "good";
	snprintf(cpu_s, sizeof(cpu_s), "%d", cpu);
	fixture_write_cluster(&fx, &(struct fixture_nodes){.count = nodes,
							    .cpu = cpu_s,
							    .memory = "16Gi",
							    .pool = pool}, NULL);
}

static int setup(void **state)
{
	(void)state;
	fixture_dir_make(&fx, "failure", 0);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	fixture_dir_remove(&fx);
	return 0;
}

/* A template of 3-cpu pods (one a node) named `name`, on pool `pool`
 * (NULL: any). */
static uint32_t tpl(struct shmsched_client *c, const char *name, const char *pool)
{
	char json[512], sel[128] = "";
	if (pool != NULL)
		snprintf(sel, sizeof(sel), "\"nodeSelector\":{\"node.kubernetes.io/"
			 "instance-type\":\"%s\"},", pool);
	snprintf(json, sizeof(json), "{\"kind\":\"Pod\",\"metadata\":{\"name\":"
		 "\"%s\",\"namespace\":\"default\"},\"spec\":{%s\"containers\":"
		 "[{\"name\":\"c\",\"resources\":{\"requests\":{\"cpu\":\"3\"}}}]}}",
		 name, sel);
	return fixture_template(c, json);
}

static void test_report_quarantine_release(void **state)
{
	(void)state;
	/* 5 nodes of pool "bad", 20 of "good" (the 20 % cap: 5 of 25), 4
	 * cpus each. */
	write_nodes(25, 5, 4);
	struct daemon_config cfg = fixture_config(&fx);
	struct daemon *d = fixture_start(&cfg);
	char err[512];
	struct shmsched_client *a = fixture_connect_as(fx.sock, "a");
	struct shmsched_client *b = fixture_connect_as(fx.sock, "b");
	struct shmsched_client *admin = fixture_connect(fx.admin);
	uint32_t web = tpl(a, "web", "bad"), other = tpl(b, "other", "bad");
	struct shmsched_result r;
	uint64_t ids[3];
	for (int i = 0; i < 3; i++) {
		fixture_place_one(a, web, (uint64_t)i + 1, &r);
		assert_int_equal(r.status, SHMSCHED_PLACED);
		ids[i] = r.placement_id;
	}
	/* Another producer may not report a's pods. */
	assert_int_equal(shmsched_report_failure(b, ids[0], "x", err, sizeof(err)),
			 -EPERM);
	assert_non_null(strstr(err, "belongs to another producer"));
	/* Nor may a producer list or release pools. */
	assert_int_equal(shmsched_pools(a, NULL, NULL, NULL, NULL, NULL, err,
					sizeof(err)), -EPERM);
	/* 3 failures of 3 placements on 3 nodes: the third trips. */
	assert_int_equal(shmsched_report_failure(a, ids[0], "CrashLoopBackOff", err,
						 sizeof(err)), SHMSCHED_FAILURE_COUNTED);
	assert_int_equal(shmsched_report_failure(a, ids[1], NULL, err, sizeof(err)),
			 SHMSCHED_FAILURE_COUNTED);
	assert_int_equal(shmsched_report_failure(a, ids[2], NULL, err, sizeof(err)),
			 SHMSCHED_FAILURE_TRIPPED);
	struct daemon_quarantine dq;
	daemon_quarantine_counts(d, &dq);
	assert_int_equal(dq.quarantined, 1);
	assert_int_equal(dq.trips, 1);
	assert_int_equal(dq.failures, 3);
	/* web's next pod: only pool bad could take it. */
	fixture_place_one(a, web, 10, &r);
	assert_int_equal(r.status, SHMSCHED_UNSCHEDULABLE);
	if (strstr(r.message, "pool bad quarantined for template default/web: 3 "
		   "failures on 3 nodes in 60 s") == NULL)
		fail_msg("message: %s", r.message);
	/* Counted as refused by the quarantine (shmsched_pool_refused_total),
	 * the pool's 5 nodes held (shmsched_pool_quarantined_nodes). */
	daemon_quarantine_counts(d, &dq);
	assert_int_equal(dq.refused, 1);
	assert_int_equal(dq.nodes_quarantined, 5);
	/* Another template is not held off the pool. */
	fixture_place_one(b, other, 11, &r);
	assert_int_equal(r.status, SHMSCHED_PLACED);
	/* The admin sees and releases it. */
	unsigned held = 0, released = 0;
	char *text = NULL;
	assert_int_equal(shmsched_pools(admin, NULL, NULL, &held, NULL, &text, err,
					sizeof(err)), 0);
	assert_int_equal(held, 1);
	assert_non_null(strstr(text, "quarantined pool bad template default/web"));
	free(text);
	assert_int_equal(shmsched_pools(admin, "bad", "default/web", &held, &released,
					NULL, err, sizeof(err)), 0);
	assert_int_equal(released, 1);
	assert_int_equal(held, 0);
	fixture_place_one(a, web, 12, &r);
	assert_int_equal(r.status, SHMSCHED_PLACED);
	shmsched_disconnect(admin);
	fixture_leave(d, b);
	fixture_leave(d, a);
	struct daemon_stats ds;
	daemon_stop(d, 1000, &ds);
}

/* The quarantine's clock (daemon_config.quarantine_clock_ns,
 * fixture_clock_ns): stepped by the test while no pod is in flight;
 * relaxed, a test's figure (its readers are the workers and the control
 * thread). */
static uint64_t clock_now = UINT64_C(1000000000000);

/* One pod of `tid` placed, then released: its node. */
static uint32_t place_release(struct shmsched_client *c, uint32_t tid, uint64_t cookie)
{
	struct shmsched_result r;
	char err[512];
	fixture_place_one(c, tid, cookie, &r);
	assert_int_equal(r.status, SHMSCHED_PLACED);
	assert_int_equal(shmsched_release(c, r.placement_id, err, sizeof(err)), 0);
	return r.node_id;
}

/* Crash-pair avoidance (issue 38 Deliver 5, Borg: "(template, node) pairs
 * that failed recently score lower"; daemon/quarantine_internal.h,
 * quarantine_avoid): on two equal nodes of one pool, one failure of web
 * on one of them (too few to quarantine the pool) sends each of web's
 * next 16 pods to the other, where a tie was drawn at random (on the old
 * code some went to the failed node); another template still lands on
 * both; once the window has passed (the injected clock), web does too. */
static void test_crash_pair(void **state)
{
	(void)state;
	write_nodes(2, 0, 8); /* two of pool good */
	struct daemon_config cfg = fixture_config(&fx);
	cfg.quarantine_window_ns = 60 * UINT64_C(1000000000);
	cfg.quarantine_clock_ns = fixture_clock_ns;
	cfg.quarantine_clock_arg = &clock_now;
	char err[512];
	struct daemon *d = fixture_start(&cfg);
	struct shmsched_client *a = fixture_connect_as(fx.sock, "a");
	uint32_t web = tpl(a, "web", NULL), other = tpl(a, "other", NULL);
	struct shmsched_result r;
	fixture_place_one(a, web, 1, &r);
	assert_int_equal(r.status, SHMSCHED_PLACED);
	uint32_t failed = r.node_id;
	assert_int_equal(shmsched_report_failure(a, r.placement_id, "CrashLoopBackOff",
						 err, sizeof(err)), SHMSCHED_FAILURE_COUNTED);
	assert_int_equal(shmsched_release(a, r.placement_id, err, sizeof(err)), 0);
	for (uint64_t i = 0; i < 16; i++)
		if (place_release(a, web, 100 + i) == failed)
			fail_msg("web's pod %llu went to the node where web failed",
				 (unsigned long long)i);
	unsigned on_failed = 0;
	for (uint64_t i = 0; i < 16; i++)
		on_failed += place_release(a, other, 200 + i) == failed;
	if (on_failed == 0 || on_failed == 16)
		fail_msg("other's 16 pods: %u on the node where web failed; "
			 "expected ties drawn both ways", on_failed);
	/* The window passes: web's failure is forgotten. */
	__atomic_add_fetch(&clock_now, 60 * UINT64_C(1000000000), __ATOMIC_RELAXED);
	on_failed = 0;
	for (uint64_t i = 0; i < 16; i++)
		on_failed += place_release(a, web, 300 + i) == failed;
	if (on_failed == 0)
		fail_msg("after the window, web's 16 pods avoided the node still");
	struct daemon_quarantine dq;
	daemon_quarantine_counts(d, &dq);
	assert_int_equal(dq.trips, 0); /* a score, not a quarantine */
	fixture_leave(d, a);
	struct daemon_stats ds;
	daemon_stop(d, 1000, &ds);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_report_quarantine_release),
		cmocka_unit_test(test_crash_pair),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
