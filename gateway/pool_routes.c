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
 * The daemon call runs on a connection of this module's own, under `lock`
 * (MHD's threads call in at once; each is one short request), made again
 * once when the daemon restarted since, as failure_routes.c does.
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
	char admin_socket[4096];
	pthread_mutex_t lock;
	struct shmsched_client *c;
};

int gw_pools_create(const char *admin_socket, struct gw_pools **out)
{
	struct gw_pools *m = calloc(1, sizeof(*m));
	if (m == NULL)
		return -ENOMEM;
	snprintf(m->admin_socket, sizeof(m->admin_socket), "%s", admin_socket);
	pthread_mutex_init(&m->lock, NULL);
	*out = m;
	return 0;
}

void gw_pools_free(struct gw_pools *m)
{
	if (m == NULL)
		return;
	if (m->c != NULL)
		shmsched_disconnect(m->c);
	pthread_mutex_destroy(&m->lock);
	free(m);
}


/* shmsched_pools on this module's connection; *away: no connection. */
static int call_pools(struct gw_pools *m, const char *pool, const char *tmpl,
		      unsigned *held, unsigned *released, char **text,
		      bool *away, char *err, size_t err_len)
{
	int rc = 0;
	*away = false;
	err[0] = '\0';
	pthread_mutex_lock(&m->lock);
	for (int attempt = 0; attempt < 2; attempt++) {
		if (m->c == NULL &&
		    (rc = shmsched_connect_named(m->admin_socket,
						 "shmsched-gateway-pools", &m->c,
						 err, err_len)) < 0) {
			*away = true;
			break;
		}
		rc = shmsched_pools(m->c, pool, tmpl, held, released, text, err,
				    err_len);
		if (rc != -ECONNRESET)
			break;
		/* The daemon restarted since: one more try on a new connection. */
		shmsched_disconnect(m->c);
		m->c = NULL;
	}
	pthread_mutex_unlock(&m->lock);
	return rc;
}

static void reply_refusal(struct gw_http_reply *rep, int rc, bool away,
			  const char *err)
{
	char msg[1200];
	const char *says = gw_daemon_says(err);
	if (away) {
		snprintf(msg, sizeof(msg), "the daemon's admin socket: %s", says);
		gw_reply_status(rep, 503, "ServiceUnavailable", msg);
		return;
	}
	switch (rc) {
	case -EINVAL:
		gw_reply_status(rep, 400, "BadRequest", says);
		break;
	case -ENOTSUP:
		gw_reply_status(rep, 501, "NotImplemented", says);
		break;
	case -EPERM:
	case -EACCES:
		gw_reply_status(rep, 403, "Forbidden", says);
		break;
	case -ECONNRESET:
	case -ECONNREFUSED:
	case -ETIMEDOUT:
	case -EPROTO:
	case -ENOTSOCK:
	case -ENOTDIR:
		gw_reply_status(rep, 503, "ServiceUnavailable", says);
		break;
	default:
		snprintf(msg, sizeof(msg), "pools: %s", says);
		gw_reply_status(rep, 500, "InternalError", msg);
		break;
	}
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
		reply_refusal(rep, rc, away, err);
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
		reply_refusal(rep, rc, away, err);
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
