/* Laying out a section: consecutive pieces, each at a given alignment,
 * from the start of a span. The same walk computes a section's size (a
 * carve over no memory) and then finds its pieces in a mapping, so the two
 * can never disagree.
 */
#ifndef SHMSCHED_SHM_CARVE_H
#define SHMSCHED_SHM_CARVE_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/mman.h>

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

/* Private memory for a table made outside the state region (tests, the
 * engine in process): anonymous zero pages, backed only as they are
 * written, laid out by the same carve as a section. A span with base
 * NULL when it cannot be had (size 0, or the mmap failed). */
static inline struct shm_span shm_span_private(uint64_t size)
{
	void *p = size == 0 ? MAP_FAILED
		  : mmap(NULL, size, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	return p == MAP_FAILED ? (struct shm_span){NULL, 0}
			       : (struct shm_span){p, size};
}

/* Gives back shm_span_private()'s memory; a span with base NULL: nothing. */
static inline void shm_span_release(struct shm_span span)
{
	if (span.base != NULL)
		munmap(span.base, span.size);
}

#endif
