/* stress.snapshot_rcu: reader threads walk the current snapshot while a
 * writer publishes new ones as fast as it can.
 *
 * Each batch sets every node's cpu to 10 x the new generation and cordons
 * every node on odd generations, so a reader can tell a half-applied
 * update: in one snapshot all nodes must agree with its generation. Freed
 * too early, a snapshot would be read after free, which ASan reports; the
 * grace periods are liburcu QSBR's (the readers announce quiescent states
 * between walks). Counts must read zero: torn snapshots, generations seen
 * going backwards. */
#define _LGPL_SOURCE 1

#include <inttypes.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <urcu/urcu-qsbr.h>

#include <cmocka.h>

#include "shm/shm.h"

#define NODES 200
#define READERS 3

static struct cluster *cluster;
static int stop; /* set by the writer when done; __atomic, relaxed */

struct reader_result {
	uint64_t walks, torn, backwards;
};

static void *reader(void *arg)
{
	struct reader_result *res = arg;
	urcu_qsbr_register_thread();
	uint64_t last_gen = 0;
	/* Relaxed: `stop` only ends the loop; nothing is read because of it. */
	while (!__atomic_load_n(&stop, __ATOMIC_RELAXED)) {
		const struct snapshot *s = cluster_snapshot(cluster);
		if (s->generation < last_gen)
			res->backwards++;
		last_gen = s->generation;
		if (s->generation > 1) {
			int64_t want_cpu = (int64_t)s->generation * 10;
			bool want_cordon = s->generation % 2 == 1;
			for (uint32_t i = 0; i < s->n_slots; i++) {
				if (!s->present[i])
					continue;
				if (s->nodes[i].allocatable.v[RES_CPU] != want_cpu ||
				    s->allocatable[RES_CPU][i] != want_cpu ||
				    s->nodes[i].unschedulable != want_cordon) {
					res->torn++;
					break;
				}
			}
		}
		res->walks++;
		urcu_qsbr_quiescent_state();
	}
	urcu_qsbr_unregister_thread();
	return NULL;
}

static void test_readers_never_see_half_an_update(void **state)
{
	(void)state;
	struct intern *strings = intern_create();
	struct res_names res;
	res_names_init(&res);
	cluster = cluster_create(strings, NODES);
	assert_non_null(cluster);

	static struct node_event ev[NODES];
	char name[32], err[256];
	for (int i = 0; i < NODES; i++) {
		memset(&ev[i], 0, sizeof(ev[i]));
		snprintf(name, sizeof(name), "node-%d", i);
		assert_int_equal(intern_add_str(strings, name, &ev[i].name), 0);
		ev[i].kind = NODE_EVENT_ADD;
		ev[i].spec.name = ev[i].name;
		ev[i].spec.allocatable.v[RES_CPU] = 20; /* generation 2 */
		ev[i].spec.allocatable.v[RES_PODS] = 110;
	}
	assert_int_equal(cluster_apply(cluster, ev, NODES, err, sizeof(err)), 0);

	pthread_t t[READERS];
	struct reader_result r[READERS];
	memset(r, 0, sizeof(r));
	for (int i = 0; i < READERS; i++)
		assert_int_equal(pthread_create(&t[i], NULL, reader, &r[i]), 0);

	const uint64_t batches = 500;
	for (uint64_t b = 0; b < batches; b++) {
		uint64_t gen = cluster_snapshot(cluster)->generation + 1;
		for (int i = 0; i < NODES; i++) {
			ev[i].kind = NODE_EVENT_UPDATE;
			ev[i].spec.allocatable.v[RES_CPU] = (int64_t)gen * 10;
			ev[i].spec.unschedulable = gen % 2 == 1;
		}
		assert_int_equal(cluster_apply(cluster, ev, NODES, err, sizeof(err)), 0);
	}
	__atomic_store_n(&stop, 1, __ATOMIC_RELAXED);
	uint64_t walks = 0, torn = 0, backwards = 0;
	for (int i = 0; i < READERS; i++) {
		pthread_join(t[i], NULL);
		walks += r[i].walks;
		torn += r[i].torn;
		backwards += r[i].backwards;
	}
	print_message("%" PRIu64 " snapshots published and freed, %" PRIu64
		      " reader walks, %" PRIu64 " torn, %" PRIu64 " backwards\n",
		      cluster_snapshots_freed(cluster), walks, torn, backwards);
	assert_int_equal(torn, 0);
	assert_int_equal(backwards, 0);
	assert_true(walks > 0);
	assert_int_equal(cluster_snapshots_freed(cluster), batches + 1);
	cluster_destroy(cluster);
	intern_destroy(strings);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_readers_never_see_half_an_update),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
