/* unit.swap: preemption's move on the ledger (ledger_swap, X1-X4 in
 * shm/ledger.c): the preemptor's use in and its victims' out in one
 * step; refused, with nothing changed, when the room is gone; and, with
 * threads racing swaps against ordinary placements and releases, no
 * counter ever above allocatable (a checker thread reads them all the
 * while) and exact counts at the end. */
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "base/base.h"
#include "shm/shm.h"

static struct pod_spec pod(int64_t cpu, int64_t mem, uint32_t group)
{
	struct pod_spec p;
	memset(&p, 0, sizeof(p));
	p.request.v[RES_CPU] = cpu;
	p.request.v[RES_MEMORY] = mem;
	p.nonzero_cpu_milli = cpu;
	p.nonzero_mem_bytes = mem;
	p.group = group;
	return p;
}

static bool ok_ports(const void *arg, const struct pod_spec *p,
		     const struct host_port *in_use, unsigned n)
{
	(void)arg, (void)p, (void)in_use, (void)n;
	return true;
}

static void test_swap_moves_use(void **state)
{
	(void)state;
	struct ledger *l = ledger_create(2);
	assert_non_null(l);
	struct res_vec alloc = {{[RES_CPU] = 4000, [RES_MEMORY] = 4096, [RES_PODS] = 3}};
	struct pod_spec v[2] = {pod(1500, 1000, 7), pod(1500, 3000, 0)};
	struct device_assignment dev[2];
	memset(dev, 0, sizeof(dev));
	struct pod_spec other = pod(1000, 0, 0);
	for (int i = 0; i < 2; i++)
		assert_int_equal(ledger_reserve(l, 0, &alloc, &v[i], NULL, ok_ports, NULL), 0);
	assert_int_equal(ledger_reserve(l, 0, &alloc, &other, NULL, ok_ports, NULL), 0);
	/* 4000m cpu of 4000 used, 3 pods of 3: a 2500m pod fits only in the
	 * victims' place. */
	struct pod_spec in = pod(2500, 2048, 9);
	assert_int_equal(ledger_reserve(l, 0, &alloc, &in, NULL, ok_ports, NULL), -EAGAIN);
	uint64_t head = ledger_changes_head(l);
	assert_int_equal(ledger_swap(l, 0, &alloc, &in, v, dev, 2), 0);
	assert_true(ledger_changes_head(l) > head);
	struct node_alloc *a = ledger_node(l, 0);
	struct res_vec used;
	int64_t nzc, nzm;
	ledger_load_used(a, &used, &nzc, &nzm);
	assert_int_equal(used.v[RES_CPU], 3500);
	assert_int_equal(used.v[RES_MEMORY], 2048);
	assert_int_equal(used.v[RES_PODS], 2);
	assert_int_equal(nzc, 3500);
	assert_int_equal(nzm, 2048);
	struct group_count g[NODE_MAX_GROUPS];
	unsigned ng = ledger_load_groups(a, g);
	unsigned sum9 = 0, sum7 = 0;
	for (unsigned i = 0; i < ng; i++) {
		sum9 += g[i].group == 9 ? g[i].pods : 0;
		sum7 += g[i].group == 7 ? g[i].pods : 0;
	}
	assert_int_equal(sum9, 1);
	assert_int_equal(sum7, 0);
	/* A swap whose victims leave too little: refused, nothing moved. */
	struct pod_spec big = pod(3000, 0, 0);
	struct pod_spec small_victim = pod(1000, 0, 0);
	assert_int_equal(ledger_swap(l, 0, &alloc, &big, &small_victim, NULL, 1),
			 -EAGAIN);
	struct res_vec after;
	ledger_load_used(a, &after, &nzc, &nzm);
	assert_memory_equal(&after, &used, sizeof(used));
	ledger_destroy(l);
}

/* Threads: swappers exchange a big pod for two small ones and back on one
 * node while placers reserve and release small pods on it; a checker reads
 * the counters throughout. */
#define ROUNDS 20000
static struct ledger *race;
static const struct res_vec race_alloc = {{[RES_CPU] = 4000, [RES_MEMORY] = 1 << 20,
					   [RES_PODS] = 8}};
static int stop_check;
static uint64_t over_seen, swaps_done, swaps_refused;

static void *swapper(void *arg)
{
	(void)arg;
	/* The big pod needs a little more than the two small ones free. */
	struct pod_spec big = pod(3000, 0, 0), small[2] = {pod(1000, 0, 0), pod(1000, 0, 0)};
	unsigned held_small = 0, held_big = 0;
	for (int i = 0; i < ROUNDS; i++) {
		if (held_small == 0 && ledger_reserve(race, 0, &race_alloc, &small[0], NULL,
						      ok_ports, NULL) == 0) {
			if (ledger_reserve(race, 0, &race_alloc, &small[1], NULL, ok_ports,
					   NULL) == 0)
				held_small = 2;
			else
				ledger_account(race, 0, &small[0], NULL, -1);
		}
		if (held_small == 2) {
			if (ledger_swap(race, 0, &race_alloc, &big, small, NULL, 2) == 0) {
				held_small = 0;
				held_big = 1;
				__atomic_fetch_add(&swaps_done, 1, __ATOMIC_RELAXED);
			} else {
				/* Given back: two swappers each holding two
				 * small pods fill the node, and neither swap
				 * could ever pass again (the clang flavour
				 * saw 0 swaps in 40,000 tries). */
				__atomic_fetch_add(&swaps_refused, 1, __ATOMIC_RELAXED);
				for (int k = 0; k < 2; k++)
					ledger_account(race, 0, &small[k], NULL, -1);
				held_small = 0;
			}
		}
		if (held_big) {
			ledger_account(race, 0, &big, NULL, -1);
			held_big = 0;
		}
	}
	if (held_small == 2)
		for (int k = 0; k < 2; k++)
			ledger_account(race, 0, &small[k], NULL, -1);
	return NULL;
}

static void *placer(void *arg)
{
	(void)arg;
	struct pod_spec p = pod(1000, 0, 0);
	for (int i = 0; i < ROUNDS; i++)
		if (ledger_reserve(race, 0, &race_alloc, &p, NULL, ok_ports, NULL) == 0) {
			/* Held a moment, so swaps meet it. */
			for (volatile int k = 0; k < 200; k++)
				;
			ledger_account(race, 0, &p, NULL, -1);
		}
	return NULL;
}

static void *checker(void *arg)
{
	(void)arg;
	struct node_alloc *a = ledger_node(race, 0);
	while (!__atomic_load_n(&stop_check, __ATOMIC_RELAXED)) {
		int64_t cpu = __atomic_load_n(&a->used[RES_CPU], __ATOMIC_RELAXED);
		int64_t pods = __atomic_load_n(&a->used[RES_PODS], __ATOMIC_RELAXED);
		if (cpu > race_alloc.v[RES_CPU] || pods > race_alloc.v[RES_PODS] ||
		    cpu < 0 || pods < 0)
			over_seen++;
	}
	return NULL;
}

static void test_swap_races(void **state)
{
	(void)state;
	race = ledger_create(1);
	assert_non_null(race);
	pthread_t t[5];
	pthread_create(&t[0], NULL, checker, NULL);
	pthread_create(&t[1], NULL, swapper, NULL);
	pthread_create(&t[2], NULL, swapper, NULL);
	pthread_create(&t[3], NULL, placer, NULL);
	pthread_create(&t[4], NULL, placer, NULL);
	for (int i = 1; i < 5; i++)
		pthread_join(t[i], NULL);
	__atomic_store_n(&stop_check, 1, __ATOMIC_RELAXED);
	pthread_join(t[0], NULL);
	struct res_vec used;
	int64_t nzc, nzm;
	ledger_load_used(ledger_node(race, 0), &used, &nzc, &nzm);
	print_message("swap race: %d rounds x 4 threads, %llu swaps made, %llu "
		      "refused, overcommits seen %llu, end use %lld cpu, %lld pods\n",
		      ROUNDS, (unsigned long long)swaps_done,
		      (unsigned long long)swaps_refused, (unsigned long long)over_seen,
		      (long long)used.v[RES_CPU], (long long)used.v[RES_PODS]);
	/* Swaps must have happened; refusals (a placer holding the room)
	 * depend on how the 2-core machine interleaves the threads, so they
	 * are printed, not required. The refusal itself is checked by hand
	 * in test_swap_moves_use. */
	assert_true(swaps_done > 0);
	assert_int_equal(over_seen, 0);
	assert_int_equal(used.v[RES_CPU], 0);
	assert_int_equal(used.v[RES_PODS], 0);
	assert_int_equal(nzc, 0);
	ledger_destroy(race);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_swap_moves_use),
		cmocka_unit_test(test_swap_races),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
