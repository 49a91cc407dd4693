/* The shard watch's records by cookie: see record_map_internal.h.
 * Invariant: every entry is reachable from its home slot (cookie mod cap)
 * by probing forward without meeting an empty slot; a deletion keeps it
 * by moving each later entry of the run whose home does not lie
 * cyclically in (hole, entry] into the hole. Cost: O(1) expected per
 * operation at half load. */
#include "daemon/record_map_internal.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

int record_map_init(struct record_map *m, size_t max)
{
	size_t cap = 16;
	while (cap < 2 * max)
		cap *= 2;
	m->e = calloc(cap, sizeof(*m->e));
	m->cap = cap;
	m->max = max;
	m->n = 0;
	return m->e != NULL ? 0 : -ENOMEM;
}

void record_map_free(struct record_map *m)
{
	free(m->e);
	m->e = NULL;
	m->cap = m->n = 0;
}

void record_map_clear(struct record_map *m)
{
	memset(m->e, 0, m->cap * sizeof(*m->e));
	m->n = 0;
}

struct record_entry *record_map_find(const struct record_map *m, uint64_t cookie)
{
	if (cookie == 0)
		return NULL;
	for (size_t i = cookie & (m->cap - 1);; i = (i + 1) & (m->cap - 1)) {
		if (m->e[i].cookie == cookie)
			return &m->e[i];
		if (m->e[i].cookie == 0)
			return NULL;
	}
}

int record_map_put(struct record_map *m, uint64_t cookie, uint64_t id, uint64_t shard)
{
	if (cookie == 0)
		return -EINVAL;
	size_t i = cookie & (m->cap - 1);
	while (m->e[i].cookie != 0 && m->e[i].cookie != cookie)
		i = (i + 1) & (m->cap - 1);
	if (m->e[i].cookie == 0) {
		if (m->n >= m->max)
			return -ENOSPC;
		m->n++;
	}
	m->e[i] = (struct record_entry){cookie, id, shard};
	return 0;
}

void record_map_del(struct record_map *m, struct record_entry *at)
{
	size_t hole = (size_t)(at - m->e);
	m->e[hole].cookie = 0;
	m->n--;
	for (size_t j = (hole + 1) & (m->cap - 1); m->e[j].cookie != 0;
	     j = (j + 1) & (m->cap - 1)) {
		size_t home = m->e[j].cookie & (m->cap - 1);
		/* Stays when its home is cyclically in (hole, j]. */
		bool stays = hole <= j ? (home > hole && home <= j) : (home > hole || home <= j);
		if (stays)
			continue;
		m->e[hole] = m->e[j];
		m->e[j].cookie = 0;
		hole = j;
	}
}
