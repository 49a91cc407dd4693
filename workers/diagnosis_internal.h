/* Why a pod fits no node: the reasons the filters gave, counted over nodes,
 * and kube-scheduler's FitError message built from them
 * (pkg/scheduler/framework/types.go, FitError.Error and Diagnosis).
 *
 * A struct diagnosis is a fixed-size value (about 4 KiB): put it on the
 * stack or inside a per-worker record; nothing here allocates.
 *
 * Concurrency: a diagnosis belongs to one thread at a time; the functions
 * keep no other state.
 */
#ifndef SHMSCHED_WORKERS_DIAGNOSIS_INTERNAL_H
#define SHMSCHED_WORKERS_DIAGNOSIS_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "shm/shm.h"
#include "workers/plugins.h"

/* Distinct untolerated-taint reasons (by taint key and value) counted one
 * by one. Past this many, further distinct taints are counted together
 * under "node(s) had untolerated taint(s)", the wording newer Kubernetes
 * uses for every taint, so the message stays bounded and truthful. */
#define DIAGNOSIS_MAX_TAINTS 256
#define DIAGNOSIS_TAINT_SLOTS 512 /* open-addressing table, power of 2 */

struct diagnosis_taint {
	uint32_t key;
	uint32_t value;
	uint32_t count;
};

struct diagnosis {
	/* Nodes per argument-free reason, indexed by enum reason_code;
	 * [REASON_TAINT] and [REASON_INSUFFICIENT] stay unused. */
	uint32_t by_code[REASON_INSUFFICIENT + 1];
	uint32_t insufficient[RES_MAX]; /* "Insufficient <name>", by res_index */
	uint32_t taints_other;          /* taint reasons past DIAGNOSIS_MAX_TAINTS */
	uint32_t n_taints;
	struct diagnosis_taint taints[DIAGNOSIS_MAX_TAINTS]; /* first seen first */
	uint16_t slot[DIAGNOSIS_TAINT_SLOTS]; /* 0 = empty, else taints index + 1 */
};

/* Empties `d`. Call before the first diagnosis_add of a pod. */
void diagnosis_reset(struct diagnosis *d);

/* Counts one reason for one node. Call once per reason per node: a node
 * short of both cpu and memory adds two reasons. Codes outside enum
 * reason_code and resources >= RES_MAX are ignored. O(1) expected. */
void diagnosis_add(struct diagnosis *d, const struct reason *r);

/* Takes back one diagnosis_add() of the same reason (a cache of reasons
 * whose node changed: workers/engine.c). A taint entry left at 0 stays in
 * the table, unprinted; so past DIAGNOSIS_MAX_TAINTS distinct taints a
 * reason may be counted under "taint(s)" where a fresh count would name
 * it (the caller recounts then). O(1) expected. */
void diagnosis_sub(struct diagnosis *d, const struct reason *r);

/* Writes "0/<num_all_nodes> nodes are available: " followed by
 * "<count> <reason>" for each distinct reason, sorted byte-wise as Go's
 * sort.Strings, joined by ", ", and a final "." (with no reason at all,
 * just "0/<N> nodes are available:", as Go writes it). Reason words are
 * reason_format's; names come from ctx->strings and ctx->res.
 *
 * Returns the length of the whole message, as snprintf does: when it is
 * >= len the message was cut (always NUL-terminated when len > 0). Cost:
 * O(r^2) comparisons of the r distinct reasons; for failed pods only. */
int diagnosis_format(const struct diagnosis *d, const struct plugin_ctx *ctx,
		     uint32_t num_all_nodes, char *buf, size_t len);

#endif
