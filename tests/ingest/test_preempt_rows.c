/* unit.preempt_rows: preemption's rows (ingest/preempt_rows.c, PK1-PK5)
 * against the placement records and ledger counters they keep up with:
 * after every prepare and refresh each row is what its chain and its
 * counters sum up to now (pods, lowest and highest priority, latest
 * start, requests, room before and after; again for the pods below the
 * top band, PK5), whatever moved them between
 * (placements, releases, a publish that lands after its reserve was
 * logged and read, more changes than the log keeps, a new snapshot); a
 * refresh of unchanged slots sums no chain; and the tests' check counts
 * nothing on rows kept right. The rows' scan index (workers/preempt_scan.h,
 * PI1), kept over the same churn, reads as one made afresh from the rows:
 * every row written is touched. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "base/base.h"
#include "ingest/preempt_rows.h"

#define SLOTS 200
#define CAP 4096

static uint64_t rs = 11;

/* A hand-made snapshot of SLOTS present nodes, one in five tainted. */
static uint8_t present[SLOTS];
static struct node_spec nodes[SLOTS];
static int64_t alloc_v[RES_MAX][SLOTS];
static struct snapshot snap;

static void snap_make(uint64_t generation)
{
	memset(&snap, 0, sizeof(snap));
	snap.generation = generation;
	snap.n_slots = SLOTS;
	snap.n_nodes = SLOTS;
	snap.present = present;
	snap.nodes = nodes;
	for (uint32_t s = 0; s < SLOTS; s++) {
		present[s] = 1;
		nodes[s].n_taints = s % 5 == 0;
		alloc_v[RES_CPU][s] = 4000 + 1000 * (int64_t)(s % 4);
		alloc_v[RES_MEMORY][s] = (int64_t)16 << 30;
		alloc_v[RES_PODS][s] = 110;
	}
	for (unsigned k = 0; k < RES_MAX; k++)
		snap.allocatable[k] = alloc_v[k];
}

struct world {
	struct ledger *l;
	struct placements *t;
	uint64_t live[CAP];
	uint32_t n_live;
};

static struct pod_spec pod_of(int32_t priority)
{
	struct pod_spec p;
	memset(&p, 0, sizeof(p));
	p.request.v[RES_CPU] = 250 * (int64_t)(1 + rng_next(&rs) % 4);
	p.request.v[RES_MEMORY] = (int64_t)(1 + rng_next(&rs) % 4) << 28;
	p.nonzero_cpu_milli = p.request.v[RES_CPU];
	p.nonzero_mem_bytes = p.request.v[RES_MEMORY];
	p.priority = priority;
	return p;
}

/* A placement on `slot`: its counters moved (logged), and its record
 * published now or, with `later`, into *held for publish(). */
struct held {
	uint32_t index, slot;
	struct pod_spec pod;
};

static void reserve(struct world *w, uint32_t slot, struct pod_spec *pod,
		    struct held *h)
{
	assert_int_equal(ledger_account(w->l, slot, pod, NULL, +1), 0);
	int64_t ix = placements_take(w->t);
	assert_true(ix >= 0);
	*h = (struct held){.index = (uint32_t)ix, .slot = slot, .pod = *pod};
}

static void publish(struct world *w, const struct held *h)
{
	w->live[w->n_live++] = placements_fill(w->t, h->index, 1, h->slot,
					       ledger_node_generation(w->l, h->slot),
					       &h->pod, NULL, 0);
}

static void place(struct world *w, uint32_t slot, int32_t priority)
{
	struct pod_spec pod = pod_of(priority);
	struct held h;
	reserve(w, slot, &pod, &h);
	publish(w, &h);
}

/* Releases live placement i: its counters given back, its record freed. */
static void release(struct world *w, uint32_t i)
{
	const struct placement_record *r = placements_get(w->t, w->live[i]);
	assert_non_null(r);
	struct pod_spec pod;
	placement_use(r, &pod);
	assert_int_equal(ledger_account(w->l, r->slot, &pod, NULL, -1), 0);
	placements_free(w->t, w->live[i]);
	w->live[i] = w->live[--w->n_live];
}

/* Slot s's chain summed afresh: its records below priority `below`. */
struct expect {
	uint32_t n;
	int32_t low, high;
	uint64_t late;
	int64_t req[RES_MAX];
};

static void sum_chain(struct world *w, uint32_t s, int32_t below, struct expect *e)
{
	memset(e, 0, sizeof(*e));
	e->low = INT32_MAX;
	e->high = INT32_MIN;
	for (uint32_t i = placements_node_first(w->t, s); i != PLACEMENTS_NIL;
	     i = placements_node_next(w->t, i)) {
		uint64_t id;
		const struct placement_record *rec = placements_at(w->t, i, &id);
		if (rec == NULL || rec->priority >= below)
			continue;
		e->n++;
		e->low = rec->priority < e->low ? rec->priority : e->low;
		e->high = rec->priority > e->high ? rec->priority : e->high;
		e->late = rec->placed_ns > e->late ? rec->placed_ns : e->late;
		for (unsigned k = 0; k < RES_MAX; k++)
			e->req[k] += rec->request.v[k];
	}
}

/* Rows [0, SLOTS) against their chains and counters summed afresh: how
 * many differ (0 expected). */
static unsigned differences(const struct prows *r, struct world *w)
{
	unsigned bad = 0;
	for (uint32_t s = 0; s < SLOTS; s++) {
		struct expect all, band; /* band, PK5: below the top band */
		sum_chain(w, s, INT32_MAX, &all);
		sum_chain(w, s, all.high, &band);
		uint32_t n = all.n, n2 = band.n;
		int32_t low = all.low, high = all.high, high2 = band.high;
		uint64_t late = all.late, late2 = band.late;
		const int64_t *req = all.req, *req2 = band.req;
		const struct node_alloc *a = ledger_node(w->l, s);
		bool bare = s % 5 != 0;
		bad += r->n[s] != n || r->low[s] != low || r->late[s] != late ||
		       (n > 0 && r->fast_high[s] != (bare ? high : INT32_MAX)) ||
		       r->n2[s] != n2 || r->late2[s] != late2 ||
		       r->fast_high2[s] != (bare ? high2 : INT32_MAX);
		for (unsigned k = 0; k < RES_MAX; k++) {
			int64_t room = alloc_v[k][s] - a->used[k];
			bad += r->room[k][s] != room ||
			       r->then[k][s] != room + (k == RES_PODS ? (int64_t)n : req[k]) ||
			       r->then2[k][s] != room + (k == RES_PODS ? (int64_t)n2 : req2[k]);
		}
	}
	return bad;
}

static void world_make(struct world *w)
{
	memset(w, 0, sizeof(*w));
	w->l = ledger_create(SLOTS);
	w->t = placements_create(CAP);
	assert_non_null(w->l);
	assert_non_null(w->t);
}

static void world_free(struct world *w)
{
	placements_destroy(w->t);
	ledger_destroy(w->l);
}

/* A request's use of the rows: prepared, every slot refreshed (in the
 * chunks preempt_select asks for). Returns the check's mismatches. */
static uint64_t use(struct prows *r, struct world *w, bool check)
{
	uint64_t mismatches = 0;
	assert_int_equal(prows_prepare(r, w->t, w->l, &snap), 0);
	for (uint32_t s = 0; s < SLOTS; s += PREEMPT_ROWS_CHUNK) {
		uint32_t n = SLOTS - s < PREEMPT_ROWS_CHUNK ? SLOTS - s : PREEMPT_ROWS_CHUNK;
		prows_refresh(r, w->t, w->l, s, n, check, &mismatches);
	}
	return mismatches;
}

/* Stops and counts of runs over every slot (preempt_scan_run, from each
 * stop on), with the index `scan` over r's rows, against the best
 * `best` (NULL: none). */
struct runs {
	uint32_t n;
	uint32_t at[2 * SLOTS + 2], cands[2 * SLOTS + 2];
};

static void runs_of(struct prows *r, struct preempt_scan *scan, const int64_t *best,
		    struct runs *out)
{
	struct preempt_rows view;
	prows_view(r, &view);
	struct res_vec req = {{[RES_CPU] = 3000}};
	assert_true(preempt_scan_begin(scan, SLOTS, 250, &req));
	out->n = 0;
	uint32_t j = 0, cands = 0, clean = 0;
	while (j < SLOTS) {
		uint32_t end = SLOTS - j < PREEMPT_ROWS_CHUNK ? SLOTS : j + PREEMPT_ROWS_CHUNK;
		enum preempt_run_stop stop;
		j += preempt_scan_run(scan, &view, j, end, SLOTS, best, 0, &cands, &clean,
				      &stop);
		if (stop != PREEMPT_RUN_BOUNDARY) {
			out->at[out->n] = j * 3 + (uint32_t)stop;
			out->cands[out->n++] = cands;
			j++;
		}
	}
	out->at[out->n] = j;
	out->cands[out->n++] = cands;
}

/* PI1: r's kept index against one made afresh, with no best and with
 * one (its highest victim at 100, its start midway). Returns the
 * differences. */
static uint64_t scan_differences(struct prows *r)
{
	static struct runs kept, fresh;
	struct preempt_scan afresh;
	assert_int_equal(preempt_scan_init(&afresh, SLOTS), 0);
	const int64_t best[5] = {0, -100, -(100 + INT64_C(2147483648)), -1, 1000};
	uint64_t bad = 0;
	for (int with_best = 0; with_best < 2; with_best++) {
		runs_of(r, &r->scan, with_best ? best : NULL, &kept);
		preempt_scan_touch_all(&afresh);
		runs_of(r, &afresh, with_best ? best : NULL, &fresh);
		bad += kept.n != fresh.n;
		for (uint32_t i = 0; i < kept.n && i < fresh.n; i++)
			bad += kept.at[i] != fresh.at[i] || kept.cands[i] != fresh.cands[i];
	}
	preempt_scan_free(&afresh);
	return bad;
}

/* PK4: a publish that lands after the evictor read its reserve's log
 * entry is seen at the next refresh, with no log entry of its own. */
static void test_late_publish(void **state)
{
	(void)state;
	struct world w;
	world_make(&w);
	snap_make(1);
	struct prows r;
	prows_init(&r);
	for (uint32_t s = 0; s < SLOTS; s++)
		place(&w, s, (int32_t)(s % 3) * 100);
	assert_int_equal(use(&r, &w, false), 0);
	assert_int_equal(differences(&r, &w), 0);
	struct pod_spec pod = pod_of(50);
	struct held h;
	reserve(&w, 7, &pod, &h);
	assert_int_equal(use(&r, &w, false), 0);
	assert_int_equal(r.n[7], 1); /* the chain has not caught up */
	publish(&w, &h);
	uint64_t sums = r.sums;
	assert_int_equal(use(&r, &w, false), 0);
	assert_int_equal(r.n[7], 2);
	assert_int_equal(r.low[7], 50); /* below the 100 of the first */
	assert_int_equal(differences(&r, &w), 0);
	assert_true(r.sums == sums + 1);
	/* Nothing moved: no chain summed again. */
	assert_int_equal(use(&r, &w, false), 0);
	assert_true(r.sums == sums + 1);
	prows_free(&r);
	world_free(&w);
}

/* Random placements, releases and late publishes between requests,
 * some requests after more changes than the log is followed for (its
 * rebuild), a new snapshot
 * now and then: every row right after each request, and the tests'
 * check counts nothing. */
static void test_random_churn(void **state)
{
	(void)state;
	struct world w;
	world_make(&w);
	snap_make(1);
	struct prows r;
	prows_init(&r);
	struct held pending[8];
	unsigned n_pending = 0, rounds = 300;
	uint64_t gen = 1;
	for (unsigned round = 0; round < rounds; round++) {
		unsigned changes = round % 50 == 49 ? 1000 : (unsigned)(rng_next(&rs) % 20);
		for (unsigned c = 0; c < changes; c++) {
			uint32_t slot = (uint32_t)(rng_next(&rs) % SLOTS);
			if (w.n_live > 0 && (w.n_live + n_pending > CAP - 16 || rng_next(&rs) % 2))
				release(&w, (uint32_t)(rng_next(&rs) % w.n_live));
			else
				place(&w, slot, (int32_t)(rng_next(&rs) % 4) * 100);
		}
		/* Publishes whose reserve the request below reads first. */
		for (unsigned i = 0; i < n_pending; i++)
			publish(&w, &pending[i]);
		n_pending = 0;
		unsigned late = (unsigned)(rng_next(&rs) % 4);
		for (unsigned i = 0; i < late; i++) {
			struct pod_spec pod = pod_of((int32_t)(rng_next(&rs) % 4) * 100);
			reserve(&w, (uint32_t)(rng_next(&rs) % SLOTS), &pod, &pending[n_pending++]);
		}
		if (round % 37 == 36)
			snap_make(++gen);
		bool check = round % 3 == 0;
		assert_int_equal(use(&r, &w, check), 0);
		assert_int_equal(differences(&r, &w), 0);
		assert_int_equal(scan_differences(&r), 0);
	}
	for (unsigned i = 0; i < n_pending; i++)
		publish(&w, &pending[i]);
	assert_int_equal(use(&r, &w, true), 0);
	assert_int_equal(differences(&r, &w), 0);
	print_message("preempt_rows: %u rounds, %llu chains summed, %llu counters "
		      "copied\n", rounds, (unsigned long long)r.sums,
		      (unsigned long long)r.copies);
	prows_free(&r);
	world_free(&w);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_late_publish),
		cmocka_unit_test(test_random_churn),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
