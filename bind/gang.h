/* A gang's commit: pods placed all or none (coscheduling's minMember).
 *
 * Each pod in turn is placed and committed through the resolver (its own
 * bounded retries against other workers' commits), so each is placed
 * against the ledger with the gang's earlier pods already on it. When one
 * finds no node, the pods committed before it are given back in reverse
 * (ledger_account, A1 with sign -1): nothing of the gang stays. Between
 * the first commit and the last (or the rollback), other workers see the
 * gang's pods on their nodes, as they see any commit: they may find less
 * room for that instant, never more than allocatable; no answer is
 * written before the whole gang is in, so no producer ever sees part of a
 * gang placed. The placements are one run of the engine (engine_run_begin,
 * GC2): pods[] stay unchanged through the call.
 *
 * Concurrency: one call per engine at a time, as the resolver. Cost: the
 * gang's placements, and its rollback when one fails.
 */
#ifndef SHMSCHED_BIND_GANG_H
#define SHMSCHED_BIND_GANG_H

#include <stdint.h>

#include "bind/resolver.h"

/* Places pods[0..n) on `e`'s cluster, all or none; pod i draws the random
 * stream seq + i. Returns 0 with out[0..n) committed; 1 with *failed the
 * pod that found no node (out[*failed] says how: gave_up, or the engine's
 * message) and nothing committed; or -ENOMEM (nothing committed). */
int gang_place(struct engine *e, const struct pod_spec *const *pods, unsigned n,
	       uint64_t seq, struct resolve_result *out, unsigned *failed,
	       struct resolver_stats *st);

#endif
