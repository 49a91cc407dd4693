/* The daemon and its durable store (bind/store.h): what goes in, when,
 * and how a state region is rebuilt from it after a reboot. Private to
 * daemon/.
 *
 * - Workers: each placement's record, encoded (bind/store_codec.h) and
 *   queued after it is filled and before it is published
 *   (persist_placement), so no release's delete can be queued ahead of
 *   it; in sync mode the
 *   worker waits for its burst's last op before it hands the answers back
 *   (persist_wait), so a producer reads PLACED only once it is durable.
 * - The control thread: node events, new identities, releases and resync
 *   changes (persist_hooks), written as they happen; in sync mode a
 *   release is answered only once durable.
 * - Start: a resumed state region is newer than the store (the store only
 *   lags it), so the store is rewritten from the region
 *   (persist_replace_all); a new region is rebuilt from the store when
 *   the store holds anything (persist_restore), else made from the
 *   cluster input and then written to the store.
 */
#ifndef SHMSCHED_DAEMON_PERSIST_INTERNAL_H
#define SHMSCHED_DAEMON_PERSIST_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "bind/bind.h"
#include "ingest/ingest.h"

struct persist;

struct persist_tables {
	struct intern *strings;
	struct cluster *cluster;
	struct placements *records;
	struct state_identity *identities; /* [STATE_IDENTITIES] */
};

/* Opens the store in `dir`. Returns 0 or a negative errno with a message. */
int persist_open(const char *dir, enum store_durability mode,
		 const struct persist_tables *tables, struct persist **out,
		 char *err, size_t err_len);
void persist_close(struct persist *p);

/* Whether the store holds any node or placement. */
int persist_has_state(struct persist *p, bool *has, char *err, size_t err_len);

/* Fills the new (empty) state region from the store: nodes, identities,
 * then each placement at its own id, every node recounted. Placements on a
 * node the store does not hold are skipped (counted in *skipped). Returns
 * 0 or a negative errno with a message (a damaged store: -EBADMSG). */
int persist_restore(struct persist *p, uint64_t *nodes, uint64_t *placements,
		    uint64_t *skipped, char *err, size_t err_len);

/* Rewrites the store from the state region, in one transaction. */
int persist_replace_all(struct persist *p, char *err, size_t err_len);

/* The control thread's hooks, for producers_set_state(). */
void persist_hooks(struct persist *p, struct producers_persist *out);

/* Queues record `r` as placement `id` of `owner`: a worker, between
 * placements_prepare() and placements_publish(). Returns the op's
 * sequence number (0: not queued). */
uint64_t persist_placement(struct persist *p, uint64_t id,
			   const struct placement_record *r, uint32_t owner);

/* Worker, sync mode: waits until op `seq` is durable. */
void persist_wait(struct persist *p, uint64_t seq);

bool persist_sync(const struct persist *p);
struct store *persist_store(struct persist *p);

#endif
