/* tests/coord: a host's membership (coord/membership.h) against a real
 * 3-member etcd (issue 40), started by tests/coord/etcd_cluster.sh
 * (SHMSCHED_ETCD_ENDPOINTS, SHMSCHED_ETCD_PIDS); without them the program
 * prints SKIP and exits 77. The lease's keep-alives run on a thread and
 * etcd connection of their own (coord/lease_renewer.h), so that nothing
 * the membership thread does delays them.
 *
 * The probe records every alive_until told (coord/membership.h): the
 * gaps between renewals (printed as max and median) and whether the
 * instant told ever passed before the next one came (a window where the
 * host would have placed nothing although healthy).
 *
 * 1. slow_tick_keeps_lease: the owned callback (on the membership thread,
 *    every tick) sleeps 3 s, longer than the 2 s TTL, for 7 s: the lease
 *    is kept (no loss, one join) and the instant told never lapses. On
 *    369c08c (renewals on the membership thread) the lease expires: it
 *    fails there.
 * 2. commit_load_keeps_lease: 4 clients commit transactions of 128 puts
 *    of 1 KiB (the commit lanes' biggest) as fast as etcd answers for 8 s
 *    while the host holds its shards: no loss, the instant told never
 *    lapses; the gaps printed.
 * 3. unreachable_etcd_lapses: every member SIGSTOPped for 4 s (past the
 *    TTL): the instant told lapses (the host places nothing), then the
 *    renewal is refused once the members go on: exactly one loss, the
 *    shards dropped once, the old lease's fence (compare LEASE(owner key))
 *    fails, and the host joins again. */
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
#include <time.h>
#include <unistd.h>

#include "coord/coord.h"
#include "coord/membership.h"
#include "etcd_test.h"

#define TTL_S 2
#define TELLS_MAX 4096

static struct etcd_test_cluster cl;

/* What the callbacks saw; under mu. */
struct probe {
	pthread_mutex_t mu;
	uint64_t told_at[TELLS_MAX]; /* when each instant > 0 was told */
	size_t n_told;
	uint64_t until;      /* the last instant told */
	uint64_t lapsed;     /* tells that came after the last instant passed */
	uint64_t zeros;      /* 0 told after an instant > 0 */
	uint64_t drops;      /* owned told empty after being non-empty */
	size_t owned;
	int slow_ms;         /* the owned callback's sleep */
};

static size_t two_shards(void *arg, shard_name_t *out, size_t cap)
{
	(void)arg;
	if (cap < 2)
		return 0;
	snprintf(out[0], SHARD_NAME_MAX, "a");
	snprintf(out[1], SHARD_NAME_MAX, "b");
	return 2;
}

static void on_owned(void *arg, const shard_name_t *names, size_t n)
{
	(void)names;
	struct probe *p = arg;
	pthread_mutex_lock(&p->mu);
	if (n == 0 && p->owned > 0)
		p->drops++;
	p->owned = n;
	int slow = p->slow_ms;
	pthread_mutex_unlock(&p->mu);
	if (slow > 0)
		etcd_test_sleep_ms(slow); /* a slow step of the membership thread */
}

static void on_alive(void *arg, uint64_t until)
{
	struct probe *p = arg;
	uint64_t now = etcd_test_now_ns();
	pthread_mutex_lock(&p->mu);
	if (until == 0) {
		if (p->until != 0)
			p->zeros++;
	} else {
		if (p->until != 0 && now > p->until)
			p->lapsed++;
		if (p->n_told < TELLS_MAX)
			p->told_at[p->n_told++] = now;
	}
	p->until = until;
	pthread_mutex_unlock(&p->mu);
}

static struct membership *start(struct probe *p, const char *cluster, const char *host)
{
	memset(p, 0, sizeof(*p));
	pthread_mutex_init(&p->mu, NULL);
	struct membership_config mc = {.endpoints = cl.endpoints, .cluster = cluster,
				       .host = host, .ttl_s = TTL_S, .shards = two_shards,
				       .owned = on_owned, .alive_until = on_alive, .arg = p};
	struct membership *m = NULL;
	char err[256] = "";
	int rc = membership_start(&m, &mc, err, sizeof(err));
	if (rc != 0)
		fail_msg("membership_start: %d: %s", rc, err);
	return m;
}

static size_t owned_now(struct probe *p)
{
	pthread_mutex_lock(&p->mu);
	size_t n = p->owned;
	pthread_mutex_unlock(&p->mu);
	return n;
}

/* Waits up to 15 s for the host to own both shards. */
static void wait_owned(struct probe *p)
{
	for (int i = 0; i < 300 && owned_now(p) < 2; i++)
		etcd_test_sleep_ms(50);
	assert_int_equal(owned_now(p), 2);
}

static int by_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

/* The gaps between tells [from, n_told): max and median in ms. */
static void gaps(struct probe *p, size_t from, const char *what, double *max_ms)
{
	pthread_mutex_lock(&p->mu);
	size_t n = p->n_told > from + 1 ? p->n_told - from - 1 : 0;
	uint64_t *g = calloc(n + 1, sizeof(*g));
	assert_non_null(g);
	for (size_t i = 0; i < n; i++)
		g[i] = p->told_at[from + i + 1] - p->told_at[from + i];
	pthread_mutex_unlock(&p->mu);
	qsort(g, n, sizeof(*g), by_u64);
	*max_ms = n > 0 ? (double)g[n - 1] / 1e6 : 0;
	printf("# %s: %zu renewals, gap median %.1f ms, max %.1f ms (TTL %d s)\n", what,
	       n, n > 0 ? (double)g[n / 2] / 1e6 : 0.0, *max_ms, TTL_S);
	free(g);
}

static size_t told(struct probe *p)
{
	pthread_mutex_lock(&p->mu);
	size_t n = p->n_told;
	pthread_mutex_unlock(&p->mu);
	return n;
}

static void slow_tick_keeps_lease(void **state)
{
	(void)state;
	static struct probe p; /* static: outlives a failed test's host */
	struct membership *m = start(&p, "lr1", "h1");
	wait_owned(&p);
	size_t from = told(&p);
	pthread_mutex_lock(&p.mu);
	p.slow_ms = 3000; /* > TTL */
	pthread_mutex_unlock(&p.mu);
	etcd_test_sleep_ms(7000);
	pthread_mutex_lock(&p.mu);
	p.slow_ms = 0;
	pthread_mutex_unlock(&p.mu);
	double max_ms;
	gaps(&p, from, "slow tick (3 s a tick)", &max_ms);
	struct membership_status st;
	membership_get_status(m, &st);
	printf("# losses %llu joins %llu lapsed %llu\n", (unsigned long long)st.losses,
	       (unsigned long long)st.joins, (unsigned long long)p.lapsed);
	assert_int_equal(st.losses, 0);
	assert_int_equal(st.joins, 1);
	assert_int_equal(p.lapsed, 0);
	assert_int_equal(p.zeros, 0);
	assert_true(max_ms < TTL_S * 1000.0 * 3 / 4);
	membership_stop(m);
	pthread_mutex_destroy(&p.mu);
}

struct loader {
	pthread_t t;
	int id;
	volatile int stop;
	uint64_t txns;
};

static void *load(void *arg)
{
	struct loader *l = arg;
	struct etcd_client *c = etcd_test_open(cl.endpoints);
	enum { OPS = 128, VLEN = 1024 };
	static char value[VLEN];
	memset(value, 'v', sizeof(value));
	char keys[OPS][64];
	struct etcd_op ops[OPS];
	for (uint64_t round = 0; !__atomic_load_n(&l->stop, __ATOMIC_RELAXED); round++) {
		for (int i = 0; i < OPS; i++) {
			int kl = snprintf(keys[i], sizeof(keys[i]), "/lrload/%d/%d", l->id, i);
			ops[i] = (struct etcd_op){.kind = ETCD_OP_PUT, .key = keys[i],
						  .key_len = (size_t)kl, .value = value,
						  .value_len = VLEN};
		}
		struct etcd_txn t = {NULL, 0, ops, OPS, NULL, 0};
		struct etcd_txn_result r;
		if (etcd_txn(c, &t, &r) == 0) {
			etcd_txn_result_free(&r);
			l->txns++;
		}
	}
	etcd_client_close(c);
	return NULL;
}

static void commit_load_keeps_lease(void **state)
{
	(void)state;
	static struct probe p; /* static: outlives a failed test's host */
	struct membership *m = start(&p, "lr2", "h2");
	wait_owned(&p);
	size_t from = told(&p);
	struct loader l[4];
	for (int i = 0; i < 4; i++) {
		l[i] = (struct loader){.id = i};
		assert_int_equal(pthread_create(&l[i].t, NULL, load, &l[i]), 0);
	}
	etcd_test_sleep_ms(8000);
	uint64_t txns = 0;
	for (int i = 0; i < 4; i++) {
		__atomic_store_n(&l[i].stop, 1, __ATOMIC_RELAXED);
		pthread_join(l[i].t, NULL);
		txns += l[i].txns;
	}
	double max_ms;
	gaps(&p, from, "commit load (4 clients, 128 x 1 KiB a txn)", &max_ms);
	struct membership_status st;
	membership_get_status(m, &st);
	printf("# %llu load txns; renew rtt max %.1f ms; losses %llu lapsed %llu\n",
	       (unsigned long long)txns, (double)st.renew.rtt_max_ns / 1e6,
	       (unsigned long long)st.losses, (unsigned long long)p.lapsed);
	assert_true(txns > 0);
	assert_int_equal(st.losses, 0);
	assert_int_equal(p.lapsed, 0);
	membership_stop(m);
	pthread_mutex_destroy(&p.mu);
}

static void signal_members(int sig)
{
	for (size_t i = 0; i < cl.n; i++)
		assert_int_equal(kill(cl.pids[i], sig), 0);
}

static void unreachable_etcd_lapses(void **state)
{
	(void)state;
	static struct probe p; /* static: outlives a failed test's host */
	struct membership *m = start(&p, "lr3", "h3");
	wait_owned(&p);
	struct membership_status st;
	membership_get_status(m, &st);
	int64_t old = st.lease;
	assert_true(old != 0);
	signal_members(SIGSTOP);
	etcd_test_sleep_ms(4000); /* past the TTL */
	pthread_mutex_lock(&p.mu);
	uint64_t until = p.until;
	pthread_mutex_unlock(&p.mu);
	uint64_t now = etcd_test_now_ns();
	signal_members(SIGCONT);
	assert_true(until < now); /* placing nothing: the lease not surely alive */
	/* The next keep-alive is refused: one loss, the shards dropped, a new
	 * lease. */
	for (int i = 0; i < 400; i++) {
		membership_get_status(m, &st);
		if (st.joins >= 2 && owned_now(&p) == 2)
			break;
		etcd_test_sleep_ms(50);
	}
	membership_get_status(m, &st);
	printf("# losses %llu joins %llu zeros %llu drops %llu\n",
	       (unsigned long long)st.losses, (unsigned long long)st.joins,
	       (unsigned long long)p.zeros, (unsigned long long)p.drops);
	assert_int_equal(st.losses, 1);
	assert_int_equal(st.joins, 2);
	assert_int_equal(p.drops, 1);
	assert_true(st.lease != 0 && st.lease != old);
	/* The old lease's fence fails: its owner key went with it. */
	struct etcd_client *c = etcd_test_open(cl.endpoints);
	char key[128];
	int kl = snprintf(key, sizeof(key), "/shmsched/lr3/shards/a/owner");
	struct etcd_compare cmp = {.target = ETCD_CMP_LEASE, .result = ETCD_CMP_EQUAL,
				   .key = key, .key_len = (size_t)kl, .number = old};
	struct etcd_op put = {.kind = ETCD_OP_PUT, .key = "/lr3-fenced", .key_len = 11,
			      .value = "x", .value_len = 1};
	struct etcd_txn t = {&cmp, 1, &put, 1, NULL, 0};
	struct etcd_txn_result r;
	assert_int_equal(etcd_txn(c, &t, &r), 0);
	assert_false(r.succeeded);
	etcd_txn_result_free(&r);
	etcd_client_close(c);
	membership_stop(m);
	pthread_mutex_destroy(&p.mu);
}

int main(void)
{
	int rc = etcd_test_cluster_from_env(&cl);
	if (rc != 0)
		return rc; /* 77: skipped */
	setvbuf(stdout, NULL, _IOLBF, 0);
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(slow_tick_keeps_lease),
		cmocka_unit_test(commit_load_keeps_lease),
		cmocka_unit_test(unreachable_etcd_lapses),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
