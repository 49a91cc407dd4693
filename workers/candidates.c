/* A scan's plain candidates, chosen among: see candidates_internal.h.
 *
 * The AVX2 forms keep, per lane, the best score seen and how many equal
 * it (a lane with none holds INT64_MIN and 0), and merge the four lanes
 * at the end; a maximum and its count do not depend on the order. The
 * raw taint counts of four candidates are read by four scalar loads into
 * a vector (raw4()): on the AMD EPYC VM an AVX2 gather of four waited
 * longer, and by_taint_avx2() took half its samples with them at 100,000
 * nodes. Counts 0 and 1 are kept in lanes; a candidate with another is
 * taken alone, as the scalar loop takes it.
 * The draws count each step's matching lanes and stop in the step that
 * holds the k-th. The general way's totals read the raw scores the same
 * way, and normalise them as doubles (exact quotients), when no raw
 * score is negative and the weights are small enough for 32-bit
 * multiplies; otherwise one at a time.
 */
#include "workers/candidates_internal.h"

#include "base/base.h"

#if defined(__x86_64__)
#include <immintrin.h>
#define CS_X86 1
#define CS_TARGET __attribute__((target("avx2,popcnt")))
#else
#define CS_X86 0
#endif

/* AVX2 where the CPU has it (base/simd.h). */
static struct simd_switch avx2 = SIMD_SWITCH_INIT;

bool candidates_simd(void)
{
	return simd_switch_on(&avx2);
}

bool candidates_set_simd(bool on)
{
	return simd_switch_set(&avx2, on);
}

/* x into a best and its ties (INT64_MIN and 0 while there are none). */
static inline void best_add(int64_t x, int64_t *best, uint64_t *ties)
{
	if (x > *best) {
		*best = x;
		*ties = 1;
	} else {
		*ties += x == *best;
	}
}

/* Another lane's best m with its c ties into a best and its ties. */
static inline void best_merge(int64_t m, uint64_t c, int64_t *best, uint64_t *ties)
{
	if (c == 0)
		return;
	if (*ties == 0 || m > *best) {
		*best = m;
		*ties = c;
	} else if (m == *best) {
		*ties += c;
	}
}

/* Candidate i by its raw count: false when the count is out of range. */
static inline bool taint_add(const int64_t *d, const uint32_t *slots, const int32_t *tr,
			     uint32_t i, struct by_taint *b)
{
	int32_t t = tr[slots[i]];
	if (t < 0 || t > NODE_MAX_TAINTS)
		return false;
	best_add(d[i], &b->best_at[t], &b->ties_at[t]);
	b->max_t = t > b->max_t ? t : b->max_t;
	return true;
}

static void by_taint_init(struct by_taint *b)
{
	for (unsigned t = 0; t <= NODE_MAX_TAINTS; t++) {
		b->best_at[t] = INT64_MIN;
		b->ties_at[t] = 0;
	}
	b->max_t = 0;
}

/* The raw scores' largest over the candidates (0 when none is
 * larger), and whether any is negative. */
static void raw_maxima(const uint32_t *slots, uint32_t from, uint32_t n,
		       const struct raw_scores *r, int64_t *max_a, int64_t *max_t, bool *negative)
{
	for (uint32_t i = from; i < n; i++) {
		int64_t a = r->ar != NULL ? r->ar[slots[i]] : 0;
		int64_t t = r->tr != NULL ? r->tr[slots[i]] : 0;
		*max_a = a > *max_a ? a : *max_a;
		*max_t = t > *max_t ? t : *max_t;
		*negative |= a < 0 || t < 0;
	}
}

/* candidates_totals() one at a time from candidate `from`. */
static void totals_scalar(int64_t *d, const uint32_t *slots, uint32_t from, uint32_t n,
			  const struct raw_scores *r, int64_t max_a, int64_t max_t,
			  int64_t *best, uint64_t *ties)
{
	for (uint32_t i = from; i < n; i++) {
		int64_t a = r->ar != NULL ? r->ar[slots[i]] : 0;
		int64_t t = r->tr != NULL ? r->tr[slots[i]] : 0;
		/* 0 stays 0, without a division (most nodes). */
		if (r->aff && a != 0 && max_a != 0)
			a = MAX_NODE_SCORE * a / max_a;
		if (r->taint)
			t = taint_normalized(t, max_t);
		d[i] += SCORE_FINE * (r->w_taint * t + r->w_aff * a);
		best_add(d[i], best, ties);
	}
}

#if CS_X86
/* The lanes' bests and ties merged into *best and *ties. */
CS_TARGET static inline void lanes_merge(__m256i mx, __m256i cnt, int64_t *best,
					 uint64_t *ties)
{
	int64_t m[4];
	uint64_t c[4];
	_mm256_storeu_si256((__m256i *)(void *)m, mx);
	_mm256_storeu_si256((__m256i *)(void *)c, cnt);
	for (unsigned l = 0; l < 4; l++)
		best_merge(m[l], c[l], best, ties);
}

/* Lanes in `valid` into the lanes' bests mx and their ties cnt. */
CS_TARGET static inline void lanes_add(__m256i x, __m256i valid, __m256i *mx, __m256i *cnt)
{
	__m256i gt = _mm256_and_si256(valid, _mm256_cmpgt_epi64(x, *mx));
	__m256i eq = _mm256_and_si256(valid, _mm256_cmpeq_epi64(x, *mx));
	*mx = _mm256_blendv_epi8(*mx, x, gt);
	/* eq is -1 where equal: a tie more; where greater, the first. */
	*cnt = _mm256_blendv_epi8(_mm256_sub_epi64(*cnt, eq), _mm256_set1_epi64x(1), gt);
}

CS_TARGET static uint32_t best_avx2(const int64_t *d, uint32_t n, int64_t *best,
				    uint64_t *ties)
{
	__m256i mx = _mm256_set1_epi64x(INT64_MIN), cnt = _mm256_setzero_si256();
	const __m256i all = _mm256_set1_epi64x(-1);
	uint32_t i = 0;
	for (; i + 4 <= n; i += 4)
		lanes_add(_mm256_loadu_si256((const __m256i *)(const void *)(d + i)), all, &mx,
			  &cnt);
	lanes_merge(mx, cnt, best, ties);
	return i;
}

/* r[] of four candidates' slots, by scalar loads. */
CS_TARGET static inline __m128i raw4(const int32_t *r, const uint32_t *slots)
{
	return _mm_setr_epi32(r[slots[0]], r[slots[1]], r[slots[2]], r[slots[3]]);
}

CS_TARGET static uint32_t by_taint_avx2(const int64_t *d, const uint32_t *slots,
					const int32_t *tr, uint32_t n, struct by_taint *b,
					bool *ok)
{
	/* Counts 0 and 1 in lanes (a node's PreferNoSchedule taints are
	 * seldom more than one); others one at a time. */
	__m256i mx0 = _mm256_set1_epi64x(INT64_MIN), cnt0 = _mm256_setzero_si256();
	__m256i mx1 = mx0, cnt1 = cnt0;
	uint32_t i = 0;
	*ok = true;
	for (; i + 4 <= n; i += 4) {
		__m128i t = raw4(tr, slots + i);
		__m128i is0 = _mm_cmpeq_epi32(t, _mm_setzero_si128());
		__m128i is1 = _mm_cmpeq_epi32(t, _mm_set1_epi32(1));
		unsigned lane = (unsigned)_mm_movemask_ps(_mm_castsi128_ps(_mm_or_si128(is0, is1)));
		for (unsigned l = 0; lane != 0xf && l < 4; l++)
			if (!(lane >> l & 1u) && !taint_add(d, slots, tr, i + l, b)) {
				*ok = false;
				return i;
			}
		__m256i x = _mm256_loadu_si256((const __m256i *)(const void *)(d + i));
		lanes_add(x, _mm256_cvtepi32_epi64(is0), &mx0, &cnt0);
		lanes_add(x, _mm256_cvtepi32_epi64(is1), &mx1, &cnt1);
	}
	lanes_merge(mx0, cnt0, &b->best_at[0], &b->ties_at[0]);
	lanes_merge(mx1, cnt1, &b->best_at[1], &b->ties_at[1]);
	if (b->ties_at[1] > 0 && b->max_t < 1)
		b->max_t = 1;
	return i;
}

/* raw_maxima() four a step: returns the candidates it took. */
CS_TARGET static uint32_t maxima_avx2(const uint32_t *slots, uint32_t n,
				      const struct raw_scores *r, int64_t *max_a,
				      int64_t *max_t, bool *negative)
{
	__m128i ma = _mm_setzero_si128(), mt = ma, lo = ma;
	uint32_t i = 0;
	for (; i + 4 <= n; i += 4) {
		__m128i a = r->ar != NULL ? raw4(r->ar, slots + i) : _mm_setzero_si128();
		__m128i t = r->tr != NULL ? raw4(r->tr, slots + i) : _mm_setzero_si128();
		ma = _mm_max_epi32(ma, a);
		mt = _mm_max_epi32(mt, t);
		lo = _mm_min_epi32(lo, _mm_min_epi32(a, t));
	}
	int32_t va[4], vt[4], vl[4];
	_mm_storeu_si128((__m128i *)(void *)va, ma);
	_mm_storeu_si128((__m128i *)(void *)vt, mt);
	_mm_storeu_si128((__m128i *)(void *)vl, lo);
	for (unsigned l = 0; l < 4; l++) {
		*max_a = va[l] > *max_a ? va[l] : *max_a;
		*max_t = vt[l] > *max_t ? vt[l] : *max_t;
		*negative |= vl[l] < 0;
	}
	return i;
}

/* totals_scalar() four a step, when every raw score is at least 0 and
 * both weights times SCORE_FINE fit 32 bits: the normalised scores are
 * then in [0, 100] (the raw ones below 2^31), so each product is one
 * signed 32 x 32 multiply; the quotients are doubles' exact ones (see
 * workers/leaf_fast_internal.h: 100 times a count below 2^31, over one
 * below 2^46). Returns the candidates it took. */
CS_TARGET static uint32_t totals_avx2(int64_t *d, const uint32_t *slots, uint32_t n,
				      const struct raw_scores *r, int64_t max_a,
				      int64_t max_t, int64_t *best, uint64_t *ties)
{
	const bool norm_a = r->aff && max_a != 0, norm_t = r->taint && max_t != 0;
	const __m256d hundred = _mm256_set1_pd((double)MAX_NODE_SCORE);
	const __m256d div_a = _mm256_set1_pd((double)max_a), div_t = _mm256_set1_pd((double)max_t);
	const __m256i w_a = _mm256_set1_epi64x(SCORE_FINE * r->w_aff);
	const __m256i w_t = _mm256_set1_epi64x(SCORE_FINE * r->w_taint);
	__m256i mx = _mm256_set1_epi64x(INT64_MIN), cnt = _mm256_setzero_si256();
	const __m256i all = _mm256_set1_epi64x(-1);
	uint32_t i = 0;
	for (; i + 4 <= n; i += 4) {
		__m128i a = r->ar != NULL ? raw4(r->ar, slots + i) : _mm_setzero_si128();
		__m128i t = r->tr != NULL ? raw4(r->tr, slots + i) : _mm_setzero_si128();
		if (norm_a)
			a = _mm256_cvttpd_epi32(_mm256_div_pd(
				_mm256_mul_pd(_mm256_cvtepi32_pd(a), hundred), div_a));
		if (norm_t)
			t = _mm_sub_epi32(_mm_set1_epi32(MAX_NODE_SCORE),
					  _mm256_cvttpd_epi32(_mm256_div_pd(
						  _mm256_mul_pd(_mm256_cvtepi32_pd(t), hundred),
						  div_t)));
		else if (r->taint)
			t = _mm_set1_epi32(MAX_NODE_SCORE); /* every count 0 */
		__m256i *at = (__m256i *)(void *)(d + i);
		__m256i x = _mm256_add_epi64(
			_mm256_loadu_si256(at),
			_mm256_add_epi64(_mm256_mul_epi32(_mm256_cvtepi32_epi64(t), w_t),
					 _mm256_mul_epi32(_mm256_cvtepi32_epi64(a), w_a)));
		_mm256_storeu_si256(at, x);
		lanes_add(x, all, &mx, &cnt);
	}
	lanes_merge(mx, cnt, best, ties);
	return i;
}

/* The k-th set bit of a 4-bit mask that has more than k. */
static inline unsigned kth_bit(unsigned m, uint64_t k)
{
	for (; k > 0; k--)
		m &= m - 1;
	return (unsigned)__builtin_ctz(m);
}

CS_TARGET static uint32_t kth_avx2(const int64_t *d, uint32_t n, int64_t best, uint64_t *k,
				   bool *found)
{
	const __m256i want = _mm256_set1_epi64x(best);
	uint32_t i = 0;
	for (; i + 4 <= n; i += 4) {
		unsigned m = (unsigned)_mm256_movemask_pd(_mm256_castsi256_pd(_mm256_cmpeq_epi64(
			_mm256_loadu_si256((const __m256i *)(const void *)(d + i)), want)));
		unsigned c = (unsigned)__builtin_popcount(m);
		if (*k < c) {
			*found = true;
			return i + kth_bit(m, *k);
		}
		*k -= c;
	}
	*found = false;
	return i;
}

CS_TARGET static uint32_t kth_by_taint_avx2(const int64_t *d, const uint32_t *slots,
					    const int32_t *tr, uint32_t n,
					    const int64_t add[NODE_MAX_TAINTS + 1], int64_t best,
					    uint64_t *k, bool *found)
{
	const __m256i want = _mm256_set1_epi64x(best);
	uint32_t i = 0;
	for (; i + 4 <= n; i += 4) {
		const uint32_t *at = slots + i;
		__m256i total = _mm256_add_epi64(
			_mm256_loadu_si256((const __m256i *)(const void *)(d + i)),
			_mm256_setr_epi64x(add[tr[at[0]]], add[tr[at[1]]], add[tr[at[2]]],
					   add[tr[at[3]]]));
		unsigned m = (unsigned)_mm256_movemask_pd(
			_mm256_castsi256_pd(_mm256_cmpeq_epi64(total, want)));
		unsigned c = (unsigned)__builtin_popcount(m);
		if (*k < c) {
			*found = true;
			return i + kth_bit(m, *k);
		}
		*k -= c;
	}
	*found = false;
	return i;
}
#endif

void candidates_best(const int64_t *d, uint32_t n, int64_t *best, uint64_t *ties)
{
	*best = INT64_MIN;
	*ties = 0;
	uint32_t i = 0;
#if CS_X86
	if (simd_switch_on(&avx2))
		i = best_avx2(d, n, best, ties);
#endif
	for (; i < n; i++)
		best_add(d[i], best, ties);
}

uint32_t candidates_kth(const int64_t *d, uint32_t n, int64_t best, uint64_t k)
{
	uint32_t i = 0;
#if CS_X86
	if (simd_switch_on(&avx2)) {
		bool found;
		i = kth_avx2(d, n, best, &k, &found);
		if (found)
			return i;
	}
#endif
	for (; i < n; i++)
		if (d[i] == best && k-- == 0)
			return i;
	return n;
}

bool candidates_by_taint(const int64_t *d, const uint32_t *slots, const int32_t *tr,
			 uint32_t n, struct by_taint *b)
{
	by_taint_init(b);
	uint32_t i = 0;
#if CS_X86
	if (simd_switch_on(&avx2)) {
		bool ok;
		i = by_taint_avx2(d, slots, tr, n, b, &ok);
		if (!ok)
			return false;
	}
#endif
	for (; i < n; i++)
		if (!taint_add(d, slots, tr, i, b))
			return false;
	return true;
}

uint32_t candidates_kth_by_taint(const int64_t *d, const uint32_t *slots, const int32_t *tr,
				 uint32_t n, const int64_t add[NODE_MAX_TAINTS + 1],
				 int64_t best, uint64_t k)
{
	uint32_t i = 0;
#if CS_X86
	if (simd_switch_on(&avx2)) {
		bool found;
		i = kth_by_taint_avx2(d, slots, tr, n, add, best, &k, &found);
		if (found)
			return i;
	}
#endif
	for (; i < n; i++)
		if (d[i] + add[tr[slots[i]]] == best && k-- == 0)
			return i;
	return n;
}

/* A weight times SCORE_FINE in a signed 32-bit word. */
static bool fits32(int64_t w)
{
	return w >= -(INT64_C(1) << 31) / SCORE_FINE && w <= ((INT64_C(1) << 31) - 1) / SCORE_FINE;
}

void candidates_totals(int64_t *d, const uint32_t *slots, uint32_t n,
		       const struct raw_scores *r, int64_t *best, uint64_t *ties)
{
	int64_t max_a = 0, max_t = 0;
	bool negative = false;
	*best = INT64_MIN;
	*ties = 0;
	bool any = r->ar != NULL || r->tr != NULL;
	uint32_t i = 0;
#if CS_X86
	bool simd = simd_switch_on(&avx2);
	if (simd && any)
		i = maxima_avx2(slots, n, r, &max_a, &max_t, &negative);
#endif
	if (any)
		raw_maxima(slots, i, n, r, &max_a, &max_t, &negative);
	i = 0;
#if CS_X86
	if (simd && !negative && fits32(r->w_aff) && fits32(r->w_taint))
		i = totals_avx2(d, slots, n, r, max_a, max_t, best, ties);
#endif
	totals_scalar(d, slots, i, n, r, max_a, max_t, best, ties);
}
