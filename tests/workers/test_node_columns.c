/* unit.node_columns: a worker's columns of the used counters
 * (workers/node_columns.c) against the ledger's records they copy: equal
 * after every sync, whatever moved the records in between (placements
 * and releases through the change log, more changes than the log keeps,
 * a node reset behind the log's back and copied by its node event, the
 * slots growing), and a sync that reads nothing when nothing moved. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "base/base.h"
#include "workers/node_columns_internal.h"

#define SLOTS 300

static uint64_t rs = 7;

static struct pod_spec pod_asking(int64_t cpu, int64_t mem)
{
	struct pod_spec p;
	memset(&p, 0, sizeof(p));
	p.request.v[RES_CPU] = cpu;
	p.request.v[RES_MEMORY] = mem;
	p.nonzero_cpu_milli = cpu ? cpu : 100;
	p.nonzero_mem_bytes = mem ? mem : 200 << 20;
	return p;
}

/* Slots [0, n) of the columns equal to their records; returns how many
 * differ (0 expected). */
static unsigned differences(const struct node_columns *c, struct ledger *l, uint32_t n)
{
	unsigned bad = 0;
	for (uint32_t s = 0; s < n; s++) {
		const struct node_alloc *a = ledger_node(l, s);
		bad += c->pods[s] != a->used[RES_PODS] || c->cpu[s] != a->used[RES_CPU] ||
		       c->mem[s] != a->used[RES_MEMORY] ||
		       c->nz_cpu[s] != a->used_nonzero_cpu_milli ||
		       c->nz_mem[s] != a->used_nonzero_mem_bytes;
	}
	return bad;
}

/* `changes` placements or releases on random slots of [0, n). */
static void churn(struct ledger *l, uint32_t n, unsigned changes)
{
	for (unsigned i = 0; i < changes; i++) {
		uint32_t slot = (uint32_t)(rng_next(&rs) % n);
		struct pod_spec p = pod_asking((int64_t)(rng_next(&rs) % 4000),
					       (int64_t)(rng_next(&rs) % (1u << 30)));
		int sign = ledger_node(l, slot)->used[RES_PODS] > 0 && rng_next(&rs) % 3 == 0
				   ? -1 : +1;
		assert_int_equal(ledger_account(l, slot, &p, NULL, sign), 0);
	}
}

static void test_columns_follow_the_ledger(void **state)
{
	(void)state;
	struct ledger *l = ledger_create(SLOTS);
	assert_non_null(l);
	struct node_columns c;
	assert_int_equal(node_columns_init(&c, SLOTS), 0);
	churn(l, 200, 500);

	/* The first sync copies every slot asked for. */
	node_columns_sync(&c, l, 200);
	assert_int_equal(c.rebuilds, 1);
	assert_int_equal(differences(&c, l, 200), 0);

	/* Then the log: a few changes are copied one by one. */
	for (int round = 0; round < 50; round++) {
		unsigned changes = 1 + (unsigned)(rng_next(&rs) % 40);
		uint64_t copies = c.copies;
		churn(l, 200, changes);
		node_columns_sync(&c, l, 200);
		assert_int_equal(c.copies - copies, changes);
		assert_int_equal(differences(&c, l, 200), 0);
	}
	assert_int_equal(c.rebuilds, 1);

	/* Nothing moved: nothing read. */
	uint64_t copies = c.copies;
	node_columns_sync(&c, l, 200);
	assert_int_equal(c.copies, copies);

	/* More changes than the log keeps: copied whole. */
	churn(l, 200, LEDGER_CHANGE_LOG_SLOTS + 10);
	node_columns_sync(&c, l, 200);
	assert_int_equal(c.rebuilds, 2);
	assert_int_equal(differences(&c, l, 200), 0);

	/* A node removed and another added in its slot: the record is reset
	 * without a log entry; its node event copies it. */
	ledger_reset_node(l, 17);
	node_columns_sync(&c, l, 200);
	assert_int_not_equal(differences(&c, l, 200), 0);
	node_columns_copy(&c, l, 17);
	assert_int_equal(differences(&c, l, 200), 0);

	/* More slots: copied whole; then forgotten (a flush): whole again. */
	churn(l, SLOTS, 100);
	node_columns_sync(&c, l, SLOTS);
	assert_int_equal(c.rebuilds, 3);
	assert_int_equal(differences(&c, l, SLOTS), 0);
	node_columns_forget(&c);
	node_columns_sync(&c, l, SLOTS);
	assert_int_equal(c.rebuilds, 4);
	assert_int_equal(differences(&c, l, SLOTS), 0);

	/* Asked for more slots than it holds: only its capacity. */
	node_columns_sync(&c, l, SLOTS + 50);
	assert_int_equal(c.n_slots, SLOTS);

	node_columns_free(&c);
	ledger_destroy(l);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_columns_follow_the_ledger),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
