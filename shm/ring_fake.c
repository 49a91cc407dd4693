/* shm/ring.h without DPDK: a plain single-producer/single-consumer ring.
 *
 * For unit tests that should not depend on DPDK, and as a second, simple
 * implementation of the same contract that the ring tests run against.
 * Indices are free-running 32-bit counters; slot = index & mask.
 *
 * Orderings (those of DPDK's rte_ring_c11_pvt.h; labels RP for the
 * producer, RC for the consumer):
 *   RP1: producer loads cons_tail, acquire — partner RC2: the consumer has
 *       finished reading the slots it released before the producer reuses them.
 *   RP2: producer stores prod_tail, release — partner RC1: the handles written
 *       before it are visible to the consumer that sees the new tail.
 *   RC1: consumer loads prod_tail, acquire — partner RP2.
 *   RC2: consumer stores cons_tail, release — partner RP1.
 * Each side's own tail is read relaxed: only that side writes it.
 */
#include "shm/ring.h"

#include <errno.h>
#include <string.h>

#define FAKE_MAGIC 0x46414b4552494e47ull /* "GNIREKAF" */
#define CACHE_LINE 64

struct ring {
	uint64_t magic;
	uint32_t size;
	uint32_t mask;
	char name[32];
	_Alignas(CACHE_LINE) uint32_t prod_tail; /* written by the producer */
	_Alignas(CACHE_LINE) uint32_t cons_tail; /* written by the consumer */
	_Alignas(CACHE_LINE) uint64_t slots[];
};

static int count_ok(unsigned count)
{
	return count >= 2 && count <= (1u << 28) && (count & (count - 1)) == 0;
}

size_t ring_memsize(unsigned count)
{
	if (!count_ok(count))
		return 0;
	return sizeof(struct ring) + (size_t)count * sizeof(uint64_t);
}

struct ring *ring_init(void *mem, size_t mem_size, unsigned count,
		       const char *name)
{
	size_t need = ring_memsize(count);
	if (mem == NULL || need == 0 || mem_size < need ||
	    ((uintptr_t)mem % CACHE_LINE) != 0) {
		errno = EINVAL;
		return NULL;
	}
	struct ring *r = mem;
	memset(r, 0, sizeof(*r));
	r->magic = FAKE_MAGIC;
	r->size = count;
	r->mask = count - 1;
	strncpy(r->name, name ? name : "shmsched", sizeof(r->name) - 1);
	return r;
}

struct ring *ring_attach(void *mem, size_t mem_size, unsigned count)
{
	struct ring *r = mem;
	size_t need = ring_memsize(count);
	if (mem == NULL || need == 0 || mem_size < need ||
	    ((uintptr_t)mem % CACHE_LINE) != 0 || r->magic != FAKE_MAGIC ||
	    r->size != count || r->mask != count - 1) {
		errno = EPROTO;
		return NULL;
	}
	return r;
}

unsigned ring_enqueue_burst(struct ring *r, const uint64_t *handles, unsigned n)
{
	uint32_t head = __atomic_load_n(&r->prod_tail, __ATOMIC_RELAXED);
	uint32_t cons = __atomic_load_n(&r->cons_tail, __ATOMIC_ACQUIRE); /* RP1 */
	uint32_t free_slots = r->mask - (head - cons);
	if (n > free_slots)
		n = free_slots;
	for (unsigned i = 0; i < n; i++)
		r->slots[(head + i) & r->mask] = handles[i];
	__atomic_store_n(&r->prod_tail, head + n, __ATOMIC_RELEASE); /* RP2 */
	return n;
}

unsigned ring_dequeue_burst(struct ring *r, uint64_t *handles, unsigned n)
{
	uint32_t head = __atomic_load_n(&r->cons_tail, __ATOMIC_RELAXED);
	uint32_t prod = __atomic_load_n(&r->prod_tail, __ATOMIC_ACQUIRE); /* RC1 */
	uint32_t avail = prod - head;
	if (n > avail)
		n = avail;
	for (unsigned i = 0; i < n; i++)
		handles[i] = r->slots[(head + i) & r->mask];
	__atomic_store_n(&r->cons_tail, head + n, __ATOMIC_RELEASE); /* RC2 */
	return n;
}

unsigned ring_count(const struct ring *r)
{
	/* Relaxed: a snapshot that orders nothing. */
	uint32_t prod = __atomic_load_n(&r->prod_tail, __ATOMIC_RELAXED);
	uint32_t cons = __atomic_load_n(&r->cons_tail, __ATOMIC_RELAXED);
	uint32_t count = prod - cons;
	return count > r->mask ? r->mask : count;
}

unsigned ring_capacity(const struct ring *r)
{
	return r->mask;
}

int ring_guard_init(struct ring_guard *g, struct ring *r, unsigned count,
		    enum ring_guard_side side)
{
	if (!count_ok(count) || r == NULL ||
	    (side != RING_GUARD_CONSUMER && side != RING_GUARD_PRODUCER))
		return -EINVAL;
	*g = (struct ring_guard){
		.table = r->slots,
		.mask = count - 1,
		.capacity = count - 1,
		.head = 0,
	};
	/* This ring has no separate heads: each side publishes its tail. */
	g->peer = side == RING_GUARD_CONSUMER ? &r->prod_tail : &r->cons_tail;
	g->own_tail = side == RING_GUARD_CONSUMER ? &r->cons_tail : &r->prod_tail;
	return 0;
}

const char *ring_impl_name(void)
{
	return "fake";
}
