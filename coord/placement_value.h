/* The value of <prefix>shards/<s>/pods/<uid> in etcd (issue 40's key
 * layout, docs/design/multi-host.md): where a pod was placed and what it
 * holds there. Written by the committer (coord/commit_queue.h), read back
 * by a shard's new owner (coord/rebuild.h): outside input then, decoded
 * strictly (tests/fuzz/fuzz_placement_value.c).
 *
 * The text, one space between fields, nothing else:
 *   "1 <node> <node generation> <cpu milli> <memory bytes> <gpus> <queue>"
 * 1 is the format's version; node a DNS subdomain (1 to 253 bytes of
 * [a-z0-9.-]); the numbers decimal, no sign, no leading zero, within
 * int64 (the generation within uint64); queue the pod's quota queue (a
 * DNS label, 1 to 63 bytes of [a-z0-9-]) or "-" for none. At most
 * PLACEMENT_VALUE_MAX bytes. */
#ifndef SHMSCHED_COORD_PLACEMENT_VALUE_H
#define SHMSCHED_COORD_PLACEMENT_VALUE_H

#include <stddef.h>
#include <stdint.h>

#define PLACEMENT_NODE_MAX 253
#define PLACEMENT_QUEUE_MAX 63
/* "1 " + node + 4 numbers of up to 20 digits and their spaces + queue. */
#define PLACEMENT_VALUE_MAX (2 + PLACEMENT_NODE_MAX + 4 * 21 + 1 + PLACEMENT_QUEUE_MAX)

struct placement_value {
	char node[PLACEMENT_NODE_MAX + 1];
	uint64_t node_generation;
	int64_t cpu_milli;
	int64_t mem_bytes;
	int64_t gpus;
	/* "" for none. */
	char queue[PLACEMENT_QUEUE_MAX + 1];
};

/* Writes the text into out (PLACEMENT_VALUE_MAX + 1 bytes, NUL-ended);
 * its length, or -EINVAL (a name out of its alphabet or length, a
 * negative number). */
int placement_value_encode(const struct placement_value *v, char *out);

/* Reads len bytes (not NUL-ended). 0, or -EINVAL with msg naming the
 * field, the value and what was expected. */
int placement_value_decode(const void *text, size_t len, struct placement_value *out, char *msg,
			   size_t msglen);

#endif
