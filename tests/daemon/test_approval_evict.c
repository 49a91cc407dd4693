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

#include "approval_mgr.h"
#include "base/base.h"
#include "daemon/daemon.h"
#include "fixture.h"
#include "quota_fixture.h"
#include "quota/quota.h"
#include "shm/shm.h"
#include "shmsched/client.h"

static struct fixture_dir fx;
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
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	fixture_dir_remove(&fx);
	return 0;
}

/* One daemon and its disruption, reclaim's or preemption's alike: the
 * victims' producer (team-b's, the low one's) with their placements, the
 * waiting pod's producer (team-a's, the high one's), and the manager of
 * the victims, on the admin socket (m) or through the public C API (api). */
struct run {
	struct quota_tree *t;      /* reclaim's quota; NULL: preemption's run */
	struct daemon *d;
	struct shmsched_client *victims, *waiter;
	uint64_t first_cookie;     /* the victims' cookies count up from it */
	uint64_t ids[4];           /* their placements, by cookie - first_cookie */
	int n_ids;
	uint64_t waiter_cookie;
	uint32_t reason;           /* what asks: OP_APPROVAL_RECLAIM, _PREEMPT */
	const char *pod;           /* the victims' pod, as an ask names it */
	const char *node;          /* the victims' node; NULL: either */
	struct mgr m;
	struct shmsched_client *api; /* the C API's manager, or NULL */
};

/* The manager of r's victims, selected by `selector`, registered with
 * `flags` and `deadline_ms`: through the public C API
 * (shmsched_approval_register) into r->api when `api`, else r->m. */
static void manage(struct run *r, const char *name, const char *selector,
		   uint32_t flags, uint32_t deadline_ms, bool api)
{
	r->m.fd = -1;
	r->api = NULL;
	if (api) {
		char err[512];
		r->api = fixture_connect(fx.admin);
		if (shmsched_approval_register(r->api, name, selector, deadline_ms,
					       flags, err, sizeof(err)) < 1)
			fail_msg("register: %s", err);
	} else {
		mgr_open(&r->m, fx.admin);
		if (mgr_register(&r->m, name, selector, deadline_ms, flags) < 0)
			fail_msg("register: %s", r->m.err);
	}
}

static void stop(struct run *r)
{
	struct daemon_stats ds;
	mgr_close(&r->m);
	if (r->api != NULL)
		shmsched_disconnect(r->api);
	shmsched_disconnect(r->victims);
	shmsched_disconnect(r->waiter);
	daemon_stop(r->d, 1000, &ds);
	quota_tree_free(r->t);
}

/* The victims' placement `placement_id` as an index of r->ids (the test
 * fails on another). */
static int victim_of(const struct run *r, uint64_t placement_id)
{
	for (int i = 0; i < r->n_ids; i++)
		if (r->ids[i] == placement_id)
			return i;
	fail_msg("placement %" PRIu64 " is none of the victims'", placement_id);
	return -1;
}

/* The one ask pending now (waited for up to 5 s), from r->reason, about
 * one of the victims: which into *which; its id. */
static uint64_t ask(struct run *r, int *which)
{
	struct op_approval_ask asks[8];
	assert_int_equal(mgr_await(&r->m, asks, 5000), 1);
	assert_int_equal(asks[0].reason, r->reason);
	assert_string_equal(asks[0].pod, r->pod);
	if (r->node != NULL)
		assert_string_equal(asks[0].node, r->node);
	*which = victim_of(r, asks[0].placement_id);
	return asks[0].ask_id;
}

/* As ask, about victim `which`. */
static uint64_t ask_about(struct run *r, int which)
{
	int got;
	uint64_t id = ask(r, &got);
	assert_int_equal(got, which);
	return id;
}

/* Nothing evicted within `ms`, the waiting pod still waiting. */
static void nothing_evicted(struct run *r, unsigned ms)
{
	struct shmsched_result res;
	assert_int_equal(fixture_await(r->victims, &res, 1, ms), 0);
	assert_int_equal(fixture_await(r->waiter, &res, 1, 10), 0);
	struct daemon_stats ds;
	daemon_get_stats(r->d, &ds);
	assert_int_equal(ds.victims, 0);
	assert_int_equal(ds.reclaim_victims, 0);
	if (r->t != NULL)
		assert_int_equal(ds.pending_unschedulable, 1);
}

/* One victim hears of its eviction, the waiting pod is placed, and no
 * other victim goes. Returns the victim. */
static int evicted_one(struct run *r)
{
	struct shmsched_result res;
	assert_int_equal(fixture_await(r->victims, &res, 1, 5000), 1);
	assert_int_equal(res.status, SHMSCHED_EVICTED);
	assert_in_range(res.cookie, r->first_cookie,
			r->first_cookie + (uint64_t)r->n_ids - 1);
	int which = (int)(res.cookie - r->first_cookie);
	assert_int_equal(fixture_await(r->waiter, &res, 1, 5000), 1);
	assert_int_equal(res.status, SHMSCHED_PLACED);
	assert_int_equal(res.cookie, r->waiter_cookie);
	assert_int_equal(fixture_await(r->victims, &res, 1, 100), 0);
	return which;
}

/* As evicted_one, the victim `which`. */
static void evicted_and_placed(struct run *r, int which)
{
	assert_int_equal(evicted_one(r), which);
}

/* The public C API's manager r->api: its one pending ask into asks[0],
 * polled every 10 ms for up to 5 s; the victim it is about. */
static int api_await_one(struct run *r, struct shmsched_approval_ask *asks)
{
	char err[512];
	unsigned more = 1;
	int n = 0;
	for (int i = 0; i < 500 && n == 0; i++) {
		n = shmsched_approval_pending(r->api, asks, &more, err, sizeof(err));
		if (n == 0)
			usleep(10000);
	}
	if (n != 1 || more != 0)
		fail_msg("pending: %d asks, %u more (expected 1, 0): %s", n, more,
			 err);
	return victim_of(r, asks[0].placement_id);
}

/* The C API's grant, on a run whose manager r->api registered opting in:
 * the one ask (of `reason`, about `pod`), nothing evicted while asked,
 * the grant lets the victim go. Returns the victim. */
static int api_grant_scenario(struct run *r, int reason, const char *pod)
{
	char err[512];
	struct shmsched_approval_ask asks[SHMSCHED_APPROVAL_PAGE];
	int which = api_await_one(r, asks);
	assert_int_equal(asks[0].reason, reason);
	assert_string_equal(asks[0].pod, pod);
	nothing_evicted(r, 300);
	assert_int_equal(shmsched_approval_answer(r->api, asks[0].ask_id,
						  SHMSCHED_APPROVAL_GRANT, 0, err,
						  sizeof(err)), 0);
	evicted_and_placed(r, which);
	return which;
}

/* A run whose manager r->api registered without opting in: a victim
 * evicted at once (returned), r->api never asked. */
static int api_not_asked(struct run *r)
{
	char err[512];
	struct shmsched_approval_ask asks[SHMSCHED_APPROVAL_PAGE];
	unsigned more;
	int which = evicted_one(r);
	assert_int_equal(shmsched_approval_pending(r->api, asks, &more, err,
						   sizeof(err)), 0);
	struct daemon_stats ds;
	daemon_get_stats(r->d, &ds);
	assert_int_equal(ds.approvals_asked, 0);
	return which;
}

/* The scenarios both disruptions go through, on a started run:
 * - grant: the victim first asked is not evicted while asked; the grant
 *   alone (no clock step, no other event) evicts it and places the
 *   waiting pod (the answer wakes it: AQ1);
 * - not before 5 s: that victim is no candidate until then, another is
 *   asked and denied; nothing goes 1 ms before, the first goes at 5 s on
 *   the injected clock;
 * - the fail-open deadline of 1 s: evicted at it, not 1 ms before.
 * Each returns the victim evicted (and into *other the one denied). */
static int grant_scenario(struct run *r)
{
	int x;
	uint64_t id = ask(r, &x);
	nothing_evicted(r, 300);
	assert_int_equal(mgr_answer(&r->m, id, OP_APPROVAL_GRANT, 0), 0);
	evicted_and_placed(r, x);
	return x;
}

static int not_before_scenario(struct run *r, int *other)
{
	int x;
	uint64_t id = ask(r, &x);
	assert_int_equal(mgr_answer(&r->m, id, OP_APPROVAL_NOT_BEFORE, 5000), 0);
	/* x is no candidate until then: another is asked, and denied. */
	id = ask(r, other);
	assert_int_not_equal(*other, x);
	assert_int_equal(mgr_answer(&r->m, id, OP_APPROVAL_DENY, 0), 0);
	advance_ms(4999);
	nothing_evicted(r, 400);
	advance_ms(1);
	evicted_and_placed(r, x);
	return x;
}

static int deadline_open_scenario(struct run *r)
{
	int x;
	(void)ask(r, &x);
	advance_ms(999);
	nothing_evicted(r, 400);
	advance_ms(1);
	evicted_and_placed(r, x);
	return x;
}

/* --- quota reclaim (OP_APPROVAL_RECLAIM_TOO) --- */

#define SEL_B "kueue.x-k8s.io/queue-name=qb"

/* The daemon on one node n0 of 32 cpu over test_reclaim.c's tree (cohort
 * ml, team-a reclaiming within it (Any), team-b; 2 cpu each), and team-b's
 * n_b pods of 1 cpu placed (cookies 200...). */
static void start_pods(struct run *r, int n_b)
{
	fixture_write_cluster(&fx, &(struct fixture_nodes){.count = 1, .cpu = "32",
							    .memory = "64Gi",
							    .pods = "500"}, NULL);
	struct quota_preemption pa = {.reclaim_within_cohort = QUOTA_PREEMPT_ANY};
	struct quota_fixture_queue queues[] = {
		{.name = "team-a", .local_queue = "qa", .cpu_milli = 2000,
		 .preemption = &pa},
		{.name = "team-b", .local_queue = "qb", .cpu_milli = 2000},
	};
	*r = (struct run){.first_cookie = 200, .n_ids = n_b, .waiter_cookie = 1,
			  .reason = OP_APPROVAL_RECLAIM, .pod = "pod default/t",
			  .node = "n0"};
	struct daemon_config cfg = fixture_config(&fx);
	cfg.slots = 256;
	cfg.quota = r->t = quota_fixture_cohort(0, queues, 2);
	cfg.approval_clock = fixture_clock_ns;
	cfg.approval_clock_arg = &fake_now;
	r->d = fixture_start(&cfg);
	r->waiter = fixture_connect_as(fx.sock, "team-a");
	r->victims = fixture_connect_as(fx.sock, "team-b");
	uint32_t qb = fixture_cpu_template(r->victims, "qb", "1");
	for (int i = 0; i < n_b; i++)
		r->ids[i] = fixture_place(r->victims, qb, 200 + (uint64_t)i,
					  SHMSCHED_PLACED);
	r->m.fd = -1;
}

/* start_pods, and the manager registered for team-b's pods with `flags`
 * and `deadline_ms`. */
static void start(struct run *r, int n_b, uint32_t flags, uint32_t deadline_ms)
{
	start_pods(r, n_b);
	manage(r, "b-manager", SEL_B, flags, deadline_ms, false);
}

/* team-a's pod (cookie 1) of `cpu`, waiting up to 30 s: with team-b's 4
 * pods, 1 cpu; with its 3 (1 cpu of the cohort's 4 free), 2 cpu. */
static void submit_waiting(struct run *r, const char *cpu)
{
	struct shmsched_pod p = {.cookie = 1,
				 .template_id = fixture_cpu_template(r->waiter, "qa",
								     cpu),
				 .flags = SHMSCHED_WAIT,
				 .deadline_ns = now_ns() + UINT64_C(30000000000)};
	assert_int_equal(shmsched_submit(r->waiter, &p, 1), 1);
}

static void test_reclaim_grant(void **state)
{
	(void)state;
	struct run r;
	start(&r, 4, OP_APPROVAL_RECLAIM_TOO, 60000);
	submit_waiting(&r, "1");
	assert_int_equal(grant_scenario(&r), 3); /* 203 asked first */
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
	uint64_t id = ask_about(&r, 3);
	assert_int_equal(mgr_answer(&r.m, id, OP_APPROVAL_DENY, 0), 0);
	/* 203 is no candidate: the other borrowing pod is asked. */
	id = ask_about(&r, 2);
	nothing_evicted(&r, 200);
	assert_int_equal(mgr_answer(&r.m, id, OP_APPROVAL_GRANT, 0), 0);
	evicted_and_placed(&r, 2);
	struct daemon_stats ds;
	daemon_get_stats(r.d, &ds);
	assert_int_equal(ds.approvals_by[1].asked, 2);
	assert_int_equal(ds.approvals_by[1].denied, 1);
	assert_int_equal(ds.approvals_by[1].granted, 1);
	stop(&r);

	/* One borrowing pod only: denied, nothing is left to ask. */
	start(&r, 3, OP_APPROVAL_RECLAIM_TOO, 60000);
	submit_waiting(&r, "2");
	id = ask_about(&r, 2);
	assert_int_equal(mgr_answer(&r.m, id, OP_APPROVAL_DENY, 0), 0);
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
	int denied;
	start(&r, 4, OP_APPROVAL_RECLAIM_TOO, 60000);
	submit_waiting(&r, "1");
	/* 203 asked first, then 202. */
	assert_int_equal(not_before_scenario(&r, &denied), 3);
	assert_int_equal(denied, 2);
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
	assert_int_equal(deadline_open_scenario(&r), 2);
	struct daemon_stats ds;
	daemon_get_stats(r.d, &ds);
	assert_int_equal(ds.approvals_by[1].timed_out_open, 1);
	assert_int_equal(ds.approvals_by[1].timed_out_closed, 0);
	stop(&r);

	/* Fail-closed: kept, and counted when the deadline passes. */
	start(&r, 3, OP_APPROVAL_RECLAIM_TOO, 1000);
	submit_waiting(&r, "2");
	(void)ask_about(&r, 2);
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
	evicted_and_placed(&r, 3);
	struct op_approval_ask asks[8];
	assert_int_equal(mgr_pending(&r.m, asks), 0);
	struct daemon_stats ds;
	daemon_get_stats(r.d, &ds);
	assert_int_equal(ds.approvals_asked, 0);
	stop(&r);
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
	r.api = fixture_connect(fx.admin);
	assert_int_equal(shmsched_approval_register(r.api, "b-api", SEL_B, 60000,
						    8u, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "flags 0x8"));
	int reg = shmsched_approval_register(r.api, "b-api", SEL_B, 60000,
					     SHMSCHED_APPROVAL_RECLAIM_TOO, err,
					     sizeof(err));
	if (reg < 1)
		fail_msg("register: %d %s", reg, err);
	submit_waiting(&r, "1");
	assert_int_equal(api_grant_scenario(&r, SHMSCHED_APPROVAL_RECLAIM,
					    "default/t"), 3);
	struct daemon_stats ds;
	daemon_get_stats(r.d, &ds);
	assert_int_equal(ds.approvals_by[1].asked, 1);
	assert_int_equal(ds.approvals_by[1].granted, 1);
	stop(&r);

	/* Registered with 0: the drain's only, reclaim evicts at once. */
	start_pods(&r, 4);
	manage(&r, "b-api", SEL_B, 0, 60000, true);
	submit_waiting(&r, "1");
	assert_int_equal(api_not_asked(&r), 3);
	stop(&r);
}

/* --- priority preemption (OP_APPROVAL_PREEMPT_TOO) ---
 *
 * Nodes n0 and n1 of 2 cpu (fx.cluster, the PriorityClass "high" of
 * 1000 in it); the low producer's pods app=db of 2 cpu fill both (cookies
 * 0 and 1, priority 0); the high producer's 2-cpu pod of class high waits,
 * and may preempt either (DefaultPreemption; the choice's start is a
 * random node). The manager selects app=db, registered with `flags` and
 * `deadline_ms` through the public C API when `api`. */
static void pstart_as(struct run *r, uint32_t flags, uint32_t deadline_ms,
		      bool api)
{
	fixture_write_cluster(&fx, &(struct fixture_nodes){.count = 2, .cpu = "2",
							    .memory = "4Gi"},
			      "{\"kind\":\"PriorityClass\",\"metadata\":{\"name\":"
			      "\"high\"},\"value\":1000}");
	*r = (struct run){.first_cookie = 0, .n_ids = 2, .waiter_cookie = 7,
			  .reason = OP_APPROVAL_PREEMPT, .pod = "pod default/db"};
	struct daemon_config cfg = fixture_config(&fx);
	cfg.approval_clock = fixture_clock_ns;
	cfg.approval_clock_arg = &fake_now;
	r->d = fixture_start(&cfg);
	r->victims = fixture_connect_as(fx.sock, "low");
	r->waiter = fixture_connect_as(fx.sock, "high");
	uint32_t db = fixture_template(r->victims, "{\"kind\":\"Pod\",\"metadata\":{"
		"\"name\":\"db\",\"labels\":{\"app\":\"db\"}},\"spec\":{"
		"\"containers\":[{\"name\":\"c\",\"resources\":{\"requests\":"
		"{\"cpu\":\"2\"}}}]}}");
	for (uint64_t i = 0; i < 2; i++)
		r->ids[i] = fixture_place(r->victims, db, i, SHMSCHED_PLACED);
	manage(r, "db-manager", "app=db", flags, deadline_ms, api);
	uint32_t top = fixture_template(r->waiter, "{\"kind\":\"Pod\",\"metadata\":{"
		"\"name\":\"top\",\"labels\":{\"app\":\"top\"}},\"spec\":{"
		"\"priorityClassName\":\"high\",\"containers\":[{\"name\":"
		"\"c\",\"resources\":{\"requests\":{\"cpu\":\"2\"}}}]}}");
	struct shmsched_pod p = {.cookie = 7, .template_id = top,
				 .flags = SHMSCHED_WAIT,
				 .deadline_ns = now_ns() + UINT64_C(30000000000)};
	assert_int_equal(shmsched_submit(r->waiter, &p, 1), 1);
}

static void pstart(struct run *r, uint32_t flags, uint32_t deadline_ms)
{
	pstart_as(r, flags, deadline_ms, false);
}

static void test_preempt_grant_deny(void **state)
{
	(void)state;
	struct run r;
	int x, y;
	/* Grant: the answer wakes the preemptor. */
	pstart(&r, OP_APPROVAL_PREEMPT_TOO, 60000);
	(void)grant_scenario(&r);
	struct daemon_stats ds;
	daemon_get_stats(r.d, &ds);
	assert_int_equal(ds.approvals_by[2].asked, 1);
	assert_int_equal(ds.approvals_by[2].granted, 1);
	assert_int_equal(ds.approvals_by[1].asked, 0);
	stop(&r);

	/* Deny: the other pod is asked, and granted goes. */
	pstart(&r, OP_APPROVAL_PREEMPT_TOO, 60000);
	uint64_t id = ask(&r, &x);
	assert_int_equal(mgr_answer(&r.m, id, OP_APPROVAL_DENY, 0), 0);
	id = ask_about(&r, 1 - x);
	nothing_evicted(&r, 200);
	assert_int_equal(mgr_answer(&r.m, id, OP_APPROVAL_GRANT, 0), 0);
	evicted_and_placed(&r, 1 - x);
	stop(&r);

	/* Both denied: no victim, nothing evicted, the pod waits. */
	pstart(&r, OP_APPROVAL_PREEMPT_TOO, 60000);
	id = ask(&r, &x);
	assert_int_equal(mgr_answer(&r.m, id, OP_APPROVAL_DENY, 0), 0);
	id = ask(&r, &y);
	assert_int_equal(mgr_answer(&r.m, id, OP_APPROVAL_DENY, 0), 0);
	nothing_evicted(&r, 500);
	struct op_approval_ask asks[8];
	assert_int_equal(mgr_pending(&r.m, asks), 0);
	daemon_get_stats(r.d, &ds);
	assert_int_equal(ds.approvals_by[2].denied, 2);
	assert_int_equal(ds.pending_unschedulable, 1);
	stop(&r);
}

static void test_preempt_time(void **state)
{
	(void)state;
	struct run r;
	int denied;
	/* Not before: x no victim until then (the other denied meanwhile). */
	pstart(&r, OP_APPROVAL_PREEMPT_TOO, 60000);
	(void)not_before_scenario(&r, &denied);
	stop(&r);

	/* The deadline, fail-open: preempted at it, not 1 ms before. */
	pstart(&r, OP_APPROVAL_PREEMPT_TOO | OP_APPROVAL_FAIL_OPEN, 1000);
	(void)deadline_open_scenario(&r);
	struct daemon_stats ds;
	daemon_get_stats(r.d, &ds);
	assert_int_equal(ds.approvals_by[2].timed_out_open, 1);
	stop(&r);
}

/* A registration for reclaim only: preemption does not ask it. */
static void test_preempt_not_opted_in(void **state)
{
	(void)state;
	struct run r;
	pstart(&r, OP_APPROVAL_RECLAIM_TOO, 60000);
	(void)evicted_one(&r);
	struct op_approval_ask asks[8];
	assert_int_equal(mgr_pending(&r.m, asks), 0);
	struct daemon_stats ds;
	daemon_get_stats(r.d, &ds);
	assert_int_equal(ds.approvals_asked, 0);
	stop(&r);
}

/* The public C API's manager with SHMSCHED_APPROVAL_PREEMPT_TOO: asked
 * by preemption (reason SHMSCHED_APPROVAL_PREEMPT), its grant lets the
 * preemption go; with RECLAIM_TOO only it is not asked. Fails on the old
 * library (PREEMPT_TOO refused: EINVAL). */
static void test_preempt_c_api(void **state)
{
	(void)state;
	struct run r;
	pstart_as(&r, SHMSCHED_APPROVAL_PREEMPT_TOO, 60000, true);
	(void)api_grant_scenario(&r, SHMSCHED_APPROVAL_PREEMPT, "default/db");
	struct daemon_stats ds;
	daemon_get_stats(r.d, &ds);
	assert_int_equal(ds.approvals_by[2].granted, 1);
	stop(&r);

	/* RECLAIM_TOO only: a db pod preempted at once, no ask. */
	pstart_as(&r, SHMSCHED_APPROVAL_RECLAIM_TOO, 60000, true);
	(void)api_not_asked(&r);
	stop(&r);
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
