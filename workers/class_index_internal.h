/* A class's index over its statically feasible nodes (workers/engine.c):
 * a segment tree over positions 0..n-1 (the nodes in slot order) whose
 * leaves say whether the node passes the dynamic filters now and, if so,
 * its dynamic score d (NodeResourcesFit + BalancedAllocation, weighted) in
 * one of up to CLASS_INDEX_MAX_GROUPS groups (nodes with the same static
 * raw scores). Each tree node keeps the count of passing leaves under it
 * and, per group, the best d and how many leaves tie at it.
 *
 * That answers the sampled scan's questions in O(groups * log n): where
 * the k-th passing node from a start lies (the end of the window of
 * numFeasibleNodesToFind nodes), the best score per group over a window,
 * and the k-th tied node in window order (the random tie-break). A node
 * whose counters change costs one leaf update, O(groups * log n).
 *
 * Single-threaded: one engine's, like everything in it.
 */
#ifndef SHMSCHED_WORKERS_CLASS_INDEX_INTERNAL_H
#define SHMSCHED_WORKERS_CLASS_INDEX_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define CLASS_INDEX_MAX_GROUPS 8
#define CLASS_INDEX_NONE INT32_MIN /* no passing leaf in the group */

struct ci_best {
	int32_t d;     /* best d, or CLASS_INDEX_NONE */
	uint32_t ties; /* leaves at it (0 with CLASS_INDEX_NONE) */
};

/* A tree node: its passing leaves, then its best per group, in one run of
 * 1 + 2 * groups words, so a node and its sibling share cache lines. */
struct ci_node {
	uint32_t count;
	struct ci_best best[];
};

struct class_index {
	uint32_t n;        /* positions */
	uint32_t size;     /* leaves: a power of two >= n, >= 1 */
	unsigned groups;   /* 1..CLASS_INDEX_MAX_GROUPS */
	size_t stride;     /* words per node */
	uint32_t *nodes;   /* [2 * size * stride] */
};

/* Allocates an index of n positions, every leaf failing. Returns 0 or
 * -ENOMEM; -EINVAL for groups outside 1..CLASS_INDEX_MAX_GROUPS. */
int class_index_init(struct class_index *x, uint32_t n, unsigned groups);
void class_index_free(struct class_index *x);

/* Bytes it holds (for the class cache's budget). */
size_t class_index_bytes(const struct class_index *x);

/* Sets leaf p (group g, passing or not, score d >= 0) without touching its
 * ancestors: call class_index_build() after setting leaves in bulk. */
void class_index_set_leaf(struct class_index *x, uint32_t p, unsigned g,
			  bool pass, int32_t d);
void class_index_build(struct class_index *x);

/* Sets leaf p and updates its ancestors. */
void class_index_update(struct class_index *x, uint32_t p, unsigned g,
			bool pass, int32_t d);

/* Leaf p's score d in its group g, or CLASS_INDEX_NONE when it fails. */
int32_t class_index_leaf(const struct class_index *x, uint32_t p, unsigned g);

/* Passing leaves in all, and in [lo, hi). */
uint32_t class_index_total(const struct class_index *x);
uint32_t class_index_count(const struct class_index *x, uint32_t lo, uint32_t hi);

/* The position of the passing leaf of rank r (0-based, in position order);
 * r < class_index_total(). */
uint32_t class_index_select(const struct class_index *x, uint32_t r);

/* Merges the per-group best over [lo, hi) into out[groups] (which the
 * caller initialises to {CLASS_INDEX_NONE, 0}). */
void class_index_range(const struct class_index *x, uint32_t lo, uint32_t hi,
		       struct ci_best *out);

/* The k-th (0-based, in position order) leaf in [lo, hi) that passes with
 * d == want[g] for its group g (want[g] == CLASS_INDEX_NONE: no leaf of
 * group g qualifies). Returns its position; or UINT32_MAX after lowering
 * *k by the qualifying leaves in the range when there are no more than *k. */
uint32_t class_index_find_tie(const struct class_index *x, uint32_t lo,
			      uint32_t hi, const int32_t *want, uint64_t *k);

#endif
