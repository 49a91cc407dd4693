/* A run-time switch between a SIMD form of a loop and its scalar twin:
 * on when the CPU has AVX2 and POPCNT (checked once per switch, the
 * first time it is asked), off on other CPUs and other architectures;
 * tests turn it off to compare the twins. workers/class_index.c and
 * workers/leaf_scan.c each keep one.
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
};

#define SIMD_SWITCH_INIT {-1}

/* Whether the SIMD form runs. */
static inline bool simd_switch_on(struct simd_switch *s)
{
	int st = __atomic_load_n(&s->state, __ATOMIC_RELAXED); /* SIMD */
	if (st < 0) {
#if defined(__x86_64__)
		__builtin_cpu_init();
		st = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("popcnt");
#else
		st = 0;
#endif
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
