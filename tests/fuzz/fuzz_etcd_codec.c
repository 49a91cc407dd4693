/* Fuzz target: coord/etcd_codec.c, the decoder of etcd's gRPC-gateway
 * answers (outside input: whatever listens at an etcd endpoint). The first
 * byte picks the kind of answer (put, range, delete, txn, lease grant,
 * keep-alive, revoke, member status, lease time-to-live) and the rest is
 * the body. A decoded
 * answer holds together: every kv's key and value NUL-terminated at their
 * lengths, no more ranges than the body could hold; a refusal is -EPROTO
 * with a message and nothing kept. The error decoder and base64 get the
 * same bytes: an errno from etcd's table or -EPROTO; base64 that decodes
 * encodes back to the same text. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "coord/coord.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_range(const struct etcd_range_result *r, size_t size)
{
	if (r->n_kvs > size)
		abort();
	for (size_t i = 0; i < r->n_kvs; i++) {
		const struct etcd_kv *kv = &r->kvs[i];
		if (!kv->key || !kv->value || kv->key_len > size || kv->value_len > size ||
		    kv->key[kv->key_len] != '\0' || kv->value[kv->value_len] != '\0')
			abort();
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size == 0)
		return 0;
	enum etcd_resp_kind kind = (enum etcd_resp_kind)(data[0] % ETCD_RESP_KINDS);
	const char *body = (const char *)data + 1;
	size_t len = size - 1;
	struct etcd_response r;
	char msg[256];
	int rc = etcd_decode_response(kind, body, len, &r, msg, sizeof(msg));
	if (rc == 0) {
		check_range(&r.range, len);
		if (r.txn.n_ranges > len)
			abort();
		for (size_t i = 0; i < r.txn.n_ranges; i++)
			check_range(&r.txn.ranges[i], len);
		etcd_response_free(&r);
	} else {
		if ((rc != -EPROTO && rc != -ENOMEM) || msg[0] == '\0' || r.range.kvs || r.txn.ranges)
			abort();
	}
	rc = etcd_decode_error(body, len, msg, sizeof(msg));
	if (rc >= 0 || msg[0] == '\0')
		abort();

	uint8_t *out = malloc(len / 4 * 3 + 1);
	size_t n;
	if (out && etcd_b64_decode(body, len, out, &n) == 0) {
		char *back = malloc(etcd_b64_len(n) + 1);
		if (!back)
			abort();
		etcd_b64_encode(out, n, back);
		if (strlen(back) != len || memcmp(back, body, len) != 0)
			abort();
		free(back);
	}
	free(out);
	return 0;
}
