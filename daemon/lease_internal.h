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

/* lease_renew (returning 0 or its negative errno) and a node's taint as
 * the signatures producers_set_leases() take them (t: the table). The
 * taint's view (lease_state_cb): LEASE_UNKNOWN only for an Unknown node
 * whose taint its zone's rate let through (lease_set_tainted, the zone
 * tainter of daemon/taint_evict_internal.h); an Unknown node still in its
 * zone's queue reads LEASE_READY (no taint yet), as Kubernetes' node
 * lifecycle controller taints Unknown nodes only as its
 * zoneNoExecuteTainter queue lets them through. */
int lease_renew_cb(void *t, uint32_t name);
int lease_state_cb(void *t, uint32_t name);

/* Nodes leased, of them Unknown now, and of those tainted. */
void lease_counts(struct lease_table *t, uint32_t *leased, uint32_t *unknown);
uint32_t lease_tainted_count(struct lease_table *t);

/* The table's clock, now. */
uint64_t lease_now(struct lease_table *t);

/* Node `name`'s entry: its state (enum lease_state; LEASE_UNMANAGED when
 * never leased, the rest then untouched), whether its taint was let
 * through, and when it went Unknown (its clock). */
int lease_node(struct lease_table *t, uint32_t name, bool *tainted,
	       uint64_t *unknown_ns);

/* Node `name`'s taint let through (true) or taken back (false). Only an
 * Unknown node keeps it: a renewal clears it. Returns 0, or -ENOENT when
 * the node is not Unknown (renewed meanwhile) or never leased. */
int lease_set_tainted(struct lease_table *t, uint32_t name, bool tainted);

/* Every taint taken back (Kubernetes' markNodeAsReachable on every node
 * when all zones are fully disrupted). Returns how many were set. */
unsigned lease_untaint_all(struct lease_table *t);

/* Every lease's last renewal moved to now, states unchanged: Kubernetes
 * sets every node's probeTimestamp to now when the cluster leaves full
 * disruption, so Ready nodes get a whole grace period again. */
void lease_touch_all(struct lease_table *t);

/* A thread calling fn(arg) every period_ns (the daemon's lease tick, when
 * it reads the real clock). Returns NULL with errno. Stop: at once, a
 * call in progress finished first; NULL: no-op. */
struct lease_ticker;
struct lease_ticker *lease_ticker_start(void (*fn)(void *), void *arg,
					uint64_t period_ns);
void lease_ticker_stop(struct lease_ticker *k);

#endif
