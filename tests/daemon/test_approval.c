/* unit.approval: applications that approve their disruption (issue 38
 * item 3; KEP-4563's interceptors, kubernetes/enhancements
 * keps/sig-apps/4563-eviction-request-api: the interceptor acts before
 * the eviction, and when it stops answering (heartbeatDeadlineSeconds)
 * the controller falls back to the Eviction API: fail-open here). The
 * real daemon in process, a manager speaking OP_APPROVAL on the admin
 * socket, drains through the client library, and the managers' clock
 * injected (daemon_config.approval_clock), so deadlines pass when the
 * test says.
 * - grant and deny: a wave keeps the pods a manager selects and asks;
 *   the granted pod goes in the next wave, the denied one stays, the
 *   progress saying "waiting on manager M for pod P: denied"; pods no
 *   manager selects go at once; the manager's connection closed, its
 *   registration is gone and the pod goes;
 * - deadline: no answer by the deadline, a fail-open registration's pod
 *   goes and a fail-closed one's stays (one ms before, both stay); a late
 *   NOT_BEFORE answer keeps it until that time, then it goes;
 * - bounds: a producer's socket refused (EPERM), an oversized or
 *   unreadable selector, a second registration on a connection, one past
 *   APPROVAL_REGS_MAX, answers to another's ask or to no ask, all refused.
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
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "daemon/daemon.h"
#include "approval_mgr.h"
#include "fixture.h"
#include "ingest/ingest.h"
#include "shm/shm.h"
#include "shmsched/client.h"

static struct fixture_dir fx;
/* The managers' clock, ns (fixture_clock_ns): written by the test
 * thread, read by the admin socket's (relaxed both: a figure with no data
 * behind it; each step is followed by a request, whose socket round trip
 * orders it). */
static uint64_t fake_now = UINT64_C(1000000000);

static void advance_ms(uint64_t ms)
{
	__atomic_fetch_add(&fake_now, ms * 1000000u, __ATOMIC_RELAXED);
}

static int setup(void **state)
{
	(void)state;
	fixture_dir_make(&fx, "approval", 0);
	fixture_write_cluster(&fx, &(struct fixture_nodes){.count = 3, .cpu = "8",
							    .memory = "16Gi"}, NULL);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	fixture_dir_remove(&fx);
	return 0;
}

static struct daemon *start(void)
{
	struct daemon_config cfg = fixture_config(&fx);
	cfg.approval_clock = fixture_clock_ns;
	cfg.approval_clock_arg = &fake_now;
	return fixture_start(&cfg);
}

/* One wave over n0 and n1; the text is the caller's to free. */
static void wave(struct shmsched_client *admin, struct shmsched_drain_result *r,
		 char **text)
{
	static const char *const nodes[] = {"n0", "n1"};
	char err[512];
	if (shmsched_drain(admin, nodes, 2, NULL, 0, r, text, err, sizeof(err)) < 0)
		fail_msg("drain: %s", err);
	print_message("wave: evicted %u blocked %u\n%s", r->evicted, r->blocked, *text);
}

static void test_grant_deny(void **state)
{
	(void)state;
	struct daemon *d = start();
	struct shmsched_client *admin = fixture_connect(fx.admin);
	struct shmsched_client *prod = fixture_connect_as(fx.sock, "app");
	struct mgr m;
	mgr_open(&m, fx.admin);
	assert_int_equal(mgr_register(&m, "web-manager", "app=web", 60000, 0), 0);
	fixture_place(prod, fixture_app_on(prod, "web", "n0"), 1, SHMSCHED_PLACED);
	fixture_place(prod, fixture_app_on(prod, "web", "n1"), 2, SHMSCHED_PLACED);
	fixture_place(prod, fixture_app_on(prod, "batch", "n0"), 3, SHMSCHED_PLACED);
	struct shmsched_drain_result r;
	char *text;

	/* Wave 1: batch goes; both web pods asked about and kept. */
	wave(admin, &r, &text);
	assert_int_equal(r.evicted, 1);
	assert_int_equal(r.blocked, 2);
	assert_non_null(strstr(text, "waiting on manager web-manager for pod default/web: "));
	assert_non_null(strstr(text, "no answer yet"));
	free(text);
	struct op_approval_ask asks[8];
	assert_int_equal(mgr_pending(&m, asks), 2);
	assert_int_equal(asks[0].reason, OP_APPROVAL_DRAIN);
	bool first_n0 = strcmp(asks[0].node, "n0") == 0;
	assert_true(first_n0 || strcmp(asks[1].node, "n0") == 0);
	const struct op_approval_ask *on_n0 = first_n0 ? &asks[0] : &asks[1];
	const struct op_approval_ask *on_n1 = first_n0 ? &asks[1] : &asks[0];
	assert_string_equal(on_n0->pod, "pod default/web"); /* its template's name */

	/* The one on n0 granted, n1's denied. */
	assert_int_equal(mgr_answer(&m, on_n0->ask_id, OP_APPROVAL_GRANT, 0), 0);
	assert_int_equal(mgr_answer(&m, on_n1->ask_id, OP_APPROVAL_DENY, 0), 0);
	assert_int_equal(mgr_pending(&m, asks), 0);
	wave(admin, &r, &text);
	assert_int_equal(r.evicted, 1);
	assert_int_equal(r.blocked, 1);
	assert_non_null(strstr(text, "waiting on manager web-manager for pod default/web: "
			       "denied"));
	free(text);
	/* A deny holds: the next wave keeps it again, asking nothing. */
	wave(admin, &r, &text);
	free(text);
	assert_int_equal(r.evicted, 0);
	assert_int_equal(r.blocked, 1);
	assert_int_equal(daemon_pods_on_nodes(d), 1);
	struct daemon_stats ds;
	daemon_get_stats(d, &ds);
	assert_int_equal(ds.approval_registrations, 1);
	assert_int_equal(ds.approvals_asked, 2);
	assert_int_equal(ds.approvals_granted, 1);
	assert_int_equal(ds.approvals_denied, 1);

	/* The manager gone: so is its registration, and the pod goes. */
	close(m.fd);
	for (int i = 0; i < 500; i++) {
		daemon_get_stats(d, &ds);
		if (ds.approval_registrations == 0)
			break;
		struct timespec ts = {0, 10000000};
		nanosleep(&ts, NULL);
	}
	assert_int_equal(ds.approval_registrations, 0);
	wave(admin, &r, &text);
	free(text);
	assert_int_equal(r.evicted, 1);
	assert_int_equal(r.blocked, 0);
	assert_int_equal(daemon_pods_on_nodes(d), 0);
	daemon_stop(d, 1000, &ds);
	shmsched_disconnect(prod);
	shmsched_disconnect(admin);
}

static void test_deadline(void **state)
{
	(void)state;
	struct daemon *d = start();
	struct shmsched_client *admin = fixture_connect(fx.admin);
	struct shmsched_client *prod = fixture_connect_as(fx.sock, "app");
	struct mgr open_m, closed_m;
	mgr_open(&open_m, fx.admin);
	mgr_open(&closed_m, fx.admin);
	assert_int_equal(mgr_register(&open_m, "lenient", "app=web", 1000,
				      OP_APPROVAL_FAIL_OPEN), 0);
	assert_int_equal(mgr_register(&closed_m, "strict", "app=db", 1000, 0), 0);
	fixture_place(prod, fixture_app_on(prod, "web", "n0"), 1, SHMSCHED_PLACED);
	fixture_place(prod, fixture_app_on(prod, "db", "n0"), 2, SHMSCHED_PLACED);
	struct shmsched_drain_result r;
	char *text;
	wave(admin, &r, &text);
	free(text);
	assert_int_equal(r.evicted, 0);
	assert_int_equal(r.blocked, 2);
	/* A ms short of the deadline: both still wait. */
	advance_ms(999);
	wave(admin, &r, &text);
	free(text);
	assert_int_equal(r.evicted, 0);
	assert_int_equal(r.blocked, 2);
	/* The deadline: fail-open lets web go; fail-closed keeps db. */
	advance_ms(1);
	wave(admin, &r, &text);
	assert_int_equal(r.evicted, 1);
	assert_int_equal(r.blocked, 1);
	assert_non_null(strstr(text, "evicted placement"));
	assert_non_null(strstr(text, "waiting on manager strict for pod default/db: no "
			       "answer by its deadline (1000 ms), fail-closed: kept"));
	free(text);
	advance_ms(60000);
	wave(admin, &r, &text);
	free(text);
	assert_int_equal(r.evicted, 0);
	assert_int_equal(r.blocked, 1);
	struct daemon_stats ds;
	daemon_get_stats(d, &ds);
	assert_int_equal(ds.approvals_timed_out_open, 1);
	assert_int_equal(ds.approvals_timed_out_closed, 1);

	/* A late answer still counts: not before 5 s from now. */
	struct op_approval_ask asks[8], other[8];
	assert_int_equal(mgr_pending(&closed_m, asks), 1);
	assert_int_equal(mgr_pending(&open_m, other), 0); /* its pod gone */
	assert_int_equal(mgr_answer(&closed_m, asks[0].ask_id, OP_APPROVAL_NOT_BEFORE,
				    5000), 0);
	advance_ms(4000);
	wave(admin, &r, &text);
	assert_int_equal(r.evicted, 0);
	assert_int_equal(r.blocked, 1);
	assert_non_null(strstr(text, "waiting on manager strict for pod default/db: until "
			       "1 s from now"));
	free(text);
	advance_ms(1000);
	wave(admin, &r, &text);
	free(text);
	assert_int_equal(r.evicted, 1);
	assert_int_equal(r.blocked, 0);
	assert_int_equal(daemon_pods_on_nodes(d), 0);
	/* Its pod gone, the ask is done. */
	assert_int_equal(mgr_answer(&closed_m, asks[0].ask_id, OP_APPROVAL_GRANT, 0),
			 -ENOENT);
	daemon_get_stats(d, &ds);
	assert_int_equal(ds.approvals_not_before, 1);
	daemon_stop(d, 1000, &ds);
	close(open_m.fd);
	close(closed_m.fd);
	shmsched_disconnect(prod);
	shmsched_disconnect(admin);
}

static void test_bounds(void **state)
{
	(void)state;
	struct daemon *d = start();
	struct shmsched_client *admin = fixture_connect(fx.admin);
	struct shmsched_client *prod = fixture_connect_as(fx.sock, "app");
	fixture_place(prod, fixture_app_on(prod, "web", "n0"), 1, SHMSCHED_PLACED);
	/* A producer's socket: refused. */
	struct mgr p;
	mgr_open(&p, fx.sock);
	assert_int_equal(mgr_register(&p, "sneaky", "app=web", 1000, 0), -EPERM);
	assert_non_null(strstr(p.err, "admin socket"));
	close(p.fd);

	struct mgr m[APPROVAL_REGS_MAX + 1];
	mgr_open(&m[0], fx.admin);
	/* A selector over OP_APPROVAL_SELECTOR_MAX; one that cannot be read. */
	char big[OP_APPROVAL_SELECTOR_MAX + 2];
	memset(big, 'a', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	assert_int_equal(mgr_register(&m[0], "big", big, 1000, 0), -EINVAL);
	assert_non_null(strstr(m[0].err, "at most 1024 bytes"));
	assert_int_equal(mgr_register(&m[0], "bad", "app=web,=x", 1000, 0), -EINVAL);
	assert_non_null(strstr(m[0].err, "selector"));
	assert_int_equal(mgr_register(&m[0], "late", "app=web", 0, 0), -EINVAL);
	/* One a connection; APPROVAL_REGS_MAX in all. */
	assert_int_equal(mgr_register(&m[0], "m0", "app=web", 1000, 0), 0);
	assert_int_equal(mgr_register(&m[0], "again", "app=web", 1000, 0), -EEXIST);
	for (unsigned i = 1; i < APPROVAL_REGS_MAX; i++) {
		char name[16];
		snprintf(name, sizeof(name), "m%u", i);
		mgr_open(&m[i], fx.admin);
		assert_int_equal(mgr_register(&m[i], name, "app=other", 1000, 0), 0);
	}
	mgr_open(&m[APPROVAL_REGS_MAX], fx.admin);
	assert_int_equal(mgr_register(&m[APPROVAL_REGS_MAX], "one-more", "", 1000,
				      0), -ENOSPC);
	assert_non_null(strstr(m[APPROVAL_REGS_MAX].err, "one-more"));
	/* Answers: to no ask, to another's, malformed. */
	struct shmsched_drain_result r;
	char *text;
	wave(admin, &r, &text);
	free(text);
	assert_int_equal(r.blocked, 1);
	struct op_approval_ask asks[8];
	assert_int_equal(mgr_pending(&m[0], asks), 1);
	assert_int_equal(mgr_answer(&m[1], asks[0].ask_id, OP_APPROVAL_GRANT, 0), -EPERM);
	assert_int_equal(mgr_answer(&m[0], asks[0].ask_id + 100, OP_APPROVAL_GRANT, 0),
			 -ENOENT);
	assert_int_equal(mgr_answer(&m[0], asks[0].ask_id, 7, 0), -EINVAL);
	assert_int_equal(mgr_answer(&m[0], asks[0].ask_id, OP_APPROVAL_DENY, 5), -EINVAL);
	assert_int_equal(mgr_answer(&m[0], asks[0].ask_id, OP_APPROVAL_NOT_BEFORE, 0),
			 -EINVAL);
	assert_int_equal(mgr_call(&m[0], 9, NULL, 0, NULL, 0, NULL), -EINVAL);
	assert_int_equal(daemon_pods_on_nodes(d), 1); /* nothing granted */
	for (unsigned i = 0; i <= APPROVAL_REGS_MAX; i++)
		close(m[i].fd);
	struct daemon_stats ds;
	daemon_stop(d, 1000, &ds);
	shmsched_disconnect(prod);
	shmsched_disconnect(admin);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		/* Each its own folder: a failed test's daemon cannot hold the
		 * next one's sockets. */
		cmocka_unit_test_setup_teardown(test_grant_deny, setup, teardown),
		cmocka_unit_test_setup_teardown(test_deadline, setup, teardown),
		cmocka_unit_test_setup_teardown(test_bounds, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
