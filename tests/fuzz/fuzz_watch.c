/* Fuzz target: coord/watch.c and etcd_decode_watch (coord/etcd_codec.c),
 * the incremental decoder of etcd's /v3/watch stream (outside input:
 * whatever answers at an etcd endpoint). The first byte picks the chunk
 * size the rest is fed in (1 to 256 bytes: every split of a line), under
 * a small line bound (2 KiB) and event bound (8). Each message handed out
 * holds together (events within the bound, keys and values NUL-ended at
 * their lengths); next_revision never goes back; after an error every
 * further feed returns the same error. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "coord/coord.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int on_message(void *ctx, const struct etcd_watch_message *m)
{
	(void)ctx;
	if (m->n_events > 8 || (m->n_events && !m->events))
		abort();
	for (size_t i = 0; i < m->n_events; i++) {
		const struct etcd_kv *kv = &m->events[i].kv;
		if (!kv->key || !kv->value || kv->key[kv->key_len] != '\0' ||
		    kv->value[kv->value_len] != '\0' || kv->key_len > 2048)
			abort();
	}
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size == 0)
		return 0;
	size_t chunk = (size_t)data[0] + 1;
	struct watch_stream w;
	watch_stream_init(&w, 2048, 8, 5, on_message, NULL);
	int rc = 0;
	int64_t rev = w.next_revision;
	for (size_t off = 1; off < size; off += chunk) {
		size_t n = size - off < chunk ? size - off : chunk;
		int r = watch_stream_feed(&w, data + off, n);
		if (rc != 0 && r != rc)
			abort();
		rc = r;
		if (w.next_revision < rev || w.len > 2048)
			abort();
		rev = w.next_revision;
	}
	if (rc != 0 && (w.error[0] == '\0' || watch_stream_feed(&w, "\n", 1) != rc))
		abort();
	watch_stream_free(&w);
	return 0;
}
