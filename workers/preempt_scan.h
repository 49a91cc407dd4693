/* Preemption's rows as preempt_select (workers/preempt.h) reads them, and
 * their scan index: which nodes the rows decide a candidate for one class
 * of preemptor (its priority and request), kept as a bitmap per block of
 * 64 nodes with each block's best bound, so that DefaultPreemption's dry
 * run counts a block of candidates that cannot beat the best so far with
 * one popcount instead of deciding each node from the rows.
 *
 * What keeps it exact (labels PI1-PI3 in preempt_scan.c):
 *   PI1  An entry (a node's bits and bound) is made from the node's rows
 *        as they are; whoever writes a node's rows marks it stale
 *        (preempt_scan_touch) before the rows are next read, and a block
 *        is read only after its stale entries are made again.
 *   PI2  Every entry is for one class: the preemptor's priority, its
 *        request of each resource, and the number of nodes. Another
 *        class marks every entry stale.
 *   PI3  A block's bound, the lowest `low` among its candidates and the
 *        latest start among those of that `low`, is made again whenever
 *        any of its entries is: it bounds every candidate's scores in the
 *        block from above (as probe_node's bounds do a node's), so a
 *        block whose bound cannot beat the best so far holds no candidate
 *        that can.
 * Without budgets the choice reads the index best-first (BF1-BF3,
 * workers/preempt.c): preempt_scan_window counts the window's candidates
 * from the bitmaps, then the nodes are worked out highest bound first.
 * Single-threaded: the rows' owner (the evictor, under the producers'
 * lock) touches and reads it; no atomics.
 *
 * Cost: a run over a block whose entries are made is a few word
 * operations and a popcount; an entry made again, one node's rows read
 * (as rows_run's loop reads them) and its block's bound over its
 * candidates (up to 64 loads).
 */
#ifndef SHMSCHED_WORKERS_PREEMPT_SCAN_H
#define SHMSCHED_WORKERS_PREEMPT_SCAN_H

#include <stdbool.h>
#include <stdint.h>

#include "shm/shm.h"

#define PREEMPT_MAX_VICTIMS 256 /* pods a node may lose for one preemptor */

/* Nodes whose rows a refresh makes current at once (preempt_rows). */
#define PREEMPT_ROWS_CHUNK 64

/* The scan index over the rows (see above). Zeroed: no room (NULL
 * arrays), not used. */
struct preempt_scan {
	uint32_t cap;       /* nodes it has room for */
	uint64_t *stale;    /* [blocks] PI1: bit i, node 64 b + i's entry to make */
	/* [blocks]: bit i, node 64 b + i is a candidate the rows decide
	 * (cand); one to be looked at by the probe (probe: not bare, or pods
	 * in two bands at or above the preemptor); a candidate with more
	 * possible victims than PREEMPT_MAX_VICTIMS (big: worked out). */
	uint64_t *cand, *probe, *big;
	int32_t *top_low;   /* [blocks] PI3: INT32_MAX where no candidate */
	int64_t *top_late;  /* [blocks] */
	int32_t *low;       /* [cap]: a candidate's lowest priority */
	int64_t *late;      /* [cap]: the latest start of its possible victims */
	/* PI2: the class the entries are for (set: any). */
	bool set;
	int32_t prio;
	uint32_t n_nodes;
	int64_t q[RES_MAX]; /* the request, 0 where not asked for (and pods) */
	unsigned nq;        /* the resources asked for, */
	uint8_t r[RES_MAX]; /* in index order */
	/* BF1: the window preempt_scan_window counted, in visit order: a
	 * block and the bits of its candidates in the window, [blocks + 1]
	 * (the start's block may come twice, its two ends). */
	uint32_t *seg_b;
	uint64_t *seg_m;
	uint64_t made, whole; /* figures: entries made, blocks passed whole */
	uint64_t best_first;  /* figures: choices made best-first (BF1) */
};

/* Returns 0, or -ENOMEM (s zeroed). Every entry stale. */
int preempt_scan_init(struct preempt_scan *s, uint32_t nodes);
void preempt_scan_free(struct preempt_scan *s);

/* PI1: node j's rows changed (or may have). Nodes past cap: ignored. */
static inline void preempt_scan_touch(struct preempt_scan *s, uint32_t j)
{
	if (j < s->cap)
		s->stale[j / 64] |= UINT64_C(1) << (j % 64);
}

/* PI1 for every node. */
void preempt_scan_touch_all(struct preempt_scan *s);

/* Per node (index j of nodes[], each array [n_nodes]), structure of
 * arrays: what every pod on it sums up to, whatever the preemptor (its
 * pods of any priority: the caller's summary of its chain), and its room.
 * A node whose pods are all below the preemptor and whose static filters
 * pass at once (fast_high[j] < priority) is decided from these alone, as
 * probe_node decides from a probe's summary; so is one whose pods below
 * their highest priority are (fast_high2[j] < priority), from the second
 * summary; any other with a pod below the preemptor (low[j] < priority)
 * goes to the probe. */
struct preempt_rows {
	/* Makes the rows of nodes [first, first + n) current: called before
	 * they are read, n at most PREEMPT_ROWS_CHUNK, never across the
	 * end of nodes[]. NULL: they are. */
	void (*refresh)(void *arg, uint32_t first, uint32_t n);
	void *refresh_arg;
	const uint32_t *n;    /* pods summed */
	const int32_t *low;   /* their lowest priority (INT32_MAX: no pod) */
	/* Their highest priority where the preemptor's static filters pass
	 * the node at once (bare); INT32_MAX where they may not. */
	const int32_t *fast_high;
	const uint64_t *late; /* their latest start */
	/* [r][j], read for RES_PODS and the resources the preemptor asks
	 * for only: allocatable less used now (room), and that plus the
	 * pods' requests summed (then: the room with every pod gone; for
	 * RES_PODS, room plus n). */
	const int64_t *room[RES_MAX], *then[RES_MAX];
	/* The same of its pods below their highest priority only (the top
	 * band left out): read where fast_high[j] is at or above the
	 * preemptor and fast_high2[j] (their highest where bare, else
	 * INT32_MAX) below it: the possible victims are those pods then. */
	const uint32_t *n2;
	const int32_t *fast_high2;
	const uint64_t *late2;
	const int64_t *then2[RES_MAX];
	/* The scan index over these rows (NULL: none, or one with too
	 * little room: the loop decides each node). Whoever writes a row
	 * (the refresh too) touches it there first (PI1). */
	struct preempt_scan *scan;
};

/* Where a run over the rows stopped: at the end of what it was given
 * (or once enough candidates were counted), before a node to be worked
 * out pod by pod, or before one the probe must look at. */
enum preempt_run_stop { PREEMPT_RUN_BOUNDARY, PREEMPT_RUN_EXACT, PREEMPT_RUN_PROBE };

/* PI2: the scan made ready for a preemptor of `prio` asking for `req`
 * over `n_nodes` nodes. Returns false when it has too little room (not
 * to be used then). */
bool preempt_scan_begin(struct preempt_scan *s, uint32_t n_nodes, int32_t prio,
			const struct res_vec *req);

/* preempt_select's run over the rows (workers/preempt.c, rows_run: the
 * same nodes passed, candidates counted and stop) from node j, below
 * `end` and at most `steps` nodes, with the index: nodes [j, end) have
 * had their rows refreshed. `best`: the best candidate's scores so far,
 * which has no violation (NULL: none yet); `want`: preempt_input.want.
 * Returns the nodes passed. */
uint32_t preempt_scan_run(struct preempt_scan *s, const struct preempt_rows *rw,
			  uint32_t j, uint32_t end, uint32_t steps, const int64_t *best,
			  uint32_t want, uint32_t *candidates, uint32_t *clean,
			  enum preempt_run_stop *stop);

/* BF1: DryRunPreemption's window without working out a node: from node
 * `start` (cyclically) the nodes up to the `want`-th candidate the rows
 * decide (0: every node), each block's rows refreshed (rw->refresh) and
 * its entries made first, as preempt_scan_run reads them. Its candidates
 * go to s->seg_b and s->seg_m in visit order, their count to
 * *candidates. For a choice without budgets only: every candidate is one
 * without a violation, so the window ends at the want-th. Returns the
 * segments, or -1 where a node the probe must look at, or one with too
 * many possible victims, lies in the window before its end (only a run
 * node by node decides it then). The cost: per block of the window, its
 * refresh, its stale entries made, a few word operations and a popcount. */
int preempt_scan_window(struct preempt_scan *s, const struct preempt_rows *rw,
			uint32_t start, uint32_t want, uint32_t *candidates);

#endif
