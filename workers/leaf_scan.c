/* The fast leaf's scan, four nodes at a time with AVX2: see
 * leaf_fast_internal.h for what it computes and why the doubles are
 * exact.
 *
 * Per four nodes: their rows (node_rows_internal.h), a field pair (used,
 * allocatable) of the four rows by four 16-byte loads and two unpacks
 * (field_pair()): twelve loads for the filter, four more for the
 * stand-in counters where a lane passes (gathers from columns of each
 * field took six to eight gathers, and waited on them); the filter in
 * 64-bit integers, as leaf_fast(); the scores in doubles. Lanes that fail
 * or pass are then taken in slot order, so the candidates, the stop at
 * `want` and the slots visited are those of the scalar loop; a lane
 * outside the exact ranges goes to leaf_fast_of(). A scan's last one to
 * three slots take one more step, padded (scan_step()'s `lanes`).
 *
 * leaf_reasons(), an empty scan's diagnosis, runs the same loads and
 * filter (load_lanes(), refuse_lanes()) and counts each reason's lanes.
 *
 * leaf_fast_plans() runs the same filter and scores with the lanes the
 * other way round: four plans (request shapes, laid out by lane once in
 * struct leaf_plans) on one node, whose figures are broadcast.
 *
 * Where the CPU has AVX-512 (F, DQ, VL, BW), leaf_scan() takes eight
 * nodes a step instead (scan_avx512()): the eight rows by one 64-byte
 * load each, turned into eight fields of eight lanes by an 8 x 8
 * transpose (24 shuffles), the filter into mask registers, the same
 * double operations eight wide with the native 64-bit conversions, and
 * the passing lanes packed by compress (into a register, then one store:
 * AMD's compress straight to memory is microcoded). A scan was compute
 * bound, not memory bound: on the 100,000-node default a second pass
 * over rows already in cache took 85 % of the first's cycles.
 */
#include "workers/leaf_fast_internal.h"

#include "base/base.h"

#include <stddef.h>
#include <string.h>

#if defined(__x86_64__)
#include <immintrin.h>
#define LS_X86 1
#define LS_TARGET __attribute__((target("avx2")))
#define LS512_TARGET __attribute__((target("avx2,avx512f,avx512dq,avx512vl,avx512bw,popcnt")))
#else
#define LS_X86 0
#endif

/* AVX2 where the CPU has it, and AVX-512 for the scan (base/simd.h). */
static struct simd_switch avx2 = SIMD_SWITCH_INIT;
static struct simd_switch avx512 = SIMD512_SWITCH_INIT;

static bool simd_on(void)
{
	return simd_switch_on(&avx2);
}

bool leaf_scan_simd(void)
{
	return simd_on();
}

bool leaf_scan_set_simd(bool on)
{
	return simd_switch_set(&avx2, on);
}

bool leaf_scan_simd512(void)
{
	return simd_switch_on(&avx512);
}

bool leaf_scan_set_simd512(bool on)
{
	return simd_switch_set(&avx512, on);
}

/* leaf_fast_of() on one slot's row. */
static inline uint32_t leaf_at(const struct leaf_fast_plan *k, const struct leaf_nodes *nd,
			       uint32_t slot, int64_t *d, bool *general)
{
	const struct node_row *w = &nd->rows[slot];
	return leaf_fast_of(k, w->pods, w->cpu, w->mem, &w->nz_cpu, &w->nz_mem,
			    w->alloc_cpu, w->alloc_mem, w->alloc_pods, d, general);
}

/* One slot by leaf_fast_of(), and the general rules when it says so. */
static inline void scan_one(const struct leaf_fast_plan *k, const struct leaf_nodes *nd,
			    uint32_t slot, uint32_t *n, uint32_t *out_slot,
			    int64_t *out_d, leaf_general_fn general, void *arg)
{
	int64_t d = 0;
	bool gen = false;
	uint32_t m = leaf_at(k, nd, slot, &d, &gen);
	if (gen)
		m = general(arg, slot, &d);
	if (m == 0) {
		out_slot[*n] = slot;
		out_d[*n] = d;
		(*n)++;
	}
}

static uint32_t scan_scalar(const struct leaf_fast_plan *k, const struct leaf_nodes *nd,
			    const uint32_t *feasible, uint32_t j, uint32_t end,
			    uint32_t want, uint32_t *n, uint32_t *out_slot,
			    int64_t *out_d, leaf_general_fn general, void *arg)
{
	uint32_t visited = 0;
	for (; j < end && *n < want; j++, visited++)
		scan_one(k, nd, feasible[j], n, out_slot, out_d, general, arg);
	return visited;
}

/* A SIMD step's lanes 0..lanes-1 in slot order, stopping at `want` as
 * the scalar loop does: a lane in `failed` is visited and refused, one in
 * `scalar` goes to scan_one(), any other passes with its score d[i].
 * Returns the slots visited. */
static inline uint32_t take_lanes(const struct leaf_fast_plan *k, const struct leaf_nodes *nd,
				  const uint32_t *slot, unsigned lanes, unsigned failed,
				  unsigned scalar, const int64_t *d, uint32_t want, uint32_t *n,
				  uint32_t *out_slot, int64_t *out_d, leaf_general_fn general,
				  void *arg)
{
	uint32_t visited = 0;
	for (unsigned i = 0; i < lanes && *n < want; i++) {
		visited++;
		if (failed & (1u << i))
			continue;
		if (scalar & (1u << i)) {
			scan_one(k, nd, slot[i], n, out_slot, out_d, general, arg);
			continue;
		}
		out_slot[*n] = slot[i];
		out_d[*n] = d[i];
		(*n)++;
	}
	return visited;
}

#if LS_X86
#define TWO52 4503599627370496.0 /* 2^52 */
#define PREFETCH_AHEAD 96u /* slots */
#define TWO52_BITS 0x4330000000000000LL

/* Integers in [0, 2^52) to doubles and back (AVX2 has no such convert):
 * 2^52 + x has x for its mantissa. */
LS_TARGET static inline __m256d to_double(__m256i x)
{
	return _mm256_sub_pd(_mm256_castsi256_pd(_mm256_or_si256(
				     x, _mm256_set1_epi64x(TWO52_BITS))),
			     _mm256_set1_pd(TWO52));
}

LS_TARGET static inline __m256i to_int(__m256d x)
{
	return _mm256_xor_si256(_mm256_castpd_si256(_mm256_add_pd(x, _mm256_set1_pd(TWO52))),
				_mm256_set1_epi64x(TWO52_BITS));
}

/* Lanes with lo <= x < hi. */
LS_TARGET static inline __m256i within(__m256i x, int64_t lo, int64_t hi)
{
	return _mm256_and_si256(_mm256_cmpgt_epi64(x, _mm256_set1_epi64x(lo - 1)),
				_mm256_cmpgt_epi64(_mm256_set1_epi64x(hi), x));
}

LS_TARGET static inline __m256d trunc_pd(__m256d x)
{
	return _mm256_round_pd(x, _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC);
}

/* What the filter compares with, broadcast once per scan. */
struct filter_consts {
	__m256i one, req_cpu, req_mem, check_cpu, check_mem;
};

LS_TARGET static inline struct filter_consts filter_consts(const struct leaf_fast_plan *k)
{
	return (struct filter_consts){
		.one = _mm256_set1_epi64x(1),
		.req_cpu = _mm256_set1_epi64x(k->req_cpu),
		.req_mem = _mm256_set1_epi64x(k->req_mem),
		.check_cpu = _mm256_set1_epi64x(k->check_cpu ? -1 : 0),
		.check_mem = _mm256_set1_epi64x(k->check_mem ? -1 : 0),
	};
}

/* Four nodes as leaf_fast()'s filter reads them: their pods, cpu and
 * memory counters, and their allocatables. */
struct lanes {
	const struct node_row *w[4]; /* the rows */
	__m256i pods, uc, um, ac, am, ap;
};

/* The field pair at byte `off` of rows w[0..3]: lo gets the four rows'
 * first fields, hi their second. Rows 0 and 2 share a register, 1 and 3
 * another (a 16-byte load to each half); one unpack then orders each
 * field's lanes 0, 1, 2, 3. */
LS_TARGET static inline void field_pair(const struct node_row *const w[4], size_t off,
					__m256i *lo, __m256i *hi)
{
#define AT(i) ((const __m128i *)(const void *)((const char *)w[i] + off))
	__m256i a = _mm256_inserti128_si256(_mm256_castsi128_si256(_mm_load_si128(AT(0))),
					    _mm_load_si128(AT(2)), 1);
	__m256i b = _mm256_inserti128_si256(_mm256_castsi128_si256(_mm_load_si128(AT(1))),
					    _mm_load_si128(AT(3)), 1);
#undef AT
	*lo = _mm256_unpacklo_epi64(a, b);
	*hi = _mm256_unpackhi_epi64(a, b);
}

/* The rows of the four slots PREFETCH_AHEAD after feasible[j]: a class's
 * slots are sparse enough that the hardware's own prefetch missed them;
 * and the raw scores' line of the first of them (16 slots a line, so
 * one in four steps is enough where the slots are dense, and each step
 * asks where they are not). Always inlined: as a function of its own
 * GCC 12 finds it "looping pure" (a prefetch is no side effect to it)
 * and deletes every call, which it did here until this was found in the
 * disassembly. */
LS_TARGET __attribute__((always_inline)) static inline void
prefetch_rows(const struct leaf_nodes *nd, const uint32_t *feasible, uint32_t j, uint32_t end)
{
	if (j + 4 + PREFETCH_AHEAD <= end) {
		const uint32_t *at = feasible + j + PREFETCH_AHEAD;
		/* Four statements: GCC -O2 kept a loop of four, a branch each. */
		_mm_prefetch((const char *)&nd->rows[at[0]], _MM_HINT_T0);
		_mm_prefetch((const char *)&nd->rows[at[1]], _MM_HINT_T0);
		_mm_prefetch((const char *)&nd->rows[at[2]], _MM_HINT_T0);
		_mm_prefetch((const char *)&nd->rows[at[3]], _MM_HINT_T0);
		if (nd->raw_taint != NULL)
			_mm_prefetch((const char *)&nd->raw_taint[at[0]], _MM_HINT_T0);
		if (nd->raw_affinity != NULL)
			_mm_prefetch((const char *)&nd->raw_affinity[at[0]], _MM_HINT_T0);
	}
}

LS_TARGET static inline struct lanes load_lanes(const struct leaf_nodes *nd,
						const uint32_t *slots)
{
	struct lanes l;
	l.w[0] = &nd->rows[slots[0]];
	l.w[1] = &nd->rows[slots[1]];
	l.w[2] = &nd->rows[slots[2]];
	l.w[3] = &nd->rows[slots[3]];
	field_pair(l.w, offsetof(struct node_row, pods), &l.pods, &l.ap);
	field_pair(l.w, offsetof(struct node_row, cpu), &l.uc, &l.ac);
	field_pair(l.w, offsetof(struct node_row, mem), &l.um, &l.am);
	return l;
}

/* leaf_fast()'s filter on four lanes, in 64-bit integers: each reason's
 * lanes all ones where it refuses. */
struct refusals {
	__m256i pods, cpu, mem;
};

LS_TARGET static inline struct refusals refuse_lanes(const struct filter_consts *c,
						     const struct lanes *l)
{
	struct refusals f;
	f.pods = _mm256_cmpgt_epi64(_mm256_add_epi64(l->pods, c->one), l->ap);
	f.cpu = _mm256_and_si256(c->check_cpu, _mm256_cmpgt_epi64(
					 c->req_cpu, _mm256_sub_epi64(l->ac, l->uc)));
	f.mem = _mm256_and_si256(c->check_mem, _mm256_cmpgt_epi64(
					 c->req_mem, _mm256_sub_epi64(l->am, l->um)));
	return f;
}

/* The lanes of a 4-lane mask, as 4 bits. */
LS_TARGET static inline unsigned lane_bits(__m256i m)
{
	return (unsigned)_mm256_movemask_pd(_mm256_castsi256_pd(m));
}

/* What scan_step() computes with, broadcast once per scan. */
struct scan_consts {
	struct filter_consts f;
	__m256i add_cpu, add_mem;
	__m256i past46; /* bits 46..63 */
	__m256d hundred, one_d, half, w_cpu, w_mem, w_sum, w_fit, w_bal, fine, sign;
};

LS_TARGET static inline struct scan_consts scan_consts(const struct leaf_fast_plan *k)
{
	return (struct scan_consts){
		.f = filter_consts(k),
		.add_cpu = _mm256_set1_epi64x(k->nz_cpu),
		.add_mem = _mm256_set1_epi64x(k->nz_mem),
		.past46 = _mm256_set1_epi64x(-(INT64_C(1) << 46)),
		.hundred = _mm256_set1_pd((double)MAX_NODE_SCORE),
		.one_d = _mm256_set1_pd(1.0),
		.half = _mm256_set1_pd(0.5),
		.w_cpu = _mm256_set1_pd((double)k->w_cpu),
		.w_mem = _mm256_set1_pd((double)k->w_mem),
		.w_sum = _mm256_set1_pd((double)k->w_sum),
		.w_fit = _mm256_set1_pd((double)k->w_fit),
		.w_bal = _mm256_set1_pd((double)k->w_balanced),
		.fine = _mm256_set1_pd((double)SCORE_FINE),
		.sign = _mm256_set1_pd(-0.0),
	};
}

/* scan_step()'s packing, by the 4-bit mask of passing lanes: the 32-bit
 * words that move each passing lane to the front, in order, for the
 * scores (two words a lane) and for the slots (one). Lanes past the
 * passing ones are filled with lane 0 and never read. */
static const int32_t pack_d[16][8] = {
	{0, 1, 0, 1, 0, 1, 0, 1}, {0, 1, 0, 1, 0, 1, 0, 1}, {2, 3, 0, 1, 0, 1, 0, 1},
	{0, 1, 2, 3, 0, 1, 0, 1}, {4, 5, 0, 1, 0, 1, 0, 1}, {0, 1, 4, 5, 0, 1, 0, 1},
	{2, 3, 4, 5, 0, 1, 0, 1}, {0, 1, 2, 3, 4, 5, 0, 1}, {6, 7, 0, 1, 0, 1, 0, 1},
	{0, 1, 6, 7, 0, 1, 0, 1}, {2, 3, 6, 7, 0, 1, 0, 1}, {0, 1, 2, 3, 6, 7, 0, 1},
	{4, 5, 6, 7, 0, 1, 0, 1}, {0, 1, 4, 5, 6, 7, 0, 1}, {2, 3, 4, 5, 6, 7, 0, 1},
	{0, 1, 2, 3, 4, 5, 6, 7},
};
static const int32_t pack_slot[16][8] = {
	{0, 0, 0, 0}, {0, 0, 0, 0}, {1, 0, 0, 0}, {0, 1, 0, 0}, {2, 0, 0, 0}, {0, 2, 0, 0},
	{1, 2, 0, 0}, {0, 1, 2, 0}, {3, 0, 0, 0}, {0, 3, 0, 0}, {1, 3, 0, 0}, {0, 1, 3, 0},
	{2, 3, 0, 0}, {0, 2, 3, 0}, {1, 2, 3, 0}, {0, 1, 2, 3},
};
#define LOAD_PACK(row) _mm256_loadu_si256((const __m256i *)(const void *)(row))

/* The first `lanes` (1..4) of the four slots at `slot`, in order, while
 * *n < want (lanes past `lanes` repeat a real slot and are not taken).
 * Returns the slots visited. */
LS_TARGET __attribute__((always_inline)) static inline uint32_t
scan_step(const struct leaf_fast_plan *k, const struct scan_consts *c,
	  const struct leaf_nodes *nd, const uint32_t *slot, unsigned lanes, uint32_t want,
	  uint32_t *n, uint32_t *out_slot, int64_t *out_d, leaf_general_fn general, void *arg)
{
	struct lanes l = load_lanes(nd, slot);
	struct refusals f = refuse_lanes(&c->f, &l);
	__m256i uc = l.uc, um = l.um, ac = l.ac, am = l.am;
	__m256i fail = _mm256_or_si256(f.pods, _mm256_or_si256(f.cpu, f.mem));
	unsigned failed = lane_bits(fail), all = (1u << lanes) - 1;
	if ((failed & all) == all)
		return lanes; /* nothing more to read: the common case on a full cluster */
	__m256i rc, rm;
	field_pair(l.w, offsetof(struct node_row, nz_cpu), &rc, &rm);
	rc = _mm256_add_epi64(rc, c->add_cpu);
	rm = _mm256_add_epi64(rm, c->add_mem);
	__m256i bc = _mm256_add_epi64(uc, c->f.req_cpu), bm = _mm256_add_epi64(um, c->f.req_mem);
	/* Lanes whose doubles are exact (see the header), by the narrower
	 * test: every figure in [0, 2^46), one test of their bits together,
	 * and neither allocatable 0. */
	__m256i zero = _mm256_setzero_si256();
	__m256i any = _mm256_or_si256(_mm256_or_si256(_mm256_or_si256(ac, am),
						      _mm256_or_si256(bc, bm)),
				      _mm256_or_si256(rc, rm));
	__m256i exact = _mm256_cmpeq_epi64(_mm256_and_si256(any, c->past46), zero);
	exact = _mm256_andnot_si256(
		_mm256_or_si256(_mm256_cmpeq_epi64(ac, zero), _mm256_cmpeq_epi64(am, zero)), exact);
	unsigned scalar = lane_bits(_mm256_andnot_si256(
		exact, _mm256_cmpeq_epi64(fail, _mm256_setzero_si256())));
	/* NodeResourcesFit's score: (ac - rc) or min(rc, ac), times 100, over
	 * ac, truncated; then weighted. */
	__m256i over_c = _mm256_cmpgt_epi64(rc, ac), over_m = _mm256_cmpgt_epi64(rm, am);
	__m256i xc, xm;
	if (k->most) {
		xc = _mm256_blendv_epi8(rc, ac, over_c);
		xm = _mm256_blendv_epi8(rm, am, over_m);
	} else {
		xc = _mm256_andnot_si256(over_c, _mm256_sub_epi64(ac, rc));
		xm = _mm256_andnot_si256(over_m, _mm256_sub_epi64(am, rm));
	}
	__m256d dc = to_double(ac), dm = to_double(am);
	__m256d sc = trunc_pd(_mm256_div_pd(_mm256_mul_pd(to_double(xc), c->hundred), dc));
	__m256d sm = trunc_pd(_mm256_div_pd(_mm256_mul_pd(to_double(xm), c->hundred), dm));
	__m256d fit = k->w_sum == 0
			      ? _mm256_setzero_pd()
			      : trunc_pd(_mm256_div_pd(_mm256_add_pd(_mm256_mul_pd(sc, c->w_cpu),
								     _mm256_mul_pd(sm, c->w_mem)),
						       c->w_sum));
	/* BalancedAllocation's: the same double operations. */
	__m256d fc = _mm256_min_pd(_mm256_div_pd(to_double(bc), dc), c->one_d);
	__m256d fm = _mm256_min_pd(_mm256_div_pd(to_double(bm), dm), c->one_d);
	__m256d std = _mm256_andnot_pd(c->sign, _mm256_mul_pd(_mm256_sub_pd(fc, fm), c->half));
	__m256d bal = trunc_pd(_mm256_mul_pd(_mm256_sub_pd(c->one_d, std), c->hundred));
	__m256d total = _mm256_mul_pd(c->fine, _mm256_add_pd(_mm256_mul_pd(c->w_fit, fit),
							     _mm256_mul_pd(c->w_bal, bal)));
	unsigned passing = ~failed & all;
	if (lanes == 4 && scalar == 0 && *n + 4 <= want) {
		/* All four visited, `want` not reached: the passing lanes
		 * packed to the front in slot order, by one permute each,
		 * rather than a branch and a store per lane. */
		__m256i d_all = _mm256_permutevar8x32_epi32(
			to_int(total), LOAD_PACK(pack_d[passing]));
		__m256i s_all = _mm256_permutevar8x32_epi32(
			_mm256_castsi128_si256(_mm_loadu_si128((const __m128i *)(const void *)slot)),
			LOAD_PACK(pack_slot[passing]));
		_mm256_storeu_si256((__m256i *)(void *)(out_d + *n), d_all);
		_mm_storeu_si128((__m128i *)(void *)(out_slot + *n), _mm256_castsi256_si128(s_all));
		*n += (unsigned)(UINT64_C(0x4332322132212110) >> (4 * passing)) & 0xfu;
		return 4;
	}
	int64_t d[4];
	_mm256_storeu_si256((__m256i *)(void *)d, to_int(total));
	return take_lanes(k, nd, slot, lanes, failed, scalar, d, want, n, out_slot, out_d,
			  general, arg);
}

/* The 1..width-1 slots left at the end as `width` (4 or 8), the last
 * repeated. */
static inline void pad_tail(const uint32_t *slots, unsigned left, unsigned width,
			    uint32_t *pad)
{
	for (unsigned i = 0; i < width; i++)
		pad[i] = slots[i < left ? i : left - 1];
}

LS_TARGET static uint32_t scan_avx2(const struct leaf_fast_plan *k,
				    const struct leaf_nodes *nd, const uint32_t *feasible,
				    uint32_t j, uint32_t end, uint32_t want, uint32_t *n,
				    uint32_t *out_slot, int64_t *out_d,
				    leaf_general_fn general, void *arg)
{
	const struct scan_consts c = scan_consts(k);
	uint32_t visited = 0;
	/* The rows the loop's prefetches do not reach: its first
	 * PREFETCH_AHEAD. A pruned scan's call reads a few hundred slots, so
	 * without these a fifth of its rows came unasked. */
	for (uint32_t i = j; i < end && i < j + PREFETCH_AHEAD + 4; i++)
		_mm_prefetch((const char *)&nd->rows[feasible[i]], _MM_HINT_T0);
	for (; j + 4 <= end && *n < want; j += 4) {
		prefetch_rows(nd, feasible, j, end);
		visited += scan_step(k, &c, nd, feasible + j, 4, want, n, out_slot, out_d,
				     general, arg);
	}
	if (j < end && *n < want) {
		/* The tail in one step too: a pruned scan's blocks leave one
		 * each, and the scalar leaf took a sixth of the scan's time. */
		uint32_t pad[4];
		pad_tail(feasible + j, end - j, 4, pad);
		visited += scan_step(k, &c, nd, pad, end - j, want, n, out_slot, out_d,
				     general, arg);
	}
	return visited;
}

/* --- eight a step, AVX-512 ---------------------------------------------- */

/* What scan_step512() computes with, broadcast once per scan. */
struct scan_consts512 {
	__m512i one, req_cpu, req_mem, add_cpu, add_mem, past46;
	__m512d hundred, one_d, half, w_cpu, w_mem, w_sum, w_fit, w_bal, fine, sign;
	__mmask8 check_cpu, check_mem; /* all lanes, or none */
};

LS512_TARGET static inline struct scan_consts512 scan_consts512(const struct leaf_fast_plan *k)
{
	return (struct scan_consts512){
		.one = _mm512_set1_epi64(1),
		.req_cpu = _mm512_set1_epi64(k->req_cpu),
		.req_mem = _mm512_set1_epi64(k->req_mem),
		.add_cpu = _mm512_set1_epi64(k->nz_cpu),
		.add_mem = _mm512_set1_epi64(k->nz_mem),
		.past46 = _mm512_set1_epi64(-(INT64_C(1) << 46)),
		.hundred = _mm512_set1_pd((double)MAX_NODE_SCORE),
		.one_d = _mm512_set1_pd(1.0),
		.half = _mm512_set1_pd(0.5),
		.w_cpu = _mm512_set1_pd((double)k->w_cpu),
		.w_mem = _mm512_set1_pd((double)k->w_mem),
		.w_sum = _mm512_set1_pd((double)k->w_sum),
		.w_fit = _mm512_set1_pd((double)k->w_fit),
		.w_bal = _mm512_set1_pd((double)k->w_balanced),
		.fine = _mm512_set1_pd((double)SCORE_FINE),
		.sign = _mm512_set1_pd(-0.0),
		.check_cpu = k->check_cpu ? 0xff : 0,
		.check_mem = k->check_mem ? 0xff : 0,
	};
}

LS512_TARGET static inline __m512d trunc512(__m512d x)
{
	return _mm512_roundscale_pd(x, _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC);
}

/* Eight rows' fields, lane i from row i (struct node_row's order, which
 * the transpose below relies on). */
struct rows8 {
	__m512i pods, ap, uc, ac, um, am, nzc, nzm;
};
_Static_assert(offsetof(struct node_row, alloc_pods) == 8 &&
		       offsetof(struct node_row, cpu) == 16 &&
		       offsetof(struct node_row, alloc_cpu) == 24 &&
		       offsetof(struct node_row, mem) == 32 &&
		       offsetof(struct node_row, alloc_mem) == 40 &&
		       offsetof(struct node_row, nz_cpu) == 48 &&
		       offsetof(struct node_row, nz_mem) == 56,
	       "load_rows8() reads fields 0-7 in this order");

/* The 8 x 8 transpose of the rows of slots[0..7]: unpacks pair two rows'
 * fields per 128-bit lane, then two rounds of 128-bit shuffles gather
 * each field's pairs in row order (0x88 takes lanes 0 and 2 of each
 * source, 0xdd lanes 1 and 3). */
LS512_TARGET static inline struct rows8 load_rows8(const struct leaf_nodes *nd,
						   const uint32_t *slots)
{
#define ROW(i) _mm512_load_si512((const void *)&nd->rows[slots[i]])
	__m512i r0 = ROW(0), r1 = ROW(1), r2 = ROW(2), r3 = ROW(3);
	__m512i r4 = ROW(4), r5 = ROW(5), r6 = ROW(6), r7 = ROW(7);
#undef ROW
	/* Per 128-bit lane j: field 2j (lo) or 2j+1 (hi) of a row pair. */
	__m512i t0 = _mm512_unpacklo_epi64(r0, r1), t1 = _mm512_unpackhi_epi64(r0, r1);
	__m512i t2 = _mm512_unpacklo_epi64(r2, r3), t3 = _mm512_unpackhi_epi64(r2, r3);
	__m512i t4 = _mm512_unpacklo_epi64(r4, r5), t5 = _mm512_unpackhi_epi64(r4, r5);
	__m512i t6 = _mm512_unpacklo_epi64(r6, r7), t7 = _mm512_unpackhi_epi64(r6, r7);
	__m512i u0 = _mm512_shuffle_i64x2(t0, t2, 0x88); /* fields 0, 4 of rows 0-3 */
	__m512i u1 = _mm512_shuffle_i64x2(t0, t2, 0xdd); /* fields 2, 6 */
	__m512i u2 = _mm512_shuffle_i64x2(t1, t3, 0x88); /* fields 1, 5 */
	__m512i u3 = _mm512_shuffle_i64x2(t1, t3, 0xdd); /* fields 3, 7 */
	__m512i u4 = _mm512_shuffle_i64x2(t4, t6, 0x88); /* the same, rows 4-7 */
	__m512i u5 = _mm512_shuffle_i64x2(t4, t6, 0xdd);
	__m512i u6 = _mm512_shuffle_i64x2(t5, t7, 0x88);
	__m512i u7 = _mm512_shuffle_i64x2(t5, t7, 0xdd);
	return (struct rows8){
		.pods = _mm512_shuffle_i64x2(u0, u4, 0x88),
		.um = _mm512_shuffle_i64x2(u0, u4, 0xdd),
		.uc = _mm512_shuffle_i64x2(u1, u5, 0x88),
		.nzc = _mm512_shuffle_i64x2(u1, u5, 0xdd),
		.ap = _mm512_shuffle_i64x2(u2, u6, 0x88),
		.am = _mm512_shuffle_i64x2(u2, u6, 0xdd),
		.ac = _mm512_shuffle_i64x2(u3, u7, 0x88),
		.nzm = _mm512_shuffle_i64x2(u3, u7, 0xdd),
	};
}

/* scan_step() eight a step: the first `lanes` (1..8) of the eight slots
 * at `slot`, in order, while *n < want. The same filter in 64-bit
 * integers, the same exactness test and the same double operations
 * (roundscale truncates as _mm256_round_pd does; the 64-bit conversions
 * are exact on the exact lanes' figures, below 2^46, and on the totals,
 * whole numbers below 2^52). Returns the slots visited. */
LS512_TARGET __attribute__((always_inline)) static inline uint32_t
scan_step512(const struct leaf_fast_plan *k, const struct scan_consts512 *c,
	     const struct leaf_nodes *nd, const uint32_t *slot, unsigned lanes, uint32_t want,
	     uint32_t *n, uint32_t *out_slot, int64_t *out_d, leaf_general_fn general,
	     void *arg)
{
	struct rows8 r = load_rows8(nd, slot);
	__mmask8 fail = _mm512_cmpgt_epi64_mask(_mm512_add_epi64(r.pods, c->one), r.ap);
	fail |= c->check_cpu & _mm512_cmpgt_epi64_mask(c->req_cpu, _mm512_sub_epi64(r.ac, r.uc));
	fail |= c->check_mem & _mm512_cmpgt_epi64_mask(c->req_mem, _mm512_sub_epi64(r.am, r.um));
	unsigned failed = fail, all = (1u << lanes) - 1;
	if ((failed & all) == all)
		return lanes;
	__m512i rc = _mm512_add_epi64(r.nzc, c->add_cpu), rm = _mm512_add_epi64(r.nzm, c->add_mem);
	__m512i bc = _mm512_add_epi64(r.uc, c->req_cpu), bm = _mm512_add_epi64(r.um, c->req_mem);
	/* Exact lanes: every figure in [0, 2^46) and neither allocatable 0
	 * (scan_step()'s test). */
	__m512i any = _mm512_or_si512(_mm512_or_si512(_mm512_or_si512(r.ac, r.am),
						      _mm512_or_si512(bc, bm)),
				      _mm512_or_si512(rc, rm));
	__mmask8 exact = _mm512_testn_epi64_mask(any, c->past46) &
			 _mm512_test_epi64_mask(r.ac, r.ac) & _mm512_test_epi64_mask(r.am, r.am);
	unsigned scalar = (unsigned)(__mmask8)(~exact & ~fail);
	/* NodeResourcesFit's score, as scan_step(). */
	__mmask8 over_c = _mm512_cmpgt_epi64_mask(rc, r.ac), over_m = _mm512_cmpgt_epi64_mask(rm, r.am);
	__m512i xc, xm;
	if (k->most) {
		xc = _mm512_mask_blend_epi64(over_c, rc, r.ac);
		xm = _mm512_mask_blend_epi64(over_m, rm, r.am);
	} else {
		xc = _mm512_maskz_sub_epi64((__mmask8)~over_c, r.ac, rc);
		xm = _mm512_maskz_sub_epi64((__mmask8)~over_m, r.am, rm);
	}
	__m512d dc = _mm512_cvtepi64_pd(r.ac), dm = _mm512_cvtepi64_pd(r.am);
	__m512d sc = trunc512(_mm512_div_pd(_mm512_mul_pd(_mm512_cvtepi64_pd(xc), c->hundred), dc));
	__m512d sm = trunc512(_mm512_div_pd(_mm512_mul_pd(_mm512_cvtepi64_pd(xm), c->hundred), dm));
	__m512d fit = k->w_sum == 0
			      ? _mm512_setzero_pd()
			      : trunc512(_mm512_div_pd(_mm512_add_pd(_mm512_mul_pd(sc, c->w_cpu),
								     _mm512_mul_pd(sm, c->w_mem)),
						       c->w_sum));
	/* BalancedAllocation's. */
	__m512d fc = _mm512_min_pd(_mm512_div_pd(_mm512_cvtepi64_pd(bc), dc), c->one_d);
	__m512d fm = _mm512_min_pd(_mm512_div_pd(_mm512_cvtepi64_pd(bm), dm), c->one_d);
	__m512d std = _mm512_andnot_pd(c->sign, _mm512_mul_pd(_mm512_sub_pd(fc, fm), c->half));
	__m512d bal = trunc512(_mm512_mul_pd(_mm512_sub_pd(c->one_d, std), c->hundred));
	__m512d total = _mm512_mul_pd(c->fine, _mm512_add_pd(_mm512_mul_pd(c->w_fit, fit),
							     _mm512_mul_pd(c->w_bal, bal)));
	__m512i d_all = _mm512_cvttpd_epi64(total);
	unsigned passing = ~failed & all;
	if (lanes == 8 && scalar == 0 && *n + 8 <= want) {
		/* All eight visited, `want` not reached: the passing lanes
		 * compressed to the front in slot order. */
		__m256i s8 = _mm256_loadu_si256((const __m256i *)(const void *)slot);
		_mm512_storeu_si512((void *)(out_d + *n),
				    _mm512_maskz_compress_epi64((__mmask8)passing, d_all));
		_mm256_storeu_si256((__m256i *)(void *)(out_slot + *n),
				    _mm256_maskz_compress_epi32((__mmask8)passing, s8));
		*n += (unsigned)__builtin_popcount(passing);
		return 8;
	}
	int64_t d[8];
	_mm512_storeu_si512((void *)d, d_all);
	return take_lanes(k, nd, slot, lanes, failed, scalar, d, want, n, out_slot, out_d,
			  general, arg);
}

LS512_TARGET static uint32_t scan_avx512(const struct leaf_fast_plan *k,
					 const struct leaf_nodes *nd, const uint32_t *feasible,
					 uint32_t j, uint32_t end, uint32_t want, uint32_t *n,
					 uint32_t *out_slot, int64_t *out_d,
					 leaf_general_fn general, void *arg)
{
	const struct scan_consts512 c = scan_consts512(k);
	uint32_t visited = 0;
	for (uint32_t i = j; i < end && i < j + PREFETCH_AHEAD + 8; i++)
		_mm_prefetch((const char *)&nd->rows[feasible[i]], _MM_HINT_T0);
	for (; j + 8 <= end && *n < want; j += 8) {
		prefetch_rows(nd, feasible, j, end);
		prefetch_rows(nd, feasible, j + 4, end);
		visited += scan_step512(k, &c, nd, feasible + j, 8, want, n, out_slot, out_d,
					general, arg);
	}
	if (j < end && *n < want) {
		uint32_t pad[8];
		pad_tail(feasible + j, end - j, 8, pad);
		visited += scan_step512(k, &c, nd, pad, end - j, want, n, out_slot, out_d,
					general, arg);
	}
	return visited;
}
#endif

/* --- reasons ------------------------------------------------------------- */

static void reasons_scalar(const struct leaf_fast_plan *k, const struct leaf_nodes *nd,
			   const uint32_t *feasible, uint32_t n, uint32_t counts[LEAF_REASONS])
{
	for (uint32_t j = 0; j < n; j++) {
		uint32_t slot = feasible[j];
		int64_t d;
		bool gen = false;
		uint32_t m = leaf_at(k, nd, slot, &d, &gen);
		counts[LEAF_REASON_PODS] += (m & MASK_PODS) != 0;
		counts[LEAF_REASON_CPU] += (m & MASK_RES(RES_CPU)) != 0;
		counts[LEAF_REASON_MEMORY] += (m & MASK_RES(RES_MEMORY)) != 0;
	}
}

#if LS_X86
/* The refusals of the lanes in `lanes` (bits), counted by reason. */
LS_TARGET static inline void count_reasons(const struct refusals *f, unsigned lanes,
					   uint32_t counts[LEAF_REASONS])
{
	counts[LEAF_REASON_PODS] += (uint32_t)__builtin_popcount(lane_bits(f->pods) & lanes);
	counts[LEAF_REASON_CPU] += (uint32_t)__builtin_popcount(lane_bits(f->cpu) & lanes);
	counts[LEAF_REASON_MEMORY] += (uint32_t)__builtin_popcount(lane_bits(f->mem) & lanes);
}

/* scan_avx2()'s filter, its three reasons counted apart. */
LS_TARGET static void reasons_avx2(const struct leaf_fast_plan *k,
				   const struct leaf_nodes *nd, const uint32_t *feasible,
				   uint32_t n, uint32_t counts[LEAF_REASONS])
{
	const struct filter_consts cst = filter_consts(k);
	uint32_t j = 0;
	for (; j + 4 <= n; j += 4) {
		prefetch_rows(nd, feasible, j, n);
		struct lanes l = load_lanes(nd, feasible + j);
		struct refusals f = refuse_lanes(&cst, &l);
		count_reasons(&f, 0xf, counts);
	}
	if (j < n) {
		uint32_t pad[4];
		pad_tail(feasible + j, n - j, 4, pad);
		struct lanes l = load_lanes(nd, pad);
		struct refusals f = refuse_lanes(&cst, &l);
		count_reasons(&f, (1u << (n - j)) - 1, counts);
	}
}
#endif

void leaf_reasons(const struct leaf_fast_plan *k, const struct leaf_nodes *nodes,
		  const uint32_t *feasible, uint32_t n, uint32_t counts[LEAF_REASONS])
{
	for (unsigned r = 0; r < LEAF_REASONS; r++)
		counts[r] = 0;
#if LS_X86
	if (simd_on()) {
		reasons_avx2(k, nodes, feasible, n, counts);
		return;
	}
#endif
	reasons_scalar(k, nodes, feasible, n, counts);
}

/* The plan's weights in [0, 2^20]: the scores' doubles stay exact. */
static bool weights_fit(const struct leaf_fast_plan *k)
{
	const int64_t w[] = {k->w_fit, k->w_balanced, k->w_cpu, k->w_mem, k->w_sum};
	for (size_t i = 0; i < sizeof(w) / sizeof(w[0]); i++)
		if (w[i] < 0 || w[i] > (INT64_C(1) << 20))
			return false;
	return true;
}

void leaf_plans_init(struct leaf_plans *p, const struct leaf_fast_plan *const *k,
		     unsigned n)
{
	memset(p, 0, sizeof(*p));
	for (unsigned i = 0; i < 4; i++) {
		/* Lanes past n repeat plan 0 and are not taken. */
		const struct leaf_fast_plan *q = k[i < n ? i : 0];
		p->req_cpu[i] = q->req_cpu;
		p->req_mem[i] = q->req_mem;
		p->nz_cpu[i] = q->nz_cpu;
		p->nz_mem[i] = q->nz_mem;
		p->check_cpu[i] = q->check_cpu ? -1 : 0;
		p->check_mem[i] = q->check_mem ? -1 : 0;
		p->most[i] = q->most ? -1 : 0;
		p->w_cpu[i] = (double)q->w_cpu;
		p->w_mem[i] = (double)q->w_mem;
		p->w_sum[i] = (double)q->w_sum;
		p->w_fit[i] = (double)q->w_fit;
		p->w_bal[i] = (double)q->w_balanced;
		if (i < n && weights_fit(q))
			p->lanes |= 1u << i;
	}
}

#if LS_X86
#define LOAD_I(a) _mm256_loadu_si256((const __m256i *)(const void *)(a))

/* scan_step()'s filter and scores with the lanes the other way round:
 * four plans, one node. The same operations, so the same exactness. */
LS_TARGET static unsigned plans_avx2(const struct leaf_plans *p, const struct leaf_node *v,
				     uint32_t m[4], int64_t d[4])
{
	__m256i req_cpu = LOAD_I(p->req_cpu), req_mem = LOAD_I(p->req_mem);
	__m256i uc = _mm256_set1_epi64x(v->uc), um = _mm256_set1_epi64x(v->um);
	__m256i ac = _mm256_set1_epi64x(v->ac), am = _mm256_set1_epi64x(v->am);
	__m256i f_cpu = _mm256_and_si256(LOAD_I(p->check_cpu), _mm256_cmpgt_epi64(
						 req_cpu, _mm256_set1_epi64x(v->ac - v->uc)));
	__m256i f_mem = _mm256_and_si256(LOAD_I(p->check_mem), _mm256_cmpgt_epi64(
						 req_mem, _mm256_set1_epi64x(v->am - v->um)));
	/* The reasons by lane, then the lanes that refuse. */
	__m256i mv = _mm256_or_si256(
		_mm256_and_si256(f_cpu, _mm256_set1_epi64x(MASK_RES(RES_CPU))),
		_mm256_and_si256(f_mem, _mm256_set1_epi64x(MASK_RES(RES_MEMORY))));
	if (v->pods + 1 > v->ap)
		mv = _mm256_or_si256(mv, _mm256_set1_epi64x(MASK_PODS));
	__m256i pass = _mm256_cmpeq_epi64(mv, _mm256_setzero_si256());
	unsigned refused = lane_bits(pass) ^ 0xfu;
	/* The reasons, each lane's low half, as four 32-bit words. */
	_mm_storeu_si128((__m128i *)(void *)m, _mm256_castsi256_si128(_mm256_permutevar8x32_epi32(
						       mv, _mm256_setr_epi32(0, 2, 4, 6, 0, 2, 4, 6))));
	if ((refused & p->lanes) == p->lanes) {
		/* Every plan refuses the node (a full node, the common
		 * change late in a run): no scores to compute. */
		_mm256_storeu_si256((__m256i *)(void *)d, _mm256_setzero_si256());
		return p->lanes;
	}
	__m256i rc = _mm256_add_epi64(_mm256_set1_epi64x(v->nz_cpu), LOAD_I(p->nz_cpu));
	__m256i rm = _mm256_add_epi64(_mm256_set1_epi64x(v->nz_mem), LOAD_I(p->nz_mem));
	__m256i bc = _mm256_add_epi64(uc, req_cpu), bm = _mm256_add_epi64(um, req_mem);
	/* Lanes whose doubles are exact (see the header); the allocatables
	 * are the node's, one test for all four. */
	bool alloc_ok = v->ac >= 1 && v->ac < (INT64_C(1) << 46) && v->am >= 1 &&
			v->am < (INT64_C(1) << 46);
	__m256i exact = _mm256_and_si256(within(bc, 0, INT64_C(1) << 52),
					 within(bm, 0, INT64_C(1) << 52));
	exact = _mm256_and_si256(exact, _mm256_and_si256(
					 _mm256_cmpgt_epi64(rc, _mm256_set1_epi64x(-1)),
					 _mm256_cmpgt_epi64(rm, _mm256_set1_epi64x(-1))));
	unsigned exact_bits = alloc_ok ? lane_bits(exact) : 0;
	/* NodeResourcesFit's score, LeastAllocated or MostAllocated by lane. */
	__m256i over_c = _mm256_cmpgt_epi64(rc, ac), over_m = _mm256_cmpgt_epi64(rm, am);
	__m256i most = LOAD_I(p->most);
	__m256i xc = _mm256_blendv_epi8(_mm256_andnot_si256(over_c, _mm256_sub_epi64(ac, rc)),
					_mm256_blendv_epi8(rc, ac, over_c), most);
	__m256i xm = _mm256_blendv_epi8(_mm256_andnot_si256(over_m, _mm256_sub_epi64(am, rm)),
					_mm256_blendv_epi8(rm, am, over_m), most);
	const __m256d hundred = _mm256_set1_pd((double)MAX_NODE_SCORE);
	const __m256d one = _mm256_set1_pd(1.0);
	__m256d dc = _mm256_set1_pd((double)v->ac), dm = _mm256_set1_pd((double)v->am);
	__m256d sc = trunc_pd(_mm256_div_pd(_mm256_mul_pd(to_double(xc), hundred), dc));
	__m256d sm = trunc_pd(_mm256_div_pd(_mm256_mul_pd(to_double(xm), hundred), dm));
	__m256d w_sum = _mm256_loadu_pd(p->w_sum);
	/* A plan with w_sum 0 scores its fit 0 (0/0 here is NaN: masked). */
	__m256d fit = _mm256_andnot_pd(
		_mm256_cmp_pd(w_sum, _mm256_setzero_pd(), _CMP_EQ_OQ),
		trunc_pd(_mm256_div_pd(_mm256_add_pd(_mm256_mul_pd(sc, _mm256_loadu_pd(p->w_cpu)),
						     _mm256_mul_pd(sm, _mm256_loadu_pd(p->w_mem))),
				       w_sum)));
	/* BalancedAllocation's: the same double operations. */
	__m256d fc = _mm256_min_pd(_mm256_div_pd(to_double(bc), dc), one);
	__m256d fm = _mm256_min_pd(_mm256_div_pd(to_double(bm), dm), one);
	__m256d std = _mm256_andnot_pd(_mm256_set1_pd(-0.0),
				       _mm256_mul_pd(_mm256_sub_pd(fc, fm), _mm256_set1_pd(0.5)));
	__m256d bal = trunc_pd(_mm256_mul_pd(_mm256_sub_pd(one, std), hundred));
	__m256d total = _mm256_mul_pd(_mm256_set1_pd((double)SCORE_FINE),
				      _mm256_add_pd(_mm256_mul_pd(_mm256_loadu_pd(p->w_fit), fit),
						    _mm256_mul_pd(_mm256_loadu_pd(p->w_bal), bal)));
	/* A passing lane's score; 0 where it refuses. */
	_mm256_storeu_si256((__m256i *)(void *)d, _mm256_and_si256(pass, to_int(total)));
	/* A lane that passes needs exact scores; a refusal does not. */
	return (refused | exact_bits) & p->lanes;
}
#undef LOAD_I
#endif

unsigned leaf_fast_plans(const struct leaf_plans *p, const struct leaf_node *v,
			 uint32_t m[4], int64_t d[4])
{
#if LS_X86
	if (simd_on())
		return plans_avx2(p, v, m, d);
#endif
	(void)p;
	(void)v;
	(void)m;
	(void)d;
	return 0;
}

uint32_t leaf_scan(const struct leaf_fast_plan *k, const struct leaf_nodes *nodes,
		   const uint32_t *feasible, uint32_t from, uint32_t end,
		   uint32_t want, uint32_t *n, uint32_t *out_slot, int64_t *out_d,
		   leaf_general_fn general, void *arg)
{
#if LS_X86
	if (simd_on() && weights_fit(k))
		return simd_switch_on(&avx512)
			       ? scan_avx512(k, nodes, feasible, from, end, want, n, out_slot,
					     out_d, general, arg)
			       : scan_avx2(k, nodes, feasible, from, end, want, n, out_slot,
					   out_d, general, arg);
#else
	(void)weights_fit;
#endif
	return scan_scalar(k, nodes, feasible, from, end, want, n, out_slot, out_d,
			   general, arg);
}
