/* Stress tests that must see conflicts to prove anything about them. A
 * round takes tens to hundreds of milliseconds: on a machine busy enough
 * to run its workers one after another it may see none
 * (stress.resolver_threads did once in a full run of the suites), so a
 * test runs rounds on a fresh cluster until one does, 10 at most, each
 * round checking every invariant itself. */
#ifndef SHMSCHED_TESTS_STRESS_ROUNDS_H
#define SHMSCHED_TESTS_STRESS_ROUNDS_H

#include <stdint.h>

#define ROUNDS_MAX 10

/* Runs round(pods) until it returns conflicts (> 0) or ROUNDS_MAX have
 * run; returns the last round's conflicts, and how many ran in *rounds. */
static inline uint64_t rounds_until_conflicts(uint64_t (*round)(uint64_t), uint64_t pods,
					      unsigned *rounds)
{
	uint64_t conflicts = 0;
	for (*rounds = 0; conflicts == 0 && *rounds < ROUNDS_MAX; (*rounds)++)
		conflicts = round(pods);
	return conflicts;
}

#endif
