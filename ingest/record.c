/* Pod slots: see record.h; the wire layout and its ownership rules are
 * include/shmsched/wire.h's top comment.
 *
 * record_decode reads shared memory a producer may be rewriting at that very
 * moment (docs/concepts.md, invariant 5). It copies the producer-written prefix of
 * the slot (bytes 0..95) into a local once, puts a compiler barrier after
 * the copy so that no later check or use can be compiled into a second read
 * of the shared bytes (a double fetch: checked one value, used another), and
 * from then on looks only at the copy. Every field of the copy is checked
 * before it indexes anything: template_id against the template table,
 * n_extra against the extra array, each used extra's resource against the
 * resource table, the flags against the known ones, a deadline only with a
 * pod that may wait. Sums are computed with overflow checks into locals, and
 * `out` is written only once everything has passed, so a rejected slot
 * leaves no half-built pod behind.
 *
 * Invariants of an accepted pod: every request is its template's plus the
 * extras naming that resource, none negative if the template's are not,
 * none past INT64_MAX; v[RES_PODS] is the template's (0). Equal slots and
 * templates give byte-equal specs (the template's zero fill is kept).
 *
 * Cost: one 96-byte copy in, O(n_extra) <= SHMSCHED_MAX_EXTRA checks and
 * additions, and a pod_spec copy out only for a slot with extras (a pod
 * without takes its template's spec as it is: the copy was 27 cache lines
 * read per pod, a seventh of the worker's first-level misses). No
 * allocation, lock or system call; snprintf only on the rejection path.
 */
#include "ingest/record.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "shm/shm.h"

/* The bytes the producer writes; the rest of the slot is the daemon's. */
#define RECORD_PRODUCER_BYTES offsetof(struct shmsched_slot, status)

_Static_assert(RECORD_PRODUCER_BYTES == 96, "wire.h: producer part is bytes 0..95");

__attribute__((format(printf, 3, 4)))
static int reject(char *why, size_t why_len, const char *fmt, ...)
{
	if (why != NULL && why_len > 0) {
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(why, why_len, fmt, ap);
		va_end(ap);
	}
	return -EINVAL;
}

/* The resource's name for a message; the table is the daemon's own. */
static int res_name_len(const struct res_names *res, uint32_t resource)
{
	return (int)strnlen(res->name[resource], RES_NAME_MAX);
}

int record_decode(const struct shmsched_slot *shared,
		  const struct record_templates *t, const struct res_names *res,
		  struct record_pod *out, char *why, size_t why_len)
{
	struct shmsched_slot slot;
	memcpy(&slot, shared, RECORD_PRODUCER_BYTES);
	/* Without this the compiler may drop the copy and load each field
	 * from `shared` where it is used, possibly more than once: the
	 * "memory" clobber says shared memory may have changed since, and
	 * taking &slot keeps the copy a real one. */
	__asm__ __volatile__("" : : "r"(&slot) : "memory");

	if (slot.template_id == 0 || slot.template_id > t->count) {
		if (t->count == 0)
			return reject(why, why_len, "slot: template_id %" PRIu32
				      ": no such template (none registered)",
				      slot.template_id);
		return reject(why, why_len, "slot: template_id %" PRIu32
			      ": no such template (1..%" PRIu32 " registered)",
			      slot.template_id, t->count);
	}
	if (slot.n_extra > SHMSCHED_MAX_EXTRA)
		return reject(why, why_len, "slot: n_extra %u: at most %d",
			      (unsigned)slot.n_extra, SHMSCHED_MAX_EXTRA);
	if (slot.flags & ~SHMSCHED_SLOT_FLAGS)
		return reject(why, why_len, "slot: flags 0x%x: unknown bits 0x%x "
			      "(known: WAIT 0x%x, NO_WAIT 0x%x)", (unsigned)slot.flags,
			      (unsigned)(slot.flags & ~SHMSCHED_SLOT_FLAGS),
			      SHMSCHED_SLOT_WAIT, SHMSCHED_SLOT_NO_WAIT);
	if ((slot.flags & SHMSCHED_SLOT_FLAGS) == SHMSCHED_SLOT_FLAGS)
		return reject(why, why_len, "slot: flags 0x%x: WAIT and NO_WAIT "
			      "together", (unsigned)slot.flags);
	if (slot.deadline_ns != 0 && (slot.flags & SHMSCHED_SLOT_NO_WAIT))
		return reject(why, why_len, "slot: deadline_ns %" PRIu64 " with "
			      "NO_WAIT: a pod answered at once has no deadline",
			      slot.deadline_ns);

	const struct pod_spec *tmpl = &t->specs[slot.template_id - 1];
	struct res_vec request = tmpl->request;
	int64_t nonzero_cpu = tmpl->nonzero_cpu_milli;
	int64_t nonzero_mem = tmpl->nonzero_mem_bytes;
	/* res->count is the daemon's, but it bounds an index: clamp it. */
	unsigned count = res_count(res);
	uint32_t n_res = count < RES_MAX ? count : RES_MAX;

	for (unsigned i = 0; i < slot.n_extra; i++) {
		const struct shmsched_extra *e = &slot.extra[i];
		if (e->reserved != 0)
			return reject(why, why_len, "slot: extra[%u].reserved "
				      "0x%" PRIx32 ": must be 0", i, e->reserved);
		if (e->resource >= n_res)
			return reject(why, why_len, "slot: extra[%u].resource %"
				      PRIu32 ": no such resource (0..%" PRIu32 ")",
				      i, e->resource, n_res - 1);
		if (e->resource == RES_PODS)
			/* Every pod counts one against "pods"; a request
			 * for more would let a producer skew the count. */
			return reject(why, why_len, "slot: extra[%u].resource %"
				      PRIu32 " (pods): not requestable, every pod "
				      "counts one", i, e->resource);
		if (e->quantity < 0)
			return reject(why, why_len, "slot: extra[%u].quantity %"
				      PRId64 ": negative", i, e->quantity);

		/* For cpu and memory the extra is an explicit request, so it
		 * counts as itself in the scoring stand-in too. */
		bool overflow = __builtin_add_overflow(request.v[e->resource],
						       e->quantity,
						       &request.v[e->resource]);
		if (e->resource == RES_CPU)
			overflow |= __builtin_add_overflow(nonzero_cpu, e->quantity,
							   &nonzero_cpu);
		else if (e->resource == RES_MEMORY)
			overflow |= __builtin_add_overflow(nonzero_mem, e->quantity,
							   &nonzero_mem);
		if (overflow)
			return reject(why, why_len, "slot: extra[%u]: %.*s request "
				      "overflows", i, res_name_len(res, e->resource),
				      res->name[e->resource]);
	}

	if (slot.n_extra == 0) {
		out->spec = tmpl; /* nothing added: no copy */
	} else {
		memcpy(&out->with_extras, tmpl, sizeof(out->with_extras));
		out->with_extras.request = request;
		out->with_extras.nonzero_cpu_milli = nonzero_cpu;
		out->with_extras.nonzero_mem_bytes = nonzero_mem;
		out->spec = &out->with_extras;
	}
	out->cookie = slot.cookie;
	out->submit_ns = slot.submit_ns;
	out->template_id = slot.template_id;
	out->flags = slot.flags;
	out->deadline_ns = slot.deadline_ns;
	return 0;
}
