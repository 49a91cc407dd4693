/* A worker's rows of what the fast leaf reads: see node_rows_internal.h. */
#include "workers/node_rows_internal.h"

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#define SYNC_BATCH 16 /* log entries read, and their records prefetched, ahead of the copy */

int node_rows_init(struct node_rows *r, uint32_t capacity)
{
	memset(r, 0, sizeof(*r));
	r->row = aligned_alloc(_Alignof(struct node_row),
			       (capacity ? capacity : 1) * sizeof(struct node_row));
	if (r->row == NULL)
		return -ENOMEM;
	r->capacity = capacity;
	return 0;
}

void node_rows_free(struct node_rows *r)
{
	free(r->row);
	memset(r, 0, sizeof(*r));
}

/* Relaxed loads, as ledger_load_used(): a view; the commit decides. */
static inline void copy_used(struct node_row *w, const struct node_alloc *a)
{
	w->pods = __atomic_load_n(&a->used[RES_PODS], __ATOMIC_RELAXED);
	w->cpu = __atomic_load_n(&a->used[RES_CPU], __ATOMIC_RELAXED);
	w->mem = __atomic_load_n(&a->used[RES_MEMORY], __ATOMIC_RELAXED);
	w->nz_cpu = __atomic_load_n(&a->used_nonzero_cpu_milli, __ATOMIC_RELAXED);
	w->nz_mem = __atomic_load_n(&a->used_nonzero_mem_bytes, __ATOMIC_RELAXED);
}

static inline void copy_row(struct node_row *w, const struct node_alloc *rec,
			    const struct node_allocatable *a, uint32_t slot)
{
	copy_used(w, rec);
	w->alloc_pods = a->pods[slot];
	w->alloc_cpu = a->cpu[slot];
	w->alloc_mem = a->mem[slot];
}

void node_rows_copy(struct node_rows *r, struct ledger *l,
		    const struct node_allocatable *a, uint32_t slot)
{
	/* A part-made copy's rows too: the rest reads the new values. */
	if (slot < r->n_slots || slot < r->built)
		copy_row(&r->row[slot], ledger_node(l, slot), a, slot);
}

void node_rows_forget(struct node_rows *r)
{
	r->n_slots = 0;
	r->built = 0;
}

/* Rows [from, to) from their records, a batch's records prefetched. */
static void copy_range(struct node_rows *r, const struct node_alloc *recs,
		       const struct node_allocatable *a, uint32_t from, uint32_t to)
{
	for (uint32_t slot = from; slot < to; slot++) {
		if (slot + SYNC_BATCH < to) {
			const char *rec = (const char *)&recs[slot + SYNC_BATCH];
			__builtin_prefetch(rec);
			__builtin_prefetch(rec + offsetof(struct node_alloc, used_nonzero_cpu_milli));
		}
		copy_row(&r->row[slot], &recs[slot], a, slot);
	}
}

bool node_rows_warm(struct node_rows *r, struct ledger *l,
		    const struct node_allocatable *a, uint32_t n_slots,
		    uint32_t max_rows)
{
	if (n_slots > r->capacity)
		n_slots = r->capacity;
	if (n_slots == r->n_slots)
		return true;
	if (r->built == 0 || r->build_target != n_slots) {
		r->build_pos = ledger_changes_head(l);
		r->build_target = n_slots;
		r->built = 0;
	}
	uint32_t end = n_slots - r->built > max_rows ? r->built + max_rows : n_slots;
	copy_range(r, ledger_nodes(l), a, r->built, end);
	r->built = end;
	if (end < n_slots)
		return false;
	/* Whole: the log from build_pos on is the next sync's. */
	r->n_slots = n_slots;
	r->log_pos = r->build_pos;
	r->built = 0;
	r->rebuilds++;
	return true;
}

/* Every row of [0, n_slots), the log's head read first (a change logged
 * after it is read again by the next sync): node_rows_warm()'s copy made
 * whole at once, from its start. */
static void rebuild(struct node_rows *r, struct ledger *l,
		    const struct node_allocatable *a, uint32_t n_slots)
{
	node_rows_forget(r);
	node_rows_warm(r, l, a, n_slots, UINT32_MAX);
}

void node_rows_sync(struct node_rows *r, struct ledger *l,
		    const struct node_allocatable *a, uint32_t n_slots)
{
	if (n_slots > r->capacity)
		n_slots = r->capacity;
	uint64_t head = ledger_changes_head(l);
	if (n_slots != r->n_slots && r->built > 0 && r->build_target == n_slots &&
	    !ledger_changes_rebuild(head, r->build_pos, n_slots)) {
		/* A copy node_rows_warm() began: its rest, then the log. */
		node_rows_warm(r, l, a, n_slots, UINT32_MAX);
	} else if (n_slots != r->n_slots ||
		   ledger_changes_rebuild(head, r->log_pos, n_slots)) {
		rebuild(r, l, a, n_slots);
		return;
	}
	/* In batches, as the shapes' sync: a batch's slots first, their
	 * records prefetched, so the misses overlap. */
	const struct node_alloc *recs = ledger_nodes(l);
	uint64_t i = r->log_pos;
	int got;
	do {
		uint32_t batch[SYNC_BATCH], n = 0;
		got = ledger_changes_read(l, &i, head, batch, SYNC_BATCH);
		if (got < 0) {
			rebuild(r, l, a, n_slots);
			return;
		}
		for (int b = 0; b < got; b++) {
			uint32_t slot = batch[b];
			if (slot >= n_slots)
				continue;
			batch[n++] = slot;
			const char *rec = (const char *)&recs[slot];
			__builtin_prefetch(rec);
			__builtin_prefetch(rec + offsetof(struct node_alloc, used_nonzero_cpu_milli));
			__builtin_prefetch(&r->row[slot], 1);
		}
		for (uint32_t b = 0; b < n; b++)
			copy_used(&r->row[batch[b]], &recs[batch[b]]);
		r->copies += n;
	} while (got == SYNC_BATCH); /* else done, or stalled on an entry */
	r->log_pos = i;
}
