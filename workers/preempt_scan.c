/* The rows' scan index: see preempt_scan.h (PI1-PI3). A block of 64
 * nodes holds three bitmaps (candidates, nodes for the probe, candidates
 * too big to pass) and its bound; a run over a block whose bound cannot
 * beat the best so far counts its candidates with a popcount, and stops
 * at the first node for the probe or too big; over a block that might,
 * it walks its candidates' bits only, each compared with the best from
 * the entry's two words. The entries are made again only where touched
 * (PI1), so in the steady state a request makes the few nodes the last
 * one changed, not the ~500 it counts.
 *
 * Decisions are rows_run's (workers/preempt.c) node by node: unit.preempt
 * compares the choice with and without the index on its random cases
 * and on random changes between requests. */
#include "workers/preempt_scan.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static uint32_t blocks_of(uint32_t nodes)
{
	return (nodes + 63) / 64;
}

int preempt_scan_init(struct preempt_scan *s, uint32_t nodes)
{
	memset(s, 0, sizeof(*s));
	size_t b = blocks_of(nodes) ? blocks_of(nodes) : 1, n = nodes ? nodes : 1;
	s->stale = calloc(b, sizeof(uint64_t));
	s->cand = calloc(b, sizeof(uint64_t));
	s->probe = calloc(b, sizeof(uint64_t));
	s->big = calloc(b, sizeof(uint64_t));
	s->top_low = calloc(b, sizeof(int32_t));
	s->top_late = calloc(b, sizeof(int64_t));
	s->low = calloc(n, sizeof(int32_t));
	s->late = calloc(n, sizeof(int64_t));
	s->seg_b = calloc(b + 1, sizeof(uint32_t));
	s->seg_m = calloc(b + 1, sizeof(uint64_t));
	if (!s->stale || !s->cand || !s->probe || !s->big || !s->top_low ||
	    !s->top_late || !s->low || !s->late || !s->seg_b || !s->seg_m) {
		preempt_scan_free(s);
		return -ENOMEM;
	}
	s->cap = nodes;
	preempt_scan_touch_all(s);
	return 0;
}

void preempt_scan_free(struct preempt_scan *s)
{
	free(s->stale);
	free(s->cand);
	free(s->probe);
	free(s->big);
	free(s->top_low);
	free(s->top_late);
	free(s->low);
	free(s->late);
	free(s->seg_b);
	free(s->seg_m);
	memset(s, 0, sizeof(*s));
}

void preempt_scan_touch_all(struct preempt_scan *s)
{
	if (s->stale != NULL)
		memset(s->stale, 0xff, blocks_of(s->cap) * sizeof(uint64_t));
}

bool preempt_scan_begin(struct preempt_scan *s, uint32_t n_nodes, int32_t prio,
			const struct res_vec *req)
{
	if (s->stale == NULL || n_nodes > s->cap)
		return false;
	int64_t q[RES_MAX];
	for (unsigned r = 0; r < RES_MAX; r++)
		q[r] = r != RES_PODS && req->v[r] > 0 ? req->v[r] : 0;
	if (s->set && s->prio == prio && s->n_nodes == n_nodes &&
	    memcmp(q, s->q, sizeof(q)) == 0)
		return true;
	/* PI2: another class; bits past n_nodes stay 0 (never made). */
	size_t b = blocks_of(s->cap) * sizeof(uint64_t);
	memset(s->cand, 0, b);
	memset(s->probe, 0, b);
	memset(s->big, 0, b);
	preempt_scan_touch_all(s);
	s->set = true;
	s->prio = prio;
	s->n_nodes = n_nodes;
	memcpy(s->q, q, sizeof(q));
	s->nq = 0;
	for (unsigned r = 0; r < RES_MAX; r++)
		if (q[r] > 0)
			s->r[s->nq++] = (uint8_t)r;
	return true;
}

/* PI1: node j's entry (bit `bit` of block b) from its rows, as rows_run
 * decides it: no possible victim, the probe's, no candidate (it does not
 * fit with its possible victims gone, or fits now), too big, or a
 * candidate with its bound. */
static void entry_make(struct preempt_scan *s, const struct preempt_rows *rw,
		       uint32_t j, uint32_t b, uint64_t bit)
{
	s->cand[b] &= ~bit;
	s->probe[b] &= ~bit;
	s->big[b] &= ~bit;
	s->made++;
	if (rw->low[j] >= s->prio)
		return;
	bool sub = rw->fast_high[j] >= s->prio;
	if (sub && rw->fast_high2[j] >= s->prio) {
		s->probe[b] |= bit;
		return;
	}
	const int64_t *const *then = sub ? rw->then2 : rw->then;
	bool fits_then = then[RES_PODS][j] >= 1;
	bool fits_now = rw->room[RES_PODS][j] >= 1;
	for (unsigned i = 0; i < s->nq; i++) {
		unsigned r = s->r[i];
		fits_then = fits_then && s->q[r] <= then[r][j];
		fits_now = fits_now && s->q[r] <= rw->room[r][j];
	}
	if (!fits_then || fits_now)
		return;
	if ((sub ? rw->n2 : rw->n)[j] > PREEMPT_MAX_VICTIMS) {
		s->big[b] |= bit;
		return;
	}
	s->cand[b] |= bit;
	uint64_t lt = (sub ? rw->late2 : rw->late)[j];
	s->low[j] = rw->low[j];
	s->late[j] = lt > (uint64_t)INT64_MAX ? INT64_MAX : (int64_t)lt;
}

/* Block b's stale entries made (PI1), then its bound (PI3). */
static void block_make(struct preempt_scan *s, const struct preempt_rows *rw, uint32_t b)
{
	uint64_t st = s->stale[b];
	if (st == 0)
		return;
	uint32_t base = b * 64;
	uint32_t cnt = s->n_nodes - base < 64 ? s->n_nodes - base : 64;
	if (cnt < 64)
		st &= (UINT64_C(1) << cnt) - 1;
	for (uint64_t m = st; m != 0; m &= m - 1)
		entry_make(s, rw, base + (uint32_t)__builtin_ctzll(m), b, m & -m);
	s->stale[b] = 0;
	/* Two passes without a branch a candidate: the lowest low, then
	 * the latest start among those of it. */
	int32_t tl = INT32_MAX;
	int64_t tt = INT64_MIN;
	for (uint64_t m = s->cand[b]; m != 0; m &= m - 1) {
		int32_t low = s->low[base + (uint32_t)__builtin_ctzll(m)];
		tl = low < tl ? low : tl;
	}
	for (uint64_t m = s->cand[b]; m != 0; m &= m - 1) {
		uint32_t j = base + (uint32_t)__builtin_ctzll(m);
		int64_t late = s->low[j] == tl ? s->late[j] : INT64_MIN;
		tt = late > tt ? late : tt;
	}
	s->top_low[b] = tl;
	s->top_late[b] = tt;
}

/* The best so far, as rows_run compares a node's bound with it. */
struct against {
	int32_t top;  /* the best's highest victim priority */
	int tie;      /* where a node's low is top: 1 it might beat the
		       * best, 0 it cannot, -1 its latest start decides */
	int64_t late; /* the best's earliest start among its top victims */
};

static bool beats(const struct against *a, int32_t low, int64_t late)
{
	if (low != a->top)
		return low < a->top;
	if (a->tie >= 0)
		return a->tie;
	return late > a->late;
}

/* Bits below `at` of a word, at <= 64. */
static uint64_t below(uint32_t at)
{
	return at == 64 ? ~UINT64_C(0) : (UINT64_C(1) << at) - 1;
}

uint32_t preempt_scan_run(struct preempt_scan *s, const struct preempt_rows *rw,
			  uint32_t j, uint32_t end, uint32_t steps, const int64_t *best,
			  uint32_t want, uint32_t *candidates, uint32_t *clean,
			  enum preempt_run_stop *stop)
{
	uint32_t first = j, cands = *candidates, cl = *clean;
	*stop = PREEMPT_RUN_BOUNDARY;
	if (want != 0 && cl > 0 && cands >= want)
		return 0;
	if (end - j > steps)
		end = j + steps;
	/* rows_run's bounds against the best (scores of preempt.c's
	 * score(), higher better): -best[1] its highest victim's priority;
	 * where a node's low equals it, the next two bounds are constants. */
	struct against a = {0};
	if (best != NULL) {
		a.top = (int32_t)-best[1];
		int64_t s2 = -((int64_t)a.top + INT64_C(2147483648));
		a.tie = s2 != best[2] ? s2 > best[2] : -1 != best[3] ? -1 > best[3] : -1;
		a.late = best[4];
	}
	while (j < end) {
		uint32_t b = j / 64, base = b * 64;
		uint32_t hi = end - base < 64 ? end - base : 64;
		block_make(s, rw, b);
		uint64_t mask = below(hi) & ~below(j - base);
		uint32_t at = hi; /* where this block's part stops */
		enum preempt_run_stop why = PREEMPT_RUN_BOUNDARY;
		uint64_t halt = (s->probe[b] | s->big[b]) & mask;
		if (halt != 0) {
			at = (uint32_t)__builtin_ctzll(halt);
			why = s->probe[b] >> at & 1 ? PREEMPT_RUN_PROBE : PREEMPT_RUN_EXACT;
		}
		uint64_t cm = s->cand[b] & mask & below(at);
		/* PI3: only a block whose bound beats the best has a
		 * candidate to be worked out: the first such ends the part. */
		if (cm != 0 && (best == NULL || beats(&a, s->top_low[b], s->top_late[b]))) {
			for (uint64_t m = cm; m != 0; m &= m - 1) {
				uint32_t p = (uint32_t)__builtin_ctzll(m);
				if (best == NULL || beats(&a, s->low[base + p], s->late[base + p])) {
					at = p;
					why = PREEMPT_RUN_EXACT;
					cm &= below(p);
					break;
				}
			}
		} else if (cm != 0) {
			s->whole++;
		}
		uint32_t c = (uint32_t)__builtin_popcountll(cm);
		if (want != 0 && c > 0 && cands + c >= want) {
			/* The want-th candidate (at least the next one) counted,
			 * the node after it not looked at. */
			uint32_t k = cands < want ? want - cands : 1;
			for (uint32_t i = 1; i < k; i++)
				cm &= cm - 1;
			cands += k;
			cl += k;
			j = base + (uint32_t)__builtin_ctzll(cm) + 1;
			break;
		}
		cands += c;
		cl += c; /* passed over: best has no violation (PB1) */
		j = base + at;
		if (why != PREEMPT_RUN_BOUNDARY) {
			*stop = why;
			break;
		}
	}
	*candidates = cands;
	*clean = cl;
	return j - first;
}

int preempt_scan_window(struct preempt_scan *s, const struct preempt_rows *rw,
			uint32_t start, uint32_t want, uint32_t *candidates)
{
	uint32_t n_nodes = s->n_nodes, left = n_nodes, cands = 0;
	uint32_t j = n_nodes ? start % n_nodes : 0;
	int n = 0;
	*candidates = 0;
	while (left > 0) {
		uint32_t b = j / 64, base = b * 64;
		uint32_t cnt = n_nodes - base < 64 ? n_nodes - base : 64;
		uint32_t hi = j - base + left < cnt ? j - base + left : cnt;
		if (rw->refresh != NULL)
			rw->refresh(rw->refresh_arg, base, cnt);
		block_make(s, rw, b);
		uint64_t mask = below(hi) & ~below(j - base);
		uint64_t halt = (s->probe[b] | s->big[b]) & mask;
		uint64_t cm = s->cand[b] & mask;
		if (halt != 0)
			cm &= below((uint32_t)__builtin_ctzll(halt));
		uint32_t c = (uint32_t)__builtin_popcountll(cm);
		bool last = want != 0 && cands + c >= want;
		if (last) {
			/* The want-th candidate the window's last node. */
			uint64_t after = cm;
			for (uint32_t k = want - cands; k > 0; k--)
				after &= after - 1;
			cm &= ~after;
			c = want - cands;
		} else if (halt != 0) {
			return -1;
		}
		if (cm != 0) {
			s->seg_b[n] = b;
			s->seg_m[n++] = cm;
		}
		cands += c;
		if (last)
			break;
		left -= hi - (j - base);
		j = base + hi == n_nodes ? 0 : base + hi;
	}
	*candidates = cands;
	return n;
}
