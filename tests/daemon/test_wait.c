/* stress.wait: waiting pods through the real daemon, in process, with the
 * client library (and, for kill -9, a producer process).
 *
 * Each case asserts counts that must come out exact:
 * - a release wakes exactly the pods it can help: of five waiting pods,
 *   three short of 1 cpu and two of memory, a release of 2 cpu wakes two
 *   of the three (all its room holds), and both are placed; the third and
 *   the two short of memory are not woken (hints_skipped 3);
 * - no pod waits forever: producers keep 600 pods waiting on a cluster
 *   that fits none, then nodes are added and placements released; every
 *   pod is placed exactly once, nothing is left pending, no overcommit;
 * - a deadline answers UNSCHEDULABLE, not before it, saying so;
 * - a producer's cancel answers CANCELLED; a cancel of nothing is ENOENT;
 * - shutdown answers every waiting pod CANCELLED;
 * - kill -9 of a producer with waiting pods: they are forgotten (counted),
 *   nothing pending, no placement or node use left behind;
 * - waiting pods hold their slots: submit takes no more than the region
 *   (back-pressure), and the daemon's --wait default, with NO_WAIT. */
#include <errno.h>
#include <inttypes.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "base/base.h"
#include "daemon/daemon.h"
#include "fixture.h"
#include "shmsched/client.h"
#include "shmsched/observe.h"

static struct fixture_dir fx;

static int setup(void **state)
{
	(void)state;
	fixture_dir_make(&fx, "wait", 0);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	fixture_dir_remove(&fx);
	return 0;
}

/* A Node of `cpu` cores and `mem_gi` GiB, tainted when `taint`. */
static void node_json(char *buf, size_t len, const char *name, int cpu, int mem_gi,
		      bool taint)
{
	snprintf(buf, len, "{\"kind\":\"Node\",\"metadata\":{\"name\":\"%s\"},"
		 "\"spec\":{%s},\"status\":{\"allocatable\":{\"cpu\":\"%d\","
		 "\"memory\":\"%dGi\",\"pods\":\"110\"}}}", name,
		 taint ? "\"taints\":[{\"key\":\"dedicated\",\"value\":\"gpu\","
			 "\"effect\":\"NoSchedule\"}]" : "", cpu, mem_gi);
}

static void write_nodes(const char *const *nodes, unsigned n)
{
	FILE *f = fopen(fx.cluster, "w");
	assert_non_null(f);
	fputs("{\"kind\":\"List\",\"items\":[", f);
	for (unsigned i = 0; i < n; i++)
		fprintf(f, "%s%s", i ? "," : "", nodes[i]);
	fputs("]}", f);
	fclose(f);
}

static struct daemon *start_named(unsigned workers, uint32_t slots,
				  bool wait_default, const char *name)
{
	struct daemon_config cfg = fixture_config(&fx);
	cfg.workers = workers;
	cfg.slots = slots;
	cfg.wait_default = wait_default;
	cfg.state_name = name;
	cfg.fresh = name != NULL;
	return fixture_start(&cfg);
}

static struct daemon *start(unsigned workers, uint32_t slots, bool wait_default)
{
	return start_named(workers, slots, wait_default, NULL);
}

static uint32_t pod_template(struct shmsched_client *c, const char *cpu,
			     const char *mem)
{
	char json[512];
	char cpu_s[32] = "", mem_s[32] = "";
	if (cpu != NULL)
		snprintf(cpu_s, sizeof(cpu_s), "\"cpu\":\"%s\"%s", cpu, mem ? "," : "");
	if (mem != NULL)
		snprintf(mem_s, sizeof(mem_s), "\"memory\":\"%s\"", mem);
	snprintf(json, sizeof(json), "{\"kind\":\"Pod\",\"metadata\":{\"name\":\"t\"},"
		 "\"spec\":{\"containers\":[{\"name\":\"c\",\"resources\":"
		 "{\"requests\":{%s%s}}}]}}", cpu_s, mem_s);
	return fixture_template(c, json);
}

static void submit(struct shmsched_client *c, uint32_t tid, uint64_t cookie,
		   uint16_t flags, uint64_t deadline_ns)
{
	struct shmsched_pod p = {.cookie = cookie, .template_id = tid,
				 .flags = flags, .deadline_ns = deadline_ns};
	assert_int_equal(shmsched_submit(c, &p, 1), 1);
}

/* Waits until the daemon's figure picked by `field` reads `want`. */
#define AWAIT_STAT(d, field, want)                                              \
	do {                                                                    \
		struct daemon_stats s_;                                         \
		uint64_t end_ = now_ns() + UINT64_C(10) * 1000000000u;          \
		for (;;) {                                                      \
			daemon_get_stats(d, &s_);                               \
			if (s_.field == (want) || now_ns() > end_)              \
				break;                                          \
			usleep(500);                                            \
		}                                                               \
		if (s_.field != (want))                                         \
			fail_msg(#field " is %" PRIu64 ", expected %" PRIu64,   \
				 (uint64_t)s_.field, (uint64_t)(want));         \
	} while (0)

static void test_release_wakes_exactly(void **state)
{
	(void)state;
	char n0[512], n1[512];
	node_json(n0, sizeof(n0), "n0", 2, 4, false);
	node_json(n1, sizeof(n1), "n1", 8, 16, true);
	const char *nodes[] = {n0, n1};
	write_nodes(nodes, 2);
	char region[64];
	snprintf(region, sizeof(region), "shmsched-wait-%d", (int)getpid());
	struct daemon *d = start_named(1, 64, false, region);
	struct shmsched_client *c = fixture_connect(fx.sock);
	uint32_t big = pod_template(c, "2", NULL);
	uint32_t cpu1 = pod_template(c, "1", NULL);
	uint32_t mem = pod_template(c, NULL, "8Gi");
	struct shmsched_result r[8];
	submit(c, big, 1, 0, 0);
	assert_int_equal(fixture_await(c, r, 1, 5000), 1);
	assert_int_equal(r[0].status, SHMSCHED_PLACED);
	uint64_t big_id = r[0].placement_id;
	for (uint64_t k = 0; k < 3; k++)
		submit(c, cpu1, 10 + k, SHMSCHED_WAIT, 0);
	for (uint64_t k = 0; k < 2; k++)
		submit(c, mem, 20 + k, SHMSCHED_WAIT, 0);
	AWAIT_STAT(d, pending_unschedulable, 5);
	AWAIT_STAT(d, waited, 5);
	assert_int_equal(fixture_await(c, r, 1, 100), 0); /* nothing answered */
	/* The big pod asked for cpu only: its release frees cpu on n0. */
	char err[256];
	assert_int_equal(shmsched_release(c, big_id, err, sizeof(err)), 0);
	assert_int_equal(fixture_await(c, r, 2, 5000), 2);
	for (int i = 0; i < 2; i++) {
		assert_int_equal(r[i].status, SHMSCHED_PLACED);
		assert_true(r[i].cookie >= 10 && r[i].cookie < 13);
	}
	AWAIT_STAT(d, pending_unschedulable, 3);
	struct daemon_stats ds;
	daemon_get_stats(d, &ds);
	print_message("release: events %" PRIu64 ", woken %" PRIu64 ", skipped %"
		      PRIu64 ", retries %" PRIu64 ", placed after waiting %" PRIu64
		      "\n", ds.queue_events, ds.queue_woken, ds.queue_hints_skipped,
		      ds.queue_retries, ds.waited_placed);
	assert_int_equal(ds.queue_woken, 2);
	assert_int_equal(ds.queue_hints_skipped, 3);
	assert_int_equal(ds.queue_retries, 2);
	assert_int_equal(ds.waited_placed, 2);
	assert_int_equal(fixture_await(c, r, 1, 200), 0);
	/* An observer reads the same in the state region, by kube's names. */
	struct shmsched_observer *obs;
	assert_int_equal(shmsched_observe_open(region, &obs, err, sizeof(err)), 0);
	struct shmsched_observe_worker ow[2];
	unsigned nw;
	assert_int_equal(shmsched_observe_workers(obs, ow, 2, &nw), 0);
	assert_int_equal(nw, 1);
	print_message("observed: attempts buckets %" PRIu64 " %" PRIu64 " %" PRIu64
		      " %" PRIu64 ", pending unschedulable %" PRIu64 "\n",
		      ow[0].attempts[0], ow[0].attempts[1], ow[0].attempts[2],
		      ow[0].attempts[3], ow[0].pending_unschedulable);
	assert_int_equal(ow[0].pending_unschedulable, 3);
	assert_int_equal(ow[0].pending_active + ow[0].pending_backoff, 0);
	assert_int_equal(ow[0].attempts[0], 1); /* the big pod, at once */
	assert_int_equal(ow[0].attempts[1], 2); /* two at their second attempt */
	assert_int_equal(ow[0].waited, 5);
	assert_int_equal(ow[0].waited_placed, 2);
	assert_int_equal(ow[0].queue_woken, 2);
	assert_int_equal(ow[0].placed, 3);
	shmsched_observe_close(obs);
	daemon_stop(d, 1000, &ds);
	/* The three still waiting are cancelled at shutdown. */
	assert_int_equal(fixture_await(c, r, 3, 5000), 3);
	for (int i = 0; i < 3; i++) {
		assert_int_equal(r[i].status, SHMSCHED_CANCELLED);
		assert_string_equal(r[i].message,
				    "the daemon shut down before placing this pod");
	}
	assert_int_equal(ds.cancelled_waiting_at_shutdown, 3);
	assert_int_equal(ds.pending_unschedulable + ds.pending_backoff +
			 ds.pending_active, 0);
	shmsched_disconnect(c);
	char rm[128];
	snprintf(rm, sizeof(rm), "/dev/shm/%s", region);
	unlink(rm);
}

static void test_deadline_and_cancel(void **state)
{
	(void)state;
	char n0[512];
	node_json(n0, sizeof(n0), "n0", 1, 4, false);
	const char *nodes[] = {n0};
	write_nodes(nodes, 1);
	struct daemon *d = start(1, 64, false);
	struct shmsched_client *c = fixture_connect(fx.sock);
	uint32_t two = pod_template(c, "2", NULL);
	struct shmsched_result r[4];
	/* 1 s: pod 1 must park before its deadline passes for ds.waited to
	 * count it; 300 ms was too little for an ASan build at load 18. */
	uint64_t deadline = now_ns() + 1000 * UINT64_C(1000000);
	submit(c, two, 1, SHMSCHED_WAIT, deadline);
	submit(c, two, 2, SHMSCHED_WAIT, 0);
	/* A deadline with NO_WAIT is refused; NO_WAIT is answered at once. */
	submit(c, two, 3, SHMSCHED_NO_WAIT, deadline);
	submit(c, two, 4, SHMSCHED_NO_WAIT, 0);
	/* Three answers, in whatever order a slow machine gives them: the
	 * refusal, the immediate one, and the deadline's. */
	struct shmsched_result got[3];
	assert_int_equal(shmsched_cancel(c, 99), -ENOENT);
	assert_int_equal(fixture_await(c, r, 3, 5000), 3);
	for (int i = 0; i < 3; i++) {
		assert_true(r[i].cookie == 1 || r[i].cookie == 3 || r[i].cookie == 4);
		got[r[i].cookie == 1 ? 0 : r[i].cookie == 3 ? 1 : 2] = r[i];
	}
	assert_int_equal(got[1].status, SHMSCHED_REJECTED);
	assert_non_null(strstr(got[1].message, "with NO_WAIT"));
	assert_int_equal(got[2].status, SHMSCHED_UNSCHEDULABLE);
	assert_int_equal(got[0].status, SHMSCHED_UNSCHEDULABLE);
	assert_true(got[0].complete_ns >= deadline);
	print_message("deadline: answered %.1f ms after it: %s\n",
		      (double)(got[0].complete_ns - deadline) / 1e6, got[0].message);
	assert_true(strncmp(got[0].message, "its deadline passed after ", 26) == 0);
	assert_non_null(strstr(got[0].message, "0/1 nodes are available: 1 "
				"Insufficient cpu."));
	assert_int_equal(shmsched_cancel(c, 2), 0);
	assert_int_equal(fixture_await(c, r, 1, 5000), 1);
	assert_int_equal(r[0].cookie, 2);
	assert_int_equal(r[0].status, SHMSCHED_CANCELLED);
	assert_string_equal(r[0].message,
			    "cancelled by its producer while it waited for a node");
	assert_int_equal(shmsched_cancel(c, 2), -ENOENT); /* answered: gone */
	struct daemon_stats ds;
	daemon_stop(d, 1000, &ds);
	assert_int_equal(ds.timed_out, 1);
	assert_int_equal(ds.cancelled_by_producer, 1);
	assert_int_equal(ds.waited, 2);
	assert_int_equal(shmsched_in_flight(c), 0);
	shmsched_disconnect(c);
}

/* Issue 41: the idle timeout (1 s here) closes a producer that registered
 * and then did nothing (it sees ECONNRESET), but not one whose pod waits
 * in the daemon's queue with no request meanwhile: that one can still
 * cancel its pod and is answered. Before the timeout the idle producer
 * kept its connection forever. */
static void test_idle_timeout(void **state)
{
	(void)state;
	char n0[512];
	node_json(n0, sizeof(n0), "n0", 1, 4, false);
	const char *nodes[] = {n0};
	write_nodes(nodes, 1);
	struct daemon_config cfg = fixture_config(&fx);
	cfg.idle_timeout_s = 1;
	struct daemon *d = fixture_start(&cfg);
	struct shmsched_client *idle = fixture_connect(fx.sock);
	struct shmsched_client *waiting = fixture_connect(fx.sock);
	(void)pod_template(idle, "1", NULL);
	uint32_t two = pod_template(waiting, "2", NULL);
	submit(waiting, two, 7, SHMSCHED_WAIT, 0);
	AWAIT_STAT(d, waited, 1);
	/* Past the timeout, the idle one is closed: its poll says so. */
	usleep(2500 * 1000);
	struct shmsched_result r[1];
	int rc = 0;
	uint64_t end = now_ns() + UINT64_C(5000000000);
	while ((rc = shmsched_poll(idle, r, 1)) == 0 && now_ns() < end)
		usleep(10 * 1000);
	assert_int_equal(rc, -ECONNRESET);
	/* The waiting one is still served: its cancel is answered. */
	assert_int_equal(shmsched_poll(waiting, r, 1), 0);
	assert_int_equal(shmsched_cancel(waiting, 7), 0);
	assert_int_equal(fixture_await(waiting, r, 1, 5000), 1);
	assert_int_equal(r[0].status, SHMSCHED_CANCELLED);
	assert_string_equal(r[0].message,
			    "cancelled by its producer while it waited for a node");
	daemon_stop(d, 1000, NULL);
	shmsched_disconnect(waiting);
	shmsched_disconnect(idle);
}

/* Waiting pods keep their slots: a region of 64 takes 64, no more. With
 * the daemon's --wait default a pod without flags waits too. */
static void test_back_pressure_and_default(void **state)
{
	(void)state;
	char n0[512];
	node_json(n0, sizeof(n0), "n0", 1, 4, false);
	const char *nodes[] = {n0};
	write_nodes(nodes, 1);
	struct daemon *d = start(1, 64, true);
	struct shmsched_client *c = fixture_connect(fx.sock);
	uint32_t two = pod_template(c, "2", NULL);
	struct shmsched_pod pods[100];
	for (unsigned i = 0; i < 100; i++)
		pods[i] = (struct shmsched_pod){.cookie = i, .template_id = two};
	assert_int_equal(shmsched_submit(c, pods, 100), 64);
	AWAIT_STAT(d, pending_unschedulable, 64);
	assert_int_equal(shmsched_submit(c, pods + 64, 36), 0);
	assert_int_equal(shmsched_in_flight(c), 64);
	for (uint64_t k = 0; k < 10; k++)
		assert_int_equal(shmsched_cancel(c, k), 0);
	struct shmsched_result r[16];
	assert_int_equal(fixture_await(c, r, 10, 5000), 10);
	assert_int_equal(shmsched_submit(c, pods + 64, 36), 10);
	AWAIT_STAT(d, pending_unschedulable, 64);
	struct daemon_stats ds;
	daemon_stop(d, 1000, &ds);
	assert_int_equal(ds.waited, 74);
	assert_int_equal(ds.cancelled_by_producer, 10);
	assert_int_equal(ds.cancelled_waiting_at_shutdown, 64);
	shmsched_disconnect(c);
}

/* A template's annotation shmsched.io/wait is its pods' default: below
 * the slot's flags, above the daemon's --wait. */
static uint32_t wait_template(struct shmsched_client *c, const char *wait)
{
	char json[512];
	snprintf(json, sizeof(json), "{\"kind\":\"Pod\",\"metadata\":{\"name\":"
		 "\"t\",\"annotations\":{\"shmsched.io/wait\":\"%s\"}},\"spec\":"
		 "{\"containers\":[{\"name\":\"c\",\"resources\":{\"requests\":"
		 "{\"cpu\":\"2\"}}}]}}", wait);
	return fixture_template(c, json);
}

static void test_template_default(void **state)
{
	(void)state;
	char n0[512];
	node_json(n0, sizeof(n0), "n0", 1, 4, false);
	const char *nodes[] = {n0};
	write_nodes(nodes, 1);
	for (int daemon_default = 0; daemon_default < 2; daemon_default++) {
		struct daemon *d = start(1, 64, daemon_default);
		struct shmsched_client *c = fixture_connect(fx.sock);
		uint32_t waits = wait_template(c, "true");
		uint32_t no = wait_template(c, "false");
		struct shmsched_result r[4];
		/* Each pod asks 2 cpus of a 1-cpu node: it never fits. */
		submit(c, waits, 1, 0, 0);               /* waits: the template */
		submit(c, no, 2, 0, 0);                  /* answered: the template */
		submit(c, waits, 3, SHMSCHED_NO_WAIT, 0); /* answered: the slot */
		submit(c, no, 4, SHMSCHED_WAIT, 0);      /* waits: the slot */
		assert_int_equal(fixture_await(c, r, 2, 5000), 2);
		uint64_t answered = r[0].cookie | r[1].cookie;
		assert_int_equal(answered, 2 | 3);
		for (unsigned k = 0; k < 2; k++)
			assert_int_equal(r[k].status, SHMSCHED_UNSCHEDULABLE);
		AWAIT_STAT(d, pending_unschedulable, 2);
		assert_int_equal(fixture_await(c, r, 1, 200), 0);
		struct daemon_stats ds;
		daemon_stop(d, 1000, &ds);
		assert_int_equal(ds.waited, 2);
		assert_int_equal(ds.cancelled_waiting_at_shutdown, 2);
		shmsched_disconnect(c);
	}
}

/* A producer killed with pods waiting: they are forgotten, and nothing
 * of theirs is left on the nodes or in the placement table. */
static void test_kill9_with_waiting(void **state)
{
	(void)state;
	char n0[512];
	node_json(n0, sizeof(n0), "n0", 4, 8, false);
	const char *nodes[] = {n0};
	write_nodes(nodes, 1);
	int *go = mmap(NULL, sizeof(int), PROT_READ | PROT_WRITE,
		       MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	assert_true(go != MAP_FAILED);
	*go = 0;
	fflush(NULL);
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		while (!__atomic_load_n(go, __ATOMIC_ACQUIRE))
			usleep(1000);
		struct shmsched_client *c;
		char err[256];
		if (shmsched_connect(fx.sock, &c, err, sizeof(err)) < 0)
			_exit(1);
		const char json[] = "{\"kind\":\"Pod\",\"metadata\":{\"name\":\"t\"},"
			"\"spec\":{\"containers\":[{\"name\":\"c\",\"resources\":"
			"{\"requests\":{\"cpu\":\"3\"}}}]}}";
		uint32_t tid;
		if (shmsched_register_template(c, json, strlen(json), &tid, err,
					       sizeof(err)) < 0)
			_exit(1);
		struct shmsched_pod p[50];
		for (unsigned i = 0; i < 50; i++)
			p[i] = (struct shmsched_pod){.cookie = i, .template_id = tid,
						     .flags = SHMSCHED_WAIT};
		if (shmsched_submit(c, p, 50) != 50)
			_exit(1);
		for (;;)
			pause();
	}
	struct daemon *d = start(1, 128, false);
	__atomic_store_n(go, 1, __ATOMIC_RELEASE);
	/* One of the 50 fits (3 cpu of 4); 49 wait. */
	AWAIT_STAT(d, pending_unschedulable, 49);
	struct daemon_stats before;
	daemon_get_stats(d, &before);
	assert_int_equal(before.placed, 1);
	assert_int_equal(before.placements, 1);
	kill(pid, SIGKILL);
	int st;
	assert_int_equal(waitpid(pid, &st, 0), pid);
	AWAIT_STAT(d, forgotten_with_producer, 49);
	AWAIT_STAT(d, pending_unschedulable, 0);
	struct daemon_stats ds;
	daemon_get_stats(d, &ds);
	/* Its one placement stays (its pod runs); nothing else is held. */
	assert_int_equal(ds.placements, 1);
	assert_int_equal(daemon_pods_on_nodes(d), 1);
	assert_int_equal(daemon_overcommits(d), 0);
	assert_int_equal(ds.pending_active + ds.pending_backoff, 0);
	daemon_stop(d, 1000, &ds);
	assert_int_equal(ds.cancelled_waiting_at_shutdown, 0);
	munmap(go, sizeof(int));
}

/* PrioritySort through the daemon: a low-priority pod waits first, a
 * high-priority one later; room for one comes free: the high one gets it.
 * PriorityClasses come from the cluster file and from an admin; a
 * template naming no class that exists is refused. */
static void test_priority_order(void **state)
{
	(void)state;
	char n0[512];
	node_json(n0, sizeof(n0), "n0", 2, 4, false);
	const char *nodes[] = {n0,
		"{\"kind\":\"PriorityClass\",\"apiVersion\":\"scheduling.k8s.io/v1\","
		"\"metadata\":{\"name\":\"batch\"},\"value\":-100}",
		"{\"kind\":\"PriorityClass\",\"metadata\":{\"name\":\"top\"},"
		"\"value\":5000}"};
	write_nodes(nodes, 3);
	struct daemon *d = start(1, 64, false);
	struct shmsched_client *c = fixture_connect(fx.sock);
	struct shmsched_client *a = fixture_connect(fx.admin);
	char err[512];
	const char high_class[] = "{\"kind\":\"PriorityClass\",\"metadata\":"
				  "{\"name\":\"high\"},\"value\":1000}";
	assert_int_equal(shmsched_priority_class(c, high_class, strlen(high_class),
						 err, sizeof(err)), -EPERM);
	assert_int_equal(shmsched_priority_class(a, high_class, strlen(high_class),
						 err, sizeof(err)), 0);
#define WITH_CLASS "{\"kind\":\"Pod\",\"metadata\":{\"name\":\"t\"}," \
		"\"spec\":{\"priorityClassName\":\"%s\",\"containers\":[{\"name\":" \
		"\"c\",\"resources\":{\"requests\":{\"cpu\":\"2\"}}}]}}"
	char json[512];
	uint32_t tid[3];
	const char *classes[] = {"batch", "high", "nope"};
	for (int i = 0; i < 3; i++) {
		snprintf(json, sizeof(json), WITH_CLASS, classes[i]);
		int rc = shmsched_register_template(c, json, strlen(json), &tid[i], err,
						    sizeof(err));
		if (i < 2) {
			assert_int_equal(rc, 0);
		} else {
			assert_int_equal(rc, -EINVAL);
			assert_non_null(strstr(err, "no PriorityClass with name nope "
					       "was found"));
		}
	}
	/* The pod in the way is above both: nobody preempts it. */
	uint32_t plain;
	snprintf(json, sizeof(json), WITH_CLASS, "top");
	assert_int_equal(shmsched_register_template(c, json, strlen(json), &plain, err,
						    sizeof(err)), 0);
	struct shmsched_result r[4];
	submit(c, plain, 1, 0, 0);
	assert_int_equal(fixture_await(c, r, 1, 5000), 1);
	assert_int_equal(r[0].status, SHMSCHED_PLACED);
	submit(c, tid[0], 2, SHMSCHED_WAIT, 0); /* batch, first */
	AWAIT_STAT(d, pending_unschedulable, 1);
	submit(c, tid[1], 3, SHMSCHED_WAIT, 0); /* high, later */
	AWAIT_STAT(d, pending_unschedulable, 2);
	/* Both woken past their backoff, so both are in activeQ together. */
	usleep(1100 * 1000);
	assert_int_equal(shmsched_release(c, r[0].placement_id, err, sizeof(err)), 0);
	assert_int_equal(fixture_await(c, r, 1, 5000), 1);
	assert_int_equal(r[0].cookie, 3);
	assert_int_equal(r[0].status, SHMSCHED_PLACED);
	AWAIT_STAT(d, pending_unschedulable, 1);
	struct daemon_stats ds;
	daemon_stop(d, 1000, &ds);
	assert_int_equal(fixture_await(c, r, 1, 5000), 1);
	assert_int_equal(r[0].cookie, 2);
	assert_int_equal(r[0].status, SHMSCHED_CANCELLED);
	shmsched_disconnect(c);
	shmsched_disconnect(a);
}

/* DefaultPreemption through the daemon: a waiting pod of priority 1000
 * evicts the pod of priority 0 whose node it needs; the victim's owner
 * (another producer) gets an EVICTED notice from poll naming the
 * placement and cookie, and the placement is gone. A pod whose class
 * says preemptionPolicy Never, and one of equal priority, wait instead. */
static void test_preemption(void **state)
{
	(void)state;
	char n0[512];
	node_json(n0, sizeof(n0), "n0", 2, 4, false);
	const char *nodes[] = {n0,
		"{\"kind\":\"PriorityClass\",\"metadata\":{\"name\":\"high\"},"
		"\"value\":1000}",
		"{\"kind\":\"PriorityClass\",\"metadata\":{\"name\":\"polite\"},"
		"\"value\":1000,\"preemptionPolicy\":\"Never\"}"};
	write_nodes(nodes, 3);
	struct daemon *d = start(1, 64, false);
	struct shmsched_client *low = fixture_connect(fx.sock), *hi = fixture_connect(fx.sock);
	char err[512], json[512];
	uint32_t plain = pod_template(low, "2", NULL);
	uint32_t tid[3];
	const char *classes[] = {"high", "polite", NULL};
	for (int i = 0; i < 3; i++) {
		if (classes[i] != NULL)
			snprintf(json, sizeof(json), WITH_CLASS, classes[i]);
		else
			snprintf(json, sizeof(json), "%s", "{\"kind\":\"Pod\","
				 "\"metadata\":{\"name\":\"t\"},\"spec\":{\"containers\":"
				 "[{\"name\":\"c\",\"resources\":{\"requests\":{\"cpu\":"
				 "\"2\"}}}]}}");
		assert_int_equal(shmsched_register_template(hi, json, strlen(json),
							    &tid[i], err, sizeof(err)), 0);
	}
	struct shmsched_result r[4];
	submit(low, plain, 77, 0, 0);
	assert_int_equal(fixture_await(low, r, 1, 5000), 1);
	assert_int_equal(r[0].status, SHMSCHED_PLACED);
	uint64_t victim_id = r[0].placement_id;
	/* Never, and equal priority: they wait, and nothing is evicted. */
	submit(hi, tid[1], 1, SHMSCHED_WAIT, 0);
	submit(hi, tid[2], 2, SHMSCHED_WAIT, 0);
	AWAIT_STAT(d, pending_unschedulable, 2);
	usleep(50000);
	struct daemon_stats ds;
	daemon_get_stats(d, &ds);
	assert_int_equal(ds.victims, 0);
	assert_int_equal(ds.placements, 1);
	/* The high one evicts the low one's pod and takes its place. */
	submit(hi, tid[0], 3, SHMSCHED_WAIT, 0);
	assert_int_equal(fixture_await(hi, r, 1, 5000), 1);
	assert_int_equal(r[0].cookie, 3);
	assert_int_equal(r[0].status, SHMSCHED_PLACED);
	uint64_t high_id = r[0].placement_id;
	assert_int_equal(fixture_await(low, r, 1, 5000), 1);
	assert_int_equal(r[0].status, SHMSCHED_EVICTED);
	assert_int_equal(r[0].placement_id, victim_id);
	assert_int_equal(r[0].cookie, 77);
	print_message("preemption: the victim's owner read: %s\n", r[0].message);
	/* The whole message, as the guide gives it (docs/guides/waiting-pods.md;
	 * EW3 in ingest/producers_preempt.c makes it without snprintf). */
	assert_string_equal(r[0].message, "preempted by a pod of priority 1000 "
			    "(its own: 0): what it held is given back");
	assert_int_equal(shmsched_in_flight(low), 0);
	assert_int_equal(shmsched_release(low, victim_id, err, sizeof(err)), -ENOENT);
	daemon_get_stats(d, &ds);
	assert_int_equal(ds.preempted, 1);
	assert_int_equal(ds.victims, 1);
	assert_int_equal(ds.notices, 1);
	assert_int_equal(ds.placements, 1);
	assert_int_equal(daemon_pods_on_nodes(d), 1);
	assert_int_equal(daemon_overcommits(d), 0);
	/* Its release frees the node: the two waiting pods get it in turn. */
	assert_int_equal(shmsched_release(hi, high_id, err, sizeof(err)), 0);
	assert_int_equal(fixture_await(hi, r, 1, 5000), 1);
	assert_int_equal(r[0].status, SHMSCHED_PLACED);
	daemon_stop(d, 1000, &ds);
	assert_int_equal(fixture_await(hi, r, 1, 5000), 1);
	assert_int_equal(r[0].status, SHMSCHED_CANCELLED);
	print_message("preemption: %" PRIu64 " requests, %" PRIu64 " placed by "
		      "preemption, %" PRIu64 " victims\n", ds.preemptions,
		      ds.preempted, ds.victims);
	shmsched_disconnect(low);
	shmsched_disconnect(hi);
}

/* More preemptions through the evictor than its ring holds (EVICT_REQUESTS,
 * 64 a worker): 160 full nodes, 160 waiting pods of priority 1000 each
 * evict one. Every preemptor is answered PLACED once with its own cookie,
 * every victim's owner told once with its own (or its notice counted lost);
 * nothing overcommitted.
 * daemon/evict.c EW4 serves each request in its ring record and gives it
 * back after: fails with a record not given back past the 40th (the
 * ring stalls: 41 answered, tried). */
#define MANY_NODES 160u
static void test_preemption_many(void **state)
{
	(void)state;
	static char bufs[MANY_NODES + 1][512];
	const char *nodes[MANY_NODES + 1];
	for (unsigned i = 0; i < MANY_NODES; i++) {
		char name[16];
		snprintf(name, sizeof(name), "m%u", i);
		node_json(bufs[i], sizeof(bufs[i]), name, 2, 4, false);
		nodes[i] = bufs[i];
	}
	nodes[MANY_NODES] = "{\"kind\":\"PriorityClass\",\"metadata\":{\"name\":"
			    "\"high\"},\"value\":1000}";
	write_nodes(nodes, MANY_NODES + 1);
	struct daemon *d = start(1, 512, false);
	struct shmsched_client *low = fixture_connect(fx.sock), *hi = fixture_connect(fx.sock);
	char json[512];
	uint32_t plain = pod_template(low, "2", NULL);
	snprintf(json, sizeof(json), WITH_CLASS, "high");
	uint32_t high = fixture_template(hi, json);
	static struct shmsched_result r[MANY_NODES];
	for (unsigned i = 0; i < MANY_NODES; i++)
		submit(low, plain, 5000 + i, 0, 0);
	assert_int_equal(fixture_await(low, r, MANY_NODES, 10000), MANY_NODES);
	for (unsigned i = 0; i < MANY_NODES; i++)
		assert_int_equal(r[i].status, SHMSCHED_PLACED);
	for (unsigned i = 0; i < MANY_NODES; i++)
		submit(hi, high, 1000 + i, SHMSCHED_WAIT, 0);
	bool seen[MANY_NODES] = {false};
	assert_int_equal(fixture_await(hi, r, MANY_NODES, 20000), MANY_NODES);
	for (unsigned i = 0; i < MANY_NODES; i++) {
		assert_int_equal(r[i].status, SHMSCHED_PLACED);
		assert_in_range(r[i].cookie, 1000, 1000 + MANY_NODES - 1);
		assert_false(seen[r[i].cookie - 1000]);
		seen[r[i].cookie - 1000] = true;
	}
	/* The owner, who did not poll meanwhile, holds 64 notices unread at
	 * most; the others are counted lost (shmsched_notices_lost). */
	memset(seen, 0, sizeof(seen));
	unsigned told = fixture_await(low, r, MANY_NODES, 1000);
	assert_int_equal(told + shmsched_notices_lost(low), MANY_NODES);
	assert_true(told > 0);
	for (unsigned i = 0; i < told; i++) {
		assert_int_equal(r[i].status, SHMSCHED_EVICTED);
		assert_in_range(r[i].cookie, 5000, 5000 + MANY_NODES - 1);
		assert_false(seen[r[i].cookie - 5000]);
		seen[r[i].cookie - 5000] = true;
	}
	struct daemon_stats ds;
	daemon_get_stats(d, &ds);
	assert_int_equal(ds.preempted, MANY_NODES);
	assert_int_equal(ds.victims, MANY_NODES);
	assert_int_equal(daemon_pods_on_nodes(d), MANY_NODES);
	assert_int_equal(daemon_overcommits(d), 0);
	daemon_stop(d, 1000, &ds);
	shmsched_disconnect(low);
	shmsched_disconnect(hi);
}

/* A 2-cpu template with label app=`app` in PriorityClass `cls`. */
static uint32_t app_template(struct shmsched_client *c, const char *app, const char *cls)
{
	char json[512];
	snprintf(json, sizeof(json), "{\"kind\":\"Pod\",\"metadata\":{\"name\":"
		 "\"t\",\"labels\":{\"app\":\"%s\"}},\"spec\":{\"priorityClassName\":"
		 "\"%s\",\"containers\":[{\"name\":\"c\",\"resources\":{\"requests\":"
		 "{\"cpu\":\"2\"}}}]}}", app, cls);
	return fixture_template(c, json);
}

/* PodDisruptionBudgets in the choice: two full nodes, the db pod (priority
 * 1) under a budget that allows no disruption, the web pod (priority 5)
 * under none. Without the budget the db pod is the victim (the lowest
 * highest priority); with it the web pod is (fewest violations come
 * first). A second preemptor still evicts the db pod: a budget is
 * respected where the choice allows, as kube-scheduler does. Then a
 * budget declared by an admin with maxUnavailable 1 allows one eviction,
 * counted down: the next choice between its pod and a pod of higher
 * priority takes the other pod; declared again, it allows one more. */
static void test_preemption_pdb(void **state)
{
	(void)state;
	char n0[512], n1[512];
	node_json(n0, sizeof(n0), "n0", 2, 4, false);
	node_json(n1, sizeof(n1), "n1", 2, 4, false);
	const char *nodes[] = {n0, n1,
		"{\"kind\":\"PriorityClass\",\"metadata\":{\"name\":\"p1\"},\"value\":1}",
		"{\"kind\":\"PriorityClass\",\"metadata\":{\"name\":\"p5\"},\"value\":5}",
		"{\"kind\":\"PriorityClass\",\"metadata\":{\"name\":\"high\"},"
		"\"value\":1000}",
		"{\"apiVersion\":\"policy/v1\",\"kind\":\"PodDisruptionBudget\","
		"\"metadata\":{\"name\":\"db\"},\"spec\":{\"minAvailable\":1,"
		"\"selector\":{\"matchLabels\":{\"app\":\"db\"}}},\"status\":"
		"{\"disruptionsAllowed\":0}}"};
	write_nodes(nodes, 6);
	struct daemon *d = start(1, 64, false);
	struct shmsched_client *low = fixture_connect(fx.sock), *hi = fixture_connect(fx.sock);
	struct shmsched_client *a = fixture_connect(fx.admin);
	uint32_t db = app_template(low, "db", "p1"), web = app_template(low, "web", "p5");
	uint32_t top = app_template(hi, "top", "high");
	struct shmsched_result r[4];
	submit(low, db, 1, 0, 0);
	submit(low, web, 2, 0, 0);
	assert_int_equal(fixture_await(low, r, 2, 5000), 2);
	for (int i = 0; i < 2; i++)
		assert_int_equal(r[i].status, SHMSCHED_PLACED);
	submit(hi, top, 10, SHMSCHED_WAIT, 0);
	assert_int_equal(fixture_await(hi, r, 1, 5000), 1);
	assert_int_equal(r[0].status, SHMSCHED_PLACED);
	assert_int_equal(fixture_await(low, r, 1, 5000), 1);
	assert_int_equal(r[0].status, SHMSCHED_EVICTED);
	assert_int_equal(r[0].cookie, 2); /* web: the budget kept db */
	submit(hi, top, 11, SHMSCHED_WAIT, 0);
	assert_int_equal(fixture_await(hi, r, 1, 5000), 1);
	assert_int_equal(r[0].status, SHMSCHED_PLACED);
	assert_int_equal(fixture_await(low, r, 1, 5000), 1);
	assert_int_equal(r[0].status, SHMSCHED_EVICTED);
	assert_int_equal(r[0].cookie, 1); /* db: no other way */
	struct daemon_stats ds;
	daemon_get_stats(d, &ds);
	assert_int_equal(ds.victims, 2);
	assert_int_equal(daemon_overcommits(d), 0);
	daemon_stop(d, 1000, &ds);
	shmsched_disconnect(low);
	shmsched_disconnect(hi);
	shmsched_disconnect(a);

	/* maxUnavailable 1, declared by an admin: one disruption, then none. */
	d = start(1, 64, false);
	low = fixture_connect(fx.sock);
	hi = fixture_connect(fx.sock);
	a = fixture_connect(fx.admin);
	char err[512];
	const char *pdb = "{\"apiVersion\":\"policy/v1\",\"kind\":"
		"\"PodDisruptionBudget\",\"metadata\":{\"name\":\"cache\"},\"spec\":"
		"{\"maxUnavailable\":1,\"selector\":{\"matchLabels\":{\"app\":"
		"\"cache\"}}}}";
	assert_int_equal(shmsched_priority_class(a, pdb, strlen(pdb), err, sizeof(err)), 0);
	uint32_t cache = app_template(low, "cache", "p1");
	uint32_t web5 = app_template(low, "web", "p5");
	top = app_template(hi, "top", "high");
	submit(low, cache, 1, 0, 0);
	submit(low, web5, 2, 0, 0);
	assert_int_equal(fixture_await(low, r, 2, 5000), 2);
	/* One disruption allowed: the cache pod (lowest priority) goes. */
	submit(hi, top, 10, SHMSCHED_WAIT, 0);
	assert_int_equal(fixture_await(hi, r, 1, 5000), 1);
	assert_int_equal(r[0].status, SHMSCHED_PLACED);
	uint64_t top_id = r[0].placement_id;
	assert_int_equal(fixture_await(low, r, 1, 5000), 1);
	assert_int_equal(r[0].status, SHMSCHED_EVICTED);
	assert_int_equal(r[0].cookie, 1);
	/* A new cache pod where it was; none allowed now, so the web pod
	 * goes, though the cache pod's priority is lower. */
	assert_int_equal(shmsched_release(hi, top_id, err, sizeof(err)), 0);
	submit(low, cache, 3, 0, 0);
	assert_int_equal(fixture_await(low, r, 1, 5000), 1);
	assert_int_equal(r[0].status, SHMSCHED_PLACED);
	submit(hi, top, 11, SHMSCHED_WAIT, 0);
	assert_int_equal(fixture_await(hi, r, 1, 5000), 1);
	assert_int_equal(r[0].status, SHMSCHED_PLACED);
	assert_int_equal(fixture_await(low, r, 1, 5000), 1);
	assert_int_equal(r[0].status, SHMSCHED_EVICTED);
	assert_int_equal(r[0].cookie, 2);
	/* Declared again: the count starts over, the cache pod goes. */
	assert_int_equal(shmsched_priority_class(a, pdb, strlen(pdb), err, sizeof(err)), 0);
	submit(hi, top, 12, SHMSCHED_WAIT, 0);
	assert_int_equal(fixture_await(hi, r, 1, 5000), 1);
	assert_int_equal(r[0].status, SHMSCHED_PLACED);
	assert_int_equal(fixture_await(low, r, 1, 5000), 1);
	assert_int_equal(r[0].status, SHMSCHED_EVICTED);
	assert_int_equal(r[0].cookie, 3);
	assert_int_equal(daemon_overcommits(d), 0);
	daemon_stop(d, 1000, &ds);
	shmsched_disconnect(low);
	shmsched_disconnect(hi);
	shmsched_disconnect(a);
}

/* A Pod JSON of `cpu` cores in pod group `group` (its gang). */
static uint32_t gang_template(struct shmsched_client *c, const char *group,
			      const char *cpu)
{
	char json[512];
	snprintf(json, sizeof(json), "{\"kind\":\"Pod\",\"metadata\":{\"name\":"
		 "\"t\",\"labels\":{\"scheduling.x-k8s.io/pod-group\":\"%s\"}},"
		 "\"spec\":{\"containers\":[{\"name\":\"c\",\"resources\":"
		 "{\"requests\":{\"cpu\":\"%s\"}}}]}}", group, cpu);
	return fixture_template(c, json);
}

/* Gangs, by hand: three pods of 3 cpu on two nodes of 4 cpu cannot all be
 * placed, so none is (the two that fit are rolled back: nothing on the
 * nodes, and two release events); a third node places all three at once. A gang that gathers 2
 * of its minMember 3 within its 1 s timeout has both answered so. A
 * template naming no declared PodGroup is refused. */
static void test_gang_by_hand(void **state)
{
	(void)state;
	char n0[512], n1[512];
	node_json(n0, sizeof(n0), "n0", 4, 8, false);
	node_json(n1, sizeof(n1), "n1", 4, 8, false);
	const char *nodes[] = {n0, n1,
		"{\"kind\":\"PodGroup\",\"apiVersion\":\"scheduling.x-k8s.io/v1alpha1\","
		"\"metadata\":{\"name\":\"trio\"},\"spec\":{\"minMember\":3}}",
		"{\"kind\":\"PodGroup\",\"metadata\":{\"name\":\"slow\"},"
		"\"spec\":{\"minMember\":3,\"scheduleTimeoutSeconds\":1}}"};
	write_nodes(nodes, 4);
	struct daemon *d = start(1, 64, false);
	struct shmsched_client *c = fixture_connect(fx.sock), *a = fixture_connect(fx.admin);
	char err[512], json[512];
	uint32_t trio = gang_template(c, "trio", "3");
	uint32_t slow = gang_template(c, "slow", "100m");
	snprintf(json, sizeof(json), "{\"kind\":\"Pod\",\"metadata\":{\"name\":"
		 "\"t\",\"labels\":{\"scheduling.x-k8s.io/pod-group\":\"nope\"}},"
		 "\"spec\":{\"containers\":[{\"name\":\"c\"}]}}");
	uint32_t tid;
	assert_int_equal(shmsched_register_template(c, json, strlen(json), &tid, err,
						    sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "no PodGroup default/nope was declared"));
	struct shmsched_result r[4];
	for (uint64_t k = 0; k < 3; k++)
		submit(c, trio, k, 0, 0); /* a gang's pods wait without asking */
	AWAIT_STAT(d, pending_unschedulable, 3);
	AWAIT_STAT(d, gang_failures, 1);
	AWAIT_STAT(d, gang_rollbacks, 1); /* two were committed, then given back */
	assert_int_equal(daemon_pods_on_nodes(d), 0);
	/* The two given back were published as releases (another's pod may
	 * have failed for their room), and the gang's worker read them
	 * without waking the gang for them: that would repeat its attempt
	 * for ever. */
	AWAIT_STAT(d, queue_events, 2);
	assert_int_equal(fixture_await(c, r, 1, 200), 0);
	struct daemon_stats ds;
	daemon_get_stats(d, &ds);
	assert_int_equal(ds.queue_woken, 0);
	assert_int_equal(ds.gang_failures, 1);
	char n2[512];
	node_json(n2, sizeof(n2), "n2", 4, 8, false);
	assert_int_equal(shmsched_node_event(a, SHMSCHED_NODE_ADD, n2, strlen(n2), err,
					     sizeof(err)), 0);
	assert_int_equal(fixture_await(c, r, 3, 5000), 3);
	for (int i = 0; i < 3; i++)
		assert_int_equal(r[i].status, SHMSCHED_PLACED);
	assert_int_equal(daemon_pods_on_nodes(d), 3);
	submit(c, slow, 10, 0, 0);
	submit(c, slow, 11, 0, 0);
	assert_int_equal(fixture_await(c, r, 2, 5000), 2);
	for (int i = 0; i < 2; i++) {
		assert_int_equal(r[i].status, SHMSCHED_UNSCHEDULABLE);
		assert_non_null(strstr(r[i].message, "pod group default/slow: 2 of its "
				       "minMember 3 pods came within 1 s"));
	}
	daemon_stop(d, 1000, &ds);
	assert_int_equal(ds.gangs_placed, 1);
	assert_int_equal(ds.gang_timeouts, 1);
	shmsched_disconnect(c);
	shmsched_disconnect(a);
}

/* A gang whose pods come from two producers of one worker: placed whole,
 * each producer answered for its own pods, through its own completion
 * ring (gang_try hands a placed gang's answers back one completion per
 * run of one producer's pods: the run ends where the producer changes). */
static void test_gang_of_two_producers(void **state)
{
	(void)state;
	char n0[512], n1[512];
	node_json(n0, sizeof(n0), "n0", 4, 8, false);
	node_json(n1, sizeof(n1), "n1", 4, 8, false);
	const char *nodes[] = {n0, n1,
		"{\"kind\":\"PodGroup\",\"metadata\":{\"name\":\"pair\"},"
		"\"spec\":{\"minMember\":4}}"};
	write_nodes(nodes, 3);
	struct daemon *d = start(1, 64, false);
	struct shmsched_client *c[2] = {fixture_connect(fx.sock),
					fixture_connect(fx.sock)};
	uint32_t t[2] = {gang_template(c[0], "pair", "1"),
			 gang_template(c[1], "pair", "1")};
	for (uint64_t k = 0; k < 4; k++)
		submit(c[k % 2], t[k % 2], k, 0, 0);
	for (int p = 0; p < 2; p++) {
		struct shmsched_result r[4];
		assert_int_equal(fixture_await(c[p], r, 2, 5000), 2);
		uint64_t cookies = 0;
		for (int i = 0; i < 2; i++) {
			assert_int_equal(r[i].status, SHMSCHED_PLACED);
			assert_int_equal(r[i].cookie % 2, (uint64_t)p);
			cookies += r[i].cookie;
		}
		assert_int_equal(cookies, p == 0 ? 0 + 2 : 1 + 3);
	}
	assert_int_equal(daemon_pods_on_nodes(d), 4);
	struct daemon_stats ds;
	daemon_stop(d, 1000, &ds);
	assert_int_equal(ds.gangs_placed, 1);
	shmsched_disconnect(c[0]);
	shmsched_disconnect(c[1]);
}

/* Gangs of one spec (issue 39): six PodGroups whose pods differ only in
 * their gang's label are one class for the worker (a class per gang
 * before: six compiled and indexed), and all or nothing holds over the
 * shared class: on 4 nodes of 4 cpu, five gangs of 3 pods of 1 cpu are
 * placed (15 cpu); the sixth finds room for one pod, which is given back,
 * and none of it is placed until a node is added. */
static void test_gangs_share_a_class(void **state)
{
	(void)state;
	enum { GANGS = 6, NODES = 4 };
	char node[NODES + 1][512], group[GANGS][256], name[16];
	const char *items[NODES + GANGS];
	for (int i = 0; i <= NODES; i++) {
		snprintf(name, sizeof(name), "n%d", i);
		node_json(node[i], sizeof(node[i]), name, 4, 8, false);
		if (i < NODES)
			items[i] = node[i];
	}
	for (int g = 0; g < GANGS; g++) {
		snprintf(group[g], sizeof(group[g]), "{\"kind\":\"PodGroup\",\"metadata\":"
			 "{\"name\":\"g%d\"},\"spec\":{\"minMember\":3}}", g);
		items[NODES + g] = group[g];
	}
	write_nodes(items, NODES + GANGS);
	struct daemon *d = start(1, 64, false);
	struct shmsched_client *c = fixture_connect(fx.sock), *a = fixture_connect(fx.admin);
	uint32_t tid[GANGS];
	for (int g = 0; g < GANGS; g++) {
		snprintf(name, sizeof(name), "g%d", g);
		tid[g] = gang_template(c, name, "1");
	}
	struct shmsched_result r[3 * GANGS];
	for (int g = 0; g < GANGS - 1; g++)
		for (int k = 0; k < 3; k++)
			submit(c, tid[g], (uint64_t)(3 * g + k), 0, 0);
	assert_int_equal(fixture_await(c, r, 3 * (GANGS - 1), 5000), 3 * (GANGS - 1));
	for (int i = 0; i < 3 * (GANGS - 1); i++)
		assert_int_equal(r[i].status, SHMSCHED_PLACED);
	for (int k = 0; k < 3; k++)
		submit(c, tid[GANGS - 1], (uint64_t)(3 * (GANGS - 1) + k), 0, 0);
	AWAIT_STAT(d, gang_rollbacks, 1); /* one committed, then given back */
	assert_int_equal(daemon_pods_on_nodes(d), 3 * (GANGS - 1));
	assert_int_equal(fixture_await(c, r, 1, 200), 0);
	char err[512];
	assert_int_equal(shmsched_node_event(a, SHMSCHED_NODE_ADD, node[NODES],
					     strlen(node[NODES]), err, sizeof(err)), 0);
	assert_int_equal(fixture_await(c, r, 3, 5000), 3);
	for (int i = 0; i < 3; i++)
		assert_int_equal(r[i].status, SHMSCHED_PLACED);
	assert_int_equal(daemon_pods_on_nodes(d), 3 * GANGS);
	assert_int_equal(daemon_overcommits(d), 0);
	struct daemon_stats ds;
	daemon_stop(d, 1000, &ds);
	print_message("%d gangs of one spec: %" PRIu64 " class(es) made, %" PRIu64
		      " flush(es), %" PRIu64 " gangs placed, %" PRIu64 " rollback(s)\n",
		      GANGS, ds.caches.classes, ds.caches.class_flushes,
		      ds.gangs_placed, ds.gang_rollbacks);
	assert_int_equal(ds.gangs_placed, GANGS);
	/* One class, made again after the node event flushed the cache (a
	 * class per gang before: 6 and more). */
	assert_true(ds.caches.classes <= ds.caches.class_flushes);
	shmsched_disconnect(c);
	shmsched_disconnect(a);
}

/* A template whose spec carries `ref` (a workloadRef or schedulingGroup),
 * of `cpu` cores. */
static uint32_t ref_template(struct shmsched_client *c, const char *ref, const char *cpu)
{
	char json[512];
	snprintf(json, sizeof(json), "{\"kind\":\"Pod\",\"metadata\":{\"name\":"
		 "\"t\"},\"spec\":{%s,\"containers\":[{\"name\":\"c\",\"resources\":"
		 "{\"requests\":{\"cpu\":\"%s\"}}}]}}", ref, cpu);
	return fixture_template(c, json);
}

/* Kubernetes' own gangs through the daemon: a 1.35 Workload declared by
 * an admin (two pod groups: a gang of 2, a basic one), pods naming it by
 * spec.workloadRef, two replicas of the gang (replica keys) each placed
 * whole on its own, the basic group's pod placed alone at once; and a
 * 1.36 PodGroup from the cluster file named by spec.schedulingGroup. */
static void test_kube_gangs(void **state)
{
	(void)state;
	char n0[512];
	node_json(n0, sizeof(n0), "n0", 16, 32, false);
	const char *nodes[] = {n0,
		"{\"kind\":\"PodGroup\",\"apiVersion\":\"scheduling.k8s.io/v1alpha2\","
		"\"metadata\":{\"name\":\"pg\"},\"spec\":{\"schedulingPolicy\":"
		"{\"gang\":{\"minCount\":3}}}}"};
	write_nodes(nodes, 2);
	struct daemon *d = start(1, 64, false);
	struct shmsched_client *c = fixture_connect(fx.sock), *a = fixture_connect(fx.admin);
	char err[512];
	const char *wl = "{\"kind\":\"Workload\",\"apiVersion\":\"scheduling.k8s.io/"
		"v1alpha1\",\"metadata\":{\"name\":\"train\"},\"spec\":{\"podGroups\":"
		"[{\"name\":\"workers\",\"policy\":{\"gang\":{\"minCount\":2}}},"
		"{\"name\":\"driver\",\"policy\":{\"basic\":{}}}]}}";
	assert_int_equal(shmsched_priority_class(a, wl, strlen(wl), err, sizeof(err)), 0);
	uint32_t r0 = ref_template(c, "\"workloadRef\":{\"name\":\"train\",\"podGroup\":"
				   "\"workers\",\"podGroupReplicaKey\":\"0\"}", "1");
	uint32_t r1 = ref_template(c, "\"workloadRef\":{\"name\":\"train\",\"podGroup\":"
				   "\"workers\",\"podGroupReplicaKey\":\"1\"}", "1");
	uint32_t drv = ref_template(c, "\"workloadRef\":{\"name\":\"train\",\"podGroup\":"
				    "\"driver\"}", "1");
	uint32_t pg = ref_template(c, "\"schedulingGroup\":{\"podGroupName\":\"pg\"}", "1");
	struct shmsched_result r[4];
	/* The driver (basic) is answered at once, alone. */
	submit(c, drv, 100, 0, 0);
	assert_int_equal(fixture_await(c, r, 1, 5000), 1);
	assert_int_equal(r[0].status, SHMSCHED_PLACED);
	/* One pod of each replica: neither gang has gathered 2. */
	submit(c, r0, 0, 0, 0);
	submit(c, r1, 10, 0, 0);
	assert_int_equal(fixture_await(c, r, 1, 300), 0);
	/* Replica 0's second pod: replica 0 is placed whole; 1 still waits. */
	submit(c, r0, 1, 0, 0);
	assert_int_equal(fixture_await(c, r, 2, 5000), 2);
	for (int i = 0; i < 2; i++) {
		assert_int_equal(r[i].status, SHMSCHED_PLACED);
		assert_true(r[i].cookie < 10);
	}
	assert_int_equal(fixture_await(c, r, 1, 300), 0);
	submit(c, r1, 11, 0, 0);
	assert_int_equal(fixture_await(c, r, 2, 5000), 2);
	for (int i = 0; i < 2; i++)
		assert_true(r[i].status == SHMSCHED_PLACED && r[i].cookie >= 10);
	/* The 1.36 PodGroup of the cluster file: 3 together. */
	for (uint64_t k = 0; k < 3; k++)
		submit(c, pg, 20 + k, 0, 0);
	assert_int_equal(fixture_await(c, r, 3, 5000), 3);
	for (int i = 0; i < 3; i++)
		assert_int_equal(r[i].status, SHMSCHED_PLACED);
	assert_int_equal(daemon_pods_on_nodes(d), 8);
	struct daemon_stats ds;
	daemon_stop(d, 1000, &ds);
	assert_int_equal(ds.gangs_placed, 3);
	shmsched_disconnect(c);
	shmsched_disconnect(a);
}

/* Gangs under concurrent workers: 4 producers on 2 workers, 40 gangs of
 * 4 pods of 1 cpu on 16 cpu: at most 4 gangs fit at a time, and gangs
 * placed are released whole a little later. Two workers commit gangs on
 * the same nodes at once, so attempts collide and roll back. The
 * invariant: no gang ever has some pods PLACED and others answered
 * otherwise, and every gang ends placed whole (partial gangs: 0). A
 * rollback told no one once, so a gang that failed for its room could
 * wait for ever: 1 of 40 stayed unplaced in a CI run (TSan, 60 s). */
static void test_gangs_all_or_nothing(void **state)
{
	(void)state;
	enum { PRODUCERS = 4, GANGS = 10, SIZE = 4, ALL = PRODUCERS * GANGS };
	char nodes_json[4][512];
	static char groups[ALL][256];
	const char *items[4 + ALL];
	for (int i = 0; i < 4; i++) {
		char name[8];
		snprintf(name, sizeof(name), "n%d", i);
		node_json(nodes_json[i], sizeof(nodes_json[i]), name, 4, 64, false);
		items[i] = nodes_json[i];
	}
	for (int g = 0; g < ALL; g++) {
		snprintf(groups[g], sizeof(groups[g]), "{\"kind\":\"PodGroup\","
			 "\"metadata\":{\"name\":\"g%d\"},\"spec\":{\"minMember\":%d}}",
			 g, SIZE);
		items[4 + g] = groups[g];
	}
	write_nodes(items, 4 + ALL);
	struct daemon *d = start(2, 256, false);
	struct shmsched_client *c[PRODUCERS];
	static uint8_t placed[ALL], other[ALL];
	static uint64_t ids[ALL][SIZE];
	static uint64_t whole_at[ALL];
	memset(placed, 0, sizeof(placed));
	memset(other, 0, sizeof(other));
	memset(whole_at, 0, sizeof(whole_at));
	for (int p = 0; p < PRODUCERS; p++) {
		c[p] = fixture_connect(fx.sock);
		for (int g = 0; g < GANGS; g++) {
			char name[16];
			int gid = p * GANGS + g;
			snprintf(name, sizeof(name), "g%d", gid);
			uint32_t tid = gang_template(c[p], name, "1");
			for (int k = 0; k < SIZE; k++)
				submit(c[p], tid, (uint64_t)gid * SIZE + (uint64_t)k, 0, 0);
		}
	}
	unsigned whole = 0, released = 0;
	uint64_t over = 0;
	uint64_t end = now_ns() + UINT64_C(60) * 1000000000u;
	while (released < ALL && now_ns() < end) {
		for (int p = 0; p < PRODUCERS; p++) {
			struct shmsched_result r[64];
			int n = shmsched_poll(c[p], r, 64);
			assert_true(n >= 0);
			for (int k = 0; k < n; k++) {
				int gid = (int)(r[k].cookie / SIZE);
				assert_true(gid >= p * GANGS && gid < (p + 1) * GANGS);
				if (r[k].status != SHMSCHED_PLACED) {
					other[gid]++;
					continue;
				}
				ids[gid][placed[gid]++] = r[k].placement_id;
				if (placed[gid] == SIZE) {
					whole++;
					whole_at[gid] = now_ns();
				}
			}
			/* A whole gang runs 5 ms, then ends whole. */
			for (int g = p * GANGS; g < (p + 1) * GANGS; g++) {
				if (whole_at[g] == 0 || now_ns() - whole_at[g] < 5000000)
					continue;
				char err[256];
				for (int k = 0; k < SIZE; k++)
					assert_int_equal(shmsched_release(c[p], ids[g][k], err,
									  sizeof(err)), 0);
				whole_at[g] = 0;
				released++;
			}
		}
		over += daemon_overcommits(d);
		usleep(500);
	}
	unsigned partial = 0;
	for (int g = 0; g < ALL; g++) {
		partial += (placed[g] != 0 && placed[g] != SIZE) ||
			   (placed[g] != 0 && other[g] != 0);
		if (placed[g] != SIZE)
			print_message("gang g%d: %u placed, %u answered otherwise\n", g,
				      placed[g], other[g]);
	}
	struct daemon_stats ds;
	daemon_get_stats(d, &ds);
	print_message("gangs: %d gangs of %d on 2 workers: %u placed whole, %u "
		      "released, %" PRIu64 " attempts placed none (%" PRIu64 " after "
		      "committing some), partial gangs %u, overcommits %" PRIu64 "; "
		      "queue: %" PRIu64 " events, %" PRIu64 " woken, %" PRIu64
		      " unschedulable now\n",
		      ALL, SIZE, whole, released, ds.gang_failures, ds.gang_rollbacks,
		      partial, over, ds.queue_events, ds.queue_woken,
		      ds.pending_unschedulable);
	assert_int_equal(partial, 0);
	assert_int_equal(whole, ALL);
	assert_int_equal(released, ALL);
	assert_int_equal(over, 0);
	assert_int_equal(ds.gangs_placed, ALL);
	/* Gangs did wait and try again. Rollbacks after a partial commit
	 * (two workers' gangs colliding) are printed, not required: how the
	 * two cores interleave the workers decides them (0 to 40 in runs
	 * here); test_gang_by_hand steps one deterministically. */
	assert_true(ds.gang_failures > 0);
	assert_int_equal(daemon_pods_on_nodes(d), 0);
	daemon_stop(d, 1000, &ds);
	for (int p = 0; p < PRODUCERS; p++)
		shmsched_disconnect(c[p]);
}

/* Churn: 40 nodes of 4 cpu filled with 80 pods of 2 cpu; 60 pods of 2 cpu
 * wait; 60 of the fill pods are released one by one. Each release leaves
 * room for one waiting pod, and every waiting pod is placed within
 * seconds: a pod woken for one node's room and placed on another leaves
 * the first node's room to the next (the hint publishes it again). */
static void test_churn_every_release_places(void **state)
{
	(void)state;
	enum { NODES = 40, FILL = 2 * NODES, WAITING = 60 };
	char json[NODES][512];
	const char *items[NODES];
	for (int i = 0; i < NODES; i++) {
		char name[8];
		snprintf(name, sizeof(name), "n%d", i);
		node_json(json[i], sizeof(json[i]), name, 4, 16, false);
		items[i] = json[i];
	}
	write_nodes(items, NODES);
	struct daemon *d = start(1, 256, false);
	struct shmsched_client *f = fixture_connect(fx.sock), *p = fixture_connect(fx.sock);
	uint32_t fill = pod_template(f, "2", "1Gi"), want = pod_template(p, "2", "1Gi");
	static uint64_t ids[FILL];
	struct shmsched_result r[64];
	for (uint64_t k = 0; k < FILL; k++)
		submit(f, fill, k, 0, 0);
	assert_int_equal(fixture_await(f, r, 64, 5000), 64);
	for (int k = 0; k < 64; k++)
		ids[r[k].cookie] = r[k].placement_id;
	assert_int_equal(fixture_await(f, r, FILL - 64, 5000), FILL - 64);
	for (int k = 0; k < FILL - 64; k++)
		ids[r[k].cookie] = r[k].placement_id;
	for (uint64_t k = 0; k < WAITING; k++)
		submit(p, want, k, SHMSCHED_WAIT, 0);
	AWAIT_STAT(d, pending_unschedulable, WAITING);
	uint64_t t0 = now_ns();
	char err[256];
	unsigned placed = 0;
	for (int k = 0; k < WAITING; k++) {
		assert_int_equal(shmsched_release(f, ids[k], err, sizeof(err)), 0);
		int n = shmsched_poll(p, r, 64);
		assert_true(n >= 0);
		placed += (unsigned)n;
	}
	placed += fixture_await(p, r, WAITING - placed, 10000);
	double s = (double)(now_ns() - t0) / 1e9;
	struct daemon_stats ds;
	daemon_get_stats(d, &ds);
	print_message("churn: %u of %d placed in %.3f s; %" PRIu64 " woken, %"
		      PRIu64 " attempts\n", placed, WAITING, s, ds.queue_woken,
		      ds.queue_retries);
	assert_int_equal(placed, WAITING);
	assert_true(s < 10);
	assert_int_equal(daemon_overcommits(d), 0);
	daemon_stop(d, 1000, &ds);
	shmsched_disconnect(f);
	shmsched_disconnect(p);
}

/* No pod waits forever: 3 producers keep 600 pods waiting on a cluster
 * that fits none of them; nodes are then added one by one, and pods
 * placed are released now and then. Every pod is placed exactly once,
 * nothing is left pending, and no node is ever overcommitted. */
static void test_no_pod_waits_forever(void **state)
{
	(void)state;
	char n0[512];
	node_json(n0, sizeof(n0), "tiny", 1, 1, false);
	const char *nodes[] = {n0};
	write_nodes(nodes, 1);
	struct daemon *d = start(2, 256, false);
	enum { PRODUCERS = 3, PER = 200, PODS = PRODUCERS * PER };
	struct shmsched_client *c[PRODUCERS];
	static uint8_t answered[PODS];
	memset(answered, 0, sizeof(answered));
	static uint64_t ids[PODS];
	const char *cpus[] = {"2", "3", "1500m", "4"};
	for (unsigned p = 0; p < PRODUCERS; p++) {
		c[p] = fixture_connect(fx.sock);
		uint32_t tids[4];
		for (unsigned t = 0; t < 4; t++)
			tids[t] = pod_template(c[p], cpus[t], "1Gi");
		struct shmsched_pod pods[PER];
		for (unsigned i = 0; i < PER; i++)
			pods[i] = (struct shmsched_pod){.cookie = p * PER + i,
							.template_id = tids[i % 4],
							.flags = SHMSCHED_WAIT};
		assert_int_equal(shmsched_submit(c[p], pods, PER), PER);
	}
	AWAIT_STAT(d, pending_unschedulable, PODS);
	struct shmsched_client *a = fixture_connect(fx.admin);
	uint64_t over = 0, placed = 0, released = 0, overs = 0;
	unsigned added = 0;
	uint64_t end = now_ns() + UINT64_C(60) * 1000000000u;
	while (placed < PODS && now_ns() < end) {
		/* A node of 64 cpu every 20 ms while pods wait: 25 hold them
		 * all at once, fewer with the releases. */
		if (added < 40) {
			char json[512], name[16];
			snprintf(name, sizeof(name), "n%u", added);
			node_json(json, sizeof(json), name, 64, 256, false);
			char err[256];
			assert_int_equal(shmsched_node_event(a, SHMSCHED_NODE_ADD, json,
							     strlen(json), err,
							     sizeof(err)), 0);
			added++;
		}
		for (unsigned p = 0; p < PRODUCERS; p++) {
			struct shmsched_result r[64];
			int n = shmsched_poll(c[p], r, 64);
			assert_true(n >= 0);
			for (int k = 0; k < n; k++) {
				uint64_t ck = r[k].cookie;
				assert_true(ck < PODS);
				assert_int_equal(r[k].status, SHMSCHED_PLACED);
				assert_int_equal(answered[ck]++, 0);
				ids[ck] = r[k].placement_id;
				placed++;
				/* Every third placed pod ends soon after. */
				if (ck % 3 == 0) {
					char err[256];
					assert_int_equal(shmsched_release(c[p], ids[ck], err,
									  sizeof(err)), 0);
					released++;
				}
			}
		}
		over += daemon_overcommits(d);
		overs++;
		usleep(20000);
	}
	struct daemon_stats ds;
	daemon_get_stats(d, &ds);
	print_message("no pod waits forever: %" PRIu64 " placed of %d, %" PRIu64
		      " released, %u nodes added, %" PRIu64 " retries, %" PRIu64
		      " woken, %" PRIu64 " events; overcommits %" PRIu64 " over %"
		      PRIu64 " samples\n", placed, PODS, released, added,
		      ds.queue_retries, ds.queue_woken, ds.queue_events, over, overs);
	assert_int_equal(placed, PODS);
	assert_int_equal(over, 0);
	assert_int_equal(ds.waited, PODS);
	assert_int_equal(ds.waited_placed, PODS);
	assert_int_equal(ds.pending_active + ds.pending_backoff +
			 ds.pending_unschedulable, 0);
	assert_int_equal(ds.placements, PODS - released);
	daemon_stop(d, 1000, &ds);
	for (unsigned p = 0; p < PRODUCERS; p++) {
		assert_int_equal(shmsched_in_flight(c[p]), 0);
		shmsched_disconnect(c[p]);
	}
	shmsched_disconnect(a);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_release_wakes_exactly, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_idle_timeout, setup, teardown),
		cmocka_unit_test_setup_teardown(test_deadline_and_cancel, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_back_pressure_and_default, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_template_default, setup, teardown),
		cmocka_unit_test_setup_teardown(test_kill9_with_waiting, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_priority_order, setup, teardown),
		cmocka_unit_test_setup_teardown(test_preemption, setup, teardown),
		cmocka_unit_test_setup_teardown(test_preemption_many, setup, teardown),
		cmocka_unit_test_setup_teardown(test_preemption_pdb, setup, teardown),
		cmocka_unit_test_setup_teardown(test_churn_every_release_places, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_gang_by_hand, setup, teardown),
		cmocka_unit_test_setup_teardown(test_gang_of_two_producers, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_gangs_share_a_class, setup, teardown),
		cmocka_unit_test_setup_teardown(test_kube_gangs, setup, teardown),
		cmocka_unit_test_setup_teardown(test_gangs_all_or_nothing, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_no_pod_waits_forever, setup,
						teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
