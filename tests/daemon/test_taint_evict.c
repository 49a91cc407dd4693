/* unit.node_taint_evict: the node lifecycle's zone rates (issue 38,
 * daemon/taint_evict_internal.h) through the real daemon in process, its
 * lease clock the test's own (stepped by hand, daemon_lease_tick() after
 * each step: no sleep, no thread).
 *
 * The oracle is Kubernetes' node lifecycle controller
 * (pkg/controller/nodelifecycle/node_lifecycle_controller.go):
 * - ComputeZoneState: a zone with no Ready node is fullDisruption; one
 *   with more than 2 not-Ready nodes and at least --unhealthy-zone-
 *   threshold (0.55) of them partialDisruption; else normal;
 * - setLimiterInZone: normal and full disruption taint at
 *   --node-eviction-rate (0.1 nodes/s); partial at ReducedQPSFunc's rate,
 *   --secondary-node-eviction-rate (0.01/s) in a zone of more than
 *   --large-cluster-size-threshold (50) nodes, else 0;
 * - handleDisruption: every zone fully disrupted: every node
 *   markNodeAsReachable (its unreachable taint removed) and every zone's
 *   limiter 0;
 * - doNoExecuteTaintingPass: the zone's queue, one taint per token of a
 *   token bucket of burst 1 (scheduler.EvictionRateLimiterBurst,
 *   pkg/controller/nodelifecycle/scheduler/rate_limited_queue.go).
 * The zone: GetZoneKey, topology.kubernetes.io/zone (and region).
 *
 * The taint manager (test_evict) against Kubernetes'
 * pkg/controller/tainteviction/taint_eviction.go: processPodOnNode (a
 * NoExecute taint no toleration tolerates: deleted at once; else at
 * CreatedAt + getMinTolerationTime; no tolerationSeconds: never, a
 * scheduled deletion cancelled when the taint goes), and
 * plugin/pkg/admission/defaulttolerationseconds (300 s for unreachable to
 * a pod with no toleration of it).
 *
 * Each check fails on the code before the zone rates, which tainted every
 * Unknown node at the tick it went Unknown and never took a taint back
 * but on a renewal: there the second node of test_rate is tainted with
 * the first, the partial zone's three at once, and the all-down cluster
 * keeps its taints. test_evict fails on the code before the taint manager,
 * which evicted nothing: its evictions and notices never come. */
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

/* Nodes n[i] in zones z[i] (topology.kubernetes.io/zone), each labelled
 * name=itself. */
static void write_cluster(const char *const *names, const char *const *zones,
			  int n)
{
	FILE *f = fopen(fx.cluster, "w");
	assert_non_null(f);
	fputs("{\"apiVersion\":\"v1\",\"kind\":\"List\",\"items\":[", f);
	for (int i = 0; i < n; i++)
		fprintf(f, "%s{\"kind\":\"Node\",\"metadata\":{\"name\":\"%s\","
			"\"labels\":{\"name\":\"%s\",\"topology.kubernetes.io/zone\":"
			"\"%s\"}},\"status\":{\"allocatable\":{\"cpu\":\"4\","
			"\"memory\":\"8Gi\",\"pods\":\"110\"}}}",
			i ? "," : "", names[i], names[i], zones[i]);
	fputs("]}", f);
	assert_int_equal(fclose(f), 0);
}

static struct daemon *start(int64_t large)
{
	struct daemon_config cfg = fixture_config(&fx);
	cfg.state_name = region;
	cfg.fresh = true;
	cfg.lease_clock_ns = test_clock;
	cfg.large_cluster_size_threshold = large;
	return fixture_start(&cfg);
}

static void step_to(struct daemon *d, uint64_t t)
{
	clock_now = t;
	assert_true(daemon_lease_tick(d) >= 0);
}

/* Nodes that `shmsched status` shows unreachable (the observer reads the
 * state region: the taint as the cluster has it). */
static int shown_unreachable(void)
{
	struct shmsched_observe_node nodes[16];
	unsigned n = fixture_observe_nodes(region, nodes, 16);
	int k = 0;
	for (unsigned i = 0; i < n && i < 16; i++)
		k += nodes[i].unreachable != 0;
	return k;
}

static struct daemon_lifecycle life(struct daemon *d)
{
	struct daemon_lifecycle l;
	daemon_lifecycle_counts(d, &l);
	return l;
}

/* Leases every node in names[0..n) at the clock's now. */
static void lease_all(struct shmsched_client *admin, const char *const *names, int n)
{
	for (int i = 0; i < n; i++)
		fixture_lease(admin, names[i]);
}

/* Zone z1 of 3 nodes, 2 go down: normal (2 is not more than 2), so the
 * taints come at 0.1/s: the first at once, the second 10 s later, not 9. */
static void test_rate(void **state)
{
	(void)state;
	static const char *const names[] = {"a", "b", "c", "x"};
	static const char *const zones[] = {"z1", "z1", "z1", "z2"};
	write_cluster(names, zones, 4);
	struct daemon *d = start(0);
	struct shmsched_client *admin = fixture_connect_as(fx.admin, "kubelets");
	uint64_t t0 = clock_now;
	lease_all(admin, names, 4);
	for (uint64_t t = 10; t <= 50; t += 10) {
		step_to(d, t0 + t * S);
		fixture_lease(admin, "c");
		fixture_lease(admin, "x");
	}
	uint64_t t1 = t0 + 50 * S + 1; /* a and b: Unknown now */
	step_to(d, t1);
	assert_int_equal(shown_unreachable(), 1);
	assert_int_equal(life(d).taints_queued, 1);
	assert_int_equal(life(d).zones_normal, 2);
	for (uint64_t t = 1; t <= 9; t++) {
		step_to(d, t1 + t * S);
		assert_int_equal(shown_unreachable(), 1);
	}
	step_to(d, t1 + 10 * S);
	assert_int_equal(shown_unreachable(), 2);
	assert_int_equal(life(d).taints_queued, 0);
	assert_int_equal(life(d).taints_total, 2);
	shmsched_disconnect(admin);
	daemon_stop(d, 1000, NULL);
}

/* Zone z1 of 4 nodes, 3 go down (75 % >= 55 %, more than 2): partial
 * disruption; 4 nodes is not more than 50, so the zone stops tainting.
 * With --large-cluster-size-threshold 3 the zone is large: 0.01/s, a
 * taint every 100 s. */
static void partial(bool large)
{
	static const char *const names[] = {"a", "b", "c", "d", "x"};
	static const char *const zones[] = {"z1", "z1", "z1", "z1", "z2"};
	write_cluster(names, zones, 5);
	struct daemon *d = start(large ? 3 : 0);
	struct shmsched_client *admin = fixture_connect_as(fx.admin, "kubelets");
	uint64_t t0 = clock_now;
	lease_all(admin, names, 5);
	for (uint64_t t = 10; t <= 50; t += 10) {
		step_to(d, t0 + t * S);
		fixture_lease(admin, "d");
		fixture_lease(admin, "x");
	}
	uint64_t t1 = t0 + 50 * S + 1;
	step_to(d, t1);
	assert_int_equal(life(d).zones_partial, 1);
	assert_int_equal(shown_unreachable(), large ? 1 : 0);
	for (uint64_t t = 10; t <= 90; t += 10) {
		step_to(d, t1 + t * S);
		fixture_lease(admin, "d");
		fixture_lease(admin, "x");
	}
	step_to(d, t1 + 99 * S);
	assert_int_equal(shown_unreachable(), large ? 1 : 0);
	step_to(d, t1 + 100 * S);
	assert_int_equal(shown_unreachable(), large ? 2 : 0);
	assert_int_equal(life(d).taints_queued, large ? 1 : 3);
	shmsched_disconnect(admin);
	daemon_stop(d, 1000, NULL);
}

static void test_partial_small_stops(void **state)
{
	(void)state;
	partial(false);
}

static void test_partial_large_slow(void **state)
{
	(void)state;
	partial(true);
}

/* Two zones. z1's two nodes go down (full disruption, but z2 is up):
 * tainted at the normal rate. Then z2's node goes down too: every zone
 * fully disrupted, so every taint is taken back and none given, however
 * long. z2's node back: z1's nodes are tainted again, at the rate. */
static void test_all_down(void **state)
{
	(void)state;
	static const char *const names[] = {"a", "b", "x"};
	static const char *const zones[] = {"z1", "z1", "z2"};
	write_cluster(names, zones, 3);
	struct daemon *d = start(0);
	struct shmsched_client *admin = fixture_connect_as(fx.admin, "kubelets");
	uint64_t t0 = clock_now;
	lease_all(admin, names, 3);
	for (uint64_t t = 10; t <= 50; t += 10) {
		step_to(d, t0 + t * S);
		fixture_lease(admin, "x");
	}
	uint64_t t1 = t0 + 50 * S + 1;
	step_to(d, t1);
	step_to(d, t1 + 10 * S);
	assert_int_equal(shown_unreachable(), 2);
	assert_int_equal(life(d).zones_full, 1);
	/* x renewed last at t0 + 50 s: Unknown after t0 + 100 s. */
	step_to(d, t0 + 100 * S + 1);
	assert_int_equal(life(d).zones_full, 2);
	assert_int_equal(shown_unreachable(), 0);
	assert_int_equal(life(d).tainted, 0);
	for (uint64_t t = 1; t <= 30; t++) {
		step_to(d, t0 + 100 * S + 1 + t * 10 * S);
		assert_int_equal(shown_unreachable(), 0);
	}
	/* Leaving it, each zone's limiter is swapped from the one that never
	 * lets a taint through, so the new one starts drained (SwapLimiter:
	 * "If we're currently waiting on limiter, we drain the new one"):
	 * the first taint 10 s later, the second 10 s after that. */
	fixture_lease(admin, "x");
	uint64_t t2 = clock_now + S;
	step_to(d, t2);
	assert_int_equal(life(d).zones_full, 1);
	assert_int_equal(shown_unreachable(), 0);
	step_to(d, t2 + 9 * S);
	assert_int_equal(shown_unreachable(), 0);
	step_to(d, t2 + 10 * S);
	assert_int_equal(shown_unreachable(), 1);
	step_to(d, t2 + 20 * S);
	assert_int_equal(shown_unreachable(), 2);
	shmsched_disconnect(admin);
	daemon_stop(d, 1000, NULL);
}

/* A template for node `node` with tolerations `tols` (a JSON array's
 * inside, "" none). */
static uint32_t template_tol(struct shmsched_client *c, const char *node,
			     const char *tag, const char *tols)
{
	char json[1024], err[512];
	snprintf(json, sizeof(json),
		 "{\"kind\":\"Pod\",\"metadata\":{\"name\":\"p-%s-%s\"},\"spec\":"
		 "{\"nodeSelector\":{\"name\":\"%s\"},\"tolerations\":[%s],"
		 "\"containers\":[{\"name\":\"c\",\"resources\":{\"requests\":"
		 "{\"cpu\":\"10m\"}}}]}}", node, tag, node, tols);
	uint32_t tid;
	if (shmsched_register_template(c, json, strlen(json), &tid, err,
				       sizeof(err)) != 0)
		fail_msg("template %s for %s: %s", tag, node, err);
	return tid;
}

static void must_place(struct shmsched_client *c, uint32_t tid, uint64_t cookie)
{
	struct shmsched_result r;
	fixture_place_one(c, tid, cookie, &r);
	if (r.status != SHMSCHED_PLACED)
		fail_msg("pod %llu: status %u, expected PLACED",
			 (unsigned long long)cookie, r.status);
}

/* The next EVICTED notice's cookie (waits at most 5 s). */
static uint64_t evicted_cookie(struct shmsched_client *c)
{
	struct shmsched_result r;
	if (fixture_await(c, &r, 1, 5000) != 1)
		fail_msg("no EVICTED notice came");
	assert_int_equal(r.status, SHMSCHED_EVICTED);
	return r.cookie;
}

#define UNREACHABLE_TOL "{\"key\":\"node.kubernetes.io/unreachable\"," \
	"\"operator\":\"Exists\",\"effect\":\"NoExecute\""

/* Zone z1 {a, c}, z2 {b, x}; a and b go down at T (each alone in its
 * zone: both tainted at once). On a: pod 1 with no toleration (the
 * default 300 s), pod 2 tolerating unreachable 30 s, pod 3 tolerating it
 * forever. On b: pod 5 tolerating 30 s, but b renews at T + 20 s. On c:
 * pod 4 with no toleration, and an admin's taint maint:NoExecute at
 * T + 31 s. */
static void test_evict(void **state)
{
	(void)state;
	static const char *const names[] = {"a", "b", "c", "x"};
	static const char *const zones[] = {"z1", "z2", "z1", "z2"};
	write_cluster(names, zones, 4);
	struct daemon *d = start(0);
	struct shmsched_client *admin = fixture_connect_as(fx.admin, "kubelets");
	struct shmsched_client *p = fixture_connect_as(fx.sock, "prod");
	must_place(p, template_tol(p, "a", "none", ""), 1);
	must_place(p, template_tol(p, "a", "30", UNREACHABLE_TOL
				   ",\"tolerationSeconds\":30}"), 2);
	must_place(p, template_tol(p, "a", "ever", UNREACHABLE_TOL "}"), 3);
	must_place(p, template_tol(p, "c", "none", ""), 4);
	must_place(p, template_tol(p, "b", "30", UNREACHABLE_TOL
				   ",\"tolerationSeconds\":30}"), 5);
	uint64_t t0 = clock_now;
	lease_all(admin, names, 4);
	for (uint64_t t = 10; t <= 50; t += 10) {
		step_to(d, t0 + t * S);
		fixture_lease(admin, "c");
		fixture_lease(admin, "x");
	}
	uint64_t T = t0 + 50 * S + 1;
	step_to(d, T);
	assert_int_equal(shown_unreachable(), 2);
	assert_int_equal(life(d).evictions_pending, 3); /* 1, 2 and 5 */
	step_to(d, T + 20 * S);
	fixture_lease(admin, "b"); /* the taint lifted at once */
	fixture_lease(admin, "c");
	fixture_lease(admin, "x");
	step_to(d, T + 29 * S);
	assert_int_equal(life(d).evicted, 0);
	assert_int_equal(life(d).evictions_pending, 2); /* 5 cancelled */
	step_to(d, T + 30 * S);
	assert_int_equal(life(d).evicted, 1);
	assert_int_equal(evicted_cookie(p), 2);

	/* An admin's NoExecute taint on c: pod 4 tolerates nothing of it. */
	static const char c_json[] = "{\"kind\":\"Node\",\"metadata\":{\"name\":"
		"\"c\",\"labels\":{\"name\":\"c\",\"topology.kubernetes.io/zone\":"
		"\"z1\"}},\"spec\":{\"taints\":[{\"key\":\"maint\",\"effect\":"
		"\"NoExecute\"}]},\"status\":{\"allocatable\":{\"cpu\":\"4\","
		"\"memory\":\"8Gi\",\"pods\":\"110\"}}}";
	char err[512];
	assert_int_equal(shmsched_node_event(admin, SHMSCHED_NODE_UPDATE, c_json,
					     sizeof(c_json) - 1, err, sizeof(err)), 0);
	step_to(d, T + 31 * S);
	assert_int_equal(life(d).evicted, 2);
	assert_int_equal(evicted_cookie(p), 4);

	/* Pod 1: DefaultTolerationSeconds' 300 s, not 299; pod 3 stays. */
	for (uint64_t t = 40; t <= 290; t += 10) {
		step_to(d, T + t * S);
		fixture_lease(admin, "b");
		fixture_lease(admin, "c");
		fixture_lease(admin, "x");
	}
	step_to(d, T + 299 * S);
	assert_int_equal(life(d).evicted, 2);
	step_to(d, T + 300 * S);
	assert_int_equal(life(d).evicted, 3);
	assert_int_equal(evicted_cookie(p), 1);
	for (uint64_t t = 310; t <= 600; t += 10) {
		step_to(d, T + t * S);
		fixture_lease(admin, "b");
		fixture_lease(admin, "c");
		fixture_lease(admin, "x");
	}
	assert_int_equal(life(d).evicted, 3);
	assert_int_equal(life(d).evictions_pending, 0);
	shmsched_disconnect(p);
	shmsched_disconnect(admin);
	daemon_stop(d, 1000, NULL);
}

/* What the daemon keeps of placements' tolerations is swept once they
 * are gone: 70 kept (and 20 pods without a NoExecute toleration, which
 * cost nothing), released and 70 more placed, twice: 70 kept once the
 * table has grown past twice its size at the last sweep plus 64. Fails if
 * the sweep drops a live one or keeps a gone one. */
static void test_sweep(void **state)
{
	(void)state;
	static const char *const names[] = {"a", "x"};
	static const char *const zones[] = {"z1", "z1"};
	write_cluster(names, zones, 2);
	struct daemon *d = start(0);
	struct shmsched_client *p = fixture_connect_as(fx.sock, "prod");
	uint32_t tol = template_tol(p, "a", "ever", UNREACHABLE_TOL "}");
	uint32_t none = template_tol(p, "a", "none", "");
	uint64_t ids[70];
	char err[512];
	for (int i = 0; i < 70; i++) {
		struct shmsched_result r;
		fixture_place_one(p, tol, 100 + (uint64_t)i, &r);
		assert_int_equal(r.status, SHMSCHED_PLACED);
		ids[i] = r.placement_id;
		if (i < 20) /* a node holds 110 pods */
			must_place(p, none, 200 + (uint64_t)i);
	}
	step_to(d, clock_now + S); /* swept at 70 */
	assert_int_equal(life(d).tolerations_kept, 70);
	/* Twice: release the 70, place 70 more. The table holds 140, then
	 * 210, past twice 70 and 64: swept to the 70 live. */
	for (int round = 0; round < 2; round++) {
		for (int i = 0; i < 70; i++)
			assert_int_equal(shmsched_release(p, ids[i], err, sizeof(err)), 0);
		for (int i = 0; i < 70; i++) {
			struct shmsched_result r;
			fixture_place_one(p, tol, 300 + (uint64_t)(round * 100 + i), &r);
			assert_int_equal(r.status, SHMSCHED_PLACED);
			ids[i] = r.placement_id;
		}
		step_to(d, clock_now + S);
		assert_int_equal(life(d).tolerations_kept, round == 0 ? 140 : 70);
	}
	shmsched_disconnect(p);
	daemon_stop(d, 1000, NULL);
}

static int setup(void **state)
{
	(void)state;
	fixture_dir_make(&fx, "taintev", 0);
	snprintf(region, sizeof(region), "shmsched-taintev-%d", (int)getpid());
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
	setenv("SHMSCHED_LOG", "error", 0);
	signal(SIGPIPE, SIG_IGN);
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_rate, setup, teardown),
		cmocka_unit_test_setup_teardown(test_partial_small_stops, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_partial_large_slow, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_all_down, setup, teardown),
		cmocka_unit_test_setup_teardown(test_evict, setup, teardown),
		cmocka_unit_test_setup_teardown(test_sweep, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
