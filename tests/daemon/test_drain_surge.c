/* unit.drain_surge: OP_DRAIN_SURGE (issue 38 item 1, `shmsched node drain
 * --surge`) through the real daemon, in process, with the client library.
 * No anchor does this: kubectl drain (kubernetes/kubectl pkg/drain/
 * drain.go, evictPods) evicts and leaves the replacement to the pod's
 * controller; here the daemon places the replacement first, and evicts
 * only once it is committed (ingest/producers_drain.c's design note).
 *
 * - room: three pods on n0, drained with --surge on a cluster with room:
 *   every pod is REPLACED (a placement on another node, the old id in the
 *   notice) before it is EVICTED, nothing is placed on n0, and the
 *   cluster's counts add up: the three replacements and exactly the room
 *   left (21 one-cpu pods on n1..n3's 24 cpu) fit, the 22nd does not;
 *   released, nothing stays counted;
 * - no room: a 5-cpu pod on n0 and one on n1 (8 cpu each): the surge
 *   drain of n0 evicts nothing, counts it blocked, and its line names the
 *   reason ("no room for the replacement of pod default/big"); no notice.
 *   Once n1's pod is released the same wave replaces and evicts it.
 *   On the old code the flag is refused (and a drain without it evicts
 *   the pod with no room anywhere).
 * - quarantine: pool bad (n1) quarantined for template web by a failure
 *   reported there (--quarantine-min-nodes 1): the surge drain of n0
 *   replaces web's pod on n2, the fuller node, not on n1 (the emptier one,
 *   which a worker's placement would skip too); with n2 full, nothing is
 *   evicted and the line names the quarantine; once an admin releases
 *   the pool the same wave replaces it on n1. On the old code the
 *   replacement went to n1 both times. That replacement counts as a
 *   placement in the pool's rate ("0 failures of 1 placements"; 0 of 0
 *   before the surge's placements were counted).
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

#include "daemon/daemon.h"
#include "fixture.h"
#include "shmsched/client.h"

static struct fixture_dir fx;

static int setup(void **state)
{
	(void)state;
	fixture_dir_make(&fx, "surge", 0);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	fixture_dir_remove(&fx);
	return 0;
}

/* The cluster file: nodes n0..n(nodes-1) of 8 cpu, node i in pool
 * pool[i] (node.kubernetes.io/instance-type; pool NULL: no pools). */
static void write_pools(int nodes, const char *const *pool)
{
	fixture_write_cluster(&fx, &(struct fixture_nodes){.count = nodes,
							    .cpu = "8",
							    .memory = "16Gi",
							    .pool = pool}, NULL);
}

static void write_cluster(int nodes)
{
	write_pools(nodes, NULL);
}

static struct daemon *start(void)
{
	/* One failure quarantines a pool (test_quarantine). */
	struct daemon_config cfg = fixture_config(&fx);
	cfg.quarantine_min_nodes = 1;
	return fixture_start(&cfg);
}

/* A template `name` (label app=name) requesting `cpu` cores, on any node. */
static uint32_t tmpl(struct shmsched_client *c, const char *name, int cpu)
{
	char json[512];
	snprintf(json, sizeof(json), "{\"kind\":\"Pod\",\"metadata\":{\"name\":"
		 "\"%s\",\"labels\":{\"app\":\"%s\"}},\"spec\":{\"containers\":"
		 "[{\"name\":\"c\",\"resources\":{\"requests\":{\"cpu\":\"%d\"}}}]}}",
		 name, name, cpu);
	return fixture_template(c, json);
}

static void node_event(struct shmsched_client *admin, int kind, const char *node)
{
	char err[512];
	if (shmsched_node_event(admin, kind, node, strlen(node), err, sizeof(err)) < 0)
		fail_msg("node event %d %s: %s", kind, node, err);
}

/* One pod of `tid`, answered at once: its result in *r. */
static void place_now(struct shmsched_client *c, uint32_t tid, uint64_t cookie,
		      struct shmsched_result *r)
{
	struct shmsched_pod pod = {.cookie = cookie, .template_id = tid,
				   .flags = SHMSCHED_NO_WAIT};
	assert_int_equal(shmsched_submit(c, &pod, 1), 1);
	fixture_poll_one(c, r);
	assert_int_equal(r->cookie, cookie);
}

/* Places a pod on node `on` of `nodes` (the others cordoned meanwhile). */
static uint64_t place_on(struct shmsched_client *admin, struct shmsched_client *c,
			 uint32_t tid, uint64_t cookie, int on, int nodes)
{
	char name[16];
	for (int i = 0; i < nodes; i++)
		if (i != on) {
			snprintf(name, sizeof(name), "n%d", i);
			node_event(admin, SHMSCHED_NODE_CORDON, name);
		}
	struct shmsched_result r;
	place_now(c, tid, cookie, &r);
	assert_int_equal(r.status, SHMSCHED_PLACED);
	for (int i = 0; i < nodes; i++)
		if (i != on) {
			snprintf(name, sizeof(name), "n%d", i);
			node_event(admin, SHMSCHED_NODE_UNCORDON, name);
		}
	return r.placement_id;
}

static void drain_n0(struct shmsched_client *admin, unsigned flags,
		     struct shmsched_drain_result *r, char **text)
{
	static const char *const nodes[] = {"n0"};
	char err[512];
	if (shmsched_drain(admin, nodes, 1, NULL, flags, r, text, err, sizeof(err)) < 0)
		fail_msg("drain: %s", err);
	print_message("wave: evicted %u blocked %u errors %u\n%s", r->evicted,
		      r->blocked, r->errors, *text);
}

static void test_room(void **state)
{
	(void)state;
	write_cluster(4);
	struct daemon *d = start();
	struct shmsched_client *admin = fixture_connect(fx.admin);
	struct shmsched_client *prod = fixture_connect_as(fx.sock, "app");
	uint32_t web = tmpl(prod, "web", 1);
	uint64_t old[4] = {0};
	for (uint64_t k = 1; k <= 3; k++)
		old[k] = place_on(admin, prod, web, k, 0, 4);
	assert_int_equal(daemon_pods_on_nodes(d), 3);

	/* The CLI's order: cordon, then the wave. */
	node_event(admin, SHMSCHED_NODE_CORDON, "n0");
	struct shmsched_drain_result r;
	char *text;
	drain_n0(admin, SHMSCHED_DRAIN_SURGE, &r, &text);
	assert_int_equal(r.evicted, 3);
	assert_int_equal(r.blocked + r.errors + r.unmanaged, 0);
	assert_non_null(strstr(text, "replaced by placement"));
	free(text);

	/* Per pod: REPLACED (the new placement elsewhere, the old id named)
	 * before EVICTED (the old). */
	struct shmsched_result n[6];
	assert_int_equal(fixture_await(prod, n, 6, 5000), 6);
	uint64_t made[4] = {0};
	bool evicted[4] = {false};
	char err[512];
	for (unsigned i = 0; i < 6; i++) {
		uint64_t k = n[i].cookie;
		assert_true(k >= 1 && k <= 3);
		if (n[i].status == SHMSCHED_REPLACED) {
			assert_false(evicted[k]); /* before its EVICTED */
			assert_int_equal(made[k], 0);
			made[k] = n[i].placement_id;
			assert_true(made[k] != old[k]);
			char want[64], node[64];
			snprintf(want, sizeof(want), "replaces placement %llu: ",
				 (unsigned long long)old[k]);
			assert_non_null(strstr(n[i].message, want));
			assert_int_equal(shmsched_node_name(prod, n[i].node_id, node,
							    sizeof(node), err,
							    sizeof(err)), 0);
			assert_string_not_equal(node, "n0");
		} else {
			assert_int_equal(n[i].status, SHMSCHED_EVICTED);
			assert_int_equal(n[i].placement_id, old[k]);
			assert_true(made[k] != 0);
			assert_false(evicted[k]);
			evicted[k] = true;
		}
	}
	for (int k = 1; k <= 3; k++)
		assert_true(made[k] != 0 && evicted[k]);
	/* The replacements hold what the pods held, nothing more: the old
	 * ones are gone, so exactly 24 - 3 one-cpu pods fit on n1..n3 (n0
	 * is cordoned), and the next one does not. */
	assert_int_equal(daemon_pods_on_nodes(d), 3);
	uint64_t filler[21];
	for (unsigned i = 0; i < 21; i++) {
		struct shmsched_result p;
		place_now(prod, web, 100 + i, &p);
		assert_int_equal(p.status, SHMSCHED_PLACED);
		filler[i] = p.placement_id;
	}
	struct shmsched_result full;
	place_now(prod, web, 200, &full);
	assert_int_equal(full.status, SHMSCHED_UNSCHEDULABLE);
	/* The next wave: n0 is empty. */
	drain_n0(admin, SHMSCHED_DRAIN_SURGE, &r, &text);
	free(text);
	assert_int_equal(r.evicted + r.blocked, 0);
	/* Released, nothing stays counted. */
	for (unsigned i = 0; i < 21; i++)
		assert_int_equal(shmsched_release(prod, filler[i], err, sizeof(err)), 0);
	for (int k = 1; k <= 3; k++) {
		assert_int_equal(shmsched_release(prod, made[k], err, sizeof(err)), 0);
		assert_int_equal(shmsched_release(prod, old[k], err, sizeof(err)), -ENOENT);
	}
	assert_int_equal(daemon_pods_on_nodes(d), 0);
	assert_int_equal(daemon_overcommits(d), 0);
	struct daemon_stats ds;
	daemon_stop(d, 1000, &ds);
	shmsched_disconnect(prod);
	shmsched_disconnect(admin);
}

static void test_no_room(void **state)
{
	(void)state;
	write_cluster(2);
	struct daemon *d = start();
	struct shmsched_client *admin = fixture_connect(fx.admin);
	struct shmsched_client *prod = fixture_connect_as(fx.sock, "app");
	uint32_t big = tmpl(prod, "big", 5);
	uint64_t on0 = place_on(admin, prod, big, 1, 0, 2);
	uint64_t on1 = place_on(admin, prod, big, 2, 1, 2);
	node_event(admin, SHMSCHED_NODE_CORDON, "n0");
	struct shmsched_drain_result r;
	char *text;
	/* n1 has 3 cpu free: the 5-cpu replacement fits nowhere, so the pod
	 * stays (without --surge it would go). */
	drain_n0(admin, SHMSCHED_DRAIN_SURGE, &r, &text);
	assert_int_equal(r.evicted, 0);
	assert_int_equal(r.blocked, 1);
	assert_non_null(strstr(text, "no room for the replacement of pod default/big"));
	assert_non_null(strstr(text, "Insufficient cpu"));
	free(text);
	struct shmsched_result n[2];
	assert_int_equal(fixture_await(prod, n, 1, 300), 0);
	assert_int_equal(daemon_pods_on_nodes(d), 2);
	/* Room comes: the wave replaces it on n1, then evicts it. */
	char err[512];
	assert_int_equal(shmsched_release(prod, on1, err, sizeof(err)), 0);
	drain_n0(admin, SHMSCHED_DRAIN_SURGE, &r, &text);
	assert_int_equal(r.evicted, 1);
	assert_int_equal(r.blocked, 0);
	free(text);
	assert_int_equal(fixture_await(prod, n, 2, 5000), 2);
	assert_int_equal(n[0].status, SHMSCHED_REPLACED);
	assert_int_equal(n[1].status, SHMSCHED_EVICTED);
	assert_int_equal(n[1].placement_id, on0);
	char node[64];
	assert_int_equal(shmsched_node_name(prod, n[0].node_id, node, sizeof(node),
					    err, sizeof(err)), 0);
	assert_string_equal(node, "n1");
	assert_int_equal(daemon_pods_on_nodes(d), 1);
	assert_int_equal(shmsched_release(prod, n[0].placement_id, err, sizeof(err)), 0);
	assert_int_equal(daemon_pods_on_nodes(d), 0);
	assert_int_equal(daemon_overcommits(d), 0);
	struct daemon_stats ds;
	daemon_stop(d, 1000, &ds);
	shmsched_disconnect(prod);
	shmsched_disconnect(admin);
}

/* The name of the node of notice `n`. */
static void node_of(struct shmsched_client *c, const struct shmsched_result *n,
		    char *node, size_t len)
{
	char err[512];
	if (shmsched_node_name(c, n->node_id, node, len, err, sizeof(err)) < 0)
		fail_msg("node %u: %s", n->node_id, err);
}

static void test_quarantine(void **state)
{
	(void)state;
	/* n3 and n4 stay cordoned: nodes of the cluster, so pool bad (n1) is
	 * 1 of 5, within the quarantine's 20 % cap. */
	static const char *const pools[] = {"a", "bad", "good", "spare", "spare"};
	write_pools(5, pools);
	struct daemon *d = start();
	struct shmsched_client *admin = fixture_connect(fx.admin);
	struct shmsched_client *prod = fixture_connect_as(fx.sock, "app");
	node_event(admin, SHMSCHED_NODE_CORDON, "n3");
	node_event(admin, SHMSCHED_NODE_CORDON, "n4");
	uint32_t web = tmpl(prod, "web", 1), fill = tmpl(prod, "fill", 4);
	uint32_t top = tmpl(prod, "top", 3);
	uint64_t w0 = place_on(admin, prod, web, 1, 0, 3);
	uint64_t w1 = place_on(admin, prod, web, 2, 1, 3);
	place_on(admin, prod, fill, 3, 2, 3);
	char err[512];
	assert_int_equal(shmsched_report_failure(prod, w1, "CrashLoopBackOff", err,
						 sizeof(err)), SHMSCHED_FAILURE_TRIPPED);
	/* Room: n1 (1 of 8 cpu used) would score above n2 (4 of 8). */
	node_event(admin, SHMSCHED_NODE_CORDON, "n0");
	struct shmsched_drain_result r;
	char *text;
	drain_n0(admin, SHMSCHED_DRAIN_SURGE, &r, &text);
	assert_int_equal(r.evicted, 1);
	free(text);
	struct shmsched_result n[2];
	char node[64];
	assert_int_equal(fixture_await(prod, n, 2, 5000), 2);
	assert_int_equal(n[0].status, SHMSCHED_REPLACED);
	assert_int_equal(n[1].status, SHMSCHED_EVICTED);
	assert_int_equal(n[1].placement_id, w0);
	node_of(prod, &n[0], node, sizeof(node));
	assert_string_equal(node, "n2");
	/* No room outside the pool: n2 filled (4 + 1 + 3 cpu), a web pod on
	 * n0 again; only n1 could take its replacement. */
	node_event(admin, SHMSCHED_NODE_UNCORDON, "n0");
	place_on(admin, prod, top, 4, 2, 3);
	uint64_t w2 = place_on(admin, prod, web, 5, 0, 3);
	node_event(admin, SHMSCHED_NODE_CORDON, "n0");
	drain_n0(admin, SHMSCHED_DRAIN_SURGE, &r, &text);
	assert_int_equal(r.evicted, 0);
	assert_int_equal(r.blocked, 1);
	assert_non_null(strstr(text, "no room for the replacement of pod default/web"));
	if (strstr(text, "pool bad quarantined for template default/web") == NULL)
		fail_msg("line: %s", text);
	free(text);
	assert_int_equal(fixture_await(prod, n, 1, 300), 0);
	/* Released, the same wave replaces it on n1. */
	unsigned held, released;
	assert_int_equal(shmsched_pools(admin, "bad", "default/web", &held, &released,
					NULL, err, sizeof(err)), 0);
	assert_int_equal(released, 1);
	drain_n0(admin, SHMSCHED_DRAIN_SURGE, &r, &text);
	assert_int_equal(r.evicted, 1);
	free(text);
	assert_int_equal(fixture_await(prod, n, 2, 5000), 2);
	assert_int_equal(n[0].status, SHMSCHED_REPLACED);
	assert_int_equal(n[1].placement_id, w2);
	node_of(prod, &n[0], node, sizeof(node));
	assert_string_equal(node, "n1");
	/* That replacement counts in pool bad's rate for web as a worker's
	 * placement does: the release cleared its history, so 1 placement
	 * (0 when the surge's placements went uncounted). */
	char *list = NULL;
	assert_int_equal(shmsched_pools(admin, NULL, NULL, NULL, NULL, &list, err,
					sizeof(err)), 0);
	print_message("pools:\n%s", list);
	if (strstr(list, "pool bad template default/web") == NULL ||
	    strstr(list, "0 failures of 1 placements") == NULL)
		fail_msg("pools: %s", list);
	free(list);
	assert_int_equal(daemon_overcommits(d), 0);
	struct daemon_stats ds;
	daemon_stop(d, 1000, &ds);
	shmsched_disconnect(prod);
	shmsched_disconnect(admin);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_room),
		cmocka_unit_test(test_no_room),
		cmocka_unit_test(test_quarantine),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
