/* Preemption's rows, kept by the evictor: see preempt_rows.h (PK1-PK3).
 * The hot loop is prows_refresh's key comparison, three dense uint32
 * loads and compares a slot; a chain is read only when its key moved. */
#include "ingest/preempt_rows.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define LOG_BATCH 16 /* log entries read at once (PK2) */

void prows_init(struct prows *r)
{
	memset(r, 0, sizeof(*r));
}

static void arrays_free(struct prows *r)
{
	free(r->head);
	free(r->unlinks);
	free(r->gen);
	free(r->valid);
	free(r->n);
	free(r->low);
	free(r->high);
	free(r->late);
	free(r->bare);
	for (unsigned k = 0; k < RES_MAX; k++) {
		free(r->freed[k]);
		free(r->used[k]);
	}
}

void prows_free(struct prows *r)
{
	arrays_free(r);
	prows_init(r);
}

/* Arrays for `cap` slots, nothing summed. 0 or -ENOMEM (r emptied). */
static int arrays_make(struct prows *r, uint32_t cap)
{
	arrays_free(r);
	uint64_t sums = r->sums, copies = r->copies;
	prows_init(r);
	r->sums = sums;
	r->copies = copies;
	size_t n = cap ? cap : 1;
	r->head = calloc(n, sizeof(uint32_t));
	r->unlinks = calloc(n, sizeof(uint32_t));
	r->gen = calloc(n, sizeof(uint32_t));
	r->valid = calloc(n, 1);
	r->n = malloc(n * sizeof(uint32_t));
	r->low = malloc(n * sizeof(int32_t));
	r->high = malloc(n * sizeof(int32_t));
	r->late = malloc(n * sizeof(uint64_t));
	r->bare = calloc(n, 1);
	bool got = r->head && r->unlinks && r->gen && r->valid && r->n && r->low &&
		   r->high && r->late && r->bare;
	for (unsigned k = 0; k < RES_MAX; k++) {
		r->freed[k] = malloc(n * sizeof(int64_t));
		r->used[k] = malloc(n * sizeof(int64_t));
		got = got && r->freed[k] && r->used[k];
	}
	if (!got) {
		arrays_free(r);
		prows_init(r);
		r->sums = sums;
		r->copies = copies;
		return -ENOMEM;
	}
	r->cap = cap;
	return 0;
}

/* V1: relaxed loads, as ledger_load_used's: a view, the swap decides. */
static void copy_used(struct prows *r, const struct node_alloc *a, uint32_t slot)
{
	for (unsigned k = 0; k < RES_MAX; k++)
		r->used[k][slot] = __atomic_load_n(&a->used[k], __ATOMIC_RELAXED);
}

/* PK2: every slot's counters, the log's head read first (a change
 * logged after it is read again next time). */
static void used_rebuild(struct prows *r, struct ledger *l, uint32_t n_slots)
{
	r->log_pos = ledger_changes_head(l);
	const struct node_alloc *recs = ledger_nodes(l);
	for (uint32_t s = 0; s < n_slots; s++)
		copy_used(r, &recs[s], s);
	r->copies += n_slots;
}

/* PK2: the slots logged since the last read, re-read. */
static void used_sync(struct prows *r, struct ledger *l, uint32_t n_slots)
{
	uint64_t head = ledger_changes_head(l);
	if (ledger_changes_rebuild(head, r->log_pos, n_slots)) {
		used_rebuild(r, l, n_slots);
		return;
	}
	const struct node_alloc *recs = ledger_nodes(l);
	uint64_t i = r->log_pos;
	int got;
	do {
		uint32_t batch[LOG_BATCH];
		got = ledger_changes_read(l, &i, head, batch, LOG_BATCH);
		if (got < 0) {
			used_rebuild(r, l, n_slots);
			return;
		}
		for (int b = 0; b < got; b++)
			if (batch[b] < n_slots) {
				copy_used(r, &recs[batch[b]], batch[b]);
				r->copies++;
			}
	} while (got == LOG_BATCH); /* else done, or stalled on an entry */
	r->log_pos = i;
}

/* PK3: the marks of this snapshot's slots. */
static void bare_make(struct prows *r, const struct snapshot *snap)
{
	for (uint32_t s = 0; s < snap->n_slots; s++) {
		const struct node_spec *nd = &snap->nodes[s];
		r->bare[s] = snap->present[s] && nd->n_taints == 0 && !nd->unschedulable;
	}
}

int prows_prepare(struct prows *r, const struct placements *t, struct ledger *l,
		  const struct snapshot *snap)
{
	uint32_t n_slots = snap->n_slots;
	bool fresh = false;
	if (r->of != t || n_slots > r->cap) {
		uint32_t cap = n_slots > r->cap ? n_slots : r->cap;
		if (arrays_make(r, cap) < 0)
			return -ENOMEM;
		r->of = t;
		fresh = true;
	}
	if (fresh || r->snap_gen != snap->generation || r->n_slots != n_slots) {
		bare_make(r, snap);
		used_rebuild(r, l, n_slots);
		r->snap_gen = snap->generation;
		r->n_slots = n_slots;
		return 0;
	}
	used_sync(r, l, n_slots);
	return 0;
}

/* PK1: slot `s`'s chain from `head` summed up into the rows, keyed so.
 * Only records of the node as it is now (victim_ok's
 * ledger_slot_current: the slot and its generation). */
struct sum {
	uint32_t n;
	int32_t low, high;
	uint64_t late;
	int64_t req[RES_MAX];
};

static void chain_sum(const struct placements *t, uint32_t s, uint32_t head,
		      uint32_t gen, struct sum *out)
{
	memset(out, 0, sizeof(*out));
	out->low = INT32_MAX;
	out->high = INT32_MIN;
	for (uint32_t i = head; i != PLACEMENTS_NIL; i = placements_node_next(t, i)) {
		uint64_t id;
		const struct placement_record *rec = placements_at(t, i, &id);
		if (rec == NULL || rec->slot != s || rec->node_gen != gen)
			continue;
		out->n++;
		out->low = rec->priority < out->low ? rec->priority : out->low;
		out->high = rec->priority > out->high ? rec->priority : out->high;
		out->late = rec->placed_ns > out->late ? rec->placed_ns : out->late;
		for (unsigned k = 0; k < RES_MAX; k++)
			out->req[k] += rec->request.v[k];
	}
}

static bool sum_differs(const struct prows *r, uint32_t s, const struct sum *f)
{
	if (f->n != r->n[s] || f->late != r->late[s] ||
	    (f->n > 0 && (f->low != r->low[s] || f->high != r->high[s])))
		return true;
	for (unsigned k = 0; k < RES_MAX; k++)
		if (f->req[k] != r->freed[k][s])
			return true;
	return false;
}

/* PK1 for slot `s` whose key (h, u, g) moved: its chain summed again. */
static void resum(struct prows *r, const struct placements *t, uint32_t s, uint32_t h,
		  uint32_t u, uint32_t g)
{
	struct sum f;
	chain_sum(t, s, h, g, &f);
	r->head[s] = h;
	r->unlinks[s] = u;
	r->gen[s] = g;
	r->valid[s] = 1;
	r->n[s] = f.n;
	r->low[s] = f.low;
	r->high[s] = f.high;
	r->late[s] = f.late;
	for (unsigned k = 0; k < RES_MAX; k++)
		r->freed[k][s] = f.req[k];
	r->sums++;
}

/* The tests' check of slot `s` whose key holds: its summary against its
 * chain summed afresh, its counters against the ledger's. */
static uint64_t check_slot(const struct prows *r, const struct placements *t,
			   struct ledger *l, uint32_t s)
{
	struct sum f;
	chain_sum(t, s, r->head[s], r->gen[s], &f);
	uint64_t bad = sum_differs(r, s, &f);
	const struct node_alloc *a = &ledger_nodes(l)[s];
	for (unsigned k = 0; k < RES_MAX; k++)
		/* V1: relaxed, a view. */
		bad += __atomic_load_n(&a->used[k], __ATOMIC_RELAXED) != r->used[k][s];
	return bad;
}

void prows_refresh(struct prows *r, const struct placements *t, struct ledger *l,
		   uint32_t first, uint32_t n, bool check, uint64_t *mismatches)
{
	const uint32_t *heads = placements_node_heads(t);
	const uint32_t *unlinks = placements_node_unlink_counts(t);
	const uint32_t *gens = ledger_node_generations(l);
	const uint32_t *kh = r->head, *ku = r->unlinks, *kg = r->gen;
	const uint8_t *kv = r->valid;
	uint32_t cap = placements_capacity(t);
	uint32_t end = first + n;
	for (uint32_t s = first; s < end; s++) {
		uint32_t u = 0, h = PLACEMENTS_NIL;
		/* PN3 (relaxed), then PN2 (acquire, partner of PN1's release):
		 * the count, then the head, then the walk; NR1: relaxed. */
		if (s < cap) {
			u = __atomic_load_n(&unlinks[s], __ATOMIC_RELAXED);
			h = __atomic_load_n(&heads[s], __ATOMIC_ACQUIRE);
		}
		uint32_t g = __atomic_load_n(&gens[s], __ATOMIC_RELAXED);
		if (kh[s] == h && ku[s] == u && kg[s] == g && kv[s]) {
			if (check)
				*mismatches += check_slot(r, t, l, s);
			continue;
		}
		resum(r, t, s, h, u, g);
	}
}

void prows_view(const struct prows *r, const struct snapshot *snap,
		struct preempt_rows *out)
{
	memset(out, 0, sizeof(*out));
	out->bare = r->bare;
	out->n = r->n;
	out->low = r->low;
	out->high = r->high;
	out->late = r->late;
	for (unsigned k = 0; k < RES_MAX; k++) {
		out->alloc[k] = snap->allocatable[k];
		out->used[k] = r->used[k];
		out->freed[k] = r->freed[k];
	}
}
