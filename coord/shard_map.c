/* Which shard a node belongs to: see coord/shard_map.h. Every host
 * computes the same answer from the same name: the hash is base/hash.h's,
 * which is fixed across versions and machines. */
#include "coord/shard_map.h"
#include "coord/value_text.h"

#include <stdio.h>

#include "base/base.h"

uint32_t shard_of_node_name(const char *name, size_t len, uint32_t n_shards)
{
	if (n_shards <= 1)
		return 0;
	return (uint32_t)(hash64(name, len) % n_shards);
}

void shard_hash_name(uint32_t s, char *buf, size_t len)
{
	snprintf(buf, len, "h%u", s);
}

bool shard_name_valid(const char *name, size_t len)
{
	return value_text_name(name, len, 1, SHARD_NAME_MAX - 1);
}
