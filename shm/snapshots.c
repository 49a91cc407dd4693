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

uint64_t cluster_snapshot_checksum(const struct snapshot *s)
{
	uint64_t h = UINT64_C(0xcbf29ce484222325);
	uint64_t head[2] = {s->generation,
			    (uint64_t)s->n_slots << 32 | s->n_nodes};
	h = state_checksum(h, head, sizeof(head));
	h = state_checksum(h, s->present, s->n_slots);
	return state_checksum(h, s->nodes, (uint64_t)s->n_slots * sizeof(*s->nodes));
}
