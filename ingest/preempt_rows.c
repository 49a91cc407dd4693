/* Preemption's rows, kept by the evictor: see preempt_rows.h (PK1-PK5).
 * The hot loop is prows_refresh's: a bitmap word per 64 slots, then the
 * dirty slots' keys (three dense uint32 loads and compares each); a
 * chain is read only when its key moved. */
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
	free(r->dirty);
	free(r->fast_high);
	free(r->n2);
	free(r->high2);
	free(r->late2);
	free(r->fast_high2);
	preempt_scan_free(&r->scan);
	for (unsigned k = 0; k < RES_MAX; k++) {
		free(r->freed2[k]);
		free(r->then2[k]);
		free(r->freed[k]);
		free(r->used[k]);
		free(r->room[k]);
		free(r->then[k]);
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
	/* Zeroed: a row is read (and added to) before its first sum. */
	r->head = calloc(n, sizeof(uint32_t));
	r->unlinks = calloc(n, sizeof(uint32_t));
	r->gen = calloc(n, sizeof(uint32_t));
	r->valid = calloc(n, 1);
	r->n = calloc(n, sizeof(uint32_t));
	r->low = calloc(n, sizeof(int32_t));
	r->high = calloc(n, sizeof(int32_t));
	r->late = calloc(n, sizeof(uint64_t));
	r->bare = calloc(n, 1);
	r->fast_high = calloc(n, sizeof(int32_t));
	r->dirty = calloc((n + 63) / 64, sizeof(uint64_t));
	r->n2 = calloc(n, sizeof(uint32_t));
	r->high2 = calloc(n, sizeof(int32_t));
	r->late2 = calloc(n, sizeof(uint64_t));
	r->fast_high2 = calloc(n, sizeof(int32_t));
	bool got = r->head && r->unlinks && r->gen && r->valid && r->n && r->low &&
		   r->high && r->late && r->bare && r->fast_high && r->dirty && r->n2 &&
		   r->high2 && r->late2 && r->fast_high2;
	got = got && preempt_scan_init(&r->scan, cap) == 0;
	for (unsigned k = 0; k < RES_MAX; k++) {
		r->freed2[k] = calloc(n, sizeof(int64_t));
		r->then2[k] = calloc(n, sizeof(int64_t));
		got = got && r->freed2[k] && r->then2[k];
		r->freed[k] = calloc(n, sizeof(int64_t));
		r->used[k] = calloc(n, sizeof(int64_t));
		r->room[k] = calloc(n, sizeof(int64_t));
		r->then[k] = calloc(n, sizeof(int64_t));
		got = got && r->freed[k] && r->used[k] && r->room[k] && r->then[k];
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

/* Slot s's room and room with every pod gone, from its parts. Every
 * write to a slot's rows ends here (copy_used, resum) or in bare_make:
 * PI1, the scan index's entry stale. */
static void room_make(struct prows *r, uint32_t s)
{
	const struct snapshot *snap = r->snap;
	preempt_scan_touch(&r->scan, s);
	for (unsigned k = 0; k < RES_MAX; k++) {
		r->room[k][s] = snap->allocatable[k][s] - r->used[k][s];
		r->then[k][s] = r->room[k][s] + (k == RES_PODS ? (int64_t)r->n[s]
								: r->freed[k][s]);
		r->then2[k][s] = r->room[k][s] + (k == RES_PODS ? (int64_t)r->n2[s]
								 : r->freed2[k][s]);
	}
}

/* V1: relaxed loads, as ledger_load_used's: a view, the swap decides. */
static void copy_used(struct prows *r, const struct node_alloc *a, uint32_t slot)
{
	for (unsigned k = 0; k < RES_MAX; k++)
		r->used[k][slot] = __atomic_load_n(&a->used[k], __ATOMIC_RELAXED);
	room_make(r, slot);
}

/* PK4: every slot's key to be compared again. */
static void all_dirty(struct prows *r)
{
	memset(r->dirty, 0xff, (r->cap + 63) / 64 * sizeof(uint64_t));
}

static void mark_dirty(struct prows *r, uint32_t s)
{
	r->dirty[s / 64] |= UINT64_C(1) << (s % 64);
}

/* PK2: every slot's counters, the log's head read first (a change
 * logged after it is read again next time); every key dirty (PK4: the
 * log's slots are not known). */
static void used_rebuild(struct prows *r, struct ledger *l, uint32_t n_slots)
{
	all_dirty(r);
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
				mark_dirty(r, batch[b]);
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
		r->fast_high[s] = r->bare[s] ? r->high[s] : INT32_MAX;
		r->fast_high2[s] = r->bare[s] ? r->high2[s] : INT32_MAX;
	}
	preempt_scan_touch_all(&r->scan); /* PI1 */
}

int prows_prepare(struct prows *r, const struct placements *t, struct ledger *l,
		  const struct snapshot *snap)
{
	uint32_t n_slots = snap->n_slots;
	bool fresh = false;
	r->snap = snap;
	if (r->of != t || n_slots > r->cap) {
		uint32_t cap = n_slots > r->cap ? n_slots : r->cap;
		if (arrays_make(r, cap) < 0)
			return -ENOMEM;
		r->of = t;
		r->snap = snap;
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
	/* PK5: the pods below the highest priority only. */
	uint32_t n2;
	int32_t high2;
	uint64_t late2;
	int64_t req2[RES_MAX];
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
	/* PK5: again, the pods below the top band (chains are short, and
	 * summed again only when they change). */
	out->high2 = INT32_MIN;
	for (uint32_t i = head; i != PLACEMENTS_NIL && out->n > 0;
	     i = placements_node_next(t, i)) {
		uint64_t id;
		const struct placement_record *rec = placements_at(t, i, &id);
		if (rec == NULL || rec->slot != s || rec->node_gen != gen ||
		    rec->priority >= out->high)
			continue;
		out->n2++;
		out->high2 = rec->priority > out->high2 ? rec->priority : out->high2;
		out->late2 = rec->placed_ns > out->late2 ? rec->placed_ns : out->late2;
		for (unsigned k = 0; k < RES_MAX; k++)
			out->req2[k] += rec->request.v[k];
	}
}

static bool sum_differs(const struct prows *r, uint32_t s, const struct sum *f)
{
	if (f->n != r->n[s] || f->late != r->late[s] ||
	    (f->n > 0 && (f->low != r->low[s] || f->high != r->high[s])) ||
	    f->n2 != r->n2[s] || f->late2 != r->late2[s] || f->high2 != r->high2[s])
		return true;
	for (unsigned k = 0; k < RES_MAX; k++)
		if (f->req[k] != r->freed[k][s] || f->req2[k] != r->freed2[k][s])
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
	r->n2[s] = f.n2;
	r->high2[s] = f.high2;
	r->late2[s] = f.late2;
	for (unsigned k = 0; k < RES_MAX; k++) {
		r->freed[k][s] = f.req[k];
		r->freed2[k][s] = f.req2[k];
	}
	r->fast_high[s] = r->bare[s] ? f.high : INT32_MAX;
	r->fast_high2[s] = r->bare[s] ? f.high2 : INT32_MAX;
	room_make(r, s);
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
	bad += r->fast_high[s] != (r->bare[s] ? f.high : INT32_MAX);
	bad += r->fast_high2[s] != (r->bare[s] ? f.high2 : INT32_MAX);
	for (unsigned k = 0; k < RES_MAX; k++) {
		bad += r->then[k][s] - r->room[k][s] !=
		       (k == RES_PODS ? (int64_t)f.n : f.req[k]);
		bad += r->then2[k][s] - r->room[k][s] !=
		       (k == RES_PODS ? (int64_t)f.n2 : f.req2[k]);
	}
	const struct node_alloc *a = &ledger_nodes(l)[s];
	for (unsigned k = 0; k < RES_MAX; k++)
		/* V1: relaxed, a view. */
		bad += __atomic_load_n(&a->used[k], __ATOMIC_RELAXED) != r->used[k][s];
	return bad;
}

/* PK1 for slot s: its key loaded and compared, its chain summed again
 * when the key moved. Returns whether it moved. */
static bool revalidate(struct prows *r, const struct placements *t, uint32_t cap,
		       const uint32_t *gens, uint32_t s)
{
	uint32_t u = 0, h = PLACEMENTS_NIL;
	/* PN3 (relaxed), then PN2 (acquire, partner of PN1's release): the
	 * count, then the head, then the walk; NR1: relaxed. */
	if (s < cap) {
		u = __atomic_load_n(&placements_node_unlink_counts(t)[s], __ATOMIC_RELAXED);
		h = __atomic_load_n(&placements_node_heads(t)[s], __ATOMIC_ACQUIRE);
	}
	uint32_t g = __atomic_load_n(&gens[s], __ATOMIC_RELAXED);
	if (r->valid[s] && r->head[s] == h && r->unlinks[s] == u && r->gen[s] == g)
		return false;
	resum(r, t, s, h, u, g);
	return true;
}

void prows_refresh(struct prows *r, const struct placements *t, struct ledger *l,
		   uint32_t first, uint32_t n, bool check, uint64_t *mismatches)
{
	const uint32_t *gens = ledger_node_generations(l);
	uint32_t cap = placements_capacity(t);
	uint32_t end = first + n;
	if (check) {
		/* Every key, and what PK4 left clean must not have moved. */
		for (uint32_t s = first; s < end; s++) {
			bool clean = !(r->dirty[s / 64] >> (s % 64) & 1);
			if (revalidate(r, t, cap, gens, s))
				*mismatches += clean;
			else
				*mismatches += check_slot(r, t, l, s);
			if ((int64_t)r->n[s] == r->used[RES_PODS][s])
				r->dirty[s / 64] &= ~(UINT64_C(1) << (s % 64));
		}
		return;
	}
	/* PK4: only the dirty slots' keys; one left dirty while its summary
	 * counts fewer or more pods than its counter (a publish to come). */
	for (uint32_t w = first / 64; w * 64 < end; w++) {
		uint64_t bits = r->dirty[w];
		if (bits == 0)
			continue;
		uint32_t lo = w * 64 < first ? first - w * 64 : 0;
		uint32_t hi = end - w * 64 < 64 ? end - w * 64 : 64;
		uint64_t mask = (hi == 64 ? ~UINT64_C(0) : (UINT64_C(1) << hi) - 1) &
				~((UINT64_C(1) << lo) - 1);
		for (uint64_t m = bits & mask; m != 0; m &= m - 1) {
			uint32_t s = w * 64 + (uint32_t)__builtin_ctzll(m);
			revalidate(r, t, cap, gens, s);
			if ((int64_t)r->n[s] == r->used[RES_PODS][s])
				bits &= ~(UINT64_C(1) << (s % 64));
		}
		r->dirty[w] = bits;
	}
}

void prows_view(struct prows *r, struct preempt_rows *out)
{
	memset(out, 0, sizeof(*out));
	out->scan = &r->scan;
	out->n = r->n;
	out->low = r->low;
	out->fast_high = r->fast_high;
	out->late = r->late;
	out->n2 = r->n2;
	out->fast_high2 = r->fast_high2;
	out->late2 = r->late2;
	for (unsigned k = 0; k < RES_MAX; k++) {
		out->room[k] = r->room[k];
		out->then[k] = r->then[k];
		out->then2[k] = r->then2[k];
	}
}
