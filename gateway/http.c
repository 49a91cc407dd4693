/* The HTTP side of the gateway: libmicrohttpd servers, routes, bodies,
 * Status errors, health, nodes, and the streaming of answers.
 *
 * Servers: the main listener (and the admin listener, when asked for) run
 * libmicrohttpd with a poll() thread pool (--threads), suspend/resume for
 * requests that wait on the daemon, keep-alive, and limits: connections at
 * once, an idle time-out, request headers within 32 KiB, a body within
 * max_body_bytes (413 at once when Content-Length says more; a chunked body
 * that grows past it is discarded and answered 413; one that goes on past
 * twice the limit is cut) and within request_timeout_s of the request's
 * start. A slow client costs a socket and its buffer, never a thread: a
 * thread runs only when bytes have arrived.
 *
 * A request that needs the daemon becomes a job (gateway_internal.h, J1-J5):
 * the handler suspends its connection until the dispatcher's verdict, then
 * queues either a Status object or, for an accepted POST /v1/placements of
 * more than COLLECT_PODS_MAX pods, a chunked response whose reader copies
 * answer lines as the dispatcher appends them and suspends the connection
 * when there are none yet (fewer pods: the lines at once, once all are in).
 *
 * POST /v1/placements?wait=SECONDS (0..max_wait_s) submits its pods with
 * SHMSCHED_WAIT and a deadline SECONDS after the request arrived (0:
 * SHMSCHED_NO_WAIT); the connection stays suspended while they wait,
 * which libmicrohttpd does not time out (its idle time-out restarts when
 * the connection is resumed), and the dispatcher watches its socket so a
 * client that hangs up has its waiting pods cancelled (J4).
 *
 * Every error is a Kubernetes Status object with its HTTP code: 400 (bad
 * input: where and what), 401 (no valid credentials), 403 (the admin
 * routes refused to this user or uid, or a pod its policy refuses), 404,
 * 405 (with Allow), 409, 413
 * (also ?explain=true past --explain-max-pods pods or explain_max_bytes of
 * explanations), 429 (a budget: naming it and the user), 501 (the daemon
 * does not evaluate), 503 (the daemon is away).
 *
 * Who asks (issue 41): when a request's headers are in, authenticate()
 * finds its user: a bearer token of the token file (gateway/auth.h), a
 * client certificate verified against --tls-client-ca (CN, O), or, under
 * --allow-anonymous only, "system:anonymous"; on a unix: admin listener,
 * the peer's uid (SO_PEERCRED). Health and version need no credentials.
 * The user travels on the job (gw_job.who) to the dispatcher, which keeps
 * each user's pods its own and counts its slots.
 *
 * Policy (issue 41, --policy FILE: policy/policy.h): after decoding, and
 * before anything reaches the dispatcher, each distinct spec of a POST
 * /v1/placements (and the pinned spec of /extender/bind, which places) is
 * checked with policy_admit_user(): its metadata.namespace and its
 * spec.priorityClassName against the user's rule, or, without a policy,
 * no system- class. One refused spec refuses the whole request with 403
 * (nothing placed). The admin group is not checked. The daemon sees only
 * the gateway's own producer identity, so this is the only place a
 * gateway user's namespaces and classes can be judged.
 *
 * Budgets on the HTTP side: a body's announced length is reserved from
 * --max-body-bytes-total when its headers arrive (a chunked one as it
 * grows), given back when decoded or when the request ends; every
 * connection has a record (notify_connection) whose headers must arrive
 * within --header-timeout of its accept or its last answer, and whose
 * body within --request-timeout, which a watcher thread enforces by
 * shutting the socket down (libmicrohttpd's own time-out is an idle one);
 * libmicrohttpd limits connections per address.
 *
 * POST /v1/placements?explain=true: the dispatcher evaluates each template
 * of the request (shmsched_evaluate) before submitting any of its pods,
 * and every answer line carries its template's "profile", "filtered" and
 * "scores" (dispatch.c, "?explain=true").
 */
#include "gateway/gateway_internal.h"

#include <errno.h>
#include <gnutls/gnutls.h>
#include <gnutls/x509.h>
#include <inttypes.h>
#include <microhttpd.h>
#include <netdb.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "gateway/evict_decode.h"
#include "policy/policy.h"
#include "shmsched/version.h"

#define STREAM_BLOCK (64u << 10)     /* bytes per chunk of a streamed answer */
#define HEADER_MEMORY (32u << 10)    /* a request's headers, at most */
#define ADMIN_BODY_MAX (60u << 10)   /* a Node: one control message */
#define LIVE_AFTER_NS UINT64_C(5000000000)
#define EXTENDER_MAX_NODES (1u << 20) /* candidates in one ExtenderArgs */
#define COLLECT_PODS_MAX 64u /* a request of at most this many pods is
			      * answered whole, not streamed */

/* A connection of either listener, from accept to close: the deadline
 * its headers (or its body) must meet (the watcher, deadline_watch). */
enum cx_phase { CX_HEADERS, CX_BODY, CX_BUSY, CX_CUT };
struct cx {
	struct cx *prev, *next;
	int fd;
	enum cx_phase phase;
	uint64_t since_ns;
};

struct gateway {
	struct gateway_config cfg;
	struct gw_tokens *tokens;     /* NULL: no tokens (anonymous only) */
	struct policy *policy;        /* --policy; NULL: policy_admit_user()'s
				       * default. Immutable while MHD runs. */
	char *tls_cert, *tls_key, *tls_ca; /* PEM text, while MHD runs */
	const char *admin_group;
	bool admin_unix;              /* the admin listener is a Unix socket */
	char admin_unix_path[sizeof(((struct sockaddr_un *)0)->sun_path)];
	int admin_unix_fd;
	bool main_unix;               /* the main listener is a Unix socket
				       * (--listen unix:/PATH: nginx's upstream
				       * without loopback TCP's cost) */
	char main_unix_path[sizeof(((struct sockaddr_un *)0)->sun_path)];
	int main_unix_fd;
	size_t body_bytes;            /* bodies buffered now, all connections
				       * (atomic: reserve and give back) */
	size_t max_slots_per_client;
	/* Every open connection, for the deadline watcher: under cx_lock. */
	pthread_mutex_t cx_lock;
	pthread_cond_t cx_cond;
	struct cx *cx_head;
	bool cx_stop;
	pthread_t watcher;
	bool watcher_started;
	struct gw_dispatch *dispatch;
	struct gw_extender *extender;
	struct gw_drains *drains;     /* the drains and the Eviction API's
				       * daemon connection (drain_routes.c) */
	struct gw_queues *queues;     /* /v1/queues, the daemon's metrics */
	struct gw_failures *failures; /* POST /v1/placements/{id}/failure */
	struct gw_pools *pools;       /* /v1/pools (pool_routes.c) */
	struct gw_webhooks *webhooks; /* /v1/approvals/webhooks */
	struct MHD_Daemon *mhd, *admin_mhd;
	struct gw_http_stats http;
	int suspended;                /* connections suspended now (atomic) */
	int open_jobs;                /* requests with a job not yet completed
				       * (atomic): gateway_stop() waits for
				       * their answers to be written */
	pthread_mutex_t admin_lock;   /* the admin connection, slow path */
	struct shmsched_client *admin;
	char admin_socket[4096];
};

struct request {
	struct gateway *g;
	enum gw_route route;
	struct gw_identity who;
	bool admin;               /* who may use the admin routes and see every
				   * pod */
	bool over_budget;         /* the body passed --max-body-bytes-total */
	size_t reserved;          /* bytes of g->body_bytes this request holds */
	bool admin_listener;
	bool wants_body;
	bool small_body;          /* an Eviction or a drain's flags:
				   * GW_EVICT_BODY_MAX */
	bool too_large;
	bool counted;
	struct json_buf body;
	size_t body_seen;
	uint64_t started_ns;
	struct gw_job *job;
};

/* --- responses ---------------------------------------------------------- */

static enum MHD_Result queue(struct request *r, struct MHD_Connection *conn,
			     unsigned code, struct MHD_Response *resp,
			     const char *content_type)
{
	if (resp == NULL)
		return MHD_NO;
	if (content_type != NULL)
		MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE,
					content_type);
	enum MHD_Result rc = MHD_queue_response(conn, code, resp);
	MHD_destroy_response(resp);
	if (!r->counted) {
		r->counted = true;
		gw_http_count(&r->g->http, r->route, code);
	}
	return rc;
}

static enum MHD_Result respond_buf(struct request *r, struct MHD_Connection *conn,
				   unsigned code, const char *content_type,
				   const char *data, size_t len)
{
	struct MHD_Response *resp = MHD_create_response_from_buffer(
		len, (void *)data, MHD_RESPMEM_MUST_COPY);
	return queue(r, conn, code, resp, content_type);
}

static const char *reason_of(unsigned code)
{
	switch (code) {
	case 400: return "BadRequest";
	case 401: return "Unauthorized";
	case 403: return "Forbidden";
	case 404: return "NotFound";
	case 405: return "MethodNotAllowed";
	case 408: return "Timeout";
	case 409: return "Conflict";
	case 413: return "RequestEntityTooLarge";
	case 415: return "UnsupportedMediaType";
	case 429: return "TooManyRequests";
	case 501: return "NotImplemented";
	case 503: return "ServiceUnavailable";
	default: return "InternalError";
	}
}

static enum MHD_Result respond_status(struct request *r, struct MHD_Connection *conn,
				      unsigned code, const char *allow,
				      const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));

/* A Kubernetes Status object (metav1.Status) with `code`. */
static enum MHD_Result respond_status(struct request *r, struct MHD_Connection *conn,
				      unsigned code, const char *allow,
				      const char *fmt, ...)
{
	char msg[2048];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	struct json_buf b = {0};
	json_buf_puts(&b, "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"metadata\":{},"
		      "\"status\":\"Failure\",\"message\":");
	json_buf_string(&b, msg);
	json_buf_printf(&b, ",\"reason\":\"%s\",\"code\":%u}\n", reason_of(code), code);
	struct MHD_Response *resp = b.failed ? NULL :
		MHD_create_response_from_buffer(b.len, b.data, MHD_RESPMEM_MUST_COPY);
	json_buf_free(&b);
	if (resp != NULL && allow != NULL)
		MHD_add_response_header(resp, MHD_HTTP_HEADER_ALLOW, allow);
	/* RFC 6750: a 401 names the scheme; kube's 429 says when to retry. */
	if (resp != NULL && code == 401)
		MHD_add_response_header(resp, MHD_HTTP_HEADER_WWW_AUTHENTICATE,
					"Bearer realm=\"shmsched-gateway\"");
	if (resp != NULL && code == 429)
		MHD_add_response_header(resp, MHD_HTTP_HEADER_RETRY_AFTER, "1");
	return queue(r, conn, code, resp, "application/json");
}

/* A reply made by another module (drain_routes.c); frees its body. */
static enum MHD_Result gw_reply(struct request *r, struct MHD_Connection *conn,
				struct gw_http_reply *rep)
{
	enum MHD_Result rc = rep->body.failed
		? respond_status(r, conn, 500, NULL, "out of memory")
		: respond_buf(r, conn, rep->code, rep->content_type,
			      rep->body.data ? rep->body.data : "", rep->body.len);
	json_buf_free(&rep->body);
	return rc;
}

/* --- jobs: suspend, wake, stream ----------------------------------------- */

static void job_wake(struct gw_job *j)
{
	struct gateway *g = j->http_owner;
	/* Relaxed: a count, read by /metrics. */
	__atomic_fetch_add(&g->http.resumes, 1, __ATOMIC_RELAXED);
	__atomic_fetch_sub(&g->suspended, 1, __ATOMIC_RELEASE);
	MHD_resume_connection(j->http);
}

/* J3: with the lock held, nothing new: suspend until the dispatcher wakes
 * us. */
static void suspend_locked(struct gateway *g, struct gw_job *j)
{
	j->suspended = true;
	__atomic_fetch_add(&g->suspended, 1, __ATOMIC_RELAXED);
	MHD_suspend_connection(j->http);
}

struct stream {
	struct gateway *g;
	struct gw_job *job;
};

static ssize_t stream_read(void *cls, uint64_t pos, char *buf, size_t max)
{
	(void)pos;
	struct stream *s = cls;
	struct gw_job *j = s->job;
	pthread_mutex_lock(&j->lock);
	if (j->sent < j->out.len) {
		size_t n = j->out.len - j->sent;
		if (n > max)
			n = max;
		memcpy(buf, j->out.data + j->sent, n);
		j->sent += n;
		pthread_mutex_unlock(&j->lock);
		return (ssize_t)n;
	}
	if (j->done) {
		pthread_mutex_unlock(&j->lock);
		return MHD_CONTENT_READER_END_OF_STREAM;
	}
	suspend_locked(s->g, j);
	pthread_mutex_unlock(&j->lock);
	return 0;
}

static void stream_free(void *cls)
{
	struct stream *s = cls;
	gw_job_unref(s->job);
	free(s);
}

/* The job's verdict is in: queue what it says. */
/* ?fieldValidation=Warn: one Warning header per unknown field dropped, in
 * kube-apiserver's form (RFC 7234 warn-code 299, agent "-"):
 *   Warning: 299 - "unknown field \"spec.nodeSelectr\""
 * and one more saying how many were not named, past GW_MAX_WARNINGS. */
static void add_warnings(struct MHD_Response *resp, const struct gw_job *j)
{
	if (resp == NULL || j->kind != GW_JOB_PLACE)
		return;
	const struct gw_batch *b = &j->batch;
	char h[K8S_FIELDS_MSG_MAX * 2 + 16];
	for (size_t i = 0; i < b->n_warnings; i++) {
		size_t n = (size_t)snprintf(h, sizeof(h), "299 - \"");
		for (const char *p = b->warnings[i]; *p && n + 4 < sizeof(h); p++) {
			if (*p == '"' || *p == '\\')
				h[n++] = '\\';
			h[n++] = (unsigned char)*p < 0x20 ? '?' : *p;
		}
		h[n++] = '"';
		h[n] = '\0';
		MHD_add_response_header(resp, "Warning", h);
	}
	if (b->n_warnings_total > b->n_warnings) {
		snprintf(h, sizeof(h), "299 - \"%zu more unknown fields\"",
			 b->n_warnings_total - b->n_warnings);
		MHD_add_response_header(resp, "Warning", h);
	}
}

static enum MHD_Result respond_job(struct request *r, struct MHD_Connection *conn)
{
	struct gw_job *j = r->job;
	pthread_mutex_lock(&j->lock);
	unsigned code = j->code;
	if (j->collect && code == 200 && !j->done) {
		/* Every line first (the extender's bind answers once). */
		suspend_locked(r->g, j);
		pthread_mutex_unlock(&j->lock);
		return MHD_YES;
	}
	if (j->kind == GW_JOB_EVICT && code == 200) {
		/* The dispatcher found it and the asker may evict it: now the
		 * daemon's budgets decide (drain_routes.c). */
		pthread_mutex_unlock(&j->lock);
		struct gw_http_reply rep;
		gw_evict_run(r->g->drains, j->name, j->evict_id, j->evict_node,
			     j->evict_dry, &rep);
		enum MHD_Result rc = gw_reply(r, conn, &rep);
		return rc;
	}
	if (j->ext != NULL) {
		/* Done: the dispatcher writes nothing more to out. */
		pthread_mutex_unlock(&j->lock);
		struct gw_http_reply rep;
		gw_extender_finish(r->g->extender, j, &rep);
		enum MHD_Result rc = rep.body.failed
			? respond_status(r, conn, 500, NULL, "out of memory")
			: respond_buf(r, conn, rep.code, rep.content_type,
				      rep.body.data ? rep.body.data : "", rep.body.len);
		json_buf_free(&rep.body);
		return rc;
	}
	bool stream = code == 200 && j->kind == GW_JOB_PLACE && !j->collect;
	if (!stream) {
		/* A small request's lines, all at once with a Content-Length:
		 * one write, where streaming would send the headers, each line
		 * and the last chunk apart (each a wake-up of the proxy). */
		struct MHD_Response *resp = MHD_create_response_from_buffer(
			j->out.len - j->sent, j->out.data + j->sent,
			MHD_RESPMEM_MUST_COPY);
		bool lines = code == 200 && j->kind == GW_JOB_PLACE;
		pthread_mutex_unlock(&j->lock);
		add_warnings(resp, j);
		return queue(r, conn, code, resp,
			     lines ? "application/x-ndjson" : "application/json");
	}
	pthread_mutex_unlock(&j->lock);
	struct stream *s = malloc(sizeof(*s));
	if (s == NULL)
		return MHD_NO;
	*s = (struct stream){r->g, j};
	gw_job_ref(j);
	struct MHD_Response *resp = MHD_create_response_from_callback(
		MHD_SIZE_UNKNOWN, STREAM_BLOCK, stream_read, s, stream_free);
	if (resp == NULL) {
		stream_free(s);
		return MHD_NO;
	}
	add_warnings(resp, j);
	return queue(r, conn, 200, resp, "application/x-ndjson");
}

/* Hands the job to the dispatcher and waits for the verdict. */
static enum MHD_Result start_job(struct request *r, struct MHD_Connection *conn,
				 struct gw_job *j)
{
	j->who = r->who;
	j->admin = r->admin;
	j->wake = job_wake;
	j->http = conn;
	j->http_owner = r->g;
	j->received_ns = now_ns();
	if (j->pod_flags & SHMSCHED_WAIT)
		j->deadline_ns = j->received_ns + j->deadline_ns; /* + ?wait */
	const union MHD_ConnectionInfo *ci = MHD_get_connection_info(
		conn, MHD_CONNECTION_INFO_CONNECTION_FD);
	j->http_fd = ci != NULL ? (int)ci->connect_fd : -1;
	r->job = j;
	/* Relaxed: a count; completed() takes it back. */
	__atomic_fetch_add(&r->g->open_jobs, 1, __ATOMIC_RELAXED);
	gw_dispatch_submit(r->g->dispatch, j);
	pthread_mutex_lock(&j->lock);
	if (j->code == 0) {
		suspend_locked(r->g, j);
		pthread_mutex_unlock(&j->lock);
		return MHD_YES;
	}
	pthread_mutex_unlock(&j->lock);
	return respond_job(r, conn);
}

/* The request's body and its share of --max-body-bytes-total given back. */
static void body_release(struct request *r)
{
	json_buf_free(&r->body);
	if (r->reserved > 0) {
		/* Relaxed: a count (body_reserve). */
		__atomic_fetch_sub(&r->g->body_bytes, r->reserved, __ATOMIC_RELAXED);
		r->reserved = 0;
	}
}

/* --- routes ------------------------------------------------------------- */

/* "/v1/placements/{ns}/{name}": ns and name, each a non-empty segment. */
static bool split_name(const char *rest, char *ns_name, size_t len)
{
	const char *slash = strchr(rest, '/');
	if (slash == NULL || slash == rest || slash[1] == '\0' ||
	    strchr(slash + 1, '/') != NULL)
		return false;
	size_t ns_len = (size_t)(slash - rest), name_len = strlen(slash + 1);
	if (ns_len > GW_NAMESPACE_MAX || name_len > GW_NAME_MAX)
		return false;
	for (const char *p = rest; *p; p++)
		if ((unsigned char)*p < 0x20 || *p == 0x7f)
			return false;
	return snprintf(ns_name, len, "%s", rest) < (int)len;
}

static bool is(const char *method, const char *m)
{
	return strcmp(method, m) == 0;
}

/* Whether r's user may place every spec of j's batch (policy/policy.h):
 * 0, or -EPERM with why (the first spec refused, by its first pod's place
 * in the body), or -EINVAL (a spec.priorityClassName not a string: the
 * daemon would refuse it too, but no class may pass unchecked), or
 * -ENOMEM. The admin group is not checked. Under --policy, j->disrupt gets
 * the user's disruptNamespaces (absent: its namespaces), which the
 * templates carry to the daemon: the daemon knows only the gateway's
 * identity, so without them a user's pods could preempt any pod that
 * identity's rule lets it disrupt, another user's included. */
static int policy_check(const struct request *r, struct gw_job *j, char *why,
			size_t why_len)
{
	const struct gw_batch *b = &j->batch;
	if (r->admin)
		return 0;
	for (size_t s = 0; s < b->n_specs; s++) {
		const json_t *canon = b->specs[s].canon;
		/* The decoder always sets metadata.namespace (decode.c). */
		const char *ns = json_string_value(json_object_get(
			json_object_get(canon, "metadata"), "namespace"));
		const json_t *cv = json_object_get(json_object_get(canon, "spec"),
						   "priorityClassName");
		if (cv != NULL && !json_is_string(cv) && !json_is_null(cv)) {
			snprintf(why, why_len, "%s: spec.priorityClassName: expected "
				 "a string", b->specs[s].where);
			return -EINVAL;
		}
		const char *cls = json_string_value(cv);
		char msg[840]; /* with where and the hint: within 1024 */
		int rc = policy_admit_user(r->g->policy, r->who.user, ns ? ns : "",
					   cls, msg, sizeof(msg));
		if (rc < 0) {
			/* policy/ speaks of the daemon's --policy: say ours. */
			snprintf(why, why_len, "%s: %s%s", b->specs[s].where, msg,
				 r->g->policy == NULL ? " (here: shmsched-gateway "
				 "--policy, or a token of its --admin-group)" : "");
			return rc;
		}
	}
	if (r->g->policy != NULL) {
		char scope[POLICY_SCOPE_BYTES_MAX + 1];
		const struct policy_rule *rule = policy_find_user(r->g->policy,
								  r->who.user);
		free(j->disrupt);
		j->disrupt = NULL;
		if (policy_rule_disrupt_text(rule, scope, sizeof(scope)) < 0 ||
		    (j->disrupt = strdup(scope)) == NULL) {
			snprintf(why, why_len, "out of memory");
			return -ENOMEM;
		}
	}
	return 0;
}

static enum MHD_Result route_placements(struct request *r, struct MHD_Connection *conn,
					const char *method)
{
	struct gateway *g = r->g;
	if (!is(method, MHD_HTTP_METHOD_POST))
		return respond_status(r, conn, 405, "POST", "%s /v1/placements: "
				      "only POST (a Pod, a List of Pods, or JSON "
				      "Lines of Pods)", method);
	/* "?wait" with no value is refused as "" is. */
	const char *wait = NULL;
	size_t wait_len = 0;
	bool has_wait = MHD_lookup_connection_value_n(conn, MHD_GET_ARGUMENT_KIND,
						      "wait", 4, &wait, &wait_len)
			== MHD_YES;
	unsigned wait_s = 0;
	char err[1024];
	if (has_wait && gw_parse_wait(wait, wait ? wait_len : 0, g->cfg.max_wait_s,
				      &wait_s, err, sizeof(err)) < 0)
		return respond_status(r, conn, 400, NULL, "%s", err);
	const char *explain_text = NULL;
	size_t explain_len = 0;
	bool explain = false;
	if (MHD_lookup_connection_value_n(conn, MHD_GET_ARGUMENT_KIND, "explain", 7,
					  &explain_text, &explain_len) == MHD_YES &&
	    gw_parse_explain(explain_text, explain_text ? explain_len : 0, &explain,
			     err, sizeof(err)) < 0)
		return respond_status(r, conn, 400, NULL, "%s", err);
	if (explain && g->cfg.explain_max_pods == 0)
		return respond_status(r, conn, 400, NULL, "?explain=true: refused by "
				      "this gateway (--explain-max-pods 0)");
	/* kube-apiserver's ?fieldValidation=Strict|Warn|Ignore; absent:
	 * Strict (kubectl's default; the API server's own is Warn). */
	enum k8s_field_validation fv = K8S_FIELDS_STRICT;
	const char *fv_text = NULL;
	size_t fv_len = 0;
	if (MHD_lookup_connection_value_n(conn, MHD_GET_ARGUMENT_KIND,
					  "fieldValidation", 15, &fv_text,
					  &fv_len) == MHD_YES &&
	    (fv_text == NULL || strlen(fv_text) != fv_len ||
	     k8s_field_validation_parse(fv_text, &fv) < 0)) {
		char shown[64];
		snprintf(shown, sizeof(shown), "%s", fv_text ? fv_text : "");
		for (char *p = shown; *p; p++)
			if ((unsigned char)*p < 0x20 || (unsigned char)*p >= 0x7f ||
			    *p == '"')
				*p = '?';
		return respond_status(r, conn, 400, NULL, "?fieldValidation=%s: "
				      "expected Strict, Warn or Ignore", shown);
	}
	struct gw_limits lim = {.max_pods = g->cfg.max_pods,
				.max_specs = g->cfg.max_templates,
				.field_validation = (int)fv};
	struct gw_job *j = gw_job_new(GW_JOB_PLACE);
	if (j == NULL)
		return respond_status(r, conn, 500, NULL, "out of memory");
	int rc = gw_decode_pods(r->body.data ? r->body.data : "", r->body.len, &lim,
				&j->batch, err, sizeof(err));
	if (rc == -E2BIG && strstr(err, "pods in one request") != NULL) {
		gw_job_unref(j);
		__atomic_fetch_add(&g->http.over_budget, 1, __ATOMIC_RELAXED);
		return respond_status(r, conn, 429, NULL, "user %s: %s: over the "
				      "budget --max-pods-per-request (%zu pods in one "
				      "request): send fewer pods per request; nothing "
				      "was placed", r->who.user, err, g->cfg.max_pods);
	}
	if (rc < 0) {
		gw_job_unref(j);
		return respond_status(r, conn, rc == -E2BIG ? 413 : rc == -ENOMEM
				      ? 500 : 400, NULL, "%s", err);
	}
	body_release(r); /* the batch holds what it needs */
	if (explain && j->batch.n_pods > g->cfg.explain_max_pods) {
		size_t n = j->batch.n_pods;
		gw_job_unref(j);
		return respond_status(r, conn, 413, NULL, "?explain=true: %zu pods; "
				      "at most %zu are explained in one request "
				      "(--explain-max-pods: each line carries every "
				      "node's filter reasons or scores): send fewer "
				      "pods per request; nothing was placed", n,
				      g->cfg.explain_max_pods);
	}
	/* The policy: 403 here, before anything reaches the dispatcher. */
	if ((rc = policy_check(r, j, err, sizeof(err))) < 0) {
		gw_job_unref(j);
		if (rc == -EPERM)
			__atomic_fetch_add(&g->http.forbidden, 1, __ATOMIC_RELAXED);
		return respond_status(r, conn, rc == -EPERM ? 403 : rc == -ENOMEM
				      ? 500 : 400, NULL,
				      "%s; nothing was placed", err);
	}
	j->explain = explain;
	if (has_wait && wait_s == 0) {
		j->pod_flags = SHMSCHED_NO_WAIT;
	} else if (has_wait) {
		j->pod_flags = SHMSCHED_WAIT;
		/* The seconds, until start_job() adds the arrival time. */
		j->deadline_ns = (uint64_t)wait_s * UINT64_C(1000000000);
	}
	/* Large requests stream their lines as the daemon answers; small
	 * ones are answered whole. */
	j->collect = j->batch.n_pods <= COLLECT_PODS_MAX;
	return start_job(r, conn, j);
}

static enum MHD_Result route_placement(struct request *r, struct MHD_Connection *conn,
				       const char *method, const char *rest)
{
	bool get = is(method, MHD_HTTP_METHOD_GET) || is(method, MHD_HTTP_METHOD_HEAD);
	if (!get && !is(method, MHD_HTTP_METHOD_DELETE))
		return respond_status(r, conn, 405, "GET, HEAD, DELETE",
				      "%s /v1/placements/{namespace}/{name}: only "
				      "GET and DELETE", method);
	struct gw_job *j = gw_job_new(get ? GW_JOB_LOOKUP : GW_JOB_RELEASE);
	if (j == NULL)
		return respond_status(r, conn, 500, NULL, "out of memory");
	if (!split_name(rest, j->name, sizeof(j->name))) {
		gw_job_unref(j);
		return respond_status(r, conn, 404, NULL, "/v1/placements/%s: expected "
				      "/v1/placements/{namespace}/{name}", rest);
	}
	j->cookie = gw_cookie(j->name, strlen(j->name));
	return start_job(r, conn, j);
}

static void node_json(struct json_buf *b, const struct shmsched_observe_node *n)
{
	json_buf_puts(b, "{\"name\":");
	json_buf_string(b, n->name);
	json_buf_printf(b, ",\"id\":%" PRIu32 ",\"allocatable\":{\"cpu_milli\":%" PRId64
			",\"memory_bytes\":%" PRId64 ",\"pods\":%" PRId64 "},\"used\":{"
			"\"cpu_milli\":%" PRId64 ",\"memory_bytes\":%" PRId64
			",\"pods\":%" PRId64 "},\"placements\":%" PRIu64 ",\"gpus\":%"
			PRIu32 ",\"cores\":%" PRIu32 ",\"labels\":%" PRIu32 ",\"taints\":%"
			PRIu32 ",\"cordoned\":%s}", n->node_id, n->cpu_milli,
			n->mem_bytes, n->pods, n->used_cpu_milli, n->used_mem_bytes,
			n->used_pods, n->placements, n->gpus, n->cores, n->labels,
			n->taints, n->cordoned ? "true" : "false");
}

static enum MHD_Result route_nodes(struct request *r, struct MHD_Connection *conn,
				   const char *method, const char *name);

static enum MHD_Result route_health(struct request *r, struct MHD_Connection *conn,
				    const char *url)
{
	struct gateway *g = r->g;
	const struct gw_dispatch_stats *st = gw_dispatch_stats(g->dispatch);
	uint64_t beat = stat_read(&st->heartbeat_ns), now = now_ns();
	bool live = now < beat + LIVE_AFTER_NS;
	bool connected = stat_read(&st->connected) != 0;
	bool loaded = true;
	char why[256] = "";
	struct shmsched_observer *obs = gw_observer_get(g->dispatch);
	if (obs != NULL && connected) {
		struct shmsched_observe_summary sum;
		int rc = shmsched_observe_summary(obs, &sum, why, sizeof(why));
		loaded = rc == 0 && sum.generation > 0;
		if (rc == 0 && !loaded)
			snprintf(why, sizeof(why), "no cluster snapshot published yet");
	}
	gw_observer_put(g->dispatch);
	bool want_live = strcmp(url, "/readyz") != 0;
	bool want_ready = strcmp(url, "/livez") != 0;
	bool ok = (!want_live || live) && (!want_ready || (connected && loaded));
	struct json_buf b = {0};
	/* "?verbose" has no value: asked for by its presence. */
	const char *verbose = NULL;
	size_t verbose_len = 0;
	if (MHD_lookup_connection_value_n(conn, MHD_GET_ARGUMENT_KIND, "verbose", 7,
					  &verbose, &verbose_len) == MHD_YES) {
		if (want_live)
			json_buf_printf(&b, "[%c]dispatcher %s\n", live ? '+' : '-',
					live ? "ok" : "stalled");
		if (want_ready) {
			json_buf_printf(&b, "[%c]daemon %s\n", connected ? '+' : '-',
					connected ? "ok" : "not reachable");
			json_buf_printf(&b, "[%c]cluster %s%s\n", loaded ? '+' : '-',
					loaded ? "ok" : "not loaded: ", loaded ? "" : why);
		}
		json_buf_printf(&b, "%s check %s\n", url + 1, ok ? "passed" : "failed");
	} else {
		json_buf_puts(&b, ok ? "ok" : !live ? "the dispatcher is stalled\n"
			      : !connected ? "the shmsched daemon is not reachable\n"
			      : "the daemon has no cluster loaded\n");
	}
	enum MHD_Result rc = respond_buf(r, conn, ok ? 200 : (want_ready ? 503 : 500),
					 "text/plain; charset=utf-8",
					 b.data ? b.data : "", b.len);
	json_buf_free(&b);
	return rc;
}

static enum MHD_Result route_version(struct request *r, struct MHD_Connection *conn)
{
	char text[256];
	int n = snprintf(text, sizeof(text), "{\"major\":\"%d\",\"minor\":\"%d\","
			 "\"gitVersion\":\"v%s\",\"platform\":\"linux\","
			 "\"program\":\"shmsched-gateway\"}\n", SHMSCHED_VERSION_MAJOR,
			 SHMSCHED_VERSION_MINOR, SHMSCHED_VERSION_STRING);
	return respond_buf(r, conn, 200, "application/json", text, (size_t)n);
}

static enum MHD_Result route_metrics(struct request *r, struct MHD_Connection *conn)
{
	struct json_buf b = {0};
	gw_metrics_render(r->g->dispatch, &r->g->http, &b);
	gw_queues_metrics(r->g->queues, &b);
	enum MHD_Result rc = b.failed
		? respond_status(r, conn, 500, NULL, "out of memory")
		: respond_buf(r, conn, 200, "text/plain; version=0.0.4; charset=utf-8",
			      b.data ? b.data : "", b.len);
	json_buf_free(&b);
	return rc;
}

static enum MHD_Result route_extender(struct request *r, struct MHD_Connection *conn,
				      const char *method, const char *verb)
{
	if (!is(method, MHD_HTTP_METHOD_POST))
		return respond_status(r, conn, 405, "POST", "%s /extender/%s: only POST",
				      method, verb);
	struct gw_http_reply rep;
	gw_extender_start(r->g->extender, verb, r->body.data ? r->body.data : "",
			  r->body.len, EXTENDER_MAX_NODES, &rep);
	if (rep.job != NULL) {
		json_buf_free(&rep.body);
		body_release(r);
		/* Bind places its pod: the policy as for POST /v1/placements
		 * (filter and prioritize only evaluate). */
		char why[1280];
		int rc = rep.job->kind == GW_JOB_PLACE
			? policy_check(r, rep.job, why, sizeof(why)) : 0;
		if (rc < 0) {
			gw_job_unref(rep.job);
			if (rc == -EPERM)
				__atomic_fetch_add(&r->g->http.forbidden, 1,
						   __ATOMIC_RELAXED);
			return respond_status(r, conn, rc == -EPERM ? 403 : rc ==
					      -ENOMEM ? 500 : 400, NULL,
					      "%s; nothing was bound", why);
		}
		return start_job(r, conn, rep.job);
	}
	enum MHD_Result rc = respond_buf(r, conn, rep.code, rep.content_type,
					 rep.body.data ? rep.body.data : "",
					 rep.body.len);
	json_buf_free(&rep.body);
	return rc;
}

/* --- nodes and the admin routes ----------------------------------------- */

static enum MHD_Result nodes_get(struct request *r, struct MHD_Connection *conn,
				 const char *name)
{
	struct gateway *g = r->g;
	struct shmsched_observer *obs = gw_observer_get(g->dispatch);
	if (obs == NULL) {
		gw_observer_put(g->dispatch);
		return respond_status(r, conn, 503, NULL, "the daemon's state region "
				      "cannot be read by the gateway: start it with "
				      "the daemon's --name, as a user who may read "
				      "/dev/shm/NAME (the daemon's --region-mode and "
				      "--region-group)");
	}
	struct shmsched_observe_node *nodes = NULL;
	unsigned n = 0, cap = 0;
	uint64_t generation = 0;
	char err[512];
	int rc;
	for (;;) {
		rc = shmsched_observe_nodes(obs, nodes, cap, &n, &generation, err,
					    sizeof(err));
		if (rc < 0 || n <= cap)
			break;
		free(nodes);
		cap = n + 64;
		nodes = malloc((size_t)cap * sizeof(*nodes));
		if (nodes == NULL) {
			rc = -ENOMEM;
			snprintf(err, sizeof(err), "out of memory");
			break;
		}
	}
	gw_observer_put(g->dispatch);
	if (rc < 0) {
		free(nodes);
		return respond_status(r, conn, rc == -EAGAIN ? 503 : 500, NULL,
				      "reading the nodes: %s", err);
	}
	struct json_buf b = {0};
	enum MHD_Result out;
	if (name != NULL) {
		unsigned i = 0;
		while (i < n && strcmp(nodes[i].name, name) != 0)
			i++;
		if (i == n) {
			free(nodes);
			return respond_status(r, conn, 404, NULL, "node %s: no such node",
					      name);
		}
		node_json(&b, &nodes[i]);
		json_buf_puts(&b, "\n");
	} else {
		json_buf_printf(&b, "{\"kind\":\"NodeList\",\"generation\":%" PRIu64
				",\"items\":[", generation);
		for (unsigned i = 0; i < n; i++) {
			if (i > 0)
				json_buf_puts(&b, ",");
			node_json(&b, &nodes[i]);
		}
		json_buf_puts(&b, "]}\n");
	}
	free(nodes);
	out = b.failed ? respond_status(r, conn, 500, NULL, "out of memory")
		       : respond_buf(r, conn, 200, "application/json", b.data, b.len);
	json_buf_free(&b);
	return out;
}

/* One node event through the admin socket, holding the admin lock. */
static int admin_event(struct gateway *g, int kind, const char *body, size_t len,
		       char *err, size_t err_len)
{
	pthread_mutex_lock(&g->admin_lock);
	int rc = 0;
	for (int attempt = 0; attempt < 2; attempt++) {
		if (g->admin == NULL) {
			rc = shmsched_connect_named(g->admin_socket, "shmsched-gateway-admin",
						    &g->admin, err, err_len);
			if (rc < 0)
				break;
		}
		rc = shmsched_node_event(g->admin, kind, body, len, err, err_len);
		if (rc != -ECONNRESET)
			break;
		/* The daemon restarted since: one more try on a new connection. */
		shmsched_disconnect(g->admin);
		g->admin = NULL;
	}
	pthread_mutex_unlock(&g->admin_lock);
	return rc;
}

static unsigned code_of_refusal(int rc)
{
	switch (rc) {
	case -EINVAL:
		return 400;
	case -ENOENT:
		return 404;
	case -EEXIST:
		return 409;
	case -EPERM:
	case -EACCES:
		return 403;
	case -EMSGSIZE:
		return 413;
	case -ENOTSUP: /* a lease to a daemon that keeps none */
		return 501;
	case -ECONNRESET:
	case -ECONNREFUSED:
	case -ETIMEDOUT:
	case -EBUSY:
	case -EPROTO:
		return 503;
	default:
		return rc == -ENOTSOCK || rc == -ENOTDIR ? 503 : 500;
	}
}

static enum MHD_Result respond_success(struct request *r, struct MHD_Connection *conn,
				       unsigned code, const char *message)
{
	struct json_buf b = {0};
	json_buf_puts(&b, "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"metadata\":{},"
		      "\"status\":\"Success\",\"message\":");
	json_buf_string(&b, message);
	json_buf_printf(&b, ",\"code\":%u}\n", code);
	enum MHD_Result rc = respond_buf(r, conn, code, "application/json",
					 b.data ? b.data : "", b.len);
	json_buf_free(&b);
	return rc;
}

static enum MHD_Result node_add(struct request *r, struct MHD_Connection *conn)
{
	/* Only the name is read here, to say which node; the daemon checks
	 * the rest. */
	json_error_t je;
	json_t *node = json_loadb(r->body.data ? r->body.data : "", r->body.len,
				  JSON_REJECT_DUPLICATES, &je);
	if (node == NULL)
		return respond_status(r, conn, 400, NULL, "line %d, column %d: JSON: %s",
				      je.line, je.column, je.text);
	const json_t *kind = json_object_get(node, "kind");
	const char *name = json_string_value(json_object_get(
		json_object_get(node, "metadata"), "name"));
	char name_buf[GW_NAME_MAX + 1];
	bool bad_kind = kind != NULL && !(json_is_string(kind) &&
					  strcmp(json_string_value(kind), "Node") == 0);
	bool bad_name = name == NULL || name[0] == '\0' || strlen(name) > GW_NAME_MAX;
	bool object = json_is_object(node);
	if (!bad_name)
		snprintf(name_buf, sizeof(name_buf), "%s", name);
	json_decref(node);
	if (!object || bad_kind)
		return respond_status(r, conn, 400, NULL, "expected a Node object "
				      "(kind: Node)");
	if (bad_name)
		return respond_status(r, conn, 400, NULL, "metadata.name: required, "
				      "1 to %d bytes", GW_NAME_MAX);
	char err[1024], msg[512];
	int rc = admin_event(r->g, SHMSCHED_NODE_ADD, r->body.data, r->body.len, err,
			     sizeof(err));
	bool updated = false;
	if (rc == -EEXIST) {
		rc = admin_event(r->g, SHMSCHED_NODE_UPDATE, r->body.data, r->body.len,
				 err, sizeof(err));
		updated = true;
	}
	if (rc < 0)
		return respond_status(r, conn, code_of_refusal(rc), NULL, "%s",
				      gw_daemon_says(err));
	snprintf(msg, sizeof(msg), "node %s %s", name_buf, updated ? "updated" : "added");
	return respond_success(r, conn, updated ? 200 : 201, msg);
}

static enum MHD_Result node_verb(struct request *r, struct MHD_Connection *conn,
				 int kind, const char *name, const char *done)
{
	char err[1024], msg[512];
	int rc = admin_event(r->g, kind, name, strlen(name), err, sizeof(err));
	if (rc < 0)
		return respond_status(r, conn, code_of_refusal(rc), NULL, "%s",
				      gw_daemon_says(err));
	snprintf(msg, sizeof(msg), "node %s %s", name, done);
	return respond_success(r, conn, 200, msg);
}

static enum MHD_Result route_nodes(struct request *r, struct MHD_Connection *conn,
				   const char *method, const char *rest)
{
	bool get = is(method, MHD_HTTP_METHOD_GET) || is(method, MHD_HTTP_METHOD_HEAD);
	if (rest == NULL) { /* /v1/nodes */
		if (get)
			return nodes_get(r, conn, NULL);
		if (is(method, MHD_HTTP_METHOD_POST) && r->admin_listener)
			return node_add(r, conn);
		return respond_status(r, conn, 405, r->admin_listener ? "GET, HEAD, POST"
				      : "GET, HEAD", "%s /v1/nodes: %s", method,
				      r->admin_listener ? "GET lists, POST adds or updates"
				      : "GET only here; nodes change on the admin "
				      "listener (--admin-listen)");
	}
	char name[GW_NAME_MAX + 1];
	const char *slash = strchr(rest, '/');
	size_t len = slash ? (size_t)(slash - rest) : strlen(rest);
	if (len == 0 || len > GW_NAME_MAX)
		return respond_status(r, conn, 404, NULL, "/v1/nodes/%s: no such node",
				      rest);
	memcpy(name, rest, len);
	name[len] = '\0';
	if (slash != NULL && strcmp(slash, "/drain") == 0) {
		/* /v1/nodes/{name}/drain: POST starts, GET reads, DELETE
		 * cancels (issue 38). */
		bool del = is(method, MHD_HTTP_METHOD_DELETE);
		if (!r->admin_listener ||
		    !(get || del || is(method, MHD_HTTP_METHOD_POST)))
			return respond_status(r, conn, 405, r->admin_listener
					      ? "GET, HEAD, POST, DELETE" : "", "%s "
					      "/v1/nodes/{name}/drain: POST starts a "
					      "drain, GET reads it, DELETE cancels it, "
					      "on the admin listener only", method);
		struct gw_http_reply rep;
		if (get)
			gw_drain_get(r->g->drains, name, &rep);
		else if (del)
			gw_drain_cancel(r->g->drains, name, &rep);
		else
			gw_drain_start(r->g->drains, name, r->body.data ? r->body.data
				       : "", r->body.len, &rep);
		return gw_reply(r, conn, &rep);
	}
	if (slash != NULL && strcmp(slash, "/lease") == 0) {
		/* A PUT on the admin listener is lease_put's (route_of). */
		if (!r->admin_listener)
			return respond_status(r, conn, 404, NULL, "/v1/nodes/%s: no "
					      "such route here (a lease is the admin "
					      "listener's)", rest);
		return respond_status(r, conn, 405, "PUT", "%s /v1/nodes/{name}/lease: "
				      "only PUT (renews the node's lease)", method);
	}
	if (slash != NULL) { /* /v1/nodes/{name}/cordon|uncordon */
		bool cordon = strcmp(slash, "/cordon") == 0;
		if (!cordon && strcmp(slash, "/uncordon") != 0)
			return respond_status(r, conn, 404, NULL, "/v1/nodes/%s: no "
					      "such route", rest);
		if (!r->admin_listener || !is(method, MHD_HTTP_METHOD_POST))
			return respond_status(r, conn, 405, r->admin_listener ? "POST" : "",
					      "%s /v1/nodes/{name}%s: POST, on the admin "
					      "listener only", method, slash);
		return node_verb(r, conn, cordon ? SHMSCHED_NODE_CORDON
				 : SHMSCHED_NODE_UNCORDON, name,
				 cordon ? "cordoned" : "uncordoned");
	}
	if (get)
		return nodes_get(r, conn, name);
	if (is(method, MHD_HTTP_METHOD_DELETE) && r->admin_listener)
		return node_verb(r, conn, SHMSCHED_NODE_REMOVE, name, "removed");
	return respond_status(r, conn, 405, r->admin_listener ? "GET, HEAD, DELETE"
			      : "GET, HEAD", "%s /v1/nodes/{name}: %s", method,
			      r->admin_listener ? "GET or DELETE"
			      : "GET only here; nodes change on the admin listener");
}

/* POST /api/v1/namespaces/{ns}/pods/{name}/eviction (issue 38), the
 * Eviction API as kube-apiserver serves it (kubernetes/kubernetes
 * pkg/registry/core/pod/storage/eviction.go): the body decoded
 * (gateway/evict_decode.h: 400), the user's policy asked whether it may
 * disrupt the namespace (403, before the pod is looked for, as RBAC
 * comes first), then the dispatcher finds the pod and judges ownership
 * (404, 403: handle_evict) and the daemon's budgets decide (201, 429,
 * 500: gw_evict_run). */
static enum MHD_Result route_eviction(struct request *r, struct MHD_Connection *conn,
				      const char *method, const char *url)
{
	static const char prefix[] = "/api/v1/namespaces/";
	const char *at = url + sizeof(prefix) - 1;
	const char *pods = strstr(at, "/pods/");
	const char *tail = pods != NULL ? strchr(pods + 6, '/') : NULL;
	size_t ns_len = pods != NULL ? (size_t)(pods - at) : 0;
	size_t name_len = tail != NULL ? (size_t)(tail - pods - 6) : 0;
	if (tail == NULL || strcmp(tail, "/eviction") != 0 || ns_len == 0 ||
	    memchr(at, '/', ns_len) != NULL || ns_len > GW_NAMESPACE_MAX ||
	    name_len == 0 || name_len > GW_NAME_MAX)
		return respond_status(r, conn, 404, NULL, "%s: no such route (the "
				      "gateway serves /api/v1/namespaces/{ns}/pods/"
				      "{name}/eviction only)", url);
	if (!is(method, MHD_HTTP_METHOD_POST))
		return respond_status(r, conn, 405, "POST", "%s %s: only POST (a "
				      "policy/v1 Eviction)", method, url);
	char ns[GW_NAMESPACE_MAX + 1], name[GW_NAME_MAX + 1];
	memcpy(ns, at, ns_len);
	ns[ns_len] = '\0';
	memcpy(name, pods + 6, name_len);
	name[name_len] = '\0';
	for (const char *p = url; *p; p++)
		if ((unsigned char)*p < 0x20 || *p == 0x7f)
			return respond_status(r, conn, 400, NULL, "the URL holds a "
					      "control character");
	struct gw_eviction ev;
	char err[512];
	if (gw_eviction_decode(r->body.data ? r->body.data : "", r->body.len, ns,
			       name, &ev, err, sizeof(err)) < 0)
		return respond_status(r, conn, 400, NULL, "%s", err);
	body_release(r);
	if (!r->admin && r->g->policy != NULL &&
	    !policy_allows_disrupt(policy_find_user(r->g->policy, r->who.user), ns,
				   ns_len))
		return respond_status(r, conn, 403, NULL, "pods \"%s\" is forbidden: "
				      "user \"%s\" may not evict pods in namespace "
				      "\"%s\" (its disruptNamespaces, shmsched-gateway "
				      "--policy)", name, r->who.user, ns);
	struct gw_job *j = gw_job_new(GW_JOB_EVICT);
	if (j == NULL)
		return respond_status(r, conn, 500, NULL, "out of memory");
	snprintf(j->name, sizeof(j->name), "%s/%s", ns, name);
	j->cookie = gw_cookie(j->name, strlen(j->name));
	j->evict_dry = ev.dry_run;
	return start_job(r, conn, j);
}

/* Whether url is /v1/approvals/webhooks or /v1/approvals/webhooks/{name}
 * (one segment). */
static bool is_webhooks(const char *url)
{
	static const char pre[] = "/v1/approvals/webhooks";
	size_t a = sizeof(pre) - 1;
	return strncmp(url, pre, a) == 0 &&
	       (url[a] == '\0' || (url[a] == '/' && url[a + 1] != '\0' &&
				  strchr(url + a + 1, '/') == NULL));
}

/* --- the access handler -------------------------------------------------- */

static enum gw_route route_of(const char *url)
{
	if (strcmp(url, "/v1/placements") == 0)
		return GW_ROUTE_PLACEMENTS;
	if (strncmp(url, "/v1/placements/", 15) == 0)
		return GW_ROUTE_PLACEMENT;
	if (strcmp(url, "/v1/nodes") == 0)
		return GW_ROUTE_NODES;
	if (strncmp(url, "/v1/nodes/", 10) == 0)
		return GW_ROUTE_NODE;
	if (strcmp(url, "/healthz") == 0 || strcmp(url, "/readyz") == 0 ||
	    strcmp(url, "/livez") == 0)
		return GW_ROUTE_HEALTH;
	if (strcmp(url, "/version") == 0)
		return GW_ROUTE_VERSION;
	if (strcmp(url, "/metrics") == 0)
		return GW_ROUTE_METRICS;
	if (strncmp(url, "/extender/", 10) == 0)
		return GW_ROUTE_EXTENDER;
	if (strncmp(url, "/api/v1/namespaces/", 19) == 0)
		return GW_ROUTE_EVICTION;
	if (strcmp(url, "/v1/queues") == 0 || strncmp(url, "/v1/queues/", 11) == 0 ||
	    is_webhooks(url) || strcmp(url, "/v1/pools") == 0 ||
	    strncmp(url, "/v1/pools/", 10) == 0)
		return GW_ROUTE_ADMIN; /* the admin listener's only */
	return GW_ROUTE_OTHER;
}

/* Whether url is pre + one segment (no '/') + post. */
static bool one_segment_route(const char *url, const char *pre, const char *post)
{
	size_t n = strlen(url), a = strlen(pre), b = strlen(post);
	return n > a + b && strncmp(url, pre, a) == 0 &&
	       strcmp(url + n - b, post) == 0 &&
	       memchr(url + a, '/', n - a - b) == NULL;
}

/* Whether url is /v1/placements/{id}/failure ({id}: its digits are
 * failure_routes.c's to check). Only a POST is the failure route: GET
 * and DELETE of that path stay the pod {id}/failure's. */
static bool is_failure(const char *url)
{
	return one_segment_route(url, "/v1/placements/", "/failure");
}

/* Whether url is /v1/nodes/{name}/lease. Only a PUT is the lease route
 * (the admin listener's): anything else of that path stays route_nodes'
 * (405 on the admin listener, 404 on the main). */
static bool is_lease(const char *url)
{
	return one_segment_route(url, "/v1/nodes/", "/lease");
}

/* Whether url is /v1/pools/{pool}/release ({pool}: its bytes
 * pool_routes.c's to check). */
static bool is_pool_release(const char *url)
{
	return one_segment_route(url, "/v1/pools/", "/release");
}

/* PUT /v1/nodes/{name}/lease (issue 38): the node's lease renewed, as
 * `shmsched node lease NAME` renews it (SHMSCHED_NODE_LEASE), for a
 * node's agent that speaks HTTP. Body: empty or {} (gateway/pool_decode.h:
 * 400 otherwise). 200 {"kind":"NodeLease",...,"node":N,"renewed":true};
 * 404 no such node; 501 the daemon keeps no leases (shmschedd
 * --node-monitor-grace-period); 503 the daemon away. */
static enum MHD_Result lease_put(struct request *r, struct MHD_Connection *conn,
				 const char *url)
{
	char name[GW_NAME_MAX + 1], err[1024];
	size_t a = strlen("/v1/nodes/");
	size_t len = strlen(url) - a - strlen("/lease");
	if (len == 0 || len > GW_NAME_MAX)
		return respond_status(r, conn, 404, NULL, "nodes \"%.*s\" not found",
				      (int)(len < 64 ? len : 64), url + a);
	memcpy(name, url + a, len);
	name[len] = '\0';
	if (gw_lease_decode(r->body.data ? r->body.data : "", r->body.len, err,
			    sizeof(err)) < 0)
		return respond_status(r, conn, 400, NULL, "%s", err);
	int rc = admin_event(r->g, SHMSCHED_NODE_LEASE, name, len, err, sizeof(err));
	if (rc < 0)
		return respond_status(r, conn, code_of_refusal(rc), NULL, "%s",
				      gw_daemon_says(err));
	struct json_buf b = {0};
	json_buf_puts(&b, "{\"kind\":\"NodeLease\",\"apiVersion\":"
		      "\"shmsched.io/v1alpha1\",\"node\":");
	json_buf_string(&b, name);
	json_buf_puts(&b, ",\"renewed\":true}\n");
	enum MHD_Result out = b.failed
		? respond_status(r, conn, 500, NULL, "out of memory")
		: respond_buf(r, conn, 200, "application/json", b.data, b.len);
	json_buf_free(&b);
	return out;
}

static enum MHD_Result dispatch_route(struct request *r, struct MHD_Connection *conn,
				      const char *url, const char *method)
{
	bool get = is(method, MHD_HTTP_METHOD_GET) || is(method, MHD_HTTP_METHOD_HEAD);
	switch (r->route) {
	case GW_ROUTE_PLACEMENTS:
		return route_placements(r, conn, method);
	case GW_ROUTE_PLACEMENT:
		return route_placement(r, conn, method, url + 15);
	case GW_ROUTE_NODES:
		return route_nodes(r, conn, method, NULL);
	case GW_ROUTE_NODE:
		return route_nodes(r, conn, method, url + 10);
	case GW_ROUTE_HEALTH:
	case GW_ROUTE_VERSION:
	case GW_ROUTE_METRICS:
		if (!get)
			return respond_status(r, conn, 405, "GET, HEAD", "%s %s: only GET",
					      method, url);
		return r->route == GW_ROUTE_HEALTH ? route_health(r, conn, url)
			: r->route == GW_ROUTE_VERSION ? route_version(r, conn)
			: route_metrics(r, conn);
	case GW_ROUTE_EXTENDER:
		return route_extender(r, conn, method, url + 10);
	case GW_ROUTE_EVICTION:
		return route_eviction(r, conn, method, url);
	case GW_ROUTE_ADMIN:
		if (r->admin_listener && is_failure(url)) {
			/* POST /v1/placements/{id}/failure (issue 38). */
			struct gw_http_reply rep;
			size_t a = strlen("/v1/placements/");
			gw_failure_route(r->g->failures, url + a, strlen(url) - a -
					 strlen("/failure"), r->body.data ? r->body.data
					 : "", r->body.len, &rep);
			return gw_reply(r, conn, &rep);
		}
		if (r->admin_listener && is_lease(url))
			return lease_put(r, conn, url);
		if (r->admin_listener && strcmp(url, "/v1/pools") == 0) {
			/* GET /v1/pools (issue 38). */
			if (!get)
				return respond_status(r, conn, 405, "GET, HEAD", "%s "
						      "/v1/pools: only GET (POST "
						      "/v1/pools/{pool}/release lifts "
						      "a quarantine)", method);
			struct gw_http_reply rep;
			gw_pools_list(r->g->pools, &rep);
			return gw_reply(r, conn, &rep);
		}
		if (r->admin_listener && is_pool_release(url)) {
			/* POST /v1/pools/{pool}/release (issue 38). */
			if (!is(method, MHD_HTTP_METHOD_POST))
				return respond_status(r, conn, 405, "POST", "%s "
						      "/v1/pools/{pool}/release: only "
						      "POST", method);
			struct gw_http_reply rep;
			size_t a = strlen("/v1/pools/");
			gw_pools_release(r->g->pools, url + a, strlen(url) - a -
					 strlen("/release"), r->body.data ? r->body.data
					 : "", r->body.len, &rep);
			return gw_reply(r, conn, &rep);
		}
		if (r->admin_listener && strncmp(url, "/v1/pools/", 10) == 0)
			break; /* no such pool route: 404 */
		if (r->admin_listener && is_webhooks(url)) {
			/* /v1/approvals/webhooks (issue 38). */
			struct gw_http_reply rep;
			gw_webhooks_route(r->g->webhooks, method,
					  url + strlen("/v1/approvals/webhooks"),
					  r->body.data ? r->body.data : "",
					  r->body.len, &rep);
			return gw_reply(r, conn, &rep);
		}
		if (r->admin_listener) {
			struct gw_http_reply rep;
			gw_queues_route(r->g->queues, method, url + 10, r->body.data,
					r->body.len, &rep);
			return gw_reply(r, conn, &rep);
		}
		break;
	case GW_ROUTE_OTHER:
	case GW_ROUTES:
		break;
	}
	return respond_status(r, conn, 404, NULL, "%s: no such route (see "
			      "shmsched-gateway --help for the API)", url);
}

/* Whether url is /v1/nodes/{name}/drain. */
static bool is_drain(const char *url)
{
	size_t n = strlen(url);
	return strncmp(url, "/v1/nodes/", 10) == 0 && n > 16 &&
	       strcmp(url + n - 6, "/drain") == 0;
}

static bool takes_body(const struct request *r, const char *method, const char *url)
{
	if (!is(method, MHD_HTTP_METHOD_POST) && !is(method, MHD_HTTP_METHOD_PUT))
		return false;
	return r->route == GW_ROUTE_PLACEMENTS || r->route == GW_ROUTE_EXTENDER ||
	       r->route == GW_ROUTE_EVICTION ||
	       (r->admin_listener && (r->route == GW_ROUTE_NODES ||
				      r->route == GW_ROUTE_ADMIN || is_drain(url)));
}

static size_t body_limit(const struct request *r)
{
	if (r->small_body)
		return GW_EVICT_BODY_MAX;
	if (r->route == GW_ROUTE_NODES || r->route == GW_ROUTE_ADMIN)
		return ADMIN_BODY_MAX;
	return r->g->cfg.max_body_bytes;
}

/* The connection's deadline record (NULL: none, out of memory). */
static struct cx *cx_of(struct MHD_Connection *conn)
{
	const union MHD_ConnectionInfo *ci = MHD_get_connection_info(
		conn, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
	return ci != NULL ? ci->socket_context : NULL;
}

static void cx_set(struct gateway *g, struct MHD_Connection *conn,
		   enum cx_phase phase)
{
	struct cx *c = cx_of(conn);
	if (c == NULL)
		return;
	pthread_mutex_lock(&g->cx_lock);
	if (c->phase != CX_CUT) {
		c->phase = phase;
		c->since_ns = now_ns();
	}
	pthread_mutex_unlock(&g->cx_lock);
}

/* The identity of the connection's TLS client certificate, verified
 * against --tls-client-ca (libmicrohttpd hands it the trust list): the
 * subject's CN as the user, its O values as the groups, as kube-apiserver
 * reads a client certificate. False: none, or not verified. */
static bool client_certificate(struct MHD_Connection *conn, struct gw_identity *who)
{
	const union MHD_ConnectionInfo *ci = MHD_get_connection_info(
		conn, MHD_CONNECTION_INFO_GNUTLS_SESSION);
	if (ci == NULL || ci->tls_session == NULL)
		return false;
	gnutls_session_t session = (gnutls_session_t)ci->tls_session;
	unsigned status = 0;
	if (gnutls_certificate_verify_peers2(session, &status) != GNUTLS_E_SUCCESS ||
	    status != 0)
		return false;
	unsigned n = 0;
	const gnutls_datum_t *chain = gnutls_certificate_get_peers(session, &n);
	if (chain == NULL || n == 0)
		return false;
	gnutls_x509_crt_t crt;
	if (gnutls_x509_crt_init(&crt) != GNUTLS_E_SUCCESS)
		return false;
	bool ok = false;
	size_t len = sizeof(who->user);
	memset(who, 0, sizeof(*who));
	if (gnutls_x509_crt_import(crt, &chain[0], GNUTLS_X509_FMT_DER) ==
	    GNUTLS_E_SUCCESS &&
	    gnutls_x509_crt_get_dn_by_oid(crt, GNUTLS_OID_X520_COMMON_NAME, 0, 0,
					  who->user, &len) == GNUTLS_E_SUCCESS &&
	    who->user[0] != '\0') {
		ok = true;
		size_t used = 0;
		for (unsigned k = 0; k < 32; k++) {
			char o[GW_USER_MAX];
			size_t olen = sizeof(o);
			if (gnutls_x509_crt_get_dn_by_oid(crt, GNUTLS_OID_X520_ORGANIZATION_NAME,
							  k, 0, o, &olen) != GNUTLS_E_SUCCESS)
				break;
			if (olen == 0 || used + olen + 2 > sizeof(who->groups) ||
			    strchr(o, ',') != NULL)
				continue;
			if (used > 0)
				who->groups[used++] = ',';
			memcpy(who->groups + used, o, olen);
			used += olen;
			who->groups[used] = '\0';
		}
	}
	gnutls_x509_crt_deinit(crt);
	return ok;
}

/* Who the request is, into r->who and r->admin. Returns 0, or the code
 * to refuse with (401, 403) with its message in msg. */
static unsigned authenticate(struct gateway *g, struct MHD_Connection *conn,
			     struct request *r, char *msg, size_t msg_len)
{
	if (r->admin_listener && g->admin_unix) {
		/* The admin socket: the peer's uid, as the kernel says it. */
		const union MHD_ConnectionInfo *ci = MHD_get_connection_info(
			conn, MHD_CONNECTION_INFO_CONNECTION_FD);
		struct ucred cred;
		socklen_t len = sizeof(cred);
		if (ci == NULL || getsockopt(ci->connect_fd, SOL_SOCKET, SO_PEERCRED,
					     &cred, &len) < 0) {
			snprintf(msg, msg_len, "the admin socket's peer: its credentials "
				 "cannot be read");
			return 403;
		}
		bool ok = cred.uid == geteuid();
		for (unsigned k = 0; k < g->cfg.n_admin_uids; k++)
			ok = ok || cred.uid == g->cfg.admin_uids[k];
		if (!ok) {
			snprintf(msg, msg_len, "uid %u may not use the admin socket: "
				 "only the gateway's own uid %u and --admin-uid",
				 (unsigned)cred.uid, (unsigned)geteuid());
			return 403;
		}
		snprintf(r->who.user, sizeof(r->who.user), "unix:uid=%u",
			 (unsigned)cred.uid);
		r->admin = true;
		return 0;
	}
	const char *auth = MHD_lookup_connection_value(conn, MHD_HEADER_KIND,
						       MHD_HTTP_HEADER_AUTHORIZATION);
	if (auth != NULL) {
		/* Credentials offered are checked even where none are needed:
		 * a bad token is 401 (kube: "Unauthorized"). */
		size_t len = 0;
		const char *tok = gw_bearer_token(auth, &len);
		const struct gw_identity *id = tok != NULL
			? gw_tokens_find(g->tokens, tok, len) : NULL;
		if (id == NULL) {
			snprintf(msg, msg_len, "Unauthorized: %s", tok == NULL
				 ? "the Authorization header is not \"Bearer TOKEN\""
				 : "no such token (the gateway's --token-file)");
			return 401;
		}
		r->who = *id;
		r->admin = gw_groups_has(id->groups, g->admin_group);
	} else if (g->tls_ca != NULL && !r->admin_listener &&
		   client_certificate(conn, &r->who)) {
		r->admin = gw_groups_has(r->who.groups, g->admin_group);
	} else if (g->cfg.allow_anonymous && !r->admin_listener) {
		snprintf(r->who.user, sizeof(r->who.user), "%s", GW_ANONYMOUS_USER);
		snprintf(r->who.groups, sizeof(r->who.groups), "%s", GW_ANONYMOUS_GROUP);
	} else if (!r->admin_listener && (r->route == GW_ROUTE_HEALTH ||
					  r->route == GW_ROUTE_VERSION)) {
		/* kube's system:public-info-viewer: health and version need no
		 * credentials (probes, load balancers). */
		snprintf(r->who.user, sizeof(r->who.user), "%s", GW_ANONYMOUS_USER);
		return 0;
	} else {
		snprintf(msg, msg_len, "Unauthorized: no credentials: send "
			 "\"Authorization: Bearer TOKEN\" with a token of the "
			 "gateway's --token-file%s", g->tls_ca != NULL
			 ? ", or a client certificate signed by its --tls-client-ca"
			 : "");
		return 401;
	}
	if (r->admin_listener && !r->admin) {
		snprintf(msg, msg_len, "user \"%s\" may not use the admin listener: "
			 "only tokens of group \"%s\" (--admin-group)", r->who.user,
			 g->admin_group);
		return 403;
	}
	return 0;
}

/* Takes `more` bytes of the bodies' budget for r. False: over it. */
static bool body_reserve(struct request *r, size_t more)
{
	struct gateway *g = r->g;
	/* Relaxed: a count, compared with its bound; nothing is published. */
	size_t now = __atomic_add_fetch(&g->body_bytes, more, __ATOMIC_RELAXED);
	if (now > g->cfg.max_body_bytes_total) {
		__atomic_fetch_sub(&g->body_bytes, more, __ATOMIC_RELAXED);
		return false;
	}
	r->reserved += more;
	return true;
}

static enum MHD_Result refuse_body_budget(struct request *r,
					  struct MHD_Connection *conn, size_t want)
{
	__atomic_fetch_add(&r->g->http.over_budget, 1, __ATOMIC_RELAXED);
	return respond_status(r, conn, 429, NULL, "user %s: a body of %zu bytes "
			      "is over the budget --max-body-bytes-total (%zu bytes "
			      "of request bodies at once, every client together): "
			      "try again shortly", r->who.user, want,
			      r->g->cfg.max_body_bytes_total);
}

static enum MHD_Result handle(void *cls, struct MHD_Connection *conn,
			      const char *url, const char *method,
			      const char *version, const char *upload_data,
			      size_t *upload_data_size, void **req_cls,
			      bool admin_listener)
{
	(void)version;
	struct gateway *g = cls;
	struct request *r = *req_cls;
	if (r == NULL) {
		/* Headers are in: who is it, and what may the body be. */
		r = calloc(1, sizeof(*r));
		if (r == NULL)
			return MHD_NO;
		r->g = g;
		r->admin_listener = admin_listener;
		r->route = route_of(url);
		/* A failure report: the admin listener's (the main one's 404,
		 * as for /v1/queues). */
		if (is(method, MHD_HTTP_METHOD_POST) && is_failure(url))
			r->route = GW_ROUTE_ADMIN;
		/* A lease: the admin listener's, as a failure report. */
		if (is(method, MHD_HTTP_METHOD_PUT) && is_lease(url))
			r->route = GW_ROUTE_ADMIN;
		r->started_ns = now_ns();
		r->wants_body = takes_body(r, method, url);
		r->small_body = r->route == GW_ROUTE_EVICTION || is_drain(url) ||
				(r->route == GW_ROUTE_ADMIN &&
				 (is_failure(url) || is_lease(url) ||
				  is_pool_release(url)));
		*req_cls = r;
		cx_set(g, conn, CX_BODY);
		char msg[512];
		unsigned code = authenticate(g, conn, r, msg, sizeof(msg));
		if (code != 0) {
			if (code == 401)
				__atomic_fetch_add(&g->http.unauthorized, 1,
						   __ATOMIC_RELAXED);
			r->wants_body = false;
			return respond_status(r, conn, code, NULL, "%s", msg);
		}
		const char *cl = MHD_lookup_connection_value(conn, MHD_HEADER_KIND,
							     MHD_HTTP_HEADER_CONTENT_LENGTH);
		if (cl != NULL && r->wants_body) {
			char *end;
			errno = 0;
			unsigned long long n = strtoull(cl, &end, 10);
			if (errno != 0 || *end != '\0' || n > body_limit(r)) {
				__atomic_fetch_add(&g->http.too_large, 1, __ATOMIC_RELAXED);
				return respond_status(r, conn, 413, NULL, "the body is %s "
						      "bytes; at most %zu are taken (%s)",
						      cl, body_limit(r),
						      r->route == GW_ROUTE_NODES
						      ? "one Node" : r->small_body
						      ? "an Eviction, a drain's flags, "
						      "a failure report, a lease or "
						      "a pool release"
						      : "--max-body; send larger "
						      "batches as several requests");
			}
			/* The whole body's room first: a client that never
			 * sends it holds only what it announced. */
			if (!body_reserve(r, (size_t)n)) {
				r->wants_body = false;
				return refuse_body_budget(r, conn, (size_t)n);
			}
		}
		return MHD_YES;
	}
	if (*upload_data_size > 0) {
		size_t n = *upload_data_size;
		*upload_data_size = 0;
		r->body_seen += n;
		__atomic_fetch_add(&g->http.bytes_in, n, __ATOMIC_RELAXED);
		if (now_ns() - r->started_ns >
		    (uint64_t)g->cfg.request_timeout_s * UINT64_C(1000000000)) {
			/* A body trickling in past the deadline: cut. */
			__atomic_fetch_add(&g->http.timed_out, 1, __ATOMIC_RELAXED);
			return MHD_NO;
		}
		if (!r->wants_body || r->too_large || r->over_budget)
			return r->body_seen > 2 * body_limit(r) ? MHD_NO : MHD_YES;
		if (r->body.len + n > body_limit(r)) {
			r->too_large = true;
			body_release(r);
			__atomic_fetch_add(&g->http.too_large, 1, __ATOMIC_RELAXED);
			return MHD_YES;
		}
		if (r->body.len + n > r->reserved &&
		    !body_reserve(r, r->body.len + n - r->reserved)) {
			/* A chunked body (or one longer than announced) past
			 * the budget: the rest is read and dropped. */
			r->over_budget = true;
			body_release(r);
			return MHD_YES;
		}
		json_buf_put(&r->body, upload_data, n);
		return r->body.failed ? MHD_NO : MHD_YES;
	}
	cx_set(g, conn, CX_BUSY);
	if (r->job != NULL) /* resumed: the verdict is in */
		return respond_job(r, conn);
	if (r->too_large)
		return respond_status(r, conn, 413, NULL, "the body passed %zu bytes, "
				      "the most taken", body_limit(r));
	if (r->over_budget)
		return refuse_body_budget(r, conn, r->body_seen);
	return dispatch_route(r, conn, url, method);
}

static enum MHD_Result handle_main(void *cls, struct MHD_Connection *conn,
				   const char *url, const char *method,
				   const char *version, const char *upload_data,
				   size_t *upload_data_size, void **req_cls)
{
	return handle(cls, conn, url, method, version, upload_data,
		      upload_data_size, req_cls, false);
}

static enum MHD_Result handle_admin(void *cls, struct MHD_Connection *conn,
				    const char *url, const char *method,
				    const char *version, const char *upload_data,
				    size_t *upload_data_size, void **req_cls)
{
	return handle(cls, conn, url, method, version, upload_data,
		      upload_data_size, req_cls, true);
}

static void completed(void *cls, struct MHD_Connection *conn, void **req_cls,
		      enum MHD_RequestTerminationCode toe)
{
	struct gateway *g = cls;
	struct request *r = *req_cls;
	if (r == NULL)
		return;
	bool ok = toe == MHD_REQUEST_TERMINATED_COMPLETED_OK;
	/* J4: acquire, partner of the dispatcher's release store: a client
	 * it saw hang up is gone even where the stream ended "completed". */
	bool left = r->job != NULL &&
		    __atomic_load_n(&r->job->client_left, __ATOMIC_ACQUIRE);
	if (!ok || left)
		__atomic_fetch_add(&g->http.abandoned, 1, __ATOMIC_RELAXED);
	if (!ok && !r->counted)
		gw_http_count(&g->http, r->route, 0);
	if (r->job != NULL) {
		/* J4: release, partner of the dispatcher's acquire load. */
		__atomic_store_n(&r->job->abandoned, true, __ATOMIC_RELEASE);
		gw_job_unref(r->job);
		/* Release, partner of gateway_stop()'s acquire load: its
		 * answer is written (or its client gone). */
		__atomic_fetch_sub(&g->open_jobs, 1, __ATOMIC_RELEASE);
	}
	body_release(r);
	free(r);
	*req_cls = NULL;
	/* Keep-alive: the next request's headers have their deadline from
	 * now. */
	if (conn != NULL)
		cx_set(g, conn, CX_HEADERS);
}

/* --- start and stop ------------------------------------------------------- */

void gateway_config_default(struct gateway_config *cfg)
{
	*cfg = (struct gateway_config){
		.listen = "127.0.0.1:8080",
		.max_body_bytes = 32u << 20,
		.max_pods = 1024,
		.max_templates = 4096,
		.max_string_bytes_per_client = GW_STRING_BYTES_DEFAULT,
		.threads = 2,
		.idle_timeout_s = 60,
		.request_timeout_s = 60,
		.header_timeout_s = 10,
		.max_connections = 1024,
		.max_connections_per_ip = 256,
		.max_body_bytes_total = 256u << 20,
		.daemon_grace_ms = 10000,
		.extender_cache = 65536,
		.max_wait_s = GW_WAIT_MAX_DEFAULT_S,
		.explain_max_pods = GW_EXPLAIN_MAX_PODS_DEFAULT,
		.explain_max_bytes = GW_EXPLAIN_MAX_BYTES_DEFAULT,
	};
}

static int parse_listen(const char *spec, struct sockaddr_storage *ss,
			socklen_t *len, char *err, size_t err_len)
{
	char host[256];
	const char *colon = strrchr(spec, ':');
	if (colon == NULL || colon[1] == '\0') {
		snprintf(err, err_len, "\"%s\": expected HOST:PORT", spec);
		return -EINVAL;
	}
	size_t hl = (size_t)(colon - spec);
	if (hl >= sizeof(host)) {
		snprintf(err, err_len, "\"%s\": host too long", spec);
		return -EINVAL;
	}
	memcpy(host, spec, hl);
	host[hl] = '\0';
	if (hl >= 2 && host[0] == '[' && host[hl - 1] == ']') {
		memmove(host, host + 1, hl - 2);
		host[hl - 2] = '\0';
	}
	struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM,
				 .ai_flags = AI_PASSIVE | AI_NUMERICSERV};
	struct addrinfo *res = NULL;
	int rc = getaddrinfo(host[0] ? host : NULL, colon + 1, &hints, &res);
	if (rc != 0 || res == NULL) {
		snprintf(err, err_len, "\"%s\": %s", spec, gai_strerror(rc));
		return -EINVAL;
	}
	memcpy(ss, res->ai_addr, res->ai_addrlen);
	*len = res->ai_addrlen;
	freeaddrinfo(res);
	return 0;
}

/* libmicrohttpd's own messages: its format strings, its arguments. */
static void mhd_log(void *cls, const char *fmt, va_list ap)
	__attribute__((format(printf, 2, 0)));

static void mhd_log(void *cls, const char *fmt, va_list ap)
{
	(void)cls;
	char line[512];
	vsnprintf(line, sizeof(line), fmt, ap);
	size_t n = strlen(line);
	while (n > 0 && line[n - 1] == '\n')
		line[--n] = '\0';
	log_msg(LOG_LEVEL_DEBUG, "gateway: http: %s", line);
}

/* Each connection's deadline record, from accept (STARTED) to close
 * (CLOSED: libmicrohttpd calls it before it closes the socket, so the
 * watcher, which shuts sockets only under cx_lock and only of records
 * still listed, never touches a descriptor reused since). */
static void notify_connection(void *cls, struct MHD_Connection *conn,
			      void **socket_context, enum MHD_ConnectionNotificationCode code)
{
	struct gateway *g = cls;
	if (code == MHD_CONNECTION_NOTIFY_STARTED) {
		const union MHD_ConnectionInfo *ci = MHD_get_connection_info(
			conn, MHD_CONNECTION_INFO_CONNECTION_FD);
		struct cx *c = ci != NULL ? calloc(1, sizeof(*c)) : NULL;
		*socket_context = c;
		if (c == NULL)
			return;
		c->fd = ci->connect_fd;
		c->phase = CX_HEADERS;
		c->since_ns = now_ns();
		pthread_mutex_lock(&g->cx_lock);
		c->next = g->cx_head;
		if (g->cx_head != NULL)
			g->cx_head->prev = c;
		g->cx_head = c;
		pthread_mutex_unlock(&g->cx_lock);
		return;
	}
	struct cx *c = *socket_context;
	if (c == NULL)
		return;
	pthread_mutex_lock(&g->cx_lock);
	if (c->prev != NULL)
		c->prev->next = c->next;
	else
		g->cx_head = c->next;
	if (c->next != NULL)
		c->next->prev = c->prev;
	pthread_mutex_unlock(&g->cx_lock);
	free(c);
	*socket_context = NULL;
}

/* The deadline watcher: four times a second, every connection whose
 * headers (--header-timeout, from accept or from its last answer) or
 * whose body (--request-timeout, from its headers) are not in by their
 * deadline is shut down; libmicrohttpd then reads its end and closes it.
 * libmicrohttpd's own time-out is an idle one, which a client sending a
 * byte now and then never meets (slow-loris). A connection whose request
 * is being answered (suspended, ?wait) has no deadline here. */
static void *deadline_watch(void *arg)
{
	struct gateway *g = arg;
	uint64_t header_ns = (uint64_t)g->cfg.header_timeout_s * UINT64_C(1000000000);
	uint64_t body_ns = (uint64_t)g->cfg.request_timeout_s * UINT64_C(1000000000);
	pthread_mutex_lock(&g->cx_lock);
	while (!g->cx_stop) {
		struct timespec ts;
		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_nsec += 250000000;
		if (ts.tv_nsec >= 1000000000) {
			ts.tv_sec++;
			ts.tv_nsec -= 1000000000;
		}
		pthread_cond_timedwait(&g->cx_cond, &g->cx_lock, &ts);
		uint64_t now = now_ns();
		for (struct cx *c = g->cx_head; c != NULL; c = c->next) {
			uint64_t limit = c->phase == CX_HEADERS ? header_ns
				: c->phase == CX_BODY ? body_ns : 0;
			if (limit == 0 || now - c->since_ns <= limit)
				continue;
			/* Relaxed: tallies. */
			__atomic_fetch_add(c->phase == CX_HEADERS ? &g->http.header_timeouts
					   : &g->http.timed_out, 1, __ATOMIC_RELAXED);
			c->phase = CX_CUT;
			shutdown(c->fd, SHUT_RDWR);
		}
	}
	pthread_mutex_unlock(&g->cx_lock);
	return NULL;
}

/* "unix:/PATH" of FLAG: a listening Unix socket there (a stale socket
 * file replaced), mode 0666, its descriptor and path into *fd and path
 * (sun_path's size). Its backlog is SOMAXCONN, as libmicrohttpd gives a
 * port: a Unix socket whose backlog is full refuses a non-blocking
 * connect at once (EAGAIN, nginx's 502) where TCP would retry the SYN,
 * and nginx opens a burst of upstream connections when its load jumps. Who may connect is decided after: on the admin
 * listener by the peer's uid (SO_PEERCRED, authenticate()), so
 * --admin-uid users can reach it; on the main one by the request's
 * credentials, as on a loopback port any local user reaches. */
static int unix_listener(const char *flag, const char *path, int *fd_out,
			 char *path_out, char *err, size_t err_len)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	if (path[0] != '/' || strlen(path) >= sizeof(sa.sun_path)) {
		snprintf(err, err_len, "%s unix:%s: expected an absolute "
			 "path of at most %zu bytes", flag, path, sizeof(sa.sun_path) - 1);
		return -EINVAL;
	}
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
	struct stat st;
	if (lstat(path, &st) == 0) {
		if (!S_ISSOCK(st.st_mode)) {
			snprintf(err, err_len, "%s unix:%s: exists and is "
				 "not a socket", flag, path);
			return -EEXIST;
		}
		unlink(path);
	}
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0 || bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 ||
	    chmod(path, 0666) < 0 || listen(fd, SOMAXCONN) < 0) {
		int e = errno;
		snprintf(err, err_len, "%s unix:%s: %s", flag, path, strerror(e));
		if (fd >= 0)
			close(fd);
		return -e;
	}
	snprintf(path_out, sizeof(sa.sun_path), "%s", path);
	*fd_out = fd;
	return 0;
}

static struct MHD_Daemon *listen_on(struct gateway *g, const char *spec,
				    bool admin, char *err, size_t err_len)
{
	struct sockaddr_storage ss = {0};
	socklen_t len;
	bool unix_sock = admin ? g->admin_unix : g->main_unix;
	int unix_fd = admin ? g->admin_unix_fd : g->main_unix_fd;
	if (!unix_sock && parse_listen(spec, &ss, &len, err, err_len) < 0)
		return NULL;
	/* poll(), not epoll: with epoll, MHD_quiesce_daemon() races the
	 * polling thread for the listen socket's removal from the epoll set,
	 * and libmicrohttpd 0.9.75 aborts the process on the loser's ENOENT
	 * (seen in stress.gateway's stop). Quiescing a poll daemon only
	 * signals its threads, which needs MHD_USE_ITC. */
	unsigned flags = MHD_USE_POLL_INTERNAL_THREAD | MHD_USE_ITC |
			 MHD_ALLOW_SUSPEND_RESUME | MHD_USE_ERROR_LOG;
	if (ss.ss_family == AF_INET6)
		flags |= MHD_USE_IPv6;
	bool tls = !admin && g->tls_cert != NULL;
	if (tls)
		flags |= MHD_USE_TLS;
	unsigned threads = admin ? 1 : (g->cfg.threads ? g->cfg.threads : 1);
	struct MHD_OptionItem ops[] = {
		unix_sock ? (struct MHD_OptionItem){MHD_OPTION_LISTEN_SOCKET,
						    unix_fd, NULL}
			  : (struct MHD_OptionItem){MHD_OPTION_SOCK_ADDR, 0, &ss},
		{MHD_OPTION_NOTIFY_CONNECTION, (intptr_t)notify_connection, g},
		/* nginx's keep-alive pool comes from one address: the limit
		 * must hold it (examples/nginx: keepalive 64). A Unix socket's
		 * peers have no address: none. */
		{!unix_sock && !admin && g->cfg.max_connections_per_ip > 0
		 ? MHD_OPTION_PER_IP_CONNECTION_LIMIT : MHD_OPTION_CONNECTION_TIMEOUT,
		 !unix_sock && !admin && g->cfg.max_connections_per_ip > 0
		 ? (intptr_t)g->cfg.max_connections_per_ip
		 : (intptr_t)g->cfg.idle_timeout_s, NULL},
		{MHD_OPTION_CONNECTION_LIMIT, admin ? 64 : (intptr_t)g->cfg.max_connections,
		 NULL},
		{MHD_OPTION_CONNECTION_TIMEOUT, (intptr_t)g->cfg.idle_timeout_s, NULL},
		{MHD_OPTION_CONNECTION_MEMORY_LIMIT, HEADER_MEMORY, NULL},
		{tls ? MHD_OPTION_HTTPS_MEM_CERT : MHD_OPTION_CONNECTION_MEMORY_LIMIT,
		 tls ? 0 : HEADER_MEMORY, tls ? g->tls_cert : NULL},
		{tls ? MHD_OPTION_HTTPS_MEM_KEY : MHD_OPTION_CONNECTION_MEMORY_LIMIT,
		 tls ? 0 : HEADER_MEMORY, tls ? g->tls_key : NULL},
		{tls && g->tls_ca != NULL ? MHD_OPTION_HTTPS_MEM_TRUST
		 : MHD_OPTION_CONNECTION_MEMORY_LIMIT,
		 tls && g->tls_ca != NULL ? 0 : HEADER_MEMORY,
		 tls && g->tls_ca != NULL ? g->tls_ca : NULL},
		{MHD_OPTION_NOTIFY_COMPLETED, (intptr_t)completed, g},
		{MHD_OPTION_EXTERNAL_LOGGER, (intptr_t)mhd_log, NULL},
		/* One thread is the polling thread itself: MHD warns of a pool
		 * of one. */
		{threads > 1 ? MHD_OPTION_THREAD_POOL_SIZE : MHD_OPTION_END,
		 (intptr_t)threads, NULL},
		{MHD_OPTION_END, 0, NULL},
	};
	struct MHD_Daemon *mhd = MHD_start_daemon(
		flags, 0, NULL, NULL, admin ? handle_admin : handle_main, g,
		MHD_OPTION_ARRAY, ops, MHD_OPTION_END);
	if (mhd == NULL) {
		int e = errno ? errno : EADDRINUSE;
		snprintf(err, err_len, "cannot listen on %s: %s", spec, strerror(e));
	}
	return mhd;
}

/* A PEM file's text, NUL-terminated, in *out. */
static int read_pem(const char *path, const char *flag, char **out, char *err,
		    size_t err_len)
{
	FILE *f = fopen(path, "re");
	if (f == NULL) {
		int e = errno;
		snprintf(err, err_len, "%s %s: %s", flag, path, strerror(e));
		return -e;
	}
	char *text = malloc(1u << 20);
	size_t n = text != NULL ? fread(text, 1, (1u << 20) - 1, f) : 0;
	bool big = text != NULL && n == (1u << 20) - 1 && fgetc(f) != EOF;
	fclose(f);
	if (text == NULL || big || n == 0) {
		int rc = text == NULL ? -ENOMEM : -EINVAL;
		snprintf(err, err_len, "%s %s: %s", flag, path, text == NULL
			 ? "out of memory" : big ? "over 1 MiB" : "empty");
		free(text);
		return rc;
	}
	text[n] = '\0';
	*out = text;
	return 0;
}

static void free_pems(struct gateway *g)
{
	if (g->tls_key != NULL)
		explicit_bzero(g->tls_key, strlen(g->tls_key));
	free(g->tls_cert);
	free(g->tls_key);
	free(g->tls_ca);
	g->tls_cert = g->tls_key = g->tls_ca = NULL;
}

int gateway_start(const struct gateway_config *cfg, struct gateway **out,
		  char *err, size_t err_len)
{
	*out = NULL;
	struct gateway *g = calloc(1, sizeof(*g));
	if (g == NULL) {
		snprintf(err, err_len, "out of memory");
		return -ENOMEM;
	}
	g->cfg = *cfg;
	g->admin_unix_fd = -1;
	g->main_unix_fd = -1;
	g->main_unix = cfg->listen != NULL && strncmp(cfg->listen, "unix:", 5) == 0;
	g->admin_group = cfg->admin_group != NULL && cfg->admin_group[0] != '\0'
		? cfg->admin_group : GW_ADMIN_GROUP_DEFAULT;
	g->admin_unix = cfg->admin_listen != NULL &&
			strncmp(cfg->admin_listen, "unix:", 5) == 0;
	/* TLS: the PEM files, read now (libmicrohttpd takes text). */
	int rrc = 0;
	if ((cfg->tls_cert != NULL) != (cfg->tls_key != NULL) ||
	    (cfg->tls_client_ca != NULL && cfg->tls_cert == NULL)) {
		snprintf(err, err_len, "--tls-cert and --tls-key go together, and "
			 "--tls-client-ca needs them");
		free(g);
		return -EINVAL;
	}
	if (cfg->tls_cert != NULL &&
	    ((rrc = read_pem(cfg->tls_cert, "--tls-cert", &g->tls_cert, err, err_len)) < 0 ||
	     (rrc = read_pem(cfg->tls_key, "--tls-key", &g->tls_key, err, err_len)) < 0 ||
	     (cfg->tls_client_ca != NULL &&
	      (rrc = read_pem(cfg->tls_client_ca, "--tls-client-ca", &g->tls_ca, err,
			      err_len)) < 0))) {
		free_pems(g);
		free(g);
		return rrc;
	}
	/* Authentication, before anything listens. */
	if (cfg->token_file != NULL) {
		char warn[512];
		int trc = gw_tokens_load(cfg->token_file, &g->tokens, warn, sizeof(warn),
					 err, err_len);
		if (trc < 0) {
			free_pems(g);
			free(g);
			return trc;
		}
		if (warn[0] != '\0')
			log_msg(LOG_LEVEL_WARN, "gateway: %s", warn);
		log_msg(LOG_LEVEL_INFO, "gateway: %zu bearer tokens from %s; admin "
			"group \"%s\"", gw_tokens_count(g->tokens), cfg->token_file,
			g->admin_group);
	} else if (!cfg->allow_anonymous && g->tls_ca == NULL) {
		free_pems(g);
		snprintf(err, err_len, "no authentication configured: give "
			 "--token-file FILE (bearer tokens, kube's static token file "
			 "format), or --allow-anonymous to let every local user place, "
			 "read and release pods as \"%s\"", GW_ANONYMOUS_USER);
		free(g);
		return -EINVAL;
	}
	if (cfg->admin_listen != NULL && !g->admin_unix && g->tokens == NULL) {
		free_pems(g);
		snprintf(err, err_len, "--admin-listen %s: TCP admin routes need "
			 "--token-file (tokens of group \"%s\" are let in); or listen "
			 "on a Unix socket: --admin-listen unix:/PATH", cfg->admin_listen,
			 g->admin_group);
		free(g);
		return -EINVAL;
	}
	if (g->main_unix && g->admin_unix &&
	    strcmp(cfg->listen + 5, cfg->admin_listen + 5) == 0) {
		free_pems(g);
		gw_tokens_free(g->tokens);
		snprintf(err, err_len, "--listen %s and --admin-listen %s: the same "
			 "socket; expected two paths", cfg->listen, cfg->admin_listen);
		free(g);
		return -EINVAL;
	}
	if (cfg->policy_file != NULL) {
		char perr[1024];
		int prc = policy_load_file(cfg->policy_file, &g->policy, perr,
					   sizeof(perr));
		if (prc < 0) {
			snprintf(err, err_len, "--policy %s: %s", cfg->policy_file, perr);
			gw_tokens_free(g->tokens);
			free_pems(g);
			free(g);
			return prc;
		}
		log_msg(LOG_LEVEL_INFO, "gateway: policy %s: %u rules; users no rule "
			"matches may place no pod", cfg->policy_file,
			policy_rules(g->policy));
	}
	if (cfg->allow_anonymous)
		log_msg(LOG_LEVEL_WARN, "gateway: --allow-anonymous: requests without "
			"credentials are served as \"%s\": ANY LOCAL USER (any process "
			"that reaches %s) MAY PLACE, READ AND RELEASE the pods of every "
			"other anonymous client", GW_ANONYMOUS_USER, cfg->listen);
	pthread_mutex_init(&g->cx_lock, NULL);
	pthread_cond_init(&g->cx_cond, NULL);
	pthread_mutex_init(&g->admin_lock, NULL);
	if (cfg->admin_socket_path != NULL)
		snprintf(g->admin_socket, sizeof(g->admin_socket), "%s",
			 cfg->admin_socket_path);
	else if (cfg->socket_path != NULL)
		snprintf(g->admin_socket, sizeof(g->admin_socket), "%s.admin",
			 cfg->socket_path);
	else
		snprintf(g->admin_socket, sizeof(g->admin_socket), "%s.admin",
			 SHMSCHED_DEFAULT_SOCKET);
	g->extender = gw_extender_create(cfg->extender_cache);
	if (g->extender != NULL && (gw_drains_create(g->admin_socket, &g->drains) < 0 ||
				    gw_queues_create(g->admin_socket, &g->queues) < 0 ||
				    gw_failures_create(g->admin_socket, &g->failures) < 0 ||
				    gw_pools_create(g->admin_socket, &g->pools) < 0 ||
				    gw_webhooks_create(g->admin_socket, &g->webhooks) < 0)) {
		gw_extender_destroy(g->extender);
		gw_drains_free(g->drains);
		gw_queues_free(g->queues);
		gw_failures_free(g->failures);
		gw_pools_free(g->pools);
		g->extender = NULL;
		g->drains = NULL;
		g->queues = NULL;
		g->failures = NULL;
		g->pools = NULL;
	}
	if (g->extender == NULL) {
		snprintf(err, err_len, "out of memory");
		policy_free(g->policy);
		gw_tokens_free(g->tokens);
		free_pems(g);
		free(g);
		return -ENOMEM;
	}
	int rc = gw_dispatch_start(cfg, &g->dispatch, err, err_len);
	if (rc < 0)
		goto fail_dispatch;
	if (g->main_unix &&
	    (rc = unix_listener("--listen", cfg->listen + 5, &g->main_unix_fd,
				g->main_unix_path, err, err_len)) < 0)
		goto fail_listen;
	errno = 0;
	g->mhd = listen_on(g, cfg->listen, false, err, err_len);
	if (g->mhd == NULL) {
		rc = -EADDRINUSE;
		if (g->main_unix_fd >= 0) {
			close(g->main_unix_fd);
			unlink(g->main_unix_path);
		}
		goto fail_listen;
	}
	if (cfg->admin_listen != NULL) {
		if (g->admin_unix &&
		    (rc = unix_listener("--admin-listen", cfg->admin_listen + 5,
					&g->admin_unix_fd, g->admin_unix_path,
					err, err_len)) < 0)
			goto fail_admin;
		errno = 0;
		g->admin_mhd = listen_on(g, cfg->admin_listen, true, err, err_len);
		if (g->admin_mhd == NULL) {
			rc = -EADDRINUSE;
			goto fail_admin;
		}
	}
	rc = -pthread_create(&g->watcher, NULL, deadline_watch, g);
	if (rc < 0) {
		snprintf(err, err_len, "cannot start a thread: %s", strerror(-rc));
		if (g->admin_mhd != NULL)
			MHD_stop_daemon(g->admin_mhd);
		goto fail_admin;
	}
	g->watcher_started = true;
	*out = g;
	return 0;

fail_admin:
	if (g->admin_unix_fd >= 0 && g->admin_mhd == NULL) {
		close(g->admin_unix_fd);
		unlink(g->admin_unix_path);
	}
	MHD_stop_daemon(g->mhd); /* closes a Unix listener's socket too */
	if (g->main_unix)
		unlink(g->main_unix_path);
fail_listen:
	gw_dispatch_stop(g->dispatch);
	gw_dispatch_free(g->dispatch);
fail_dispatch:
	gw_drains_free(g->drains);
	gw_queues_free(g->queues);
	gw_failures_free(g->failures);
	gw_pools_free(g->pools);
	gw_webhooks_free(g->webhooks);
	gw_extender_destroy(g->extender);
	pthread_mutex_destroy(&g->admin_lock);
	pthread_mutex_destroy(&g->cx_lock);
	pthread_cond_destroy(&g->cx_cond);
	gw_tokens_free(g->tokens);
	policy_free(g->policy);
	free_pems(g);
	free(g);
	return rc;
}

static unsigned port_of(struct MHD_Daemon *mhd)
{
	if (mhd == NULL)
		return 0;
	const union MHD_DaemonInfo *info = MHD_get_daemon_info(mhd,
							       MHD_DAEMON_INFO_BIND_PORT);
	return info ? info->port : 0;
}

unsigned gateway_port(const struct gateway *g)
{
	return port_of(g->mhd);
}

unsigned gateway_admin_port(const struct gateway *g)
{
	return port_of(g->admin_mhd);
}

bool gateway_ready(const struct gateway *g)
{
	return stat_read(&gw_dispatch_stats(g->dispatch)->connected) != 0;
}

void gateway_stop(struct gateway *g)
{
	if (g == NULL)
		return;
	/* No new connections; the dispatcher answers every job (waking every
	 * suspended connection: MHD may not stop with one suspended). */
	/* Quiescing hands the listening sockets back to us. Shut at once, so
	 * connections are refused (a proxy tries its next upstream); closed
	 * only after MHD_stop_daemon(), as libmicrohttpd asks, since its
	 * threads may still hold the descriptor. */
	MHD_socket fd = MHD_quiesce_daemon(g->mhd), admin_fd = MHD_INVALID_SOCKET;
	if (fd != MHD_INVALID_SOCKET)
		shutdown(fd, SHUT_RDWR);
	if (g->admin_mhd != NULL &&
	    (admin_fd = MHD_quiesce_daemon(g->admin_mhd)) != MHD_INVALID_SOCKET)
		shutdown(admin_fd, SHUT_RDWR);
	gw_dispatch_stop(g->dispatch);
	gw_drains_stop(g->drains); /* each drain Cancelled, its thread joined */
	gw_webhooks_stop(g->webhooks); /* each registration dropped, joined */
	/* Resumed is not answered: MHD writes the answer after the handler
	 * queues it, and MHD_stop_daemon() would reset a connection whose
	 * answer is still unwritten (a client waiting with ?wait saw a reset
	 * instead of its "gateway is stopping" answer). So wait, 2 s at
	 * most, for every job's request to complete. */
	for (int i = 0; i < 200 && (__atomic_load_n(&g->suspended, __ATOMIC_ACQUIRE) > 0 ||
				    __atomic_load_n(&g->open_jobs, __ATOMIC_ACQUIRE) > 0); i++) {
		struct timespec ts = {0, 10000000};
		nanosleep(&ts, NULL);
	}
	MHD_stop_daemon(g->mhd);
	if (g->admin_mhd != NULL)
		MHD_stop_daemon(g->admin_mhd);
	if (fd != MHD_INVALID_SOCKET)
		close(fd);
	if (admin_fd != MHD_INVALID_SOCKET)
		close(admin_fd);
	if (g->admin_unix)
		unlink(g->admin_unix_path);
	if (g->main_unix)
		unlink(g->main_unix_path);
	if (g->watcher_started) {
		pthread_mutex_lock(&g->cx_lock);
		g->cx_stop = true;
		pthread_cond_signal(&g->cx_cond);
		pthread_mutex_unlock(&g->cx_lock);
		pthread_join(g->watcher, NULL);
	}
	pthread_mutex_destroy(&g->cx_lock);
	pthread_cond_destroy(&g->cx_cond);
	gw_tokens_free(g->tokens);
	policy_free(g->policy);
	free_pems(g);
	/* Only now: until MHD stopped, its threads read the dispatcher's
	 * stats and observer (/healthz, /metrics, /v1/nodes) and submit. */
	gw_dispatch_free(g->dispatch);
	if (g->admin != NULL)
		shmsched_disconnect(g->admin);
	gw_extender_destroy(g->extender);
	gw_drains_free(g->drains);
	gw_queues_free(g->queues);
	gw_failures_free(g->failures);
	gw_pools_free(g->pools);
	gw_webhooks_free(g->webhooks);
	pthread_mutex_destroy(&g->admin_lock);
	free(g);
}
