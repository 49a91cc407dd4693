/* unit.gateway_dispatch: the dispatcher alone (gw_dispatch_start), against
 * a real shmschedd child for the answers; this test plays the HTTP side
 * of J1-J3 itself.
 *
 * Wakes (J2, GL1): the dispatcher's wakes of HTTP connections are made
 * after it releases the job's lock, on every path that wakes: a refusal
 * (the daemon away: 503), a lone pod's answer (a `collect` job, woken
 * once, when done), and a streamed job's verdict and lines. The test
 * takes the job's lock before gw_dispatch_submit(), so that the
 * dispatcher's first wake must come through the path under test, marks
 * the job suspended under the lock, and waits on a semaphore that its
 * wake function posts. The wake function tries the job's lock: a wake
 * made under the lock finds it held (`held` must read 0), and every job
 * is woken at least once (`woken` > 0), each answered as before. With
 * the wakes under the lock (the code before GL1) `held` counts every wake
 * and each of those tests fails.
 *
 * Templates (GL3): lone pods of one spec, decoded in this thread (its
 * spec cache hands each the same tree), share one template, found by
 * their tree after the first three; a pod of that spec with other labels
 * gets a template of its own.
 *
 * The answer doorbell (AB7-AB9): a pod in flight for 300 ms is slept for,
 * a bounded number of sleeps, not spun for.
 *
 * usage: test_dispatch SHMSCHEDD
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <errno.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "base/base.h"
#include "gateway/decode.h"
#include "gateway/gateway_internal.h"
#include "daemon_child.h"

static const char *daemon_exe;
static char dir[256], sock[300], region[64];
static pid_t daemon_pid;

/* The HTTP side of one job, as this test plays it. */
struct waiter {
	sem_t sem;
	unsigned woken; /* wakes with the job's lock free */
	unsigned held;  /* wakes with the job's lock held: must read 0 */
};

static void test_wake_fn(struct gw_job *j)
{
	struct waiter *w = j->http;
	if (pthread_mutex_trylock(&j->lock) == 0) {
		pthread_mutex_unlock(&j->lock);
		w->woken++;
	} else {
		w->held++;
	}
	sem_post(&w->sem);
}

static struct gw_dispatch *start_dispatch(const char *socket_path)
{
	struct gateway_config cfg;
	gateway_config_default(&cfg);
	cfg.socket_path = socket_path;
	cfg.region_name = region;
	cfg.producer_name = "gw-wake-test";
	cfg.daemon_grace_ms = 20000;
	struct gw_dispatch *d = NULL;
	char err[512];
	int rc = gw_dispatch_start(&cfg, &d, err, sizeof(err));
	if (rc < 0)
		fail_msg("gw_dispatch_start: %s", err);
	return d;
}

static void stop_dispatch(struct gw_dispatch *d)
{
	gw_dispatch_stop(d);
	gw_dispatch_free(d);
}

static struct gw_job *place_job(const char *body, bool collect, struct waiter *w)
{
	struct gw_job *j = gw_job_new(GW_JOB_PLACE);
	assert_non_null(j);
	struct gw_limits lim = {.max_pods = 1024, .max_specs = 64};
	char err[512];
	int rc = gw_decode_pods(body, strlen(body), &lim, &j->batch, err, sizeof(err));
	if (rc < 0)
		fail_msg("gw_decode_pods: %s", err);
	j->collect = collect;
	j->wake = test_wake_fn;
	j->http = w;
	j->received_ns = now_ns();
	return j;
}

/* Submits j as the HTTP side does (J1, J3), with its lock taken first,
 * and reads what it is given until it is done: the bytes of `out` (the
 * caller frees), its code in *code. */
static char *run_job(struct gw_dispatch *d, struct gw_job *j, struct waiter *w,
		     unsigned *code)
{
	struct json_buf got = {0};
	pthread_mutex_lock(&j->lock);
	gw_dispatch_submit(d, j);
	for (;;) {
		if (j->sent < j->out.len) {
			json_buf_put(&got, j->out.data + j->sent, j->out.len - j->sent);
			j->sent = j->out.len;
		}
		if (j->done)
			break;
		j->suspended = true;
		pthread_mutex_unlock(&j->lock);
		struct timespec ts;
		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_sec += 30;
		while (sem_timedwait(&w->sem, &ts) < 0)
			if (errno != EINTR)
				fail_msg("no wake within 30 s (hung: must not happen)");
		pthread_mutex_lock(&j->lock);
		assert_false(j->suspended); /* cleared by the waker */
	}
	*code = j->code;
	pthread_mutex_unlock(&j->lock);
	__atomic_store_n(&j->abandoned, true, __ATOMIC_RELEASE); /* as completed() */
	gw_job_unref(j);
	return got.data != NULL ? got.data : strdup("");
}

static void pod_json_labelled(char *buf, size_t len, const char *name,
			      const char *cpu, const char *labels)
{
	snprintf(buf, len, "{\"kind\":\"Pod\",\"metadata\":{\"name\":\"%s\","
		 "\"namespace\":\"wake\"%s},\"spec\":{\"containers\":[{\"name\":"
		 "\"c\",\"resources\":{\"requests\":{\"cpu\":\"%s\",\"memory\":"
		 "\"64Mi\"}}}]}}\n", name, labels, cpu);
}

static void pod_json(char *buf, size_t len, const char *name, const char *cpu)
{
	pod_json_labelled(buf, len, name, cpu, "");
}

static int setup(void **state)
{
	(void)state;
	snprintf(dir, sizeof(dir), "/tmp/shmsched-gwwake-XXXXXX");
	if (mkdtemp(dir) == NULL)
		return -1;
	snprintf(sock, sizeof(sock), "%s/s.sock", dir);
	snprintf(region, sizeof(region), "gwwake-%d", (int)getpid());
	char log[400];
	snprintf(log, sizeof(log), "%s/daemon.log", dir);
	const char *argv[] = {daemon_exe, "--socket", sock, "--workers", "1",
			"--no-pin", "--name", region, "--synthetic", "64:0",
			"--fresh", NULL};
	daemon_pid = daemon_child_start(argv, log, 6000);
	return daemon_pid > 0 ? 0 : -1;
}

static int teardown(void **state)
{
	(void)state;
	if (daemon_pid > 0) {
		kill(daemon_pid, SIGTERM);
		waitpid(daemon_pid, NULL, 0);
	}
	shm_unlink(region);
	char cmd[300];
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	return system(cmd) == 0 ? 0 : -1;
}

/* The daemon away: the verdict 503 (job_finish), woken unlocked. */
static void test_refused_wake_unlocked(void **state)
{
	(void)state;
	char nowhere[400];
	snprintf(nowhere, sizeof(nowhere), "%s/nobody.sock", dir);
	struct gw_dispatch *d = start_dispatch(nowhere);
	struct waiter w = {0};
	sem_init(&w.sem, 0, 0);
	for (unsigned k = 0; k < 20; k++) {
		char body[512], name[32];
		snprintf(name, sizeof(name), "away-%u", k);
		pod_json(body, sizeof(body), name, "100m");
		unsigned code = 0;
		char *out = run_job(d, place_job(body, true, &w), &w, &code);
		assert_int_equal(code, 503);
		assert_non_null(strstr(out, "\"reason\":\"ServiceUnavailable\""));
		free(out);
	}
	stop_dispatch(d);
	assert_int_equal(w.held, 0); /* must read 0 */
	assert_int_equal(w.woken, 20);
	sem_destroy(&w.sem);
}

static void wait_connected(struct gw_dispatch *d)
{
	for (unsigned t = 0; t < 10000; t += 10) {
		if (stat_read(&gw_dispatch_stats(d)->connected) != 0)
			return;
		sleep_ms(10);
	}
	fail_msg("the dispatcher did not connect to the daemon in 10 s");
}

/* Lone pods (`collect`: woken once, when done, by publish()): each
 * answered with its node, or as not placed when no node fits, and woken
 * unlocked. */
static void test_lone_pod_wake_unlocked(void **state)
{
	(void)state;
	struct gw_dispatch *d = start_dispatch(sock);
	wait_connected(d);
	struct waiter w = {0};
	sem_init(&w.sem, 0, 0);
	unsigned placed = 0, refused = 0;
	for (unsigned k = 0; k < 200; k++) {
		char body[512], name[32];
		bool huge = k % 10 == 9; /* 10,000 cpus: no node fits */
		snprintf(name, sizeof(name), "lone-%u", k);
		pod_json(body, sizeof(body), name, huge ? "10000" : "10m");
		unsigned code = 0;
		unsigned before = w.woken + w.held;
		char *out = run_job(d, place_job(body, true, &w), &w, &code);
		assert_int_equal(code, 200);
		/* One wake: the answer (not the verdict too). */
		assert_int_equal(w.woken + w.held, before + 1);
		char want[64];
		snprintf(want, sizeof(want), "{\"pod\":\"wake/%s\"", name);
		assert_non_null(strstr(out, want));
		assert_int_equal(strchr(out, '\n') - out + 1, (long)strlen(out));
		if (huge) {
			assert_non_null(strstr(out, "\"node\":null"));
			assert_non_null(strstr(out, "\"message\":"));
			refused++;
		} else {
			assert_null(strstr(out, "\"node\":null"));
			assert_non_null(strstr(out, "\"node\":\""));
			placed++;
		}
		free(out);
	}
	stop_dispatch(d);
	assert_int_equal(placed, 180);
	assert_int_equal(refused, 20);
	assert_int_equal(w.held, 0); /* must read 0 */
	assert_int_equal(w.woken, 200);
	sem_destroy(&w.sem);
}

/* A streamed job (not `collect`): woken at its verdict (job_accept) and
 * as its lines come (publish), each wake unlocked, every line once. */
static void test_streamed_wakes_unlocked(void **state)
{
	(void)state;
	struct gw_dispatch *d = start_dispatch(sock);
	wait_connected(d);
	struct waiter w = {0};
	sem_init(&w.sem, 0, 0);
	for (unsigned round = 0; round < 20; round++) {
		struct json_buf body = {0};
		for (unsigned k = 0; k < 5; k++) {
			char pod[512], name[32];
			snprintf(name, sizeof(name), "stream-%u-%u", round, k);
			pod_json(pod, sizeof(pod), name, "10m");
			json_buf_puts(&body, pod);
		}
		unsigned code = 0;
		unsigned before = w.woken + w.held;
		char *out = run_job(d, place_job(body.data, false, &w), &w, &code);
		json_buf_free(&body);
		assert_int_equal(code, 200);
		assert_true(w.woken + w.held >= before + 1);
		for (unsigned k = 0; k < 5; k++) {
			char want[64];
			snprintf(want, sizeof(want), "{\"pod\":\"wake/stream-%u-%u\"",
				 round, k);
			const char *at = strstr(out, want);
			assert_non_null(at);
			assert_null(strstr(at + 1, want)); /* once */
		}
		free(out);
	}
	stop_dispatch(d);
	assert_int_equal(w.held, 0); /* must read 0 */
	assert_true(w.woken >= 20);
	sem_destroy(&w.sem);
}

/* GL3: one spec's lone pods, each decoded here (the spec cache gives the
 * third on the entry's own tree), find their template by the tree; the
 * same spec with other labels is another key, another template. With the
 * tree's branch taken out of tmpl_same_key(), same_tree reads 0. */
static void test_template_same_tree(void **state)
{
	(void)state;
	struct gw_dispatch *d = start_dispatch(sock);
	wait_connected(d);
	const struct gw_dispatch_stats *st = gw_dispatch_stats(d);
	struct waiter w = {0};
	sem_init(&w.sem, 0, 0);
	gw_spec_cache_clear();
	for (unsigned k = 0; k < 51; k++) {
		char body[512], name[32];
		bool other = k == 50;
		snprintf(name, sizeof(name), "tree-%u", k);
		pod_json_labelled(body, sizeof(body), name, "20m",
				  other ? ",\"labels\":{\"app\":\"b\"}" : "");
		unsigned code = 0;
		char *out = run_job(d, place_job(body, true, &w), &w, &code);
		assert_int_equal(code, 200);
		char want[64];
		snprintf(want, sizeof(want), "{\"pod\":\"wake/%s\",\"node\":\"", name);
		assert_non_null(strstr(out, want)); /* placed */
		free(out);
		if (k == 49) {
			/* One template, found by its tree from the fourth pod
			 * on: the first registers it; the second (its own parse:
			 * the cache is filled at the second decode) and the
			 * third (the cache entry's tree, the first time) are
			 * walked, and the tree of each held. */
			assert_int_equal(stat_read(&st->templates_registered), 1);
			assert_int_equal(stat_read(&st->templates_same_tree), 47);
		}
	}
	assert_int_equal(stat_read(&st->templates_registered), 2);
	stop_dispatch(d);
	sem_destroy(&w.sem);
}

/* AB7-AB9: a lone pod that waits 300 ms in the daemon's queue (no node
 * fits; its deadline answers it) is slept for on the answer doorbell, not
 * spun for: the dispatcher's sleeps are counted (> 0), and each lasts
 * until a wake or its 1 ms timeout, so 300 ms hold at most a few hundred
 * (a sleep whose futex compare failed every time, or a spin, would count
 * thousands or none). The answer comes, UNSCHEDULABLE at the deadline. */
static void test_sleeps_on_answer_doorbell(void **state)
{
	(void)state;
	struct gw_dispatch *d = start_dispatch(sock);
	wait_connected(d);
	const struct gw_dispatch_stats *st = gw_dispatch_stats(d);
	struct waiter w = {0};
	sem_init(&w.sem, 0, 0);
	char body[512];
	pod_json(body, sizeof(body), "sleeper", "10000"); /* fits nowhere */
	struct gw_job *j = place_job(body, true, &w);
	j->pod_flags = SHMSCHED_SLOT_WAIT;
	j->deadline_ns = j->received_ns + UINT64_C(300000000);
	uint64_t before = stat_read(&st->answer_sleeps);
	unsigned code = 0;
	uint64_t t0 = now_ns();
	char *out = run_job(d, j, &w, &code);
	uint64_t ms = (now_ns() - t0) / 1000000u;
	uint64_t sleeps = stat_read(&st->answer_sleeps) - before;
	print_message("a pod waiting %llu ms: %llu sleeps on the answer "
		      "doorbell\n", (unsigned long long)ms,
		      (unsigned long long)sleeps);
	assert_int_equal(code, 200);
	assert_non_null(strstr(out, "{\"pod\":\"wake/sleeper\""));
	assert_non_null(strstr(out, "\"node\":null"));
	assert_true(ms >= 250);
	assert_true(sleeps > 0);
	if (sleeps > 2 * ms + 50)
		fail_msg("%llu sleeps in %llu ms: they do not sleep",
			 (unsigned long long)sleeps, (unsigned long long)ms);
	free(out);
	stop_dispatch(d);
	sem_destroy(&w.sem);
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: %s SHMSCHEDD\n", argv[0]);
		return 2;
	}
	daemon_exe = argv[1];
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_refused_wake_unlocked),
		cmocka_unit_test(test_lone_pod_wake_unlocked),
		cmocka_unit_test(test_streamed_wakes_unlocked),
		cmocka_unit_test(test_template_same_tree),
		cmocka_unit_test(test_sleeps_on_answer_doorbell),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
