/* The admin listener's pool quarantine routes (issue 38), as `shmsched
 * pool list|release` (cli/pool.c) reach the daemon through
 * shmsched_pools (include/shmsched/client.h), so that an operator who
 * speaks HTTP lists and lifts quarantines without the CLI:
 *   GET  /v1/pools                  200 {"kind":"PoolQuarantineList",
 *        "quarantined":N,"lines":[TEXT,...]}: the daemon's listing, one
 *        line per (pool, template) pair tracked, as `shmsched pool list`
 *        prints it; the gateway parses nothing of it (a JSON array of
 *        the lines, each as the daemon wrote it)
 *   POST /v1/pools/{pool}/release   200 {"kind":"PoolRelease",
 *        "pool":P,"template":T|null,"released":N,"quarantined":M}
 *        body empty or {"template":"namespace/name"}
 *        (gateway/pool_decode.h, fuzzed as fuzz_pool_decode)
 * Refused: 400 a bad body or pool (or the daemon's EINVAL), 501 the daemon
 * keeps no quarantine, 503 the daemon away. The main listener answers
 * 404 (http.c routes only the admin listener's requests here).
 *
 * The daemon call runs on a connection of this module's own (struct
 * gw_admin_conn, admin_conn.c: one call at a time, made again once when
 * the daemon restarted since), as failure_routes.c's does.
 */
#include "gateway/gateway_internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* http.c bounds the body as an Eviction's (its small_body). */
_Static_assert(GW_POOL_BODY_MAX == GW_EVICT_BODY_MAX,
	       "the pool body's bound is http.c's small body");

struct gw_pools {
	struct gw_admin_conn conn;
};

int gw_pools_create(const char *admin_socket, struct gw_pools **out)
{
	struct gw_pools *m = calloc(1, sizeof(*m));
	if (m == NULL)
		return -ENOMEM;
	gw_admin_conn_init(&m->conn, admin_socket, "shmsched-gateway-pools");
	*out = m;
	return 0;
}

void gw_pools_free(struct gw_pools *m)
{
	if (m == NULL)
		return;
	gw_admin_conn_fini(&m->conn);
	free(m);
}

/* shmsched_pools' arguments, through gw_admin_conn_call. */
struct pools_call {
	const char *pool, *tmpl;
	unsigned *held, *released;
	char **text;
};

static int pools_call(struct shmsched_client *c, void *arg, char *err,
		      size_t err_len)
{
	struct pools_call *a = arg;
	if (a->text != NULL) { /* a try before, on a connection since lost */
		free(*a->text);
		*a->text = NULL;
	}
	return shmsched_pools(c, a->pool, a->tmpl, a->held, a->released, a->text,
			      err, err_len);
}

/* shmsched_pools on this module's connection; *away: no connection. */
static int call_pools(struct gw_pools *m, const char *pool, const char *tmpl,
		      unsigned *held, unsigned *released, char **text,
		      bool *away, char *err, size_t err_len)
{
	struct pools_call a = {pool, tmpl, held, released, text};
	return gw_admin_conn_call(&m->conn, pools_call, &a, away, err, err_len);
}

void gw_pools_list(struct gw_pools *m, struct gw_http_reply *rep)
{
	*rep = (struct gw_http_reply){0};
	char err[1024];
	unsigned held = 0;
	char *text = NULL;
	bool away;
	int rc = call_pools(m, NULL, NULL, &held, NULL, &text, &away, err,
			    sizeof(err));
	if (rc < 0) {
		free(text);
		gw_reply_admin_refusal(rep, rc, away, err, "pools");
		return;
	}
	rep->code = 200;
	rep->content_type = "application/json";
	json_buf_printf(&rep->body, "{\"kind\":\"PoolQuarantineList\","
			"\"apiVersion\":\"shmsched.io/v1alpha1\",\"quarantined\":%u,"
			"\"lines\":[", held);
	const char *p = text != NULL ? text : "";
	bool first = true;
	while (*p != '\0') {
		const char *nl = strchr(p, '\n');
		size_t n = nl != NULL ? (size_t)(nl - p) : strlen(p);
		if (n > 0) {
			if (!first)
				json_buf_puts(&rep->body, ",");
			json_buf_string_n(&rep->body, p, n);
			first = false;
		}
		p += n + (nl != NULL);
	}
	json_buf_puts(&rep->body, "]}\n");
	free(text);
}

void gw_pools_release(struct gw_pools *m, const char *pool_text, size_t pool_len,
		      const char *body, size_t len, struct gw_http_reply *rep)
{
	*rep = (struct gw_http_reply){0};
	char err[1024], msg[1200];
	if (!gw_pool_name_ok(pool_text, pool_len)) {
		snprintf(msg, sizeof(msg), "pool \"%.*s\": expected a pool (the value "
			 "of the daemon's --pool-label: 1..%u printable bytes)",
			 (int)(pool_len < 64 ? pool_len : 64), pool_text,
			 GW_POOL_NAME_MAX);
		gw_reply_status(rep, 400, "BadRequest", msg);
		return;
	}
	char pool[GW_POOL_NAME_MAX + 1];
	memcpy(pool, pool_text, pool_len);
	pool[pool_len] = '\0';
	struct gw_pool_release_req req;
	if (gw_pool_release_decode(body, len, &req, err, sizeof(err)) < 0) {
		gw_reply_status(rep, 400, "BadRequest", err);
		return;
	}
	unsigned held = 0, released = 0;
	bool away;
	int rc = call_pools(m, pool, req.template_[0] != '\0' ? req.template_ : NULL,
			    &held, &released, NULL, &away, err, sizeof(err));
	if (rc < 0) {
		gw_reply_admin_refusal(rep, rc, away, err, "pools");
		return;
	}
	rep->code = 200;
	rep->content_type = "application/json";
	json_buf_puts(&rep->body, "{\"kind\":\"PoolRelease\",\"apiVersion\":"
		      "\"shmsched.io/v1alpha1\",\"pool\":");
	json_buf_string(&rep->body, pool);
	json_buf_puts(&rep->body, ",\"template\":");
	if (req.template_[0] != '\0')
		json_buf_string(&rep->body, req.template_);
	else
		json_buf_puts(&rep->body, "null");
	json_buf_printf(&rep->body, ",\"released\":%u,\"quarantined\":%u}\n",
			released, held);
}
