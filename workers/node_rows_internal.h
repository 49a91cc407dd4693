/* A worker's own copy of what the fast leaf reads of each node: its used
 * pods, cpu and memory, the two counters with stand-ins, and its
 * allocatable pods, cpu and memory, in one 64-byte row per slot, for
 * workers/leaf_scan.c's scans and diagnoses.
 *
 * Why a copy: the ledger keeps each node's counters in a 1.5 KiB record
 * (shm/ledger.h) and the snapshot its allocatables in three more columns,
 * so a scan read four cache lines a node, one of them nearly a page away
 * from the last; at 100,000 nodes the records span 150 MiB and the scan
 * waited on memory (docs/perf/2026-11-history-engine-v2.md). A row is one cache line, and a
 * scan reads a field pair of four rows, adjacent or not, by four 16-byte
 * loads (workers/leaf_scan.c).
 *
 * Exactness: the rows follow the ledger's change log (L1-L4), which names
 * every slot whose counters moved after they moved, and the engine's
 * snapshots, whose changed slots (a node added, removed or updated; an
 * added node's record is reset without a log entry, R1) it copies again.
 * A sync reads the log's head, then copies each slot logged since from
 * its record, so the copy is at least as new as the log's head: the view
 * a scan reading the records then would have had, and the class indexes'
 * and shapes' view. The commit decides, as before.
 *
 * Single-threaded: one engine's, like everything in it.
 */
#ifndef SHMSCHED_WORKERS_NODE_ROWS_INTERNAL_H
#define SHMSCHED_WORKERS_NODE_ROWS_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>

#include "shm/shm.h"

/* In pairs (used, allocatable), so one 16-byte load reads both; one
 * cache line (the _Alignas on its own member: on a list of declarators
 * it aligns each). */
struct node_row {
	_Alignas(64) int64_t pods;
	int64_t alloc_pods;
	int64_t cpu, alloc_cpu;
	int64_t mem, alloc_mem;
	int64_t nz_cpu, nz_mem; /* used_nonzero_cpu_milli, _mem_bytes */
};
_Static_assert(sizeof(struct node_row) == 64, "a row is one cache line");

/* The snapshot's allocatable columns, by slot. */
struct node_allocatable {
	const int64_t *cpu, *mem, *pods;
};

struct node_rows {
	struct node_row *row;      /* [capacity] */
	uint32_t capacity;
	uint32_t n_slots;          /* rows copied: [0, n_slots) are current */
	uint64_t log_pos;          /* the change log, applied up to here */
	uint64_t rebuilds, copies; /* whole copies, and slots copied by the log */
	/* A whole copy made a part at a time (node_rows_warm), while
	 * n_slots is not yet current: rows [0, built) of build_target are
	 * copied, each at least as new as the log's head was at build_pos. */
	uint32_t built, build_target;
	uint64_t build_pos;
};

/* Rows for `capacity` slots, none copied yet. Returns 0 or -ENOMEM. */
int node_rows_init(struct node_rows *r, uint32_t capacity);
void node_rows_free(struct node_rows *r);

/* Brings rows [0, n_slots) up to the ledger and the allocatables `a`: a
 * whole copy the first time, when n_slots changed, after
 * node_rows_forget() or when the log has overwritten what was not read;
 * else the counters of the slots logged since the last sync. Stops before
 * a log entry whose writer has not stored it yet (the next sync reads
 * it). n_slots is at most the capacity. */
void node_rows_sync(struct node_rows *r, struct ledger *l,
		    const struct node_allocatable *a, uint32_t n_slots);

/* One row copied again, counters and allocatables: a node event changed
 * its slot. */
void node_rows_copy(struct node_rows *r, struct ledger *l,
		    const struct node_allocatable *a, uint32_t slot);

/* The next sync copies every row (a new snapshot whose slots moved). */
void node_rows_forget(struct node_rows *r);

/* Part of the whole copy a sync would make, at most `max_rows` rows a
 * call, so that an idle worker makes it and a pod's scan does not (the
 * first scan of a fresh worker took 156 page faults and 10,000 cold
 * records at 10,000 nodes, 0.6 ms on the VM). A sync finishes a copy
 * begun here. Returns whether rows [0, n_slots) are current. */
bool node_rows_warm(struct node_rows *r, struct ledger *l,
		    const struct node_allocatable *a, uint32_t n_slots,
		    uint32_t max_rows);

#endif
