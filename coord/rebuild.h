/* A shard's state read back from etcd by its new owner (issue 40, item 3):
 * every placement under <prefix>shards/<s>/pods/ (a key each) and under
 * <prefix>shards/<s>/sets/ (several a key, coord/batch_value.h), and
 * every node record under <prefix>shards/<s>/nodes/, read in pages at one
 * revision (one consistent snapshot, however many pages), handed to a
 * callback. The caller then follows changes from revision + 1 (a watch;
 * not built yet: docs/design/multi-host.md).
 *
 * Outside input: a pod's value is decoded strictly
 * (coord/placement_value.h, coord/batch_value.h: a batch is checked whole
 * before any of its placements is handed); a key or value that does not
 * decode stops the rebuild (-EPROTO, err naming the key and the field),
 * since placing on a shard whose state is not understood could overcommit
 * it. A uid held by two keys (a writer's bug) is handed twice. */
#ifndef SHMSCHED_COORD_REBUILD_H
#define SHMSCHED_COORD_REBUILD_H

#include <stddef.h>
#include <stdint.h>

#include "coord/etcd_client.h"
#include "coord/placement_value.h"
#include "coord/batch_value.h"

enum rebuild_kind {
	REBUILD_POD,
	REBUILD_NODE,
};

struct rebuild_item {
	enum rebuild_kind kind;
	/* The pod's uid (the key's last part, or a batch's line) or the
	 * node's name (the key's last part), NUL-ended. */
	const char *name;
	size_t name_len;
	/* REBUILD_POD from a batch key: that key's last part (NUL-ended), the
	 * key a release rewrites; NULL for a key of one placement. */
	const char *batch;
	size_t batch_len;
	/* REBUILD_POD: the placement. */
	const struct placement_value *pod;
	/* REBUILD_NODE: the value's bytes as they are (its format is the
	 * node writer's). */
	const uint8_t *value;
	size_t value_len;
	int64_t mod_revision;
};

struct rebuild_callbacks {
	/* Each item once; a non-zero return stops the rebuild with it. */
	int (*item)(void *ctx, const struct rebuild_item *it);
	/* The snapshot was compacted away between pages: forget every item
	 * handed so far; the read starts again at the newest revision (at most
	 * REBUILD_MAX_RESTARTS times, then -ERANGE). May be NULL when the
	 * caller keeps nothing between items. */
	void (*reset)(void *ctx);
	void *ctx;
};

#define REBUILD_MAX_RESTARTS 3
/* Keys a page when page is 0. */
#define REBUILD_DEFAULT_PAGE 1000
/* At most this many batch keys a page, whatever page says: 256 values of
 * BATCH_VALUE_MAX bytes, base64 with their keys, are about 3 MB, under
 * the client's ETCD_DEFAULT_MAX_RESPONSE (4 MiB). */
#define REBUILD_BATCH_PAGE 256

/* 0 with *revision the snapshot's; the item callback's non-zero return;
 * -EPROTO a key or value that does not decode; -ERANGE compacted away
 * more than REBUILD_MAX_RESTARTS times; the client's errors
 * (etcd_client.h). err (errlen bytes) says why. */
int coord_rebuild_shard(struct etcd_client *c, const char *prefix, uint32_t shard, int64_t page,
			const struct rebuild_callbacks *cb, int64_t *revision, char *err,
			size_t errlen);
/* The same for a shard named by a string (a node label's value, as the
 * membership names shards: shards/<name>/...). */
int coord_rebuild_shard_named(struct etcd_client *c, const char *prefix, const char *shard,
			      int64_t page, const struct rebuild_callbacks *cb,
			      int64_t *revision, char *err, size_t errlen);

#endif
