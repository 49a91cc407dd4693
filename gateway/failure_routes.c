/* POST /v1/placements/{id}/failure on the admin listener (issue 38): a
 * placed pod's failure reported to the daemon, as shmsched_report_failure
 * (include/shmsched/client.h) reports it, so that a supervisor that
 * speaks HTTP (a kubelet-side hook, a CI runner) feeds the pool
 * quarantine (daemon/quarantine_internal.h) without linking the client
 * library. The main listener answers 404 (http.c routes only the admin
 * listener's POSTs here), as it does for /v1/queues.
 *
 * The body is decoded by gateway/failure_decode.h (fuzzed as
 * fuzz_failure_decode; at most GW_FAILURE_BODY_MAX bytes, http.c's 413
 * past that from Content-Length): {"reason":TEXT,"exitCode":N}, both
 * optional. Answers:
 *   202  counted: {"kind":"PlacementFailure",...,"verdict":V,"message":M}
 *        with V one of Counted, Tripped (this report quarantined the
 *        pod's pool for its template), Held (the pool was quarantined
 *        already), Capped (it would have, over the 20 % cap), Untracked
 *        (the daemon's table is full), Unpooled (the node has no pool
 *        label): the daemon keeps the report; nothing is undone.
 *   400  the body, or the daemon's EINVAL
 *   404  no such placement (never made, released already), or an id that
 *        is not one (not 1..UINT64_MAX in decimal)
 *   409  its node was removed meanwhile (the daemon's ESTALE)
 *   501  the daemon keeps no quarantine
 *   503  the daemon is away
 *
 * The daemon call runs on a connection of this module's own (struct
 * gw_admin_conn, admin_conn.c: one report at a time, made again once when
 * the daemon restarted since).
 */
#include "gateway/gateway_internal.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gateway/failure_decode.h"

/* http.c bounds the body as an Eviction's (its small_body). */
_Static_assert(GW_FAILURE_BODY_MAX == GW_EVICT_BODY_MAX,
	       "the failure body's bound is http.c's small body");

struct gw_failures {
	struct gw_admin_conn conn;
};

int gw_failures_create(const char *admin_socket, struct gw_failures **out)
{
	struct gw_failures *m = calloc(1, sizeof(*m));
	if (m == NULL)
		return -ENOMEM;
	gw_admin_conn_init(&m->conn, admin_socket, "shmsched-gateway-failure");
	*out = m;
	return 0;
}

void gw_failures_free(struct gw_failures *m)
{
	if (m == NULL)
		return;
	gw_admin_conn_fini(&m->conn);
	free(m);
}

/* shmsched_report_failure's arguments, through gw_admin_conn_call. */
struct report_call {
	uint64_t id;
	const char *reason; /* NULL: none */
};

static int report_call(struct shmsched_client *c, void *arg, char *err,
		       size_t err_len)
{
	const struct report_call *a = arg;
	return shmsched_report_failure(c, a->id, a->reason, err, err_len);
}

static const char *const verdict_names[] = {
	"Counted", "Tripped", "Held", "Capped", "Untracked", "Unpooled"};
static const char *const verdict_says[] = {
	"counted; nothing changed",
	"counted; this report quarantined the pod's pool for its template",
	"counted; the pod's pool was quarantined for its template already",
	("counted; it would have quarantined the pod's pool, but over 20 % of "
	 "nodes would be"),
	"not counted: the daemon's table of pools is full of quarantined ones",
	("not counted: the pod's node has no pool label (shmschedd "
	 "--pool-label)")};

void gw_failure_route(struct gw_failures *m, const char *id_text, size_t id_len,
		      const char *body, size_t len, struct gw_http_reply *rep)
{
	*rep = (struct gw_http_reply){0};
	char err[1024], msg[1200];
	uint64_t id;
	if (!gw_failure_id(id_text, id_len, &id)) {
		snprintf(msg, sizeof(msg), "placements \"%.*s\" not found (expected a "
			 "placement id: 1..%" PRIu64 " in decimal, from its PLACED "
			 "answer)", (int)(id_len < 64 ? id_len : 64), id_text,
			 UINT64_MAX);
		gw_reply_status(rep, 404, "NotFound", msg);
		return;
	}
	struct gw_failure_req req;
	if (gw_failure_decode(body, len, &req, err, sizeof(err)) < 0) {
		gw_reply_status(rep, 400, "BadRequest", err);
		return;
	}
	bool away;
	struct report_call call = {id, req.reason[0] != '\0' ? req.reason : NULL};
	int rc = gw_admin_conn_call(&m->conn, report_call, &call, &away, err,
				    sizeof(err));
	if (rc >= 0 && (size_t)rc < sizeof(verdict_names) / sizeof(verdict_names[0])) {
		rep->code = 202;
		rep->content_type = "application/json";
		json_buf_printf(&rep->body, "{\"kind\":\"PlacementFailure\","
				"\"apiVersion\":\"shmsched.io/v1alpha1\",\"placement\":%"
				PRIu64 ",\"verdict\":\"%s\",\"message\":", id,
				verdict_names[rc]);
		json_buf_string(&rep->body, verdict_says[rc]);
		json_buf_puts(&rep->body, ",\"reason\":");
		json_buf_string(&rep->body, req.reason);
		json_buf_puts(&rep->body, "}\n");
		return;
	}
	const char *says = gw_daemon_says(err);
	if (rc >= 0) {
		snprintf(msg, sizeof(msg), "placement %" PRIu64 ": the daemon's "
			 "verdict %d is not one this gateway knows", id, rc);
		gw_reply_status(rep, 500, "InternalError", msg);
	} else if (!away && rc == -ENOENT) {
		snprintf(msg, sizeof(msg), "placements \"%" PRIu64 "\" not found: %s",
			 id, says);
		gw_reply_status(rep, 404, "NotFound", msg);
	} else if (!away && rc == -ESTALE) {
		snprintf(msg, sizeof(msg), "placement %" PRIu64 ": %s", id, says);
		gw_reply_status(rep, 409, "Conflict", msg);
	} else {
		snprintf(msg, sizeof(msg), "placement %" PRIu64, id);
		gw_reply_admin_refusal(rep, rc, away, err, msg);
	}
}
