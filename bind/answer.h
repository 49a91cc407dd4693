/* The answer to a pod: written into the producer's slot, then handed back
 * on its completion ring. The last stage of a pod's path (docs/concepts.md):
 * every slot the daemon dequeued gets exactly one answer (invariant 2).
 *
 * Concurrency: the daemon side only, in the thread that owns the slot (the
 * one that dequeued its handle). No lock, allocation or system call. The
 * slot's fields are plain stores; the completion ring's enqueue publishes
 * them to the producer.
 */
#ifndef SHMSCHED_BIND_ANSWER_H
#define SHMSCHED_BIND_ANSWER_H

#include <stdint.h>

#include "shm/shm.h"
#include "shmsched/wire.h"

/* Times an answer's enqueue is retried when the completion ring is full
 * before the answers left are dropped (and counted by the caller). */
#define ANSWER_COMPLETION_RETRIES 1000u

/* Writes the answer into a slot the daemon owns: status (enum
 * shmsched_status), node_id, complete_ns and `message` (NULL for none).
 * A message longer than SHMSCHED_MESSAGE_MAX - 1 bytes is cut, never inside
 * a UTF-8 sequence, and ends in "..."; the slot's message is always
 * NUL-terminated. */
void answer_slot(struct shmsched_slot *shared, uint32_t status,
		 uint32_t node_id, uint64_t complete_ns, const char *message);

/* A PLACED answer on `node_id` with the devices the commit took and the
 * placement's id (they share the message's bytes, so no message goes with
 * them). */
void answer_placed(struct shmsched_slot *shared, uint32_t node_id,
		   uint64_t complete_ns, const struct device_assignment *dev,
		   uint64_t placement_id);

/* Hands `n` answered handles back through the daemon's guarded end of a
 * completion ring, retrying a full ring ANSWER_COMPLETION_RETRIES times. A
 * completion ring holds every slot of its region, so it is full only when
 * the producer submitted a slot twice. Returns how many were enqueued (the
 * rest are dropped), or -EPROTO when the producer broke the ring's index
 * (shm/ring.h, ring_guard_enqueue). */
int answer_complete(struct ring_guard *completion, const uint64_t *handles,
		    unsigned n);

#endif
