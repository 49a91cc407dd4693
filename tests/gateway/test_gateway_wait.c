/* stress.gateway_wait: POST /v1/placements?wait=SECONDS through the gateway
 * (in this process) against a real shmschedd child with its scheduling
 * queue, on one node of 2 cpu, over real sockets.
 *
 * What must hold, each asserted:
 *   - a pod that does not fit waits (the daemon's unschedulable queue
 *     reads 1 in /metrics) past the gateway's idle time-out, and is
 *     answered placed once a DELETE through the gateway frees room;
 *   - ?wait=0 and no ?wait answer at once (the daemon runs without
 *     --wait); a pod whose ?wait passes is answered unschedulable after
 *     about that long, not before;
 *   - bad ?wait values answer 400 naming the parameter and the range;
 *   - a client that hangs up while its pod waits leaves no parked pod:
 *     the daemon's pending counts go back to 0, a cancel was sent;
 *   - a pod of higher priority placed with ?wait preempts one placed
 *     through the gateway: the EVICTED notice deletes the victim's record
 *     (GET says 404) and counts it;
 *   - a gateway stopping while a pod waits cancels it: the client gets a
 *     line that says so, promptly, and the queue is empty;
 *   - /metrics passes promtool (when installed);
 *   - a waiting pod across a kill -9 and restart of the daemon is
 *     submitted again with its first deadline: answered at about the
 *     request's ?wait, not ?wait after the restart.
 *
 * usage: test_gateway_wait SHMSCHEDD
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "base/base.h"
#include "gateway/gateway.h"
#include "shmsched/client.h"
#include "bench/http_client.h"
#include "daemon_child.h"

static const char *daemon_exe;
static char dir[256], sock[300], cluster[300], region[64];
static pid_t daemon_pid;
static unsigned daemon_starts;
static struct gateway *gw;
static unsigned port;

static double secs_since(uint64_t t0)
{
	return (double)(now_ns() - t0) * 1e-9;
}

/* shmschedd on the cluster file (first start) or on its region (a
 * restart, as after a crash); waits for its ready line. */
static pid_t start_daemon(bool first)
{
	char log[400];
	snprintf(log, sizeof(log), "%s/daemon-%u.log", dir, ++daemon_starts);
	const char *argv[] = {daemon_exe, "--socket", sock, "--workers", "1",
			"--no-pin", "--name", region, NULL, NULL, NULL, NULL};
	if (first) {
		const char *more[] = {"--cluster", cluster, "--fresh"};
		memcpy(&argv[8], more, sizeof(more));
	}
	return daemon_child_start(argv, log, 10000);
}

static bool wait_ready(unsigned ms)
{
	for (unsigned t = 0; t < ms; t += 20) {
		struct http_answer a;
		if (http_do(port, "GET", "/readyz", NULL, &a) == 0 && a.status == 200) {
			http_answer_free(&a);
			return true;
		}
		http_answer_free(&a);
		sleep_ms(20);
	}
	return false;
}

static int setup(void **state)
{
	(void)state;
	snprintf(dir, sizeof(dir), "/tmp/shmsched-gwwait-XXXXXX");
	if (mkdtemp(dir) == NULL)
		return -1;
	snprintf(sock, sizeof(sock), "%s/s.sock", dir);
	snprintf(cluster, sizeof(cluster), "%s/cluster.json", dir);
	snprintf(region, sizeof(region), "gwwait-%d", (int)getpid());
	FILE *f = fopen(cluster, "w");
	if (f == NULL)
		return -1;
	fputs("{\"kind\":\"List\",\"items\":[{\"kind\":\"Node\",\"metadata\":{\"name\":"
	      "\"n0\"},\"status\":{\"allocatable\":{\"cpu\":\"2\",\"memory\":\"4Gi\","
	      "\"pods\":\"110\"}}},{\"kind\":\"PriorityClass\",\"apiVersion\":"
	      "\"scheduling.k8s.io/v1\",\"metadata\":{\"name\":\"high\"},\"value\":"
	      "1000}]}", f);
	fclose(f);
	daemon_pid = start_daemon(true);
	struct gateway_config cfg;
	gateway_config_default(&cfg);
	cfg.socket_path = sock;
	cfg.listen = "127.0.0.1:0";
	cfg.region_name = region;
	cfg.allow_anonymous = true; /* the budgets: stress.gateway_security */
	cfg.max_pods = 100000;
	cfg.max_slots_per_client = 100000000;
	cfg.max_connections_per_ip = 0;
	cfg.producer_name = "gw-wait-test";
	/* Shorter than the waits below: a waiting request must outlive it. */
	cfg.idle_timeout_s = 2;
	cfg.request_timeout_s = 2;
	cfg.daemon_grace_ms = 20000;
	char err[512];
	if (gateway_start(&cfg, &gw, err, sizeof(err)) < 0) {
		fprintf(stderr, "gateway_start: %s\n", err);
		return -1;
	}
	port = gateway_port(gw);
	return wait_ready(10000) ? 0 : -1;
}

static int teardown(void **state)
{
	(void)state;
	gateway_stop(gw);
	if (daemon_pid > 0) {
		kill(daemon_pid, SIGTERM);
		waitpid(daemon_pid, NULL, 0);
	}
	shm_unlink(region);
	char cmd[300];
	snprintf(cmd, sizeof(cmd), getenv("GW_KEEP") ? "echo kept %s" : "rm -rf %s", dir);
	return system(cmd) == 0 ? 0 : -1;
}

/* One pod asking `cpu` millicores, of PriorityClass `cls` (NULL: none). */
static void pod_json(char *buf, size_t len, const char *name, unsigned cpu,
		     const char *cls)
{
	char pc[64] = "";
	if (cls != NULL)
		snprintf(pc, sizeof(pc), "\"priorityClassName\":\"%s\",", cls);
	snprintf(buf, len, "{\"kind\":\"Pod\",\"metadata\":{\"name\":\"%s\","
		 "\"namespace\":\"w\"},\"spec\":{%s\"containers\":[{\"name\":\"c\","
		 "\"resources\":{\"requests\":{\"cpu\":\"%um\",\"memory\":\"64Mi\"}}}]}}",
		 name, pc, cpu);
}

/* A metric's value in /metrics, or -1. */
static double metric(const char *series)
{
	struct http_answer a;
	double v = -1;
	if (http_do(port, "GET", "/metrics", NULL, &a) == 0 && a.status == 200) {
		size_t len = strlen(series);
		for (const char *l = a.body.data; l != NULL && *l;
		     l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL)
			if (strncmp(l, series, len) == 0 && l[len] == ' ')
				v = strtod(l + len + 1, NULL);
	}
	http_answer_free(&a);
	return v;
}

/* Waits up to `ms` for a metric to read `want`; returns what it read. */
static double await_metric(const char *series, double want, unsigned ms)
{
	double v = metric(series);
	for (unsigned t = 0; t < ms && v != want; t += 50) {
		sleep_ms(50);
		v = metric(series);
	}
	return v;
}

#define UNSCHED "scheduler_pending_pods{queue=\"unschedulable\"}"
#define BACKOFF "scheduler_pending_pods{queue=\"backoff\"}"
#define ACTIVE "scheduler_pending_pods{queue=\"active\"}"

/* POST one pod with `query`; returns the HTTP status, the answer line's
 * node (or "" when null) and message; or -1 with the client's error in
 * `msg` when no answer came (no assert here: waiters call it from their
 * own thread, where a cmocka failure cannot unwind, and the test's
 * thread checks the status). */
static int place_on(unsigned to, const char *query, const char *name,
		    unsigned cpu, const char *cls, char *node, size_t node_len,
		    char *msg, size_t msg_len)
{
	char body[512], path[128];
	pod_json(body, sizeof(body), name, cpu, cls);
	snprintf(path, sizeof(path), "/v1/placements%s", query);
	struct http_answer a;
	if (node != NULL)
		node[0] = '\0';
	if (msg != NULL)
		msg[0] = '\0';
	int rc = http_do(to, "POST", path, body, &a);
	if (rc != 0) {
		if (msg != NULL)
			snprintf(msg, msg_len, "no answer: http_do: %d", rc);
		return -1;
	}
	int status = a.status;
	json_t *o = status == 200 ? json_loadb(a.body.data, a.body.len, 0, NULL) : NULL;
	if (o != NULL) {
		const char *n = json_string_value(json_object_get(o, "node"));
		const char *m = json_string_value(json_object_get(o, "message"));
		if (node != NULL)
			snprintf(node, node_len, "%s", n ? n : "");
		if (msg != NULL)
			snprintf(msg, msg_len, "%s", m ? m : "");
		json_decref(o);
	} else if (msg != NULL) {
		snprintf(msg, msg_len, "%.*s", (int)a.body.len, a.body.data ? a.body.data : "");
	}
	http_answer_free(&a);
	return status;
}

static int place(const char *query, const char *name, unsigned cpu, const char *cls,
		 char *node, size_t node_len, char *msg, size_t msg_len)
{
	return place_on(port, query, name, cpu, cls, node, node_len, msg, msg_len);
}

static int delete_pod(const char *name)
{
	char path[128];
	snprintf(path, sizeof(path), "/v1/placements/w/%s", name);
	struct http_answer a;
	assert_int_equal(http_do(port, "DELETE", path, NULL, &a), 0);
	int s = a.status;
	http_answer_free(&a);
	return s;
}

static int get_pod(const char *name)
{
	char path[128];
	snprintf(path, sizeof(path), "/v1/placements/w/%s", name);
	struct http_answer a;
	assert_int_equal(http_do(port, "GET", path, NULL, &a), 0);
	int s = a.status;
	http_answer_free(&a);
	return s;
}

/* A request in a thread of its own, to do things while it waits. */
struct waiter {
	pthread_t thread;
	unsigned port;       /* 0: the test's gateway */
	const char *query, *name, *cls;
	unsigned cpu;
	int status;
	char node[64], msg[1024];
	uint64_t started_ns;
	double took_s;
	bool done;           /* atomic: set when answered */
};

static void *waiter_main(void *arg)
{
	struct waiter *w = arg;
	w->status = place_on(w->port ? w->port : port, w->query, w->name, w->cpu,
			     w->cls, w->node, sizeof(w->node), w->msg, sizeof(w->msg));
	w->took_s = secs_since(w->started_ns);
	/* Release: partner of the test's acquire load. */
	__atomic_store_n(&w->done, true, __ATOMIC_RELEASE);
	return NULL;
}

static void waiter_start(struct waiter *w)
{
	w->started_ns = now_ns();
	assert_int_equal(pthread_create(&w->thread, NULL, waiter_main, w), 0);
}

static bool waiter_done(struct waiter *w)
{
	return __atomic_load_n(&w->done, __ATOMIC_ACQUIRE);
}

/* --- the tests ---------------------------------------------------------- */

/* A pod that does not fit waits past the idle time-out, then a DELETE
 * through the gateway frees room and the waiting request answers placed.
 * ?wait=0 and no ?wait answer at once. */
static void test_wait_then_release(void **state)
{
	(void)state;
	char node[64], msg[1024];
	assert_int_equal(place("", "a", 1500, NULL, node, sizeof(node), msg,
			       sizeof(msg)), 200);
	assert_string_equal(node, "n0");
	/* Answered at once: 0, and no ?wait (the daemon runs without
	 * --wait, so flags 0 means no wait). */
	uint64_t t0 = now_ns();
	assert_int_equal(place("?wait=0", "c", 1000, NULL, node, sizeof(node), msg,
			       sizeof(msg)), 200);
	assert_string_equal(node, "");
	assert_non_null(strstr(msg, "Insufficient cpu"));
	assert_int_equal(place("", "c", 1000, NULL, node, sizeof(node), msg,
			       sizeof(msg)), 200);
	assert_string_equal(node, "");
	assert_true(secs_since(t0) < 5);
	assert_true(await_metric(UNSCHED, 0, 100) == 0);

	struct waiter w = {.query = "?wait=60", .name = "b", .cpu = 1000};
	waiter_start(&w);
	/* It waits in the daemon's queue ... */
	assert_true(await_metric(UNSCHED, 1, 10000) == 1);
	/* ... past the gateway's 2 s idle time-out, still unanswered. */
	sleep_ms(3000);
	assert_false(waiter_done(&w));
	assert_int_equal(get_pod("b"), 404); /* being placed: not placed yet */
	assert_int_equal(delete_pod("b"), 409);
	uint64_t freed = now_ns();
	assert_int_equal(delete_pod("a"), 200);
	assert_int_equal(pthread_join(w.thread, NULL), 0);
	print_message("gateway_wait: placed %.3f s after the release (%.3f s "
		      "in all)\n", secs_since(freed), w.took_s);
	assert_int_equal(w.status, 200);
	assert_string_equal(w.node, "n0");
	assert_true(secs_since(freed) < 10);
	assert_int_equal(get_pod("b"), 200);
	assert_true(await_metric(UNSCHED, 0, 5000) == 0);
	assert_int_equal(delete_pod("b"), 200);
}

/* A pod whose ?wait passes is answered unschedulable after about that
 * long: not before it, not long after (a slow machine: loose bounds). */
static void test_deadline(void **state)
{
	(void)state;
	char node[64], msg[1024];
	uint64_t t0 = now_ns();
	assert_int_equal(place("?wait=3", "big", 3000, NULL, node, sizeof(node), msg,
			       sizeof(msg)), 200);
	double took = secs_since(t0);
	print_message("gateway_wait: ?wait=3 answered after %.3f s: %s\n", took, msg);
	assert_string_equal(node, "");
	assert_non_null(strstr(msg, "deadline"));
	assert_non_null(strstr(msg, "Insufficient cpu"));
	assert_true(took >= 2.9);
	assert_true(took < 10);
	assert_int_equal(get_pod("big"), 404);
	assert_true(await_metric(UNSCHED, 0, 5000) == 0);
	assert_true(await_metric(BACKOFF, 0, 5000) == 0);
}

/* Bad ?wait values: 400, naming the parameter and the range. */
static void test_bad_values(void **state)
{
	(void)state;
	static const char *const bad[] = {
		"?wait=", "?wait", "?wait=-1", "?wait=+5", "?wait=1.5", "?wait=abc",
		"?wait=301", "?wait=4294967297", "?wait=99999999999999999999999",
		"?wait=%201", "?wait=1%00", "?wait=0x10",
	};
	char msg[1024];
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		int s = place(bad[i], "bad", 100, NULL, NULL, 0, msg, sizeof(msg));
		if (s != 400 || strstr(msg, "?wait=") == NULL ||
		    strstr(msg, "from 0 to 300") == NULL ||
		    strstr(msg, "\"reason\":\"BadRequest\"") == NULL)
			fail_msg("%s: %d %s", bad[i], s, msg);
	}
	assert_int_equal(get_pod("bad"), 404); /* nothing was submitted */
	/* The cap itself is taken. */
	assert_int_equal(place("?wait=300", "ok", 100, NULL, NULL, 0, msg,
			       sizeof(msg)), 200);
	assert_int_equal(delete_pod("ok"), 200);
}

/* A client that hangs up while its pod waits: the gateway cancels the
 * pod, so nothing stays parked in the daemon's queue. */
static void test_disconnect_while_waiting(void **state)
{
	(void)state;
	double cancels0 = metric("shmsched_gateway_cancels_total");
	double cancelled0 = metric("shmsched_gateway_pods_total{result=\"cancelled\"}");
	char body[512];
	pod_json(body, sizeof(body), "gone", 3000, NULL);
	int fd = http_connect(port);
	assert_true(fd >= 0);
	char head[256];
	int hl = snprintf(head, sizeof(head), "POST /v1/placements?wait=120 HTTP/1.1\r\n"
			  "Host: t\r\nContent-Length: %zu\r\n\r\n", strlen(body));
	assert_int_equal(http_send_all(fd, head, (size_t)hl), 0);
	assert_int_equal(http_send_all(fd, body, strlen(body)), 0);
	assert_true(await_metric(UNSCHED, 1, 10000) == 1);
	close(fd);
	uint64_t t0 = now_ns();
	assert_true(await_metric(UNSCHED, 0, 10000) == 0);
	print_message("gateway_wait: the parked pod left the queue %.3f s after "
		      "its client hung up\n", secs_since(t0));
	assert_true(await_metric(BACKOFF, 0, 5000) == 0);
	assert_true(await_metric(ACTIVE, 0, 5000) == 0);
	assert_true(metric("shmsched_gateway_cancels_total") >= cancels0 + 1);
	assert_true(await_metric("shmsched_gateway_requests_in_progress", 0, 5000) == 0);
	assert_true(metric("shmsched_gateway_pods_total{result=\"cancelled\"}") >=
		    cancelled0 + 1);
	assert_int_equal(get_pod("gone"), 404);
	/* The name is free again. */
	char msg[1024];
	assert_int_equal(place("?wait=0", "gone", 100, NULL, NULL, 0, msg, sizeof(msg)),
			 200);
	assert_int_equal(delete_pod("gone"), 200);
}

/* Preemption between two of the gateway's own pods: the victim (priority
 * 0) placed at once, then a waiting pod of class "high" (1000) that needs
 * its room. The daemon preempts (a waiting pod, no devices, ports or
 * inter-pod terms) and sends the victim's owner, the gateway, an EVICTED
 * notice: its record goes. */
static void test_evicted(void **state)
{
	(void)state;
	char node[64], msg[1024];
	double evicted0 = metric("shmsched_gateway_pods_evicted_total");
	double stray0 = metric("shmsched_gateway_stray_answers_total");
	assert_int_equal(place("", "victim", 1500, NULL, node, sizeof(node), msg,
			       sizeof(msg)), 200);
	assert_string_equal(node, "n0");
	assert_int_equal(get_pod("victim"), 200);
	assert_int_equal(place("?wait=20", "boss", 1500, "high", node, sizeof(node),
			       msg, sizeof(msg)), 200);
	if (strcmp(node, "n0") != 0)
		fail_msg("the high-priority pod was not placed: %s", msg);
	/* The notice comes on the gateway's next turns. */
	int s = get_pod("victim");
	for (int i = 0; i < 100 && s != 404; i++) {
		sleep_ms(50);
		s = get_pod("victim");
	}
	assert_int_equal(s, 404);
	assert_int_equal(delete_pod("victim"), 404);
	assert_true(metric("shmsched_gateway_pods_evicted_total") == evicted0 + 1);
	assert_true(metric("shmsched_gateway_stray_answers_total") == stray0);
	assert_true(metric("scheduler_preemption_attempts_total") >= 1);
	assert_true(metric("shmsched_preemption_victims_total") >= 1);
	assert_int_equal(get_pod("boss"), 200);
	assert_int_equal(delete_pod("boss"), 200);
}

/* A gateway stopping while a pod waits: it cancels the pod rather than
 * hold its stop for a second and answer "may have been placed"; the
 * client gets a line that says so, and the daemon's queue is empty. */
static void test_stop_while_waiting(void **state)
{
	(void)state;
	struct gateway_config cfg;
	gateway_config_default(&cfg);
	cfg.socket_path = sock;
	cfg.listen = "127.0.0.1:0";
	cfg.region_name = region;
	cfg.allow_anonymous = true; /* the budgets: stress.gateway_security */
	cfg.max_pods = 100000;
	cfg.max_slots_per_client = 100000000;
	cfg.max_connections_per_ip = 0;
	cfg.producer_name = "gw-wait-stop";
	char err[512];
	struct gateway *other;
	assert_int_equal(gateway_start(&cfg, &other, err, sizeof(err)), 0);
	struct waiter w = {.port = gateway_port(other), .query = "?wait=120",
			   .name = "stopped", .cpu = 3000};
	for (int i = 0; i < 500 && !gateway_ready(other); i++)
		sleep_ms(20);
	assert_true(gateway_ready(other));
	waiter_start(&w);
	assert_true(await_metric(UNSCHED, 1, 10000) == 1);
	uint64_t t0 = now_ns();
	gateway_stop(other);
	double took = secs_since(t0);
	assert_int_equal(pthread_join(w.thread, NULL), 0);
	print_message("gateway_wait: a gateway stopped in %.3f s with a pod "
		      "waiting: %d %s\n", took, w.status, w.msg);
	assert_int_equal(w.status, 200);
	assert_string_equal(w.node, "");
	assert_non_null(strstr(w.msg, "cancelled while it waited for a node: the "
				  "gateway is stopping"));
	assert_true(took < 5);
	assert_true(await_metric(UNSCHED, 0, 5000) == 0);
	assert_true(await_metric(BACKOFF, 0, 5000) == 0);
}

/* /metrics with the new series passes promtool, when it is installed. */
static void test_promtool(void **state)
{
	(void)state;
	if (system("command -v promtool >/dev/null 2>&1") != 0) {
		print_message("gateway_wait: no promtool: not checked\n");
		return;
	}
	struct http_answer a;
	assert_int_equal(http_do(port, "GET", "/metrics", NULL, &a), 0);
	assert_int_equal(a.status, 200);
	assert_non_null(strstr(a.body.data, "shmsched_gateway_pods_evicted_total"));
	char path[400], cmd[600];
	snprintf(path, sizeof(path), "%s/metrics.txt", dir);
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fwrite(a.body.data, 1, a.body.len, f);
	fclose(f);
	http_answer_free(&a);
	snprintf(cmd, sizeof(cmd), "promtool check metrics < %s", path);
	assert_int_equal(system(cmd), 0);
}

/* A waiting pod across a kill -9 of the daemon: the gateway submits it
 * again when the daemon is back, with the request's deadline. The
 * daemon comes back after the deadline, so the pod is answered
 * unschedulable at once: at about ?wait plus the restart, where a new
 * deadline would have added ?wait again. */
static void test_restart_keeps_deadline(void **state)
{
	(void)state;
	double resubmitted0 = metric("shmsched_gateway_pods_resubmitted_total");
	struct waiter w = {.query = "?wait=4", .name = "limbo", .cpu = 3000};
	waiter_start(&w);
	assert_true(await_metric(UNSCHED, 1, 10000) == 1);
	kill(daemon_pid, SIGKILL);
	waitpid(daemon_pid, NULL, 0);
	daemon_pid = 0;
	/* Down until past the deadline (4 s after the request). */
	while (secs_since(w.started_ns) < 4.5)
		sleep_ms(50);
	assert_false(waiter_done(&w));
	uint64_t back = now_ns();
	daemon_pid = start_daemon(false);
	uint64_t ready = now_ns();
	assert_int_equal(pthread_join(w.thread, NULL), 0);
	/* When it was answered, from the daemon's ready line: a deadline
	 * counted again from the resubmission would make it 4 s or more. */
	double after_ready = (double)((int64_t)(w.started_ns +
						(uint64_t)(w.took_s * 1e9)) -
				      (int64_t)ready) * 1e-9; /* < 0: before we saw it */
	print_message("gateway_wait: ?wait=4 across a restart answered after %.3f "
		      "s (the daemon took %.3f s to come back; %.3f s after it "
		      "did): %s\n", w.took_s, (double)(ready - back) * 1e-9,
		      after_ready, w.msg);
	assert_int_equal(w.status, 200);
	assert_string_equal(w.node, "");
	assert_non_null(strstr(w.msg, "deadline"));
	assert_true(w.took_s >= 4.5);
	assert_true(after_ready < 3);
	assert_true(metric("shmsched_gateway_pods_resubmitted_total") >=
		    resubmitted0 + 1);
	assert_true(wait_ready(10000));
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: %s SHMSCHEDD\n", argv[0]);
		return 2;
	}
	daemon_exe = argv[1];
	signal(SIGPIPE, SIG_IGN);
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_wait_then_release),
		cmocka_unit_test(test_deadline),
		cmocka_unit_test(test_bad_values),
		cmocka_unit_test(test_disconnect_while_waiting),
		cmocka_unit_test(test_evicted),
		cmocka_unit_test(test_stop_while_waiting),
		cmocka_unit_test(test_promtool),
		cmocka_unit_test(test_restart_keeps_deadline),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
