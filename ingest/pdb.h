/* PodDisruptionBudgets, as DefaultPreemption reads them: the budgets a
 * victim's removal would break count against a candidate node
 * (filterPodsWithPDBViolation; the choice itself is workers/preempt.h).
 *
 * A budget selects the pods of its namespace that its spec.selector
 * matches (policy/v1: an empty selector matches every pod of the
 * namespace, an absent one none). How many of them may go now:
 *   - status.disruptionsAllowed when the object carries it (what the
 *     disruption controller wrote, and what kube-scheduler reads), counted
 *     down by each pod this daemon evicts, as the controller would lower
 *     it; declaring the budget again resets it;
 *   - without a status, spec.maxUnavailable (an integer), counted down
 *     likewise: every selected pod is taken as healthy;
 *   - without a status, the selected pods placed now less
 *     spec.minAvailable (an integer), counted at each choice.
 * Percentages need the controller's expected pods and are refused without
 * a status (ingest/k8s_json_sched.c).
 *
 * Concurrency: the table is written by the control thread and read by the
 * evictor, both under the producers' lock (ingest/producers_preempt.c); a matcher
 * is one thread's. */
#ifndef SHMSCHED_INGEST_PDB_H
#define SHMSCHED_INGEST_PDB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "shm/shm.h"
#include "ingest/k8s_json.h"

#define PDB_TABLE_MAX 256u
_Static_assert(PDB_TABLE_MAX % 64 == 0, "count_cache keeps 64 entries a word");
/* Budgets one choice tells apart (a bit each); past them, one more bit
 * stands for all the others, with no disruption allowed: their pods count
 * as violations, the cautious side. */
#define PDB_CHOICE_MAX 32u

struct pdb_entry {
	uint32_t name;          /* interned "namespace/name" */
	uint32_t ns;            /* interned namespace */
	bool selects;           /* false: an absent selector, no pod */
	uint8_t mode;           /* enum k8s_pdb_mode */
	uint8_t unhealthy;      /* enum k8s_pdb_unhealthy: the drain's ladder */
	int32_t value;          /* as declared */
	int32_t evicted;        /* pods this daemon evicted since */
	struct pod_group sel;   /* ns and default_selector */
};

struct pdb_table {
	uint32_t n;
	struct pdb_entry e[PDB_TABLE_MAX];
};

/* Declares `b` (again: it replaces the old one and its count). Returns 0,
 * or -ENOSPC with a message when the table is full. */
int pdb_table_put(struct pdb_table *t, const struct intern *strings,
		  const struct k8s_pdb *b, char *err, size_t err_len);

/* Whether budget `e` selects a pod of group `pod` (its namespace and
 * labels). */
bool pdb_selects(const struct pdb_entry *e, const struct pod_group *pod);

/* One choice's view of the table: local bits for the budgets that select
 * some pod it looks at, and each one's disruptions allowed. */
#define PDB_CACHE 256u
struct pdb_matcher {
	const struct pdb_table *t;
	const struct intern *strings;
	uint32_t n_bits;                 /* local bits handed out */
	bool overflow;                   /* the last bit is "the others" */
	bool cleared;                    /* EW1 (pdb.c): the caches emptied
					  * since pdb_matcher_init */
	uint8_t bit_of[PDB_TABLE_MAX];   /* 0: none yet; else bit + 1 */
	uint32_t entry_of[PDB_CHOICE_MAX];
	int32_t live[PDB_TABLE_MAX];     /* selected pods placed (MIN mode) */
	int32_t allowed[PDB_CHOICE_MAX]; /* by pdb_matcher_finish() */
	struct {
		uint32_t group;
		uint32_t mask;
	} cache[PDB_CACHE];
	struct { /* pdb_matcher_count's: the MIN-mode entries a group matches */
		uint32_t group;
		uint64_t entries[PDB_TABLE_MAX / 64];
	} count_cache[PDB_CACHE];
	struct pod_group scratch;
};

/* Starts a choice over `t` (which may be NULL or empty: every mask 0). */
void pdb_matcher_init(struct pdb_matcher *m, const struct pdb_table *t,
		      const struct intern *strings);

/* Whether some budget counts placed pods (a MIN mode one): then
 * pdb_matcher_count() must see every live placement. */
bool pdb_matcher_counts(const struct pdb_matcher *m);

/* A live placement of a pod of group `group`: counted for the budgets
 * that count pods. */
void pdb_matcher_count(struct pdb_matcher *m, uint32_t group);

/* The local bits of the budgets selecting a pod of group `group` (0 for
 * group 0 or a group that cannot be read). */
uint32_t pdb_matcher_mask(struct pdb_matcher *m, uint32_t group);

/* After the masks: the disruptions each local bit allows, and how many
 * bits there are. */
const int32_t *pdb_matcher_finish(struct pdb_matcher *m, uint32_t *n_bits);

/* For a table where no budget counts pods (!pdb_matcher_counts): the
 * disruptions each local bit allows, [PDB_CHOICE_MAX], set as each bit is
 * handed out (pdb_matcher_mask), so that masks may be taken while the
 * choice reads it (the node chains', ingest/producers_preempt.c); a bit
 * not handed out yet selects no pod. Reads nothing but the matcher: O(1)
 * a request, whatever the placements. */
const int32_t *pdb_matcher_allowed(const struct pdb_matcher *m);

/* A pod of group `group` was evicted: the budgets selecting it that count
 * down (ALLOWED and MAX_UNAVAILABLE) allow one disruption fewer. */
void pdb_table_evicted(struct pdb_table *t, const struct intern *strings,
		       struct pod_group *scratch, uint32_t group);

#endif
