/* Fuzz target: the durable store's record decoders (bind/store_codec.c) on
 * arbitrary bytes, as a damaged or hostile store file would give them. The
 * first byte picks the record kind (node, placement, identity, admission
 * usage); the rest is the record. What decodes must encode again and
 * decode to the same. */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "bind/bind.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct intern *t;
	if (t == NULL && (t = intern_create()) == NULL)
		__builtin_trap();
	if (size < 1)
		return 0;
	struct intern_mark mark;
	intern_mark(t, &mark);
	const uint8_t *rec = data + 1;
	size_t len = size - 1;
	char err[256];
	static uint8_t again[1 << 20];
	switch (data[0] % 4) {
	case 0: {
		static struct node_spec n, m;
		if (store_decode_node(rec, len, t, &n, err, sizeof(err)) == 0) {
			int k = store_encode_node(&n, t, again, sizeof(again));
			if (k < 0 || store_decode_node(again, (size_t)k, t, &m, err,
						       sizeof(err)) != 0 ||
			    memcmp(&n, &m, sizeof(n)) != 0)
				__builtin_trap();
		} else if (err[0] == '\0') {
			__builtin_trap();
		}
		break;
	}
	case 1: {
		struct placement_record r, s;
		uint32_t node, node2;
		if (store_decode_placement(rec, len, t, &r, &node, err,
					   sizeof(err)) == 0) {
			int k = store_encode_placement(&r, node, t, again, sizeof(again));
			if (k < 0 || store_decode_placement(again, (size_t)k, t, &s,
							    &node2, err, sizeof(err)) != 0 ||
			    node != node2 || memcmp(&r, &s, sizeof(r)) != 0)
				__builtin_trap();
		}
		break;
	}
	case 2: {
		struct state_identity id;
		if (store_decode_identity(rec, len, &id, err, sizeof(err)) == 0 &&
		    (id.used != 1 || memchr(id.name, '\0', sizeof(id.name)) == NULL))
			__builtin_trap();
		break;
	}
	default: {
		static struct store_afs a, b;
		if (store_decode_afs(rec, len, &a, err, sizeof(err)) == 0) {
			int k = store_encode_afs(&a, again, sizeof(again));
			if (k < 0 || (size_t)k != len ||
			    store_decode_afs(again, (size_t)k, &b, err,
					     sizeof(err)) != 0 ||
			    memcmp(&a, &b, sizeof(a)) != 0)
				__builtin_trap();
		} else if (err[0] == '\0') {
			__builtin_trap();
		}
		break;
	}
	}
	intern_rollback(t, &mark);
	return 0;
}
