/* unit.node_rows: a worker's rows of what the fast leaf reads
 * (workers/node_rows.c) against the ledger's records and the allocatables
 * they copy: equal after every sync, whatever moved them in between
 * (placements and releases through the change log, more changes than the
 * log keeps, a node reset behind the log's back or given new allocatables
 * and copied by its node event, the slots growing), and a sync that reads
 * nothing when nothing moved; the same copy made a part at a time by an
 * idle worker; and the change log's batch reader they use. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "base/base.h"
#include "workers/node_rows_internal.h"

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

static int64_t alloc_cpu[SLOTS], alloc_mem[SLOTS], alloc_pods[SLOTS];
static const struct node_allocatable alloc = {alloc_cpu, alloc_mem, alloc_pods};

/* Rows [0, n) against their records and allocatables: how many differ
 * (0 expected). */
static unsigned differences(const struct node_rows *r, struct ledger *l, uint32_t n)
{
	unsigned bad = 0;
	for (uint32_t s = 0; s < n; s++) {
		const struct node_alloc *a = ledger_node(l, s);
		const struct node_row *w = &r->row[s];
		bad += w->pods != a->used[RES_PODS] || w->cpu != a->used[RES_CPU] ||
		       w->mem != a->used[RES_MEMORY] ||
		       w->nz_cpu != a->used_nonzero_cpu_milli ||
		       w->nz_mem != a->used_nonzero_mem_bytes || w->alloc_cpu != alloc_cpu[s] ||
		       w->alloc_mem != alloc_mem[s] || w->alloc_pods != alloc_pods[s];
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

/* A ledger of SLOTS nodes, nothing placed, and their allocatables set. */
static struct ledger *fresh_ledger(void)
{
	struct ledger *l = ledger_create(SLOTS);
	assert_non_null(l);
	for (uint32_t s = 0; s < SLOTS; s++) {
		alloc_cpu[s] = 1000 * (s + 1);
		alloc_mem[s] = (int64_t)(s + 1) << 30;
		alloc_pods[s] = 110;
	}
	return l;
}

static void test_rows_follow_the_ledger(void **state)
{
	(void)state;
	struct ledger *l = fresh_ledger();
	struct node_rows c;
	assert_int_equal(node_rows_init(&c, SLOTS), 0);
	churn(l, 200, 500);

	/* The first sync copies every slot asked for. */
	node_rows_sync(&c, l, &alloc, 200);
	assert_int_equal(c.rebuilds, 1);
	assert_int_equal(differences(&c, l, 200), 0);

	/* Then the log: a few changes are copied one by one. */
	for (int round = 0; round < 50; round++) {
		unsigned changes = 1 + (unsigned)(rng_next(&rs) % 40);
		uint64_t copies = c.copies;
		churn(l, 200, changes);
		node_rows_sync(&c, l, &alloc, 200);
		assert_int_equal(c.copies - copies, changes);
		assert_int_equal(differences(&c, l, 200), 0);
	}
	assert_int_equal(c.rebuilds, 1);

	/* Nothing moved: nothing read. */
	uint64_t copies = c.copies;
	node_rows_sync(&c, l, &alloc, 200);
	assert_int_equal(c.copies, copies);

	/* More changes than the log keeps: copied whole. */
	churn(l, 200, LEDGER_CHANGE_LOG_SLOTS + 10);
	node_rows_sync(&c, l, &alloc, 200);
	assert_int_equal(c.rebuilds, 2);
	assert_int_equal(differences(&c, l, 200), 0);

	/* A node removed and another added in its slot: the record is reset
	 * without a log entry; its node event copies it. */
	ledger_reset_node(l, 17);
	node_rows_sync(&c, l, &alloc, 200);
	assert_int_not_equal(differences(&c, l, 200), 0);
	node_rows_copy(&c, l, &alloc, 17);
	assert_int_equal(differences(&c, l, 200), 0);

	/* A node updated with other allocatables: its node event copies it. */
	alloc_cpu[42] += 500;
	alloc_pods[42] = 16;
	node_rows_sync(&c, l, &alloc, 200);
	assert_int_equal(differences(&c, l, 200), 1);
	node_rows_copy(&c, l, &alloc, 42);
	assert_int_equal(differences(&c, l, 200), 0);

	/* More slots: copied whole; then forgotten (a flush): whole again. */
	churn(l, SLOTS, 100);
	node_rows_sync(&c, l, &alloc, SLOTS);
	assert_int_equal(c.rebuilds, 3);
	assert_int_equal(differences(&c, l, SLOTS), 0);
	node_rows_forget(&c);
	node_rows_sync(&c, l, &alloc, SLOTS);
	assert_int_equal(c.rebuilds, 4);
	assert_int_equal(differences(&c, l, SLOTS), 0);

	/* Asked for more slots than it holds: only its capacity. */
	node_rows_sync(&c, l, &alloc, SLOTS + 50);
	assert_int_equal(c.n_slots, SLOTS);

	node_rows_free(&c);
	ledger_destroy(l);
}

/* node_rows_warm(): the whole copy a part at a time, changes logged and
 * node events between the parts; a sync then finishes it and follows the
 * log from where the copy began (not a second whole copy); a forget or
 * another slot count starts it over. */
static void test_rows_warm_in_parts(void **state)
{
	(void)state;
	struct ledger *l = fresh_ledger();
	struct node_rows c;
	assert_int_equal(node_rows_init(&c, SLOTS), 0);
	churn(l, 200, 300);

	/* Parts of 64: not current until the fourth; changes between the
	 * parts land on copied and uncopied rows alike. */
	assert_false(node_rows_warm(&c, l, &alloc, 200, 64));
	assert_int_equal(c.built, 64);
	churn(l, 200, 30);
	assert_false(node_rows_warm(&c, l, &alloc, 200, 64));
	alloc_cpu[10] += 700; /* a node event on a copied row */
	node_rows_copy(&c, l, &alloc, 10);
	alloc_cpu[150] += 700; /* ... and on one not copied yet */
	node_rows_copy(&c, l, &alloc, 150);
	assert_false(node_rows_warm(&c, l, &alloc, 200, 64));
	churn(l, 200, 30);
	assert_true(node_rows_warm(&c, l, &alloc, 200, 64));
	assert_int_equal(c.n_slots, 200);
	assert_int_equal(c.rebuilds, 1);
	/* The log since the copy began is the sync's. */
	node_rows_sync(&c, l, &alloc, 200);
	assert_int_equal(c.rebuilds, 1);
	assert_int_equal(differences(&c, l, 200), 0);
	assert_true(node_rows_warm(&c, l, &alloc, 200, 64));

	/* Begun, then a sync: it finishes the copy, no whole copy again. */
	node_rows_forget(&c);
	assert_false(node_rows_warm(&c, l, &alloc, 200, 50));
	churn(l, 200, 20);
	node_rows_sync(&c, l, &alloc, 200);
	assert_int_equal(c.rebuilds, 2);
	assert_int_equal(c.built, 0);
	assert_int_equal(differences(&c, l, 200), 0);

	/* Begun for 200 slots, then asked for all: started over. */
	node_rows_forget(&c);
	assert_false(node_rows_warm(&c, l, &alloc, 200, 50));
	assert_false(node_rows_warm(&c, l, &alloc, SLOTS, 50));
	assert_int_equal(c.built, 50);
	while (!node_rows_warm(&c, l, &alloc, SLOTS, 50))
		churn(l, SLOTS, 5);
	node_rows_sync(&c, l, &alloc, SLOTS);
	assert_int_equal(differences(&c, l, SLOTS), 0);

	/* Begun, then more changes than the log keeps: the sync copies whole. */
	node_rows_forget(&c);
	assert_false(node_rows_warm(&c, l, &alloc, SLOTS, 50));
	uint64_t rebuilds = c.rebuilds;
	churn(l, SLOTS, LEDGER_CHANGE_LOG_SLOTS + 10);
	node_rows_sync(&c, l, &alloc, SLOTS);
	assert_int_equal(c.rebuilds, rebuilds + 1);
	assert_int_equal(differences(&c, l, SLOTS), 0);

	node_rows_free(&c);
	ledger_destroy(l);
}

/* ledger_changes_read(), the batch reader the rows and the shapes share:
 * the slots in log order, in batches of at most `max`, the position
 * moved past them, and -1 once the log has overwritten an entry. */
static void test_changes_read(void **state)
{
	(void)state;
	struct ledger *l = ledger_create(SLOTS);
	assert_non_null(l);
	struct pod_spec p = pod_asking(100, 1 << 20);
	uint64_t pos = ledger_changes_head(l);
	for (uint32_t i = 0; i < 40; i++)
		assert_int_equal(ledger_account(l, (i * 7) % SLOTS, &p, NULL, +1), 0);
	uint64_t head = ledger_changes_head(l);
	assert_int_equal(head - pos, 40);
	uint32_t out[16], seen = 0;
	int got;
	int sizes[3] = {16, 16, 8};
	for (int b = 0; b < 3; b++) {
		got = ledger_changes_read(l, &pos, head, out, 16);
		assert_int_equal(got, sizes[b]);
		for (int j = 0; j < got; j++, seen++)
			assert_int_equal(out[j], (seen * 7) % SLOTS);
	}
	assert_int_equal(pos, head);
	assert_int_equal(ledger_changes_read(l, &pos, head, out, 16), 0);
	/* Too far behind: the entry at pos has been overwritten. */
	churn(l, SLOTS, LEDGER_CHANGE_LOG_SLOTS + 1);
	assert_int_equal(ledger_changes_read(l, &pos, ledger_changes_head(l), out, 16), -1);
	ledger_destroy(l);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rows_follow_the_ledger),
		cmocka_unit_test(test_rows_warm_in_parts),
		cmocka_unit_test(test_changes_read),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
