/* Fuzz target: coord/host_status.c, the decoder of a host's status value
 * (hosts/<host> in etcd: its shards' free capacity, its replication
 * lag), as `shmsched cluster status` and the forward chooser read it back
 * from etcd (outside input). A value that decodes encodes back to the
 * same bytes (one text, one value); a refusal is -EINVAL with a message
 * and a zeroed value. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "coord/coord.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct host_status v;
	static const struct host_status zero;
	static char text[HOST_STATUS_VALUE_MAX + 1];
	char msg[256];
	int rc = host_status_decode(data, size, &v, msg, sizeof(msg));
	if (rc != 0) {
		if (rc != -EINVAL || msg[0] == '\0' || memcmp(&v, &zero, sizeof(v)) != 0)
			abort();
		return 0;
	}
	int n = host_status_encode(&v, text);
	if (n < 0 || (size_t)n != size || memcmp(text, data, size) != 0)
		abort();
	return 0;
}
