/* Fuzz target: coord/placement_value.c, the decoder of a placement's value
 * (versions 1, 2: a pod's namespace and labels, and 3: its ClusterQueue
 * and flavor) as a shard's new owner
 * and other hosts' shard watches read it back from etcd (outside input).
 * A value that decodes encodes back to the same bytes (one text, one
 * value), its labels each a label placement_label_ok takes; a refusal is
 * -EINVAL with a message and a zeroed value. */
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
	if (v.version < 1 || v.version > 3)
		abort();
	if (v.n_labels > PLACEMENT_LABELS_COUNT || (v.version == 1 && (v.n_labels || v.ns[0])))
		abort();
	if (v.flavor[0] && (v.version != 3 || !v.queue[0]))
		abort();
	if (v.version < 3 && strlen(v.queue) > PLACEMENT_QUEUE_MAX)
		abort();
	char text[PLACEMENT_VALUE_MAX + 1];
	int n = placement_value_encode(&v, text);
	if (n < 0 || (size_t)n != size || memcmp(text, data, size) != 0)
		abort();
	return 0;
}
