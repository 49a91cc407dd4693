/* Which shard a node belongs to: see coord/shard_map.h. Every host
 * computes the same answer from the same name: the hash is base/hash.h's,
 * which is fixed across versions and machines. */
#include "coord/shard_map.h"

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
	if (len == 0 || len >= SHARD_NAME_MAX)
		return false;
	for (size_t i = 0; i < len; i++) {
		char c = name[i];
		bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
			  (c >= '0' && c <= '9') || c == '.' || c == '_' || c == '-';
		if (!ok)
			return false;
	}
	return true;
}
