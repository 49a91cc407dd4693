/* The shard watch's records by cookie (daemon/shard_watch_internal.h): a
 * map from a foreign placement's uid hash (its bound record's cookie,
 * never 0) to the record's id and its shard name's hash. Open
 * addressing, linear probing, backward-shift deletion (no tombstones, so
 * a long run of puts and deletes never slows the probes); at most half
 * full: a put past the bound is refused. One thread's. */
#ifndef SHMSCHED_DAEMON_RECORD_MAP_INTERNAL_H
#define SHMSCHED_DAEMON_RECORD_MAP_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

struct record_entry {
	uint64_t cookie; /* 0: empty */
	uint64_t id;
	uint64_t shard;
};

struct record_map {
	struct record_entry *e;
	size_t cap; /* a power of two, at least 2 * max */
	size_t max, n;
};

/* Room for max entries. 0 or -ENOMEM. */
int record_map_init(struct record_map *m, size_t max);
void record_map_free(struct record_map *m);
void record_map_clear(struct record_map *m);

/* The entry of cookie (not 0), or NULL. */
struct record_entry *record_map_find(const struct record_map *m, uint64_t cookie);
/* Adds or replaces. 0, or -ENOSPC (max entries held, cookie not among
 * them), -EINVAL (cookie 0). */
int record_map_put(struct record_map *m, uint64_t cookie, uint64_t id, uint64_t shard);
/* Removes e (an entry of m): a later entry of its run may move into e's
 * place, so a walk by index looks at e's index again. */
void record_map_del(struct record_map *m, struct record_entry *e);

#endif
