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

#include <errno.h>
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

/* The daemon's end of a ring whose memory a producer can write at any time
 * (docs/concepts.md, invariant 5: untrusted memory).
 *
 * The ring functions above read the ring's geometry (size, mask, capacity)
 * and both sides' indices from the shared memory itself: a producer that
 * rewrites them could make the daemon read or write anywhere. A guard keeps
 * the geometry the daemon made the ring with, and the daemon's own index,
 * in the daemon's private memory; from shared memory it reads only the
 * other side's index and the handles, as untrusted data: the index is
 * checked against the daemon's own before it bounds anything, and every
 * table access is masked with the private mask. The daemon writes its
 * index back to shared memory for the producer's benefit and never reads
 * it from there.
 *
 * The producer's side keeps using the plain functions (it may hurt only
 * itself). Orderings: G1, the guard loads the peer's index with acquire
 * (partner: the peer's release store of its tail, RP2/RC2 in the ring
 * implementation); G2, the guard stores its own tail with release (partner:
 * the peer's acquire load). Handles are loaded and stored relaxed: the
 * producer may be rewriting them; G1 and G2 order them.
 *
 * One thread at a time per guard, as for the ring's side it stands for. */
struct ring_guard {
	uint64_t *table;         /* the ring's entries */
	const uint32_t *peer;    /* the other side's tail: untrusted */
	uint32_t *own_head;      /* where this side's indices are published */
	uint32_t *own_tail;      /*   (written only, never read back) */
	uint32_t mask;           /* count - 1, private */
	uint32_t capacity;       /* handles it holds, private */
	uint32_t head;           /* this side's index, private */
};

enum ring_guard_side {
	RING_GUARD_CONSUMER = 1, /* the daemon dequeues (a submit ring) */
	RING_GUARD_PRODUCER = 2, /* the daemon enqueues (a completion ring) */
};

/* Sets up a guard for a ring this process made with ring_init(mem, ...,
 * count), before any other process could write it: the indices are then
 * the initial ones. Returns 0, or -EINVAL for a bad count or side. */
int ring_guard_init(struct ring_guard *g, struct ring *r, unsigned count,
		    enum ring_guard_side side);

/* Consumer side: dequeues up to `n` handles. Returns how many, or -EPROTO
 * (nothing dequeued) when the producer's index claims more handles than
 * the ring holds: the producer broke the ring, and only it is affected. */
int ring_guard_dequeue(struct ring_guard *g, uint64_t *handles, unsigned n);

/* Producer side: enqueues up to `n` handles. Returns how many (0 when
 * full), or -EPROTO (nothing enqueued) when the consumer's index is ahead
 * of the daemon's or further behind than the ring holds. */
int ring_guard_enqueue(struct ring_guard *g, const uint64_t *handles, unsigned n);

/* Handles waiting on the peer's side of a consumer guard, or -EPROTO if
 * the peer's index is impossible. Any thread: both indices are read
 * relaxed, as a figure for logs and the shutdown drain. */
static inline int ring_guard_pending(const struct ring_guard *g)
{
	uint32_t avail = __atomic_load_n(g->peer, __ATOMIC_RELAXED) -
			 __atomic_load_n(&g->head, __ATOMIC_RELAXED);
	return avail > g->capacity ? -EPROTO : (int)avail;
}

/* "dpdk" or "fake": which implementation this program links. */
const char *ring_impl_name(void);

#endif
