/* Rings of 8-byte handles in shared memory: one producer, one consumer.
 *
 * The rest of the tree uses this API, never DPDK directly. Two
 * implementations link against it: ring_dpdk.c (DPDK rte_ring, initialised
 * in place with rte_ring_init, no EAL) for the daemon and its clients, and
 * ring_fake.c, a plain C11 ring with the same behaviour for unit tests that
 * should not depend on DPDK. A program links exactly one of them.
 *
 * Rings carry handles (slot indices, ids), never records: copying 8 bytes a
 * burst is what makes the round trip cheap.
 *
 * Concurrency contract: at most one thread (in any process) enqueues and at
 * most one thread dequeues on a ring at a time; they may be in different
 * processes that map the ring at different addresses. An enqueue makes the
 * handles it wrote visible to the dequeue that returns them (release on the
 * producer's tail, acquire by the consumer). ring_count() is a snapshot that
 * may be stale by the time it returns.
 */
#ifndef SHMSCHED_SHM_RING_H
#define SHMSCHED_SHM_RING_H

#include <stddef.h>
#include <stdint.h>

struct ring;

/* Bytes of memory a ring of `count` slots needs (count a power of two,
 * 2..2^28; it holds count - 1 handles). Returns 0 for a bad count. */
size_t ring_memsize(unsigned count);

/* Initialises a ring in `mem` (`mem_size` bytes, 64-byte aligned, at least
 * ring_memsize(count)). `name` is informational, up to 31 characters.
 * Returns the ring, which is `mem` itself, or NULL with errno EINVAL. */
struct ring *ring_init(void *mem, size_t mem_size, unsigned count,
		       const char *name);

/* Checks that `mem` holds a ring that ring_init() made for `count` slots
 * and fits in `mem_size`: what a process that attached the memory calls
 * before using it. Returns the ring, or NULL with errno EPROTO. */
struct ring *ring_attach(void *mem, size_t mem_size, unsigned count);

/* Enqueues up to `n` handles; returns how many (0 when full). */
unsigned ring_enqueue_burst(struct ring *r, const uint64_t *handles, unsigned n);

/* Dequeues up to `n` handles into `handles`; returns how many (0 when empty). */
unsigned ring_dequeue_burst(struct ring *r, uint64_t *handles, unsigned n);

/* Handles in the ring now, and most it can hold. */
unsigned ring_count(const struct ring *r);
unsigned ring_capacity(const struct ring *r);

/* "dpdk" or "fake": which implementation this program links. */
const char *ring_impl_name(void);

#endif
