/* Fuzz target: coord/placement_value.c, the decoder of a placement's value
 * as a shard's new owner reads it back from etcd (outside input). A value
 * that decodes encodes back to the same bytes (one text, one value); a
 * refusal is -EINVAL with a message and a zeroed value. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "coord/coord.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct placement_value v;
	char msg[256];
	int rc = placement_value_decode(data, size, &v, msg, sizeof(msg));
	if (rc != 0) {
		static const struct placement_value zero;
		if (rc != -EINVAL || msg[0] == '\0' || memcmp(&v, &zero, sizeof(v)) != 0)
			abort();
		return 0;
	}
	char text[PLACEMENT_VALUE_MAX + 1];
	int n = placement_value_encode(&v, text);
	if (n < 0 || (size_t)n != size || memcmp(text, data, size) != 0)
		abort();
	return 0;
}
