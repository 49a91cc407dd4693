/* unit.node_lease: node leases (issue 38, daemon/lease_internal.h) through
 * the real daemon in process, its lease clock the test's own (stepped by
 * hand, daemon_lease_tick() called after each step: no sleep, no thread).
 *
 * The oracle is Kubernetes' node lifecycle controller
 * (pkg/controller/nodelifecycle/node_lifecycle_controller.go):
 * - tryUpdateNodeHealth: a renewed lease sets probeTimestamp to now; the
 *   node goes Unknown when nc.now().After(probeTimestamp.Add(gracePeriod)),
 *   strictly after the grace period (node-monitor-grace-period, 50 s by
 *   default since 1.32), never at it;
 * - an Unknown node gets UnreachableTaintTemplate
 *   (node.kubernetes.io/unreachable, NoExecute); Ready again,
 *   markNodeAsReachable takes it off;
 * - "If kubelet never posted the node status ... the node controller will
 *   assume the node is healthy": here a node that never renewed a lease is
 *   not managed, never tainted.
 * The taint keeps new pods off the node unless they tolerate it (the
 * scheduler's TaintToleration filter, the engine's existing one).
 *
 * Each check fails on the code before leases: there the renewal is
 * refused (kind 6 unknown), no taint is ever given, so the pod without a
 * toleration is placed on the silent node. */
#include <errno.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "daemon/daemon.h"
#include "daemon/lease_internal.h"
#include "shm/shm.h"
#include "shmsched/client.h"
#include "shmsched/observe.h"

#include "fixture.h"

#define S UINT64_C(1000000000)

static struct fixture_dir fx;
static char region[64];
static uint64_t clock_now = 1000 * S; /* the test's clock */

static uint64_t test_clock(void *arg)
{
	(void)arg;
	return clock_now;
}

/* Three nodes, each labelled name=itself so a pod can ask for one. */
static void write_cluster(void)
{
	FILE *f = fopen(fx.cluster, "w");
	assert_non_null(f);
	fputs("{\"apiVersion\":\"v1\",\"kind\":\"List\",\"items\":[", f);
	static const char *names[] = {"a", "b", "c"};
	for (int i = 0; i < 3; i++)
		fprintf(f, "%s{\"kind\":\"Node\",\"metadata\":{\"name\":\"%s\","
			"\"labels\":{\"name\":\"%s\"}},\"status\":{\"allocatable\":"
			"{\"cpu\":\"4\",\"memory\":\"8Gi\",\"pods\":\"110\"}}}",
			i ? "," : "", names[i], names[i]);
	fputs("]}", f);
	assert_int_equal(fclose(f), 0);
}

static int lease(struct shmsched_client *admin, const char *node, char *err,
		 size_t len)
{
	return shmsched_node_event(admin, SHMSCHED_NODE_LEASE, node, strlen(node),
				   err, len);
}

/* A template asking for node `node` (nodeSelector name=NODE), tolerating
 * the unreachable taint or not. */
static uint32_t template_for(struct shmsched_client *c, const char *node,
			     bool tolerates)
{
	char json[768], err[512];
	snprintf(json, sizeof(json),
		 "{\"kind\":\"Pod\",\"metadata\":{\"name\":\"p-%s-%d\"},\"spec\":"
		 "{\"nodeSelector\":{\"name\":\"%s\"},%s\"containers\":[{\"name\":"
		 "\"c\",\"resources\":{\"requests\":{\"cpu\":\"10m\"}}}]}}",
		 node, tolerates, node,
		 tolerates ? "\"tolerations\":[{\"key\":\"node.kubernetes.io/"
			     "unreachable\",\"operator\":\"Exists\",\"effect\":"
			     "\"NoExecute\"}]," : "");
	uint32_t tid;
	if (shmsched_register_template(c, json, strlen(json), &tid, err,
				       sizeof(err)) != 0)
		fail_msg("template for %s: %s", node, err);
	return tid;
}

static uint64_t cookie;

static int place(struct shmsched_client *c, uint32_t tid)
{
	struct shmsched_result r;
	fixture_place_one(c, tid, ++cookie, &r);
	return r.status;
}

static void step_to(struct daemon *d, uint64_t t)
{
	clock_now = t;
	assert_true(daemon_lease_tick(d) >= 0);
}

/* What `shmsched status` reads (the observer of the state region): node
 * `name`'s unreachable flag. */
static int shown_unreachable(const char *name)
{
	struct shmsched_observe_node nodes[8];
	unsigned n = fixture_observe_nodes(region, nodes, 8);
	for (unsigned i = 0; i < n; i++)
		if (strcmp(nodes[i].name, name) == 0)
			return nodes[i].unreachable;
	fail_msg("observe: no node %s", name);
	return -1;
}

static uint32_t unknown_now(struct daemon *d)
{
	uint32_t leased, unknown;
	daemon_lease_counts(d, &leased, &unknown);
	return unknown;
}

static void test_lease_grace_taint(void **state)
{
	(void)state;
	write_cluster();
	struct daemon_config cfg = fixture_config(&fx);
	cfg.state_name = region;
	cfg.fresh = true;
	cfg.lease_clock_ns = test_clock;
	struct daemon *d = fixture_start(&cfg);
	char err[512];
	struct shmsched_client *admin = fixture_connect_as(fx.admin, "kubelets");
	struct shmsched_client *p = fixture_connect_as(fx.sock, "prod");
	uint32_t to_a = template_for(p, "a", false), to_b = template_for(p, "b", false);
	uint32_t to_c = template_for(p, "c", false);
	uint32_t tol_b = template_for(p, "b", true);

	/* A lease for a name no node has: refused, nothing leased. */
	assert_int_equal(lease(admin, "nope", err, sizeof(err)), -ENOENT);

	/* a renews every 10 s (a kubelet's renewInterval); b once, at 0;
	 * c never. */
	uint64_t t0 = clock_now;
	fixture_lease(admin, "a");
	fixture_lease(admin, "b");
	for (uint64_t t = 10; t <= 50; t += 10) {
		step_to(d, t0 + t * S);
		fixture_lease(admin, "a");
		assert_int_equal(unknown_now(d), 0); /* b: at 50 s, not yet */
	}
	/* The grace period is 50 s by default: b is Unknown just after. */
	step_to(d, t0 + 50 * S + 1);
	assert_int_equal(unknown_now(d), 1);
	assert_int_equal(shown_unreachable("b"), 1); /* status shows it */
	assert_int_equal(shown_unreachable("a"), 0);
	assert_int_equal(place(p, to_b), SHMSCHED_UNSCHEDULABLE); /* tainted */
	assert_int_equal(place(p, tol_b), SHMSCHED_PLACED);       /* tolerates */
	assert_int_equal(place(p, to_a), SHMSCHED_PLACED);        /* renewed */

	/* Long after: a, renewing, stays Ready; c, never leased, untouched. */
	for (uint64_t t = 60; t <= 600; t += 10) {
		step_to(d, t0 + t * S);
		fixture_lease(admin, "a");
	}
	assert_int_equal(unknown_now(d), 1);
	assert_int_equal(place(p, to_a), SHMSCHED_PLACED);
	assert_int_equal(place(p, to_c), SHMSCHED_PLACED);
	assert_int_equal(place(p, to_b), SHMSCHED_UNSCHEDULABLE);

	/* An admin's update that drops the taint is corrected at the next
	 * tick: b is still Unknown. */
	static const char b_json[] = "{\"kind\":\"Node\",\"metadata\":{\"name\":\"b\","
		"\"labels\":{\"name\":\"b\"}},\"status\":{\"allocatable\":"
		"{\"cpu\":\"4\",\"memory\":\"8Gi\",\"pods\":\"110\"}}}";
	assert_int_equal(shmsched_node_event(admin, SHMSCHED_NODE_UPDATE, b_json,
					     sizeof(b_json) - 1, err, sizeof(err)), 0);
	assert_int_equal(place(p, to_b), SHMSCHED_PLACED); /* untainted by it */
	step_to(d, clock_now + S);
	assert_int_equal(place(p, to_b), SHMSCHED_UNSCHEDULABLE);

	/* b renews: Ready, its taint lifted at once (no tick needed). */
	fixture_lease(admin, "b");
	assert_int_equal(unknown_now(d), 0);
	assert_int_equal(shown_unreachable("b"), 0);
	assert_int_equal(place(p, to_b), SHMSCHED_PLACED);
	step_to(d, clock_now + 50 * S);
	assert_int_equal(place(p, to_b), SHMSCHED_PLACED);

	shmsched_disconnect(p);
	shmsched_disconnect(admin);
	daemon_stop(d, 1000, NULL);
}

/* The table alone: the strict boundary, and growth past its first 64
 * entries keeping every node's state. */
static uint64_t table_clock(void *arg)
{
	return *(uint64_t *)arg;
}

static void test_table(void **state)
{
	(void)state;
	uint64_t now = 0;
	struct lease_table *t = lease_create(10, table_clock, &now);
	assert_non_null(t);
	assert_int_equal(lease_state(t, 7), LEASE_UNMANAGED);
	for (uint32_t n = 1; n <= 1000; n++)
		assert_int_equal(lease_renew(t, n), LEASE_UNMANAGED);
	now = 10;
	assert_int_equal(lease_renew(t, 500), LEASE_READY);
	assert_int_equal(lease_expire(t), 0); /* at the grace period: Ready */
	now = 11;
	assert_int_equal(lease_expire(t), 999); /* all but 500 */
	assert_int_equal(lease_state(t, 500), LEASE_READY);
	assert_int_equal(lease_state(t, 1), LEASE_UNKNOWN);
	assert_int_equal(lease_state(t, 1001), LEASE_UNMANAGED);
	assert_int_equal(lease_renew(t, 1), LEASE_UNKNOWN);
	uint32_t leased, unknown;
	lease_counts(t, &leased, &unknown);
	assert_int_equal(leased, 1000);
	assert_int_equal(unknown, 998);
	assert_int_equal(lease_renew(t, 0), -EINVAL);
	lease_destroy(t);
}

static int setup(void **state)
{
	(void)state;
	fixture_dir_make(&fx, "lease", 0);
	snprintf(region, sizeof(region), "shmsched-lease-%d", (int)getpid());
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	char err[256];
	state_remove(region, err, sizeof(err));
	fixture_dir_remove(&fx);
	return 0;
}

int main(void)
{
	setenv("SHMSCHED_LOG", "warn", 0);
	signal(SIGPIPE, SIG_IGN);
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_table),
		cmocka_unit_test_setup_teardown(test_lease_grace_taint, setup,
						teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
