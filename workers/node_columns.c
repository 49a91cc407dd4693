/* A worker's columns of the used counters: see node_columns_internal.h. */
#include "workers/node_columns_internal.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#define COLUMNS 5
#define SYNC_BATCH 16 /* log entries read, and their records prefetched, ahead of the copy */

int node_columns_init(struct node_columns *c, uint32_t capacity)
{
	memset(c, 0, sizeof(*c));
	size_t n = capacity ? capacity : 1;
	/* One allocation, a column after another, each on its own lines. */
	size_t stride = (n * sizeof(int64_t) + 63) / 64 * 64;
	char *mem = aligned_alloc(64, stride * COLUMNS);
	if (mem == NULL)
		return -ENOMEM;
	c->pods = (int64_t *)(void *)mem;
	c->cpu = (int64_t *)(void *)(mem + stride);
	c->mem = (int64_t *)(void *)(mem + 2 * stride);
	c->nz_cpu = (int64_t *)(void *)(mem + 3 * stride);
	c->nz_mem = (int64_t *)(void *)(mem + 4 * stride);
	c->capacity = capacity;
	return 0;
}

void node_columns_free(struct node_columns *c)
{
	free(c->pods);
	memset(c, 0, sizeof(*c));
}

/* Relaxed loads, as ledger_load_used(): a view; the commit decides. */
static inline void copy_slot(struct node_columns *c, const struct node_alloc *a,
			     uint32_t slot)
{
	c->pods[slot] = __atomic_load_n(&a->used[RES_PODS], __ATOMIC_RELAXED);
	c->cpu[slot] = __atomic_load_n(&a->used[RES_CPU], __ATOMIC_RELAXED);
	c->mem[slot] = __atomic_load_n(&a->used[RES_MEMORY], __ATOMIC_RELAXED);
	c->nz_cpu[slot] = __atomic_load_n(&a->used_nonzero_cpu_milli, __ATOMIC_RELAXED);
	c->nz_mem[slot] = __atomic_load_n(&a->used_nonzero_mem_bytes, __ATOMIC_RELAXED);
}

void node_columns_copy(struct node_columns *c, struct ledger *l, uint32_t slot)
{
	if (slot < c->n_slots)
		copy_slot(c, ledger_node(l, slot), slot);
}

void node_columns_forget(struct node_columns *c)
{
	c->n_slots = 0;
}

/* Every slot of [0, n_slots), the log's head read first: a change logged
 * after it is read again by the next sync. */
static void rebuild(struct node_columns *c, struct ledger *l, uint32_t n_slots)
{
	c->log_pos = ledger_changes_head(l);
	const struct node_alloc *recs = ledger_nodes(l);
	for (uint32_t slot = 0; slot < n_slots; slot++)
		copy_slot(c, &recs[slot], slot);
	c->n_slots = n_slots;
	c->rebuilds++;
}

void node_columns_sync(struct node_columns *c, struct ledger *l, uint32_t n_slots)
{
	if (n_slots > c->capacity)
		n_slots = c->capacity;
	uint64_t head = ledger_changes_head(l);
	if (n_slots != c->n_slots || head - c->log_pos > LEDGER_CHANGE_LOG_SLOTS ||
	    head - c->log_pos > (uint64_t)n_slots + 64) {
		rebuild(c, l, n_slots);
		return;
	}
	/* In batches, as the shapes' sync: a batch's slots first, their
	 * records prefetched, so the misses overlap. */
	const struct node_alloc *recs = ledger_nodes(l);
	uint64_t i = c->log_pos;
	while (i < head) {
		uint32_t batch[SYNC_BATCH], n = 0;
		bool stalled = false;
		for (; i < head && n < SYNC_BATCH; i++) {
			uint32_t slot;
			int got = ledger_change_at(l, i, &slot);
			if (got == 0) {
				stalled = true; /* its writer is between taking and storing it */
				break;
			}
			if (got < 0) {
				rebuild(c, l, n_slots);
				return;
			}
			if (slot >= n_slots)
				continue;
			batch[n++] = slot;
			__builtin_prefetch(&recs[slot]);
		}
		for (uint32_t b = 0; b < n; b++)
			copy_slot(c, &recs[batch[b]], batch[b]);
		c->copies += n;
		if (stalled)
			break;
	}
	c->log_pos = i;
}
