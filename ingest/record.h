/* Pod slots in a producer's region (include/shmsched/wire.h): decoding a
 * submitted slot into the pod the engine schedules. The answer written
 * back into the slot is bind/answer.h.
 *
 * Concurrency: runs on the daemon side, in whichever thread owns the slot
 * at the time (the one that dequeued its handle). No lock, allocation or
 * system call. record_decode reads the slot exactly once, so a producer
 * rewriting it meanwhile gets a consistent snapshot or a rejection, never
 * a crash.
 */
#ifndef SHMSCHED_INGEST_RECORD_H
#define SHMSCHED_INGEST_RECORD_H

#include <stddef.h>
#include <stdint.h>

#include "shm/shm.h"
#include "shmsched/wire.h"

/* The producer's registered templates: template id k (1..count) is
 * specs[k - 1]. Owned by the daemon, trusted (checked at registration). */
struct record_templates {
	const struct pod_spec *specs;
	uint32_t count;
};

/* A decoded pod: its template's spec with the slot's extra requests added,
 * and the slot's producer-side fields, returned as they were.
 *
 * `spec` is the template's own spec when the slot asks no extras (most
 * pods: no 1.7 KiB copy, and the engine reads only the parts it needs),
 * else `with_extras`, the template's copy with the extras added. So a
 * record_pod is used where record_decode() wrote it, never copied by
 * value (spec may point into it), and lives no longer than the
 * templates (the producer's, kept while it is served). */
struct record_pod {
	const struct pod_spec *spec;
	struct pod_spec with_extras; /* spec's bytes when n_extra > 0 */
	uint64_t cookie;
	uint64_t submit_ns;
	uint32_t template_id; /* 1..count: spec is t->specs[template_id - 1], or
			       * its copy plus the extras */
	uint16_t flags;       /* SHMSCHED_SLOT_WAIT, _NO_WAIT, or 0 */
	uint64_t deadline_ns; /* 0: none */
};

/* Copies `shared` once out of shared memory and checks the copy: template_id
 * in 1..t->count, n_extra <= SHMSCHED_MAX_EXTRA, flags within
 * SHMSCHED_SLOT_FLAGS and not WAIT with NO_WAIT, no deadline_ns with
 * NO_WAIT, and for each used
 * extra reserved 0, resource < res->count and not RES_PODS, quantity >= 0,
 * and no request (nor the scoring stand-in for cpu or memory) past
 * INT64_MAX. Then *out->spec is the template's spec with each extra added
 * to request.v[resource] (for cpu and memory also to nonzero_cpu_milli /
 * nonzero_mem_bytes); equal slots give byte-equal specs. With no extra,
 * out->spec is the template's spec itself (&t->specs[template_id - 1]).
 *
 * Returns 0, or -EINVAL with a message for a person in `why` (naming the
 * field, its value and what was expected; `why` may be NULL when `why_len`
 * is 0) and `out` untouched. */
int record_decode(const struct shmsched_slot *shared,
		  const struct record_templates *t, const struct res_names *res,
		  struct record_pod *out, char *why, size_t why_len);

#endif
