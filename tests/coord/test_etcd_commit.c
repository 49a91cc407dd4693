/* tests/coord: the fenced, pipelined committer (coord/commit_queue.h) and
 * a shard's rebuild (coord/rebuild.h) against a real 3-member etcd,
 * started by tests/coord/etcd_cluster.sh (SHMSCHED_ETCD_ENDPOINTS,
 * SHMSCHED_ETCD_PIDS); without them the program prints SKIP and exits 77.
 *
 * Every check reads etcd back and counts, per record, its answers (each
 * must be answered exactly once) against what etcd holds:
 * 1. commit_throughput: sync pods/s with 1, 4 and 8 transactions in
 *    flight at 60 and 127 records a transaction (printed: the figures of
 *    docs/perf/2026-11-29-etcd-commit.md); lost (answered 0, not in etcd)
 *    and duplicated (a key at version > 1) must read 0.
 * 2. leader_killed_sync: a stream of records with the etcd leader killed
 *    (SIGKILL) in the middle: every record answered 0, every one in etcd
 *    once: 0 lost, 0 duplicated.
 * 3. lease_revoked_mid_stream: the shard owner's lease revoked while
 *    records stream: every record pushed after the revoke returned is
 *    -ESTALE, none of them is in etcd, no key was created after the
 *    revoke's revision, and every record answered 0 is in etcd.
 * 4. rebuild_equals_committed: puts and deletes committed, node records
 *    written, then the shard read back in pages of 100 at one revision:
 *    exactly the committed placements, values equal.
 * 5. watch_follows_commits: rebuild, then a watch from its revision + 1
 *    sees exactly the puts and deletes committed after; once compacted,
 *    the watch says -ERANGE at etcd's oldest revision and a re-list sees
 *    the whole shard; a set stop flag ends a watch.
 * The fence's semantics are etcd's (Compare on LEASE, VERSION:
 * api/etcdserverpb/rpc.proto, 3.4; a lease's keys deleted on revoke:
 * lease/lessor.go Revoke). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "coord/coord.h"
#include "etcd_test.h"

#define PREFIX "/t/"

static struct etcd_test_cluster cl;

/* A shard owner: a lease kept alive every second by a thread, and the
 * shard's owner key put with it. */
struct owner {
	struct etcd_client *c;
	int64_t lease;
	pthread_t keeper;
	atomic_bool stop;
};

static void *keep_alive(void *arg)
{
	struct owner *o = arg;
	struct etcd_client *c = etcd_test_open(cl.endpoints);
	while (!atomic_load(&o->stop)) {
		int64_t ttl;
		etcd_lease_keepalive(c, o->lease, &ttl); /* errors: tried again */
		for (int i = 0; i < 10 && !atomic_load(&o->stop); i++)
			etcd_test_sleep_ms(100);
	}
	etcd_client_close(c);
	return NULL;
}

static void own_shard(struct owner *o, uint32_t shard)
{
	memset(o, 0, sizeof(*o));
	o->c = etcd_test_open(cl.endpoints);
	int64_t ttl;
	if (etcd_lease_grant(o->c, 10, &o->lease, &ttl) != 0)
		fail_msg("%s", etcd_client_error(o->c));
	char key[256];
	int n = commit_owner_key(PREFIX, shard, key, sizeof(key));
	assert_true(n > 0);
	if (etcd_put(o->c, key, (size_t)n, "host-a", 6, o->lease, NULL) != 0)
		fail_msg("%s", etcd_client_error(o->c));
	assert_int_equal(pthread_create(&o->keeper, NULL, keep_alive, o), 0);
}

static void disown(struct owner *o)
{
	atomic_store(&o->stop, true);
	pthread_join(o->keeper, NULL);
	etcd_lease_revoke(o->c, o->lease);
	etcd_client_close(o->c);
}

/* Each record's answers: how many, and the last rc. */
enum { MAX_RECORDS = 400000 };
struct answers {
	atomic_int count[MAX_RECORDS];
	atomic_int rc[MAX_RECORDS];
	atomic_char pushed[MAX_RECORDS];
	atomic_long done;
	atomic_long ok;
};
static struct answers *ans;

static void on_done(void *ctx, uint64_t cookie, int rc, int64_t revision)
{
	(void)ctx;
	(void)revision;
	atomic_fetch_add(&ans->count[cookie], 1);
	atomic_store(&ans->rc[cookie], rc);
	atomic_fetch_add(&ans->done, 1);
	if (rc == 0)
		atomic_fetch_add(&ans->ok, 1);
}

static void reset_answers(void)
{
	memset(ans, 0, sizeof(*ans));
}

static struct placement_value value_of(long i)
{
	struct placement_value v = {.node_generation = (uint64_t)(i % 7 + 1),
				    .cpu_milli = 100 + i % 1000,
				    .mem_bytes = (int64_t)(i % 64) << 20,
				    .gpus = i % 3};
	snprintf(v.node, sizeof(v.node), "node-%ld", i % 500);
	if (i % 2)
		snprintf(v.queue, sizeof(v.queue), "team-%ld", i % 5);
	return v;
}

/* Pushes record i (a put of uid u<i>), waiting while the queue pushes
 * back. The push's rc (0, or -ESTALE / -ESHUTDOWN). */
static int push_put(struct commit_queue *q, long i)
{
	char uid[32];
	snprintf(uid, sizeof(uid), "u%08ld", i);
	struct placement_value v = value_of(i);
	struct commit_record r = {.op = COMMIT_PUT, .uid = uid, .value = &v,
				  .cookie = (uint64_t)i};
	for (;;) {
		int rc = commit_queue_push(q, &r);
		if (rc == 0)
			atomic_store(&ans->pushed[i], 1);
		if (rc != -EAGAIN)
			return rc;
		etcd_test_sleep_ms(1);
	}
}

static struct commit_queue *open_queue(uint32_t shard, int64_t lease, unsigned in_flight,
				       unsigned batch, const char *eps)
{
	struct commit_queue_config cfg = {
		.endpoints = eps, .prefix = PREFIX, .shard = shard, .lease = lease,
		.in_flight = in_flight, .batch = batch, .capacity = 16384,
		.max_window_ms = 60000, .on_done = on_done,
	};
	struct commit_queue *q;
	char err[256];
	if (commit_queue_open(&q, &cfg, err, sizeof(err)) != 0)
		fail_msg("%s", err);
	return q;
}

/* One pod key seen by read_pods: its record index marked present. */
struct pods_seen {
	size_t prefix_len;
	uint8_t *present; /* NULL: not marked */
	long n;
};

static void pod_seen(const uint8_t *key, size_t len, void *arg)
{
	(void)len;
	const struct pods_seen *s = arg;
	long idx = strtol((const char *)key + s->prefix_len + 1, NULL, 10);
	if (s->present && idx >= 0 && idx < s->n)
		s->present[idx] = 1;
}

/* The shard's pod keys in etcd: per record index, present[i] set (when
 * not NULL), and how many were created after revision `after`. */
static struct etcd_census read_pods(struct etcd_client *c, uint32_t shard, int64_t after,
				    uint8_t *present, long n)
{
	char prefix[128];
	snprintf(prefix, sizeof(prefix), PREFIX "shards/%" PRIu32 "/pods/", shard);
	struct pods_seen seen = {strlen(prefix), present, n};
	/* The census counts keys created at or after its revision. */
	return etcd_test_census(c, prefix, after ? after + 1 : 0, pod_seen, &seen);
}

/* Every record answered once; lost (answered 0, absent) and extra
 * (present, not answered 0) both 0. */
static void assert_exact(const uint8_t *present, long n, const char *what)
{
	long lost = 0, extra = 0, twice = 0;
	for (long i = 0; i < n; i++) {
		int count = atomic_load(&ans->count[i]);
		/* Refused at push (-ESTALE) is counted by the test itself. */
		bool asked = atomic_load(&ans->pushed[i]) || count > 0;
		twice += count != (asked ? 1 : 0);
		bool ok = count == 1 && atomic_load(&ans->rc[i]) == 0;
		lost += ok && !present[i];
		extra += !ok && present[i];
	}
	if (lost || extra || twice)
		fail_msg("%s: %ld records lost, %ld in etcd not answered 0, %ld not answered "
			 "exactly once (of %ld)",
			 what, lost, extra, twice, n);
}

struct producer {
	struct commit_queue *q;
	long first, step;
	double until;
	long pushed;
};

static void *produce(void *arg)
{
	struct producer *p = arg;
	for (long i = p->first; i < MAX_RECORDS && etcd_test_now_s() < p->until; i += p->step) {
		if (push_put(p->q, i) != 0)
			break;
		p->pushed = i + p->step; /* the next index this producer would push */
	}
	return NULL;
}

/* CPU seconds used so far by this process (the client side) and by the
 * etcd members (their /proc/<pid>/stat utime + stime): what a pod costs
 * each, whatever else loads the machine. */
static double client_cpu_s(void)
{
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	return (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 +
	       (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
}

static double etcd_cpu_s(void)
{
	double total = 0;
	long tick = sysconf(_SC_CLK_TCK);
	for (size_t i = 0; i < cl.n; i++) {
		char path[64], buf[1024];
		snprintf(path, sizeof(path), "/proc/%d/stat", (int)cl.pids[i]);
		FILE *f = fopen(path, "r");
		if (!f)
			continue;
		size_t n = fread(buf, 1, sizeof(buf) - 1, f);
		fclose(f);
		buf[n] = '\0';
		/* Fields after the command's closing parenthesis: state is the
		 * 3rd field, utime the 14th, stime the 15th. */
		const char *p = strrchr(buf, ')');
		unsigned long ut = 0, st = 0;
		if (p && sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lu %lu", &ut,
				&st) == 2)
			total += (double)(ut + st) / (double)tick;
	}
	return total;
}

static void commit_throughput(void **state)
{
	(void)state;
	static const unsigned lanes[] = {1, 4, 8};
	static const unsigned batches[] = {60, 127};
	uint32_t shard = 100;
	for (size_t a = 0; a < sizeof(lanes) / sizeof(lanes[0]); a++) {
		for (size_t b = 0; b < sizeof(batches) / sizeof(batches[0]); b++, shard++) {
			reset_answers();
			struct owner o;
			own_shard(&o, shard);
			struct commit_queue *q = open_queue(shard, o.lease, lanes[a], batches[b],
							    cl.endpoints);
			enum { PRODUCERS = 2 };
			struct producer p[PRODUCERS];
			pthread_t t[PRODUCERS];
			double t0 = etcd_test_now_s(), cpu0 = client_cpu_s(), etcd0 = etcd_cpu_s();
			for (int i = 0; i < PRODUCERS; i++) {
				p[i] = (struct producer){.q = q, .first = i, .step = PRODUCERS,
							 .until = t0 + 2.5};
				assert_int_equal(pthread_create(&t[i], NULL, produce, &p[i]), 0);
			}
			long n = 0;
			for (int i = 0; i < PRODUCERS; i++) {
				pthread_join(t[i], NULL);
				n = p[i].pushed > n ? p[i].pushed : n;
			}
			commit_queue_flush(q);
			double secs = etcd_test_now_s() - t0;
			double cpu = client_cpu_s() - cpu0, etcd = etcd_cpu_s() - etcd0;
			struct commit_queue_stats st;
			commit_queue_stats(q, &st);
			commit_queue_close(q, 1000);
			double kp = (double)st.committed / 1000.0;
			/* The ceiling on this machine's 2 vCPUs, were nothing
			 * else running: 2 CPU-seconds a second over the CPU a
			 * pod costs the client and etcd together. */
			printf("commit queue: %u in flight x %u records: %" PRIu64
			       " pods committed in %.2f s = %.0f pods/s, %.0f txn/s (%" PRIu64
			       " retries); CPU a 1,000 pods: client %.3f s, etcd %.3f s; "
			       "2-vCPU ceiling %.0f pods/s\n",
			       lanes[a], batches[b], st.committed, secs, (double)st.committed / secs,
			       (double)st.txns / secs, st.retries, cpu / kp, etcd / kp,
			       2.0 * 1000.0 / (cpu / kp + etcd / kp));
			uint8_t *present = calloc((size_t)n + 1, 1);
			struct etcd_census k = read_pods(o.c, shard, 0, present, n);
			assert_int_equal(k.rewritten, 0);
			assert_int_equal(k.keys, st.committed);
			assert_int_equal(st.stale + st.failed, 0);
			assert_exact(present, n, "throughput");
			free(present);
			disown(&o);
		}
	}
}

static void leader_killed_sync(void **state)
{
	(void)state;
	if (cl.n < 3)
		skip();
	reset_answers();
	uint32_t shard = 200;
	struct owner o;
	own_shard(&o, shard);
	char order[1024];
	size_t li = etcd_test_leader_first(&cl, order, sizeof(order));
	struct commit_queue *q = open_queue(shard, o.lease, 4, 60, order);
	enum { N = 30000, KILL_AFTER = 8000 };
	double t0 = etcd_test_now_s(), killed = 0;
	for (long i = 0; i < N; i++) {
		assert_int_equal(push_put(q, i), 0);
		if (!killed && atomic_load(&ans->ok) >= KILL_AFTER) {
			assert_int_equal(kill(cl.pids[li], SIGKILL), 0);
			killed = etcd_test_now_s();
		}
	}
	commit_queue_flush(q);
	struct commit_queue_stats st;
	commit_queue_stats(q, &st);
	commit_queue_close(q, 1000);
	assert_true(killed > 0);
	printf("leader (member %zu) killed after %d records: %" PRIu64 " committed in %.2f s, %" PRIu64
	       " retries, %" PRIu64 " found landed on retry\n",
	       li, KILL_AFTER, st.committed, etcd_test_now_s() - t0, st.retries, st.landed_twice);
	uint8_t *present = calloc(N, 1);
	struct etcd_census k = read_pods(o.c, shard, 0, present, N);
	assert_int_equal(st.committed, N);
	assert_int_equal(k.keys, N);
	assert_int_equal(k.rewritten, 0);
	assert_exact(present, N, "leader killed");
	assert_true(st.retries > 0); /* the kill was felt */
	free(present);
	disown(&o);
}

static void lease_revoked_mid_stream(void **state)
{
	(void)state;
	reset_answers();
	uint32_t shard = 300;
	struct owner o;
	own_shard(&o, shard);
	/* The keeper stops first: the revoke is the test's. */
	atomic_store(&o.stop, true);
	pthread_join(o.keeper, NULL);
	struct commit_queue *q = open_queue(shard, o.lease, 4, 60, cl.endpoints);
	long i = 0, after_revoke = -1;
	int64_t revoke_rev = 0;
	double revoked_at = 0;
	int push_stale = 0;
	for (;; i++) {
		assert_true(i < MAX_RECORDS);
		if (!revoked_at && atomic_load(&ans->ok) >= 5000) {
			struct etcd_client *c = etcd_test_open(cl.endpoints);
			assert_int_equal(etcd_lease_revoke(c, o.lease), 0);
			/* The revision the revoke was applied at, or before. */
			assert_int_equal(etcd_put(c, "/t/mark", 7, "x", 1, 0, &revoke_rev), 0);
			etcd_client_close(c);
			revoked_at = etcd_test_now_s();
			after_revoke = i;
		}
		int rc = push_put(q, i);
		if (rc == -ESTALE) {
			push_stale++;
			atomic_fetch_add(&ans->count[i], 1);
			atomic_store(&ans->rc[i], -ESTALE);
		} else {
			assert_int_equal(rc, 0);
		}
		/* After the revoke: 2,000 more, paced, so some reach lanes
		 * before the fence is seen and some after. */
		if (revoked_at && i - after_revoke >= 2000)
			break;
		if (revoked_at)
			etcd_test_sleep_ms(i % 4 == 0);
	}
	long n = i + 1;
	commit_queue_flush(q);
	struct commit_queue_stats st;
	commit_queue_stats(q, &st);
	assert_true(commit_queue_fenced(q));
	char err[512];
	commit_queue_error(q, err, sizeof(err));
	commit_queue_close(q, 1000);
	long late_ok = 0;
	for (long k = after_revoke; k < n; k++)
		late_ok += atomic_load(&ans->rc[k]) != -ESTALE;
	uint8_t *present = calloc((size_t)n, 1);
	struct etcd_census k = read_pods(o.c, shard, revoke_rev, present, n);
	printf("lease revoked after %ld records: %" PRIu64 " committed, %" PRIu64
	       " answered -ESTALE, %d refused at push; keys in etcd %zu, created after the "
	       "revoke %zu; pushed after the revoke and not -ESTALE: %ld\n  (%s)\n",
	       after_revoke, st.committed, st.stale, push_stale, k.keys, k.late, late_ok, err);
	assert_int_equal(late_ok, 0);
	assert_int_equal(k.late, 0);
	assert_int_equal(k.rewritten, 0);
	assert_int_equal(k.keys, st.committed);
	assert_true(st.stale > 0);
	assert_exact(present, n, "lease revoked");
	free(present);
	etcd_client_close(o.c);
}

struct seen {
	struct placement_value *pods;
	uint8_t *got;
	long n;
	long items, nodes, bad;
};

static int on_item(void *ctx, const struct rebuild_item *it)
{
	struct seen *s = ctx;
	s->items++;
	if (it->kind == REBUILD_NODE) {
		s->nodes++;
		if (it->value_len != 5 || memcmp(it->value, "gen=3", 5) != 0)
			s->bad++;
		return 0;
	}
	long idx = strtol(it->name + 1, NULL, 10);
	const struct placement_value *a = it->pod, *b = idx >= 0 && idx < s->n ? &s->pods[idx] : NULL;
	if (it->name[0] != 'u' || !b || s->got[idx] || strcmp(a->node, b->node) != 0 ||
	    strcmp(a->queue, b->queue) != 0 || a->node_generation != b->node_generation ||
	    a->cpu_milli != b->cpu_milli || a->mem_bytes != b->mem_bytes || a->gpus != b->gpus)
		s->bad++;
	else
		s->got[idx] = 1;
	return 0;
}

static void rebuild_equals_committed(void **state)
{
	(void)state;
	reset_answers();
	uint32_t shard = 400;
	struct owner o;
	own_shard(&o, shard);
	struct commit_queue *q = open_queue(shard, o.lease, 4, 127, cl.endpoints);
	enum { N = 3000 };
	for (long i = 0; i < N; i++)
		assert_int_equal(push_put(q, i), 0);
	/* Releases of every third pod, after its placement (same lane). */
	for (long i = 0; i < N; i += 3) {
		char uid[32];
		snprintf(uid, sizeof(uid), "u%08ld", i);
		struct commit_record r = {.op = COMMIT_DELETE, .uid = uid,
					  .cookie = (uint64_t)(N + i)};
		int rc;
		while ((rc = commit_queue_push(q, &r)) == -EAGAIN)
			etcd_test_sleep_ms(1);
		assert_int_equal(rc, 0);
	}
	commit_queue_flush(q);
	struct commit_queue_stats st;
	commit_queue_stats(q, &st);
	commit_queue_close(q, 1000);
	assert_int_equal(st.committed, N + (N + 2) / 3);
	for (int i = 0; i < 3; i++) {
		char key[128];
		snprintf(key, sizeof(key), PREFIX "shards/%" PRIu32 "/nodes/node-%d", shard, i);
		assert_int_equal(etcd_put(o.c, key, strlen(key), "gen=3", 5, 0, NULL), 0);
	}
	struct seen s = {.pods = calloc(N, sizeof(*s.pods)), .got = calloc(N, 1), .n = N};
	for (long i = 0; i < N; i++)
		s.pods[i] = value_of(i);
	struct rebuild_callbacks cb = {.item = on_item, .ctx = &s};
	int64_t rev = 0;
	char err[256];
	struct etcd_client *c = etcd_test_open(cl.endpoints);
	if (coord_rebuild_shard(c, PREFIX, shard, 100, &cb, &rev, err, sizeof(err)) != 0)
		fail_msg("%s", err);
	long expect = 0, missing = 0;
	for (long i = 0; i < N; i++) {
		bool kept = i % 3 != 0;
		expect += kept;
		missing += kept != (s.got[i] != 0);
	}
	printf("rebuild at revision %" PRId64 ": %ld pods, %ld nodes; %ld missing or extra, %ld "
	       "wrong\n",
	       rev, s.items - s.nodes, s.nodes, missing, s.bad);
	assert_true(rev > 0);
	assert_int_equal(s.bad, 0);
	assert_int_equal(missing, 0);
	assert_int_equal(s.items - s.nodes, expect);
	assert_int_equal(s.nodes, 3);
	etcd_client_close(c);
	free(s.pods);
	free(s.got);
	disown(&o);
}

struct follow {
	const char *endpoints;
	char key[64];
	uint8_t end[64];
	size_t end_len;
	int64_t from;
	long want;
	/* Written by the watch's thread, polled by the test's. */
	atomic_long puts, deletes;
	int rc;
	int64_t next;
	char err[256];
	atomic_bool stop;
};

static int count_event(void *ctx, const struct etcd_watch_message *m)
{
	struct follow *f = ctx;
	for (size_t i = 0; i < m->n_events; i++) {
		if (m->events[i].deleted)
			f->deletes++;
		else
			f->puts++;
	}
	return f->puts + f->deletes >= f->want ? 1 : 0;
}

static void *follow_run(void *arg)
{
	struct follow *f = arg;
	struct watch_options o = {.endpoints = f->endpoints, .key = f->key,
				  .key_len = strlen(f->key), .range_end = f->end,
				  .range_end_len = f->end_len, .start_revision = f->from,
				  .stop = &f->stop};
	f->rc = watch_run(&o, count_event, f, &f->next, f->err, sizeof(f->err));
	return NULL;
}

static int count_pods(void *ctx, const struct rebuild_item *it)
{
	long *n = ctx;
	*n += it->kind == REBUILD_POD;
	return 0;
}

/* A new owner's path: rebuild at one revision, then watch from revision
 * + 1 and see exactly what is committed after; once that revision is
 * compacted the watch says -ERANGE and a re-list sees the whole shard. */
static void watch_follows_commits(void **state)
{
	(void)state;
	reset_answers();
	uint32_t shard = 500;
	struct owner o;
	own_shard(&o, shard);
	struct commit_queue *q = open_queue(shard, o.lease, 4, 60, cl.endpoints);
	for (long i = 0; i < 1000; i++)
		assert_int_equal(push_put(q, i), 0);
	commit_queue_flush(q);
	long pods = 0;
	int64_t rev = 0;
	char err[256];
	struct rebuild_callbacks cb = {.item = count_pods, .ctx = &pods};
	if (coord_rebuild_shard(o.c, PREFIX, shard, 300, &cb, &rev, err, sizeof(err)) != 0)
		fail_msg("%s", err);
	assert_int_equal(pods, 1000);

	struct follow *f = calloc(1, sizeof(*f));
	f->endpoints = cl.endpoints;
	snprintf(f->key, sizeof(f->key), PREFIX "shards/%" PRIu32 "/pods/", shard);
	f->end_len = etcd_prefix_end(f->key, strlen(f->key), f->end);
	f->from = rev + 1;
	f->want = 700;
	pthread_t t;
	assert_int_equal(pthread_create(&t, NULL, follow_run, f), 0);
	for (long i = 1000; i < 1500; i++)
		assert_int_equal(push_put(q, i), 0);
	for (long i = 0; i < 200; i++) {
		char uid[32];
		snprintf(uid, sizeof(uid), "u%08ld", i);
		struct commit_record r = {.op = COMMIT_DELETE, .uid = uid, .cookie = 2000 + i};
		int rc;
		while ((rc = commit_queue_push(q, &r)) == -EAGAIN)
			etcd_test_sleep_ms(1);
		assert_int_equal(rc, 0);
	}
	commit_queue_flush(q);
	double t0 = etcd_test_now_s();
	while (atomic_load(&f->puts) + atomic_load(&f->deletes) < f->want &&
	       etcd_test_now_s() - t0 < 20)
		etcd_test_sleep_ms(10);
	atomic_store(&f->stop, true);
	pthread_join(t, NULL);
	commit_queue_close(q, 1000);
	printf("watch from revision %" PRId64 ": %ld puts, %ld deletes (rc %d, %s)\n", rev + 1,
	       atomic_load(&f->puts), atomic_load(&f->deletes), f->rc, f->err);
	assert_int_equal(f->rc, 1);
	assert_int_equal(f->puts, 500);
	assert_int_equal(f->deletes, 200);
	assert_true(f->next > rev + 1);

	/* Compacted past the rebuild's revision: -ERANGE, then a re-list. */
	int64_t now_rev;
	assert_int_equal(etcd_put(o.c, "/t/mark", 7, "y", 1, 0, &now_rev), 0);
	assert_int_equal(etcd_compact(o.c, now_rev), 0);
	memset(f, 0, sizeof(*f));
	f->endpoints = cl.endpoints;
	snprintf(f->key, sizeof(f->key), PREFIX "shards/%" PRIu32 "/pods/", shard);
	f->end_len = etcd_prefix_end(f->key, strlen(f->key), f->end);
	f->from = rev + 1;
	f->want = 1;
	follow_run(f);
	printf("watch from a compacted revision: rc %d, resume at %" PRId64 " (%s)\n", f->rc,
	       f->next, f->err);
	assert_int_equal(f->rc, -ERANGE);
	assert_int_equal(f->next, now_rev);
	pods = 0;
	if (coord_rebuild_shard(o.c, PREFIX, shard, 300, &cb, &rev, err, sizeof(err)) != 0)
		fail_msg("%s", err);
	assert_int_equal(pods, 1300);

	/* Stopped by its flag. */
	memset(f, 0, sizeof(*f));
	f->endpoints = cl.endpoints;
	snprintf(f->key, sizeof(f->key), PREFIX "shards/%" PRIu32 "/pods/", shard);
	f->want = 1;
	atomic_store(&f->stop, true);
	follow_run(f);
	assert_int_equal(f->rc, -ECANCELED);
	free(f);
	disown(&o);
}

/* Several ranges in one stream (watch_options.ranges: one create_request
 * each, as daemon/shard_watch.c follows the shards a host does not own):
 * keys put under /t/wr/{a,b,c,d}/ and at /t/wr/e and /t/wr/f, ranges
 * a/, c/ and the single key e: exactly the 10 + 10 + 1 puts there, each
 * once, none of b/, d/ or f. On the code before (one create_request
 * from key and range_end alone) the ranges were not read: nothing
 * under c/ nor e came. */
struct multi {
	atomic_long in_a, in_c, at_e, other;
	long want;
};

static int count_multi(void *ctx, const struct etcd_watch_message *m)
{
	struct multi *mu = ctx;
	for (size_t i = 0; i < m->n_events; i++) {
		const struct etcd_kv *kv = &m->events[i].kv;
		const char *k = (const char *)kv->key;
		size_t n = kv->key_len;
		if (n > 8 && memcmp(k, "/t/wr/a/", 8) == 0)
			mu->in_a++;
		else if (n > 8 && memcmp(k, "/t/wr/c/", 8) == 0)
			mu->in_c++;
		else if (n == 7 && memcmp(k, "/t/wr/e", 7) == 0)
			mu->at_e++;
		else
			mu->other++;
	}
	return mu->in_a + mu->in_c + mu->at_e + mu->other >= mu->want ? 1 : 0;
}

static void watch_ranges_one_stream(void **state)
{
	(void)state;
	struct etcd_client *c = etcd_test_open(cl.endpoints);
	int64_t rev;
	assert_int_equal(etcd_put(c, "/t/wr/mark", 10, "m", 1, 0, &rev), 0);
	static const char *const dirs[] = {"a", "b", "c", "d"};
	for (int d = 0; d < 4; d++)
		for (int i = 0; i < 10; i++) {
			char key[32];
			int n = snprintf(key, sizeof(key), "/t/wr/%s/%d", dirs[d], i);
			assert_int_equal(etcd_put(c, key, (size_t)n, "v", 1, 0, NULL), 0);
		}
	assert_int_equal(etcd_put(c, "/t/wr/e", 7, "v", 1, 0, NULL), 0);
	assert_int_equal(etcd_put(c, "/t/wr/f", 7, "v", 1, 0, NULL), 0);
	uint8_t end_a[16], end_c[16];
	size_t la = etcd_prefix_end("/t/wr/a/", 8, end_a);
	size_t lc = etcd_prefix_end("/t/wr/c/", 8, end_c);
	struct watch_range ranges[] = {
		{"/t/wr/a/", 8, end_a, la},
		{"/t/wr/c/", 8, end_c, lc},
		{"/t/wr/e", 7, NULL, 0},
	};
	struct multi mu = {.want = 21};
	atomic_bool stop = false;
	struct watch_options o = {.endpoints = cl.endpoints, .ranges = ranges, .n_ranges = 3,
				  .start_revision = rev + 1, .stop = &stop};
	int64_t next;
	char err[256];
	int rc = watch_run(&o, count_multi, &mu, &next, err, sizeof(err));
	/* Anything past the 21 would come after: a moment more. */
	printf("3 ranges in one stream: rc %d (%s): a/ %ld, c/ %ld, e %ld, other %ld\n", rc,
	       err, atomic_load(&mu.in_a), atomic_load(&mu.in_c), atomic_load(&mu.at_e),
	       atomic_load(&mu.other));
	assert_int_equal(rc, 1);
	assert_int_equal(mu.in_a, 10);
	assert_int_equal(mu.in_c, 10);
	assert_int_equal(mu.at_e, 1);
	assert_int_equal(mu.other, 0);
	etcd_client_close(c);
}

int main(void)
{
	int rc = etcd_test_cluster_from_env(&cl);
	if (rc != 0)
		return rc; /* 77: skipped */
	setvbuf(stdout, NULL, _IOLBF, 0);
	ans = calloc(1, sizeof(*ans));
	/* One test by name, for a run by hand (cmocka's filter). */
	if (getenv("SHMSCHED_TEST_FILTER"))
		cmocka_set_test_filter(getenv("SHMSCHED_TEST_FILTER"));
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(rebuild_equals_committed),
		cmocka_unit_test(lease_revoked_mid_stream),
		cmocka_unit_test(watch_follows_commits),
		cmocka_unit_test(watch_ranges_one_stream),
		cmocka_unit_test(commit_throughput),
		/* Last: it leaves the cluster a member short. */
		cmocka_unit_test(leader_killed_sync),
	};
	rc = cmocka_run_group_tests(tests, NULL, NULL);
	free(ans);
	return rc;
}
