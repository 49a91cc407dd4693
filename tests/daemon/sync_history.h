/* etcd's history of a multi-host cluster's shards, for the sync checker
 * (sync_check.h): every put and delete of <prefix>shards/<s>/owner and
 * <prefix>shards/<s>/pods/<uid> since revision 1, in revision order, read
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
 * sentinel's *revision and the pod keys a range at that revision holds
 * (*pods_at_end: a cross-check of the replay); a negative errno with err
 * saying why. */
int sync_history_read(const char *endpoints, const char *prefix, struct sync_event **events,
		      size_t *n, int64_t *revision, size_t *pods_at_end, char *err,
		      size_t errlen);

#endif
