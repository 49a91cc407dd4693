/* A worker's own copy of the used counters the fast leaf reads (pods, cpu,
 * memory and the two counters with stand-ins), one column per counter,
 * for workers/leaf_scan.c's scans and diagnoses.
 *
 * Why a copy: the ledger keeps each node's counters in a 1.5 KiB record
 * (shm/ledger.h), so a scan that reads a few thousand nodes touches a
 * cache line, and nearly a page, per node; at 100,000 nodes the records
 * span 150 MiB and the scan waited on the TLB and memory (README, "Engine
 * v2"). The columns hold 40 bytes a node, in slot order, so a scan reads
 * them as streams, four adjacent nodes in one load.
 *
 * Exactness: the columns follow the ledger's change log (L1-L4), which
 * names every slot whose counters moved after they moved, and the
 * engine's snapshots, whose changed slots (a node added or removed, whose
 * record is reset without a log entry: R1) it copies again. A sync reads
 * the log's head, then copies each slot logged since from its record, so
 * the copy is at least as new as the log's head: the same view a scan
 * reading the records then would have had, and as the class indexes and
 * shapes have. The commit decides, as before.
 *
 * Single-threaded: one engine's, like everything in it.
 */
#ifndef SHMSCHED_WORKERS_NODE_COLUMNS_INTERNAL_H
#define SHMSCHED_WORKERS_NODE_COLUMNS_INTERNAL_H

#include <stdint.h>

#include "shm/shm.h"

struct node_columns {
	int64_t *pods, *cpu, *mem;    /* used[RES_PODS], [RES_CPU], [RES_MEMORY] */
	int64_t *nz_cpu, *nz_mem;     /* used_nonzero_cpu_milli, _mem_bytes */
	uint32_t capacity;            /* slots each column holds */
	uint32_t n_slots;             /* slots copied: [0, n_slots) are current */
	uint64_t log_pos;             /* the change log, applied up to here */
	uint64_t rebuilds, copies;    /* whole copies, and slots copied by the log */
};

/* Columns for `capacity` slots, none copied yet. Returns 0 or -ENOMEM. */
int node_columns_init(struct node_columns *c, uint32_t capacity);
void node_columns_free(struct node_columns *c);

/* Brings slots [0, n_slots) up to the ledger: a whole copy the first time,
 * when n_slots grew, after node_columns_forget() or when the log has
 * overwritten what was not read; else the slots logged since the last
 * sync. Stops before a log entry whose writer has not stored it yet (the
 * next sync reads it). n_slots is at most the capacity. */
void node_columns_sync(struct node_columns *c, struct ledger *l, uint32_t n_slots);

/* One slot copied again from its record: a node event changed it. */
void node_columns_copy(struct node_columns *c, struct ledger *l, uint32_t slot);

/* The next sync copies every slot (a new snapshot whose slots moved). */
void node_columns_forget(struct node_columns *c);

#endif
