/* unit.placements: the placement table (shm/placements.h) on one thread:
 * ids name one placement each, a freed id names nothing (its generation
 * moved on), the table refuses past its capacity and takes back what is
 * freed, and a listing sees exactly the live records; the warmer's
 * populate backs the pages of the records just past the high-water mark,
 * no others, and keeps a record filled meanwhile as it was; each node's
 * chain (PN1, PN2) holds exactly the live records on that node through
 * fills, frees of its head, middle and tail, reuse of a record on another
 * node, and a re-attach; workers' caches of free records (PC1, PC2, PL1). */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cmocka.h>

#include "shm/carve.h"
#include "shm/shm.h"

static struct pod_spec pod_of(int64_t cpu, unsigned ports)
{
	struct pod_spec p;
	memset(&p, 0, sizeof(p));
	p.request.v[RES_CPU] = p.nonzero_cpu_milli = cpu;
	p.request.v[RES_MEMORY] = p.nonzero_mem_bytes = 1 << 20;
	p.n_ports = (uint8_t)ports;
	for (unsigned i = 0; i < ports; i++)
		p.ports[i] = (struct host_port){.port = (uint16_t)(8000 + i),
						.protocol = 0};
	return p;
}

static void test_ids_and_generations(void **state)
{
	(void)state;
	struct placements *t = placements_create(4);
	assert_non_null(t);
	struct pod_spec pod = pod_of(250, 2);
	struct device_assignment dev = {.gpu_mask = 2, .gpu_milli = 300};
	int64_t ix = placements_take(t);
	assert_int_equal(ix, 0);
	uint64_t id = placements_fill(t, (uint32_t)ix, 7, 3, 11, &pod, &dev, 99);
	assert_true(id != 0);
	const struct placement_record *r = placements_get(t, id);
	assert_non_null(r);
	assert_int_equal(r->owner, 7);
	assert_int_equal(r->slot, 3);
	assert_int_equal(r->node_gen, 11);
	assert_int_equal(r->request.v[RES_CPU], 250);
	assert_int_equal(r->n_ports, 2);
	assert_int_equal(r->ports[1].port, 8001);
	assert_int_equal(r->dev.gpu_mask, 2);
	assert_int_equal(placements_live(t), 1);
	/* Another generation, another index, past the end: nothing. */
	assert_null(placements_get(t, id + (UINT64_C(1) << 32)));
	assert_null(placements_get(t, id + 1));
	assert_null(placements_get(t, UINT64_MAX));
	assert_null(placements_get(t, 0));
	placements_free(t, id);
	assert_null(placements_get(t, id));
	assert_int_equal(placements_live(t), 0);
	/* The record comes back with a new generation: the old id stays dead. */
	ix = placements_take(t);
	assert_int_equal(ix, 0);
	uint64_t id2 = placements_fill(t, (uint32_t)ix, 8, 1, 1, &pod, NULL, 0);
	assert_true(id2 != id);
	assert_null(placements_get(t, id));
	assert_non_null(placements_get(t, id2));
	assert_int_equal(placements_get(t, id2)->dev.gpu_mask, 0);
	placements_destroy(t);
}

static void test_capacity_and_listing(void **state)
{
	(void)state;
	struct placements *t = placements_create(3);
	struct pod_spec pod = pod_of(100, 0);
	uint64_t ids[3];
	for (int i = 0; i < 3; i++) {
		int64_t ix = placements_take(t);
		assert_true(ix >= 0);
		ids[i] = placements_fill(t, (uint32_t)ix, 1, (uint32_t)i, 1, &pod, NULL, 0);
	}
	assert_int_equal(placements_take(t), -ENOSPC);
	/* Taken and not filled is not live, and untake gives it back. */
	placements_free(t, ids[1]);
	int64_t ix = placements_take(t);
	assert_true(ix >= 0);
	uint32_t cursor = 0;
	int listed = 0;
	while (placements_next(t, &cursor) != 0)
		listed++;
	assert_int_equal(listed, 2);
	placements_untake(t, (uint32_t)ix);
	assert_int_equal(placements_live(t), 2);
	/* The listing names exactly the live ids, in index order. */
	cursor = 0;
	assert_true(placements_next(t, &cursor) == ids[0]);
	assert_true(placements_next(t, &cursor) == ids[2]);
	assert_true(placements_next(t, &cursor) == 0);
	assert_null(placements_create(0));
	assert_int_equal(errno, EINVAL);
	placements_destroy(t);
}

/* placements_populate_ahead() called until it has nothing more (it backs
 * at most 16 pages a call); the records it backed. */
static uint32_t populate_all(struct placements *t, uint32_t ahead)
{
	uint32_t sum = 0, more;
	while ((more = placements_populate_ahead(t, ahead)) > 0)
		sum += more;
	return sum;
}

/* Whether the page holding `p` is resident (mincore). */
static bool resident(const void *p)
{
	uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
	unsigned char v = 0;
	assert_int_equal(mincore((void *)((uintptr_t)p & ~(page - 1)), 1, &v), 0);
	return v & 1;
}

static void test_populate_ahead(void **state)
{
	(void)state;
	/* FAR records (4.2 MB) past what is backed are not: two huge pages
	 * away, should the kernel back this memory with them. */
	enum { CAP = 100000, AHEAD = 1000, FAR = 14000 };
	struct placements *t = placements_create(CAP);
	assert_non_null(t);
	struct pod_spec pod = pod_of(100, 0);
	assert_int_equal(placements_take(t), 0);
	uint64_t id = placements_fill(t, 0, 1, 5, 1, &pod, NULL, 42);
	const struct placement_record *recs = placements_get(t, id);
	assert_non_null(recs);
	assert_false(resident(&recs[AHEAD + FAR]));
	/* One call: 16 pages at most (215 records of 304 bytes in 4 KiB pages). */
	uint32_t first = placements_populate_ahead(t, AHEAD);
	assert_true(first <= 16 * (uint32_t)sysconf(_SC_PAGESIZE) / sizeof(struct placement_record) + 1);
	uint32_t grown = first + populate_all(t, AHEAD);
	if (first == 0) {
		print_message("populate_ahead: MADV_POPULATE_WRITE refused by this "
			      "kernel (before Linux 5.14): nothing to check\n");
		placements_destroy(t);
		return;
	}
	/* From the high-water mark (1) to AHEAD past it. */
	assert_int_equal(grown, 1 + AHEAD);
	assert_true(resident(&recs[AHEAD]));
	assert_false(resident(&recs[AHEAD + FAR]));
	assert_int_equal(populate_all(t, AHEAD), 0); /* nothing new */
	/* The table grows: the next pages follow, what was written stays. */
	for (int i = 1; i < 3000; i++)
		placements_fill(t, (uint32_t)placements_take(t), 1, 5, 1, &pod, NULL, 7);
	assert_int_equal(populate_all(t, AHEAD), 3000 + AHEAD - (1 + AHEAD));
	assert_true(resident(&recs[3000 + AHEAD - 1]));
	assert_false(resident(&recs[3000 + AHEAD + FAR]));
	assert_int_equal(placements_get(t, id)->cookie, 42);
	assert_int_equal(recs[2999].cookie, 7);
	/* Near the capacity: up to it, not past. */
	assert_true(populate_all(t, 10 * CAP) == CAP - (3000 + AHEAD));
	placements_destroy(t);
}

/* The records on `slot`'s chain as a bitmap over [0, 64), and how many. */
static uint64_t chain_of(const struct placements *t, uint32_t slot, unsigned *n)
{
	uint64_t bits = 0;
	*n = 0;
	for (uint32_t i = placements_node_first(t, slot); i != PLACEMENTS_NIL;
	     i = placements_node_next(t, i)) {
		assert_true(i < 64);
		assert_false(bits >> i & 1); /* on the chain once */
		bits |= UINT64_C(1) << i;
		(*n)++;
	}
	return bits;
}

/* A random run of fills and frees over 4 nodes, each chain checked
 * against the live records after every step (seeded: the same run each
 * time); then the table re-attached over the same memory. */
static void test_node_chains(void **state)
{
	(void)state;
	enum { CAP = 64, NODES = 4, STEPS = 2000 };
	struct shm_span mem = shm_span_private(placements_section_size(CAP));
	assert_non_null(mem.base);
	struct placements *t = placements_create_in(mem, CAP, true);
	assert_non_null(t);
	assert_true(placements_node_indexed(t, NODES));
	assert_false(placements_node_indexed(t, CAP + 1));
	struct pod_spec pod = pod_of(100, 0);
	uint64_t ids[CAP] = {0};
	uint32_t node_of[CAP] = {0};
	uint64_t seed = 12345;
	for (unsigned step = 0; step < STEPS; step++) {
		seed = seed * UINT64_C(6364136223846793005) + 1442695040888963407u;
		uint32_t r = (uint32_t)(seed >> 33);
		if (r % 3 != 0) {
			int64_t ix = placements_take(t);
			if (ix >= 0) {
				uint32_t slot = r / 3 % NODES;
				ids[ix] = placements_fill(t, (uint32_t)ix, 1, slot, 1, &pod,
							  NULL, 0);
				node_of[ix] = slot;
			}
		} else {
			uint32_t ix = r / 3 % CAP;
			if (ids[ix] != 0) {
				placements_free(t, ids[ix]);
				ids[ix] = 0;
			}
		}
		for (uint32_t slot = 0; slot < NODES; slot++) {
			uint64_t want = 0;
			for (uint32_t i = 0; i < CAP; i++)
				if (ids[i] != 0 && node_of[i] == slot)
					want |= UINT64_C(1) << i;
			unsigned n;
			assert_int_equal(chain_of(t, slot, &n), want);
		}
	}
	/* A re-attach (a restarted daemon) finds the same chains. */
	uint64_t before[NODES];
	for (uint32_t slot = 0; slot < NODES; slot++) {
		unsigned n;
		before[slot] = chain_of(t, slot, &n);
	}
	placements_destroy(t);
	t = placements_create_in(mem, CAP, false);
	assert_non_null(t);
	for (uint32_t slot = 0; slot < NODES; slot++) {
		unsigned n;
		assert_int_equal(chain_of(t, slot, &n), before[slot]);
	}
	assert_int_equal(placements_node_first(t, CAP), PLACEMENTS_NIL);
	placements_destroy(t);
	shm_span_release(mem);
}

/* Worker caches (PC1, PC2, PL1): a worker's first take pops a batch and
 * moves the high-water mark past it once; an untaken record comes back
 * to its cache; a take that finds its cache and the stack empty steals
 * from another worker's cache, so every record can be taken; the live
 * figure sums the workers' publishes and the frees; listings skip the
 * cached (free) records. */
static void test_worker_caches(void **state)
{
	(void)state;
	struct placements *t = placements_create(40);
	assert_non_null(t);
	assert_int_equal(placements_set_workers(t, 0), -EINVAL);
	assert_int_equal(placements_set_workers(t, 2), 0);
	assert_int_equal(placements_set_workers(t, 2), -EINVAL);
	struct pod_spec pod = pod_of(100, 0);
	int64_t a = placements_take_w(t, 0);
	assert_int_equal(a, 0); /* lowest first */
	assert_int_equal(placements_high_water(t), 32); /* the batch, once */
	placements_untake_w(t, 0, (uint32_t)a);
	assert_int_equal(placements_take_w(t, 0), a); /* back from its cache */
	int64_t b = placements_take_w(t, 1);
	assert_int_equal(b, 32); /* what the stack has left: 32 .. 39 */
	assert_int_equal(placements_high_water(t), 40);
	/* The stack is empty: a plain take (not a worker's) steals too. */
	int64_t plain = placements_take(t);
	assert_true(plain >= 0);
	placements_untake(t, (uint32_t)plain);
	uint64_t id, ids[40];
	placements_prepare(t, (uint32_t)a, 1, 1, &pod, NULL, 5, &id);
	placements_publish_w(t, 0, (uint32_t)a, 3);
	ids[0] = id;
	placements_prepare(t, (uint32_t)b, 2, 1, &pod, NULL, 6, &id);
	placements_publish_w(t, 1, (uint32_t)b, 3);
	ids[1] = id;
	assert_int_equal(placements_live(t), 2);
	/* The listing: the two published, not the 38 cached. */
	uint32_t cursor = 0;
	int listed = 0;
	while (placements_next(t, &cursor) != 0)
		listed++;
	assert_int_equal(listed, 2);
	/* Worker 1 takes the other 38: 7 from its cache, 31 stolen from
	 * worker 0's. */
	for (int i = 2; i < 40; i++) {
		int64_t ix = placements_take_w(t, 1);
		assert_true(ix >= 0);
		placements_prepare(t, (uint32_t)ix, 0, 1, &pod, NULL, 0, &ids[i]);
		placements_publish_w(t, 1, (uint32_t)ix, 3);
	}
	assert_int_equal(placements_take_w(t, 1), -ENOSPC);
	assert_int_equal(placements_take_w(t, 0), -ENOSPC);
	assert_int_equal(placements_live(t), 40);
	/* Frees (the releasing thread's) go to the stack; a cache refills
	 * from it. */
	placements_free(t, ids[0]);
	placements_free(t, ids[39]);
	assert_int_equal(placements_live(t), 38);
	assert_true(placements_take_w(t, 0) >= 0);
	assert_true(placements_take_w(t, 0) >= 0);
	assert_int_equal(placements_take_w(t, 0), -ENOSPC);
	placements_destroy(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ids_and_generations),
		cmocka_unit_test(test_capacity_and_listing),
		cmocka_unit_test(test_populate_ahead),
		cmocka_unit_test(test_node_chains),
		cmocka_unit_test(test_worker_caches),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
