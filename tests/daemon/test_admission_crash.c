/* unit.daemon_admission_crash: admission fair sharing's usage survives a
 * daemon killed without a clean stop (issue 37: usage "kept in the
 * durable store so a restart does not reset fairness").
 *
 * A child process runs the real daemon with a store (--state-dir, sync):
 * LocalQueue default/qa holds 2 cpu for one half-life on the usage's
 * clock (stepped by hand), the next worker poll samples it (consumed
 * about 1 cpu: Kueue's CalculateDecayedConsumed, alpha 1 - 0.5^(1h/1h)),
 * the daemon's saver writes it (daemon/admission_fair.c), and the child
 * is killed with SIGKILL: no daemon_stop, so no clean-stop save. Then:
 * - the store holds qa's record with that usage (read directly);
 * - the daemon started again on the store orders qb's waiting pod
 *   before qa's, although qa's waited first (Kueue's
 *   pkg/cache/queue/cluster_queue.go: "cmp.Compare(usageA, usageB)"
 *   before the base order).
 * Old (the usage saved only at a clean stop): the store holds no record
 * for qa, and after the restart both LocalQueues start from nothing, so
 * qa's pod, parked first, goes first. Both checks fail there.
 */
#include <errno.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "base/base.h"
#include "bind/bind.h"
#include "daemon/daemon.h"
#include "fixture.h"
#include "quota/quota.h"
#include "shmsched/client.h"

#define HOUR_NS (UINT64_C(3600) * 1000000000u)
#define SAMPLING_NS UINT64_C(60000000000)

static struct fixture_dir fx;
static char store[160];
/* The usage's clock (fixture_clock_ns): __atomic, the workers read it. */
static uint64_t clk;

static int setup(void **state)
{
	(void)state;
	fixture_dir_make(&fx, "admcrash", 0);
	snprintf(store, sizeof(store), "%s/store", fx.dir);
	fixture_write_cluster(&fx, &(struct fixture_nodes){.count = 1, .cpu = "32",
							    .memory = "64Gi"}, NULL);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	fixture_dir_remove(&fx);
	return 0;
}

/* ClusterQueue "team" (2 cpu nominal, admission fair sharing on),
 * LocalQueues default/qa, default/qb and default/qc (weight 1). NULL
 * with a message in err. */
static struct quota_tree *make_tree(char *err, size_t err_len)
{
	struct quota_tree *t;
	if (quota_tree_new(&t) < 0) {
		snprintf(err, err_len, "quota_tree_new");
		return NULL;
	}
	int f = quota_flavor_add(t, "fa", err, err_len);
	int cpu = quota_resource_add(t, "cpu", err, err_len);
	int cq = quota_cluster_queue_add(t, "team", NULL, QUOTA_WEIGHT_DEFAULT_MILLI,
					 NULL, err, err_len);
	if (f < 0 || cpu < 0 || cq < 0 ||
	    quota_set(t, cq, f, cpu, 2000, QUOTA_NO_LIMIT, QUOTA_NO_LIMIT, err,
		      err_len) < 0 ||
	    quota_cluster_queue_set_admission_fair_sharing(t, cq, true) < 0 ||
	    quota_local_queue_add(t, "default", "qa", "team", err, err_len) < 0 ||
	    quota_local_queue_add(t, "default", "qb", "team", err, err_len) < 0 ||
	    quota_local_queue_add(t, "default", "qc", "team", err, err_len) < 0 ||
	    quota_seal(t, err, err_len) < 0) {
		quota_tree_free(t);
		return NULL;
	}
	return t;
}

static const struct afs_settings settings = {.half_life_ns = HOUR_NS,
					     .sampling_ns = SAMPLING_NS};

static struct daemon_config config(struct quota_tree *t)
{
	struct daemon_config cfg = fixture_config(&fx);
	cfg.quota = t;
	cfg.admission_fair_sharing = &settings;
	cfg.afs_clock_ns = fixture_clock_ns;
	cfg.afs_clock_arg = &clk;
	cfg.state_dir = store;
	cfg.durability = STORE_DURABILITY_SYNC;
	return cfg;
}

/* The child's template of one pod of LocalQueue `queue` asking `cpu`
 * (fixture_cpu_template's, without cmocka); 0 with a message in err on
 * failure. */
static int tmpl(struct shmsched_client *c, const char *queue, const char *cpu,
		uint32_t *tid, char *err, size_t err_len)
{
	char json[512];
	fixture_cpu_json(json, sizeof(json), queue, cpu);
	return shmsched_register_template(c, json, strlen(json), tid, err, err_len);
}

/* --- the child: no cmocka here (a failed assertion would run the rest
 * of the group in the child); each failure exits with a message. ------ */

static void child_fail(const char *what, const char *err)
{
	fprintf(stderr, "child: %s: %s\n", what, err);
	_exit(2);
}

/* Waits (at most 10 s) until the saver made `n` writes. */
static void child_await_saves(struct daemon *d, uint64_t n)
{
	for (int i = 0; i < 1000; i++) {
		if (daemon_admission_usage_saves(d) >= n)
			return;
		usleep(10000);
	}
	char msg[64];
	snprintf(msg, sizeof(msg), "%llu write(s), expected %llu",
		 (unsigned long long)daemon_admission_usage_saves(d),
		 (unsigned long long)n);
	child_fail("admission usage saves", msg);
}

static void child_run(void)
{
	char err[512];
	__atomic_store_n(&clk, UINT64_C(1000000000), __ATOMIC_RELAXED);
	struct quota_tree *t = make_tree(err, sizeof(err));
	if (t == NULL)
		child_fail("the quota tree", err);
	struct daemon_config cfg = config(t);
	struct daemon *d = daemon_start(&cfg, err, sizeof(err));
	if (d == NULL)
		child_fail("daemon_start", err);
	struct shmsched_client *c;
	if (shmsched_connect(fx.sock, &c, err, sizeof(err)) < 0)
		child_fail("connect", err);
	uint32_t qa, qb;
	if (tmpl(c, "qa", "1", &qa, err, sizeof(err)) < 0 ||
	    tmpl(c, "qb", "1", &qb, err, sizeof(err)) < 0)
		child_fail("template", err);
	/* qa takes the ClusterQueue's 2 cpu. */
	struct shmsched_pod pods[2] = {{.cookie = 100, .template_id = qa},
				       {.cookie = 101, .template_id = qa}};
	if (shmsched_submit(c, pods, 2) != 2)
		child_fail("submit", "qa's two pods not taken");
	struct shmsched_result r[2];
	unsigned got = 0;
	for (int i = 0; i < 10000 && got < 2; i++) {
		int n = shmsched_poll(c, r + got, 2 - got);
		if (n < 0)
			child_fail("poll", strerror(-n));
		got += (unsigned)n;
		if (n == 0)
			usleep(1000);
	}
	if (got != 2 || r[0].status != SHMSCHED_PLACED ||
	    r[1].status != SHMSCHED_PLACED)
		child_fail("qa's pods", "not both placed");
	/* The first sample (the first poll) only stamps; its write is the
	 * whole table, qa's entry penalty (about 0.02 cpu). */
	child_await_saves(d, 1);
	/* One half-life on: the next poll samples qa at about 1 cpu. A pod
	 * of qb that must wait (the 2 cpu are qa's) makes that poll. */
	__atomic_fetch_add(&clk, HOUR_NS, __ATOMIC_RELAXED);
	struct shmsched_pod wait = {.cookie = 200, .template_id = qb,
				    .flags = SHMSCHED_WAIT,
				    .deadline_ns = now_ns() + UINT64_C(20000000000)};
	if (shmsched_submit(c, &wait, 1) != 1)
		child_fail("submit", "qb's pod not taken");
	child_await_saves(d, 2);
	/* kill -9: no daemon_stop, no clean-stop save. */
	kill(getpid(), SIGKILL);
	_exit(3);
}

/* --- the parent ------------------------------------------------------ */

static int on_record(void *arg, const void *blob, size_t len)
{
	struct store_afs *qa = arg;
	struct store_afs a;
	char err[256];
	int rc = store_decode_afs(blob, len, &a, err, sizeof(err));
	if (rc < 0)
		return rc;
	if (strcmp(a.ns, "default") == 0 && strcmp(a.name, "qa") == 0)
		*qa = a;
	return 0;
}

static void test_usage_survives_kill(void **state)
{
	(void)state;
	fflush(NULL);
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0)
		child_run();
	int status;
	assert_int_equal(waitpid(pid, &status, 0), pid);
	if (!WIFSIGNALED(status) || WTERMSIG(status) != SIGKILL)
		fail_msg("the child: exit status %d, expected killed by SIGKILL "
			 "after the saver's write", WIFEXITED(status)
			 ? WEXITSTATUS(status) : -1);

	/* The store, read directly: qa's record is the sampled usage. With
	 * the entry penalty a = 2000 x (1 - 0.5^(60 s / 1 h)) millicores,
	 * the sample gives a x 0.5 + 2000 x 0.5, about 1011.5. */
	char err[512];
	struct store *st;
	if (store_open(store, STORE_DURABILITY_SYNC, &st, err, sizeof(err)) < 0)
		fail_msg("store_open %s: %s", store, err);
	struct store_afs qa_rec = {.n = 0};
	int rc = store_load_afs(st, on_record, &qa_rec, err, sizeof(err));
	store_close(st);
	if (rc < 0)
		fail_msg("store_load_afs: %s", err);
	assert_string_equal(qa_rec.name, "qa");
	assert_int_equal(qa_rec.n, 1);
	assert_string_equal(qa_rec.resource[0], "cpu");
	double a = 2000.0 * (1.0 - 0.9885140203528962 /* 0.5^(1/60) */);
	double want = a * 0.5 + 1000.0;
	if (qa_rec.consumed[0] < want - 0.5 || qa_rec.consumed[0] > want + 0.5)
		fail_msg("qa's saved usage %g millicores, expected %g",
			 qa_rec.consumed[0], want);

	/* The restart on the same store: its placements come back charged
	 * to no quota (the record keeps none), so qc fills the queue; qa's
	 * pod parks first, qb's second; room for one: qb's goes (the lower
	 * usage). */
	__atomic_store_n(&clk, UINT64_C(1000000000), __ATOMIC_RELAXED);
	struct quota_tree *t = make_tree(err, sizeof(err));
	if (t == NULL)
		fail_msg("the quota tree: %s", err);
	struct daemon_config cfg = config(t);
	struct daemon *d = fixture_start(&cfg);
	struct shmsched_client *c = fixture_connect(fx.sock);
	uint32_t qa = fixture_cpu_template(c, "qa", "1");
	uint32_t qb = fixture_cpu_template(c, "qb", "1");
	uint32_t qc = fixture_cpu_template(c, "qc", "1");
	struct shmsched_result r;
	uint64_t c_ids[2];
	for (int i = 0; i < 2; i++)
		c_ids[i] = fixture_place(c, qc, 300 + (uint64_t)i, SHMSCHED_PLACED);
	fixture_park_one(d, c, qa, 1, 1); /* qa's, first */
	fixture_park_one(d, c, qb, 2, 2); /* qb's, second */
	assert_int_equal(shmsched_release(c, c_ids[0], err, sizeof(err)), 0);
	assert_int_equal(fixture_await(c, &r, 1, 5000), 1);
	assert_int_equal(r.status, SHMSCHED_PLACED);
	assert_int_equal(r.cookie, 2);
	shmsched_disconnect(c);
	struct daemon_stats ds;
	daemon_stop(d, 1000, &ds);
	quota_tree_free(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_usage_survives_kill),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
