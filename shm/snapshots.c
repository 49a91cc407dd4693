/* The snapshots section's layout (shm/layout.h, SHM_SECTION_SNAPSHOTS) and
 * a snapshot's checksum: the one description of both, used by the writer
 * (shm/cluster.c) and by observers in other processes, which link this file
 * without liburcu. Nothing here writes to the section.
 */
#include "shm/cluster.h"

#include <errno.h>

#include "shm/carve.h"
#include "shm/layout.h"

/* One buffer's pieces, in order; measures when the carve has no memory. */
static void carve_buffer(struct shm_carve *c, uint32_t capacity,
			 struct state_snapshot **hdr, struct snapshot *v)
{
	*hdr = shm_carve_next(c, sizeof(struct state_snapshot), 64);
	v->present = shm_carve_next(c, capacity, 64);
	v->nodes = shm_carve_next(c, (uint64_t)capacity * sizeof(struct node_spec), 64);
	for (int r = 0; r < RES_MAX; r++)
		v->allocatable[r] = shm_carve_next(c, (uint64_t)capacity *
						   sizeof(int64_t), 64);
	v->shards = shm_carve_next(c, (uint64_t)(capacity / SNAP_SHARD_SLOTS + 1) *
				   sizeof(struct shard_summary), 64);
	/* A buffer takes whole pages: the second starts on a page of its own. */
	c->used = (c->used + 4095) & ~UINT64_C(4095);
}

uint64_t cluster_snapshots_section_size(uint32_t capacity)
{
	struct shm_carve c = {0};
	struct state_snapshot *h;
	struct snapshot v;
	carve_buffer(&c, capacity, &h, &v);
	carve_buffer(&c, capacity, &h, &v);
	return c.used;
}

int cluster_snapshots_in(struct shm_span span, uint32_t capacity,
			 struct state_snapshot *headers[2],
			 struct snapshot views[2])
{
	struct shm_carve c = {.span = span};
	for (int b = 0; b < 2; b++)
		carve_buffer(&c, capacity, &headers[b], &views[b]);
	return span.base == NULL || c.overflow ? -EINVAL : 0;
}

/* The checksum, one description for the writer and the observers.
 *
 *   checksum = mix(H(generation, n_slots << 32 | n_nodes, sum))
 *   sum      = the sum mod 2^64, over every slot i below n_slots (empty
 *              ones too), of mix(H(i << 8 | present[i], nodes[i]'s bytes))
 *
 * H is state_checksum (shm/layout.h) from the FNV offset basis, mix a
 * 64-bit finaliser (murmur3's), so each slot's term depends on every bit of
 * its bytes. A slot's term carries its index: the same node in two slots,
 * or two slots swapped, give other terms. The terms are summed rather than
 * xored so that a term counted twice, or a pair of equal terms, does not
 * cancel. The writer keeps `sum` as it goes: a publish adds new term -
 * old term for each slot it changed, O(changed slots x sizeof(node_spec));
 * an observer recomputes it whole, O(n_slots x sizeof(node_spec)). */
static uint64_t mix(uint64_t h)
{
	h ^= h >> 33;
	h *= UINT64_C(0xff51afd7ed558ccd);
	h ^= h >> 33;
	h *= UINT64_C(0xc4ceb9fe1a85ec53);
	return h ^ (h >> 33);
}

#define CHECKSUM_BASIS UINT64_C(0xcbf29ce484222325)

uint64_t cluster_slot_term(const struct snapshot *s, uint32_t slot)
{
	uint64_t head = (uint64_t)slot << 8 | s->present[slot];
	uint64_t h = state_checksum(CHECKSUM_BASIS, &head, sizeof(head));
	return mix(state_checksum(h, &s->nodes[slot], sizeof(s->nodes[slot])));
}

uint64_t cluster_slot_sum(const struct snapshot *s)
{
	uint64_t sum = 0;
	for (uint32_t i = 0; i < s->n_slots; i++)
		sum += cluster_slot_term(s, i);
	return sum;
}

uint64_t cluster_checksum_of(const struct snapshot *s, uint64_t sum)
{
	uint64_t head[3] = {s->generation,
			    (uint64_t)s->n_slots << 32 | s->n_nodes, sum};
	return mix(state_checksum(CHECKSUM_BASIS, head, sizeof(head)));
}

uint64_t cluster_snapshot_checksum(const struct snapshot *s)
{
	return cluster_checksum_of(s, cluster_slot_sum(s));
}
