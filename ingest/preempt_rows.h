/* Preemption's rows: per node slot, what the pods on it sum up to (how
 * many, their lowest and highest priority, their latest start, their
 * requests per resource), its used counters and whether any static
 * filter can refuse it, and its room for a pod now and with its pods
 * gone, kept in dense arrays (structure of arrays) by the
 * evictor between requests, so that DefaultPreemption's dry run
 * (workers/preempt.c, preempt_select with preempt_input.rows) decides
 * most nodes in a loop over the arrays: no call, no record, no ledger
 * record read.
 *
 * What keeps each part exact (labels PK1-PK5 in preempt_rows.c):
 *   PK1  A slot's summary is keyed by its chain's head and unlink count
 *        (shm/placements.h, PN3) and the node's generation; a refresh
 *        compares the keys (of a chunk's dirty slots, PK4) from three
 *        dense arrays and sums again only the chains whose key moved.
 *   PK2  The used counters are copied from the ledger's change log
 *        (shm/ledger.h, L1-L4) once a request: the slots logged since,
 *        re-read; all of them when the log has gone past the reader, the
 *        slots grew or the snapshot is another (a node added or removed
 *        resets its counters without a log entry).
 *   PK3  bare[slot]: the slot holds a node without taints or the
 *        unschedulable mark (preempt_plain_pass passes it for a plain
 *        preemptor), made again for each new snapshot.
 *   PK4  A slot's key is compared only while the slot is dirty: marked
 *        when the log names it (all of them at PK2's rebuild), cleared
 *        once its summary counts as many pods as its copied counter.
 *        Every change to a chain comes with a log entry for its slot: a
 *        publish after its reserve's (or the swap's), a free with its
 *        release's, both under the lock the evictor holds, so a publish
 *        still to come leaves the slot's counter ahead of its summary,
 *        and the slot dirty, until it lands. A slot whose counter never
 *        matches (pods counted without a record) stays dirty: compared
 *        every time, as before PK4. The tests' check compares every key
 *        and counts one that moved while clean.
 *   PK5  Each summary is kept twice: of every pod on the node, and of its
 *        pods below their highest priority (a preemptor of that
 *        priority, placed by an earlier preemption, is the top band):
 *        a preemptor above the second's highest and at or below the
 *        first's reads the second. Both are summed from the chain at
 *        once (PK1), so they share its key.
 * The one holding the producers' lock only (the evictor): frees are held
 * off (PN2), so a chain it reads stays; publishes may land meanwhile and
 * are seen by the next key, as the counters are by the next log entry:
 * a view, which ledger_swap's own check makes safe (-EAGAIN).
 *
 * Cost: a request reads the log entries since the last one (a few
 * slots each); a refresh, one bitmap word per 64 slots, then the keys
 * of the dirty slots, and a chain's records only where they changed.
 * Memory: ~830 bytes a slot (six columns of 16 resources), ~4 MiB for
 * 5,000 nodes.
 */
#ifndef SHMSCHED_INGEST_PREEMPT_ROWS_H
#define SHMSCHED_INGEST_PREEMPT_ROWS_H

#include <stdbool.h>
#include <stdint.h>

#include "shm/shm.h"
#include "workers/workers.h"

struct prows {
	const struct placements *of; /* the table summed (NULL: none yet) */
	uint32_t cap;                /* slots allocated */
	uint32_t n_slots;            /* the snapshot's, when last prepared */
	uint64_t snap_gen;           /* its generation (0: none) */
	uint64_t log_pos;            /* PK2: the next log entry to read */
	/* PK1: the keys (valid 0: never summed) and the sums. */
	uint32_t *head, *unlinks, *gen;
	uint8_t *valid;
	uint32_t *n;
	int32_t *low, *high;
	uint64_t *late;
	int64_t *freed[RES_MAX];
	int64_t *used[RES_MAX];      /* PK2 */
	uint8_t *bare;               /* PK3 */
	uint64_t *dirty;             /* PK4: bit s, slot s's key to compare */
	/* What preempt_select reads (struct preempt_rows), made with the
	 * parts they come of: high where bare, else INT32_MAX; allocatable
	 * less used; that plus freed (pods: plus n). */
	int32_t *fast_high;
	int64_t *room[RES_MAX], *then[RES_MAX];
	/* PK5: the same of the pods below the highest priority (the top
	 * band): how many, the highest of them (INT32_MIN: none), the
	 * latest start, their requests, the room with them gone, and
	 * high2 where bare, else INT32_MAX. */
	uint32_t *n2;
	int32_t *high2, *fast_high2;
	uint64_t *late2;
	int64_t *freed2[RES_MAX], *then2[RES_MAX];
	const struct snapshot *snap; /* the one prepared for (its allocatable) */
	/* The scan index over these rows (workers/preempt_scan.h): each
	 * slot whose rows are written touched (PI1). */
	struct preempt_scan scan;
	uint64_t sums, copies;       /* chains summed, counters copied: figures */
};

void prows_init(struct prows *r);
void prows_free(struct prows *r);

/* Before a request: room for the snapshot's slots (every summary made
 * afresh when the table is another), PK3's marks for this snapshot, PK2's
 * counters up to date. Returns 0 or -ENOMEM (the rows unusable: r->of
 * NULL then). */
int prows_prepare(struct prows *r, const struct placements *t, struct ledger *l,
		  const struct snapshot *snap);

/* PK1: slots [first, first + n) (below the prepared n_slots) made
 * current. With `check`, a summary kept is also compared with its chain
 * summed afresh, and the counters copied with the ledger's: each
 * difference adds one to *mismatches. */
void prows_refresh(struct prows *r, const struct placements *t, struct ledger *l,
		   uint32_t first, uint32_t n, bool check, uint64_t *mismatches);

/* The view preempt_select reads. */
void prows_view(struct prows *r, struct preempt_rows *out);

#endif
