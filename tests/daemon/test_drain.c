/* unit.drain: OP_DRAIN (issue 38) through the real daemon, in process,
 * with the client library. kubectl drain's semantics
 * (kubernetes/kubectl pkg/drain/drain.go: evictPods asks the Eviction API
 * for each pod, and on 429 TooManyRequests, a PodDisruptionBudget that
 * allows no disruption now, waits and asks again; kubernetes/kubernetes
 * pkg/registry/core/pod/storage/eviction.go answers 500 for a pod that
 * more than one budget selects).
 *
 * No clock: each wave is one request, and what makes a blocked pod
 * evictable (a budget declared again) is a request too, so every step is
 * the test's.
 * - waves: two drained nodes hold three pods under a budget allowing one
 *   disruption (maxUnavailable 1) and one pod under none; a third node's
 *   pod is not drained. The dry run evicts nothing and says what the wave
 *   would do; wave 1 evicts the free pod and one budgeted pod, blocks the
 *   others naming the budget; wave 2 evicts nothing; each redeclaration
 *   lets one more go. A checker counts evictions of budgeted pods past
 *   what the budget allowed since its declaration: 0. Every evicted
 *   placement's producer hears an EVICTED notice for it exactly once; the
 *   undrained pod stays;
 * - --pod-selector: only the pods it selects go; a bad one is refused;
 * - a pod two budgets select is an error naming both, never evicted; a
 *   producer's socket is refused; an unknown node is ENOENT;
 * - many budgets: 40 in view of one wave are told apart (test_many_budgets);
 * - the ladder's AlwaysAllow step: an unhealthy pod (a failure reported)
 *   goes past a spent budget whose unhealthyPodEvictionPolicy is
 *   AlwaysAllow, a healthy one does not, IfHealthyBudget holds both
 *   (test_unhealthy_always_allow; eviction.go, cited there).
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
	fixture_dir_make(&fx, "drain", 0);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	fixture_dir_remove(&fx);
	return 0;
}

/* The cluster file (nodes n0, n1, n2 of 8 cpu) and the daemon on it. */
static struct daemon *start(void)
{
	fixture_write_cluster(&fx, &(struct fixture_nodes){.count = 3, .cpu = "8",
							    .memory = "16Gi"}, NULL);
	struct daemon_config cfg = fixture_config(&fx);
	return fixture_start(&cfg);
}

static const char PDB_WEB[] =
	"{\"apiVersion\":\"policy/v1\",\"kind\":\"PodDisruptionBudget\","
	"\"metadata\":{\"name\":\"web\",\"namespace\":\"default\"},\"spec\":"
	"{\"maxUnavailable\":1,\"selector\":{\"matchLabels\":{\"app\":\"web\"}}}}";

static void declare(struct shmsched_client *admin, const char *json)
{
	char err[512];
	if (shmsched_priority_class(admin, json, strlen(json), err, sizeof(err)) < 0)
		fail_msg("declare: %s", err);
}

static int drain_sel(struct shmsched_client *admin, const char *selector,
		     unsigned flags, struct shmsched_drain_result *r, char **text)
{
	static const char *const nodes[] = {"n0", "n1"};
	char err[512];
	int rc = shmsched_drain(admin, nodes, 2, selector, flags, r, text, err,
				sizeof(err));
	if (rc < 0)
		fail_msg("drain: %s", err);
	print_message("wave: evicted %u blocked %u errors %u\n%s", r->evicted,
		      r->blocked, r->errors, *text);
	return rc;
}

static int drain(struct shmsched_client *admin, unsigned flags,
		 struct shmsched_drain_result *r, char **text)
{
	return drain_sel(admin, NULL, flags, r, text);
}

/* The EVICTED notices `c` has now (waits `ms` for `want`), each id
 * counted in seen[] (by cookie). */
static unsigned take_notices(struct shmsched_client *c, unsigned want, unsigned ms,
			     unsigned seen[16])
{
	struct shmsched_result r[16];
	unsigned got = fixture_await(c, r, want, ms);
	for (unsigned i = 0; i < got; i++) {
		assert_int_equal(r[i].status, SHMSCHED_EVICTED);
		assert_true(r[i].cookie < 16);
		seen[r[i].cookie]++;
	}
	return got;
}

static void test_waves(void **state)
{
	(void)state;
	struct daemon *d = start();
	struct shmsched_client *admin = fixture_connect(fx.admin);
	/* Its own identity: notices go to a connection of the owner's. */
	struct shmsched_client *prod = fixture_connect_as(fx.sock, "app");
	declare(admin, PDB_WEB);
	uint32_t web0 = fixture_app_on(prod, "web", "n0");
	uint32_t web1 = fixture_app_on(prod, "web", "n1");
	uint32_t batch = fixture_app_on(prod, "batch", "n1");
	uint32_t stay = fixture_app_on(prod, "web", "n2");
	/* cookies: 1, 2 web on n0; 3 web on n1; 4 batch on n1; 5 web on n2 */
	fixture_place(prod, web0, 1, SHMSCHED_PLACED);
	fixture_place(prod, web0, 2, SHMSCHED_PLACED);
	fixture_place(prod, web1, 3, SHMSCHED_PLACED);
	fixture_place(prod, batch, 4, SHMSCHED_PLACED);
	uint64_t stays = fixture_place(prod, stay, 5, SHMSCHED_PLACED);
	unsigned seen[16] = {0};
	struct shmsched_drain_result r;
	char *text;

	/* Dry run: the wave's plan, nothing evicted. */
	drain(admin, SHMSCHED_DRAIN_DRY_RUN, &r, &text);
	assert_int_equal(r.evicted, 2);
	assert_int_equal(r.blocked, 2);
	assert_non_null(strstr(text, "would evict"));
	free(text);
	assert_int_equal(daemon_pods_on_nodes(d), 5);
	assert_int_equal(take_notices(prod, 1, 200, seen), 0);

	/* Wave 1: batch and one web pod; the others blocked, the budget
	 * named. The checker: budgeted evictions since the declaration. */
	unsigned web_since = 0, violations = 0, evicted = 0;
	drain(admin, 0, &r, &text);
	assert_int_equal(r.evicted, 2);
	assert_int_equal(r.blocked, 2);
	assert_int_equal(r.errors, 0);
	assert_non_null(strstr(text, "PodDisruptionBudget default/web allows no "
			       "more disruptions"));
	free(text);
	evicted += r.evicted;
	assert_int_equal(take_notices(prod, 2, 5000, seen), 2);
	assert_int_equal(seen[4], 1); /* batch: no budget */
	web_since = seen[1] + seen[2] + seen[3];
	violations += web_since > 1;

	/* Wave 2: the budget is spent; nothing moves. */
	drain(admin, 0, &r, &text);
	free(text);
	assert_int_equal(r.evicted, 0);
	assert_int_equal(r.blocked, 2);
	assert_int_equal(daemon_pods_on_nodes(d), 3);

	/* Each declaration again: one more. */
	for (int round = 0; round < 2; round++) {
		declare(admin, PDB_WEB);
		unsigned before = seen[1] + seen[2] + seen[3];
		drain(admin, 0, &r, &text);
		free(text);
		assert_int_equal(r.evicted, 1);
		assert_int_equal(r.blocked, (unsigned)(1 - round));
		evicted += r.evicted;
		assert_int_equal(take_notices(prod, 1, 5000, seen), 1);
		violations += seen[1] + seen[2] + seen[3] - before > 1;
	}
	assert_int_equal(violations, 0);
	assert_int_equal(evicted, 4);
	/* Drained: nothing left, nothing more heard. */
	drain(admin, 0, &r, &text);
	free(text);
	assert_int_equal(r.evicted + r.blocked + r.errors + r.unmanaged, 0);
	assert_int_equal(take_notices(prod, 1, 300, seen), 0);
	for (int k = 1; k <= 4; k++)
		assert_int_equal(seen[k], 1); /* each told exactly once */
	assert_int_equal(seen[5], 0);
	assert_int_equal(daemon_pods_on_nodes(d), 1); /* n2's stays */
	char err[512];
	assert_int_equal(shmsched_release(prod, stays, err, sizeof(err)), 0);
	assert_int_equal(daemon_overcommits(d), 0);
	struct daemon_stats ds;
	daemon_stop(d, 1000, &ds);
	shmsched_disconnect(prod);
	shmsched_disconnect(admin);
}

static void test_refusals(void **state)
{
	(void)state;
	struct daemon *d = start();
	struct shmsched_client *admin = fixture_connect(fx.admin);
	/* Its own identity: notices go to a connection of the owner's. */
	struct shmsched_client *prod = fixture_connect_as(fx.sock, "app");
	declare(admin, PDB_WEB);
	declare(admin, "{\"apiVersion\":\"policy/v1\",\"kind\":\"PodDisruptionBudget\","
		"\"metadata\":{\"name\":\"all\",\"namespace\":\"default\"},\"spec\":"
		"{\"maxUnavailable\":5,\"selector\":{}}}");
	fixture_place(prod, fixture_app_on(prod, "web", "n0"), 1, SHMSCHED_PLACED);
	fixture_place(prod, fixture_app_on(prod, "other", "n1"), 2, SHMSCHED_PLACED);
	struct shmsched_drain_result r;
	char *text;
	/* web: two budgets, an error naming both; other: "all" lets it go. */
	drain(admin, 0, &r, &text);
	assert_int_equal(r.errors, 1);
	assert_int_equal(r.evicted, 1);
	assert_non_null(strstr(text, "default/web"));
	assert_non_null(strstr(text, "default/all"));
	assert_non_null(strstr(text, "more than one"));
	free(text);
	drain(admin, 0, &r, &text);
	free(text);
	assert_int_equal(r.errors, 1); /* never evicted */
	assert_int_equal(daemon_pods_on_nodes(d), 1);
	/* A producer may not drain; nor may anyone drain a node not there. */
	static const char *const n0[] = {"n0"}, *const nx[] = {"nx"};
	char err[512];
	assert_int_equal(shmsched_drain(prod, n0, 1, NULL, 0, &r, &text, err, sizeof(err)),
			 -EPERM);
	assert_int_equal(shmsched_drain(admin, nx, 1, NULL, 0, &r, &text, err, sizeof(err)),
			 -ENOENT);
	assert_non_null(strstr(err, "nx"));
	struct daemon_stats ds;
	daemon_stop(d, 1000, &ds);
	shmsched_disconnect(prod);
	shmsched_disconnect(admin);
}

/* --pod-selector (kubectl drain's): only the pods it selects go; a
 * selector that cannot be read is refused, naming the term. */
static void test_selector(void **state)
{
	(void)state;
	struct daemon *d = start();
	struct shmsched_client *admin = fixture_connect(fx.admin);
	struct shmsched_client *prod = fixture_connect_as(fx.sock, "app");
	fixture_place(prod, fixture_app_on(prod, "web", "n0"), 1, SHMSCHED_PLACED);
	fixture_place(prod, fixture_app_on(prod, "batch", "n1"), 2, SHMSCHED_PLACED);
	fixture_place(prod, fixture_app_on(prod, "cron", "n1"), 3, SHMSCHED_PLACED);
	struct shmsched_drain_result r;
	char *text;
	unsigned seen[16] = {0};
	drain_sel(admin, "app=nothing", 0, &r, &text); /* a value no pod has */
	free(text);
	assert_int_equal(r.evicted, 0);
	drain_sel(admin, " app == web ", 0, &r, &text);
	free(text);
	assert_int_equal(r.evicted, 1);
	assert_int_equal(take_notices(prod, 1, 5000, seen), 1);
	assert_int_equal(seen[1], 1);
	drain_sel(admin, "app!=cron,app", 0, &r, &text);
	free(text);
	assert_int_equal(r.evicted, 1);
	assert_int_equal(take_notices(prod, 1, 5000, seen), 1);
	assert_int_equal(seen[2], 1);
	drain_sel(admin, "!app", 0, &r, &text); /* every pod has one */
	free(text);
	assert_int_equal(r.evicted, 0);
	assert_int_equal(daemon_pods_on_nodes(d), 1);
	static const char *const n1[] = {"n1"};
	char err[512];
	assert_int_equal(shmsched_drain(admin, n1, 1, "app=a=b", 0, &r, &text, err,
					sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "term 1 \"app=a=b\""));
	assert_int_equal(shmsched_drain(admin, n1, 1, "app=x,", 0, &r, &text, err,
					sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "term 2"));
	assert_int_equal(daemon_pods_on_nodes(d), 1);
	struct daemon_stats ds;
	daemon_stop(d, 1000, &ds);
	shmsched_disconnect(prod);
	shmsched_disconnect(admin);
}

/* --- the oracle: kubectl's loop, literally, on random small cases ------ */

/* A small random stream (the test's own: a failure names its case). */
static uint64_t rng_state;
static unsigned rnd(unsigned n)
{
	rng_state = rng_state * UINT64_C(6364136223846793005) + 1442695040888963407u;
	return (unsigned)((rng_state >> 33) % n);
}

struct model_pod {
	uint64_t id;
	uint64_t cookie;
	unsigned node;  /* 0..2; 2 is not drained */
	bool x, t;      /* labels app=x (budget A), tier=t (budget B) */
	bool gone;
};

/* One case: up to 8 pods on n0..n2, budget A (app=x) and budget B (tier=t)
 * of maxUnavailable 0..2. Waves of the drain of n0 and n1, each compared
 * with kubectl's loop (drain.go's evictPods: for each pod of the nodes, in
 * order, the Eviction API: 500 for two budgets, 429 when its budget
 * allows none, else evicted and the budget counted down); between waves a
 * budget may be declared again (allowed back to its maxUnavailable). */
/* What the cases exercised, summed: evicted, blocked, errors (waves). */
static unsigned seen_ev, seen_bl, seen_err;

static void oracle_case(struct shmsched_client *admin, struct shmsched_client *prod,
			int k, unsigned *violations)
{
	char json[640], err[512], a_name[32], b_name[32];
	snprintf(a_name, sizeof(a_name), "c%d-a", k);
	snprintf(b_name, sizeof(b_name), "c%d-b", k);
	int max_a = (int)rnd(3), max_b = (int)rnd(3);
#define PDB_FMT "{\"apiVersion\":\"policy/v1\",\"kind\":\"PodDisruptionBudget\"," \
	"\"metadata\":{\"name\":\"%s\",\"namespace\":\"default\"},\"spec\":" \
	"{\"maxUnavailable\":%d,\"selector\":{\"matchLabels\":{\"%s\":\"c%d\"}}}}"
	char pdb_a[400], pdb_b[400];
	snprintf(pdb_a, sizeof(pdb_a), PDB_FMT, a_name, max_a, "app", k);
	snprintf(pdb_b, sizeof(pdb_b), PDB_FMT, b_name, max_b, "tier", k);
	declare(admin, pdb_a);
	declare(admin, pdb_b);
	struct model_pod pods[8];
	unsigned n = 1 + rnd(8);
	for (unsigned i = 0; i < n; i++) {
		struct model_pod *m = &pods[i];
		*m = (struct model_pod){.node = rnd(3), .x = rnd(2), .t = rnd(2)};
		char app[16] = "no", tier[16] = "no";
		if (m->x)
			snprintf(app, sizeof(app), "c%d", k);
		if (m->t)
			snprintf(tier, sizeof(tier), "c%d", k);
		snprintf(json, sizeof(json), "{\"kind\":\"Pod\",\"metadata\":{\"name\":"
			 "\"o\",\"labels\":{\"app\":\"%s\",\"tier\":\"%s\"}},\"spec\":"
			 "{\"nodeName\":\"n%u\",\"containers\":[{\"name\":\"c\","
			 "\"resources\":{\"requests\":{\"cpu\":\"100m\"}}}]}}",
			 app, tier, m->node);
		uint32_t tid;
		if (shmsched_register_template(prod, json, strlen(json), &tid, err,
					       sizeof(err)) < 0)
			fail_msg("case %d: template: %s", k, err);
		m->cookie = 100 + i;
		m->id = fixture_place(prod, tid, m->cookie, SHMSCHED_PLACED);
	}
	/* The walk's order: the placement table's index order. */
	for (unsigned i = 1; i < n; i++)
		for (unsigned j = i; j > 0 && (uint32_t)pods[j - 1].id > (uint32_t)pods[j].id; j--) {
			struct model_pod tmp = pods[j];
			pods[j] = pods[j - 1];
			pods[j - 1] = tmp;
		}
	int allowed_a = max_a, allowed_b = max_b;
	for (int wave = 0; wave < 6; wave++) {
		unsigned want_ev = 0, want_bl = 0, want_err = 0;
		bool evict[8] = {false};
		for (unsigned i = 0; i < n; i++) {
			struct model_pod *m = &pods[i];
			if (m->gone || m->node == 2)
				continue;
			if (m->x && m->t) {
				want_err++; /* 500 */
			} else if ((m->x && allowed_a <= 0) || (m->t && allowed_b <= 0)) {
				want_bl++; /* 429 */
			} else {
				allowed_a -= m->x;
				allowed_b -= m->t;
				evict[i] = true;
				want_ev++;
			}
		}
		static const char *const nodes[] = {"n0", "n1"};
		struct shmsched_drain_result r;
		char *text;
		if (shmsched_drain(admin, nodes, 2, NULL, 0, &r, &text, err, sizeof(err)) < 0)
			fail_msg("case %d wave %d: %s", k, wave, err);
		if (r.evicted != want_ev || r.blocked != want_bl || r.errors != want_err)
			fail_msg("case %d wave %d (A max %d, B max %d): daemon evicted %u "
				 "blocked %u errors %u; kubectl's loop %u %u %u\n%s", k, wave,
				 max_a, max_b, r.evicted, r.blocked, r.errors, want_ev,
				 want_bl, want_err, text);
		free(text);
		seen_ev += want_ev;
		seen_bl += want_bl;
		seen_err += want_err;
		struct shmsched_result got[8];
		if (fixture_await(prod, got, want_ev, 5000) != want_ev)
			fail_msg("case %d wave %d: fewer than %u notices", k, wave, want_ev);
		for (unsigned g = 0; g < want_ev; g++) {
			unsigned i = 0;
			while (i < n && pods[i].cookie != got[g].cookie)
				i++;
			assert_true(i < n);
			if (!evict[i] || pods[i].gone)
				fail_msg("case %d wave %d: notice for cookie %u, which "
					 "kubectl's loop keeps (or told twice)", k, wave,
					 (unsigned)got[g].cookie);
			pods[i].gone = true;
		}
		/* The checker: never more gone under a budget than it allowed. */
		*violations += allowed_a < 0 || allowed_b < 0;
		if (want_bl == 0)
			break;
		/* Declared again, sometimes: its disruptions start over. */
		if (rnd(2)) {
			declare(admin, pdb_a);
			allowed_a = max_a;
		}
		if (rnd(2)) {
			declare(admin, pdb_b);
			allowed_b = max_b;
		}
	}
	/* Nothing more heard; what is left is given back for the next case. */
	struct shmsched_result extra;
	assert_int_equal(fixture_await(prod, &extra, 1, 50), 0);
	for (unsigned i = 0; i < n; i++)
		if (!pods[i].gone)
			assert_int_equal(shmsched_release(prod, pods[i].id, err,
							  sizeof(err)), 0);
}

static void test_oracle(void **state)
{
	(void)state;
	struct daemon *d = start();
	struct shmsched_client *admin = fixture_connect(fx.admin);
	struct shmsched_client *prod = fixture_connect_as(fx.sock, "oracle");
	rng_state = 38;
	unsigned violations = 0;
	for (int k = 0; k < 30; k++)
		oracle_case(admin, prod, k, &violations);
	assert_int_equal(violations, 0);
	print_message("oracle: 30 cases, %u evicted, %u blocked, %u errors\n",
		      seen_ev, seen_bl, seen_err);
	/* The cases reach every answer of the loop. */
	assert_true(seen_ev > 0 && seen_bl > 0 && seen_err > 0);
	assert_int_equal(daemon_pods_on_nodes(d), 0);
	assert_int_equal(daemon_overcommits(d), 0);
	struct daemon_stats ds;
	daemon_stop(d, 1000, &ds);
	shmsched_disconnect(prod);
	shmsched_disconnect(admin);
}

/* 40 budgets, each selecting one app of one pod on n0, each allowing one
 * disruption: one wave evicts all 40. The preemption matcher tells 31
 * budgets apart and lumps the rest as "one of many" allowing none, so the
 * old planner blocked the pods of budgets 32 to 40 (9 blocked). */
static void test_many_budgets(void **state)
{
	(void)state;
	struct daemon *d = start();
	struct shmsched_client *admin = fixture_connect(fx.admin);
	struct shmsched_client *prod = fixture_connect_as(fx.sock, "many");
	for (unsigned k = 0; k < 40; k++) {
		char json[512], app[16];
		snprintf(app, sizeof(app), "a%u", k);
		snprintf(json, sizeof(json), "{\"apiVersion\":\"policy/v1\",\"kind\":"
			 "\"PodDisruptionBudget\",\"metadata\":{\"name\":\"b%u\","
			 "\"namespace\":\"default\"},\"spec\":{\"maxUnavailable\":1,"
			 "\"selector\":{\"matchLabels\":{\"app\":\"%s\"}}}}", k, app);
		declare(admin, json);
		char pod[32];
		snprintf(pod, sizeof(pod), "a%u", k);
		struct shmsched_result r;
		/* 100m each: 40 fit n0's 8 cpu. */
		char tjson[512], err[512];
		snprintf(tjson, sizeof(tjson), "{\"kind\":\"Pod\",\"metadata\":{\"name\":"
			 "\"%s\",\"labels\":{\"app\":\"%s\"}},\"spec\":{\"nodeName\":"
			 "\"n0\",\"containers\":[{\"name\":\"c\",\"resources\":"
			 "{\"requests\":{\"cpu\":\"100m\"}}}]}}", pod, app);
		uint32_t tid;
		if (shmsched_register_template(prod, tjson, strlen(tjson), &tid, err,
					       sizeof(err)) < 0)
			fail_msg("template %s: %s", pod, err);
		fixture_place_one(prod, tid, k, &r);
		assert_int_equal(r.status, SHMSCHED_PLACED);
	}
	static const char *const n0[] = {"n0"};
	struct shmsched_drain_result r;
	char *text = NULL, err[512];
	assert_int_equal(shmsched_drain(admin, n0, 1, NULL, 0, &r, &text, err,
					sizeof(err)), 0);
	assert_int_equal(r.blocked, 0);
	assert_int_equal(r.evicted, 40);
	free(text);
	assert_int_equal(daemon_pods_on_nodes(d), 0);
	struct daemon_stats ds;
	daemon_stop(d, 1000, &ds);
	shmsched_disconnect(prod);
	shmsched_disconnect(admin);
}

/* A producer that does not read its notices: the section holds 64
 * (include/shmsched/wire.h SHMSCHED_NOTICES), so of 80 evictions 16 find
 * no room. Before the `lost` count they were only counted in the
 * daemon's stats, and the producer had no way to learn that any of its
 * placements were gone (the surge helper's drain bench heard 8-25 % of
 * 100,000 notices). Now its header counts 16 lost, and the 64 come. */
static void test_notices_lost(void **state)
{
	(void)state;
	struct daemon *d = start();
	struct shmsched_client *admin = fixture_connect(fx.admin);
	struct shmsched_client *prod = fixture_connect_as(fx.sock, "deaf");
	char err[512];
	uint32_t tid = fixture_template(prod, "{\"kind\":\"Pod\",\"metadata\":{"
					"\"name\":\"p\"},\"spec\":{\"nodeName\":"
					"\"n0\",\"containers\":[{\"name\":\"c\","
					"\"resources\":{\"requests\":{\"cpu\":"
					"\"100m\"}}}]}}");
	for (unsigned k = 0; k < 80; k++) /* 80 x 100m: n0's 8 cpu */
		(void)fixture_place(prod, tid, k, SHMSCHED_PLACED);
	assert_int_equal(shmsched_notices_lost(prod), 0);
	static const char *const n0[] = {"n0"};
	struct shmsched_drain_result r;
	char *text = NULL;
	assert_int_equal(shmsched_drain(admin, n0, 1, NULL, 0, &r, &text, err,
					sizeof(err)), 0);
	free(text);
	assert_int_equal(r.evicted, 80);
	/* The worker delivers them on its own time: wait up to 5 s. */
	for (int i = 0; i < 5000 && shmsched_notices_lost(prod) < 16; i++)
		usleep(1000);
	assert_int_equal(shmsched_notices_lost(prod), 16);
	struct shmsched_result got[80];
	assert_int_equal(fixture_await(prod, got, 64, 5000), 64);
	for (unsigned i = 0; i < 64; i++)
		assert_int_equal(got[i].status, SHMSCHED_EVICTED);
	assert_int_equal(fixture_await(prod, got, 1, 100), 0);
	assert_int_equal(shmsched_notices_lost(prod), 16);
	struct daemon_stats ds;
	daemon_stop(d, 1000, &ds);
	assert_int_equal(ds.notices, 64);
	assert_int_equal(ds.notices_dropped, 16);
	shmsched_disconnect(prod);
	shmsched_disconnect(admin);
}

/* The ladder's AlwaysAllow step (issue 38 item 1): kubernetes/kubernetes
 * pkg/registry/core/pod/storage/eviction.go deletes a pod that is not
 * Ready when its budget's spec.unhealthyPodEvictionPolicy is AlwaysAllow,
 * whatever the budget allows, and does not decrement disruptionsAllowed.
 * Unhealthy here: a failure reported for the placement (OP_FAILURE). Two
 * budgets that allow nothing (maxUnavailable 0): web's AlwaysAllow, api's
 * IfHealthyBudget (written out; absent means it too), each over one
 * unhealthy and one healthy pod on n0. One wave evicts web's unhealthy
 * pod only, its line naming the step, and the budget keeps its count
 * (evicted 0 since); the other three are blocked, api's unhealthy one's
 * line saying IfHealthyBudget holds it. Before this step the policy was
 * read as no field and all four were blocked. The Eviction API of one
 * pod (OP_DRAIN_PLACEMENT) takes the same step for web's other pod once
 * its failure is reported. A policy of another value is refused, naming
 * it. */
static void test_unhealthy_always_allow(void **state)
{
	(void)state;
	struct daemon *d = start();
	struct shmsched_client *admin = fixture_connect(fx.admin);
	struct shmsched_client *prod = fixture_connect_as(fx.sock, "app");
	char err[512];
	declare(admin, "{\"apiVersion\":\"policy/v1\",\"kind\":\"PodDisruptionBudget\","
		"\"metadata\":{\"name\":\"web\",\"namespace\":\"default\"},\"spec\":"
		"{\"maxUnavailable\":0,\"unhealthyPodEvictionPolicy\":\"AlwaysAllow\","
		"\"selector\":{\"matchLabels\":{\"app\":\"web\"}}}}");
	declare(admin, "{\"apiVersion\":\"policy/v1\",\"kind\":\"PodDisruptionBudget\","
		"\"metadata\":{\"name\":\"api\",\"namespace\":\"default\"},\"spec\":"
		"{\"maxUnavailable\":0,\"unhealthyPodEvictionPolicy\":\"IfHealthyBudget\","
		"\"selector\":{\"matchLabels\":{\"app\":\"api\"}}}}");
	static const char bad[] =
		"{\"apiVersion\":\"policy/v1\",\"kind\":\"PodDisruptionBudget\","
		"\"metadata\":{\"name\":\"odd\",\"namespace\":\"default\"},\"spec\":"
		"{\"maxUnavailable\":0,\"unhealthyPodEvictionPolicy\":\"Always\","
		"\"selector\":{}}}";
	assert_true(shmsched_priority_class(admin, bad, strlen(bad), err,
					    sizeof(err)) < 0);
	print_message("refused: %s\n", err);
	assert_non_null(strstr(err, "unhealthyPodEvictionPolicy"));
	assert_non_null(strstr(err, "\"Always\""));
	uint32_t web = fixture_app_on(prod, "web", "n0");
	uint32_t api = fixture_app_on(prod, "api", "n0");
	uint64_t web_sick = fixture_place(prod, web, 1, SHMSCHED_PLACED);
	uint64_t web_well = fixture_place(prod, web, 2, SHMSCHED_PLACED);
	uint64_t api_sick = fixture_place(prod, api, 3, SHMSCHED_PLACED);
	(void)fixture_place(prod, api, 4, SHMSCHED_PLACED);
	int v = shmsched_report_failure(prod, web_sick, "CrashLoopBackOff", err,
					sizeof(err));
	assert_true(v >= 0);
	v = shmsched_report_failure(prod, api_sick, "CrashLoopBackOff", err,
				    sizeof(err));
	assert_true(v >= 0);
	struct shmsched_drain_result r;
	char *text;
	drain(admin, SHMSCHED_DRAIN_DRY_RUN, &r, &text);
	assert_int_equal(r.evicted, 1);
	assert_int_equal(r.blocked, 3);
	free(text);
	assert_int_equal(daemon_pods_on_nodes(d), 4);
	for (int wave = 0; wave < 2; wave++) {
		drain(admin, 0, &r, &text);
		assert_int_equal(r.evicted, wave == 0 ? 1 : 0);
		assert_int_equal(r.blocked, 3);
		assert_int_equal(r.errors, 0);
		if (wave == 0) {
			char want[96];
			snprintf(want, sizeof(want), "evicted placement %llu ",
				 (unsigned long long)web_sick);
			assert_non_null(strstr(text, want));
			assert_non_null(strstr(text, "unhealthyPodEvictionPolicy is "
					       "AlwaysAllow"));
		}
		/* Not counted down: web's healthy pod's line says 0 since. */
		assert_non_null(strstr(text, "PodDisruptionBudget default/web allows "
				       "no more disruptions now (declared 0, evicted 0 "
				       "since"));
		assert_non_null(strstr(text, "but the budget's unhealthyPodEviction"
				       "Policy is IfHealthyBudget"));
		free(text);
	}
	unsigned seen[16] = {0};
	assert_int_equal(take_notices(prod, 1, 5000, seen), 1);
	assert_int_equal(seen[1], 1);
	assert_int_equal(take_notices(prod, 1, 200, seen), 0);
	assert_int_equal(daemon_pods_on_nodes(d), 3);
	/* The Eviction API of one pod (the gateway's, OP_DRAIN_PLACEMENT):
	 * web's other pod fails now, and goes the same way. */
	assert_true(shmsched_report_failure(prod, web_well, NULL, err, sizeof(err)) >= 0);
	char one[32];
	snprintf(one, sizeof(one), "%llu", (unsigned long long)web_well);
	static const char *const n0[] = {"n0"};
	assert_int_equal(shmsched_drain(admin, n0, 1, one, SHMSCHED_DRAIN_PLACEMENT,
					&r, &text, err, sizeof(err)), 0);
	assert_int_equal(r.evicted, 1);
	assert_non_null(strstr(text, "unhealthyPodEvictionPolicy is AlwaysAllow"));
	free(text);
	assert_int_equal(take_notices(prod, 1, 5000, seen), 1);
	assert_int_equal(seen[2], 1);
	struct daemon_stats ds;
	daemon_stop(d, 1000, &ds);
	shmsched_disconnect(prod);
	shmsched_disconnect(admin);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_waves),
		cmocka_unit_test(test_refusals),
		cmocka_unit_test(test_selector),
		cmocka_unit_test(test_oracle),
		cmocka_unit_test(test_many_budgets),
		cmocka_unit_test(test_notices_lost),
		cmocka_unit_test(test_unhealthy_always_allow),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
