/* The shard gate (issue 40; docs/design/multi-host.md): with --etcd, a
 * host places only on the nodes of the shards it owns, and only while its
 * etcd lease is surely alive. The membership thread (coord/membership.h)
 * tells the gate which shards it owns and until when its lease is alive;
 * each worker asks the gate before placing a pod.
 *
 * A shard is a value of one node label (--shard-by, by default
 * topology.kubernetes.io/zone); a node without that label is in no shard
 * and no host places there. The mechanism is the pool quarantine's:
 * the pod's copy gets one more required node affinity requirement,
 * `LABEL In (the owned values)` (daemon/node_require_internal.h), so
 * every filter, score and cache of the engine honours it unchanged, and
 * its nodes of other shards are counted as not matching the pod's node
 * affinity. An unschedulable pod's message then also names the node
 * the pod would have taken without the gate, and its shard:
 * "node X belongs to shard S owned by another host" (shard_gate_note).
 *
 * Threads: one writer (the membership thread: shard_gate_shards,
 * shard_gate_owned, shard_gate_alive_until), any number of workers
 * (shard_gate_spec, shard_gate_note). The owned values' ids are a
 * seqlock (EM2, EM3): a worker copies at most SHARD_GATE_IDS ids per pod;
 * the lease's instant is one relaxed word (EM4). Cost per pod with
 * --etcd: a clock read, that copy and a copy of the pod's spec; without
 * --etcd the workers never call the gate. */
#ifndef SHMSCHED_DAEMON_SHARD_GATE_INTERNAL_H
#define SHMSCHED_DAEMON_SHARD_GATE_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "coord/coord.h"
#include "shm/shm.h"

#define SHARD_LABEL_DEFAULT "topology.kubernetes.io/zone"
/* Owned shards the gate can express in one requirement (the spec's
 * POD_MAX_VALUES holds the pod's own values too); a host owning more
 * places on the first SHARD_GATE_IDS by name (counted: unexpressed). */
#define SHARD_GATE_IDS 32u

enum shard_gate_verdict {
	SHARD_GATE_PLACE = 0,  /* *out is the pod kept to the owned shards */
	SHARD_GATE_NO_LEASE,   /* the lease is not surely alive */
	SHARD_GATE_NONE_OWNED, /* this host owns no shard with nodes */
	SHARD_GATE_NO_ROOM,    /* the requirement does not fit the spec */
};

struct shard_gate_counts {
	uint32_t owned;        /* shards owned now */
	uint32_t unexpressed;  /* owned shards past SHARD_GATE_IDS */
	uint64_t alive_until;  /* the lease's instant (monotonic ns; 0: none) */
};

struct shard_gate;

/* A gate over cluster `c` (its snapshot read by the membership thread),
 * the shard label `label` interned as `key` in `strings`. NULL on ENOMEM. */
struct shard_gate *shard_gate_create(struct cluster *c, const struct intern *strings,
				     uint32_t key, const char *label);
void shard_gate_destroy(struct shard_gate *g);

/* coord/membership.h's callbacks (arg: the gate), on its thread. */
size_t shard_gate_shards(void *g, shard_name_t *out, size_t cap);
void shard_gate_owned(void *g, const shard_name_t *names, size_t n);
void shard_gate_alive_until(void *g, uint64_t until_ns);

/* Worker: `pod` kept to the owned shards into *out (SHARD_GATE_PLACE),
 * or why not; the message for a refusal into why[0..len). now: the
 * monotonic clock (base/clock.h's now_ns). */
enum shard_gate_verdict shard_gate_spec(struct shard_gate *g, const struct pod_spec *pod,
					uint64_t now, struct pod_spec *out, char *why,
					size_t len);

/* Worker, inside its read-side section: "node X belongs to shard S owned
 * by another host" for slot `slot` of snapshot `s` into buf; false (buf
 * untouched) when the node has no shard. */
bool shard_gate_note(const struct shard_gate *g, const struct snapshot *s, uint32_t slot,
		     char *buf, size_t len);

void shard_gate_get_counts(struct shard_gate *g, struct shard_gate_counts *out);

#endif
