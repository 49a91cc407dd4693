/* Which shard a node belongs to (issue 40; docs/design/multi-host.md,
 * "Membership and shards"): by the value of a node label (a zone: the
 * shard is named by the value), or by a hash of the node's name into n
 * shards named "h0" .. "h<n-1>". Pure functions, no state. */
#ifndef SHMSCHED_COORD_SHARD_MAP_H
#define SHMSCHED_COORD_SHARD_MAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The most shards a cluster may have (hash: --shards; label: distinct
 * values), and the longest shard name (a label value is at most 63). */
#define SHARD_MAX 256u
#define SHARD_NAME_MAX 64u

/* The hash shard of a node named by `len` bytes: base/hash.h's hash64 of
 * the name, modulo n_shards (1..SHARD_MAX). Stable across hosts, processes
 * and versions (every host must agree). */
uint32_t shard_of_node_name(const char *name, size_t len, uint32_t n_shards);

/* Hash shard s's name, "h<s>", into buf (len >= 8). */
void shard_hash_name(uint32_t s, char *buf, size_t len);

/* Whether `name` (len bytes) may name a shard, as a key component under
 * shards/: 1 to SHARD_NAME_MAX - 1 bytes of [A-Za-z0-9._-] (every valid
 * label value but the empty one). */
bool shard_name_valid(const char *name, size_t len);

#endif
