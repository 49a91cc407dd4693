/* unit.daemon_gang_quota and stress.daemon_gang_quota_race: gangs (pod
 * groups) under Kueue's quotas, the real daemon in process, a quota tree
 * built by the quota.h calls, producers through the client library.
 *
 * The oracle is Kueue's admission of a pod group: the group's pods, all
 * labelled with one kueue.x-k8s.io/queue-name, are one Workload "admitted
 * together" (kueue site/content/en/docs/tasks/run/plain_pods.md, "Running
 * a group of Pods to be admitted together";
 * pkg/controller/jobs/pod/pod_controller.go builds it), and a ClusterQueue
 * admits a Workload iff the sum of its requests fits its quota
 * (site/content/en/docs/concepts/cluster_queue.md), or the Workload stays
 * pending; its usage is given back as its pods end.
 *
 * Deterministic cases (unit):
 * - a gang of 4 x 1 cpu fits a queue with 4 cpu free and is placed whole,
 *   the queue's usage 4000m; a gang of 5 x 1 cpu is placed not at all and
 *   charges nothing (usage unchanged, before and after a release wakes it);
 *   each pod's release gives back its own 1000m; a gang that waits for
 *   quota is placed once a release gives enough back; one whose deadline
 *   passes is answered naming the ClusterQueue;
 * - a gang with quota but no nodes gives the charge back, and is placed
 *   and charged once a node comes; with two flavors, each flavor's charge
 *   is given back and its rollbacks' releases do not wake the gang;
 * - a gang naming a LocalQueue that does not exist, or whose pods name
 *   different queues, is answered UNSCHEDULABLE, nothing charged;
 * - a restart charges each placed gang pod again (its own share);
 * - fair sharing (GF1, daemon/wait.c): a gang waiting for quota is one
 *   workload of its ClusterQueue, ordered among the pods waiting in its
 *   cohort tree by the dominant resource share after admitting its whole
 *   request (kueue pkg/scheduler/fair_sharing_iterator.go; a pod group is
 *   one Workload, pkg/controller/jobs/pod/pod_controller.go), counted once
 *   in kueue_pending_workloads (kueue pkg/metrics/metrics.go
 *   PendingWorkloads: one per Workload, status "inadmissible" while it
 *   waits for quota), and placed by a later give-back (no lost wake:
 *   four gangs on four workers, each placed as releases give back room).
 * Racing (stress; argument "race"): four workers, eight producers each
 * placing a gang of 2 and a single pod at once of one ClusterQueue in a cohort and releasing them;
 * a checker samples the queue's usage while they run: it must never read
 * above nominal + borrowingLimit (0 violations), and after quiescence it
 * equals the sum of the live placements' requests; the race is shown by
 * conflicts (the quota's or the ledger's) > 0; every pod answered, no
 * workload counts in kueue_pending_workloads.
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
#include "client/control_client.h"
#include "daemon/daemon.h"
#include "fixture.h"
#include "ingest/ingest.h"
#include "quota/quota.h"
#include "shm/shm.h"
#include "shmsched/client.h"

static struct fixture_dir fx;

struct tree {
	struct quota_tree *t;
	int f, cpu;
	int a, b; /* ClusterQueues team-a, team-b */
};

/* team-a with `a_cpu` millicores (borrowingLimit `a_borrow`, or
 * QUOTA_NO_LIMIT) and team-b with `b_cpu`, one flavor without labels, in
 * cohort "ml" when `cohort`. LocalQueues default/qa -> team-a,
 * default/qb -> team-b. */
static struct tree make_tree(int64_t a_cpu, int64_t a_borrow, int64_t b_cpu,
			     bool cohort)
{
	struct tree tr;
	char err[256];
	assert_int_equal(quota_tree_new(&tr.t), 0);
	tr.f = quota_flavor_add(tr.t, "fa", err, sizeof(err));
	tr.cpu = quota_resource_add(tr.t, "cpu", err, sizeof(err));
	assert_true(tr.f >= 0 && tr.cpu >= 0);
	if (cohort)
		assert_true(quota_cohort_add(tr.t, "ml", NULL, QUOTA_WEIGHT_DEFAULT_MILLI,
					     err, sizeof(err)) >= 0);
	const char *co = cohort ? "ml" : NULL;
	tr.a = quota_cluster_queue_add(tr.t, "team-a", co, QUOTA_WEIGHT_DEFAULT_MILLI,
				       NULL, err, sizeof(err));
	tr.b = quota_cluster_queue_add(tr.t, "team-b", co, QUOTA_WEIGHT_DEFAULT_MILLI,
				       NULL, err, sizeof(err));
	assert_true(tr.a >= 0 && tr.b >= 0);
	assert_int_equal(quota_set(tr.t, tr.a, tr.f, tr.cpu, a_cpu, a_borrow,
				   QUOTA_NO_LIMIT, err, sizeof(err)), 0);
	assert_int_equal(quota_set(tr.t, tr.b, tr.f, tr.cpu, b_cpu, QUOTA_NO_LIMIT,
				   QUOTA_NO_LIMIT, err, sizeof(err)), 0);
	assert_true(quota_local_queue_add(tr.t, "default", "qa", "team-a", err,
					  sizeof(err)) >= 0);
	assert_true(quota_local_queue_add(tr.t, "default", "qb", "team-b", err,
					  sizeof(err)) >= 0);
	if (quota_seal(tr.t, err, sizeof(err)) < 0)
		fail_msg("quota_seal: %s", err);
	return tr;
}

static int64_t usage(const struct tree *tr, int cq)
{
	return quota_usage(tr->t, cq, tr->f, tr->cpu);
}

static int setup(void **state)
{
	(void)state;
	fixture_dir_make(&fx, "gangq", 0);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	fixture_dir_remove(&fx);
	return 0;
}

/* `n` nodes n0.. of `cpu` cores, then PodGroups groups[0..ng) with their
 * minMember mins[]. */
static void write_cluster(unsigned n, int cpu, const char *const *groups,
			  const int *mins, unsigned ng)
{
	char cpu_s[16], extra[2048] = "";
	size_t len = 0;
	snprintf(cpu_s, sizeof(cpu_s), "%d", cpu);
	for (unsigned i = 0; i < ng; i++) {
		len += (size_t)snprintf(extra + len, sizeof(extra) - len,
					"%s{\"kind\":\"PodGroup\",\"apiVersion\":"
					"\"scheduling.x-k8s.io/v1alpha1\",\"metadata\":"
					"{\"name\":\"%s\"},\"spec\":{\"minMember\":%d}}",
					i ? "," : "", groups[i], mins[i]);
		assert_true(len < sizeof(extra));
	}
	fixture_write_cluster(&fx, &(struct fixture_nodes){.count = (int)n,
							    .cpu = cpu_s,
							    .memory = "64Gi"},
			      ng > 0 ? extra : NULL);
}

static struct daemon *start(struct quota_tree *t, unsigned workers,
			    const char *region, bool fresh)
{
	struct daemon_config cfg = fixture_config(&fx);
	cfg.workers = workers;
	cfg.slots = 256;
	cfg.quota = t;
	cfg.state_name = region;
	cfg.fresh = fresh;
	return fixture_start(&cfg);
}

/* A pod of namespace default in pod group `group` (NULL: none) asking
 * `cpu` cores, with the queue label `queue` (NULL: none). */
static uint32_t tmpl(struct shmsched_client *c, const char *group,
		     const char *queue, const char *cpu)
{
	char json[1024], labels[256] = "", sep[2] = "";
	if (group != NULL) {
		snprintf(labels, sizeof(labels), "\"scheduling.x-k8s.io/pod-group\":"
			 "\"%s\"", group);
		sep[0] = ',';
	}
	if (queue != NULL)
		snprintf(labels + strlen(labels), sizeof(labels) - strlen(labels),
			 "%s\"kueue.x-k8s.io/queue-name\":\"%s\"", sep, queue);
	snprintf(json, sizeof(json), "{\"kind\":\"Pod\",\"metadata\":{\"name\":"
		 "\"t\",\"namespace\":\"default\",\"labels\":{%s}},\"spec\":"
		 "{\"containers\":[{\"name\":\"c\",\"resources\":{\"requests\":"
		 "{\"cpu\":\"%s\"}}}]}}", labels, cpu);
	return fixture_template(c, json);
}

static void submit(struct shmsched_client *c, uint32_t tid, uint64_t cookie,
		   uint64_t deadline_ns)
{
	struct shmsched_pod p = {.cookie = cookie, .template_id = tid,
				 .deadline_ns = deadline_ns};
	assert_int_equal(shmsched_submit(c, &p, 1), 1);
}

/* Waits (at most 10 s) until the daemon's gang_failures reads `want`. */
static void await_gang_failures(struct daemon *d, uint64_t want)
{
	struct daemon_stats s;
	uint64_t end = now_ns() + UINT64_C(10) * 1000000000u;
	do {
		daemon_get_stats(d, &s);
		if (s.gang_failures >= want)
			break;
		usleep(500);
	} while (now_ns() < end);
	if (s.gang_failures != want)
		fail_msg("gang_failures %" PRIu64 ", want %" PRIu64, s.gang_failures,
			 want);
}

static void release(struct shmsched_client *c, uint64_t id)
{
	char err[256];
	assert_int_equal(shmsched_release(c, id, err, sizeof(err)), 0);
}

/* The OP_QUEUE_METRICS text's sample of `series` (tests/daemon/
 * test_queue_apply.c's), or -1 when it has none. */
static double metric_of(const char *series)
{
	static char req[CONTROL_MAX_PAYLOAD], resp[CONTROL_MAX_PAYLOAD];
	char err[600];
	int fd = control_client_connect(fx.admin, 5000, err, sizeof(err));
	if (fd < 0)
		fail_msg("admin socket %s: %s", fx.admin, err);
	struct op_request op = {.kind = OP_QUEUE, .arg = OP_QUEUE_METRICS};
	memcpy(req, &op, sizeof(op));
	uint32_t got = 0;
	int rc = control_client_call(fd, req, (uint32_t)sizeof(op), resp,
				     sizeof(resp) - 1, &got, NULL, 20000, err,
				     sizeof(err));
	close(fd);
	if (rc < 0)
		fail_msg("OP_QUEUE_METRICS: %s", err);
	struct op_queue_shown h;
	assert_true(got >= sizeof(h));
	memcpy(&h, resp, sizeof(h));
	resp[got] = '\0';
	const char *text = resp + sizeof(h);
	for (const char *p = text; p != NULL && *p; p = strchr(p, '\n')) {
		if (*p == '\n')
			p++;
		if (strncmp(p, series, strlen(series)) == 0 && p[strlen(series)] == ' ')
			return strtod(p + strlen(series) + 1, NULL);
	}
	return -1;
}

/* kueue_pending_workloads of ClusterQueue `cq` with status `status`. */
static double pending(const char *cq, const char *status)
{
	char series[256];
	snprintf(series, sizeof(series), "kueue_pending_workloads{cluster_queue="
		 "\"%s\",status=\"%s\"}", cq, status);
	return metric_of(series);
}

/* Waits (at most 10 s) until pending(cq, status) reads `want`. */
static void await_pending(const char *cq, const char *status, double want)
{
	double got = pending(cq, status);
	for (int i = 0; i < 1000 && got != want; i++) {
		usleep(10000);
		got = pending(cq, status);
	}
	if (got != want)
		fail_msg("kueue_pending_workloads{%s,%s} %g, want %g", cq, status,
			 got, want);
}

/* Cohort "ml" of team-a and team-b, 2 cpu nominal each and no quota of
 * its own (4 cpu in all), equal weights; a PodGroup `group` of minMember
 * 2. team-a uses 1 cpu, team-b 3 (borrowing 1): full. Templates: a 1-cpu
 * pod of each queue, and a 500m pod of `group` under LocalQueue
 * `gang_queue`. */
struct fair_run {
	struct tree tr;
	struct daemon *d;
	struct shmsched_client *c;
	uint32_t qa, qb, gang;
	uint64_t b_ids[3]; /* team-b's placements */
};

static void fair_start(struct fair_run *f, const char *group,
		       const char *gang_queue)
{
	const char *groups[] = {group};
	const int mins[] = {2};
	write_cluster(1, 32, groups, mins, 1);
	f->tr = make_tree(2000, QUOTA_NO_LIMIT, 2000, true);
	f->d = start(f->tr.t, 1, NULL, false);
	f->c = fixture_connect(fx.sock);
	f->qa = tmpl(f->c, NULL, "qa", "1");
	f->qb = tmpl(f->c, NULL, "qb", "1");
	f->gang = tmpl(f->c, group, gang_queue, "500m");
	fixture_place(f->c, f->qa, 1, SHMSCHED_PLACED);
	for (uint64_t k = 0; k < 3; k++)
		f->b_ids[k] = fixture_place(f->c, f->qb, 2 + k, SHMSCHED_PLACED);
}

/* The gang's two pods (cookies 10 and 11) submitted; refused by quota,
 * it waits as one workload of ClusterQueue `cq`. */
static void fair_gang_waits(struct fair_run *f, const char *cq)
{
	submit(f->c, f->gang, 10, 0);
	submit(f->c, f->gang, 11, 0);
	await_gang_failures(f->d, 1);
	await_pending(cq, "inadmissible", 1);
}

/* The next two answers are the gang's pods, placed. */
static void fair_gang_placed(struct fair_run *f)
{
	struct shmsched_result r[2];
	assert_int_equal(fixture_await(f->c, r, 2, 5000), 2);
	for (int i = 0; i < 2; i++)
		if (r[i].cookie < 10 || r[i].cookie > 11 || r[i].status != SHMSCHED_PLACED)
			fail_msg("answered: cookie %" PRIu64 " status %u (%s), want "
				 "the gang's pods placed", r[i].cookie, r[i].status,
				 r[i].message);
}

static void fair_stop(struct fair_run *f, uint64_t gangs_placed)
{
	struct daemon_stats ds;
	daemon_stop(f->d, 1000, &ds);
	assert_int_equal(ds.gangs_placed, gangs_placed);
	shmsched_disconnect(f->c);
	quota_tree_free(f->tr.t);
}

/* fair_start's cohort, full. A gang of team-b (2 x 500m) waits for quota
 * first; then a 1-cpu pod of team-a. pending_workloads: team-b's gang is
 * one. One cpu of team-b's given back (room for either): admitting
 * team-a's pod leaves team-a at its nominal (share 0), admitting the gang
 * leaves team-b borrowing 1 cpu: team-a's pod is placed, although the
 * gang waited first; the gang waits on (still one pending workload). A
 * second give-back places the gang whole; nothing pending. Old code: the
 * gang, outside the fair-sharing order and tried before the pods at each
 * give-back (QG1's walk), took the cpu (cookies 10, 11 answered first),
 * and pending_workloads did not count it (0). */
static void test_fair_order(void **state)
{
	(void)state;
	struct fair_run f;
	struct shmsched_result r;
	fair_start(&f, "gb", "qb");
	assert_int_equal(usage(&f.tr, f.tr.b), 3000);
	fair_gang_waits(&f, "team-b");
	/* team-a's pod waits too (the gang's two pods are parked). */
	fixture_park_one(f.d, f.c, f.qa, 20, 3);
	await_pending("team-a", "inadmissible", 1);
	assert_true(pending("team-b", "inadmissible") == 1);
	/* One cpu given back: team-a's pod, the lower share after it. */
	release(f.c, f.b_ids[0]);
	assert_int_equal(fixture_await(f.c, &r, 1, 5000), 1);
	if (r.cookie != 20 || r.status != SHMSCHED_PLACED)
		fail_msg("first answered: cookie %" PRIu64 " status %u (%s), want "
			 "team-a's pod 20 placed", r.cookie, r.status, r.message);
	assert_int_equal(fixture_await(f.c, &r, 1, 300), 0);
	assert_int_equal(usage(&f.tr, f.tr.a), 2000);
	assert_int_equal(usage(&f.tr, f.tr.b), 2000);
	await_pending("team-a", "inadmissible", 0);
	await_pending("team-b", "inadmissible", 1);
	/* Another given back: the gang, woken, placed whole. */
	release(f.c, f.b_ids[1]);
	fair_gang_placed(&f);
	assert_int_equal(usage(&f.tr, f.tr.b), 2000);
	await_pending("team-b", "inadmissible", 0);
	assert_true(pending("team-b", "active") == 0);
	fair_stop(&f, 1);
}

/* The other way round (the case): team-b's 1-cpu pod waits
 * first, then a gang of team-a (2 x 500m); one cpu of team-b's given
 * back: the gang leaves team-a at its nominal (share 0), team-b's pod
 * would borrow 1 cpu again: the gang is placed whole, team-b's pod waits
 * on. (The old code placed the gang too: QG1's walk tried gangs first.) */
static void test_fair_gang_first(void **state)
{
	(void)state;
	struct fair_run f;
	struct shmsched_result r;
	fair_start(&f, "ga", "qa");
	fixture_park_one(f.d, f.c, f.qb, 20, 1);
	fair_gang_waits(&f, "team-a");
	await_pending("team-b", "inadmissible", 1);
	release(f.c, f.b_ids[0]);
	fair_gang_placed(&f);
	assert_int_equal(fixture_await(f.c, &r, 1, 300), 0);
	assert_int_equal(usage(&f.tr, f.tr.a), 2000);
	await_pending("team-a", "inadmissible", 0);
	await_pending("team-b", "inadmissible", 1);
	fair_stop(&f, 1);
}

/* No lost wake: four producers (spread on four workers by their ids),
 * each with a gang of 2 x 500m of team-a (4 cpu, no cohort) waiting for
 * quota behind four 1-cpu pods; the four pods released back to back,
 * each giving back room for one gang: every
 * gang is placed whole (a wake lost with room given back leaves a gang
 * parked: no answer within 10 s), team-a at 4000m, nothing pending.
 * (A guard: the old code's walk of the gang table placed them too.) */
static void test_wake_each(void **state)
{
	(void)state;
	const char *groups[] = {"w0", "w1", "w2", "w3"};
	const int mins[] = {2, 2, 2, 2};
	write_cluster(1, 32, groups, mins, 4);
	struct tree tr = make_tree(4000, QUOTA_NO_LIMIT, 1000, false);
	struct daemon *d = start(tr.t, 4, NULL, false);
	struct shmsched_client *c[4];
	uint64_t ids[4];
	struct shmsched_result r[2];
	for (int i = 0; i < 4; i++)
		c[i] = fixture_connect(fx.sock);
	uint32_t one = tmpl(c[0], NULL, "qa", "1");
	for (uint64_t k = 0; k < 4; k++)
		ids[k] = fixture_place(c[0], one, k, SHMSCHED_PLACED);
	for (int i = 0; i < 4; i++) {
		uint32_t g = tmpl(c[i], groups[i], "qa", "500m");
		submit(c[i], g, 10, 0);
		submit(c[i], g, 11, 0);
	}
	await_gang_failures(d, 4);
	await_pending("team-a", "inadmissible", 4);
	for (int k = 0; k < 4; k++)
		release(c[0], ids[k]);
	for (int i = 0; i < 4; i++) {
		if (fixture_await(c[i], r, 2, 10000) != 2)
			fail_msg("gang %s: not placed after the give-backs", groups[i]);
		for (int k = 0; k < 2; k++)
			assert_int_equal(r[k].status, SHMSCHED_PLACED);
	}
	assert_int_equal(usage(&tr, tr.a), 4000);
	await_pending("team-a", "inadmissible", 0);
	await_pending("team-a", "active", 0);
	struct daemon_stats ds;
	daemon_stop(d, 1000, &ds);
	assert_int_equal(ds.gangs_placed, 4);
	for (int i = 0; i < 4; i++)
		shmsched_disconnect(c[i]);
	quota_tree_free(tr.t);
}

/* The brief's case: 4 x 1 cpu placed whole in a queue of 4 cpu, 5 x 1 cpu
 * not at all (nothing charged), releases give back all of it; a gang
 * waiting for quota placed by a release; a deadline names the queue. */
static void test_all_or_nothing(void **state)
{
	(void)state;
	const char *groups[] = {"four", "five", "two", "late"};
	const int mins[] = {4, 5, 2, 2};
	write_cluster(2, 8, groups, mins, 4);
	struct tree tr = make_tree(4000, QUOTA_NO_LIMIT, 1000, false);
	struct daemon *d = start(tr.t, 1, NULL, false);
	struct shmsched_client *c = fixture_connect(fx.sock);
	uint32_t four = tmpl(c, "four", "qa", "1");
	uint32_t five = tmpl(c, "five", "qa", "1");
	uint32_t two = tmpl(c, "two", "qa", "1");
	uint32_t late = tmpl(c, "late", "qa", "3");
	struct shmsched_result r[8];
	uint64_t ids[4];

	/* 5 x 1 cpu in a queue of 4: none placed, nothing charged (the old
	 * daemon refused every pod of it: REJECTED). */
	for (uint64_t k = 0; k < 5; k++)
		submit(c, five, 100 + k, 0);
	await_gang_failures(d, 1);
	assert_int_equal(fixture_await(c, r, 1, 200), 0);
	assert_int_equal(usage(&tr, tr.a), 0);
	assert_int_equal(daemon_pods_on_nodes(d), 0);

	/* 4 x 1 cpu: placed whole, 4000m charged, 1000m in each record. */
	for (uint64_t k = 0; k < 4; k++)
		submit(c, four, k, 0);
	assert_int_equal(fixture_await(c, r, 4, 5000), 4);
	for (int i = 0; i < 4; i++) {
		if (r[i].status != SHMSCHED_PLACED)
			fail_msg("gang pod %d: status %u: %s", i, r[i].status,
				 r[i].message);
		ids[r[i].cookie] = r[i].placement_id;
	}
	assert_int_equal(usage(&tr, tr.a), 4000);
	assert_int_equal(daemon_pods_on_nodes(d), 4);

	/* A release gives back its pod's 1000m; the gang of 5 (its whole
	 * 5000m checked, PW2 with GF1's charge) is not even attempted: it
	 * charges nothing. (Before GF1 it was attempted and refused again.) */
	release(c, ids[0]);
	assert_int_equal(usage(&tr, tr.a), 3000);
	usleep(200 * 1000);
	await_gang_failures(d, 1);
	assert_int_equal(usage(&tr, tr.a), 3000);

	/* A gang of 2 finds 1000m: it waits for quota, charging nothing ... */
	submit(c, two, 10, 0);
	submit(c, two, 11, 0);
	await_gang_failures(d, 2);
	assert_int_equal(fixture_await(c, r, 1, 200), 0);
	assert_int_equal(usage(&tr, tr.a), 3000);
	/* ... until a release gives back enough: then placed whole. The gang
	 * of 5 stays parked (5000m never fits 1000m free). */
	release(c, ids[1]);
	assert_int_equal(fixture_await(c, r, 2, 5000), 2);
	for (int i = 0; i < 2; i++)
		assert_int_equal(r[i].status, SHMSCHED_PLACED);
	uint64_t two_ids[2] = {r[0].placement_id, r[1].placement_id};
	assert_int_equal(usage(&tr, tr.a), 4000);

	/* Every release gives back its own share: nothing left. */
	release(c, ids[2]);
	release(c, ids[3]);
	release(c, two_ids[0]);
	release(c, two_ids[1]);
	assert_int_equal(usage(&tr, tr.a), 0);
	assert_int_equal(daemon_pods_on_nodes(d), 0);
	/* The gang of 5 still waits, charging nothing. */
	assert_int_equal(fixture_await(c, r, 1, 200), 0);
	assert_int_equal(usage(&tr, tr.a), 0);

	/* 2 x 3 cpu never fit 4 cpu: at its deadline each pod is answered
	 * naming the ClusterQueue, as a single pod waiting for quota. */
	uint64_t deadline = now_ns() + UINT64_C(300) * 1000000u;
	submit(c, late, 20, deadline);
	submit(c, late, 21, deadline);
	assert_int_equal(fixture_await(c, r, 2, 5000), 2);
	for (int i = 0; i < 2; i++) {
		assert_int_equal(r[i].status, SHMSCHED_UNSCHEDULABLE);
		print_message("gang deadline: %s\n", r[i].message);
		assert_non_null(strstr(r[i].message, "its deadline passed while its "
				       "pod group default/late waited"));
		assert_non_null(strstr(r[i].message, "waiting for quota: "
				       "ClusterQueue \"team-a\": cpu 0m/4000m of its "
				       "nominal quota in flavor \"fa\" (asks 6000m)"));
	}
	assert_int_equal(usage(&tr, tr.a), 0);
	struct daemon_stats ds;
	daemon_stop(d, 1000, &ds); /* the gang of 5: cancelled */
	assert_int_equal(ds.gangs_placed, 2);
	assert_int_equal(usage(&tr, tr.a), 0);
	shmsched_disconnect(c);
	quota_tree_free(tr.t);
}

/* Quota for the gang but no nodes: the charge is given back; a node added
 * places it, charged. */
static void test_no_nodes_gives_back(void **state)
{
	(void)state;
	const char *groups[] = {"big"};
	const int mins[] = {3};
	write_cluster(2, 4, groups, mins, 1);
	struct tree tr = make_tree(1000, QUOTA_NO_LIMIT, 100000, false);
	struct daemon *d = start(tr.t, 1, NULL, false);
	struct shmsched_client *c = fixture_connect(fx.sock);
	struct shmsched_client *a = fixture_connect(fx.admin);
	uint32_t big = tmpl(c, "big", "qb", "3");
	struct shmsched_result r[4];
	for (uint64_t k = 0; k < 3; k++)
		submit(c, big, k, 0);
	await_gang_failures(d, 1);
	assert_int_equal(usage(&tr, tr.b), 0);
	assert_int_equal(daemon_pods_on_nodes(d), 0);
	char node[256], err[512];
	snprintf(node, sizeof(node), "{\"kind\":\"Node\",\"metadata\":{\"name\":"
		 "\"n9\"},\"status\":{\"allocatable\":{\"cpu\":\"4\",\"memory\":"
		 "\"64Gi\",\"pods\":\"110\"}}}");
	assert_int_equal(shmsched_node_event(a, SHMSCHED_NODE_ADD, node, strlen(node),
					     err, sizeof(err)), 0);
	assert_int_equal(fixture_await(c, r, 3, 5000), 3);
	for (int i = 0; i < 3; i++)
		assert_int_equal(r[i].status, SHMSCHED_PLACED);
	assert_int_equal(usage(&tr, tr.b), 9000);
	for (int i = 0; i < 3; i++)
		release(c, r[i].placement_id);
	assert_int_equal(usage(&tr, tr.b), 0);
	struct daemon_stats ds;
	daemon_stop(d, 1000, &ds);
	shmsched_disconnect(c);
	shmsched_disconnect(a);
	quota_tree_free(tr.t);
}

/* Two flavors with nodeLabels (pool a, pool b), a gang that finds its
 * nodes in neither: each flavor's charge is given back, and the releases
 * its two rollbacks publish do not wake it (it would try again at every
 * poll); a node of pool b places it there, charged to flavor fb. */
static void test_flavors_rollback(void **state)
{
	(void)state;
	fixture_write_file(fx.cluster,
			   "{\"kind\":\"List\",\"items\":["
			   "{\"kind\":\"Node\",\"metadata\":{\"name\":\"na\","
			   "\"labels\":{\"pool\":\"a\"}},\"status\":{\"allocatable\":"
			   "{\"cpu\":\"4\",\"memory\":\"64Gi\",\"pods\":\"110\"}}},"
			   "{\"kind\":\"Node\",\"metadata\":{\"name\":\"nb\","
			   "\"labels\":{\"pool\":\"b\"}},\"status\":{\"allocatable\":"
			   "{\"cpu\":\"4\",\"memory\":\"64Gi\",\"pods\":\"110\"}}},"
			   "{\"kind\":\"PodGroup\",\"metadata\":{\"name\":\"pair\"},"
			   "\"spec\":{\"minMember\":2}}]}");
	struct quota_tree *t;
	char err[256];
	assert_int_equal(quota_tree_new(&t), 0);
	int fa = quota_flavor_add(t, "fa", err, sizeof(err));
	int fb = quota_flavor_add(t, "fb", err, sizeof(err));
	assert_int_equal(quota_flavor_label_add(t, fa, "pool", "a", err, sizeof(err)), 0);
	assert_int_equal(quota_flavor_label_add(t, fb, "pool", "b", err, sizeof(err)), 0);
	int cpu = quota_resource_add(t, "cpu", err, sizeof(err));
	int a = quota_cluster_queue_add(t, "team-a", NULL, QUOTA_WEIGHT_DEFAULT_MILLI,
					NULL, err, sizeof(err));
	assert_true(fa >= 0 && fb >= 0 && cpu >= 0 && a >= 0);
	for (int fl = 0; fl < 2; fl++)
		assert_int_equal(quota_set(t, a, fl ? fb : fa, cpu, 100000, QUOTA_NO_LIMIT,
					   QUOTA_NO_LIMIT, err, sizeof(err)), 0);
	assert_true(quota_local_queue_add(t, "default", "qa", "team-a", err,
					  sizeof(err)) >= 0);
	if (quota_seal(t, err, sizeof(err)) < 0)
		fail_msg("quota_seal: %s", err);
	struct daemon *d = start(t, 1, NULL, false);
	struct shmsched_client *c = fixture_connect(fx.sock);
	struct shmsched_client *adm = fixture_connect(fx.admin);
	uint32_t pair = tmpl(c, "pair", "qa", "3");
	struct shmsched_result r[2];
	submit(c, pair, 1, 0);
	submit(c, pair, 2, 0);
	await_gang_failures(d, 1);
	/* Its own rollbacks (one per flavor) must not wake it. */
	usleep(300 * 1000);
	struct daemon_stats ds;
	daemon_get_stats(d, &ds);
	assert_int_equal(ds.gang_failures, 1);
	assert_int_equal(quota_usage(t, a, fa, cpu), 0);
	assert_int_equal(quota_usage(t, a, fb, cpu), 0);
	char node[256];
	snprintf(node, sizeof(node), "{\"kind\":\"Node\",\"metadata\":{\"name\":"
		 "\"nc\",\"labels\":{\"pool\":\"b\"}},\"status\":{\"allocatable\":"
		 "{\"cpu\":\"4\",\"memory\":\"64Gi\",\"pods\":\"110\"}}}");
	assert_int_equal(shmsched_node_event(adm, SHMSCHED_NODE_ADD, node, strlen(node),
					     err, sizeof(err)), 0);
	assert_int_equal(fixture_await(c, r, 2, 5000), 2);
	for (int i = 0; i < 2; i++)
		assert_int_equal(r[i].status, SHMSCHED_PLACED);
	assert_int_equal(quota_usage(t, a, fa, cpu), 0);
	assert_int_equal(quota_usage(t, a, fb, cpu), 6000);
	daemon_stop(d, 1000, &ds);
	shmsched_disconnect(c);
	shmsched_disconnect(adm);
	quota_tree_free(t);
}

/* Refused for good, as a single pod is: a LocalQueue that does not exist;
 * pods of one group naming different queues (or one none). */
static void test_refused(void **state)
{
	(void)state;
	const char *groups[] = {"nope", "mix"};
	const int mins[] = {2, 2};
	write_cluster(1, 8, groups, mins, 2);
	struct tree tr = make_tree(4000, QUOTA_NO_LIMIT, 4000, false);
	struct daemon *d = start(tr.t, 1, NULL, false);
	struct shmsched_client *c = fixture_connect(fx.sock);
	uint32_t nope = tmpl(c, "nope", "missing", "1");
	uint32_t mix_a = tmpl(c, "mix", "qa", "1");
	uint32_t mix_none = tmpl(c, "mix", NULL, "1");
	struct shmsched_result r[2];
	submit(c, nope, 1, 0);
	submit(c, nope, 2, 0);
	assert_int_equal(fixture_await(c, r, 2, 5000), 2);
	for (int i = 0; i < 2; i++) {
		assert_int_equal(r[i].status, SHMSCHED_UNSCHEDULABLE);
		assert_non_null(strstr(r[i].message, "LocalQueue default/missing "
				       "doesn't exist"));
	}
	submit(c, mix_a, 3, 0);
	submit(c, mix_none, 4, 0);
	assert_int_equal(fixture_await(c, r, 2, 5000), 2);
	for (int i = 0; i < 2; i++) {
		assert_int_equal(r[i].status, SHMSCHED_UNSCHEDULABLE);
		print_message("mixed queues: %s\n", r[i].message);
		assert_non_null(strstr(r[i].message, "name different LocalQueues"));
	}
	assert_int_equal(usage(&tr, tr.a), 0);
	assert_int_equal(daemon_pods_on_nodes(d), 0);
	struct daemon_stats ds;
	daemon_stop(d, 1000, &ds);
	shmsched_disconnect(c);
	quota_tree_free(tr.t);
}

/* A restart recounts each gang pod's own share from its record (QA1). */
static void test_restart_recount(void **state)
{
	(void)state;
	const char *groups[] = {"four"};
	const int mins[] = {4};
	write_cluster(2, 8, groups, mins, 1);
	char region[64], err[512];
	snprintf(region, sizeof(region), "shmsched-gangq-%d", (int)getpid());
	struct tree tr = make_tree(4000, QUOTA_NO_LIMIT, 0, false);
	struct daemon *d = start(tr.t, 1, region, true);
	struct shmsched_client *c = fixture_connect(fx.sock);
	uint32_t four = tmpl(c, "four", "qa", "500m");
	struct shmsched_result r[4];
	for (uint64_t k = 0; k < 4; k++)
		submit(c, four, k, 0);
	assert_int_equal(fixture_await(c, r, 4, 5000), 4);
	assert_int_equal(usage(&tr, tr.a), 2000);
	shmsched_disconnect(c);
	struct daemon_stats ds;
	daemon_stop(d, 1000, &ds);
	quota_tree_free(tr.t);

	struct tree again = make_tree(4000, QUOTA_NO_LIMIT, 0, false);
	d = start(again.t, 1, region, false);
	assert_int_equal(usage(&again, again.a), 2000);
	daemon_stop(d, 1000, &ds);
	quota_tree_free(again.t);
	assert_int_equal(state_remove(region, err, sizeof(err)), 0);
}

/* --- racing ------------------------------------------------------------ */

#define RACE_PRODUCERS 8
#define RACE_LIVE 16 /* placements a producer holds at most */
#define RACE_NOMINAL 3000
#define RACE_BORROW 2000

struct racer {
	struct shmsched_client *c;
	uint32_t gang, single; /* 2 x 500m in its own pod group; 1 x 1 cpu */
	uint64_t seed;
	int64_t end_ns;
	int single_cq; /* the single pod's ClusterQueue: 0 team-a, 1 team-b */
	uint64_t id[RACE_LIVE];
	int64_t held[RACE_LIVE];
	int which[RACE_LIVE]; /* 0 team-a, 1 team-b */
	unsigned n;
	uint64_t gangs, singles, refused;
	const char *failed;
};

struct checker {
	const struct tree *tr;
	bool stop; /* __atomic, relaxed: a flag, ordering nothing */
	uint64_t samples, over;
};

static uint64_t next_rand(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

#define RACE_GANG_BIT (UINT64_C(1) << 62) /* a gang pod's cookie */

/* Each round a gang of 2 of team-a (a deadline of 2 ms: refused by quota
 * it waits that long) and a single pod (of team-a, or of team-b for odd
 * producers: their charges meet in the cohort) at once; releases at
 * random. */
static void *race(void *arg)
{
	struct racer *rc = arg;
	char err[256];
	uint64_t cookie = 1;
	struct shmsched_result r[3];
	while ((int64_t)now_ns() < rc->end_ns && rc->failed == NULL) {
		if (rc->n + 3 > RACE_LIVE ||
		    (rc->n > 0 && next_rand(&rc->seed) % 3 == 0)) {
			unsigned k = (unsigned)(next_rand(&rc->seed) % rc->n);
			if (shmsched_release(rc->c, rc->id[k], err, sizeof(err)) < 0) {
				rc->failed = "release";
				break;
			}
			rc->id[k] = rc->id[rc->n - 1];
			rc->held[k] = rc->held[rc->n - 1];
			rc->which[k] = rc->which[rc->n - 1];
			rc->n--;
			continue;
		}
		uint64_t deadline = now_ns() + UINT64_C(2) * 1000000u;
		/* The cookies first: an initializer list's side effects are
		 * unsequenced (C11 6.7.9p23). */
		uint64_t c0 = cookie, c1 = cookie + 1, c2 = cookie + 2;
		cookie += 3;
		struct shmsched_pod p[3] = {
			{.cookie = c0 | RACE_GANG_BIT, .template_id = rc->gang,
			 .deadline_ns = deadline},
			{.cookie = c1, .template_id = rc->single},
			{.cookie = c2 | RACE_GANG_BIT, .template_id = rc->gang,
			 .deadline_ns = deadline}};
		if (shmsched_submit(rc->c, p, 3) != 3) {
			rc->failed = "submit";
			break;
		}
		if (fixture_await(rc->c, r, 3, 10000) != 3) {
			rc->failed = "no answer";
			break;
		}
		unsigned gang_placed = 0;
		for (unsigned i = 0; i < 3; i++) {
			bool gang = (r[i].cookie & RACE_GANG_BIT) != 0;
			if (r[i].status != SHMSCHED_PLACED) {
				rc->refused++;
				continue;
			}
			rc->id[rc->n] = r[i].placement_id;
			rc->which[rc->n] = gang ? 0 : rc->single_cq;
			rc->held[rc->n++] = gang ? 500 : 1000;
			gang_placed += gang;
			rc->singles += !gang;
		}
		if (gang_placed == 1) {
			rc->failed = "part of a gang placed";
			break;
		}
		rc->gangs += gang_placed == 2;
	}
	return NULL;
}

/* Samples team-a's usage while the producers run: never above nominal +
 * borrowingLimit (a charge in flight counts: it is admitted). */
static void *check(void *arg)
{
	struct checker *ck = arg;
	while (!__atomic_load_n(&ck->stop, __ATOMIC_RELAXED)) {
		int64_t u = usage(ck->tr, ck->tr->a);
		ck->samples++;
		ck->over += u > RACE_NOMINAL + RACE_BORROW;
		usleep(100);
	}
	return NULL;
}

static void test_race(void **state)
{
	(void)state;
	static const char *groups[RACE_PRODUCERS] = {"g0", "g1", "g2", "g3",
						     "g4", "g5", "g6", "g7"};
	const int mins[RACE_PRODUCERS] = {2, 2, 2, 2, 2, 2, 2, 2};
	/* One small node, so that commits collide on the ledger too. */
	write_cluster(1, 6, groups, mins, RACE_PRODUCERS);
	/* team-a: 3 cpu, borrowing at most 2 of team-b's 4. */
	struct tree tr = make_tree(RACE_NOMINAL, RACE_BORROW, 4000, true);
	struct daemon *d = start(tr.t, 4, NULL, false);
	struct racer rc[RACE_PRODUCERS];
	pthread_t th[RACE_PRODUCERS], ckt;
	struct checker ck = {.tr = &tr};
	uint64_t violations = 0, rounds = 0, conflicts = 0, gangs = 0, singles = 0;
	struct daemon_stats ds;
	memset(rc, 0, sizeof(rc));
	for (int i = 0; i < RACE_PRODUCERS; i++) {
		rc[i].c = fixture_connect(fx.sock);
		rc[i].gang = tmpl(rc[i].c, groups[i], "qa", "500m");
		rc[i].single_cq = i % 2;
		rc[i].single = tmpl(rc[i].c, NULL, i % 2 ? "qb" : "qa", "1");
		rc[i].seed = 0x9e3779b97f4a7c15u * (uint64_t)(i + 1);
	}
	assert_int_equal(pthread_create(&ckt, NULL, check, &ck), 0);
	/* Rounds of a second until a race was seen (at most 30: on 2 loaded
	 * cores workers seldom run at the same instant). */
	do {
		int64_t end = (int64_t)now_ns() + 1000000000;
		for (int i = 0; i < RACE_PRODUCERS; i++) {
			rc[i].end_ns = end;
			assert_int_equal(pthread_create(&th[i], NULL, race, &rc[i]), 0);
		}
		for (int i = 0; i < RACE_PRODUCERS; i++) {
			pthread_join(th[i], NULL);
			if (rc[i].failed != NULL)
				fail_msg("producer %d: %s", i, rc[i].failed);
		}
		/* Quiescent: usage is the sum of the live placements' requests. */
		int64_t want[2] = {0, 0};
		for (int i = 0; i < RACE_PRODUCERS; i++)
			for (unsigned k = 0; k < rc[i].n; k++)
				want[rc[i].which[k]] += rc[i].held[k];
		if (usage(&tr, tr.a) != want[0] || usage(&tr, tr.b) != want[1]) {
			violations++;
			print_message("round %" PRIu64 ": team-a %" PRId64 ", its "
				      "placements %" PRId64 "; team-b %" PRId64 ", its "
				      "placements %" PRId64 "\n", rounds,
				      usage(&tr, tr.a), want[0], usage(&tr, tr.b),
				      want[1]);
		}
		daemon_get_stats(d, &ds);
		conflicts = quota_conflicts(tr.t) + ds.conflicts;
		rounds++;
	} while (conflicts == 0 && rounds < 30);
	__atomic_store_n(&ck.stop, true, __ATOMIC_RELAXED);
	pthread_join(ckt, NULL);
	for (int i = 0; i < RACE_PRODUCERS; i++) {
		gangs += rc[i].gangs;
		singles += rc[i].singles;
		char err[256];
		for (unsigned k = 0; k < rc[i].n; k++)
			assert_int_equal(shmsched_release(rc[i].c, rc[i].id[k], err,
							  sizeof(err)), 0);
		shmsched_disconnect(rc[i].c);
	}
	print_message("%" PRIu64 " round(s): %" PRIu64 " gangs and %" PRIu64
		      " singles placed, %" PRIu64 " samples, %" PRIu64 " over the "
		      "limit, %" PRIu64 " violation(s), %" PRIu64 " conflict(s)\n",
		      rounds, gangs, singles, ck.samples, ck.over, violations,
		      conflicts);
	assert_int_equal(ck.over, 0);
	assert_int_equal(violations, 0);
	assert_true(conflicts > 0);
	assert_true(gangs > 0 && singles > 0);
	assert_int_equal(usage(&tr, tr.a), 0);
	assert_int_equal(usage(&tr, tr.b), 0);
	assert_int_equal(daemon_overcommits(d), 0);
	/* Every pod answered: no workload counts pending (GF1's joins and
	 * GF2's hand-overs each given back as taken). */
	await_pending("team-a", "inadmissible", 0);
	await_pending("team-a", "active", 0);
	await_pending("team-b", "inadmissible", 0);
	await_pending("team-b", "active", 0);
	daemon_stop(d, 1000, &ds);
	quota_tree_free(tr.t);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest race_tests[] = {
		cmocka_unit_test(test_race),
	};
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_all_or_nothing),
		cmocka_unit_test(test_no_nodes_gives_back),
		cmocka_unit_test(test_flavors_rollback),
		cmocka_unit_test(test_refused),
		cmocka_unit_test(test_restart_recount),
		cmocka_unit_test(test_fair_order),
		cmocka_unit_test(test_fair_gang_first),
		cmocka_unit_test(test_wake_each),
	};
	return FIXTURE_RUN(argc, argv, tests, race_tests, setup, teardown);
}
