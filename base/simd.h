/* A run-time switch between a SIMD form of a loop and its scalar twin:
 * on when the CPU has AVX2 and POPCNT (SIMD_SWITCH_INIT), or for an
 * AVX-512 form AVX-512 F, DQ, VL and BW as well (SIMD512_SWITCH_INIT),
 * checked once per switch, the first time it is asked; off on other CPUs
 * and other architectures; tests turn it off to compare the twins.
 * workers/class_index.c, workers/candidates.c and workers/leaf_scan.c
 * each keep one (leaf_scan.c one of each width).
 *
 * The state is atomic, relaxed (SIMD): engines on several threads may ask
 * first at once, and each decides the same from the CPU, so any order of
 * their stores leaves the same value; nothing else is published by it.
 * simd_switch_set() (tests) runs while no other thread asks. */
#ifndef SHMSCHED_BASE_SIMD_H
#define SHMSCHED_BASE_SIMD_H

#include <stdbool.h>

struct simd_switch {
	int state; /* -1 not decided yet; 0 scalar; 1 SIMD */
	int width; /* 256: AVX2; 512: AVX-512 */
};

#define SIMD_SWITCH_INIT {-1, 256}
#define SIMD512_SWITCH_INIT {-1, 512}

/* Whether the CPU has what a switch of `width` needs. */
static inline bool simd_cpu_has(int width)
{
#if defined(__x86_64__)
	__builtin_cpu_init();
	bool has = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("popcnt");
	if (width == 512)
		has = has && __builtin_cpu_supports("avx512f") &&
		      __builtin_cpu_supports("avx512dq") &&
		      __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512bw");
	return has;
#else
	(void)width;
	return false;
#endif
}

/* Whether the SIMD form runs. */
static inline bool simd_switch_on(struct simd_switch *s)
{
	int st = __atomic_load_n(&s->state, __ATOMIC_RELAXED); /* SIMD */
	if (st < 0) {
		st = simd_cpu_has(s->width);
		__atomic_store_n(&s->state, st, __ATOMIC_RELAXED); /* SIMD */
	}
	return st == 1;
}

/* Whether it is on, without deciding: for hot loops whose set-up
 * called simd_switch_on() first. */
static inline bool simd_switch_is_on(const struct simd_switch *s)
{
	return __atomic_load_n(&s->state, __ATOMIC_RELAXED) == 1; /* SIMD */
}

/* Off, or back to what the CPU has; returns whether it was on. */
static inline bool simd_switch_set(struct simd_switch *s, bool on)
{
	bool was = simd_switch_on(s);
	__atomic_store_n(&s->state, on ? -1 : 0, __ATOMIC_RELAXED); /* SIMD */
	(void)simd_switch_on(s);
	return was;
}

#endif
