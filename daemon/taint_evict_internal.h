/* The node lifecycle's zone tainter (issue 38): which Unknown nodes get
 * the taint node.kubernetes.io/unreachable:NoExecute, and when, as
 * Kubernetes' node lifecycle controller rate-limits it per zone
 * (pkg/controller/nodelifecycle/node_lifecycle_controller.go:
 * zoneNoExecuteTainter, doNoExecuteTaintingPass, handleDisruption,
 * ComputeZoneState, setLimiterInZone; the limiter is
 * pkg/controller/nodelifecycle/scheduler/rate_limited_queue.go's token
 * bucket of burst 1, EvictionRateLimiterBurst).
 *
 * Each tick (taint_evict_tick, after lease_expire):
 *   1. the nodes are grouped by zone (producers_node_zones); a zone's
 *      unhealthy nodes are its leased nodes that are Unknown (a node never
 *      leased counts as Ready: it is not managed);
 *   2. each zone's state: full disruption when none is Ready, partial
 *      when more than 2 are Unknown and at least the unhealthy threshold
 *      (0.55) of them, else normal;
 *   3. handleDisruption: when every zone is fully disrupted, every taint
 *      is taken back (markNodeAsReachable) and no zone taints; when the
 *      cluster leaves that, every lease's renewal moves to now and each
 *      zone's rate is set anew; otherwise a zone whose state changed gets
 *      its rate: normal and full 0.1/s (--node-eviction-rate), partial
 *      0.01/s (--secondary-node-eviction-rate) when the zone has more than
 *      50 nodes (--large-cluster-size-threshold), else 0;
 *   4. each zone lets its Unknown nodes' taints through, oldest Unknown
 *      first, one per token; a renewal takes a node out (lease.c).
 * The caller then applies the taints (producers_sync_unreachable), which
 * reads lease_state_cb: Unknown and let through.
 *
 * The taint manager (taint_evict_pods, each tick after that): Kubernetes'
 * pkg/controller/tainteviction/taint_eviction.go. Every placement on a node
 * with a NoExecute taint (the unreachable one, or any an admin's node
 * update gave) is handed by producers_taint_evict with how long its pod
 * tolerates the node's NoExecute taints; its eviction is scheduled by
 * the first pass that hands it, due at that pass's clock + that time, and
 * done at the first pass at or after it; a later pass keeps the time
 * (processPodOnNode keeps a scheduled work), but a taint the pod does not
 * tolerate at all evicts it at once. A placement no
 * longer handed (the taint lifted by a renewal, the pod gone, or now
 * tolerated forever) has its scheduled eviction cancelled. Evictions go
 * through the producers' path a preemption's victims take: the owner's
 * EVICTED notice (the evictor's rings), the room given back.
 *
 * Time is the lease table's clock (stepped by hand in tests). Threads:
 * taint_evict_tick on one thread at a time (the daemon's lease ticker,
 * or the test's); taint_evict_counts from any thread (under `mu`).
 */
#ifndef SHMSCHED_DAEMON_TAINT_EVICT_INTERNAL_H
#define SHMSCHED_DAEMON_TAINT_EVICT_INTERNAL_H

#include <stdint.h>

#include "ingest/ingest.h"

struct lease_table;
struct producers;

/* Kubernetes' kube-controller-manager defaults. */
#define TAINT_EVICT_RATE_DEFAULT 0.1            /* --node-eviction-rate */
#define TAINT_EVICT_SECONDARY_RATE_DEFAULT 0.01 /* --secondary-node-eviction-rate */
#define TAINT_EVICT_UNHEALTHY_DEFAULT 0.55      /* --unhealthy-zone-threshold */
#define TAINT_EVICT_LARGE_DEFAULT 50u           /* --large-cluster-size-threshold */

struct taint_evict_config {
	double rate;           /* nodes/s, >= 0 (0: never) */
	double secondary_rate; /* nodes/s, >= 0 */
	double unhealthy;      /* (0, 1] */
	uint32_t large;        /* nodes */
};

enum zone_state {
	ZONE_INITIAL = 0,
	ZONE_NORMAL = 1,
	ZONE_PARTIAL = 2, /* partialDisruption */
	ZONE_FULL = 3,    /* fullDisruption */
};

struct taint_evict_counts {
	uint32_t zones;
	uint32_t zones_normal, zones_partial, zones_full;
	uint32_t queued;  /* Unknown nodes waiting for their zone's rate */
	uint64_t tainted; /* taints let through, ever */
	uint32_t pending; /* placements whose eviction is scheduled */
	uint32_t kept;    /* placements whose tolerations are kept */
	uint64_t evicted; /* placements evicted by the taint manager, ever */
};

struct taint_evict;

/* Returns NULL with errno EINVAL (a rate < 0, a threshold outside (0, 1])
 * or ENOMEM. */
struct taint_evict *taint_evict_create(const struct taint_evict_config *cfg,
				       struct lease_table *leases);
void taint_evict_destroy(struct taint_evict *te); /* NULL: no-op */

/* One pass, as of the lease clock's now: steps 1-4 above. Returns the
 * taints let through (or taken back) this pass, or -ENOMEM. */
int taint_evict_tick(struct taint_evict *te, struct producers *p);

/* A placement made, by the worker that made it: its pod's tolerations
 * that a NoExecute taint can match are kept for the taint manager (none:
 * nothing kept). Dropped once the placement is gone (swept by
 * taint_evict_pods). Any thread; takes a mutex only for a pod with such
 * a toleration. */
struct pod_spec;
/* Marks every intern id its kept tolerations hold (a reclaim of the
 * string table's holder: producers_set_string_holder). Takes tol_mu. */
void taint_evict_mark_strings(void *te, producers_mark_fn mark, void *mark_arg);

void taint_evict_placed(struct taint_evict *te, uint64_t id,
			const struct pod_spec *pod);

/* The taint manager's pass, as of the lease clock's now. Returns the
 * placements evicted, or -ENOMEM. */
int taint_evict_pods(struct taint_evict *te, struct producers *p);

void taint_evict_counts(struct taint_evict *te, struct taint_evict_counts *out);

/* A zone state's name: "Initial", "Normal", "PartialDisruption",
 * "FullDisruption" (Kubernetes' ZoneState strings). */
const char *taint_evict_zone_state_name(int state);

#endif
