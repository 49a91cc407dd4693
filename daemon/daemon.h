/* The daemon, assembled: cluster state, engines, producers, the control
 * socket and the worker pool. shmschedd's main starts one; the benchmark
 * runs one in process. The parts are the modules' (see each header); this
 * only wires them and orders start and stop.
 */
#ifndef SHMSCHED_DAEMON_DAEMON_H
#define SHMSCHED_DAEMON_DAEMON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct quota_tree;
struct afs_settings;

struct daemon_config {
	const char *socket_path;   /* required */
	const char *cluster_path;  /* Kubernetes JSON; NULL: synthetic */
	uint32_t synthetic_nodes;  /* when cluster_path is NULL; 0 with no
				    * cluster_path: no cluster input (only an
				    * existing state can be started) */
	uint32_t synthetic_running;
	const char *config_path;   /* KubeSchedulerConfiguration; NULL: defaults */
	uint64_t seed;             /* synthetic cluster, tie-breaks */
	unsigned workers;          /* 0: one per allowed CPU less one, at least 1 */
	bool pin;                  /* pin workers to cores (hwloc) */
	uint32_t slots;            /* per producer region; 0: 4096 */
	uint32_t max_placements;   /* live placements kept; 0: DAEMON_MAX_PLACEMENTS */
	const uid_t *allowed_uids; /* none and no gids: the daemon's own uid */
	size_t n_allowed_uids;
	const gid_t *allowed_gids;
	size_t n_allowed_gids;
	/* The producer socket's mode (0: 0600) and group (when
	 * has_socket_group): --allow-uid/--allow-gid need a mode that lets
	 * those users reach it. */
	mode_t socket_mode;
	gid_t socket_group;
	bool has_socket_group;
	/* The admin socket: node events, resource names, and all a producer
	 * may do. NULL: socket_path with ".admin" appended. Admitted: the
	 * admin uids and gids; none given: the daemon's own uid. Its file's
	 * mode lets exactly those reach it (daemon_admin_mode); the
	 * credential check (SO_PEERCRED) is the real gate. */
	const char *admin_socket_path;
	const uid_t *admin_uids;
	size_t n_admin_uids;
	const gid_t *admin_gids;
	size_t n_admin_gids;
	/* The policy file (policy/policy.h): which namespaces and
	 * PriorityClasses each producer identity may use, and whose pods its
	 * preemptions may evict; read at start (a bad one stops the start)
	 * and again by `shmsched policy reload` and daemon_reload_policy()
	 * (shmschedd's SIGHUP). NULL: the default (any
	 * namespace; system- PriorityClasses for admin connections only). */
	const char *policy_path;
	/* The state region (shm/state.h): its name (NULL: an anonymous one,
	 * gone with the process), the node slots of a new one (0:
	 * DAEMON_MAX_NODES), its file's mode (0: 0600) and group. An existing
	 * region of that name is resumed (see `resume` below), unless
	 * `fresh`: then removed first, and the store (if any) cleared. */
	const char *state_name;
	/* The durable store (bind/store.h): its directory (NULL: none) and
	 * durability mode (enum store_durability; 0 none, 1 async, 2 sync). */
	const char *state_dir;
	int durability;
	uint32_t max_nodes;
	mode_t region_mode;
	gid_t region_group;
	bool has_region_group;
	bool fresh;
	/* What a new state is built from is recorded in it (and in the
	 * store): the cluster input (the file's absolute path and a hash of
	 * its bytes, or "synthetic N:R seed S") and the configuration's.
	 * An existing region, or a store that holds nodes, whose record
	 * differs from the given inputs (or has none, made by an older
	 * version) is refused, naming both, unless `resume` (keep it; the
	 * cluster input not read) or `fresh` (rebuild from the inputs, the
	 * store cleared too). With no cluster input given (cluster_path NULL
	 * and synthetic_nodes 0) an existing state is resumed, and a new one
	 * refused. */
	bool resume;
	/* Pods wait in the scheduling queue while no node fits, unless their
	 * slot says SHMSCHED_SLOT_NO_WAIT (default: only pods whose slot says
	 * SHMSCHED_SLOT_WAIT wait; the others are answered at once). */
	bool wait_default;
	/* No warmer thread (daemon/warm_internal.h): the workers fault the
	 * placement table's new pages in themselves. On a machine whose every
	 * core is busy, the warmer's faults take a core from a spinning
	 * producer or worker. */
	bool no_warm;
	/* A sleeping worker's longest sleep before it polls again, in
	 * microseconds (0: the pool's default, 1,000). Tests make it long to
	 * see that the doorbells, not the timeout, wake it. */
	uint32_t idle_sleep_us;
	/* No doorbells (include/shmsched/wire.h): a producer's pod waits for
	 * a sleeping worker's next poll, as before they were made. For the
	 * comparison in shmsched-bench (--no-doorbells). */
	bool no_doorbells;
	/* A control connection (either socket) that has made a request and
	 * then sends none for this long, while its producer has no pod
	 * submitted, waiting or answered meanwhile, is closed (ERROR
	 * ETIMEDOUT): 0: DAEMON_IDLE_TIMEOUT_S, unless no_idle_timeout. */
	unsigned idle_timeout_s;
	bool no_idle_timeout;
	/* Issue 41's budgets per producer identity (producers_set_budgets;
	 * 0: its defaults). */
	uint64_t strings_per_identity;
	uint64_t template_bytes_per_identity;
	/* Kueue's quotas (quota/quota.h), sealed by the caller and not owned:
	 * it must outlive daemon_stop(). A pod whose metadata.labels has
	 * kueue.x-k8s.io/queue-name is placed under the quota of the
	 * ClusterQueue its LocalQueue (its namespace, that name) names, or
	 * answered UNSCHEDULABLE naming the queue; pods without the label are
	 * under none. NULL: no quotas. A gang whose pods name one LocalQueue
	 * is charged the sum of its requests all or nothing (daemon/attempt.c
	 * attempt_gang) and waits as one for quota (daemon/wait.c QG1). */
	struct quota_tree *quota;
	/* Kueue's admission fair sharing (Configuration .admissionFairSharing;
	 * daemon/admission_fair_internal.h), for ClusterQueues whose
	 * admissionScope.admissionMode is UsageBasedAdmissionFairSharing:
	 * NULL: off. Copied at the start. Its clock, monotonic ns: NULL: the
	 * daemon's (base/clock.h); a test's steps it by hand (each worker's
	 * poll samples when the interval passed on it). */
	const struct afs_settings *admission_fair_sharing;
	uint64_t (*afs_clock_ns)(void *arg);
	void *afs_clock_arg;
	/* Node leases (issue 38; daemon/lease_internal.h): a node that
	 * renewed its lease and then renews none for longer than this is
	 * Unknown, tainted node.kubernetes.io/unreachable:NoExecute (0:
	 * 50 s, Kubernetes' node-monitor-grace-period). The leases' clock,
	 * monotonic ns: NULL: the daemon's (base/clock.h), and a thread
	 * checks the leases every DAEMON_LEASE_TICK_NS; given (a test's,
	 * stepped by hand): no thread, the caller calls daemon_lease_tick(). */
	uint64_t node_monitor_grace_ns;
	uint64_t (*lease_clock_ns)(void *arg);
	void *lease_clock_arg;
	/* The unreachable taint's rate per zone (daemon/taint_evict_internal.h;
	 * Kubernetes' kube-controller-manager flags), in nodes/s: 0: the
	 * default (0.1 and 0.01); negative: 0/s (never). The unhealthy zone
	 * threshold, (0, 1]: 0: 0.55. The large zone size: 0: 50; negative:
	 * 0 (every zone large). */
	double node_eviction_rate;
	double secondary_node_eviction_rate;
	double unhealthy_zone_threshold;
	int64_t large_cluster_size_threshold;
	/* Pools that fail together (daemon/quarantine_internal.h): the node
	 * label whose value is a node's pool (NULL: the default,
	 * node.kubernetes.io/instance-type), the failure rate that trips a
	 * quarantine ((0, 1]; 0: 0.5), the distinct nodes that must have
	 * failed (0: 3), the window (0: 60 s). */
	const char *pool_label;
	/* A host of a multi-host cluster through etcd (issue 40;
	 * coord/membership.h, daemon/shard_gate_internal.h): etcd's client
	 * URLs, comma separated (NULL: one host, none of what follows); the
	 * lease's TTL in seconds (0: 5; at least 2); the cluster's name, its
	 * keys' prefix /shmsched/<name>/ (NULL: "default"); this host's name
	 * (NULL: gethostname); the node label whose value is a node's shard
	 * (NULL: topology.kubernetes.io/zone). The host places only on the
	 * nodes of the shards it owns, and only while its lease is surely
	 * alive; gangs are refused and preemption is off. */
	const char *etcd_endpoints;
	int64_t etcd_lease_ttl_s;
	const char *etcd_cluster;
	const char *host_name;
	const char *shard_label;
	/* --etcd-durability: how placements reach etcd: sync (each
	 * placement committed before its pod is answered), async (answered
	 * at once, committed within the committer's window, a loss rolled
	 * back and reported; daemon/etcd_sync_internal.h);
	 * ETCD_DURABILITY_NONE keeps them on this host only (the behaviour
	 * before sync was built: tests). */
	enum etcd_durability {
		ETCD_DURABILITY_SYNC = 0,
		ETCD_DURABILITY_NONE = 1,
		ETCD_DURABILITY_ASYNC = 2,
	} etcd_durability;
	double quarantine_threshold;
	uint32_t quarantine_min_nodes;
	uint64_t quarantine_window_ns;
	/* Tests only: the quarantine's clock, monotonic ns (NULL: now_ns):
	 * its window and the crash-pair avoidance's, stepped by a test.
	 * Called from the workers and the control threads. */
	uint64_t (*quarantine_clock_ns)(void *arg);
	void *quarantine_clock_arg;
	/* Tests only: the workers' engines' clock for the TTL of the classes
	 * compiled ahead for templates (engine_set_clock; NULL: now_ns), so a
	 * test steps past ENGINE_PREPARED_TTL_NS instead of waiting it out.
	 * Called from the worker threads. */
	uint64_t (*engine_clock_ns)(void);
	/* Tests only: the clock (ns) of managers' deadlines and not-before
	 * times (issue 38 item 3; producers_set_approval_clock; NULL:
	 * now_ns). Called on the admin socket's thread. */
	uint64_t (*approval_clock)(void *arg);
	void *approval_clock_arg;
	/* Reclaim by quota (issue 37 item 4; daemon/quota_charge.c QA6): a
	 * pod admitted less than this many seconds ago is never a victim
	 * (--reclaim-min-run; 0: none), and the victims' requests in a
	 * resource needing preemption are at most this many thousandths of
	 * the preemptor's (--reclaim-evict-cap; 0: the default, 1500). */
	uint32_t reclaim_min_run_s;
	uint32_t reclaim_evict_cap_milli;
};

#define DAEMON_LEASE_TICK_NS UINT64_C(1000000000)

#define DAEMON_IDLE_TIMEOUT_S 300u
/* The producer socket's connections: at most DAEMON_PER_UID per uid, and
 * the last DAEMON_RESERVE of DAEMON_CONNECTIONS only for uids with none
 * open: uids holding connections share 48 slots (3 uids at the cap), and
 * 16 more uids get one each. The admin socket has its own 16. */
#define DAEMON_CONNECTIONS 64u
#define DAEMON_PER_UID 16u
#define DAEMON_RESERVE 16u
#define DAEMON_ADMIN_CONNECTIONS 16u

/* The admin socket's file mode and group for cfg's admin uids and gids:
 * 0600 when only the daemon's own uid is admitted; 0660 and that group
 * when one gid is (and no other uid); 0666 when another uid or several
 * gids are (the credential check then refuses everyone else, with an
 * ERROR naming who is admitted). */
void daemon_admin_mode(const struct daemon_config *cfg, mode_t *mode,
		       gid_t *group, bool *has_group);

/* Live placements the daemon keeps by default: 1,048,576 records of 280
 * bytes, backed by memory only as they are used. Bound pods (a cluster
 * file's running pods) take records too. */
#define DAEMON_MAX_PLACEMENTS (UINT32_C(1) << 20)
/* Node slots of a new state region by default; each costs about 2.5 KiB
 * of the region (two snapshot buffers and a ledger record), backed only
 * as nodes arrive. */
#define DAEMON_MAX_NODES (UINT32_C(1) << 16)
/* Interned strings (label keys and values, node names, ...) a state
 * region holds, and their bytes: backed only as strings arrive. */
#define DAEMON_MAX_STRINGS (UINT32_C(1) << 22)
#define DAEMON_STRING_BYTES (UINT64_C(1) << 28)

/* The workers' engines' caches, summed (workers/engine.h's
 * engine_stats). Classes made (templates prepared and specs seen twice; of
 * them with a sibling's static results copied), cold classes evicted and
 * whole caches flushed; pods placed without a class of their own (first
 * sights, cold siblings) and the nodes scans checked, and scans read only
 * where a sibling's index passes; whole class indexes and request shapes
 * read again; request shapes made, the nodes they evaluated, and the
 * leaves the class indexes updated one by one. */
struct daemon_cache_stats {
	uint64_t classes, sibling_copies, class_evictions, class_flushes;
	uint64_t classless_pods, nodes_checked, pruned_scans;
	uint64_t index_rebuilds, shape_rebuilds;
	uint64_t shapes, shape_evals, index_updates;
};

struct daemon_stats {
	uint32_t nodes;
	unsigned workers;
	uint64_t producers_registered, producers_gone;
	uint64_t producer_faults;  /* disconnected for breaking their region's rings */
	uint32_t interned_strings; /* strings the intern table holds (freed ones not counted) */
	/* Issue 41: the table's reclaims while the daemon ran (after
	 * producers left), and the strings they freed. */
	uint64_t strings_reclaims, strings_reclaimed;

	uint64_t placements;       /* live: placed and not released */
	uint64_t pods, placed, unschedulable, rejected, cancelled;
	uint64_t conflicts, gave_up, bad_handles, completion_overflows;
	/* Pods that waited in the queue, and how each ended; the queues now
	 * (scheduler_pending_pods{queue}). */
	uint64_t waited, waited_placed, timed_out, cancelled_by_producer;
	uint64_t cancelled_waiting_at_shutdown, forgotten_with_producer;
	uint64_t queue_retries;
	uint64_t queue_woken;         /* moved out of unschedulable by an event */
	uint64_t queue_hints_skipped; /* (event, pod) pairs that could not help */
	uint64_t queue_events;        /* events read, summed over the workers */
	uint64_t queue_events_unwalked; /* of those, ones no parked pod could
					 * use, told without a walk */
	uint64_t pending_active, pending_backoff, pending_unschedulable;
	/* Preemption: requests to the evictor, pods placed by it, pods
	 * evicted, EVICTED notices written (and lost to a full section). */
	uint64_t preemptions, preempted, victims, notices, notices_dropped;
	/* Reclaim by quota: requests asked by parked pods, served by the
	 * evictor, pods evicted, and requests no node could serve. */
	uint64_t reclaim_asked, reclaim_requests, reclaim_victims, reclaim_no_node;
	/* Waiting for quota (daemon/wait.c): pods woken by quota given back
	 * in their cohort tree (QW2, PW2), and of them those parked again
	 * unattempted because quota would refuse them (QW9). */
	uint64_t quota_woken, quota_skipped;
	uint64_t evictor_requests, evictor_held; /* served by the evictor, and
						  * of them those that held a node */
	/* The evictor's doorbell (daemon/evict_bell.c): rings that woke it
	 * (a FUTEX_WAKE each) and rings that found it awake (none). */
	uint64_t evictor_wakes, evictor_wakes_avoided;
	/* Gangs: placed whole, attempts that placed none (rolled back),
	 * gangs that did not gather minMember in time. */
	uint64_t gangs_placed, gang_failures, gang_rollbacks, gang_timeouts;
	/* Issue 41's budgets now (producers_budget_use): string table bytes
	 * and compiled template bytes charged to producer identities, and
	 * templates registered uncompiled, ever. */
	uint64_t strings_charged, template_bytes, templates_uncompiled;
	/* Issue 38 item 3: the managers' registrations now and their
	 * decisions (ingest/approval.h): asks posted, answers, and deadlines
	 * passed with no answer (fail-open: disrupted; fail-closed: kept). */
	uint32_t approval_registrations;
	uint64_t approvals_asked, approvals_granted, approvals_denied;
	uint64_t approvals_not_before, approvals_timed_out_open;
	uint64_t approvals_timed_out_closed;
	/* The same by asker ([0] drain, [1] quota reclaim, [2] preemption:
	 * ingest/approval.h's by_asker). */
	struct {
		uint64_t asked, granted, denied, not_before, timed_out_open,
			timed_out_closed;
	} approvals_by[3];
	/* Filled by daemon_stop() only, since each worker writes its
	 * engine's counters without atomics. */
	struct daemon_cache_stats caches;
};

struct daemon;

/* How the state was obtained: "created", "resumed" or "rebuilt from the
 * store"; and what it was built from (its record; "" unknown). */
const char *daemon_start_kind(const struct daemon *d);
const char *daemon_origin(const struct daemon *d);

/* Reads the --policy file again and puts it in force, as `shmsched policy
 * reload` does (logged; producer connections holding templates it refuses
 * are closed). Any thread, while the daemon runs. Returns 0, -ENOENT when
 * started without --policy, or the file's error with `err` naming the
 * file and field; on an error the policy in force stays. */
int daemon_reload_policy(struct daemon *d, char *err, size_t err_len);

/* Whether a start with `cfg` would find state to resume: its named region
 * exists, or its --state-dir holds a store file (that may still turn out
 * to hold nothing). False for an anonymous region without a store, and
 * with `fresh`. Creates nothing. */
bool daemon_state_exists(const struct daemon_config *cfg);

/* The admin socket's path for `cfg` (its own, or the default), written
 * into buf. Returns buf, or NULL when it does not fit. */
const char *daemon_admin_socket(const struct daemon_config *cfg, char *buf,
				size_t len);

/* The workers a daemon starts when its configuration names none: one per
 * CPU this process may run on (taskset, a cgroup; not the machine's) less
 * one, at least 1. */
unsigned daemon_default_workers(void);

/* Starts everything; on return the socket accepts producers. Returns NULL
 * with a message in `err` (input errors name the file and field). The
 * calling thread must not be a liburcu reader. */
struct daemon *daemon_start(const struct daemon_config *cfg, char *err,
			    size_t err_len);

/* Stops: refuses new producers, lets the workers answer what is already
 * submitted for up to `drain_ms`, answers what is left SHMSCHED_CANCELLED,
 * stops the workers, closes every connection and frees everything. Every
 * pod submitted before the call is answered. */
void daemon_stop(struct daemon *d, unsigned drain_ms, struct daemon_stats *out);

/* Figures so far (relaxed reads of the workers' counters); exact once
 * daemon_stop() has stopped the workers (its `out`). */
void daemon_get_stats(struct daemon *d, struct daemon_stats *out);

/* Each pod's service time on its worker so far (decode, placement, commit,
 * answer), as a base/hist.h histogram of HIST_BUCKETS counts. */
void daemon_service_hist(struct daemon *d, uint64_t *out);

/* The fair share's figure per producer identity (issue 41): the worker
 * time spent on its pods (what the fair share charged to its
 * connections, on whichever worker), since the identity was made; it
 * outlives the connections. */
struct daemon_identity_time {
	uint32_t owner; /* the identity's id, 1.. */
	uint32_t uid;
	char name[64]; /* the name it registered with, NUL-terminated */
	uint64_t worker_ns;
};

/* Writes the identities in use to out[0..max) in owner order; returns
 * how many there are (possibly more than max). An identity rewritten
 * under every try of its copy is left out. Any thread (relaxed figures). */
unsigned daemon_identity_times(struct daemon *d, struct daemon_identity_time *out,
			       unsigned max);

/* The leases checked as of their clock's now: nodes whose lease expired
 * become Unknown and tainted at their zone's rate
 * (daemon/taint_evict_internal.h), and pods not tolerating a node's
 * NoExecute taints evicted when their time is up; renewed ones are untainted (an admin's
 * update that changed the taint corrected). Returns the nodes whose taint
 * changed, or a negative errno. Any thread but a control callback; the
 * daemon's own thread calls it when no lease clock was given. */
int daemon_lease_tick(struct daemon *d);

/* Nodes that ever renewed a lease, and of them Unknown now. */
void daemon_lease_counts(struct daemon *d, uint32_t *leased, uint32_t *unknown);

/* With --etcd (issue 40): the host's membership and shards now (false:
 * one host, *out unset). Any thread. */
#define DAEMON_RENEW_BUCKETS 10 /* coord/lease_renewer.h's */
struct daemon_shards {
	bool coordinator;        /* this host coordinates */
	int64_t lease;           /* its lease (0: none now) */
	size_t owned;            /* shards owned */
	uint64_t joins, renewals, losses, errors;
	uint64_t takes, releases, assigned;
	uint64_t status_puts;    /* its status put in hosts/<host> */
	uint64_t alive_until_ns; /* monotonic; 0: not placing */
	/* The lease's keep-alives (coord/lease_renewer.h): answered ones by
	 * latency (renew_buckets[i]: within the i-th bucket's bound of
	 * lease_renewer_bucket_s, not cumulative), their latencies summed,
	 * the longest gap between two renewals' sends. */
	uint64_t renew_buckets[DAEMON_RENEW_BUCKETS];
	uint64_t renew_sum_ns, renew_gap_max_ns;
	/* With sync or async commits (daemon/etcd_sync_internal.h):
	 * placements committed, refused (rolled back), other hosts' counted
	 * on takes, deletes not queued, placements written without labels,
	 * answered placed and then lost (async); placements written without
	 * their quota queue, and others' counted without one (their queue
	 * unknown here). */
	uint64_t committed, refused, counted, deletes_dropped, labels_dropped, lost;
	uint64_t queue_dropped, queue_unknown;
	/* The replication lag (etcd_sync_lag): records not yet answered by
	 * etcd, the oldest one's age (ms). */
	int64_t lag_records, lag_oldest_ms;
	/* The shard watch (daemon/shard_watch_internal.h): other shards'
	 * placements held as records, the revision seen through, its
	 * events. */
	bool watching;
	uint64_t foreign_records;
	int64_t watch_revision;
	uint64_t watch_puts, watch_deletes, watch_relists, watch_refused, watch_unknown_node,
		watch_errors;
	uint64_t watch_ranges, watch_streams, watch_received;
};
bool daemon_shard_status(struct daemon *d, struct daemon_shards *out);

/* Pools quarantined for a template (daemon/quarantine_internal.h): pairs
 * quarantined now, trips, lifts (time), releases, trips refused by the
 * 20 % cap, failures reported. Any thread. */
struct daemon_quarantine {
	uint32_t quarantined;       /* (pool, template) pairs, now */
	uint32_t nodes_quarantined; /* nodes of the pools quarantined now */
	uint64_t trips, lifts, released, capped, failures;
	uint64_t untracked;         /* failures not counted: table full */
	uint64_t refused;           /* attempts left unschedulable by it */
};
void daemon_quarantine_counts(struct daemon *d, struct daemon_quarantine *out);

/* The node lifecycle now (daemon/taint_evict_internal.h): zones by state,
 * Unknown nodes waiting for their zone's rate, nodes tainted unreachable
 * now, and taints let through ever; the taint manager's scheduled
 * evictions, and its evictions ever. Any thread. */
struct daemon_lifecycle {
	uint32_t zones, zones_normal, zones_partial, zones_full;
	uint32_t taints_queued, tainted;
	uint64_t taints_total;
	uint32_t evictions_pending;
	uint64_t evicted;
	uint32_t tolerations_kept; /* placements whose tolerations are kept */
};
void daemon_lifecycle_counts(struct daemon *d, struct daemon_lifecycle *out);

/* Whether every worker is asleep now (pool_sleeping): no pod to serve
 * and no class left to compile ahead. A snapshot, for benchmarks that
 * start from a settled daemon. Any thread. */
bool daemon_workers_asleep(struct daemon *d);

/* The invariant check: node counters (every resource) above allocatable,
 * counted now. Zero unless something is broken, or a cluster file's bound
 * pods already exceeded a node when it was loaded. */
uint64_t daemon_overcommits(struct daemon *d);

/* Write transactions admission fair sharing's saver made to the store
 * (one per sample that changed a LocalQueue's usage; 0 with no store or
 * no admission fair sharing). */
uint64_t daemon_admission_usage_saves(struct daemon *d);

/* Pods the nodes hold now (the sum of their pod counters), to check
 * against what was placed and released. */
uint64_t daemon_pods_on_nodes(struct daemon *d);

/* Devices the nodes hold now: GPU milli summed over every node's devices,
 * and exclusive cores held; to check that releases give back what was
 * placed. The same calling rule as daemon_overcommits(). */
void daemon_devices_in_use(struct daemon *d, uint64_t *gpu_milli,
			   uint64_t *cores);

#endif
