/* Fuzz target: coord/batch_value.c, the decoder of a batch key's value
 * (several placements a key, "4" then lines "<uid> <placement value>")
 * as a shard's new owner and other hosts' watches read it back from etcd
 * (outside input). A value that decodes is 1 to BATCH_PLACEMENTS_MAX
 * placements, handed over in its order, and the writer given them back
 * makes the same bytes (one text, one set); a refusal is -EINVAL with a
 * message, and the callback saw nothing. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "coord/coord.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int rewrite(void *ctx, const char *uid, const struct placement_value *v)
{
	struct batch_writer *w = ctx;
	if (batch_value_add(w, uid, v) != 0)
		abort();
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct batch_writer w;
	batch_value_start(&w);
	char msg[512];
	int rc = batch_value_decode(data, size, rewrite, &w, msg, sizeof(msg));
	if (rc < 0) {
		if (rc != -EINVAL || msg[0] == '\0' || w.count != 0)
			abort();
		return 0;
	}
	if (rc < 1 || rc > BATCH_PLACEMENTS_MAX || w.count != (unsigned)rc || w.len != size ||
	    memcmp(w.text, data, size) != 0 || !batch_value_is(data, size))
		abort();
	/* Without a callback: the same count. */
	if (batch_value_decode(data, size, NULL, NULL, msg, sizeof(msg)) != rc)
		abort();
	return 0;
}
