/* tests/coord: fenced commits against a real 3-member etcd (issue 40),
 * started by tests/coord/etcd_cluster.sh (SHMSCHED_ETCD_ENDPOINTS,
 * SHMSCHED_ETCD_PIDS). Without them the program prints SKIP and exits 77.
 *
 * The fence: a host holds a lease, puts its shard's owner key with it, and
 * commits each batch of placement keys in a transaction guarded by
 * "compare LEASE(owner key) == my lease" (etcd's Compare on LEASE, 3.4's
 * api/etcdserverpb/rpc.proto). When the lease lapses etcd deletes the
 * owner key, so the compare fails and the batch commits nothing. The
 * checker reads etcd's contents afterwards: every key of the old owner was
 * created before the new owner's key (a write after the lapse would carry
 * a later revision: the count must be 0), as many keys as the host was told
 * were committed, and every key written once (version 1).
 *
 * 1. one_client_throughput, parallel_throughput: transactions/s and pods/s
 *    of one client at 60 and at 128 placement puts a transaction, and of 4
 *    clients on threads at 60 (printed; the figures for issue 40).
 * 2. lease_lapse_stops_commits: host A stops renewing, keeps committing;
 *    once its lease lapses nothing more lands; host B takes the owner key
 *    and commits.
 * 3. stopped_host_commits_nothing: host A in a child process renews on
 *    time (TTL/3) and commits; it is SIGSTOPped past its TTL, B takes over,
 *    A is continued and its next transactions commit nothing.
 * 4. leader_killed_during_stream: a stream of transactions, each made
 *    idempotent by "compare VERSION(batch key) == 0", retried on errors;
 *    the etcd leader is killed (SIGKILL) in the middle: every batch lands
 *    once, no key is written twice. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "coord/coord.h"
#include "etcd_test.h"

#define PODS_PER_TXN 60
/* The lease of the host that lapses (etcd's minimum is 2 s; 3 s leaves
 * room for a slow fsync on a loaded machine while it still renews), and
 * of every host that must not lapse during a test. */
#define TTL_S 3
#define LONG_TTL_S 10

static struct etcd_test_cluster cl;

static void sleep_s(double s)
{
	struct timespec ts = {(time_t)s, (long)((s - (double)(time_t)s) * 1e9)};
	nanosleep(&ts, NULL);
}

/* A host: its client, lease and shard owner key. */
struct host {
	struct etcd_client *c;
	int64_t lease;
	const char *owner;
	const char *prefix; /* its placement keys: PREFIX<batch>/<i> */
	int batch;
	int pods;      /* puts a batch; 0: PODS_PER_TXN */
	int committed; /* batches etcd said were committed */
	int refused;   /* batches whose fence failed */
	int errors;    /* batches with no answer (outcome unknown: 0 or all) */
};

/* Owner key taken only when absent (CREATE == 0), with the host's lease. */
static int take_owner(struct host *h)
{
	struct etcd_compare cmp = {.target = ETCD_CMP_CREATE, .result = ETCD_CMP_EQUAL,
				   .key = h->owner, .key_len = strlen(h->owner)};
	struct etcd_op put = {.kind = ETCD_OP_PUT, .key = h->owner, .key_len = strlen(h->owner),
			      .value = h->prefix, .value_len = strlen(h->prefix), .lease = h->lease};
	struct etcd_txn t = {&cmp, 1, &put, 1, NULL, 0};
	struct etcd_txn_result r;
	int rc = etcd_txn(h->c, &t, &r);
	bool took = rc == 0 && r.succeeded;
	etcd_txn_result_free(&r);
	return rc != 0 ? rc : took ? 0 : -EBUSY;
}

/* One batch of h->pods placement puts (PODS_PER_TXN by default, at most
 * ETCD_MAX_TXN_OPS), fenced on the owner's lease. 1: committed; 0: the
 * fence failed; <0: an error. */
static int commit_batch(struct host *h)
{
	char keys[ETCD_MAX_TXN_OPS][96];
	struct etcd_op ops[ETCD_MAX_TXN_OPS];
	int pods = h->pods ? h->pods : PODS_PER_TXN;
	for (int i = 0; i < pods; i++) {
		snprintf(keys[i], sizeof(keys[i]), "%s%06d/%02d", h->prefix, h->batch, i);
		ops[i] = (struct etcd_op){.kind = ETCD_OP_PUT, .key = keys[i],
					  .key_len = strlen(keys[i]), .value = "node-17",
					  .value_len = 7};
	}
	struct etcd_compare cmp = {.target = ETCD_CMP_LEASE, .result = ETCD_CMP_EQUAL,
				   .key = h->owner, .key_len = strlen(h->owner),
				   .number = h->lease};
	struct etcd_txn t = {&cmp, 1, ops, (size_t)pods, NULL, 0};
	struct etcd_txn_result r;
	int rc = etcd_txn(h->c, &t, &r);
	h->batch++; /* a batch without an answer is not sent again */
	if (rc != 0) {
		h->errors++;
		return rc;
	}
	bool ok = r.succeeded;
	etcd_txn_result_free(&r);
	if (ok)
		h->committed++;
	else
		h->refused++;
	return ok ? 1 : 0;
}

static void grant(struct host *h, int64_t ttl_s)
{
	int64_t ttl = 0;
	if (etcd_lease_grant(h->c, ttl_s, &h->lease, &ttl) != 0)
		fail_msg("%s", etcd_client_error(h->c));
	assert_int_equal(ttl, ttl_s);
}

/* etcd holds whole batches: every one the host was told committed, and
 * perhaps some whose answer it never got (a timeout on a loaded machine). */
static void assert_batches(size_t keys, const struct host *h)
{
	size_t pods = (size_t)(h->pods ? h->pods : PODS_PER_TXN);
	if (keys % pods != 0 || keys < (size_t)h->committed * pods ||
	    keys > (size_t)(h->committed + h->errors) * pods)
		fail_msg("%s: %zu keys in etcd; %d batches of %zu committed, %d unanswered",
			 h->prefix, keys, h->committed, pods, h->errors);
}

static int64_t create_revision(struct etcd_client *c, const char *key)
{
	struct etcd_range_result r;
	if (etcd_range(c, key, strlen(key), NULL, 0, 0, &r) != 0)
		fail_msg("%s", etcd_client_error(c));
	int64_t rev = r.n_kvs ? r.kvs[0].create_revision : 0;
	etcd_range_result_free(&r);
	return rev;
}

/* Renews h's lease when a third of its TTL has passed since the last. */
static void renew(struct host *h, double *last)
{
	int64_t ttl;
	if (etcd_test_now_s() - *last < TTL_S / 3.0)
		return;
	if (etcd_lease_keepalive(h->c, h->lease, &ttl) != 0)
		fail_msg("%s", etcd_client_error(h->c));
	*last = etcd_test_now_s();
}

/* B waits for A's owner key to go (A's lease lapsing) and takes it,
 * renewing its own lease meanwhile; returns the seconds it waited. */
static double take_over(struct host *b, double deadline_s)
{
	double t0 = etcd_test_now_s(), renewed = t0;
	for (;;) {
		renew(b, &renewed);
		int rc = take_owner(b);
		if (rc == 0)
			return etcd_test_now_s() - t0;
		if (etcd_test_now_s() - t0 > deadline_s)
			fail_msg("host B could not take %s within %.0f s (last: %d %s)", b->owner,
				 deadline_s, rc, etcd_client_error(b->c));
		sleep_s(0.05);
	}
}

/* One client for 3 s at `pods` puts a fenced transaction. */
static void throughput(int pods, const char *owner, const char *prefix)
{
	struct host h = {.c = etcd_test_open(cl.endpoints), .owner = owner, .prefix = prefix,
			 .pods = pods};
	grant(&h, LONG_TTL_S);
	assert_int_equal(take_owner(&h), 0);
	double t0 = etcd_test_now_s(), renewed = t0;
	while (etcd_test_now_s() - t0 < 3.0) {
		renew(&h, &renewed);
		if (commit_batch(&h) == 0)
			fail_msg("a bench batch's fence failed: %s", etcd_client_error(h.c));
	}
	double secs = etcd_test_now_s() - t0;
	printf("etcd one client, %d placement puts a fenced txn: %d txns in %.2f s = %.0f txn/s, "
	       "%.0f pods/s (%d unanswered)\n",
	       pods, h.committed, secs, h.committed / secs, h.committed * pods / secs, h.errors);
	assert_batches(etcd_test_census(h.c, prefix, 0, NULL, NULL).keys, &h);
	assert_int_equal(etcd_lease_revoke(h.c, h.lease), 0);
	etcd_client_close(h.c);
}

static void one_client_throughput(void **state)
{
	(void)state;
	throughput(PODS_PER_TXN, "/bench/owner", "/bench/place/");
	/* The most one list takes: the fence is in the compare list. */
	throughput(ETCD_MAX_TXN_OPS, "/bench128/owner", "/bench128/place/");
}

/* N hosts' worth of clients on threads, each with its own lease and owner
 * key: what etcd takes from this machine when transactions are in flight
 * side by side (a host pipelining its batches on several connections). */
enum { PARALLEL = 4 };
struct bench_thread {
	struct host h;
	char owner[32];
	char prefix[32];
	int failed;
};

static void *bench_run(void *arg)
{
	struct bench_thread *b = arg;
	double t0 = etcd_test_now_s(), renewed = t0;
	int64_t ttl;
	while (etcd_test_now_s() - t0 < 3.0) {
		if (etcd_test_now_s() - renewed > TTL_S / 3.0) {
			b->failed |= etcd_lease_keepalive(b->h.c, b->h.lease, &ttl) != 0;
			renewed = etcd_test_now_s();
		}
		b->failed |= commit_batch(&b->h) == 0;
	}
	return NULL;
}

static void parallel_throughput(void **state)
{
	(void)state;
	struct bench_thread b[PARALLEL];
	pthread_t t[PARALLEL];
	memset(b, 0, sizeof(b));
	for (int i = 0; i < PARALLEL; i++) {
		snprintf(b[i].owner, sizeof(b[i].owner), "/par%d/owner", i);
		snprintf(b[i].prefix, sizeof(b[i].prefix), "/par%d/place/", i);
		b[i].h = (struct host){.c = etcd_test_open(cl.endpoints), .owner = b[i].owner,
				       .prefix = b[i].prefix};
		grant(&b[i].h, LONG_TTL_S);
		assert_int_equal(take_owner(&b[i].h), 0);
	}
	double t0 = etcd_test_now_s();
	for (int i = 0; i < PARALLEL; i++)
		assert_int_equal(pthread_create(&t[i], NULL, bench_run, &b[i]), 0);
	int txns = 0;
	for (int i = 0; i < PARALLEL; i++) {
		pthread_join(t[i], NULL);
		txns += b[i].h.committed;
		assert_int_equal(b[i].failed, 0);
	}
	double secs = etcd_test_now_s() - t0;
	printf("etcd %d clients in parallel, %d placement puts a fenced txn: %d txns in %.2f s = "
	       "%.0f txn/s, %.0f pods/s\n",
	       PARALLEL, PODS_PER_TXN, txns, secs, txns / secs, txns * PODS_PER_TXN / secs);
	for (int i = 0; i < PARALLEL; i++) {
		assert_batches(etcd_test_census(b[i].h.c, b[i].prefix, 0, NULL, NULL).keys, &b[i].h);
		assert_int_equal(etcd_lease_revoke(b[i].h.c, b[i].h.lease), 0);
		etcd_client_close(b[i].h.c);
	}
}

static void lease_lapse_stops_commits(void **state)
{
	(void)state;
	struct host a = {.c = etcd_test_open(cl.endpoints), .owner = "/f1/owner", .prefix = "/f1/a/"};
	struct host b = {.c = etcd_test_open(cl.endpoints), .owner = "/f1/owner", .prefix = "/f1/b/"};
	grant(&a, TTL_S);
	assert_int_equal(take_owner(&a), 0);
	/* Renew on time for 1.5 s while committing. */
	double t0 = etcd_test_now_s(), last_renew = t0;
	int64_t ttl;
	while (etcd_test_now_s() - t0 < 1.5) {
		if (etcd_test_now_s() - last_renew > TTL_S / 3.0) {
			assert_int_equal(etcd_lease_keepalive(a.c, a.lease, &ttl), 0);
			last_renew = etcd_test_now_s();
		}
		/* Committed, or no answer in time (a loaded machine): never
		 * refused while the lease is renewed. */
		assert_int_not_equal(commit_batch(&a), 0);
	}
	/* Stop renewing; keep committing until the fence fails. */
	double stopped = last_renew, lapsed = 0;
	while (!lapsed) {
		int rc = commit_batch(&a);
		if (rc == 0)
			lapsed = etcd_test_now_s() - stopped;
		if (etcd_test_now_s() - stopped > 4 * TTL_S)
			fail_msg("host A still commits %.1f s after its last renewal (TTL %d s)",
				 etcd_test_now_s() - stopped, TTL_S);
	}
	int committed_before = a.committed;
	printf("host A's commits stopped %.2f s after its last renewal (TTL %d s)\n", lapsed,
	       TTL_S);
	assert_true(lapsed >= TTL_S - 0.1);
	assert_int_equal(etcd_lease_keepalive(a.c, a.lease, &ttl), -ENOENT);

	grant(&b, LONG_TTL_S);
	take_over(&b, 4.0 * TTL_S);
	assert_int_equal(etcd_lease_keepalive(b.c, b.lease, &ttl), 0);
	int64_t b_rev = create_revision(b.c, b.owner);
	for (int i = 0; i < 5; i++) {
		assert_int_equal(commit_batch(&b), 1);
		/* A, interleaved, still tries: never committed. */
		assert_int_not_equal(commit_batch(&a), 1);
	}
	assert_int_equal(a.committed, committed_before);
	assert_true(a.refused >= 1);

	struct etcd_census ka = etcd_test_census(b.c, "/f1/a/", b_rev, NULL, NULL);
	struct etcd_census kb = etcd_test_census(b.c, "/f1/b/", 0, NULL, NULL);
	printf("host A: %d batches committed, %d refused, %d unanswered; keys in etcd %zu, "
	       "written after B's takeover %zu, rewritten %zu\n",
	       a.committed, a.refused, a.errors, ka.keys, ka.late, ka.rewritten);
	assert_int_equal(ka.late, 0);
	assert_int_equal(ka.rewritten, 0);
	assert_batches(ka.keys, &a);
	assert_int_equal(kb.keys, 5 * PODS_PER_TXN);
	etcd_client_close(a.c);
	etcd_client_close(b.c);
}

/* The child host of stopped_host_commits_nothing: renews at TTL/3, commits
 * batches, and writes one byte a result to fd ('C' committed, 'R' refused,
 * 'L' its lease gone, 'E' an error) until killed. */
static void stopped_child(int fd)
{
	/* No cmocka check here: a failure would return into the test runner
	 * in the child. Anything wrong exits with a status of its own. */
	struct etcd_client_options o = {.timeout_ms = 3000};
	char err[256];
	struct host a = {.owner = "/f2/owner", .prefix = "/f2/a/"};
	int64_t ttl;
	if (etcd_client_open(&a.c, cl.endpoints, &o, err, sizeof(err)) != 0 ||
	    etcd_lease_grant(a.c, TTL_S, &a.lease, &ttl) != 0 || take_owner(&a) != 0)
		_exit(3);
	double last_renew = etcd_test_now_s();
	for (;;) {
		char r;
		if (etcd_test_now_s() - last_renew > TTL_S / 3.0) {
			int rc = etcd_lease_keepalive(a.c, a.lease, &ttl);
			last_renew = etcd_test_now_s();
			if (rc == -ENOENT && write(fd, "L", 1) != 1)
				_exit(4);
		}
		int rc = commit_batch(&a);
		r = rc == 1 ? 'C' : rc == 0 ? 'R' : 'E';
		if (write(fd, &r, 1) != 1)
			_exit(4);
		if (rc != 1)
			sleep_s(0.02);
	}
}

/* The child host, killed by the teardown when a check fails before the
 * test kills it itself. */
static pid_t child = -1;

static int kill_child(void **state)
{
	(void)state;
	if (child > 0) {
		kill(child, SIGKILL);
		waitpid(child, NULL, 0);
		child = -1;
	}
	return 0;
}

static void stopped_host_commits_nothing(void **state)
{
	(void)state;
	int p[2];
	assert_int_equal(pipe(p), 0);
	child = fork();
	assert_true(child >= 0);
	if (child == 0) {
		close(p[0]);
		stopped_child(p[1]);
		_exit(0);
	}
	close(p[1]);
	sleep_s(1.5);
	assert_int_equal(kill(child, SIGSTOP), 0);
	double stopped = etcd_test_now_s();
	struct host b = {.c = etcd_test_open(cl.endpoints), .owner = "/f2/owner", .prefix = "/f2/b/"};
	grant(&b, LONG_TTL_S);
	take_over(&b, 4.0 * TTL_S);
	printf("host B took the shard %.2f s after host A was stopped (TTL %d s)\n",
	       etcd_test_now_s() - stopped, TTL_S);
	int64_t b_rev = create_revision(b.c, b.owner);
	assert_int_equal(commit_batch(&b), 1);
	assert_int_equal(kill(child, SIGCONT), 0);
	double renewed = etcd_test_now_s(), resumed = renewed;
	while (etcd_test_now_s() - resumed < 1.0) {
		renew(&b, &renewed);
		sleep_s(0.1);
	}
	assert_int_equal(commit_batch(&b), 1);
	kill_child(NULL);

	/* The child's account: its results before and after the stop are in
	 * order in the pipe; after the resume every result is a refusal (or
	 * the lease found gone), never a commit past B's takeover. */
	char buf[65536];
	size_t n = 0;
	ssize_t got;
	while ((got = read(p[0], buf + n, sizeof(buf) - n)) > 0)
		n += (size_t)got;
	close(p[0]);
	size_t committed = 0, refused = 0, errors = 0, lapses = 0;
	for (size_t i = 0; i < n; i++) {
		committed += buf[i] == 'C';
		refused += buf[i] == 'R';
		errors += buf[i] == 'E';
		lapses += buf[i] == 'L';
	}
	struct etcd_census ka = etcd_test_census(b.c, "/f2/a/", b_rev, NULL, NULL);
	printf("stopped host A: %zu batches committed, %zu refused after it resumed, %zu errors; "
	       "keys in etcd %zu, written after B's takeover %zu\n",
	       committed, refused, errors, ka.keys, ka.late);
	assert_true(committed > 0);
	assert_true(refused > 0); /* it did try after it resumed */
	assert_true(lapses > 0);
	assert_int_equal(ka.late, 0);
	assert_int_equal(ka.rewritten, 0);
	/* A batch sent just before the stop may have landed with its answer
	 * read after; either way etcd holds what A was told, whole batches. */
	assert_int_equal(ka.keys % PODS_PER_TXN, 0);
	assert_true(ka.keys >= committed * PODS_PER_TXN);
	assert_true(ka.keys <= (committed + errors) * PODS_PER_TXN);
	etcd_client_close(b.c);
}

static void leader_killed_during_stream(void **state)
{
	(void)state;
	if (cl.n < 3)
		skip();
	/* The endpoints leader first, so the client is talking to it when
	 * it dies. */
	char order[1024];
	size_t li = etcd_test_leader_first(&cl, order, sizeof(order));
	struct etcd_client *c = etcd_test_open(order);

	enum { BATCHES = 120, KILL_AT = 30 };
	int errors = 0, already = 0;
	double t0 = etcd_test_now_s(), killed_at = 0, first_after = 0;
	for (int seq = 0; seq < BATCHES;) {
		if (seq == KILL_AT && !killed_at) {
			assert_int_equal(kill(cl.pids[li], SIGKILL), 0);
			killed_at = etcd_test_now_s();
		}
		char keys[PODS_PER_TXN][64];
		struct etcd_op ops[PODS_PER_TXN];
		snprintf(keys[0], sizeof(keys[0]), "/f3/batch/%06d", seq);
		for (int i = 1; i < PODS_PER_TXN; i++)
			snprintf(keys[i], sizeof(keys[i]), "/f3/place/%06d/%02d", seq, i);
		for (int i = 0; i < PODS_PER_TXN; i++)
			ops[i] = (struct etcd_op){.kind = ETCD_OP_PUT, .key = keys[i],
						  .key_len = strlen(keys[i]), .value = "n",
						  .value_len = 1};
		struct etcd_compare cmp = {.target = ETCD_CMP_VERSION, .result = ETCD_CMP_EQUAL,
					   .key = keys[0], .key_len = strlen(keys[0])};
		struct etcd_txn t = {&cmp, 1, ops, PODS_PER_TXN, NULL, 0};
		struct etcd_txn_result r;
		int rc = etcd_txn(c, &t, &r);
		if (rc != 0) {
			errors++;
			if (etcd_test_now_s() - t0 > 60)
				fail_msg("batch %d: still failing after 60 s: %s", seq,
					 etcd_client_error(c));
			sleep_s(0.05);
			continue; /* the same batch again: its compare makes it once */
		}
		if (!r.succeeded)
			already++; /* an earlier try landed, its answer lost */
		etcd_txn_result_free(&r);
		if (killed_at && !first_after)
			first_after = etcd_test_now_s() - killed_at;
		seq++;
	}
	printf("leader (member %zu) killed at batch %d: %d errors and %d batches found already "
	       "committed on retry; the first commit after the kill came %.2f s later\n",
	       li, KILL_AT, errors, already, first_after);
	struct etcd_census kb = etcd_test_census(c, "/f3/batch/", 0, NULL, NULL);
	struct etcd_census kp = etcd_test_census(c, "/f3/place/", 0, NULL, NULL);
	assert_int_equal(kb.keys, BATCHES);
	assert_int_equal(kp.keys, (size_t)BATCHES * (PODS_PER_TXN - 1));
	assert_int_equal(kb.rewritten, 0);
	assert_int_equal(kp.rewritten, 0);
	assert_true(errors > 0); /* the kill was felt */
	etcd_client_close(c);
}

int main(void)
{
	int rc = etcd_test_cluster_from_env(&cl);
	if (rc != 0)
		return rc; /* 77: skipped */
	setvbuf(stdout, NULL, _IOLBF, 0);
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(one_client_throughput),
		cmocka_unit_test(parallel_throughput),
		cmocka_unit_test(lease_lapse_stops_commits),
		cmocka_unit_test_teardown(stopped_host_commits_nothing, kill_child),
		cmocka_unit_test(leader_killed_during_stream),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
