/* unit.quota_race: charges and releases racing on a small quota tree
 * (quota/quota.c, QC1-QC4), with a checker thread reading every counter
 * while they run. Run it under TSan too (scripts/test's tsan flavour).
 *
 * The tree (cpu in millicores, one flavor), built so that every queue
 * borrows and every limit binds:
 *
 *   root (nominal 2000)
 *   +-- team (nominal 1000, borrowingLimit 3000, lendingLimit 500)
 *   |   +-- a (nominal 4000, borrowingLimit 3000, lendingLimit 1000)
 *   |   +-- b (nominal 3000)
 *   +-- c (nominal 5000, borrowingLimit 2000, lendingLimit 2000)
 *
 * Subtree quotas, by Kueue's rules (pkg/cache/scheduler/resource_node.go):
 * a keeps 3000, so team = 1000 + 1000 + 3000 = 5000, team keeps 4500;
 * c keeps 3000; root = 2000 + 500 + 2000 = 4500.
 *
 * Two to four workers charge random requests to random queues and release
 * them; the checker counts, at every instant, counters over their bound
 * (a: 7000, team: 8000, c: 7000, root: 4500) or below 0. After the join,
 * with nothing in flight: each queue's counter equals the sum of its live
 * charges, each cohort's the sum of its children's excess, the bounds
 * hold on those real values (so no lender is below what it keeps), and
 * releasing everything leaves every counter at 0. Violations must read 0,
 * and the compare-and-swap conflicts must be > 0 (the race is real).
 */
#include <errno.h>
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

#include <cmocka.h>

#include "base/base.h"
#include "quota/quota.h"

#define NO QUOTA_NO_LIMIT
#define W1 QUOTA_WEIGHT_DEFAULT_MILLI
#define OPS_MIN 60000
#define SECONDS_MIN 1.0
#define SECONDS_MAX 20
#define LIVE 8

enum { A, B, C, TEAM, ROOT, N_NODES };
static const char *const node_names[N_NODES] = { "a", "b", "c", "team", "root" };
static const int64_t bound[N_NODES] = { 7000, INT64_MAX, 7000, 8000, 4500 };
static const int64_t kept[N_NODES] = { 3000, 0, 3000, 4500, 0 };

struct race {
	struct quota_tree *t;
	int id[N_NODES];
	int stop;          /* relaxed flag, read by every thread */
	uint64_t violations;
};

struct live_charge {
	int q; /* A, B or C */
	int64_t cpu;
};

struct worker {
	struct race *r;
	uint64_t seed;
	uint64_t ops, admitted;
	int n_live;
	struct live_charge live[LIVE];
};

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	struct race *r = w->r;
	uint64_t rng = w->seed;
	while (!__atomic_load_n(&r->stop, __ATOMIC_RELAXED)) {
		__atomic_fetch_add(&w->ops, 1, __ATOMIC_RELAXED);
		if (w->n_live < LIVE && (w->n_live == 0 || rng_below(&rng, 2))) {
			struct live_charge c = {
				.q = (int)rng_below(&rng, 3),
				.cpu = 100 * (1 + (int64_t)rng_below(&rng, 25)),
			};
			if (quota_try_charge(r->t, r->id[c.q], 0, &c.cpu) == 0) {
				w->live[w->n_live++] = c;
				w->admitted++;
			}
		} else {
			int i = (int)rng_below(&rng, (uint64_t)w->n_live);
			struct live_charge c = w->live[i];
			w->live[i] = w->live[--w->n_live];
			quota_release(r->t, r->id[c.q], 0, &c.cpu);
		}
	}
	return NULL;
}

static void *checker_main(void *arg)
{
	struct race *r = arg;
	while (!__atomic_load_n(&r->stop, __ATOMIC_RELAXED)) {
		for (int n = 0; n < N_NODES; n++) {
			int64_t u = quota_usage(r->t, r->id[n], 0, 0);
			if (u < 0 || u > bound[n]) {
				if (r->violations < 5)
					fprintf(stderr, "%s: usage %lld, bound %lld\n",
						node_names[n], (long long)u,
						(long long)bound[n]);
				r->violations++;
			}
		}
	}
	return NULL;
}

static void build(struct race *r)
{
	char err[256];
	memset(r, 0, sizeof(*r));
	assert_int_equal(quota_tree_new(&r->t), 0);
	struct quota_tree *t = r->t;
	assert_int_equal(quota_flavor_add(t, "default", err, sizeof(err)), 0);
	assert_int_equal(quota_resource_add(t, "cpu", err, sizeof(err)), 0);
	r->id[ROOT] = quota_cohort_add(t, "root", NULL, W1, err, sizeof(err));
	r->id[TEAM] = quota_cohort_add(t, "team", "root", W1, err, sizeof(err));
	r->id[A] = quota_cluster_queue_add(t, "a", "team", W1, NULL, err, sizeof(err));
	r->id[B] = quota_cluster_queue_add(t, "b", "team", W1, NULL, err, sizeof(err));
	r->id[C] = quota_cluster_queue_add(t, "c", "root", W1, NULL, err, sizeof(err));
	assert_int_equal(quota_set(t, r->id[ROOT], 0, 0, 2000, NO, NO, err, sizeof(err)), 0);
	assert_int_equal(quota_set(t, r->id[TEAM], 0, 0, 1000, 3000, 500, err, sizeof(err)), 0);
	assert_int_equal(quota_set(t, r->id[A], 0, 0, 4000, 3000, 1000, err, sizeof(err)), 0);
	assert_int_equal(quota_set(t, r->id[B], 0, 0, 3000, NO, NO, err, sizeof(err)), 0);
	assert_int_equal(quota_set(t, r->id[C], 0, 0, 5000, 2000, 2000, err, sizeof(err)), 0);
	assert_int_equal(quota_seal(t, err, sizeof(err)), 0);
	/* The figures of the opening comment. */
	assert_int_equal(quota_subtree_quota(t, r->id[TEAM], 0, 0), 5000);
	assert_int_equal(quota_subtree_quota(t, r->id[ROOT], 0, 0), 4500);
	for (int n = 0; n < N_NODES; n++)
		assert_int_equal(quota_kept(t, r->id[n], 0, 0), kept[n]);
}

static int64_t excess(int n, int64_t u)
{
	return u > kept[n] ? u - kept[n] : 0;
}

static void race(int threads)
{
	struct race r;
	build(&r);
	struct worker w[4];
	pthread_t tid[4], checker;
	for (int i = 0; i < threads; i++) {
		memset(&w[i], 0, sizeof(w[i]));
		w[i].r = &r;
		w[i].seed = 0x5eed0000u + (uint64_t)i * 7919u + (uint64_t)threads;
		assert_int_equal(pthread_create(&tid[i], NULL, worker_main, &w[i]), 0);
	}
	assert_int_equal(pthread_create(&checker, NULL, checker_main, &r), 0);
	/* At least OPS_MIN operations per worker, SECONDS_MIN of racing and
	 * one lost CAS, within SECONDS_MAX. */
	double start = now_s();
	for (;;) {
		struct timespec ms = { 0, 20 * 1000 * 1000 };
		nanosleep(&ms, NULL);
		uint64_t least = UINT64_MAX;
		for (int i = 0; i < threads; i++) {
			uint64_t ops = __atomic_load_n(&w[i].ops, __ATOMIC_RELAXED);
			least = ops < least ? ops : least;
		}
		double elapsed = now_s() - start;
		if ((least >= OPS_MIN && elapsed >= SECONDS_MIN &&
		     quota_conflicts(r.t) > 0) || elapsed > SECONDS_MAX)
			break;
	}
	__atomic_store_n(&r.stop, 1, __ATOMIC_RELAXED);
	for (int i = 0; i < threads; i++)
		pthread_join(tid[i], NULL);
	pthread_join(checker, NULL);

	/* Quiescent: the real usage from the live charges. */
	int64_t real[N_NODES] = { 0 };
	uint64_t ops = 0, admitted = 0;
	for (int i = 0; i < threads; i++) {
		ops += w[i].ops;
		admitted += w[i].admitted;
		for (int j = 0; j < w[i].n_live; j++)
			real[w[i].live[j].q] += w[i].live[j].cpu;
	}
	real[TEAM] = excess(A, real[A]) + excess(B, real[B]);
	real[ROOT] = excess(TEAM, real[TEAM]) + excess(C, real[C]);
	for (int n = 0; n < N_NODES; n++) {
		int64_t u = quota_usage(r.t, r.id[n], 0, 0);
		if (u != real[n]) {
			fprintf(stderr, "%s: usage %lld after the race, real %lld\n",
				node_names[n], (long long)u, (long long)real[n]);
			r.violations++;
		}
		if (real[n] > bound[n])
			r.violations++;
	}
	uint64_t conflicts = quota_conflicts(r.t);
	printf("quota_race: %d workers, %llu operations, %llu admitted, "
	       "%llu conflicts, %llu violations\n", threads,
	       (unsigned long long)ops, (unsigned long long)admitted,
	       (unsigned long long)conflicts, (unsigned long long)r.violations);
	for (int i = 0; i < threads; i++)
		for (int j = 0; j < w[i].n_live; j++)
			quota_release(r.t, r.id[w[i].live[j].q], 0, &w[i].live[j].cpu);
	for (int n = 0; n < N_NODES; n++)
		assert_int_equal(quota_usage(r.t, r.id[n], 0, 0), 0);
	assert_int_equal(r.violations, 0);
	assert_true(conflicts > 0);
	assert_true(admitted > 0 && admitted < ops);
	quota_tree_free(r.t);
}

static void test_race_2(void **state)
{
	(void)state;
	race(2);
}

static void test_race_4(void **state)
{
	(void)state;
	race(4);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_race_2),
		cmocka_unit_test(test_race_4),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
