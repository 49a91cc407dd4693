/* unit.resync: a declared pod list against the live placement records
 * (ingest/resync.h), stepped on one thread: added, removed (a producer's
 * placement too), resized, unchanged, skipped, scope by node, and the
 * refusals (no such node, a Node in the list, bad JSON, more pods than
 * records) that change nothing. After each resync the node's counters
 * equal the sum of the records on it.
 * resync_read_fd (issue 41): a file truncated and regrown by another
 * thread while it is read gives short reads, never SIGBUS (a mapping of it
 * would fault past the new end); a file over the limit, or a pipe, is
 * refused with a message. */
#define _GNU_SOURCE 1
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <urcu/urcu-qsbr.h>

#include <cmocka.h>

#include "ingest/ingest.h"

struct world {
	struct intern *strings;
	struct res_names res;
	struct cluster *cluster;
	struct placements *records;
};

static const char cluster_json[] =
	"{\"kind\": \"List\", \"items\": ["
	"{\"kind\": \"Node\", \"metadata\": {\"name\": \"a\"}, \"status\":"
	" {\"allocatable\": {\"cpu\": \"8\", \"memory\": \"16Gi\", \"pods\": \"110\"}}},"
	"{\"kind\": \"Node\", \"metadata\": {\"name\": \"b\"}, \"status\":"
	" {\"allocatable\": {\"cpu\": \"8\", \"memory\": \"16Gi\", \"pods\": \"110\"}}},"
	"{\"kind\": \"Pod\", \"metadata\": {\"name\": \"keep\"}, \"spec\": {\"nodeName\":"
	" \"a\", \"containers\": [{\"name\": \"c\", \"resources\": {\"requests\":"
	" {\"cpu\": \"1\"}}}]}},"
	"{\"kind\": \"Pod\", \"metadata\": {\"name\": \"grow\"}, \"spec\": {\"nodeName\":"
	" \"a\", \"containers\": [{\"name\": \"c\", \"resources\": {\"requests\":"
	" {\"cpu\": \"1\"}}}]}},"
	"{\"kind\": \"Pod\", \"metadata\": {\"name\": \"gone\"}, \"spec\": {\"nodeName\":"
	" \"a\", \"containers\": [{\"name\": \"c\", \"resources\": {\"requests\":"
	" {\"cpu\": \"1\"}}}]}},"
	"{\"kind\": \"Pod\", \"metadata\": {\"name\": \"on-b\"}, \"spec\": {\"nodeName\":"
	" \"b\", \"containers\": [{\"name\": \"c\", \"resources\": {\"requests\":"
	" {\"cpu\": \"1\"}}}]}}]}";

static const char declared_json[] =
	"{\"kind\": \"List\", \"items\": ["
	"{\"kind\": \"Pod\", \"metadata\": {\"name\": \"keep\"}, \"spec\": {\"nodeName\":"
	" \"a\", \"containers\": [{\"name\": \"c\", \"resources\": {\"requests\":"
	" {\"cpu\": \"1\"}}}]}},"
	"{\"kind\": \"Pod\", \"metadata\": {\"name\": \"grow\"}, \"spec\": {\"nodeName\":"
	" \"a\", \"containers\": [{\"name\": \"c\", \"resources\": {\"requests\":"
	" {\"cpu\": \"3\"}}}]}},"
	"{\"kind\": \"Pod\", \"metadata\": {\"name\": \"new\"}, \"spec\": {\"nodeName\":"
	" \"a\", \"containers\": [{\"name\": \"c\", \"resources\": {\"requests\":"
	" {\"cpu\": \"2\"}}}]}},"
	"{\"kind\": \"Pod\", \"metadata\": {\"name\": \"ended\"}, \"spec\": {\"nodeName\":"
	" \"a\", \"containers\": [{\"name\": \"c\"}]}, \"status\": {\"phase\": \"Succeeded\"}},"
	"{\"kind\": \"Pod\", \"metadata\": {\"name\": \"pending\"}, \"spec\":"
	" {\"containers\": [{\"name\": \"c\"}]}},"
	"{\"kind\": \"Pod\", \"metadata\": {\"name\": \"elsewhere\"}, \"spec\": {\"nodeName\":"
	" \"zz\", \"containers\": [{\"name\": \"c\"}]}}]}";

static void world_make(struct world *w)
{
	w->strings = intern_create();
	res_names_init(&w->res);
	w->cluster = cluster_create(w->strings, 8);
	w->records = placements_create(16);
	assert_non_null(w->cluster);
	char err[512];
	struct cluster_load_stats st;
	FILE *f = fopen("/tmp/shmsched-test-resync.json", "w");
	assert_non_null(f);
	fputs(cluster_json, f);
	fclose(f);
	assert_int_equal(cluster_load_file_into("/tmp/shmsched-test-resync.json",
						w->strings, &w->res, w->cluster,
						w->records, &st, err, sizeof(err)), 0);
	remove("/tmp/shmsched-test-resync.json");
	assert_int_equal(st.running_pods, 4);
}

static void world_free(struct world *w)
{
	placements_destroy(w->records);
	cluster_destroy(w->cluster);
	intern_destroy(w->strings);
}

/* Node `slot`'s cpu counter, checked against the sum of its records. */
static int64_t cpu_on(struct world *w, uint32_t slot)
{
	int64_t sum = 0, pods = 0;
	for (uint32_t i = 0; i < placements_high_water(w->records); i++) {
		uint64_t id;
		const struct placement_record *r = placements_at(w->records, i, &id);
		if (r != NULL && r->slot == slot) {
			sum += r->request.v[RES_CPU];
			pods++;
		}
	}
	const struct node_alloc *a = ledger_node(cluster_ledger(w->cluster), slot);
	assert_int_equal(a->used[RES_CPU], sum);
	assert_int_equal(a->used[RES_PODS], pods);
	return sum;
}

/* A producer's placement on `slot`: its pod name is not a declared pod's. */
static void producer_place(struct world *w, uint32_t slot, int64_t cpu)
{
	struct pod_spec pod;
	memset(&pod, 0, sizeof(pod));
	pod.request.v[RES_CPU] = pod.nonzero_cpu_milli = cpu;
	int64_t ix = placements_take(w->records);
	assert_true(ix >= 0);
	ledger_account(cluster_ledger(w->cluster), slot, &pod, NULL, +1);
	placements_fill(w->records, (uint32_t)ix, 3, slot,
			ledger_node_generation(cluster_ledger(w->cluster), slot), &pod,
			NULL, 7);
}

static void test_node_scope(void **state)
{
	(void)state;
	struct world w;
	world_make(&w);
	producer_place(&w, 0, 500);
	assert_int_equal(cpu_on(&w, 0), 3500);
	char err[512];
	struct resync_result r;
	assert_int_equal(resync_apply(w.cluster, w.records, w.strings, &w.res, "t",
				      declared_json, strlen(declared_json), "a", NULL,
				      &r, err, sizeof(err)), 0);
	assert_int_equal(r.added, 1);     /* new */
	assert_int_equal(r.removed, 2);   /* gone, and the producer's */
	assert_int_equal(r.resized, 1);   /* grow: 1 -> 3 */
	assert_int_equal(r.unchanged, 1); /* keep */
	assert_int_equal(r.skipped, 3);   /* ended, pending, elsewhere */
	assert_int_equal(cpu_on(&w, 0), 6000);
	assert_int_equal(cpu_on(&w, 1), 1000); /* b: out of scope, untouched */
	/* Again: nothing to do. */
	assert_int_equal(resync_apply(w.cluster, w.records, w.strings, &w.res, "t",
				      declared_json, strlen(declared_json), "a", NULL,
				      &r, err, sizeof(err)), 0);
	assert_int_equal(r.unchanged, 3);
	assert_int_equal(r.added + r.removed + r.resized, 0);
	/* Every node: b's pod is declared nowhere, so it goes. */
	assert_int_equal(resync_apply(w.cluster, w.records, w.strings, &w.res, "t",
				      declared_json, strlen(declared_json), NULL, NULL,
				      &r, err, sizeof(err)), 0);
	assert_int_equal(r.removed, 1);
	assert_int_equal(cpu_on(&w, 1), 0);
	world_free(&w);
}

static void test_refusals_change_nothing(void **state)
{
	(void)state;
	struct world w;
	world_make(&w);
	char err[512];
	struct resync_result r;
	assert_int_equal(resync_apply(w.cluster, w.records, w.strings, &w.res, "t",
				      declared_json, strlen(declared_json), "nope",
				      NULL, &r, err, sizeof(err)), -ENOENT);
	assert_non_null(strstr(err, "nope"));
	const char node[] = "{\"kind\": \"Node\", \"metadata\": {\"name\": \"x\"}}";
	assert_int_equal(resync_apply(w.cluster, w.records, w.strings, &w.res, "t",
				      node, strlen(node), NULL, NULL, &r, err,
				      sizeof(err)), -EINVAL);
	const char bad[] = "{\"kind\": \"Pod\", ";
	assert_int_equal(resync_apply(w.cluster, w.records, w.strings, &w.res, "t",
				      bad, strlen(bad), NULL, NULL, &r, err,
				      sizeof(err)), -EINVAL);
	assert_int_equal(cpu_on(&w, 0), 3000);
	assert_int_equal(cpu_on(&w, 1), 1000);
	/* 17 bound pods for 16 records: refused before anything changes. */
	char many[8192];
	size_t n = (size_t)snprintf(many, sizeof(many), "{\"kind\": \"List\", \"items\": [");
	for (int i = 0; i < 17; i++)
		n += (size_t)snprintf(many + n, sizeof(many) - n, "%s{\"kind\": \"Pod\","
				      " \"metadata\": {\"name\": \"p%d\"}, \"spec\":"
				      " {\"nodeName\": \"a\", \"containers\": [{\"name\":"
				      " \"c\"}]}}", i ? "," : "", i);
	n += (size_t)snprintf(many + n, sizeof(many) - n, "]}");
	assert_int_equal(resync_apply(w.cluster, w.records, w.strings, &w.res, "t",
				      many, n, NULL, NULL, &r, err, sizeof(err)),
			 -ENOSPC);
	assert_int_equal(cpu_on(&w, 0), 3000);
	world_free(&w);
}

#define SHAKE_BYTES (1u << 20)

struct shaker {
	int fd;
	int stop; /* relaxed: a flag, nothing ordered by it */
};

/* Truncates the file to nothing and grows it back, again and again. */
static void *shake(void *arg)
{
	struct shaker *sh = arg;
	while (!__atomic_load_n(&sh->stop, __ATOMIC_RELAXED)) {
		assert_int_equal(ftruncate(sh->fd, 0), 0);
		assert_int_equal(ftruncate(sh->fd, SHAKE_BYTES), 0);
	}
	return NULL;
}

static void test_read_fd(void **state)
{
	(void)state;
	char path[] = "/tmp/shmsched-resync-XXXXXX", err[256];
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	unlink(path);
	assert_int_equal(ftruncate(fd, SHAKE_BYTES), 0);
	char *buf;
	size_t len;
	assert_int_equal(resync_read_fd(fd, SHAKE_BYTES, &buf, &len, err,
					sizeof(err)), 0);
	assert_int_equal(len, SHAKE_BYTES);
	free(buf);
	/* Over the limit. */
	assert_int_equal(resync_read_fd(fd, SHAKE_BYTES - 1, &buf, &len, err,
					sizeof(err)), -EFBIG);
	assert_non_null(strstr(err, "1048576 bytes"));
	/* Truncated while read: short reads, no fault. */
	struct shaker sh = {.fd = fd};
	pthread_t t;
	assert_int_equal(pthread_create(&t, NULL, shake, &sh), 0);
	for (int i = 0; i < 300; i++) {
		assert_int_equal(resync_read_fd(fd, SHAKE_BYTES, &buf, &len, err,
						sizeof(err)), 0);
		assert_true(len <= SHAKE_BYTES);
		free(buf);
	}
	__atomic_store_n(&sh.stop, 1, __ATOMIC_RELAXED);
	pthread_join(t, NULL);
	close(fd);
	/* Not a regular file. */
	int p[2];
	assert_int_equal(pipe(p), 0);
	assert_int_equal(resync_read_fd(p[0], SHAKE_BYTES, &buf, &len, err,
					sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "regular file"));
	close(p[0]);
	close(p[1]);
}

int main(void)
{
	urcu_qsbr_register_thread();
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_node_scope),
		cmocka_unit_test(test_refusals_change_nothing),
		cmocka_unit_test(test_read_fd),
	};
	int rc = cmocka_run_group_tests(tests, NULL, NULL);
	urcu_qsbr_unregister_thread();
	return rc;
}
