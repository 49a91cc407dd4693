/* unit.failure: OP_FAILURE through the real daemon (in process): a
 * producer reports its own placements' failures, never another's
 * (EPERM, as OP_RELEASE refuses); failures of one template on 3 nodes of
 * one pool (node.kubernetes.io/instance-type=bad) quarantine that pool
 * for it: its next pod, which only that pool can take, is unschedulable
 * with a message naming the quarantine (counted refused, the pool's 5
 * nodes counted held: on the old code neither count existed), while
 * another template still places there; an admin's release
 * (shmsched_pools) lifts it, and a producer may not release. */
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

/* 5 nodes of pool "bad", 20 of "good" (the 20 % cap: 5 of 25), 4 cpus
 * each. */
static int setup(void **state)
{
	(void)state;
	fixture_dir_make(&fx, "failure", 0);
	FILE *f = fopen(fx.cluster, "w");
	assert_non_null(f);
	fputs("{\"kind\":\"List\",\"items\":[", f);
	for (int i = 0; i < 25; i++)
		fprintf(f, "%s{\"kind\":\"Node\",\"metadata\":{\"name\":\"n%d\","
			"\"labels\":{\"node.kubernetes.io/instance-type\":\"%s\"}},"
			"\"status\":{\"allocatable\":{\"cpu\":\"4\",\"memory\":"
			"\"16Gi\",\"pods\":\"110\"}}}", i ? "," : "", i,
			i < 5 ? "bad" : "good");
	fputs("]}", f);
	fclose(f);
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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_report_quarantine_release),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
