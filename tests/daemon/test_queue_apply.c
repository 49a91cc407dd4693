/* unit.daemon_queue_apply and stress.daemon_queue_apply_race: Kueue's
 * objects changed while the daemon runs (OP_QUEUE through the admin
 * socket, as `shmsched queue` sends it; ingest/producers_queue.c,
 * daemon/quota_charge.c's qc_replace). The daemon starts with its cluster
 * file's Kueue objects (one flavor, ClusterQueue team-a, LocalQueue
 * default/qa); usage is read from the answer's list.
 *
 * Kueue's behaviour the cases follow:
 * - a quota raised admits more at once; a quota cut below usage is
 *   accepted, admitted workloads stay and new ones wait until usage is
 *   under it (kubernetes-sigs/kueue issue #5176: "When cluster queue
 *   quota is adjusted down, the already admitted job/pod will stay
 *   admitted", usage past the quota);
 * - a ClusterQueue a LocalQueue names is not deleted here (shmsched's
 *   choice: its tree has no inactive LocalQueue), and a deleted one's
 *   placements stay placed, charged to nothing (Kueue keeps admitted
 *   workloads: its finalizer kueue.x-k8s.io/resource-in-use holds the
 *   deletion while they run, kueue site/content/en/docs/tasks/
 *   troubleshooting/troubleshooting_delete_clusterqueue.md).
 *
 * Deterministic (unit): raise, cut, add a queue, the refusals (a delete
 * still named, a bad object with its file:line, unknown object), a delete
 * with placements charged to nothing, nothing changed by a refusal. Old
 * code: OP_QUEUE did not exist ("request kind 13: expected 1..12").
 * Racing (stress, argument "race"; run it under TSan too): producers place
 * and release under team-a (fixed quota) and team-b (quota switched
 * between 3 and 6 cpu by a thread applying in a loop); at each quiescent
 * point every queue's usage equals its live placements' sum and team-a's
 * never passes its quota; after all releases every counter is 0.
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
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "base/base.h"
#include "client/control_client.h"
#include "daemon/daemon.h"
#include "fixture.h"
#include "ingest/ingest.h"
#include "shmsched/client.h"

static struct fixture_dir fx;

#define RF "{\"apiVersion\":\"kueue.x-k8s.io/v1beta2\",\"kind\":\"ResourceFlavor\"," \
	   "\"metadata\":{\"name\":\"default-flavor\"}}"
#define LQ(name, cq)                                                            \
	"{\"apiVersion\":\"kueue.x-k8s.io/v1beta2\",\"kind\":\"LocalQueue\","    \
	"\"metadata\":{\"name\":\"" name "\",\"namespace\":\"default\"},"        \
	"\"spec\":{\"clusterQueue\":\"" cq "\"}}"

/* A ClusterQueue `name` with `cpu` of default-flavor. */
static void cq_json(char *buf, size_t len, const char *name, const char *cpu)
{
	snprintf(buf, len, "{\"apiVersion\":\"kueue.x-k8s.io/v1beta2\",\"kind\":"
		 "\"ClusterQueue\",\"metadata\":{\"name\":\"%s\"},\"spec\":"
		 "{\"resourceGroups\":[{\"coveredResources\":[\"cpu\"],\"flavors\":"
		 "[{\"name\":\"default-flavor\",\"resources\":[{\"name\":\"cpu\","
		 "\"nominalQuota\":\"%s\"}]}]}]}}", name, cpu);
}

static int setup(void **state)
{
	(void)state;
	fixture_dir_make(&fx, "queue", 0);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	fixture_dir_remove(&fx);
	return 0;
}

/* One node of 64 cpus; RF, ClusterQueue team-a (`a_cpu`), LocalQueue qa
 * (a_cpu NULL: no Kueue object). */
static void write_cluster(const char *a_cpu)
{
	char cq[512], kueue[1536] = "";
	if (a_cpu != NULL) {
		cq_json(cq, sizeof(cq), "team-a", a_cpu);
		snprintf(kueue, sizeof(kueue), "%s,%s,%s", RF, cq, LQ("qa", "team-a"));
	}
	fixture_write_cluster(&fx, &(struct fixture_nodes){.count = 1, .cpu = "64",
							    .memory = "64Gi",
							    .pods = "250"},
			      a_cpu != NULL ? kueue : NULL);
}

static struct daemon *start(unsigned workers)
{
	struct daemon_config cfg = fixture_config(&fx);
	cfg.workers = workers;
	cfg.slots = 256;
	return fixture_start(&cfg);
}

/* One OP_QUEUE on the admin socket: 0 and the answer's text in out, or
 * the daemon's -errno and its message in out. */
static int queue_op(uint32_t action, const void *body, size_t len, char *out,
		    size_t out_len)
{
	static char req[CONTROL_MAX_PAYLOAD], resp[CONTROL_MAX_PAYLOAD];
	char err[600];
	int fd = control_client_connect(fx.admin, 5000, err, sizeof(err));
	if (fd < 0)
		fail_msg("admin socket %s: %s", fx.admin, err);
	struct op_request op = {.kind = OP_QUEUE, .arg = action};
	memcpy(req, &op, sizeof(op));
	if (len > 0)
		memcpy(req + sizeof(op), body, len);
	uint32_t got = 0;
	int rc = control_client_call(fd, req, (uint32_t)(sizeof(op) + len), resp,
				     sizeof(resp), &got, NULL, 20000, err, sizeof(err));
	close(fd);
	if (rc < 0) {
		snprintf(out, out_len, "%s", err);
		return rc;
	}
	struct op_queue_shown h;
	assert_true(got >= sizeof(h));
	memcpy(&h, resp, sizeof(h));
	assert_int_equal(h.text_bytes, got - sizeof(h));
	snprintf(out, out_len, "%.*s", (int)h.text_bytes, resp + sizeof(h));
	return 0;
}

static int apply(const char *source, const char *objects, char *out, size_t out_len)
{
	static char body[CONTROL_MAX_PAYLOAD];
	struct op_queue_apply h = {.source_len = (uint32_t)strlen(source)};
	memcpy(body, &h, sizeof(h));
	memcpy(body + sizeof(h), source, strlen(source));
	memcpy(body + sizeof(h) + strlen(source), objects, strlen(objects));
	return queue_op(OP_QUEUE_APPLY, body, sizeof(h) + strlen(source) +
			strlen(objects), out, out_len);
}

static int del(const char *kind, const char *name, char *out, size_t out_len)
{
	struct op_queue_delete d = {0};
	snprintf(d.kind, sizeof(d.kind), "%s", kind);
	snprintf(d.name, sizeof(d.name), "%s", name);
	return queue_op(OP_QUEUE_DELETE, &d, sizeof(d), out, out_len);
}

/* ClusterQueue `cq`'s cpu usage and nominal quota in millicores, read
 * from a list; -1 when the list has no such queue. */
static int64_t usage_in(const char *text, const char *cq, int64_t *nominal)
{
	char head[128];
	snprintf(head, sizeof(head), "ClusterQueue %s\n", cq);
	const char *at = strstr(text, head);
	if (at == NULL) {
		snprintf(head, sizeof(head), "ClusterQueue %s ", cq);
		at = strstr(text, head);
	}
	if (at == NULL)
		return -1;
	at = strstr(at, "usage ");
	assert_non_null(at);
	int64_t u = strtoll(at + 6, NULL, 10);
	at = strstr(at, "nominal ");
	assert_non_null(at);
	if (nominal != NULL)
		*nominal = strtoll(at + 8, NULL, 10);
	return u;
}

static int64_t usage_of(const char *cq, int64_t *nominal)
{
	static char text[CONTROL_MAX_PAYLOAD];
	assert_int_equal(queue_op(OP_QUEUE_LIST, NULL, 0, text, sizeof(text)), 0);
	return usage_in(text, cq, nominal);
}

static void release(struct shmsched_client *c, uint64_t id)
{
	char err[256];
	if (shmsched_release(c, id, err, sizeof(err)) < 0)
		fail_msg("release: %s", err);
}

static void test_apply_delete(void **state)
{
	(void)state;
	static char out[CONTROL_MAX_PAYLOAD], before[CONTROL_MAX_PAYLOAD];
	char cq[512];
	write_cluster("2");
	struct daemon *d = start(2);
	struct shmsched_client *c = fixture_connect(fx.sock);
	uint32_t qa = fixture_cpu_template(c, "qa", "1");
	uint64_t id[8];
	id[0] = fixture_place(c, qa, 1, SHMSCHED_PLACED);
	id[1] = fixture_place(c, qa, 2, SHMSCHED_PLACED);
	fixture_place(c, qa, 3, SHMSCHED_UNSCHEDULABLE);
	int64_t nominal;
	assert_int_equal(usage_of("team-a", &nominal), 2000);
	assert_int_equal(nominal, 2000);

	/* Raised: the two live placements carried, two more admitted. */
	cq_json(cq, sizeof(cq), "team-a", "4");
	int rc = apply("raise.json", cq, out, sizeof(out));
	if (rc < 0)
		fail_msg("apply: %s", out);
	print_message("raise: %s", out);
	assert_non_null(strstr(out, "2 live placement(s) charged again"));
	assert_int_equal(usage_of("team-a", &nominal), 2000);
	assert_int_equal(nominal, 4000);
	id[2] = fixture_place(c, qa, 4, SHMSCHED_PLACED);
	id[3] = fixture_place(c, qa, 5, SHMSCHED_PLACED);
	fixture_place(c, qa, 6, SHMSCHED_UNSCHEDULABLE);

	/* Cut below usage: accepted, usage kept above it, new pods wait. */
	cq_json(cq, sizeof(cq), "team-a", "1");
	assert_int_equal(apply("cut.json", cq, out, sizeof(out)), 0);
	print_message("cut: %s", out);
	assert_non_null(strstr(out, "over its quota"));
	assert_int_equal(usage_of("team-a", &nominal), 4000);
	assert_int_equal(nominal, 1000);
	fixture_place(c, qa, 7, SHMSCHED_UNSCHEDULABLE);
	release(c, id[0]);
	release(c, id[1]);
	release(c, id[2]);
	assert_int_equal(usage_of("team-a", NULL), 1000);
	fixture_place(c, qa, 8, SHMSCHED_UNSCHEDULABLE); /* 1000 + 1000 > 1000 */
	release(c, id[3]);
	assert_int_equal(usage_of("team-a", NULL), 0);
	id[0] = fixture_place(c, qa, 9, SHMSCHED_PLACED);

	/* A new ClusterQueue and its LocalQueue, applied as a List. */
	char list[1536];
	cq_json(cq, sizeof(cq), "team-b", "3");
	snprintf(list, sizeof(list), "{\"kind\":\"List\",\"items\":[%s,\n%s]}\n", cq,
		 LQ("qb", "team-b"));
	assert_int_equal(apply("add.json", list, out, sizeof(out)), 0);
	uint32_t qb = fixture_cpu_template(c, "qb", "1");
	id[1] = fixture_place(c, qb, 10, SHMSCHED_PLACED);
	assert_int_equal(usage_of("team-b", NULL), 1000);
	assert_int_equal(usage_of("team-a", NULL), 1000);

	/* Refusals change nothing. */
	assert_int_equal(queue_op(OP_QUEUE_LIST, NULL, 0, before, sizeof(before)), 0);
	rc = del("ClusterQueue", "team-b", out, sizeof(out));
	print_message("delete named (%d): %s\n", rc, out);
	assert_true(rc < 0);
	assert_non_null(strstr(out, "LocalQueue default/qb"));
	cq_json(cq, sizeof(cq), "team-b", "-3");
	snprintf(list, sizeof(list), "\n\n%s\n", cq);
	rc = apply("bad.json", list, out, sizeof(out));
	print_message("bad: %s\n", out);
	assert_true(rc < 0);
	assert_non_null(strstr(out, "bad.json:3:"));
	rc = del("ClusterQueue", "team-z", out, sizeof(out));
	assert_int_equal(rc, -ENOENT);
	assert_non_null(strstr(out, "no such object"));
	rc = apply("pod.json", "{\"apiVersion\":\"v1\",\"kind\":\"Pod\"}", out,
		   sizeof(out));
	assert_true(rc < 0);
	assert_int_equal(queue_op(OP_QUEUE_LIST, NULL, 0, out, sizeof(out)), 0);
	assert_string_equal(out, before);

	/* Deleted with a live placement: it stays, charged to nothing. */
	assert_int_equal(del("LocalQueue", "default/qb", out, sizeof(out)), 0);
	assert_int_equal(del("ClusterQueue", "team-b", out, sizeof(out)), 0);
	print_message("delete: %s", out);
	assert_non_null(strstr(out, "1 stay placed charged to nothing"));
	assert_int_equal(usage_of("team-b", NULL), -1);
	assert_int_equal(usage_of("team-a", NULL), 1000);
	release(c, id[1]); /* gives back to nothing, and nothing breaks */
	release(c, id[0]);
	assert_int_equal(usage_of("team-a", NULL), 0);
	/* A pod of the deleted LocalQueue: refused by name. */
	fixture_place(c, qb, 11, SHMSCHED_UNSCHEDULABLE);
	assert_int_equal(daemon_overcommits(d), 0);
	shmsched_disconnect(c);
	struct daemon_stats ds;
	daemon_stop(d, 1000, &ds);
}

/* Bounded input: every malformed OP_QUEUE body is refused by name, the
 * producer socket may not change queues, and a daemon without Kueue
 * objects has none to change. */
/* A pod waiting for quota (daemon/wait.c, QW1) when an apply raises its
 * ClusterQueue's quota: the new tree is another tree, whose generations
 * no release of the old one moves, so only the swap can wake it (QW5:
 * Kueue requeues pending workloads when a ClusterQueue changes,
 * pkg/controller/core/clusterqueue_controller.go's Update handler).
 * Without QW5 it waits until its deadline (20 s) and the test's 5 s
 * await fails. */
static void test_apply_wakes_waiting(void **state)
{
	(void)state;
	static char out[CONTROL_MAX_PAYLOAD];
	char cq[512];
	write_cluster("2");
	struct daemon *d = start(1);
	struct shmsched_client *c = fixture_connect(fx.sock);
	uint32_t qa = fixture_cpu_template(c, "qa", "1");
	uint64_t id[3];
	id[0] = fixture_place(c, qa, 1, SHMSCHED_PLACED);
	id[1] = fixture_place(c, qa, 2, SHMSCHED_PLACED);
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	uint64_t now = (uint64_t)ts.tv_sec * UINT64_C(1000000000) + (uint64_t)ts.tv_nsec;
	struct shmsched_pod p = {.cookie = 3, .template_id = qa, .flags = SHMSCHED_WAIT,
				 .deadline_ns = now + UINT64_C(20000000000)};
	assert_int_equal(shmsched_submit(c, &p, 1), 1);
	struct shmsched_result r;
	assert_int_equal(fixture_await(c, &r, 1, 300), 0); /* it waits */
	struct daemon_stats ds;
	daemon_get_stats(d, &ds);
	assert_int_equal(ds.pending_unschedulable, 1);

	cq_json(cq, sizeof(cq), "team-a", "3");
	if (apply("raise.json", cq, out, sizeof(out)) < 0)
		fail_msg("apply: %s", out);
	assert_int_equal(fixture_await(c, &r, 1, 5000), 1);
	assert_int_equal(r.status, SHMSCHED_PLACED);
	assert_int_equal(r.cookie, 3);
	id[2] = r.placement_id;
	int64_t nominal;
	assert_int_equal(usage_of("team-a", &nominal), 3000);
	assert_int_equal(nominal, 3000);
	for (int i = 0; i < 3; i++)
		release(c, id[i]);
	assert_int_equal(daemon_overcommits(d), 0);
	shmsched_disconnect(c);
	daemon_stop(d, 1000, &ds);
}

static void test_malformed(void **state)
{
	(void)state;
	static char out[CONTROL_MAX_PAYLOAD];
	write_cluster("2");
	struct daemon *d = start(1);
	char body[64] = {0};
	struct op_queue_apply h = {.source_len = OP_QUEUE_SOURCE_MAX + 1};
	assert_int_equal(queue_op(OP_QUEUE_APPLY, body, 4, out, sizeof(out)), -EPROTO);
	memcpy(body, &h, sizeof(h));
	assert_int_equal(queue_op(OP_QUEUE_APPLY, body, sizeof(body), out,
				  sizeof(out)), -EPROTO);
	assert_non_null(strstr(out, "source_len"));
	h = (struct op_queue_apply){.source_len = 60}; /* past the body */
	memcpy(body, &h, sizeof(h));
	assert_int_equal(queue_op(OP_QUEUE_APPLY, body, sizeof(body), out,
				  sizeof(out)), -EPROTO);
	h = (struct op_queue_apply){.reserved = 1};
	memcpy(body, &h, sizeof(h));
	assert_int_equal(queue_op(OP_QUEUE_APPLY, body, sizeof(body), out,
				  sizeof(out)), -EPROTO);
	h = (struct op_queue_apply){0};
	memcpy(body, &h, sizeof(h));
	assert_int_equal(queue_op(OP_QUEUE_APPLY, body, sizeof(h), out,
				  sizeof(out)), -EINVAL); /* no objects */
	assert_non_null(strstr(out, "empty"));
	assert_int_equal(apply("junk.json", "{\"kind\":", out, sizeof(out)), -EINVAL);
	print_message("junk: %s\n", out);
	assert_non_null(strstr(out, "junk.json:1"));
	struct op_queue_delete del_body;
	memset(&del_body, 'x', sizeof(del_body)); /* no NUL */
	assert_int_equal(queue_op(OP_QUEUE_DELETE, &del_body, sizeof(del_body), out,
				  sizeof(out)), -EPROTO);
	assert_int_equal(queue_op(OP_QUEUE_DELETE, &del_body, 8, out, sizeof(out)),
			 -EPROTO);
	assert_int_equal(del("Node", "n0", out, sizeof(out)), -EINVAL);
	assert_non_null(strstr(out, "expected ResourceFlavor"));
	assert_int_equal(queue_op(7, NULL, 0, out, sizeof(out)), -EINVAL);
	assert_int_equal(queue_op(OP_QUEUE_LIST, body, 8, out, sizeof(out)), -EPROTO);
	/* The producer socket: admins only. */
	char err[512];
	int fd = control_client_connect(fx.sock, 5000, err, sizeof(err));
	assert_true(fd >= 0);
	struct op_request op = {.kind = OP_QUEUE, .arg = OP_QUEUE_LIST};
	uint32_t got;
	assert_int_equal(control_client_call(fd, &op, sizeof(op), out, sizeof(out),
					     &got, NULL, 5000, err, sizeof(err)),
			 -EPERM);
	close(fd);
	struct daemon_stats ds;
	daemon_stop(d, 1000, &ds);
	/* No Kueue objects at the start: nothing to change. */
	write_cluster(NULL);
	d = start(1);
	assert_int_equal(queue_op(OP_QUEUE_LIST, NULL, 0, out, sizeof(out)), -ENOTSUP);
	assert_non_null(strstr(out, "without Kueue objects"));
	daemon_stop(d, 1000, &ds);
}

/* --- racing ------------------------------------------------------------ */

#define RACE_PRODUCERS 3
#define RACE_LIVE 16

/* One producer's round: 400 steps, its cookies from 1. */
static void *race(void *arg)
{
	struct fixture_churn *rc = arg;
	rc->cookie = 0;
	for (unsigned it = 0; it < 400 && fixture_churn_step(rc) == 0; it++)
		continue;
	return NULL;
}

struct applier {
	int stop; /* relaxed atomics: a flag */
	unsigned applies;
	const char *failed;
};

/* Applies team-b at 3 and 6 cpu by turns (with its LocalQueue) until
 * told to stop. */
static void *applier(void *arg)
{
	struct applier *ap = arg;
	static char out[CONTROL_MAX_PAYLOAD];
	char cq[512], list[1536];
	while (!__atomic_load_n(&ap->stop, __ATOMIC_RELAXED)) {
		cq_json(cq, sizeof(cq), "team-b", ap->applies % 2 ? "3" : "6");
		snprintf(list, sizeof(list), "%s\n%s\n", cq, LQ("qb", "team-b"));
		if (apply("race.json", list, out, sizeof(out)) < 0) {
			ap->failed = "apply";
			break;
		}
		ap->applies++;
	}
	return NULL;
}

static void test_race(void **state)
{
	(void)state;
	static char out[CONTROL_MAX_PAYLOAD];
	char cq[512], list[1536];
	write_cluster("5");
	struct daemon *d = start(4);
	cq_json(cq, sizeof(cq), "team-b", "6");
	snprintf(list, sizeof(list), "%s\n%s\n", cq, LQ("qb", "team-b"));
	assert_int_equal(apply("start.json", list, out, sizeof(out)), 0);
	struct fixture_churn rc[RACE_PRODUCERS];
	pthread_t th[RACE_PRODUCERS], at;
	memset(rc, 0, sizeof(rc));
	for (int i = 0; i < RACE_PRODUCERS; i++) {
		rc[i].c = fixture_connect(fx.sock);
		rc[i].tid[0] = fixture_cpu_template(rc[i].c, "qa", "500m");
		rc[i].tid[1] = fixture_cpu_template(rc[i].c, "qb", "1");
		rc[i].n_tid = 2;
		rc[i].live_max = RACE_LIVE;
		rc[i].seed = 0x9e3779b97f4a7c15u * (uint64_t)(i + 1);
	}
	uint64_t violations = 0, applies = 0;
	for (int round = 0; round < 3; round++) {
		struct applier ap = {0};
		assert_int_equal(pthread_create(&at, NULL, applier, &ap), 0);
		for (int i = 0; i < RACE_PRODUCERS; i++)
			assert_int_equal(pthread_create(&th[i], NULL, race, &rc[i]), 0);
		for (int i = 0; i < RACE_PRODUCERS; i++) {
			pthread_join(th[i], NULL);
			if (rc[i].failed != NULL)
				fail_msg("producer %d: %s", i, rc[i].failed);
		}
		__atomic_store_n(&ap.stop, 1, __ATOMIC_RELAXED);
		pthread_join(at, NULL);
		if (ap.failed != NULL)
			fail_msg("applier: %s", ap.failed);
		applies += ap.applies;
		/* Quiescent: usage is the live placements' sum; team-a's
		 * quota (5 cpu) was never changed, so never passed. */
		int64_t want[2] = {0, 0};
		for (int i = 0; i < RACE_PRODUCERS; i++)
			for (unsigned k = 0; k < rc[i].n; k++)
				want[rc[i].which[k]] += rc[i].which[k] == 0 ? 500 : 1000;
		int64_t ua = usage_of("team-a", NULL), ub = usage_of("team-b", NULL);
		violations += (ua != want[0]) + (ub != want[1]) + (want[0] > 5000);
		if (ua != want[0] || ub != want[1] || want[0] > 5000)
			print_message("round %d: team-a %" PRId64 " (live %" PRId64
				      "), team-b %" PRId64 " (live %" PRId64 ")\n",
				      round, ua, want[0], ub, want[1]);
	}
	uint64_t placed = 0, refused = 0;
	for (int i = 0; i < RACE_PRODUCERS; i++) {
		placed += rc[i].placed;
		refused += rc[i].refused;
		for (unsigned k = 0; k < rc[i].n; k++)
			release(rc[i].c, rc[i].id[k]);
		shmsched_disconnect(rc[i].c);
	}
	print_message("queue apply race: %" PRIu64 " applies, %" PRIu64 " placed, %"
		      PRIu64 " refused, violations %" PRIu64 "\n", applies, placed,
		      refused, violations);
	assert_int_equal(violations, 0);
	assert_int_equal(usage_of("team-a", NULL), 0);
	assert_int_equal(usage_of("team-b", NULL), 0);
	assert_true(applies > 0);
	assert_true(refused > 0); /* the queues did fill */
	assert_int_equal(daemon_overcommits(d), 0);
	struct daemon_stats ds;
	daemon_stop(d, 1000, &ds);
}

/* The value of the sample line that starts with `series` in the
 * OP_QUEUE_METRICS text, or -1 when there is none. */
static double sample(const char *text, const char *series)
{
	for (const char *p = text; p != NULL && *p; p = strchr(p, '\n')) {
		if (*p == '\n')
			p++;
		if (strncmp(p, series, strlen(series)) == 0 &&
		    p[strlen(series)] == ' ')
			return strtod(p + strlen(series) + 1, NULL);
	}
	return -1;
}

static double metric_of(const char *series)
{
	static char text[CONTROL_MAX_PAYLOAD];
	assert_int_equal(queue_op(OP_QUEUE_METRICS, NULL, 0, text, sizeof(text)), 0);
	return sample(text, series);
}

/* Kueue's metrics of the quota (issue 37 item 5), as OP_QUEUE_METRICS
 * answers them for the gateway's /metrics and `shmsched status --queues`.
 * Names and labels are Kueue's (kubernetes-sigs/kueue pkg/metrics/
 * metrics.go: PendingWorkloads {cluster_queue, status "active" |
 * "inadmissible"}, AdmittedWorkloadsTotal {cluster_queue},
 * ClusterQueueResourceUsage and ClusterQueueNominalQuota {cohort,
 * cluster_queue, flavor, resource}, cpu in cores). Two pods admitted,
 * one waiting for quota counts inadmissible until a release wakes it and
 * it is admitted; a raise keeps the admitted total (carried by name).
 * Old code: action 3 was refused ("expected 0 (list), 1 (apply) or 2
 * (delete)"), and nothing counted the workloads. */
static void test_metrics(void **state)
{
	(void)state;
	static char out[CONTROL_MAX_PAYLOAD];
	write_cluster("2");
	struct daemon *d = start(1);
	struct shmsched_client *c = fixture_connect(fx.sock);
	uint32_t qa = fixture_cpu_template(c, "qa", "1");
	const char *adm = "kueue_admitted_workloads_total{cluster_queue=\"team-a\"}";
	const char *inad = "kueue_pending_workloads{cluster_queue=\"team-a\","
			   "status=\"inadmissible\"}";
	const char *act = "kueue_pending_workloads{cluster_queue=\"team-a\","
			  "status=\"active\"}";
	const char *use = "kueue_cluster_queue_resource_usage{cohort=\"\","
			  "cluster_queue=\"team-a\",flavor=\"default-flavor\","
			  "resource=\"cpu\"}";
	assert_true(metric_of(adm) == 0);
	uint64_t id0 = fixture_place(c, qa, 1, SHMSCHED_PLACED);
	fixture_place(c, qa, 2, SHMSCHED_PLACED);
	assert_true(metric_of(adm) == 2);
	assert_true(metric_of(use) == 2);
	assert_true(metric_of("kueue_cluster_queue_nominal_quota{cohort=\"\","
			      "cluster_queue=\"team-a\",flavor=\"default-flavor\","
			      "resource=\"cpu\"}") == 2);
	assert_true(metric_of(inad) == 0);
	/* Full: a pod that waits is parked for quota. */
	struct shmsched_pod p = {.cookie = 3, .template_id = qa,
				 .flags = SHMSCHED_SLOT_WAIT};
	assert_int_equal(shmsched_submit(c, &p, 1), 1);
	for (int i = 0; i < 200 && metric_of(inad) != 1; i++)
		usleep(10000);
	assert_true(metric_of(inad) == 1);
	assert_true(metric_of(act) == 0);
	/* A release wakes it; placed, it counts no more. */
	release(c, id0);
	struct shmsched_result r;
	assert_int_equal(fixture_await(c, &r, 1, 5000), 1);
	assert_int_equal(r.status, SHMSCHED_PLACED);
	assert_true(metric_of(inad) == 0);
	assert_true(metric_of(act) == 0);
	assert_true(metric_of(adm) == 3);
	/* A change keeps the total (carried by name). */
	char cq[512];
	cq_json(cq, sizeof(cq), "team-a", "4");
	assert_int_equal(apply("raise.json", cq, out, sizeof(out)), 0);
	assert_true(metric_of(adm) == 3);
	/* The node lifecycle's counts come with it. */
	assert_true(metric_of("shmsched_node_tainted") == 0);
	assert_true(metric_of("shmsched_node_evictions_total") == 0);
	shmsched_disconnect(c);
	daemon_stop(d, 5000, NULL);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest race_tests[] = {
		cmocka_unit_test(test_race),
	};
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_apply_delete),
		cmocka_unit_test(test_malformed),
		cmocka_unit_test(test_apply_wakes_waiting),
		cmocka_unit_test(test_metrics),
	};
	return FIXTURE_RUN(argc, argv, tests, race_tests, setup, teardown);
}
