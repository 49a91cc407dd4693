/* etcd's history of a multi-host cluster's shards, for the sync checker
 * (sync_check.h): every put and delete of <prefix>shards/<s>/owner and
 * <prefix>shards/<s>/pods/<uid> since revision 1 (and the placements
 * added and dropped by each put and delete of a batch key,
 * <prefix>shards/<s>/sets/<name>), in revision order, read
 * with one watch (coord/watch.h) up to a sentinel key this reader puts
 * first (<prefix>shards/~end), so the history ends at one revision it
 * chose. Other keys under shards/ (the committers' lane keys, assigned)
 * are skipped. Needs etcd's history whole: -ERANGE when compacted. */
#ifndef SHMSCHED_TESTS_SYNC_HISTORY_H
#define SHMSCHED_TESTS_SYNC_HISTORY_H

#include <stddef.h>
#include <stdint.h>

#include "sync_check.h"

/* prefix: "/shmsched/<cluster>/". 0 with *events (free()) and *n, the
 * sentinel's *revision and the placements a range at that revision holds
 * (*pods_at_end: pod keys and batch keys' lines, a cross-check of the
 * replay); a negative errno with err saying why. */
int sync_history_read(const char *endpoints, const char *prefix, struct sync_event **events,
		      size_t *n, int64_t *revision, size_t *pods_at_end, char *err,
		      size_t errlen);

/* The replay of watch events into sync events, open for unit tests
 * (unit.sync_history). A batch key it holds: its uids as events
 * (ascending). */
struct sync_held_batch {
	uint64_t hash;
	uint8_t *key;
	size_t key_len;
	struct sync_event *uids;
	size_t n;
};

struct sync_history_reader {
	const char *shards; /* "<prefix>shards/" */
	size_t shards_len;
	struct sync_event *ev;
	size_t n, cap;
	struct sync_held_batch *batches;
	size_t n_batches, cap_batches;
	int rc;
	char err[512];
};

/* shards: "<prefix>shards/", kept (not copied). */
void sync_history_reader_init(struct sync_history_reader *r, const char *shards);
void sync_history_reader_free(struct sync_history_reader *r);
/* One event: appended to r->ev as sync events (none for a key not an
 * owner, a pod key or a batch key; one a placement a batch put adds or
 * drops). 0; 1 at the sentinel; -EPROTO with r->err saying why; -ENOMEM. */
struct etcd_watch_event;
int sync_history_take(struct sync_history_reader *r, const struct etcd_watch_event *we);

#endif
