/* Offsets, not pointers, inside shared memory.
 *
 * A region is mapped at a different address in each process, so anything
 * stored in it refers to other parts of it by byte offset from its start.
 * These helpers turn offsets into pointers and back, with the bounds check
 * that untrusted offsets (read from a peer's memory) need.
 */
#ifndef SHMSCHED_SHM_OFFSET_H
#define SHMSCHED_SHM_OFFSET_H

#include <stddef.h>
#include <stdint.h>

/* A mapped range: a region, or one of its sections. */
struct shm_span {
	void *base;
	uint64_t size;
};

/* Returns a pointer to `len` bytes at `off` inside `span`, or NULL when any
 * of them falls outside it (overflow-safe: off and len may be anything). */
static inline void *shm_span_at(struct shm_span span, uint64_t off, uint64_t len)
{
	if (len > span.size || off > span.size - len)
		return NULL;
	return (char *)span.base + off;
}

/* Returns the offset of `p` from the span's start. `p` must point inside
 * the span or one past its end: offsets are only taken of our own pointers. */
static inline uint64_t shm_span_offset(struct shm_span span, const void *p)
{
	return (uint64_t)((const char *)p - (const char *)span.base);
}

/* True when `p` (`len` bytes) lies inside the span. */
static inline int shm_span_contains(struct shm_span span, const void *p, uint64_t len)
{
	uintptr_t b = (uintptr_t)span.base, q = (uintptr_t)p;
	return q >= b && len <= span.size && q - b <= span.size - len;
}

#endif
