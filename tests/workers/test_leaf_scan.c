/* unit.leaf_scan: the fast leaf's scan (workers/leaf_scan.c) with
 * AVX-512 (where the CPU has it) and AVX2 against its scalar form, and
 * each against leaf_fast() one node at a time: the same candidates,
 * scores, stop at `want` and slots visited;
 * and leaf_reasons()'s counts against leaf_fast()'s masks; and
 * leaf_fast_plans() (four plans on one node) against leaf_fast_of() lane
 * by lane: every lane it answers alike, every lane it leaves out one that
 * must be (general rules, inexact figures, weights past 2^20).
 * Nodes are drawn to reach every edge the AVX2 form must hand back or
 * get exactly right: no cpu or memory allocatable (the general rules),
 * allocatables past 2^46 and counters past 2^52 (leaf_fast() per lane),
 * counters above allocatable (scores of 0, or the allocatable with
 * MostAllocated), full nodes, quotients just under an integer, and plans
 * with weights past 2^20 or a zero weight sum. */
#include <inttypes.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "base/base.h"
#include "workers/leaf_fast_internal.h"

#define NODES 512
#define CASES 3000

static uint64_t rs = 1;

static int64_t below(int64_t n)
{
	return (int64_t)(rng_next(&rs) % (uint64_t)n);
}

/* An allocatable: mostly ordinary, sometimes an edge. */
static int64_t pick_alloc(int64_t ordinary)
{
	switch (below(12)) {
	case 0:
		return 0;
	case 1:
		return (INT64_C(1) << 46) + below(3) - 1; /* either side of 2^46 */
	case 2:
		return 1 + below(3);
	case 3:
		return 999999937; /* a prime: quotients just under integers */
	default:
		return 1 + below(ordinary);
	}
}

/* A counter for allocatable a: within it, at it, past it or huge. */
static int64_t pick_used(int64_t a)
{
	switch (below(10)) {
	case 0:
		return a;
	case 1:
		return a + 1 + below(1000);
	case 2:
		return (INT64_C(1) << 52) - below(2);
	case 3:
		return 0;
	default:
		return a > 0 ? below(a) : 0;
	}
}

struct world {
	struct ledger *ledger;
	struct node_rows rows; /* the scans' copy of the records and allocatables */
	int64_t cpu[NODES], mem[NODES], pods[NODES];
	uint32_t feasible[NODES];
	uint32_t n_feasible;
};

static void draw_world(struct world *w)
{
	struct node_alloc *rec = ledger_nodes(w->ledger);
	w->n_feasible = 0;
	for (uint32_t i = 0; i < NODES; i++) {
		w->cpu[i] = pick_alloc(64000);
		w->mem[i] = pick_alloc(INT64_C(256) << 30);
		w->pods[i] = below(4) == 0 ? below(3) : 110;
		struct node_alloc *a = &rec[i];
		a->used[RES_CPU] = pick_used(w->cpu[i]);
		a->used[RES_MEMORY] = pick_used(w->mem[i]);
		a->used[RES_PODS] = below(w->pods[i] + 2);
		a->used_nonzero_cpu_milli = a->used[RES_CPU] + below(3) * 100;
		a->used_nonzero_mem_bytes = a->used[RES_MEMORY] + below(3) * (200 << 20);
		if (below(5) != 0)
			w->feasible[w->n_feasible++] = i;
	}
	/* Written behind the change log's back: copied whole. */
	struct node_allocatable alloc = {w->cpu, w->mem, w->pods};
	node_rows_forget(&w->rows);
	node_rows_sync(&w->rows, w->ledger, &alloc, NODES);
}

/* Raw scores for the scan to prefetch (it only prefetches them): every
 * other case, so both ways are taken. */
static int32_t raw_scores[NODES];

static struct leaf_nodes nodes_of(const struct world *w)
{
	bool raw = w->n_feasible % 2 == 0;
	return (struct leaf_nodes){.rows = w->rows.row,
				   .raw_taint = raw ? raw_scores : NULL,
				   .raw_affinity = raw ? raw_scores : NULL};
}

static void draw_plan(struct leaf_fast_plan *k)
{
	memset(k, 0, sizeof(*k));
	k->most = below(2);
	k->check_cpu = below(5) != 0;
	k->check_mem = below(5) != 0;
	k->req_cpu = k->check_cpu ? 1 + below(8000) : 0;
	k->req_mem = k->check_mem ? 1 + below(INT64_C(16) << 30) : 0;
	k->nz_cpu = k->check_cpu ? k->req_cpu : 100;
	k->nz_mem = k->check_mem ? k->req_mem : 200 << 20;
	k->w_fit = below(3);
	k->w_balanced = below(3);
	k->w_cpu = below(4);
	k->w_mem = below(4);
	k->w_sum = k->w_cpu + k->w_mem;
	if (below(20) == 0)
		k->w_fit = (INT64_C(1) << 20) + 1; /* the scan goes scalar */
}

/* The general rules stand-in: any fixed answer per slot will do, the
 * same for both forms. */
static uint32_t general(void *arg, uint32_t slot, int64_t *d)
{
	(void)arg;
	*d = (int64_t)slot * 7;
	return slot % 3 == 0 ? MASK_PODS : 0;
}

struct result {
	uint32_t n, visited;
	uint32_t slot[NODES];
	int64_t d[NODES];
};

static void scan(const struct world *w, const struct leaf_fast_plan *k, uint32_t from,
		 uint32_t want, struct result *r)
{
	struct leaf_nodes nd = nodes_of(w);
	r->n = 0;
	r->visited = leaf_scan(k, &nd, w->feasible, from, w->n_feasible, want, &r->n,
			       r->slot, r->d, general, NULL);
}

/* The model: leaf_fast() one node at a time, in order. */
static void model(const struct world *w, const struct leaf_fast_plan *k, uint32_t from,
		  uint32_t want, struct result *r)
{
	const struct node_alloc *rec = ledger_nodes(w->ledger);
	r->n = r->visited = 0;
	for (uint32_t j = from; j < w->n_feasible && r->n < want; j++, r->visited++) {
		uint32_t slot = w->feasible[j];
		int64_t d = 0;
		bool gen = false;
		uint32_t m = leaf_fast(k, &rec[slot], w->cpu[slot], w->mem[slot],
				       w->pods[slot], &d, &gen);
		if (gen)
			m = general(NULL, slot, &d);
		if (m == 0) {
			r->slot[r->n] = slot;
			r->d[r->n++] = d;
		}
	}
}

static void same(const struct result *a, const struct result *b)
{
	assert_int_equal(a->n, b->n);
	assert_int_equal(a->visited, b->visited);
	for (uint32_t i = 0; i < a->n; i++) {
		assert_int_equal(a->slot[i], b->slot[i]);
		assert_int_equal(a->d[i], b->d[i]);
	}
}

/* leaf_reasons() over the feasible nodes from `from`, with AVX2 and
 * scalar, against leaf_fast()'s masks counted one node at a time. */
static void reasons_alike(const struct world *w, const struct leaf_fast_plan *k,
			  uint32_t from, uint64_t *refused)
{
	const struct node_alloc *rec = ledger_nodes(w->ledger);
	uint32_t want[LEAF_REASONS] = {0}, simd[LEAF_REASONS], scalar[LEAF_REASONS];
	for (uint32_t j = from; j < w->n_feasible; j++) {
		uint32_t slot = w->feasible[j];
		int64_t d = 0;
		bool gen = false;
		uint32_t m = leaf_fast(k, &rec[slot], w->cpu[slot], w->mem[slot],
				       w->pods[slot], &d, &gen);
		want[LEAF_REASON_PODS] += (m & MASK_PODS) != 0;
		want[LEAF_REASON_CPU] += (m & MASK_RES(RES_CPU)) != 0;
		want[LEAF_REASON_MEMORY] += (m & MASK_RES(RES_MEMORY)) != 0;
		*refused += m != 0;
	}
	struct leaf_nodes nd = nodes_of(w);
	leaf_scan_set_simd(true);
	leaf_reasons(k, &nd, w->feasible + from, w->n_feasible - from, simd);
	leaf_scan_set_simd(false);
	leaf_reasons(k, &nd, w->feasible + from, w->n_feasible - from, scalar);
	for (unsigned r = 0; r < LEAF_REASONS; r++) {
		assert_int_equal(simd[r], want[r]);
		assert_int_equal(scalar[r], want[r]);
	}
}

static void test_simd_equals_scalar(void **state)
{
	(void)state;
	struct world *w = calloc(1, sizeof(*w));
	static struct result want_r, simd512_r, simd_r, scalar_r;
	assert_non_null(w);
	w->ledger = ledger_create(NODES);
	assert_non_null(w->ledger);
	assert_int_equal(node_rows_init(&w->rows, NODES), 0);
	bool had = leaf_scan_simd(), had512 = leaf_scan_simd512();
	uint64_t passed = 0, lanes = 0, refused = 0;
	for (int c = 0; c < CASES; c++) {
		draw_world(w);
		struct leaf_fast_plan k;
		draw_plan(&k);
		uint32_t from = w->n_feasible ? (uint32_t)below(w->n_feasible) : 0;
		uint32_t want = 1 + (uint32_t)below(NODES);
		model(w, &k, from, want, &want_r);
		leaf_scan_set_simd(true);
		leaf_scan_set_simd512(true);
		scan(w, &k, from, want, &simd512_r);
		leaf_scan_set_simd512(false);
		scan(w, &k, from, want, &simd_r);
		leaf_scan_set_simd(false);
		scan(w, &k, from, want, &scalar_r);
		same(&simd512_r, &want_r);
		same(&simd_r, &want_r);
		same(&scalar_r, &want_r);
		reasons_alike(w, &k, from, &refused);
		passed += want_r.n;
		lanes += want_r.visited;
	}
	leaf_scan_set_simd(had);
	leaf_scan_set_simd512(had512);
	print_message("leaf_scan: %d cases, %" PRIu64 " nodes visited, %" PRIu64
		      " passed, alike with %s, %s and scalar; reasons of %" PRIu64
		      " refused nodes alike\n", CASES, lanes, passed,
		      had512 ? "AVX-512" : "no AVX-512 on this CPU (AVX2)",
		      had ? "AVX2" : "no AVX2 on this CPU (scalar)", refused);
	/* The cases reach both sides of the filter. */
	assert_true(passed > lanes / 20 && passed < lanes);
	assert_true(refused > 0);
	node_rows_free(&w->rows);
	ledger_destroy(w->ledger);
	free(w);
}

/* Four plans (or fewer) on nodes drawn as above: each lane answered is
 * leaf_fast_of()'s answer; a lane left out is one leaf_fast_of() sends to
 * the general rules, or one whose figures or weights are outside the
 * exact ranges. */
static void test_plans_equal_one_by_one(void **state)
{
	(void)state;
	uint64_t answered = 0, left = 0, passing = 0;
	for (int c = 0; c < CASES * 10; c++) {
		struct leaf_fast_plan plan[4];
		const struct leaf_fast_plan *k[4];
		unsigned n = 1 + (unsigned)below(4);
		for (unsigned i = 0; i < n; i++) {
			draw_plan(&plan[i]);
			k[i] = &plan[i];
		}
		struct leaf_node v;
		v.ac = pick_alloc(64000);
		v.am = pick_alloc(INT64_C(256) << 30);
		v.ap = below(4) == 0 ? below(3) : 110;
		v.uc = pick_used(v.ac);
		v.um = pick_used(v.am);
		v.pods = below(v.ap + 2);
		v.nz_cpu = v.uc + below(3) * 100;
		v.nz_mem = v.um + below(3) * (200 << 20);
		struct leaf_plans p;
		leaf_plans_init(&p, k, n);
		uint32_t m[4];
		int64_t d[4];
		unsigned done = leaf_fast_plans(&p, &v, m, d);
		assert_int_equal(done & ~((1u << n) - 1), 0);
		for (unsigned i = 0; i < n; i++) {
			int64_t want_d = -1;
			bool gen = false;
			uint32_t want_m = leaf_fast_of(k[i], v.pods, v.uc, v.um, &v.nz_cpu,
						       &v.nz_mem, v.ac, v.am, v.ap, &want_d, &gen);
			if (!((done >> i) & 1)) {
				/* Left out only where it may be. */
				bool big = k[i]->w_fit > (INT64_C(1) << 20);
				bool inexact = v.ac < 1 || v.ac >= (INT64_C(1) << 46) ||
					       v.am < 1 || v.am >= (INT64_C(1) << 46) ||
					       v.uc + k[i]->req_cpu >= (INT64_C(1) << 52) ||
					       v.um + k[i]->req_mem >= (INT64_C(1) << 52);
				assert_true(gen || big || inexact);
				assert_true(want_m == 0 || big);
				left++;
				continue;
			}
			assert_false(gen);
			assert_int_equal(m[i], want_m);
			if (want_m == 0) {
				assert_int_equal(d[i], want_d);
				passing++;
			}
			answered++;
		}
	}
	print_message("leaf_fast_plans: %" PRIu64 " lanes alike (%" PRIu64 " passing), %"
		      PRIu64 " left to one by one\n", answered, passing, left);
	if (leaf_scan_simd()) {
		assert_true(passing > answered / 20);
		assert_true(left > 0 && left < answered);
	} else {
		assert_int_equal(answered, 0); /* no AVX2: every lane left */
	}
	/* Switched off, it leaves every lane to the caller. */
	bool had = leaf_scan_set_simd(false);
	struct leaf_fast_plan one;
	draw_plan(&one);
	const struct leaf_fast_plan *k1[1] = {&one};
	struct leaf_plans p1;
	leaf_plans_init(&p1, k1, 1);
	struct leaf_node v1 = {.ac = 4000, .am = INT64_C(1) << 33, .ap = 110};
	uint32_t m1[4];
	int64_t d1[4];
	assert_int_equal(leaf_fast_plans(&p1, &v1, m1, d1), 0);
	leaf_scan_set_simd(had);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_simd_equals_scalar),
		cmocka_unit_test(test_plans_equal_one_by_one),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
