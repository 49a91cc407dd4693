/* shm/ring.h over DPDK rte_ring, in memory we own, without EAL.
 *
 * rte_ring_init() only fills the ring's header; the enqueue and dequeue
 * paths are header inlines compiled here. We compile them with DPDK's C11
 * memory model (RTE_USE_C11_MEM_MODEL, the variant DPDK builds on Arm), so
 * every ordering between producer and consumer is an explicit acquire load
 * or release store of a head or tail (rte_ring_c11_pvt.h) rather than x86
 * compiler barriers; that costs nothing on x86 and lets ThreadSanitizer
 * check the ring. The ring layout is identical in both models.
 *
 * Never used: rte_ring_create, rte_ring_lookup, rte_ring_free (they need
 * EAL's memzones and tailqs). Cost: one bounded burst copy per call.
 */
#define RTE_USE_C11_MEM_MODEL 1

#include "shm/ring.h"

#include <errno.h>
#include <rte_ring.h>
#include <rte_ring_elem.h>

#define HANDLE_SIZE sizeof(uint64_t)
#define RING_FLAGS (RING_F_SP_ENQ | RING_F_SC_DEQ)

static struct rte_ring *rr(struct ring *r)
{
	return (struct rte_ring *)r;
}

static const struct rte_ring *crr(const struct ring *r)
{
	return (const struct rte_ring *)r;
}

static int count_ok(unsigned count)
{
	return count >= 2 && count <= (1u << 28) && (count & (count - 1)) == 0;
}

size_t ring_memsize(unsigned count)
{
	if (!count_ok(count))
		return 0;
	ssize_t n = rte_ring_get_memsize_elem(HANDLE_SIZE, count);
	return n < 0 ? 0 : (size_t)n;
}

struct ring *ring_init(void *mem, size_t mem_size, unsigned count,
		       const char *name)
{
	size_t need = ring_memsize(count);
	if (mem == NULL || need == 0 || mem_size < need ||
	    ((uintptr_t)mem % RTE_CACHE_LINE_SIZE) != 0) {
		errno = EINVAL;
		return NULL;
	}
	int rc = rte_ring_init(mem, name ? name : "shmsched", count, RING_FLAGS);
	if (rc < 0) {
		errno = -rc;
		return NULL;
	}
	return mem;
}

struct ring *ring_attach(void *mem, size_t mem_size, unsigned count)
{
	const struct rte_ring *r = mem;
	size_t need = ring_memsize(count);
	if (mem == NULL || need == 0 || mem_size < need ||
	    ((uintptr_t)mem % RTE_CACHE_LINE_SIZE) != 0 || r->size != count ||
	    r->mask != count - 1 || r->capacity != count - 1 ||
	    r->prod.sync_type != RTE_RING_SYNC_ST ||
	    r->cons.sync_type != RTE_RING_SYNC_ST) {
		errno = EPROTO;
		return NULL;
	}
	return mem;
}

unsigned ring_enqueue_burst(struct ring *r, const uint64_t *handles, unsigned n)
{
	return rte_ring_sp_enqueue_burst_elem(rr(r), handles, HANDLE_SIZE, n, NULL);
}

unsigned ring_dequeue_burst(struct ring *r, uint64_t *handles, unsigned n)
{
	return rte_ring_sc_dequeue_burst_elem(rr(r), handles, HANDLE_SIZE, n, NULL);
}

unsigned ring_count(const struct ring *r)
{
	/* Not rte_ring_count(), which reads the tails with plain loads that race
	 * with the other side's stores. Relaxed is enough: the result is a
	 * snapshot that orders nothing. */
	uint32_t prod_tail = __atomic_load_n(&crr(r)->prod.tail, __ATOMIC_RELAXED);
	uint32_t cons_tail = __atomic_load_n(&crr(r)->cons.tail, __ATOMIC_RELAXED);
	uint32_t count = (prod_tail - cons_tail) & crr(r)->mask;
	return count > crr(r)->capacity ? crr(r)->capacity : count;
}

unsigned ring_capacity(const struct ring *r)
{
	return rte_ring_get_capacity(crr(r));
}

/* rte_ring keeps its entries right after the header (rte_ring_elem.h:
 * `&r[1]`), and each side's head and tail in prod / cons. */
int ring_guard_init(struct ring_guard *g, struct ring *r, unsigned count,
		    enum ring_guard_side side)
{
	if (!count_ok(count) || r == NULL ||
	    (side != RING_GUARD_CONSUMER && side != RING_GUARD_PRODUCER))
		return -EINVAL;
	struct rte_ring *q = rr(r);
	*g = (struct ring_guard){
		.table = (uint64_t *)(void *)&q[1],
		.mask = count - 1,
		.capacity = count - 1, /* rte_ring_init without RING_F_EXACT_SZ */
		.head = 0,
	};
	/* DPDK declares the indices volatile; the guard reads and writes
	 * them only with __atomic builtins, which need no volatile. */
	struct rte_ring_headtail *peer = side == RING_GUARD_CONSUMER ? &q->prod : &q->cons;
	struct rte_ring_headtail *own = side == RING_GUARD_CONSUMER ? &q->cons : &q->prod;
	g->peer = (const uint32_t *)(uintptr_t)&peer->tail;
	g->own_head = (uint32_t *)(uintptr_t)&own->head;
	g->own_tail = (uint32_t *)(uintptr_t)&own->tail;
	return 0;
}

const char *ring_impl_name(void)
{
	return "dpdk";
}
