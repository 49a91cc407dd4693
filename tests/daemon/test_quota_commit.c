/* unit.daemon_quota and stress.daemon_quota_race: Kueue's quotas in the
 * daemon's placements, the real daemon in process with a quota tree built by the
 * quota.h calls (two ClusterQueues in a cohort, LocalQueues in namespace
 * "default"), producers through the client library.
 *
 * The oracle is Kueue's admission (kueue pkg/cache/resource_node.go,
 * available(); pkg/scheduler/flavorassigner): a ClusterQueue admits up to
 * its nominal quota, then borrows what its cohort has unused; a flavor's
 * nodeLabels become the pod's node selector; a pod without the
 * kueue.x-k8s.io/queue-name label is under no quota; a label naming no
 * LocalQueue keeps the pod out ("LocalQueue ns/name doesn't exist").
 *
 * Deterministic cases:
 * - admission to nominal, borrowing, refusal naming queue and cohort,
 *   release gives back exactly, pods without the label unaffected, a
 *   missing LocalQueue and an uncovered resource refused by name;
 * - flavors in order: a flavor with quota left but no node (its
 *   nodeLabels) is given back and the next one charged;
 * - eviction (DefaultPreemption) gives the victim's charge back, and the
 *   preemptor placed on the held node is charged;
 * - a restarted daemon (the same named region) charges its live
 *   placements to a new tree again;
 * - the cluster file's own Kueue objects are the quotas when none is
 *   given (shmschedd --cluster), and both given is refused;
 * - waiting for quota (issue 37; Kueue's BestEffortFIFO keeps a workload
 *   its ClusterQueue cannot admit pending and admits it when quota under
 *   its cohort frees: pkg/queue/cluster_queue.go, QueueInadmissibleWorkloads
 *   on a workload's deletion from the cohort): a pod that asked to wait
 *   parks, is not attempted again for a release in another cohort tree,
 *   and is placed once its own queue's quota is given back; one whose
 *   deadline passes is answered naming the quota.
 * Racing (stress.daemon_quota_race; argument "race"): four workers, four
 * producer threads placing and releasing labelled and unlabelled pods; after
 * quiescence each queue's usage equals the sum of its live placements'
 * requests (0 violations), then 0 once all are released; the race is
 * shown by conflicts (the quota's or the ledger's) > 0.
 */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
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
#include "quota/quota.h"
#include "shm/shm.h"
#include "shmsched/client.h"

static struct fixture_dir fx;

struct tree {
	struct quota_tree *t;
	int fa, fb;   /* flavors */
	int cpu;      /* resource */
	int a, b;     /* ClusterQueues team-a, team-b */
	int cohort;   /* ml, or -1 */
};

/* team-a and team-b with `a_cpu`, `b_cpu` millicores of flavor fa (and,
 * when `fb_cpu` > 0, team-a fb_cpu of flavor fb), in cohort "ml" when
 * `cohort`; fa's nodeLabels pool=a and fb's pool=b when `labels`.
 * LocalQueues default/qa -> team-a, default/qb -> team-b. */
static struct tree make_tree(int64_t a_cpu, int64_t b_cpu, int64_t fb_cpu,
			     bool cohort, bool labels)
{
	struct tree tr = {.cohort = -1};
	char err[256];
	assert_int_equal(quota_tree_new(&tr.t), 0);
	tr.fa = quota_flavor_add(tr.t, "fa", err, sizeof(err));
	tr.fb = quota_flavor_add(tr.t, "fb", err, sizeof(err));
	assert_true(tr.fa >= 0 && tr.fb >= 0);
	if (labels) {
		assert_int_equal(quota_flavor_label_add(tr.t, tr.fa, "pool", "a", err,
							sizeof(err)), 0);
		assert_int_equal(quota_flavor_label_add(tr.t, tr.fb, "pool", "b", err,
							sizeof(err)), 0);
	}
	tr.cpu = quota_resource_add(tr.t, "cpu", err, sizeof(err));
	assert_true(tr.cpu >= 0);
	if (cohort) {
		tr.cohort = quota_cohort_add(tr.t, "ml", NULL,
					     QUOTA_WEIGHT_DEFAULT_MILLI, err, sizeof(err));
		assert_true(tr.cohort >= 0);
	}
	const char *co = cohort ? "ml" : NULL;
	tr.a = quota_cluster_queue_add(tr.t, "team-a", co, QUOTA_WEIGHT_DEFAULT_MILLI,
				       NULL, err, sizeof(err));
	tr.b = quota_cluster_queue_add(tr.t, "team-b", co, QUOTA_WEIGHT_DEFAULT_MILLI,
				       NULL, err, sizeof(err));
	assert_true(tr.a >= 0 && tr.b >= 0);
	assert_int_equal(quota_set(tr.t, tr.a, tr.fa, tr.cpu, a_cpu, QUOTA_NO_LIMIT,
				   QUOTA_NO_LIMIT, err, sizeof(err)), 0);
	if (fb_cpu > 0)
		assert_int_equal(quota_set(tr.t, tr.a, tr.fb, tr.cpu, fb_cpu,
					   QUOTA_NO_LIMIT, QUOTA_NO_LIMIT, err,
					   sizeof(err)), 0);
	assert_int_equal(quota_set(tr.t, tr.b, tr.fa, tr.cpu, b_cpu, QUOTA_NO_LIMIT,
				   QUOTA_NO_LIMIT, err, sizeof(err)), 0);
	assert_true(quota_local_queue_add(tr.t, "default", "qa", "team-a", err,
					  sizeof(err)) >= 0);
	assert_true(quota_local_queue_add(tr.t, "default", "qb", "team-b", err,
					  sizeof(err)) >= 0);
	if (quota_seal(tr.t, err, sizeof(err)) < 0)
		fail_msg("quota_seal: %s", err);
	return tr;
}

static int setup(void **state)
{
	(void)state;
	fixture_dir_make(&fx, "quota", 0);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	fixture_dir_remove(&fx);
	return 0;
}

/* The cluster file: nodes (name, cpu, pool label or NULL), then `extra`
 * objects (NULL: none). */
static void write_cluster(const char *const *names, const int *cpus,
			  const char *const *pools, unsigned n, const char *extra)
{
	FILE *f = fopen(fx.cluster, "w");
	assert_non_null(f);
	fputs("{\"kind\":\"List\",\"items\":[", f);
	for (unsigned i = 0; i < n; i++) {
		char labels[64] = "";
		if (pools[i] != NULL)
			snprintf(labels, sizeof(labels), ",\"labels\":{\"pool\":\"%s\"}",
				 pools[i]);
		fprintf(f, "%s{\"kind\":\"Node\",\"metadata\":{\"name\":\"%s\"%s},"
			"\"status\":{\"allocatable\":{\"cpu\":\"%d\",\"memory\":"
			"\"64Gi\",\"pods\":\"110\"}}}", i ? "," : "", names[i], labels,
			cpus[i]);
	}
	if (extra != NULL)
		fprintf(f, ",%s", extra);
	fputs("]}", f);
	fclose(f);
}

static struct daemon *start(struct quota_tree *t, unsigned workers,
			    const char *region)
{
	struct daemon_config cfg = fixture_config(&fx);
	cfg.workers = workers;
	cfg.slots = 256;
	cfg.quota = t;
	cfg.state_name = region;
	return fixture_start(&cfg);
}

/* A pod of namespace default requesting `requests` (JSON members), with
 * the queue label `queue` (NULL: none) and PriorityClass `cls` (NULL:
 * none). */
static uint32_t tmpl(struct shmsched_client *c, const char *queue,
		     const char *requests, const char *cls)
{
	char json[1024], labels[128] = "", pc[96] = "";
	if (queue != NULL)
		snprintf(labels, sizeof(labels), ",\"labels\":{\"kueue.x-k8s.io/"
			 "queue-name\":\"%s\"}", queue);
	if (cls != NULL)
		snprintf(pc, sizeof(pc), "\"priorityClassName\":\"%s\",", cls);
	snprintf(json, sizeof(json), "{\"kind\":\"Pod\",\"metadata\":{\"name\":"
		 "\"t\",\"namespace\":\"default\"%s},\"spec\":{%s\"containers\":"
		 "[{\"name\":\"c\",\"resources\":{\"requests\":{%s}}}]}}", labels,
		 pc, requests);
	return fixture_template(c, json);
}

static int64_t usage(const struct tree *tr, int cq, int flavor)
{
	return quota_usage(tr->t, cq, flavor, tr->cpu);
}

/* Admission to nominal, borrowing from the cohort, the refusal, a release
 * giving back, unlabelled pods, a missing LocalQueue, an uncovered
 * resource. */
static void test_admission(void **state)
{
	(void)state;
	const char *names[] = {"n0"};
	const int cpus[] = {32};
	const char *pools[] = {NULL};
	write_cluster(names, cpus, pools, 1, NULL);
	struct tree tr = make_tree(2000, 2000, 0, true, false);
	struct daemon *d = start(tr.t, 1, NULL);
	struct shmsched_client *c = fixture_connect(fx.sock);
	uint32_t qa = tmpl(c, "qa", "\"cpu\":\"1\"", NULL);
	uint32_t qb = tmpl(c, "qb", "\"cpu\":\"1\"", NULL);
	uint32_t plain = tmpl(c, NULL, "\"cpu\":\"1\"", NULL);
	uint32_t nope = tmpl(c, "nope", "\"cpu\":\"1\"", NULL);
	uint32_t mem = tmpl(c, "qa", "\"cpu\":\"1\",\"memory\":\"1Gi\"", NULL);
	struct shmsched_result r;
	uint64_t ids[4];
	/* Two within team-a's nominal 2, two borrowed from team-b's unused 2. */
	for (int i = 0; i < 4; i++) {
		fixture_place_one(c, qa, (uint64_t)i + 1, &r);
		assert_int_equal(r.status, SHMSCHED_PLACED);
		ids[i] = r.placement_id;
		assert_int_equal(usage(&tr, tr.a, tr.fa), 1000 * (i + 1));
	}
	/* Nothing left to borrow: refused, naming the queue and the cohort. */
	fixture_place_one(c, qa, 5, &r);
	assert_int_equal(r.status, SHMSCHED_UNSCHEDULABLE);
	print_message("quota: %s\n", r.message);
	assert_non_null(strstr(r.message, "ClusterQueue \"team-a\": cpu "
				"4000m/2000m of its nominal quota in flavor \"fa\""));
	assert_non_null(strstr(r.message, "cohort \"ml\": nothing left to borrow"));
	assert_int_equal(usage(&tr, tr.a, tr.fa), 4000);
	/* team-b's own nominal is lent out (no lendingLimit keeps it back). */
	fixture_place_one(c, qb, 6, &r);
	assert_int_equal(r.status, SHMSCHED_UNSCHEDULABLE);
	assert_non_null(strstr(r.message, "ClusterQueue \"team-b\""));
	assert_int_equal(usage(&tr, tr.b, tr.fa), 0);
	/* A release gives back exactly its request; team-b then fits. */
	char err[256];
	assert_int_equal(shmsched_release(c, ids[3], err, sizeof(err)), 0);
	assert_int_equal(usage(&tr, tr.a, tr.fa), 3000);
	fixture_place_one(c, qb, 7, &r);
	assert_int_equal(r.status, SHMSCHED_PLACED);
	assert_int_equal(usage(&tr, tr.b, tr.fa), 1000);
	/* No label: no quota, whatever is left. */
	for (int i = 0; i < 3; i++) {
		fixture_place_one(c, plain, 10 + (uint64_t)i, &r);
		assert_int_equal(r.status, SHMSCHED_PLACED);
	}
	assert_int_equal(usage(&tr, tr.a, tr.fa), 3000);
	assert_int_equal(usage(&tr, tr.b, tr.fa), 1000);
	/* A LocalQueue that does not exist, and a resource team-a covers in
	 * no flavor: refused by name, nothing charged. */
	fixture_place_one(c, nope, 20, &r);
	assert_int_equal(r.status, SHMSCHED_UNSCHEDULABLE);
	assert_non_null(strstr(r.message, "LocalQueue default/nope doesn't exist"));
	fixture_place_one(c, mem, 21, &r);
	assert_int_equal(r.status, SHMSCHED_UNSCHEDULABLE);
	print_message("quota: %s\n", r.message);
	assert_non_null(strstr(r.message, "\"memory\""));
	assert_int_equal(usage(&tr, tr.a, tr.fa), 3000);
	for (int i = 0; i < 3; i++)
		assert_int_equal(shmsched_release(c, ids[i], err, sizeof(err)), 0);
	assert_int_equal(usage(&tr, tr.a, tr.fa), 0);
	assert_int_equal(quota_usage(tr.t, tr.cohort, tr.fa, tr.cpu), 1000);
	struct daemon_stats ds;
	daemon_stop(d, 1000, &ds);
	assert_int_equal(ds.placed, 8);
	shmsched_disconnect(c);
	quota_tree_free(tr.t);
}

/* Flavors in order, each with its nodeLabels: fa's node n0 (pool=a) holds
 * two pods; the third has fa quota left but no node there, so fa's charge
 * is given back and fb's taken, on n1 (pool=b). */
static void test_flavors(void **state)
{
	(void)state;
	const char *names[] = {"n0", "n1", "n2"};
	const int cpus[] = {2, 8, 8};
	const char *pools[] = {"a", "b", NULL};
	write_cluster(names, cpus, pools, 3, NULL);
	struct tree tr = make_tree(4000, 0, 4000, false, true);
	struct daemon *d = start(tr.t, 1, NULL);
	struct shmsched_client *c = fixture_connect(fx.sock);
	uint32_t qa = tmpl(c, "qa", "\"cpu\":\"1\"", NULL);
	struct shmsched_result r;
	char node[64], err[256];
	const char *want[] = {"n0", "n0", "n1", "n1"};
	for (int i = 0; i < 4; i++) {
		fixture_place_one(c, qa, (uint64_t)i + 1, &r);
		assert_int_equal(r.status, SHMSCHED_PLACED);
		assert_int_equal(shmsched_node_name(c, r.node_id, node, sizeof(node),
						    err, sizeof(err)), 0);
		assert_string_equal(node, want[i]);
	}
	assert_int_equal(usage(&tr, tr.a, tr.fa), 2000);
	assert_int_equal(usage(&tr, tr.a, tr.fb), 2000);
	struct daemon_stats ds;
	daemon_stop(d, 1000, &ds);
	shmsched_disconnect(c);
	quota_tree_free(tr.t);
}

/* DefaultPreemption: a waiting team-b pod of priority 1000 evicts a
 * team-a pod of priority 0: team-a's charge is given back with the
 * victim's record, and the preemptor, placed on the node the evictor
 * held, is charged to team-b. */
static void test_eviction(void **state)
{
	(void)state;
	const char *names[] = {"n0"};
	const int cpus[] = {2};
	const char *pools[] = {NULL};
	write_cluster(names, cpus, pools, 1,
		      "{\"kind\":\"PriorityClass\",\"metadata\":{\"name\":"
		      "\"high\"},\"value\":1000}");
	struct tree tr = make_tree(4000, 4000, 0, false, false);
	struct daemon *d = start(tr.t, 1, NULL);
	struct shmsched_client *low = fixture_connect(fx.sock), *hi = fixture_connect(fx.sock);
	uint32_t qa = tmpl(low, "qa", "\"cpu\":\"1\"", NULL);
	uint32_t qb = tmpl(hi, "qb", "\"cpu\":\"1\"", "high");
	struct shmsched_result r[2];
	for (int i = 0; i < 2; i++) {
		fixture_place_one(low, qa, (uint64_t)i + 1, &r[0]);
		assert_int_equal(r[0].status, SHMSCHED_PLACED);
	}
	assert_int_equal(usage(&tr, tr.a, tr.fa), 2000);
	struct shmsched_pod p = {.cookie = 9, .template_id = qb,
				 .flags = SHMSCHED_WAIT};
	assert_int_equal(shmsched_submit(hi, &p, 1), 1);
	assert_int_equal(fixture_await(hi, r, 1, 5000), 1);
	assert_int_equal(r[0].status, SHMSCHED_PLACED);
	assert_int_equal(fixture_await(low, r, 1, 5000), 1);
	assert_int_equal(r[0].status, SHMSCHED_EVICTED);
	assert_int_equal(usage(&tr, tr.a, tr.fa), 1000);
	assert_int_equal(usage(&tr, tr.b, tr.fa), 1000);
	struct daemon_stats ds;
	daemon_stop(d, 1000, &ds);
	assert_int_equal(ds.victims, 1);
	shmsched_disconnect(low);
	shmsched_disconnect(hi);
	quota_tree_free(tr.t);
}

/* A restart: the named region's live placements are charged to the new
 * daemon's (new, empty) tree again, as node use is recounted. */
static void test_restart_recount(void **state)
{
	(void)state;
	const char *names[] = {"n0"};
	const int cpus[] = {8};
	const char *pools[] = {NULL};
	write_cluster(names, cpus, pools, 1, NULL);
	char region[64];
	snprintf(region, sizeof(region), "shmsched-quota-%d", (int)getpid());
	struct tree tr = make_tree(4000, 4000, 0, false, false);
	struct daemon_config cfg = fixture_config(&fx);
	cfg.quota = tr.t;
	cfg.state_name = region;
	cfg.fresh = true;
	struct daemon *d = fixture_start(&cfg);
	char err[512];
	struct shmsched_client *c = fixture_connect(fx.sock);
	uint32_t qa = tmpl(c, "qa", "\"cpu\":\"1\"", NULL);
	uint32_t qb = tmpl(c, "qb", "\"cpu\":\"1\"", NULL);
	struct shmsched_result r;
	for (int i = 0; i < 3; i++) {
		fixture_place_one(c, i < 2 ? qa : qb, (uint64_t)i + 1, &r);
		assert_int_equal(r.status, SHMSCHED_PLACED);
	}
	shmsched_disconnect(c);
	struct daemon_stats ds;
	daemon_stop(d, 1000, &ds);
	quota_tree_free(tr.t);

	struct tree again = make_tree(4000, 4000, 0, false, false);
	cfg.quota = again.t;
	cfg.fresh = false;
	d = daemon_start(&cfg, err, sizeof(err));
	if (d == NULL)
		fail_msg("daemon_start (resume): %s", err);
	assert_int_equal(usage(&again, again.a, again.fa), 2000);
	assert_int_equal(usage(&again, again.b, again.fa), 1000);
	daemon_stop(d, 1000, &ds);
	quota_tree_free(again.t);
	assert_int_equal(state_remove(region, err, sizeof(err)), 0);
}

/* Issue 37: quota refuses a pod that asked to wait: it parks, a release in
 * team-b (another tree: no cohort) does not wake it (no retry counted),
 * a release in team-a places it. A second waiting pod with a deadline is
 * answered at its deadline, naming the quota. Old: both answered
 * UNSCHEDULABLE at once. */
static void test_quota_wait(void **state)
{
	(void)state;
	const char *names[] = {"n0"};
	const int cpus[] = {32};
	const char *pools[] = {NULL};
	write_cluster(names, cpus, pools, 1, NULL);
	struct tree tr = make_tree(2000, 2000, 0, false, false);
	struct daemon *d = start(tr.t, 1, NULL);
	struct shmsched_client *c = fixture_connect(fx.sock), *other = fixture_connect(fx.sock);
	uint32_t qa = tmpl(c, "qa", "\"cpu\":\"1\"", NULL);
	uint32_t qb = tmpl(other, "qb", "\"cpu\":\"1\"", NULL);
	struct shmsched_result r;
	uint64_t ids[2];
	char err[256];
	for (int i = 0; i < 2; i++) {
		fixture_place_one(c, qa, (uint64_t)i + 1, &r);
		assert_int_equal(r.status, SHMSCHED_PLACED);
		ids[i] = r.placement_id;
	}
	/* The third: team-a is at its nominal 2 cpu; it waits (up to 20 s). */
	struct shmsched_pod p = {.cookie = 3, .template_id = qa,
				 .flags = SHMSCHED_WAIT,
				 .deadline_ns = now_ns() + UINT64_C(20000000000)};
	assert_int_equal(shmsched_submit(c, &p, 1), 1);
	/* old: answered UNSCHEDULABLE here. */
	assert_int_equal(fixture_await(c, &r, 1, 300), 0);
	struct daemon_stats ds;
	daemon_get_stats(d, &ds);
	assert_int_equal(ds.waited, 1);
	assert_int_equal(ds.pending_unschedulable, 1);
	uint64_t retries = ds.queue_retries;
	/* team-b's quota, placed and given back: another tree, no attempt. */
	fixture_place_one(other, qb, 10, &r);
	assert_int_equal(r.status, SHMSCHED_PLACED);
	assert_int_equal(shmsched_release(other, r.placement_id, err, sizeof(err)), 0);
	assert_int_equal(fixture_await(c, &r, 1, 300), 0);
	daemon_get_stats(d, &ds);
	assert_int_equal(ds.queue_retries, retries);
	assert_int_equal(ds.pending_unschedulable, 1);
	/* team-a's quota given back: placed within the deadline. */
	assert_int_equal(shmsched_release(c, ids[1], err, sizeof(err)), 0);
	assert_int_equal(fixture_await(c, &r, 1, 5000), 1);
	assert_int_equal(r.status, SHMSCHED_PLACED);
	assert_int_equal(r.cookie, 3);
	assert_int_equal(usage(&tr, tr.a, tr.fa), 2000);
	daemon_get_stats(d, &ds);
	assert_int_equal(ds.waited_placed, 1);
	assert_int_equal(ds.queue_retries, retries + 1);
	/* A deadline passes while it waits for quota: answered so, naming
	 * the ClusterQueue. */
	p.cookie = 4;
	p.deadline_ns = now_ns() + UINT64_C(300000000);
	assert_int_equal(shmsched_submit(c, &p, 1), 1);
	assert_int_equal(fixture_await(c, &r, 1, 5000), 1);
	assert_int_equal(r.status, SHMSCHED_UNSCHEDULABLE);
	print_message("quota wait deadline: %s\n", r.message);
	assert_non_null(strstr(r.message, "its deadline passed after 2 attempts: "
				"waiting for quota: ClusterQueue \"team-a\": cpu "
				"2000m/2000m"));
	daemon_stop(d, 1000, &ds);
	assert_int_equal(ds.timed_out, 1);
	shmsched_disconnect(c);
	shmsched_disconnect(other);
	quota_tree_free(tr.t);
}

/* --- racing ------------------------------------------------------------ */

#define RACE_PRODUCERS 4
#define RACE_LIVE 24 /* placements a producer holds at most */

struct racer {
	struct fixture_churn ch; /* templates qa, qb, none (which 0, 1, 2) */
	int64_t end_ns;
};

/* One producer's round: steps until end_ns, its cookies from 1. */
static void *race(void *arg)
{
	struct racer *rc = arg;
	rc->ch.cookie = 0;
	while ((int64_t)now_ns() < rc->end_ns && fixture_churn_step(&rc->ch) == 0)
		continue;
	return NULL;
}

static void test_race(void **state)
{
	(void)state;
	/* Small nodes, so that workers' commits collide on the ledger too. */
	const char *names[] = {"n0", "n1", "n2", "n3"};
	const int cpus[] = {6, 6, 6, 6};
	const char *pools[] = {NULL, NULL, NULL, NULL};
	write_cluster(names, cpus, pools, 4, NULL);
	/* 20 cpu of quota in all for 96 live pods at most: queues fill. */
	struct tree tr = make_tree(10000, 10000, 0, true, false);
	struct daemon *d = start(tr.t, 4, NULL);
	struct racer rc[RACE_PRODUCERS];
	pthread_t th[RACE_PRODUCERS];
	uint64_t violations = 0, rounds = 0, conflicts = 0;
	struct daemon_stats ds;
	memset(rc, 0, sizeof(rc));
	for (int i = 0; i < RACE_PRODUCERS; i++) {
		rc[i].ch.c = fixture_connect(fx.sock);
		rc[i].ch.tid[0] = tmpl(rc[i].ch.c, "qa", "\"cpu\":\"500m\"", NULL);
		rc[i].ch.tid[1] = tmpl(rc[i].ch.c, "qb", "\"cpu\":\"1\"", NULL);
		rc[i].ch.tid[2] = tmpl(rc[i].ch.c, NULL, "\"cpu\":\"250m\"", NULL);
		rc[i].ch.n_tid = 3;
		rc[i].ch.live_max = RACE_LIVE;
		rc[i].ch.seed = 0x9e3779b97f4a7c15u * (uint64_t)(i + 1);
	}
	/* Rounds of a second until a race was seen (at most 10). */
	do {
		int64_t end = (int64_t)now_ns() + 1000000000;
		for (int i = 0; i < RACE_PRODUCERS; i++) {
			rc[i].end_ns = end;
			assert_int_equal(pthread_create(&th[i], NULL, race, &rc[i]), 0);
		}
		for (int i = 0; i < RACE_PRODUCERS; i++) {
			pthread_join(th[i], NULL);
			if (rc[i].ch.failed != NULL)
				fail_msg("producer %d: %s", i, rc[i].ch.failed);
		}
		/* Quiescent: every pod answered. The checker: each queue's
		 * usage is the sum of its live placements' requests. */
		int64_t want[2] = {0, 0};
		for (int i = 0; i < RACE_PRODUCERS; i++)
			for (unsigned k = 0; k < rc[i].ch.n; k++)
				if (rc[i].ch.which[k] < 2)
					want[rc[i].ch.which[k]] +=
						rc[i].ch.which[k] == 0 ? 500 : 1000;
		violations += usage(&tr, tr.a, tr.fa) != want[0];
		violations += usage(&tr, tr.b, tr.fa) != want[1];
		if (violations)
			print_message("round %" PRIu64 ": team-a %" PRId64 " (want %"
				      PRId64 "), team-b %" PRId64 " (want %" PRId64 ")\n",
				      rounds, usage(&tr, tr.a, tr.fa), want[0],
				      usage(&tr, tr.b, tr.fa), want[1]);
		daemon_get_stats(d, &ds);
		conflicts = quota_conflicts(tr.t) + ds.conflicts;
		rounds++;
	} while (conflicts == 0 && rounds < 10 && violations == 0);
	uint64_t placed = 0, refused = 0;
	char err[256];
	for (int i = 0; i < RACE_PRODUCERS; i++) {
		placed += rc[i].ch.placed;
		refused += rc[i].ch.refused;
		for (unsigned k = 0; k < rc[i].ch.n; k++)
			assert_int_equal(shmsched_release(rc[i].ch.c, rc[i].ch.id[k],
							  err, sizeof(err)), 0);
		shmsched_disconnect(rc[i].ch.c);
	}
	print_message("quota race: %" PRIu64 " round(s), %" PRIu64 " placed, %"
		      PRIu64 " refused, quota conflicts %" PRIu64 ", ledger "
		      "conflicts %" PRIu64 ", violations %" PRIu64 "\n", rounds,
		      placed, refused, quota_conflicts(tr.t), ds.conflicts,
		      violations);
	assert_int_equal(violations, 0);
	assert_int_equal(usage(&tr, tr.a, tr.fa), 0);
	assert_int_equal(usage(&tr, tr.b, tr.fa), 0);
	assert_int_equal(quota_usage(tr.t, tr.cohort, tr.fa, tr.cpu), 0);
	assert_true(refused > 0); /* the queues did fill */
	assert_true(conflicts > 0);
	assert_int_equal(daemon_overcommits(d), 0);
	daemon_stop(d, 1000, &ds);
	quota_tree_free(tr.t);
}

/* The cluster file's own Kueue objects (kueue.x-k8s.io/v1beta2, as
 * `kubectl get -o json` prints them) are the daemon's quotas when the
 * caller gives none (shmschedd --cluster); given both, it refuses to
 * start. Old: the objects were read and checked, then dropped: every
 * labelled pod was placed. */
static void test_cluster_file_quotas(void **state)
{
	(void)state;
	const char *names[] = {"n0"};
	const int cpus[] = {32};
	const char *pools[] = {NULL};
	write_cluster(names, cpus, pools, 1,
		"{\"apiVersion\":\"kueue.x-k8s.io/v1beta2\",\"kind\":\"ResourceFlavor\","
		"\"metadata\":{\"name\":\"default-flavor\"}},"
		"{\"apiVersion\":\"kueue.x-k8s.io/v1beta2\",\"kind\":\"ClusterQueue\","
		"\"metadata\":{\"name\":\"team-a\"},\"spec\":{\"resourceGroups\":"
		"[{\"coveredResources\":[\"cpu\"],\"flavors\":[{\"name\":"
		"\"default-flavor\",\"resources\":[{\"name\":\"cpu\","
		"\"nominalQuota\":\"2\"}]}]}]}},"
		"{\"apiVersion\":\"kueue.x-k8s.io/v1beta2\",\"kind\":\"LocalQueue\","
		"\"metadata\":{\"name\":\"qa\",\"namespace\":\"default\"},"
		"\"spec\":{\"clusterQueue\":\"team-a\"}}");
	struct daemon *d = start(NULL, 1, NULL);
	struct shmsched_client *c = fixture_connect(fx.sock);
	uint32_t qa = tmpl(c, "qa", "\"cpu\":\"1\"", NULL);
	struct shmsched_result r;
	for (int i = 0; i < 2; i++) {
		fixture_place_one(c, qa, (uint64_t)i + 1, &r);
		assert_int_equal(r.status, SHMSCHED_PLACED);
	}
	/* old: placed (31 cpus free on n0). */
	fixture_place_one(c, qa, 3, &r);
	assert_int_equal(r.status, SHMSCHED_UNSCHEDULABLE);
	print_message("cluster file quota: %s\n", r.message);
	assert_non_null(strstr(r.message, "ClusterQueue \"team-a\""));
	shmsched_disconnect(c);
	struct daemon_stats ds;
	daemon_stop(d, 1000, &ds);

	/* Both the file's quotas and the caller's: refused. */
	struct tree tr = make_tree(2000, 2000, 0, false, false);
	struct daemon_config cfg = fixture_config(&fx);
	cfg.quota = tr.t;
	char err[512];
	assert_null(daemon_start(&cfg, err, sizeof(err)));
	assert_non_null(strstr(err, "expected one source of quotas"));
	quota_tree_free(tr.t);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest race_tests[] = {
		cmocka_unit_test(test_race),
	};
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_admission),
		cmocka_unit_test(test_flavors),
		cmocka_unit_test(test_eviction),
		cmocka_unit_test(test_restart_recount),
		cmocka_unit_test(test_cluster_file_quotas),
		cmocka_unit_test(test_quota_wait),
	};
	return FIXTURE_RUN(argc, argv, tests, race_tests, setup, teardown);
}
