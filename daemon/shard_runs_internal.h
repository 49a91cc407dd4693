/* The key ranges the shard watch follows (daemon/shard_watch_internal.h):
 * the shards a host knows and owns, in the order of their keys
 * (<prefix>shards/<name>/), cut into runs of shards it does not own. Run
 * i is the key range from shards/<first[i]>/ to the end of
 * shards/<last[i]>/: it holds every key of its shards and of no owned
 * shard (a shard known to neither list, between two of a run, falls in
 * it). Pure functions, no state. */
#ifndef SHMSCHED_DAEMON_SHARD_RUNS_INTERNAL_H
#define SHMSCHED_DAEMON_SHARD_RUNS_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>

#include "coord/coord.h"

struct shard_runs {
	size_t n;
	shard_name_t first[SHARD_MAX], last[SHARD_MAX];
};

/* Shard names in the order of their keys, shards/<name>/: a name as if
 * followed by '/' (which no name holds), so "h1-x" < "h1" < "h10"
 * (strcmp puts "h1" first). <0, 0, >0. */
int shard_key_order(const char *a, const char *b);

/* The runs of the `known` shards (nk; duplicates allowed) not among the
 * `owned` (n), in key order, into out: none when every known shard is
 * owned. At most SHARD_MAX names of each list are read. */
void shard_runs_of(const shard_name_t *known, size_t nk, const shard_name_t *owned, size_t n,
		   struct shard_runs *out);

/* Whether a and b are the same runs. */
bool shard_runs_equal(const struct shard_runs *a, const struct shard_runs *b);

#endif
