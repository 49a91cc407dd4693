/* A scan's plain candidates, chosen among: the best dynamic score and its
 * ties, over all of them or by their nodes' TaintToleration raw count, the
 * totals of the general way (raw affinity and taint scores normalised),
 * and the k-th tie in visiting order (workers/engine.c's select_flat(),
 * select_by_taint(), select_plain() and pick_tie()). Four candidates a
 * step with AVX2 where the CPU has it (base/simd.h), else the scalar
 * loops; both give the same answers. At 100,000 nodes a unique pod's scan
 * finds 5,000 candidates, and choosing among them one at a time took a
 * fifth of its time.
 *
 * Candidate i has its score in d[i] and its slot in slots[i]; tr is a
 * class's raw taint counts, by slot.
 */
#ifndef SHMSCHED_WORKERS_CANDIDATES_INTERNAL_H
#define SHMSCHED_WORKERS_CANDIDATES_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>

#include "shm/shm.h"
#include "workers/plugins.h"

/* The largest d[i] over i < n and how many equal it (INT64_MIN and 0
 * when n is 0). */
void candidates_best(const int64_t *d, uint32_t n, int64_t *best, uint64_t *ties);

/* The i of the k-th (from 0) d[i] equal to best, in order; n when there
 * are not k + 1. */
uint32_t candidates_kth(const int64_t *d, uint32_t n, int64_t best, uint64_t k);

/* The best d[i] and its ties by raw count t = tr[slots[i]]: ties_at[t] 0
 * where no candidate has count t; max_t the largest count seen. */
struct by_taint {
	int64_t best_at[NODE_MAX_TAINTS + 1];
	uint64_t ties_at[NODE_MAX_TAINTS + 1];
	int32_t max_t;
};

/* Fills *b; false when a count is outside [0, NODE_MAX_TAINTS] (b is then
 * not to be read). */
bool candidates_by_taint(const int64_t *d, const uint32_t *slots, const int32_t *tr,
			 uint32_t n, struct by_taint *b);

/* The i of the k-th (from 0) candidate, in order, with
 * d[i] + add[tr[slots[i]]] == best; n when there are not k + 1. Every
 * count must be in [0, NODE_MAX_TAINTS] (candidates_by_taint() said so). */
uint32_t candidates_kth_by_taint(const int64_t *d, const uint32_t *slots, const int32_t *tr,
				 uint32_t n, const int64_t add[NODE_MAX_TAINTS + 1],
				 int64_t best, uint64_t k);

/* TaintToleration's normalised score of a raw count (untolerated
 * PreferNoSchedule taints) against the largest over the candidates:
 * score_normalize() reversed, one value at a time; a count of 0 scores
 * the maximum without a division (most nodes). */
static inline int64_t taint_normalized(int64_t raw, int64_t max_raw)
{
	return raw == 0 || max_raw == 0 ? MAX_NODE_SCORE
					: MAX_NODE_SCORE - MAX_NODE_SCORE * raw / max_raw;
}

/* The raw static scores of select_plain()'s general way: NodeAffinity's
 * (ar, or none) and TaintToleration's (tr, or none) by slot, whether each
 * is normalised (aff, taint), and their profile weights. */
struct raw_scores {
	const int32_t *ar, *tr;
	bool aff, taint;
	int64_t w_aff, w_taint;
};

/* Each candidate's total over d[i]: d[i] plus SCORE_FINE times the
 * weighted scores of r, normalised over the candidates as score_normalize
 * does (affinity by its largest, taint reversed); the best total and how
 * many equal it in *best and *ties. */
void candidates_totals(int64_t *d, const uint32_t *slots, uint32_t n,
		       const struct raw_scores *r, int64_t *best, uint64_t *ties);

/* Whether the AVX2 forms run; tests turn them off to compare the twins.
 * candidates_set_simd() returns whether they were on. */
bool candidates_simd(void);
bool candidates_set_simd(bool on);

#endif
