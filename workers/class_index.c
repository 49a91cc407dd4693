/* The class index: see class_index_internal.h.
 *
 * Layout: val holds one word per position, in blocks of 64: 0 fails, else
 * the position's group g in the top bits and d + 1 below (word_of()), so
 * a group's words are the range [g << 28, (g + 1) << 28) and compare as
 * their d within it. Per group g, bmax[g][b] and bties[g][b] are block
 * b's largest word of the group and how many positions hold it; smax and
 * sties the same over the 64 blocks of a super-block. pass[b] has a bit
 * per passing position, spass[s] the passing positions of super-block s.
 * Positions at and past n never pass.
 *
 * One array of words for all groups, not one per group: a position is in
 * one group, so G arrays held G - 1 zeros a position, and a query read
 * each end block's words once per group. At 100,000 nodes a class of two
 * groups (most, on the default) held 800 KB of words; now 400 KB.
 *
 * Invariants, kept by every update:
 * - bmax[g][b] = max of group g's words over block b; bties[g][b] = how
 *   many equal it, 0 when it is 0 (no passing position); likewise
 *   smax/sties over the bmax/bties of the super-block's blocks (ties
 *   added over the blocks whose bmax is the super-block's).
 * - pass and spass count exactly the positions whose word is non-zero;
 *   total is their sum.
 *
 * A query over [lo, hi) reads the words of the two blocks at its ends
 * (masked), whole blocks between them up to a super-block boundary,
 * whole super-blocks, then whole blocks again: O(n / 4096 + 128) steps.
 * A tie search relies on its `want` being each group's best over a range
 * that holds [lo, hi) (as place_indexed asks it): then a block or
 * super-block inside the range holds positions at want[g] only if its
 * maximum is want[g], and its ties are exactly those positions.
 *
 * Run-time dispatch: each function's body is written once (always
 * inlined) and compiled twice, for the baseline and for AVX2 with POPCNT;
 * the AVX2 one runs when the CPU has both (or until a test turns it off).
 * The two differ in speed only.
 */
#include "workers/class_index_internal.h"

#include "base/base.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define CI_X86 1
#define CI_SIMD_TARGET __attribute__((target("avx2,popcnt")))
#else
#define CI_X86 0
#define CI_SIMD_TARGET
#endif

#define INLINE static inline __attribute__((always_inline))
#define B CLASS_INDEX_BLOCK

/* AVX2 where the CPU has it (base/simd.h). */
static struct simd_switch avx2 = SIMD_SWITCH_INIT;

static bool simd_on(void)
{
	return simd_switch_on(&avx2);
}

bool class_index_simd(void)
{
	return simd_on();
}

bool class_index_set_simd(bool on)
{
	return simd_switch_set(&avx2, on);
}

/* --- 64 words at a time ---------------------------------------------------- */

INLINE unsigned pc64(uint64_t w)
{
	return (unsigned)__builtin_popcountll(w);
}

/* The position of the k-th (0-based) set bit of w, which has more than k. */
INLINE unsigned select64(uint64_t w, unsigned k)
{
	unsigned base = 0;
	for (;;) {
		unsigned c = pc64(w & 0xff);
		if (k < c)
			break;
		k -= c;
		w >>= 8;
		base += 8;
	}
	for (; k > 0; k--)
		w &= w - 1;
	return base + (unsigned)__builtin_ctzll(w);
}

/* Bits lo..hi-1 set (0 <= lo < hi <= 64). */
INLINE uint64_t span64(unsigned lo, unsigned hi)
{
	uint64_t below_hi = hi == 64 ? ~UINT64_C(0) : (UINT64_C(1) << hi) - 1;
	return below_hi & (~UINT64_C(0) << lo);
}

/* A passing position's word, group g and score d (word_of()). */
#define GROUP_SHIFT 28
#define D_BITS ((UINT32_C(1) << GROUP_SHIFT) - 1)
_Static_assert(CLASS_INDEX_D_MAX + 1 <= D_BITS, "d + 1 fits below the group");
_Static_assert(CLASS_INDEX_MAX_GROUPS <= 8, "a group fits the top bits");

/* The largest of the 64 words at v of group g whose bit is set in `mask`,
 * and how many hold it (0 when it is 0). */
static void best_plain(const uint32_t *v, uint64_t mask, unsigned g,
		       uint32_t *max, uint32_t *ties)
{
	uint32_t m = 0, t = 0;
	for (; mask != 0; mask &= mask - 1) {
		uint32_t w = v[__builtin_ctzll(mask)];
		if (w >> GROUP_SHIFT != g)
			continue;
		if (w > m) {
			m = w;
			t = 1;
		} else if (w == m) {
			t++;
		}
	}
	*max = m;
	*ties = m != 0 ? t : 0;
}

/* The 64 words at v equal to w, as bits. */
static uint64_t eq_plain(const uint32_t *v, uint32_t w)
{
	uint64_t bits = 0;
	for (unsigned i = 0; i < B; i++)
		bits |= (uint64_t)(v[i] == w) << i;
	return bits;
}

#if CI_X86
CI_SIMD_TARGET static void best_avx2(const uint32_t *v, uint64_t mask, unsigned g,
				     uint32_t *max, uint32_t *ties)
{
	const __m256i bit = _mm256_setr_epi32(1, 2, 4, 8, 16, 32, 64, 128);
	const __m256i group = _mm256_set1_epi32((int)g);
	__m256i lane[8], m = _mm256_setzero_si256();
	for (unsigned i = 0; i < 8; i++) {
		__m256i sel = _mm256_set1_epi32((int)((mask >> (8 * i)) & 0xff));
		sel = _mm256_cmpeq_epi32(_mm256_and_si256(sel, bit), bit);
		__m256i w = _mm256_loadu_si256((const __m256i *)(const void *)(v + 8 * i));
		sel = _mm256_and_si256(sel, _mm256_cmpeq_epi32(
						    _mm256_srli_epi32(w, GROUP_SHIFT), group));
		lane[i] = _mm256_and_si256(w, sel);
		m = _mm256_max_epu32(m, lane[i]);
	}
	__m128i h = _mm_max_epu32(_mm256_castsi256_si128(m),
				  _mm256_extracti128_si256(m, 1));
	h = _mm_max_epu32(h, _mm_shuffle_epi32(h, 0x4e));
	h = _mm_max_epu32(h, _mm_shuffle_epi32(h, 0xb1));
	uint32_t best = (uint32_t)_mm_cvtsi128_si32(h);
	unsigned t = 0;
	if (best != 0) {
		/* Masked-out words read 0, never the best. */
		__m256i b = _mm256_set1_epi32((int)best);
		for (unsigned i = 0; i < 8; i++)
			t += pc64((unsigned)_mm256_movemask_ps(
				_mm256_castsi256_ps(_mm256_cmpeq_epi32(lane[i], b))));
	}
	*max = best;
	*ties = t;
}

CI_SIMD_TARGET static uint64_t eq_avx2(const uint32_t *v, uint32_t w)
{
	__m256i want = _mm256_set1_epi32((int)w);
	uint64_t bits = 0;
	for (unsigned i = 0; i < 8; i++) {
		__m256i x = _mm256_loadu_si256((const __m256i *)(const void *)(v + 8 * i));
		bits |= (uint64_t)(unsigned)_mm256_movemask_ps(
				_mm256_castsi256_ps(_mm256_cmpeq_epi32(x, want)))
			<< (8 * i);
	}
	return bits;
}
#endif

INLINE void best64(bool simd, const uint32_t *v, uint64_t mask, unsigned g,
		   uint32_t *max, uint32_t *ties)
{
#if CI_X86
	if (simd) {
		best_avx2(v, mask, g, max, ties);
		return;
	}
#endif
	(void)simd;
	best_plain(v, mask, g, max, ties);
}

INLINE uint64_t eq64(bool simd, const uint32_t *v, uint32_t w)
{
#if CI_X86
	if (simd)
		return eq_avx2(v, w);
#endif
	(void)simd;
	return eq_plain(v, w);
}

/* --- layout ------------------------------------------------------------------ */

static inline uint32_t *bmax_of(const struct class_index *x, unsigned g)
{
	return x->bmax + (size_t)g * x->blocks;
}

static inline uint32_t *bties_of(const struct class_index *x, unsigned g)
{
	return x->bties + (size_t)g * x->blocks;
}

static inline uint64_t *bmask_of(const struct class_index *x, unsigned g)
{
	return x->bmask + (size_t)g * x->blocks;
}

static inline uint32_t *smax_of(const struct class_index *x, unsigned g)
{
	return x->smax + (size_t)g * x->supers;
}

static inline uint32_t *sties_of(const struct class_index *x, unsigned g)
{
	return x->sties + (size_t)g * x->supers;
}

int class_index_init(struct class_index *x, uint32_t n, unsigned groups)
{
	memset(x, 0, sizeof(*x));
	if (groups == 0 || groups > CLASS_INDEX_MAX_GROUPS || n > (1u << 30))
		return -EINVAL;
	(void)simd_on();
	uint32_t blocks = (n + B - 1) / B;
	blocks = (blocks + B - 1) / B * B;
	if (blocks == 0)
		blocks = B;
	x->n = n;
	x->blocks = blocks;
	x->supers = blocks / B;
	x->groups = groups;
	size_t words = (size_t)blocks * B /* val */ +
		       2 * (size_t)groups * blocks /* bmax, bties */ +
		       2 * (size_t)groups * x->supers /* smax, sties */ +
		       x->supers /* spass */;
	x->bytes = words * sizeof(uint32_t) +
		   (1 + (size_t)groups) * blocks * sizeof(uint64_t) /* pass, bmask */;
	/* 32-byte aligned: the AVX2 code reads 256 bits at a time (unaligned
	 * loads, but lines not split). */
	x->mem = aligned_alloc(64, (x->bytes + 63) / 64 * 64);
	if (x->mem == NULL) {
		memset(x, 0, sizeof(*x));
		return -ENOMEM;
	}
	memset(x->mem, 0, x->bytes);
	x->pass = x->mem;
	x->bmask = x->pass + blocks;
	x->val = (uint32_t *)(void *)(x->bmask + (size_t)groups * blocks);
	x->bmax = x->val + (size_t)blocks * B;
	x->bties = x->bmax + (size_t)groups * blocks;
	x->smax = x->bties + (size_t)groups * blocks;
	x->sties = x->smax + (size_t)groups * x->supers;
	x->spass = x->sties + (size_t)groups * x->supers;
	return 0;
}

void class_index_free(struct class_index *x)
{
	free(x->mem);
	memset(x, 0, sizeof(*x));
}

size_t class_index_bytes(const struct class_index *x)
{
	return x->bytes;
}

/* --- updates ----------------------------------------------------------------- */

static inline uint32_t word_of(unsigned g, bool pass, int32_t d)
{
	return pass ? (uint32_t)g << GROUP_SHIFT | ((uint32_t)d + 1) : 0;
}

static inline int32_t d_of(uint32_t w)
{
	return (int32_t)(w & D_BITS) - 1;
}

void class_index_set_leaf(struct class_index *x, uint32_t p, unsigned g,
			  bool pass, int32_t d)
{
	x->val[p] = word_of(g, pass, d);
}

/* Super-block s of group g from its blocks. */
INLINE void super_stat(bool simd, struct class_index *x, unsigned g, uint32_t s)
{
	const uint32_t *bm = bmax_of(x, g) + (size_t)s * B;
	const uint32_t *bt = bties_of(x, g) + (size_t)s * B;
	uint32_t m, unused, t = 0;
	/* The group's own maxima: every word here is of group g (or 0). */
	best64(simd, bm, ~UINT64_C(0), g, &m, &unused);
	if (m != 0)
		for (uint64_t at = eq64(simd, bm, m); at != 0; at &= at - 1)
			t += bt[__builtin_ctzll(at)];
	smax_of(x, g)[s] = m;
	sties_of(x, g)[s] = t;
}

INLINE void build_body(bool simd, struct class_index *x)
{
	x->total = 0;
	for (uint32_t b = 0; b < x->blocks; b++)
		x->pass[b] = ~eq64(simd, x->val + (size_t)b * B, 0);
	for (unsigned g = 0; g < x->groups; g++) {
		for (uint32_t b = 0; b < x->blocks; b++) {
			uint32_t m;
			best64(simd, x->val + (size_t)b * B, ~UINT64_C(0), g, &m,
			       &bties_of(x, g)[b]);
			bmax_of(x, g)[b] = m;
			bmask_of(x, g)[b] = m != 0 ? eq64(simd, x->val + (size_t)b * B, m) : 0;
		}
		for (uint32_t s = 0; s < x->supers; s++)
			super_stat(simd, x, g, s);
	}
	for (uint32_t s = 0; s < x->supers; s++) {
		uint32_t c = 0;
		for (uint32_t b = s * B; b < (s + 1) * B; b++)
			c += pc64(x->pass[b]);
		x->spass[s] = c;
		x->total += c;
	}
}

/* Block b of group g went from (m0, t0) to (m1, t1): mends its
 * super-block. */
INLINE void super_mend(bool simd, struct class_index *x, unsigned g, uint32_t b,
		       uint32_t m0, uint32_t t0, uint32_t m1, uint32_t t1)
{
	uint32_t s = b / B;
	uint32_t *sm = &smax_of(x, g)[s], *st = &sties_of(x, g)[s];
	if (m1 > *sm) {
		*sm = m1;
		*st = t1;
	} else if (m1 == *sm) {
		*st += t1 - (m0 == *sm ? t0 : 0);
	} else if (m0 == *sm) { /* the block fell below the super-block's best */
		*st -= t0;
		if (*st == 0)
			super_stat(simd, x, g, s);
	}
}

INLINE void update_body(bool simd, struct class_index *x, uint32_t p, unsigned g,
			bool pass, int32_t d)
{
	uint32_t *v = x->val;
	uint32_t nv = word_of(g, pass, d), old = v[p];
	if (nv == old)
		return;
	v[p] = nv;
	uint32_t b = p / B;
	if ((old != 0) != (nv != 0)) {
		x->pass[b] ^= UINT64_C(1) << (p % B);
		if (nv != 0) {
			x->spass[b / B]++;
			x->total++;
		} else {
			x->spass[b / B]--;
			x->total--;
		}
	}
	uint32_t *bm = &bmax_of(x, g)[b], *bt = &bties_of(x, g)[b];
	uint64_t *bk = &bmask_of(x, g)[b], bit = UINT64_C(1) << (p % B);
	uint32_t m0 = *bm, t0 = *bt, m1 = m0, t1 = t0;
	if (nv > m0) {
		m1 = nv;
		t1 = 1;
		*bk = bit;
	} else if (nv == m0) { /* old < m0: one more at the best */
		t1 = t0 + 1;
		*bk |= bit;
	} else if (old == m0) { /* one fewer at the best */
		if (t0 > 1) {
			t1 = t0 - 1;
			*bk &= ~bit;
		} else {
			best64(simd, v + (size_t)b * B, ~UINT64_C(0), g, &m1, &t1);
			*bk = m1 != 0 ? eq64(simd, v + (size_t)b * B, m1) : 0;
		}
	}
	if (m1 == m0 && t1 == t0)
		return;
	*bm = m1;
	*bt = t1;
	super_mend(simd, x, g, b, m0, t0, m1, t1);
}

/* --- queries ----------------------------------------------------------------- */

INLINE uint32_t count_body(const struct class_index *x, uint32_t lo, uint32_t hi)
{
	if (hi > x->n)
		hi = x->n;
	if (lo >= hi)
		return 0;
	uint32_t bl = lo / B, bh = (hi - 1) / B;
	if (bl == bh)
		return pc64(x->pass[bl] & span64(lo % B, hi - bh * B));
	uint32_t c = pc64(x->pass[bl] & span64(lo % B, B)) +
		     pc64(x->pass[bh] & span64(0, hi - bh * B));
	for (uint32_t b = bl + 1; b < bh;) {
		if (b % B == 0 && b + B <= bh) {
			c += x->spass[b / B];
			b += B;
		} else {
			c += pc64(x->pass[b++]);
		}
	}
	return c;
}

INLINE uint32_t select_body(const struct class_index *x, uint32_t r)
{
	uint32_t s = 0;
	while (s + 1 < x->supers && r >= x->spass[s])
		r -= x->spass[s++];
	uint32_t b = s * B;
	for (;; b++) {
		unsigned c = pc64(x->pass[b]);
		if (r < c)
			break;
		r -= c;
	}
	return b * B + select64(x->pass[b], r);
}

INLINE uint32_t select_from_body(const struct class_index *x, uint32_t lo,
				 uint32_t r, uint32_t *counted)
{
	uint32_t c = 0;
	if (lo < x->n) {
		uint32_t b = lo / B;
		uint64_t w = x->pass[b] & span64(lo % B, B);
		unsigned pc = pc64(w);
		if (r < pc)
			return b * B + select64(w, r);
		r -= pc;
		c += pc;
		for (b++; b < x->blocks;) {
			if (b % B == 0 && r >= x->spass[b / B]) {
				r -= x->spass[b / B];
				c += x->spass[b / B];
				b += B;
				continue;
			}
			pc = pc64(x->pass[b]);
			if (r < pc)
				return b * B + select64(x->pass[b], r);
			r -= pc;
			c += pc;
			b++;
		}
	}
	*counted = c;
	return UINT32_MAX;
}

/* Merges (m, t) into the running best (bm, bt), in words. */
static inline void merge_word(uint32_t *bm, uint32_t *bt, uint32_t m, uint32_t t)
{
	if (m > *bm) {
		*bm = m;
		*bt = t;
	} else if (m == *bm && m != 0) {
		*bt += t;
	}
}

#if CI_X86
/* The largest of bm[lo..hi) (hi - lo >= 8) and how many of bt[] go with
 * it: eight blocks a step. */
CI_SIMD_TARGET static void run_avx2(const uint32_t *bm, const uint32_t *bt, uint32_t lo,
				    uint32_t hi, uint32_t *max, uint32_t *ties)
{
	__m256i m = _mm256_setzero_si256();
	uint32_t b = lo;
	for (; b + 8 <= hi; b += 8)
		m = _mm256_max_epu32(m, _mm256_loadu_si256((const __m256i *)(const void *)(bm + b)));
	__m128i h = _mm_max_epu32(_mm256_castsi256_si128(m), _mm256_extracti128_si256(m, 1));
	h = _mm_max_epu32(h, _mm_shuffle_epi32(h, 0x4e));
	h = _mm_max_epu32(h, _mm_shuffle_epi32(h, 0xb1));
	uint32_t best = (uint32_t)_mm_cvtsi128_si32(h);
	for (uint32_t r = b; r < hi; r++)
		best = bm[r] > best ? bm[r] : best;
	uint32_t t = 0;
	if (best != 0) {
		__m256i want = _mm256_set1_epi32((int)best), sum = _mm256_setzero_si256();
		for (b = lo; b + 8 <= hi; b += 8) {
			__m256i eq = _mm256_cmpeq_epi32(
				_mm256_loadu_si256((const __m256i *)(const void *)(bm + b)), want);
			sum = _mm256_add_epi32(sum, _mm256_and_si256(eq, _mm256_loadu_si256(
					       (const __m256i *)(const void *)(bt + b))));
		}
		__m128i s = _mm_add_epi32(_mm256_castsi256_si128(sum),
					  _mm256_extracti128_si256(sum, 1));
		s = _mm_add_epi32(s, _mm_shuffle_epi32(s, 0x4e));
		s = _mm_add_epi32(s, _mm_shuffle_epi32(s, 0xb1));
		t = (uint32_t)_mm_cvtsi128_si32(s);
		for (uint32_t r = b; r < hi; r++)
			t += bm[r] == best ? bt[r] : 0;
	}
	*max = best;
	*ties = t;
}
#endif

/* Merges blocks [lo, hi) of one group (bm, bt) into the running best. The
 * same as merge_word() block by block: a maximum and the ties at it. */
INLINE void merge_run(bool simd, const uint32_t *bm, const uint32_t *bt, uint32_t lo,
		      uint32_t hi, uint32_t *m, uint32_t *t)
{
#if CI_X86
	if (simd && hi - lo >= 8) {
		uint32_t rm, rt;
		run_avx2(bm, bt, lo, hi, &rm, &rt);
		merge_word(m, t, rm, rt);
		return;
	}
#endif
	(void)simd;
	for (uint32_t b = lo; b < hi; b++)
		merge_word(m, t, bm[b], bt[b]);
}

/* A block's 64 words: 256 bytes, four cache lines. Always inlined: a
 * helper that only prefetches is "pure" to GCC, whose calls it may
 * delete (leaf_scan.c's prefetch_rows() was). */
INLINE void prefetch_block(const uint32_t *v)
{
	for (unsigned c = 0; c < B * sizeof(*v); c += 64)
		__builtin_prefetch((const char *)v + c);
}

INLINE void range_body(bool simd, const struct class_index *x, uint32_t lo,
		       uint32_t hi, struct ci_best *out)
{
	if (hi > x->n)
		hi = x->n;
	if (lo >= hi)
		return;
	uint32_t bl = lo / B, bh = (hi - 1) / B;
	/* The end blocks' words are read whole (best64), once per group:
	 * both asked for first, so their misses overlap. */
	const uint32_t *v = x->val;
	if (x->pass[bl] != 0)
		prefetch_block(v + (size_t)bl * B);
	if (bh != bl && x->pass[bh] != 0)
		prefetch_block(v + (size_t)bh * B);
	for (unsigned g = 0; g < x->groups; g++) {
		uint32_t m = out[g].d == CLASS_INDEX_NONE ? 0 : word_of(g, true, out[g].d);
		uint32_t t = m != 0 ? out[g].ties : 0, pm, pt;
		const uint32_t *bm = bmax_of(x, g), *bt = bties_of(x, g);
		/* A block where the group has nothing passing is not read. */
		if (bl == bh) {
			if (bm[bl] != 0) {
				best64(simd, v + (size_t)bl * B, span64(lo % B, hi - bh * B), g,
				       &pm, &pt);
				merge_word(&m, &t, pm, pt);
			}
		} else {
			if (bm[bl] != 0) {
				best64(simd, v + (size_t)bl * B, span64(lo % B, B), g, &pm, &pt);
				merge_word(&m, &t, pm, pt);
			}
			for (uint32_t b = bl + 1; b < bh;) {
				if (b % B == 0 && b + B <= bh) {
					merge_word(&m, &t, smax_of(x, g)[b / B],
						   sties_of(x, g)[b / B]);
					b += B;
				} else {
					/* Blocks up to the next super-block, or bh. */
					uint32_t e = (b / B + 1) * B < bh ? (b / B + 1) * B : bh;
					merge_run(simd, bm, bt, b, e, &m, &t);
					b = e;
				}
			}
			if (bm[bh] != 0) {
				best64(simd, v + (size_t)bh * B, span64(0, hi - bh * B), g,
				       &pm, &pt);
				merge_word(&m, &t, pm, pt);
			}
		}
		out[g] = m != 0 ? (struct ci_best){d_of(m), t}
				: (struct ci_best){CLASS_INDEX_NONE, 0};
	}
}

/* Positions of block b at their group's wanted word, as bits (a word
 * names its group: equal to group g's wanted word, it is of group g). */
INLINE uint64_t qual_bits(bool simd, const struct class_index *x, uint32_t b,
			  const uint32_t *want)
{
	uint64_t bits = 0;
	for (unsigned g = 0; g < x->groups; g++)
		if (want[g] != 0 && bmax_of(x, g)[b] >= want[g])
			bits |= eq64(simd, x->val + (size_t)b * B, want[g]);
	return bits;
}

/* qual_bits() of a block wholly inside the window whose best it was
 * given: there no word of group g passes want[g], so those equal to it
 * are the block's best, whose positions bmask holds; the words, a miss
 * at 100,000 nodes, are not read. */
INLINE uint64_t qual_inner(const struct class_index *x, uint32_t b, const uint32_t *want)
{
	uint64_t bits = 0;
	for (unsigned g = 0; g < x->groups; g++)
		if (want[g] != 0 && bmax_of(x, g)[b] == want[g])
			bits |= bmask_of(x, g)[b];
	return bits;
}

/* Qualifying positions of a whole block (super-block) inside the range. */
INLINE uint64_t qual_block(const struct class_index *x, uint32_t b, const uint32_t *want)
{
	uint64_t q = 0;
	for (unsigned g = 0; g < x->groups; g++)
		if (want[g] != 0 && bmax_of(x, g)[b] == want[g])
			q += bties_of(x, g)[b];
	return q;
}

INLINE uint64_t qual_super(const struct class_index *x, uint32_t s, const uint32_t *want)
{
	uint64_t q = 0;
	for (unsigned g = 0; g < x->groups; g++)
		if (want[g] != 0 && smax_of(x, g)[s] == want[g])
			q += sties_of(x, g)[s];
	return q;
}

#if CI_X86
/* qual_block() of the eight blocks from b, summed: the blocks' maxima and
 * ties per group are eight adjacent words, so one compare and one masked
 * add a group (a block's ties are at most 64, so the sums fit). */
CI_SIMD_TARGET static uint64_t qual8_avx2(const struct class_index *x, uint32_t b,
					  const uint32_t *want)
{
	__m256i sum = _mm256_setzero_si256();
	for (unsigned g = 0; g < x->groups; g++) {
		if (want[g] == 0)
			continue;
		__m256i eq = _mm256_cmpeq_epi32(
			_mm256_loadu_si256((const __m256i *)(const void *)(bmax_of(x, g) + b)),
			_mm256_set1_epi32((int)want[g]));
		sum = _mm256_add_epi32(sum, _mm256_and_si256(eq, _mm256_loadu_si256(
				       (const __m256i *)(const void *)(bties_of(x, g) + b))));
	}
	__m128i h = _mm_add_epi32(_mm256_castsi256_si128(sum), _mm256_extracti128_si256(sum, 1));
	h = _mm_add_epi32(h, _mm_shuffle_epi32(h, 0x4e));
	h = _mm_add_epi32(h, _mm_shuffle_epi32(h, 0xb1));
	return (uint32_t)_mm_cvtsi128_si32(h);
}
#endif

/* The first block in [b, end) whose qualifying positions pass *k, *k
 * lowered by those of the blocks before it; or end, *k lowered by all.
 * With AVX2 eight blocks are summed at a time and only the eight that
 * hold the k-th are taken one by one: at 100,000 nodes a window spans
 * about 80 blocks, walked block by block group by group before. */
INLINE uint32_t walk_blocks(bool simd, const struct class_index *x, uint32_t b,
			    uint32_t end, const uint32_t *want, uint64_t *k)
{
	while (b < end) {
#if CI_X86
		if (simd && b + 8 <= end) {
			uint64_t q8 = qual8_avx2(x, b, want);
			if (*k >= q8) {
				*k -= q8;
				b += 8;
				continue;
			}
			for (uint32_t last = b + 7; b < last; b++) {
				uint64_t q = qual_block(x, b, want);
				if (*k < q)
					return b;
				*k -= q;
			}
			return b; /* the eighth: it holds the k-th */
		}
#endif
		uint64_t q = qual_block(x, b, want);
		if (*k < q)
			return b;
		*k -= q;
		b++;
	}
	(void)simd;
	return end;
}

/* The k-th qualifying position among `bits` of block b, or lowers *k. */
INLINE uint32_t pick_in(uint64_t bits, uint32_t b, uint64_t *k)
{
	unsigned c = pc64(bits);
	if (*k < c)
		return b * B + select64(bits, (unsigned)*k);
	*k -= c;
	return UINT32_MAX;
}

INLINE uint32_t find_body(bool simd, const struct class_index *x, uint32_t lo,
			  uint32_t hi, const int32_t *want_d, uint64_t *k)
{
	if (hi > x->n)
		hi = x->n;
	if (lo >= hi)
		return UINT32_MAX;
	uint32_t want[CLASS_INDEX_MAX_GROUPS];
	for (unsigned g = 0; g < x->groups; g++)
		want[g] = want_d[g] == CLASS_INDEX_NONE ? 0 : word_of(g, true, want_d[g]);
	uint32_t bl = lo / B, bh = (hi - 1) / B;
	if (bl == bh)
		return pick_in(qual_bits(simd, x, bl, want) & span64(lo % B, hi - bh * B),
			       bl, k);
	uint32_t p = pick_in(qual_bits(simd, x, bl, want) & span64(lo % B, B), bl, k);
	if (p != UINT32_MAX)
		return p;
	for (uint32_t b = bl + 1; b < bh;) {
		if (b % B == 0 && b + B <= bh) {
			uint64_t q = qual_super(x, b / B, want);
			if (*k >= q) {
				*k -= q;
				b += B;
				continue;
			}
			/* In this super-block: by blocks. */
			b = walk_blocks(simd, x, b, b + B, want, k);
			return pick_in(qual_inner(x, b, want), b, k);
		}
		/* Up to the next super-block's start, or the last block. */
		uint32_t end = (b / B + 1) * B < bh ? (b / B + 1) * B : bh;
		b = walk_blocks(simd, x, b, end, want, k);
		if (b < end)
			return pick_in(qual_inner(x, b, want), b, k);
	}
	return pick_in(qual_bits(simd, x, bh, want) & span64(0, hi - bh * B), bh, k);
}

/* --- the two builds of each body, and the dispatch ---------------------------- */

#if CI_X86
CI_SIMD_TARGET static void build_avx2(struct class_index *x)
{
	build_body(true, x);
}
CI_SIMD_TARGET static void update_avx2(struct class_index *x, uint32_t p, unsigned g,
				       bool pass, int32_t d)
{
	update_body(true, x, p, g, pass, d);
}
CI_SIMD_TARGET static uint32_t count_avx2(const struct class_index *x, uint32_t lo,
					  uint32_t hi)
{
	return count_body(x, lo, hi);
}
CI_SIMD_TARGET static uint32_t select_avx2(const struct class_index *x, uint32_t r)
{
	return select_body(x, r);
}
CI_SIMD_TARGET static uint32_t select_from_avx2(const struct class_index *x,
						uint32_t lo, uint32_t r,
						uint32_t *counted)
{
	return select_from_body(x, lo, r, counted);
}
CI_SIMD_TARGET static void range_avx2(const struct class_index *x, uint32_t lo,
				      uint32_t hi, struct ci_best *out)
{
	range_body(true, x, lo, hi, out);
}
CI_SIMD_TARGET static uint32_t find_avx2(const struct class_index *x, uint32_t lo,
					 uint32_t hi, const int32_t *want, uint64_t *k)
{
	return find_body(true, x, lo, hi, want, k);
}
#define SIMD simd_switch_is_on(&avx2) /* decided by class_index_init() */
#else
#define SIMD false
#define build_avx2(x) build_body(false, x)
#define update_avx2(x, p, g, pass, d) update_body(false, x, p, g, pass, d)
#define count_avx2(x, lo, hi) count_body(x, lo, hi)
#define select_avx2(x, r) select_body(x, r)
#define select_from_avx2(x, lo, r, c) select_from_body(x, lo, r, c)
#define range_avx2(x, lo, hi, out) range_body(false, x, lo, hi, out)
#define find_avx2(x, lo, hi, want, k) find_body(false, x, lo, hi, want, k)
#endif

void class_index_build(struct class_index *x)
{
	if (SIMD)
		build_avx2(x);
	else
		build_body(false, x);
}

void class_index_update(struct class_index *x, uint32_t p, unsigned g,
			bool pass, int32_t d)
{
	if (SIMD)
		update_avx2(x, p, g, pass, d);
	else
		update_body(false, x, p, g, pass, d);
}

void class_index_prefetch(const struct class_index *x, uint32_t p, unsigned g)
{
	__builtin_prefetch(&x->val[p]);
	__builtin_prefetch(&bmax_of(x, g)[p / B]);
	__builtin_prefetch(&bties_of(x, g)[p / B]);
	__builtin_prefetch(&bmask_of(x, g)[p / B]);
	__builtin_prefetch(&x->pass[p / B]);
}

void class_index_prefetch_from(const struct class_index *x, uint32_t lo)
{
	if (lo >= x->n)
		return;
	uint32_t b = lo / B, end = b + B < x->blocks ? b + B : x->blocks;
	prefetch_block(x->val + (size_t)b * B);
	for (uint32_t at = b; at < end; at += 8)
		__builtin_prefetch(&x->pass[at]);
	for (unsigned g = 0; g < x->groups; g++)
		for (uint32_t at = b; at < end; at += 16) {
			__builtin_prefetch(&bmax_of(x, g)[at]);
			__builtin_prefetch(&bties_of(x, g)[at]);
		}
}

int32_t class_index_leaf(const struct class_index *x, uint32_t p, unsigned g)
{
	uint32_t w = x->val[p];
	return w != 0 && w >> GROUP_SHIFT == g ? d_of(w) : CLASS_INDEX_NONE;
}

uint32_t class_index_total(const struct class_index *x)
{
	return x->total;
}

uint32_t class_index_count(const struct class_index *x, uint32_t lo, uint32_t hi)
{
	return SIMD ? count_avx2(x, lo, hi) : count_body(x, lo, hi);
}

uint32_t class_index_select(const struct class_index *x, uint32_t r)
{
	return SIMD ? select_avx2(x, r) : select_body(x, r);
}

uint32_t class_index_select_from(const struct class_index *x, uint32_t lo,
				 uint32_t r, uint32_t *counted)
{
	return SIMD ? select_from_avx2(x, lo, r, counted)
		    : select_from_body(x, lo, r, counted);
}

uint32_t class_index_block_passing(const struct class_index *x, uint32_t lo,
				   uint32_t hi, uint32_t *out)
{
	uint32_t b = lo / B, top = hi - b * B < B ? hi - b * B : B;
	uint32_t m = 0;
	for (uint64_t w = x->pass[b] & span64(lo % B, top); w != 0; w &= w - 1)
		out[m++] = b * B + (uint32_t)__builtin_ctzll(w);
	return m;
}

void class_index_range(const struct class_index *x, uint32_t lo, uint32_t hi,
		       struct ci_best *out)
{
	if (SIMD)
		range_avx2(x, lo, hi, out);
	else
		range_body(false, x, lo, hi, out);
}

uint32_t class_index_find_tie(const struct class_index *x, uint32_t lo,
			      uint32_t hi, const int32_t *want, uint64_t *k)
{
	return SIMD ? find_avx2(x, lo, hi, want, k)
		    : find_body(false, x, lo, hi, want, k);
}
