/* Laying out a section: consecutive pieces, each at a given alignment,
 * from the start of a span. The same walk computes a section's size (a
 * carve over no memory) and then finds its pieces in a mapping, so the two
 * can never disagree.
 */
#ifndef SHMSCHED_SHM_CARVE_H
#define SHMSCHED_SHM_CARVE_H

#include <stdbool.h>
#include <stdint.h>

#include "shm/offset.h"

struct shm_carve {
	struct shm_span span; /* base NULL: only measure */
	uint64_t used;        /* bytes laid out so far */
	bool overflow;        /* a piece did not fit the span */
};

/* The next piece of `size` bytes at a multiple of `align` (a power of
 * two): its address, or NULL when only measuring or when it does not fit
 * (then `overflow` is set). */
static inline void *shm_carve_next(struct shm_carve *c, uint64_t size,
				   uint64_t align)
{
	uint64_t off = (c->used + align - 1) & ~(align - 1);
	c->used = off + size;
	if (c->span.base == NULL)
		return NULL;
	void *p = shm_span_at(c->span, off, size);
	if (p == NULL)
		c->overflow = true;
	return p;
}

#endif
