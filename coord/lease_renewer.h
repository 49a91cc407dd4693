/* A host's etcd lease kept alive on a thread of its own (issue 40): its
 * own etcd client (connection) and nothing else on it, so that what the
 * membership thread does (a range of many keys, a big take, an escrow
 * round, a request queued behind the commit lanes' transactions) never
 * delays a keep-alive. The membership thread grants the lease and hands
 * it over (lease_renewer_hold); this thread renews it TTL/3 after the
 * last renewal's send time, each call with a deadline inside what is
 * left of the lease, and tells the instant until which the lease is
 * surely alive (last renewal's send time + TTL - TTL/4) after each
 * renewal. A keep-alive refused (the lease expired) tells 0 at once and
 * marks the lease lost; the membership thread takes that loss exactly
 * once (lease_renewer_take_loss) and drops its shards.
 *
 * Threads: start, hold, take_loss, drop and stop from one thread (the
 * membership thread's, or its owner's around it); alive_until is called
 * under the renewer's lock from either thread, so its calls are ordered
 * and the last one told is the one in force; stats from any thread. */
#ifndef SHMSCHED_COORD_LEASE_RENEWER_H
#define SHMSCHED_COORD_LEASE_RENEWER_H

#include <stddef.h>
#include <stdint.h>

/* Latency buckets' upper bounds (s) for shmsched_etcd_lease_renew_seconds;
 * +Inf is the count. */
#define LEASE_RENEWER_BUCKETS 10
extern const double lease_renewer_bucket_s[LEASE_RENEWER_BUCKETS];

struct lease_renewer_config {
	const char *endpoints; /* etcd's client URLs, comma separated */
	const char *host;      /* for log lines */
	int64_t ttl_s;         /* the lease's TTL (>= 2) */
	/* The monotonic instant (ns) until which the lease is surely alive;
	 * 0: no lease. Under the renewer's lock. */
	void (*alive_until)(void *arg, uint64_t until_ns);
	void *arg;
	uint64_t (*clock_ns)(void); /* NULL: CLOCK_MONOTONIC */
};

struct lease_renewer_stats {
	uint64_t renewals;   /* keep-alives answered */
	uint64_t losses;     /* keep-alives refused: the lease had expired */
	uint64_t errors;     /* keep-alives without an answer */
	uint64_t gap_max_ns; /* the longest time between two renewals' sends
			      * (or the grant's and the first) of one lease */
	uint64_t rtt_max_ns; /* the slowest keep-alive answered (sent -> answer) */
	uint64_t rtt_sum_ns; /* all answered keep-alives' latencies, summed */
	/* Answered keep-alives by latency: [i] those within
	 * lease_renewer_bucket_s[i] (not cumulative). */
	uint64_t buckets[LEASE_RENEWER_BUCKETS];
};

struct lease_renewer;

/* Opens the client and starts the thread: 0 or a negative errno (err
 * says why). */
int lease_renewer_start(struct lease_renewer **out, const struct lease_renewer_config *cfg,
			char *err, size_t errlen);
/* Stops the thread and closes its client; the lease is the caller's to
 * revoke. NULL: nothing. */
void lease_renewer_stop(struct lease_renewer *r);
/* A lease granted with its grant's send time: renewed from now on, and
 * its alive instant told. */
void lease_renewer_hold(struct lease_renewer *r, int64_t lease, uint64_t sent_ns);
/* 1 once if `lease` was found expired by a keep-alive (then it is no
 * longer held; 0 was told already), 0 otherwise. */
int lease_renewer_take_loss(struct lease_renewer *r, int64_t lease);
/* The caller gave the lease up (stop, or a loss it saw itself): not
 * renewed any more, 0 told. */
void lease_renewer_drop(struct lease_renewer *r);
void lease_renewer_get_stats(struct lease_renewer *r, struct lease_renewer_stats *out);

#endif
