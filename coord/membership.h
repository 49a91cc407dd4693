/* A host's membership in a multi-host cluster through etcd (issue 40;
 * docs/design/multi-host.md, "Membership and shards"): one thread that
 * holds the host's lease, elects a coordinator, and takes and releases
 * the shards the coordinator assigns. Keys, under /shmsched/<cluster>/:
 *
 *   hosts/<host>          the host's name, with its lease (it is live);
 *                         then its status (coord/host_status.h: its
 *                         shards' free capacity, its replication lag)
 *   coordinator           the coordinator's name, with its lease
 *   shards/<s>/assigned   the host the coordinator gave shard s; written
 *                         only in a transaction guarded by
 *                         LEASE(coordinator) == the coordinator's lease
 *   shards/<s>/owner      the host that owns s, with its lease; taken by
 *                         CREATE(owner) == 0, released (deleted) by
 *                         LEASE(owner) == the owner's lease
 *
 * The lease is renewed on a thread of its own with its own etcd
 * connection (coord/lease_renewer.h: TTL/3 after the last renewal, each
 * keep-alive with a deadline inside what is left of the lease), so that
 * nothing below delays it. Every tick (250 ms, or TTL/6 when shorter) the
 * membership thread reads the whole prefix (one range), and then: with
 * no lease, grants one and puts hosts/<host> with it if no live lease
 * holds that key (CREATE == 0: a join, or a re-join after a loss; a
 * second host of one name waits); with no coordinator, tries to become
 * it; as coordinator, assigns the shards (coord/shard_assign.h)
 * to the live hosts and writes the assigned keys that changed; releases
 * each owned shard assigned elsewhere (told to the caller first, so it
 * stops placing there before the key goes) and takes each assigned shard
 * that has no owner (told after). The owned set is told again every tick
 * (the caller may find nodes of an owned shard that reached it since).
 * With escrow queues, the coordinator then runs their rounds and the
 * owner reads and acknowledges its slices and reports its use
 * (coord/quota_escrow_member.h). With a status callback, the tick then
 * asks for the host's status at most once a second
 * (MEMBERSHIP_STATUS_EVERY_NS) and puts it in hosts/<host> when its text
 * changed (fenced by LEASE(hosts/<host>) == the lease): at most one put a
 * second, HOST_STATUS_VALUE_MAX bytes.
 *
 * The lease is surely alive until the last successful renewal's send
 * time plus TTL - TTL/4 (the margin: a renewal not yet through, the
 * clocks of etcd's lessor): the caller is told that instant after each
 * renewal and checks it itself on every placement, so a host whose
 * renewals are stuck (or that was stopped) places nothing past it. A
 * renewal refused (the lease expired) tells 0 at once; the next tick
 * drops every shard (once) and re-joins.
 *
 * Threads: the callbacks run on the membership thread, except
 * alive_until: on the membership thread or the renewer's, never two at
 * once (the renewer's lock, LR1). */
#ifndef SHMSCHED_COORD_MEMBERSHIP_H
#define SHMSCHED_COORD_MEMBERSHIP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "coord/host_status.h"
#include "coord/lease_renewer.h"
#include "coord/quota_escrow_member.h"
#include "coord/shard_map.h"

#define MEMBERSHIP_TTL_DEFAULT_S 5
#define MEMBERSHIP_TTL_MIN_S 2 /* etcd's minimum TTL */
#define MEMBERSHIP_HOST_MAX 64 /* a host name's bytes, at most */
#define MEMBERSHIP_HOSTS_MAX 256u
/* The host's status is asked for at most this often (on the injected
 * clock). */
#define MEMBERSHIP_STATUS_EVERY_NS UINT64_C(1000000000)

typedef char shard_name_t[SHARD_NAME_MAX];

struct membership_config {
	const char *endpoints; /* etcd's client URLs, comma separated */
	const char *cluster;   /* the key prefix's name: /shmsched/<cluster>/ */
	const char *host;      /* this host's name (unique in the cluster) */
	int64_t ttl_s;         /* the lease's TTL, >= MEMBERSHIP_TTL_MIN_S */
	uint64_t tick_ns;      /* 0: 250 ms, or TTL/6 when shorter */
	/* The shards the coordinator assigns as this host sees them:
	 * writes up to `cap` names to `out` (any order, duplicates allowed),
	 * returns how many. */
	size_t (*shards)(void *arg, shard_name_t *out, size_t cap);
	/* The shards this host owns now (sorted): after each change and
	 * every tick. */
	void (*owned)(void *arg, const shard_name_t *names, size_t n);
	/* The monotonic instant (ns) until which the lease is surely alive;
	 * 0: no lease. After every renewal and on every loss; on the
	 * renewer's thread or this one, never two at once (LR1). */
	void (*alive_until)(void *arg, uint64_t until_ns);
	void *arg;
	uint64_t (*clock_ns)(void); /* NULL: CLOCK_MONOTONIC */
	/* Quota by escrow (coord/quota_escrow_member.h): the queues split
	 * (copied; 0: none) and where the sums of the owned shards' slices go
	 * (on the membership thread, with `arg`; put in force before it
	 * returns). With queues, a release deletes the shard's
	 * acknowledgement and use keys with its owner key. */
	const struct quota_escrow_queue *escrow_queues;
	size_t n_escrow_queues;
	quota_escrow_in_force_fn escrow_in_force;
	/* The host's use of each queue, reported for the coordinator's
	 * rebalance (QE7; with `arg`); NULL: none, the split stays even. */
	quota_escrow_use_fn escrow_use;
	/* This host's status for the owned shards `owned` (n, sorted) into
	 * *out (zeroed first), with `arg`, on the membership thread at most
	 * once every MEMBERSHIP_STATUS_EVERY_NS; put in hosts/<host> when its
	 * text changed. NULL: the key holds the host's name only. */
	void (*status)(void *arg, const shard_name_t *owned, size_t n, struct host_status *out);
};

struct membership_status {
	bool coordinator;
	int64_t lease;       /* 0: none now */
	size_t owned;        /* shards owned now */
	uint64_t joins;      /* leases granted (1 + re-joins) */
	uint64_t renewals;   /* keep-alives answered */
	uint64_t losses;     /* keep-alives refused: the lease had expired */
	uint64_t errors;     /* requests without an answer, or refused */
	uint64_t takes, releases, assigned; /* shards taken, released, assigned */
	uint64_t status_puts; /* the host's status put in hosts/<host> */
	struct lease_renewer_stats renew; /* the keep-alives' latencies and gaps */
};

struct membership;

/* Checks cfg (err says which field and why), opens the client and starts
 * the thread. 0 or a negative errno. */
int membership_start(struct membership **out, const struct membership_config *cfg,
		     char *err, size_t errlen);
/* Stops the thread and revokes the lease (etcd deletes its keys: the
 * host's, its owner keys and, if it coordinates, the coordinator key).
 * NULL: nothing. */
void membership_stop(struct membership *m);
void membership_get_status(struct membership *m, struct membership_status *out);

/* The prefix of a cluster's keys, "/shmsched/<cluster>/", into buf;
 * its length, or -ENAMETOOLONG. */
int membership_prefix(const char *cluster, char *buf, size_t len);

#endif
