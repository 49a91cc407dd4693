/* The coordinator's assignment of shards to live hosts (issue 40;
 * docs/design/multi-host.md, "Coordinator"): a pure function of the hosts,
 * the shards and the assignment before, so that every coordinator, old or
 * new, computes the same one.
 *
 * Balanced: every host gets floor(S/H) or ceil(S/H) shards. Moving as few
 * shards as possible: a shard stays with its host unless that host has
 * left or holds more than its share. The S mod H hosts that may hold
 * ceil(S/H) are those that hold the most now (ties: the lower index), which
 * keeps the most shards where they are (the number kept is the sum over
 * hosts of min(held, share), and a larger share helps only a host holding
 * at least ceil). Shards to move go, in shard order, to the host furthest
 * below its share (ties: the lower index). */
#ifndef SHMSCHED_COORD_SHARD_ASSIGN_H
#define SHMSCHED_COORD_SHARD_ASSIGN_H

#include <stddef.h>
#include <stdint.h>

/* prior[s]: the host index (0..n_hosts-1) shard s is assigned to now, or
 * -1 (none, or a host that is gone). Writes out[s] for every shard (all -1
 * when n_hosts is 0) and returns how many shards changed host (a shard
 * with prior -1 counts). -EINVAL when n_hosts or n_shards is over
 * SHARD_ASSIGN_MAX. */
#define SHARD_ASSIGN_MAX 1024u
int shard_assign(const int32_t *prior, size_t n_shards, size_t n_hosts, int32_t *out);

#endif
