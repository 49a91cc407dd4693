/* The daemon's producers, private: what ingest/producers*.c share, as
 * workers/engine_types_internal.h is the engine's. Included by those files and
 * by nothing else; the rest of the tree has ingest/producers.h.
 *
 * The files, one mechanism each; calls run one way, from a file to those
 * below it in this list, never back up:
 * - producers_requests.c: the control requests' dispatch
 *   (producers_on_request) and their handlers: templates, node events,
 *   releases, listings, node and resource names, resyncs, PriorityClasses.
 *   Calls every file below.
 * - producers_lease.c: node leases' renewals (NODE_EVENT_LEASE) and the
 *   unreachable taint they keep (producers_sync_unreachable). Calls
 *   producers.c.
 * - producers_taint.c: what the daemon's node lifecycle reads of the
 *   nodes (producers_node_zones) and the NoExecute taint manager's
 *   evictions (producers_taint_evict). Calls producers.c.
 * - producers_failure.c: OP_FAILURE, a placed pod's failure reported by
 *   its owner and the pools quarantined for it (the daemon's quarantine,
 *   through producers_set_quarantine). Calls producers.c.
 * - producers_evaluate.c: OP_EVALUATE, one template against every node on
 *   the control thread's own engine. Calls producers.c.
 * - producers_preempt.c: preemption's execution (producers_preempt), for
 *   the evictor thread (daemon/evict.c): the candidates, the choice
 *   (workers/preempt.h), the swap and the victims' notices. Calls
 *   producers_policy.c and producers.c.
 * - producers_approval.c: OP_APPROVAL, the managers that approve their
 *   pods' disruption (ingest/approval.h's table), and the drain's ask
 *   (prod_approval_keeps). Calls producers_selector.c.
 * - producers_selector.c: label selectors over the placements' pod
 *   groups (the drain's --pod-selector, a manager's). Calls none of these.
 * - producers_policy.c: the policy in force (policy/policy.h): an
 *   identity's rule, a template's admission, OP_POLICY and the reload.
 *   Calls none of these.
 * - producers.c: the table and its life: create, settings, destroy,
 *   registration and disconnection, identities, the budgets per identity
 *   and per uid, the workers' accessors, and what the store and waiting
 *   pods are told of a change (prod_forget, prod_publish). Calls none of these.
 * All of it runs under struct producers' lock, on a control server's
 * thread (the requests, the reload) or on the evictor's
 * (producers_preempt), but for the workers' accessors of producers.c.
 */
#ifndef SHMSCHED_INGEST_PRODUCERS_INTERNAL_H
#define SHMSCHED_INGEST_PRODUCERS_INTERNAL_H

#include "ingest/approval.h"
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ingest/preempt_rows.h"
#include "ingest/producers.h"
#include "ingest/resync.h"
#include "workers/workers.h"

/* The control servers' callback argument, one per role (producers_endpoint). */
struct endpoint {
	struct producers *p;
	enum producer_role role;
};

/* The daemon's producers: the table and all that the control thread keeps
 * beside it, shared by every file of the module. */
struct producers {
	/* Serialises the control callbacks: the producer socket and the admin
	 * socket each run a server thread, and everything below (the table,
	 * identities, the intern table, resource names, the cluster's
	 * snapshots, freeing placements) has one writer at a time. Workers
	 * never take it. */
	pthread_mutex_t lock;
	struct endpoint endpoints[2]; /* [role - 1] */
	struct placements *placements;
	/* Producer identities: an admitted uid and the name it registered
	 * with. Placements belong to one (their owner is its index + 1), so
	 * they outlive the connection that made them, and every connection of
	 * that uid under that name (a process's several connections, a
	 * reconnect, a reconnect to a restarted daemon) may release them. In
	 * the state region (struct state_identity), written here alone. */
	struct state_identity *identities; /* [IDENTITIES_MAX] */
	char admin_hint[112];         /* " (PATH)" of the admin socket, for
				       * refusals; "" when unknown */
	struct cluster *cluster;
	struct state_meta *meta;          /* resync counters; NULL: none */
	struct producers_persist persist; /* what the store hears */
	struct queue_events *events;      /* what waiting pods hear; may be NULL */
	void (*wake)(void *);             /* producers_set_waker; may be NULL */
	void *wake_arg;
	producers_notice_fn notice;       /* producers_set_notifier; may be NULL */
	void *notice_arg;
	/* Preemption's buffers, grown as needed and kept (the evictor's,
	 * under the lock): one request must not map and fault in megabytes. */
	uint8_t *pre_ok;
	size_t pre_ok_cap;
	struct found *pre_found;
	struct preempt_node *pre_nodes;
	struct preempt_pod *pre_pods;
	size_t pre_cap;
	uint64_t pre_rng;
	/* The node chains' path (shm/placements.h, N2): its own nodes and
	 * pods, so that a check can run the walk beside it. */
	struct preempt_node *pre_inodes;
	size_t pre_inodes_cap;
	struct preempt_pod *pre_ipods;
	size_t pre_ipods_cap;
	/* The rows (ingest/preempt_rows.h): per node slot, its chain summed
	 * up and its counters, kept between requests (PK1-PK5). calloc's
	 * zeroes are prows_init's. */
	struct prows pre_rows;
	/* EW2 (producers_preempt.c): a request's result, scratch and
	 * victims' uses, kept between requests like the buffers above. */
	struct preempt_result *pre_res;
	struct preempt_scratch pre_scratch;
	struct pod_spec *pre_vspec;
	struct device_assignment *pre_vdev;
	uint32_t pre_vcap; /* pre_vspec's and pre_vdev's */
	struct priority_classes *classes; /* PriorityClasses; may be NULL */
	struct policy *policy;            /* NULL: the default (policy/policy.h) */
	char *policy_path;                /* --policy, for OP_POLICY's reload */
	struct gang_table *gangs;         /* PodGroups; may be NULL */
	struct pdb_table *pdbs;           /* PodDisruptionBudgets; may be NULL;
					   * under the lock */
	struct pdb_matcher *pdb_m;        /* the evictor's, under the lock */
	struct resync_hooks resync_hooks; /* the same, as a resync takes it */
	struct prod_queues *queues;       /* OP_QUEUE's; NULL: not changeable */
	producers_metrics_fn metrics;     /* OP_QUEUE_METRICS's; NULL: none */
	void *metrics_arg;
	struct intern *strings; /* written here, read by workers */
	struct res_names *res;  /* likewise */
	const struct sched_config *profiles; /* templates' schedulerNames */
	const struct plugin_ctx *ctx;
	uint32_t slots;
	struct producer *table[PRODUCERS_MAX];
	uint32_t bound; /* indices in use are below it (relaxed; see prod_handle_register) */
	struct engine *evaluator; /* OP_EVALUATE; NULL: refused */
	producers_quota_explain_fn quota_explain; /* its "quota"; NULL: none */
	void *quota_explain_arg;
	producers_holder_fn string_holder; /* ids a reclaim marks; NULL: none */
	void *string_holder_arg;
	/* Issue 41: what each identity's templates are charged ([owner - 1]:
	 * the sums of its connected producers' strings_charged and
	 * static_charged) and the budgets (producers_set_budgets). Private
	 * memory, under the lock: a restarted daemon has no producer yet, so
	 * nothing is charged. */
	struct identity_charge *charged; /* [IDENTITIES_MAX] */
	/* Issue 41: the worker time spent on each identity's pods ([owner -
	 * 1], ns, the fair share's figure: pool_fair's used_ns), summed over
	 * its connections, since the identity was made. Added by the workers
	 * (relaxed fetch_add: a figure; an identity's connections may be on
	 * several workers), read by any thread (relaxed), zeroed (relaxed)
	 * when the identity is freed. */
	uint64_t *worker_ns; /* [IDENTITIES_MAX] */
	uint64_t strings_budget, template_budget;
	/* Issue 41: the strings each uid's templates added that the table
	 * still holds (strings_cost), never given back while the daemon runs:
	 * rebuilt at start from the table's tags (intern_tagged). Private
	 * memory, under the lock; few uids (the admitted ones), so a list. */
	struct uid_charge *uid_charged;
	uint32_t n_uid_charged, uid_charged_cap;
	uint64_t uid_strings_budget;
	/* Issue 41, the run-time reclaim (prod_strings_reclaim): the strings
	 * charged to producers gone since the last one (under the lock), and
	 * the reclaims run and strings freed (relaxed figures). */
	uint64_t reclaim_pending;
	uint64_t reclaims, reclaimed;

	/* Their sums, and templates registered uncompiled: relaxed figures
	 * (producers_budget_use). */
	uint64_t use_strings, use_templates, uncompiled;
	int accepting;
	uint64_t registered, gone, faulted;
	/* Node leases (producers_set_leases; producers_lease.c): NULL: none.
	 * Called under the lock. */
	int (*lease_renew)(void *arg, uint32_t name);
	int (*lease_state)(void *arg, uint32_t name);
	void *lease_arg;
	/* Issue 38 item 3: the managers' registrations and asks
	 * (producers_approval.c); NULL until the first registration. Under
	 * the lock. The clock its deadlines run on (producers_set_approval_
	 * clock; NULL: now_ns). */
	struct approval *approval;
	uint64_t (*approval_clock)(void *arg);
	void *approval_clock_arg;
	/* AQ1 (producers_approval.c): registrations that reclaim or
	 * preemption asks (relaxed), and the evictor's kick
	 * (producers_set_approval_kick; NULL: none). */
	uint32_t approval_scoped;
	void (*approval_kick)(void *arg);
	void *approval_kick_arg;
	/* OP_FAILURE's quarantine (producers_set_quarantine); report NULL:
	 * none. */
	struct producers_quarantine quarantine;
	/* The placements with a failure report (producers_failure.c): the
	 * daemon's "not Ready", which the drain's ladder reads (a budget's
	 * unhealthyPodEvictionPolicy AlwaysAllow). Ids never come back, so
	 * an entry whose placement is gone is dead, pruned when the array is
	 * full. At most PROD_UNHEALTHY_MAX, in report order. Under the lock.
	 * A lookup is linear in the marks (reports are rare), and the drain
	 * makes one only for a pod its spent AlwaysAllow budget blocks (or
	 * for a blocked line it prints). */
	uint64_t *unhealthy;
	uint32_t n_unhealthy;
};

#define PROD_UNHEALTHY_MAX 4096u

/* What one identity's templates are charged (issue 41; `charged`). */
struct identity_charge {
	uint64_t strings;   /* bytes of the string table (strings_cost) */
	uint64_t templates; /* bytes of compiled static results */
};

/* What one uid's templates added to the string table that it still holds
 * (issue 41; `uid_charged`). */
struct uid_charge {
	uint32_t tag;     /* intern_uid_tag(uid) */
	uint64_t strings; /* bytes of the string table (strings_cost) */
};

struct control_server;
struct intern_mark;
struct policy_rule;

/* producers.c: registration (OP_REGISTER), the connection's producer or a
 * refusal, the workers' waker, issue 41's string charges, and what
 * waiting pods (prod_publish), the store (prod_forget) and an evicted
 * placement's owner (prod_tell_evicted) are told. */
void prod_handle_register(struct producers *p, enum producer_role role,
			  struct control_server *s, uint64_t conn, uint32_t rid,
			  const void *body, uint32_t len);
struct producer *prod_registered(struct producers *p, enum producer_role role,
				 struct control_server *s, uint64_t conn,
				 uint32_t rid, const char *before);
void prod_wake_workers(struct producers *p);
struct uid_charge *prod_uid_charge_of(struct producers *p, uint32_t tag);
int prod_charge_strings(struct producers *p, const struct producer *pr,
			enum producer_role role, const struct intern_mark *mark,
			uint64_t *cost, char *err, size_t err_len);
int prod_strings_reclaim(struct producers *p, const char *why);

void prod_publish(struct producers *p, struct queue_event ev);
void prod_forget(struct producers *p, uint64_t id);
void prod_tell_evicted(struct producers *p, const struct placement_record *rec,
		       uint64_t id, producers_notice_fn notice, void *arg,
		       const char *message);

/* producers_lease.c: NODE_EVENT_LEASE, a node's lease renewed (its
 * unreachable taint lifted when it had one). */
void prod_handle_lease(struct producers *p, struct control_server *s,
		       uint64_t conn, uint32_t rid, const void *body, uint32_t len);

/* producers_evaluate.c: OP_EVALUATE. */
void prod_handle_evaluate(struct producers *p, enum producer_role role,
			  struct control_server *s, uint64_t conn, uint32_t rid,
			  const void *body, uint32_t len);

/* producers_policy.c: an identity's rule, the namespace of a pod group,
 * a template's admission, OP_POLICY. */
const struct policy_rule *prod_rule_of(const struct producers *p,
				       const struct producer *pr);
uint32_t prod_group_namespace(const struct producers *p, uint32_t group);
int prod_admit_template(struct producers *p, enum producer_role role,
			const struct producer *pr, const struct pod_spec *pod,
			char *err, size_t err_len);
/* producers_drain.c: OP_DRAIN (admins). */
void prod_handle_drain(struct producers *p, struct control_server *s,
		       uint64_t conn, uint32_t rid, uint32_t flags,
		       const void *body, uint32_t len);

/* producers_selector.c: a label selector (kubectl drain's
 * --pod-selector: key=value, key==value, key!=value, key, !key, joined by
 * ','). A parse refused is -EINVAL with a message opening with `what`. */
#define PROD_SELECTOR_TERMS_MAX 16u
struct prod_selector_term {
	uint8_t op; /* producers_selector.c's enum prod_sel_op */
	bool key_known, value_known;
	uint32_t key, value;
};
struct prod_selector {
	unsigned n; /* 0: every pod */
	struct prod_selector_term t[PROD_SELECTOR_TERMS_MAX];
};
int prod_selector_parse(const struct producers *p, const char *what,
			const char *s, size_t len, struct prod_selector *out,
			char *err, size_t err_len);
/* Whether a pod of group `group` is selected (no terms: every pod). */
bool prod_selector_matches(const struct producers *p, const struct prod_selector *sel,
			   uint32_t group);

/* producers_approval.c: OP_APPROVAL (admins), a connection gone, and the
 * drain's one question: whether a manager keeps placement `id` (record
 * `r`, on `node`) from disruption now. On true, `why` holds the progress
 * line(s) ("waiting on manager M for pod P: denied"); on false, its asks
 * are done (the caller disrupts it). */
void prod_handle_approval(struct producers *p, struct control_server *s,
			  uint64_t conn, uint32_t rid, uint32_t action,
			  const void *body, uint32_t len);
void prod_approval_gone(struct producers *p, uint64_t conn);
/* producers_failure.c: whether placement `id` has had a failure report
 * (the drain's "unhealthy"). */
bool prod_unhealthy(const struct producers *p, uint64_t id);
bool prod_approval_keeps(struct producers *p, uint64_t id,
			 const struct placement_record *r, const char *node,
			 uint32_t reason, char *why, size_t why_len);
/* Quota reclaim's and preemption's questions (`reason`
 * OP_APPROVAL_RECLAIM or OP_APPROVAL_PREEMPT), under the lock: whether
 * any registration is asked by them (a fast no); the placements they bar
 * now, without asking (not candidates: one pass over the asks for a
 * choice, then a binary search a candidate; an ask is posted only for a
 * pod its registration selects, and a placement's labels never change,
 * so no selector is read); whether one keeps
 * it, asking (why: on whom it waits), nothing cleared; and, once it was
 * evicted, its asks done. */
bool prod_approval_asks(const struct producers *p, uint32_t reason);
struct prod_barred {
	uint32_t n;
	uint64_t ids[APPROVAL_ASKS_MAX]; /* sorted */
};
void prod_approval_barred(struct producers *p, uint32_t reason,
			  struct prod_barred *out);
bool prod_barred_has(const struct prod_barred *b, uint64_t id);
bool prod_approval_holds(struct producers *p, uint64_t id,
			 const struct placement_record *r, const char *node,
			 uint32_t reason, char *why, size_t why_len);
void prod_approval_evicted(struct producers *p, uint64_t id);
/* AQ1: approval_scoped counted again, under the lock, after any
 * registration is added or dropped (REGISTER and a connection's end call
 * it; so must any other way of registering). */
void prod_approval_count_scoped(struct producers *p);

/* producers_failure.c: OP_FAILURE (reports: owners; pools: admins). */
void prod_handle_failure(struct producers *p, enum producer_role role,
			 struct control_server *s, uint64_t conn, uint32_t rid,
			 uint32_t action, const void *body, uint32_t len);

/* producers_queue.c: OP_QUEUE (admins). */
struct prod_queues;
void prod_handle_queue(struct producers *p, struct control_server *s,
		       uint64_t conn, uint32_t rid, uint32_t action,
		       const void *body, uint32_t len);
void prod_queues_free(struct prod_queues *q);

void prod_handle_policy(struct producers *p, struct control_server *s,
			uint64_t conn, uint32_t rid, uint32_t action,
			const void *body, uint32_t len);

#endif
