/* Kueue's queues on the gateway (issues 37 and 38): the admin listener's
 * /v1/queues routes, and the daemon's own figures on /metrics, both
 * through the daemon's admin socket (OP_QUEUE, shmsched_queue in
 * include/shmsched/client.h), on a connection of this module's own.
 *
 *   POST   /v1/queues               Kueue JSON, as `shmsched queue apply -f`
 *                                   takes it: 200 with what changed and
 *                                   the ClusterQueues in force, or the
 *                                   daemon's refusal (400 with its
 *                                   "request body:LINE:" message, 404, 501)
 *   DELETE /v1/queues/{kind}/{name} one object (a LocalQueue's name is
 *                                   namespace/name: the rest of the path)
 *   GET    /v1/queues               the ClusterQueues in force (text)
 *
 * The body's bound is the admin listener's (http.c's ADMIN_BODY_MAX, one
 * control message); nothing is decoded here: the daemon's strict decoder
 * (ingest/kueue_json.h, fuzzed as fuzz_kueue_json) reads the objects.
 *
 * /metrics appends the daemon's text (OP_QUEUE_METRICS: Kueue's quota
 * gauges and workload counts, the node lifecycle's shmsched_node_*; past
 * one control answer it comes in a sealed memfd, at most
 * OP_QUEUE_METRICS_MAX_BYTES, which shmsched_queue checks and reads),
 * asked at most once per METRICS_CACHE_NS whatever the scrape rate: a
 * scrape within that reuses the last answer, so scrapes never queue on
 * the daemon's control thread. A failure is cached alike and written as
 * one comment line saying why (e.g. the gateway's uid is not an admin of
 * the daemon), so the rest of /metrics is served as before.
 *
 * Threads: the connection (gw_admin_conn, admin_conn.c) and the cache
 * are under the connection's `lock` (MHD's threads call in at once); a
 * change holds it while the daemon decodes (seconds at most), and a
 * scrape meanwhile waits for it.
 */
#include "gateway/gateway_internal.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define METRICS_CACHE_NS UINT64_C(1000000000)

struct gw_queues {
	struct gw_admin_conn conn; /* its lock guards the cache below too */
	char *text;          /* the last metrics answer, or the comment line */
	size_t text_len;
	uint64_t asked_ns;   /* 0: never */
};

int gw_queues_create(const char *admin_socket, struct gw_queues **out)
{
	struct gw_queues *m = calloc(1, sizeof(*m));
	if (m == NULL)
		return -ENOMEM;
	gw_admin_conn_init(&m->conn, admin_socket, "shmsched-gateway-queues");
	*out = m;
	return 0;
}

void gw_queues_free(struct gw_queues *m)
{
	if (m == NULL)
		return;
	gw_admin_conn_fini(&m->conn);
	free(m->text);
	free(m);
}

/* shmsched_queue's arguments, through gw_admin_conn_call_locked. */
struct queue_call {
	int action;
	const char *name, *body;
	size_t len;
	char **text;
};

static int queue_call(struct shmsched_client *c, void *arg, char *err,
		      size_t err_len)
{
	struct queue_call *a = arg;
	return shmsched_queue(c, a->action, a->name, a->body, a->len, a->text, err,
			      err_len);
}

/* One OP_QUEUE under m->conn.lock, connecting (again) as needed: one more
 * try on a new connection when the daemon restarted since. */
static int call(struct gw_queues *m, int action, const char *name,
		const char *body, size_t len, char **text, char *err, size_t err_len)
{
	struct queue_call a = {action, name, body, len, text};
	return gw_admin_conn_call_locked(&m->conn, queue_call, &a, NULL, err,
					 err_len);
}

void gw_queues_metrics(struct gw_queues *m, struct json_buf *b)
{
	if (m == NULL)
		return;
	pthread_mutex_lock(&m->conn.lock);
	uint64_t now = now_ns();
	if (m->asked_ns == 0 || now - m->asked_ns >= METRICS_CACHE_NS) {
		char err[1024], *text = NULL;
		int rc = call(m, SHMSCHED_QUEUE_METRICS, NULL, NULL, 0, &text, err,
			      sizeof(err));
		free(m->text);
		m->text = NULL;
		m->text_len = 0;
		if (rc == 0) {
			m->text = text;
			m->text_len = strlen(text);
		} else {
			free(text);
			char line[1200];
			int n = snprintf(line, sizeof(line), "# shmsched-gateway: the "
					 "daemon's quota and node lifecycle metrics are "
					 "not known: %s\n", gw_daemon_says(err));
			/* One comment line: a newline of the message is cut. */
			if (n > 0) {
				for (int i = 0; i < n - 1 && i < (int)sizeof(line) - 1; i++)
					if (line[i] == '\n')
						line[i] = ' ';
				m->text = strdup(line);
				m->text_len = m->text != NULL ? strlen(m->text) : 0;
			}
		}
		m->asked_ns = now;
	}
	if (m->text != NULL)
		json_buf_put(b, m->text, m->text_len);
	pthread_mutex_unlock(&m->conn.lock);
}

static void reply_status(struct gw_http_reply *rep, unsigned code, bool ok,
			 const char *reason, const char *msg)
{
	rep->code = code;
	rep->content_type = "application/json";
	json_buf_printf(&rep->body, "{\"kind\":\"Status\",\"apiVersion\":\"v1\","
			"\"metadata\":{},\"status\":\"%s\",\"message\":",
			ok ? "Success" : "Failure");
	json_buf_string(&rep->body, msg);
	if (reason != NULL)
		json_buf_printf(&rep->body, ",\"reason\":\"%s\"", reason);
	json_buf_printf(&rep->body, ",\"code\":%u}\n", code);
}

/* The daemon's refusal as HTTP. */
static void refused(struct gw_http_reply *rep, int rc, const char *err)
{
	unsigned code;
	const char *reason;
	switch (rc) {
	case -EINVAL:
		code = 400, reason = "BadRequest";
		break;
	case -ENOENT:
		code = 404, reason = "NotFound";
		break;
	case -ENOTSUP:
		code = 501, reason = "NotImplemented";
		break;
	case -EMSGSIZE:
		code = 413, reason = "RequestEntityTooLarge";
		break;
	case -EPERM:
	case -EACCES:
		code = 403, reason = "Forbidden";
		break;
	case -ECONNRESET:
	case -ECONNREFUSED:
	case -ETIMEDOUT:
	case -EPROTO:
		code = 503, reason = "ServiceUnavailable";
		break;
	default:
		code = rc == -ENOTSOCK || rc == -ENOTDIR ? 503 : 500;
		reason = code == 503 ? "ServiceUnavailable" : "InternalError";
		break;
	}
	reply_status(rep, code, false, reason, gw_daemon_says(err));
}

void gw_queues_route(struct gw_queues *m, const char *method, const char *rest,
		     const char *body, size_t len, struct gw_http_reply *rep)
{
	*rep = (struct gw_http_reply){0};
	bool get = strcmp(method, "GET") == 0 || strcmp(method, "HEAD") == 0;
	bool post = strcmp(method, "POST") == 0, del = strcmp(method, "DELETE") == 0;
	char err[1024], *text = NULL, kind[32];
	const char *name = NULL;
	int action;
	if (rest[0] == '\0' && (get || post)) {
		action = get ? SHMSCHED_QUEUE_LIST : SHMSCHED_QUEUE_APPLY;
	} else if (rest[0] == '/' && del) {
		/* /{kind}/{name}: the name is the rest (a LocalQueue's
		 * namespace/name). */
		const char *slash = strchr(rest + 1, '/');
		size_t kl = slash != NULL ? (size_t)(slash - rest - 1) : 0;
		if (slash == NULL || kl == 0 || kl >= sizeof(kind) || slash[1] == '\0') {
			reply_status(rep, 404, false, "NotFound", "DELETE /v1/queues/"
				     "{kind}/{name}: expected a kind (ResourceFlavor, "
				     "Cohort, ClusterQueue, LocalQueue) and a name "
				     "(a LocalQueue's namespace/name)");
			return;
		}
		memcpy(kind, rest + 1, kl);
		kind[kl] = '\0';
		name = kind;
		body = slash + 1;
		len = strlen(body);
		action = SHMSCHED_QUEUE_DELETE;
	} else {
		rep->code = 405;
		reply_status(rep, 405, false, "MethodNotAllowed", rest[0] == '\0'
			     ? "/v1/queues: GET lists, POST applies Kueue objects"
			     : "/v1/queues/{kind}/{name}: DELETE only");
		return;
	}
	if (action == SHMSCHED_QUEUE_APPLY) {
		name = "request body";
		if (body == NULL)
			body = "";
	}
	pthread_mutex_lock(&m->conn.lock);
	int rc = call(m, action, name, body, len, &text, err, sizeof(err));
	pthread_mutex_unlock(&m->conn.lock);
	if (rc < 0) {
		refused(rep, rc, err);
	} else if (get) {
		rep->code = 200;
		rep->content_type = "text/plain; charset=utf-8";
		json_buf_puts(&rep->body, text);
	} else {
		reply_status(rep, 200, true, NULL, text);
	}
	free(text);
}
