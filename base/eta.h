/* The time a job of countable steps has left, from the rate it has shown
 * so far (issue 38: a drain's ETA, printed by `shmsched node drain` and
 * reported as etaSeconds by the gateway's GET /v1/nodes/{name}/drain).
 * Pure arithmetic on what the caller observed: no clock, no state. */
#ifndef SHMSCHED_BASE_ETA_H
#define SHMSCHED_BASE_ETA_H

#include <stdbool.h>
#include <stdint.h>

enum eta_kind {
	ETA_KNOWN,   /* seconds and per_second are set */
	ETA_UNKNOWN, /* no rate yet: nothing done, or no time elapsed */
	ETA_BLOCKED, /* steps are left and something holds every one */
};

struct eta {
	enum eta_kind kind;
	double seconds;    /* left / per_second; 0 when nothing is left */
	double per_second; /* done / elapsed; 0 when not known */
};

/* `done` steps in `elapsed_ns`, `left` to go; `blocked`: the last attempt
 * did nothing while steps were left (a budget or an approval holds them).
 * Nothing left is KNOWN with 0 s whatever else holds; else blocked is
 * BLOCKED; else done == 0 or elapsed_ns == 0 is UNKNOWN. In doubles:
 * any uint64_t input gives a finite, non-negative answer. */
struct eta eta_estimate(uint64_t done, uint64_t elapsed_ns, uint64_t left,
			bool blocked);

#endif
