/* Node leases (issue 38): a node's agent renews its lease (`shmsched node
 * lease NAME`, the admin socket's OP_NODE_EVENT with NODE_EVENT_LEASE);
 * a node whose last renewal is older than the grace period
 * (shmschedd --node-monitor-grace-period, Kubernetes'
 * node-monitor-grace-period, 50 s) is Unknown, and the producers' node
 * path (producers_sync_unreachable) gives it the taint
 * node.kubernetes.io/unreachable:NoExecute, which the engine's taint
 * filter already honours; a renewal makes it Ready and lifts the taint. A
 * node that never sent a lease is not managed: it is never tainted and
 * its taints are never touched.
 *
 * Time comes from a clock the caller gives (the daemon's, or a test's
 * that it steps by hand): nothing here reads a clock or sleeps.
 *
 * Threads and locks: every function takes the table's mutex. The
 * producers' lock, when held, is taken before it (renewals and the sync
 * run under it), never after, so the order is producers -> lease.
 */
#ifndef SHMSCHED_DAEMON_LEASE_INTERNAL_H
#define SHMSCHED_DAEMON_LEASE_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>

/* Kubernetes' defaults: node-monitor-grace-period 50 s (since 1.32), the
 * kubelet's lease renewal every 10 s. */
#define LEASE_GRACE_NS_DEFAULT (UINT64_C(50) * 1000000000u)

enum lease_state {
	LEASE_UNMANAGED = -1, /* never leased: leave the node alone */
	LEASE_READY = 0,
	LEASE_UNKNOWN = 1,
};

struct lease_table;

/* A table with grace period `grace_ns` (> 0) and clock `clock_ns(arg)`
 * (monotonic nanoseconds). Returns NULL with errno EINVAL or ENOMEM. */
struct lease_table *lease_create(uint64_t grace_ns, uint64_t (*clock_ns)(void *),
				 void *clock_arg);
void lease_destroy(struct lease_table *t); /* NULL: no-op */

/* Node `name` (an interned name, > 0) renewed its lease now. Returns the
 * state it had before (LEASE_UNMANAGED for its first), or -ENOMEM. */
int lease_renew(struct lease_table *t, uint32_t name);

/* Marks every Ready node whose lease is older than the grace period
 * Unknown, as of now. Returns how many became Unknown. O(leased nodes). */
unsigned lease_expire(struct lease_table *t);

/* Node `name`'s state (enum lease_state). */
int lease_state(struct lease_table *t, uint32_t name);

/* lease_renew (returning 0 or its negative errno) and lease_state with
 * the signatures producers_set_leases() takes (t: the table). */
int lease_renew_cb(void *t, uint32_t name);
int lease_state_cb(void *t, uint32_t name);

/* Nodes leased, and of them Unknown now. */
void lease_counts(struct lease_table *t, uint32_t *leased, uint32_t *unknown);

/* A thread calling fn(arg) every period_ns (the daemon's lease tick, when
 * it reads the real clock). Returns NULL with errno. Stop: at once, a
 * call in progress finished first; NULL: no-op. */
struct lease_ticker;
struct lease_ticker *lease_ticker_start(void (*fn)(void *), void *arg,
					uint64_t period_ns);
void lease_ticker_stop(struct lease_ticker *k);

#endif
