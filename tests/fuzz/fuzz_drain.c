/* Fuzz target: an OP_DRAIN request's body as the daemon reads it
 * (control_drain_split, ingest/control_proto.c) on arbitrary bytes.
 * Checks: what is accepted has a selector of at most OP_DRAIN_SELECTOR_MAX
 * bytes right after the header, then 1..OP_DRAIN_NODES_MAX names, each
 * non-empty, within the body, NUL-ended there and free of NULs, one after
 * the other from the header to the body's last byte; a refusal is -EINVAL
 * with a message. */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ingest/ingest.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size > CONTROL_MAX_PAYLOAD)
		return 0;
	const char *body = (const char *)data;
	struct control_drain d;
	char err[512];
	err[0] = '\0';
	int rc = control_drain_split(body, (uint32_t)size, &d, err, sizeof(err));
	if (rc < 0) {
		if (rc != -EINVAL || err[0] == '\0' || d.n != 0)
			abort();
		return 0;
	}
	if (d.n == 0 || d.n > OP_DRAIN_NODES_MAX)
		abort();
	if (d.selector != body + sizeof(struct op_drain) ||
	    d.selector_len > OP_DRAIN_SELECTOR_MAX)
		abort();
	const char *at = d.selector + d.selector_len;
	for (uint32_t i = 0; i < d.n; i++) {
		if (d.name[i] != at || d.len[i] == 0 ||
		    memchr(d.name[i], '\0', d.len[i]) != NULL ||
		    d.name[i] + d.len[i] >= body + size || d.name[i][d.len[i]] != '\0')
			abort();
		at = d.name[i] + d.len[i] + 1;
	}
	if (at != body + size)
		abort();
	return 0;
}
