/* PodDisruptionBudgets: see pdb.h.
 *
 * A choice asks for the budgets of many placements, most of them of a few
 * groups (a Deployment's replicas share one), so a matcher remembers the
 * mask of each group it decoded in a small direct-mapped cache; a group is
 * decoded from its interned encoding (shm/pod_group.h) once per miss.
 *
 * EW1  The caches are cleared by the first pdb_matcher_count or
 *      pdb_matcher_mask after pdb_matcher_init that reads them
 *      (caches_ready), not by init: a preemption where no budget exists
 *      never reads them, and clearing 2 x PDB_CACHE entries was ~1.6 K
 *      instructions of every such request (the evictor's ~28.5 K,
 *      docs/perf/2026-11-29-preemption-5.md). `cleared` is false from
 *      init until then; the caches are read or written only after it.
 */
#include "ingest/pdb.h"

#include <errno.h>
#include <string.h>

#include "base/base.h"

int pdb_table_put(struct pdb_table *t, const struct intern *strings,
		  const struct k8s_pdb *b, char *err, size_t err_len)
{
	uint32_t i = 0;
	while (i < t->n && t->e[i].name != b->name)
		i++;
	if (i == t->n && t->n == PDB_TABLE_MAX)
		return errmsg_rc(-ENOSPC, err, err_len, "PodDisruptionBudget %s: %u "
				 "budgets already, the most kept",
				 intern_str(strings, b->name), PDB_TABLE_MAX);
	struct pdb_entry *e = &t->e[i];
	memset(e, 0, sizeof(*e));
	e->name = b->name;
	e->ns = b->ns;
	e->selects = b->selector != NULL;
	e->mode = b->mode;
	e->unhealthy = b->unhealthy;
	e->value = b->value;
	if (b->selector != NULL)
		e->sel = *b->selector;
	e->sel.ns = b->ns;
	if (i == t->n)
		t->n++;
	return 0;
}

bool pdb_selects(const struct pdb_entry *e, const struct pod_group *pod)
{
	return e->selects && pod->ns == e->ns &&
	       group_selector_matches(&e->sel, &e->sel.default_selector, pod->labels,
				      pod->n_labels);
}

/* Group `group` decoded into *out; false when it cannot be read. */
static bool read_group(const struct intern *strings, uint32_t group,
		       struct pod_group *out)
{
	if (group == 0)
		return false;
	const char *s = intern_str(strings, group);
	return s != NULL && pod_group_decode(s, intern_len(strings, group), out) == 0;
}

void pdb_matcher_init(struct pdb_matcher *m, const struct pdb_table *t,
		      const struct intern *strings)
{
	m->t = t;
	m->strings = strings;
	m->n_bits = 0;
	m->overflow = false;
	uint32_t n = t != NULL ? t->n : 0;
	memset(m->bit_of, 0, n * sizeof(m->bit_of[0]));
	memset(m->live, 0, n * sizeof(m->live[0]));
	memset(m->allowed, 0, sizeof(m->allowed)); /* the overflow bit's: 0 */
	m->cleared = false; /* EW1: by the caches' first reader */
}

/* EW1: the caches emptied once per init, before their first read. */
static void caches_ready(struct pdb_matcher *m)
{
	if (m->cleared)
		return;
	for (uint32_t i = 0; i < PDB_CACHE; i++)
		m->cache[i].group = m->count_cache[i].group = 0;
	m->cleared = true;
}

/* A group's slot in the matcher's caches. */
static uint32_t cache_slot(uint32_t group)
{
	return (group * 2654435761u) >> 24; /* PDB_CACHE 256: 8 bits */
}

bool pdb_matcher_counts(const struct pdb_matcher *m)
{
	for (uint32_t i = 0; m->t != NULL && i < m->t->n; i++)
		if (m->t->e[i].mode == K8S_PDB_MIN_AVAILABLE && m->t->e[i].selects)
			return true;
	return false;
}

void pdb_matcher_count(struct pdb_matcher *m, uint32_t group)
{
	if (m->t == NULL || m->t->n == 0 || group == 0)
		return;
	/* Every live placement comes here: decode each group once. */
	caches_ready(m);
	uint32_t h = cache_slot(group);
	if (m->count_cache[h].group != group) {
		memset(m->count_cache[h].entries, 0, sizeof(m->count_cache[h].entries));
		if (read_group(m->strings, group, &m->scratch))
			for (uint32_t i = 0; i < m->t->n; i++)
				if (m->t->e[i].mode == K8S_PDB_MIN_AVAILABLE &&
				    pdb_selects(&m->t->e[i], &m->scratch))
					m->count_cache[h].entries[i / 64] |= UINT64_C(1) << (i % 64);
		m->count_cache[h].group = group;
	}
	for (uint32_t w = 0; w < PDB_TABLE_MAX / 64; w++)
		for (uint64_t bits = m->count_cache[h].entries[w]; bits; bits &= bits - 1)
			m->live[w * 64 + (uint32_t)__builtin_ctzll(bits)]++;
}

/* The disruptions budget `e` allows, `live` its selected pods placed
 * (read in MIN mode only). */
static int32_t allowed_of(const struct pdb_entry *e, int32_t live)
{
	int32_t a = e->mode == K8S_PDB_MIN_AVAILABLE ? live - e->value
						     : e->value - e->evicted;
	return a > 0 ? a : 0;
}

/* The local bit of table entry i, handed out on first use: bits
 * 0..PDB_CHOICE_MAX-2 one budget each, the last one the others'. Its
 * disruptions allowed are set at once (pdb_matcher_allowed), from the
 * counts so far (pdb_matcher_finish sets them again after the counts). */
static uint32_t bit_for(struct pdb_matcher *m, uint32_t i)
{
	if (m->bit_of[i] == 0) {
		if (m->n_bits < PDB_CHOICE_MAX - 1) {
			m->entry_of[m->n_bits] = i;
			m->allowed[m->n_bits] = allowed_of(&m->t->e[i], m->live[i]);
			m->bit_of[i] = (uint8_t)++m->n_bits;
		} else {
			m->overflow = true;
			m->bit_of[i] = PDB_CHOICE_MAX;
		}
	}
	return m->bit_of[i] - 1u;
}

uint32_t pdb_matcher_mask(struct pdb_matcher *m, uint32_t group)
{
	if (m->t == NULL || m->t->n == 0 || group == 0)
		return 0;
	caches_ready(m);
	uint32_t h = cache_slot(group);
	if (m->cache[h].group == group)
		return m->cache[h].mask;
	uint32_t mask = 0;
	if (read_group(m->strings, group, &m->scratch))
		for (uint32_t i = 0; i < m->t->n; i++)
			if (pdb_selects(&m->t->e[i], &m->scratch))
				mask |= 1u << bit_for(m, i);
	m->cache[h].group = group;
	m->cache[h].mask = mask;
	return mask;
}

const int32_t *pdb_matcher_finish(struct pdb_matcher *m, uint32_t *n_bits)
{
	for (uint32_t b = 0; b < m->n_bits; b++)
		m->allowed[b] = allowed_of(&m->t->e[m->entry_of[b]], m->live[m->entry_of[b]]);
	if (m->overflow)
		m->allowed[PDB_CHOICE_MAX - 1] = 0;
	*n_bits = m->overflow ? PDB_CHOICE_MAX : m->n_bits;
	return m->allowed;
}

const int32_t *pdb_matcher_allowed(const struct pdb_matcher *m)
{
	return m->allowed;
}

void pdb_table_evicted(struct pdb_table *t, const struct intern *strings,
		       struct pod_group *scratch, uint32_t group)
{
	if (t == NULL || t->n == 0 || !read_group(strings, group, scratch))
		return;
	for (uint32_t i = 0; i < t->n; i++)
		if (t->e[i].mode != K8S_PDB_MIN_AVAILABLE &&
		    pdb_selects(&t->e[i], scratch) && t->e[i].evicted < INT32_MAX)
			t->e[i].evicted++;
}
