/* The value of <prefix>shards/<s>/pods/<uid> in etcd (issue 40's key
 * layout, docs/design/multi-host.md): where a pod was placed and what it
 * holds there. Written by the committer (coord/commit_queue.h), read back
 * by a shard's new owner (coord/rebuild.h): outside input then, decoded
 * strictly (tests/fuzz/fuzz_placement_value.c).
 *
 * The text, one space between fields, nothing else, in one of three
 * versions (the decoder takes each; a host writes 3 for a placement
 * charged to a quota queue, 2 otherwise, 1 when the labels pass their
 * bound and there is no queue):
 *   "1 <node> <node generation> <cpu milli> <memory bytes> <gpus> <queue>"
 *   "2 <node> <node generation> <cpu milli> <memory bytes> <gpus> <queue>
 *      <namespace>[ <key>=<value>]..."
 *   "3 <node> <node generation> <cpu milli> <memory bytes> <gpus> <queue>
 *      <flavor> <namespace>[ <key>=<value>]..."
 * node a DNS subdomain (1 to 253 bytes of [a-z0-9.-]); the numbers
 * decimal, no sign, no leading zero, within int64 (the generation within
 * uint64); queue the pod's quota queue (a DNS label, 1 to 63 bytes of
 * [a-z0-9-]) or "-" for none (no host writes one in versions 1 and 2).
 * Version 3 (issue 40, quota surviving a host's death) names the
 * Kueue ClusterQueue the placement is charged to and the ResourceFlavor
 * it was charged in, each a DNS subdomain (1 to 253 bytes of [a-z0-9.-])
 * or "-" for none (a flavor only with a queue), so a shard's new owner
 * charges it to its own tree by name (daemon/etcd_sync.c). A host that
 * knows only versions 1 and 2 refuses a version 3 value (field version:
 * "1 or 2"), which stops its rebuild of that shard (coord/rebuild.h):
 * it keeps the shard closed rather than count the queue's use as none.
 * Version 2 adds what other shards' inter-pod
 * rules need of the pod (issue 40, "Rules across shards"): its namespace
 * (a DNS label, or "-" for none) and its labels, keys strictly ascending
 * (bytewise), at most PLACEMENT_LABELS_COUNT of them (the pod decoder's
 * GROUP_MAX_LABELS) and PLACEMENT_LABELS_MAX bytes with their separating
 * spaces; a key is [<prefix>/]<name>, prefix a DNS subdomain (at most 253
 * bytes of [a-z0-9.-]), name 1 to 63 bytes of [A-Za-z0-9._-]; a value 0
 * to 63 bytes of [A-Za-z0-9._-]. At most PLACEMENT_VALUE_MAX bytes. */
#ifndef SHMSCHED_COORD_PLACEMENT_VALUE_H
#define SHMSCHED_COORD_PLACEMENT_VALUE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define PLACEMENT_NODE_MAX 253
#define PLACEMENT_QUEUE_MAX 63
/* Version 3's ClusterQueue and ResourceFlavor names. */
#define PLACEMENT_CQ_MAX 253
#define PLACEMENT_FLAVOR_MAX 253
#define PLACEMENT_NS_MAX 63
/* A version 2 value's labels: their count (GROUP_MAX_LABELS, the pod
 * decoder's) and the bytes of their text ("k=v k=v"). A pod whose labels
 * pass the bytes is written in version 1 by its host (etcd_sync.c: other
 * hosts then count it without labels, as before version 2); the bound
 * keeps a committer's ring of values (coord/commit_queue.c) small. */
#define PLACEMENT_LABELS_COUNT 64
#define PLACEMENT_LABELS_MAX 2048
#define PLACEMENT_LABEL_KEY_MAX (253 + 1 + 63)
#define PLACEMENT_LABEL_VALUE_MAX 63
/* "3 " + node + 4 numbers of up to 20 digits and their spaces + queue,
 * then " " + flavor, " " + namespace + " " + the labels' text. */
#define PLACEMENT_VALUE_MAX                                                              \
	(2 + PLACEMENT_NODE_MAX + 4 * 21 + 1 + PLACEMENT_CQ_MAX + 1 + PLACEMENT_FLAVOR_MAX + \
	 1 + PLACEMENT_NS_MAX + 1 + PLACEMENT_LABELS_MAX)

struct placement_value {
	char node[PLACEMENT_NODE_MAX + 1];
	uint64_t node_generation;
	int64_t cpu_milli;
	int64_t mem_bytes;
	int64_t gpus;
	/* "" for none; at most PLACEMENT_QUEUE_MAX bytes below version 3. */
	char queue[PLACEMENT_CQ_MAX + 1];
	/* Version 3: the flavor charged ("" for none; only with a queue). */
	char flavor[PLACEMENT_FLAVOR_MAX + 1];
	/* 1, 2 or 3 (0 encodes as 1). Version 1 has no namespace, no labels. */
	uint8_t version;
	/* Versions 2 and 3: the pod's namespace ("" for none) and its labels as
	 * the text holds them ("k=v k=v", "" for none), n_labels of them. */
	char ns[PLACEMENT_NS_MAX + 1];
	uint8_t n_labels;
	char labels[PLACEMENT_LABELS_MAX + 1];
};

/* Whether key=value is a label as a version 2 value holds it (the
 * alphabets and lengths above; the value may be empty). */
bool placement_label_ok(const char *key, size_t key_len, const char *value, size_t value_len);

/* Writes the text into out (PLACEMENT_VALUE_MAX + 1 bytes, NUL-ended);
 * its length, or -EINVAL (a name or label out of its alphabet or length,
 * labels out of order or not n_labels of them, a negative number, a
 * version 1 value with a namespace or labels, a flavor below version 3
 * or without a queue). */
int placement_value_encode(const struct placement_value *v, char *out);

/* Reads len bytes (not NUL-ended). 0, or -EINVAL with msg naming the
 * field, the value and what was expected. */
int placement_value_decode(const void *text, size_t len, struct placement_value *out, char *msg,
			   size_t msglen);

#endif
