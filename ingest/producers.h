/* The daemon's producers: what each connected producer has (its region,
 * its templates) and the control requests that change it
 * (ingest/control_ops.h), for the control server's callbacks.
 *
 * Threads:
 * - the control servers' threads (the producer socket's and the admin
 *   socket's) run the callbacks here, one at a time (a mutex inside): the
 *   one writer of the producer table, the identities, the templates, the
 *   intern table, the resource names, the cluster's snapshots (node
 *   events) and the freeing of placements;
 * - worker threads (liburcu QSBR readers) read the table with
 *   producers_get(), between two quiescent states, and each producer's
 *   templates below producers_templates().
 * A producer leaves the table when its connection ends, however it ends;
 * its region is unmapped only after a grace period, when no worker can
 * still be reading it.
 */
#ifndef SHMSCHED_INGEST_PRODUCERS_H
#define SHMSCHED_INGEST_PRODUCERS_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>

#include "shm/shm.h"
#include "ingest/resync.h"
#include "quota/quota.h"
#include "workers/workers.h"

struct control_server;

#define PRODUCERS_MAX 256
/* Producer identities (uid, name) the daemon keeps, and per uid: bounded,
 * so that made-up names cannot grow the table or lock others out. */
#define IDENTITIES_MAX STATE_IDENTITIES
#define IDENTITIES_PER_UID 64

/* Who is at the other end of a control connection, by the socket it came
 * through (docs/concepts.md, "Processes and trust"). */
enum producer_role {
	ROLE_PRODUCER = 1, /* templates, pods, its own releases, node names */
	ROLE_ADMIN = 2,    /* all of that, plus node events and resource names */
};
#define PRODUCER_TEMPLATES_MAX 4096

struct producer {
	uint32_t id;   /* its index in the table */
	uint8_t role;  /* enum producer_role: the socket it registered through */
	uint32_t owner; /* its identity (uid, name): owner of its placements */
	uint64_t conn; /* the control connection that owns it (unique per role) */
	struct control_server *server; /* that connection's server */
	struct producer_region region;
	/* The daemon's ends of the region's rings: geometry and the daemon's
	 * own indices kept here, never read back from the region (shm/ring.h,
	 * struct ring_guard). Used by the one worker that serves this
	 * producer (and by the drain once the workers have stopped). */
	struct ring_guard submit;
	struct ring_guard completion;
	uint32_t faulted; /* __atomic: 1 once producers_fault() ran */
	/* Fair share (daemon/serve.c): the worker time this producer may
	 * still use, and what its pods have cost lately. Its worker's alone. */
	int64_t deficit_ns;
	uint64_t cost_ns;
	uint64_t fair_round; /* the worker's round it last had its quantum in */
	bool fair_heavy;     /* its last turn ended with pods left */
	/* Pods its worker took from the submit ring, and answers it handed
	 * back (notices not counted): taken - answered pods are being placed
	 * or wait. Written by its worker only (release stores), read by the
	 * control thread (acquire loads: answered first, so taken >= answered)
	 * for the idle timeout (producers_is_busy). */
	uint64_t taken;
	uint64_t answered;
	/* The control thread's last look (producers_is_busy): its own. */
	uint32_t seen_tail;
	uint64_t seen_answered;
	/* Notices written to its region (include/shmsched/wire.h); its
	 * worker's alone. */
	uint32_t notices_sent;
	struct pod_spec *templates; /* [PRODUCER_TEMPLATES_MAX] */
	/* Each template's static results, read when it was registered
	 * (engine_static_compile; NULL when they could not be), published
	 * with it. */
	struct class_static **templates_static; /* [PRODUCER_TEMPLATES_MAX] */
	/* Each template's narrowing disrupt scope (OP_TEMPLATE_SCOPED,
	 * policy/policy.h; NULL: its rule's alone); NULL until the first
	 * scoped template. Under the producers' lock. */
	struct policy_scope **templates_scope; /* [PRODUCER_TEMPLATES_MAX] */
	uint32_t n_templates;       /* release store by the writer; see producers_templates() */
	/* Templates its worker's engine was given to compile ahead of their
	 * pods (daemon/serve.c, engine_prepare). Its worker's alone. */
	uint32_t prepared;
	/* What its templates are charged to its identity (issue 41): the
	 * strings they added to the table, and their compiled static results
	 * (engine_static_bytes). The control thread's alone; given back when
	 * it goes. */
	uint64_t strings_charged;
	uint64_t static_charged;
	uint32_t n_templates_uncompiled; /* past that budget */
};

struct producers;

/* Creates an empty table for `c`, with `slots` slots per producer region.
 * `strings` and `res` are the ones `ctx` reads: this side writes them
 * (templates intern their strings and may name new resources). Releases
 * free records of `placements` (the workers fill them). Identities live
 * in `identities` (IDENTITIES_MAX entries, the state region's: a restarted
 * daemon keeps them). Returns NULL with errno. */
struct producers *producers_create(struct cluster *c, struct intern *strings,
				   struct res_names *res,
				   const struct plugin_ctx *ctx, uint32_t slots,
				   struct placements *placements,
				   struct state_identity *identities);

/* Budgets per producer identity (issue 41), before the control sockets
 * start. `strings_per_identity`: what the templates of one identity's
 * connections may add to the string table, in bytes (each string's bytes
 * and NUL plus the arena's share of one entry, arena_size / max_strings);
 * a template past it is refused with EDQUOT. 0: the part of the table
 * producers may fill (PRODUCERS_STRINGS_OPEN_NUM / _DEN of it) over
 * IDENTITIES_PER_UID, so that that many identities cannot fill it.
 * Whatever the budgets, a producer's template is refused (EDQUOT) once
 * the table is past that part of its arena or of its entries: the rest is
 * the admin's (nodes). `template_bytes_per_identity`: the compiled static
 * results (engine_static_bytes) of one identity's templates; past it a
 * template is registered uncompiled (its worker reads its static results
 * itself, within the worker's class cache budget). 0:
 * PRODUCERS_TEMPLATE_BYTES_DEFAULT. UINT64_MAX: no budget.
 * Per uid (issue 41): the strings a uid's templates added, under any of
 * its names, are charged to the uid for as long as they are in the table
 * (a reconnect or a new name gives nothing back by itself); a uid may hold
 * PRODUCERS_STRINGS_UID_IDENTITIES times strings_per_identity, past it
 * EDQUOT naming the uid. The strings nothing holds any more are freed,
 * and every uid's charge rebuilt from the table's tags, at a start and
 * while the daemon runs (producers_strings_reclaimed): once the strings
 * charged to producers gone since the last reclaim reach
 * PRODUCERS_RECLAIM_AFTER (or strings_per_identity, if less), and before
 * a template would be refused EDQUOT when any producer with strings went
 * since. */
#define PRODUCERS_RECLAIM_AFTER (UINT64_C(1) << 20)
#define PRODUCERS_STRINGS_UID_IDENTITIES 4u
#define PRODUCERS_STRINGS_OPEN_NUM 3u /* of 4: what producers may fill */
#define PRODUCERS_STRINGS_OPEN_DEN 4u
#define PRODUCERS_TEMPLATE_BYTES_DEFAULT (UINT64_C(256) << 20)
void producers_set_budgets(struct producers *p, uint64_t strings_per_identity,
			   uint64_t template_bytes_per_identity);

/* What the budgets hold now, summed over identities: string table bytes
 * charged, compiled template bytes, and templates registered uncompiled
 * (ever). Any thread (relaxed figures). */
void producers_budget_use(const struct producers *p, uint64_t *strings,
			  uint64_t *template_bytes, uint64_t *uncompiled);

/* Issue 41's run-time reclaims of the string table so far, and the
 * strings they freed. Any thread (relaxed figures). */
void producers_strings_reclaimed(const struct producers *p, uint64_t *runs,
				 uint64_t *strings);


/* What the control thread tells of the changes it makes, for the durable
 * store; each is called after the change, on the control thread, under
 * the producers' lock. Any may be NULL. */
struct producers_persist {
	void (*node_changed)(void *arg, const struct node_event *ev);
	void (*identity_added)(void *arg, uint32_t owner);
	/* release, resync: called just before the record is freed, so that
	 * its delete reaches the store before any later placement that
	 * reuses the record (same index) can */
	void (*placement_freed)(void *arg, uint64_t id);
	void (*placement_added)(void *arg, uint64_t id);  /* resync */
	void *arg;
};

/* The state region's meta, whose resync counters OP_RESYNC moves, and
 * what to tell of changes (NULL: nothing). Before the control sockets
 * start. */
void producers_set_state(struct producers *p, struct state_meta *meta,
			 const struct producers_persist *persist);

/* The profiles a template's spec.schedulerName chooses among (the
 * daemon's configuration, which outlives `p`); NULL, the default: one
 * profile, default-scheduler. A template for a scheduler no profile has is
 * refused. Before the control sockets start. */
void producers_set_profiles(struct producers *p, const struct sched_config *cfg);

/* The engine OP_EVALUATE runs on (the daemon's own profile, at
 * percentageOfNodesToScore 100, so every node is filtered and scored):
 * used on the control thread only, under the producers' lock; the
 * control thread is the snapshots' writer, so the snapshot it reads
 * cannot be reclaimed under it. NULL: OP_EVALUATE is refused. Owned by
 * the caller, who destroys it after producers_destroy(). */
void producers_set_evaluator(struct producers *p, struct engine *e);

/* OP_EVALUATE's "quota" member (issue 37): fn(arg, spec, buf, len) writes
 * for a person what the template's pod would be charged to and what that
 * has left, and returns true; false when the pod is under no quota (no
 * member then). Called on the control thread, under the producers' lock.
 * NULL: none. Before the control sockets start. */
typedef bool (*producers_quota_explain_fn)(void *arg, const struct pod_spec *spec,
					   char *buf, size_t len);
void producers_set_quota_explainer(struct producers *p,
				   producers_quota_explain_fn fn, void *arg);

/* Another holder of intern ids that a reclaim of the string table must
 * mark (the daemon's: the tolerations the taint manager keeps per
 * placement, daemon/taint_evict.c): `fn` calls mark(mark_arg, id) for
 * every id it holds. Called by the reclaim, on the control thread under
 * the producers' lock, before the grace period. NULL: none. Before the
 * control sockets start. */
typedef void (*producers_mark_fn)(void *mark_arg, uint32_t id);
typedef void (*producers_holder_fn)(void *arg, producers_mark_fn mark, void *mark_arg);
void producers_set_string_holder(struct producers *p, producers_holder_fn fn, void *arg);

/* Called (on the control thread) once a new producer, or a producer's new
 * template, is visible to the workers: the daemon wakes its pool, so a
 * sleeping worker adds the producer's doorbell to those it sleeps on
 * (include/shmsched/wire.h) and compiles the template now, not at its
 * next timed poll. Set before the control server starts; set to NULL
 * before the pool stops: once that returns no call is under way (the
 * requests' lock), so a request still served then cannot wake a freed
 * pool. */
void producers_set_waker(struct producers *p, void (*wake)(void *), void *arg);

struct priority_classes;
struct gang_table;
struct pdb_table;
/* The PriorityClasses templates' priorityClassName resolve against, the
 * PodGroups their gangs name (ingest/priority.h), and the
 * PodDisruptionBudgets preemption respects (ingest/pdb.h), which
 * OP_PRIORITY_CLASS adds to; owned by the caller, written only by the
 * control thread from now on (the budgets under the lock: the evictor
 * reads them). Before the control sockets start; NULL: none (names are
 * refused, priority 0; no budget). */
void producers_set_priority_classes(struct producers *p,
				    struct priority_classes *classes,
				    struct gang_table *gangs, struct pdb_table *pdbs);

/* The policy (policy/policy.h) templates and preemptions are held to,
 * taken over (freed with the producers or when replaced); NULL: the
 * default (any namespace, any victim, system- PriorityClasses for admin
 * connections only). `path`: the file OP_POLICY's reload reads again
 * (copied; NULL: none). Any time: under the requests' lock, so a template
 * or a preemption sees one policy whole. Returns 0 or -ENOMEM (nothing
 * changed; pol still the caller's). */
struct policy;
int producers_set_policy(struct producers *p, struct policy *pol, const char *path);

/* Reads the `path` of producers_set_policy() again and puts it in force
 * as OP_POLICY's reload does (under the requests' lock; connections whose
 * templates it refuses are closed; logged), for the daemon's SIGHUP.
 * Returns 0, -ENOENT (no path) or the load's error, `err` saying why;
 * on an error the policy in force stays. */
int producers_reload_policy(struct producers *p, char *err, size_t err_len);

/* The ring where releases, node events and resyncs are published for the
 * waiting pods (workers/queue.h), after each change is visible. Before
 * the control sockets start; NULL: none. */
void producers_set_events(struct producers *p, struct queue_events *events);

/* Node leases (issue 38; daemon/lease_internal.h). renew(arg, name): an
 * admin's NODE_EVENT_LEASE for node `name` (an interned name of a present
 * node); returns 0 or a negative errno. state(arg, name): the node's
 * lease state now as the taint should follow it (-1 never leased, 0
 * Ready or Unknown still waiting for its zone's rate, 1 Unknown and to be
 * tainted; daemon/taint_evict_internal.h), as
 * producers_sync_unreachable reads it. Both called
 * under the producers' lock. Before the control sockets start; not set:
 * NODE_EVENT_LEASE is refused (ENOTSUP). */
void producers_set_leases(struct producers *p, int (*renew)(void *, uint32_t),
			  int (*state)(void *, uint32_t), void *arg);

/* Pools that fail together (issue 38 item 5; OP_FAILURE,
 * ingest/producers_failure.c): a failure a producer reported of one of its
 * placements, resolved to numbers for the daemon's quarantine
 * (daemon/quarantine_internal.h). */
struct producers_failure {
	uint64_t placement_id;
	uint32_t owner;    /* the placement's owner (an identity's id) */
	uint32_t template; /* its pod's interned "namespace/name"; 0 unknown */
	uint32_t node;     /* the node's slot */
	uint32_t pool;     /* the pool label's value on the node (an intern id);
			    * 0: the node has none (not counted) */
	uint32_t pool_nodes, total_nodes; /* present nodes in the pool, in all */
	const char *reason;  /* reason_len bytes, not NUL-terminated */
	uint32_t reason_len;
};
struct producers_quarantine {
	const char *pool_label; /* the node label whose value is the pool */
	/* A failure: returns its verdict (enum quarantine_verdict). */
	int (*report)(void *arg, const struct producers_failure *f);
	/* Lifts pool `pool`'s quarantines (template 0: every template's);
	 * returns how many. */
	unsigned (*release)(void *arg, uint32_t pool, uint32_t template);
	/* The pairs tracked as text into buf[0..len) (snprintf's rules), names
	 * from `strings`; returns how many are quarantined. */
	uint32_t (*list)(void *arg, const struct intern *strings, char *buf,
			 size_t len);
	/* A surge's replacement (OP_DRAIN_SURGE) of template (owner,
	 * template), placed as a worker places it: true with `pod` narrowed
	 * into *out (the pools quarantined for that template excluded) and
	 * the quarantine named in why[0..why_len) for the line of a pod left
	 * without room; false: nothing quarantined for it (place `pod`). */
	bool (*exclude)(void *arg, uint32_t owner, uint32_t template,
			const struct pod_spec *pod, struct pod_spec *out,
			char *why, size_t why_len);
	/* That replacement committed on `node`: counted as a worker's
	 * placement is, in its pool's failure rate (may be NULL). */
	void (*placed)(void *arg, uint32_t owner, uint32_t template,
		       const struct node_spec *node);
	void *arg;
};
/* Before the control sockets start; not set: OP_FAILURE is refused
 * (ENOTSUP). The callbacks run under the producers' lock. */
void producers_set_quarantine(struct producers *p, const struct producers_quarantine *q);

/* The taint node.kubernetes.io/unreachable:NoExecute as the leases say:
 * given to every present node whose state is Unknown (1), taken from
 * every Ready one (0), nodes never leased (-1) left alone; each change a
 * node update (the store told, waiting pods told of an untaint). Under
 * the producers' lock; from any thread but a control server's callback.
 * Returns how many nodes changed, or a negative errno (a node with
 * NODE_MAX_TAINTS taints already is logged and left as it is). O(nodes). */
int producers_sync_unreachable(struct producers *p);

/* Calls fn(arg, name, region, zone) for each present node, under the
 * producers' lock: its interned name, and the intern ids of its region
 * and zone as Kubernetes' GetZoneKey reads them (the beta
 * failure-domain labels before the topology.kubernetes.io ones; 0: none
 * or empty). fn must not call back into the producers. Returns the nodes
 * seen. ingest/producers_taint.c. */
int producers_node_zones(struct producers *p,
			 void (*fn)(void *arg, uint32_t name, uint32_t region,
				    uint32_t zone),
			 void *arg);

/* The NoExecute taint manager's pass (Kubernetes' taint_eviction.go),
 * under the producers' lock: for each live placement on a node with a
 * NoExecute taint, how long its pod tolerates the node's NoExecute
 * taints, its tolerations being tols(arg, id, out) (at most
 * POD_MAX_TOLERATIONS written; returns how many) (the least
 * tolerationSeconds of the tolerations that match
 * them, DefaultTolerationSeconds' 300 s for not-ready and unreachable
 * added as kube-apiserver's admission adds them; 0: a taint none
 * tolerates) is handed to due(arg, id, ns); true: the placement is
 * evicted now (its owner told by an EVICTED notice, its room given back
 * and published). Pods tolerating every NoExecute taint forever are not
 * handed. Returns how many were handed, and in *evicted how many went.
 * ingest/producers_taint.c. */
int producers_taint_evict(struct producers *p,
			  unsigned (*tols)(void *arg, uint64_t id, struct toleration *out),
			  bool (*due)(void *arg, uint64_t id, int64_t tolerate_ns),
			  void *arg, uint32_t *evicted);

/* Evicts live placement `id` as the taint manager evicts (its owner told
 * by an EVICTED notice with `why`, its room given back and published, its
 * record freed), under the producers' lock; its pod's name ("namespace/
 * name", "" unknown) into pod and its node's into node. 0, or -ENOENT
 * when no placement of a producer has that id now. Any thread but the
 * workers and the control threads. */
int producers_evict_one(struct producers *p, uint64_t id, const char *why, char *pod,
			size_t pod_len, char *node, size_t node_len);

/* Zeroes each of ids[0..n) that names no live placement now (under the
 * producers' lock). */
void producers_placements_gone(struct producers *p, uint64_t *ids, uint32_t n);

/* Runs fn(arg, strings) under the producers' lock, where this thread is
 * the intern table's writer (strings) and the placement table's freeing
 * thread: other hosts' placements kept as bound records
 * (daemon/shard_watch.c). fn must not call back into the producers. From
 * any thread but a control server's callback. */
void producers_locked(struct producers *p, void (*fn)(void *arg, struct intern *strings),
		      void *arg);

/* The taint's key, "node.kubernetes.io/unreachable". */
#define PRODUCERS_UNREACHABLE_TAINT "node.kubernetes.io/unreachable"

/* Frees what is left. No worker may be running; the control server must
 * have stopped (its on_disconnect calls freed the producers). */
void producers_destroy(struct producers *p);

/* The control servers' callback argument for one role: one server per
 * role (the producer socket, the admin socket), each with its own. The
 * pointer lives as long as `p`. `admin_socket` (may be NULL) is named in
 * the refusal a producer gets for an admin request. */
void *producers_endpoint(struct producers *p, enum producer_role role);
void producers_set_admin_socket(struct producers *p, const char *admin_socket);

/* The control server's callbacks (arg: producers_endpoint()). */
int producers_on_connect(void *arg, uint64_t conn, const struct ucred *peer,
			 char *reason, size_t reason_len);
void producers_on_request(void *arg, struct control_server *s, uint64_t conn,
			  uint32_t request_id, const void *payload, uint32_t len,
			  int fd);
void producers_on_disconnect(void *arg, uint64_t conn);
/* The control server's is_busy: true while conn's producer has pods
 * submitted and not taken, being placed or waiting, or has submitted or
 * been answered since the last call; false for a connection that never
 * registered. Control thread. */
bool producers_is_busy(void *arg, uint64_t conn);

/* New producers are refused from now on (shutdown). Any thread. */
void producers_stop_accepting(struct producers *p);

/* Worker side: the table indices that may hold a producer are below this
 * (it only grows; a producer registered a moment ago may lie past what a
 * worker read, for one poll). */
uint32_t producers_bound(const struct producers *p);

/* Worker side: the producer at table index `i` (< PRODUCERS_MAX), or NULL.
 * Valid until the caller's next quiescent state. */
struct producer *producers_get(struct producers *p, uint32_t i);

/* Worker side: `ns` more of the worker's time spent on `pr`'s pods (the
 * fair share's figure, pool_fair's used_ns; issue 41), added to its
 * identity's (producers_identity_time). */
void producers_charge_time(struct producers *p, const struct producer *pr,
			   uint64_t ns);

/* The worker time (ns) spent on the pods of identity `owner` (1 ..
 * IDENTITIES_MAX; others: 0), over all its connections and workers,
 * since the identity was made: it outlives the connections, so a figure
 * read after a producer went is still its. Any thread (a relaxed
 * figure). */
uint64_t producers_identity_time(const struct producers *p, uint32_t owner);

/* Worker side: templates of `pr` that are fully written. */
uint32_t producers_templates(const struct producer *pr);

/* Producers registered so far, those gone, and those disconnected for
 * breaking their region (producers_fault), for logs and the bench. */
void producers_counts(const struct producers *p, uint64_t *registered,
		      uint64_t *gone, uint64_t *faulted);

/* Worker side: `pr` broke its side of the region (an impossible ring
 * index): stop serving it and disconnect it, logging `why`. The first call
 * per producer acts; later ones do nothing. Not on the path of any other
 * producer: only the faulty one's worker calls it. Any thread, between two
 * of its quiescent states. */
void producers_fault(struct producers *p, struct producer *pr, const char *why);

/* Which producer a table entry is (its connection and socket), never 0:
 * a table index is reused, a key is not. */
static inline uint64_t producers_key(const struct producer *pr)
{
	return (pr->conn << 1 | (pr->role == ROLE_ADMIN)) + 1;
}

/* --- preemption (daemon/evict.c drives it) --- */

/* A pod that fits nowhere asks to preempt: its producer (table index and
 * key) and its spec as decoded (template plus extras), for a node where
 * evicting pods of lower priority makes room. */
struct preempt_request {
	uint32_t producer;
	uint64_t key;
	uint32_t template_id;
	uint64_t cookie;
	struct pod_spec spec;
};

/* What one preemption did: the node whose room is now the preemptor's
 * (slot -1: none), and how many pods were evicted for it. */
struct preempt_outcome {
	int64_t slot;
	uint32_t node_gen;
	uint32_t victims;
	uint32_t candidates;
};

/* A victim's notice, for the worker of a producer of its owner. */
struct evict_notice {
	uint32_t producer; /* table index */
	uint64_t key;
	struct shmsched_notice notice;
};
typedef void (*producers_notice_fn)(void *arg, const struct evict_notice *n);

/* Runs DefaultPreemption for `rq` (workers/preempt.h) under the producers'
 * lock, so that no release or node event runs meanwhile: the candidate
 * nodes (the preemptor's static filters pass) with their placements, the
 * choice of node and victims, then one ledger_swap (the preemptor's use in,
 * the victims' out: the room is the preemptor's), the victims' records
 * freed (the durable store told), each victim's owner told through
 * `notice` (a producer of that identity connected now; none: nobody is
 * told), and the release published for waiting pods. `workers` is the
 * daemon's worker count (a producer's worker is its index % workers).
 * Returns 0 (out->slot -1 when nothing was done), or -ENOMEM. Any thread
 * but the control threads'. */
int producers_preempt(struct producers *p, const struct preempt_request *rq,
		      producers_notice_fn notice, void *arg,
		      struct preempt_outcome *out);

/* For tests, process-wide: every preemption that reads the node chains
 * (no PodDisruptionBudgets) also makes the choice from the walk of every
 * placement, and counts whether both chose the same node and victims:
 * producers_preempt_checked() says how many were checked, and how many
 * differed. Slow (the walk it replaces); off by default. */
void producers_preempt_check(bool on);
void producers_preempt_checked(uint64_t *checked, uint64_t *mismatches);
/* Placement records read to find victims, over every preemption so far
 * (the walk's: the whole table; the chains': the nodes visited). */
uint64_t producers_preempt_records(void);

/* Reclaim by quota (ingest/producers_reclaim.c): under the producers'
 * lock, for `pod` (its spec with its flavor's nodeLabels), `choose` names
 * the victims (ids of live placements, *ids valid until it is called
 * again; *n of them) and the sentence their owners are told, given
 * node_ok(node_arg, ids, k): whether evicting ids[0..k) leaves a node the
 * pod's static filters admit with room for its requests, and
 * victim_ok(node_arg, id) (NULL: yes to all), which a candidate must
 * pass (approving managers that bar it now: ingest/producers_approval.c).
 * The victims are then put to the managers that reclaim asks: when one
 * keeps any, none is evicted (out->kept, the preemptor waits: AQ1 wakes
 * it); else each is evicted as a preemption's (EVICTED notice through
 * `notice`, room given back and published, record freed: its quota given
 * back by the free hook). choose is not called when no node could hold
 * the pod even empty (out->no_node). Returns 0, -ENOMEM, or choose's
 * -errno (nothing evicted). The evictor thread's (daemon/evict.c). */
typedef int (*producers_reclaim_choose_fn)(
	void *arg, bool (*node_ok)(void *node_arg, const uint64_t *ids, size_t k),
	bool (*victim_ok)(void *node_arg, uint64_t id),
	void *node_arg, const uint64_t **ids, uint32_t *n, char *why, size_t why_len);
struct producers_reclaimed {
	uint32_t evicted;
	uint32_t kept; /* victims chosen whose managers keep them: none evicted */
	bool no_node;
};
int producers_reclaim(struct producers *p, const struct pod_spec *pod,
		      producers_reclaim_choose_fn choose, void *choose_arg,
		      producers_notice_fn notice, void *notice_arg,
		      struct producers_reclaimed *out);

/* OP_QUEUE (ingest/producers_queue.c): how a new quota tree is put in
 * force. `replace` is given a sealed tree; 0: it is the callee's and in
 * force (what was carried in *out); -errno: still the caller's, nothing
 * changed. */
struct producers_queue_carried {
	uint64_t carried, dropped;
	char first_dropped[QUOTA_NAME_MAX + 1]; /* a ClusterQueue's name */
};
struct producers_queue_ops {
	int (*replace)(void *arg, struct quota_tree *t,
		       struct producers_queue_carried *out);
	void *arg;
};

/* Lets OP_QUEUE change the quotas: `tree` is the one in force (not
 * owned), built from the Kueue objects of the cluster file `path`, which
 * is read again here for them (kept as text: the set a change starts
 * from). Before the control sockets start. 0, or -errno with a message. */
int producers_set_queues(struct producers *p, const struct producers_queue_ops *ops,
			 struct quota_tree *tree, const char *path, char *err,
			 size_t err_len);

/* fn(arg) under the producers' lock (so that OP_QUEUE's swap of the tree
 * cannot run meanwhile, and the intern table is this thread's to write):
 * quota by escrow's swap from the membership thread
 * (daemon/quota_escrow_host.c). Its result. From any thread but a control
 * server's callback. */
int producers_with_lock(struct producers *p, int (*fn)(void *arg), void *arg);

/* OP_QUEUE_METRICS (ingest/control_ops.h): the daemon's figures that no
 * reader of the state region sees, written by `fn` into buf[0..len) as
 * Prometheus text; it returns the bytes the whole text needs (more than
 * len: cut, as snprintf). Called on the control thread under the
 * producers' lock (so OP_QUEUE's tree cannot change meanwhile). Before
 * the control sockets start. */
typedef size_t (*producers_metrics_fn)(void *arg, char *buf, size_t len);
void producers_set_metrics(struct producers *p, producers_metrics_fn fn, void *arg);

/* Where OP_DRAIN's evictions tell their owners (the evictor's notice
 * rings: daemon/evict_internal.h's evict_notify, which takes notices
 * under the producers' lock from either thread). NULL: nobody is told.
 * Before the control sockets start. */
void producers_set_notifier(struct producers *p, producers_notice_fn notice,
			    void *arg);

/* Issue 38 item 3: the clock (ns, monotonic) that managers' deadlines and
 * not-before times run on; NULL: now_ns (base/clock.h). Tests inject
 * theirs. Before the control sockets start. */
/* AQ1 (ingest/producers_approval.c): kick(arg) wakes the evictor, called
 * under the lock when a reclaim's or preemption's ask is answered; the
 * evictor then calls producers_approval_tick at its next turn, which
 * wakes the askers whose asks were answered or whose verdict changed
 * with time (a preemption's: room published anywhere) and
 * returns whether any was woken: then the evictor nudges the quota trees
 * (a reclaim's) and wakes the workers. Takes the lock only while a
 * registration asks for reclaim or preemption. */
void producers_set_approval_kick(struct producers *p, void (*kick)(void *arg),
				 void *arg);
bool producers_approval_tick(struct producers *p);
void producers_set_approval_clock(struct producers *p, uint64_t (*clock)(void *arg),
				  void *arg);
/* The managers' decisions counted since start (ingest/approval.h), under
 * the lock. */
struct approval_stats;
void producers_approval_stats(struct producers *p, struct approval_stats *out);

/* A notice for `pr` that found no room (its section full, or the evictor's
 * box): its notices header's `lost` (include/shmsched/wire.h) counts it,
 * so the producer knows to list its placements. Release, partner of the
 * client's acquire in shmsched_notices_lost(); an atomic add, as a worker
 * and the evictor's or admin socket's thread may both count. By whoever
 * may read `pr`: a worker between quiescent states, or under the
 * producers' lock. */
static inline void producers_notice_lost(struct producer *pr)
{
	__atomic_fetch_add(&pr->region.notices->lost, 1, __ATOMIC_RELEASE);
}

/* Worker side: whether producers_fault() ran for `pr` (relaxed). */
static inline bool producers_faulted(const struct producer *pr)
{
	return __atomic_load_n(&pr->faulted, __ATOMIC_RELAXED) != 0;
}

#endif
