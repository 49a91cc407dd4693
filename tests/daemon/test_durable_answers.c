/* unit.durable_answers: with --durability sync a PLACED answer is handed
 * back only once its placement is on disk ("sync (PLACED only once the
 * placement is on disk)", man/shmschedd.8, --durability; "before its
 * PLACED answer is handed back", docs/guides/operations.md). serve.c's
 * bursts always waited; the answers from the scheduling queue did not
 * until attempt_complete() waited itself (bef6b41). Each test here makes
 * one of those answers, against the real daemon in process with a real
 * store in sync mode:
 * - a retry: a waiting pod placed when a release frees its room;
 * - a gang: the pods of a PodGroup placed together by the queue;
 * - the evictor's reply: a pod placed on the room its preemption freed.
 *
 * How it sees the order, deterministically: the test is linked with
 * --wrap (tests/daemon/meson.build) around three calls between the
 * daemon's objects and the store's and the answer ring's:
 * store_put_placement (a placement queued for the store, by this thread),
 * store_wait (this thread waited until that sequence number was durable)
 * and answer_complete (answers handed back on a producer's completion
 * ring). Each thread keeps the highest sequence number it queued and the
 * highest it waited for; a hand-back of an answer (not a notice) while
 * the thread has queued a placement it has not waited for is an early
 * answer. The store's writer is one thread committing in order, so
 * "waited for seq" means every op up to seq is durable (bind/store.h).
 * old (attempt_complete without attempt_persist_wait): each of the three
 * answers is handed back before its placement's wait, counted early. */
#include <errno.h>
#include <inttypes.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "bind/bind.h"
#include "daemon/daemon.h"
#include "fixture.h"
#include "shmsched/client.h"

/* --- the wrapped calls ----------------------------------------------- */

uint64_t __real_store_put_placement(struct store *s, uint64_t id, const void *blob,
				    uint32_t len);
uint64_t __wrap_store_put_placement(struct store *s, uint64_t id, const void *blob,
				    uint32_t len);
int __real_store_wait(struct store *s, uint64_t seq);
int __wrap_store_wait(struct store *s, uint64_t seq);
int __real_answer_complete(struct ring_guard *completion, const uint64_t *handles,
			   unsigned n);
int __wrap_answer_complete(struct ring_guard *completion, const uint64_t *handles,
			   unsigned n);

/* This thread's last placement queued, and the last sequence number it
 * waited for. */
static _Thread_local uint64_t queued, waited;
/* Hand-backs of answers by a thread that had queued a placement, and those
 * among them made before the thread waited for it. Relaxed: figures, read
 * by the test's thread after the daemon's thread answered (the answer's
 * own ring is the order). */
static uint64_t checked, early;

uint64_t __wrap_store_put_placement(struct store *s, uint64_t id, const void *blob,
				    uint32_t len)
{
	uint64_t seq = __real_store_put_placement(s, id, blob, len);
	if (seq > queued)
		queued = seq;
	return seq;
}

int __wrap_store_wait(struct store *s, uint64_t seq)
{
	int rc = __real_store_wait(s, seq);
	if (rc == 0 && seq > waited)
		waited = seq;
	return rc;
}

int __wrap_answer_complete(struct ring_guard *completion, const uint64_t *handles,
			   unsigned n)
{
	unsigned answers = 0;
	for (unsigned i = 0; i < n; i++)
		answers += !(handles[i] & SHMSCHED_HANDLE_NOTICE);
	if (answers > 0 && queued != 0) {
		__atomic_fetch_add(&checked, 1, __ATOMIC_RELAXED);
		if (queued > waited)
			__atomic_fetch_add(&early, 1, __ATOMIC_RELAXED);
	}
	return __real_answer_complete(completion, handles, n);
}

/* --- the daemon ------------------------------------------------------ */

static struct fixture_dir fx;
static char store[128];

/* One node n0 of `cpu` cores, then `extra` (objects, comma first, or ""). */
static void write_cluster(int cpu, const char *extra)
{
	FILE *f = fopen(fx.cluster, "w");
	assert_non_null(f);
	fprintf(f, "{\"kind\":\"List\",\"items\":[{\"kind\":\"Node\",\"metadata\":"
		"{\"name\":\"n0\"},\"status\":{\"allocatable\":{\"cpu\":\"%d\","
		"\"memory\":\"16Gi\",\"pods\":\"110\"}}}%s]}", cpu, extra);
	fclose(f);
}

static struct daemon *start(void)
{
	struct daemon_config cfg = fixture_config(&fx);
	cfg.state_dir = store;
	cfg.durability = STORE_DURABILITY_SYNC;
	struct daemon *d = fixture_start(&cfg);
	__atomic_store_n(&checked, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&early, 0, __ATOMIC_RELAXED);
	return d;
}

/* A pod of `cpu` cores with `meta` (fields of metadata after its name)
 * and `spec` (fields of spec before its containers). */
static uint32_t pod_template(struct shmsched_client *c, const char *cpu,
			     const char *meta, const char *spec)
{
	char json[1024];
	snprintf(json, sizeof(json), "{\"kind\":\"Pod\",\"metadata\":{\"name\":"
		 "\"t\"%s},\"spec\":{%s\"containers\":[{\"name\":\"c\","
		 "\"resources\":{\"requests\":{\"cpu\":\"%s\"}}}]}}", meta, spec, cpu);
	return fixture_template(c, json);
}

static void submit(struct shmsched_client *c, uint32_t tid, uint64_t cookie,
		   uint16_t flags)
{
	struct shmsched_pod p = {.cookie = cookie, .template_id = tid, .flags = flags};
	assert_int_equal(shmsched_submit(c, &p, 1), 1);
}

/* Waits (at most 10 s) until `n` pods wait in the queue. */
static void await_waiting(struct daemon *d, uint64_t n)
{
	struct daemon_stats ds;
	time_t deadline = time(NULL) + 10;
	do {
		usleep(500);
		daemon_get_stats(d, &ds);
	} while (ds.pending_unschedulable != n && time(NULL) <= deadline);
	assert_int_equal(ds.pending_unschedulable, n);
}

/* No answer was handed back before its placement was durable; `at_least`
 * hand-backs were checked (so the path under test was seen). */
static void assert_durable_first(const char *what, uint64_t at_least)
{
	uint64_t c = __atomic_load_n(&checked, __ATOMIC_RELAXED);
	uint64_t e = __atomic_load_n(&early, __ATOMIC_RELAXED);
	print_message("%s: %" PRIu64 " hand-backs after a placement, %" PRIu64
		      " before it was durable\n", what, c, e);
	assert_true(c >= at_least);
	/* old: 1 (the retry, the evictor's reply), 2 (the gang's two). */
	assert_int_equal(e, 0);
}

/* A retry (daemon/wait.c's retry, attempt_place): the node is full, the
 * pod waits, a release frees the room and the queue places it. */
static void test_retry(void **state)
{
	(void)state;
	write_cluster(2, "");
	struct daemon *d = start();
	struct shmsched_client *c = fixture_connect_as(fx.sock, "retry");
	uint32_t two = pod_template(c, "2", "", "");
	struct shmsched_result first, r;
	char err[512];
	fixture_place_one(c, two, 1, &first);
	assert_int_equal(first.status, SHMSCHED_PLACED);
	submit(c, two, 2, SHMSCHED_WAIT);
	await_waiting(d, 1);
	assert_int_equal(shmsched_release(c, first.placement_id, err, sizeof(err)), 0);
	assert_int_equal(fixture_await(c, &r, 1, 10000), 1);
	assert_int_equal(r.cookie, 2);
	assert_int_equal(r.status, SHMSCHED_PLACED);
	assert_durable_first("retry", 2);
	shmsched_disconnect(c);
	struct daemon_stats ds;
	daemon_stop(d, 1000, &ds);
}

/* A gang (daemon/wait.c's gang_try, attempt_gang): a PodGroup of
 * minMember 2, whose pods wait until both came, then placed together. */
static void test_gang(void **state)
{
	(void)state;
	write_cluster(4, ",{\"kind\":\"PodGroup\",\"apiVersion\":"
		      "\"scheduling.x-k8s.io/v1alpha1\",\"metadata\":{\"name\":"
		      "\"pair\"},\"spec\":{\"minMember\":2}}");
	struct daemon *d = start();
	struct shmsched_client *c = fixture_connect_as(fx.sock, "gang");
	uint32_t member = pod_template(c, "1", ",\"labels\":{\"scheduling.x-k8s.io/"
				       "pod-group\":\"pair\"}", "");
	struct shmsched_result r[2];
	submit(c, member, 1, 0);
	submit(c, member, 2, 0);
	assert_int_equal(fixture_await(c, r, 2, 10000), 2);
	for (int i = 0; i < 2; i++)
		assert_int_equal(r[i].status, SHMSCHED_PLACED);
	struct daemon_stats ds;
	daemon_get_stats(d, &ds);
	assert_int_equal(ds.gangs_placed, 1);
	assert_durable_first("gang", 1);
	shmsched_disconnect(c);
	daemon_stop(d, 1000, &ds);
}

/* The evictor's reply (daemon/wait.c's take_replies, attempt_place_held):
 * a pod of priority 1000 preempts the node's one pod and is placed on its
 * room. */
static void test_evictor_reply(void **state)
{
	(void)state;
	write_cluster(2, ",{\"kind\":\"PriorityClass\",\"metadata\":{\"name\":"
		      "\"high\"},\"value\":1000}");
	struct daemon *d = start();
	struct shmsched_client *low = fixture_connect_as(fx.sock, "low");
	struct shmsched_client *hi = fixture_connect_as(fx.sock, "high");
	uint32_t plain = pod_template(low, "2", "", "");
	uint32_t high = pod_template(hi, "2", "", "\"priorityClassName\":\"high\",");
	struct shmsched_result r;
	fixture_place_one(low, plain, 1, &r);
	assert_int_equal(r.status, SHMSCHED_PLACED);
	submit(hi, high, 2, SHMSCHED_WAIT);
	assert_int_equal(fixture_await(hi, &r, 1, 10000), 1);
	assert_int_equal(r.cookie, 2);
	assert_int_equal(r.status, SHMSCHED_PLACED);
	assert_int_equal(fixture_await(low, &r, 1, 10000), 1);
	assert_int_equal(r.status, SHMSCHED_EVICTED);
	struct daemon_stats ds;
	daemon_get_stats(d, &ds);
	assert_int_equal(ds.preempted, 1);
	assert_durable_first("evictor's reply", 2);
	shmsched_disconnect(low);
	shmsched_disconnect(hi);
	daemon_stop(d, 1000, &ds);
}

static int setup(void **state)
{
	(void)state;
	fixture_dir_make(&fx, "durable", 0);
	snprintf(store, sizeof(store), "%s/store", fx.dir);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	fixture_dir_remove(&fx);
	return 0;
}

int main(void)
{
	setenv("SHMSCHED_LOG", "warn", 0);
	signal(SIGPIPE, SIG_IGN);
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_retry, setup, teardown),
		cmocka_unit_test_setup_teardown(test_gang, setup, teardown),
		cmocka_unit_test_setup_teardown(test_evictor_reply, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
