/* A producer's region: its pod slots and its notices (include/shmsched/
 * wire.h) and its two
 * rings of slot indices, submit (producer -> daemon) and completion
 * (daemon -> producer), each able to hold every slot at once, so neither
 * side can find its ring full while it owns a slot to hand over.
 *
 * The daemon creates one per registered producer and passes the memfd over
 * the control socket; the producer attaches to it. Slow path only.
 */
#ifndef SHMSCHED_SHM_PRODUCER_REGION_H
#define SHMSCHED_SHM_PRODUCER_REGION_H

#include <stddef.h>
#include <stdint.h>

#include "shm/region.h"
#include "shm/ring.h"
#include "shmsched/wire.h"

#define PRODUCER_SLOTS_MAX (1u << 20)

struct producer_region {
	struct shm_region *region;
	struct ring *submit;
	struct ring *completion;
	struct shmsched_slot *slots;
	struct shmsched_notices *notices;
	uint32_t n_slots;
	uint32_t ring_slots; /* a power of two > n_slots */
};

/* Creates a region of `n_slots` slots (1..PRODUCER_SLOTS_MAX) with both
 * rings initialised. Returns 0, or a negative errno with a message. */
int producer_region_create(uint32_t n_slots, struct producer_region *out,
			   char *err, size_t err_len);

/* Attaches to a region made by producer_region_create() in another process
 * (memfd `fd`, duplicated) and checks its geometry: slot count from the
 * section size, both rings' sizes. Returns 0, or a negative errno with a
 * message (the region's own refusals from shm_region_attach included). */
int producer_region_attach(int fd, struct producer_region *out, char *err,
			   size_t err_len);

void producer_region_close(struct producer_region *p);

#endif
