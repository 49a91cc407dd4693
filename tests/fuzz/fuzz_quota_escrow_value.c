/* Fuzz target: coord/quota_escrow_value.c, the decoder of quota by
 * escrow's values (a slice, an acknowledgement, a use) as hosts and the
 * coordinator read them back from etcd (outside input). A value that
 * decodes encodes back to the same bytes (one text, one value); a refusal
 * is -EINVAL with a message and a zeroed value. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "coord/coord.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct quota_escrow_value v;
	static const struct quota_escrow_value zero;
	static char text[QUOTA_ESCROW_VALUE_MAX + 1];
	char msg[256];
	int rc = quota_escrow_value_decode(data, size, &v, msg, sizeof(msg));
	if (rc != 0) {
		if (rc != -EINVAL || msg[0] == '\0' || memcmp(&v, &zero, sizeof(v)) != 0)
			abort();
		return 0;
	}
	int n = quota_escrow_value_encode(&v, text);
	if (n < 0 || (size_t)n != size || memcmp(text, data, size) != 0)
		abort();
	return 0;
}
