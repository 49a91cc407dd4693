/* The gateway's parts, as they meet inside gateway/: the dispatcher (the one
 * thread that talks to the daemon, dispatch.c), the jobs HTTP handlers hand
 * it, the HTTP side (http.c) and the metrics (metrics.c).
 *
 * A job's life (the handshake between an HTTP thread and the dispatcher):
 *   J1  The HTTP thread fills the job's request part and calls
 *       gw_dispatch_submit(); from then the request part is read-only.
 *   J2  The dispatcher sets `code` (the verdict: 200, or an error with a
 *       Status object in `out`), then appends answer lines to `out`, then
 *       sets `done`; each under `lock`, and after each, if `suspended` is
 *       set, clears it (under `lock`) and, once it has released `lock`,
 *       calls `wake`, which resumes the HTTP connection (GL1: the woken
 *       thread's first step is to take `lock`); except while the HTTP
 *       side would only suspend again: a `collect` job with the verdict
 *       200 is woken once, when `done`.
 *   J3  The HTTP thread reads `code` and `out` under `lock`; finding
 *       nothing new, it sets `suspended` and suspends its connection before
 *       releasing `lock`. So a wake never precedes its suspend (the lock
 *       orders the suspend before the dispatcher sees `suspended`, and
 *       the connection, suspended, cannot suspend again before the
 *       wake), and a connection that is not suspended is never resumed.
 *   J4  The client going away: the HTTP side sets `abandoned`
 *       (release; the dispatcher's acquire load) and drops its reference.
 *       A suspended connection cannot go away (the HTTP library does not
 *       watch it), so J2's wake never meets a closed connection. So that
 *       a client that leaves while its pods wait in the daemon's queue is
 *       seen, the dispatcher looks at the socket itself (`http_fd`, poll
 *       for a hang-up), only under `lock` and only while `suspended` is
 *       set: then the connection is suspended and its socket open.
 *       Seeing one, it sets `client_left` (release; the HTTP side's
 *       acquire load when the request ends), so the client is counted
 *       gone even where the library then ends the stream as completed
 *       (its last write met a socket not yet reset).
 *   J5  References: the HTTP request, the streamed response and the
 *       dispatcher each hold one (`refs`, acq_rel decrements: the last one
 *       frees the job after seeing every other holder's writes).
 */
#ifndef SHMSCHED_GATEWAY_GATEWAY_INTERNAL_H
#define SHMSCHED_GATEWAY_GATEWAY_INTERNAL_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "base/base.h"
#include "gateway/auth.h"
#include "gateway/gateway.h"
#include "shmsched/client.h"
#include "shmsched/observe.h"

enum gw_job_kind {
	GW_JOB_PLACE,   /* POST /v1/placements: batch */
	GW_JOB_LOOKUP,  /* GET /v1/placements/{ns}/{name}: name, cookie */
	GW_JOB_RELEASE, /* DELETE /v1/placements/{ns}/{name} */
	GW_JOB_EVALUATE, /* the extender's filter and prioritize: batch of one
			  * pod, answered with shmsched_evaluate()'s JSON */
	GW_JOB_EVICT,   /* POST .../pods/{name}/eviction: name, cookie; the
			 * dispatcher finds the placement and judges who may
			 * evict it (200: evict_id and evict_node set), the
			 * HTTP side then evicts it (gw_evict_run) */
};

struct gw_job;
/* Resumes the job's HTTP connection; called without job->lock, after the
 * caller cleared `suspended` under it (J2). */
typedef void gw_wake_fn(struct gw_job *job);

/* Where a job's spec is registered: a template of one connection. */
struct gw_conn;
struct gw_tref {
	struct gw_conn *conn;
	uint32_t id;
};

#define GW_POD_NAME_MAX (GW_NAMESPACE_MAX + 1 + GW_NAME_MAX + 1)

struct gw_job {
	/* The request (J1): written before gw_dispatch_submit(), then
	 * read-only. */
	enum gw_job_kind kind;
	/* Who asked (the HTTP side's authentication): pods placed are
	 * theirs; a LOOKUP or RELEASE of another user's pod is answered
	 * 404. With the batch below, this is where a policy check of the
	 * user against each pod's namespace and priority class
	 * (batch.specs[s].canon: metadata.namespace, spec.priorityClassName)
	 * belongs: in route_placements() (http.c) before start_job(). */
	struct gw_identity who;
	bool admin;                 /* who is in the admin group: sees and
				     * releases every pod */
	struct gw_batch batch;      /* PLACE */
	char *disrupt;              /* PLACE: whose pods its pods may preempt,
				     * the user's rule's disruptNamespaces as
				     * policy_rule_disrupt_text() writes them
				     * (owned), sent with each template
				     * (OP_TEMPLATE_SCOPED); NULL: not
				     * narrowed (no --policy, or admin) */
	char name[GW_POD_NAME_MAX]; /* LOOKUP, RELEASE: namespace/name */
	uint64_t cookie;            /* LOOKUP, RELEASE, EVICT: gw_cookie(name) */
	bool evict_dry;             /* EVICT: deleteOptions.dryRun ["All"] */
	uint64_t evict_id;          /* EVICT, the verdict 200: its placement */
	char evict_node[SHMSCHED_OBSERVE_NODE_NAME_MAX]; /* and its node */
	uint64_t received_ns;       /* when the request was complete */
	uint16_t pod_flags;         /* PLACE: each pod's shmsched_pod.flags
				     * (?wait: SHMSCHED_WAIT or _NO_WAIT;
				     * none: 0, the daemon's default) */
	uint64_t deadline_ns;       /* PLACE with SHMSCHED_WAIT: received_ns
				     * + the ?wait seconds (CLOCK_MONOTONIC) */
	bool explain;               /* PLACE: ?explain=true: each line carries
				     * its template's evaluation */
	int http_fd;                /* PLACE: the client's socket, or -1 (J4) */
	gw_wake_fn *wake;
	void *http;                 /* the HTTP side's connection */
	void *http_owner;           /* and its server */
	bool collect;               /* PLACE: the HTTP side waits for every
				     * line and answers them whole instead of
				     * streaming them (small requests, the
				     * extender's bind) */
	void *ext;                  /* the HTTP side's own (extender args),
				     * freed with the job by ext_free */
	void (*ext_free)(void *ext);

	/* The answer (J2, J3): under lock. */
	pthread_mutex_t lock;
	unsigned code;              /* 0 until the verdict */
	struct json_buf out;        /* a Status object, a JSON body, or the
				     * answer lines not yet sent */
	size_t sent;                /* bytes of out the HTTP side has taken */
	bool done;                  /* out is complete */
	bool suspended;             /* the HTTP connection waits for a wake */

	int refs;                   /* J5 */
	bool abandoned;             /* J4 */
	bool client_left;           /* J4: the dispatcher saw the hang-up */

	/* The dispatcher's own. */
	struct gw_job *next;        /* in the inbox, then among accepted jobs */
	struct gw_tref *tmpl;       /* [batch.n_specs] */
	size_t next_pod;            /* pods below it were submitted */
	uint32_t *retry;            /* pods to submit again (daemon restart) */
	size_t n_retry, cap_retry;
	size_t answered;
	size_t in_flight;
	bool listed;                /* among the active jobs */
	bool gone;                  /* the client hung up while suspended (J4) */
	bool cancelling;            /* gone (or stopping): its pods in flight
				     * still to be cancelled */
	struct json_buf lines;      /* answers of this round, for out */
	char **explained;           /* explain: [batch.n_specs] members each
				     * line of the spec gets (",\"profile\":..
				     * ,\"filtered\":..,\"scores\":.."), NULL
				     * until evaluated */
	size_t *explained_len;
	size_t n_explained;         /* specs evaluated */
	uint32_t owner;             /* who, as the dispatcher numbers users */
	size_t charged;             /* pods counted in owner's outstanding */
};


/* A new job with one reference (the caller's); NULL when out of memory. */
struct gw_job *gw_job_new(enum gw_job_kind kind);
void gw_job_ref(struct gw_job *j);
void gw_job_unref(struct gw_job *j);

/* The daemon's own words in a client library error: without the
 * "shmsched daemon (fd N): " the library puts before a refusal. */
static inline const char *gw_daemon_says(const char *err)
{
	static const char prefix[] = "shmsched daemon (fd ";
	if (__builtin_strncmp(err, prefix, sizeof(prefix) - 1) != 0)
		return err;
	const char *p = __builtin_strstr(err, "): ");
	return p != NULL ? p + 3 : err;
}

/* --- the dispatcher (dispatch.c) ----------------------------------------- */

struct gw_dispatch;

int gw_dispatch_start(const struct gateway_config *cfg, struct gw_dispatch **out,
		      char *err, size_t err_len);
/* Answers every job still open (cancelled lines, 503s) and stops the
 * dispatcher's thread; jobs submitted after are refused at once (503).
 * The stats and the observer stay readable until gw_dispatch_free(),
 * which comes after the HTTP threads have stopped: they read both. */
void gw_dispatch_stop(struct gw_dispatch *d);
void gw_dispatch_free(struct gw_dispatch *d);
/* Hands a job over (J1); the dispatcher takes its own reference. */
void gw_dispatch_submit(struct gw_dispatch *d, struct gw_job *j);

/* The state region's observer, shared by the HTTP threads (NULL: none
 * could be opened). Hold it between get and put: the dispatcher reopens
 * it when the daemon comes back, after every holder has put it. */
struct shmsched_observer *gw_observer_get(struct gw_dispatch *d);
void gw_observer_put(struct gw_dispatch *d);

/* Single-writer counters of the dispatcher, read by /metrics. */
#define GW_ATTEMPT_BUCKETS 15 /* kube: ExponentialBuckets(0.001, 2, 15) */
#define GW_SLI_BUCKETS 20     /* kube: ExponentialBuckets(0.01, 2, 20) */
#define GW_FINE_BUCKETS 16    /* ours: 10 us .. 0.33 s, factor 2 */

struct gw_histogram {
	uint64_t count;
	uint64_t sum_ns;
	uint64_t *buckets; /* [n], cumulative is made when rendered */
};

enum gw_result { GW_RESULT_SCHEDULED, GW_RESULT_UNSCHEDULABLE, GW_RESULT_ERROR,
		 GW_RESULTS };

struct gw_dispatch_stats {
	uint64_t pods[GW_RESULTS];            /* answers by result */
	uint64_t cancelled;                   /* answered as not placed: daemon
					       * away past the grace, stop, or
					       * cancelled while waiting */
	uint64_t cancels;                     /* shmsched_cancel() sent: waiting
					       * pods of clients gone */
	uint64_t evicted;                     /* EVICTED notices for our
					       * placements (preempted) */
	uint64_t attempt_buckets[GW_RESULTS][GW_ATTEMPT_BUCKETS];
	uint64_t attempt_count[GW_RESULTS];
	uint64_t attempt_sum_ns[GW_RESULTS];
	uint64_t sli_buckets[GW_SLI_BUCKETS];
	uint64_t sli_count, sli_sum_ns;
	uint64_t fine_buckets[GW_FINE_BUCKETS]; /* submit -> answer */
	uint64_t fine_count, fine_sum_ns;
	uint64_t templates_registered;
	uint64_t templates_refused;
	uint64_t templates_same_tree;         /* keys found equal by their spec
					       * tree (GL3), not walked */
	uint64_t answer_sleeps;               /* sleeps on the answer
					       * doorbells with pods in flight
					       * (AB7) */
	uint64_t connections_opened;
	uint64_t connections_retired;         /* drained and closed: their
					       * templates evicted */
	uint64_t daemon_losses;
	uint64_t resubmitted;                 /* pods submitted again after a
					       * daemon restart */
	uint64_t recovered;                   /* PLACED found in the listing
					       * after a restart */
	uint64_t stray_answers;               /* answers for no pod in flight */
	uint64_t releases;
	/* Gauges, stored by the dispatcher, read relaxed. */
	uint64_t connected;                   /* 1: the daemon is reachable */
	uint64_t in_flight;
	uint64_t waiting;                     /* accepted, not yet submitted */
	uint64_t capacity;                    /* slots over live connections */
	uint64_t connections;
	uint64_t templates;
	uint64_t placements;                  /* known placements */
	uint64_t jobs;                        /* requests being answered */
	uint64_t heartbeat_ns;                /* the loop's last turn */
	uint64_t last_loss_ns;
};

/* The dispatcher's counters, to read with stat_read() from any thread. */
const struct gw_dispatch_stats *gw_dispatch_stats(const struct gw_dispatch *d);

extern const double gw_attempt_bounds[GW_ATTEMPT_BUCKETS];
extern const double gw_sli_bounds[GW_SLI_BUCKETS];
extern const double gw_fine_bounds[GW_FINE_BUCKETS];

/* --- the extender verbs (extender.c) -------------------------------------- */

struct gw_extender;
struct gw_extender *gw_extender_create(size_t cache_pods);
void gw_extender_destroy(struct gw_extender *x);

/* What a route handler needs to answer: implemented in http.c, used by
 * extender.c. */
struct gw_http_reply {
	unsigned code;
	const char *content_type;
	struct json_buf body;
	struct gw_job *job;    /* non-NULL: submit it and answer when done */
};

/* A Kubernetes Status of failure into rep: code, reason (a plain word such
 * as "BadRequest"; NULL: none), message msg; the _f form formats the message first (at
 * most 1199 bytes kept). The admin routes' one answer of refusal
 * (status_reply.c). */
void gw_reply_status(struct gw_http_reply *rep, unsigned code, const char *reason,
		     const char *msg);
void gw_reply_statusf(struct gw_http_reply *rep, unsigned code, const char *reason,
		      const char *fmt, ...) __attribute__((format(printf, 4, 5)));

/* --- an admin route's daemon connection (admin_conn.c) ------------------ */

/* One connection to the daemon's admin socket, of one route module's own:
 * made on first use, made again once when the daemon restarted since (a
 * call says -ECONNRESET), `c` only under `lock`. */
struct gw_admin_conn {
	char socket[4096];
	const char *who;            /* the client's name (a string literal) */
	pthread_mutex_t lock;
	struct shmsched_client *c;  /* NULL: no connection */
};
/* One daemon call on connection c: 0 or more, or a negative errno with
 * why in err (the client library's calls, shmsched/client.h). */
typedef int (*gw_admin_call_fn)(struct shmsched_client *c, void *arg, char *err,
				size_t err_len);
void gw_admin_conn_init(struct gw_admin_conn *a, const char *socket,
			const char *who);
void gw_admin_conn_fini(struct gw_admin_conn *a);
/* fn(c, arg, ...) on a's connection, connecting first as needed and once
 * more on a new connection after -ECONNRESET: fn's result, or the
 * connect's error with *away set (the daemon's socket not reached; away
 * may be NULL). The _locked form is for a caller that holds a->lock. */
int gw_admin_conn_call(struct gw_admin_conn *a, gw_admin_call_fn fn, void *arg,
		       bool *away, char *err, size_t err_len);
int gw_admin_conn_call_locked(struct gw_admin_conn *a, gw_admin_call_fn fn,
			      void *arg, bool *away, char *err, size_t err_len);
/* A refused admin call (rc < 0, err its message, away as the call said)
 * as a Status: 503 away ("the daemon's admin socket: ...") or the
 * connection lost, 400 EINVAL, 501 ENOTSUP, 403 EPERM or EACCES, else 500
 * saying "WHAT: ...". A route with errnos of its own answers those first. */
void gw_reply_admin_refusal(struct gw_http_reply *rep, int rc, bool away,
			    const char *err, const char *what);

/* POST /extender/{verb}: decodes the body and either answers at once
 * (*reply with code and body) or hands back a job for the dispatcher;
 * then, once the job is done, gw_extender_finish() writes the answer. */
void gw_extender_start(struct gw_extender *x, const char *verb,
		       const char *body, size_t len, size_t max_nodes,
		       struct gw_http_reply *reply);
void gw_extender_finish(struct gw_extender *x, struct gw_job *j,
			struct gw_http_reply *reply);

/* --- Kueue's queues (queue_routes.c) ----------------------------------- */

/* The admin listener's /v1/queues routes and the daemon's quota and node
 * lifecycle metrics, through the daemon's admin socket. */
struct gw_queues;
int gw_queues_create(const char *admin_socket, struct gw_queues **out);
void gw_queues_free(struct gw_queues *m);
/* Appends the daemon's metrics text (asked at most once a second). */
void gw_queues_metrics(struct gw_queues *m, struct json_buf *b);
/* `rest`: the path after /v1/queues ("" or "/{kind}/{name}"). */
void gw_queues_route(struct gw_queues *m, const char *method, const char *rest,
		     const char *body, size_t len, struct gw_http_reply *rep);

/* --- drains and evictions (drain_routes.c) ------------------------------ */

/* The drains the admin listener started, and the Eviction API's daemon
 * connection, both through the daemon's admin socket. */
struct gw_drains;
int gw_drains_create(const char *admin_socket, struct gw_drains **out);
/* Stops every drain (Cancelled) and joins its thread; later starts are
 * refused (503). */
void gw_drains_stop(struct gw_drains *m);
void gw_drains_free(struct gw_drains *m);
/* POST /v1/nodes/{node}/drain: 202 with the drain's record, or a Status
 * (400, 409 one runs, 429 too many run, 503 stopping). */
void gw_drain_start(struct gw_drains *m, const char *node, const char *body,
		    size_t len, struct gw_http_reply *reply);
/* DELETE /v1/nodes/{node}/drain: cancels its running drain; 200 with the
 * record (Cancelled), 404 without a drain, 409 when it has ended. */
void gw_drain_cancel(struct gw_drains *m, const char *node,
		     struct gw_http_reply *rep);
/* -ENOENT when the daemon knows no node `node`, else 0 (also when it
 * cannot say: the drain's thread reports that). */
int gw_drain_node_known(struct gw_drains *m, const char *node);
/* GET /v1/nodes/{node}/drain: 200 with the newest drain's record, or 404. */
void gw_drain_get(struct gw_drains *m, const char *node,
		  struct gw_http_reply *reply);
/* Evicts placement `placement_id` of pod "ns/name" on `node`, as the
 * Eviction API answers: 201, 429 (a budget), 500 (more than one), 404
 * (gone meanwhile), 503 (the daemon away). */
void gw_evict_run(struct gw_drains *m, const char *pod, uint64_t placement_id,
		  const char *node, bool dry_run, struct gw_http_reply *reply);

/* --- failure reports (failure_routes.c) -------------------------------- */

/* POST /v1/placements/{id}/failure on the admin listener: the daemon's
 * OP_FAILURE through its admin socket, on a connection of its own. */
struct gw_failures;
int gw_failures_create(const char *admin_socket, struct gw_failures **out);
void gw_failures_free(struct gw_failures *m);
/* `id_text`: the URL's {id} (id_len bytes); 202 with the daemon's verdict,
 * or a Status (400, 404, 409, 501, 503). */
void gw_failure_route(struct gw_failures *m, const char *id_text, size_t id_len,
		      const char *body, size_t len, struct gw_http_reply *rep);

/* --- pool quarantines (pool_routes.c) ---------------------------------- */

/* GET /v1/pools and POST /v1/pools/{pool}/release on the admin listener:
 * the daemon's shmsched_pools through its admin socket, on a connection
 * of its own. */
struct gw_pools;
int gw_pools_create(const char *admin_socket, struct gw_pools **out);
void gw_pools_free(struct gw_pools *m);
/* 200 with the daemon's listing as an array of its lines, or a Status
 * (501, 503). */
void gw_pools_list(struct gw_pools *m, struct gw_http_reply *rep);
/* `pool_text`: the URL's {pool} (pool_len bytes); 200 with how many were
 * lifted, or a Status (400, 501, 503). */
void gw_pools_release(struct gw_pools *m, const char *pool_text, size_t pool_len,
		      const char *body, size_t len, struct gw_http_reply *rep);

/* --- approval webhooks (webhooks.c) ------------------------------------ */

/* The admin listener's /v1/approvals/webhooks: managers that approve a
 * drain's evictions given as loopback URLs, each registered with the
 * daemon on a connection, and polled and called by a thread, of its own. */
struct gw_webhooks;
int gw_webhooks_create(const char *admin_socket, struct gw_webhooks **out);
/* Stops every registration's thread (each registration dropped with its
 * connection) and joins it; later POSTs are refused (503). */
void gw_webhooks_stop(struct gw_webhooks *m);
void gw_webhooks_free(struct gw_webhooks *m);
/* `rest`: the path after /v1/approvals/webhooks ("" or "/{name}"). */
void gw_webhooks_route(struct gw_webhooks *m, const char *method, const char *rest,
		       const char *body, size_t len, struct gw_http_reply *rep);

/* --- /metrics (metrics.c) ------------------------------------------------ */

enum gw_route {
	GW_ROUTE_PLACEMENTS, GW_ROUTE_PLACEMENT, GW_ROUTE_NODES, GW_ROUTE_NODE,
	GW_ROUTE_HEALTH, GW_ROUTE_VERSION, GW_ROUTE_METRICS, GW_ROUTE_EXTENDER,
	GW_ROUTE_ADMIN, GW_ROUTE_OTHER, GW_ROUTE_EVICTION, GW_ROUTES
};
extern const char *const gw_route_names[GW_ROUTES];

/* HTTP codes the gateway answers, for the requests counter. */
#define GW_CODES 17
extern const unsigned gw_codes[GW_CODES];

/* Requests answered, by route and code: any thread adds (relaxed
 * fetch-add: a tally, publishing nothing). */
struct gw_http_stats {
	uint64_t requests[GW_ROUTES][GW_CODES];
	uint64_t bytes_in;
	uint64_t too_large;   /* 413 before the body was read */
	uint64_t timed_out;   /* bodies past --request-timeout */
	uint64_t abandoned;   /* clients gone before their answer ended */
	uint64_t unauthorized;     /* 401s */
	uint64_t over_budget;      /* 429s of the HTTP side */
	uint64_t forbidden;        /* 403s of the policy (--policy) */
	uint64_t header_timeouts;  /* connections cut: headers not in by
				    * --header-timeout */
	uint64_t resumes;          /* connections the dispatcher resumed
				    * (J2's wakes: each a turn of an HTTP
				    * thread) */
};
void gw_http_count(struct gw_http_stats *s, enum gw_route route, unsigned code);

/* Renders the Prometheus text format of everything above and the
 * daemon's own counters (through the observer) into *out. */
void gw_metrics_render(struct gw_dispatch *d, const struct gw_http_stats *h,
		       struct json_buf *out);

#endif
