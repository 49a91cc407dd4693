/* A class's index over its statically feasible nodes (workers/engine.c):
 * positions 0..n-1 (the nodes in slot order), each holding whether the
 * node passes the dynamic filters now and, if so, its dynamic score d
 * (NodeResourcesFit + BalancedAllocation and the device scores, weighted)
 * in one of up to CLASS_INDEX_MAX_GROUPS groups (nodes with the same
 * static raw scores).
 *
 * Flat: one 32-bit word per position (0 fails, else its group and d + 1),
 * read in blocks of 64 positions; per block and group the largest
 * word, how many positions hold it and which (as bits: a tie search picks
 * in a block inside its window without reading the block's words), and a
 * bit per passing position;
 * per super-block of 64 blocks the same again, and its passing count. An
 * update sets one word and mends its block's and super-block's maxima in
 * O(1), or re-reads the 64 words (entries) of one block (super-block)
 * when the only holder of its maximum falls: eight 256-bit compares with
 * AVX2. Queries walk super-blocks, then blocks, then the words of at most
 * two blocks at the ends of the range.
 *
 * That answers the sampled scan's questions: where the k-th passing
 * position from a start lies (the end of the window of
 * numFeasibleNodesToFind nodes), the best score per group over a window,
 * and the k-th tied position in window order (the random tie-break), in
 * O(n / 4096 + 64) steps with O(1) per step; an update costs O(1), and
 * 64 words read when a block's last best node changes.
 *
 * AVX2 is used when the CPU has it (checked once, at run time); the
 * scalar code gives the same answers on any x86-64 or other CPU.
 *
 * Single-threaded: one engine's, like everything in it.
 */
#ifndef SHMSCHED_WORKERS_CLASS_INDEX_INTERNAL_H
#define SHMSCHED_WORKERS_CLASS_INDEX_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define CLASS_INDEX_MAX_GROUPS 8
#define CLASS_INDEX_NONE INT32_MIN /* no passing position in the group */
#define CLASS_INDEX_BLOCK 64u      /* positions per block, blocks per super-block */
/* The largest score d: a word holds d + 1 in its low 28 bits, its group
 * in the 3 above. */
#define CLASS_INDEX_D_MAX ((1 << 28) - 2)

struct ci_best {
	int32_t d;     /* best d, or CLASS_INDEX_NONE */
	uint32_t ties; /* positions at it (0 with CLASS_INDEX_NONE) */
};

struct class_index {
	uint32_t n;        /* positions */
	uint32_t blocks;   /* ceil(n / 64), at least 1, rounded up to 64 */
	uint32_t supers;   /* blocks / 64 */
	unsigned groups;   /* 1..CLASS_INDEX_MAX_GROUPS */
	uint32_t total;    /* passing positions */
	uint32_t *val;     /* [blocks * 64]: 0 fails, else the group and d + 1 */
	uint32_t *bmax;    /* [groups][blocks]: the group's largest word in the block */
	uint32_t *bties;   /* [groups][blocks]: positions at bmax (0 when bmax is 0) */
	uint64_t *bmask;   /* [groups][blocks]: those positions, as bits */
	uint32_t *smax;    /* [groups][supers]: the same per super-block */
	uint32_t *sties;   /* [groups][supers] */
	uint64_t *pass;    /* [blocks]: bit i of block b: position 64b + i passes */
	uint32_t *spass;   /* [supers]: passing positions per super-block */
	void *mem;         /* one allocation for all the above */
	size_t bytes;
};

/* Allocates an index of n positions, every one failing. Returns 0 or
 * -ENOMEM; -EINVAL for groups outside 1..CLASS_INDEX_MAX_GROUPS or n past
 * 2^30. */
int class_index_init(struct class_index *x, uint32_t n, unsigned groups);
void class_index_free(struct class_index *x);

/* Bytes it holds (for the class cache's budget). */
size_t class_index_bytes(const struct class_index *x);

/* Sets position p (group g, passing or not, score d in 0..CLASS_INDEX_D_MAX)
 * without its block's and super-block's figures: call class_index_build()
 * after setting positions in bulk. A position belongs to one group: set
 * it failing in its old group before giving it another. */
void class_index_set_leaf(struct class_index *x, uint32_t p, unsigned g,
			  bool pass, int32_t d);
void class_index_build(struct class_index *x);

/* Sets position p and mends the figures above it. */
void class_index_update(struct class_index *x, uint32_t p, unsigned g,
			bool pass, int32_t d);
/* Prefetches what class_index_update(x, p, g, ...) reads first (the
 * position's word, its block's maxima and pass bits), for callers that
 * update many positions and can ask ahead. */
void class_index_prefetch(const struct class_index *x, uint32_t p, unsigned g);
/* Prefetches position p's word alone: its address needs no group. */
static inline void class_index_prefetch_word(const struct class_index *x, uint32_t p)
{
	__builtin_prefetch(&x->val[p]);
}
/* Prefetches what a query from position lo reads first: the words of
 * lo's block, and the pass bits and every group's block maxima from
 * there on for CLASS_INDEX_BLOCK blocks (in lines, a few a group). */
void class_index_prefetch_from(const struct class_index *x, uint32_t lo);

/* Position p's score d in its group g, or CLASS_INDEX_NONE when it fails. */
int32_t class_index_leaf(const struct class_index *x, uint32_t p, unsigned g);

/* Passing positions in all, and in [lo, hi). */
uint32_t class_index_total(const struct class_index *x);
uint32_t class_index_count(const struct class_index *x, uint32_t lo, uint32_t hi);

/* The passing position of rank r (0-based, in position order);
 * r < class_index_total(). */
uint32_t class_index_select(const struct class_index *x, uint32_t r);

/* The passing position of rank r (0-based) among those at or after lo;
 * or UINT32_MAX, with *counted set to the passing positions in [lo, n),
 * when there are no more than r. Walks only as far as it must. */
uint32_t class_index_select_from(const struct class_index *x, uint32_t lo,
				 uint32_t r, uint32_t *counted);

/* The passing positions in [lo, hi) of lo's block (lo < hi), in order,
 * into out[CLASS_INDEX_BLOCK]; returns how many. The next block begins at
 * (lo / CLASS_INDEX_BLOCK + 1) * CLASS_INDEX_BLOCK. */
uint32_t class_index_block_passing(const struct class_index *x, uint32_t lo,
				   uint32_t hi, uint32_t *out);

/* Merges the per-group best over [lo, hi) into out[groups] (which the
 * caller initialises to {CLASS_INDEX_NONE, 0}). */
void class_index_range(const struct class_index *x, uint32_t lo, uint32_t hi,
		       struct ci_best *out);

/* The k-th (0-based, in position order) position in [lo, hi) that passes
 * with d == want[g] for its group g (want[g] == CLASS_INDEX_NONE: no
 * position of group g qualifies). want[g] is at least group g's best over
 * [lo, hi) (a window's best, class_index_range()). Returns it; or
 * UINT32_MAX after lowering *k by the qualifying positions in the range
 * when there are no more than *k. */
uint32_t class_index_find_tie(const struct class_index *x, uint32_t lo,
			      uint32_t hi, const int32_t *want, uint64_t *k);

/* Whether the AVX2 code runs (the CPU has it), and for tests, a switch to
 * the scalar code and back: returns the previous setting. Not to be called
 * while another thread uses an index. */
bool class_index_simd(void);
bool class_index_set_simd(bool on);

#endif
