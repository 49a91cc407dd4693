/* A host's status in etcd: the value of <prefix>hosts/<host> (issue 40
 * items 4 and 6; docs/design/multi-host.md, "Keys" and "Pods that do not
 * fit at home"), put with the host's lease by its membership thread
 * (coord/membership.h). It says, per shard the host owns, how many nodes
 * it has and what is free there (the largest free cpu, memory and pods
 * of one node, each on its own, and their sums over the shard's nodes),
 * and the host's replication lag (the records queued for etcd and the
 * oldest one's age). Read by `shmsched cluster status` and by the chooser
 * of hosts a pod may be forwarded to (coord/forward_choose.h): outside input,
 * decoded strictly (tests/fuzz/fuzz_host_status.c).
 *
 * The text, one space between fields, nothing else:
 *   "1 status <lag records> <lag oldest ms> <more>" then, a shard,
 *   " <shard> <nodes> <largest cpu milli> <largest memory bytes>
 *    <largest pods> <sum cpu milli> <sum memory bytes> <sum pods>"
 * 1 is the format's version; numbers decimal, no sign, no leading zero,
 * within int64 (nodes within uint32); shards by name (shard_name_valid),
 * strictly ascending by bytes, at most HOST_STATUS_SHARDS of them; `more`
 * the owned shards past those (then exactly HOST_STATUS_SHARDS are
 * listed: the first by name), at most SHARD_MAX; each largest figure at
 * most its sum, and a shard of no nodes all 0. At most
 * HOST_STATUS_VALUE_MAX bytes. Before a host's first status the key holds
 * its name alone (the join's put), which the decoder refuses (field
 * `version`). */
#ifndef SHMSCHED_COORD_HOST_STATUS_H
#define SHMSCHED_COORD_HOST_STATUS_H

#include <stddef.h>
#include <stdint.h>

#include "coord/shard_map.h"

/* The shards a value lists at most: a host owning more lists the first
 * by name and counts the others in `more`. */
#define HOST_STATUS_SHARDS 16
/* "1 status " + two numbers of up to 19 digits and a `more` of up to 3,
 * with their spaces; then each shard: a space, its name, its nodes (up to
 * 10 digits) and 6 numbers of up to 19, with their spaces: 3,172 bytes,
 * exactly the largest value. */
#define HOST_STATUS_VALUE_MAX \
	((int)(9 + 2 * 20 + 3 + HOST_STATUS_SHARDS * (1 + (SHARD_NAME_MAX - 1) + 11 + 6 * 20)))

struct host_status_shard {
	char name[SHARD_NAME_MAX];
	uint32_t nodes;
	/* Free now, relaxed: the largest on one node (each resource on its
	 * own: two figures may be two nodes'), and the sums. */
	int64_t largest_cpu_milli, largest_mem_bytes, largest_pods;
	int64_t sum_cpu_milli, sum_mem_bytes, sum_pods;
};

struct host_status {
	/* Replication lag: records queued for etcd and not yet answered
	 * (every owned shard's committer), and the oldest one's age. */
	int64_t lag_records;
	int64_t lag_oldest_ms;
	uint32_t more; /* owned shards past `shards` */
	uint32_t n;
	struct host_status_shard shards[HOST_STATUS_SHARDS];
};

/* Writes the text into out (HOST_STATUS_VALUE_MAX + 1 bytes, NUL-ended);
 * its length, or -EINVAL (what the decoder would refuse). */
int host_status_encode(const struct host_status *v, char *out);

/* Reads len bytes (not NUL-ended). 0, or -EINVAL with msg naming the
 * field, the value and what was expected, and *out zeroed. */
int host_status_decode(const void *text, size_t len, struct host_status *out, char *msg,
		       size_t msglen);

#endif
