/* A small, fast, seedable random stream (splitmix64) and uniform draws
 * from it: for tie-breaks, start offsets and shuffles, where the same seed
 * must give the same answers. Not for anything secret.
 */
#ifndef SHMSCHED_BASE_RNG_H
#define SHMSCHED_BASE_RNG_H

#include <stdint.h>

/* The next value of the stream in *state (splitmix64). */
static inline uint64_t rng_next(uint64_t *state)
{
	uint64_t z = (*state += UINT64_C(0x9e3779b97f4a7c15));
	z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
	z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
	return z ^ (z >> 31);
}

/* splitmix64 of x without a stream: the value rng_next() returns from the
 * state x. A bijection, for hashing an index into a well-mixed value. */
static inline uint64_t rng_hash(uint64_t x)
{
	return rng_next(&x);
}

/* Uniform in [0, n) for n > 0 (Lemire's multiply-shift; the tiny bias is
 * irrelevant to tie-breaking, start offsets and shuffles). */
static inline uint64_t rng_below(uint64_t *state, uint64_t n)
{
	__extension__ typedef unsigned __int128 u128; /* GCC and clang have it */
	return (uint64_t)(((u128)rng_next(state) * n) >> 64);
}

#endif
