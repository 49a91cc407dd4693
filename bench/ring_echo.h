/* The bare round trip through two rings: a driver sends handles on one ring,
 * a server echoes them back on the other, the driver checks each one.
 *
 * This is the ring_limit baseline (the physical limit of this design's
 * transport on a machine: no scheduling work at all) and the traffic of the
 * cross-process ring tests. The driver runs in one process or thread and
 * the server in another; each side uses one end of each ring.
 */
#ifndef SHMSCHED_BENCH_RING_ECHO_H
#define SHMSCHED_BENCH_RING_ECHO_H

#include <stdbool.h>
#include <stdint.h>

#include <stddef.h>

#include "shm/shm.h"

/* The handle sent as the i-th of a run: every bit pattern, never repeating,
 * so a lost, duplicated or reordered handle is caught. */
uint64_t ring_echo_handle(uint64_t i);

/* Server: moves exactly `count` handles from `in` to `out`, then enqueues
 * one more handle: the checksum of what it moved. Returns that checksum. */
uint64_t ring_echo_serve(struct ring *in, struct ring *out, uint64_t count,
			 unsigned burst);

struct ring_echo_result {
	uint64_t sent;
	uint64_t received;
	uint64_t mismatches;     /* handles that were not the expected one */
	uint64_t first_mismatch; /* index of the first, when mismatches > 0 */
	uint64_t checksum;       /* of what the driver sent */
	uint64_t peer_checksum;  /* what the server said it moved */
	uint64_t elapsed_ns;     /* first send to last receive */
	bool ok;                 /* no mismatch and the checksums agree */
};

/* Driver: sends `count` handles on `out` in bursts of `burst` (1..256) and
 * checks every echo on `in`, then reads the server's checksum. */
void ring_echo_drive(struct ring *out, struct ring *in, uint64_t count,
		     unsigned burst, struct ring_echo_result *res);

/* A region holding the two rings of an echo pair (sections
 * SHM_SECTION_SUBMIT_RING: driver -> server, SHM_SECTION_COMPLETION_RING:
 * server -> driver), each of `slots` slots. */
struct ring_echo_pair {
	struct shm_region *region;
	struct ring *to_server;
	struct ring *to_driver;
};

/* Creates the region and both rings. Returns 0 or a negative errno. */
int ring_echo_pair_create(unsigned slots, unsigned region_flags,
			  struct ring_echo_pair *out);

/* Attaches to a pair made by ring_echo_pair_create() in another process
 * (memfd `fd`) and checks both rings. Returns 0, or a negative errno with a
 * message in `err`. */
int ring_echo_pair_attach(int fd, unsigned slots, struct ring_echo_pair *out,
			  char *err, size_t err_len);

/* Closes the region (the rings live in it). */
void ring_echo_pair_close(struct ring_echo_pair *p);

/* The checksum both sides compute: order-sensitive, over all handles. */
static inline uint64_t ring_echo_mix(uint64_t sum, uint64_t h)
{
	sum ^= h + UINT64_C(0x9e3779b97f4a7c15) + (sum << 6) + (sum >> 2);
	return sum;
}

#endif
