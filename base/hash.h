/* A 64-bit hash of bytes: FNV-1a, then splitmix64's finaliser so that every
 * output bit depends on every input bit (linear probing and masks use the
 * low bits). Stable across processes, versions and machines: a value may
 * be stored (shmsched-gateway names a pod's cookie by the hash of its
 * namespace/name, and finds it again after a restart). Not for anything
 * an attacker must not be able to collide.
 */
#ifndef SHMSCHED_BASE_HASH_H
#define SHMSCHED_BASE_HASH_H

#include <stddef.h>
#include <stdint.h>

#include "base/rng.h"

#define HASH64_SEED UINT64_C(0xcbf29ce484222325)

/* Continues a hash over `len` more bytes: hash64_add(HASH64_SEED, ...) to
 * start. */
static inline uint64_t hash64_add(uint64_t h, const void *data, size_t len)
{
	const unsigned char *p = data;
	for (size_t i = 0; i < len; i++) {
		h ^= p[i];
		h *= UINT64_C(0x100000001b3);
	}
	return h;
}

/* The hash of `len` bytes, finalised. */
static inline uint64_t hash64(const void *data, size_t len)
{
	return rng_hash(hash64_add(HASH64_SEED, data, len));
}

#endif
