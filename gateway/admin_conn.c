/* A route module's one connection to the daemon's admin socket
 * (gateway_internal.h, struct gw_admin_conn), and the Status a refused
 * admin call answers with. The admin routes (failure_routes.c,
 * pool_routes.c, queue_routes.c, drain_routes.c' Eviction API) each keep
 * one: made on first use, made again once when the daemon restarted
 * since (the call says -ECONNRESET on the old connection), every call
 * under the connection's lock (MHD's threads call in at once; each call
 * is one short request to the daemon).
 *
 * Invariant: `c` is read and written only under `lock`; NULL means no
 * connection (never made, or dropped after a reset).
 * Cost: at most two connects and two calls a request; nothing here is on
 * the placement path.
 */
#include "gateway/gateway_internal.h"

#include <errno.h>
#include <stdio.h>

void gw_admin_conn_init(struct gw_admin_conn *a, const char *socket,
			const char *who)
{
	*a = (struct gw_admin_conn){.who = who};
	snprintf(a->socket, sizeof(a->socket), "%s", socket);
	pthread_mutex_init(&a->lock, NULL);
}

void gw_admin_conn_fini(struct gw_admin_conn *a)
{
	if (a->c != NULL)
		shmsched_disconnect(a->c);
	a->c = NULL;
	pthread_mutex_destroy(&a->lock);
}

int gw_admin_conn_call_locked(struct gw_admin_conn *a, gw_admin_call_fn fn,
			      void *arg, bool *away, char *err, size_t err_len)
{
	int rc = 0;
	bool no_conn = false;
	err[0] = '\0';
	for (int attempt = 0; attempt < 2; attempt++) {
		if (a->c == NULL &&
		    (rc = shmsched_connect_named(a->socket, a->who, &a->c, err,
						 err_len)) < 0) {
			a->c = NULL;
			no_conn = true;
			break;
		}
		rc = fn(a->c, arg, err, err_len);
		if (rc != -ECONNRESET)
			break;
		/* The daemon restarted since: one more try on a new connection. */
		shmsched_disconnect(a->c);
		a->c = NULL;
	}
	if (away != NULL)
		*away = no_conn;
	return rc;
}

int gw_admin_conn_call(struct gw_admin_conn *a, gw_admin_call_fn fn, void *arg,
		       bool *away, char *err, size_t err_len)
{
	pthread_mutex_lock(&a->lock);
	int rc = gw_admin_conn_call_locked(a, fn, arg, away, err, err_len);
	pthread_mutex_unlock(&a->lock);
	return rc;
}

void gw_reply_admin_refusal(struct gw_http_reply *rep, int rc, bool away,
			    const char *err, const char *what)
{
	const char *says = gw_daemon_says(err);
	if (away) {
		gw_reply_statusf(rep, 503, "ServiceUnavailable",
				 "the daemon's admin socket: %s", says);
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
		gw_reply_statusf(rep, 500, "InternalError", "%s: %s", what, says);
		break;
	}
}
