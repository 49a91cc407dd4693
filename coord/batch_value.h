/* The value of a batch key, <prefix>shards/<s>/sets/<name> in etcd
 * (issue 40, docs/design/multi-host.md, "Several placements a key"):
 * several placements of one shard in one key, because etcd's cost is
 * mostly per key (docs/perf/2026-11-29-etcd-keys.md). Outside input to
 * whoever reads it back (a shard's new owner, other hosts' watches),
 * decoded strictly (tests/fuzz/fuzz_batch_value.c).
 *
 * The text: the version line "4", then one line a placement, lines ended
 * by '\n' except the last (no trailing newline):
 *   "4\n<uid> <placement value>\n<uid> <placement value>..."
 * uid 1 to BATCH_UID_MAX bytes of [A-Za-z0-9._-] (the committer's, as in
 * shards/<s>/pods/<uid>), the uids strictly ascending (bytewise: one text
 * a set, duplicates refused in one pass, and a reader diffs two versions
 * of a key by a merge); a placement value is coord/placement_value.h's
 * text, any of its versions (1 to 3), so a batch carries exactly what a
 * key of one placement does. 1 to BATCH_PLACEMENTS_MAX placements (a key
 * with none is deleted, never written empty), at most BATCH_VALUE_MAX
 * bytes in all.
 *
 * BATCH_VALUE_MAX: a transaction of COMMIT_MAX_BATCH (127) batch puts at
 * this size, base64 in etcd's JSON with their keys and a put's fields,
 * stays under ETCD_MAX_REQUEST_BYTES (1.5 MiB); checked at compile time
 * in batch_value.c. A placement value at its largest (PLACEMENT_VALUE_MAX,
 * a pod with 2 KiB of labels) fits twice. */
#ifndef SHMSCHED_COORD_BATCH_VALUE_H
#define SHMSCHED_COORD_BATCH_VALUE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "coord/placement_value.h"

#define BATCH_VALUE_MAX 8192
#define BATCH_PLACEMENTS_MAX 128
/* commit_queue.h's COMMIT_UID_MAX (checked in batch_value.c). */
#define BATCH_UID_MAX 63
/* A batch key is shards/<s>/BATCH_KEY_DIR<name>. "sets/" sorts after
 * "pods/" on purpose: the membership reads each shard's keys before its
 * pods/ every tick (coord/membership.c, read_state: its assignment, lane
 * keys, owner), and batch keys there ("batch/" sorts before "pods/")
 * would make that read megabytes again. */
#define BATCH_KEY_DIR "sets/"
/* The last part, <name>: its bound, for the size check above (the
 * writer's names are shorter). */
#define BATCH_KEY_NAME_MAX 64

/* A batch's text as it is built: batch_value_start, then one
 * batch_value_add a placement in ascending uid order. text[0..len) is a
 * value to put once count >= 1 (NUL-ended). */
struct batch_writer {
	char text[BATCH_VALUE_MAX + 1];
	size_t len;
	unsigned count;
	char last_uid[BATCH_UID_MAX + 1];
};

void batch_value_start(struct batch_writer *w);

/* Appends uid's line. 0; -EINVAL a uid not of 1 to BATCH_UID_MAX bytes of
 * [A-Za-z0-9._-] or not above the last one added, or a value that does
 * not encode (placement_value_encode); -E2BIG the line would take the text
 * past BATCH_VALUE_MAX bytes or BATCH_PLACEMENTS_MAX placements (the
 * packer then starts another key). w is unchanged on an error. */
int batch_value_add(struct batch_writer *w, const char *uid, const struct placement_value *v);

/* Called once a placement, in the text's order: uid NUL-ended, v decoded.
 * A negative return stops the walk and is batch_value_decode's. */
typedef int (*batch_value_fn)(void *ctx, const char *uid, const struct placement_value *v);

/* Reads len bytes (not NUL-ended): the whole text is checked before fn
 * (may be NULL) sees any placement, so a caller never applies part of a
 * bad value. The count of placements (>= 1); -EINVAL with msg naming the
 * line, the field, the value and what was expected; or fn's negative
 * return. Cost: each line decoded twice (check, then walk). */
int batch_value_decode(const void *text, size_t len, batch_value_fn fn, void *ctx, char *msg,
		       size_t msglen);

/* Whether the text starts as a batch value does ("4\n"): a reader that
 * finds one under a key of one placement tells it apart by this. */
bool batch_value_is(const void *text, size_t len);

#endif
