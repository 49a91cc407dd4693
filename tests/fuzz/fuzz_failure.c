/* Fuzz target: OP_FAILURE's two bodies as the daemon reads them
 * (control_failure_split and control_pool_release_split,
 * ingest/control_proto.c) on arbitrary bytes; the first byte picks which.
 * Checks: what is accepted has a nonzero placement id and a reason of at
 * most OP_FAILURE_REASON_MAX bytes that ends the body, free of NULs (a
 * report), or a pool of 1..OP_POOL_NAME_MAX bytes then a template of
 * 0..OP_POOL_NAME_MAX bytes that ends the body, free of NULs (a release);
 * a refusal is -EINVAL with a message and an empty result. */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ingest/ingest.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1 || size > CONTROL_MAX_PAYLOAD)
		return 0;
	const char *body = (const char *)data + 1;
	uint32_t len = (uint32_t)(size - 1);
	char err[512];
	err[0] = '\0';
	if (data[0] & 1) {
		struct control_pool_release r;
		int rc = control_pool_release_split(body, len, &r, err, sizeof(err));
		if (rc < 0) {
			if (rc != -EINVAL || err[0] == '\0' || r.pool != NULL)
				abort();
			return 0;
		}
		const char *pool = body + sizeof(struct op_pool_release);
		if (r.pool != pool || r.pool_len == 0 || r.pool_len > OP_POOL_NAME_MAX ||
		    r.template_len > OP_POOL_NAME_MAX ||
		    memchr(r.pool, '\0', r.pool_len) != NULL ||
		    pool + r.pool_len + r.template_len != body + len ||
		    (r.template_len == 0) != (r.template == NULL) ||
		    (r.template != NULL && (r.template != pool + r.pool_len ||
					    memchr(r.template, '\0', r.template_len))))
			abort();
		return 0;
	}
	struct control_failure f;
	int rc = control_failure_split(body, len, &f, err, sizeof(err));
	if (rc < 0) {
		if (rc != -EINVAL || err[0] == '\0' || f.placement_id != 0)
			abort();
		return 0;
	}
	if (f.placement_id == 0 || f.reason != body + sizeof(struct op_failure) ||
	    f.reason_len > OP_FAILURE_REASON_MAX || f.reason + f.reason_len != body + len ||
	    memchr(f.reason, '\0', f.reason_len) != NULL)
		abort();
	return 0;
}
