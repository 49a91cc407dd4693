/* The recount: a node's use is the sum of the live placement records on
 * it. A daemon that re-attaches a state region after a crash trusts no
 * counter it finds: it checks every live record and recounts every node
 * from them (shm/layout.h, "What a crash leaves").
 *
 * Concurrency: only while no other thread touches the ledger or the
 * records (start-up, before the workers and the control sockets).
 */
#ifndef SHMSCHED_SHM_RECOUNT_H
#define SHMSCHED_SHM_RECOUNT_H

#include <stddef.h>
#include <stdint.h>

#include "shm/cluster.h"
#include "shm/intern.h"
#include "shm/layout.h"
#include "shm/placements.h"

struct recount_stats {
	uint64_t records;      /* live records found */
	uint64_t counted;      /* of them, on a node that still exists */
	uint64_t stale;        /* on a node since removed: not counted */
	uint64_t nodes_fixed;  /* nodes whose counters the recount changed: a
				* commit without its record (rolled back), or
				* a release cut short (given back) */
};

/* Checks every live record (owner an identity 1..max_owner that `ids`
 * (NULL: not checked) marks used, or PLACEMENT_OWNER_BOUND; slot below
 * the ledger's capacity; node generation not past the slot's; devices,
 * ports and requests in range for its node; a request above the node's
 * allocatable is logged, as a node may shrink) and sets every present
 * node's counters to the sum of the records on it. Returns 0, or -EBADMSG
 * with the first damaged record, its field and value named in `err`
 * (nothing is changed then), or -ENOMEM. */
int ledger_recount(struct cluster *c, struct placements *t, uint32_t max_owner,
		   const struct state_identity *ids, struct recount_stats *out,
		   char *err, size_t err_len);

/* Issue 41's start-time reclaim, after ledger_recount() of a resumed
 * region and before the workers and the control sockets (and after the
 * start-up's other readers of the table, which pin what they find:
 * shm/intern.h): marks every string id a record of the region holds (the
 * current snapshot's node names, labels, taints and GPU models, every
 * slot's; the live placement records' pod names, groups and host-port
 * addresses; the ledger's term groups; and every id a held group's
 * encoding names: its namespace, labels, topology keys, selectors) and
 * frees every string a
 * producer's template added that none holds (intern_reclaim). Returns 0
 * or -ENOMEM (nothing freed). */
int strings_reclaim(struct intern *strings, struct cluster *c,
		    struct placements *t, struct intern_reclaim_stats *out);

/* The same marks, for the checker of a test: sets bit id of held
 * (intern_count() bits, zeroed by the caller) for every id a record
 * holds; an id at or above intern_count() is not marked and is counted
 * in the return (a damaged holder), as is a held group that does not
 * decode. Without memory to decode groups it marks every id (nothing is
 * freed) and returns 1. */
uint32_t strings_held(const struct intern *strings, struct cluster *c,
		      struct placements *t, uint64_t *held);

/* The marks of one group (shm/pod_group.h) for a caller that has other
 * holders (the run-time reclaim, ingest/producers.c): sets the bit of
 * group `id` and of every id its encoding names; `decoded` (count bits;
 * NULL: none) skips a group already decoded; `scratch` is the caller's.
 * Returns the ids out of range and groups that did not decode. */
struct pod_group;
uint32_t strings_held_group(const struct intern *strings, uint64_t *held,
			    uint64_t *decoded, uint32_t id,
			    struct pod_group *scratch);


#endif
