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
	if (slot < r->n_slots)
		copy_row(&r->row[slot], ledger_node(l, slot), a, slot);
}

void node_rows_forget(struct node_rows *r)
{
	r->n_slots = 0;
}

/* Every row of [0, n_slots), the log's head read first: a change logged
 * after it is read again by the next sync. */
static void rebuild(struct node_rows *r, struct ledger *l,
		    const struct node_allocatable *a, uint32_t n_slots)
{
	r->log_pos = ledger_changes_head(l);
	const struct node_alloc *recs = ledger_nodes(l);
	for (uint32_t slot = 0; slot < n_slots; slot++)
		copy_row(&r->row[slot], &recs[slot], a, slot);
	r->n_slots = n_slots;
	r->rebuilds++;
}

void node_rows_sync(struct node_rows *r, struct ledger *l,
		    const struct node_allocatable *a, uint32_t n_slots)
{
	if (n_slots > r->capacity)
		n_slots = r->capacity;
	uint64_t head = ledger_changes_head(l);
	if (n_slots != r->n_slots || ledger_changes_rebuild(head, r->log_pos, n_slots)) {
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
