/* unit.approval_evict: approving managers asked by quota reclaim and
 * priority preemption (issue 38 item 3: "before any voluntary disruption
 * of such a pod (drain, quota reclaim, preemption where it opts in) the
 * daemon asks"), through
 * the real daemon in process, a manager on the admin socket
 * (approval_mgr.h) and the managers' clock injected
 * (daemon_config.approval_clock), so deadlines pass when the test says.
 * KEP-4563 (kubernetes/enhancements keps/sig-node/4563-eviction-request-
 * api: the interceptor acts before the eviction; no progress by its
 * deadline and the controller falls back to the Eviction API: fail-open
 * here).
 *
 * The quota: test_reclaim.c's (Kueue's classical preemption with
 * reclaimWithinCohort Any): cohort "ml", team-a and team-b 2 cpu nominal
 * each; team-b's producer holds 4 pods of 1 cpu (cookies 200-203, the
 * last two borrowing team-a's quota) and team-a's 1-cpu pod waits, or 3
 * (only 202 borrowing) and team-a's 2-cpu pod waits. Without a manager the most recently admitted
 * borrowing pod (203) is evicted at once (test_reclaim.c). The manager
 * selects team-b's pods (their LocalQueue label) and opts in to reclaim
 * (OP_APPROVAL_RECLAIM_TOO):
 * - grant: the victim is asked, not evicted; the grant alone (no clock
 *   step, no other event) gets it evicted and team-a's pod placed: the
 *   waiting preemptor is woken by the answer (AQ1);
 * - deny: the denied pod is no candidate: the next borrowing pod (202)
 *   is asked instead, and granted goes; with no other candidate nothing
 *   is evicted and the pod waits;
 * - not before T: no candidate before T on the injected clock (nothing
 *   evicted 1 ms before, with the other candidate denied), evicted at T;
 * - the deadline: fail-open evicts at it (not 1 ms before), fail-closed
 *   keeps the pod, each counted under the reclaim asker;
 * - a registration without the opt-in is not asked by reclaim: 203 goes
 *   at once, no ask posted;
 * - the same grant and no opt-in through the public C API
 *   (SHMSCHED_APPROVAL_RECLAIM_TOO, what the gateway's webhooks use);
 *   preemption's too (SHMSCHED_APPROVAL_PREEMPT_TOO) below.
 * Preemption likewise (DefaultPreemption, kubernetes pkg/scheduler/
 * framework/plugins/defaultpreemption: a pod of priority 1000 evicts one
 * of two priority-0 pods that fill two nodes; which node the choice tries
 * first is random, so the tests read which pod was asked): grant; deny
 * then the other pod asked and granted; both denied, nothing evicted;
 * not-before and the fail-open deadline on the injected clock; a
 * registration for reclaim only not asked.
 * Each test fails on the old code: its registration's flag is refused
 * there (EINVAL), and reclaim asked nobody.
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

#include "approval_mgr.h"
#include "base/base.h"
#include "daemon/daemon.h"
#include "fixture.h"
#include "quota/quota.h"
#include "shm/shm.h"
#include "shmsched/client.h"

static struct fixture_dir fx;
static char cluster[160];
/* The managers' clock, ns (fixture_clock_ns): written by the test
 * thread, read by the daemon's (relaxed both; each step is followed by
 * requests whose round trips order it). */
static uint64_t fake_now = UINT64_C(1000000000);

static void advance_ms(uint64_t ms)
{
	__atomic_fetch_add(&fake_now, ms * 1000000u, __ATOMIC_RELAXED);
}

static int setup(void **state)
{
	(void)state;
	fixture_dir_make(&fx, "apr_evict", 0);
	snprintf(cluster, sizeof(cluster), "%s/cluster.json", fx.dir);
	FILE *f = fopen(cluster, "w");
	assert_non_null(f);
	fputs("{\"kind\":\"List\",\"items\":[{\"kind\":\"Node\",\"metadata\":"
	      "{\"name\":\"n0\"},\"status\":{\"allocatable\":{\"cpu\":\"32\","
	      "\"memory\":\"64Gi\",\"pods\":\"500\"}}}]}", f);
	fclose(f);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	fixture_dir_remove(&fx);
	return 0;
}

/* test_reclaim.c's tree: cohort ml, team-a reclaiming (Any), team-b. */
static struct quota_tree *make_tree(void)
{
	struct quota_tree *t;
	char err[256];
	assert_int_equal(quota_tree_new(&t), 0);
	int f = quota_flavor_add(t, "fa", err, sizeof(err));
	int cpu = quota_resource_add(t, "cpu", err, sizeof(err));
	int co = quota_cohort_add(t, "ml", NULL, QUOTA_WEIGHT_DEFAULT_MILLI, err,
				  sizeof(err));
	struct quota_preemption pa = {.reclaim_within_cohort = QUOTA_PREEMPT_ANY};
	int a = quota_cluster_queue_add(t, "team-a", "ml", QUOTA_WEIGHT_DEFAULT_MILLI,
					&pa, err, sizeof(err));
	int b = quota_cluster_queue_add(t, "team-b", "ml", QUOTA_WEIGHT_DEFAULT_MILLI,
					NULL, err, sizeof(err));
	if (f < 0 || cpu < 0 || co < 0 || a < 0 || b < 0)
		fail_msg("tree: %s", err);
	assert_int_equal(quota_set(t, a, f, cpu, 2000, QUOTA_NO_LIMIT,
				   QUOTA_NO_LIMIT, err, sizeof(err)), 0);
	assert_int_equal(quota_set(t, b, f, cpu, 2000, QUOTA_NO_LIMIT,
				   QUOTA_NO_LIMIT, err, sizeof(err)), 0);
	assert_true(quota_local_queue_add(t, "default", "qa", "team-a", err,
					  sizeof(err)) >= 0);
	assert_true(quota_local_queue_add(t, "default", "qb", "team-b", err,
					  sizeof(err)) >= 0);
	if (quota_seal(t, err, sizeof(err)) < 0)
		fail_msg("quota_seal: %s", err);
	return t;
}

static uint32_t tmpl(struct shmsched_client *c, const char *queue, const char *cpu)
{
	char json[512], err[512];
	snprintf(json, sizeof(json), "{\"kind\":\"Pod\",\"metadata\":{\"name\":"
		 "\"t\",\"namespace\":\"default\",\"labels\":{\"kueue.x-k8s.io/"
		 "queue-name\":\"%s\"}},\"spec\":{\"containers\":[{\"name\":\"c\","
		 "\"resources\":{\"requests\":{\"cpu\":\"%s\"}}}]}}", queue, cpu);
	uint32_t tid;
	if (shmsched_register_template(c, json, strlen(json), &tid, err,
				       sizeof(err)) < 0)
		fail_msg("template %s: %s", json, err);
	return tid;
}

struct run {
	struct quota_tree *t;
	struct daemon *d;
	struct shmsched_client *a, *b;
	uint64_t b_ids[4]; /* team-b's placements, by cookie - 200 */
	struct mgr m;
};

#define SEL_B "kueue.x-k8s.io/queue-name=qb"

/* The daemon and team-b's n_b pods placed. */
static void start_pods(struct run *r, int n_b)
{
	struct daemon_config cfg = fixture_config(&fx);
	cfg.cluster_path = cluster;
	cfg.slots = 256;
	cfg.quota = r->t = make_tree();
	cfg.approval_clock = fixture_clock_ns;
	cfg.approval_clock_arg = &fake_now;
	r->d = fixture_start(&cfg);
	r->a = fixture_connect_as(fx.sock, "team-a");
	r->b = fixture_connect_as(fx.sock, "team-b");
	uint32_t qb = tmpl(r->b, "qb", "1");
	for (int i = 0; i < n_b; i++)
		r->b_ids[i] = fixture_place(r->b, qb, 200 + (uint64_t)i, SHMSCHED_PLACED);
	r->m.fd = -1;
}

/* start_pods, and the manager registered for team-b's pods with `flags`
 * and `deadline_ms`. */
static void start(struct run *r, int n_b, uint32_t flags, uint32_t deadline_ms)
{
	start_pods(r, n_b);
	mgr_open(&r->m, fx.admin);
	if (mgr_register(&r->m, "b-manager", SEL_B, deadline_ms, flags) < 0)
		fail_msg("register: %s", r->m.err);
}

static void stop(struct run *r)
{
	struct daemon_stats ds;
	mgr_close(&r->m);
	shmsched_disconnect(r->a);
	shmsched_disconnect(r->b);
	daemon_stop(r->d, 1000, &ds);
	quota_tree_free(r->t);
}

/* team-a's pod (cookie 1) of `cpu`, waiting up to 30 s: with team-b's 4
 * pods, 1 cpu; with its 3 (1 cpu of the cohort's 4 free), 2 cpu. */
static void submit_waiting(struct run *r, const char *cpu)
{
	struct shmsched_pod p = {.cookie = 1, .template_id = tmpl(r->a, "qa", cpu),
				 .flags = SHMSCHED_WAIT,
				 .deadline_ns = now_ns() + UINT64_C(30000000000)};
	assert_int_equal(shmsched_submit(r->a, &p, 1), 1);
}

/* The one ask pending now (waited for up to 5 s): about placement
 * `placement`, from reclaim. */
static uint64_t one_ask(struct run *r, uint64_t placement)
{
	struct op_approval_ask asks[8];
	uint32_t n = mgr_await(&r->m, asks, 5000);
	assert_int_equal(n, 1);
	assert_int_equal(asks[0].reason, OP_APPROVAL_RECLAIM);
	assert_int_equal(asks[0].placement_id, placement);
	assert_string_equal(asks[0].pod, "pod default/t");
	assert_string_equal(asks[0].node, "n0");
	return asks[0].ask_id;
}

/* Nothing evicted within `ms`, team-a's pod still waiting. */
static void nothing_evicted(struct run *r, unsigned ms)
{
	struct shmsched_result res;
	assert_int_equal(fixture_await(r->b, &res, 1, ms), 0);
	assert_int_equal(fixture_await(r->a, &res, 1, 10), 0);
	struct daemon_stats ds;
	daemon_get_stats(r->d, &ds);
	assert_int_equal(ds.reclaim_victims, 0);
	assert_int_equal(ds.pending_unschedulable, 1);
}

/* team-b hears of `cookie`'s eviction and team-a's pod is placed. */
static void evicted_and_placed(struct run *r, uint64_t cookie)
{
	struct shmsched_result res;
	assert_int_equal(fixture_await(r->b, &res, 1, 5000), 1);
	assert_int_equal(res.status, SHMSCHED_EVICTED);
	assert_int_equal(res.cookie, cookie);
	assert_int_equal(fixture_await(r->a, &res, 1, 5000), 1);
	assert_int_equal(res.status, SHMSCHED_PLACED);
	assert_int_equal(res.cookie, 1);
	assert_int_equal(fixture_await(r->b, &res, 1, 100), 0);
}

static void test_reclaim_grant(void **state)
{
	(void)state;
	struct run r;
	start(&r, 4, OP_APPROVAL_RECLAIM_TOO, 60000);
	submit_waiting(&r, "1");
	uint64_t ask = one_ask(&r, r.b_ids[3]);
	nothing_evicted(&r, 300);
	/* The answer alone wakes the waiting pod. */
	assert_int_equal(mgr_answer(&r.m, ask, OP_APPROVAL_GRANT, 0), 0);
	evicted_and_placed(&r, 203);
	struct daemon_stats ds;
	daemon_get_stats(r.d, &ds);
	assert_int_equal(ds.approvals_by[1].asked, 1);
	assert_int_equal(ds.approvals_by[1].granted, 1);
	assert_int_equal(ds.approvals_by[0].asked, 0);
	assert_int_equal(ds.approvals_asked, 1);
	assert_int_equal(ds.reclaim_victims, 1);
	/* Done: no ask left. */
	struct op_approval_ask asks[8];
	assert_int_equal(mgr_pending(&r.m, asks), 0);
	stop(&r);
}

static void test_reclaim_deny(void **state)
{
	(void)state;
	struct run r;
	start(&r, 4, OP_APPROVAL_RECLAIM_TOO, 60000);
	submit_waiting(&r, "1");
	uint64_t ask = one_ask(&r, r.b_ids[3]);
	assert_int_equal(mgr_answer(&r.m, ask, OP_APPROVAL_DENY, 0), 0);
	/* 203 is no candidate: the other borrowing pod is asked. */
	ask = one_ask(&r, r.b_ids[2]);
	nothing_evicted(&r, 200);
	assert_int_equal(mgr_answer(&r.m, ask, OP_APPROVAL_GRANT, 0), 0);
	evicted_and_placed(&r, 202);
	struct daemon_stats ds;
	daemon_get_stats(r.d, &ds);
	assert_int_equal(ds.approvals_by[1].asked, 2);
	assert_int_equal(ds.approvals_by[1].denied, 1);
	assert_int_equal(ds.approvals_by[1].granted, 1);
	stop(&r);

	/* One borrowing pod only: denied, nothing is left to ask. */
	start(&r, 3, OP_APPROVAL_RECLAIM_TOO, 60000);
	submit_waiting(&r, "2");
	ask = one_ask(&r, r.b_ids[2]);
	assert_int_equal(mgr_answer(&r.m, ask, OP_APPROVAL_DENY, 0), 0);
	nothing_evicted(&r, 500);
	struct op_approval_ask asks[8];
	assert_int_equal(mgr_pending(&r.m, asks), 0);
	daemon_get_stats(r.d, &ds);
	assert_int_equal(ds.approvals_by[1].asked, 1);
	assert_true(ds.reclaim_requests >= 2); /* asked again after the deny */
	stop(&r);
}

static void test_reclaim_not_before(void **state)
{
	(void)state;
	struct run r;
	start(&r, 4, OP_APPROVAL_RECLAIM_TOO, 60000);
	submit_waiting(&r, "1");
	uint64_t ask = one_ask(&r, r.b_ids[3]);
	assert_int_equal(mgr_answer(&r.m, ask, OP_APPROVAL_NOT_BEFORE, 5000), 0);
	/* 203 no candidate until then: 202 is asked, and denied. */
	ask = one_ask(&r, r.b_ids[2]);
	assert_int_equal(mgr_answer(&r.m, ask, OP_APPROVAL_DENY, 0), 0);
	advance_ms(4999);
	nothing_evicted(&r, 400);
	advance_ms(1);
	evicted_and_placed(&r, 203);
	struct daemon_stats ds;
	daemon_get_stats(r.d, &ds);
	assert_int_equal(ds.approvals_by[1].not_before, 1);
	assert_int_equal(ds.approvals_by[1].denied, 1);
	stop(&r);
}

static void test_reclaim_deadline(void **state)
{
	(void)state;
	struct run r;
	/* Fail-open: no answer by the deadline, evicted at it. */
	start(&r, 3, OP_APPROVAL_RECLAIM_TOO | OP_APPROVAL_FAIL_OPEN, 1000);
	submit_waiting(&r, "2");
	(void)one_ask(&r, r.b_ids[2]);
	advance_ms(999);
	nothing_evicted(&r, 400);
	advance_ms(1);
	evicted_and_placed(&r, 202);
	struct daemon_stats ds;
	daemon_get_stats(r.d, &ds);
	assert_int_equal(ds.approvals_by[1].timed_out_open, 1);
	assert_int_equal(ds.approvals_by[1].timed_out_closed, 0);
	stop(&r);

	/* Fail-closed: kept, and counted when the deadline passes. */
	start(&r, 3, OP_APPROVAL_RECLAIM_TOO, 1000);
	submit_waiting(&r, "2");
	(void)one_ask(&r, r.b_ids[2]);
	advance_ms(1000);
	nothing_evicted(&r, 500);
	daemon_get_stats(r.d, &ds);
	assert_int_equal(ds.approvals_by[1].timed_out_closed, 1);
	assert_int_equal(ds.approvals_by[1].timed_out_open, 0);
	stop(&r);
}

/* Without RECLAIM_TOO the registration is the drain's only. */
static void test_reclaim_not_opted_in(void **state)
{
	(void)state;
	struct run r;
	start(&r, 4, 0, 60000);
	submit_waiting(&r, "1");
	evicted_and_placed(&r, 203);
	struct op_approval_ask asks[8];
	assert_int_equal(mgr_pending(&r.m, asks), 0);
	struct daemon_stats ds;
	daemon_get_stats(r.d, &ds);
	assert_int_equal(ds.approvals_asked, 0);
	stop(&r);
}

/* The public C API's manager `m`: its one pending ask into asks[0],
 * polled every 10 ms for up to 5 s. */
static void api_await_one(struct shmsched_client *m,
			  struct shmsched_approval_ask *asks)
{
	char err[512];
	unsigned more = 1;
	int n = 0;
	for (int i = 0; i < 500 && n == 0; i++) {
		n = shmsched_approval_pending(m, asks, &more, err, sizeof(err));
		if (n == 0)
			usleep(10000);
	}
	if (n != 1 || more != 0)
		fail_msg("pending: %d asks, %u more (expected 1, 0): %s", n, more,
			 err);
}

/* The public C API's manager (shmsched_approval_register, _pending,
 * _answer: what the gateway's webhooks use) opts in with
 * SHMSCHED_APPROVAL_RECLAIM_TOO: asked by reclaim, its grant lets the
 * eviction go; registered with 0 it is not asked, and a bit past the
 * three flags is refused by the library. Fails on the old library: it
 * refused RECLAIM_TOO (EINVAL). */
static void test_reclaim_c_api(void **state)
{
	(void)state;
	struct run r;
	char err[512];
	start_pods(&r, 4);
	struct shmsched_client *m = fixture_connect(fx.admin);
	assert_int_equal(shmsched_approval_register(m, "b-api", SEL_B, 60000, 8u,
						    err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "flags 0x8"));
	int reg = shmsched_approval_register(m, "b-api", SEL_B, 60000,
					     SHMSCHED_APPROVAL_RECLAIM_TOO, err,
					     sizeof(err));
	if (reg < 1)
		fail_msg("register: %d %s", reg, err);
	submit_waiting(&r, "1");
	struct shmsched_approval_ask asks[SHMSCHED_APPROVAL_PAGE];
	unsigned more;
	api_await_one(m, asks);
	assert_int_equal(asks[0].reason, SHMSCHED_APPROVAL_RECLAIM);
	assert_int_equal(asks[0].placement_id, r.b_ids[3]);
	assert_string_equal(asks[0].pod, "default/t");
	nothing_evicted(&r, 300);
	assert_int_equal(shmsched_approval_answer(m, asks[0].ask_id,
						  SHMSCHED_APPROVAL_GRANT, 0, err,
						  sizeof(err)), 0);
	evicted_and_placed(&r, 203);
	struct daemon_stats ds;
	daemon_get_stats(r.d, &ds);
	assert_int_equal(ds.approvals_by[1].asked, 1);
	assert_int_equal(ds.approvals_by[1].granted, 1);
	shmsched_disconnect(m);
	stop(&r);

	/* Registered with 0: the drain's only, reclaim evicts at once. */
	start_pods(&r, 4);
	m = fixture_connect(fx.admin);
	assert_true(shmsched_approval_register(m, "b-api", SEL_B, 60000, 0, err,
					       sizeof(err)) >= 1);
	submit_waiting(&r, "1");
	evicted_and_placed(&r, 203);
	assert_int_equal(shmsched_approval_pending(m, asks, &more, err,
						   sizeof(err)), 0);
	daemon_get_stats(r.d, &ds);
	assert_int_equal(ds.approvals_asked, 0);
	shmsched_disconnect(m);
	stop(&r);
}

/* --- priority preemption (OP_APPROVAL_PREEMPT_TOO) ---
 *
 * Nodes n0 and n1 of 2 cpu (fx.cluster, the PriorityClass "high" of
 * 1000 in it); the low producer's pods app=db of 2 cpu fill both (cookies
 * 0 and 1, priority 0); the high producer's 2-cpu pod of class high waits,
 * and may preempt either (DefaultPreemption; the choice's start is a
 * random node). The manager selects app=db. */
struct prun {
	struct daemon *d;
	struct shmsched_client *low, *hi;
	uint64_t db[2]; /* placements, by cookie */
	struct mgr m;
	struct shmsched_client *api; /* the C API's manager, or NULL */
};

/* As below, the manager registered through the public C API
 * (shmsched_approval_register) into r->api when `api`, else r->m. */
static void pstart_as(struct prun *r, uint32_t flags, uint32_t deadline_ms,
		      bool api)
{
	fixture_write_cluster(&fx, &(struct fixture_nodes){.count = 2, .cpu = "2",
							    .memory = "4Gi"},
			      "{\"kind\":\"PriorityClass\",\"metadata\":{\"name\":"
			      "\"high\"},\"value\":1000}");
	struct daemon_config cfg = fixture_config(&fx);
	cfg.approval_clock = fixture_clock_ns;
	cfg.approval_clock_arg = &fake_now;
	r->d = fixture_start(&cfg);
	r->low = fixture_connect_as(fx.sock, "low");
	r->hi = fixture_connect_as(fx.sock, "high");
	uint32_t db = fixture_template(r->low, "{\"kind\":\"Pod\",\"metadata\":{"
		"\"name\":\"db\",\"labels\":{\"app\":\"db\"}},\"spec\":{"
		"\"containers\":[{\"name\":\"c\",\"resources\":{\"requests\":"
		"{\"cpu\":\"2\"}}}]}}");
	for (uint64_t i = 0; i < 2; i++)
		r->db[i] = fixture_place(r->low, db, i, SHMSCHED_PLACED);
	r->api = NULL;
	r->m.fd = -1;
	if (api) {
		char err[512];
		r->api = fixture_connect(fx.admin);
		if (shmsched_approval_register(r->api, "db-manager", "app=db",
					       deadline_ms, flags, err,
					       sizeof(err)) < 1)
			fail_msg("register: %s", err);
	} else {
		mgr_open(&r->m, fx.admin);
		if (mgr_register(&r->m, "db-manager", "app=db", deadline_ms,
				 flags) < 0)
			fail_msg("register: %s", r->m.err);
	}
	uint32_t top = fixture_template(r->hi, "{\"kind\":\"Pod\",\"metadata\":{"
		"\"name\":\"top\",\"labels\":{\"app\":\"top\"}},\"spec\":{"
		"\"priorityClassName\":\"high\",\"containers\":[{\"name\":"
		"\"c\",\"resources\":{\"requests\":{\"cpu\":\"2\"}}}]}}");
	struct shmsched_pod p = {.cookie = 7, .template_id = top,
				 .flags = SHMSCHED_WAIT,
				 .deadline_ns = now_ns() + UINT64_C(30000000000)};
	assert_int_equal(shmsched_submit(r->hi, &p, 1), 1);
}

static void pstart(struct prun *r, uint32_t flags, uint32_t deadline_ms)
{
	pstart_as(r, flags, deadline_ms, false);
}

static void pstop(struct prun *r)
{
	struct daemon_stats ds;
	mgr_close(&r->m);
	if (r->api != NULL)
		shmsched_disconnect(r->api);
	shmsched_disconnect(r->low);
	shmsched_disconnect(r->hi);
	daemon_stop(r->d, 1000, &ds);
}

/* The one ask pending now (waited for up to 5 s), from preemption, about
 * one of the db pods: which (0 or 1) into *which; its id. */
static uint64_t pask(struct prun *r, int *which)
{
	struct op_approval_ask asks[8];
	assert_int_equal(mgr_await(&r->m, asks, 5000), 1);
	assert_int_equal(asks[0].reason, OP_APPROVAL_PREEMPT);
	assert_string_equal(asks[0].pod, "pod default/db");
	*which = asks[0].placement_id == r->db[0] ? 0 :
		 asks[0].placement_id == r->db[1] ? 1 : -1;
	assert_true(*which >= 0);
	return asks[0].ask_id;
}

static void pnothing(struct prun *r, unsigned ms)
{
	struct shmsched_result res;
	assert_int_equal(fixture_await(r->low, &res, 1, ms), 0);
	assert_int_equal(fixture_await(r->hi, &res, 1, 10), 0);
	struct daemon_stats ds;
	daemon_get_stats(r->d, &ds);
	assert_int_equal(ds.victims, 0);
}

/* db pod `which` preempted, the high pod placed, the other db pod kept. */
static void ppreempted(struct prun *r, int which)
{
	struct shmsched_result res;
	assert_int_equal(fixture_await(r->low, &res, 1, 5000), 1);
	assert_int_equal(res.status, SHMSCHED_EVICTED);
	assert_int_equal(res.cookie, (uint64_t)which);
	assert_int_equal(fixture_await(r->hi, &res, 1, 5000), 1);
	assert_int_equal(res.status, SHMSCHED_PLACED);
	assert_int_equal(res.cookie, 7);
	assert_int_equal(fixture_await(r->low, &res, 1, 100), 0);
}

static void test_preempt_grant_deny(void **state)
{
	(void)state;
	struct prun r;
	int x, y;
	/* Grant: the answer wakes the preemptor. */
	pstart(&r, OP_APPROVAL_PREEMPT_TOO, 60000);
	uint64_t ask = pask(&r, &x);
	pnothing(&r, 300);
	assert_int_equal(mgr_answer(&r.m, ask, OP_APPROVAL_GRANT, 0), 0);
	ppreempted(&r, x);
	struct daemon_stats ds;
	daemon_get_stats(r.d, &ds);
	assert_int_equal(ds.approvals_by[2].asked, 1);
	assert_int_equal(ds.approvals_by[2].granted, 1);
	assert_int_equal(ds.approvals_by[1].asked, 0);
	pstop(&r);

	/* Deny: the other pod is asked, and granted goes. */
	pstart(&r, OP_APPROVAL_PREEMPT_TOO, 60000);
	ask = pask(&r, &x);
	assert_int_equal(mgr_answer(&r.m, ask, OP_APPROVAL_DENY, 0), 0);
	ask = pask(&r, &y);
	assert_int_equal(y, 1 - x);
	pnothing(&r, 200);
	assert_int_equal(mgr_answer(&r.m, ask, OP_APPROVAL_GRANT, 0), 0);
	ppreempted(&r, y);
	pstop(&r);

	/* Both denied: no victim, nothing evicted, the pod waits. */
	pstart(&r, OP_APPROVAL_PREEMPT_TOO, 60000);
	ask = pask(&r, &x);
	assert_int_equal(mgr_answer(&r.m, ask, OP_APPROVAL_DENY, 0), 0);
	ask = pask(&r, &y);
	assert_int_equal(mgr_answer(&r.m, ask, OP_APPROVAL_DENY, 0), 0);
	pnothing(&r, 500);
	struct op_approval_ask asks[8];
	assert_int_equal(mgr_pending(&r.m, asks), 0);
	daemon_get_stats(r.d, &ds);
	assert_int_equal(ds.approvals_by[2].denied, 2);
	assert_int_equal(ds.pending_unschedulable, 1);
	pstop(&r);
}

static void test_preempt_time(void **state)
{
	(void)state;
	struct prun r;
	int x, y;
	/* Not before: x no victim until then (y denied meanwhile). */
	pstart(&r, OP_APPROVAL_PREEMPT_TOO, 60000);
	uint64_t ask = pask(&r, &x);
	assert_int_equal(mgr_answer(&r.m, ask, OP_APPROVAL_NOT_BEFORE, 5000), 0);
	ask = pask(&r, &y);
	assert_int_equal(mgr_answer(&r.m, ask, OP_APPROVAL_DENY, 0), 0);
	advance_ms(4999);
	pnothing(&r, 400);
	advance_ms(1);
	ppreempted(&r, x);
	pstop(&r);

	/* The deadline, fail-open: preempted at it, not 1 ms before. */
	pstart(&r, OP_APPROVAL_PREEMPT_TOO | OP_APPROVAL_FAIL_OPEN, 1000);
	(void)pask(&r, &x);
	advance_ms(999);
	pnothing(&r, 400);
	advance_ms(1);
	ppreempted(&r, x);
	struct daemon_stats ds;
	daemon_get_stats(r.d, &ds);
	assert_int_equal(ds.approvals_by[2].timed_out_open, 1);
	pstop(&r);
}

/* A registration for reclaim only: preemption does not ask it. */
static void test_preempt_not_opted_in(void **state)
{
	(void)state;
	struct prun r;
	pstart(&r, OP_APPROVAL_RECLAIM_TOO, 60000);
	struct shmsched_result res;
	assert_int_equal(fixture_await(r.low, &res, 1, 5000), 1);
	assert_int_equal(res.status, SHMSCHED_EVICTED);
	assert_int_equal(fixture_await(r.hi, &res, 1, 5000), 1);
	assert_int_equal(res.status, SHMSCHED_PLACED);
	struct op_approval_ask asks[8];
	assert_int_equal(mgr_pending(&r.m, asks), 0);
	struct daemon_stats ds;
	daemon_get_stats(r.d, &ds);
	assert_int_equal(ds.approvals_asked, 0);
	pstop(&r);
}

/* The public C API's manager with SHMSCHED_APPROVAL_PREEMPT_TOO: asked
 * by preemption (reason SHMSCHED_APPROVAL_PREEMPT), its grant lets the
 * preemption go; with RECLAIM_TOO only it is not asked. Fails on the old
 * library (PREEMPT_TOO refused: EINVAL). */
static void test_preempt_c_api(void **state)
{
	(void)state;
	struct prun r;
	char err[512];
	pstart_as(&r, SHMSCHED_APPROVAL_PREEMPT_TOO, 60000, true);
	struct shmsched_approval_ask asks[SHMSCHED_APPROVAL_PAGE];
	unsigned more;
	api_await_one(r.api, asks);
	assert_int_equal(asks[0].reason, SHMSCHED_APPROVAL_PREEMPT);
	assert_string_equal(asks[0].pod, "default/db");
	int which = asks[0].placement_id == r.db[0] ? 0 :
		    asks[0].placement_id == r.db[1] ? 1 : -1;
	assert_true(which >= 0);
	pnothing(&r, 300);
	assert_int_equal(shmsched_approval_answer(r.api, asks[0].ask_id,
						  SHMSCHED_APPROVAL_GRANT, 0, err,
						  sizeof(err)), 0);
	ppreempted(&r, which);
	struct daemon_stats ds;
	daemon_get_stats(r.d, &ds);
	assert_int_equal(ds.approvals_by[2].granted, 1);
	pstop(&r);

	pstart_as(&r, SHMSCHED_APPROVAL_RECLAIM_TOO, 60000, true);
	struct shmsched_result res;
	assert_int_equal(fixture_await(r.low, &res, 1, 5000), 1);
	assert_int_equal(res.status, SHMSCHED_EVICTED);
	assert_int_equal(shmsched_approval_pending(r.api, asks, &more, err,
						   sizeof(err)), 0);
	daemon_get_stats(r.d, &ds);
	assert_int_equal(ds.approvals_asked, 0);
	pstop(&r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_reclaim_grant),
		cmocka_unit_test(test_reclaim_deny),
		cmocka_unit_test(test_reclaim_not_before),
		cmocka_unit_test(test_reclaim_deadline),
		cmocka_unit_test(test_reclaim_not_opted_in),
		cmocka_unit_test(test_reclaim_c_api),
		cmocka_unit_test(test_preempt_grant_deny),
		cmocka_unit_test(test_preempt_time),
		cmocka_unit_test(test_preempt_not_opted_in),
		cmocka_unit_test(test_preempt_c_api),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
