/* Fuzz target: the body and id of the gateway's failure route
 * (gateway/failure_decode.h) on arbitrary bytes. The first byte picks
 * which (even: the body, odd: the URL's {id}), the rest is the input.
 * Checks: a refusal is -EINVAL with a message and no reason; an accepted
 * body's reason is NUL-ended within GW_FAILURE_REASON_MAX bytes and free
 * of control characters; a body past GW_FAILURE_BODY_MAX is never
 * accepted; an accepted id is nonzero, all digits, and prints back as the
 * input. */
#include <errno.h>
#include <inttypes.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gateway/gateway.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size == 0 || size > 2 * GW_FAILURE_BODY_MAX)
		return 0;
	const char *in = (const char *)data + 1;
	size_t len = size - 1;
	if (data[0] % 2 == 1) {
		uint64_t id;
		bool ok = gw_failure_id(in, len, &id);
		if (!ok) {
			if (id != 0)
				abort();
			return 0;
		}
		char back[24];
		int n = snprintf(back, sizeof(back), "%" PRIu64, id);
		if (id == 0 || n < 0 || (size_t)n != len || memcmp(back, in, len) != 0)
			abort();
		return 0;
	}
	struct gw_failure_req q;
	char err[512];
	err[0] = '\0';
	int rc = gw_failure_decode(in, len, &q, err, sizeof(err));
	if (rc < 0) {
		if (rc != -EINVAL || err[0] == '\0' || q.reason[0] != '\0')
			abort();
		return 0;
	}
	if (rc != 0 || len > GW_FAILURE_BODY_MAX)
		abort();
	size_t rl = strnlen(q.reason, sizeof(q.reason));
	if (rl > GW_FAILURE_REASON_MAX)
		abort();
	for (size_t i = 0; i < rl; i++)
		if ((unsigned char)q.reason[i] < 0x20 || q.reason[i] == 0x7f)
			abort();
	return 0;
}
