/* unit.synthetic: the synthetic cluster is reproducible from its seed,
 * well-formed (sorted labels, known taints) and starts within allocatable,
 * with running pods only on untainted, schedulable nodes. */
#define _LGPL_SOURCE 1

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <urcu/urcu-qsbr.h>

#include <cmocka.h>

#include "ingest/ingest.h"

struct made {
	struct intern *strings;
	struct cluster *c;
	struct synthetic_stats st;
};

static void make(struct made *m, uint32_t nodes, uint32_t running, uint64_t seed)
{
	char err[256];
	m->strings = intern_create();
	assert_int_equal(synthetic_cluster(nodes, running, seed, 0, m->strings,
					   &m->c, &m->st, err, sizeof(err)), 0);
}

static void unmake(struct made *m)
{
	cluster_destroy(m->c);
	intern_destroy(m->strings);
}

static void test_same_seed_same_cluster(void **state)
{
	(void)state;
	struct made a, b, d;
	make(&a, 500, 2000, 7);
	make(&b, 500, 2000, 7);
	make(&d, 500, 2000, 8);
	const struct snapshot *sa = cluster_snapshot(a.c), *sb = cluster_snapshot(b.c),
			      *sd = cluster_snapshot(d.c);
	/* Same interning order too, so the specs are equal byte for byte. */
	assert_memory_equal(sa->nodes, sb->nodes, 500 * sizeof(*sa->nodes));
	for (uint32_t i = 0; i < 500; i++)
		assert_memory_equal(ledger_node(cluster_ledger(a.c), i)->used,
				    ledger_node(cluster_ledger(b.c), i)->used,
				    sizeof(ledger_node(cluster_ledger(a.c), i)->used));
	assert_true(memcmp(sa->nodes, sd->nodes, 500 * sizeof(*sa->nodes)) != 0);
	unmake(&a);
	unmake(&b);
	unmake(&d);
}

static void test_well_formed_and_within_allocatable(void **state)
{
	(void)state;
	struct made m;
	make(&m, 2000, 20000, 1);
	const struct snapshot *s = cluster_snapshot(m.c);
	assert_int_equal(s->n_nodes, 2000);
	assert_int_equal(m.st.nodes, 2000);
	assert_int_equal(m.st.running + m.st.running_lost, 20000);
	assert_true(m.st.running > 19000);
	uint32_t tainted = 0, cordoned = 0;
	int64_t pods = 0;
	for (uint32_t i = 0; i < s->n_slots; i++) {
		const struct node_spec *n = &s->nodes[i];
		const struct node_alloc *a = ledger_node(cluster_ledger(m.c), i);
		for (unsigned k = 1; k < n->n_labels; k++)
			assert_true(n->labels[k - 1].key < n->labels[k].key);
		for (int r = 0; r < RES_MAX; r++)
			assert_true(a->used[r] <= n->allocatable.v[r]);
		if (n->n_taints > 0 || n->unschedulable)
			assert_int_equal(a->used[RES_PODS], 0);
		tainted += n->n_taints > 0;
		cordoned += n->unschedulable;
		pods += a->used[RES_PODS];
	}
	assert_int_equal(pods, m.st.running);
	/* About 15 % tainted and 2 % cordoned: loose bounds, not exact draws. */
	assert_true(tainted > 150 && tainted < 500);
	assert_true(cordoned > 10 && cordoned < 100);
	unmake(&m);
}

static void test_bad_sizes(void **state)
{
	(void)state;
	struct intern *t = intern_create();
	struct cluster *c;
	struct synthetic_stats st;
	char err[256];
	assert_int_equal(synthetic_cluster(0, 0, 1, 0, t, &c, &st, err,
					   sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "0 nodes"));
	assert_null(c);
	intern_destroy(t);
}

int main(void)
{
	urcu_qsbr_register_thread();
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_same_seed_same_cluster),
		cmocka_unit_test(test_well_formed_and_within_allocatable),
		cmocka_unit_test(test_bad_sizes),
	};
	int rc = cmocka_run_group_tests(tests, NULL, NULL);
	urcu_qsbr_unregister_thread();
	return rc;
}
