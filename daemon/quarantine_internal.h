/* Pools that fail together (issue 38 item 5): producers report a placed
 * pod's failure (OP_FAILURE, ingest/control_ops.h); per (pool,
 * template) the daemon keeps the failures and placements of the last
 * window, and quarantines the pool for that template when the window's
 * failure rate reaches a threshold on at least k distinct nodes.
 *
 * A pool is the value of one node label (--pool-label, default
 * node.kubernetes.io/instance-type); a template is its owner (an
 * identity) and its pod's interned "namespace/name". The caller resolves
 * both to numbers (struct quarantine_key): this module knows no strings.
 *
 * The window (--quarantine-window, default 60 s) is QUARANTINE_BUCKETS
 * buckets of window / QUARANTINE_BUCKETS each: a bucket older than the
 * window is zeroed as it is reused. The rate is failures / max(placements,
 * failures): a failure reported for a pod placed before the window still
 * had a placement.
 *
 *   state        goes to      when
 *   -----------  -----------  ---------------------------------------------
 *   open         quarantined  a failure makes the window's rate >= the
 *                             threshold (--quarantine-threshold, 0.5) with
 *                             failures on >= min_nodes nodes
 *                             (--quarantine-min-nodes, 3), and the nodes of
 *                             every quarantined pool with this one's stay
 *                             within QUARANTINE_CAP_PERCENT of all nodes;
 *                             over that cap it stays open and is counted
 *                             "capped" (logged once per window)
 *   quarantined  open         a window has passed since the trip and the
 *                             window's rate is below the lift threshold
 *                             (threshold / 2: hysteresis; with no new
 *                             placements there, that is a window without a
 *                             failure), or an admin's release
 *                             (quarantine_release; `shmsched pool release`)
 *
 * Nomad marks a node ineligible after 100 rejected plans in 5 minutes;
 * Karpenter repairs nothing when more than 20 % of nodes are unhealthy:
 * hence the cap.
 *
 * Memory is bounded: a table of `entries` (pool, template) pairs fixed at
 * create, each remembering the last QUARANTINE_NODES nodes that failed.
 * When a new pair finds the table full: an open entry without a failure in
 * the window is reused; else the open entry whose last failure is the
 * oldest is taken (its history lost: counted `evicted`); a quarantined
 * entry is never taken, so when every entry is quarantined the failure is
 * not tracked (counted `untracked`, QUARANTINE_UNTRACKED).
 *
 * Time is the caller's `now` (ns, any monotonic origin; tests step it).
 * Threads: every call takes the module's mutex, but quarantine_placed,
 * quarantine_blocks, quarantine_pools and quarantine_failed_nodes first
 * read `live` (relaxed; see quarantine.c) and return at once while
 * nothing is quarantined or tracked: the fast path's cost is that load
 * (and the workers call none of them then: daemon/attempt.c reads
 * quarantine_active first).
 */
#ifndef SHMSCHED_DAEMON_QUARANTINE_INTERNAL_H
#define SHMSCHED_DAEMON_QUARANTINE_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define QUARANTINE_LABEL_DEFAULT "node.kubernetes.io/instance-type"
#define QUARANTINE_THRESHOLD_DEFAULT 0.5
#define QUARANTINE_MIN_NODES_DEFAULT 3u
#define QUARANTINE_WINDOW_DEFAULT_NS (UINT64_C(60) * 1000000000u)
#define QUARANTINE_ENTRIES_DEFAULT 256u
#define QUARANTINE_NODES 16u      /* nodes remembered per entry; min_nodes' most */
#define QUARANTINE_BUCKETS 6u
#define QUARANTINE_CAP_PERCENT 20u
/* Pools quarantined for one template that one placement excludes, at
 * most (the rest are not excluded: a template failing in more than 16
 * pools at once is past what a quarantine of pools helps). */
#define QUARANTINE_EXCLUDED_MAX 16u

struct quarantine_config {
	double threshold;   /* (0, 1]: the trip rate; lifts below threshold / 2 */
	uint32_t min_nodes; /* 1..QUARANTINE_NODES */
	uint64_t window_ns; /* >= QUARANTINE_BUCKETS */
	uint32_t entries;   /* 1..65536: the table's (pool, template) pairs */
};

struct quarantine_key {
	uint32_t pool;     /* the pool label's value (an intern id), != 0 */
	uint32_t owner;    /* the template's identity (owner id) */
	uint32_t template; /* its pod's "namespace/name" (an intern id) */
};

enum quarantine_verdict {
	QUARANTINE_COUNTED = 0,   /* counted; nothing changed */
	QUARANTINE_TRIPPED = 1,   /* this failure quarantined the pool */
	QUARANTINE_HELD = 2,      /* counted; the pool was quarantined already */
	QUARANTINE_CAPPED = 3,    /* would have tripped; over the 20 % cap */
	QUARANTINE_UNTRACKED = 4, /* table full of quarantined entries */
};

/* One entry as shown (quarantine_list, quarantine_blocks). */
struct quarantine_info {
	struct quarantine_key key;
	bool quarantined;
	uint32_t failures;   /* in the window (at the trip, for a quarantined one) */
	uint32_t placements; /* likewise */
	uint32_t nodes;      /* distinct nodes that failed, likewise */
	uint32_t pool_nodes; /* the pool's nodes when last reported */
	uint64_t since_ns;   /* the trip's time (quarantined) */
};

struct quarantine_counts {
	uint32_t tracked;     /* entries in use */
	uint32_t quarantined; /* entries quarantined now */
	uint32_t nodes_quarantined; /* nodes of the distinct quarantined pools */
	uint64_t failures;    /* reported, ever */
	uint64_t trips, lifts, released;
	uint64_t capped;      /* trips refused by the cap */
	uint64_t evicted;     /* open entries taken for a new pair */
	uint64_t untracked;   /* failures not tracked: table full */
	uint64_t refused;     /* placement attempts left unschedulable with
			       * their template's quarantined pools
			       * excluded (quarantine_refused) */
};

struct quarantine;

/* Returns NULL with errno EINVAL (a config field out of its range) or
 * ENOMEM. */
struct quarantine *quarantine_create(const struct quarantine_config *cfg);
void quarantine_destroy(struct quarantine *q); /* NULL: no-op */

/* A failure of a pod placed on `node` of pool `k->pool` (which has
 * `pool_nodes` nodes of `total_nodes`). */
enum quarantine_verdict quarantine_failure(struct quarantine *q, uint64_t now,
					   const struct quarantine_key *k,
					   uint32_t node, uint32_t pool_nodes,
					   uint32_t total_nodes);

/* Its clock (tests': NULL, the default, is now_ns), set before any other
 * thread uses q; and the time by it. */
void quarantine_set_clock(struct quarantine *q, uint64_t (*clock_ns)(void *arg),
			  void *arg);
uint64_t quarantine_now(const struct quarantine *q);

/* Whether some pair is tracked (relaxed load: the header's note). */
bool quarantine_active(const struct quarantine *q);

/* A placement of template (owner, template) on pool `pool`: counted only
 * where that pair is tracked. */
void quarantine_placed(struct quarantine *q, uint64_t now,
		       const struct quarantine_key *k);

/* Whether pool `k->pool` is quarantined for the template, as of `now`
 * (an entry due to lift lifts here); *info filled when it is (may be
 * NULL). */
bool quarantine_blocks(struct quarantine *q, uint64_t now,
		       const struct quarantine_key *k, struct quarantine_info *info);

/* The pools quarantined for template (owner, template) as of `now`, in
 * ascending order, up to `cap` into pools; *first (may be NULL) the first
 * one's entry. Returns how many there are (may exceed cap). 0 at once
 * while no entry is in use (the workers' fast path: one relaxed load). */
uint32_t quarantine_pools(struct quarantine *q, uint64_t now, uint32_t owner,
			  uint32_t template, uint32_t *pools, uint32_t cap,
			  struct quarantine_info *first);

/* `pod` with one more requirement in each required node selector term
 * (one term made when it has none): the label `key` NotIn pools[0..n),
 * into *out: its nodes in those pools no longer fit. false (out unset)
 * when the requirements do not fit the spec's arrays (POD_MAX_EXPRS,
 * POD_MAX_VALUES), or the pod's required terms are present but empty
 * (they match no node anyway). */
struct pod_spec;
bool quarantine_exclude(const struct pod_spec *pod, uint32_t key,
			const uint32_t *pools, uint32_t n, struct pod_spec *out);

/* Crash-pair avoidance (issue 38 Deliver 5, Borg's "(template, node)
 * pairs that failed recently score lower"): the nodes (slots) where
 * template (owner, template) failed within the window as of `now`, in any
 * pool, each once, up to `cap` into nodes. Returns how many it stored.
 * 0 at once while no entry is in use (one relaxed load, as
 * quarantine_pools); else a scan of the entries under the mutex, and
 * QUARANTINE_NODES looks for each of this template's. A failure on a node
 * without the pool label is not tracked (OP_FAILURE reports it to no
 * pool), so it lowers no score. */
uint32_t quarantine_failed_nodes(struct quarantine *q, uint64_t now, uint32_t owner,
				 uint32_t template, uint32_t *nodes, uint32_t cap);

/* The weight of the preferred node affinity term quarantine_avoid adds:
 * the most a term may carry (kube's 1..100). */
#define QUARANTINE_AVOID_WEIGHT 100
/* Nodes one placement avoids, at most (the most recent failures are not
 * preferred over older ones: the first found). */
#define QUARANTINE_AVOID_MAX 16u

/* `pod` (in place) with one preferred node affinity term more, of weight
 * QUARANTINE_AVOID_WEIGHT: metadata.name (field id `name_key`) NotIn each
 * of names[0..n), one requirement per name (a field requirement takes one
 * value); so the NodeAffinity score of the nodes named is that much below
 * the others', and nothing else changes (a filter passes the same nodes).
 * As many names as the spec's arrays have room for (POD_MAX_PREFERRED,
 * POD_MAX_EXPRS, POD_MAX_VALUES). Returns false (pod unchanged) when
 * there is room for none, or n is 0. */
bool quarantine_avoid(struct pod_spec *pod, uint32_t name_key,
		      const uint32_t *names, uint32_t n);

/* Lifts the quarantines due as of `now`. Returns how many lifted. */
unsigned quarantine_tick(struct quarantine *q, uint64_t now);

/* Lifts pool `pool`'s quarantines: every template's, or (template != 0)
 * those of the pairs whose template is `template`. Returns how many
 * lifted (0: none was quarantined). */
unsigned quarantine_release(struct quarantine *q, uint32_t pool, uint32_t template);

/* Copies up to `n` entries in use (quarantined ones first) to out: a
 * quarantined one as it tripped, an open one's window as of `now` (as a
 * failure now would judge it; as of its last failure, placements counted
 * in a later bucket, such as a surge's replacement after a release, were
 * left out). Returns how many there are in all. */
uint32_t quarantine_list(struct quarantine *q, uint64_t now, struct quarantine_info *out,
			 uint32_t n);

void quarantine_counts(struct quarantine *q, struct quarantine_counts *out);

/* A placement attempt that found no node once its template's quarantined
 * pools were excluded: counted in `refused`. */
void quarantine_refused(struct quarantine *q);

/* "pool P quarantined for template T: F failures on N nodes in W s"
 * into buf (snprintf's rules). */
void quarantine_message(const struct quarantine *q, const struct quarantine_info *info,
			const char *pool, const char *template, char *buf,
			size_t len);

#endif
