/* Fuzz target: pod slots (ingest/record.c) on arbitrary bytes. The first
 * 640 bytes are the slot (zero-filled when shorter), decoded against three
 * fixed templates (one near INT64_MAX cpu, so overflow is reachable) and
 * six resources. What the decoder accepts must be the template plus the
 * extras, none negative or past INT64_MAX; what it refuses must say why.
 * Bytes past the slot, if any, are a message for answer_slot (bind/answer.h), whose
 * result must be NUL-terminated within the field and cut with "...". */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "ingest/ingest.h"
#include "bind/bind.h"
#include "shm/shm.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void make_templates(struct pod_spec specs[3])
{
	memset(specs, 0, 3 * sizeof(specs[0]));
	specs[0].request.v[RES_CPU] = 500;
	specs[0].request.v[RES_MEMORY] = INT64_C(1) << 30;
	specs[0].nonzero_cpu_milli = 500;
	specs[0].nonzero_mem_bytes = INT64_C(1) << 30;
	specs[1].nonzero_cpu_milli = 100;
	specs[1].nonzero_mem_bytes = INT64_C(200) << 20;
	specs[2].request.v[RES_CPU] = INT64_MAX - 1000;
	specs[2].nonzero_cpu_milli = INT64_MAX - 1000;
	specs[2].request.v[RES_FIRST_NAMED] = 8;
	specs[2].nonzero_mem_bytes = INT64_C(200) << 20;
}

static void check_decode(const struct shmsched_slot *slot)
{
	struct pod_spec specs[3];
	make_templates(specs);
	const struct record_templates t = {.specs = specs, .count = 3};
	struct res_names res;
	res_names_init(&res);
	res_register(&res, "nvidia.com/gpu", 14);
	res_register(&res, "hugepages-2Mi", 13);

	struct record_pod out;
	char why[256];
	why[0] = '\0';
	int rc = record_decode(slot, &t, &res, &out, why, sizeof(why));
	if (rc != 0) {
		/* Every refusal is -EINVAL and says why, in the buffer. */
		if (rc != -EINVAL || why[0] == '\0' ||
		    strnlen(why, sizeof(why)) == sizeof(why))
			__builtin_trap();
		return;
	}
	if (slot->template_id < 1 || slot->template_id > 3 ||
	    slot->n_extra > SHMSCHED_MAX_EXTRA ||
	    (slot->flags & ~SHMSCHED_SLOT_FLAGS) != 0 ||
	    slot->flags == SHMSCHED_SLOT_FLAGS ||
	    (slot->deadline_ns != 0 && (slot->flags & SHMSCHED_SLOT_NO_WAIT)) ||
	    out.flags != slot->flags || out.deadline_ns != slot->deadline_ns)
		__builtin_trap();
	const struct pod_spec *tmpl = &specs[slot->template_id - 1];
	__int128 want[RES_MAX];
	__int128 want_cpu = tmpl->nonzero_cpu_milli;
	__int128 want_mem = tmpl->nonzero_mem_bytes;
	for (unsigned r = 0; r < RES_MAX; r++)
		want[r] = tmpl->request.v[r];
	for (unsigned i = 0; i < slot->n_extra; i++) {
		const struct shmsched_extra *e = &slot->extra[i];
		if (e->resource >= res.count || e->resource == RES_PODS ||
		    e->quantity < 0 || e->reserved != 0)
			__builtin_trap();
		want[e->resource] += e->quantity;
		if (e->resource == RES_CPU)
			want_cpu += e->quantity;
		else if (e->resource == RES_MEMORY)
			want_mem += e->quantity;
	}
	for (unsigned r = 0; r < RES_MAX; r++)
		if (out.spec->request.v[r] < 0 || want[r] > INT64_MAX ||
		    want[r] != out.spec->request.v[r])
			__builtin_trap();
	if (want_cpu != out.spec->nonzero_cpu_milli ||
	    want_mem != out.spec->nonzero_mem_bytes)
		__builtin_trap();
	/* Everything outside the requests is the template's. */
	const size_t from = offsetof(struct pod_spec, nonzero_mem_bytes) +
			    sizeof(int64_t);
	if (memcmp((const char *)out.spec + from, (const char *)tmpl + from,
		   sizeof(struct pod_spec) - from) != 0 ||
	    out.spec->ns_name != tmpl->ns_name ||
	    out.spec->node_name != tmpl->node_name ||
	    out.cookie != slot->cookie || out.submit_ns != slot->submit_ns)
		__builtin_trap();
}

static void check_answer(const uint8_t *data, size_t size)
{
	static const size_t max_len = 2 * SHMSCHED_MESSAGE_MAX;
	char message[2 * SHMSCHED_MESSAGE_MAX + 1];
	size_t n = size < max_len ? size : max_len;
	memcpy(message, data, n);
	message[n] = '\0';
	size_t len = strlen(message);

	struct shmsched_slot slot;
	memset(&slot, 0xa5, sizeof(slot));
	answer_slot(&slot, SHMSCHED_REJECTED, 7, 9, message);
	size_t got = strnlen(slot.message, sizeof(slot.message));
	if (got == sizeof(slot.message) || slot.status != SHMSCHED_REJECTED ||
	    slot.node_id != 7 || slot.complete_ns != 9)
		__builtin_trap();
	if (len < SHMSCHED_MESSAGE_MAX) {
		if (got != len || memcmp(slot.message, message, len) != 0)
			__builtin_trap();
	} else if (got < 3 || got + 3 < SHMSCHED_MESSAGE_MAX - 1 ||
		   memcmp(slot.message + got - 3, "...", 3) != 0 ||
		   memcmp(slot.message, message, got - 3) != 0) {
		/* Cut: a prefix (at most 3 bytes shorter, for UTF-8), "...". */
		__builtin_trap();
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct shmsched_slot slot;
	memset(&slot, 0, sizeof(slot));
	memcpy(&slot, data, size < sizeof(slot) ? size : sizeof(slot));
	check_decode(&slot);
	if (size > sizeof(slot))
		check_answer(data + sizeof(slot), size - sizeof(slot));
	return 0;
}
