/* stress.daemon_policy: issue 41's identities with rights, through the real
 * daemon in process with the client library. Every producer here runs as
 * this test's uid; identities differ by their registered names, which is
 * what the policy tells apart (tests/cli/test_policy.sh does the same
 * across uids, as nobody).
 *
 * - Without a policy, a producer's template naming system-node-critical
 *   or system-cluster-critical is refused (EPERM, naming the identity and
 *   the class) and an admin connection's is accepted: kube-apiserver's
 *   Priority admission kept the system classes to kube-system
 *   (kubernetes PR #65593, plugin/pkg/admission/priority/admission.go),
 *   ResourceQuota's limitedResources does since (PR #76310). On the old
 *   code the producer's was accepted and its pod preempted everyone.
 * - With a policy: a template outside the identity's namespaces is
 *   refused naming identity, namespace and the policy file; an identity
 *   no rule names may place nothing; team-b cannot join team-a's gang
 *   (its PodGroup is in team-a: joining needs that namespace), team-a
 *   can; a class outside priorityClasses is refused.
 * - Preemption: team-b's high-priority pod, whose disruptNamespaces are
 *   its own, waits beside team-a's low pod instead of evicting it (no
 *   victim); team-c's, allowed to disrupt team-a, evicts it. On the old
 *   code team-b's evicted it. */
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

#include "base/base.h"
#include "daemon/daemon.h"
#include "fixture.h"
#include "shmsched/client.h"

static struct fixture_dir fx;
static char policy[128];

static int setup(void **state)
{
	(void)state;
	fixture_dir_make(&fx, "policy", 0);
	snprintf(policy, sizeof(policy), "%s/policy.json", fx.dir);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	fixture_dir_remove(&fx);
	return 0;
}

/* One node of 2 cpu, the classes low (10) and high (1000), and team-a's
 * PodGroup "trio". */
static const char cluster_json[] =
	"{\"kind\":\"List\",\"items\":["
	"{\"kind\":\"Node\",\"metadata\":{\"name\":\"n0\"},\"status\":{\"allocatable\":"
	"{\"cpu\":\"2\",\"memory\":\"4Gi\",\"pods\":\"110\"}}},"
	"{\"kind\":\"PriorityClass\",\"metadata\":{\"name\":\"low\"},\"value\":10},"
	"{\"kind\":\"PriorityClass\",\"metadata\":{\"name\":\"high\"},\"value\":1000},"
	"{\"kind\":\"PodGroup\",\"apiVersion\":\"scheduling.x-k8s.io/v1alpha1\","
	"\"metadata\":{\"name\":\"trio\",\"namespace\":\"team-a\"},"
	"\"spec\":{\"minMember\":3}}]}";

static struct daemon *start(const char *policy_path)
{
	fixture_write_file(fx.cluster, cluster_json);
	struct daemon_config cfg = fixture_config(&fx);
	cfg.policy_path = policy_path;
	return fixture_start(&cfg);
}

/* A 2-cpu pod in namespace `ns`, of PriorityClass `cls` (NULL: none), in
 * gang `gang` (NULL: none). Returns the rc; the template id in *tid. */
static int tmpl(struct shmsched_client *c, const char *ns, const char *cls,
		const char *gang, uint32_t *tid, char *err, size_t err_len)
{
	char json[1024], cls_s[96] = "", gang_s[128] = "";
	if (cls != NULL)
		snprintf(cls_s, sizeof(cls_s), "\"priorityClassName\":\"%s\",", cls);
	if (gang != NULL)
		snprintf(gang_s, sizeof(gang_s), ",\"labels\":{\"scheduling.x-k8s.io/"
			 "pod-group\":\"%s\"}", gang);
	snprintf(json, sizeof(json), "{\"kind\":\"Pod\",\"metadata\":{\"name\":\"t\","
		 "\"namespace\":\"%s\"%s},\"spec\":{%s\"containers\":[{\"name\":\"c\","
		 "\"resources\":{\"requests\":{\"cpu\":\"2\"}}}]}}", ns, gang_s, cls_s);
	err[0] = '\0';
	return shmsched_register_template(c, json, strlen(json), tid, err, err_len);
}

static void test_no_policy_system_classes(void **state)
{
	(void)state;
	struct daemon *d = start(NULL);
	struct shmsched_client *c = fixture_connect_as(fx.sock, "team-b");
	struct shmsched_client *a = fixture_connect_as(fx.admin, "ops");
	char err[512];
	uint32_t tid;
	const char *system[] = {"system-node-critical", "system-cluster-critical"};
	for (int i = 0; i < 2; i++) {
		assert_int_equal(tmpl(c, "default", system[i], NULL, &tid, err,
				      sizeof(err)), -EPERM);
		print_message("refused: %s\n", err);
		assert_non_null(strstr(err, system[i]));
		assert_non_null(strstr(err, "name \"team-b\""));
		assert_non_null(strstr(err, "admin"));
		/* The admin's: accepted. */
		assert_int_equal(tmpl(a, "kube-system", system[i], NULL, &tid, err,
				      sizeof(err)), 0);
	}
	/* Anything else as before: any namespace, a user class, none. */
	assert_int_equal(tmpl(c, "anywhere", "high", NULL, &tid, err, sizeof(err)), 0);
	assert_int_equal(tmpl(c, "team-a", NULL, "trio", &tid, err, sizeof(err)), 0);
	shmsched_disconnect(c);
	shmsched_disconnect(a);
	struct daemon_stats ds;
	daemon_stop(d, 1000, &ds);
}

static const char two_teams[] =
	"{\"apiVersion\":\"shmsched.io/v1alpha1\",\"kind\":\"Policy\",\"rules\":["
	"{\"uids\":[%u],\"names\":[\"team-a\"],\"namespaces\":[\"team-a\"],"
	" \"priorityClasses\":[\"low\"]},"
	"{\"uids\":[%u],\"names\":[\"team-b\"],\"namespaces\":[\"team-b\",\"team-b-*\"],"
	" \"priorityClasses\":[\"*\"]},"
	"{\"uids\":[%u],\"names\":[\"team-c\"],\"namespaces\":[\"team-c\"],"
	" \"priorityClasses\":[\"*\"],\"disruptNamespaces\":[\"team-a\"]}]}";

static void write_policy(void)
{
	char text[1024];
	unsigned uid = (unsigned)getuid();
	snprintf(text, sizeof(text), two_teams, uid, uid, uid);
	fixture_write_file(policy, text);
}

static void test_namespaces_and_gangs(void **state)
{
	(void)state;
	write_policy();
	struct daemon *d = start(policy);
	struct shmsched_client *a = fixture_connect_as(fx.sock, "team-a");
	struct shmsched_client *b = fixture_connect_as(fx.sock, "team-b");
	struct shmsched_client *x = fixture_connect_as(fx.sock, "stranger");
	char err[512];
	uint32_t tid;
	if (tmpl(a, "team-a", "low", NULL, &tid, err, sizeof(err)) != 0)
		fail_msg("team-a: %s", err);
	assert_int_equal(tmpl(b, "team-b-dev", "high", NULL, &tid, err, sizeof(err)), 0);
	/* Outside its namespaces: refused, saying who, where and which policy. */
	assert_int_equal(tmpl(b, "team-a", NULL, NULL, &tid, err, sizeof(err)), -EPERM);
	print_message("refused: %s\n", err);
	assert_non_null(strstr(err, "name \"team-b\""));
	assert_non_null(strstr(err, "\"team-a\""));
	assert_non_null(strstr(err, policy));
	/* team-a's gang: team-b cannot join it (to block it with a member
	 * that never fits, or to take one of its places); team-a can. */
	assert_int_equal(tmpl(b, "team-a", NULL, "trio", &tid, err, sizeof(err)), -EPERM);
	assert_non_null(strstr(err, "\"team-a\""));
	assert_int_equal(tmpl(a, "team-a", NULL, "trio", &tid, err, sizeof(err)), 0);
	/* A class outside its priorityClasses; a system- one "*" never gives. */
	assert_int_equal(tmpl(a, "team-a", "high", NULL, &tid, err, sizeof(err)), -EPERM);
	assert_non_null(strstr(err, "\"high\""));
	assert_int_equal(tmpl(b, "team-b", "system-node-critical", NULL, &tid, err,
			      sizeof(err)), -EPERM);
	assert_non_null(strstr(err, "exact name"));
	/* No rule: nothing, whatever it names. */
	assert_int_equal(tmpl(x, "default", NULL, NULL, &tid, err, sizeof(err)), -EPERM);
	assert_non_null(strstr(err, "no rule"));
	shmsched_disconnect(a);
	shmsched_disconnect(b);
	shmsched_disconnect(x);
	struct daemon_stats ds;
	daemon_stop(d, 1000, &ds);
}

static void await_pending(struct daemon *d, uint64_t want)
{
	struct daemon_stats s;
	uint64_t end = now_ns() + UINT64_C(10) * 1000000000u;
	do {
		daemon_get_stats(d, &s);
		if (s.pending_unschedulable == want)
			return;
		usleep(500);
	} while (now_ns() < end);
	fail_msg("pending_unschedulable %" PRIu64 ", expected %" PRIu64,
		 s.pending_unschedulable, want);
}

static void test_preemption_within_disrupt(void **state)
{
	(void)state;
	write_policy();
	struct daemon *d = start(policy);
	struct shmsched_client *a = fixture_connect_as(fx.sock, "team-a");
	struct shmsched_client *b = fixture_connect_as(fx.sock, "team-b");
	struct shmsched_client *c = fixture_connect_as(fx.sock, "team-c");
	char err[512];
	uint32_t ta, tb, tc;
	assert_int_equal(tmpl(a, "team-a", "low", NULL, &ta, err, sizeof(err)), 0);
	assert_int_equal(tmpl(b, "team-b", "high", NULL, &tb, err, sizeof(err)), 0);
	assert_int_equal(tmpl(c, "team-c", "high", NULL, &tc, err, sizeof(err)), 0);
	struct shmsched_result r[2];
	struct shmsched_pod pa = {.cookie = 1, .template_id = ta};
	assert_int_equal(shmsched_submit(a, &pa, 1), 1);
	assert_int_equal(fixture_await(a, r, 1, 5000), 1);
	assert_int_equal(r[0].status, SHMSCHED_PLACED);
	uint64_t victim = r[0].placement_id;
	/* team-b may not disrupt team-a: its pod waits, nothing evicted. */
	struct shmsched_pod pb = {.cookie = 2, .template_id = tb, .flags = SHMSCHED_WAIT};
	assert_int_equal(shmsched_submit(b, &pb, 1), 1);
	await_pending(d, 1);
	usleep(100000); /* time for a preemption, if one were coming */
	struct daemon_stats ds;
	daemon_get_stats(d, &ds);
	print_message("team-b: %" PRIu64 " preemption request(s), %" PRIu64
		      " victim(s)\n", ds.preemptions, ds.victims);
	assert_int_equal(ds.victims, 0);
	assert_int_equal(ds.placements, 1);
	assert_int_equal(fixture_await(a, r, 1, 50), 0); /* no EVICTED notice */
	/* team-c may: its pod evicts team-a's. */
	struct shmsched_pod pc = {.cookie = 3, .template_id = tc, .flags = SHMSCHED_WAIT};
	assert_int_equal(shmsched_submit(c, &pc, 1), 1);
	assert_int_equal(fixture_await(c, r, 1, 5000), 1);
	assert_int_equal(r[0].status, SHMSCHED_PLACED);
	assert_int_equal(fixture_await(a, r, 1, 5000), 1);
	assert_int_equal(r[0].status, SHMSCHED_EVICTED);
	assert_int_equal(r[0].placement_id, victim);
	daemon_get_stats(d, &ds);
	assert_int_equal(ds.victims, 1);
	shmsched_disconnect(a);
	shmsched_disconnect(b);
	shmsched_disconnect(c);
	daemon_stop(d, 1000, &ds);
}

/* A 2-cpu pod's template in namespace `ns` of class "high", its
 * preemptions narrowed to `scope` (OP_TEMPLATE_SCOPED). */
static int scoped(struct shmsched_client *c, const char *ns, const char *scope,
		  uint32_t *tid, char *err, size_t err_len)
{
	char json[512];
	snprintf(json, sizeof(json), "{\"kind\":\"Pod\",\"metadata\":{\"name\":\"t\","
		 "\"namespace\":\"%s\"},\"spec\":{\"priorityClassName\":\"high\","
		 "\"containers\":[{\"name\":\"c\",\"resources\":{\"requests\":"
		 "{\"cpu\":\"2\"}}}]}}", ns);
	err[0] = '\0';
	return shmsched_register_template_scoped(c, json, strlen(json), scope, tid,
						 err, err_len);
}

/* Issue 41: a template's disrupt scope narrows its identity's rule, never
 * widens it (the gateway sends each HTTP user's disruptNamespaces so).
 * team-b's rule disrupts only team-b*: its template naming "*" or
 * "team-a" still evicts nothing of team-a. team-c's rule disrupts team-a:
 * its template scoped to "team-b" evicts nothing (on the old code, which
 * held a pod to its identity's rule alone, it evicted team-a's pod); its
 * template scoped to "team-a" evicts it. A bad pattern is refused. */
static void test_scoped_templates(void **state)
{
	(void)state;
	write_policy();
	struct daemon *d = start(policy);
	struct shmsched_client *a = fixture_connect_as(fx.sock, "team-a"), *b = fixture_connect_as(fx.sock, "team-b");
	struct shmsched_client *c = fixture_connect_as(fx.sock, "team-c");
	char err[512];
	uint32_t ta, tb_any, tb_a, tc_b, tc_a, bad;
	assert_int_equal(tmpl(a, "team-a", "low", NULL, &ta, err, sizeof(err)), 0);
	assert_int_equal(scoped(b, "team-b", "*", &tb_any, err, sizeof(err)), 0);
	assert_int_equal(scoped(b, "team-b", "team-a", &tb_a, err, sizeof(err)), 0);
	assert_int_equal(scoped(c, "team-c", "team-b", &tc_b, err, sizeof(err)), 0);
	assert_int_equal(scoped(c, "team-c", "team-x,team-a", &tc_a, err, sizeof(err)), 0);
	assert_int_equal(scoped(c, "team-c", "team-a,Team-B", &bad, err, sizeof(err)),
			 -EINVAL);
	print_message("refused: %s\n", err);
	assert_non_null(strstr(err, "Team-B"));
	struct shmsched_result r[2];
	struct shmsched_pod pa = {.cookie = 1, .template_id = ta};
	assert_int_equal(shmsched_submit(a, &pa, 1), 1);
	assert_int_equal(fixture_await(a, r, 1, 5000), 1);
	assert_int_equal(r[0].status, SHMSCHED_PLACED);
	uint64_t victim = r[0].placement_id;
	/* Wider than the rule, and outside it: the rule holds. */
	struct shmsched_pod pb[2] = {
		{.cookie = 2, .template_id = tb_any, .flags = SHMSCHED_WAIT},
		{.cookie = 3, .template_id = tb_a, .flags = SHMSCHED_WAIT}};
	assert_int_equal(shmsched_submit(b, pb, 2), 2);
	await_pending(d, 2);
	/* Narrower than the rule: the scope holds. */
	struct shmsched_pod pc = {.cookie = 4, .template_id = tc_b, .flags = SHMSCHED_WAIT};
	assert_int_equal(shmsched_submit(c, &pc, 1), 1);
	await_pending(d, 3);
	usleep(100000); /* time for a preemption, if one were coming */
	struct daemon_stats ds;
	daemon_get_stats(d, &ds);
	print_message("widened and narrowed: %" PRIu64 " preemption request(s), %"
		      PRIu64 " victim(s)\n", ds.preemptions, ds.victims);
	assert_int_equal(ds.victims, 0);
	assert_int_equal(fixture_await(a, r, 1, 50), 0); /* no EVICTED notice */
	/* Within both: evicted. */
	pc = (struct shmsched_pod){.cookie = 5, .template_id = tc_a, .flags = SHMSCHED_WAIT};
	assert_int_equal(shmsched_submit(c, &pc, 1), 1);
	assert_int_equal(fixture_await(a, r, 1, 5000), 1);
	assert_int_equal(r[0].status, SHMSCHED_EVICTED);
	assert_int_equal(r[0].placement_id, victim);
	assert_int_equal(fixture_await(c, r, 1, 5000), 1);
	assert_int_equal(r[0].status, SHMSCHED_PLACED);
	assert_int_equal(r[0].cookie, 5);
	daemon_get_stats(d, &ds);
	assert_int_equal(ds.victims, 1);
	shmsched_disconnect(a);
	shmsched_disconnect(b);
	shmsched_disconnect(c);
	daemon_stop(d, 1000, &ds);
}

/* A policy the daemon cannot read stops its start, naming the file. */
static void test_bad_policy_stops_start(void **state)
{
	(void)state;
	fixture_write_file(fx.cluster, cluster_json);
	fixture_write_file(policy, "{\"apiVersion\":\"shmsched.io/v1alpha1\","
			   "\"kind\":\"Policy\",\"rules\":[{\"uids\":[0],"
			   "\"namespace\":[\"a\"]}]}");
	struct daemon_config cfg = fixture_config(&fx);
	cfg.policy_path = policy;
	char err[1024];
	assert_null(daemon_start(&cfg, err, sizeof(err)));
	print_message("refused: %s\n", err);
	assert_non_null(strstr(err, policy));
	assert_non_null(strstr(err, "$.rules[0].namespace"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_no_policy_system_classes, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_namespaces_and_gangs, setup, teardown),
		cmocka_unit_test_setup_teardown(test_scoped_templates, setup, teardown),
		cmocka_unit_test_setup_teardown(test_preemption_within_disrupt, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_bad_policy_stops_start, setup,
						teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
